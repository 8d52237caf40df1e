// The package as a bundler user meets it: `npm pack` → install the tarball into a fresh project →
// bundle a page with esbuild for the browser (target es2020: no top-level await, no node: module
// resolved) and the Worker separately → serve it → run it in Chromium, in the page and in the
// Worker, with the .wasm and the Worker at the URLs the bundle's author chose. The logits must be
// the ones Node computes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { chromium } from 'playwright-core';
import * as esbuild from 'esbuild';
import { loadModel } from '../js/index.js';
import { serve } from '../tools/serve.mjs';
import { CHROMIUM_ARGS } from './browser-harness.js';
import { DEMO, ROOT, tmpDir } from './helpers.js';

const PAGE = `import { loadModel, loadModelInWorker } from 'mlpscope';
window.run = async () => {
  const model = await loadModel('./assets/demo/', { wasmUrl: './assets/engine.wasm', threads: 1 });
  const ids = model.tokenizer.encode('I flew from Paris to');
  const page = Array.from(model.forward(ids, { logits: 'last' }).logits);
  model.dispose();
  const w = await loadModelInWorker('./assets/demo/', { workerUrl: './assets/model-worker.js', wasmUrl: './assets/engine.wasm', threads: 1 });
  const worker = Array.from((await w.forward(ids, { logits: 'last' })).logits);
  await w.dispose();
  return { ids, page, worker };
};
`;

test('npm pack → install → esbuild bundle (browser, es2020) → Chromium: the page and the Worker compute what Node computes', { timeout: 300000 }, async () => {
  const proj = tmpDir('bundle-proj');
  // the tarball as npm would publish it (the engine was built by the test run's set-up)
  const tgz = execFileSync('npm', ['pack', '--ignore-scripts', '--silent', '--pack-destination', proj], { cwd: ROOT, encoding: 'utf8' }).trim().split('\n').pop();
  fs.writeFileSync(path.join(proj, 'package.json'), JSON.stringify({ name: 'bundle-check', private: true, type: 'module' }));
  execFileSync('npm', ['install', '--offline', '--no-audit', '--no-fund', '--ignore-scripts', '--omit=optional', path.join(proj, tgz)], { cwd: proj, stdio: 'pipe' });
  const pkg = path.join(proj, 'node_modules/mlpscope');
  assert.ok(fs.existsSync(path.join(pkg, 'build/wasm/mlpscope.wasm')), 'the tarball holds the engine');

  fs.writeFileSync(path.join(proj, 'page.js'), PAGE);
  const site = path.join(proj, 'site');
  const app = await esbuild.build({ entryPoints: [path.join(proj, 'page.js')], bundle: true, format: 'esm', platform: 'browser', target: 'es2020',
    outfile: path.join(site, 'app.js'), absWorkingDir: proj, logLevel: 'silent' });
  assert.deepEqual(app.errors, []);
  assert.deepEqual(app.warnings.map((w) => w.text), []);
  const worker = await esbuild.build({ entryPoints: [path.join(pkg, 'js/worker.js')], bundle: true, format: 'esm', platform: 'browser',
    outfile: path.join(site, 'assets/model-worker.js'), absWorkingDir: proj, logLevel: 'silent' });
  assert.deepEqual(worker.errors, []);
  const bundled = fs.readFileSync(path.join(site, 'app.js'), 'utf8');
  assert.doesNotMatch(bundled, /from\s*["']node:/, 'no static node: import in the browser bundle');
  fs.copyFileSync(path.join(pkg, 'build/wasm/mlpscope.wasm'), path.join(site, 'assets/engine.wasm'));
  fs.cpSync(path.join(pkg, 'weights/demo'), path.join(site, 'assets/demo'), { recursive: true });
  fs.writeFileSync(path.join(site, 'index.html'), '<!doctype html><meta charset="utf-8"><title>bundle</title><script type="module" src="app.js"></script>');

  const srv = await serve({ root: site });
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS });
  try {
    const page = await browser.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(srv.url);
    await page.waitForFunction(() => typeof window.run === 'function');
    const r = await page.evaluate(() => window.run());
    assert.deepEqual(errors, []);
    const node = await loadModel(DEMO, { threads: 1 });
    const want = Array.from(node.forward(r.ids, { logits: 'last' }).logits);
    assert.deepEqual(r.ids, node.tokenizer.encode('I flew from Paris to'));
    node.dispose();
    assert.deepEqual(r.page, want, 'the bundled page: the same logits as Node');
    assert.deepEqual(r.worker, want, 'the bundled Worker: the same logits as Node');
  } finally { await browser.close(); await srv.close(); }
});

test('the engine files where the caller put them: mtWasmUrl and threadWorkerUrl start the threaded build from there (Node)', async () => {
  const { pathToFileURL } = await import('node:url');
  const dir = tmpDir('assets');
  fs.copyFileSync(path.join(ROOT, 'js/thread-worker.js'), path.join(dir, 'tw.js'));
  fs.copyFileSync(path.join(ROOT, 'build/wasm/mlpscope-mt.wasm'), path.join(dir, 'mt.wasm'));
  const one = await loadModel(DEMO, { threads: 1 });
  const want = one.forward([5, 9, 200], { logits: 'last' }).logits;
  one.dispose();
  const m = await loadModel(DEMO, { threads: 2, mtWasmUrl: pathToFileURL(path.join(dir, 'mt.wasm')), threadWorkerUrl: pathToFileURL(path.join(dir, 'tw.js')) });
  assert.equal(m.info().build.threads, 2, m.info().build.why);
  assert.deepEqual(m.forward([5, 9, 200], { logits: 'last' }).logits, want);
  m.dispose();
  // a wrong place is said, and the single-threaded build runs instead
  const fallback = await loadModel(DEMO, { threads: 2, mtWasmUrl: pathToFileURL(path.join(dir, 'missing.wasm')) });
  assert.equal(fallback.info().build.threads, 1);
  assert.match(fallback.info().build.why, /did not start.*missing\.wasm/);
  fallback.dispose();
});
