// Model: forward with statistics, hooks, interventions and logit lens; streaming generation;
// what a neuron writes, read through the head (neuronOutput, unembedDirection).
import { MlpscopeError } from './errors.js';
import { topIndices, klDivergence } from './select.js';
import * as A from './args.js';
import { neuronWeightClasses, neuronWeightClass } from './geometry.js';
import { bilinearView, bilinearGap } from './bilinear.js';
import { resolveAlias } from './aliases.js';

export { klDivergence };

/**
 * @typedef {{ layer: number, hook: 'mlp.hook_post'|'hook_mlp_out', neurons?: number[], scale: number }} Intervention
 * @typedef {{ stats?: boolean, topK?: number, hooks?: string[], interventions?: Intervention[],
 *   logits?: 'last'|'all'|'none', logitLens?: {positions: number[], k?: number, afterMixer?: boolean}, continue?: boolean,
 *   bilinearMlp?: number[] }} ForwardOptions
 * @typedef {{ id: number, token: string|undefined, logit: number }} LogitToken
 */

export class Model {
  constructor(engine, modelPtr, statePtr, info, tokenizer, extra) {
    this.e = engine;
    this.m = modelPtr;
    this.s = statePtr;
    this._info = info;
    this.tokenizer = tokenizer;
    this.contextLength = extra.contextLength;
    this.source = extra.source;
    this._busy = false;
    this._disposed = false;
    this._buildWhy = extra.buildWhy ?? 'single-threaded build';
    /** the kernel level chosen at load (js/weightset.js chooseKernels) */
    this._kernels = extra.kernels ?? { level: 1, isa: 'simd128', why: '', timings: [] };
    this._manifestSha256 = extra.manifestSha256 ?? null;
    this._ownsEngine = !!extra.ownsEngine;
  }

  /** Family, config, parameter counts, dtypes, memory. */
  info() {
    this._alive();
    const i = this._info;
    return {
      family: i.family, kernels: i.kernels, config: i.config, params: i.params, dtypes: i.dtypes,
      build: { threads: this.e.threads, simd: i.kernels !== 'generic', activations: i.activations, int8Activations: i.activations === 'int8', why: this._buildWhy,
        relaxedSimd: { isa: this._kernels.isa, used: this._kernels.level >= 2, why: this._kernels.why, timings: this._kernels.timings } },
      tokenizer: i.tokenizer, contextLength: this.contextLength, source: this.source, manifestSha256: this._manifestSha256,
      memory: { weights: i.weight_bytes, state: this.e.c.model_state_bytes(this.m, this.contextLength, 64), heap: this.e.heapBytes, heapUsed: this.e.c.heap_used() },
      mixers: i.config.layer_types.map((t) => (t === 'linear_attention' ? 'linear' : t === 'sliding_attention' ? 'sliding' : 'full')),
      // the hook points of every block as the engine lists them, with their widths for this model
      hooks: this.e.info.hooks.map((h) => ({ name: h.name, width: i.config[h.width], what: h.what })),
      interventions: this.e.info.interventions,
    };
  }

  /** Every hook name of this model, `blocks.{layer}.{hook}` in forward order (TransformerLens's
   *  hook_dict keys), for forward({hooks}). */
  hookNames() {
    this._alive();
    return Array.from({ length: this.nLayers }, (_, l) => this.e.info.hooks.map((h) => `blocks.${l}.${h.name}`)).flat();
  }

  get config() { return this._info.config; }
  get nLayers() { return this._info.config.num_hidden_layers; }
  /** current position of the sequence state */
  get position() { this._alive(); return this.e.c.state_pos(this.s); }

  /**
   * How Gated DeltaNet layers run a multi-token prefill: in chunks of `chunk` tokens (default 32,
   * matrix-matrix work) or, with recurrent: true, token by token (the reference definition).
   * @param {{recurrent?: boolean, chunk?: number}} mode
   */
  setDeltaNetMode(opts) {
    this._alive();
    const { recurrent = false, chunk = 32 } = A.options(opts, 'setDeltaNetMode()');
    if (!Number.isInteger(chunk)) throw new MlpscopeError('E_ARG', `chunk must be an integer, got ${chunk}`);
    this.e.c.state_set_gdn(this.s, recurrent ? 1 : 0, chunk); // the engine checks the range
  }

