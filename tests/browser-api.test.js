// The package in a real browser (headless Chromium): the Web Worker wrapper gives the same numbers
// as the in-page engine, transfers typed arrays, keeps the page responsive; the
// Cache API makes a second load work with the network blocked.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startBrowser } from './browser-harness.js';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import fs from 'node:fs';
import { CLI, ROOT, DEMO, tmpDir } from './helpers.js';

let h;
const thr = tmpDir('browser-thr');
execFileSync(process.execPath, [CLI, 'synth', '--config', path.join(ROOT, 'tests/configs/qwen35-threads.json'), '--seed', '5', '--dtype', 'q8', '--out', thr], { stdio: 'pipe' });
before(async () => { h = await startBrowser({ mounts: { '/w/demo': DEMO, '/w/thr': thr } }); });
after(async () => { await h?.close(); });

test('Worker wrapper: same logits and greedy ids as in-page, transferred typed arrays, responsive page', async () => {
  const { page } = await h.newPage('/tests/browser/api.html');
  await page.waitForFunction(() => window.mlpscope);
  const r = await page.evaluate(async () => {
    const { loadModelInWorker, loadModel } = window.mlpscope;
    const progress = [];
    const wm = await loadModelInWorker('/w/demo/', { onProgress: (p) => progress.push(p) });
    const prompt = 'Lily went to Paris with her mom.';
    const ids = await wm.tokenizer.encode(prompt);
    const local = await loadModel('/w/demo/', { cache: false });
    const localIds = local.tokenizer.encode(prompt), localGen = [];
    for await (const t of local.generate(localIds, { maxTokens: 12, stop: [] })) localGen.push(t.id);
    const seq = [...localIds, ...localGen];
    const localParams = local.info().params.total;
    const fw = await wm.forward(seq, { hooks: ['blocks.2.mlp.hook_post'], logits: 'all' });
    const lw = local.forward(seq, { hooks: ['blocks.2.mlp.hook_post'], logits: 'all' });
    let maxDiff = 0;
    for (let i = 0; i < lw.logits.length; i++) maxDiff = Math.max(maxDiff, Math.abs(lw.logits[i] - fw.logits[i]));
    const gen = [];
    for await (const t of wm.generate(ids, { maxTokens: 12, stop: [] })) gen.push(t.id);
    // responsiveness, as a fact rather than a rate: a timer set just after a forward starts runs
    // while that forward is still pending, which cannot happen if the forward ran on this thread
    // (30 tries; on a busy machine the worker may now and then finish first)
    let freeWhileBusy = 0;
    for (let k = 0; k < 30; k++) {
      let done = false;
      const p = wm.forward(seq, { logits: 'all' }).then(() => { done = true; });
      await new Promise((res) => setTimeout(res, 0));
      if (!done) freeWhileBusy++;
      await p;
    }
    const info = await wm.info();
    // what a neuron writes, and where it fires, computed in the worker = on the page
    const wo = await wm.neuronOutput(2, 5, { k: 4 }), lo = local.neuronOutput(2, 5, { k: 4 });
    const outSame = wo.logits.every((v, i) => v === lo.logits[i]) && JSON.stringify(wo.promoted) === JSON.stringify(lo.promoted);
    const texts = ['Once upon a time, there was a little girl.', 'She liked to play in the park.'];
    const wt = await wm.neuronTopActivations(texts, { layer: 1, neuron: 3, k: 4 });
    const topSame = JSON.stringify(wt) === JSON.stringify(window.mlpscope.neuronTopActivations(local, texts, { layer: 1, neuron: 3, k: 4 }));
    // the feature search reports progress from inside the worker
    const probes = texts.map((text) => ({ text, spans: [{ start: text.indexOf('girl') >= 0 ? text.indexOf('girl') : 0, end: text.indexOf('girl') >= 0 ? text.indexOf('girl') + 4 : 3, label: 'thing' }] }));
    const seen = [];
    const wf = await wm.findFeatureNeurons([...probes, ...probes], { features: { thing: { pos: ['thing'] } }, top: 1, maxBytes: 1, onProgress: (p) => seen.push(p) });
    const lf = window.mlpscope.findFeatureNeurons(local, [...probes, ...probes], { features: { thing: { pos: ['thing'] } }, top: 1, maxBytes: 1 });
    const featSame = JSON.stringify(wf) === JSON.stringify(lf);
    await wm.dispose();
    local.dispose();
    return { ids, localIds, localGen, seqLen: seq.length, localParams, maxDiff, gen, logitsType: fw.logits.constructor.name, logitsLen: fw.logits.length, hookLen: fw.hooks['blocks.2.mlp.hook_post'].length,
      statsType: fw.stats.mlp_out_l2[0].constructor.name, freeWhileBusy, info, lastProgress: progress.at(-1), chat: wm.tokenizer.chatTemplate, outSame, topSame, woType: wo.logits.constructor.name, featSame, seen };
  });
  assert.deepEqual(r.ids, r.localIds);
  assert.equal(r.maxDiff, 0, 'worker and in-page engine compute the same logits');
  assert.deepEqual(r.gen, r.localGen, 'greedy ids in the worker = in the page');
  assert.equal(r.logitsType, 'Float32Array');
  const shipped = JSON.parse(fs.readFileSync(path.join(DEMO, 'manifest.json'), 'utf8')).config;
  assert.equal(r.logitsLen, shipped.vocab_size * r.seqLen);
  assert.equal(r.hookLen, shipped.intermediate_size * r.seqLen);
  assert.equal(r.statsType, 'Float32Array');
  assert.equal(r.info.params.total, r.localParams);
  assert.ok(r.outSame, 'neuronOutput in the worker = in the page');
  assert.ok(r.topSame, 'neuronTopActivations in the worker = in the page');
  assert.equal(r.woType, 'Float32Array');
  assert.ok(r.featSame, 'findFeatureNeurons in the worker = in the page');
  assert.equal(r.seen.length, 11 * 4, 'one progress message per probe and pass (11 layers, one per pass)');
  assert.deepEqual(r.seen.at(-1), { done: 44, total: 44 });
  assert.equal(r.lastProgress.loaded, r.lastProgress.total);
  assert.ok(r.freeWhileBusy >= 1, `the page ran a timer while a forward was pending in ${r.freeWhileBusy} of 30 tries`);
  assert.deepEqual(h.errors, []);
});

