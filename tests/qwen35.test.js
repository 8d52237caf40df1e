// Qwen3.5 hybrid family on three synthetic configs against the independent float64 reference,
// in wasm and natively; chunked prefill vs recurrence; decode vs prefill; continued prefill;
// malformed configs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { loadModel } from '../js/index.js';
import { Reference } from './reference/reference.js';
import { CLI, ROOT, tmpDir } from './helpers.js';

const NATIVE = path.join(ROOT, 'build/native/mlpscope-native');
const configs = ['qwen35-a', 'qwen35-b', 'qwen35-c'];
const lengths = [1, 7, 64, 200];
const idsFor = (T, V) => Array.from({ length: T }, (_, i) => (i * 131 + 7 + ((i * i) % 13)) % V);

function synth(cfg, seed = 3) {
  const out = tmpDir(cfg);
  execFileSync(process.execPath, [CLI, 'synth', '--config', path.join(ROOT, 'tests/configs', cfg + '.json'), '--seed', String(seed), '--out', out], { stdio: 'pipe' });
  return out;
}

/** max |a-b| / max|b| over a vector (relative to the vector's scale) */
function relVec(a, b) {
  let w = 0, s = 0;
  for (let i = 0; i < b.length; i++) { w = Math.max(w, Math.abs(a[i] - b[i])); s = Math.max(s, Math.abs(b[i])); }
  return w / s;
}
/** max elementwise relative error of [layer][pos] statistics */
function relStats(ours, ref, T, width = 1) {
  let w = 0;
  ref.forEach((row, l) => row.forEach((g, t) => {
    const gs = Array.isArray(g) ? g : [g];
    gs.forEach((gv, h) => { const o = ours(l, t, h); w = Math.max(w, Math.abs(o - gv) / Math.max(Math.abs(gv), 1e-6)); });
  }));
  return w;
}
const STATS = ['resid_pre_l2', 'attn_out_l2', 'resid_mid_l2', 'mlp_out_l2', 'resid_post_l2', 'mlp_ratio', 'gdn_decay', 'gdn_beta'];

for (const cfg of configs) {
  test(`${cfg}: wasm and native match the float64 reference (T = ${lengths.join(', ')})`, async () => {
    const dir = synth(cfg);
    const model = await loadModel(dir, { contextLength: 256 });
    const V = model.config.vocab_size;
    const worst = { wasmLogits: 0, wasmStats: 0, nativeLogits: 0, nativeStats: 0, stateNorm: 0 };
    for (const T of lengths) {
      const ids = idsFor(T, V);
      const ref = new Reference(dir).run(ids);
      const r = model.forward(ids, { logits: 'all' });
      for (let t = 0; t < T; t++) worst.wasmLogits = Math.max(worst.wasmLogits, relVec(r.logits.subarray(t * V, (t + 1) * V), ref.logits[t]));
      for (const k of STATS) {
        if (!r.stats[k]) continue;
        worst.wasmStats = Math.max(worst.wasmStats, relStats((l, t) => r.stats[k][l][t], ref.stats[k].map((row) => (row.length ? row : Array(T).fill(null))).map((row, l) => (model.info().mixers[l] === 'full' && k.startsWith('gdn') ? [] : row)), T));
      }
      const H = r.stats.gdn_heads;
      worst.stateNorm = Math.max(worst.stateNorm, relStats((l, t, h) => r.stats.gdn_state_norm[l][t * H + h], ref.stats.gdn_state_norm, T));
      // each DeltaNet head's decay exp(g) and write strength beta, per token
      for (const k of ['gdn_decay_head', 'gdn_beta_head', 'gdn_log_decay_head'])
        worst.headGates = Math.max(worst.headGates ?? 0, relStats((l, t, h) => r.stats[k][l][t * H + h], ref.stats[k], T));
      // native build, same weights
      const nat = JSON.parse(execFileSync(NATIVE, ['forward', dir, '--ids', ids.join(',')], { maxBuffer: 1 << 28, encoding: 'utf8' }));
      worst.nativeLogits = Math.max(worst.nativeLogits, relVec(nat.logits, ref.logits[T - 1]));
      for (const k of STATS) worst.nativeStats = Math.max(worst.nativeStats, relStats((l, t) => nat[k][l][t], ref.stats[k].map((row, l) => (model.info().mixers[l] === 'full' && k.startsWith('gdn') ? [] : row)), T));
      worst.stateNorm = Math.max(worst.stateNorm, relStats((l, t, h) => nat.gdn_state_norm[l][t * H + h], ref.stats.gdn_state_norm, T));
    }
    console.log(`# ${cfg}: ${JSON.stringify(Object.fromEntries(Object.entries(worst).map(([k, v]) => [k, Number(v.toExponential(2))])))}`);
    for (const [k, v] of Object.entries(worst)) assert.ok(v < 1e-4, `${cfg} ${k}: ${v}`);
    model.dispose();
  });
}

