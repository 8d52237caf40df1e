// Super weights (Yu et al. 2024, "The super weight in large language models", arXiv 2411.07191):
// a few single scalars of an early down_proj that, removed, wreck a large model. They show up
// data-free in one forward pass: a "super activation", an output of down_proj far larger than
// everything else in the layer, made mostly by one product a_j · W[h][j]. superWeights finds, per
// layer, the largest |hook_mlp_out| value and the weight that contributes most to it, ranks the
// layers by how far that spike stands out, and tests each candidate by zeroing that one weight
// (model.zeroWeights) against zeroing the largest-magnitude weight of the same matrix.
import { MlpscopeError } from './errors.js';
import * as A from './args.js';
import { nextTokenLoss } from './select.js';

/** What this uses of a Model (js/model.js). @typedef {{ config: any, nLayers: number, tokenizer: any, _alive(): void,
 *   forward(ids: ArrayLike<number>, opts?: object): any, weightRow(t: string, r: number): Float32Array,
 *   zeroWeights(list: object[]): {restore(): void}, neuronOutput(l: number, j: number, o?: object): any }} SuperModel */

/** mean next-token loss of texts (ids lists), in nats per prediction */
function meanLoss(model, texts) {
  const V = model.config.vocab_size, n = model.tokenizer?.vocabSize || V;
  let s = 0, c = 0;
  for (const ids of texts) { const l = nextTokenLoss(model.forward(ids, { stats: false, logits: 'all' }).logits, ids, V, n); s += l.sum; c += l.count; }
  return s / c;
}

/**
 * @param {SuperModel} model @param {string | ArrayLike<number>} prompt the one pass that finds the candidates
 * @param {{k?: number, evalTexts?: (string | ArrayLike<number>)[]}} [opts] k: candidates tested (the
 *   layers whose spike stands out most, default 3); evalTexts: the texts the loss is measured on
 *   (default: the prompt)
 */
export function superWeights(model, prompt, opts) {
  const where = 'superWeights()';
  model._alive();
  const { k = 3, evalTexts } = A.options(opts, where);
  const toIds = (x, what) => {
    if (typeof x === 'string') {
      if (!model.tokenizer) throw new MlpscopeError('E_TOKEN', `${where}: this model has no tokenizer: give ${what} as token ids`);
      return model.tokenizer.encode(x);
    }
    return Array.from(A.ids(x, where, what));
  };
  const ids = toIds(prompt, 'the prompt');
  if (ids.length < 2) throw new MlpscopeError('E_ARG', `${where}: the prompt has ${ids.length} token(s): at least 2 are needed`);
  const L = model.nLayers, H = model.config.hidden_size, I = model.config.intermediate_size, T = ids.length;
  if (!Number.isInteger(k) || k < 1 || k > L) throw new MlpscopeError('E_ARG', `${where}: k ${A.show(k)} is not an integer in 1..${L}`);
  A.list(evalTexts, where, 'evalTexts');
  const evalIds = (evalTexts ?? [prompt]).map((x, i) => toIds(x, `evalTexts[${i}]`)).filter((x) => x.length >= 2);
  if (!evalIds.length) throw new MlpscopeError('E_ARG', `${where}: evalTexts has no text of 2 tokens or more`);
  const hooks = [];
  for (let l = 0; l < L; l++) hooks.push(`blocks.${l}.mlp.hook_post`, `blocks.${l}.hook_mlp_out`);
  const r = model.forward(ids, { stats: false, logits: 'none', hooks });
  const layers = [];
  for (let l = 0; l < L; l++) {
    const a = r.hooks[`blocks.${l}.mlp.hook_post`], out = r.hooks[`blocks.${l}.hook_mlp_out`];
    let at = 0;
    for (let i = 1; i < T * H; i++) if (Math.abs(out[i]) > Math.abs(out[at])) at = i;
    const t = Math.floor(at / H), h = at % H;
    // how far the spike stands out: against the median |value| of the layer's output over the prompt
    const mags = Float64Array.from(out, Math.abs).sort(), median = mags[Math.floor(mags.length / 2)] || 1e-30;
    // the product a_j · W[h][j] that makes most of it (W[h][:]: one row of down_proj)
    const w = model.weightRow(`layers.${l}.mlp.down_proj`, h);
    let j = 0, best = 0;
    for (let c = 0; c < I; c++) {
      const v = Math.abs(a[t * I + c] * w[c]);
      if (v > best) { best = v; j = c; }
    }
    layers.push({ layer: l, token: t, row: h, col: j, weight: w[j], activation: a[t * I + j], output: out[at], share: (a[t * I + j] * w[j]) / out[at], spike: Math.abs(out[at]) / median });
  }
  const ranked = [...layers].sort((x, y) => y.spike - x.spike).slice(0, k);
  const base = meanLoss(model, evalIds);
  const lossWithout = (list) => { const e = model.zeroWeights(list); try { return meanLoss(model, evalIds); } finally { e.restore(); } };
  const candidates = ranked.map((c) => {
    const tensor = `layers.${c.layer}.mlp.down_proj`;
    // the control: the largest-magnitude weight of the same matrix other than the candidate
    let big = { row: 0, col: 0, value: 0 };
    for (let row = 0; row < H; row++) {
      const w = model.weightRow(tensor, row);
      for (let col = 0; col < I; col++) {
        if (row === c.row && col === c.col) continue;
        if (Math.abs(w[col]) > Math.abs(big.value)) big = { row, col, value: w[col] };
      }
    }
    const loss = lossWithout([{ tensor, row: c.row, col: c.col }]), control = lossWithout([{ tensor, row: big.row, col: big.col }]);
    return { ...c, tensor, loss, dLoss: loss - base, control: { ...big, loss: control, dLoss: control - base } };
  });
  return { tokens: T, evalTokens: evalIds.reduce((s, x) => s + x.length - 1, 0), loss: base, layers, candidates };
}
