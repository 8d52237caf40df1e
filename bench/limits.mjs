// The machine's limits a run is measured against, in wasm, in this process:
//   - read bandwidth (GB/s): a SIMD128 loop summing 256 MB, on one thread and on both threads of a pool,
//     the better of one sequential stream and four streams a quarter of the buffer apart (the decode
//     tile's pattern, which keeps more cache-line reads in flight: on the 2-vCPU Zen 5 VM it read
//     38.5-39.5 GB/s where one stream read 31-32);
//   - compute (multiply-accumulates per second): the int8 prefill tile's own instruction sequence
//     (i16x8.load8x8_s, i32x4.dot_i16x8_s, i32x4.add; operands in L1, src/kernels/wasm/bench_simd128.c),
//     on one thread and on two at once.
// A limit is what the machine can do, so each is the best of several samples taken after a warm-up
// that lasts until two samples in a row agree: on a shared VM the first passes over fresh memory, and
// any pass during another tenant's burst, run slower (a probe taken cold here read 15 GB/s where the
// warm one read 28), and a low limit would flatter every ratio measured against it.
import { createEngine } from '../js/index.js';

/** the probes' sizes: also handed to the page's probe (bench/vs-peers.mjs --chromium) */
export const PROBE = { BYTES: 256 << 20, REPS: 4, MAC_STEPS: 2e7, SAMPLES: 5, STREAMS: [1, 4] };
const { BYTES, REPS, MAC_STEPS, SAMPLES, STREAMS } = PROBE;

/** Samples `f` (a rate) after a warm-up (until two in a row agree within 3 %, at most 8 calls) and
 *  returns the best of `n`. @param {() => number} f @param {number} [n] */
export function best(f, n = SAMPLES) {
  let last = f();
  for (let k = 0; k < 8; k++) { const r = f(); if (Math.abs(r - last) <= 0.03 * Math.max(r, last)) break; last = r; }
  return Math.max(...Array.from({ length: n }, f));
}

/** @returns {Promise<{bw1: number, bw2: number|null, mac1: number, mac2: number|null}>} GB/s and MAC/s */
export async function measureLimits({ twoThreads = true } = {}) {
  const e = await createEngine({ build: 'test' });
  const buf = e.malloc(BYTES);
  e.u8.fill(1, buf, buf + BYTES);
  const bw1 = Math.max(...STREAMS.map((s) => best(() => { const t = performance.now(); e.c.bench_stream_bytes(buf, BYTES, REPS, s); return (BYTES * REPS) / ((performance.now() - t) / 1000) / 1e9; })));
  e.free(buf);
  const mb = e.malloc(8192);
  e.u8.fill(3, mb, mb + 8192);
  const mac1 = best(() => { const t = performance.now(); e.c.bench_mac(mb, MAC_STEPS); return 64 * MAC_STEPS / ((performance.now() - t) / 1000); });
  e.free(mb);
  let bw2 = null, mac2 = null;
  if (twoThreads) {
    let e2 = null;
    try { e2 = await createEngine({ threads: 2, build: 'test' }); } catch { /* no threaded build here: the two-thread limits stay unknown */ }
    if (e2) {
      const b2 = e2.malloc(BYTES);
      e2.u8.fill(1, b2, b2 + BYTES);
      bw2 = Math.max(...STREAMS.map((s) => best(() => { const t = performance.now(); e2.c.bench_stream_pool(e2.pool, b2, BYTES, REPS, s); return (BYTES * REPS) / ((performance.now() - t) / 1000) / 1e9; })));
      e2.free(b2);
      const m2 = e2.malloc(2 * 8192);
      e2.u8.fill(3, m2, m2 + 2 * 8192);
      mac2 = best(() => { const t = performance.now(); e2.c.bench_mac_pool(e2.pool, m2, MAC_STEPS); return 2 * 64 * MAC_STEPS / ((performance.now() - t) / 1000); });
      e2.free(m2);
      e2.shutdown();
    }
  }
  e.shutdown?.();
  return { bw1, bw2, mac1, mac2 };
}

// `node bench/limits.mjs`: prints them as JSON (bench/vs-peers.mjs runs it once per round)
if (import.meta.url === `file://${process.argv[1]}`) console.log(JSON.stringify(await measureLimits()));
