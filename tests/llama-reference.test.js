// The float64 reference on the llama family: first checked against llama2.c's goldens (so the
// reference itself is trusted), then used to check the engine on Hugging Face-style llama configs
// (halves RoPE, GQA, Qwen3 q/k norm, untied head) that stories260K does not exercise.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { loadModel } from '../js/index.js';
import { Reference } from './reference/reference.js';
import { CLI, ROOT, convertStories, golden, tmpDir, NEEDS_STORIES } from './helpers.js';

test('reference reproduces llama2.c on stories260K', { skip: NEEDS_STORIES }, () => {
  const dir = convertStories('f32');
  const c = golden().cases[2];
  const r = new Reference(dir).run(c.greedy_ids);
  let worst = 0;
  c.top5_logits.forEach((row, t) => row.forEach(([id, v]) => { worst = Math.max(worst, Math.abs(r.logits[t][id] - v)); }));
  assert.ok(worst < 1e-6, `reference vs golden logits: ${worst}`);
  for (const [k, rows] of Object.entries(c.stats)) rows.forEach((row, l) => row.forEach((g, t) => assert.ok(Math.abs(r.stats[k][l][t] - g) < 1e-6 * Math.max(1, g))));
});

for (const cfg of ['llama-qk', 'llama-hf']) {
  test(`${cfg}: engine matches the reference`, async () => {
    const dir = tmpDir(cfg);
    execFileSync(process.execPath, [CLI, 'synth', '--config', path.join(ROOT, 'tests/configs', cfg + '.json'), '--seed', '9', '--out', dir], { stdio: 'pipe' });
    const model = await loadModel(dir);
    const V = model.config.vocab_size;
    const ids = Array.from({ length: 70 }, (_, i) => (i * 53 + 3) % V);
    const ref = new Reference(dir).run(ids);
    const r = model.forward(ids, { logits: 'all' });
    let worst = 0;
    for (let t = 0; t < ids.length; t++) {
      const row = r.logits.subarray(t * V, (t + 1) * V), g = ref.logits[t];
      const s = Math.max(...g.map(Math.abs));
      for (let i = 0; i < V; i++) worst = Math.max(worst, Math.abs(row[i] - g[i]) / s);
    }
    assert.ok(worst < 1e-4, `${cfg}: ${worst}`);
    for (const k of ['attn_out_l2', 'mlp_out_l2', 'resid_post_l2']) ref.stats[k].forEach((row, l) => row.forEach((g, t) => assert.ok(Math.abs(r.stats[k][l][t] - g) / g < 1e-4)));
    console.log(`# ${cfg}: max logit error relative to scale ${worst.toExponential(2)}`);
    model.dispose();
  });
}
