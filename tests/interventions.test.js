// Interventions at any hook point and position (scale / set / add, in the engine during the pass),
// checked by identities (patching a run with itself, scale 1, add 0 change nothing, bit for bit),
// equivalences (zero-ablation three ways; a neuron pushed up = its down_proj column added; add =
// set to the sum), causality (a change at position p leaves earlier positions alone), the final
// norm and head (adding v to the last residual = the head applied to x + v), decode = prefill with
// steering, and typed errors. On the demo model (Llama family) and a Qwen3.5-shaped model.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { loadModel, loadModelInWorker } from '../js/index.js';
import { CLI, DEMO, ROOT, tmpDir } from './helpers.js';

const qwenDir = tmpDir('iv-qwen35');
execFileSync(process.execPath, [CLI, 'synth', '--config', path.join(ROOT, 'tests/configs/qwen35-a.json'), '--seed', '5', '--out', qwenDir], { stdio: 'pipe' });
const MODELS = [['demo (llama)', DEMO], ['qwen3.5-shaped', qwenDir]];
const IDS = [5, 9, 200, 31, 77, 12];
const T = IDS.length;

const maxRel = (a, b) => { let s = 0, d = 0; for (let i = 0; i < a.length; i++) { s = Math.max(s, Math.abs(b[i])); d = Math.max(d, Math.abs(a[i] - b[i])); } return d / (s || 1); };

for (const [label, dir] of MODELS) {
  test(`${label}: patching a run with itself, scale 1 and add 0 at every hook point change nothing (bit for bit)`, async () => {
    const m = await loadModel(dir, { threads: 1 });
    const plain = m.forward(IDS, { logits: 'all' }).logits;
    const points = m.info().hooks.map((h) => h.name);
    const layer = Math.min(1, m.nLayers - 1);
    const caught = m.forward(IDS, { hooks: points.map((p) => `blocks.${layer}.${p}`), logits: 'none', stats: false }).hooks;
    for (const p of points) {
      const name = `blocks.${layer}.${p}`, width = caught[name].length / T;
      const patch = Array.from({ length: T }, (_, t) => ({ hook: name, op: 'set', positions: [t], vector: caught[name].subarray(t * width, (t + 1) * width) }));
      assert.deepEqual(m.forward(IDS, { logits: 'all', interventions: patch }).logits, plain, `${name}: patched with its own values`);
      const everyLayer = (iv) => Array.from({ length: m.nLayers }, (_, l) => ({ hook: `blocks.${l}.${p}`, ...iv }));
      assert.deepEqual(m.forward(IDS, { logits: 'all', interventions: everyLayer({ op: 'scale', value: 1 }) }).logits, plain, `${p}: scale 1`);
      assert.deepEqual(m.forward(IDS, { logits: 'all', interventions: everyLayer({ op: 'add', value: 0 }) }).logits, plain, `${p}: add 0`);
    }
    m.dispose();
  });

  test(`${label}: zero-ablation three ways agree; a change at position p leaves earlier positions alone`, async () => {
    const m = await loadModel(dir, { threads: 1 });
    const V = m.config.vocab_size, L = m.nLayers - 1;
    const older = m.forward(IDS, { logits: 'all', interventions: [{ layer: L, hook: 'hook_mlp_out', scale: 0 }] }).logits;
    const set0 = m.forward(IDS, { logits: 'all', interventions: [{ hook: `blocks.${L}.hook_mlp_out`, op: 'set' }] }).logits;
    const neurons0 = m.forward(IDS, { logits: 'all', interventions: [{ hook: `blocks.${L}.mlp.hook_post`, op: 'set', value: 0 }] }).logits;
    assert.deepEqual(set0, older);
    assert.deepEqual(neurons0, older);
    assert.notDeepEqual(older, m.forward(IDS, { logits: 'all' }).logits, 'the ablation changes something');
    const plain = m.forward(IDS, { logits: 'all' }).logits;
    const p = 3;
    const hit = m.forward(IDS, { logits: 'all', interventions: [{ hook: 'blocks.0.hook_resid_mid', op: 'add', value: 0.5, positions: [p] }] }).logits;
    assert.deepEqual(hit.subarray(0, p * V), plain.subarray(0, p * V), 'positions before p are untouched');
    assert.notDeepEqual(hit.subarray(p * V, (p + 1) * V), plain.subarray(p * V, (p + 1) * V), 'position p changes');
    const fromEnd = m.forward(IDS, { logits: 'all', interventions: [{ hook: 'blocks.0.hook_resid_mid', op: 'add', value: 0.5, positions: [p - T] }] }).logits;
    assert.deepEqual(fromEnd, hit, 'a negative position counts from the end');
    m.dispose();
  });
}

