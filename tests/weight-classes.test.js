// A gated neuron's class from its weights (js/geometry.js, Gerstner & Schütze 2025): the engine's
// cosines and norms against a float64 computation from the weight files (q8 and f32, with and
// without the MLP norm's gain), the class rule against the paper's table written out case by case,
// neurons planted with known geometry, the joint flip of w_in and w_out, the Worker, the CLI and
// typed errors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { loadModel, loadModelInWorker, weightClassOf, WEIGHT_CLASSES } from '../js/index.js';
import { loadWeights } from './reference/reference.js';
import { CLI, ROOT, convertStories, tmpDir, NEEDS_STORIES } from './helpers.js';

const synth = (tag, dtype) => {
  const d = tmpDir(tag);
  execFileSync(process.execPath, [CLI, 'synth', '--config', path.join(ROOT, 'tests/configs/qwen35-a.json'), '--seed', '5', '--dtype', dtype, '--out', d], { stdio: 'pipe' });
  return d;
};

/** The paper's table, case by case: the class of the rounded (cos(in,out), cos(gate,out)) pair, and
 *  the cos(gate,in) a typical member has. */
function tableClass(gi, go, io, t) {
  const s = (x) => (x > t ? 1 : x < -t ? -1 : 0);
  const [GI, GO, IO] = [s(gi), s(go), s(io)];
  if (IO === 1 && GO !== 0) return ['enrichment', GI !== GO];
  if (IO === 1) return ['conditional_enrichment', GI !== 0];
  if (IO === -1 && GO !== 0) return ['depletion', GI !== -GO];
  if (IO === -1) return ['conditional_depletion', GI !== 0];
  if (GO !== 0) return ['proportional_change', GI !== 0];
  return ['orthogonal_output', false];
}

/** float64 cosines and norms of neuron k of layer l, straight from the weights */
function bruteForce(W, qwen, H, I, l, k, fold) {
  const g = W[`layers.${l}.mlp.gate_proj`], u = W[`layers.${l}.mlp.up_proj`], d = W[`layers.${l}.mlp.down_proj`], n = W[`layers.${l}.post_attention_layernorm`];
  let gg = 0, uu = 0, oo = 0, gu = 0, go = 0, uo = 0;
  for (let h = 0; h < H; h++) {
    const w = fold ? (qwen ? 1 + n[h] : n[h]) : 1, a = w * g[k * H + h], b = w * u[k * H + h], o = d[h * I + k];
    gg += a * a; uu += b * b; oo += o * o; gu += a * b; go += a * o; uo += b * o;
  }
  return { cosGateIn: gu / Math.sqrt(gg * uu), cosGateOut: go / Math.sqrt(gg * oo), cosInOut: uo / Math.sqrt(uu * oo), normGate: Math.sqrt(gg), normIn: Math.sqrt(uu), normOut: Math.sqrt(oo) };
}

test('the class rule: the paper\'s prototypes, atypical members, and the joint flip of w_in and w_out changes nothing', () => {
  const t = 0.5;
  for (const [gi, go, io, want] of [[1, 0.9, 0.9, 'enrichment'], [-1, -0.9, 0.9, 'enrichment'], [1, -0.9, -0.9, 'depletion'], [-1, 0.9, -0.9, 'depletion'],
    [0, 0, 0.9, 'conditional_enrichment'], [0, 0, -0.9, 'conditional_depletion'], [0, 0.9, 0, 'proportional_change'], [0, -0.9, 0, 'proportional_change'],
    [0, 0, 0, 'orthogonal_output'], [0.9, 0.1, -0.2, 'orthogonal_output']]) {
    const c = weightClassOf(gi, go, io, t);
    assert.deepEqual([c.class, c.atypical], [want, false], `${[gi, go, io]}`);
    assert.equal(WEIGHT_CLASSES[c.code], want);
  }
  assert.deepEqual(weightClassOf(1, -0.9, 0.9, t).atypical, true, 'gate against out while in follows out: atypical enrichment');
  assert.deepEqual(weightClassOf(0.9, 0, 0.9, t).atypical, true, 'a conditional class whose gate reads w_in: atypical');
  let x = 7;
  const rnd = () => ((x = (x * 1103515245 + 12345) % 2147483648) / 2147483648) * 2 - 1;
  for (let i = 0; i < 2000; i++) {
    const gi = rnd(), go = rnd(), io = rnd(), tt = 0.05 + 0.9 * Math.abs(rnd());
    const a = weightClassOf(gi, go, io, tt), b = weightClassOf(-gi, -go, io, tt), [cls, aty] = tableClass(gi, go, io, tt);
    assert.deepEqual([a.class, a.atypical], [b.class, b.atypical], 'the joint flip');
    assert.deepEqual([a.class, a.atypical], [cls, aty], `the table at ${[gi, go, io, tt]}`);
  }
});

