#!/usr/bin/env node
// Measures, for weight sets with a tokenizer, what the lesson's "small correction" chart would
// show: the per-layer mean of |mlp_out| / |resid_post| over held-out probe sentences (js/corpus.js,
// seed 9), how many layers stay under 25% / 50%, and the best feature neurons (held-out AUC).
//   node tools/train/residual-picture.mjs weights/demo build/deep/w ...
import { fileURLToPath } from 'node:url';
import { loadModel, findFeatureNeurons } from '../../js/index.js';
import { probes } from '../../js/corpus.js';

/** per layer, the mean over every token of `texts` of |mlp_out| / |resid_post| (the lesson's chart) */
export function mlpRatios(m, texts) {
  const L = m.nLayers, sum = new Float64Array(L);
  let n = 0;
  for (const p of texts) {
    const st = m.forward(m.tokenizer.encode(p.text ?? p), { logits: 'none', topK: 0 }).stats;
    for (let l = 0; l < L; l++) for (const r of st.mlp_ratio[l]) sum[l] += r;
    n += st.T;
  }
  return Array.from(sum, (x) => x / n);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const sentences = probes(9, 160);
  for (const dir of process.argv.slice(2)) {
    const m = await loadModel(dir, { threads: 1 });
    const L = m.nLayers, ratios = mlpRatios(m, sentences), sorted = [...ratios].sort((a, b) => a - b);
    const f = findFeatureNeurons(m, sentences, { top: 1 });
    const c = m.info().config;
    console.log(JSON.stringify({
      dir, params: m.info().params.total, layers: L, hidden: c.hidden_size, intermediate: c.intermediate_size,
      ratios: ratios.map((r) => +(100 * r).toFixed(1)), median: +(100 * sorted[Math.floor((L - 1) / 2)]).toFixed(1),
      under25: ratios.filter((r) => r < 0.25).length, under50: ratios.filter((r) => r < 0.5).length,
      features: Object.fromEntries(f.best.map((b) => [b.feature, { layer: b.layer, neuron: b.neuron, heldOutAuc: +b.heldOutAuc.toFixed(3) }])),
    }));
    m.dispose();
  }
}
