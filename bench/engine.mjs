#!/usr/bin/env node
// The engine's benchmark (Node 20, wasm). Prints markdown tables.
//   node bench/engine.mjs [--quick | --gemma]   (--gemma: only the Gemma 3 shapes)
// The default path (what loadModel, the Worker, the page and the CLI run: int8 activations,
// statistics on) comes first; then exact activations (`exact: true`), then the plain f32-activation
// kernels the default used before (for the before/after ratio), then the scalar build.
// Models are generated on the spot with `mlpscope synth` into build/bench/ (kept between runs):
// the Qwen3.5-0.8B shapes (q8 and q4 layers with a q8 head) and the Llama shape of the wasm-peer
// comparison (hidden 1024, 24 layers, SwiGLU 3584, 8 heads of 128, vocab 32000, tied; q8); and the
// Gemma 3 shapes (270M: hidden 640, 18 layers, GeGLU 2048, 4 heads / 1 KV head of 256, vocab 262144,
// tied; 1B: hidden 1152, 26 layers, GeGLU 6912), q8 and q4 with a q8 head.
import { progressLine } from '../js/progress.js';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { createEngine, loadModel } from '../js/index.js';
import { root, cache, synth } from './models.mjs';
import { measureLimits } from './limits.mjs';

const quick = process.argv.includes('--quick'), gemmaOnly = process.argv.includes('--gemma');

// ---- the limits: read bandwidth and the int8 multiply-accumulate peak of the prefill tile's
// instruction sequence, one thread and two at once (bench/limits.mjs: the best of samples after a
// warm-up; two vCPUs may share one core's memory path and SIMD units, so neither is assumed to double)
const median = (a) => [...a].sort((x, y) => x - y)[a.length >> 1];
const { bw1: bw, bw2, mac1: macPeak, mac2: macPeak2 } = await measureLimits();
const e = await createEngine({ build: 'test' }); // the kernel micro-benchmark's engine
const limitMac = (threads) => (threads > 1 ? macPeak2 ?? NaN : macPeak);

// ---- the machine's read bandwidth outside wasm (1 and 2 threads), when a C compiler is here
function nativeBandwidth() {
  try {
    const exe = path.join(cache, 'native-bandwidth');
    execFileSync('gcc', ['-std=c11', '-O3', '-march=native', '-pthread', path.join(root, 'bench/native-bandwidth.c'), '-o', exe], { stdio: 'pipe' });
    return Object.fromEntries(execFileSync(exe, { encoding: 'utf8' }).trim().split('\n').map((l) => l.split(' ').map(Number)));
  } catch { return null; }
}
const native = nativeBandwidth();

