// The package in a real browser (headless Chromium): the Web Worker wrapper gives the same numbers
// as the in-page engine and as llama2.c, transfers typed arrays, keeps the page responsive; the
// Cache API makes a second load work with the network blocked.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startBrowser } from './browser-harness.js';
import { convertStories, golden } from './helpers.js';

const G = golden();
let h;
before(async () => { h = await startBrowser({ mounts: { '/w/s260': convertStories('f32') } }); });
after(async () => { await h?.close(); });

test('Worker wrapper: same logits as in-page, llama2.c greedy ids, transferred typed arrays, responsive page', async () => {
  const { page } = await h.newPage('/tests/browser/api.html');
  await page.waitForFunction(() => window.mlpscope);
  const c = G.cases[1];
  const r = await page.evaluate(async ({ c }) => {
    const { loadModelInWorker, loadModel } = window.mlpscope;
    const progress = [];
    const wm = await loadModelInWorker('/w/s260/', { onProgress: (p) => progress.push(p) });
    const ids = await wm.tokenizer.encode(c.prompt);
    const fw = await wm.forward(c.greedy_ids, { hooks: ['blocks.2.mlp.hook_post'], logits: 'all' });
    const local = await loadModel('/w/s260/', { cache: false });
    const lw = local.forward(c.greedy_ids, { hooks: ['blocks.2.mlp.hook_post'], logits: 'all' });
    let maxDiff = 0;
    for (let i = 0; i < lw.logits.length; i++) maxDiff = Math.max(maxDiff, Math.abs(lw.logits[i] - fw.logits[i]));
    const gen = [];
    for await (const t of wm.generate(c.prompt_ids, { maxTokens: c.greedy_ids.length - c.prompt_ids.length })) gen.push(t.id);
    // responsiveness: timers keep firing while the worker runs 30 long forwards
    let ticks = 0;
    const iv = setInterval(() => ticks++, 5);
    const t0 = performance.now();
    for (let k = 0; k < 30; k++) await wm.forward(c.greedy_ids, { logits: 'all' });
    const busyMs = performance.now() - t0;
    clearInterval(iv);
    const info = await wm.info();
    await wm.dispose();
    local.dispose();
    return { ids, maxDiff, gen, logitsType: fw.logits.constructor.name, logitsLen: fw.logits.length, hookLen: fw.hooks['blocks.2.mlp.hook_post'].length,
      statsType: fw.stats.mlp_out_l2[0].constructor.name, ticks, busyMs, info, lastProgress: progress.at(-1), chat: wm.tokenizer.chatTemplate };
  }, { c });
  assert.deepEqual(r.ids, c.prompt_ids);
  assert.equal(r.maxDiff, 0, 'worker and in-page engine compute the same logits');
  assert.deepEqual([...c.prompt_ids, ...r.gen], c.greedy_ids);
  assert.equal(r.logitsType, 'Float32Array');
  assert.equal(r.logitsLen, 512 * c.greedy_ids.length);
  assert.equal(r.hookLen, 172 * c.greedy_ids.length);
  assert.equal(r.statsType, 'Float32Array');
  assert.equal(r.info.params.total, 260032);
  assert.equal(r.lastProgress.loaded, r.lastProgress.total);
  assert.ok(r.ticks >= Math.floor(r.busyMs / 5) * 0.3, `page stayed responsive: ${r.ticks} ticks in ${r.busyMs.toFixed(0)} ms`);
  assert.deepEqual(h.errors, []);
});

test('Cache API: the second load works offline, from cache; a corrupt cached shard is not used', async () => {
  const { page, context } = await h.newPage('/tests/browser/api.html');
  await page.waitForFunction(() => window.mlpscope);
  const load = () => page.evaluate(async () => {
    const seen = [];
    const m = await window.mlpscope.loadModel('/w/s260/', { onProgress: (p) => seen.push(p), retries: 0 });
    const logits = Array.from(m.forward([1, 403, 407]).logits.slice(0, 8));
    m.dispose();
    return { fromCache: seen.filter((p) => p.file !== 'manifest.json').every((p) => p.fromCache), logits, last: seen.at(-1) };
  });
  await page.evaluate(() => caches.delete('mlpscope-weights-v1'));
  const first = await load();
  assert.equal(first.fromCache, false);
  await context.route('**/w/s260/**', (route) => route.abort('internetdisconnected'));
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
    try { await window.mlpscope.loadModel('/w/s260/', { retries: 1, retryDelayMs: 1 }); return 'loaded'; } catch (e) { return e.code; }
  });
  assert.notEqual(code, 'loaded');
  assert.ok(['E_SHARD_HASH', 'E_NETWORK'].includes(code), code);
  // the bad entry was dropped: online again, the shard is fetched and verified
  await context.unroute('**/w/s260/**');
  const third = await load();
  assert.equal(third.fromCache, false);
  assert.deepEqual(third.logits, first.logits);
  h.errors.length = 0; // the blocked requests above log network errors on purpose
});