  /**
   * Activation patching (TransformerLens' get_act_patch_*): where in the model does the difference
   * between two prompts live? Runs `clean` and `corrupted` (token ids of the same length), then,
   * for each layer and position, runs `corrupted` with `hook`'s clean value patched in at that
   * layer and position (in the engine, as a 'set' intervention) and measures the metric at the
   * last position:
   *   {logitDiff: [a, b]}: logit(a) − logit(b); `restored` = (patched − corrupted) / (clean − corrupted)
   *   'kl': KL(clean ‖ patched) of the next-token distribution; `restored` = 1 − KL / KL(corrupted)
   * so `restored` is 1 where patching that one activation brings the clean answer back and 0 where
   * it changes nothing.
   * Transcoder features ('transcoder.hook_feature', with `transcoders: {set}`; layers default the
   * set's): every feature set to its clean value at the position (the MLP keeps its error term, so
   * only what the transcoder writes changes); with `features: [f, …]` (one layer) each feature alone,
   * and the rows are the features.
   * @param {ArrayLike<number>} clean @param {ArrayLike<number>} corrupted
   * @param {{hook?: string, metric: {logitDiff: [number, number]} | 'kl', layers?: number[], positions?: number[],
   *   transcoders?: {set: import('./transcoder.js').TranscoderSet}, features?: number[]}} opts
   *   hook: a hook point of a block (default 'hook_resid_pre'); layers / positions: default all
   * @returns {{hook: string, layers: number[], positions: number[], clean: number, corrupted: number,
   *   value: number[][], restored: number[][], features?: number[]}} value and restored are
   *   [layer][position] ([feature][position] with `features`)
   */
  activationPatching(clean, corrupted, opts) {
    this._alive();
    const where = 'activationPatching()';
    const { hook = 'hook_resid_pre', metric, layers, positions, transcoders, features } = A.options(opts, where);
    A.ids(clean, where, 'clean'); A.ids(corrupted, where, 'corrupted'); A.str(hook, where, 'hook');
    A.intList(layers, where, 'layers'); A.intList(positions, where, 'positions');
    const bad = (what) => new MlpscopeError('E_ARG', `activationPatching(): ${what}`);
    const T = clean?.length;
    if (!T || corrupted?.length !== T) throw bad(`clean and corrupted must be token ids of the same length (${clean?.length} and ${corrupted?.length})`);
    const V = this._info.config.vocab_size, nReal = this._info.tokenizer.vocab_size || V;
    const diff = metric?.logitDiff;
    if (metric !== 'kl' && !(Array.isArray(diff) && diff.length === 2 && diff.every((t) => Number.isInteger(t) && t >= 0 && t < nReal)))
      throw bad(`metric must be 'kl' or {logitDiff: [a, b]} with two token ids below ${nReal}`);
    const onFeatures = hook === 'transcoder.hook_feature', set = transcoders?.set;
    if (onFeatures && (!set || typeof set._ptr !== 'function' || set.model !== this)) throw bad('patching transcoder.hook_feature needs transcoders: {set} (a set loaded for this model)');
    if (!onFeatures && (transcoders !== undefined || features !== undefined)) throw bad("transcoders and features go with hook 'transcoder.hook_feature'");
    A.intList(features, where, 'features');
    if (features && !(layers?.length === 1)) throw bad('features are patched one at a time in one layer: give layers: [L]');
    if (features) for (const f of features) if (!Number.isInteger(f) || f < 0 || f >= set.features) throw bad(`feature ${f} is not in 0..${set.features - 1}`);
    const Ls = layers ? Array.from(layers) : onFeatures ? [...set.layers] : Array.from({ length: this.nLayers }, (_, l) => l), Ps = positions ? Array.from(positions) : Array.from({ length: T }, (_, t) => t);
    for (const l of Ls) if (!Number.isInteger(l) || l < 0 || l >= this.nLayers) throw bad(`layer ${l} does not exist (the model has ${this.nLayers})`);
    for (const p of Ps) if (!Number.isInteger(p) || p < 0 || p >= T) throw bad(`position ${p} outside [0, ${T})`);
    // each patched run is one forward pass: a layer or position twice would only repeat one
    for (const [what, xs] of [['layers', Ls], ['positions', Ps]]) if (new Set(xs).size !== xs.length) throw bad(`${what} lists a value twice`);
    if (onFeatures) for (const l of Ls) set._ptr(l); // a layer of the set (E_ARG otherwise)
    const names = Ls.map((l) => `blocks.${l}.${hook}`);
    const tc = onFeatures ? { transcoders: { set, layers: Ls } } : {};
    const cleanRun = this.forward(clean, { hooks: names, stats: false, logits: 'last', ...tc });
    const measure = (z) => (diff ? z[diff[0]] - z[diff[1]] : klDivergence(cleanRun.logits, z, nReal));
    const mClean = measure(cleanRun.logits);
    const mCorrupt = measure(this.forward(corrupted, { stats: false, logits: 'last' }).logits);
    const value = [], restored = [];
    const scale = diff ? mClean - mCorrupt : mCorrupt;
    const rowOf = (edits) => {
      const row = [], rrow = [];
      for (const p of Ps) {
        const v = measure(this.forward(corrupted, { stats: false, logits: 'last', interventions: edits(p), ...tc }).logits);
        row.push(v);
        rrow.push(scale === 0 ? 0 : (diff ? (v - mCorrupt) / scale : 1 - v / scale) + 0); // + 0: no -0
      }
      value.push(row); restored.push(rrow);
    };
    if (onFeatures) {
      // features: each (or all) set to its clean value at the position, one edit per feature
      // that differs there (an unchanged one would only repeat itself)
      const F = set.features, corruptRun = this.forward(corrupted, { hooks: names, stats: false, logits: 'none', ...tc });
      const editsAt = (li, fs) => (p) => {
        const a = cleanRun.hooks[names[li]], b = corruptRun.hooks[names[li]], out = [];
        for (const f of fs) if (a[p * F + f] !== b[p * F + f]) out.push({ hook: names[li], features: [f], op: 'set', value: a[p * F + f], positions: [p] });
        return out;
      };
      if (features) for (const f of features) rowOf(editsAt(0, [f]));
      else Ls.forEach((l, li) => rowOf(editsAt(li, Array.from({ length: F }, (_, f) => f))));
      return { hook, layers: Ls, positions: Ps, clean: mClean, corrupted: mCorrupt, value, restored, ...(features ? { features: Array.from(features) } : {}) };
    }
    Ls.forEach((l, li) => {
      const vals = cleanRun.hooks[names[li]], width = vals.length / T, row = [], rrow = [];
      for (const p of Ps) {
        const z = this.forward(corrupted, { stats: false, logits: 'last',
          interventions: [{ layer: l, hook, op: 'set', positions: [p], vector: vals.subarray(p * width, (p + 1) * width) }] }).logits;
        const v = measure(z);
        row.push(v);
        rrow.push(scale === 0 ? 0 : (diff ? (v - mCorrupt) / scale : 1 - v / scale) + 0); // + 0: no -0
      }
      value.push(row); restored.push(rrow);
    });
    return { hook, layers: Ls, positions: Ps, clean: mClean, corrupted: mCorrupt, value, restored };
  }

  /**
   * The prediction decomposed into every block's write (TransformerLens' decompose_resid +
   * logit_attrs): the residual stream at `position` after the last layer is the embedding plus
   * every mixer's and every MLP's output, and the final RMSNorm is linear once its scale
   * 1/rms(x) is frozen, so the logit of `token` (or logit(a) − logit(b)) is a sum of one term per
   * part: lm_head[token] · ((offset + final_norm) ⊙ part) / rms(x). `sum` is that sum and `logit`
   * the model's own value (they agree to float rounding with exact activations; int8 activations
   * round the head's input, so expect a difference of that size).
   * With `neurons: L`, layer L's MLP part is split further into one term per neuron:
   * hook_post[j] · (downᵀ u)[j] / rms(x), u the head's read-out vector (`neurons.values`, summing to
   * that layer's MLP part up to the rounding of its activations: exactly with exact activations).
   * With `transcoder: {set, layer}`, layer L's MLP part is split into one term per transcoder
   * feature instead (a_f · (W_dec[f] · u) / rms(x), a the features at the position), the decoder
   * bias's term and the error (the MLP's write minus the transcoder's): features + bias + error
   * is the layer's MLP part. The MLP still runs; only its write is read in features.
   * @param {ArrayLike<number>} ids
   * @param {{position?: number, token?: number, logitDiff?: [number, number], neurons?: number,
   *   transcoder?: {set: import('./transcoder.js').TranscoderSet, layer: number}}} [opts] position:
   *   negative from the end (default -1); token: default the model's top prediction there
   * @returns {{position: number, token?: number, logitDiff?: [number, number], logit: number, sum: number, scale: number,
   *   parts: {name: string, kind: 'embed' | 'attention' | 'deltanet' | 'mlp', layer: number | null, value: number}[],
   *   neurons?: {layer: number, values: Float32Array, sum: number},
   *   features?: {layer: number, active: {feature: number, activation: number, value: number}[], bias: number, error: number, sum: number}}}
   *   features.active: the features that fire there, by |value| descending; sum: Σ value + bias + error
   */
  decomposePrediction(ids, opts) {
    this._alive();
    let { position = -1, token, logitDiff, neurons, transcoder } = A.options(opts, 'decomposePrediction()');
    A.ids(ids, 'decomposePrediction()');
    const bad = (what) => new MlpscopeError('E_ARG', `decomposePrediction(): ${what}`);
    const T = ids?.length, L = this.nLayers, H = this.config.hidden_size, V = this.config.vocab_size;
    const nReal = this._info.tokenizer.vocab_size || V;
    if (!T) throw bad('no tokens');
    const p = position < 0 ? T + position : position;
    if (!Number.isInteger(p) || p < 0 || p >= T) throw bad(`position ${position} outside the ${T} tokens`);
    const okTok = (t) => Number.isInteger(t) && t >= 0 && t < nReal;
    if (token !== undefined && !okTok(token)) throw bad(`token ${token} is not an id below ${nReal}`);
    if (logitDiff !== undefined && !(Array.isArray(logitDiff) && logitDiff.length === 2 && logitDiff.every(okTok))) throw bad('logitDiff must be two token ids');
    if (neurons !== undefined && !(Number.isInteger(neurons) && neurons >= 0 && neurons < L)) throw bad(`neurons: layer ${neurons} does not exist (the model has ${L})`);
    let tcOpt = null, tcHook = null;
    if (transcoder !== undefined) {
      const { set, layer } = A.options(transcoder, 'decomposePrediction(): transcoder');
      if (!set || typeof set._ptr !== 'function') throw bad('transcoder.set must be a set from loadTranscoders()');
      if (set.model !== this) throw bad('transcoder.set was loaded for another model');
      set._ptr(layer); // a layer of the set (E_ARG otherwise)
      tcOpt = { transcoders: { set, layers: [layer], replace: false } };
      tcHook = `blocks.${layer}.transcoder.hook_feature`;
    }
    const names = ['blocks.0.hook_resid_pre'];
    for (let l = 0; l < L; l++) names.push(`blocks.${l}.hook_attn_out`, `blocks.${l}.hook_mlp_out`);
    const last = `blocks.${L - 1}.hook_resid_post`, post = neurons === undefined ? null : `blocks.${neurons}.mlp.hook_post`;
    // the tokens up to p are all the pass needs (later ones cannot change position p): its logits
    // are the last row, and no [T][vocab] logits are held (248k × T floats on Qwen3.5)
    const r = this.forward(Array.from(ids).slice(0, p + 1), { hooks: [...names, last, ...(post ? [post] : []), ...(tcHook ? [tcHook] : [])], stats: false, logits: 'last', ...tcOpt });
    const z = r.logits;
    if (token === undefined && !logitDiff) { token = 0; for (let i = 1; i < nReal; i++) if (z[i] > z[token]) token = i; }
    const x = r.hooks[last].subarray(p * H, (p + 1) * H);
    let ms = 0;
    for (let i = 0; i < H; i++) ms += x[i] * x[i];
    const scale = 1 / Math.sqrt(ms / H + this._info.config.rms_norm_eps);
    const read = (w) => (logitDiff ? w[logitDiff[0]] - w[logitDiff[1]] : w[token]);
    const mixers = this.info().mixers;
    const parts = names.map((name, i) => {
      const layer = i === 0 ? null : (i - 1) >> 1, kind = i === 0 ? 'embed' : i % 2 ? (mixers[layer] === 'linear' ? 'deltanet' : 'attention') : 'mlp';
      const w = this.unembedDirection(r.hooks[name].subarray(p * H, (p + 1) * H), { k: 1 }).logits;
      return { name: i === 0 ? 'embed' : name, kind, layer, value: read(w) * scale };
    });
    const sum = parts.reduce((a, q) => a + q.value, 0);
    const out = { position: p, ...(logitDiff ? { logitDiff } : { token }), logit: read(z), sum, scale, parts };
    if (post) out.neurons = this._neuronParts(neurons, r.hooks[post], p, logitDiff ?? [token, -1], scale);
    if (tcHook) {
      const l = tcOpt.transcoders.layers[0];
      out.features = this._featureParts(tcOpt.transcoders.set, l, r.hooks[tcHook], p, logitDiff ?? [token, -1], scale, parts[2 + 2 * l].value);
    }
    return out;
  }

