// Transcoders in wasm (js/transcoder.js over src/analysis/tc_session.c; the gradient, the training
// and the brute-force checks of the C code run natively in tests/native/test_transcoder.c): on the
// demo model, the saved set read back by its manifest reproduces the held-out FVU in float64; the
// replacement with the error term is the model, bit for bit; one and two threads train the same
// bytes; the CLI writes the set; bad arguments and a stop are typed errors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { loadModel, loadModelInWorker } from '../js/index.js';
import { trainTranscoders, corpusSequences, TRANSCODER_DEFAULTS, loadTranscoders } from '../js/transcoder.js';
import { CLI, DEMO, tmpDir } from './helpers.js';

const SMALL = { layers: [1, 6], features: 256, k: 8, tokens: 12_288, valTokens: 640, buffer: 4096, batch: 512 };

/** the tensors of one layer of a saved set, as float64 arrays, by its manifest */
function readLayer(manifest, bin, layer) {
  const m = JSON.parse(manifest), L = m.layers.find((x) => x.layer === layer), out = {};
  for (const t of L.tensors) {
    assert.equal(t.dtype, 'f32');
    out[t.name] = Float64Array.from(new Float32Array(bin.buffer.slice(bin.byteOffset + t.offset, bin.byteOffset + t.offset + t.bytes)));
    assert.equal(out[t.name].length, t.shape.reduce((a, b) => a * b, 1), `${t.name}: bytes and shape agree`);
  }
  return { m, ...out };
}

test('a saved transcoder set, read back by its manifest, gives the reported held-out FVU and L0 in float64', async () => {
  const model = await loadModel(DEMO, { threads: 1 });
  const r = await trainTranscoders(model, SMALL);
  const { scores, files } = r;
  assert.equal(scores.eval_tokens, SMALL.valTokens);
  const bin = files['transcoders.bin'], man = JSON.parse(files['manifest.json']);
  assert.equal(man.format, 'mlpscope-transcoders');
  assert.equal(man.shards[0].bytes, bin.length);
  assert.equal(man.shards[0].sha256, crypto.createHash('sha256').update(bin).digest('hex'), 'the manifest carries the file\'s hash');
  assert.deepEqual(man.model.shards_sha256, JSON.parse(fs.readFileSync(path.join(DEMO, 'manifest.json'), 'utf8')).shards.map((s) => s.sha256));
  const H = model.config.hidden_size, F = SMALL.features, K = SMALL.k, T = 128;
  const eos = model.info().tokenizer.eos_token_ids[0];
  for (const layer of SMALL.layers) {
    const { W_enc, b_enc, W_dec, b_dec } = readLayer(files['manifest.json'], bin, layer);
    let sse = 0, syy = 0, n = 0, l0 = 0, done = 0;
    const sy = new Float64Array(H);
    for (const seq of corpusSequences(model, TRANSCODER_DEFAULTS.valSeed, T, eos)) { // the scorer's own held-out sequences
      if (done >= SMALL.valTokens) break;
      const ids = Array.from(seq.subarray(0, Math.min(T, SMALL.valTokens - done)));
      done += ids.length;
      const h = model.forward(ids, { stats: false, logits: 'none', hooks: [`blocks.${layer}.ln2.hook_normalized`, `blocks.${layer}.hook_mlp_out`] }).hooks;
      const X = h[`blocks.${layer}.ln2.hook_normalized`], Y = h[`blocks.${layer}.hook_mlp_out`];
      for (let t = 0; t < ids.length; t++) {
        const z = new Float64Array(F);
        for (let f = 0; f < F; f++) { let s = b_enc[f]; for (let i = 0; i < H; i++) s += X[t * H + i] * W_enc[i * F + f]; z[f] = s; }
        const order = Array.from(z.keys()).sort((a, b) => z[b] - z[a] || a - b).slice(0, K);
        const y = Float64Array.from(b_dec);
        for (const f of order) if (z[f] > 0) { l0++; for (let o = 0; o < H; o++) y[o] += z[f] * W_dec[f * H + o]; }
        for (let o = 0; o < H; o++) { const v = Y[t * H + o]; sse += (y[o] - v) ** 2; sy[o] += v; syy += v * v; }
        n++;
      }
    }
    const fvu = sse / (syy - sy.reduce((a, v) => a + v * v, 0) / n), rep = scores.layers.find((x) => x.layer === layer);
    assert.ok(Math.abs(rep.fvu - fvu) <= 2e-3 * fvu + 1e-4, `layer ${layer}: FVU ${rep.fvu} reported, ${fvu} in float64`);
    assert.ok(Math.abs(rep.l0 - l0 / n) <= 0.05, `layer ${layer}: L0 ${rep.l0} reported, ${l0 / n} in float64`);
    assert.ok(rep.l0 <= K && rep.dead >= 0 && rep.dead <= 1 && rep.kl >= 0 && Number.isFinite(rep.ce_zero));
  }
  model.dispose();
});

