// The JS API on the demo model (weights/demo, llama family): decode vs prefill, hook invariants, hooks vs stats, interventions,
// logit lens, generation determinism, typed errors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL, fileURLToPath } from 'node:url';
import { loadModel, MlpscopeError, demoModelUrl } from '../js/index.js';
import { ROOT, DEMO } from './helpers.js';

const dir = DEMO;
const model = await loadModel(dir, { contextLength: 128 });
const ids = model.tokenizer.encode('Lily went to Paris with her mom. They saw a big dog.');
const H = model.config.hidden_size, I = model.config.intermediate_size, L = model.nLayers, V = model.config.vocab_size;

test('decode after prefill equals a longer prefill (1e-5 relative)', () => {
  for (const T of [2, 7, ids.length]) {
    const full = model.forward(ids.slice(0, T), { stats: false }).logits;
    model.forward(ids.slice(0, T - 1), { stats: false });
    const step = model.forward([ids[T - 1]], { stats: false, continue: true }).logits;
    const scale = Math.max(...full.map(Math.abs));
    const worst = Math.max(...full.map((v, i) => Math.abs(v - step[i])));
    assert.ok(worst / scale < 1e-5, `T=${T}: ${worst / scale}`);
  }
});

test('residual stream invariants and hooks vs statistics', () => {
  const names = ['hook_resid_pre', 'hook_attn_out', 'hook_resid_mid', 'hook_mlp_out', 'hook_resid_post', 'mlp.hook_post'];
  const hooks = [];
  for (let l = 0; l < L; l++) for (const n of names) hooks.push(`blocks.${l}.${n}`);
  const r = model.forward(ids, { hooks, topK: 8 });
  const T = ids.length;
  const l2 = (a, t, w) => Math.hypot(...a.subarray(t * w, (t + 1) * w));
  for (let l = 0; l < L; l++) {
    const h = (n) => r.hooks[`blocks.${l}.${n}`];
    for (let i = 0; i < T * H; i++) {
      assert.ok(Math.abs(h('hook_resid_mid')[i] - (h('hook_resid_pre')[i] + h('hook_attn_out')[i])) < 1e-5);
      assert.ok(Math.abs(h('hook_resid_post')[i] - (h('hook_resid_mid')[i] + h('hook_mlp_out')[i])) < 1e-5);
    }
    if (l > 0) assert.deepEqual(h('hook_resid_pre'), r.hooks[`blocks.${l - 1}.hook_resid_post`]);
    for (let t = 0; t < T; t++) {
      assert.ok(Math.abs(r.stats.mlp_out_l2[l][t] - l2(h('hook_mlp_out'), t, H)) < 1e-4);
      assert.ok(Math.abs(r.stats.resid_post_l2[l][t] - l2(h('hook_resid_post'), t, H)) < 1e-4);
      const ratio = r.stats.mlp_ratio[l][t];
      assert.ok(ratio >= 0 && Number.isFinite(ratio));
      assert.ok(Math.abs(ratio - r.stats.mlp_out_l2[l][t] / r.stats.resid_post_l2[l][t]) < 1e-5);
      // top-k: valid indices, sorted by |value|, equal to the hook's values, and really the largest
      const post = h('mlp.hook_post').subarray(t * I, (t + 1) * I);
      const idx = r.stats.top_idx[l].subarray(t * 8, t * 8 + 8), val = r.stats.top_val[l].subarray(t * 8, t * 8 + 8);
      const sorted = Array.from(post).map((v, i) => [Math.abs(v), i]).sort((a, b) => b[0] - a[0] || a[1] - b[1]);
      for (let k = 0; k < 8; k++) {
        assert.ok(idx[k] >= 0 && idx[k] < I);
        assert.equal(val[k], post[idx[k]]);
        assert.equal(Math.abs(val[k]), sorted[k][0]);
      }
    }
  }
});