  /** Layer l's MLP write at position p in transcoder features: a_f · (W_dec[f] · u) · scale, the
   *  decoder bias's term, and the rest of the MLP part `mlpPart` as the error */
  _featureParts(set, l, feats, p, [a, b], scale, mlpPart) {
    const e = this.e, H = this.config.hidden_size, F = set.features;
    const u = e.malloc(H * 4);
    let w = 0;
    try {
      w = e.malloc((F + 1) * 8);
      e.c.head_readout(this.m, a, b, u);
      e.c.tc_readout(set._ptr(l), u, w);
      const readout = e.f64.subarray(w >> 3, (w >> 3) + F + 1), z = feats.subarray(p * F, (p + 1) * F);
      const active = [];
      let sum = 0;
      for (let f = 0; f < F; f++) if (z[f] !== 0) { const value = z[f] * readout[f] * scale; active.push({ feature: f, activation: z[f], value }); sum += value; }
      active.sort((x, y) => Math.abs(y.value) - Math.abs(x.value) || x.feature - y.feature);
      const bias = readout[F] * scale;
      const error = mlpPart - sum - bias;
      return { layer: l, active, bias, error, sum: sum + bias + error };
    } finally { e.free(u); if (w) e.free(w); }
  }

  /** Layer l's MLP write at position p split per neuron: h[j] · (downᵀ (g ⊙ u))[j] · k · scale (u: the
   *  head's read-out; Gemma 3's post-MLP norm: g its gain, k = 1/rms(down h) at p; else g = k = 1). */
  _neuronParts(l, hookPost, p, [a, b], scale) {
    const e = this.e, H = this.config.hidden_size, I = this.config.intermediate_size;
    const u = e.malloc(H * 4), w = e.malloc(I * 4), hp = e.malloc(I * 4), kp = e.malloc(4);
    try {
      e.c.head_readout(this.m, a, b, u);
      e.c.mlp_down_readout(this.m, l, u, w);
      const h = hookPost.subarray(p * I, (p + 1) * I);
      e.f32.set(h, hp >> 2);
      e.c.mlp_write_scale(this.m, l, hp, 1, kp);
      const readout = e.f32.subarray(w >> 2, (w >> 2) + I), k = e.f32[kp >> 2];
      const values = new Float32Array(I);
      let sum = 0;
      for (let j = 0; j < I; j++) { values[j] = h[j] * readout[j] * k * scale; sum += h[j] * readout[j] * k * scale; }
      return { layer: l, values, sum };
    } finally { e.free(u); e.free(w); e.free(hp); e.free(kp); }
  }

  /**
   * A steering vector: the mean of a hook point's activations over the prompts of `a` minus their
   * mean over the prompts of `b` (the difference-of-means recipe of activation addition), ready
   * for an `{hook, op: 'add', vector}` intervention in `forward()` or `generate()`. Each prompt is
   * text or token ids; `at: 'last'` (default) takes each prompt's last token, `'mean'` the mean over
   * its tokens.
   * @param {(string | ArrayLike<number>)[] | string} a @param {(string | ArrayLike<number>)[] | string} b
   * @param {{hook: string, at?: 'last' | 'mean'}} opts hook: a full hook name, 'blocks.L.<point>'
   * @returns {{hook: string, vector: Float32Array, norm: number, count: [number, number]}}
   */
  steeringVector(a, b, opts) {
    this._alive();
    const { hook, at = 'last' } = A.options(opts, 'steeringVector()');
    const bad = (what) => new MlpscopeError('E_ARG', `steeringVector(): ${what}`);
    if (typeof hook !== 'string' || !/^blocks\.\d+\./.test(hook)) throw bad(`hook must name a block's hook point, like 'blocks.3.hook_resid_post' (got ${A.show(hook)})`);
    if (at !== 'last' && at !== 'mean') throw bad(`at must be 'last' or 'mean', not ${A.show(at)}`);
    const list = (x, name) => {
      const xs = typeof x === 'string' || (x && typeof x[0] === 'number') ? [x] : x;
      if (!Array.isArray(xs) || !xs.length) throw bad(`${name} must be a prompt or a non-empty list of prompts`);
      return xs.map((p, i) => {
        const ids = typeof p === 'string' ? this._encodePrompt(p) : Array.from(p ?? []);
        if (!ids.length) throw bad(`${name}[${i}] has no tokens`);
        return ids;
      });
    };
    const mean = (prompts) => {
      let sum = null;
      for (const ids of prompts) {
        const v = this.forward(ids, { hooks: [hook], stats: false, logits: 'none' }).hooks[hook];
        const w = v.length / ids.length;
        sum ??= new Float64Array(w);
        for (let t = at === 'last' ? ids.length - 1 : 0; t < ids.length; t++)
          for (let i = 0; i < w; i++) sum[i] += v[t * w + i] / (at === 'last' ? 1 : ids.length);
      }
      return sum.map((s) => s / prompts.length);
    };
    const pa = list(a, 'a'), pb = list(b, 'b');
    const ma = mean(pa), mb = mean(pb);
    const vector = Float32Array.from(ma, (x, i) => x - mb[i]);
    return { hook, vector, norm: Math.hypot(...vector), count: [pa.length, pb.length] };
  }