for (const [name, make, qwen, skip] of [
  ['qwen35-a (q8, zero-centred norms)', () => synth('geo-q8', 'q8'), true],
  ['stories260K (f32, plain norms)', () => convertStories('f32'), false, NEEDS_STORIES],
]) {
  test(`neuronWeightClasses on ${name}: every cosine and norm equals float64 from the weight files, classes by the table, counts and medians`, { skip }, async () => {
    const dir = make(), model = await loadModel(dir, { threads: 1 }), { W } = loadWeights(dir);
    const { hidden_size: H, intermediate_size: I, num_hidden_layers: L } = model.config;
    const seen = new Set();
    for (const foldNorm of [true, false]) {
      const t = 0.1; // low enough that every class occurs on random weights
      const r = model.neuronWeightClasses({ threshold: t, foldNorm });
      assert.equal(r.layers.length, L);
      assert.deepEqual(r.classes, WEIGHT_CLASSES);
      for (const got of r.layers) {
        const counts = Object.fromEntries(WEIGHT_CLASSES.map((c) => [c, 0]));
        let atypical = 0;
        for (let k = 0; k < I; k++) {
          const want = bruteForce(W, qwen, H, I, got.layer, k, foldNorm);
          for (const f of ['cosGateIn', 'cosGateOut', 'cosInOut']) assert.ok(Math.abs(got[f][k] - want[f]) < 1e-6, `layer ${got.layer} neuron ${k} ${f}: ${got[f][k]} vs ${want[f]}`);
          for (const f of ['normGate', 'normIn', 'normOut']) assert.ok(Math.abs(got[f][k] - want[f]) <= 1e-6 * want[f], `layer ${got.layer} neuron ${k} ${f}`);
          const cls = WEIGHT_CLASSES[got.classes[k]];
          counts[cls]++; atypical += got.atypical[k];
          seen.add(cls);
          // a cosine within float32 rounding of the threshold may round either way
          if ([want.cosGateIn, want.cosGateOut, want.cosInOut].some((c) => Math.abs(Math.abs(c) - t) < 1e-6)) continue;
          assert.deepEqual([cls, got.atypical[k] === 1], tableClass(want.cosGateIn, want.cosGateOut, want.cosInOut, t), `layer ${got.layer} neuron ${k}`);
        }
        assert.deepEqual(got.counts, counts);
        assert.equal(got.atypicalCount, atypical);
        const s = Array.from(got.cosInOut).sort((a, b) => a - b);
        assert.equal(got.medianCosInOut, I % 2 ? s[(I - 1) / 2] : (s[I / 2 - 1] + s[I / 2]) / 2);
      }
    }
    assert.equal(seen.size, WEIGHT_CLASSES.length, `every class occurs at threshold 0.1: ${[...seen]}`);
    // one neuron, as the layer has it
    const one = model.neuronWeightClass(L - 1, 3, { threshold: 0.1 }), lay = model.neuronWeightClasses({ layers: [L - 1], threshold: 0.1 }).layers[0];
    assert.equal(one.cosInOut, lay.cosInOut[3]);
    assert.equal(one.class, WEIGHT_CLASSES[lay.classes[3]]);
    model.dispose();
  });
}

