// Finding MLP neurons that respond selectively to a labelled kind of token (city names, negation
// words, tokens inside code ...). Selectivity is the ROC AUC of a neuron's mlp.hook_post activation
// for separating positive from negative tokens; neurons are chosen on one part of the probes and
// reported on the other (held out), so a high number is not a selection artefact.
// neuronTopActivations() lists where one neuron fires most over a set of texts.

import { fail } from './errors.js';
import { topIndices } from './select.js';
import * as A from './args.js';
import { topTokens } from './model.js';

/**
 * @typedef {{text: string, spans: {start: number, end: number, label: string}[], lang?: string}} Probe
 *   lang (e.g. 'en', 'zh'): the best neurons also get `heldOutAucByLang`, the held-out AUC within
 *   the probes of each language
 * @typedef {{pos: string[], neg?: string[], at?: 'token'|'word-end'}} FeatureSpec  neg omitted = every
 *   other token; at 'word-end': a labelled span counts once, at its last token
 * @typedef {{feature: string, layer: number, neuron: number, sign: 1|-1, auc: number, heldOutAuc: number, nPos: number, nNeg: number, heldOutAucByLang?: Record<string, number>}} FeatureNeuron
 * @typedef {{feature: string, layer: number, auc: number, heldOutAuc: number, direction: Float32Array, threshold: number}} FeatureDirection
 *   direction: unit vector over the hidden size, applied to blocks.{layer}.hook_resid_mid / its RMS;
 *   threshold: the projection halfway between the positive and the negative mean
 */

export const DEFAULT_FEATURES = {
  // word features are read at each word's last token (where a multi-token word is complete)
  city: { pos: ['city'], neg: ['name', 'noun', 'country'], at: 'word-end' },
  negation: { pos: ['negation'], at: 'word-end' },
  code: { pos: ['code'] },
};

/**
 * The units a search reads: the MLP's neurons (blocks.L.mlp.hook_post, intermediate_size wide) or,
 * with a transcoder set, its features (blocks.L.transcoder.hook_feature, set.features wide; the
 * MLP itself still runs, so the rest of the pass is the model's own).
 * @returns {{unit: 'neuron' | 'transcoder', width: number, hook: (l: number) => string, forward: (layers: number[]) => object, layers: number[]}}
 */
function unitsOf(model, set, where) {
  if (set === undefined) return { unit: 'neuron', width: model.config.intermediate_size, hook: (l) => `blocks.${l}.mlp.hook_post`, forward: () => ({}), layers: Array.from({ length: model.nLayers }, (_, l) => l) };
  if (!set || typeof set._ptr !== 'function') fail('E_ARG', `${where}: transcoders must be a set from loadTranscoders(), not ${A.show(set)}`);
  if (set.model !== model) fail('E_ARG', `${where}: the transcoder set was loaded for another model`);
  return { unit: 'transcoder', width: set.features, hook: (l) => `blocks.${l}.transcoder.hook_feature`, forward: (layers) => ({ transcoders: { set, layers, replace: false } }), layers: set.layers };
}

/** Character offsets [start, end) of each token of `ids` in the decoded text. */
export function tokenOffsets(tokenizer, ids) {
  const d = tokenizer.decoder();
  const out = [];
  let pos = 0;
  for (const id of ids) { const s = d.push(id); out.push([pos, pos + s.length]); pos += s.length; }
  return out;
}

/**
 * Mann-Whitney AUC of scores: P(score of a positive > score of a negative), ties count half.
 * Both sides are sorted (numerically, natively) and swept once: for each positive, the negatives
 * below it and the ones equal to it; the count is exact in doubles, so the result equals the
 * rank-sum formula bit for bit.
 * @param {ArrayLike<number>} pos @param {ArrayLike<number>} neg
 */
export function auc(pos, neg) {
  const np = pos.length, nn = neg.length;
  if (!np || !nn) return 0.5;
  const p = Float64Array.from(pos).sort(), q = Float64Array.from(neg).sort();
  let below = 0, upto = 0, count = 0; // q[0..below) < v, q[0..upto) <= v
  for (let i = 0; i < np; i++) {
    const v = p[i];
    while (below < nn && q[below] < v) below++;
    if (upto < below) upto = below;
    while (upto < nn && q[upto] <= v) upto++;
    count += below + (upto - below) / 2;
  }
  return count / (np * nn);
}

/**
 * @param {{tokenizer: any, forward: Function, nLayers: number, config: any}} model an in-process Model
 * @param {Probe[]} probes
 * @param {{features?: Record<string, FeatureSpec>, layers?: number[], top?: number, heldOutFrom?: number, directions?: boolean, topActivations?: number, quantiles?: number[], maxBytes?: number, byLang?: boolean, transcoders?: import('./transcoder.js').TranscoderSet, combine?: number[], onProgress?: (p: {done: number, total: number}) => void}} [opts]
 *   transcoders: search the set's features (blocks.L.transcoder.hook_feature) instead of the
 *   neurons, on the set's layers; each result then has `unit: 'transcoder'` and `neuron` is the
 *   feature's index;
 *   combine: sizes n — each layer's first candidate also gets `combined: [{n, heldOutAuc}]`, the
 *   held-out AUC of its layer's n best units read together (chosen and weighted on the first
 *   part: |mean over positives − mean over negatives| / pooled variance, signed as the unit's AUC
 *   orients it, summed);
 *   maxBytes (default 256 MiB): activations held at once; past it the layers are taken in groups,
 *   one pass over the probes per group (same results, more forward passes);
 *   onProgress({done, total}): after each forward pass of a probe (total = passes × probes);
 *   directions: also the best mean-difference direction of the MLP input per feature (FeatureDirection);
 *   topActivations: k — each best neuron also gets `top`, its k strongest activations over all the
 *   probes (as neuronTopActivations gives them, from the same forward passes);
 *   quantiles (with topActivations): each best neuron also gets `atQuantiles`, the token at each
 *   quantile of its sign × activation over the probes (as neuronTopActivations({quantiles}));
 *   byLang: also the search within each language's probes alone (probes that carry `lang`):
 *   `bestByLang[lang]`, chosen on the first half of that language's probes, reported on its second
 *   (with topActivations, their `top` from that language's probes)
 * @returns {{best: FeatureNeuron[], perLayer: Record<string, FeatureNeuron[]>, tokens: number, directions?: FeatureDirection[], bestByLang?: Record<string, FeatureNeuron[]>}}
 */
