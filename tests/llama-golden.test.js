// stories260K in wasm (SIMD and scalar kernels) against llama2.c's golden outputs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadModel } from '../js/index.js';
import { convertStories, golden, NEEDS_STORIES } from './helpers.js';

const dir = NEEDS_STORIES ? null : convertStories('f32');
const G = NEEDS_STORIES ? null : golden();

for (const simd of [true, false]) {
  test(`llama2.c goldens, wasm ${simd ? 'SIMD128' : 'scalar'} kernels`, { skip: NEEDS_STORIES }, async () => {
    const model = await loadModel(dir, { simd });
    assert.equal(model.info().kernels, simd ? 'wasm-simd128' : 'generic');
    const V = model.config.vocab_size;
    let worstLogit = 0, worstStat = 0;
    for (const c of G.cases) {
      assert.deepEqual(model.tokenizer.encode(c.prompt), c.prompt_ids, `prompt ids for "${c.prompt}"`);
      // greedy continuation through generate() (prefill + decode steps)
      const gen = [];
      for await (const t of model.generate(c.prompt_ids, { maxTokens: c.greedy_ids.length - c.prompt_ids.length, temperature: 0 })) gen.push(t.id);
      assert.deepEqual([...c.prompt_ids, ...gen], c.greedy_ids, `greedy continuation of "${c.prompt}"`);
      assert.equal(model.tokenizer.decode(c.greedy_ids.slice(1)), c.greedy_text);
      // logits at every position and statistics, one prefill
      const r = model.forward(c.greedy_ids, { logits: 'all' });
      c.top5_logits.forEach((row, t) => {
        for (const [id, v] of row) worstLogit = Math.max(worstLogit, Math.abs(r.logits[t * V + id] - v));
        let best = 0;
        for (let i = 1; i < V; i++) if (r.logits[t * V + i] > r.logits[t * V + best]) best = i;
        assert.equal(best, row[0][0], `argmax at position ${t}`);
      });
      for (const [name, rows] of Object.entries(c.stats))
        rows.forEach((row, l) => row.forEach((g, t) => {
          worstStat = Math.max(worstStat, Math.abs(r.stats[name][l][t] - g) / Math.max(Math.abs(g), 1e-6));
        }));
    }
    assert.ok(worstLogit < 1e-4, `max |logit - golden| = ${worstLogit}`);
    assert.ok(worstStat < 1e-4, `max relative stat error = ${worstStat}`);
    console.log(`# wasm ${simd ? 'simd' : 'scalar'}: max |logit diff| ${worstLogit.toExponential(2)}, max stat rel diff ${worstStat.toExponential(2)}`);
    model.dispose();
  });
}
