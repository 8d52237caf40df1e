// Transcoders: a wide sparse layer trained to stand in for an MLP (src/analysis/transcoder.h).
// The engine does the work (capture, TopK training with Adam and the auxiliary loss, scores); this
// module feeds it token sequences from the project's corpus (js/corpus.js, both languages), reports
// progress, stops when asked and hands back the scores and the set's two files.
import { MlpscopeError } from './errors.js';
import { rng, document } from './corpus.js';
import * as A from './args.js';
import { openSource } from './source.js';
import { sha256Hex } from './hash.js';

/** The defaults of trainTranscoders (what `mlpscope transcoder train` uses unless told). */
export const TRANSCODER_DEFAULTS = Object.freeze({
  features: 2048, k: 32, tokens: 400_000, valTokens: 16_384, epochs: 1, batch: 1024, buffer: 8192, lr: 1e-3,
  seed: 1, corpusSeed: 31, valSeed: 32, replacement: true,
});

const where = 'trainTranscoders';

/**
 * Token sequences of at most T tokens from the corpus generator: documents encoded one by one,
 * each followed by the model's first stop token (the demo trainer's packing), cut into rows of T.
 * @param {{tokenizer: {encode(text: string, o?: {addSpecial?: boolean}): number[] | Int32Array}}} model
 * @param {number} seed @param {number} T @param {number} eos
 */
export function* corpusSequences(model, seed, T, eos) {
  const r = rng(seed);
  let buf = [];
  for (;;) {
    const ids = model.tokenizer.encode(document(r).s, { addSpecial: false });
    for (const id of ids) buf.push(id);
    if (eos >= 0) buf.push(eos);
    while (buf.length >= T) { yield Int32Array.from(buf.slice(0, T)); buf = buf.slice(T); }
  }
}

/**
 * Trains transcoders for some MLPs of a loaded model and scores them on held-out text.
 * Returns the held-out scores per layer (FVU, L0, dead fraction, replacement KL / loss / loss
 * recovered against zero-ablation), the whole replacement's, the training time and rate, and the
 * transcoder set's files (`manifest.json` text and `transcoders.bin` bytes; docs/format.md).
 * `sequences(seed, ctx)`, if given, yields the token rows (at most ctx ids each) instead of the
 * project's corpus: called with corpusSeed for training and valSeed for scoring.
 * @param {any} model a Model (js/model.js) with a tokenizer
 * @param {{layers?: number[], features?: number, k?: number, tokens?: number, valTokens?: number, epochs?: number,
 *   batch?: number, buffer?: number, lr?: number, seed?: number, corpusSeed?: number, valSeed?: number,
 *   replacement?: boolean, ctx?: number, sequences?: (seed: number, ctx: number) => Iterable<ArrayLike<number>>, onProgress?: (p: {phase: 'train' | 'score', done: number, total: number, tokensPerSecond: number, secondsLeft: number,
 *   layers?: {layer: number, steps: number, fvu: number | null, dead: number}[]}) => void,
 *   signal?: AbortSignal, yieldEvery?: number}} [opts]
 */