test('threads in Chromium (cross-origin isolated): 2 threads on the page and in the Worker == 1 thread', async () => {
  const { page } = await h.newPage('/tests/browser/api.html');
  await page.waitForFunction(() => window.mlpscope);
  const r = await page.evaluate(async () => {
    const { loadModel, loadModelInWorker } = window.mlpscope;
    const ids = Array.from({ length: 40 }, (_, i) => (i * 131 + 7) % 2048);
    const one = await loadModel('/w/thr/', { threads: 1, cache: false, int8Activations: true });
    const want = one.forward(ids, { logits: 'all' }).logits, wantDec = one.forward([5], { continue: true }).logits;
    one.dispose();
    const two = await loadModel('/w/thr/', { threads: 2, cache: false, int8Activations: true }); // the page's main thread: it polls
    const a = two.forward(ids, { logits: 'all' }).logits, aDec = two.forward([5], { continue: true }).logits;
    const pageInfo = two.info().build;
    two.dispose();
    const wm = await loadModelInWorker('/w/thr/', { threads: 2, cache: false, int8Activations: true }); // inside a Worker: it sleeps
    const b = (await wm.forward(ids, { logits: 'all' })).logits;
    const workerInfo = (await wm.info()).build;
    await wm.dispose();
    const same = (x, y) => x.length === y.length && x.every((v, i) => v === y[i]);
    return { isolated: crossOriginIsolated, pageInfo, workerInfo, samePage: same(a, want) && same(aDec, wantDec), sameWorker: same(b, want) };
  });
  assert.equal(r.isolated, true, 'the test server sends COOP/COEP');
  assert.equal(r.pageInfo.threads, 2, r.pageInfo.why);
  assert.equal(r.workerInfo.threads, 2, r.workerInfo.why);
  assert.ok(r.samePage, 'page, 2 threads: logits identical to 1 thread');
  assert.ok(r.sameWorker, 'worker, 2 threads: logits identical to 1 thread');
  assert.deepEqual(h.errors, []);
});

test('Cache API: the second load works offline, from cache; a corrupt cached shard is not used', async () => {
  const { page, context } = await h.newPage('/tests/browser/api.html');
  await page.waitForFunction(() => window.mlpscope);
  const load = () => page.evaluate(async () => {
    const seen = [];
    const m = await window.mlpscope.loadModel('/w/demo/', { onProgress: (p) => seen.push(p), retries: 0 });
    const logits = Array.from(m.forward([1, 403, 407]).logits.slice(0, 8));
    m.dispose();
    return { fromCache: seen.filter((p) => p.file !== 'manifest.json').every((p) => p.fromCache), logits, last: seen.at(-1) };
  });
  await page.evaluate(() => caches.delete('mlpscope-weights-v1'));
  const first = await load();
  assert.equal(first.fromCache, false);
  await context.route('**/w/demo/**', (route) => route.abort('internetdisconnected'));
  const second = await load();
  assert.equal(second.fromCache, true, 'every shard came from the cache');
  assert.deepEqual(second.logits, first.logits);
  assert.equal(second.last.loaded, second.last.total);
  // poison the cached shard: offline, the load must fail with a typed error, not compute garbage
  const code = await page.evaluate(async () => {
    const c = await caches.open('mlpscope-weights-v1');
    for (const req of await c.keys()) if (req.url.includes('model-00001')) {
      const b = new Uint8Array(await (await c.match(req)).arrayBuffer());
      b[100] ^= 1;
      await c.put(req, new Response(b));
    }
    try { await window.mlpscope.loadModel('/w/demo/', { retries: 1, retryDelayMs: 1 }); return 'loaded'; } catch (e) { return e.code; }
  });
  assert.notEqual(code, 'loaded');
  assert.ok(['E_SHARD_HASH', 'E_NETWORK'].includes(code), code);
  // the bad entry was dropped: online again, the shard is fetched and verified
  await context.unroute('**/w/demo/**');
  const third = await load();
  assert.equal(third.fromCache, false);
  assert.deepEqual(third.logits, first.logits);
  h.errors.length = 0; // the blocked requests above log network errors on purpose
});