  /**
   * What neuron `neuron` of layer `layer` writes: its column of down_proj (the direction added to
   * the residual stream per unit of mlp.hook_post; Gemma 3: times the post_feedforward_layernorm
   * gain, the direction written up to that norm's per-token 1/rms) and that direction read by the head, i.e. its
   * direct effect on the logits, lm_head · ((offset + final_norm) ⊙ column), ignoring the layers
   * after it. promoted / suppressed: the k tokens of the real vocabulary it raises / lowers most.
   * @param {number} layer @param {number} neuron @param {{k?: number}} [opts]
   * @returns {{direction: Float32Array, norm: number, logits: Float32Array, promoted: LogitToken[], suppressed: LogitToken[]}}
   */
  neuronOutput(layer, neuron, opts) {
    this._alive();
    const { k = 10 } = A.options(opts, 'neuronOutput()');
    const e = this.e, H = this.config.hidden_size;
    if (!Number.isInteger(k) || k < 1) throw new MlpscopeError('E_ARG', `k must be a positive integer, got ${k}`);
    if (!Number.isInteger(layer) || !Number.isInteger(neuron)) throw new MlpscopeError('E_ARG', `layer and neuron must be integers, got ${layer}, ${neuron}`);
    const p = e.malloc(H * 4);
    try {
      e.c.mlp_down_column(this.m, layer, neuron, p);
      const direction = e.f32.slice(p >> 2, (p >> 2) + H);
      return { direction, norm: Math.hypot(...direction), ...this.unembedDirection(direction, { k }) };
    } finally { e.free(p); }
  }

  /**
   * Every neuron of the chosen layers in its input-output class, from the weights alone (js/geometry.js:
   * the cosines of w_gate, w_in and w_out; Gerstner & Schütze 2025).
   * @param {{layers?: number[], threshold?: number, foldNorm?: boolean}} [opts]
   */
  neuronWeightClasses(opts) { return neuronWeightClasses(this, opts); }

  /**
   * One neuron's weight cosines, norms and input-output class (js/geometry.js).
   * @param {number} layer @param {number} neuron @param {{threshold?: number, foldNorm?: boolean}} [opts]
   */
  neuronWeightClass(layer, neuron, opts) { return neuronWeightClass(this, layer, neuron, opts); }

  /**
   * One weight as the kernels read it: element (row, col) of the matrix `tensor` (a weight-set
   * name such as 'layers.2.mlp.down_proj'; q8 / q4 dequantized exactly).
   * @param {string} tensor @param {number} row @param {number} col @returns {number}
   */
  weight(tensor, row, col) {
    this._alive();
    const e = this.e, p = e.malloc(4);
    try {
      e.c.weight_get(this.m, weightName(tensor), weightIndex(row, 'row'), weightIndex(col, 'col'), p);
      return e.f32[p >> 2];
    } finally { e.free(p); }
  }

  /**
   * One row of the matrix `tensor`, dequantized (a row of down_proj: what every neuron writes into
   * one dimension of the stream).
   * @param {string} tensor @param {number} row @returns {Float32Array}
   */
  weightRow(tensor, row) {
    this._alive();
    const e = this.e, name = weightName(tensor), r = weightIndex(row, 'row');
    const cols = e.c.weight_cols(this.m, name), p = e.malloc(cols * 4);
    try {
      e.c.weight_row(this.m, name, r, p);
      return e.f32.slice(p >> 2, (p >> 2) + cols);
    } finally { e.free(p); }
  }

  /**
   * Sets single weights to exactly 0 in place (a zero code in a quantized block, its scale kept),
   * for ablations such as removing a super weight; every later pass sees the change until
   * restore() of the returned handle puts the old values back (in reverse order). Not over the
   * Worker (a handle cannot cross it): superWeights runs there whole.
   * @param {{tensor: string, row: number, col: number}[]} list @returns {{restore(): void}}
   */
  zeroWeights(list) {
    this._alive();
    A.list(list, 'zeroWeights()', 'the list');
    const e = this.e, p = e.malloc(4), done = [];
    const restore = () => { while (done.length) { const d = done.pop(); e.c.weight_restore(this.m, d.tensor, d.row, d.col, d.saved); } };
    try {
      list.forEach((w, i) => {
        if (!w || typeof w !== 'object') throw new MlpscopeError('E_ARG', `zeroWeights(): [${i}] must be {tensor, row, col}, not ${A.show(w)}`);
        const d = { tensor: weightName(w.tensor), row: weightIndex(w.row, `[${i}].row`), col: weightIndex(w.col, `[${i}].col`) };
        e.c.weight_zero(this.m, d.tensor, d.row, d.col, p);
        d.saved = e.i32[p >> 2];
        done.push(d);
        this._geometry = null; // the weight classes read the weights: computed again
      });
    } catch (err) { restore(); throw err; } finally { e.free(p); }
    let live = true;
    return { restore: () => { if (live && !this._disposed) { restore(); this._geometry = null; } live = false; } };
  }

  /**
   * A layer's MLP as a bilinear form read out along a token, a direction or one neuron: the
   * interaction matrix and its top eigenvectors read through the head (js/bilinear.js).
   * @param {{layer: number, token?: number, direction?: ArrayLike<number>, neuron?: number, k?: number, foldNorm?: boolean, tokens?: number}} opts
   */
  bilinearView(opts) { return bilinearView(this, opts); }

  /**
   * How far each MLP is from its bilinear stand-in on a text: KL and loss change with one layer's
   * SiLU replaced by z/2 at a time, and with all of them (js/bilinear.js).
   * @param {string | ArrayLike<number>} input @param {{layers?: number[]}} [opts]
   */
  bilinearGap(input, opts) { return bilinearGap(this, input, opts); }

  /**
   * A residual-stream direction read by the head: lm_head · ((offset + final_norm) ⊙ v), with the
   * k tokens of the real vocabulary it raises and lowers most. With normalize: true, v is first
   * divided by its RMS, i.e. the full final RMSNorm: the logit lens of any residual vector (e.g. a
   * layer's hook_resid_mid, what the stream predicts before that layer's MLP).
   * @param {ArrayLike<number>} v hidden_size values @param {{k?: number, normalize?: boolean}} [opts]
   * @returns {{logits: Float32Array, promoted: LogitToken[], suppressed: LogitToken[]}}
   */
  unembedDirection(v, opts) {
    this._alive();
    const { k = 10, normalize = false } = A.options(opts, 'unembedDirection()');
    A.list(v, 'unembedDirection()', 'the direction');
    const e = this.e, H = this.config.hidden_size, V = this.config.vocab_size;
    if (v?.length !== H) throw new MlpscopeError('E_ARG', `the direction has ${v?.length} values, the model's hidden size is ${H}`);
    for (let i = 0; i < H; i++) if (!Number.isFinite(v[i])) throw new MlpscopeError('E_ARG', `the direction's value ${i} is ${v[i]}, not a finite number`);
    if (!Number.isInteger(k) || k < 1) throw new MlpscopeError('E_ARG', `k must be a positive integer, got ${k}`);
    const vp = e.malloc(H * 4), lp = e.malloc(V * 4);
    try {
      e.f32.set(Float32Array.from(v), vp >> 2);
      if (normalize) e.c.unembed_vec(this.s, vp, lp); // the final RMSNorm and head, as the forward pass runs them
      else e.c.unembed_direction(this.m, vp, lp);
      const logits = e.f32.slice(lp >> 2, (lp >> 2) + V);
      const n = Math.min(V, this.tokenizer?.vocabSize || this._info.tokenizer?.vocab_size || V);
      const tok = (id) => ({ id, token: this.tokenizer?.idToToken(id), text: this.tokenizer?.tokenTexts([id])[0], logit: logits[id] });
      const ranked = (sign) => topIndices(n, k, (a, b) => sign * (logits[a] - logits[b]) > 0 || (logits[a] === logits[b] && a < b));
      return { logits, promoted: ranked(1).map(tok), suppressed: ranked(-1).map(tok) };
    } finally { e.free(vp); e.free(lp); }
  }