export function findFeatureNeurons(model, probes, opts) {
  const where = 'findFeatureNeurons()';
  opts = A.options(opts, where);
  if (!model.tokenizer) fail('E_TOKEN', `${where}: this weight set has no tokenizer, so probe texts cannot be read`);
  if (!Array.isArray(probes)) fail('E_ARG', `${where}: probes must be an array of {text, spans}, not ${A.show(probes)}`);
  probes.forEach((p, i) => {
    if (typeof p?.text !== 'string' || !Array.isArray(p.spans)) fail('E_ARG', `${where}: probes[${i}] must be {text: string, spans: [...]}`);
    p.spans.forEach((sp, k) => {
      if (!(Number.isInteger(sp?.start) && Number.isInteger(sp.end) && typeof sp.label === 'string')) fail('E_ARG', `${where}: probes[${i}].spans[${k}] must be {start, end, label}`);
    });
  });
  if (opts.features !== undefined) A.options(opts.features, `${where}: features`);
  A.intList(opts.layers, where, 'layers');
  for (const k of ['heldOutFrom', 'top', 'topActivations', 'maxBytes'])
    if (opts[k] !== undefined && !(Number.isInteger(opts[k]) && opts[k] >= 0)) fail('E_ARG', `${where}: ${k} is ${A.show(opts[k])}, not an integer >= 0`);
  if (opts.layers) for (const l of opts.layers) if (l < 0 || l >= model.nLayers) fail('E_ARG', `${where}: layer ${l} is not in 0..${model.nLayers - 1}`);
  if (opts.quantiles !== undefined && !(Array.isArray(opts.quantiles) && opts.quantiles.every((q) => typeof q === 'number' && q >= 0 && q <= 1)))
    fail('E_ARG', `${where}: quantiles must be an array of numbers in [0, 1], not ${A.show(opts.quantiles)}`);
  if (opts.quantiles && !opts.topActivations) fail('E_ARG', `${where}: quantiles go with topActivations`);
  if (opts.onProgress !== undefined && typeof opts.onProgress !== 'function') fail('E_ARG', `${where}: onProgress must be a function`);
  const units = unitsOf(model, opts.transcoders, where);
  if (opts.transcoders && opts.layers) for (const l of opts.layers) if (!units.layers.includes(l)) fail('E_ARG', `${where}: the transcoder set has no layer ${l} (it has ${units.layers.join(', ')})`);
  if (opts.combine !== undefined && !(Array.isArray(opts.combine) && opts.combine.every((n) => Number.isInteger(n) && n >= 1)))
    fail('E_ARG', `${where}: combine must be an array of integers >= 1, not ${A.show(opts.combine)}`);
  const features = opts.features ?? DEFAULT_FEATURES;
  const layers = opts.layers ?? units.layers;
  const I = units.width, H = model.config.hidden_size;
  const split = opts.heldOutFrom ?? Math.floor(probes.length / 2);
  // per token: its probe half, its labels; the activations are filled in per group of layers
  const rows = []; // {half, p, t, labels:Set, ends:Set, empty, acts: Float32Array[group], mid: Float32Array[group]}
  const idsOf = [];
  for (let p = 0; p < probes.length; p++) {
    const { text, spans } = probes[p];
    const ids = model.tokenizer.encode(text, { addSpecial: true });
    if (!ids.length || ids.length > model.contextLength) continue;
    const offs = tokenOffsets(model.tokenizer, ids);
    idsOf[p] = ids;
    for (let t = 0; t < ids.length; t++) {
      const [a, b] = offs[t];
      const over = spans.filter((s) => s.start < b && s.end > a && b > a);
      const labels = new Set(over.map((s) => s.label));
      // the span ends inside this token: the word is complete here
      const ends = new Set(over.filter((s) => s.end <= b).map((s) => s.label));
      rows.push({ half: p < split ? 0 : 1, p, lang: probes[p].lang, labels, ends, empty: b === a || !/\S/.test(text.slice(a, b)), t, acts: null, mid: null });
    }
  }
  // Every layer's activations of every probe token at once would be tokens × layers × (I + H)
  // floats: 2.3 GB for Qwen3.5-0.8B on the default probes. Layers are taken in groups that fit
  // maxBytes, one pass over the probes per group (one group, one pass, for small models).
  const bytesPerLayer = rows.length * (I + (opts.directions ? H : 0)) * 4;
  const groupSize = Math.max(1, Math.floor((opts.maxBytes ?? 256 * 2 ** 20) / bytesPerLayer));
  const halvesOf = Object.fromEntries(Object.entries(features).map(([name, spec]) => [name, splitRows(rows, spec)]));
  const found = Object.fromEntries(Object.keys(features).map((name) => [name, []]));
  const tops = new Map(); // `[lang:]${feature}:${layer}`: the top activations of that layer's first candidate
  const langs = opts.byLang ? [...new Set(probes.map((p) => p.lang).filter(Boolean))].sort() : [];
  const foundByLang = Object.fromEntries(langs.map((g) => [g, Object.fromEntries(Object.keys(features).map((name) => [name, []]))]));
  let directions = opts.directions ? [] : undefined;
  const passes = Math.ceil(layers.length / groupSize), perPass = idsOf.filter(Boolean).length;
  let done = 0;
  for (let g0 = 0; g0 < layers.length; g0 += groupSize) {
    const group = layers.slice(g0, g0 + groupSize);
    const hooks = group.map(units.hook);
    if (opts.directions) hooks.push(...group.map((l) => `blocks.${l}.hook_resid_mid`));
    let k = 0;
    for (let p = 0; p < probes.length; p++) {
      const ids = idsOf[p];
      if (!ids) continue;
      const r = model.forward(ids, { stats: false, logits: 'none', hooks, ...units.forward(group) });
      opts.onProgress?.({ done: ++done, total: passes * perPass });
      for (let t = 0; t < ids.length; t++, k++) {
        rows[k].acts = group.map((l) => r.hooks[units.hook(l)].subarray(t * I, (t + 1) * I));
        rows[k].mid = opts.directions ? group.map((l) => rmsUnit(r.hooks[`blocks.${l}.hook_resid_mid`].subarray(t * H, (t + 1) * H))) : null;
      }
    }
    if (directions) directions = mergeDirections(directions, featureDirections(halvesOf, group, H));
    for (const name of Object.keys(features)) {
      const halves = halvesOf[name];
      if (!halves[0].pos.length || !halves[0].neg.length) continue;
      for (let li = 0; li < group.length; li++) {
        const top = layerCandidates(halves, li, group[li], name, I, opts.top ?? 3);
        if (units.unit === 'transcoder') for (const c of top) c.unit = 'transcoder';
        if (opts.combine && top.length) top[0].combined = combined(halves, li, I, opts.combine);
        found[name].push(...top);
        if (opts.topActivations && top.length) tops.set(`${name}:${group[li]}`, topOfRows(model, rows, idsOf, probes, li, top[0], opts.topActivations, undefined, opts.quantiles));
        // byLang: the same search within each language's probes alone (chosen on its first half,
        // reported on its second)
        for (const g of langs) {
          const hg = halves.map((h) => ({ pos: h.pos.filter((r) => r.lang === g), neg: h.neg.filter((r) => r.lang === g) }));
          if (!hg[0].pos.length || !hg[0].neg.length) continue;
          const c = layerCandidates(hg, li, group[li], name, I, 1)[0];
          if (units.unit === 'transcoder') c.unit = 'transcoder';
          foundByLang[g][name].push(c);
          if (opts.topActivations) tops.set(`${g}:${name}:${group[li]}`, topOfRows(model, rows, idsOf, probes, li, c, opts.topActivations, g, opts.quantiles));
        }
      }
    }
  }
  for (const r of rows) { r.acts = null; r.mid = null; }
  // per feature, the highest AUC of any layer (the first candidate of its layer; ties: the lower layer)
  const pick = (cands, key) => Object.keys(features).flatMap((name) => {
    const chosen = [...cands[name]].sort((x, y) => y.auc - x.auc || x.layer - y.layer)[0];
    if (chosen && opts.topActivations) {
      const t = tops.get(`${key}${name}:${chosen.layer}`);
      chosen.top = t.top;
      if (t.atQuantiles) chosen.atQuantiles = t.atQuantiles;
    }
    return chosen ? [chosen] : [];
  });
  const best = pick(found, '');
  const byLang = langs.length ? { bestByLang: Object.fromEntries(langs.map((g) => [g, pick(foundByLang[g], `${g}:`)])) } : {};
  return { best, perLayer: found, tokens: rows.length, ...(directions ? { directions } : {}), ...byLang };
}

