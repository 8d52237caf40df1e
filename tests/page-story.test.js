// The page's running example (<section id="story">): 我上周从巴黎飞到 / "I flew from Paris to" through
// every step, in both languages; each number the page shows is recomputed here with the same API in
// Node (neuronsForTokens, pushNeuron, neuronTopActivations, featureTokens) on the same sentences.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { featureTokens, neuronsForTokens, pushNeuron, neuronTopActivations, findFeatureNeurons } from '../js/index.js';
import { SHOTS, demo, h, openPage, probes } from './page-harness.js';

openPage();

/** the story has run on `text` (its card says which sentence its numbers belong to) */
const storyDone = (p, text) => p.waitForFunction((t) => { const c = document.getElementById('story-card'); return c.dataset.state === 'ok' && c.dataset.text === t; }, text, { timeout: 180000 });
const data = (p, id) => p.$eval(`#${id}`, (e) => ({ ...e.dataset }));
const near = (a, b, what) => assert.ok(Math.abs(Number(a) - b) <= 1e-9 * (1 + Math.abs(b)), `${what}: page ${a}, Node ${b}`);

async function checkStory(lang, text, pushText) {
  const p = h.page, m = await demo(), P = probes();
  await storyDone(p, text);
  assert.equal(await p.inputValue('#story-text'), text);
  assert.equal(await p.inputValue('#story-push-text'), pushText);
  const tokens = featureTokens(m, P, { label: 'city', lang });
  const found = neuronsForTokens(m, text, { tokens, perLayer: 8 });
  near((await data(p, 'story-predict')).p, found.p, `${lang}: P(city)`);
  const w = found.candidates[0], writer = await data(p, 'story-writer');
  assert.equal(writer.neuron, `${w.layer}:${w.neuron}`, `${lang}: the writer`);
  near(writer.p, w.p, `${lang}: P(city) with the writer off`);
  const sign = w.activation < 0 ? -1 : 1;
  const unit = neuronTopActivations(m, P.filter((x) => x.lang === lang).map((x) => x.text), { layer: w.layer, neuron: w.neuron, sign, k: 1 }).top[0].activation;
  near(writer.unit, unit, `${lang}: one unit of push`);
  const push = pushNeuron(m, pushText, { layer: w.layer, neuron: w.neuron, tokens, values: [1, 2, 4].map((k) => k * unit) });
  const pd = await data(p, 'story-push');
  near(pd.before, push.before.p, `${lang}: P(city) before the push`);
  JSON.parse(pd.after).forEach((x, i) => near(x, push.after[i].p, `${lang}: P(city) pushed ×${[1, 2, 4][i]}`));
  // the detector: the feature card's city neuron, switched off
  const best = findFeatureNeurons(m, P, { top: 2, byLang: true }).bestByLang[lang].find((b) => b.feature === 'city');
  const det = await data(p, 'story-detector');
  assert.equal(det.neuron, `${best.layer}:${best.neuron}`);
  const ids = m.tokenizer.encode(text);
  const off = m.forward(ids, { stats: false, interventions: [{ hook: `blocks.${best.layer}.mlp.hook_post`, neurons: [best.neuron], op: 'set', value: 0 }] }).logits;
  const mx = Math.max(...off);
  let z = 0, s = 0;
  for (let i = 0; i < off.length; i++) z += Math.exp(off[i] - mx);
  for (const id of tokens) s += Math.exp(off[id] - mx);
  near(det.p, s / z, `${lang}: P(city) with the detector off`);
  // what is shown is text: no control token, no replacement character
  const shown = await p.innerText('#story-card');
  assert.ok(!shown.includes('\uFFFD') && !/<\|[a-z_]+\|>/.test(shown), shown);
  return { found, push };
}

test('the running example in Chinese: each step\'s number equals Node\'s on the same sentence', async () => {
  const { found, push } = await checkStory('zh', '我上周从巴黎飞到', '饭菜一点也不');
  assert.ok(found.p > 0.5 && found.candidates[0].delta < 0);
  assert.ok(push.after[2].p > 10 * push.before.p, 'the push raises city tokens');
  await (await h.page.$('#story')).screenshot({ path: path.join(SHOTS, 'story-zh.png') });
});

test('switching to English runs the English example, and its numbers equal Node\'s', async () => {
  await h.page.click('#lang-toggle');
  await checkStory('en', 'I flew from Paris to', 'The food was');
  await h.page.click('#lang-toggle');
  await storyDone(h.page, '我上周从巴黎飞到');
});

test('a sentence of the reader\'s own runs the story again; an empty one says why instead of running', async () => {
  const p = h.page;
  await p.fill('#story-text', '我从上海飞到');
  await p.click('#story-run');
  await storyDone(p, '我从上海飞到');
  const m = await demo(), tokens = featureTokens(m, probes(), { label: 'city', lang: 'zh' });
  near((await data(p, 'story-predict')).p, neuronsForTokens(m, '我从上海飞到', { tokens }).p, 'the reader\'s sentence');
  await p.fill('#story-text', '');
  await p.click('#story-run');
  await p.waitForFunction(() => document.querySelector('#story-card > .card-note')?.textContent.length > 0);
  assert.match(await p.innerText('#story-card > .card-note'), /空|empty/);
});