  /** Clear the sequence state (KV cache, DeltaNet state). */
  reset() { this._alive(); this.e.c.state_clear(this.s); }

  /**
   * Runs ids through the model. By default a fresh sequence (the state is reset first); with
   * `continue: true` the ids extend the current sequence.
   * @param {ArrayLike<number>} ids
   * @param {ForwardOptions} [opts]
   */
  forward(ids, opts) {
    this._alive();
    opts = A.options(opts, 'forward()');
    A.ids(ids, 'forward()');
    if (this._busy) throw new MlpscopeError('E_STATE', 'the model is busy (a generate() is running); wait for it or abort it');
    return this._forward(ids, opts);
  }

  // One forward call: the engine checks every argument (ids, context, hooks, interventions, lens
  // positions) and computes everything asked for, the logit lens too; this reads the results.
  _forward(ids, opts) {
    const e = this.e, c = e.c, cfg = this._info.config, L = this.nLayers;
    const { stats = true, topK = 8, hooks: hooks0 = [], interventions: ivs0 = [], logits = 'last', logitLens, bilinearMlp = [], transcoders } = opts;
    A.list(hooks0, 'forward()', 'hooks'); A.list(ivs0, 'forward()', 'interventions');
    // transcoder features (js/transcoder.js): their hook names and edits are taken out here
    const tc = transcoderPlan(transcoders, hooks0, ivs0, this);
    const hooks = tc ? tc.hooks : hooks0, interventions = tc ? tc.interventions : ivs0;
    A.list(hooks, 'forward()', 'hooks'); A.list(interventions, 'forward()', 'interventions'); A.intList(bilinearMlp, 'forward()', 'bilinearMlp');
    for (let i = 0; i < hooks.length; i++) if (typeof hooks[i] !== 'string') throw new MlpscopeError('E_ARG', `forward(): hooks[${i}] is ${A.show(hooks[i])}, not a hook name`);
    if (!Number.isInteger(topK) || topK < 0) throw new MlpscopeError('E_ARG', `forward(): topK is ${A.show(topK)}, not an integer >= 0`);
    if (logitLens !== undefined) {
      A.options(logitLens, 'forward(): logitLens');
      if (A.intList(logitLens.positions, 'forward(): logitLens', 'positions') === undefined) throw new MlpscopeError('E_ARG', 'forward(): logitLens needs positions: [..]');
      if (logitLens.k !== undefined && !Number.isInteger(logitLens.k)) throw new MlpscopeError('E_ARG', `forward(): logitLens.k is ${A.show(logitLens.k)}, not an integer`);
    }
    const T = ids.length;
    for (let t = 0; t < T; t++) // a type check only (the engine checks the range): 1.5 must not pass as 1
      if (!Number.isInteger(ids[t])) throw new MlpscopeError('E_TOKEN', `token id ${ids[t]} at position ${t} is not an integer`);
    if (!opts.continue) c.state_clear(this.s);
    const start = c.state_pos(this.s);
    const mode = e.info.logits_modes.indexOf(logits); // the engine's code for 'none' | 'last' | 'all'
    if (mode < 0) throw new MlpscopeError('E_ARG', `logits: '${logits}' is not one of ${e.info.logits_modes.join(', ')}`);
    // TransformerLens 3's linear_attn names (js/aliases.js): another name of a hook point, or a
    // per-head statistic (collected for the call even when the statistics are not asked for)
    const mixers = this.info().mixers, named = hooks.map((name) => {
      const a = resolveAlias(String(name), mixers);
      if (a?.error) throw new MlpscopeError('E_ARG', a.error);
      return { name, a };
    });
    const statAliases = named.filter((x) => x.a?.stat);
    const run = c.run_new(this.s, T, stats || statAliases.length ? 1 : 0, topK, mode);
    try {
      const caps = named.filter((x) => !x.a?.stat).map(({ name, a }) => ({ name, i: c.run_hook(run, a ? a.hook : String(name)) }));
      interventions.forEach((iv0, i) => {
        let iv = iv0;
        if (typeof iv0?.hook === 'string' && iv0.hook.includes('linear_attn.')) {
          const full = iv0.hook.startsWith('blocks.') ? iv0.hook : `blocks.${iv0.layer}.${iv0.hook}`, a = resolveAlias(full, mixers);
          if (a?.error) throw new MlpscopeError('E_ARG', `interventions[${i}]: ${a.error}`);
          if (a?.stat) throw new MlpscopeError('E_ARG', `interventions[${i}]: "${full}" is a statistic of the layer here (${a.stat}): it can be read, not changed`);
          if (a) iv = { ...iv0, hook: a.hook, layer: undefined };
        }
        const a = interventionArgs(iv, i, start, T, this.e.info.intervention_ops);
        c.run_intervene(run, a.layer, a.hook, a.op, a.dims, a.positions, a.value, a.vector);
      });
      const lensK = logitLens?.k ?? 5, nReal = this._info.tokenizer.vocab_size || cfg.vocab_size;
      if (logitLens) c.run_lens(run, logitLens.positions, lensK, logitLens.afterMixer ? 1 : 0, nReal);
      for (const l of bilinearMlp) c.run_bilinear(run, l); // the engine checks the layer
      if (tc) {
        for (const l of tc.layers) c.run_transcoder(run, l, tc.set._ptr(l), tc.replace ? 0 : 1, tc.read.has(l) ? 1 : 0);
        tc.edits.forEach((ed) => {
          const a = interventionArgs(ed.iv, ed.i, start, T, this.e.info.intervention_ops);
          if (a.vector.length) throw new MlpscopeError('E_ARG', `interventions[${ed.i}]: a feature takes a value, not a vector`);
          if (!tc.layers.includes(a.layer)) throw new MlpscopeError('E_ARG', `interventions[${ed.i}]: no transcoder on layer ${a.layer} in this call`);
          for (const f of a.dims.length ? a.dims : [-1]) c.run_feature_edit(run, a.layer, f, a.op, a.value, a.positions); // -1: every feature
        });
      }
      const t0 = performance.now();
      c.run_exec(run, ids);
      const totalMs = performance.now() - t0;

      const out = { logits: null, stats: null, hooks: {}, timings: { total_ms: totalMs, layer_ms: null }, position: start };
      if (opts._pick) out.picked = opts._pick(c.run_logits(run)); // generate(): sample in place
      else if (logits !== 'none') {
        const lp = c.run_logits(run);
        out.logits = e.f32.slice(lp >> 2, (lp >> 2) + cfg.vocab_size * (logits === 'all' ? T : 1));
      }
      for (const { name, a } of statAliases) {
        const d = e.info.stats.find((s) => s.name === a.stat), p = c.run_stat(run, d.id), Hv = cfg.linear_num_value_heads;
        out.hooks[name] = e.f32.slice((p >> 2) + a.layer * T * Hv, (p >> 2) + (a.layer + 1) * T * Hv); // [token][head]
      }
      if (stats) {
        // every statistic the engine lists (ms_engine_info), [layer] arrays of its other dimensions
        const st = { T, layers: L, topK, mixer: this.info().mixers };
        const dims = { layer: L, token: T, top_k: topK, gdn_head: cfg.linear_num_value_heads };
        for (const d of e.info.stats) {
          const p = c.run_stat(run, d.id);
          if (!p) continue; // not collected for this model (e.g. DeltaNet statistics of a Llama)
          const view = d.type === 'i32' ? e.i32 : d.type === 'f64' ? e.f64 : e.f32;
          const width = d.shape.slice(1).reduce((n, k) => n * dims[k], 1);
          if (d.name === 'layer_ms') out.timings.layer_ms = view.slice(p / view.BYTES_PER_ELEMENT, p / view.BYTES_PER_ELEMENT + L);
          else st[d.name] = perLayer(view, p, L, width);
          if (d.shape.includes('gdn_head')) st.gdn_heads = dims.gdn_head;
        }
        out.stats = st;
      }
      for (const { name, i } of caps) {
        const p = c.run_hook_data(run, i);
        out.hooks[name] = e.f32.slice(p >> 2, (p >> 2) + c.run_hook_count(run, i));
      }
      if (tc) for (const [name, l] of tc.named) {
        const p = c.run_features_of(run, l);
        out.hooks[name] = e.f32.slice(p >> 2, (p >> 2) + T * tc.set.features); // [token][feature]
      }
      if (logitLens) out.logitLens = this._lens(run, logitLens.positions, ids, Math.min(lensK, nReal), !!logitLens.afterMixer);
      return out;
    } finally {
      c.run_free(run);
    }
  }