/** one layer's top candidates for a feature: chosen by AUC on halves[0], reported on halves[1];
 *  rows that carry their probe's language also give the held-out AUC within each language */
function layerCandidates(halves, li, layer, name, I, top) {
  const cands = [];
  for (let j = 0; j < I; j++) {
    const a = auc(halves[0].pos.map((r) => r.acts[li][j]), halves[0].neg.map((r) => r.acts[li][j]));
    cands.push({ j, a: Math.max(a, 1 - a), sign: a >= 0.5 ? 1 : -1 });
  }
  cands.sort((x, y) => y.a - x.a || x.j - y.j);
  return cands.slice(0, top).map((c) => {
    const h = halves[1];
    const score = (r) => c.sign * r.acts[li][c.j];
    const out = { feature: name, layer, neuron: c.j, sign: c.sign, auc: c.a, heldOutAuc: auc(h.pos.map(score), h.neg.map(score)), nPos: h.pos.length, nNeg: h.neg.length };
    const langs = [...new Set(h.pos.map((r) => r.lang).filter(Boolean))].sort();
    if (langs.length > 1) out.heldOutAucByLang = Object.fromEntries(langs.map((g) => [g, auc(h.pos.filter((r) => r.lang === g).map(score), h.neg.filter((r) => r.lang === g).map(score))]));
    return out;
  });
}

/**
 * Several units read together: the n units of the layer with the highest AUC on halves[0], each
 * weighted by |mean over positives − mean over negatives| / (pooled variance), both on halves[0]
 * (a linear discriminant with a diagonal covariance, i.e. Gaussian naive Bayes with one shared
 * variance per unit), signed as the unit's own AUC orients it (a unit of zero variance gets its
 * sign alone); the weighted sum's AUC on halves[1]. One entry per n of `sizes`.
 * @returns {{n: number, heldOutAuc: number}[]}
 */
function combined(halves, li, I, sizes) {
  const [{ pos: p0, neg: n0 }, { pos: p1, neg: n1 }] = halves;
  const ranked = [];
  for (let j = 0; j < I; j++) {
    const a = auc(p0.map((r) => r.acts[li][j]), n0.map((r) => r.acts[li][j]));
    ranked.push([Math.max(a, 1 - a), j, a >= 0.5 ? 1 : -1]);
  }
  ranked.sort((x, y) => y[0] - x[0] || x[1] - y[1]);
  // each unit oriented as its own AUC says (as a single candidate is), so n = 1 is that unit's AUC
  const weight = (j, sign) => {
    let mp = 0, mn = 0;
    for (const r of p0) mp += r.acts[li][j];
    for (const r of n0) mn += r.acts[li][j];
    mp /= p0.length; mn /= n0.length;
    let ss = 0;
    for (const r of p0) ss += (r.acts[li][j] - mp) ** 2;
    for (const r of n0) ss += (r.acts[li][j] - mn) ** 2;
    const v = ss / Math.max(1, p0.length + n0.length - 2);
    return v > 0 ? (sign * Math.abs(mp - mn)) / v : sign;
  };
  const out = [];
  const sp = new Float64Array(p1.length), sn = new Float64Array(n1.length);
  let have = 0;
  for (const n of [...sizes].sort((a, b) => a - b)) {
    for (; have < Math.min(n, I); have++) {
      const [, j, sign] = ranked[have], w = weight(j, sign);
      p1.forEach((r, i) => { sp[i] += w * r.acts[li][j]; });
      n1.forEach((r, i) => { sn[i] += w * r.acts[li][j]; });
    }
    if (n <= I) out.push({ n, heldOutAuc: auc(sp, sn) });
  }
  return out;
}

/** per feature, the better of two groups' directions (the earlier group wins a tie, like a lower layer) */
function mergeDirections(a, b) {
  const out = [...a];
  for (const d of b) {
    const i = out.findIndex((x) => x.feature === d.feature);
    if (i < 0) out.push(d);
    else if (d.auc > out[i].auc) out[i] = d;
  }
  return out;
}

/** the k rows (of language `lang`, if given) where the neuron's sign × activation is largest, as
 *  neuronTopActivations reports them (window 6) */