export async function trainTranscoders(model, opts = {}) {
  model._alive();
  const o = { ...TRANSCODER_DEFAULTS, ...A.options(opts, where) };
  const e = model.e, L = model.nLayers;
  if (o.sequences !== undefined && typeof o.sequences !== 'function') throw new MlpscopeError('E_ARG', `${where}: sequences must be a function (seed, ctx) => an iterable of token-id rows`);
  if (!model.tokenizer && !o.sequences) throw new MlpscopeError('E_ARG', `${where}: the model has no tokenizer, so the corpus cannot be encoded (pass sequences)`);
  const layers = o.layers ?? Array.from({ length: L }, (_, l) => l);
  A.list(layers, where, 'layers');
  for (const l of layers) if (!Number.isInteger(l) || l < 0 || l >= L) throw new MlpscopeError('E_ARG', `${where}: layer ${A.show(l)} is not an integer in 0..${L - 1}`);
  const int = (name, min, max) => {
    const v = o[name];
    if (!Number.isInteger(v) || v < min || v > max) throw new MlpscopeError('E_ARG', `${where}: ${name} ${A.show(v)} is not an integer in ${min}..${max}`);
    return v;
  };
  const F = int('features', 1, 1 << 20), k = int('k', 1, F), tokens = int('tokens', 1, 2 ** 40), valTokens = int('valTokens', 0, 2 ** 40);
  const epochs = int('epochs', 1, 1000), batch = int('batch', 1, 1 << 20), buffer = int('buffer', 1, 1 << 26);
  const maxPos = model.config.max_position_embeddings ?? 128;
  const T = o.ctx ?? Math.min(128, maxPos);
  if (!Number.isInteger(T) || T < 2 || T > maxPos) throw new MlpscopeError('E_ARG', `${where}: ctx ${A.show(T)} is not an integer in 2..${maxPos}`);
  if (!(o.lr > 0 && o.lr < 1)) throw new MlpscopeError('E_ARG', `${where}: lr ${A.show(o.lr)} is not a number in (0, 1)`);
  if (typeof o.replacement !== 'boolean') throw new MlpscopeError('E_ARG', `${where}: replacement must be true or false`);
  for (const name of ['seed', 'corpusSeed', 'valSeed']) int(name, 0, Number.MAX_SAFE_INTEGER);
  const eos = model._info.tokenizer?.eos_token_ids?.[0] ?? -1;
  // the token rows: the project's corpus unless the caller brings its own (a model without a tokenizer)
  const rows = (seed) => {
    if (!o.sequences) return corpusSequences(model, seed, T, eos);
    const V = model.config.vocab_size;
    return (function* () {
      for (const r of o.sequences(seed, T)) {
        const ids = Int32Array.from(r);
        if (ids.length < 1 || ids.length > T || ids.some((x) => !(x >= 0 && x < V))) throw new MlpscopeError('E_ARG', `${where}: a row of sequences has ${ids.length} tokens (1 to ${T}) or an id outside 0..${V - 1}`);
        yield ids;
      }
    })();
  };
  const yieldEvery = o.yieldEvery ?? 8;
  // a report and a chance to stop every yieldEvery sequences, or sooner when a sequence is slow
  // (a big model: a few seconds each), at most a quarter of a second apart
  let n = 0, lastPause = performance.now();
  const due = () => ++n % yieldEvery === 0 || performance.now() - lastPause > 250;
  const pause = async () => { await new Promise((r) => setTimeout(r, 0)); lastPause = performance.now(); };
  const aborted = () => { // after every wait: stopped, or the model disposed meanwhile
    if (o.signal?.aborted) throw new MlpscopeError('E_ABORTED', `${where}: stopped`);
    model._alive();
  };

  // the preflight: what the session will allocate against what the engine's memory has left
  const mem = memoryOf(model, layers.length, F, k, T, buffer, batch);
  if (mem.bytes > mem.free) {
    const mb = (x) => `${(x / 2 ** 20).toFixed(0)} MB`;
    throw new MlpscopeError('E_MEMORY', `${where}: ${layers.length} layer${layers.length > 1 ? 's' : ''} of ${F} features need ${mb(mem.bytes)} (transcoders and optimizer ${mb(mem.parts.weights)}, ` +
      `captured activations ${mb(mem.parts.activations)}, scoring ${mb(mem.parts.scoring)}, the saved set ${mb(mem.parts.saved)}) and the engine has ${mb(mem.free)} left: train fewer layers at a time, fewer features or a smaller buffer`);
  }
  const s = e.c.tc_session_create(model.m, layers, F, k, T, buffer, batch, epochs, o.lr, o.seed);
  try {
    const t0 = performance.now();
    let done = 0;
    const report = (phase, d, total, since) => {
      if (!o.onProgress) return;
      const secs = (performance.now() - since) / 1000, rate = d / Math.max(secs, 1e-3);
      const p = { phase, done: d, total, tokensPerSecond: rate, secondsLeft: (total - d) / Math.max(rate, 1e-9) };
      // while training: each layer's last batch (FVU on it, features dead so far), to watch it fall
      if (phase === 'train') p.layers = e.c.tc_report(s).layers.map((x) => ({ layer: x.layer, steps: x.steps, fvu: x.train_fvu, dead: x.train_dead }));
      o.onProgress(p);
    };
    for (const seq of rows(o.corpusSeed)) {
      if (done >= tokens) break;
      const ids = done + seq.length > tokens ? seq.subarray(0, tokens - done) : seq;
      if (ids.length < 1) break;
      if (e.c.tc_room(s) < ids.length) e.c.tc_train(s);
      e.c.tc_feed(s, ids);
      done += ids.length;
      if (due()) { report('train', done, tokens, t0); await pause(); aborted(); }
    }
    e.c.tc_train(s);
    const trainSeconds = (performance.now() - t0) / 1000;
    report('train', done, tokens, t0);
    aborted(); // a callback may stop the run or dispose the model: checked after every report
    const t1 = performance.now();
    e.c.tc_eval_reset(s, o.replacement ? 1 : 0);
    let scored = 0;
    if (valTokens > 0)
      for (const seq of rows(o.valSeed)) {
        if (scored >= valTokens) break;
        const ids = scored + seq.length > valTokens ? seq.subarray(0, valTokens - scored) : seq;
        if (ids.length >= 2) e.c.tc_eval_feed(s, ids);
        scored += ids.length;
        if (due()) { report('score', scored, valTokens, t1); await pause(); aborted(); }
      }
    if (valTokens > 0) { report('score', scored, valTokens, t1); aborted(); }
    const scores = e.c.tc_report(s);
    const out = e.malloc(16);
    let manifest, bin;
    try {
      manifest = e.c.tc_save(s, typeof model.source === 'string' ? model.source : '', out);
      const p = e.f64[out >> 3], len = e.f64[(out >> 3) + 1];
      bin = e.u8.slice(p, p + len);
      e.x.ms_free(p);
    } finally { e.x.ms_free(out); }
    return {
      layers, features: F, k, trainTokens: done, trainSeconds, tokensPerSecond: done / Math.max(trainSeconds, 1e-9),
      scoreSeconds: (performance.now() - t1) / 1000, threads: e.threads, scores,
      files: { 'manifest.json': manifest, 'transcoders.bin': bin },
    };
  } finally { e.c.tc_session_destroy(s); }
}

