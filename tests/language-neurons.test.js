// Language-specific neurons (js/language.js, Tang et al. 2024) on the bilingual demo model: the
// activation probabilities and entropies against a count from captured hooks, the selection
// against a brute-force sort, the loss and continuation experiments against passes built by hand,
// the Worker, and typed errors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadModel, loadModelInWorker, languageNeurons, languageSwitch, languageLoss, cjkShare } from '../js/index.js';
import { probes } from '../js/corpus.js';
import { execFileSync } from 'node:child_process';
import { CLI, DEMO } from './helpers.js';

const by = (ps, lang) => ps.filter((p) => p.lang === lang).map((p) => p.text);

test('languageNeurons: probabilities, means and entropies equal a count over captured hooks; the kept neurons are the lowest-entropy ones above the threshold', async () => {
  const m = await loadModel(DEMO, { threads: 1 }), ps = probes(9, 16);
  const texts = { zh: by(ps, 'zh').slice(0, 4), en: by(ps, 'en').slice(0, 4) };
  const r = languageNeurons(m, texts, { share: 0.02 });
  const L = m.nLayers, I = m.config.intermediate_size;
  for (const lang of ['zh', 'en']) {
    const fired = new Float64Array(L * I), sum = new Float64Array(L * I);
    let n = 0;
    for (const text of texts[lang]) {
      const ids = m.tokenizer.encode(text);
      for (let l = 0; l < L; l++) {
        const h = m.forward(ids, { hooks: [`blocks.${l}.mlp.hook_pre`, `blocks.${l}.mlp.hook_post`] }).hooks;
        for (let t = 0; t < ids.length; t++) for (let k = 0; k < I; k++) {
          if (h[`blocks.${l}.mlp.hook_pre`][t * I + k] > 0) fired[l * I + k]++;
          sum[l * I + k] += h[`blocks.${l}.mlp.hook_post`][t * I + k];
        }
      }
      n += ids.length;
    }
    assert.equal(r.tokens[lang], n);
    for (let i = 0; i < L * I; i++) {
      assert.equal(r.probs[lang][i], Math.fround(fired[i] / n));
      assert.ok(Math.abs(r.means[lang][i] - sum[i] / n) < 1e-5 * (1 + Math.abs(sum[i] / n)));
    }
  }
  for (let i = 0; i < L * I; i += 37) {
    const a = r.probs.zh[i], b = r.probs.en[i], s = a + b;
    const e = s > 0 ? -[a / s, b / s].reduce((x, q) => x + (q > 0 ? q * Math.log(q) : 0), 0) : Math.log(2);
    assert.ok(Math.abs(r.entropy[i] - e) < 1e-6);
  }
  // brute force: every neuron whose larger probability reaches the threshold, sorted by entropy
  const all = [...r.probs.zh, ...r.probs.en].sort((a, b) => a - b), threshold = all[Math.floor(0.95 * all.length)];
  assert.equal(r.threshold, threshold);
  const want = Array.from({ length: L * I }, (_, i) => i).filter((i) => Math.max(r.probs.zh[i], r.probs.en[i]) >= threshold && Math.max(r.probs.zh[i], r.probs.en[i]) > 0)
    .sort((a, b) => r.entropy[a] - r.entropy[b] || a - b).slice(0, Math.round(0.02 * L * I));
  assert.deepEqual(r.neurons.map((x) => x.layer * I + x.neuron), want);
  for (const x of r.neurons) assert.equal(x.lang, x.probs.zh >= x.probs.en ? (x.probs.en > x.probs.zh ? 'en' : 'zh') : 'en');
  assert.equal(r.byLang.zh.length + r.byLang.en.length, r.neurons.length);
  m.dispose();
});