function topOfRows(model, rows, idsOf, probes, li, { neuron, sign }, k, lang, quantiles) {
  const pool = lang ? rows.filter((r) => r.lang === lang) : rows;
  const act = (i) => pool[i].acts[li][neuron]; // rows are in probe and token order: ties go to the earlier one
  const at = (i) => describe(model, probes, idsOf[pool[i].p], pool[i].p, pool[i].t, act(i), 6);
  const top = topIndices(pool.length, k, (a, b) => sign * (act(a) - act(b)) > 0 || (act(a) === act(b) && a < b)).map(at);
  if (!quantiles || !pool.length) return { top };
  return { top, atQuantiles: atQuantilesOf(pool.length, act, sign, quantiles).map(([q, i]) => ({ q, ...at(i) })) };
}

/** [q, index] of the token at each quantile of sign × act(i) over n tokens, ties in text and token
 *  order (Neuronpedia's activation intervals; neuronTopActivations and findFeatureNeurons share it) */
function atQuantilesOf(n, act, sign, quantiles) {
  const order = Array.from({ length: n }, (_, i) => i).sort((a, b) => sign * (act(a) - act(b)) || a - b);
  return quantiles.map((q) => [q, order[Math.round(q * (n - 1))]]);
}

/** a token in its context: TopActivation */
function describe(model, texts, ids, p, t, activation, window, ps = model.tokenizer.pieces(ids)) {
  // readable text: a character split over tokens is shown once (on the window's first token that
  // holds it), the token itself whole with its share ("但 (2/2)"); never "\uFFFD"
  const span = (a, b) => ps.slice(a, b).map((x, i) => (i > 0 && x.part > 1 ? [...x.text].slice(1).join('') : x.text)).join('');
  const at = ps[t];
  const out = { text: p, token: t, activation, before: span(Math.max(0, t - window), t), piece: at.of ? `${at.text} (${at.part}/${at.of})` : at.text,
    after: span(t + 1, t + 1 + window).replace(/^./su, (c) => (ps[t + 1]?.part > 1 ? '' : c)) };
  if (typeof texts[p] !== 'string') {
    const [a, b] = tokenOffsets(model.tokenizer, ids)[t];
    const over = b > a ? texts[p].spans.filter((s) => s.start < b && s.end > a) : [];
    out.labels = [...new Set(over.map((s) => s.label))];
    // a token the tokenizer made of a labelled word and its neighbours ("。我从不在星期" around 不):
    // the labelled spans it overlaps, as text, show what else it holds
    out.spans = over.map((s) => ({ label: s.label, text: texts[p].text.slice(s.start, s.end) }));
  }
  return out;
}

/** a feature's positive and negative tokens in each half of the probes: [{pos, neg}, {pos, neg}] */
function splitRows(rows, spec) {
  const wordEnd = spec.at === 'word-end';
  const has = (row, names) => names.some((x) => (wordEnd ? row.ends : row.labels).has(x));
  const isPos = (row) => has(row, spec.pos);
  const isNeg = (row) => !row.empty && !spec.pos.some((x) => row.labels.has(x)) && (!spec.neg || has(row, spec.neg));
  return [0, 1].map((h) => ({ pos: rows.filter((r) => r.half === h && isPos(r)), neg: rows.filter((r) => r.half === h && isNeg(r)) }));
}

/** x / rms(x): what an MLP reads, before the RMSNorm's per-channel gain */
function rmsUnit(x) {
  let ss = 0;
  for (const v of x) ss += v * v;
  const k = 1 / Math.sqrt(ss / x.length + 1e-12);
  return Float32Array.from(x, (v) => v * k);
}

/**
 * For comparison with single neurons: per feature, the direction of the MLP input (the residual
 * stream after the mixer, divided by its RMS) from the mean of the negative tokens to the mean of
 * the positive tokens, taken on the first part of the probes, scored on the held-out part.
 */
function featureDirections(halvesOf, layers, H) {
  const out = [];
  for (const [name, [{ pos: p0, neg: n0 }, { pos: p1, neg: n1 }]] of Object.entries(halvesOf)) {
    if (!p0.length || !n0.length) continue;
    let chosen = null;
    for (let li = 0; li < layers.length; li++) {
      const mean = (rs) => { const m = new Float64Array(H); for (const r of rs) for (let i = 0; i < H; i++) m[i] += r.mid[li][i]; return m.map((v) => v / rs.length); };
      const mp = mean(p0), mn = mean(n0);
      const d = Float32Array.from(mp, (v, i) => v - mn[i]);
      const norm = Math.hypot(...d) || 1;
      for (let i = 0; i < H; i++) d[i] /= norm;
      const proj = (r) => { let s = 0; for (let i = 0; i < H; i++) s += r.mid[li][i] * d[i]; return s; };
      const fit = auc(p0.map(proj), n0.map(proj));
      const held = auc(p1.map(proj), n1.map(proj));
      let thr = 0; // halfway between the two means along d
      for (let i = 0; i < H; i++) thr += 0.5 * (mp[i] + mn[i]) * d[i];
      if (!chosen || fit > chosen.auc) chosen = { feature: name, layer: layers[li], auc: fit, heldOutAuc: held, direction: d, threshold: thr };
    }
    if (chosen) out.push(chosen);
  }
  return out;
}

/**
 * @typedef {{text: number, token: number, activation: number, before: string, piece: string, after: string, labels?: string[], spans?: {label: string, text: string}[]}} TopActivation
 *   text: index into the texts; token: position in its token ids (with the BOS the engine adds);
 *   before / after: up to `window` decoded tokens on each side; labels (probe texts only): the
 *   labels of the probe's spans that overlap the token
 */

/** counts of values in `bins` equal bins from their minimum to their maximum (the last bin closed) */
function histogram(values, bins) {
  if (!values.length) return { lo: 0, hi: 0, counts: [] };
  let lo = Infinity, hi = -Infinity;
  for (const v of values) { if (v < lo) lo = v; if (v > hi) hi = v; }
  const counts = new Array(bins).fill(0), w = (hi - lo) / bins || 1;
  for (const v of values) counts[Math.min(bins - 1, Math.floor((v - lo) / w))]++;
  return { lo, hi, counts };
}