test('adding v to the last residual stream equals the final norm and head applied to x + v; a neuron pushed up by c equals c times its down_proj column added', async () => {
  // exact activations: with int8 ones the pushed neuron goes through the down_proj input's
  // quantization (its block's scale changes), the added column does not
  const m = await loadModel(DEMO, { threads: 1, activations: 'exact' });
  const H = m.config.hidden_size, L = m.nLayers - 1, last = `blocks.${L}.hook_resid_post`;
  const x = m.forward(IDS, { hooks: [last], logits: 'none' }).hooks[last].subarray((T - 1) * H, T * H);
  const v = Float32Array.from({ length: H }, (_, i) => Math.sin(i) * 0.7);
  const got = m.forward(IDS, { logits: 'last', interventions: [{ hook: last, op: 'add', vector: v, positions: [T - 1] }] }).logits;
  const xv = Float32Array.from(x, (a, i) => a + v[i]);
  const want = m.unembedDirection(xv, { normalize: true }).logits;
  assert.ok(maxRel(got, want) < 1e-4, `head of x + v: ${maxRel(got, want)}`);
  const viaSet = m.forward(IDS, { logits: 'last', interventions: [{ hook: last, op: 'set', vector: xv, positions: [T - 1] }] }).logits;
  assert.deepEqual(viaSet, got, 'add v = set x + v');
  // the demo model's English code neuron, pushed up by 3 at mlp.hook_post = 3 × its down_proj column added to the MLP's output
  const l = 5, n = 231, c = 3;
  const col = m.neuronOutput(l, n).direction;
  const a = m.forward(IDS, { logits: 'all', interventions: [{ hook: `blocks.${l}.mlp.hook_post`, op: 'add', neurons: [n], value: c }] }).logits;
  const b = m.forward(IDS, { logits: 'all', interventions: [{ hook: `blocks.${l}.hook_mlp_out`, op: 'add', vector: Float32Array.from(col, (w) => c * w) }] }).logits;
  assert.ok(maxRel(a, b) < 1e-4, `neuron vs column: ${maxRel(a, b)}`);
  assert.ok(maxRel(a, m.forward(IDS, { logits: 'all' }).logits) > 1e-3, 'and the push changes the prediction');
  m.dispose();
});

test('steering during generate(): each decode step is steered as the prefill over the same text is', async () => {
  const m = await loadModel(DEMO, { threads: 1 });
  const prompt = m.tokenizer.encode('I flew from Paris to');
  const city = m.neuronOutput(2, 281); // the city neuron over both languages (it fires positively): its down_proj column, 60 units along it
  const steer = [{ hook: 'blocks.2.hook_resid_post', op: 'add', vector: Float32Array.from(city.direction, (w) => 60 * w / city.norm) }];
  const gen = [], plainGen = [];
  for await (const t of m.generate(prompt, { maxTokens: 8, interventions: steer, stop: [] })) gen.push(t.id);
  for await (const t of m.generate(prompt, { maxTokens: 8, stop: [] })) plainGen.push(t.id);
  assert.notDeepEqual(gen, plainGen, 'the steering changes the text');
  const V = m.config.vocab_size, all = [...prompt, ...gen];
  const r = m.forward(all.slice(0, -1), { logits: 'all', interventions: steer }).logits;
  for (let k = 0; k < gen.length; k++) {
    const row = r.subarray((prompt.length - 1 + k) * V, (prompt.length + k) * V);
    let best = 0;
    for (let i = 1; i < m.tokenizer.vocabSize; i++) if (row[i] > row[best]) best = i;
    assert.equal(best, gen[k], `token ${k}: decode and prefill agree under steering`);
  }
  m.dispose();
});