// The linearity identity needs exact activations: with the default int8 activations, zeroing one
// neuron can change how its block of 32 is rounded, so the change is its column only to ~1%.
const exact = await loadModel(dir, { contextLength: 128, exact: true });
test('interventions: scale 1 changes nothing; zeroing a neuron moves mlp_out by its down_proj column (exact activations)', () => {
  const model = exact;
  const layer = 2, T = ids.length;
  const hooks = [`blocks.${layer}.mlp.hook_post`, `blocks.${layer}.hook_mlp_out`];
  const base = model.forward(ids, { hooks });
  const same = model.forward(ids, { hooks, interventions: [{ layer, hook: 'mlp.hook_post', neurons: [3, 17], scale: 1 }, { layer: 1, hook: 'hook_mlp_out', scale: 1 }] });
  assert.deepEqual(same.logits, base.logits);
  const neuron = base.stats.top_idx[layer][(T - 1) * 8];
  const off = model.forward(ids, { hooks, interventions: [{ layer, hook: 'mlp.hook_post', neurons: [neuron], scale: 0 }] });
  const post = base.hooks[`blocks.${layer}.mlp.hook_post`];
  // the change at each token is -activation * down_proj[:, neuron]; recover the column from one token and check all
  const d0 = base.hooks[`blocks.${layer}.hook_mlp_out`], d1 = off.hooks[`blocks.${layer}.hook_mlp_out`];
  const tRef = T - 1, aRef = post[tRef * I + neuron];
  const col = Array.from({ length: H }, (_, i) => (d0[tRef * H + i] - d1[tRef * H + i]) / aRef);
  for (let t = 0; t < T; t++) {
    const a = post[t * I + neuron];
    for (let i = 0; i < H; i++) assert.ok(Math.abs(d0[t * H + i] - d1[t * H + i] - a * col[i]) < 1e-4, `token ${t} dim ${i}`);
  }
  assert.ok(off.hooks[`blocks.${layer}.mlp.hook_post`][tRef * I + neuron] === 0); // (-0 when the neuron was negative)
  assert.notDeepEqual(off.logits, base.logits);
  const silent = model.forward(ids, { interventions: [{ layer: 4, hook: 'hook_mlp_out', scale: 0 }] });
  assert.equal(silent.stats.mlp_out_l2[4].every((v) => v === 0), true);
});

test('logit lens of the last layer equals the model\'s own top-k', () => {
  const r = model.forward(ids, { logitLens: { positions: [-1, 3], k: 5 } });
  const last = r.logitLens[0].layers[L - 1];
  const own = Array.from(r.logits.keys()).sort((a, b) => r.logits[b] - r.logits[a]).slice(0, 5);
  assert.deepEqual(last.map((x) => x.id), own);
  assert.equal(r.logitLens.length, 2);
  assert.equal(r.logitLens[1].position, 3);
  assert.ok(last.every((x) => x.prob > 0 && x.prob <= 1 && typeof x.token === 'string'));
  assert.equal(r.logitLens[0].afterMixer, undefined);
  // afterMixer: the same lens on hook_resid_mid, i.e. the whole final norm and head on that vector
  const H = model.config.hidden_size;
  const m = model.forward(ids, { hooks: Array.from({ length: L }, (_, l) => `blocks.${l}.hook_resid_mid`), logitLens: { positions: [3], k: 4, afterMixer: true } });
  for (let l = 0; l < L; l++) {
    const want = model.unembedDirection(m.hooks[`blocks.${l}.hook_resid_mid`].subarray(3 * H, 4 * H), { normalize: true, k: 4 }).promoted;
    assert.deepEqual(m.logitLens[0].afterMixer[l].map((x) => [x.id, x.logit]), want.map((x) => [x.id, x.logit]), `layer ${l}`);
  }
  assert.deepEqual(m.logitLens[0].layers, model.forward(ids, { logitLens: { positions: [3], k: 4 } }).logitLens[0].layers);
});

test('generation: reproducible with a seed, greedy at temperature 0', async () => {
  const run = async (o) => { const out = []; for await (const t of model.generate('Once upon a time', { maxTokens: 20, ...o })) out.push(t); return out; };
  const a = await run({ temperature: 0.9, seed: 7, topK: 40 }), b = await run({ temperature: 0.9, seed: 7, topK: 40 });
  assert.deepEqual(a.map((t) => t.id), b.map((t) => t.id));
  const g = await run({ temperature: 0 });
  const ref = model.forward(model.tokenizer.encode('Once upon a time'), { stats: false }).logits;
  let best = 0;
  for (let i = 1; i < V; i++) if (ref[i] > ref[best]) best = i;
  assert.equal(g[0].id, best);
  assert.ok(g.every((t) => t.logprob <= 0 && Number.isFinite(t.logprob)));
  assert.equal(g.map((t) => t.text).join(''), model.tokenizer.decode(g.map((t) => t.id)));
});

