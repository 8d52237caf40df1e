// What quantization costs on a real trained model (stories260K): greedy agreement with f32 and
// mean KL(f32 || quantized) over every position of the golden sequences.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadModel } from '../js/index.js';
import { convertStories, golden, NEEDS_STORIES } from './helpers.js';

const G = NEEDS_STORIES ? null : golden();
const f32 = NEEDS_STORIES ? null : await loadModel(convertStories('f32'));

function logSoftmax(l) {
  let mx = -Infinity;
  for (const v of l) mx = Math.max(mx, v);
  let z = 0;
  for (const v of l) z += Math.exp(v - mx);
  const lz = Math.log(z) + mx;
  return Float64Array.from(l, (v) => v - lz);
}

async function greedy(model, ids, n) {
  const out = [];
  for await (const t of model.generate(ids, { maxTokens: n, temperature: 0, stop: [] })) out.push(t.id);
  return out;
}

export async function quality(dtype, opts = {}) {
  const q = await loadModel(convertStories(dtype), opts);
  const V = f32.config.vocab_size;
  let kl = 0, n = 0, agree = Infinity;
  for (const c of G.cases) {
    const a = f32.forward(c.greedy_ids, { logits: 'all', stats: false }).logits, b = q.forward(c.greedy_ids, { logits: 'all', stats: false }).logits;
    for (let t = 0; t < c.greedy_ids.length; t++) {
      const p = logSoftmax(a.subarray(t * V, (t + 1) * V)), r = logSoftmax(b.subarray(t * V, (t + 1) * V));
      let s = 0;
      for (let i = 0; i < V; i++) s += Math.exp(p[i]) * (p[i] - r[i]);
      kl += s; n++;
    }
    const ga = await greedy(f32, c.prompt_ids, 48), gb = await greedy(q, c.prompt_ids, 48);
    let k = 0;
    while (k < ga.length && ga[k] === gb[k]) k++;
    agree = Math.min(agree, k);
  }
  const info = q.info();
  q.dispose();
  return { kl: kl / n, agree, bytes: info.memory.weights, positions: n };
}

test('q8_0 (exact activations) on stories260K: greedy agrees with f32 for 32+ tokens, mean KL < 0.01', { skip: NEEDS_STORIES }, async () => {
  const r = await quality('q8', { exact: true });
  console.log(`# stories260K q8_0: mean KL(f32||q8) = ${r.kl.toExponential(3)} over ${r.positions} positions; greedy identical for the first ${r.agree} of 48 generated tokens on every golden prompt; ${r.bytes} weight bytes`);
  assert.ok(r.kl < 0.01, `KL ${r.kl}`);
  assert.ok(r.agree >= 32, `greedy agreement ${r.agree}`);
});

test('q4_0 (exact activations) on stories260K: measured and stated', { skip: NEEDS_STORIES }, async () => {
  const r = await quality('q4', { exact: true });
  console.log(`# stories260K q4_0: mean KL(f32||q4) = ${r.kl.toExponential(3)} over ${r.positions} positions; greedy identical for the first ${r.agree} of 48 generated tokens on every golden prompt; ${r.bytes} weight bytes`);
  assert.ok(r.kl < 0.5, `KL ${r.kl}: q4 is far off`);
});

// int8 activations (the 4-row interleaved kernels) add the rounding of every matmul input to int8
// per block of 32: measured on top of each weight type.
for (const dt of ['q8', 'q4']) {
  test(`${dt} with int8 activations on stories260K: measured and stated`, { skip: NEEDS_STORIES }, async () => {
    const r = await quality(dt, { int8Activations: true });
    console.log(`# stories260K ${dt} + int8 activations: mean KL(f32||${dt}+int8 act.) = ${r.kl.toExponential(3)} over ${r.positions} positions; greedy identical for the first ${r.agree} of 48 generated tokens on every golden prompt`);
    assert.ok(r.kl < (dt === 'q8' ? 0.05 : 0.5), `KL ${r.kl}`);
  });
}

test('q8_0 and q4_0 on an untied synthetic Qwen3.5 model (weights not pre-rounded): measured', async () => {
  const { execFileSync } = await import('node:child_process');
  const path = await import('node:path');
  const { CLI, ROOT, tmpDir } = await import('./helpers.js');
  const cfg = path.join(ROOT, 'tests/configs/qwen35-q.json');
  const made = {};
  const make = (dt) => made[dt] ??= (() => { const d = tmpDir('qq-' + dt); execFileSync(process.execPath, [CLI, 'synth', '--config', cfg, '--seed', '2', '--dtype', dt, '--out', d], { stdio: 'pipe' }); return d; })();
  const ref = await loadModel(make('f32'));
  const V = ref.config.vocab_size;
  const ids = Array.from({ length: 64 }, (_, i) => (i * 37 + 1) % V);
  const a = ref.forward(ids, { logits: 'all', stats: false }).logits;
  for (const [dt, int8Activations] of [['q8', false], ['q4', false], ['q8', true], ['q4', true]]) {
    const m = await loadModel(make(dt), { int8Activations }); // false: exact activations
    const b = m.forward(ids, { logits: 'all', stats: false }).logits;
    let kl = 0, top1 = 0;
    for (let t = 0; t < ids.length; t++) {
      const p = logSoftmax(a.subarray(t * V, (t + 1) * V)), r = logSoftmax(b.subarray(t * V, (t + 1) * V));
      for (let i = 0; i < V; i++) kl += Math.exp(p[i]) * (p[i] - r[i]);
      let ia = 0, ib = 0;
      for (let i = 1; i < V; i++) { if (p[i] > p[ia]) ia = i; if (r[i] > r[ib]) ib = i; }
      top1 += ia === ib;
    }
    kl /= ids.length;
    const what = dt + (int8Activations ? ' + int8 activations (the default)' : ' + exact activations');
    console.log(`# synthetic qwen35-q (untied, 128 wide) ${what}: mean KL(f32||${what}) = ${kl.toExponential(3)}, top-1 agreement ${top1}/${ids.length}`);
    assert.ok(kl < (dt === 'q8' ? 0.01 : 0.5));
    m.dispose();
  }
  ref.dispose();
});
