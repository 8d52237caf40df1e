// The bilinear view of a SwiGLU MLP (js/bilinear.js, Pearce et al. 2025): the interaction matrix
// against float64 from the weight files; the identity that ties it to the engine (with a layer's
// SiLU replaced by z/2, the read-out of its MLP output is exactly x̂ᵀQx̂); Lanczos against dense
// Jacobi; bilinearGap against a pass with the replacement built by hand from interventions; the
// Worker; typed errors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { loadModel, loadModelInWorker, jacobiEigen, topEigen, klDivergence } from '../js/index.js';
import { loadWeights } from './reference/reference.js';
import { CLI, DEMO, ROOT, tmpDir } from './helpers.js';

const synth = (tag, dtype) => {
  const d = tmpDir(tag);
  execFileSync(process.execPath, [CLI, 'synth', '--config', path.join(ROOT, 'tests/configs/qwen35-a.json'), '--seed', '5', '--dtype', dtype, '--out', d], { stdio: 'pipe' });
  return d;
};
const q8 = synth('bil-q8', 'q8'), f32 = synth('bil-f32', 'f32');
const direction = (H, seed) => { let x = seed; return Float32Array.from({ length: H }, () => ((x = (x * 69069 + 1) % 4294967296) / 4294967296) - 0.5); };

test('the interaction matrix equals ¼ Σ_k c_k (w_gate,k w_in,kᵀ + w_in,k w_gate,kᵀ) in float64 from the weights (token, direction, neuron; gain folded or not)', async () => {
  const model = await loadModel(q8, { threads: 1 }), { W } = loadWeights(q8);
  const { hidden_size: H, intermediate_size: I } = model.config, l = 2;
  const G = W[`layers.${l}.mlp.gate_proj`], U = W[`layers.${l}.mlp.up_proj`], D = W[`layers.${l}.mlp.down_proj`], n = W[`layers.${l}.post_attention_layernorm`];
  const u = direction(H, 11);
  for (const [opts, c] of [
    [{ direction: u }, Float64Array.from({ length: I }, (_, k) => { let s = 0; for (let h = 0; h < H; h++) s += u[h] * D[h * I + k]; return s; })],
    [{ neuron: 17 }, Float64Array.from({ length: I }, (_, k) => (k === 17 ? 1 : 0))],
  ]) for (const foldNorm of [true, false]) {
    const v = model.bilinearView({ layer: l, k: 3, foldNorm, ...opts });
    for (let k = 0; k < I; k++) assert.ok(Math.abs(v.readout[k] - c[k]) < 1e-4 * (1 + Math.abs(c[k])), `read-out weight ${k}`);
    const gain = (h) => (foldNorm ? 1 + n[h] : 1);
    let max = 0, err = 0;
    for (let i = 0; i < H; i++) for (let j = 0; j < H; j++) {
      let q = 0;
      for (let k = 0; k < I; k++) q += c[k] * (G[k * H + i] * U[k * H + j] + U[k * H + i] * G[k * H + j]);
      q *= gain(i) * gain(j) / 4;
      max = Math.max(max, Math.abs(q)); err = Math.max(err, Math.abs(v.Q[i * H + j] - q));
    }
    assert.ok(err < 1e-5 * max, `${JSON.stringify(Object.keys(opts))} foldNorm ${foldNorm}: max error ${err} of ${max}`);
    for (let i = 0; i < H; i++) for (let j = 0; j < i; j++) assert.equal(v.Q[i * H + j], v.Q[j * H + i], 'symmetric');
  }
  // a token: its unembedding through the final norm's gain, read back by down_proj
  const t = 7, head = W.embed_tokens, fn = W.norm, tv = model.bilinearView({ layer: l, token: t, k: 1 });
  const want = Float64Array.from({ length: I }, (_, k) => { let s = 0; for (let h = 0; h < H; h++) s += head[t * H + h] * (1 + fn[h]) * D[h * I + k]; return s; });
  for (let k = 0; k < I; k++) assert.ok(Math.abs(tv.readout[k] - want[k]) < 1e-4 * (1 + Math.abs(want[k])));
  model.dispose();
});

