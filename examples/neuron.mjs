// One MLP neuron, looked at from both ends: where it fires most in some texts, and what it writes
// (the tokens its down_proj column pushes up and down, read through the head).
//   node examples/neuron.mjs WEIGHTS_DIR LAYER NEURON [TEXT_FILE]
// Without TEXT_FILE it scans a few built-in sentences; a neuron that fires negatively is looked at
// with sign -1 (its most negative activations, and minus its column).
import fs from 'node:fs';
import { loadModel, neuronTopActivations } from 'mlpscope';

const [dir, layerArg, neuronArg, file] = process.argv.slice(2);
if (!dir || layerArg === undefined || neuronArg === undefined) { console.error('usage: node examples/neuron.mjs WEIGHTS_DIR LAYER NEURON [TEXT_FILE]'); process.exit(2); }
const texts = file ? fs.readFileSync(file, 'utf8').split('\n').filter((l) => l.trim()) : [
  'I flew from Paris to Tokyo last week.', 'The train from Oslo arrives in Rome at noon.', 'The food was not bad at all.',
  'Nobody saw the cat near the museum in Berlin.', 'Try this loop: for i in range(10): print(i)', 'Once upon a time, there was a little girl.',
  '我上周从巴黎飞到东京。', '从奥斯陆开往罗马的火车12点到站。', '饭菜一点也不好。',
];
const model = await loadModel(dir);
const layer = Number(layerArg), neuron = Number(neuronArg);
// which way does it fire? the sign of its largest |activation|
const up = neuronTopActivations(model, texts, { layer, neuron, k: 1 }), down = neuronTopActivations(model, texts, { layer, neuron, k: 1, sign: -1 });
const sign = Math.abs(down.top[0]?.activation ?? 0) > Math.abs(up.top[0]?.activation ?? 0) ? -1 : 1;
const res = neuronTopActivations(model, texts, { layer, neuron, k: 8, sign, window: 5 });
console.log(`layer ${layer}, neuron ${neuron}: fires ${sign > 0 ? 'positive' : 'negative'}; strongest over ${res.tokens} tokens:`);
for (const x of res.top) console.log(`  ${x.activation.toFixed(3).padStart(8)}  ${x.before}[${x.piece}]${x.after}`.replace(/\n/g, '⏎'));
const o = model.neuronOutput(layer, neuron, { k: 8 });
const [raises, lowers] = sign > 0 ? [o.promoted, o.suppressed] : [o.suppressed, o.promoted];
const list = (ts) => ts.map((t) => JSON.stringify(t.text)).join(' ');
console.log(`when it fires it raises ${list(raises)}`);
console.log(`and lowers ${list(lowers)}`);
model.dispose();
