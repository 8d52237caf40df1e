// The lesson page in headless Chromium: auto-run, bars, SiLU slider, budget toggle, quiz, exercise,
// language switch, the reader's own sentence, neuron knock-out, the live features, the offline
// reload; numbers on the page are checked against model.forward in Node for the same text.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { serve } from '../tools/serve.mjs';
import { loadModel, findFeatureNeurons, neuronTopActivations } from '../js/index.js';
import { CHROMIUM_ARGS } from './browser-harness.js';
import { ROOT } from './helpers.js';

const SITE = path.join(ROOT, 'build/site');
const SHOTS = path.join(ROOT, 'tests/out/screenshots');
// the page opens in Chinese, with a Chinese example (the demo model learned both languages)
const DEFAULT_TEXT = '我上周从巴黎飞到东京。饭菜一点也不好。';
let server, browser, context, page;
const errors = [];

before(async () => {
  fs.mkdirSync(SHOTS, { recursive: true });
  server = await serve({ root: SITE });
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS });
  context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  page = await context.newPage();
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(server.url);
  await page.waitForFunction(() => document.body.dataset.ready, null, { timeout: 120000 });
});
after(async () => { await browser?.close(); await server?.close(); demoModel?.dispose(); });

/** the page's demo model, in this process: every number the page shows is recomputed with it */
let demoModel;
const demo = async () => (demoModel ??= await loadModel(path.join(SITE, 'weights/demo')));

/** what the page should show: the same model, in-process, on the same text */
async function expected(text) {
  const m = await demo();
  const r = m.forward(m.tokenizer.encode(text));
  const ratios = r.stats.mlp_ratio.map((row) => row.reduce((a, b) => a + b, 0) / row.length);
  const out = { ratios, info: m.info(), mlpOut: r.stats.mlp_out_l2, post: r.stats.resid_post_l2 };
  return out;
}
const pageRatios = () => page.$$eval('#bars .bar', (bs) => bs.map((b) => Number(b.dataset.ratio)));

test('auto-run: the demo model loads and every number matches model.forward', async () => {
  assert.equal(await page.evaluate(() => document.body.dataset.ready), '1', await page.textContent('#load-error'));
  assert.equal(await page.evaluate(() => document.body.dataset.model), 'demo');
  assert.equal(await page.inputValue('#try-text'), DEFAULT_TEXT);
  assert.equal(await page.inputValue('#fires-text'), DEFAULT_TEXT);
  const want = await expected(DEFAULT_TEXT);
  const got = await pageRatios();
  assert.equal(got.length, want.info.config.num_hidden_layers);
  got.forEach((r, l) => assert.ok(Math.abs(r - want.ratios[l]) < 1e-6, `layer ${l}: page ${r} vs forward ${want.ratios[l]}`));
  const c = want.info.config;
  assert.equal(Number(await page.getAttribute('#size-mlp-params', 'data-value')), 3 * c.hidden_size * c.intermediate_size * c.num_hidden_layers);
  assert.equal(await page.textContent('#strip-layers'), `× ${c.num_hidden_layers}`);
  assert.equal(await page.textContent('#strip-mixer'), '注意力', 'the demo model has attention layers only');
  const perToken = await page.$$eval('#layer-chart rect[data-t]', (rs) => rs.map((r) => [Number(r.dataset.mlp), Number(r.dataset.post)]));
  const cl = Number(await page.inputValue('#corr-layer'));
  perToken.forEach(([mlp, post], t) => { assert.ok(Math.abs(mlp - want.mlpOut[cl][t]) < 1e-5); assert.ok(Math.abs(post - want.post[cl][t]) < 1e-5); });
  assert.ok((await page.textContent('#bars-note')).length > 20, 'the chart is explained with the live numbers');
  await page.screenshot({ path: path.join(SHOTS, 'desktop.png'), fullPage: true });
});

test('the header says which path the engine runs and the speed of the last pass', async () => {
  const status = await page.textContent('#engine-status');
  assert.match(status, /^int8 激活 · (单线程|\d 线程) · 上次：\d+ 个 token，\d+ token\/秒$/, status);
  assert.match(await page.getAttribute('#engine-status', 'title'), /int8 activations/);
});

test('clicking the largest and the smallest bar shows their ratios and mixer kinds', async () => {
  const ratios = await pageRatios();
  const big = ratios.indexOf(Math.max(...ratios)), small = ratios.indexOf(Math.min(...ratios));
  await page.click(`#bars .bar[data-layer="${big}"]`);
  assert.match(await page.textContent('#bar-readout'), new RegExp(`${(100 * ratios[big]).toFixed(1)}%`));
  assert.match(await page.textContent('#bar-readout'), /全量注意力|full attention/);
  await page.focus(`#bars .bar[data-layer="${small}"]`); // keyboard path
  await page.keyboard.press('Enter');
  assert.match(await page.textContent('#bar-readout'), new RegExp(`第 ${small} 层.*${(100 * ratios[small]).toFixed(1)}%`));
  // the exercise: the right answer is accepted, a wrong one is not
  await page.fill('#ex-large', (100 * ratios[big]).toFixed(1));
  await page.fill('#ex-small', (100 * ratios[small]).toFixed(1));
  await page.click('#ex-check');
  assert.equal(await page.getAttribute('#ex-feedback', 'class'), 'right');
  await page.fill('#ex-large', (100 * ratios[big] + 7).toFixed(1));
  await page.click('#ex-check');
  assert.equal(await page.getAttribute('#ex-feedback', 'class'), 'wrong');
});

test('how the prediction forms: the logit lens after each mixer and each MLP, and the last row is the real output', async () => {
  const m = await demo();
  const ids = m.tokenizer.encode(DEFAULT_TEXT), T = ids.length, H = m.config.hidden_size, L = m.nLayers, V = m.config.vocab_size;
  const readRows = () => page.$$eval('#lens-table tr[data-layer]', (rs) => rs.map((r) => ({ mid: Number(r.dataset.mid), post: Number(r.dataset.post), ppost: Number(r.dataset.ppost), changed: r.classList.contains('mlp-changed') })));
  const hooks = [];
  for (let l = 0; l < L; l++) hooks.push(`blocks.${l}.hook_resid_mid`, `blocks.${l}.hook_resid_post`);
  const r = m.forward(ids, { logits: 'all', hooks });
  const argmax = (x) => x.reduce((b, v, i) => (v > x[b] ? i : b), 0);
  const lensAt = (t) => Array.from({ length: L }, (_, l) => {
    const at = (name) => argmax(m.unembedDirection(r.hooks[name].subarray(t * H, (t + 1) * H), { normalize: true, k: 1 }).logits);
    return { mid: at(`blocks.${l}.hook_resid_mid`), post: at(`blocks.${l}.hook_resid_post`) };
  });
  // the page starts at the token where the most MLPs change the top guess (the later one on a tie)
  let want = 0, most = -1;
  for (let t = 0; t < T; t++) { const k = lensAt(t).filter((x) => x.mid !== x.post).length; if (k >= most) { most = k; want = t; } }
  const t0 = Number(await page.inputValue('#lens-token'));
  assert.equal(t0, want);
  const rows = await readRows();
  assert.equal(rows.length, L);
  assert.equal(rows.filter((x) => x.changed).length, most);
  lensAt(t0).forEach((x, l) => {
    assert.equal(rows[l].mid, x.mid, `layer ${l} after the mixer`);
    assert.equal(rows[l].post, x.post, `layer ${l} after the MLP`);
    assert.equal(rows[l].changed, x.mid !== x.post);
  });
  // the last row is the model's own prediction, with its probability
  const lg = r.logits.subarray(t0 * V, (t0 + 1) * V), best = argmax(lg);
  let z = 0; for (let i = 0; i < V; i++) z += Math.exp(lg[i] - lg[best]);
  assert.equal(rows.at(-1).post, best);
  assert.ok(Math.abs(rows.at(-1).ppost - 1 / z) < 1e-4);
  // another position
  await page.selectOption('#lens-token', '3');
  await page.waitForFunction(() => /第 3 个|token 3,/.test(document.querySelector('#lens-note').textContent));
  const r3 = m.forward(ids.slice(0, 4), { logits: 'last' });
  assert.equal(Number(await page.getAttribute('#lens-table tr[data-layer]:last-child', 'data-post')), argmax(r3.logits));
});