test('one and two threads train the same transcoder bytes', async () => {
  const opts = { ...SMALL, layers: [3], tokens: 4096, valTokens: 0 };
  const bins = [];
  for (const threads of [1, 2]) {
    const model = await loadModel(DEMO, { threads });
    const r = await trainTranscoders(model, opts);
    bins.push(r.files['transcoders.bin']);
    model.dispose();
  }
  assert.equal(Buffer.compare(Buffer.from(bins[0]), Buffer.from(bins[1])), 0);
});

test('bad arguments and a stop are typed errors', async () => {
  const model = await loadModel(DEMO, { threads: 1 });
  await assert.rejects(trainTranscoders(model, { layers: [11] }), { code: 'E_ARG', message: /layer 11/ });
  await assert.rejects(trainTranscoders(model, { features: 64, k: 65 }), { code: 'E_ARG', message: /k 65/ });
  await assert.rejects(trainTranscoders(model, { lr: 0 }), { code: 'E_ARG', message: /lr/ });
  await assert.rejects(trainTranscoders(model, { seed: -1 }), { code: 'E_ARG', message: /seed/ });
  // a buffer of 2^26 tokens does not fit in wasm32's 4 GB: a typed error, not an overflowed size
  await assert.rejects(trainTranscoders(model, { features: 64, k: 4, buffer: 1 << 26 }), { code: 'E_MEMORY' });
  await assert.rejects(trainTranscoders(model, { tokens: 1e6, features: 64, k: 4, signal: AbortSignal.abort() }), { code: 'E_ABORTED' });
  // the model disposed while it trains (between two of its waits): E_STATE, not a read of freed memory
  await assert.rejects(trainTranscoders(model, { tokens: 1e6, features: 64, k: 4, onProgress: () => model.dispose() }), { code: 'E_STATE', message: /disposed/ });
  // disposed in the very last report (few tokens: no report inside the loops)
  const m2 = await loadModel(DEMO, { threads: 1 });
  await assert.rejects(trainTranscoders(m2, { tokens: 256, valTokens: 128, features: 64, k: 4, onProgress: (p) => { if (p.phase === 'train') m2.dispose(); } }), { code: 'E_STATE', message: /disposed/ });
});

test('mlpscope transcoder train writes the set and prints its scores', () => {
  const out = tmpDir('tc-cli');
  const r = JSON.parse(execFileSync(process.execPath, [CLI, 'transcoder', 'train', DEMO, '--out', out, '--layers', '2', '--features', '128', '--k', '4',
    '--tokens', '2048', '--val-tokens', '256', '--json'], { encoding: 'utf8' }));
  assert.deepEqual(r.layers, [2]);
  assert.equal(r.scores.layers[0].features, 128);
  const man = JSON.parse(fs.readFileSync(path.join(out, 'manifest.json'), 'utf8'));
  assert.equal(fs.statSync(path.join(out, 'transcoders.bin')).size, man.shards[0].bytes);
  assert.throws(() => execFileSync(process.execPath, [CLI, 'transcoder', 'fit', DEMO], { stdio: 'pipe' }), /one subcommand is train/);
});