test('interventions in the Worker: the same logits; malformed ones are E_ARG naming what is wrong', async () => {
  const m = await loadModel(DEMO, { threads: 1 });
  const iv = [{ hook: 'blocks.2.hook_resid_mid', op: 'add', dims: [0, 5], vector: [1, -1], positions: [-1] }];
  const want = m.forward(IDS, { logits: 'last', interventions: iv }).logits;
  const w = await loadModelInWorker(DEMO, { threads: 1 });
  assert.deepEqual((await w.forward(IDS, { logits: 'last', interventions: iv })).logits, want);
  await w.dispose();
  const err = (iv, re) => assert.throws(() => m.forward(IDS, { interventions: [iv] }), (e) => e.code === 'E_ARG' && re.test(e.message), String(re));
  err({ hook: 'blocks.1.mlp.hook_post', op: 'scale', neurons: [1], dims: [1], value: 0 }, /neurons or dims, not both/);
  err({ hook: 'blocks.1.mlp.hook_post', neurons: [], scale: 0 }, /neurons is empty \(leave it out for all\)/);
  err({ hook: 'blocks.1.mlp.hook_post', op: 'double', value: 2 }, /op 'double' is not one of scale, set, add/);
  err({ hook: 'blocks.1.mlp.hook_post', op: 'scale' }, /scale needs a value/);
  err({ hook: 'blocks.1.hook_mlp_out', op: 'add' }, /add needs a value or a vector/);
  err({ hook: 'blocks.1.hook_mlp_out', op: 'set', value: 1, vector: [1] }, /a value or a vector, not both/);
  err({ hook: 'hook_mlp_out', op: 'set' }, /no layer/);
  err({ layer: 2, hook: 'blocks.1.hook_mlp_out', op: 'set' }, /layer 2 and hook blocks\.1\.hook_mlp_out disagree/);
  m.dispose();
});

test('activation patching: where the two prompts differ it restores everything (1 exactly), elsewhere nothing (0 exactly); the last residual restores all; the Worker agrees', async () => {
  const m = await loadModel(DEMO, { threads: 1 });
  const clean = m.tokenizer.encode('I flew from Paris to Oslo. I flew from Paris to');
  const star = 3, corrupted = clean.slice();
  corrupted[star] = m.tokenizer.encode(' Rome')[0]; // one token differs
  const z = m.forward(clean, { stats: false }).logits;
  const [a, b] = [...z.keys()].sort((x, y) => z[y] - z[x]);
  const T = clean.length, L = m.nLayers;
  for (const metric of [{ logitDiff: [a, b] }, 'kl']) {
    const r = m.activationPatching(clean, corrupted, { metric });
    assert.notEqual(r.clean, r.corrupted, 'the corruption changes the metric');
    assert.equal(r.value.length, L);
    assert.equal(r.value[0].length, T);
    assert.equal(r.restored[0][star], 1, 'the embedding of the changed token, patched back: all restored');
    for (let p = 0; p < T; p++) if (p !== star) assert.equal(r.restored[0][p], 0, `layer 0, position ${p}: nothing to restore`);
    for (let l = 1; l < L; l++) for (let p = 0; p < star; p++) assert.equal(r.restored[l][p], 0, `layer ${l}, position ${p} comes before the change`);
    const lastRes = m.activationPatching(clean, corrupted, { metric, hook: 'hook_resid_post', layers: [L - 1], positions: [T - 1] });
    assert.equal(lastRes.restored[0][0], 1, 'the last residual stream decides the prediction');
  }
  const mlp = m.activationPatching(clean, corrupted, { metric: { logitDiff: [a, b] }, hook: 'hook_mlp_out' });
  const w = await loadModelInWorker(DEMO, { threads: 1 });
  assert.deepEqual(await w.activationPatching(clean, corrupted, { metric: { logitDiff: [a, b] }, hook: 'hook_mlp_out' }), mlp);
  await w.dispose();
  assert.throws(() => m.activationPatching(clean, corrupted.slice(1), { metric: 'kl' }), (e) => e.code === 'E_ARG' && /same length/.test(e.message));
  assert.throws(() => m.activationPatching(clean, corrupted, { metric: { logitDiff: [a] } }), (e) => e.code === 'E_ARG' && /metric/.test(e.message));
  assert.throws(() => m.activationPatching(clean, corrupted, { metric: 'kl', hook: 'hook_nothing' }), (e) => e.code === 'E_ARG');
  m.dispose();
});