test('who wrote this prediction: one signed bar per part, the same numbers as decomposePrediction in Node, summing to the logit', async () => {
  const m = await demo();
  const ids = m.tokenizer.encode(DEFAULT_TEXT);
  await page.waitForSelector('#dp-table tr[data-layer]');
  const t0 = Number(await page.inputValue('#lens-token'));
  const token = Number(await page.$eval('#lens-table tr[data-layer]:last-child', (r) => r.dataset.post));
  const want = m.decomposePrediction(ids, { position: t0, token });
  const got = await page.$$eval('#dp-table tr[data-layer]', (rs) => rs.map((r) => ({ mixer: Number(r.dataset.mixer), mlp: Number(r.dataset.mlp) })));
  const emb = Number(await page.$eval('#dp-table tr[data-part="embed"]', (r) => r.dataset.value));
  assert.equal(got.length, m.nLayers);
  const close = (a, b, what) => assert.ok(Math.abs(a - b) <= 1e-5 * Math.max(1, Math.abs(b)), `${what}: page ${a}, Node ${b}`);
  close(emb, want.parts[0].value, 'embedding');
  got.forEach((g, l) => { close(g.mixer, want.parts[1 + 2 * l].value, `layer ${l} mixer`); close(g.mlp, want.parts[2 + 2 * l].value, `layer ${l} MLP`); });
  const sum = emb + got.reduce((a, g) => a + g.mixer + g.mlp, 0);
  assert.ok(Math.abs(sum - want.logit) < 0.01 * Math.max(1, Math.abs(want.logit)), `the parts sum to the logit: ${sum} vs ${want.logit}`);
  const note = await page.textContent('#dp-note');
  assert.match(note, new RegExp(`logit[^0-9]*${want.logit.toFixed(2).replace('.', '\\.')}`));
  // bar lengths follow the values: the longest bar is the largest |value|
  const widths = await page.$$eval('#dp-table .dp-bar', (bs) => bs.map((b) => parseFloat(b.style.width)));
  assert.equal(Math.max(...widths), 50);
});

test('SiLU slider at z = -1 reads -0.269 / 0.000 / -0.269', async () => {
  await page.focus('#silu-z');
  await page.keyboard.press('Home'); // z = -6
  for (let i = 0; i < 50; i++) await page.keyboard.press('ArrowRight');
  assert.equal(await page.textContent('#silu-z-out'), '-1.0');
  assert.equal(await page.textContent('#silu-val'), '-0.269');
  assert.equal(await page.textContent('#relu-val'), '0.000');
  assert.equal(await page.textContent('#diff-val'), '-0.269');
  assert.ok(await page.$('#silu-svg circle'), 'the minimum is marked');
  assert.match(await page.textContent('#silu-svg'), /−0\.278.*−1\.278/);
});

test('budget bars: 8 h², 12 h², 8 h² (break-even), 10.5 h² (~30% more) with honest lengths', async () => {
  const totals = [];
  for (let i = 0; i < 4; i++) {
    const w = await page.$$eval('#budget-track .bseg', (ss) => ss.reduce((a, s) => a + parseFloat(s.style.width), 0));
    totals.push([Number(await page.getAttribute('#budget-track', 'data-total')), w]);
    await page.click('#budget-toggle');
  }
  assert.deepEqual(totals.map(([t]) => Math.round(t * 100) / 100), [8, 12, 8, 10.5]);
  for (const [t, w] of totals) assert.ok(Math.abs(w - (t * 100) / 12) < 0.01, `bar length ${w}% proportional to the parameter count ${t} h²`);
  await page.click('#budget-qwen');
  assert.match(await page.textContent('#budget-total'), /31%/);
  // all four side by side on one scale, the chosen one marked
  assert.deepEqual(await page.$$eval('#budget-bars .btrack', (ts) => ts.map((t) => Number(t.dataset.total))), [8, 12, 8, 10.5]);
  assert.equal(await page.getAttribute('#budget-bars .brow.sel', 'data-key'), 'qwen');
});

test('quiz: right and wrong answers get their feedback', async () => {
  for (const [q, wrong, right] of [['q1', 'a', 'b'], ['q2', 'c', 'a'], ['q3', 'a', 'b'], ['q4', 'a', 'b']]) {
    await page.check(`input[name=${q}][value=${wrong}]`);
    assert.match(await page.getAttribute(`fieldset[data-q="${q[1]}"] .feedback`, 'class'), /wrong/);
    await page.check(`input[name=${q}][value=${right}]`);
    assert.match(await page.getAttribute(`fieldset[data-q="${q[1]}"] .feedback`, 'class'), /right/);
  }
});

test('language switch: Chinese first, English on demand, and back', async () => {
  assert.equal(await page.getAttribute('html', 'lang'), 'zh');
  assert.ok(await page.isVisible('h1 [lang=zh]'));
  await page.click('#lang-toggle');
  assert.equal(await page.getAttribute('html', 'lang'), 'en');
  assert.ok(await page.isVisible('h1 [lang=en]'));
  assert.ok(!(await page.isVisible('h1 [lang=zh]')));
  assert.match(await page.textContent('#bar-readout'), /Layer \d+/);
  await page.screenshot({ path: path.join(SHOTS, 'desktop-en.png'), fullPage: true });
  await page.click('#lang-toggle');
  assert.equal(await page.getAttribute('html', 'lang'), 'zh');
});

