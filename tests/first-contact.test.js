// What a new user meets first: a clone without the maintainers' shared folder beside it (the
// tests that need files from outside the repository skip, saying why, and nothing fails), and
// tools/setup.mjs, the first step of `npm start` / `npm test` (Node check, missing packages named
// with the exact command, node_modules checked against the lock file).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT, tmpDir } from './helpers.js';
import { checkNode, nodeModulesCurrent } from '../tools/setup.mjs';

test('without the shared folder: the tests that need stories260K or the lesson text skip with a reason', { timeout: 600000 }, () => {
  const empty = tmpDir('no-shared');
  const files = ['llama-golden', 'llama-reference', 'quant-quality', 'attribution', 'cli', 'native', 'tokenizer'].map((f) => `tests/${f}.test.js`);
  // only the tests that read those files (by name); the rest of each file runs in the full suite
  const r = spawnSync(process.execPath, ['--test', '--test-concurrency=1', '--test-name-pattern=stories260K|llama2\\.c|lesson', ...files],
    { cwd: ROOT, encoding: 'utf8', env: { ...process.env, MLPSCOPE_SHARED: empty, NODE_TEST_CONTEXT: undefined } });
  const out = r.stdout + r.stderr;
  assert.equal(r.status, 0, out);
  assert.match(out, /^# fail 0$/m, out);
  const skips = out.split('\n').filter((l) => /^\s*ok \d+ - .* # SKIP .*not in the repository and w(as|ere) not found at /.test(l));
  // 2 llama2.c goldens + 1 reference + 4 quantization + 1 attribution + 1 CLI + 2 native + 1 lesson
  assert.equal(skips.length, 12, out);
  assert.ok(skips.every((l) => l.includes(empty)), 'the reason names where it looked');
});

test('setup: the Node version check', () => {
  assert.match(checkNode('18.20.4'), /Node 18\.20\.4 is too old: mlpscope needs Node 20\.10 or newer/);
  assert.match(checkNode('20.9.0'), /too old/);
  assert.equal(checkNode('20.10.0'), null);
  assert.equal(checkNode('22.1.0'), null);
  assert.equal(checkNode(process.versions.node), null, 'the Node running the suite passes its own check');
});

test('setup: node_modules against package-lock.json', () => {
  const d = tmpDir('lock');
  fs.writeFileSync(path.join(d, 'package-lock.json'), JSON.stringify({ packages: { '': {}, 'node_modules/a': { version: '1.2.3' }, 'node_modules/b': { version: '2.0.0', optional: true } } }));
  assert.equal(nodeModulesCurrent(d), false, 'node_modules missing');
  fs.mkdirSync(path.join(d, 'node_modules/a'), { recursive: true });
  fs.writeFileSync(path.join(d, 'node_modules/a/package.json'), JSON.stringify({ version: '1.2.2' }));
  assert.equal(nodeModulesCurrent(d), false, 'an older version installed');
  fs.writeFileSync(path.join(d, 'node_modules/a/package.json'), JSON.stringify({ version: '1.2.3' }));
  assert.equal(nodeModulesCurrent(d), true, 'the locked version (an optional package may be absent)');
  assert.equal(nodeModulesCurrent(ROOT), true, 'this checkout (the suite runs after npm ci)');
});

test('setup: a missing system package is named with the exact command to install it', () => {
  // a PATH with node and the shell tools but no emcc, and no installing: what a non-root user sees
  const bin = tmpDir('bin');
  for (const t of ['node', 'sh', 'dpkg', 'dpkg-query', 'apt-get']) { // apt-get is only looked for: installing is off
    const real = spawnSync('sh', ['-c', `command -v ${t}`], { encoding: 'utf8' }).stdout.trim();
    if (real) fs.symlinkSync(real, path.join(bin, t));
  }
  const r = spawnSync(path.join(bin, 'node'), [path.join(ROOT, 'tools/setup.mjs'), 'wasm'],
    { encoding: 'utf8', env: { PATH: bin, HOME: process.env.HOME, MLPSCOPE_AUTO_INSTALL: '0' } });
  assert.equal(r.status, 1);
  assert.match(r.stderr, /missing: emcc \(compiles the engine to WebAssembly\)/);
  assert.match(r.stderr, /sudo apt-get install -y emscripten\n/);
  assert.doesNotMatch(r.stderr, /at .*\.mjs:\d+/, 'a message, not a stack trace');
  const bad = spawnSync(process.execPath, [path.join(ROOT, 'tools/setup.mjs'), 'nonsense'], { encoding: 'utf8' });
  assert.equal(bad.status, 1);
  assert.match(bad.stderr, /usage: node tools\/setup.mjs wasm\|start\|test/);
});

test('a checkout that was not built: a typed error saying how to build, not a stack trace', () => {
  const d = tmpDir('unbuilt');
  for (const f of ['js', 'bin', 'package.json', 'weights/demo']) fs.cpSync(path.join(ROOT, f), path.join(d, f), { recursive: true });
  const r = spawnSync(process.execPath, [path.join(d, 'bin/mlpscope.js'), 'run', '@demo', '--prompt', 'I flew'], { encoding: 'utf8' });
  assert.equal(r.status, 1);
  assert.match(r.stderr, /^mlpscope: E_ENGINE: the engine mlpscope(-mt)?\.wasm is not there \(no file .*\): in a checkout of the repository, build it with \.\/build\.sh wasm/m);
  assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
});
