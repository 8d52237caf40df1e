// The neuron diagram's "go deeper" panel, the gated neuron dissected: the walk's neuron's weight
// class and cosines, its quadrant and bilinear term at the walk's token, its layer's class counts,
// and each layer's distance from bilinear on the reader's sentence, all equal to Node's numbers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_TEXT, demo, h, openPage, runSentence, seen } from './page-harness.js';

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
