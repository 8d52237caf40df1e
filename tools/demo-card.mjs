#!/usr/bin/env node
// Fills weights/demo/README.md (the model card) from weights/demo/README.md.in with measured
// numbers: summary.json, greedy samples, and the feature neurons (and directions) on held-out probes.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadModel, findFeatureNeurons } from '../js/index.js';
import { probes } from '../js/corpus.js';

const dir = path.join(path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..'), 'weights/demo');
const sum = JSON.parse(fs.readFileSync(path.join(dir, 'summary.json'), 'utf8'));
const man = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
const m = await loadModel(dir);
const samples = [];
for (const p of ['I flew from', 'The food was', 'Lily met', 'Try this loop:', 'On March', 'Nobody']) {
  let s = p;
  for await (const t of m.generate(p, { maxTokens: 32 })) s += t.text;
  samples.push('    ' + s.replace(/\n/g, '\n    '));
}
const res = findFeatureNeurons(m, probes(9, 160), { top: 2, directions: true, topActivations: 8 });
const feats = res.best.map((b) => {
  const top = b.top;
  const n = top.filter((x) => x.labels.includes(b.feature)).length;
  return `- ${b.feature}: layer ${b.layer}, neuron ${b.neuron}${b.sign < 0 ? ' (fires negatively)' : ''}, held-out AUC ${b.heldOutAuc.toFixed(3)} (${b.nPos} positive, ${b.nNeg} negative tokens); ` +
    `${n} of its 8 strongest activations in the probes are ${b.feature} tokens: ${top.map((x) => '`' + JSON.stringify(x.piece) + '`').join(' ')}`;
});
const dirs = res.directions.map((d) => `- ${d.feature}: layer ${d.layer}, held-out AUC ${d.heldOutAuc.toFixed(3)}`);
const card = fs.readFileSync(path.join(dir, 'README.md.in'), 'utf8')
  .replace('@WEIGHT_BYTES@', man.shards.reduce((a, s) => a + s.bytes, 0).toLocaleString('en-US'))
  .replace('@TRAIN_TOKENS@', sum.train_tokens.toLocaleString('en-US'))
  .replace('@STEPS@', sum.steps.toLocaleString('en-US'))
  .replaceAll('@SECONDS@', sum.seconds.toFixed(0))
  .replaceAll('@VAL_LOSS@', sum.val_loss.toFixed(3))
  .replace('@SHA@', `${man.shards[0].sha256.slice(0, 8)}…`)
  .replace('@UNIGRAM@', sum.unigram_baseline.toFixed(3))
  .replace('@SAMPLES@', samples.join('\n\n'))
  .replace('@FEATURES@', feats.join('\n'))
  .replace('@DIRECTIONS@', dirs.join('\n'));
fs.writeFileSync(path.join(dir, 'README.md'), card);
console.log(card.split('## What it can do')[1].split('## What it cannot')[0]);
m.dispose();