  /** The lens results the engine computed: per position, per layer the top-k tokens of
   *  unembed(final_norm(resid_post)) and, with afterMixer, of resid_mid (before the layer's MLP).
   *  Where each one is comes from the engine's description of the layout (engine.info.lens).
   *  Each token's `text` reads as it would after the tokens up to its position. */
  _lens(run, positions, ids, k, afterMixer) {
    const T = ids.length;
    const e = this.e, c = e.c, L = this.nLayers, { shape, kinds } = e.info.lens;
    const sizes = { position: positions.length, kind: afterMixer ? kinds.length : 1, layer: L, k };
    const stride = {};
    shape.reduceRight((n, d) => { stride[d] = n; return n * sizes[d]; }, 1);
    const idp = c.run_lens_top_ids(run) >> 2, lg = c.run_lens_top_logits(run) >> 2, pr = c.run_lens_top_probs(run) >> 2;
    let texts = null; // per position: id -> text after the tokens up to it
    const textOf = (id) => {
      if (!texts.has(id)) texts.set(id, this.tokenizer.tokenTexts([id], { after: texts.after })[0]);
      return texts.get(id);
    };
    const top = (at) => Array.from({ length: k }, (_, j) => {
      const x = at + j * stride.k, id = e.i32[idp + x];
      return { id, token: this.tokenizer?.idToToken(id), text: this.tokenizer ? textOf(id) : undefined, logit: e.f32[lg + x], prob: e.f32[pr + x] };
    });
    const kind = (hook) => kinds.indexOf(hook); // the stream leaving the block; before its MLP
    return positions.map((p, i) => {
      texts = Object.assign(new Map(), { after: Array.from(ids).slice(0, (p < 0 ? T + p : p) + 1) });
      const at = (kd) => Array.from({ length: L }, (_, l) => top(i * stride.position + kd * stride.kind + l * stride.layer));
      return { position: p < 0 ? T + p : p, layers: at(kind('hook_resid_post')), ...(afterMixer ? { afterMixer: at(kind('hook_resid_mid')) } : {}) };
    });
  }

  /**
   * Streaming generation. Yields {id, text, logprob}; greedy at temperature 0.
   * @param {string|number[]|{role: string, content: string}[]} prompt text (encoded with BOS when
   *   the tokenizer has one), token ids, or chat messages (rendered with the chat template)
   * @param {{maxTokens?: number, temperature?: number, topK?: number, topP?: number, seed?: number,
   *   stop?: (number|string)[], interventions?: Intervention[], signal?: AbortSignal, enableThinking?: boolean, stats?: boolean, statsTopK?: number}} [opts]
   *   stats: collect the per-layer statistics of every token the model reads (the prompt and each
   *   generated token fed back) in the generation passes themselves, into the summary's `stats`
   *   (as forward()'s, plus layer_ms[layer][pass]: each pass's time in that layer)
   * @returns {AsyncGenerator<{id: number, text: string, logprob: number}, GenerationSummary>} the
   *   generator's return value (also kept as `model.lastGeneration`) is the summary:
   *   {finishReason: 'stop' | 'length' | 'abort', usage: {promptTokens, generatedTokens, prefillMs,
   *   decodeMs, timeToFirstTokenMs, prefillTokPerS, decodeTokPerS}, stats?}. Decode speed counts the
   *   tokens after the first (which comes out of the prefill), as llama.cpp does.
   */
  async *generate(prompt, opts) {
    this._alive();
    if (this._busy) throw new MlpscopeError('E_STATE', 'the model is busy (another generate() is running)');
    opts = A.options(opts, 'generate()');
    if (typeof prompt !== 'string' && !Array.isArray(prompt) && !ArrayBuffer.isView(prompt))
      throw new MlpscopeError('E_ARG', `generate(): the prompt must be text, token ids or chat messages, not ${A.show(prompt)}`);
    if (opts.signal !== undefined && !(opts.signal instanceof AbortSignal)) throw new MlpscopeError('E_ARG', `generate(): signal must be an AbortSignal, not ${A.show(opts.signal)}`);
    const { maxTokens = 64, temperature = 0, topK = 0, topP = 1, seed = 0, signal } = opts;
    const { ids, stop, stops, nReal } = this._generationPlan(prompt, opts);
    const e = this.e, V = this._info.config.vocab_size;
    this._busy = true;
    const sampler = e.c.sampler_create(seed, V);
    const dec = this.tokenizer?.decoder();
    if (dec) for (const id of ids) dec.push(id); // prime the decoder with the prompt
    // the next token is drawn from the logits where the engine left them (no 1 MB copy per token
    // for a 248k vocabulary)
    const pick = (lp) => e.c.sampler_draw(sampler, lp, nReal, temperature, topK, topP);
    const fwd = { stats: !!opts.stats, topK: opts.statsTopK ?? 8, logits: 'last', _pick: pick, interventions: opts.interventions ?? [] };
    const steps = [];
    let decodeSteps = 0; // timed decode passes: each drew a token (the stop token too)
    const usage = { promptTokens: ids.length, generatedTokens: 0, prefillMs: 0, decodeMs: 0, timeToFirstTokenMs: 0, prefillTokPerS: 0, decodeTokPerS: 0 };
    const summary = { finishReason: 'length', usage };
    const finish = (reason) => {
      summary.finishReason = reason;
      usage.prefillTokPerS = usage.prefillMs > 0 ? ids.length / (usage.prefillMs / 1000) : 0;
      usage.decodeTokPerS = usage.decodeMs > 0 ? decodeSteps / (usage.decodeMs / 1000) : 0;
      if (opts.stats && steps.length) summary.stats = concatStats(steps);
      this.lastGeneration = summary;
      return summary;
    };
    try {
      let t = performance.now();
      let res = this._forward(ids, fwd);
      usage.prefillMs = usage.timeToFirstTokenMs = performance.now() - t;
      const keep = (r) => { if (r.stats) steps.push({ ...r.stats, layer_ms: Array.from(r.timings.layer_ms, (v) => Float64Array.of(v)) }); };
      keep(res);
      for (let n = 0; n < maxTokens; n++) {
        if (signal?.aborted) { finish('abort'); throw new MlpscopeError('E_ABORTED', 'generation aborted'); }
        const id = res.picked;
        const logprob = e.c.sampler_last_logprob(sampler);
        if (stop.has(id)) { yield* stops.flush(); return finish('stop'); }
        usage.generatedTokens++;
        const out = stops.push({ id, text: dec ? dec.push(id) : '', logprob });
        yield* out.ready;
        if (out.hit) { summary.stopString = out.hit; return finish('stop'); }
        if (e.c.state_pos(this.s) >= this.contextLength) break;
        await null; // let the event loop breathe between tokens
        // the token is fed back (also the last one, so the state holds the whole sequence and a
        // later forward(..., {continue: true}) goes on from it); only steps that yield a token
        // count as decode time
        t = performance.now();
        res = this._forward([id], { ...fwd, continue: true });
        if (n + 1 < maxTokens) { usage.decodeMs += performance.now() - t; decodeSteps++; }
        keep(res);
      }
      yield* stops.flush();
      return finish('length');
    } finally {
      this._busy = false;
      e.c.sampler_destroy(sampler);
    }
  }