// generate() draws each token from the logits inside the engine; a hand-made loop that copies the
// logits out of forward() and draws with the same seed must give the same tokens, and each logprob
// must be log softmax(logits / T) computed here in float64.
test('generation: top-p / top-k draws in place equal draws from forward() logits', async () => {
  const e = model.e, prompt = model.tokenizer.encode('Once upon a time');
  for (const o of [{ temperature: 0.8, topP: 0.9, seed: 5 }, { temperature: 1.2, topK: 12, topP: 0.95, seed: 9 }, { temperature: 0.7, seed: 2 }]) {
    const got = [];
    for await (const t of model.generate(prompt, { maxTokens: 24, stop: [], ...o })) got.push(t);
    const sampler = e.c.sampler_create(o.seed, V), lp = e.malloc(V * 4);
    let logits = model.forward(prompt, { stats: false }).logits;
    for (let n = 0; n < got.length; n++) {
      e.f32.set(logits, lp >> 2);
      const id = e.c.sampler_draw(sampler, lp, V, o.temperature, o.topK ?? 0, o.topP ?? 1);
      assert.equal(e.c.sampler_last_logprob(sampler), got[n].logprob, 'the logprob generate() reports');
      assert.equal(got[n].id, id, `${JSON.stringify(o)} token ${n}`);
      let mx = -Infinity, z = 0;
      for (const v of logits) mx = Math.max(mx, v);
      for (const v of logits) z += Math.exp((v - mx) / o.temperature);
      const want = (logits[id] - mx) / o.temperature - Math.log(z);
      assert.ok(Math.abs(got[n].logprob - want) < 1e-4, `logprob ${got[n].logprob} vs ${want}`);
      logits = model.forward([id], { stats: false, continue: true }).logits;
    }
    e.c.sampler_destroy(sampler); e.free(lp);
    assert.equal(got.length, 24);
  }
});

test('typed errors: bad ids, context overflow, empty input, unknown hook, bad generation options, calls after dispose', async () => {
  const code = (fn, c) => assert.throws(fn, (e) => e instanceof MlpscopeError && e.code === c);
  code(() => model.forward([1, V]), 'E_TOKEN');
  code(() => model.forward([1, -2]), 'E_TOKEN');
  code(() => model.forward([1, 2.5]), 'E_TOKEN');
  code(() => model.forward([]), 'E_ARG');
  code(() => model.forward(new Array(129).fill(5)), 'E_CONTEXT');
  code(() => model.forward([1, 5], { hooks: ['blocks.99.hook_mlp_out'] }), 'E_ARG');
  code(() => model.forward([1, 5], { hooks: ['blocks.0.hook_nothing'] }), 'E_ARG');
  code(() => model.forward([1, 5], { interventions: [{ layer: 0, hook: 'mlp.hook_post', neurons: [I], scale: 0 }] }), 'E_ARG');
  // generation options: each bad one is E_ARG naming it, and the model stays usable
  const gen = async (o) => { for await (const _ of model.generate('Once', { maxTokens: 2, ...o })); };
  for (const [o, word] of [[{ temperature: -1 }, 'temperature'], [{ temperature: NaN }, 'temperature'], [{ topP: 1.5 }, 'topP'],
    [{ topP: NaN }, 'topP'], [{ topK: -3 }, 'topK'], [{ topK: 2.5 }, 'topK'], [{ seed: -1 }, 'seed'], [{ seed: 2 ** 60 }, 'seed'],
    [{ maxTokens: -1 }, 'maxTokens'], [{ stop: [1.5] }, 'stop']])
    await assert.rejects(gen(o), (e) => e instanceof MlpscopeError && e.code === 'E_ARG' && e.message.includes(word), JSON.stringify(o));
  await gen({ temperature: 0.5, topK: 3, seed: 1 });
  await assert.rejects(loadModel(dir, { contextLength: 100000 }), (e) => e.code === 'E_CONTEXT');
  await assert.rejects(loadModel(dir, { memoryBudget: 1000 }), (e) => e.code === 'E_MEMORY');
  await assert.rejects(loadModel('/nonexistent/folder'), (e) => e.code === 'E_MANIFEST');
  const m2 = await loadModel(dir);
  m2.dispose();
  code(() => m2.forward([1]), 'E_STATE');
});

test('one model, one call at a time: forward during a running generate() is E_STATE; chat prompts; build info', async () => {
  const g = model.generate('Once upon a time', { maxTokens: 5 });
  await g.next();
  assert.throws(() => model.forward([1, 5]), (e) => e.code === 'E_STATE' && /busy/.test(e.message));
  await assert.rejects(model.generate('x').next(), (e) => e.code === 'E_STATE');
  await g.return();
  assert.ok(model.forward([1, 5]).logits); // free again
  // llama2.c models have no chat template: messages are refused, not joined into a guessed prompt
  await assert.rejects(model.generate([{ role: 'user', content: 'Once upon a time' }], { maxTokens: 6 }).next(), (e) => e.code === 'E_TOKEN' && /no chat template/.test(e.message));
  assert.ok(model.forward([1, 5]).logits, 'the refused call left the model free');
  await assert.rejects(model.generate([], {}).next(), (e) => e.code === 'E_ARG');
  const info = model.info();
  assert.equal(info.build.simd, true);
  // threads: 'auto' (the default) — the threaded build wherever SharedArrayBuffer works and the
  // machine has more than one hardware thread (tests/threads.test.js checks the rules)
  assert.match(info.build.why, info.build.threads > 1 ? /multi-threaded SIMD128 build/ : /single-threaded/);
});