test('with a layer\'s SiLU replaced by z/2 (forward bilinearMlp), the read-out of its MLP output is x̂ᵀQx̂ at every token (f32 weights)', async () => {
  const model = await loadModel(f32, { threads: 1 });
  const { hidden_size: H, rms_norm_eps: eps = 1e-6 } = model.config, ids = [3, 41, 5, 99, 12, 7, 250, 31], l = 1;
  const u = direction(H, 5), v = model.bilinearView({ layer: l, direction: u, k: 1 });
  const r = model.forward(ids, { bilinearMlp: [l], hooks: [`blocks.${l}.hook_resid_mid`, `blocks.${l}.hook_mlp_out`] });
  const mid = r.hooks[`blocks.${l}.hook_resid_mid`], out = r.hooks[`blocks.${l}.hook_mlp_out`];
  for (let t = 0; t < ids.length; t++) {
    const x = mid.subarray(t * H, (t + 1) * H);
    const rms = Math.sqrt(x.reduce((a, y) => a + y * y, 0) / H + (model.config.rms_norm_eps ?? eps));
    let quad = 0, read = 0;
    for (let i = 0; i < H; i++) { read += u[i] * out[t * H + i]; for (let j = 0; j < H; j++) quad += (x[i] / rms) * v.Q[i * H + j] * (x[j] / rms); }
    assert.ok(Math.abs(quad - read) < 1e-4 * (1 + Math.abs(read)), `token ${t}: x̂ᵀQx̂ ${quad} vs u·mlp_out ${read}`);
  }
  // the real SiLU gives another output: the replacement did take place
  const real = model.forward(ids, { hooks: [`blocks.${l}.hook_mlp_out`] }).hooks[`blocks.${l}.hook_mlp_out`];
  assert.ok(real.some((y, i) => Math.abs(y - out[i]) > 1e-4));
  model.dispose();
});

test('Lanczos (topEigen) finds the dense Jacobi eigenpairs of largest |value|, with fewer steps than the size too', async () => {
  for (const [dir, layer, k] of [[q8, 3, 6], [DEMO, 10, 4]]) {
    const model = await loadModel(dir, { threads: 1 });
    const H = model.config.hidden_size, v = model.bilinearView({ layer, token: 9, k });
    const dense = jacobiEigen(Float64Array.from(v.Q), H);
    const order = Array.from({ length: H }, (_, i) => i).sort((a, b) => Math.abs(dense.values[b]) - Math.abs(dense.values[a]));
    let sum = 0, sq = 0;
    for (let i = 0; i < H; i++) { sum += dense.values[i]; sq += dense.values[i] ** 2; }
    assert.ok(Math.abs(sum - v.trace) < 1e-6 * (1 + Math.abs(v.trace)), 'Σλ = trace');
    assert.ok(Math.abs(sq - v.frobenius2) < 1e-5 * v.frobenius2, 'Σλ² = ‖Q‖²');
    const scale = Math.abs(dense.values[order[0]]);
    v.eigen.forEach((p, i) => {
      const want = dense.values[order[i]];
      assert.ok(Math.abs(p.value - want) < 1e-6 * scale, `H ${H}: eigenvalue ${i}: ${p.value} vs ${want}`);
      let dot = 0; for (let h = 0; h < H; h++) dot += p.vector[h] * dense.vectors[h * H + order[i]];
      if (i + 1 < H && Math.abs(Math.abs(want) - Math.abs(dense.values[order[i + 1]])) > 1e-3 * scale) assert.ok(Math.abs(dot) > 0.9999, `eigenvector ${i}: |dot| ${Math.abs(dot)}`);
      assert.ok(p.residual < 1e-5 * scale, `residual ${p.residual}`);
      assert.equal(p.promoted.length, 5);
    });
    assert.ok(Math.abs(v.explained - v.eigen.reduce((a, p) => a + p.value ** 2, 0) / v.frobenius2) < 1e-12);
    model.dispose();
  }
  // a small matrix with known eigenvalues
  const A = Float64Array.from([2, 1, 0, 1, 2, 0, 0, 0, -5]);
  const e = topEigen(Float32Array.from(A), 3, 3);
  assert.deepEqual(e.map((p) => Math.round(p.value * 1e9) / 1e9), [-5, 3, 1]);
});

