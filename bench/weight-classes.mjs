// How long every neuron's input-output class takes (model.neuronWeightClasses: the cosines of
// w_gate, w_in and w_out, js/geometry.js over src/analysis/weights.c), on the Qwen3.5-0.8B shape
// (24 layers × 3,584 = 86,016 neurons; q8 and q4 weights) and the demo model, with 1 and 2
// threads, and the class counts it finds. Synthetic models are made once into build/bench/.
//   node bench/weight-classes.mjs [--quick]   (--quick: the demo model only)
import path from 'node:path';
import { loadModel } from '../js/index.js';
import { root, synth } from './models.mjs';

const models = [['demo (11 × 448)', path.join(root, 'weights/demo'), 'q8']];
if (!process.argv.includes('--quick')) models.push(['Qwen3.5-0.8B shape, random (24 × 3,584)', synth('qwen3.5-0.8b', 'q8'), 'q8'], ['Qwen3.5-0.8B shape, random (24 × 3,584)', synth('qwen3.5-0.8b', 'q4'), 'q4']);

console.log('| model | weights | threads | neurons | first call (ms) | again (ms) | neurons / s (again) | enrichment | cond. enrichment | depletion | cond. depletion | proportional | orthogonal | atypical |');
console.log('|---|---|---|---|---|---|---|---|---|---|---|---|---|---|');
for (const [name, dir, dtype] of models) {
  for (const threads of [1, 2]) {
    const m = await loadModel(dir, { threads });
    // the first call after loading (wasm code still warming up), then again with the model's cache cleared
    const t0 = performance.now(), r = m.neuronWeightClasses(), first = performance.now() - t0;
    m._geometry = null;
    const t1 = performance.now(); m.neuronWeightClasses(); const ms = performance.now() - t1;
    const n = r.layers.reduce((a, l) => a + l.classes.length, 0), sum = (c) => r.layers.reduce((a, l) => a + l.counts[c], 0);
    console.log(`| ${name} | ${dtype} | ${threads} | ${n.toLocaleString('en')} | ${first.toFixed(0)} | ${ms.toFixed(0)} | ${Math.round(n / (ms / 1000)).toLocaleString('en')} | ${r.classes.map((c) => sum(c)).join(' | ')} | ${r.layers.reduce((a, l) => a + l.atypicalCount, 0)} |`);
    m.dispose();
  }
}
