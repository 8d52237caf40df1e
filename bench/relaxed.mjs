#!/usr/bin/env node
// Relaxed SIMD against SIMD128, end to end, in Debian's Chromium (where relaxed SIMD runs without
// flags): the Qwen3.5-0.8B shape (q8, and q4 layers with a q8 head) and the Llama shape of the peer comparison (q8), one and two
// threads, the engine's defaults otherwise (int8 activations, statistics on). For each: prefill 128
// and 512 tokens, decode 32 tokens, with `relaxedSimd: false` (SIMD128) and each relaxed level this
// CPU runs right, interleaved in 5 rounds (medians); and what 'auto' (a page's default) chose, and why.
//   node bench/relaxed.mjs [--quick | --q4]   (--quick: the Llama shape, one thread; --q4: the q4 shape alone)
import os from 'node:os';
import { chromium } from 'playwright-core';
import { serve } from '../tools/serve.mjs';
import { root, synth } from './models.mjs';

const quick = process.argv.includes('--quick');
const q4only = process.argv.includes('--q4');
const models = q4only ? [] : [['Llama-398M shape', 'llama', synth('llama-398m', 'q8')]];
if (!quick) models.unshift(['Qwen3.5-0.8B shape, q4 layers + q8 head', 'qwen4', synth('qwen3.5-0.8b', 'q4', 'q8')]);
if (!quick && !q4only) models.unshift(['Qwen3.5-0.8B shape', 'qwen', synth('qwen3.5-0.8b', 'q8')]);
const server = await serve({ root, mounts: Object.fromEntries(models.map(([, key, dir]) => [`/w/${key}`, dir])) });
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update'] });
const rows = [], autos = [];
let peaks = {};
try {
  const page = await browser.newPage();
  await page.goto(server.url + 'tests/browser/api.html');
  await page.waitForFunction(() => window.mlpscope);
  const support = await page.evaluate(async () => (await import('/js/relaxed.js')).relaxedSupport());
  console.log(`Chromium: ${await browser.version()}; relaxed SIMD here: ${support.why}`);
  const settings = [false, ...Object.keys(support.levels).filter((k) => support.levels[k])];
  // the compute limits of one thread: the SIMD128 prefill tile's instruction sequence (the test
  // engine's probe) and the u8 relaxed tile's (build/wasm/mlpscope-relaxed-test.wasm), operands in L1
  peaks = await page.evaluate(async (u8) => {
    const e = await window.mlpscope.createEngine({ build: 'test', relaxedSimd: false });
    const buf = e.malloc(16384);
    e.u8.fill(3, buf, buf + 16384);
    const median = (a) => [...a].sort((x, y) => x - y)[a.length >> 1];
    const rate = (fn, macsPerStep, steps) => { fn(1e6); return median(Array.from({ length: 5 }, () => { const t = performance.now(); fn(steps); return macsPerStep * steps / ((performance.now() - t) / 1000); })); };
    const out = { simd128: rate((n) => e.c.bench_mac(buf, n), 64, 2e7) };
    if (u8) {
      const rx = (await WebAssembly.instantiate(await WebAssembly.compile(await (await fetch('/build/wasm/mlpscope-relaxed-test.wasm')).arrayBuffer()), { env: { memory: e.memory } })).exports;
      out.relaxedu8 = rate((n) => rx.bench_mac_peak_u8(buf, n), 128, 1e7);
    }
    e.free(buf);
    return out;
  }, support.levels.relaxedu8);
  console.log(`One-thread multiply-accumulate peaks (operands in L1): SIMD128 prefill tile ${(peaks.simd128 / 1e9).toFixed(1)} GMAC/s` +
    (peaks.relaxedu8 ? `, relaxed u8 tile ${(peaks.relaxedu8 / 1e9).toFixed(1)} GMAC/s (${(peaks.relaxedu8 / peaks.simd128).toFixed(2)}x)` : ''));
  // per model and thread count: one engine per setting, loaded side by side, then rounds that
  // interleave them (the VM's speed drifts: a setting is only compared within its round); medians
  // of the rounds. On q8, decode runs the same SIMD128 tile at every level, so its ratio gauges the noise.
  for (const [label, key] of models) {
    for (const threads of quick ? [1] : [1, 2]) {
      process.stderr.write(`${label}, ${threads} thread(s) ...\n`);
      const r = await page.evaluate(async ({ key, threads, settings, rounds }) => {
        const median = (a) => [...a].sort((x, y) => x - y)[a.length >> 1];
        const models = [];
        for (const relaxedSimd of settings) models.push(await window.mlpscope.loadModel(`/w/${key}/`, { threads, relaxedSimd, cache: false, contextLength: 640 }));
        const auto = await window.mlpscope.loadModel(`/w/${key}/`, { threads, relaxedSimd: 'auto', cache: false, contextLength: 640 });
        const chosen = auto.info().build.relaxedSimd;
        auto.dispose();
        const V = models[0].info().config.vocab_size, ids = Array.from({ length: 512 }, (_, i) => (i * 7919 + 13) % V);
        for (const m of models) m.forward(ids.slice(0, 128)); // the optimizing tier compiles on the first passes
        const res = models.map(() => ({ p128: [], p512: [], decode: [] }));
        for (let round = 0; round < rounds; round++) {
          models.forEach((m, k) => {
            let t = performance.now();
            m.forward(ids.slice(0, 128));
            res[k].p128.push(128 / ((performance.now() - t) / 1000));
            t = performance.now();
            m.forward(ids.slice(0, 512));
            res[k].p512.push(512 / ((performance.now() - t) / 1000));
            m.forward(ids.slice(0, 16));
            let next = 5;
            t = performance.now();
            for (let s = 0; s < 32; s++) { m.forward([next], { continue: true }); next = (next * 31 + 7) % V; }
            res[k].decode.push(32 / ((performance.now() - t) / 1000));
          });
        }
        const out = models.map((m, k) => {
          const i = m.info();
          return { relaxedSimd: settings[k], p128: median(res[k].p128), p512: median(res[k].p512), decode: median(res[k].decode), threads: i.build.threads,
            kernels: i.kernels, isa: i.build.relaxedSimd.isa, macs: i.params.mlp + i.params.mixer };
        });
        for (const m of models) m.dispose();
        return { out, chosen };
      }, { key, threads, settings, rounds: quick ? 3 : 5 });
      for (const row of r.out) rows.push({ label, ...row });
      autos.push({ label, threads, ...r.chosen });
    }
  }
} finally { await browser.close(); await server.close(); }

