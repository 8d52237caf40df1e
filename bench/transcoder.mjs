#!/usr/bin/env node
// Transcoder training on the demo model (js/transcoder.js): every layer at once, the CLI's
// defaults unless told, in Node on the wasm engine. Prints one table row per layer (held-out FVU,
// L0, dead features, replacement KL / loss / loss recovered) and the training rate and time; then
// the best neuron against the best feature for city / negation / code (held-out ROC AUC on the
// project's probes, seed 9, 400 texts; neuronsVsFeatures) unless --no-compare; --out DIR saves the set.
//   node bench/transcoder.mjs [--threads N] [--tokens N] [--features F] [--k K] [--layers 0,3] [--out DIR] [--no-compare] [--json]
// --shapes qwen3.5-0.8b: the Qwen3.5-0.8B shapes instead (a synthetic q8 weight set from
// bench/models.mjs, no tokenizer: random token rows), the memory preflight for every layer and for
// the layers asked (default the middle one), then training and scoring those (default 32,768 tokens).
import { loadModel } from '../js/index.js';
import { trainTranscoders, TRANSCODER_DEFAULTS, loadTranscoders } from '../js/transcoder.js';
import { neuronsVsFeatures } from '../js/features.js';
import { probes } from '../js/corpus.js';
import fs from 'node:fs';
import { transcoderMemory } from '../js/transcoder.js';
import { synth } from './models.mjs';
import { rng } from '../js/corpus.js';
import { demoModelUrl } from '../js/demo.js';
import { fileURLToPath } from 'node:url';

const args = process.argv.slice(2);
const opt = (k, d) => { const i = args.indexOf(k); return i >= 0 ? args[i + 1] : d; };
const threads = Number(opt('--threads', 2)), tokens = Number(opt('--tokens', TRANSCODER_DEFAULTS.tokens));
const features = Number(opt('--features', TRANSCODER_DEFAULTS.features)), k = Number(opt('--k', TRANSCODER_DEFAULTS.k));
const layers = opt('--layers') ? opt('--layers').split(',').map(Number) : undefined;
if (opt('--shapes')) { await shapes(opt('--shapes')); process.exit(0); }
const model = await loadModel(fileURLToPath(demoModelUrl), { threads });
let last = 0;
const r = await trainTranscoders(model, {
  tokens, features, k, layers,
  onProgress: (p) => { if (performance.now() - last > 10_000) { last = performance.now(); process.stderr.write(`${p.phase} ${p.done} / ${p.total}, ${p.tokensPerSecond.toFixed(0)} tok/s\n`); } },
});
if (opt('--out')) {
  fs.mkdirSync(opt('--out'), { recursive: true });
  for (const [name, data] of Object.entries(r.files)) fs.writeFileSync(`${opt('--out')}/${name}`, data);
}
let cmp = null, cmpSeconds = 0;
if (!args.includes('--no-compare')) {
  const t0 = performance.now();
  cmp = neuronsVsFeatures(model, await loadTranscoders(model, r.files), probes(9, 400));
  cmpSeconds = (performance.now() - t0) / 1000;
}
model.dispose();
if (args.includes('--json')) { const { files, ...rest } = r; console.log(JSON.stringify({ ...rest, compare: cmp })); process.exit(0); }
const f = (v, d = 3) => (v === null ? '-' : v.toFixed(d));
console.log(`demo model (${r.layers.length} layers), ${r.features} features, k ${r.k}; ${r.trainTokens} training tokens on ${r.threads} thread${r.threads > 1 ? 's' : ''}: ` +
  `${r.trainSeconds.toFixed(1)} s, ${r.tokensPerSecond.toFixed(0)} tok/s (capture and training of every layer); scoring ${r.scores.eval_tokens} held-out tokens: ${r.scoreSeconds.toFixed(1)} s`);