test('the live features: the bilingual demo model shows each language its own neurons, as Node finds them, each card counting its top activations', async () => {
  const probeSet = JSON.parse(fs.readFileSync(path.join(SITE, 'probes.json'), 'utf8')).probes;
  const m = await demo();
  const want = findFeatureNeurons(m, probeSet, { top: 2, directions: true, byLang: true });
  const cards = async (lang) => {
    for (const f of ['city', 'negation', 'code']) {
      const b = want.bestByLang[lang].find((x) => x.feature === f);
      const [layer, neuron, auc] = await page.$eval(`#feature-${f}`, (c) => [Number(c.dataset.layer), Number(c.dataset.neuron), Number(c.dataset.auc)]);
      assert.deepEqual([layer, neuron], [b.layer, b.neuron], `${lang} ${f}`);
      assert.ok(Math.abs(auc - b.heldOutAuc) < 1e-9, `${lang} ${f}: ${auc} vs ${b.heldOutAuc}`);
      // one sentence per language, each shaded by that language's neuron, whose numbers are Node's
      for (const g of ['zh', 'en']) {
        const x = want.bestByLang[g].find((y) => y.feature === f);
        assert.ok(await page.$$eval(`#feature-${f} .tokens[data-lang="${g}"] .tok`, (ts) => ts.length) > 3, `${f} ${g} sentence`);
        const meta = await page.textContent(`#feature-${f} .feature-meta[data-lang="${g}"]`);
        assert.ok(meta.includes(x.heldOutAuc.toFixed(3)) && meta.includes(String(x.neuron)), meta);
      }
      // its 8 strongest activations are counted in its own language's probes, as Node counts them
      const top = neuronTopActivations(m, probeSet.filter((p) => p.lang === lang), { layer, neuron, sign: b.sign, k: 8 }).top;
      const inKind = top.filter((x) => x.labels.includes(f)).length;
      assert.equal(Number(await page.getAttribute(`#feature-${f} .feature-top`, 'data-in')), inKind, `${lang} ${f}`);
      assert.equal(/单义|monosemantic/.test(await page.textContent(`#feature-${f} .feature-top`)), inKind < 4, f);
    }
    // the note names the features without a neuron at 0.9 in this language; a direction of the
    // residual stream is shown exactly for those where it does better than the neuron
    const weak = want.bestByLang[lang].filter((b) => b.heldOutAuc < 0.9);
    const note = await page.textContent('#features-note');
    if (weak.length) assert.match(note, /没有干净|no clean single neuron/); else assert.match(note, /找到|Found over/);
    const dirs = weak.filter((b) => want.directions.find((d) => d.feature === b.feature).heldOutAuc > b.heldOutAuc).map((b) => b.feature);
    assert.deepEqual(await page.$$eval('.feature-dir', (ps) => ps.map((p) => p.closest('.card').id.slice(8))), dirs);
  };
  await page.waitForFunction(() => document.body.dataset.featureCards === 'zh');
  await cards('zh');
  const same = await page.textContent('#feature-city .feature-same'), zhCity = want.bestByLang.zh.find((x) => x.feature === 'city'), enCity = want.bestByLang.en.find((x) => x.feature === 'city');
  assert.match(same, zhCity.neuron === enCity.neuron && zhCity.layer === enCity.layer ? /是同一个神经元/ : new RegExp(`不是同一个（中文：第 ${zhCity.layer} 层 #${zhCity.neuron}；英文：第 ${enCity.layer} 层 #${enCity.neuron}）`));
  await page.screenshot({ path: path.join(SHOTS, 'features-bilingual.png'), fullPage: false, clip: await page.$eval('#features', (e) => { const r = e.getBoundingClientRect(); return { x: 0, y: r.top + window.scrollY, width: 1280, height: Math.min(900, r.height) }; }) }).catch(() => {});
  // the page in English: the cards follow the English neurons, then back
  await page.click('#lang-toggle');
  await page.waitForFunction(() => document.body.dataset.featureCards === 'en');
  await cards('en');
  await page.click('#lang-toggle');
  await page.waitForFunction(() => document.body.dataset.featureCards === 'zh');
});

test('any neuron: where it fires most in the probe sentences, as neuronTopActivations gives it in Node', async () => {
  const probes = JSON.parse(fs.readFileSync(path.join(SITE, 'probes.json'), 'utf8')).probes;
  const m = await demo();
  const check = async () => {
    const l = Number(await page.inputValue('#fires-layer')), j = Number(await page.inputValue('#fires-neuron')), sign = Number(await page.inputValue('#fires-sign'));
    const want = neuronTopActivations(m, probes, { layer: l, neuron: j, sign, k: 8, window: 6 });
    const got = await page.$$eval('#fires-top li', (ls) => ls.map((li) => [Number(li.dataset.text), Number(li.dataset.token), Number(li.dataset.act), li.querySelector('mark').textContent]));
    assert.deepEqual(got, want.top.map((x) => [x.text, x.token, x.activation, x.piece]));
    // the histogram of every probe token's activation, as in Node, summing to the tokens scanned
    const counts = await page.$$eval('#fires-hist rect.hbar', (rs) => rs.map((r) => Number(r.dataset.count)));
    assert.deepEqual(counts, want.histogram.counts);
    assert.equal(counts.reduce((x, y) => x + y, 0), want.tokens);
    return want;
  };
  // at first: the best city neuron, in its own direction, so its top tokens are inside city names
  const city = Number(await page.getAttribute('#feature-city', 'data-neuron')), cityLayer = Number(await page.getAttribute('#feature-city', 'data-layer'));
  assert.equal(Number(await page.inputValue('#fires-neuron')), city);
  assert.equal(Number(await page.inputValue('#fires-layer')), cityLayer);
  const citySign = Number(await page.inputValue('#fires-sign'));
  assert.equal(citySign, (await page.textContent('#feature-city .feature-meta')).includes('负向') ? -1 : 1);
  const first = await check();
  assert.ok(first.top.some((x) => x.labels.includes('city')), JSON.stringify(first.top.map((x) => x.piece)));
  assert.match(await page.textContent('#fires-top-note'), new RegExp(`${first.tokens}`));
  // what it writes as it fires: its column's push (turned round when it fires negatively)
  const out = m.neuronOutput(cityLayer, city, { k: 40 });
  const [pushedUp, pushedDown] = citySign > 0 ? [out.promoted, out.suppressed] : [out.suppressed, out.promoted];
  const text6 = (ts) => ts.filter((t) => { const s = m.tokenizer.decode([t.id]); return s && !/[\uFFFD\u0000-\u0008\u000B-\u001F\u007F]/.test(s); }).slice(0, 6).map((t) => t.id);
  assert.deepEqual(await page.$$eval('#fires-up li', (ls) => ls.map((li) => Number(li.dataset.id))), text6(pushedUp));
  assert.deepEqual(await page.$$eval('#fires-down li', (ls) => ls.map((li) => Number(li.dataset.id))), text6(pushedDown));
  assert.equal(await page.$$eval('#fires-down li', (ls) => ls.length), 6);
  // the most active neurons at a token of the card's text: the engine's top-3 per layer, as chips
  const fidsText = await page.inputValue('#fires-text'), fids = m.tokenizer.encode(fidsText);
  const st = m.forward(fids, { topK: 3, logits: 'none' }).stats, tok = Number(await page.inputValue('#fires-tok'));
  const chips = await page.$$eval('#fires-neighbours button', (bs) => bs.map((b) => [Number(b.dataset.layer), Number(b.dataset.neuron), b.getAttribute('aria-pressed')]));
  assert.equal(chips.length, 3 * m.nLayers);
  chips.forEach(([l, j], i) => assert.equal(j, st.top_idx[l][tok * 3 + (i % 3)]));
  // the card's own neuron is marked where it is among them (the committed city neuron, small in
  // size, is not), and no other
  chips.forEach(([l, j, pressed]) => assert.equal(pressed === 'true', l === cityLayer && j === city, `chip ${l}/${j}`));
  // a chip loads its neuron
  const [cl, cj] = chips.find(([l]) => l === 3);
  await page.click(`#fires-neighbours button[data-layer="3"][data-neuron="${cj}"]`);
  await page.waitForFunction((j) => new RegExp(`(neuron |神经元 )${j}\\b`).test(document.querySelector('#fires-top-note').textContent), cj);
  assert.equal(Number(await page.inputValue('#fires-layer')), cl);
  await check();
  // "look closer" on the negation card puts its neuron into the card
  const negNeuron = Number(await page.getAttribute('#feature-negation', 'data-neuron'));
  await page.click('#feature-negation .feature-inspect');
  await page.waitForFunction((j) => new RegExp(`(neuron |神经元 )${j}\\b`).test(document.querySelector('#fires-top-note').textContent), negNeuron);
  assert.equal(Number(await page.inputValue('#fires-neuron')), negNeuron);
  await check();
  // another neuron, the other direction
  await page.selectOption('#fires-layer', '3');
  await page.fill('#fires-neuron', '17');
  await page.selectOption('#fires-sign', '1');
  await page.click('#fires-run');
  await page.waitForFunction(() => /17/.test(document.querySelector('#fires-top-note').textContent));
  await check();
});

