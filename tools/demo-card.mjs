#!/usr/bin/env node
// Fills weights/demo/README.md (the model card) from weights/demo/README.md.in with measured
// numbers: summary.json, greedy samples, and the feature neurons (and directions) on held-out probes.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadModel, findFeatureNeurons } from '../js/index.js';
import { probes } from '../js/corpus.js';
import { mlpRatios } from './train/residual-picture.mjs';

const dir = path.join(path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..'), 'weights/demo');
const sum_ = JSON.parse(fs.readFileSync(path.join(dir, 'summary.json'), 'utf8'));
const man = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
const m = await loadModel(dir);
const samples = [];
for (const p of ['I flew from', 'The food was', 'Lily met', 'Try this loop:', 'On March', 'Nobody', '我上周从', '饭菜', '李雷在', '试试这个循环：', '2015年']) {
  let s = p;
  for await (const t of m.generate(p, { maxTokens: 32 })) s += t.text;
  samples.push('    ' + s.replace(/\n/g, '\n    '));
}
const P = probes(9, 160);
const res = findFeatureNeurons(m, P, { top: 2, directions: true, topActivations: 8, byLang: true });
const LANG = { zh: 'Chinese', en: 'English' };
const line = (b, g) => {
  const n = b.top.filter((x) => x.labels.includes(b.feature)).length;
  const lang = b.heldOutAucByLang ? ` — Chinese ${b.heldOutAucByLang.zh.toFixed(3)}, English ${b.heldOutAucByLang.en.toFixed(3)}` : '';
  return `- ${g ? `${LANG[g]} ` : ''}${b.feature}: layer ${b.layer}, neuron ${b.neuron}${b.sign < 0 ? ' (fires negatively)' : ''}, held-out AUC ${b.heldOutAuc.toFixed(3)}${lang} (${b.nPos} positive, ${b.nNeg} negative tokens); ` +
    `${n} of its 8 strongest activations in the ${g ? `${LANG[g]} ` : ''}probes are ${b.feature} tokens: ${b.top.map((x) => '`' + JSON.stringify(x.piece) + '`').join(' ')}`;
};
const feats = res.best.map((b) => line(b));
const byLang = ['zh', 'en'].flatMap((g) => res.bestByLang[g].map((b) => line(b, g)));
const fresh = ['zh', 'en'].flatMap((g) => ['city', 'negation', 'code'].map((f) => {
  const runs = [11, 12].map((seed) => findFeatureNeurons(m, probes(seed, 400), { top: 1, byLang: true }).bestByLang[g].find((b) => b.feature === f));
  return `- ${LANG[g]} ${f}: ${runs.map((b) => `layer ${b.layer} neuron ${b.neuron}, ${b.heldOutAuc.toFixed(3)}`).join('; ')}`;
}));
const dirs = res.directions.map((d) => `- ${d.feature}: layer ${d.layer}, held-out AUC ${d.heldOutAuc.toFixed(3)}`);
// the lesson's chart: per layer, the mean |mlp_out| / |resid_post| over the probes
const L = m.nLayers, ratios = mlpRatios(m, P).map((r) => 100 * r), sorted = [...ratios].sort((a, b) => a - b);
const ratioText = `${ratios.map((r) => r.toFixed(0)).join(', ')}% (median ${sorted[Math.floor((L - 1) / 2)].toFixed(0)}%, ${ratios.filter((r) => r < 50).length} of ${L} layers under 50%, ${ratios.filter((r) => r < 25).length} under 25%)`;
const card = fs.readFileSync(path.join(dir, 'README.md.in'), 'utf8')
  .replace('@WEIGHT_BYTES@', man.shards.reduce((a, s) => a + s.bytes, 0).toLocaleString('en-US'))
  .replace('@TRAIN_TOKENS@', sum_.train_tokens.toLocaleString('en-US'))
  .replace('@STEPS@', sum_.steps.toLocaleString('en-US'))
  .replaceAll('@SECONDS@', sum_.seconds.toFixed(0))
  .replaceAll('@VAL_LOSS@', sum_.val_loss.toFixed(3))
  .replace('@SHA@', `${man.shards[0].sha256.slice(0, 8)}…`)
  .replace('@UNIGRAM@', sum_.unigram_baseline.toFixed(3))
  .replace('@SAMPLES@', samples.join('\n\n'))
  .replace('@FEATURES@', feats.join('\n'))
  .replace('@FEATURES_BY_LANG@', byLang.join('\n'))
  .replace('@FRESH@', fresh.join('\n'))
  .replace('@RATIOS@', ratioText)
  .replace('@PARAMS@', sum_.params.toLocaleString('en-US'))
  .replace('@MB@', (man.shards.reduce((a, x) => a + x.bytes, 0) / 1e6).toFixed(1))
  .replace('@DIRECTIONS@', dirs.join('\n'));
fs.writeFileSync(path.join(dir, 'README.md'), card);
console.log(card.split('## What it can do')[1].split('## What it cannot')[0]);
m.dispose();
