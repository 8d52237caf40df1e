// The page's sections on how the MLP works (intro, gated, neurons, silu, budget): the strip and
// sizes from the loaded model, the live walk through one neuron and the diagram lit with it, the
// SiLU slider and the parameter budget.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { DEFAULT_TEXT, SHOTS, demo, expected, h, openPage, seen } from './page-harness.js';

openPage();

test('intro and sizes: the strip and the sizes table are the loaded model\'s', async () => {
  const p = h.page, want = await expected(DEFAULT_TEXT), c = want.info.config;
  assert.equal(Number(await p.getAttribute('#size-mlp-params', 'data-value')), 3 * c.hidden_size * c.intermediate_size * c.num_hidden_layers);
  assert.equal(await seen('#strip-layers'), `× ${c.num_hidden_layers}`);
  assert.equal(await seen('#strip-mixer'), '注意力', 'the demo model has attention layers only');
  assert.match(await seen('#model-name'), new RegExp(`${want.info.params.total.toLocaleString('en-US')} 个参数`));
});

test('the live walk: gate, SiLU, up and their product are the model\'s hooks at that token, and the diagram lights the same neuron', async () => {
  const p = h.page, m = await demo();
  const l = Number(await p.inputValue('#walk-layer')), t = Number(await p.inputValue('#walk-token')), j = Number(await p.inputValue('#walk-feature'));
  const ids = m.tokenizer.encode(DEFAULT_TEXT), I = m.config.intermediate_size;
  const r = m.forward(ids, { hooks: [`blocks.${l}.mlp.hook_pre`, `blocks.${l}.mlp.hook_pre_linear`, `blocks.${l}.mlp.hook_post`], logits: 'none' });
  assert.equal(t, ids.length - 1);
  assert.equal(j, r.stats.top_idx[l][t * 8], 'the most active neuron of that layer at that token');
  const g = r.hooks[`blocks.${l}.mlp.hook_pre`][t * I + j], post = r.hooks[`blocks.${l}.mlp.hook_post`][t * I + j];
  assert.equal(await seen('#walk-gate'), g.toFixed(3));
  assert.ok(Math.abs(Number(await p.getAttribute('#walk-out', 'data-value')) - post) < 1e-5);
  await p.waitForFunction((n) => document.querySelector('#neuron-svg g.lit')?.dataset.neuron === n, String(j));
  const vals = await p.$$eval('#neuron-svg g.lit text.val', (ts) => ts.map((x) => Number(x.dataset.v)));
  assert.equal(vals[2], Number(await p.getAttribute('#walk-out', 'data-value')));
  assert.match(await seen('#neuron-live'), new RegExp(`#${j}`));
  await p.locator('#neurons').screenshot({ path: path.join(SHOTS, 'neurons-lit.png') });
});

test('the neuron diagram draws gate and up as two parallel branches meeting at the product', async () => {
  const cols = await h.page.$$eval('#neuron-svg circle', (cs) => cs.map((c) => [c.getAttribute('fill'), Number(c.getAttribute('cx'))]));
  const xs = (fill) => [...new Set(cols.filter(([f]) => f === fill).map(([, x]) => x))];
  assert.deepEqual(xs('var(--gate)'), xs('var(--up)'), 'gate and up at the same depth');
  assert.ok(xs('var(--mlp)')[0] > xs('var(--gate)')[0]);
  // the labels are in their branch's colour, darkened to at least 4.5:1 on the card (N9: 2.9 and 3.4:1 before)
  const lum = (rgb) => { const c = rgb.match(/\d+/g).slice(0, 3).map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; }); return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2]; };
  for (const [cls, hue] of [['lab-gate', 'rgb(154, 84, 16)'], ['lab-up', 'rgb(29, 110, 75)'], ['lab-down', 'rgb(122, 79, 201)']]) {
    const fill = await h.page.$eval(`#neuron-svg text.${cls}`, (t) => getComputedStyle(t).fill);
    assert.equal(fill, hue, cls);
    assert.ok(1.05 / (lum(fill) + 0.05) >= 4.5, `${cls}: contrast ${(1.05 / (lum(fill) + 0.05)).toFixed(2)}:1 on white`);
  }
});

test('SiLU slider at z = -1 reads -0.269 / 0.000 / -0.269', async () => {
  const p = h.page;
  await p.focus('#silu-z');
  await p.keyboard.press('Home'); // z = -6
  for (let i = 0; i < 50; i++) await p.keyboard.press('ArrowRight');
  assert.equal(await seen('#silu-z-out'), '-1.0');
  assert.equal(await seen('#silu-val'), '-0.269');
  assert.equal(await seen('#relu-val'), '0.000');
  assert.equal(await seen('#diff-val'), '-0.269');
  assert.ok(await p.$('#silu-svg circle'), 'the minimum is marked');
  assert.match(await p.textContent('#silu-svg'), /−0\.278.*−1\.278/);
});

test('budget bars: 8 h², 12 h², 8 h² (break-even), 10.5 h² (~30% more) with honest lengths', async () => {
  const p = h.page, totals = [];
  for (let i = 0; i < 4; i++) {
    const w = await p.$$eval('#budget-track .bseg', (ss) => ss.reduce((a, s) => a + parseFloat(s.style.width), 0));
    totals.push([Number(await p.getAttribute('#budget-track', 'data-total')), w]);
    await p.click('#budget-toggle');
  }
  assert.deepEqual(totals.map(([t]) => Math.round(t * 100) / 100), [8, 12, 8, 10.5]);
  for (const [t, w] of totals) assert.ok(Math.abs(w - (t * 100) / 12) < 0.01, `bar length ${w}% proportional to the parameter count ${t} h²`);
  await p.click('#budget-qwen');
  assert.match(await seen('#budget-total'), /31%/);
  assert.deepEqual(await p.$$eval("#budget-bars .btrack", (ts) => ts.map((t) => Number(t.dataset.total))), [8, 12, 8, 10.5, 9.6]);
  assert.equal(await p.getAttribute('#budget-bars .brow.sel', 'data-key'), 'qwen');
});

test('a walk neuron out of range gets a visible message, and a valid one clears it', async () => {
  const p = h.page, before = h.errors.length;
  await p.fill('#walk-feature', '5000');
  await p.dispatchEvent('#walk-feature', 'change');
  assert.match(await seen('#walk-error'), /0 到 \d+ 之间/);
  assert.equal(await seen('#walk-out'), '–');
  await p.fill('#walk-feature', '3');
  await p.dispatchEvent('#walk-feature', 'change');
  await p.waitForFunction(() => document.querySelector('#walk-out').textContent !== '–');
  assert.equal(await seen('#walk-error'), '');
  assert.equal(h.errors.length, before, h.errors.slice(before).join('\n'));
});
