// Switch one MLP neuron off and see what happens to the next-token prediction.
//   node examples/knockout.mjs WEIGHTS_DIR "Once upon a time, there was a little" [LAYER]
import { loadModel, topTokens } from 'mlpscope';

const [dir, text = 'Once upon a time, there was a little', layerArg] = process.argv.slice(2);
if (!dir) { console.error('usage: node examples/knockout.mjs WEIGHTS_DIR [TEXT] [LAYER]'); process.exit(2); }
const model = await loadModel(dir);
const ids = model.tokenizer.encode(text);
const T = ids.length, k = 8;
const layer = layerArg === undefined ? model.nLayers - 1 : Number(layerArg);
const base = model.forward(ids, { topK: k });
// the neuron with the largest |activation| at the last token of that layer
const neuron = base.stats.top_idx[layer][(T - 1) * k];
const act = base.stats.top_val[layer][(T - 1) * k];
const off = model.forward(ids, { interventions: [{ layer, hook: 'mlp.hook_post', neurons: [neuron], scale: 0 }] });
// t.text: the token as a person reads it (t.token is the vocabulary's own spelling, e.g. "Ġcat")
const show = (r) => topTokens(r.logits, 5, model.tokenizer, { after: ids }).map((t) => `${JSON.stringify(t.text)} ${(100 * t.prob).toFixed(1)}%`).join(', ');
const softmax = (l) => { const m = Math.max(...l); const e = l.map((v) => Math.exp(v - m)); const z = e.reduce((a, b) => a + b, 0); return e.map((v) => v / z); };
const p = softmax(Array.from(base.logits)), q = softmax(Array.from(off.logits));
const kl = p.reduce((s, pi, i) => s + (pi > 0 ? pi * Math.log(pi / q[i]) : 0), 0);
console.log(`text: ${JSON.stringify(text)}`);
console.log(`layer ${layer}, neuron ${neuron} (activation ${act.toFixed(3)} at the last token)`);
console.log(`before: ${show(base)}`);
console.log(`after:  ${show(off)}`);
console.log(`KL(before || after) = ${kl.toExponential(3)} nats`);
model.dispose();
