#!/usr/bin/env node
// Relaxed SIMD against SIMD128, end to end, in Debian's Chromium (where relaxed SIMD runs without
// flags): the Qwen3.5-0.8B shape (q8) and the Llama shape of the peer comparison (q8), one and two
// threads, the engine's defaults otherwise (int8 activations, statistics on). For each: prefill 128
// and 512 tokens (warm, median of 3), decode 64 tokens, with `relaxedSimd: false` (SIMD128),
// each relaxed level this CPU runs right, and 'auto' (what a page gets: which level it chose, and why).
//   node bench/relaxed.mjs [--quick]   (--quick: the Llama shape, one thread)
import os from 'node:os';
import { chromium } from 'playwright-core';
import { serve } from '../tools/serve.mjs';
import { root, synth } from './models.mjs';

const quick = process.argv.includes('--quick');
const models = [['Llama-398M shape', 'llama', synth('llama-398m', 'q8')]];
if (!quick) models.unshift(['Qwen3.5-0.8B shape', 'qwen', synth('qwen3.5-0.8b', 'q8')]);
const server = await serve({ root, mounts: Object.fromEntries(models.map(([, key, dir]) => [`/w/${key}`, dir])) });
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update'] });
const rows = [];
let peaks = {};
try {
  const page = await browser.newPage();
  await page.goto(server.url + 'tests/browser/api.html');
  await page.waitForFunction(() => window.mlpscope);
  const support = await page.evaluate(async () => (await import('/js/relaxed.js')).relaxedSupport());
  console.log(`Chromium: ${await browser.version()}; relaxed SIMD here: ${support.why}`);
  const settings = [false, ...Object.keys(support.levels).filter((k) => support.levels[k]), 'auto'];
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
  for (const [label, key] of models) {
    for (const threads of quick ? [1] : [1, 2]) {
      for (const relaxedSimd of settings) {
        process.stderr.write(`${label}, ${threads} thread(s), relaxedSimd ${relaxedSimd} ...\n`);
        const r = await page.evaluate(async ({ key, threads, relaxedSimd }) => {
          const median = (a) => [...a].sort((x, y) => x - y)[a.length >> 1];
          const m = await window.mlpscope.loadModel(`/w/${key}/`, { threads, relaxedSimd, cache: false, contextLength: 640 });
          const V = m.info().config.vocab_size, ids = Array.from({ length: 512 }, (_, i) => (i * 7919 + 13) % V);
          m.forward(ids.slice(0, 128)); // the optimizing tier compiles on the first pass
          const prefill = (n) => median(Array.from({ length: 3 }, () => { const t = performance.now(); m.forward(ids.slice(0, n)); return n / ((performance.now() - t) / 1000); }));
          const p128 = prefill(128), p512 = prefill(512);
          m.forward(ids.slice(0, 16));
          let next = 5;
          const t0 = performance.now();
          for (let k = 0; k < 64; k++) { m.forward([next], { continue: true }); next = (next * 31 + 7) % V; }
          const decode = 64 / ((performance.now() - t0) / 1000);
          const i = m.info();
          m.dispose();
          return { p128, p512, decode, threads: i.build.threads, kernels: i.kernels, isa: i.build.relaxedSimd.isa, why: i.build.relaxedSimd.why, macs: i.params.mlp + i.params.mixer };
        }, { key, threads, relaxedSimd });
        rows.push({ label, relaxedSimd, ...r });
      }
    }
  }
} finally { await browser.close(); await server.close(); }

console.log(`\n(${os.cpus()[0]?.model ?? 'cpu'}, ${os.availableParallelism?.() ?? os.cpus().length} cores, load average ${os.loadavg()[0].toFixed(2)} at the end)\n`);
console.log('The compute limit of a one-thread row is its kernel\'s peak above ÷ the multiply-accumulates of one prefill token (every weight of the mixers and MLPs once); two-thread rows have none here.\n');
console.log('| model (q8) | threads | relaxedSimd | kernels | prefill 128 tok/s | prefill 512 tok/s | compute limit tok/s | prefill 512 / limit | decode tok/s | prefill 512 / SIMD128 | decode / SIMD128 |');
console.log('|---|---|---|---|---|---|---|---|---|---|---|');
for (const r of rows) {
  const base = rows.find((b) => b.label === r.label && b.threads === r.threads && b.relaxedSimd === false);
  const peak = r.threads === 1 ? (r.isa === 'relaxedu8' ? peaks.relaxedu8 : r.isa === 'simd128' ? peaks.simd128 : undefined) : undefined;
  const limit = peak ? peak / r.macs : NaN;
  console.log(`| ${r.label} | ${r.threads} | ${JSON.stringify(r.relaxedSimd)} | ${r.kernels} | ${r.p128.toFixed(1)} | ${r.p512.toFixed(1)} | ${Number.isFinite(limit) ? limit.toFixed(1) : '–'} | ${Number.isFinite(limit) ? (r.p512 / limit).toFixed(2) : '–'} | ${r.decode.toFixed(2)} | ${(r.p512 / base.p512).toFixed(2)}× | ${(r.decode / base.decode).toFixed(2)}× |`);
}
for (const r of rows.filter((x) => x.relaxedSimd === 'auto')) console.log(`\n'auto', ${r.label}, ${r.threads} thread(s): ${r.why}`);