test('languageLoss and languageSwitch equal passes with the neurons switched off by hand; cjkShare', async () => {
  const m = await loadModel(DEMO, { threads: 1 }), ps = probes(9, 16);
  const r = languageNeurons(m, { zh: by(ps, 'zh'), en: by(ps, 'en') }, { share: 0.02 });
  const zh = r.byLang.zh, layers = [...new Set(zh.map((x) => x.layer))];
  const off = layers.map((layer) => ({ layer, hook: 'mlp.hook_post', op: 'set', value: 0, neurons: zh.filter((x) => x.layer === layer).map((x) => x.neuron) }));
  const V = m.config.vocab_size, n = m.tokenizer.vocabSize;
  const nll = (ids, interventions) => {
    const lg = m.forward(ids, { logits: 'all', interventions }).logits; let s = 0;
    for (let t = 0; t + 1 < ids.length; t++) { const row = Array.from(lg.subarray(t * V, t * V + n)), mx = Math.max(...row); s += mx + Math.log(row.reduce((a, y) => a + Math.exp(y - mx), 0)) - row[ids[t + 1]]; }
    return s;
  };
  const held = { zh: by(probes(21, 6), 'zh'), en: by(probes(21, 6), 'en') };
  const got = languageLoss(m, held, { neurons: zh });
  for (const lang of ['zh', 'en']) {
    let b = 0, a = 0, c = 0;
    for (const t of held[lang]) { const ids = m.tokenizer.encode(t); b += nll(ids, []); a += nll(ids, off); c += ids.length - 1; }
    assert.equal(got[lang].tokens, c);
    assert.ok(Math.abs(got[lang].before - b / c) < 1e-9 && Math.abs(got[lang].after - a / c) < 1e-9, lang);
  }
  // greedy continuations by hand, with and without the neurons
  const prompt = '林娜不喜欢', ids = m.tokenizer.encode(prompt);
  const greedy = (interventions) => {
    const out = []; let lg = m.forward(ids, { interventions }).logits;
    for (let s = 0; s < 6; s++) {
      let best = 0; for (let i = 1; i < lg.length; i++) if (lg[i] > lg[best]) best = i;
      if (m.tokenizer.eosIds.includes(best)) break;
      out.push(best); lg = m.forward([best], { interventions, continue: true }).logits;
    }
    return m.tokenizer.decode(out);
  };
  const s = languageSwitch(m, [prompt], { neurons: zh, maxTokens: 6 });
  assert.equal(s.prompts[0].before.text, greedy([]));
  assert.equal(s.prompts[0].after.text, greedy(off));
  assert.equal(s.prompts[0].before.cjk, cjkShare(s.prompts[0].before.text));
  // holding neurons at a value: the same as a set intervention with that vector
  const act = r.byLang.en.slice(0, 3).map((x) => ({ layer: x.layer, neuron: x.neuron, value: 3 * x.mean.en }));
  const held2 = languageSwitch(m, [prompt], { neurons: zh, activate: act, maxTokens: 6 });
  const byLayer = [...new Set(act.map((x) => x.layer))].map((layer) => ({ layer, hook: 'mlp.hook_post', op: 'set', neurons: act.filter((x) => x.layer === layer).map((x) => x.neuron), vector: act.filter((x) => x.layer === layer).map((x) => x.value) }));
  assert.equal(held2.prompts[0].after.text, greedy([...off, ...byLayer]));
  assert.equal(cjkShare('巴黎 is big'), 2 / 7);
  assert.ok(Number.isNaN(cjkShare('123 !')));
  m.dispose();
});

test('the language calls in a Worker, and their typed errors', async () => {
  const m = await loadModel(DEMO, { threads: 1 }), ps = probes(9, 8), texts = { zh: by(ps, 'zh').slice(0, 2), en: by(ps, 'en').slice(0, 2) };
  const want = languageNeurons(m, texts);
  const w = await loadModelInWorker(DEMO, { threads: 1 });
  try {
    const got = await w.languageNeurons(texts);
    assert.deepEqual(got.neurons, want.neurons);
    assert.deepEqual(await w.languageLoss(texts, { neurons: want.neurons.slice(0, 2) }), languageLoss(m, texts, { neurons: want.neurons.slice(0, 2) }));
    await assert.rejects(w.languageSwitch(['x'], { neurons: [] }), { code: 'E_ARG', message: /neurons is empty/ });
  } finally { await w.dispose(); }
  // the command line: the same neurons over the default probe set
  const cli = JSON.parse(execFileSync(process.execPath, [CLI, 'language', DEMO, '--json'], { encoding: 'utf8' }));
  const all = probes(9, 160), full = languageNeurons(m, { zh: by(all, 'zh'), en: by(all, 'en') });
  assert.deepEqual(cli.neurons.map((x) => [x.layer, x.neuron, x.lang]), full.neurons.map((x) => [x.layer, x.neuron, x.lang]));
  assert.ok(cli.loss.zh.zh.change > cli.loss.zh.en.change && cli.loss.en.en.change > cli.loss.en.zh.change, 'each language\'s neurons hurt it most');
  for (const [f, re] of [[() => languageNeurons(m, { zh: texts.zh }), /at least two languages/], [() => languageNeurons(m, { zh: [], en: texts.en }), /texts\.zh is empty/],
    [() => languageNeurons(m, { zh: [1], en: texts.en }), /texts\.zh\[0\]/], [() => languageNeurons(m, texts, { share: 0 }), /share/],
    [() => languageSwitch(m, [], { neurons: [{ layer: 0, neuron: 0 }] }), /prompts is empty/], [() => languageSwitch(m, ['a'], { neurons: [{ layer: 99, neuron: 0 }] }), /neurons\[0\]\.layer 99/],
    [() => languageSwitch(m, ['a'], { neurons: [{ layer: 0, neuron: 0 }], maxTokens: 0 }), /maxTokens/], [() => languageSwitch(m, ['a'], { neurons: [{ layer: 0, neuron: 0 }], activate: [{ layer: 0, neuron: 1 }] }), /activate\[0\]/],
    [() => languageLoss(m, { zh: ['一'] }, { neurons: [] }), /no text of 2 tokens/]])
    assert.throws(f, { code: 'E_ARG', message: re });
  m.dispose();
});