for (const [label, dir] of MODELS) {
  test(`${label}: the prediction decomposed into the embedding, every mixer and every MLP sums to the model's logit`, async () => {
    const m = await loadModel(dir, { threads: 1, exact: true });
    const d = m.decomposePrediction(IDS);
    assert.equal(d.parts.length, 1 + 2 * m.nLayers);
    assert.deepEqual([...new Set(d.parts.map((q) => q.kind))].sort(), label.startsWith('qwen') ? ['attention', 'deltanet', 'embed', 'mlp'] : ['attention', 'embed', 'mlp']);
    assert.ok(Math.abs(d.sum - d.logit) <= 1e-5 * Math.max(1, Math.abs(d.logit)), `sum ${d.sum} vs logit ${d.logit}`);
    const z = m.forward(IDS, { stats: false }).logits;
    assert.equal(d.token, [...z.keys()].reduce((a, b) => (z[b] > z[a] ? b : a), 0), 'the default token is the top prediction');
    const other = d.token === 0 ? 1 : 0;
    const diff = m.decomposePrediction(IDS, { logitDiff: [d.token, other] }), o = m.decomposePrediction(IDS, { token: other });
    diff.parts.forEach((q, i) => assert.ok(Math.abs(q.value - (d.parts[i].value - o.parts[i].value)) < 1e-4, q.name));
    const at2 = m.decomposePrediction(IDS, { position: 2 });
    assert.equal(at2.position, 2);
    assert.ok(Math.abs(at2.sum - at2.logit) <= 1e-5 * Math.max(1, Math.abs(at2.logit)));
    assert.throws(() => m.decomposePrediction(IDS, { position: T }), (e) => e.code === 'E_ARG');
    // one layer's MLP part split per neuron: the neurons' terms sum to that part; the top neuron's
    // term equals its activation times what its down_proj column writes into that logit
    const L = m.nLayers - 1, byNeuron = m.decomposePrediction(IDS, { neurons: L });
    const mlpPart = byNeuron.parts.find((q) => q.kind === 'mlp' && q.layer === L).value;
    assert.equal(byNeuron.neurons.values.length, m.config.intermediate_size);
    assert.ok(Math.abs(byNeuron.neurons.sum - mlpPart) <= 1e-4 * Math.max(1, Math.abs(mlpPart)), `neurons ${byNeuron.neurons.sum} vs the MLP part ${mlpPart}`);
    const j = [...byNeuron.neurons.values.keys()].reduce((x, y) => (Math.abs(byNeuron.neurons.values[y]) > Math.abs(byNeuron.neurons.values[x]) ? y : x), 0);
    const post = m.forward(IDS, { hooks: [`blocks.${L}.mlp.hook_post`], stats: false }).hooks[`blocks.${L}.mlp.hook_post`];
    const I = m.config.intermediate_size, pLast = IDS.length - 1;
    const direct = m.neuronOutput(L, j).logits[byNeuron.token] * post[pLast * I + j] * byNeuron.scale;
    assert.ok(Math.abs(direct - byNeuron.neurons.values[j]) <= 1e-4 * Math.max(1, Math.abs(direct)), `neuron ${j}: ${byNeuron.neurons.values[j]} vs ${direct}`);
    const nd = m.decomposePrediction(IDS, { neurons: 0, logitDiff: [d.token, other] });
    const mlp0 = nd.parts.find((q) => q.kind === 'mlp' && q.layer === 0).value;
    assert.ok(Math.abs(nd.neurons.sum - mlp0) <= 1e-4 * Math.max(1, Math.abs(mlp0)), 'with a logit difference too');
    assert.throws(() => m.decomposePrediction(IDS, { neurons: m.nLayers }), (e) => e.code === 'E_ARG' && /neurons: layer/.test(e.message));
    m.dispose();
  });
}