test('chunked Gated DeltaNet prefill equals the recurrence; decode equals prefill; prefill(A)+prefill(B) = prefill(A+B)', async () => {
  for (const cfg of configs) {
    const dir = synth(cfg, 11);
    const model = await loadModel(dir, { contextLength: 256 });
    const ids = idsFor(200, model.config.vocab_size);
    const hooks = Array.from({ length: model.nLayers }, (_, l) => `blocks.${l}.hook_resid_post`);
    model.setDeltaNetMode({ recurrent: true });
    const rec = model.forward(ids, { hooks });
    for (const chunk of [64, 16, 5]) {
      model.setDeltaNetMode({ chunk });
      const ch = model.forward(ids, { hooks });
      for (const h of hooks) assert.ok(relVec(ch.hooks[h], rec.hooks[h]) < 1e-5, `${cfg} chunk ${chunk} ${h}: ${relVec(ch.hooks[h], rec.hooks[h])}`);
      assert.ok(relVec(ch.logits, rec.logits) < 1e-5);
    }
    model.setDeltaNetMode({});
    for (const T of [2, 65, 200]) {
      const full = model.forward(ids.slice(0, T), { stats: false }).logits;
      model.forward(ids.slice(0, T - 1), { stats: false });
      const step = model.forward([ids[T - 1]], { stats: false, continue: true }).logits;
      assert.ok(relVec(step, full) < 1e-5, `${cfg} decode vs prefill at T=${T}: ${relVec(step, full)}`);
    }
    for (const split of [1, 37, 64, 130]) {
      const whole = model.forward(ids, { stats: false }).logits;
      model.forward(ids.slice(0, split), { stats: false });
      const two = model.forward(ids.slice(split), { stats: false, continue: true }).logits;
      assert.ok(relVec(two, whole) < 1e-5, `${cfg} split ${split}: ${relVec(two, whole)}`);
      const nat = JSON.parse(execFileSync(NATIVE, ['forward', dir, '--ids', ids.join(','), '--split', String(split)], { maxBuffer: 1 << 28, encoding: 'utf8' }));
      assert.ok(relVec(nat.logits, whole) < 1e-5, `${cfg} native split ${split}`);
    }
    model.dispose();
  }
});