test('neurons planted with a known geometry get their class (f32 weights edited in the weight file)', async () => {
  const dir = synth('geo-plant', 'f32');
  const man = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
  const H = man.config.hidden_size, I = man.config.intermediate_size, file = path.join(dir, man.shards[0].file);
  const buf = fs.readFileSync(file), f32 = (name) => { const t = man.tensors.find((x) => x.name === name); return new Float32Array(buf.buffer, buf.byteOffset + t.offset, t.bytes / 4); };
  // six orthonormal directions (Gram-Schmidt on fixed pseudo-random vectors)
  let x = 3;
  const e = [];
  for (let i = 0; i < 6; i++) {
    const v = Float64Array.from({ length: H }, () => ((x = (x * 69069 + 1) % 4294967296) / 4294967296) - 0.5);
    for (const b of e) { let d = 0; for (let h = 0; h < H; h++) d += v[h] * b[h]; for (let h = 0; h < H; h++) v[h] -= d * b[h]; }
    const n = Math.hypot(...v); e.push(v.map((y) => y / n));
  }
  const neg = (v) => v.map((y) => -y);
  const plants = [ // [w_gate, w_in, w_out, class]
    [e[0], e[0], e[0], 'enrichment'], [e[1], e[1], neg(e[1]), 'depletion'], [e[2], e[3], e[3], 'conditional_enrichment'],
    [e[2], e[3], neg(e[3]), 'conditional_depletion'], [e[4], e[5], e[4], 'proportional_change'], [e[0], e[5], e[2], 'orthogonal_output'],
    [e[0], neg(e[0]), neg(e[0]), 'enrichment'], [e[1], neg(e[1]), e[1], 'depletion'],
  ];
  const g = f32('layers.1.mlp.gate_proj'), u = f32('layers.1.mlp.up_proj'), d = f32('layers.1.mlp.down_proj');
  plants.forEach(([wg, wi, wo], k) => { for (let h = 0; h < H; h++) { g[k * H + h] = wg[h]; u[k * H + h] = wi[h]; d[h * I + k] = wo[h]; } });
  fs.writeFileSync(file, buf);
  man.shards[0].sha256 = crypto.createHash('sha256').update(buf).digest('hex');
  fs.writeFileSync(path.join(dir, 'manifest.json'), JSON.stringify(man));
  const model = await loadModel(dir, { threads: 1 });
  const r = model.neuronWeightClasses({ layers: [1], foldNorm: false }).layers[0];
  plants.forEach(([, , , want], k) => {
    assert.equal(WEIGHT_CLASSES[r.classes[k]], want, `planted neuron ${k}`);
    assert.equal(r.atypical[k], 0, `planted neuron ${k} is typical`);
  });
  assert.ok(Math.abs(r.cosInOut[0] - 1) < 1e-6 && Math.abs(r.cosInOut[1] + 1) < 1e-6 && Math.abs(r.cosGateIn[2]) < 1e-6);
  model.dispose();
});

test('neuronWeightClasses in a Worker, on the command line, and its typed errors', async () => {
  const dir = synth('geo-io', 'q8');
  const model = await loadModel(dir, { threads: 1 }), want = model.neuronWeightClasses({ layers: [0, 3] });
  const L = model.nLayers, I = model.config.intermediate_size;
  const w = await loadModelInWorker(dir, { threads: 1 });
  try {
    const got = await w.neuronWeightClasses({ layers: [0, 3] });
    assert.deepEqual(got.layers.map((l) => l.counts), want.layers.map((l) => l.counts));
    assert.deepEqual(Array.from(got.layers[1].cosInOut), Array.from(want.layers[1].cosInOut));
    assert.equal((await w.neuronWeightClass(3, 5)).cosGateOut, want.layers[1].cosGateOut[5]);
    await assert.rejects(w.neuronWeightClasses({ threshold: 1 }), { code: 'E_ARG', message: /threshold/ });
  } finally { await w.dispose(); }
  const cli = JSON.parse(execFileSync(process.execPath, [CLI, 'classes', dir, '--layers', '0,3', '--json'], { encoding: 'utf8' }));
  assert.deepEqual(cli.layers.map((l) => l.counts), want.layers.map((l) => l.counts));
  assert.equal(cli.threshold, 0.5);
  assert.match(execFileSync(process.execPath, [CLI, 'classes', dir], { encoding: 'utf8' }), /orth\./);
  for (const [opts, re] of [[{ layers: [L] }, /layers: layer 4 is not in 0\.\.3/], [{ threshold: 0 }, /threshold/], [{ threshold: '0.5' }, /threshold/],
    [{ foldNorm: 'yes' }, /foldNorm/], [{ layers: [1.5] }, /layers\[0\]/], [[], /options must be an object/]])
    assert.throws(() => model.neuronWeightClasses(opts), { code: 'E_ARG', message: re });
  assert.throws(() => model.neuronWeightClass(0, I), { code: 'E_ARG', message: new RegExp(`neuron ${I} is not an integer in 0\\.\\.${I - 1}`) });
  assert.throws(() => model.neuronWeightClass(-1, 0), { code: 'E_ARG', message: /layer -1/ });
  model.dispose();
  assert.throws(() => model.neuronWeightClasses(), { code: 'E_STATE' });
});