/** what a session allocates (the engine's own count, tc_session.h) and what the memory has left */
function memoryOf(model, nLayers, F, k, T, buffer, batch) {
  const e = model.e, out = e.malloc(32);
  try {
    const bytes = e.c.tc_session_bytes(model.m, nLayers, F, k, T, buffer, batch, out);
    const p = e.f64.subarray(out >> 3, (out >> 3) + 4);
    // wasm32: 4 GiB at most; what malloc holds now is taken (a margin for the forward pass's own scratch)
    const free = 4 * 2 ** 30 - e.x.ms_heap_used() - 64 * 2 ** 20;
    return { bytes, free, parts: { weights: p[0], activations: p[1], scoring: p[2], saved: p[3] } };
  } finally { e.free(out); }
}

/**
 * What trainTranscoders will allocate in the engine for these options (the defaults unless given),
 * and what the engine's memory has left: the preflight it runs itself before allocating anything
 * (E_MEMORY when the first is larger). parts: the transcoders and their optimizer state (5 copies
 * of each layer's weights), the captured activations (a buffer per layer), scoring (three
 * [ctx][vocab] logit arrays and a run's state), the saved set.
 * @param {any} model @param {{layers?: number[], features?: number, k?: number, buffer?: number, batch?: number, ctx?: number}} [opts]
 * @returns {{bytes: number, free: number, parts: {weights: number, activations: number, scoring: number, saved: number}}}
 */
