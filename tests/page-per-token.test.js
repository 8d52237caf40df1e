// The page's per-token section: one attention head's pattern on the reader's sentence (rows as
// in Node), the share read from other tokens beside the MLP's 0%, and a long sentence's grid drawn
// for its last tokens with a note.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { demo, h, openPage, runSentence, seen } from './page-harness.js';

openPage();

test('attention mixes, the MLP does not: one head\'s pattern on the sentence, rows as in Node, and the share read from other tokens', async () => {
  const p = h.page, m = await demo();
  const ids = m.tokenizer.encode(await p.inputValue('#try-text')), n = ids.length;
  await p.selectOption('#attn-layer', '3');
  await p.selectOption('#attn-head', '1');
  await p.waitForFunction(() => /(layer|第) 3/.test(document.getElementById('attn-chart').textContent) && /head 1|头 1/.test(document.getElementById('attn-chart').textContent) && document.getElementById('attn-card').dataset.state === 'ok');
  const name = 'blocks.3.attn.hook_pattern';
  const P = m.forward(ids, { hooks: [name], stats: false, logits: 'none' }).hooks[name].subarray(n * n, 2 * n * n);
  const cells = await p.$$eval('#attn-chart rect.cell', (rs) => rs.map((r) => [Number(r.dataset.q), Number(r.dataset.k), Number(r.dataset.w)]));
  assert.equal(cells.length, (n * (n + 1)) / 2, 'one cell per query and earlier-or-same key');
  for (const [q, k, w] of cells) assert.ok(Math.abs(w - P[q * n + k]) < 1e-6, `cell ${q},${k}`);
  let other = 0;
  for (let q = 0; q < n; q++) other += 1 - P[q * n + q];
  assert.ok(Math.abs(Number(await p.getAttribute('#attn-readout', 'data-other')) - other / n) < 1e-6);
  assert.match(await seen('#attn-readout'), new RegExp(`${(100 * other / n).toFixed(1)}%.*MLP.*0%`));
});

test('a sentence longer than the grid: its last 64 tokens are drawn, the share covers all of them, and the card says so', async () => {
  const p = h.page, m = await demo();
  const text = 'The cat sat on the mat and looked at the dog. '.repeat(8);
  await runSentence(text);
  const ctx = await p.evaluate(() => window.__mlpscope.model.contextLength);
  const ids = m.tokenizer.encode(text).slice(0, ctx), n = ids.length;
  assert.ok(n > 64, `${n} tokens`);
  const qs = await p.$$eval('#attn-chart rect.cell', (rs) => [...new Set(rs.map((r) => Number(r.dataset.q)))]);
  assert.deepEqual([qs.length, Math.min(...qs), Math.max(...qs)], [64, n - 64, n - 1]);
  assert.match(await seen('#attn-card .card-note'), new RegExp(`${n} 个 token.*最后 64 个`));
  const name = `blocks.${await p.inputValue('#attn-layer')}.attn.hook_pattern`, hd = Number(await p.inputValue('#attn-head'));
  const P = m.forward(ids, { hooks: [name], stats: false, logits: 'none' }).hooks[name].subarray(hd * n * n, (hd + 1) * n * n);
  let other = 0;
  for (let q = 0; q < n; q++) other += 1 - P[q * n + q];
  assert.ok(Math.abs(Number(await p.getAttribute('#attn-readout', 'data-other')) - other / n) < 1e-6);
  assert.equal(await p.getAttribute('#attn-card', 'data-state'), 'ok');
});