test('bilinearGap: each layer\'s KL and loss change equal a pass with the replacement built by hand (interventions setting mlp.hook_post to gate·up/2)', async () => {
  const model = await loadModel(DEMO, { threads: 1 });
  const text = '我上周从巴黎飞到东京。', ids = model.tokenizer.encode(text), T = ids.length, V = model.config.vocab_size, n = model.tokenizer.vocabSize || V;
  const g = model.bilinearGap(text, { layers: [0, 5] });
  assert.equal(g.tokens, T);
  const clean = model.forward(ids, { logits: 'all', stats: false, hooks: [0, 5].flatMap((l) => [`blocks.${l}.mlp.hook_pre`, `blocks.${l}.mlp.hook_pre_linear`]) });
  const nll = (lg) => { let s = 0; for (let t = 0; t < T - 1; t++) { const row = Array.from(lg.subarray(t * V, t * V + n)), mx = Math.max(...row); s += mx + Math.log(row.reduce((a, y) => a + Math.exp(y - mx), 0)) - row[ids[t + 1]]; } return s / (T - 1); };
  assert.ok(Math.abs(g.loss - nll(clean.logits)) < 1e-9);
  for (const [i, l] of [[0, 0], [1, 5]]) {
    const pre = clean.hooks[`blocks.${l}.mlp.hook_pre`], lin = clean.hooks[`blocks.${l}.mlp.hook_pre_linear`], I = model.config.intermediate_size;
    const interventions = Array.from({ length: T }, (_, t) => ({ layer: l, hook: 'mlp.hook_post', op: 'set', positions: [t], vector: Float32Array.from({ length: I }, (_, k) => 0.5 * pre[t * I + k] * lin[t * I + k]) }));
    const byHand = model.forward(ids, { logits: 'all', stats: false, interventions }).logits;
    const engine = model.forward(ids, { logits: 'all', stats: false, bilinearMlp: [l] }).logits;
    assert.deepEqual(Array.from(engine), Array.from(byHand), `layer ${l}: the engine's replacement is the hand-built one`);
    let kl = 0; for (let t = 0; t < T; t++) kl += klDivergence(clean.logits.subarray(t * V, (t + 1) * V), byHand.subarray(t * V, (t + 1) * V), n);
    assert.equal(g.layers[i].layer, l);
    assert.ok(Math.abs(g.layers[i].kl - kl / T) < 1e-12, `layer ${l} KL`);
    assert.ok(Math.abs(g.layers[i].dLoss - (nll(byHand) - g.loss)) < 1e-12, `layer ${l} loss change`);
  }
  const both = model.forward(ids, { logits: 'all', stats: false, bilinearMlp: [0, 5] }).logits;
  assert.ok(Math.abs(g.all.dLoss - (nll(both) - g.loss)) < 1e-12);
  model.dispose();
});

test('bilinearView and bilinearGap in a Worker, and their typed errors', async () => {
  const model = await loadModel(q8, { threads: 1 }), H = model.config.hidden_size;
  const want = model.bilinearView({ layer: 1, neuron: 4, k: 2 }), gap = model.bilinearGap([5, 6, 7, 8]);
  const w = await loadModelInWorker(q8, { threads: 1 });
  try {
    const got = await w.bilinearView({ layer: 1, neuron: 4, k: 2 });
    assert.deepEqual(got.eigen.map((p) => p.value), want.eigen.map((p) => p.value));
    assert.deepEqual((await w.bilinearGap([5, 6, 7, 8])).layers, gap.layers);
    await assert.rejects(w.bilinearView({ layer: 1 }), { code: 'E_ARG', message: /exactly one of token, direction or neuron/ });
  } finally { await w.dispose(); }
  for (const [opts, re] of [[{ layer: 1 }, /exactly one/], [{ layer: 1, token: 1, neuron: 1 }, /exactly one/], [{ layer: 9, neuron: 0 }, /layer 9/],
    [{ layer: 0, neuron: 999 }, /neuron 999/], [{ layer: 0, token: -1 }, /token -1/], [{ layer: 0, direction: [1, 2] }, /2 values/],
    [{ layer: 0, direction: Array(H).fill(Number.NaN) }, /value 0 is NaN/], [{ layer: 0, neuron: 0, k: 0 }, /k 0/], [{ layer: 0, neuron: 0, foldNorm: 1 }, /foldNorm/]])
    assert.throws(() => model.bilinearView(opts), { code: 'E_ARG', message: re });
  assert.throws(() => model.bilinearGap([5]), { code: 'E_ARG', message: /at least 2/ });
  assert.throws(() => model.bilinearGap([5, 6], { layers: [4] }), { code: 'E_ARG', message: /layer 4/ });
  assert.throws(() => model.forward([5, 6], { bilinearMlp: [7] }), { code: 'E_ARG', message: /bilinearMlp: layer 7/ });
  assert.throws(() => model.forward([5, 6], { bilinearMlp: ['a'] }), { code: 'E_ARG', message: /bilinearMlp\[0\]/ });
  // the command line prints the same numbers
  const cli = JSON.parse(execFileSync(process.execPath, [CLI, 'bilinear', q8, '--layer', '1', '--neuron', '4', '--k', '2', '--gap', '5,6,7,8', '--json'], { encoding: 'utf8' }));
  assert.deepEqual(cli.eigen.map((p) => p.value), want.eigen.map((p) => p.value));
  assert.deepEqual(cli.gap.layers, gap.layers);
  model.dispose();
});
