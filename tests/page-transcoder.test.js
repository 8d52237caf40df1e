// The page's transcoder room (web/sections/transcoder.js, a "go deeper" panel of the fires section):
// the reader trains one layer's transcoder in the page's Worker; the held-out scores and the
// neurons-against-features table are the ones Node computes with the same API on the same probes
// (the trainer gives the same bytes on any thread count, so the page's set is Node's); the FVU
// chart gets its points while training; a second visit shows the set from Cache Storage without
// training; Stop stops a run without marking the card failed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { trainTranscoders, loadTranscoders, neuronsVsFeatures, featureCard, featuresOnText, pushNeuron, featureTokens } from '../js/index.js';
import { SHOTS, demo, h, newPage, openPage, probes, pageErrors } from './page-harness.js';

openPage();

const CHOICE = { layer: 3, features: 512, tokens: 20000 };
const done = (p, how) => p.waitForFunction((w) => document.getElementById('tc-card').dataset.done === w, how, { timeout: 300000 });
const table = (p) => p.$$eval('#tc-compare tbody tr', (rs) => rs.map((r) => ({ ...r.dataset })));

async function choose(p, c = CHOICE) {
  await p.waitForFunction(() => !document.getElementById('tc-train').disabled && document.getElementById('tc-layer').options.length > 0, null, { timeout: 120000 });
  await p.selectOption('#tc-layer', String(c.layer));
  await p.selectOption('#tc-features', String(c.features));
  await p.selectOption('#tc-tokens', String(c.tokens));
}

test('a transcoder trained in the page: its scores and the neurons-against-features table are Node\'s; the FVU chart fills while it trains', async () => {
  const p = h.page;
  await choose(p);
  await p.click('#tc-train');
  await done(p, 'trained');
  const m = await demo();
  const r = await trainTranscoders(m, { layers: [CHOICE.layer], features: CHOICE.features, k: 32, tokens: CHOICE.tokens, epochs: 4, valTokens: 4096 });
  assert.equal(Number(await p.getAttribute('#tc-card', 'data-fvu')), r.scores.layers[0].fvu, 'held-out FVU: page = Node');
  const scores = await p.innerText('#tc-scores');
  assert.ok(scores.includes(r.scores.layers[0].fvu.toFixed(3)) && scores.includes(r.scores.layers[0].l0.toFixed(1)), scores);
  const set = await loadTranscoders(m, r.files);
  const want = neuronsVsFeatures(m, set, probes(), { byLang: true });
  const rows = await table(p);
  assert.deepEqual(rows.map((x) => x.feature), want.rows.map((x) => x.feature));
  rows.forEach((x, i) => {
    const w = want.rows[i];
    assert.equal(Number(x.neuronAuc), w.neuron.heldOutAuc, `${x.feature}: best neuron`);
    assert.equal(Number(x.featureAuc), w.transcoder.heldOutAuc, `${x.feature}: best feature`);
    assert.equal(x.match, String(w.neuronsToMatch ?? ''), `${x.feature}: neurons to match`);
  });
  // the city row's feature opens its card: the computed label, the examples and what it writes, as in Node
  const f = want.rows[0].transcoder.neuron;
  await p.click(`#tc-compare tr[data-feature="city"] button[data-feature="${f}"]`);
  await p.waitForFunction((x) => document.getElementById('tc-feature').dataset.feature === String(x) && document.getElementById('tc-card').dataset.state === 'ok', f, { timeout: 120000 });
  const card = featureCard(m, set, probes(), { layer: CHOICE.layer, feature: f, k: 6, quantiles: [0.5, 0.9, 0.99, 0.999] });
  assert.equal(await p.getAttribute('#tc-f-label', 'data-label'), card.label.label);
  assert.ok((await p.innerText('#tc-f-label')).includes(card.label.heldOutAuc.toFixed(3)));
  assert.deepEqual(await p.$$eval('#tc-f-top li', (ls) => ls.map((l) => Number(l.dataset.act))), card.top.map((x) => x.activation));
  assert.deepEqual(await p.$$eval('#tc-f-range li', (ls) => ls.map((l) => Number(l.dataset.q))), card.atQuantiles.map((x) => x.q));
  const up = await p.$$eval('#tc-f-up li', (ls) => ls.map((l) => Number(l.dataset.id)));
  assert.ok(up.length > 0 && up.every((id) => card.output.promoted.some((t) => t.id === id)), 'the tokens it pushes up');
  assert.equal(await p.$$eval('#tc-f-hist rect', (rs) => rs.length), 24);
  // pushed by 1, 2, 4 × its own scale: P(city next) as pushNeuron gives it in Node
  await p.click('#tc-push');
  await p.waitForFunction(() => document.querySelectorAll('#tc-push-table tr').length === 4, null, { timeout: 120000 });
  const pushed = pushNeuron(m, '我上周从巴黎飞到', { layer: CHOICE.layer, neuron: f, values: [1, 2, 4].map((x) => x * card.scale), tokens: featureTokens(m, probes(), { label: 'city' }), k: 3, transcoders: set });
  assert.deepEqual(await p.$$eval('#tc-push-table tr', (rs) => rs.map((r) => Number(r.dataset.p))), [pushed.before.p, ...pushed.after.map((x) => x.p)]);
  // search by text: the features on the sentence, strongest first
  await p.click('#tc-search');
  await p.waitForFunction(() => document.querySelectorAll('#tc-search-out button').length > 0, null, { timeout: 120000 });
  const on = featuresOnText(m, set, '我上周从巴黎飞到东京。', { layer: CHOICE.layer, k: 3, top: 12 });
  assert.deepEqual(await p.$$eval('#tc-search-out button', (bs) => bs.map((b) => Number(b.dataset.feature))), on.features.map((x) => x.feature));
  set.dispose();
  // the chart: one point per training report after the first batches, a line through them
  assert.ok(await p.$$eval('#tc-chart path', (ps) => ps[0]?.getAttribute('d').split('L').length) >= 2, 'the FVU line has points');
  assert.match(await p.innerText('#tc-chart-cap'), /FVU/);
  await p.locator('#tc-card').screenshot({ path: path.join(SHOTS, 'transcoder-room.png') }).catch(() => {});
  assert.deepEqual(pageErrors(), []);
});

test('a second visit shows the trained set from this browser\'s cache, without training; Stop stops a run and the card stays usable', async () => {
  const p2 = await newPage(h.context);
  try {
    await choose(p2);
    await done(p2, 'cache');
    assert.match(await p2.innerText('#tc-scores'), /缓存|cache/);
    assert.equal((await table(p2)).length, 3);
    // a long run, stopped at its first progress report
    await p2.selectOption('#tc-tokens', '400000');
    await p2.click('#tc-train');
    await p2.waitForFunction(() => /训练中|Training/.test(document.getElementById('tc-progress').textContent), null, { timeout: 120000 });
    await p2.click('#tc-stop');
    await p2.waitForFunction(() => /已停止|Stopped/.test(document.getElementById('tc-progress').textContent), null, { timeout: 120000 });
    assert.notEqual(await p2.getAttribute('#tc-card', 'data-state'), 'failed');
    assert.equal(await p2.$eval('#tc-train', (b) => b.disabled), false, 'Train works again');
  } finally { await p2.close(); }
  assert.deepEqual(pageErrors(), []);
});
