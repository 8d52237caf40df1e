// Finding MLP neurons that respond selectively to a labelled kind of token (city names, negation
// words, tokens inside code ...). Selectivity is the ROC AUC of a neuron's mlp.hook_post activation
// for separating positive from negative tokens; neurons are chosen on one part of the probes and
// reported on the other (held out), so a high number is not a selection artefact.

/**
 * @typedef {{text: string, spans: {start: number, end: number, label: string}[]}} Probe
 * @typedef {{pos: string[], neg?: string[], at?: 'token'|'word-end'}} FeatureSpec  neg omitted = every
 *   other token; at 'word-end': a labelled span counts once, at its last token
 * @typedef {{feature: string, layer: number, neuron: number, sign: 1|-1, auc: number, heldOutAuc: number, nPos: number, nNeg: number}} FeatureNeuron
 */

export const DEFAULT_FEATURES = {
  // word features are read at each word's last token (where a multi-token word is complete)
  city: { pos: ['city'], neg: ['name', 'noun', 'country'], at: 'word-end' },
  negation: { pos: ['negation'], at: 'word-end' },
  code: { pos: ['code'] },
};

/** Character offsets [start, end) of each token of `ids` in the decoded text. */
export function tokenOffsets(tokenizer, ids) {
  const d = tokenizer.decoder();
  const out = [];
  let pos = 0;
  for (const id of ids) { const s = d.push(id); out.push([pos, pos + s.length]); pos += s.length; }
  return out;
}

/** Mann-Whitney AUC of scores: P(score of a positive > score of a negative), ties count half. */
export function auc(pos, neg) {
  const all = [];
  for (const v of pos) all.push([v, 1]);
  for (const v of neg) all.push([v, 0]);
  all.sort((a, b) => a[0] - b[0]);
  let rankSum = 0;
  for (let i = 0; i < all.length;) {
    let j = i;
    while (j < all.length && all[j][0] === all[i][0]) j++;
    const r = (i + j + 1) / 2; // average 1-based rank of the tie group
    for (let k = i; k < j; k++) if (all[k][1]) rankSum += r;
    i = j;
  }
  const np = pos.length, nn = neg.length;
  return np && nn ? (rankSum - (np * (np + 1)) / 2) / (np * nn) : 0.5;
}

/**
 * @param {{tokenizer: any, forward: Function, nLayers: number, config: any}} model an in-process Model
 * @param {Probe[]} probes
 * @param {{features?: Record<string, FeatureSpec>, layers?: number[], top?: number, heldOutFrom?: number}} [opts]
 * @returns {{best: FeatureNeuron[], perLayer: Record<string, FeatureNeuron[]>, tokens: number}}
 */
export function findFeatureNeurons(model, probes, opts = {}) {
  const features = opts.features ?? DEFAULT_FEATURES;
  const layers = opts.layers ?? Array.from({ length: model.nLayers }, (_, l) => l);
  const I = model.config.intermediate_size;
  const split = opts.heldOutFrom ?? Math.floor(probes.length / 2);
  // per token: its probe half, its labels, and every layer's activations
  const rows = []; // {half, labels:Set, acts: Float32Array[layers.length] }
  for (let p = 0; p < probes.length; p++) {
    const { text, spans } = probes[p];
    const ids = model.tokenizer.encode(text, { addSpecial: true });
    if (!ids.length || ids.length > model.contextLength) continue;
    const offs = tokenOffsets(model.tokenizer, ids);
    const r = model.forward(ids, { stats: false, logits: 'none', hooks: layers.map((l) => `blocks.${l}.mlp.hook_post`) });
    for (let t = 0; t < ids.length; t++) {
      const [a, b] = offs[t];
      const over = spans.filter((s) => s.start < b && s.end > a && b > a);
      const labels = new Set(over.map((s) => s.label));
      // the span ends inside this token: the word is complete here
      const ends = new Set(over.filter((s) => s.end <= b).map((s) => s.label));
      rows.push({ half: p < split ? 0 : 1, labels, ends, empty: b === a || !/\S/.test(text.slice(a, b)), t, acts: layers.map((l) => r.hooks[`blocks.${l}.mlp.hook_post`].subarray(t * I, (t + 1) * I)) });
    }
  }
  const best = [], perLayer = {};
  for (const [name, spec] of Object.entries(features)) {
    const wordEnd = spec.at === 'word-end';
    const has = (row, names) => names.some((x) => (wordEnd ? row.ends : row.labels).has(x));
    const isPos = (row) => has(row, spec.pos);
    const isNeg = (row) => !row.empty && !spec.pos.some((x) => row.labels.has(x)) && (!spec.neg || has(row, spec.neg));
    perLayer[name] = [];
    for (let li = 0; li < layers.length; li++) {
      const halves = [0, 1].map((h) => ({ pos: rows.filter((r) => r.half === h && isPos(r)), neg: rows.filter((r) => r.half === h && isNeg(r)) }));
      if (!halves[0].pos.length || !halves[0].neg.length) continue;
      const cands = [];
      for (let j = 0; j < I; j++) {
        const a = auc(halves[0].pos.map((r) => r.acts[li][j]), halves[0].neg.map((r) => r.acts[li][j]));
        cands.push({ j, a: Math.max(a, 1 - a), sign: a >= 0.5 ? 1 : -1 });
      }
      cands.sort((x, y) => y.a - x.a || x.j - y.j);
      const top = cands.slice(0, opts.top ?? 3).map((c) => {
        const h = halves[1];
        const held = auc(h.pos.map((r) => c.sign * r.acts[li][c.j]), h.neg.map((r) => c.sign * r.acts[li][c.j]));
        return { feature: name, layer: layers[li], neuron: c.j, sign: c.sign, auc: c.a, heldOutAuc: held, nPos: h.pos.length, nNeg: h.neg.length };
      });
      perLayer[name].push(...top);
    }
    const chosen = [...perLayer[name]].sort((x, y) => y.auc - x.auc || x.layer - y.layer)[0];
    if (chosen) best.push(chosen);
  }
  return { best, perLayer, tokens: rows.length };
}
