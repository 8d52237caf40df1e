// The README as a new user reads it: the quick start and the examples run as written, every link
// points at a file that exists, and the front door stays small. The commands are taken from the
// README's own code blocks, so a command that changes there is tested as it now reads.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT, tmpDir } from './helpers.js';

const README = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
const blocks = (lang) => [...README.matchAll(new RegExp('```' + lang + '\\n([\\s\\S]*?)```', 'g'))].map((m) => m[1]);
/** the shell commands of the README, one per line, comments dropped */
const commands = blocks('sh').flatMap((b) => b.split('\n')).map((l) => l.replace(/\s+#.*$/, '').trim()).filter(Boolean);

test('the quick start is the first section, with exactly two commands after git clone', () => {
  const sections = [...README.matchAll(/^## (.+)$/gm)].map((m) => m[1]);
  assert.equal(sections[0], 'Quick start');
  const quick = blocks('sh')[0].split('\n').map((l) => l.replace(/\s+#.*$/, '').trim()).filter(Boolean);
  assert.match(quick[0], /^git clone /);
  assert.deepEqual(quick.slice(1), ['npm start', 'npm test']);
  assert.ok(Buffer.byteLength(README) <= 12 * 1024, `README.md is ${Buffer.byteLength(README)} bytes (front door: at most 12 KB)`);
});

test('every file the README links to or shows exists', () => {
  const links = [...README.matchAll(/\]\(([^)#]+)\)/g)].map((m) => m[1]).filter((l) => !/^[a-z]+:/.test(l));
  assert.ok(links.length > 5);
  for (const l of links) assert.ok(fs.existsSync(path.join(ROOT, l)), `README links to ${l}, which does not exist`);
});

test('npm start as written: builds what is missing, serves the page, prints its URL', { timeout: 600000 }, async () => {
  assert.ok(commands.includes('npm start'));
  // PORT=0: any free port (the README shows PORT=... for another port); the server prints the real one
  const child = spawn('npm', ['start'], { cwd: ROOT, env: { ...process.env, PORT: '0' }, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d) => { out += d; });
  child.stderr.on('data', (d) => { out += d; });
  try {
    const url = await new Promise((resolve, reject) => {
      const iv = setInterval(() => { const m = /open (http:\/\/\S+) in a browser/.exec(out); if (m) { clearInterval(iv); resolve(m[1]); } }, 100);
      child.on('exit', (c) => { clearInterval(iv); reject(new Error(`npm start exited (${c}) before serving:\n${out}`)); });
    });
    const page = await fetch(url);
    assert.equal(page.status, 200);
    assert.equal(page.headers.get('cross-origin-opener-policy'), 'same-origin');
    assert.match(await page.text(), /mlpscope/);
    const models = await (await fetch(new URL('models.json', url))).json();
    assert.equal(models.models[0].id, 'demo');
    const manifest = await fetch(new URL(models.models[0].url + 'manifest.json', url));
    assert.equal(manifest.status, 200);
  } finally {
    try { process.kill(-child.pid, 'SIGTERM'); } catch { /* already gone */ }
  }
});

test('the command-line examples run as written', { timeout: 300000 }, () => {
  const cli = commands.filter((c) => c.startsWith('node bin/mlpscope.js'));
  assert.ok(cli.length >= 3, cli.join('\n'));
  for (const c of cli) {
    const r = spawnSync('sh', ['-c', c], { cwd: ROOT, encoding: 'utf8' });
    assert.equal(r.status, 0, `${c}\n${r.stderr}`);
    assert.ok(r.stdout.trim().length > 0, c);
  }
  const skipped = commands.filter((c) => !c.startsWith('node bin/mlpscope.js') && c !== 'npm start');
  // the clone is where this runs, and npm test is what runs this file
  assert.deepEqual(skipped.map((c) => c.split(' ').slice(0, 2).join(' ')), ['git clone', 'npm test']);
});

test('the API example runs as written (the package name resolved to this checkout)', { timeout: 120000 }, () => {
  const [js] = blocks('js');
  const dir = tmpDir('readme');
  const file = path.join(dir, 'example.mjs');
  fs.writeFileSync(file, js.replace(/from 'mlpscope'/g, `from '${pathToFileURL(path.join(ROOT, 'js/index.js')).href}'`));
  const r = spawnSync(process.execPath, [file], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  // the comment in the example says what it prints: the next token is a city's first piece, and
  // without layer 0's MLP the model no longer expects one
  const lines = r.stdout.trim().split('\n');
  assert.match(lines[0], /^\d\.\d\d( \d\.\d\d)+$/);
  assert.equal(lines[0].split(' ').length, 11, 'one share per layer of the demo model');
  // ... and what it prints is what the comment says
  const said = /\/\/ (\[.*?\]) \(a city comes next\) against (\[.*?\])/.exec(js);
  assert.ok(said, 'the example says what it prints');
  const asNode = (a) => a.replace(/^\[/, '[ ').replace(/\]$/, ' ]');
  assert.equal(lines[1], `${asNode(said[1])} ${asNode(said[2])}`);
});