let f32Streamed = 0; // GB/s of the f32 matvec over matrices beyond the caches (set by micro())
const exactVsPlain = []; // lines: the exact kernels' speed against the plain ones (set by micro())
// ---- kernel micro-bench: one gate_proj (3584 x 1024) matvec, cache-resident, and the same
// matvec over 24 different copies of it (88 MB, far beyond the caches), which is what decode sees
function micro() {
  const R = 3584, C = 1024, rowsBytes = e.c.dbg_weight_bytes(3, R, C);
  const W = new Float32Array(R * C).map((_, i) => Math.sin(i * 0.37)), X = new Float32Array(C).map((_, i) => Math.cos(i));
  const wp = e.bytes(new Uint8Array(W.buffer)), xp = e.bytes(new Uint8Array(X.buffer)), yp = e.malloc(R * 4);
  const COPIES = 24;
  const xq = e.malloc(C), xd = e.malloc(C / 8);
  // each kernel: [name, dtype or 'ggml', bytes of one matrix, weights pointer of COPIES matrices]
  const kern = [['ggml-style q8_0 × q8 (f16 scales, row-major)', 'ggml', R * C / 32 * 34],
    ['q8_0x4 × int8 activations, SIMD128 (default)', 5, rowsBytes],
    ['q4_0x4 × int8 activations, SIMD128 (default)', 6, e.c.dbg_weight_bytes(6, R, C)],
    ['q8_0x4 × exact activations (2 × i16), SIMD128 (exact: true)', 5, rowsBytes, 'exact'],
    ['q4_0x4 × exact activations (2 × i16), SIMD128 (exact: true)', 6, e.c.dbg_weight_bytes(6, R, C), 'exact'],
    ['q8_0 × f32 activations, SIMD128 (plain; the default before)', 3, rowsBytes],
    ['q4_0 × f32 activations, SIMD128 (plain; the default before)', 4, e.c.dbg_weight_bytes(4, R, C)],
    ['q8_0x4 × int8 activations, scalar twin', 5, rowsBytes, 'scalar'],
    ['f32, SIMD128', 0, R * C * 4]];
  const time = (f, n) => { f(); const t0 = performance.now(); for (let i = 0; i < n; i++) f(); return (performance.now() - t0) / n; };
  const rows = [];
  for (const [name, dt, b, how] of kern) {
    const scalar = how === 'scalar';
    const copies = dt === 0 ? 4 : COPIES, W0 = e.malloc(b * copies);
    if (dt === 'ggml') {
      const q8 = e.malloc(rowsBytes);
      e.c.dbg_quantize(3, wp, R, C, q8);
      for (let k = 0; k < copies; k++) e.c.bench_ggml_prep(q8, W0 + k * b, R * C / 32);
      e.free(q8);
    } else if (dt === 0) for (let k = 0; k < copies; k++) e.u8.copyWithin(W0 + k * b, wp, wp + b);
    else for (let k = 0; k < copies; k++) e.c.dbg_quantize(dt, wp, R, C, W0 + k * b);
    const run1 = (w, r) => (dt === 'ggml' ? e.c.bench_ggml_matvec(w, r, C, xp, yp, xq, xd)
      : how === 'exact' ? e.c.dbg_matmul_exact(dt, 1, w, r, C, xp, 1, yp) : e.c.dbg_matmul(dt, scalar ? 0 : 1, w, r, C, xp, 1, yp));
    const cached = time(() => run1(W0, R), scalar ? 4 : 30);
    const streamed = time(() => { for (let k = 0; k < copies; k++) run1(W0 + k * b, R); }, scalar ? 1 : 3) / copies;
    rows.push([name, b, cached, streamed]);
    e.free(W0);
  }
  for (const p of [wp, xp, yp, xq, xd]) e.free(p);
  const base = rows[0];
  const f32 = rows.find((r) => r[0].startsWith('f32'));
  f32Streamed = f32[1] / f32[3] / 1e6;
  // the exact kernels against the plain f32-activation kernels they replace, same weights, same run
  for (const q of ['q8', 'q4']) {
    const ex = rows.find((r) => r[0].startsWith(`${q}_0x4 × exact`)), pl = rows.find((r) => r[0].startsWith(`${q}_0 × f32`));
    exactVsPlain.push(`${q}_0 with exact activations: ${(pl[2] / ex[2]).toFixed(2)}× the plain f32-activation kernel cached, ${(pl[3] / ex[3]).toFixed(2)}× streamed`);
  }
  return rows.map(([name, b, ms, sms]) => `| ${name} | ${(b / 1048576).toFixed(2)} MiB | ${ms.toFixed(3)} ms | ${(b / ms / 1e6).toFixed(1)} GB/s | ${(b / sms / 1e6).toFixed(1)} GB/s | ${(base[2] / ms).toFixed(2)}× / ${(base[3] / sms).toFixed(2)}× |`);
}