test('a sentence of your own re-runs everything; switching a neuron off changes the prediction', async () => {
  const before = await pageRatios();
  const runs = Number(await page.evaluate(() => document.body.dataset.runs));
  const text = 'Nobody saw the cat near the museum in Berlin.';
  await page.fill('#try-text', text);
  await page.click('#try-run');
  await page.waitForFunction((n) => Number(document.body.dataset.runs) > n, runs);
  const after = await pageRatios();
  assert.notDeepEqual(after, before);
  const want = await expected(text);
  after.forEach((r, l) => assert.ok(Math.abs(r - want.ratios[l]) < 1e-6));
  await page.click('#ko-btn');
  await page.waitForFunction(() => document.querySelectorAll('#ko-after li').length === 5);
  const kl = Number(await page.getAttribute('#ko-kl', 'data-kl'));
  assert.ok(kl > 0, 'the prediction moved');
  // "where it mattered": the KL at every position, checked against the same knock-out in Node
  const l = Number(await page.inputValue('#ko-layer')), j = Number(await page.inputValue('#ko-neuron'));
  const one = await knockoutKl(text, l, [j]);
  const shown = JSON.parse(await page.getAttribute('#ko-tokens', 'data-kl'));
  assert.equal(shown.length, one.length);
  shown.forEach((v, t) => assert.ok(Math.abs(v - one[t]) <= 1e-4 + 1e-3 * one[t], `position ${t}: page ${v} vs Node ${one[t]}`));
  assert.ok(Math.abs(kl - one.at(-1)) <= 1e-4 + 1e-3 * one.at(-1));
  const peak = one.indexOf(Math.max(...one));
  assert.match(await page.textContent('#ko-peak'), new RegExp(`token ${peak}\\)|第 ${peak} 个`));
  assert.equal(await page.$$eval('#ko-tokens .tok', (ts) => ts.length), one.length);
  // knock-outs that teach: each "after" token's change from before, the sentence's own next
  // token's probability before → after on a tapped token, and the KL in words
  const np = await nextProbs(text, l, [j]);
  const rows = await page.$$eval('#ko-after li', (ls) => ls.map((li) => [Number(li.dataset.id), Number(li.dataset.p), Number(li.dataset.before), li.textContent]));
  for (const [id, p, b, txt] of rows) {
    assert.ok(Math.abs(p - np.lastAfter[id]) < 1e-4 && Math.abs(b - np.lastBefore[id]) < 1e-4, `token ${id}: ${p} / ${b}`);
    assert.match(txt, /\([+−]\d+\.\d\)$/, txt);
  }
  assert.match(await page.textContent('#ko-kl'), /nats(: |：)(no visible change|a slight nudge|a noticeable but modest change|a large change|almost a different prediction|几乎看不出变化|轻轻推了一下|看得出来、但不大的变化|很大的变化|几乎换了一个预测)(\. The token whose probability moved most is |。变化最大的单个 token 是)/);
  await page.click('#ko-tokens .tok:nth-child(2)');
  await page.waitForFunction(() => document.querySelector('#ko-read').textContent.length > 0);
  const read = await page.textContent('#ko-read');
  const pct = (x) => `${(100 * x).toFixed(1)}%`;
  assert.ok(read.includes(`${pct(np.next[1].before)} → ${pct(np.next[1].after)}`), `${read} vs ${JSON.stringify(np.next[1])}`);
  // suggested targets: each candidate switched off for real, ranked by KL; one click runs it
  await page.click('#ko-suggest');
  await page.waitForFunction(() => document.querySelectorAll('#ko-suggest-list button').length === 5);
  const sug = await page.$$eval('#ko-suggest-list button', (bs) => bs.map((b) => [Number(b.dataset.layer), Number(b.dataset.neuron), Number(b.dataset.kl)]));
  for (let i = 1; i < sug.length; i++) assert.ok(sug[i][2] <= sug[i - 1][2]);
  const top = (await knockoutKl(text, sug[0][0], [sug[0][1]])).at(-1);
  assert.ok(Math.abs(sug[0][2] - top) <= 1e-4 + 1e-3 * top, `suggested ${sug[0]} vs Node ${top}`);
  assert.ok(sug[0][2] >= kl - 1e-6, 'the default neuron is among the candidates, so the best suggestion moves the prediction at least as much');
  await page.click('#ko-suggest-list button');
  await page.waitForFunction((s) => new RegExp(`neuron ${s[1]} of layer ${s[0]}|第 ${s[0]} 层的神经元 ${s[1]}`).test(document.querySelector('#ko-kl').textContent), sug[0]);
  // the whole MLP of the layer
  await page.check('#ko-whole');
  assert.ok(await page.isDisabled('#ko-neuron'));
  await page.click('#ko-btn');
  await page.waitForFunction(() => /整个 MLP|whole MLP/.test(document.querySelector('#ko-kl').textContent));
  const whole = await knockoutKl(text, l, Array.from({ length: (await expected(text)).info.config.intermediate_size }, (_, i) => i));
  const shownWhole = JSON.parse(await page.getAttribute('#ko-tokens', 'data-kl'));
  shownWhole.forEach((v, t) => assert.ok(Math.abs(v - whole[t]) <= 1e-4 + 1e-3 * whole[t], `whole MLP, position ${t}: page ${v} vs Node ${whole[t]}`));
  assert.ok(whole.reduce((a, b) => a + b) > one.reduce((a, b) => a + b), 'the whole MLP matters more than one of its neurons');
  await page.uncheck('#ko-whole');
  // from the any-neuron card: its neuron goes into the knock-out
  await page.selectOption('#fires-layer', '1');
  await page.fill('#fires-neuron', '166');
  await page.click('#fires-ko');
  await page.waitForFunction(() => /neuron 166 of layer 1|第 1 层的神经元 166/.test(document.querySelector('#ko-kl').textContent));
  const k166 = await knockoutKl(text, 1, [166]);
  assert.ok(Math.abs(Number(await page.getAttribute('#ko-kl', 'data-kl')) - k166.at(-1)) <= 1e-4 + 1e-3 * k166.at(-1));
});