test('a folder as a file: URL, with a space in its path; demoModelUrl is the shipped demo model', async () => {
  const spaced = fs.mkdtempSync(path.join(os.tmpdir(), 'mlpscope url space-'));
  try {
    for (const f of fs.readdirSync(dir)) fs.copyFileSync(path.join(dir, f), path.join(spaced, f));
    const url = pathToFileURL(spaced);
    assert.match(url.href, /%20/);
    const m = await loadModel(url, { contextLength: 128 });
    assert.deepEqual(Array.from(m.forward(ids).logits), Array.from(model.forward(ids).logits));
    m.dispose();
  } finally { fs.rmSync(spaced, { recursive: true, force: true }); }
  assert.equal(fileURLToPath(demoModelUrl), path.join(ROOT, 'weights/demo') + path.sep);
  const demo = await loadModel(demoModelUrl, { threads: 1 });
  const shipped = JSON.parse(fs.readFileSync(path.join(ROOT, 'weights/demo/manifest.json'), 'utf8')).config;
  assert.equal(demo.config.hidden_size, shipped.hidden_size);
  assert.equal(demo.nLayers, shipped.num_hidden_layers);
  demo.dispose();
});

test('generate(): the summary it returns (finish reason, usage) and the statistics of its own passes', async () => {
  const prompt = model.tokenizer.encode('I flew from Paris to');
  const g = model.generate(prompt, { maxTokens: 5, stats: true, stop: [] });
  const got = [];
  let step;
  while (!(step = await g.next()).done) got.push(step.value.id);
  const s = step.value;
  assert.equal(s, model.lastGeneration);
  assert.equal(s.finishReason, 'length');
  assert.equal(s.usage.promptTokens, prompt.length);
  assert.equal(s.usage.generatedTokens, 5);
  assert.ok(s.usage.prefillMs > 0 && s.usage.decodeMs > 0 && s.usage.timeToFirstTokenMs === s.usage.prefillMs);
  assert.ok(Math.abs(s.usage.prefillTokPerS - prompt.length / (s.usage.prefillMs / 1000)) < 1e-6);
  assert.ok(Math.abs(s.usage.decodeTokPerS - 4 / (s.usage.decodeMs / 1000)) < 1e-6, 'decode speed counts the tokens after the first');
  // every token was read once (the last one fed back too): the statistics equal one prefill's
  const seq = [...prompt, ...got];
  assert.equal(s.stats.T, seq.length);
  assert.equal(model.position, seq.length, 'the state holds the whole sequence');
  const once = model.forward(seq).stats;
  for (const k of ['mlp_out_l2', 'resid_post_l2', 'mlp_ratio'])
    once[k].forEach((row, l) => row.forEach((v, p) => assert.ok(Math.abs(s.stats[k][l][p] - v) <= 1e-5 * Math.max(Math.abs(v), 1), `${k} layer ${l} position ${p}`)));
  assert.equal(s.stats.layer_ms[0].length, 1 + 5, 'one time per pass: the prefill and each token fed back');
  // a stop token ends it with 'stop'; an abort with 'abort' (and an AbortError)
  const first = got[0];
  for await (const _ of model.generate(prompt, { maxTokens: 5, stop: [first] })); // eslint-disable-line no-unused-vars
  assert.equal(model.lastGeneration.finishReason, 'stop');
  assert.equal(model.lastGeneration.usage.generatedTokens, 0);
  const ac = new AbortController();
  await assert.rejects((async () => { for await (const _ of model.generate(prompt, { maxTokens: 5, signal: ac.signal })) ac.abort(); })(), // eslint-disable-line no-unused-vars
    (e) => e.code === 'E_ABORTED' && e.name === 'AbortError');
  assert.equal(model.lastGeneration.finishReason, 'abort');
});

test('activation options: the default is int8 for q8 weights; a bad or contradictory choice is E_ARG naming it', async () => {
  assert.equal(model.info().build.activations, 'int8');
  assert.equal(model.info().build.int8Activations, true);
  assert.equal(exact.info().build.activations, 'exact');
  for (const [o, word] of [[{ activations: 'fast' }, "activations: 'fast'"], [{ exact: 'yes' }, 'exact'], [{ int8Activations: 1 }, 'int8Activations'],
    [{ exact: true, int8Activations: true }, 'exact and int8Activations disagree'], [{ activations: 'int8', exact: true }, 'activations and exact disagree']])
    await assert.rejects(loadModel(dir, o), (e) => e.code === 'E_ARG' && e.message.includes(word), JSON.stringify(o));
  const same = await loadModel(dir, { exact: true, int8Activations: false, activations: 'exact' }); // agreeing options are fine
  assert.equal(same.info().build.activations, 'exact');
  same.dispose();
});