/**
 * The tokens where one MLP neuron fires most across a set of texts ("max-activating examples"):
 * blocks.{layer}.mlp.hook_post[neuron] at every token, the k largest of sign × activation.
 * @param {{tokenizer: any, forward: Function, nLayers: number, config: any, contextLength: number}} model
 * @param {(string|Probe)[]} texts
 * @param {{layer: number, neuron: number, k?: number, sign?: 1|-1, window?: number, quantiles?: number[], transcoders?: import('./transcoder.js').TranscoderSet}} opts
 *   transcoders: `neuron` is a feature of this set (blocks.{layer}.transcoder.hook_feature)
 * @returns {{top: TopActivation[], tokens: number, mean: number, positive: number, histogram: {lo: number, hi: number, counts: number[]}}}
 *   tokens: tokens scanned; mean: mean activation over them; positive: share with sign × activation > 0;
 *   histogram: sign × activation of every token in 24 equal bins from lo to hi
 */
export function neuronTopActivations(model, texts, opts) {
  const { layer, neuron, k = 10, sign = 1, window = 6, quantiles, transcoders } = A.options(opts, 'neuronTopActivations()');
  if (quantiles !== undefined && !(Array.isArray(quantiles) && quantiles.every((q) => typeof q === 'number' && q >= 0 && q <= 1)))
    fail('E_ARG', `neuronTopActivations(): quantiles must be an array of numbers in [0, 1], not ${A.show(quantiles)}`);
  if (!model.tokenizer) fail('E_TOKEN', 'neuronTopActivations(): this weight set has no tokenizer, so texts cannot be read');
  if (!Array.isArray(texts) || !texts.every((t) => typeof t === 'string' || typeof t?.text === 'string')) fail('E_ARG', `neuronTopActivations(): texts must be an array of strings (or {text}), not ${A.show(texts)}`);
  if (!Number.isInteger(window) || window < 0) fail('E_ARG', `neuronTopActivations(): window must be an integer >= 0, got ${A.show(window)}`);
  const units = unitsOf(model, transcoders, 'neuronTopActivations()'), I = units.width;
  if (!Number.isInteger(layer) || layer < 0 || layer >= model.nLayers) fail('E_ARG', `neuronTopActivations: layer ${layer} is not in 0..${model.nLayers - 1}`);
  if (!units.layers.includes(layer)) fail('E_ARG', `neuronTopActivations: the transcoder set has no layer ${layer} (it has ${units.layers.join(', ')})`);
  if (!Number.isInteger(neuron) || neuron < 0 || neuron >= I) fail('E_ARG', `neuronTopActivations: ${units.unit === 'neuron' ? 'neuron' : 'feature'} ${neuron} is not in 0..${I - 1}`);
  if (!Number.isInteger(k) || k < 1) fail('E_ARG', `neuronTopActivations: k must be a positive integer, got ${k}`);
  if (sign !== 1 && sign !== -1) fail('E_ARG', `neuronTopActivations: sign must be 1 or -1, got ${sign}`);
  const hook = units.hook(layer);
  // every token's activation, in text and token order (ties go to the earlier token)
  const acts = [], where = [], idsOf = [];
  for (let p = 0; p < texts.length; p++) {
    const text = typeof texts[p] === 'string' ? texts[p] : texts[p].text;
    const ids = model.tokenizer.encode(text, { addSpecial: true });
    if (!ids.length || ids.length > model.contextLength) continue;
    idsOf[p] = ids;
    const h = model.forward(ids, { stats: false, logits: 'none', hooks: [hook], ...units.forward([layer]) }).hooks[hook];
    for (let t = 0; t < ids.length; t++) { acts.push(h[t * I + neuron]); where.push([p, t]); }
  }
  const n = acts.length;
  let sum = 0, pos = 0;
  for (const a of acts) { sum += a; if (sign * a > 0) pos++; }
  const top = topIndices(n, k, (a, b) => sign * (acts[a] - acts[b]) > 0 || (acts[a] === acts[b] && a < b));
  // examples across its range (Neuronpedia's activation intervals): the token at each quantile of
  // sign * activation, ranked with ties in text and token order
  let atQuantiles;
  if (quantiles && n) {
    atQuantiles = atQuantilesOf(n, (i) => acts[i], sign, quantiles).map(([q, i]) => ({ q, ...describe(model, texts, idsOf[where[i][0]], where[i][0], where[i][1], acts[i], window) }));
  }
  return {
    top: top.map((i) => describe(model, texts, idsOf[where[i][0]], where[i][0], where[i][1], acts[i], window)),
    tokens: n, mean: n ? sum / n : 0, positive: n ? pos / n : 0, histogram: histogram(acts.map((a) => sign * a), 24),
    ...(atQuantiles ? { atQuantiles } : {}),
  };
}

/**
 * A gated neuron's four sign quadrants over some texts (GLUScope, Gerstner & Schütze 2026): the
 * gate's pre-activation g = w_gate·x (`mlp.hook_pre`) and the up projection u = w_up·x
 * (`mlp.hook_pre_linear`) each have a sign, and the neuron's output silu(g)·u (`mlp.hook_post`) means
 * something different in each of the four combinations: g > 0 lets u through nearly as it is (silu(g)
 * ≈ g), g < 0 lets only a small, sign-flipped part through (silu ≥ −0.278). Per quadrant: how many
 * tokens, their share, the mean of g, u and the output, the quadrant's share of Σ|output| (where the
 * neuron's writing happens), and its k tokens of largest |output| in context. The three hooks come
 * from the same forward pass (one per text); a value of exactly 0 counts in no quadrant (`zero`).
 * @param {import('./model.js').Model} model @param {(string | {text: string})[]} texts
 * @param {{layer: number, neuron: number, k?: number, window?: number}} opts
 */