  /** generate()'s options checked, the prompt's ids, the stop ids and the stop-string matcher */
  _generationPlan(prompt, opts) {
    const { maxTokens = 64, temperature = 0, topK = 0, topP = 1, seed = 0 } = opts;
    const bad = (what) => new MlpscopeError('E_ARG', `generate(): ${what}`);
    if (!Number.isInteger(maxTokens) || maxTokens < 0) throw bad(`maxTokens ${maxTokens} is not an integer >= 0`);
    if (!(Number.isFinite(temperature) && temperature >= 0)) throw bad(`temperature ${temperature} is not a number >= 0`);
    if (!Number.isInteger(topK) || topK < 0) throw bad(`topK ${topK} is not an integer >= 0 (0: no top-k cut)`);
    if (!(topP >= 0 && topP <= 1)) throw bad(`topP ${topP} is outside [0, 1]`);
    if (!Number.isSafeInteger(seed) || seed < 0) throw bad(`seed ${seed} is not an integer in [0, 2^53)`);
    if (opts.stop !== undefined && !(Array.isArray(opts.stop) && opts.stop.every((x) => Number.isInteger(x) || (typeof x === 'string' && x.length > 0))))
      throw bad('stop must be an array of token ids and non-empty strings');
    const isChat = Array.isArray(prompt) && prompt.length > 0 && typeof prompt[0] === 'object';
    if (isChat && !this.tokenizer) throw new MlpscopeError('E_TOKEN', 'this weight set has no tokenizer: chat messages need one');
    const ids = typeof prompt === 'string' ? this._encodePrompt(prompt)
      : isChat ? this._encodeChat(prompt, opts.enableThinking)
      : Array.from(prompt);
    if (!ids.length) throw new MlpscopeError('E_ARG', 'empty prompt: nothing to continue from');
    const nReal = this._info.tokenizer.vocab_size || this._info.config.vocab_size; // rows past the real vocabulary are never sampled
    const stopStrings = (opts.stop ?? []).filter((x) => typeof x === 'string');
    if (stopStrings.length && !this.tokenizer) throw bad('stop strings need a tokenizer (this weight set has none): give token ids');
    // stop ids given replace the model's end tokens; only strings keep them; [] stops on nothing
    const stopIds = (opts.stop ?? []).filter((x) => typeof x === 'number');
    const defaultIds = opts.stop === undefined || (stopIds.length === 0 && stopStrings.length > 0);
    const stop = new Set(defaultIds ? this._info.tokenizer.eos_token_ids : stopIds);
    if (this.tokenizer?.kind === 'llama2c' && defaultIds) stop.add(this.tokenizer.bosId); // llama2.c stops at BOS
    return { ids, stop, stops: new StopStrings(stopStrings), nReal };
  }

  /** chat messages -> ids: a template that writes the BOS token itself (Llama 3's) gets no second one */
  _encodeChat(messages, enableThinking) {
    const t = this.tokenizer, text = t.applyChatTemplate(messages, { enableThinking });
    const bos = t.bosId >= 0 ? t.idToToken(t.bosId) : undefined;
    return t.encode(text, { addSpecial: !(bos && text.startsWith(bos)) });
  }

  _encodePrompt(text) {
    if (!this.tokenizer) throw new MlpscopeError('E_TOKEN', 'this weight set has no tokenizer: pass token ids');
    return this.tokenizer.encode(text, { addSpecial: true });
  }

  /** `using model = await loadModel(…)` disposes it at the end of the block */
  [Symbol.dispose ?? Symbol.for('Symbol.dispose')]() { this.dispose(); }

  dispose() {
    if (this._disposed) return;
    this._disposed = true;
    this.tokenizer?.dispose();
    this.e.c.state_destroy(this.s);
    this.e.c.model_destroy(this.m);
    if (this._ownsEngine) this.e.shutdown(); // ends the worker threads, if any
  }

  _alive() { if (this._disposed) throw new MlpscopeError('E_STATE', 'the model was disposed'); }
}

/** The statistics of consecutive forward calls as one: every [layer] array joined along the tokens. */
function concatStats(list) {
  const first = list[0], out = { ...first, T: list.reduce((n, s) => n + s.T, 0) };
  for (const [k, v] of Object.entries(first)) {
    if (!Array.isArray(v) || !ArrayBuffer.isView(v[0])) continue;
    out[k] = v.map((_, l) => {
      const parts = list.map((s) => s[k][l]), joined = new parts[0].constructor(parts.reduce((n, p) => n + p.length, 0));
      let at = 0;
      for (const p of parts) { joined.set(p, at); at += p.length; }
      return joined;
    });
  }
  return out;
}

function perLayer(view, ptr, L, width) {
  const base = ptr / view.BYTES_PER_ELEMENT;
  const all = view.slice(base, base + L * width);
  return Array.from({ length: L }, (_, l) => all.subarray(l * width, (l + 1) * width));
}

/**
 * Stop strings matched in generated text across token boundaries: text that could be the start of
 * one is held back until it is known not to be; the stop string itself is never emitted, and the
 * last token before it comes out cut where it begins. With no strings every token passes at once.
 */