/** with the neurons switched off: the last position's probabilities before and after, and the
 *  sentence's own next token's probability at every position */
async function nextProbs(text, layer, neurons) {
  const m = await demo();
  const ids = m.tokenizer.encode(text), T = ids.length;
  const a = m.forward(ids, { stats: false, logits: 'all' }).logits;
  const b = m.forward(ids, { stats: false, logits: 'all', interventions: [{ layer, hook: 'mlp.hook_post', neurons, scale: 0 }] }).logits;
  const V = a.length / T;
  const softmax = (x) => { const mx = Math.max(...x); const e = Array.from(x, (v) => Math.exp(v - mx)); const z = e.reduce((s, v) => s + v, 0); return e.map((v) => v / z); };
  const next = [];
  for (let t = 0; t + 1 < T; t++) next.push({ before: softmax(a.subarray(t * V, (t + 1) * V))[ids[t + 1]], after: softmax(b.subarray(t * V, (t + 1) * V))[ids[t + 1]] });
  return { next, lastBefore: softmax(a.subarray((T - 1) * V)), lastAfter: softmax(b.subarray((T - 1) * V)) };
}

/** KL(before‖after) of the next-token distribution at every position, in float64, in Node */
async function knockoutKl(text, layer, neurons) {
  const m = await demo();
  const ids = m.tokenizer.encode(text), T = ids.length;
  const a = m.forward(ids, { stats: false, logits: 'all' }).logits;
  const b = m.forward(ids, { stats: false, logits: 'all', interventions: [{ layer, hook: 'mlp.hook_post', neurons, scale: 0 }] }).logits;
  const V = a.length / T, out = [];
  const logSoftmax = (x) => { const mx = Math.max(...x); const lz = Math.log(x.reduce((s, v) => s + Math.exp(v - mx), 0)); return Array.from(x, (v) => v - mx - lz); };
  for (let t = 0; t < T; t++) {
    const p = logSoftmax(a.subarray(t * V, (t + 1) * V)), q = logSoftmax(b.subarray(t * V, (t + 1) * V));
    out.push(p.reduce((s, lp, i) => s + Math.exp(lp) * (lp - q[i]), 0));
  }
  return out;
}

test('the all-layers bars stand on a 0-100% axis with a percentage on each, and the words under them are computed from the same numbers', async () => {
  const bars = await page.$$eval('#bars .bar', (bs) => bs.map((b) => ({ r: Number(b.dataset.ratio), h: parseFloat(b.style.height), label: b.querySelector('b').textContent, aria: b.querySelector('.sr').textContent })));
  assert.ok(bars.length > 1);
  for (const b of bars) {
    assert.ok(Math.abs(b.h - 100 * Math.min(1, b.r)) < 0.06, `height ${b.h}% for ratio ${b.r}`);
    assert.equal(b.label, `${(100 * b.r).toFixed(0)}%`);
    assert.match(b.aria, /第 \d+ 层：|layer \d+:/);
  }
  assert.deepEqual(await page.$$eval('#bars .grid span', (g) => g.map((x) => x.textContent)), ['100%', '75%', '50%', '25%']);
  const rs = bars.map((b) => b.r), sorted = [...rs].sort((a, b) => a - b), med = sorted[Math.floor((rs.length - 1) / 2)];
  const note = await page.textContent('#bars-note');
  assert.ok(note.includes(`${(100 * med).toFixed(0)}%`), `the note gives the median: ${note}`);
  const over = rs.filter((r) => r > 0.5).length;
  assert.match(note, new RegExp(`${over} 层超过一半|${over} over half`));
  if (rs[0] > 0.5) assert.match(note, /第 0 层与众不同|Layer 0 is different/);
  // the quiz's feedback quotes the same model instead of a rule of thumb
  await page.check('#quiz input[name=q2][value=a]');
  assert.ok((await page.textContent('#quiz fieldset:has(input[name=q2]) .feedback')).includes(`${(100 * med).toFixed(0)}%`));
  // the per-token chart has a readout
  await page.click('#layer-chart rect.hit[data-hit="2"]');
  assert.match(await page.textContent('#layer-readout'), /token 2/);
});

test('the neuron diagram draws gate and up as two parallel branches meeting at the product', async () => {
  const cols = await page.$$eval('#neuron-svg circle', (cs) => cs.map((c) => [c.getAttribute('fill'), Number(c.getAttribute('cx'))]));
  const xs = (fill) => [...new Set(cols.filter(([f]) => f === fill).map(([, x]) => x))];
  assert.deepEqual(xs('var(--gate)'), xs('var(--up)'), 'gate and up at the same depth');
  assert.ok(xs('var(--mlp)')[0] > xs('var(--gate)')[0]);
  // the legend colours are the branches' own (a CSS rule used to paint every label black)
  const fill = await page.$eval('#neuron-svg text[fill="var(--gate)"]', (t) => getComputedStyle(t).fill);
  assert.equal(fill, 'rgb(217, 130, 43)');
});

test('a Chinese sentence with characters outside the demo vocabulary: no "\uFFFD" anywhere, whole characters, and a note saying so', async () => {
  const runs = Number(await page.evaluate(() => document.body.dataset.runs));
  await page.fill('#try-text', '我从北京飞到东京，饭菜一点也不难吃。');
  await page.click('#try-run');
  await page.waitForFunction((n) => Number(document.body.dataset.runs) > n, runs);
  for (const sel of ['#layer-chart', '#walk-token', '#lens-token', '#lens-table', '#ko-before', '#try-status'])
    assert.ok(!(await page.textContent(sel)).includes('\uFFFD'), `${sel} has no U+FFFD`);
  assert.match(await page.textContent('#layer-chart'), /北/);
  // 难吃 never occurs in the corpus: its characters are byte tokens, and the note says why
  assert.match(await page.textContent('#try-status'), /词表里没有这些字符|vocabulary has no token for those characters/);
  await page.screenshot({ path: path.join(SHOTS, 'chinese-input.png'), fullPage: false });
  const back = Number(await page.evaluate(() => document.body.dataset.runs));
  await page.fill('#try-text', DEFAULT_TEXT);
  await page.click('#try-run');
  await page.waitForFunction((n) => Number(document.body.dataset.runs) > n, back);
});

test('neuron numbers out of range get a visible message, never an uncaught error or the previous neuron\'s data', async () => {
  const before = errors.length;
  await page.fill('#ko-neuron', '9999');
  await page.click('#ko-btn');
  assert.match(await page.textContent('#ko-kl'), /0 到 \d+ 之间|between 0 and \d+/);
  assert.equal(await page.$$eval('#ko-after li', (l) => l.length), 0);
  await page.fill('#fires-neuron', '999');
  await page.click('#fires-run');
  assert.match(await page.textContent('#fires-top-note'), /0 到 \d+ 之间|between 0 and \d+/);
  assert.equal(await page.textContent('#fires-out'), '');
  await page.fill('#walk-feature', '5000');
  await page.dispatchEvent('#walk-feature', 'change');
  assert.match(await page.textContent('#walk-error'), /0 到 \d+ 之间|between 0 and \d+/);
  assert.equal(await page.textContent('#walk-out'), '–');
  assert.equal(errors.length, before, errors.slice(before).join('\n'));
  // valid values clear the messages
  await page.fill('#walk-feature', '3');
  await page.dispatchEvent('#walk-feature', 'change');
  await page.waitForFunction(() => document.querySelector('#walk-out').textContent !== '–');
  assert.equal(await page.textContent('#walk-error'), '');
  await page.fill('#ko-neuron', '3');
  await page.click('#ko-btn');
  await page.waitForFunction(() => document.querySelectorAll('#ko-after li').length === 5);
  await page.fill('#fires-neuron', '3');
});