test('Gated DeltaNet statistics: decay in (0, 1], beta in (0, 1), per head and per token (decode = prefill), one state norm per value head', async () => {
  const dir = synth('qwen35-b');
  const model = await loadModel(dir);
  const r = model.forward(idsFor(20, model.config.vocab_size));
  const mixers = model.info().mixers;
  assert.deepEqual(mixers, ['linear', 'full', 'linear', 'linear']);
  assert.equal(r.stats.gdn_heads, 6);
  for (let l = 0; l < 4; l++) for (let t = 0; t < 20; t++) {
    if (mixers[l] === 'full') { assert.equal(r.stats.gdn_decay[l][t], 0); continue; }
    assert.ok(r.stats.gdn_decay[l][t] > 0 && r.stats.gdn_decay[l][t] <= 1);
    assert.ok(r.stats.gdn_beta[l][t] > 0 && r.stats.gdn_beta[l][t] < 1);
    for (let h = 0; h < 6; h++) assert.ok(r.stats.gdn_state_norm[l][t * 6 + h] > 0);
    // per head: in range, and their means are the per-token means above
    const d = r.stats.gdn_decay_head[l].subarray(t * 6, t * 6 + 6), b = r.stats.gdn_beta_head[l].subarray(t * 6, t * 6 + 6);
    assert.ok(d.every((v) => v > 0 && v <= 1) && b.every((v) => v > 0 && v < 1));
    assert.ok(Math.abs(d.reduce((x, y) => x + y, 0) / 6 - r.stats.gdn_decay[l][t]) < 1e-6);
    assert.ok(Math.abs(b.reduce((x, y) => x + y, 0) / 6 - r.stats.gdn_beta[l][t]) < 1e-6);
  }
  // decode (one token per call) gives the same per-head gates as the prefill
  const ids = idsFor(20, model.config.vocab_size);
  model.forward(ids.slice(0, 12));
  for (let t = 12; t < 20; t++) {
    const s = model.forward([ids[t]], { continue: true }).stats;
    for (const l of [0, 2, 3]) for (let h = 0; h < 6; h++) {
      assert.ok(Math.abs(s.gdn_decay_head[l][h] - r.stats.gdn_decay_head[l][t * 6 + h]) < 1e-5, `decay l${l} t${t} h${h}`);
      assert.ok(Math.abs(s.gdn_beta_head[l][h] - r.stats.gdn_beta_head[l][t * 6 + h]) < 1e-5, `beta l${l} t${t} h${h}`);
    }
  }
  model.dispose();
});

test('malformed Qwen3.5 configs and weight sets give typed errors', async () => {
  const base = JSON.parse(fs.readFileSync(path.join(ROOT, 'tests/configs/qwen35-a.json'), 'utf8'));
  const bad = [
    [(c) => { c.layer_types = ['linear_attention', 'full_attention', 'sliding_attention', 'full_attention']; }, /layer_types\[2\]/],
    [(c) => { c.layer_types = ['linear_attention']; }, /layer_types must be an array of num_hidden_layers/],
    [(c) => { c.linear_num_value_heads = 3; }, /multiple of linear_num_key_heads/],
    [(c) => { c.num_key_value_heads = 3; }, /multiple of num_key_value_heads/],
    [(c) => { c.head_dim = 23; }, /head_dim \(23\) must be even/],
    [(c) => { delete c.linear_key_head_dim; }, /linear_key_head_dim/],
    [(c) => { c.hidden_size = 0; }, /hidden_size/],
  ];
  for (const [edit, msg] of bad) {
    const cfg = structuredClone(base);
    edit(cfg.config);
    const f = path.join(tmpDir('badcfg'), 'c.json');
    fs.writeFileSync(f, JSON.stringify(cfg));
    const r = spawnSync(process.execPath, [CLI, 'synth', '--config', f, '--out', tmpDir('badout')], { encoding: 'utf8' });
    assert.equal(r.status, 1, r.stderr);
    assert.match(r.stderr, /E_CONFIG/);
    assert.match(r.stderr, msg);
  }
  // a weight set missing a GDN tensor, and one listing a tensor of the wrong mixer kind
  const dir = synth('qwen35-a');
  const man = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
  const drop = structuredClone(man);
  drop.tensors = drop.tensors.filter((t) => t.name !== 'layers.0.linear_attn.A_log');
  fs.writeFileSync(path.join(dir, 'manifest.json'), JSON.stringify(drop));
  await assert.rejects(loadModel(dir), (e) => e.code === 'E_TENSOR' && /layers\.0\.linear_attn\.A_log: missing/.test(e.message));
  const swap = structuredClone(man);
  swap.config.layer_types = ['full_attention', 'full_attention', 'linear_attention', 'full_attention'];
  fs.writeFileSync(path.join(dir, 'manifest.json'), JSON.stringify(swap));
  await assert.rejects(loadModel(dir), (e) => e.code === 'E_TENSOR' && /not part of a qwen3_5 model/.test(e.message));
  const conv = structuredClone(man);
  conv.tensors.find((t) => t.name === 'layers.0.linear_attn.conv1d').dtype = 'q8_0';
  fs.writeFileSync(path.join(dir, 'manifest.json'), JSON.stringify(conv));
  await assert.rejects(loadModel(dir), (e) => e.code === 'E_TENSOR' && /must be f32/.test(e.message));
});