export function transcoderMemory(model, opts = {}) {
  model._alive();
  const o = { ...TRANSCODER_DEFAULTS, ...A.options(opts, 'transcoderMemory') };
  const n = (o.layers ?? Array.from({ length: model.nLayers })).length;
  const T = o.ctx ?? Math.min(128, model.config.max_position_embeddings ?? 128);
  return memoryOf(model, n, o.features, o.k, T, o.buffer, o.batch);
}

/**
 * A transcoder set loaded into a model's engine (loadTranscoders): forward(ids, { transcoders:
 * { set, layers, replace } }) reads, edits or swaps in its features.
 */
export class TranscoderSet {
  constructor(model, manifest, ptrs) {
    this.model = model;
    this.features = manifest.features;
    this.k = manifest.k;
    this.scores = manifest.scores ?? null;
    this._ptrs = ptrs; // layer -> the engine's transcoder
    this.layers = [...ptrs.keys()].sort((a, b) => a - b);
  }
  /** the engine's transcoder of a layer (internal) */
  _ptr(layer) {
    if (!this._ptrs) throw new MlpscopeError('E_STATE', 'the transcoder set was disposed');
    const p = this._ptrs.get(layer);
    if (!p) throw new MlpscopeError('E_ARG', `the transcoder set has no layer ${A.show(layer)} (it has ${this.layers.join(', ')})`);
    return p;
  }
  /**
   * What feature `feature` of layer `layer` writes: its decoder row (added to the residual stream
   * per unit of activation) and that row read by the head — its direct effect on the logits, like
   * Model.neuronOutput for a neuron; promoted / suppressed: the k tokens it raises / lowers most.
   * @param {number} layer @param {number} feature @param {{k?: number}} [opts]
   */
  featureOutput(layer, feature, opts) {
    const { k = 10 } = A.options(opts, 'featureOutput()');
    const m = this.model, e = m.e, H = m.config.hidden_size;
    m._alive();
    if (!Number.isInteger(feature)) throw new MlpscopeError('E_ARG', `featureOutput(): feature ${A.show(feature)} is not an integer`);
    const tc = this._ptr(layer), p = e.malloc(H * 4);
    try {
      e.c.tc_decoder_row(tc, feature, p);
      const direction = e.f32.slice(p >> 2, (p >> 2) + H);
      return { direction, norm: Math.hypot(...direction), ...m.unembedDirection(direction, { k }) };
    } finally { e.free(p); }
  }
  dispose() {
    if (!this._ptrs) return;
    if (!this.model._disposed) for (const p of this._ptrs.values()) this.model.e.c.tc_destroy(p);
    this._ptrs = null;
  }
}

/**
 * Loads a transcoder set (docs/format.md, "Transcoder sets") for a loaded model: a folder (Node),
 * a URL, or the `files` of a trainTranscoders result. The set must belong to this model (its
 * shards' hashes) and its file must match the manifest's size and sha256.
 * @param {any} model @param {string | URL | {'manifest.json': string, 'transcoders.bin': Uint8Array}} source
 * @returns {Promise<TranscoderSet>}
 */