test('the second visit shows the feature cards from the cache, without searching again', async () => {
  const p = await context.newPage();
  try {
    await p.goto(server.url);
    await p.waitForFunction(() => document.querySelector('#feature-city')?.dataset.auc, null, { timeout: 60000 });
    // the structural fact behind "at once": the cards come from the cache and no search ran
    // (how long either visit takes is measured by bench/page.mjs, not here)
    assert.equal(await p.evaluate(() => document.body.dataset.featuresFrom), 'cache');
    assert.equal(await p.evaluate(() => document.body.dataset.featureSearches ?? '0'), '0', 'the second visit ran no feature search');
  } finally { await p.close(); }
});

test('accessibility: axe-core finds no serious or critical violations in either language, at desktop and phone sizes', async () => {
  await page.addScriptTag({ path: path.join(ROOT, 'node_modules/axe-core/axe.min.js') });
  const lang0 = await page.getAttribute('html', 'lang'), found = [];
  for (const size of [{ width: 1280, height: 900 }, { width: 390, height: 844 }]) {
    await page.setViewportSize(size);
    for (let k = 0; k < 2; k++) {
      const r = await page.evaluate(() => axe.run(document, { resultTypes: ['violations'] }));
      const lang = await page.getAttribute('html', 'lang');
      for (const v of r.violations) if (v.impact === 'serious' || v.impact === 'critical') found.push(`${size.width}px ${lang}: ${v.id} (${v.impact}) at ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(' | ')}`);
      await page.click('#lang-toggle');
    }
  }
  await page.setViewportSize({ width: 1280, height: 900 });
  assert.equal(await page.getAttribute('html', 'lang'), lang0);
  assert.deepEqual(found, []);
});

test('the page state (model, language, sentence, layer, neuron) round-trips through the URL', async () => {
  const runs = Number(await page.evaluate(() => document.body.dataset.runs));
  const text = 'Mei sailed from Oslo to Lima.';
  await page.fill('#try-text', text);
  await page.click('#try-run');
  await page.waitForFunction((n) => Number(document.body.dataset.runs) > n, runs);
  await page.selectOption('#corr-layer', '2');
  await page.selectOption('#fires-layer', '4');
  await page.fill('#fires-neuron', '21');
  await page.selectOption('#fires-sign', '-1');
  await page.click('#fires-run');
  await page.waitForFunction(() => /neuron=4%3A21%3A-1/.test(location.search));
  const url = page.url();
  const p = await context.newPage();
  try {
    await p.goto(url);
    await p.waitForFunction(() => document.body.dataset.ready === '1', null, { timeout: 120000 });
    await p.waitForFunction(() => /(neuron |神经元 )21\b/.test(document.querySelector('#fires-top-note').textContent));
    assert.equal(await p.inputValue('#try-text'), text);
    assert.equal(await p.inputValue('#corr-layer'), '2');
    assert.deepEqual([await p.inputValue('#fires-layer'), await p.inputValue('#fires-neuron'), await p.inputValue('#fires-sign')], ['4', '21', '-1']);
    assert.equal(await p.getAttribute('html', 'lang'), await page.getAttribute('html', 'lang'));
    assert.equal(await p.evaluate(() => document.body.dataset.model), 'demo');
    // the same numbers as the page it came from
    assert.deepEqual(await p.$$eval('#bars .bar', (bs) => bs.map((b) => b.dataset.ratio)), await page.$$eval('#bars .bar', (bs) => bs.map((b) => b.dataset.ratio)));
  } finally { await p.close(); }
  const back = Number(await page.evaluate(() => document.body.dataset.runs));
  await page.fill('#try-text', DEFAULT_TEXT);
  await page.click('#try-run');
  await page.waitForFunction((n) => Number(document.body.dataset.runs) > n, back);
  await page.click('#ko-btn'); // the language-switch test below reads the knock-out's line
  await page.waitForFunction(() => document.querySelectorAll('#ko-after li').length === 5);
});

test('a language switch re-renders every live line: no Chinese left on screen in English', async () => {
  // after the runs, the knock-out and the feature search above, all of which wrote text in Chinese;
  // an English sentence, so that token pieces quoted in the live lines are not Chinese themselves
  assert.equal(await page.getAttribute('html', 'lang'), 'zh');
  const runs = Number(await page.evaluate(() => document.body.dataset.runs));
  await page.fill('#try-text', 'I flew from Paris to Tokyo last week. The food was not bad at all.');
  await page.click('#try-run');
  await page.waitForFunction((n) => Number(document.body.dataset.runs) > n, runs);
  await page.click('#ko-btn');
  await page.waitForFunction(() => document.querySelectorAll('#ko-after li').length === 5);
  await page.click('#lang-toggle');
  const left = await page.evaluate(() => {
    const out = [];
    const w = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let n = w.nextNode(); n; n = w.nextNode()) {
      const el = n.parentElement;
      // token pieces (the shaded sentences, <code> pieces in lists) are data, not the page's words
      if (!el || !el.offsetParent || el.id === 'lang-toggle' || el.closest('.tokens, textarea, #fires-out, code')) continue;
      if (/[\u4e00-\u9fff]/.test(n.textContent)) out.push(`${el.id || el.tagName}: ${n.textContent.trim().slice(0, 60)}`);
    }
    return out;
  });
  assert.deepEqual(left, []);
  assert.match(await page.textContent('#ko-kl'), /switched off/);
  assert.match(await page.textContent('#build-info'), /SIMD128|scalar|thread/);
  await page.click('#lang-toggle');
  assert.match(await page.textContent('#ko-kl'), /关掉/);
  const back = Number(await page.evaluate(() => document.body.dataset.runs));
  await page.fill('#try-text', DEFAULT_TEXT);
  await page.click('#try-run');
  await page.waitForFunction((n) => Number(document.body.dataset.runs) > n, back);
});

test('switching to the Qwen3.5-shaped model: strip, bars and layer pickers follow its hybrid stack', async () => {
  const p = await context.newPage();
  await p.goto(server.url);
  await p.waitForFunction(() => document.body.dataset.ready === '1', null, { timeout: 120000 });
  await p.selectOption('#model-select', 'qwen35-synth');
  await p.waitForFunction(() => document.body.dataset.model === 'qwen35-synth' && document.body.dataset.ready === '1', null, { timeout: 120000 });
  const m = await loadModel(path.join(SITE, 'weights/qwen35-synth'));
  const mixers = m.info().mixers, nLin = mixers.filter((x) => x === 'linear').length;
  m.dispose();
  assert.ok(nLin > 0 && nLin < mixers.length);
  assert.equal(await p.textContent('#strip-mixer'), `混合器（${mixers.length - nLin} 层注意力 / ${nLin} 层 DeltaNet）`);
  assert.deepEqual(await p.$$eval('#bars .bar', (bs) => bs.map((b) => b.dataset.mixer)), mixers);
  assert.equal(await p.$$eval('#ko-layer option', (os) => os.filter((o) => o.textContent.includes('DeltaNet')).length), nLin);
  assert.match(await p.textContent('#features-note'), /随机|random/, 'random weights are called random');
  await p.close();
});

