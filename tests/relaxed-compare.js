// The relaxed-SIMD kernels against their references, as plain ESM that runs in Node and in a page
// (tests/relaxed.test.js runs it in both): each relaxed gemm kernel of the engine's table that runs
// right here against its scalar twin and the SIMD128 kernel, bit for bit, on shapes from its
// edges; and whole models — prefill logits, then decode steps — loaded with a relaxed level
// against the same model with `relaxedSimd: false`, bit for bit.
import { edgeShapes } from './kernel-shapes.js';

function rand(n, seed) {
  let s = seed >>> 0 || 1;
  return Float32Array.from({ length: n }, () => { s ^= s << 13; s ^= s >>> 17; s ^= s << 5; return ((s >>> 0) / 2 ** 32) * 2 - 1; });
}
const bitsEqual = (a, b) => a.length === b.length && new Uint32Array(a.buffer, a.byteOffset, a.length).every((v, i) => v === new Uint32Array(b.buffer, b.byteOffset, b.length)[i]);

/**
 * Each relaxed kernel this engine runs (a test build created with relaxedSimd on) against its twin
 * and the SIMD128 kernel of the same weights and activations.
 * @returns {{kernel: string, shapes: number, differ: string[]}[]}
 */
export function compareKernels(e) {
  const K = e.info.gemm_kernels, out = [];
  const DTYPE_ID = Object.fromEntries(e.info.dtypes.map((d) => [d.name, d.id]));
  for (const k of K.filter((x) => (x.isa === 'relaxed' || x.isa === 'relaxedu8') && e.relaxed.levels[x.isa])) {
    const twin = K.find((g) => g.isa === 'generic' && g.weights === k.weights && g.activations === k.activations);
    const simd = K.find((g) => g.isa === 'simd128' && g.weights === k.weights && g.activations === k.activations);
    const dt = DTYPE_ID[k.weights], differ = [];
    let shapes = 0;
    // beside the edges of the table: batches of tokens that end on a lone token, and row blocks (the
    // engine side batches up to 128 KB of codes, the module walks ~128 KB of weights at a time)
    for (const [rows, cols, T] of [...edgeShapes(k), [36, 16384, 17], [64, 4096, 40], [1028, 1024, 3]]) {
      const W = rand(rows * cols, rows * 131 + cols * 7 + T), X = rand(T * cols, cols * 17 + T * 3 + rows);
      const wp = e.bytes(new Uint8Array(W.buffer)), qp = e.malloc(e.c.dbg_weight_bytes(dt, rows, cols)), xp = e.bytes(new Uint8Array(X.buffer));
      const ys = [k, twin, simd].map(() => e.malloc(rows * T * 4));
      try {
        if (e.c.dbg_quantize(dt, wp, rows, cols, qp)) throw new Error(`${rows}x${cols}: quantize failed`);
        const res = [k, twin, simd].map((g, i) => { e.c.dbg_gemm(g.id, qp, rows, cols, xp, T, ys[i]); return e.f32.slice(ys[i] >> 2, (ys[i] >> 2) + rows * T); });
        if (!bitsEqual(res[0], res[1]) || !bitsEqual(res[0], res[2])) differ.push(`${rows}x${cols} T=${T}`);
        shapes++;
      } finally { for (const p of [wp, qp, xp, ...ys]) e.free(p); }
    }
    out.push({ kernel: k.name, twin: twin.name, simd: simd.name, shapes, differ });
  }
  return out;
}

/** A model's outputs to compare: prefill logits at every position (37 tokens: tiles of 4 and 8 and
 * their remainders), then 5 decode steps' logits, in one array. */
function outputs(m) {
  const V = m.info().config.vocab_size, ids = Array.from({ length: 37 }, (_, i) => (i * 7919 + 13) % V);
  const parts = [m.forward(ids, { logits: 'all' }).logits];
  let next = 5;
  for (let k = 0; k < 5; k++) { parts.push(m.forward([next], { continue: true }).logits); next = (next * 31 + 7) % V; }
  const all = new Float32Array(parts.reduce((a, p) => a + p.length, 0));
  let o = 0;
  for (const p of parts) { all.set(p, o); o += p.length; }
  return all;
}

/**
 * Each weight set loaded with each relaxed setting against `relaxedSimd: false`, per thread count.
 * @param {Function} loadModel @param {string[]} sources @param {(string|boolean)[]} settings @param {number[]} threadsList
 */
export async function compareModels(loadModel, sources, settings, threadsList) {
  const out = [];
  for (const src of sources) for (const threads of threadsList) {
    const ref = await loadModel(src, { relaxedSimd: false, threads, cache: false });
    const want = outputs(ref);
    ref.dispose();
    for (const relaxedSimd of settings) {
      const m = await loadModel(src, { relaxedSimd, threads, cache: false });
      const got = outputs(m), i = m.info();
      out.push({ src, threads: i.build.threads, relaxedSimd, kernels: i.kernels, used: i.build.relaxedSimd.used, why: i.build.relaxedSimd.why, values: got.length, same: bitsEqual(got, want) });
      m.dispose();
    }
  }
  return out;
}
