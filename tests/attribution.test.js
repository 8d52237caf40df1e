// What a neuron writes, read by the head (model.neuronOutput / unembedDirection), against the
// independent float64 reference on a Qwen3.5 model (zero-centred norms, untied head) and on
// stories260K (plain norms, tied head); typed errors; the demo model's city neuron. (The Worker
// path: tests/browser-api.test.js.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { loadModel } from '../js/index.js';
import { Reference } from './reference/reference.js';
import { CLI, ROOT, convertStories, tmpDir, NEEDS_STORIES } from './helpers.js';

function relVec(a, b) {
  let w = 0, s = 0;
  for (let i = 0; i < b.length; i++) { w = Math.max(w, Math.abs(a[i] - b[i])); s = Math.max(s, Math.abs(b[i])); }
  return w / s;
}

for (const [name, make, skip] of [
  ['qwen35-a (q8, zero-centred norms)', () => { const d = tmpDir('attr-q'); execFileSync(process.execPath, [CLI, 'synth', '--config', path.join(ROOT, 'tests/configs/qwen35-a.json'), '--seed', '5', '--dtype', 'q8', '--out', d], { stdio: 'pipe' }); return d; }],
  ['stories260K (f32, tied head)', () => convertStories('f32'), NEEDS_STORIES],
]) {
  test(`neuronOutput on ${name} equals the float64 reference`, { skip }, async () => {
    const dir = make();
    const model = await loadModel(dir), ref = new Reference(dir);
    const { num_hidden_layers: L, intermediate_size: I, hidden_size: H } = model.config;
    for (const [l, j] of [[0, 0], [L - 1, I - 1], [Math.floor(L / 2), 37 % I]]) {
      const o = model.neuronOutput(l, j, { k: 5 });
      const want = ref.neuronLogits(l, j);
      assert.equal(o.direction.length, H);
      assert.ok(relVec(o.logits, want) < 1e-5, `layer ${l} neuron ${j}: ${relVec(o.logits, want)}`);
      for (let h = 0; h < H; h++) assert.ok(Math.abs(o.direction[h] - ref.W[`layers.${l}.mlp.down_proj`][h * I + j]) < 1e-6);
      assert.ok(Math.abs(o.norm - Math.hypot(...o.direction)) < 1e-6);
      // promoted / suppressed: the extremes of the logits over the real vocabulary, best first
      const n = model.tokenizer?.vocabSize || model.config.vocab_size;
      const sorted = Array.from(o.logits.subarray(0, n)).sort((a, b) => b - a);
      assert.deepEqual(o.promoted.map((t) => t.logit), sorted.slice(0, 5));
      assert.deepEqual(o.suppressed.map((t) => t.logit), sorted.slice(-5).reverse());
      // linear in the direction
      const twice = model.unembedDirection(Float32Array.from(o.direction, (v) => 2 * v), { k: 1 });
      assert.ok(relVec(twice.logits, o.logits.map((v) => 2 * v)) < 1e-5);
    }
    // normalize: true is the whole final RMSNorm: on the last layer's resid_post it gives the model's
    // own logits, on any layer the logit lens the forward pass computes
    const ids = [1, 5, 9, 200 % model.config.vocab_size, 3];
    const fw = model.forward(ids, { logits: 'all', hooks: [`blocks.${L - 1}.hook_resid_post`, 'blocks.0.hook_resid_post'], logitLens: { positions: [2], k: 3 } });
    const V = model.config.vocab_size;
    for (const t of [0, 4]) {
      const x = fw.hooks[`blocks.${L - 1}.hook_resid_post`].subarray(t * H, (t + 1) * H);
      const lens = model.unembedDirection(x, { normalize: true, k: 3 });
      assert.deepEqual(Array.from(lens.logits), Array.from(fw.logits.subarray(t * V, (t + 1) * V)), `position ${t}`);
    }
    const lens0 = model.unembedDirection(fw.hooks['blocks.0.hook_resid_post'].subarray(2 * H, 3 * H), { normalize: true, k: 3 });
    assert.deepEqual(lens0.promoted.map((t) => t.id), fw.logitLens[0].layers[0].map((t) => t.id));
    for (const [args, re] of [[[L, 0], /layer 2|layer \d+ is not in/], [[0, I], /neuron \d+ is not in/], [[0, -1], /neuron -1/], [[0.5, 0], /integers/]])
      assert.throws(() => model.neuronOutput(...args), { code: 'E_ARG', message: re });
    assert.throws(() => model.unembedDirection([1, 2, 3]), { code: 'E_ARG', message: new RegExp(`hidden size is ${H}`) });
    assert.throws(() => model.neuronOutput(0, 0, { k: 0 }), { code: 'E_ARG' });
    assert.throws(() => model.unembedDirection(new Float32Array(H).fill(NaN)), { code: 'E_ARG', message: /value 0 is NaN/ });
    model.dispose();
  });
}

test('the demo model: its Chinese city neuron, firing inside a city name, raises what follows a whole name', async () => {
  const dir = path.join(ROOT, 'weights/demo');
  const model = await loadModel(dir);
  const { probes } = await import('../js/corpus.js');
  const { findFeatureNeurons } = await import('../js/index.js');
  const b = findFeatureNeurons(model, probes(9, 160), { top: 1, byLang: true }).bestByLang.zh.find((x) => x.feature === 'city');
  // as it fires it writes sign × its column: what it raises is the column's promoted list, or its
  // suppressed one for a neuron that fires negatively
  const o = model.neuronOutput(b.layer, b.neuron, { k: 10 });
  const raised = (b.sign > 0 ? o.promoted : o.suppressed).map((t) => model.tokenizer.decode([t.id]));
  console.log(`# layer ${b.layer} neuron ${b.neuron} (sign ${b.sign}, held-out AUC ${b.heldOutAuc.toFixed(3)}), as it fires: raises ${raised.map((s) => JSON.stringify(s)).join(' ')}`);
  // the corpus's words after a city: 飞到 / 和 / 去 / 开往 / 的会议 / 的火车 / 是 / 旅行之后 / ，/ 。
  const after = ['飞到', '和', '去', '开往', '的会议', '的火车', '的', '是', '旅行之后', '，', '。'];
  assert.ok(raised.filter((s) => after.includes(s)).length >= 3, raised.join('|'));
  model.dispose();
});
