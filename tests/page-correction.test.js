// The page's correction section: the per-token chart, the all-layers bars on a 0-100% axis with
// words computed from them, the logit lens after each mixer and each MLP, and who wrote the
// prediction (the logit split into the embedding, every mixer and every MLP), all against Node.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_TEXT, demo, expected, h, openPage, pageRatios, runSentence, seen } from './page-harness.js';

openPage();

test('the bars and the per-token chart: every number matches model.forward', async () => {
  const p = h.page, want = await expected(DEFAULT_TEXT), got = await pageRatios();
  assert.equal(got.length, want.info.config.num_hidden_layers);
  got.forEach((r, l) => assert.ok(Math.abs(r - want.ratios[l]) < 1e-6, `layer ${l}: page ${r} vs forward ${want.ratios[l]}`));
  const perToken = await p.$$eval('#layer-chart rect[data-t]', (rs) => rs.map((r) => [Number(r.dataset.mlp), Number(r.dataset.post)]));
  const cl = Number(await p.inputValue('#corr-layer'));
  perToken.forEach(([mlp, post], t) => { assert.ok(Math.abs(mlp - want.mlpOut[cl][t]) < 1e-5); assert.ok(Math.abs(post - want.post[cl][t]) < 1e-5); });
  await p.click('#layer-chart rect.hit[data-hit="2"]');
  assert.match(await seen('#layer-readout'), /token 2/);
});

test('clicking the largest and the smallest bar shows their ratios and mixer kinds (mouse and keyboard)', async () => {
  const p = h.page, ratios = await pageRatios();
  const big = ratios.indexOf(Math.max(...ratios)), small = ratios.indexOf(Math.min(...ratios));
  await p.click(`#bars .bar[data-layer="${big}"]`);
  assert.match(await seen('#bar-readout'), new RegExp(`${(100 * ratios[big]).toFixed(1)}%.*全量注意力`));
  await p.focus(`#bars .bar[data-layer="${small}"]`);
  await p.keyboard.press('Enter');
  assert.match(await seen('#bar-readout'), new RegExp(`第 ${small} 层.*${(100 * ratios[small]).toFixed(1)}%`));
  assert.equal(await p.inputValue('#corr-layer'), String(small), 'the per-token chart follows the bar');
});

test('the all-layers bars stand on a 0-100% axis with a percentage on each, and the words under them are computed from the same numbers', async () => {
  const p = h.page;
  const bars = await p.$$eval('#bars .bar', (bs) => bs.map((b) => ({ r: Number(b.dataset.ratio), h: parseFloat(b.style.height), label: b.querySelector('b').textContent, aria: b.querySelector('.sr').innerText })));
  assert.ok(bars.length > 1);
  for (const b of bars) {
    assert.ok(Math.abs(b.h - 100 * Math.min(1, b.r)) < 0.06, `height ${b.h}% for ratio ${b.r}`);
    assert.equal(b.label, `${(100 * b.r).toFixed(0)}%`);
  }
  assert.deepEqual(await p.$$eval('#bars .grid span', (g) => g.map((x) => x.textContent)), ['100%', '75%', '50%', '25%']);
  const rs = bars.map((b) => b.r), sorted = [...rs].sort((a, b) => a - b), med = sorted[Math.floor((rs.length - 1) / 2)];
  const note = await seen('#bars-note');
  assert.ok(note.includes(`${(100 * med).toFixed(0)}%`), `the note gives the median: ${note}`);
  assert.match(note, new RegExp(`${rs.filter((r) => r > 0.5).length} 层超过一半`));
  if (rs[0] > 0.5) assert.match(note, /第 0 层与众不同/);
});

test('how the prediction forms: the logit lens after each mixer and each MLP, and the last row is the real output', async () => {
  const p = h.page, m = await demo();
  const ids = m.tokenizer.encode(DEFAULT_TEXT), T = ids.length, H = m.config.hidden_size, L = m.nLayers, V = m.config.vocab_size;
  const readRows = () => p.$$eval('#lens-table tr[data-layer]', (rs) => rs.map((r) => ({ mid: Number(r.dataset.mid), post: Number(r.dataset.post), ppost: Number(r.dataset.ppost), changed: r.classList.contains('mlp-changed') })));
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
  const t0 = Number(await p.inputValue('#lens-token'));
  assert.equal(t0, want);
  const rows = await readRows();
  assert.equal(rows.length, L);
  assert.equal(rows.filter((x) => x.changed).length, most);
  lensAt(t0).forEach((x, l) => {
    assert.equal(rows[l].mid, x.mid, `layer ${l} after the mixer`);
    assert.equal(rows[l].post, x.post, `layer ${l} after the MLP`);
  });
  const lg = r.logits.subarray(t0 * V, (t0 + 1) * V), best = argmax(lg);
  let z = 0; for (let i = 0; i < V; i++) z += Math.exp(lg[i] - lg[best]);
  assert.equal(rows.at(-1).post, best);
  assert.ok(Math.abs(rows.at(-1).ppost - 1 / z) < 1e-4);
  await p.selectOption('#lens-token', '3');
  await p.waitForFunction(() => /第 3 个/.test(document.querySelector('#lens-note').innerText));
  const r3 = m.forward(ids.slice(0, 4), { logits: 'last' });
  assert.equal(Number(await p.getAttribute('#lens-table tr[data-layer]:last-child', 'data-post')), argmax(r3.logits));
});

