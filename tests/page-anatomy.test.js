// The neuron diagram's "go deeper" panel, the gated neuron dissected: the walk's neuron's weight
// class and cosines, its quadrant and bilinear term at the walk's token, its layer's class counts,
// and each layer's distance from bilinear on the reader's sentence, all equal to Node's numbers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { neuronQuadrants, languageNeurons, languageSwitch, languageLoss } from '../js/index.js';
import { DEFAULT_TEXT, demo, h, openPage, probes, runSentence, seen } from './page-harness.js';

openPage();

const waitAnatomy = () => h.page.waitForFunction(() => ['anatomy-card', 'anatomy-gap-card'].every((id) => document.getElementById(id).dataset.state === 'ok')
  && document.getElementById('anatomy-gap').children.length > 0, null, { timeout: 120000 });

test('the walk\'s neuron from its weights: class, cosines and its layer\'s counts as neuronWeightClasses computes them in Node', async () => {
  const p = h.page, m = await demo();
  await waitAnatomy();
  const l = Number(await p.getAttribute('#anatomy-card', 'data-layer')), j = Number(await p.getAttribute('#anatomy-card', 'data-neuron'));
  assert.equal(String(l), await p.inputValue('#walk-layer'), 'the lit neuron of the walk');
  assert.equal(String(j), await p.inputValue('#walk-feature'));
  const want = m.neuronWeightClasses({ layers: [l] }).layers[0], cls = m.neuronWeightClass(l, j);
  assert.equal(await p.getAttribute('#anatomy-class', 'data-class'), cls.class);
  const cos = await p.$$eval('#anatomy-cos .cos-row', (rs) => rs.map((r) => Number(r.dataset.v)));
  assert.deepEqual(cos, [cls.cosGateIn, cls.cosGateOut, cls.cosInOut]);
  const counts = await p.$$eval('#anatomy-counts .cos-row', (rs) => Object.fromEntries(rs.map((r) => [r.dataset.class, Number(r.dataset.count)])));
  assert.deepEqual(counts, want.counts);
  assert.equal(await p.getAttribute(`#anatomy-counts .mine`, 'data-class'), cls.class);
  // at the walk's token: the real output and the bilinear term from the walk's own numbers
  const d = await p.$eval('#anatomy-token', (e) => ({ ...e.dataset }));
  assert.equal(Number(d.p), Number(await p.getAttribute('#walk-out', 'data-value')));
  assert.ok(Math.abs(Number(d.b) - 0.5 * Number(d.g) * Number(d.u)) < 1e-9);
  assert.match(await seen('#anatomy-token'), new RegExp(`门 ${Number(d.g) >= 0 ? '\\+' : '−'}、up ${Number(d.u) >= 0 ? '\\+' : '−'} 象限`));
});

test('how far each layer is from bilinear on the reader\'s sentence: the numbers of bilinearGap in Node, and they follow a new sentence', async () => {
  const p = h.page, m = await demo();
  const check = async (text) => {
    await waitAnatomy();
    const want = m.bilinearGap(text);
    const got = await p.$$eval('#anatomy-gap g[data-layer]', (gs) => gs.map((g) => ({ layer: Number(g.dataset.layer), kl: Number(g.dataset.kl), dLoss: Number(g.dataset.dloss) })));
    assert.equal(got.length, m.nLayers);
    got.forEach((g, i) => {
      assert.equal(g.layer, want.layers[i].layer);
      assert.ok(Math.abs(g.kl - want.layers[i].kl) <= 1e-6 * (1 + want.layers[i].kl), `layer ${i}: KL ${g.kl} vs ${want.layers[i].kl}`);
      assert.ok(Math.abs(g.dLoss - want.layers[i].dLoss) <= 1e-5, `layer ${i}: loss change`);
    });
    const far = want.layers.reduce((a, b) => (b.kl > a.kl ? b : a));
    assert.equal(Number(await p.getAttribute('#anatomy-gap-note', 'data-far')), far.layer);
    assert.match(await seen('#anatomy-gap-note'), new RegExp(`最离不开门的是第 ${far.layer} 层`));
  };
  await check(DEFAULT_TEXT);
  const text = '他把代码写在纸上。';
  await runSentence(text);
  await check(text);
  await runSentence(DEFAULT_TEXT);
});

test('the lit neuron\'s four quadrants over the probe sentences, and the language-neuron experiment: the numbers of Node\'s calls', async () => {
  const p = h.page, m = await demo();
  await waitAnatomy();
  const zh = probes().filter((x) => x.lang === 'zh').map((x) => x.text);
  await p.click('#anatomy-quad-run');
  await p.waitForFunction(() => document.querySelectorAll('#anatomy-quads .quad').length === 4 && document.getElementById('anatomy-quads').dataset.state === 'ok', null, { timeout: 120000 });
  const l = Number(await p.getAttribute('#anatomy-quads', 'data-layer')), j = Number(await p.getAttribute('#anatomy-quads', 'data-neuron'));
  const want = neuronQuadrants(m, zh, { layer: l, neuron: j, k: 1, window: 2 });
  const got = await p.$$eval('#anatomy-quads .quad', (qs) => qs.map((q) => ({ gate: q.dataset.gate, up: q.dataset.up, count: Number(q.dataset.count) })));
  assert.deepEqual(got, want.quadrants.map((q) => ({ gate: q.gate, up: q.up, count: q.count })));
  await p.click('#anatomy-lang-run');
  await p.waitForFunction(() => document.getElementById('anatomy-lang-out').dataset.neurons && document.getElementById('anatomy-lang-card').dataset.state === 'ok', null, { timeout: 120000 });
  const d = await p.$eval('#anatomy-lang-out', (e) => ({ ...e.dataset }));
  const en = probes().filter((x) => x.lang === 'en').map((x) => x.text), half = (v) => Math.ceil(v.length / 2);
  const r = languageNeurons(m, { zh: zh.slice(0, half(zh)), en: en.slice(0, half(en)) }, { share: 0.01 });
  assert.equal(Number(d.neurons), r.byLang.zh.length);
  assert.equal(d.prompt, '我上周从巴黎');
  const sw = languageSwitch(m, [d.prompt], { neurons: r.byLang.zh, maxTokens: 12 }).prompts[0];
  assert.deepEqual([d.before, d.after], [sw.before.text, sw.after.text]);
  const loss = languageLoss(m, { zh: zh.slice(half(zh)).slice(0, 20), en: en.slice(half(en)).slice(0, 20) }, { neurons: r.byLang.zh });
  assert.ok(Math.abs(Number(d.dloss) - loss.zh.change) < 1e-6 && Math.abs(Number(d.dlossOther) - loss.en.change) < 1e-6);
});