export function neuronQuadrants(model, texts, opts) {
  const where = 'neuronQuadrants()';
  const { layer, neuron, k = 5, window = 6 } = A.options(opts, where);
  if (!model.tokenizer) fail('E_TOKEN', `${where}: this weight set has no tokenizer, so texts cannot be read`);
  if (!Array.isArray(texts) || !texts.length || !texts.every((t) => typeof t === 'string' || typeof t?.text === 'string')) fail('E_ARG', `${where}: texts must be a non-empty array of strings (or {text}), not ${A.show(texts)}`);
  const I = model.config.intermediate_size;
  if (!Number.isInteger(layer) || layer < 0 || layer >= model.nLayers) fail('E_ARG', `${where}: layer ${A.show(layer)} is not in 0..${model.nLayers - 1}`);
  if (!Number.isInteger(neuron) || neuron < 0 || neuron >= I) fail('E_ARG', `${where}: neuron ${A.show(neuron)} is not in 0..${I - 1}`);
  if (!Number.isInteger(k) || k < 0) fail('E_ARG', `${where}: k must be an integer >= 0, got ${A.show(k)}`);
  if (!Number.isInteger(window) || window < 0) fail('E_ARG', `${where}: window must be an integer >= 0, got ${A.show(window)}`);
  const names = { pre: `blocks.${layer}.mlp.hook_pre`, lin: `blocks.${layer}.mlp.hook_pre_linear`, post: `blocks.${layer}.mlp.hook_post` };
  const Q = [['+', '+'], ['+', '-'], ['-', '+'], ['-', '-']].map(([gate, up]) => ({ gate, up, count: 0, frequency: 0, meanGate: 0, meanUp: 0, meanOutput: 0, share: 0, top: [], _rows: [] }));
  const idsOf = [], piecesOf = [];
  let tokens = 0, zero = 0, absTotal = 0;
  for (let p = 0; p < texts.length; p++) {
    const ids = model.tokenizer.encode(typeof texts[p] === 'string' ? texts[p] : texts[p].text, { addSpecial: true });
    if (!ids.length || ids.length > model.contextLength) continue;
    idsOf[p] = ids;
    const h = model.forward(ids, { stats: false, logits: 'none', hooks: Object.values(names) }).hooks;
    for (let t = 0; t < ids.length; t++) {
      const g = h[names.pre][t * I + neuron], u = h[names.lin][t * I + neuron], y = h[names.post][t * I + neuron];
      tokens++;
      absTotal += Math.abs(y);
      if (g === 0 || u === 0) { zero++; continue; }
      const q = Q[(g > 0 ? 0 : 2) + (u > 0 ? 0 : 1)];
      q.count++; q.meanGate += g; q.meanUp += u; q.meanOutput += y; q.share += Math.abs(y);
      q._rows.push([p, t, y]);
    }
  }
  if (!tokens) fail('E_ARG', `${where}: none of the ${texts.length} texts has tokens that fit the context (${model.contextLength})`);
  for (const q of Q) {
    if (q.count) { q.meanGate /= q.count; q.meanUp /= q.count; q.meanOutput /= q.count; }
    q.frequency = q.count / tokens;
    q.share = absTotal ? q.share / absTotal : 0;
    const rows = q._rows;
    q.top = topIndices(rows.length, k, (a, b) => Math.abs(rows[a][2]) > Math.abs(rows[b][2]) || (Math.abs(rows[a][2]) === Math.abs(rows[b][2]) && a < b)).map((i) => {
      const [p, t, y] = rows[i];
      piecesOf[p] ??= model.tokenizer.pieces(idsOf[p]);
      const d = describe(model, texts, idsOf[p], p, t, y, window, piecesOf[p]);
      return d;
    });
    delete q._rows;
  }
  return { layer, neuron, tokens, zero, quadrants: Q };
}

// ---------------------------------------------------------------- which neuron writes a set of next tokens

/**
 * The first token of every span labelled `label` in the probes (those in language `lang` only,
 * when given): for `city`, the tokens a city name starts with, the set whose next-token
 * probability "a city comes next" sums. Sorted ids, each once.
 * @param {import('./model.js').Model} model @param {Probe[]} probes @param {{label: string, lang?: string}} opts
 * @returns {number[]}
 */
export function featureTokens(model, probes, opts) {
  const where = 'featureTokens()';
  const { label, lang } = A.options(opts, where);
  if (!model.tokenizer) fail('E_TOKEN', `${where}: this weight set has no tokenizer, so probe texts cannot be read`);
  if (typeof label !== 'string' || !label) fail('E_ARG', `${where}: label must be a non-empty string, not ${A.show(label)}`);
  if (lang !== undefined && typeof lang !== 'string') fail('E_ARG', `${where}: lang must be a string, not ${A.show(lang)}`);
  if (!Array.isArray(probes)) fail('E_ARG', `${where}: probes must be an array of {text, spans}, not ${A.show(probes)}`);
  const out = new Set();
  probes.forEach((p, i) => {
    if (typeof p?.text !== 'string' || !Array.isArray(p.spans)) fail('E_ARG', `${where}: probes[${i}] must be {text: string, spans: [...]}`);
    if (lang !== undefined && p.lang !== lang) return;
    const spans = p.spans.filter((s) => s?.label === label);
    if (!spans.length) return;
    const ids = model.tokenizer.encode(p.text, { addSpecial: true }), offs = tokenOffsets(model.tokenizer, ids);
    for (const s of spans) {
      const t = offs.findIndex(([a, b]) => a <= s.start && s.start < b);
      if (t >= 0) out.add(ids[t]);
    }
  });
  return [...out].sort((a, b) => a - b);
}

/** P(any of `tokens`) under softmax(logits), summed in double */
export function tokenSetProbability(logits, tokens) {
  let mx = -Infinity;
  for (let i = 0; i < logits.length; i++) if (logits[i] > mx) mx = logits[i];
  let z = 0, s = 0;
  for (let i = 0; i < logits.length; i++) z += Math.exp(logits[i] - mx);
  for (const id of tokens) s += Math.exp(logits[id] - mx);
  return s / z;
}

function tokenSetArgs(model, text, opts, where) {
  if (!model.tokenizer && typeof text === 'string') fail('E_TOKEN', `${where}: this weight set has no tokenizer; pass token ids`);
  const ids = typeof text === 'string' ? model.tokenizer.encode(text, { addSpecial: true }) : A.ids(text, where, 'text');
  if (!ids.length) fail('E_ARG', `${where}: the text has no tokens`);
  if (ids.length > model.contextLength) fail('E_ARG', `${where}: ${ids.length} tokens do not fit the context (${model.contextLength})`);
  const V = model.config.vocab_size, tokens = opts.tokens;
  if (!Array.isArray(tokens) || !tokens.length || !tokens.every((t) => Number.isInteger(t) && t >= 0 && t < V))
    fail('E_ARG', `${where}: tokens must be a non-empty array of token ids in 0..${V - 1}, not ${A.show(tokens)}`);
  return { ids, tokens: [...new Set(tokens)] };
}

/**
 * Which MLP neurons write a set of next tokens, measured: at the text's last position, the
 * probability of `tokens` (summed), then the same with each candidate neuron switched off
 * (`mlp.hook_post` set to 0 at every position). The candidates are the `perLayer` neurons of largest
 * |mlp.hook_post| at the last position in every layer (from the first pass's statistics); sorted by
 * the drop, largest first. One pass plus one per candidate.
 * @param {import('./model.js').Model} model @param {string | ArrayLike<number>} text
 * @param {{tokens: number[], perLayer?: number}} opts
 * @returns {{p: number, passes: number, candidates: {layer: number, neuron: number, activation: number, p: number, delta: number}[]}}
 */
