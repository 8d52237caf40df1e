// The npm package as a user gets it: `npm pack`, install the tarball into a fresh project
// (offline), run an example and the CLI against a weight set.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { createEngine } from '../js/index.js';
import { ROOT, CLI, DEMO, tmpDir } from './helpers.js';

test('npm pack -> install offline in a new project -> examples and CLI run', async () => {
  const out = tmpDir('pack');
  const packed = JSON.parse(execFileSync('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', out], { cwd: ROOT, encoding: 'utf8' }));
  const files = packed[0].files.map((f) => f.path);
  for (const f of ['js/index.js', 'js/index.d.ts', 'js/worker.js', 'build/wasm/mlpscope.wasm', 'build/wasm/mlpscope-mt.wasm', 'js/threads.js', 'js/thread-worker.js', 'bin/mlpscope.js', 'js/corpus.js', 'examples/knockout.mjs', 'README.md'])
    assert.ok(files.includes(f), `${f} is in the package`);
  assert.ok(!files.some((f) => f.startsWith('tests/') || f.startsWith('src/') || f.startsWith('node_modules/')));
  for (const f of ['LICENSE', 'CHANGELOG.md', 'docs/api.md', 'docs/cli.md', 'docs/format.md']) assert.ok(files.includes(f), `${f} is in the package`);
  assert.ok(!files.includes('docs/decisions.md') && !files.includes('docs/testing.md'), "the maintainers' docs stay in the repository");
  // every file the packaged README links to is in the package, or is a repository page
  for (const [, l] of fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8').matchAll(/\]\((docs\/[^)#]+)\)/g))
    assert.ok(files.includes(l) || ['docs/architecture.md', 'docs/testing.md', 'docs/decisions.md'].includes(l), `README links to ${l}`);
  const tarball = path.join(out, packed[0].filename);
  const proj = tmpDir('proj');
  fs.writeFileSync(path.join(proj, 'package.json'), JSON.stringify({ name: 'try-mlpscope', private: true, type: 'module' }));
  execFileSync('npm', ['install', tarball, '--offline', '--no-audit', '--no-fund'], { cwd: proj, stdio: 'pipe' });
  const weights = DEMO;
  fs.copyFileSync(path.join(ROOT, 'examples/knockout.mjs'), path.join(proj, 'knockout.mjs'));
  const ko = execFileSync(process.execPath, ['knockout.mjs', weights], { cwd: proj, encoding: 'utf8' });
  assert.match(ko, /KL\(before \|\| after\) = [0-9.e+-]+ nats/);
  const table = execFileSync(process.execPath, [path.join(proj, 'node_modules/mlpscope/examples/mlp-table.mjs'), weights], { cwd: proj, encoding: 'utf8' });
  assert.match(table, /mlp share/);
  // the installed CLI generates what the repository's CLI generates
  const args = ['run', weights, '--prompt', 'I flew from Paris to', '--max-tokens', '8', '--json'];
  const want = JSON.parse(execFileSync(process.execPath, [CLI, ...args], { encoding: 'utf8' }));
  const run = JSON.parse(execFileSync(path.join(proj, 'node_modules/.bin/mlpscope'), args, { cwd: proj, encoding: 'utf8' }));
  assert.deepEqual(run.ids, want.ids);
  assert.ok(run.ids.length > run.prompt_ids.length, 'generated something');
  // the threaded build from node_modules: its workers find js/thread-worker.js and the -mt module
  const run2 = JSON.parse(execFileSync(path.join(proj, 'node_modules/.bin/mlpscope'), [...args, '--threads', '2'], { cwd: proj, encoding: 'utf8' }));
  assert.deepEqual(run2.ids, want.ids);
  assert.equal(run2.build.threads, 2, run2.build.why);
  // the Chinese city neuron (layer 3 #249, fires negatively): hardest on a city name, and as it
  // fires it raises what follows one in the corpus (飞到, 和, 开往, 的会议 ...)
  const nx = execFileSync(process.execPath, [path.join(proj, 'node_modules/mlpscope/examples/neuron.mjs'), path.join(ROOT, 'weights/demo'), '3', '249'], { cwd: proj, encoding: 'utf8' });
  assert.match(nx, /fires negative/);
  assert.match(nx.split('\n')[1], /\[(罗马|东京|奥斯陆|巴黎)\]/);
  assert.match(nx, /raises "和" "飞到"/);
  // the patching example: a layer × position table on the demo model it finds by itself
  const pt = execFileSync(process.execPath, [path.join(proj, 'node_modules/mlpscope/examples/patching.mjs')], { cwd: proj, encoding: 'utf8' });
  const rows = pt.split('\n').filter((l) => /^\s+\d+\s/.test(l));
  assert.equal(rows.length, 11, pt);
  assert.match(rows[0], /\s1\.00\s/, 'layer 0: the changed token restores everything');
  // the feature tools from node_modules, with the probe generator the package ships
  // (on the demo model the package ships: @demo on the command line, demoModelUrl in the API)
  const feats = execFileSync(path.join(proj, 'node_modules/.bin/mlpscope'), ['features', '@demo', '--top', '1', '--layers', '3', '--by-lang'], { cwd: proj, encoding: 'utf8' });
  assert.match(feats, /best within zh: layer 3 neuron 249, held-out AUC 0\.996/); // weights/demo/README.md
  fs.writeFileSync(path.join(proj, 'demo.mjs'), "import { loadModel, demoModelUrl } from 'mlpscope';\n" +
    "const m = await loadModel(demoModelUrl, { threads: 1 });\n" +
    "const ids = m.tokenizer.encode('I flew from Paris to');\n" +
    "console.log(demoModelUrl.href, m.config.hidden_size, ids.length);\n" +
    "const r = m.forward(ids);\nconsole.log('logits', r.logits.length);\nm.dispose();\n");
  const demo = execFileSync(process.execPath, ['demo.mjs'], { cwd: proj, encoding: 'utf8' });
  assert.ok(demo.includes(path.join('node_modules', 'mlpscope', 'weights', 'demo')), demo);
  const shipped = JSON.parse(fs.readFileSync(path.join(DEMO, 'manifest.json'), 'utf8')).config;
  assert.match(demo, new RegExp(` ${shipped.hidden_size} `));
  assert.match(demo, new RegExp(`logits ${shipped.vocab_size}\\b`));
  for (const f of ['manifest.json', 'model-00001-of-00001.bin', 'tokenizer.msbpe', 'README.md'])
    assert.ok(files.includes(`weights/demo/${f}`), `weights/demo/${f} is in the package`);
  assert.ok(!files.includes('weights/demo/train.sh') && !files.includes('weights/demo/training-log.tsv'), 'the training files stay in the repository');
  fs.writeFileSync(path.join(proj, 'types.mjs'), "import { loadModel, loadModelInWorker, createEngine } from 'mlpscope';\nconst e = await createEngine();\nconsole.log(typeof loadModel, typeof loadModelInWorker, e.info.hooks.length);\n");
  const hooks = (await createEngine()).info.hooks.length; // the packed engine lists the hooks this checkout's does
  assert.equal(execFileSync(process.execPath, ['types.mjs'], { cwd: proj, encoding: 'utf8' }).trim(), `function function ${hooks}`);
  assert.ok(fs.existsSync(path.join(proj, 'node_modules/mlpscope/js/index.d.ts')));
});