console.log('\n| layer | FVU | L0 | dead | KL (MLP replaced) | loss (replaced) | loss (MLP zeroed) | recovered |\n|---|---|---|---|---|---|---|---|');
for (const l of r.scores.layers) console.log(`| ${l.layer} | ${f(l.fvu)} | ${f(l.l0, 1)} | ${f(l.dead)} | ${f(l.kl, 4)} | ${f(l.ce, 4)} | ${f(l.ce_zero, 4)} | ${f(l.recovered, 2)} |`);
console.log(`\nmodel loss ${f(r.scores.ce_model, 4)}; every layer replaced at once: KL ${f(r.scores.all.kl, 4)}, loss ${f(r.scores.all.ce, 4)}`);
if (cmp) {
  const a = (x) => (x ? x.heldOutAuc.toFixed(3) : '-');
  console.log(`\nneurons against features (${cmp.tokens} probe tokens, chosen on the first half, held-out AUC on the second; ${cmpSeconds.toFixed(1)} s):`);
  console.log('\n| feature | best neuron | AUC | best feature | AUC | zh: neuron / feature | en: neuron / feature | neurons of its layer to match it |\n|---|---|---|---|---|---|---|---|');
  for (const x of cmp.rows) console.log(`| ${x.feature} | L${x.neuron.layer} #${x.neuron.neuron} | ${a(x.neuron)} | L${x.transcoder.layer} #${x.transcoder.neuron} | ${a(x.transcoder)} | ` +
    `${a(x.byLang?.zh?.neuron)} / ${a(x.byLang?.zh?.transcoder)} | ${a(x.byLang?.en?.neuron)} / ${a(x.byLang?.en?.transcoder)} | ${x.neuronsToMatch ?? `> ${x.combined.at(-1)?.n}`} (${x.combined.map((c) => `${c.n}: ${c.heldOutAuc.toFixed(3)}`).join(', ')}) |`);
}

/** training on a big model's shapes: the preflight, then a few layers on random token rows */
async function shapes(preset) {
  const m = await loadModel(synth(preset, 'q8'), { threads });
  const L = m.nLayers, ls = layers ?? [Math.floor(L / 2)], toks = Number(opt('--tokens', 32768));
  const mb = (x) => `${(x / 2 ** 20).toFixed(0)} MB`;
  const show = (what, mem) => console.log(`| ${what} | ${mb(mem.bytes)} | ${mb(mem.parts.weights)} | ${mb(mem.parts.activations)} | ${mb(mem.parts.scoring)} | ${mb(mem.free)} | ${mem.bytes <= mem.free ? 'yes' : 'no: E_MEMORY before allocating'} |`);
  console.log(`${preset} shapes (synthetic q8, hidden ${m.config.hidden_size}, vocab ${m.config.vocab_size}, ${L} layers), ${features} features, k ${k}, ${threads} thread${threads > 1 ? 's' : ''}\n`);
  console.log('| layers | session needs | transcoders + Adam | captured activations | scoring | engine has left | fits |\n|---|---|---|---|---|---|---|');
  show(`all ${L}`, transcoderMemory(m, { features, k }));
  show(`${ls.length} (layer${ls.length > 1 ? 's' : ''} ${ls.join(', ')})`, transcoderMemory(m, { features, k, layers: ls }));
  const V = m.config.vocab_size;
  const sequences = (seed, T) => (function* () { const r = rng(seed); for (;;) yield Int32Array.from({ length: T }, () => r.int(V)); })();
  let last = 0;
  const val = Number(opt('--val-tokens', 256));
  const r = await trainTranscoders(m, { layers: ls, features, k, tokens: toks, valTokens: val, sequences,
    onProgress: (p) => { if (performance.now() - last > 10_000) { last = performance.now(); process.stderr.write(`${p.phase} ${p.done} / ${p.total}, ${p.tokensPerSecond.toFixed(0)} tok/s\n`); } } });
  // the saved set loads back into the model and runs: its features on a row of tokens
  const t0 = performance.now(), set = await loadTranscoders(m, r.files), hook = `blocks.${ls[0]}.transcoder.hook_feature`;
  const z = m.forward(Int32Array.from({ length: 64 }, (_, i) => (i * 7919) % V), { hooks: [hook], stats: false, logits: 'none', transcoders: { set } }).hooks[hook];
  let on = 0;
  for (const v of z) if (v > 0) on++;
  const loadMs = performance.now() - t0;
  set.dispose();
  m.dispose();
  console.log(`\ntrained layer${ls.length > 1 ? 's' : ''} ${ls.join(', ')} on ${r.trainTokens} random tokens: ${r.trainSeconds.toFixed(1)} s, ${r.tokensPerSecond.toFixed(0)} tok/s; scored ${val} tokens in ${r.scoreSeconds.toFixed(1)} s`);
  console.log(`the saved set (${(r.files['transcoders.bin'].length / 2 ** 20).toFixed(1)} MB) loaded back and read on 64 tokens in ${loadMs.toFixed(0)} ms: ${(on / 64).toFixed(1)} features on per token (k ${k})`);
  for (const l of r.scores.layers) console.log(`layer ${l.layer}: FVU ${l.fvu?.toFixed(3)}, L0 ${l.l0?.toFixed(1)}, dead ${l.dead?.toFixed(3)}, KL ${l.kl?.toFixed(4)}`);
}