test('in a Worker: the same bytes as in-process, progress messages, and a stop from this side', async () => {
  const opts = { layers: [4], features: 128, k: 4, tokens: 2048, valTokens: 128, buffer: 1024, batch: 256 };
  const model = await loadModel(DEMO, { threads: 1 });
  const here = await trainTranscoders(model, opts);
  model.dispose();
  const w = await loadModelInWorker(DEMO, { threads: 1 });
  try {
  const seen = [];
  const there = await w.trainTranscoders({ ...opts, onProgress: (p) => seen.push(p.phase) });
  assert.equal(Buffer.compare(Buffer.from(here.files['transcoders.bin']), Buffer.from(there.files['transcoders.bin'])), 0);
  assert.deepEqual(there.scores, here.scores);
  assert.ok(seen.includes('train') && seen.includes('score'), `progress phases: ${[...new Set(seen)]}`);
  const ac = new AbortController();
  const run = w.trainTranscoders({ ...opts, tokens: 10_000_000, signal: ac.signal, onProgress: () => ac.abort() });
  await assert.rejects(run, { code: 'E_ABORTED' });
  assert.equal((await w.trainTranscoders({ ...opts, valTokens: 0 })).trainTokens, opts.tokens, 'the worker goes on after a stop');
  } finally { await w.dispose(); }
});

