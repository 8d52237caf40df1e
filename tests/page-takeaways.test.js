// The page's takeaways section: the exercise checked against the live bars, the quiz's feedback
// (the question on the MLP's write quotes the loaded model's median).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { h, openPage, pageRatios, seen } from './page-harness.js';

openPage();

test('the exercise: the right answer (from the bars) is accepted, a wrong one is not', async () => {
  const p = h.page, ratios = await pageRatios();
  // the exercise and the quiz fold out of the main path into one panel (the harness opens them all)
  assert.equal(await p.$eval('#ex-check', (b) => b.closest('details')?.id), 'deeper-quiz');
  const big = ratios.indexOf(Math.max(...ratios)), small = ratios.indexOf(Math.min(...ratios));
  await p.fill('#ex-large', (100 * ratios[big]).toFixed(1));
  await p.fill('#ex-small', (100 * ratios[small]).toFixed(1));
  await p.click('#ex-check');
  assert.equal(await p.getAttribute('#ex-feedback', 'class'), 'right');
  await p.fill('#ex-large', (100 * ratios[big] + 7).toFixed(1));
  await p.click('#ex-check');
  assert.equal(await p.getAttribute('#ex-feedback', 'class'), 'wrong');
});

test('quiz: right and wrong answers get their feedback; the question on the MLP\'s write quotes the model', async () => {
  const p = h.page;
  for (const [q, wrong, right] of [['q1', 'a', 'b'], ['q2', 'c', 'a'], ['q3', 'a', 'b'], ['q4', 'a', 'b']]) {
    await p.check(`input[name=${q}][value=${wrong}]`);
    assert.match(await p.getAttribute(`fieldset[data-q="${q[1]}"] .feedback`, 'class'), /wrong/);
    await p.check(`input[name=${q}][value=${right}]`);
    assert.match(await p.getAttribute(`fieldset[data-q="${q[1]}"] .feedback`, 'class'), /right/);
  }
  const rs = await pageRatios(), sorted = [...rs].sort((a, b) => a - b), med = sorted[Math.floor((rs.length - 1) / 2)];
  assert.ok((await seen('fieldset[data-q="2"] .feedback')).includes(`${(100 * med).toFixed(0)}%`));
  await p.click('#lang-toggle');
  assert.match(await seen('fieldset[data-q="2"] .feedback'), /^✓ Right/);
  await p.click('#lang-toggle');
});