test('attention patterns (blocks.L.attn.hook_pattern): [head][query][key], causal rows that sum to 1, decode rows equal the prefill rows; DeltaNet layers have none', async () => {
  const m = await loadModel(DEMO, { threads: 1 });
  const ids = m.tokenizer.encode('I flew from Paris to Tokyo last week. The food was not bad at all. I flew');
  const n = ids.length, nh = m.config.num_attention_heads, name = 'blocks.3.attn.hook_pattern';
  const P = m.forward(ids, { hooks: [name], stats: false, logits: 'none' }).hooks[name];
  assert.equal(P.length, nh * n * n);
  for (let h = 0; h < nh; h++) for (let t = 0; t < n; t++) {
    let s = 0;
    for (let u = 0; u < n; u++) { const v = P[(h * n + t) * n + u]; if (u > t) assert.equal(v, 0, 'no weight on later tokens'); else { assert.ok(v >= 0); s += v; } }
    assert.ok(Math.abs(s - 1) < 1e-5, `head ${h}, query ${t}: the weights sum to ${s}`);
  }
  assert.equal(P[0], 1, 'the first token can only look at itself');
  const two = await loadModel(DEMO, { threads: 2 }); // heads shared over threads: the same weights, bit for bit
  assert.deepEqual(two.forward(ids, { hooks: [name], stats: false, logits: 'none' }).hooks[name], P);
  two.dispose();
  // one decode step: its row has k + 1 keys, the same as row k of the prefill (the one-query kernel vs the blocked one)
  const k = n - 1;
  m.forward(ids.slice(0, k), { stats: false, logits: 'none' });
  const d = m.forward([ids[k]], { continue: true, hooks: [name], stats: false, logits: 'none' }).hooks[name];
  assert.equal(d.length, nh * n);
  for (let h = 0; h < nh; h++) for (let u = 0; u < n; u++) assert.ok(Math.abs(d[h * n + u] - P[(h * n + k) * n + u]) < 1e-5);
  assert.throws(() => m.forward(ids, { hooks: ['blocks.99.attn.hook_pattern'] }), (e) => e.code === 'E_ARG' && /layer 99 does not exist/.test(e.message));
  m.dispose();
  const q = await loadModel(qwenDir, { threads: 1 });
  const full = q.info().mixers.indexOf('full'), lin = q.info().mixers.indexOf('linear');
  const qp = q.forward(IDS, { hooks: [`blocks.${full}.attn.hook_pattern`], stats: false }).hooks[`blocks.${full}.attn.hook_pattern`];
  assert.equal(qp.length, q.config.num_attention_heads * T * T);
  assert.throws(() => q.forward(IDS, { hooks: [`blocks.${lin}.attn.hook_pattern`] }), (e) => e.code === 'E_ARG' && /Gated DeltaNet layer, which has no attention pattern/.test(e.message));
  q.dispose();
});

test('every operation at chosen positions gives in token-by-token decode what it gives in prefill', async () => {
  const m = await loadModel(DEMO, { threads: 1 });
  const V = m.config.vocab_size, H = m.config.hidden_size;
  const vec = Float32Array.from({ length: H }, (_, i) => Math.cos(i) * 0.3);
  const cases = [
    { hook: 'blocks.2.mlp.hook_post', op: 'scale', value: 0, neurons: [3, 40], positions: [1, 4] },
    { hook: 'blocks.4.hook_resid_mid', op: 'set', vector: vec, positions: [2] },
    { hook: 'blocks.6.hook_attn_out', op: 'add', value: 0.2, dims: [0, 7, 9] },
    { hook: 'blocks.1.mlp.hook_pre', op: 'add', value: -1 },
    { hook: 'blocks.9.hook_mlp_out', op: 'set', value: 0, positions: [5] },
  ];
  for (const iv of cases) {
    const pre = m.forward(IDS, { logits: 'all', stats: false, interventions: [iv] }).logits;
    m.reset();
    let worst = 0;
    for (let t = 0; t < T; t++) {
      const step = m.forward([IDS[t]], { continue: true, logits: 'last', stats: false, interventions: [iv] }).logits;
      for (let i = 0; i < V; i++) worst = Math.max(worst, Math.abs(step[i] - pre[t * V + i]));
    }
    assert.ok(worst < 1e-4, `${iv.hook} ${iv.op}: decode differs from prefill by ${worst}`);
  }
  m.dispose();
});