test('who wrote this prediction: one signed bar per part, the same numbers as decomposePrediction in Node, summing to the logit', async () => {
  const p = h.page, m = await demo();
  const ids = m.tokenizer.encode(DEFAULT_TEXT);
  await p.waitForFunction(() => document.getElementById('lens-card').dataset.state === 'ok');
  const t0 = Number(await p.inputValue('#lens-token'));
  const token = Number(await p.$eval('#lens-table tr[data-layer]:last-child', (r) => r.dataset.post));
  // the card is ok only once the decomposition of the lens's token is drawn, not the one before
  assert.equal(Number(await p.getAttribute('#dp-table', 'data-position')), t0, 'the decomposition is at the lens\'s token');
  const want = m.decomposePrediction(ids, { position: t0, token });
  const got = await p.$$eval('#dp-table tr[data-layer]', (rs) => rs.map((r) => ({ mixer: Number(r.dataset.mixer), mlp: Number(r.dataset.mlp) })));
  const emb = Number(await p.$eval('#dp-table tr[data-part="embed"]', (r) => r.dataset.value));
  assert.equal(got.length, m.nLayers);
  const close = (a, b, what) => assert.ok(Math.abs(a - b) <= 1e-5 * Math.max(1, Math.abs(b)), `${what}: page ${a}, Node ${b}`);
  close(emb, want.parts[0].value, 'embedding');
  got.forEach((g, l) => { close(g.mixer, want.parts[1 + 2 * l].value, `layer ${l} mixer`); close(g.mlp, want.parts[2 + 2 * l].value, `layer ${l} MLP`); });
  const sum = emb + got.reduce((a, g) => a + g.mixer + g.mlp, 0);
  assert.ok(Math.abs(sum - want.logit) < 0.01 * Math.max(1, Math.abs(want.logit)), `the parts sum to the logit: ${sum} vs ${want.logit}`);
  assert.match(await seen('#dp-note'), new RegExp(`logit[^0-9]*${want.logit.toFixed(2).replace('.', '\\.')}`));
  const widths = await p.$$eval('#dp-table .dp-bar', (bs) => bs.map((b) => parseFloat(b.style.width)));
  assert.equal(Math.max(...widths), 50);
});

test('a sentence longer than the lens looks at: the last 64 positions first, with a note; the table and decomposition are this sentence\'s', async () => {
  const p = h.page, m = await demo();
  const text = 'We walked to the old museum in Berlin and then to the park. '.repeat(6);
  await runSentence(text);
  const ctx = await p.evaluate(() => window.__mlpscope.model.contextLength);
  const ids = m.tokenizer.encode(text).slice(0, ctx), T = ids.length;
  assert.ok(T > 64);
  const t0 = Number(await p.inputValue('#lens-token'));
  assert.ok(t0 >= T - 64 && t0 < T, `the lens starts inside the last 64 positions: ${t0} of ${T}`);
  assert.equal(await p.$$eval('#lens-token option', (os) => os.length), T);
  assert.match(await seen('#lens-card .card-note'), new RegExp(`${T} 个 token`));
  const token = Number(await p.$eval('#lens-table tr[data-layer]:last-child', (r) => r.dataset.post));
  const want = m.decomposePrediction(ids, { position: t0, token });
  const emb = Number(await p.$eval('#dp-table tr[data-part="embed"]', (r) => r.dataset.value));
  assert.ok(Math.abs(emb - want.parts[0].value) < 1e-5 * Math.max(1, Math.abs(want.parts[0].value)));
  await runSentence(DEFAULT_TEXT);
  assert.equal(await p.$$eval('#lens-card .card-note', (n) => n.length), 0, 'a short sentence has no note');
});