export async function loadTranscoders(model, source) {
  model._alive();
  const at = 'loadTranscoders';
  let text, bin;
  if (source && typeof source === 'object' && !(source instanceof URL)) {
    text = source['manifest.json']; bin = source['transcoders.bin'];
    if (typeof text !== 'string' || !(bin instanceof Uint8Array)) throw new MlpscopeError('E_ARG', `${at}: expected {'manifest.json': text, 'transcoders.bin': bytes}`);
  } else {
    const src = await openSource(String(source));
    text = await src.text('manifest.json');
    bin = null;
  }
  let m;
  try { m = JSON.parse(text); } catch (err) { throw new MlpscopeError('E_MANIFEST', `${at}: manifest.json is not JSON: ${err.message}`); }
  if (m?.format !== 'mlpscope-transcoders' || m.version !== 1) throw new MlpscopeError('E_MANIFEST', `${at}: manifest.json is not a transcoder set of version 1 (format ${A.show(m?.format)}, version ${A.show(m?.version)})`);
  const H = model.config.hidden_size, F = m.features, K = m.k;
  if (!Number.isInteger(F) || F < 1 || !Number.isInteger(K) || K < 1 || K > F) throw new MlpscopeError('E_MANIFEST', `${at}: features ${A.show(F)} / k ${A.show(K)} are not a valid pair`);
  const mine = (model._info.shards ?? []).map((x) => x.sha256), theirs = m.model?.shards_sha256;
  if (!Array.isArray(theirs) || theirs.length !== mine.length || theirs.some((h, i) => h !== mine[i]) || m.model.hidden_size !== H)
    throw new MlpscopeError('E_MANIFEST', `${at}: the set was trained for another model (${A.show(m.model?.name)}): its shard hashes differ from this model's`);
  const shard = m.shards?.[0];
  if (!shard || typeof shard.file !== 'string' || !Number.isInteger(shard.bytes) || !/^[0-9a-f]{64}$/.test(shard.sha256 ?? '')) throw new MlpscopeError('E_MANIFEST', `${at}: shards[0] needs file, bytes and sha256`);
  if (!bin) bin = await (await openSource(String(source))).bytes(shard.file);
  if (bin.length !== shard.bytes) throw new MlpscopeError('E_SHARD_SIZE', `${at}: ${shard.file} has ${bin.length} bytes, the manifest says ${shard.bytes}`);
  const e = model.e;
  if (sha256Hex(e, bin) !== shard.sha256) throw new MlpscopeError('E_SHARD_HASH', `${at}: ${shard.file} does not match its sha256 in the manifest`);
  const n = H * F + F + F * H + H, names = ['W_enc', 'b_enc', 'W_dec', 'b_dec'], shapes = [[H, F], [F], [F, H], [H]];
  const ptrs = new Map();
  try {
    for (const L of m.layers ?? []) {
      if (!Number.isInteger(L.layer) || L.layer < 0 || L.layer >= model.nLayers || ptrs.has(L.layer)) throw new MlpscopeError('E_MANIFEST', `${at}: layer ${A.show(L.layer)} is not a layer of the model, or listed twice`);
      const ts = L.tensors ?? [];
      let off0 = null;
      names.forEach((name, i) => { // the four arrays back to back, in this order, f32, of these shapes
        const t = ts[i];
        if (t?.name !== name || t.dtype !== 'f32' || JSON.stringify(t.shape) !== JSON.stringify(shapes[i]) || t.bytes !== shapes[i].reduce((a, b) => a * b, 1) * 4 || (off0 !== null && t.offset !== off0))
          throw new MlpscopeError('E_TENSOR', `${at}: layer ${L.layer} tensor ${i} should be ${name} f32 ${JSON.stringify(shapes[i])} right after the one before it`);
        if (i === 0) off0 = t.offset;
        off0 = t.offset + t.bytes;
      });
      const start = ts[0].offset;
      if (!Number.isInteger(start) || start < 0 || start % 4 || start + n * 4 > bin.length) throw new MlpscopeError('E_TENSOR', `${at}: layer ${L.layer}'s tensors are outside ${shard.file}`);
      const p = e.malloc(n * 4);
      try {
        e.u8.set(bin.subarray(start, start + n * 4), p);
        ptrs.set(L.layer, e.c.tc_create(H, F, K, p));
      } finally { e.free(p); }
    }
  } catch (err) { for (const p of ptrs.values()) e.c.tc_destroy(p); throw err; }
  if (!ptrs.size) throw new MlpscopeError('E_MANIFEST', `${at}: the set lists no layer`);
  return new TranscoderSet(model, m, ptrs);
}
