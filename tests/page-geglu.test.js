// The page's SwiGLU-vs-GeGLU section: the two gate curves from their formulas, the loaded model's own
// gate inputs read through both (recomputed here with the same model in Node), the switch to the
// Gemma-3-shaped model from the picker (every section follows its stack), and the budget section's
// table of the real models' sizes (recomputed from their configs with configSummary).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { loadModel, configSummary } from '../js/index.js';
import { h, openPage, seen, settledOn, DEFAULT_TEXT, SHOTS, SITE, pageErrors } from './page-harness.js';

openPage();

const silu = (z) => z / (1 + Math.exp(-z));
const gelu = (z) => 0.5 * z * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * (z + 0.044715 * z ** 3)));

/** what the table should hold: per layer, z > 0 and each function's |output| share from z < 0 */
async function expectedRows(dir, text) {
  const m = await loadModel(path.join(SITE, dir));
  try {
    const L = m.config.num_hidden_layers, I = m.config.intermediate_size;
    const ids = m.tokenizer.encode(text).slice(0, 64), T = ids.length;
    const layers = L <= 8 ? [...Array(L).keys()] : Array.from({ length: 8 }, (_, k) => Math.round((k * (L - 1)) / 7));
    const r = m.forward(ids, { hooks: layers.map((l) => `blocks.${l}.mlp.hook_pre`) });
    return layers.map((l) => {
      const z = r.hooks[`blocks.${l}.mlp.hook_pre`];
      let pos = 0, sn = 0, sa = 0, gn = 0, ga = 0;
      for (let i = 0; i < T * I; i++) {
        const s = Math.abs(silu(z[i])), g = Math.abs(gelu(z[i]));
        sa += s; ga += g;
        if (z[i] > 0) pos++; else { sn += s; gn += g; }
      }
      return { l, open: pos / (T * I), silu: sn / sa, gelu: gn / ga };
    });
  } finally { m.dispose(); }
}
const pageRows = (p) => p.$$eval('#geglu-table tbody tr', (rs) => rs.map((r) => ({ l: Number(r.dataset.layer), open: Number(r.dataset.open), silu: Number(r.dataset.silu), gelu: Number(r.dataset.gelu) })));
function sameRows(got, want) {
  assert.deepEqual(got.map((r) => r.l), want.map((r) => r.l));
  for (let k = 0; k < want.length; k++) for (const key of ['open', 'silu', 'gelu']) assert.ok(Math.abs(got[k][key] - want[k][key]) < 2e-3, `layer ${want[k].l} ${key}: ${got[k][key]} vs ${want[k][key]}`);
}

test('the two gate curves: readouts at the slider, minima marked; on the demo model (SwiGLU) its own gate inputs through both functions', async () => {
  const p = h.page;
  await settledOn(DEFAULT_TEXT);
  assert.equal(await seen('#geglu-silu'), '-0.269');
  assert.equal(await seen('#geglu-gelu'), '-0.159');
  await p.fill('#geglu-z', '2');
  assert.equal(await seen('#geglu-silu'), silu(2).toFixed(3));
  assert.equal(await seen('#geglu-gelu'), gelu(2).toFixed(3));
  assert.equal(await p.$$eval('#geglu-svg path', (ps) => ps.length), 2);
  assert.match(await p.textContent('#geglu-svg'), /−0\.170 @ −0\.752/);
  // the demo model gates with SiLU: its column is the bold one; the numbers are its own
  assert.match(await seen('#geglu-model'), /SiLU/);
  assert.equal(await p.$eval('#geglu-table thead th.own', (t) => t.innerText), 'SiLU：来自 z < 0');
  sameRows(await pageRows(p), await expectedRows('weights/demo', DEFAULT_TEXT));
  const rows = await pageRows(p);
  assert.ok(rows.every((r) => r.gelu < r.silu), 'GELU takes less of its output from negative inputs than SiLU on every layer');
  assert.equal(await p.isVisible('#geglu-load'), true);
});

test('the budget table: Qwen3.5-0.8B and Gemma 3 270M sizes from their configs; the Gemma bar at 9.6 h²', async () => {
  const p = h.page;
  const cells = await p.$$eval('#budget-sizes td[data-model]', (ts) => ts.map((t) => [t.dataset.model, t.textContent]));
  for (const id of ['qwen3.5-0.8b', 'gemma3-270m']) {
    const s = await configSummary(id);
    const mine = cells.filter(([m]) => m === id).map(([, t]) => t);
    assert.ok(mine.includes(`${(s.params.total / 1e6).toFixed(1)} M`), `${id} total: ${mine}`);
    assert.ok(mine.some((t) => t.startsWith(`${(s.params.mlp / 1e6).toFixed(1)} M`)), `${id} MLPs`);
  }
  assert.equal((await configSummary('gemma3-270m')).params.total, 268098176);
  await p.click('#budget-gemma');
  assert.equal(Number(await p.getAttribute('#budget-track', 'data-total')), 9.6);
  assert.match(await seen('#budget-total'), /20%/);
});

test('the Gemma-3-shaped model from the section\'s button: GELU marked, its numbers, the strip and the bars show local and global layers', async () => {
  const p = h.page;
  await p.click('#geglu-load');
  await p.waitForFunction(() => document.body.dataset.model === 'gemma3-synth' && document.body.dataset.ready === '1', null, { timeout: 120000 });
  await settledOn(DEFAULT_TEXT);
  assert.equal(await p.inputValue('#model-select'), 'gemma3-synth');
  assert.equal(await seen('#strip-mixer'), '注意力（5 层局部 / 1 层全局）');
  assert.deepEqual(await p.$$eval('#bars .bar', (bs) => bs.map((b) => b.dataset.mixer)), ['sliding', 'sliding', 'sliding', 'sliding', 'sliding', 'full']);
  assert.match(await seen('#geglu-model'), /GELU/);
  assert.equal(await p.$eval('#geglu-table thead th.own', (t) => t.innerText), 'GELU：来自 z < 0');
  sameRows(await pageRows(p), await expectedRows('weights/gemma3-synth', DEFAULT_TEXT));
  assert.equal(await p.isVisible('#geglu-load'), false);
  // (data-ready = '1' above: the sentence ran and the fires section found its features on this model)
  await p.setViewportSize({ width: 390, height: 844 });
  await (await p.$('#geglu')).screenshot({ path: path.join(SHOTS, 'geglu-390.png') });
  await p.setViewportSize({ width: 1280, height: 900 });
  assert.deepEqual(pageErrors(), []);
});