test('a weight set that cannot be loaded: a typed error naming it, and the page goes back to the model it had', async () => {
  const p = await context.newPage();
  await p.goto(server.url);
  await p.waitForFunction(() => document.body.dataset.ready === '1', null, { timeout: 120000 });
  await p.selectOption('#model-select', 'url');
  await p.fill('#model-url', 'weights/no-such-model/');
  await p.click('#model-load');
  await p.waitForFunction(() => document.body.dataset.loadFailed === 'url' && document.body.dataset.ready === '1', null, { timeout: 120000 });
  const msg = await p.textContent('#load-error');
  assert.match(msg, /no-such-model/, msg);
  assert.match(msg, /E_[A-Z_]+/, msg);
  assert.match(msg, /已换回/, msg);
  assert.equal(await p.evaluate(() => document.body.dataset.model), 'demo');
  assert.equal(await p.inputValue('#model-select'), 'demo');
  const runs = Number(await p.evaluate(() => document.body.dataset.runs));
  await p.fill('#try-text', 'We visited Rome and Oslo last year.');
  await p.click('#try-run');
  await p.waitForFunction((n) => Number(document.body.dataset.runs) > n, runs);
  await p.click('#lang-toggle');
  assert.match(await p.textContent('#load-error'), /Loading .*no-such-model.* failed .*Back to/);
  await p.click('#lang-toggle');
  await p.close();
});

test('phone-sized viewport', async () => {
  const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2 });
  const p = await phone.newPage();
  await p.goto(server.url);
  await p.waitForFunction(() => document.body.dataset.ready === '1', null, { timeout: 120000 });
  const overflow = await p.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  assert.ok(overflow <= 1, `no horizontal scrolling (${overflow}px)`);
  // chart text as drawn on screen: font size x the SVG's scale
  const smallest = await p.$$eval('svg text', (ts) => Math.min(...ts.filter((t) => t.getClientRects().length).map((t) => {
    const svg = t.ownerSVGElement, scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
    return parseFloat(getComputedStyle(t).fontSize) * scale;
  })));
  assert.ok(smallest >= 11, `smallest chart text ${smallest.toFixed(1)} px`);
  console.log(`# phone: smallest chart text ${smallest.toFixed(1)} px`);
  const header = await p.$eval('header.top', (h) => h.getBoundingClientRect().height);
  assert.ok(header <= 110, `header ${header} px tall`);
  console.log(`# phone: header ${header.toFixed(0)} px tall`);
  await p.screenshot({ path: path.join(SHOTS, 'phone.png'), fullPage: true });
  await phone.close();
});

test('offline: a reload with the network blocked still works (service worker + Cache API)', async () => {
  const want = await pageRatios();
  await page.evaluate(() => navigator.serviceWorker.ready);
  await context.setOffline(true);
  await page.reload();
  await page.waitForFunction(() => document.body.dataset.ready, null, { timeout: 120000 });
  assert.equal(await page.evaluate(() => document.body.dataset.ready), '1', await page.textContent('#load-error'));
  assert.match(await page.textContent('#progress-text'), /缓存|cache/);
  const got = await pageRatios();
  assert.equal(got.length, want.length);
  await context.setOffline(false);
});

test('the weight cache in the browser: listCachedModels names the weight sets the page loaded, deleteCachedModel removes one', async () => {
  const r = await page.evaluate(async () => {
    const m = await import('./js/index.js'), man = await (await fetch('weights/demo/manifest.json')).json();
    const demoUrl = new URL('weights/demo/', location.href).href;
    const before = await m.listCachedModels();
    const demo = before.find((s) => s.url === demoUrl);
    const shard = demo?.files.find((f) => f.file === man.shards[0].file);
    // remove the other model the page loaded (the demo stays for the rest of the suite)
    const other = before.find((s) => s.url !== demoUrl);
    const removed = other ? await m.deleteCachedModel(other.url) : -1;
    const after = await m.listCachedModels();
    return { sets: before.length, shard, want: man.shards[0], removed, otherFiles: other?.files.length, afterHasOther: after.some((s) => s.url === other?.url), afterHasDemo: after.some((s) => s.url === demoUrl) };
  });
  assert.ok(r.sets >= 2, `the demo and the Qwen3.5-shaped model: ${r.sets}`);
  assert.deepEqual(r.shard, { file: r.want.file, sha256: r.want.sha256, bytes: r.want.bytes });
  assert.equal(r.removed, r.otherFiles);
  assert.equal(r.afterHasOther, false);
  assert.equal(r.afterHasDemo, true);
});

test('opened from disk (file://): the page says to serve it over HTTP, in both languages', async () => {
  const ctx = await browser.newContext();
  try {
    const p = await ctx.newPage();
    await p.goto('file://' + path.join(SITE, 'index.html'));
    const zh = await p.textContent('#load-error');
    assert.match(zh, /HTTP/);
    assert.match(zh, /python3 -m http\.server 8080/);
    assert.match(zh, /浏览器不允许/);
    assert.equal(await p.evaluate(() => getComputedStyle(document.querySelector('#load-error span[lang="zh"]')).display === 'none'), false, 'Chinese shown first');
  } finally { await ctx.close(); }
});

test('no console errors', () => {
  assert.deepEqual(errors.filter((e) => !/ERR_INTERNET_DISCONNECTED|net::ERR/.test(e)), []);
});