// ---- end to end
async function run(dir, label, opts, { prompt = 128, decode = 64, long = 512, reps = 3, stats = true } = {}) {
  const files = fs.readdirSync(dir).filter((f) => f.endsWith('.bin'));
  let t0 = performance.now();
  for (const f of files) fs.readFileSync(path.join(dir, f));
  const readMs = performance.now() - t0;
  t0 = performance.now();
  const m = await loadModel(dir, { contextLength: Math.max(prompt + decode, long) + 1, ...opts });
  const loadMs = performance.now() - t0;
  const info = m.info();
  const V = info.config.vocab_size;
  const ids = Array.from({ length: Math.max(prompt, long) }, (_, i) => (i * 7919 + 13) % V);
  t0 = performance.now();
  m.forward(ids.slice(0, prompt), { stats });
  const prefillMs = performance.now() - t0;
  let next = 5;
  t0 = performance.now();
  for (let k = 0; k < decode; k++) { const r = m.forward([next], { stats, continue: true }); next = (next * 31 + 7) % V; void r; }
  const decodeMs = performance.now() - t0;
  // generation as a user runs it (temperature 0.8, top-p 0.9): the decode steps plus the draw over
  // the vocabulary; timed from the first token, so the prompt's prefill is not in it
  let gen = 0, g0 = 0;
  for await (const _ of m.generate(ids.slice(0, 16), { maxTokens: decode + 1, temperature: 0.8, topP: 0.9, seed: 1, stop: [] }))
    if (gen++ === 0) g0 = performance.now();
  const genTps = (gen - 1) / ((performance.now() - g0) / 1000);
  // prefill throughput, warm (the first prefill above also paid for the engine's code being
  // compiled by V8's optimizing tier: that is the time to first token): the median of `reps` runs
  const prefillTps = (n) => median(Array.from({ length: reps }, () => { const t = performance.now(); m.forward(ids.slice(0, n), { stats }); return n / ((performance.now() - t) / 1000); }));
  const warm = prefillTps(prompt);
  const longTps = long ? prefillTps(long) : NaN;
  const perToken = info.memory.weights; // every weight is read once per decoded token (the tied head included)
  const threads = info.build.threads;
  const dec = decode / (decodeMs / 1000), limit = limitBw(threads) * 1e9 / perToken;
  // multiply-accumulates per prefill token: every weight of the mixers and MLPs once (the embedding
  // is a lookup; the head runs for the last token only); attention's scores are left out
  const macsPerToken = info.params.mlp + info.params.mixer;
  const computeLimit = limitMac(threads) / macsPerToken;
  const act = { int8: 'int8 act.', exact: 'exact act.', plain: 'f32 act., plain', f32: 'f32 act.' }[info.build.activations];
  const row = { label, threads, dtypes: Object.keys(info.dtypes).join('+'), kernels: `${opts.simd === false ? 'scalar' : 'SIMD128'}, ${act}${stats ? ', stats on' : ''}`,
    prefill: warm, long: longTps, ttft: prefillMs, computeLimit, decode: dec, gen: genTps, limit, ratio: dec / limit, load: loadMs, read: readMs, heap: info.memory.heap, weights: perToken };
  m.dispose();
  return row;
}

// The read bandwidth one thread gets in wasm: the better of the probe and the f32 matvec streaming
// (a light kernel that runs at memory speed); two threads: the wasm probe on two threads (the
// native two-thread figure where the threaded build cannot run).
const microRows = micro();
const bw1 = Math.max(bw, f32Streamed);
const limitBw = (threads) => (threads > 1 ? bw2 ?? native?.[2] ?? NaN : bw1); // NaN: no two-thread measurement here

const rows = [];
const Q8 = synth('qwen3.5-0.8b', 'q8'), Q4 = synth('qwen3.5-0.8b', 'q4', 'q8'), L8 = synth('llama-398m', 'q8');
const plan = [
  // the default path (int8 activations, statistics on): what every face of the product runs
  [Q8, 'Qwen3.5-0.8B shapes', { threads: 1 }],
  [Q8, 'Qwen3.5-0.8B shapes', { threads: 2 }],
  [Q4, 'Qwen3.5-0.8B shapes', { threads: 1 }],
  [Q4, 'Qwen3.5-0.8B shapes', { threads: 2 }],
  [L8, 'Llama 398M (wllama shape)', { threads: 1 }],
  [L8, 'Llama 398M (wllama shape)', { threads: 2 }],
  // the same without statistics, exact activations, and the plain kernels the default used before
  [Q8, 'Qwen3.5-0.8B shapes', { threads: 1 }, { stats: false }],
  [Q8, 'Qwen3.5-0.8B shapes', { threads: 1, exact: true }],
  [Q8, 'Qwen3.5-0.8B shapes', { threads: 2, exact: true }],
  [Q8, 'Qwen3.5-0.8B shapes', { threads: 1, activations: 'plain' }, { reps: 1 }],
  [L8, 'Llama 398M (wllama shape)', { threads: 1, exact: true }],
  [L8, 'Llama 398M (wllama shape)', { threads: 1, activations: 'plain' }, { reps: 1 }],
  [Q8, 'Qwen3.5-0.8B shapes', { simd: false, threads: 1, activations: 'plain' }, { prompt: 16, decode: 4, long: 0, reps: 1 }],
];
const G8 = synth('gemma3-270m', 'q8'), G4 = synth('gemma3-270m', 'q4', 'q8');
const gemmaPlan = [
  [G8, 'Gemma 3 270M shapes', { threads: 1 }],
  [G8, 'Gemma 3 270M shapes', { threads: 2 }],
  [G4, 'Gemma 3 270M shapes', { threads: 1 }],
  [G4, 'Gemma 3 270M shapes', { threads: 2 }],
  ...(gemmaOnly ? [[synth('gemma3-1b', 'q8'), 'Gemma 3 1B shapes', { threads: 1 }], [synth('gemma3-1b', 'q8'), 'Gemma 3 1B shapes', { threads: 2 }]] : []),
];
plan.splice(6, 0, ...gemmaPlan.slice(0, 2));
const todo = gemmaOnly ? gemmaPlan : quick ? plan.slice(0, 2) : plan, line = progressLine('bench configurations');
for (const [dir, label, opts, sizes] of todo) { line?.(rows.length, todo.length); rows.push(await run(dir, label, opts, sizes)); }
line?.(rows.length, todo.length);