console.log(`\n(${os.cpus()[0]?.model ?? 'cpu'}, ${os.availableParallelism?.() ?? os.cpus().length} cores, load average ${os.loadavg()[0].toFixed(2)} at the end)\n`);
console.log('The compute limit of a one-thread row is its kernel\'s peak above ÷ the multiply-accumulates of one prefill token (every weight of the mixers and MLPs once); two-thread rows have none here.\n');
console.log('| model | threads | relaxedSimd | kernels | prefill 128 tok/s | prefill 512 tok/s | compute limit tok/s | prefill 512 / limit | decode tok/s | prefill 512 / SIMD128 | decode / SIMD128 |');
console.log('|---|---|---|---|---|---|---|---|---|---|---|');
for (const r of rows) {
  const base = rows.find((b) => b.label === r.label && b.threads === r.threads && b.relaxedSimd === false);
  const peak = r.threads === 1 ? (r.isa === 'relaxedu8' ? peaks.relaxedu8 : r.isa === 'simd128' ? peaks.simd128 : undefined) : undefined;
  const limit = peak ? peak / r.macs : NaN;
  console.log(`| ${r.label} | ${r.threads} | ${JSON.stringify(r.relaxedSimd)} | ${r.kernels} | ${r.p128.toFixed(1)} | ${r.p512.toFixed(1)} | ${Number.isFinite(limit) ? limit.toFixed(1) : '–'} | ${Number.isFinite(limit) ? (r.p512 / limit).toFixed(2) : '–'} | ${r.decode.toFixed(2)} | ${(r.p512 / base.p512).toFixed(2)}× | ${(r.decode / base.decode).toFixed(2)}× |`);
}
console.log('');
for (const a of autos) console.log(`- 'auto' (the default), ${a.label}, ${a.threads} thread(s): ${a.isa} — ${a.why}`);