test('features as hooks: read (bit-identical logits), set to their own value (identity), added (the decoder row, exactly), replacing the MLP (the decoded features); typed errors', async () => {
  const model = await loadModel(DEMO, { threads: 1 });
  const r = await trainTranscoders(model, { layers: [2, 7], features: 128, k: 8, tokens: 4096, valTokens: 0, buffer: 2048, batch: 512 });
  const set = await loadTranscoders(model, r.files);
  assert.deepEqual(set.layers, [2, 7]);
  const H = model.config.hidden_size, F = 128, l = 7;
  const { W_enc, b_enc, W_dec, b_dec } = readLayer(r.files['manifest.json'], r.files['transcoders.bin'], l);
  const ids = model.tokenizer.encode('我上周从巴黎飞到东京。The food was not bad at all.');
  const T = ids.length, plain = model.forward(ids, { logits: 'all', stats: false });
  const hk = [`blocks.${l}.transcoder.hook_feature`, `blocks.${l}.ln2.hook_normalized`, `blocks.${l}.hook_mlp_out`];
  const read = model.forward(ids, { logits: 'all', stats: false, transcoders: { set }, hooks: hk });
  assert.ok(read.logits.every((v, i) => Object.is(v, plain.logits[i])), 'reading the features changes no bit of the logits');
  const a = read.hooks[hk[0]], X = read.hooks[hk[1]];
  assert.equal(a.length, T * F);
  let worst = 0;
  for (let t = 0; t < T; t++) { // brute force: z, the 8 largest, ReLU
    const z = Array.from({ length: F }, (_, f) => { let s = b_enc[f]; for (let i = 0; i < H; i++) s += X[t * H + i] * W_enc[i * F + f]; return s; });
    const top = new Set(Array.from(z.keys()).sort((p, q) => z[q] - z[p] || p - q).slice(0, 8));
    for (let f = 0; f < F; f++) worst = Math.max(worst, Math.abs(a[t * F + f] - (top.has(f) ? Math.max(z[f], 0) : 0)));
  }
  assert.ok(worst < 1e-4, `features against float64: largest difference ${worst}`);
  // set a feature to its own value at one position: the identity, bit for bit
  const p = T - 1, f = Array.from({ length: F }, (_, j) => j).sort((x, y) => a[p * F + y] - a[p * F + x])[0];
  const same = model.forward(ids, { logits: 'all', stats: false, transcoders: { set, layers: [l] },
    interventions: [{ hook: `blocks.${l}.transcoder.hook_feature`, op: 'set', features: [f], value: a[p * F + f], positions: [p] }] });
  assert.ok(same.logits.every((v, i) => Object.is(v, plain.logits[i])), 'a feature set to its own value changes nothing');
  const all1 = model.forward(ids, { logits: 'all', stats: false, transcoders: { set, layers: [2, 7] },
    interventions: [2, 7].map((L) => ({ hook: `blocks.${L}.transcoder.hook_feature`, op: 'scale', value: 1 })) });
  assert.ok(all1.logits.every((v, i) => Object.is(v, plain.logits[i])), 'every feature of two layers scaled by 1 changes nothing');
  // add 3 to that feature at p: the MLP's output moves by 3 × its decoder row there, nowhere else
  const added = model.forward(ids, { stats: false, transcoders: { set, layers: [l] }, hooks: [`blocks.${l}.hook_mlp_out`],
    interventions: [{ hook: `blocks.${l}.transcoder.hook_feature`, op: 'add', features: [f], value: 3, positions: [p] }] });
  const y0 = read.hooks[hk[2]], y1 = added.hooks[`blocks.${l}.hook_mlp_out`];
  for (let t = 0; t < T; t++) for (let o = 0; o < H; o++) {
    const want = t === p ? y0[t * H + o] + 3 * W_dec[f * H + o] : y0[t * H + o];
    assert.ok(Math.abs(y1[t * H + o] - want) < 1e-4, `position ${t} dim ${o}: ${y1[t * H + o]} vs ${want}`);
  }
  // replace: the MLP writes the decoded features
  const rep = model.forward(ids, { stats: false, transcoders: { set, layers: [l], replace: true }, hooks: [`blocks.${l}.hook_mlp_out`] });
  const yr = rep.hooks[`blocks.${l}.hook_mlp_out`];
  worst = 0;
  for (let t = 0; t < T; t++) for (let o = 0; o < H; o++) {
    let s = b_dec[o];
    for (let j = 0; j < F; j++) s += a[t * F + j] * W_dec[j * H + o];
    worst = Math.max(worst, Math.abs(yr[t * H + o] - s));
  }
  assert.ok(worst < 1e-4, `replaced output against float64: ${worst}`);
  // typed errors
  assert.throws(() => model.forward(ids, { hooks: [`blocks.${l}.transcoder.hook_feature`] }), { code: 'E_ARG', message: /transcoders option/ });
  assert.throws(() => model.forward(ids, { transcoders: { set, layers: [3] } }), { code: 'E_ARG', message: /no layer 3/ });
  const model2 = await loadModel(DEMO, { threads: 1 });
  assert.throws(() => model2.forward(ids, { transcoders: { set } }), { code: 'E_ARG', message: /another model/ });
  model2.dispose();
  assert.throws(() => model.forward(ids, { transcoders: { set, layers: [2] }, interventions: [{ hook: 'blocks.2.transcoder.hook_feature', op: 'set', features: [F], value: 0 }] }), { code: 'E_ARG', message: /feature 128/ });
  const bad = new Uint8Array(r.files['transcoders.bin']); bad[100] ^= 1;
  await assert.rejects(loadTranscoders(model, { ...r.files, 'transcoders.bin': bad }), { code: 'E_SHARD_HASH' });
  const other = JSON.parse(r.files['manifest.json']); other.model.shards_sha256 = ['0'.repeat(64)];
  await assert.rejects(loadTranscoders(model, { ...r.files, 'manifest.json': JSON.stringify(other) }), { code: 'E_MANIFEST', message: /another model/ });
  // from a folder, as the CLI writes it
  const dir = tmpDir('tc-set');
  fs.writeFileSync(path.join(dir, 'manifest.json'), r.files['manifest.json']); fs.writeFileSync(path.join(dir, 'transcoders.bin'), r.files['transcoders.bin']);
  const again = await loadTranscoders(model, dir);
  assert.ok(model.forward(ids, { stats: false, transcoders: { set: again }, hooks: [hk[0]] }).hooks[hk[0]].every((v, i) => Object.is(v, a[i])));
  again.dispose(); set.dispose();
  assert.throws(() => model.forward(ids, { transcoders: { set } }), { code: 'E_STATE' });
  model.dispose();
});