const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
console.log(`Machine: ${cpu}, ${os.cpus().length} cores, Node ${process.version}, wasm SIMD128. Read bandwidth in wasm, 1 thread: ${bw.toFixed(1)} GB/s (read probe), ${f32Streamed.toFixed(1)} GB/s (f32 matvec over 56 MB)` +
  (bw2 ? `; 2 threads: ${bw2.toFixed(1)} GB/s (read probe)` : '') +
  (native ? `; natively (C, bench/native-bandwidth.c): ${native[1].toFixed(1)} GB/s with 1 thread, ${native[2].toFixed(1)} GB/s with 2.` : '.') +
  ` The bandwidth limit below is the weight bytes read per token ÷ ${bw1.toFixed(1)} GB/s for 1 thread` + (Number.isFinite(limitBw(2)) ? ` and ÷ ${limitBw(2).toFixed(1)} GB/s for 2.\n` : '.\n'));
console.log(`Compute: the prefill tile's instruction sequence (i16x8.load8x8_s, i32x4.dot_i16x8_s, i32x4.add; operands in L1) peaks at ${(macPeak / 1e9).toFixed(1)} GMAC/s on one thread` +
  (macPeak2 ? ` and ${(macPeak2 / 1e9).toFixed(1)} GMAC/s on two at once` : '') + `; the compute limit below is that ÷ the multiply-accumulates of one prefill token (every weight of the mixers and MLPs once).\n`);
console.log('| model | weights | kernels | threads | prefill 128 tok/s | prefill 512 tok/s | compute limit tok/s | prefill 512 / limit | time to first token | decode tok/s | generate tok/s (top-p 0.9) | bandwidth limit tok/s | decode / limit | load (file read) | wasm heap |');
console.log('|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|');
for (const r of rows)
  console.log(`| ${r.label} | ${r.dtypes}, ${(r.weights / 1048576).toFixed(0)} MiB | ${r.kernels} | ${r.threads} | ${r.prefill.toFixed(1)} | ${Number.isFinite(r.long) ? r.long.toFixed(1) : '–'} | ${r.computeLimit.toFixed(1)} | ${Number.isFinite(r.long) ? (100 * r.long / r.computeLimit).toFixed(1) + '%' : '–'} | ${(r.ttft / 1000).toFixed(2)} s | ${r.decode.toFixed(2)} | ${r.gen.toFixed(2)} | ${r.limit.toFixed(1)} | ${(100 * r.ratio).toFixed(1)}% | ${(r.load / 1000).toFixed(2)} s (${(r.read / 1000).toFixed(2)} s) | ${(r.heap / 1048576).toFixed(0)} MiB |`);
console.log('\nKernel micro-benchmark: one 3584 × 1024 matvec (a gate_proj). "Cached": the same matrix again and again (it stays in the CPU caches); "streamed": 24 different copies one after another (88 MB for q8, beyond the caches), as in decode.\n');
console.log('| kernel | weight bytes | time (cached) | weight GB/s cached | weight GB/s streamed | speed vs ggml-style q8_0 (cached / streamed) |\n|---|---|---|---|---|---|');
for (const l of microRows) console.log(l);
console.log('\n' + exactVsPlain.join('; ') + '.');