test('Qwen3.5-0.8B (Hugging Face) in the picker: a note with the download size first, then the mimicked hub model loads in the Worker and the sizes table shows its numbers', async () => {
  // a synthetic checkpoint with the real Qwen3.5 layout, served as Qwen/Qwen3.5-0.8B by a loopback hub
  const { writeHfCheckpoint } = await import('./hf-writer.js');
  const { startHub } = await import('./hub-server.js');
  const { execFileSync } = await import('node:child_process');
  const { CLI, tmpDir } = await import('./helpers.js');
  const syn = tmpDir('page-hub-syn'), hf = tmpDir('page-hub-hf');
  execFileSync(process.execPath, [CLI, 'synth', '--config', path.join(ROOT, 'tests/configs/qwen35-b.json'), '--seed', '4', '--out', syn], { stdio: 'pipe' });
  writeHfCheckpoint(syn, hf, { dtype: 'BF16', shards: 3, tokenizer: true, tokenizerMinVocab: 300 });
  const hub = await startHub({ 'Qwen/Qwen3.5-0.8B': hf });
  const p = await context.newPage();
  try {
    await p.goto(`${server.url}?hub=${encodeURIComponent(hub.url)}`);
    await p.waitForFunction(() => document.body.dataset.ready === '1', null, { timeout: 120000 });
    const before = hub.log.length;
    await p.selectOption('#model-select', 'hf-qwen3.5-0.8b');
    await p.waitForSelector('#hub-note:not([hidden])');
    assert.match(await p.textContent('#hub-note-text'), /1\.6 GB.*BF16.*q8.*缓存/);
    assert.equal(hub.log.length, before, 'nothing is downloaded before the reader agrees');
    await p.click('#hub-go');
    await p.waitForFunction(() => document.body.dataset.model === 'hf-qwen3.5-0.8b' && document.body.dataset.ready === '1', null, { timeout: 120000 });
    assert.ok(hub.log.some((l) => l.file?.endsWith('.safetensors') && l.range), 'the weights came from the hub with Range requests');
    const cfg = JSON.parse(fs.readFileSync(path.join(hf, 'config.json'), 'utf8')).text_config;
    assert.equal(await p.textContent('#size-inter'), cfg.intermediate_size.toLocaleString('en-US'));
    assert.equal(await p.textContent('#size-layers'), String(cfg.num_hidden_layers));
    assert.equal(await p.$$eval('#bars .bar', (bs) => bs.length), cfg.num_hidden_layers);
    await p.screenshot({ path: path.join(SHOTS, 'hub-model.png') });
    // the second visit: straight from this browser's cache, no note, no weight request
    const n = hub.log.length;
    await p.goto(`${server.url}?hub=${encodeURIComponent(hub.url)}&model=hf-qwen3.5-0.8b`);
    await p.waitForFunction(() => document.body.dataset.model === 'hf-qwen3.5-0.8b' && document.body.dataset.ready === '1', null, { timeout: 120000 });
    assert.ok(!hub.log.slice(n).some((l) => l.file?.endsWith('.safetensors')), 'no weight bytes fetched again');
  } finally { await p.close(); await hub.close(); }
});

test('attention mixes, the MLP does not: one head\'s pattern on the sentence, rows as in Node, and the share read from other tokens', async () => {
  await page.waitForFunction(() => document.body.dataset.ready === '1');
  const m = await demo();
  const ids = m.tokenizer.encode(await page.inputValue('#try-text')), n = ids.length;
  await page.selectOption('#attn-layer', '3');
  await page.selectOption('#attn-head', '1');
  await page.waitForFunction(() => document.getElementById('attn-chart').textContent.includes('3') && document.getElementById('attn-readout').dataset.other);
  await page.waitForFunction(() => /(layer|第) 3/.test(document.getElementById('attn-chart').textContent) && /head 1|头 1/.test(document.getElementById('attn-chart').textContent));
  const name = 'blocks.3.attn.hook_pattern';
  const P = m.forward(ids, { hooks: [name], stats: false, logits: 'none' }).hooks[name].subarray(n * n, 2 * n * n);
  const cells = await page.$$eval('#attn-chart rect.cell', (rs) => rs.map((r) => [Number(r.dataset.q), Number(r.dataset.k), Number(r.dataset.w)]));
  assert.equal(cells.length, (n * (n + 1)) / 2, 'one cell per query and earlier-or-same key');
  for (const [q, k, w] of cells) assert.ok(Math.abs(w - P[q * n + k]) < 1e-6, `cell ${q},${k}`);
  let other = 0;
  for (let q = 0; q < n; q++) other += 1 - P[q * n + q];
  assert.ok(Math.abs(Number(await page.getAttribute('#attn-readout', 'data-other')) - other / n) < 1e-6);
  assert.match(await page.textContent('#attn-readout'), new RegExp(`${(100 * other / n).toFixed(1)}%.*MLP.*0%`));
});

test('push a feature neuron: the continuation with and without the push, as generate() with the same intervention gives it in Node', async () => {
  await page.waitForFunction(() => document.body.dataset.ready === '1' && !document.getElementById('steer-btn').disabled);
  const [l, j, sign] = (await page.inputValue('#steer-feature')).split(':').map(Number);
  await page.fill('#steer-strength', '10');
  await page.click('#steer-btn');
  await page.waitForFunction(() => document.getElementById('steer-after').textContent.length > 0, null, { timeout: 60000 });
  const m = await demo();
  const ids = m.tokenizer.encode(await page.inputValue('#try-text'));
  const gen = async (iv) => { let s = ''; for await (const t of m.generate(ids, { maxTokens: 16, stop: [], ...(iv ? { interventions: [iv] } : {}) })) s += t.text; return s; };
  assert.equal(await page.textContent('#steer-before'), await gen(null));
  assert.equal(await page.textContent('#steer-after'), await gen({ hook: `blocks.${l}.mlp.hook_post`, neurons: [j], op: 'add', value: 10 * sign }));
  assert.match(await page.textContent('#steer-note'), new RegExp(`#${j}.*${l}|${l}.*#${j}`));
});

test('a contents rail built from the sections (one link each, both languages), and the neuron diagram lit with the live walk\'s numbers', async () => {
  await page.waitForFunction(() => document.body.dataset.ready === '1');
  const sections = await page.$$eval('main > section[id]', (ss) => ss.filter((s) => s.querySelector('h1, h2')).map((s) => s.id));
  const links = await page.$$eval('#toc a', (as) => as.map((a) => a.getAttribute('href')));
  assert.deepEqual(links, sections.map((id) => `#${id}`));
  assert.ok(sections.length >= 10);
  await page.click('#toc a[href="#try"]');
  await page.waitForFunction(() => document.querySelector('#toc a[aria-current="true"]')?.getAttribute('href') === '#try', null, { timeout: 5000 });
  const top = await page.$eval('#try', (el) => el.getBoundingClientRect().top);
  const header = await page.$eval('header.top', (el) => el.getBoundingClientRect().bottom);
  assert.ok(top >= header - 1, `the section starts below the sticky header (${top} vs ${header})`);
  // the diagram: the walk's neuron, with the walk's values
  const j = await page.inputValue('#walk-feature');
  await page.waitForFunction((n) => document.querySelector('#neuron-svg g.lit')?.dataset.neuron === n, j);
  const vals = await page.$$eval('#neuron-svg g.lit text.val', (ts) => ts.map((t) => Number(t.dataset.v)));
  assert.equal(vals[2], Number(await page.getAttribute('#walk-out', 'data-value')));
  assert.match(await page.textContent('#neuron-live'), new RegExp(`#${j}`));
  await page.locator('#neurons').screenshot({ path: path.join(SHOTS, 'neurons-lit.png') });
});

test('the any-neuron card: a colour scale, a token\'s value on a click (phones have no hover), and what the negative direction means', async () => {
  await page.waitForFunction(() => document.body.dataset.ready === '1');
  await page.click('#fires-run');
  await page.waitForFunction(() => document.querySelectorAll('#fires-out .tok').length > 3 && document.querySelector('#fires-hist rect'));
  const acts = await page.$$eval('#fires-out .tok', (ts) => ts.map((t) => Number(t.dataset.act)));
  const mx = Math.max(...acts.map(Math.abs));
  assert.equal(await page.textContent('#fires-scale .hi'), mx.toFixed(2));
  await page.click('#fires-out .tok:nth-child(3)');
  assert.match(await page.textContent('#fires-readout'), new RegExp(`token 2\\D.*${acts[2].toFixed(3).replace('-', '\\-')}`));
  assert.match(await page.textContent('#fires-sign-note'), /负|−value/);
});