test('attention patterns match the float64 reference (Llama with q/k norm, and the Qwen3.5 hybrid)', async () => {
  const { Reference } = await import('./reference/reference.js');
  const llamaDir = tmpDir('iv-llama');
  execFileSync(process.execPath, [CLI, 'synth', '--config', path.join(ROOT, 'tests/configs/llama-qk.json'), '--seed', '7', '--out', llamaDir], { stdio: 'pipe' });
  for (const dir of [llamaDir, qwenDir]) {
    const m = await loadModel(dir, { threads: 1 });
    const ids = Array.from({ length: 24 }, (_, i) => (i * 37 + 3) % m.config.vocab_size);
    const ref = new Reference(dir).run(ids).patterns;
    const nh = m.config.num_attention_heads, n = ids.length;
    let worst = 0;
    for (const l of Object.keys(ref).map(Number)) {
      const name = `blocks.${l}.attn.hook_pattern`;
      const P = m.forward(ids, { hooks: [name], stats: false, logits: 'none' }).hooks[name];
      for (let h = 0; h < nh; h++) for (let t = 0; t < n; t++) for (let u = 0; u <= t; u++) worst = Math.max(worst, Math.abs(P[(h * n + t) * n + u] - ref[l][h][t][u]));
    }
    assert.ok(Object.keys(ref).length > 0);
    assert.ok(worst < 1e-4, `${dir}: worst |engine − float64| = ${worst}`);
    console.log(`# attention patterns vs float64 (${path.basename(dir)}): ${worst.toExponential(2)}`);
    m.dispose();
  }
});

test('steeringVector: the difference of mean activations; a zero vector steers nothing (bit for bit); the vector changes generation; Worker and bad input', async () => {
  const m = await loadModel(DEMO, { threads: 1 });
  const hook = 'blocks.5.hook_resid_post', H = m.config.hidden_size;
  const pos = ['I love it', 'This is great'], neg = ['I hate it', 'This is awful'];
  const s = m.steeringVector(pos, neg, { hook });
  assert.equal(s.vector.length, H);
  assert.deepEqual(s.count, [2, 2]);
  // by hand: each prompt's last-token activation, averaged, subtracted
  const last = (t) => { const ids = m.tokenizer.encode(t, { addSpecial: true }), v = m.forward(ids, { hooks: [hook], stats: false }).hooks[hook]; return v.subarray((ids.length - 1) * H, ids.length * H); };
  const want = Array.from({ length: H }, (_, i) => (last(pos[0])[i] + last(pos[1])[i]) / 2 - (last(neg[0])[i] + last(neg[1])[i]) / 2);
  s.vector.forEach((v, i) => assert.ok(Math.abs(v - want[i]) < 1e-5, `component ${i}`));
  const zero = m.steeringVector(pos, pos, { hook, at: 'mean' });
  assert.ok(zero.vector.every((v) => v === 0) && zero.norm === 0);
  const ids = m.tokenizer.encode('The food was');
  const base = m.forward(ids, { stats: false }).logits;
  assert.deepEqual(m.forward(ids, { stats: false, interventions: [{ hook, op: 'add', vector: zero.vector }] }).logits, base, 'a zero vector is the identity');
  const gen = async (iv) => { const out = []; for await (const t of m.generate(ids, { maxTokens: 8, ...(iv ? { interventions: iv } : {}) })) out.push(t.id); return out; };
  assert.notDeepEqual(await gen([{ hook, op: 'add', vector: Array.from(s.vector, (x) => 4 * x) }]), await gen(null), 'steering changes what is generated');
  assert.throws(() => m.steeringVector(pos, neg, { hook: 'hook_resid_post' }), (e) => e.code === 'E_ARG' && /blocks\.3\.hook_resid_post/.test(e.message));
  assert.throws(() => m.steeringVector(pos, [], { hook }), (e) => e.code === 'E_ARG' && /b must be a prompt/.test(e.message));
  assert.throws(() => m.steeringVector(pos, neg, { hook, at: 'first' }), (e) => e.code === 'E_ARG' && /at must be/.test(e.message));
  assert.throws(() => m.steeringVector(pos, neg, { hook: 'blocks.99.hook_resid_post' }), (e) => e.code === 'E_ARG');
  const w = await loadModelInWorker(DEMO, { threads: 1 });
  assert.deepEqual(Array.from((await w.steeringVector(pos, neg, { hook })).vector), Array.from(s.vector));
  await w.dispose();
  m.dispose();
});