export function neuronsForTokens(model, text, opts) {
  const where = 'neuronsForTokens()';
  opts = A.options(opts, where);
  const { ids, tokens } = tokenSetArgs(model, text, opts, where);
  const perLayer = opts.perLayer ?? 8;
  if (!Number.isInteger(perLayer) || perLayer < 1 || perLayer > 64) fail('E_ARG', `${where}: perLayer must be an integer in 1..64, not ${A.show(perLayer)}`);
  const base = model.forward(ids, { topK: perLayer, logits: 'last' }), T = ids.length, st = base.stats;
  const p = tokenSetProbability(base.logits, tokens);
  const candidates = [];
  for (let l = 0; l < model.nLayers; l++)
    for (let k = 0; k < perLayer; k++) {
      const neuron = st.top_idx[l][(T - 1) * perLayer + k], activation = st.top_val[l][(T - 1) * perLayer + k];
      if (activation === 0) continue;
      const r = model.forward(ids, { stats: false, logits: 'last', interventions: [{ hook: `blocks.${l}.mlp.hook_post`, neurons: [neuron], op: 'set', value: 0 }] });
      const q = tokenSetProbability(r.logits, tokens);
      candidates.push({ layer: l, neuron, activation, p: q, delta: q - p });
    }
  candidates.sort((a, b) => a.delta - b.delta || a.layer - b.layer || a.neuron - b.neuron);
  return { p, passes: 1 + candidates.length, candidates };
}

/**
 * One neuron pushed: `mlp.hook_post` of `neuron` in `layer` plus each of `values` at every position
 * (as generate({interventions}) steers), and the probability of `tokens` at the last position
 * before and after, with the top `k` next tokens each time.
 * @param {import('./model.js').Model} model @param {string | ArrayLike<number>} text
 * With `transcoders: set`, `neuron` is a feature of the set and the push adds to
 * `transcoder.hook_feature` (the MLP keeps its own output plus what the pushed feature writes).
 * @param {{layer: number, neuron: number, values: number[], tokens: number[], k?: number, transcoders?: import('./transcoder.js').TranscoderSet}} opts
 */
export function pushNeuron(model, text, opts) {
  const where = 'pushNeuron()';
  opts = A.options(opts, where);
  const { ids, tokens } = tokenSetArgs(model, text, opts, where);
  const { layer, neuron, values, k = 5, transcoders } = opts;
  const units = unitsOf(model, transcoders, where), I = units.width;
  if (!Number.isInteger(layer) || layer < 0 || layer >= model.nLayers) fail('E_ARG', `${where}: layer ${A.show(layer)} is not in 0..${model.nLayers - 1}`);
  if (!units.layers.includes(layer)) fail('E_ARG', `${where}: the transcoder set has no layer ${layer} (it has ${units.layers.join(', ')})`);
  if (!Number.isInteger(neuron) || neuron < 0 || neuron >= I) fail('E_ARG', `${where}: ${units.unit === 'neuron' ? 'neuron' : 'feature'} ${A.show(neuron)} is not in 0..${I - 1}`);
  if (!Array.isArray(values) || !values.length || !values.every(Number.isFinite)) fail('E_ARG', `${where}: values must be a non-empty array of finite numbers, not ${A.show(values)}`);
  if (!Number.isInteger(k) || k < 0 || k > 100) fail('E_ARG', `${where}: k must be an integer in 0..100, not ${A.show(k)}`);
  const read = (iv) => {
    const r = model.forward(ids, { stats: false, logits: 'last', interventions: iv, ...units.forward([layer]) });
    return { p: tokenSetProbability(r.logits, tokens), top: topTokens(r.logits, k, model.tokenizer, { after: ids }) };
  };
  const before = read([]);
  const after = values.map((value) => ({ value, ...read([{ hook: units.hook(layer), [units.unit === 'neuron' ? 'neurons' : 'features']: [neuron], op: 'add', value }]) }));
  return { layer, neuron, before, after };
}

// ---------------------------------------------------------------- neurons against transcoder features

/**
 * The lesson's claim measured: for each labelled feature (city, negation, code), the best single
 * MLP neuron against the best single transcoder feature, both chosen on the first part of the
 * probes and scored on the held-out part (ROC AUC), over the set's layers — and how many of the
 * feature's own layer's neurons, read together (findFeatureNeurons' `combine`), it takes to reach
 * the feature's held-out AUC (`neuronsToMatch`; null when even the largest size does not).
 * Two searches over the probes: one over neurons, one over features.
 * @param {import('./model.js').Model} model @param {import('./transcoder.js').TranscoderSet} set @param {Probe[]} probes
 * @param {{features?: Record<string, FeatureSpec>, sizes?: number[], byLang?: boolean, onProgress?: (p: {done: number, total: number}) => void}} [opts]
 *   sizes: the neuron counts tried (default 1, 2, 4, 8, 16, 32, 64, 128)
 * @returns {{rows: {feature: string, neuron: FeatureNeuron, transcoder: FeatureNeuron, neuronsToMatch: number | null, combined: {n: number, heldOutAuc: number}[]}[], tokens: number}}
 */
export function neuronsVsFeatures(model, set, probes, opts) {
  const where = 'neuronsVsFeatures()';
  const { features, sizes = [1, 2, 4, 8, 16, 32, 64, 128], byLang = true, onProgress } = A.options(opts, where);
  unitsOf(model, set, where);
  const layers = set.layers;
  const half = (p) => onProgress && ((q) => onProgress({ done: q.done + p * q.total, total: 2 * q.total }));
  const nv = findFeatureNeurons(model, probes, { features, layers, top: 1, byLang, combine: sizes, onProgress: half(0) });
  const fv = findFeatureNeurons(model, probes, { features, layers, top: 1, byLang, transcoders: set, onProgress: half(1) });
  const rows = fv.best.map((f) => {
    const n = nv.best.find((x) => x.feature === f.feature);
    // the neurons of the feature's own layer, read together
    const combinedAt = nv.perLayer[f.feature].find((x) => x.layer === f.layer)?.combined ?? [];
    const match = combinedAt.find((c) => c.heldOutAuc >= f.heldOutAuc);
    const row = { feature: f.feature, neuron: n, transcoder: f, neuronsToMatch: match ? match.n : null, combined: combinedAt };
    if (byLang && nv.bestByLang) row.byLang = Object.fromEntries(Object.keys(nv.bestByLang).map((g) => [g, {
      neuron: nv.bestByLang[g].find((x) => x.feature === f.feature) ?? null, transcoder: fv.bestByLang[g].find((x) => x.feature === f.feature) ?? null }]));
    return row;
  });
  return { rows, tokens: nv.tokens };
}