class StopStrings {
  /** @param {string[]} strings */
  constructor(strings) { this.strings = strings; this.held = []; this.text = ''; }
  /** a new token: the tokens now safe to emit, and the stop string if one was completed */
  push(token) {
    if (!this.strings.length) return { ready: [token], hit: null };
    this.held.push(token);
    this.text += token.text;
    const hit = this._find();
    if (hit) { // the tokens before the stop string, the last one cut where it begins
      const ready = [];
      let at = 0;
      for (const h of this.held) {
        if (at >= hit.index) break; // this token starts inside the stop string
        ready.push({ ...h, text: h.text.slice(0, hit.index - at) });
        at += h.text.length;
      }
      this.held = []; this.text = '';
      return { ready, hit: hit.str };
    }
    const ready = [];
    let free = this.text.length - this._partial();
    while (this.held.length && this.held[0].text.length <= free) {
      const h = this.held.shift();
      free -= h.text.length;
      this.text = this.text.slice(h.text.length);
      ready.push(h);
    }
    return { ready, hit: null };
  }
  /** the end of generation: whatever was held back */
  flush() { const h = this.held; this.held = []; this.text = ''; return h; }
  _find() {
    let best = null;
    for (const str of this.strings) { const i = this.text.indexOf(str); if (i >= 0 && (!best || i < best.index)) best = { index: i, str }; }
    return best;
  }
  _partial() { // the longest end of the held text that begins a stop string
    let k = 0;
    for (const str of this.strings) for (let n = Math.min(str.length - 1, this.text.length); n > k; n--) if (this.text.endsWith(str.slice(0, n))) { k = n; break; }
    return k;
  }
}

/** top-k of logits as {id, token, prob} with softmax probabilities */
export function topTokens(logits, k, tokenizer, { after } = {}) {
  let mx = -Infinity;
  for (let i = 0; i < logits.length; i++) if (logits[i] > mx) mx = logits[i];
  let z = 0;
  for (let i = 0; i < logits.length; i++) z += Math.exp(logits[i] - mx);
  const best = topIndices(logits.length, k, (a, b) => logits[a] > logits[b] || (logits[a] === logits[b] && a < b));
  const texts = tokenizer ? tokenizer.tokenTexts(best, { after }) : [];
  return best.map((id, i) => ({ id, token: tokenizer?.idToToken(id), text: texts[i], logit: logits[id], prob: Math.exp(logits[id] - mx) / z }));
}

/**
 * One intervention as the engine takes it. Accepted: {hook: 'blocks.L.<point>'} or {layer, hook:
 * '<point>'}; op 'scale' (value, or the older `scale`), 'set' (value, default 0: zero-ablation, or
 * vector) or 'add' (value or vector); neurons / dims: the components (omitted: all); positions:
 * sequence positions, negative from the end of this call (omitted: all).
 */
function weightName(t) {
  if (typeof t !== 'string' || !t || t.length > 200) throw new MlpscopeError('E_ARG', `weight: the tensor must be a name such as 'layers.0.mlp.down_proj', not ${A.show(t)}`);
  return t;
}
function weightIndex(v, what) {
  if (!Number.isInteger(v) || v < 0 || v > 0x7fffffff) throw new MlpscopeError('E_ARG', `weight: ${what} ${A.show(v)} is not an integer >= 0`);
  return v;
}

const FEATURE_HOOK = 'transcoder.hook_feature';
/**
 * forward()'s transcoders option: which layers get a transcoder, which hooks read its features
 * (blocks.L.transcoder.hook_feature) and which interventions edit them; the rest of hooks and
 * interventions go on as before. null without the option.
 */
function transcoderPlan(opt, hooks, interventions, model) {
  const nLayers = model.nLayers;
  const featureHook = (h) => typeof h === 'string' && (h === FEATURE_HOOK || h.endsWith('.' + FEATURE_HOOK));
  if (opt === undefined) {
    const stray = hooks.find(featureHook) ?? interventions.find((iv) => featureHook(iv?.hook))?.hook;
    if (stray) throw new MlpscopeError('E_ARG', `forward(): ${stray} needs the transcoders option ({ set })`);
    return null;
  }
  A.options(opt, 'forward(): transcoders');
  const set = opt.set;
  if (!set || typeof set._ptr !== 'function') throw new MlpscopeError('E_ARG', 'forward(): transcoders.set must be a set from loadTranscoders()');
  if (set.model !== model) throw new MlpscopeError('E_ARG', 'forward(): transcoders.set was loaded for another model (loadTranscoders(thisModel, …))');
  const layers = opt.layers === undefined ? set.layers : A.intList(opt.layers, 'forward(): transcoders', 'layers');
  for (const l of layers) set._ptr(l); // each must be in the set
  const named = [], read = new Set();
  for (const h of hooks) {
    if (!featureHook(h)) continue;
    const m = /^blocks\.(\d+)\.transcoder\.hook_feature$/.exec(h);
    if (!m || Number(m[1]) >= nLayers) throw new MlpscopeError('E_ARG', `forward(): hook ${h} is not blocks.L.${FEATURE_HOOK} of a layer`);
    if (!layers.includes(Number(m[1]))) throw new MlpscopeError('E_ARG', `forward(): hook ${h}: no transcoder on layer ${m[1]} in this call (transcoders.layers)`);
    named.push([h, Number(m[1])]); read.add(Number(m[1]));
  }
  const edits = [];
  interventions.forEach((iv, i) => { if (featureHook(iv?.hook)) edits.push({ iv: { ...iv, neurons: iv.features ?? iv.neurons, features: undefined }, i }); });
  return {
    set, layers, replace: opt.replace === true, named, read, edits,
    hooks: hooks.filter((h) => !featureHook(h)), interventions: interventions.filter((iv) => !featureHook(iv?.hook)),
  };
}

function interventionArgs(iv, i, start, T, ops) {
  const bad = (what) => new MlpscopeError('E_ARG', `interventions[${i}]: ${what}`);
  if (!iv || typeof iv !== 'object') throw bad('expected an object {hook, op, value | vector, neurons?, positions?}');
  let layer = iv.layer, hook = String(iv.hook);
  const named = /^blocks\.(\d+)\.(.+)$/.exec(hook);
  if (named) {
    if (layer !== undefined && layer !== Number(named[1])) throw bad(`layer ${layer} and hook ${hook} disagree`);
    layer = Number(named[1]); hook = named[2];
  }
  if (!Number.isInteger(layer)) throw bad(`no layer (give hook as 'blocks.L.${hook}' or a layer number)`);
  const op = iv.op ?? 'scale';
  if (!ops.includes(op)) throw bad(`op '${op}' is not one of ${ops.join(', ')}`);
  if (iv.neurons !== undefined && iv.dims !== undefined) throw bad('give neurons or dims, not both');
  const list = (x, what) => {
    if (x === undefined) return [];
    if (!Array.isArray(x) && !ArrayBuffer.isView(x)) throw bad(`${what} must be an array`);
    if (x.length === 0) throw bad(`${what} is empty (leave it out for all)`);
    return Array.from(x);
  };
  const dims = list(iv.neurons ?? iv.dims, iv.neurons !== undefined ? 'neurons' : 'dims');
  const positions = list(iv.positions, 'positions').map((p) => (Number.isInteger(p) && p < 0 ? start + T + p : p));
  const value = iv.value ?? (op === 'scale' ? iv.scale : undefined);
  const vector = iv.vector === undefined ? [] : Array.from(iv.vector);
  if (op === 'scale' && (value === undefined || iv.vector !== undefined)) throw bad('scale needs a value (a number), and takes no vector');
  if (op === 'add' && value === undefined && iv.vector === undefined) throw bad('add needs a value or a vector');
  if (value !== undefined && iv.vector !== undefined) throw bad('give a value or a vector, not both');
  if (value !== undefined && typeof value !== 'number') throw bad(`value ${value} is not a number`);
  return { layer, hook, op: ops.indexOf(op), dims, positions, value: value ?? 0, vector };
}

