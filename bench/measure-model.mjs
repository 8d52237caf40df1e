// One mlpscope measurement as bench/vs-peers.mjs takes it, in Node or in a page (no Node imports):
// a warm-up as the ort-web harness does it (a 16-token prompt and 4 steps, at least 3 times and for
// at least 3 s: V8 runs wasm from its baseline compiler until the hot functions are re-compiled),
// then prefill `np` tokens, `ng` decode steps (the first token comes from the prefill, so decode
// speed counts ng - 1 steps, as llama.cpp's does) and a prefill of `long` tokens, all on the
// model's defaults (statistics on). The model needs a context of max(np + ng, long) tokens.

/**
 * @param {import('../js/index.js').Model} m
 * @param {{np: number, ng: number, long: number}} sizes
 */
export function measureModel(m, { np, ng, long }) {
  const V = m.info().config.vocab_size, ids = Array.from({ length: long }, (_, i) => (i * 7919 + 13) % V);
  for (let n = 0, t0 = performance.now(); n < 3 || performance.now() - t0 < 3000; n++) {
    m.forward(ids.slice(0, 16));
    for (let k = 0; k < 4; k++) m.forward([k + 1], { continue: true });
  }
  let t = performance.now();
  let r = m.forward(ids.slice(0, np), { logits: 'last' });
  const pp = np / ((performance.now() - t) / 1000);
  let next = 0;
  for (let i = 1; i < V; i++) if (r.logits[i] > r.logits[next]) next = i;
  t = performance.now();
  for (let k = 1; k < ng; k++) { r = m.forward([next], { continue: true }); next = (next * 31 + 7) % V; }
  const tg = (ng - 1) / ((performance.now() - t) / 1000);
  t = performance.now();
  m.forward(ids);
  const pp512 = long / ((performance.now() - t) / 1000);
  const info = m.info();
  // what the limits divide: multiply-accumulates of one prefill token (every weight of the mixers
  // and MLPs once; the head runs for the last token only) and the weight bytes one decode step reads
  return { pp, pp512, tg, build: info.build, macs: info.params.mlp + info.params.mixer, bytes: info.memory.weights, dtypes: Object.keys(info.dtypes).join('+') };
}