// ---------------------------------------------------------------- a transcoder feature's card

/**
 * A transcoder feature's card, as Neuronpedia shows a feature: where it fires over the probes
 * (its strongest activations, examples at quantiles of its range, a histogram, how often it fires),
 * what it writes (its decoder row read by the head: the tokens it promotes and suppresses), and a
 * computed label — of the labels in the probes' spans, the one its activation separates best from
 * every other non-blank token on the first half of the probes (ROC AUC), with its AUC on the
 * held-out half. `scale` (its strongest activation over the probes) is the unit its steering is
 * measured in (pushNeuron with `transcoders`). Two passes over the probes.
 * @param {import('./model.js').Model} model @param {import('./transcoder.js').TranscoderSet} set @param {Probe[]} probes
 * @param {{layer: number, feature: number, k?: number, quantiles?: number[], logits?: number, window?: number}} opts
 */
export function featureCard(model, set, probes, opts) {
  const where = 'featureCard()';
  const { layer, feature, k = 8, quantiles = [0.5, 0.9, 0.99, 0.999], logits = 10, window = 6 } = A.options(opts, where);
  unitsOf(model, set, where);
  if (!Array.isArray(probes) || !probes.every((p) => typeof p?.text === 'string' && Array.isArray(p.spans))) fail('E_ARG', `${where}: probes must be an array of {text, spans}`);
  const acts = neuronTopActivations(model, probes, { layer, neuron: feature, k, quantiles, window, transcoders: set });
  const output = set.featureOutput(layer, feature, { k: logits });
  // the computed label: per label, the AUC on each half of the probes
  const hook = `blocks.${layer}.transcoder.hook_feature`, F = set.features, split = Math.floor(probes.length / 2);
  const rows = []; // [half, activation, labels]
  probes.forEach((p, i) => {
    const ids = model.tokenizer.encode(p.text, { addSpecial: true });
    if (!ids.length || ids.length > model.contextLength) return;
    const h = model.forward(ids, { stats: false, logits: 'none', hooks: [hook], transcoders: { set, layers: [layer] } }).hooks[hook];
    tokenOffsets(model.tokenizer, ids).forEach(([a, b], t) => {
      if (b <= a || !/\S/.test(p.text.slice(a, b))) return;
      rows.push([i < split ? 0 : 1, h[t * F + feature], new Set(p.spans.filter((s) => s.start < b && s.end > a).map((s) => s.label))]);
    });
  });
  const names = [...new Set(probes.flatMap((p) => p.spans.map((s) => s.label)))].sort();
  const aucOn = (half, name) => {
    const r = rows.filter((x) => x[0] === half);
    return auc(r.filter((x) => x[2].has(name)).map((x) => x[1]), r.filter((x) => !x[2].has(name)).map((x) => x[1]));
  };
  const labels = names.map((name) => ({ label: name, auc: aucOn(0, name), heldOutAuc: aucOn(1, name), count: rows.filter((x) => x[2].has(name)).length }))
    .sort((a, b) => b.auc - a.auc || a.label.localeCompare(b.label));
  const fires = rows.filter((x) => x[1] > 0).length;
  return { layer, feature, scale: acts.top[0]?.activation ?? 0, frequency: rows.length ? fires / rows.length : 0, label: labels[0] ?? null, labels, ...acts, output };
}

/**
 * The features of a transcoder set that fire on a text ("search by text"): per token, its `k`
 * strongest features; and over the whole text, the features ranked by their largest activation
 * (with the token where it is reached). One pass.
 * @param {import('./model.js').Model} model @param {import('./transcoder.js').TranscoderSet} set
 * @param {string | ArrayLike<number>} text @param {{layer: number, k?: number, top?: number}} opts
 */
export function featuresOnText(model, set, text, opts) {
  const where = 'featuresOnText()';
  const { layer, k = 5, top = 20 } = A.options(opts, where);
  unitsOf(model, set, where);
  set._ptr(layer);
  if (!Number.isInteger(k) || k < 1 || k > set.features) fail('E_ARG', `${where}: k must be an integer in 1..${set.features}, not ${A.show(k)}`);
  if (!Number.isInteger(top) || top < 1) fail('E_ARG', `${where}: top must be a positive integer, not ${A.show(top)}`);
  if (!model.tokenizer && typeof text === 'string') fail('E_TOKEN', `${where}: this weight set has no tokenizer; pass token ids`);
  const ids = typeof text === 'string' ? model.tokenizer.encode(text, { addSpecial: true }) : A.ids(text, where, 'text');
  if (!ids.length || ids.length > model.contextLength) fail('E_ARG', `${where}: the text has ${ids.length} tokens (1 to ${model.contextLength})`);
  const hook = `blocks.${layer}.transcoder.hook_feature`, F = set.features;
  const h = model.forward(ids, { stats: false, logits: 'none', hooks: [hook], transcoders: { set, layers: [layer] } }).hooks[hook];
  const pieces = model.tokenizer ? model.tokenizer.pieces(ids) : null;
  const best = new Map(); // feature -> [activation, token]
  const tokens = Array.from(ids, (id, t) => {
    const z = h.subarray(t * F, (t + 1) * F);
    const fs = topIndices(F, k, (a, b) => z[a] > z[b] || (z[a] === z[b] && a < b)).filter((f) => z[f] > 0);
    for (let f = 0; f < F; f++) if (z[f] > 0 && !(best.get(f)?.[0] >= z[f])) best.set(f, [z[f], t]);
    return { token: t, id, piece: pieces ? pieces[t].text : null, features: fs.map((f) => ({ feature: f, activation: z[f] })) };
  });
  const ranked = [...best.entries()].sort((a, b) => b[1][0] - a[1][0] || a[0] - b[0]).slice(0, top).map(([feature, [activation, token]]) => ({ feature, activation, token }));
  return { layer, ids: Array.from(ids), tokens, features: ranked };
}
