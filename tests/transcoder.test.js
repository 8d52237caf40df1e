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
import { trainTranscoders, corpusSequences, TRANSCODER_DEFAULTS, loadTranscoders, transcoderMemory } from '../js/transcoder.js';
import { findFeatureNeurons, neuronTopActivations, neuronsVsFeatures, tokenOffsets, DEFAULT_FEATURES, featureCard, featuresOnText, pushNeuron, featureTokens, tokenSetProbability } from '../js/features.js';
import { probes } from '../js/corpus.js';
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

/** the demo model with a small set trained on `layers` and loaded (the brute-force tests' start) */
async function smallSet(layers, loadOpts = { threads: 1 }) {
  const model = await loadModel(DEMO, loadOpts);
  const r = await trainTranscoders(model, { ...SMALL, layers, valTokens: 0 });
  const set = await loadTranscoders(model, r.files);
  return { model, set, weights: (l) => readLayer(r.files['manifest.json'], r.files['transcoders.bin'], l) };
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
  await assert.rejects(trainTranscoders(model, { sequences: [[1, 2]] }), { code: 'E_ARG', message: /sequences must be a function/ });
  await assert.rejects(trainTranscoders(model, { features: 64, k: 4, tokens: 64, sequences: function* () { yield [1, 2, 1e9]; } }), { code: 'E_ARG', message: /an id outside/ });
  // the caller's own rows: the corpus's rows given by hand train the same bytes as the default
  const eos = model.info().tokenizer.eos_token_ids[0], small = { layers: [2], features: 64, k: 4, tokens: 1024, valTokens: 128, buffer: 512, batch: 256 };
  const own = await trainTranscoders(model, { ...small, sequences: (seed, T) => corpusSequences(model, seed, T, eos) });
  assert.equal(Buffer.compare(Buffer.from(own.files['transcoders.bin']), Buffer.from((await trainTranscoders(model, small)).files['transcoders.bin'])), 0);
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
  const r = JSON.parse(execFileSync(process.execPath, [CLI, 'transcoder', 'train', DEMO, '--out', out, '--layer', '2', '--features', '128', '--k', '4',
    '--tokens', '2048', '--val-tokens', '256', '--json'], { encoding: 'utf8' }));
  assert.deepEqual(r.layers, [2]);
  assert.equal(r.scores.layers[0].features, 128);
  const man = JSON.parse(fs.readFileSync(path.join(out, 'manifest.json'), 'utf8'));
  assert.equal(fs.statSync(path.join(out, 'transcoders.bin')).size, man.shards[0].bytes);
  assert.throws(() => execFileSync(process.execPath, [CLI, 'transcoder', 'fit', DEMO], { stdio: 'pipe' }), /subcommands are train and compare/);
  // the set against the neurons on a probe file: the API's numbers
  const pf = path.join(out, 'probes.json');
  fs.writeFileSync(pf, JSON.stringify(probes(3, 30)));
  const c = JSON.parse(execFileSync(process.execPath, [CLI, 'transcoder', 'compare', DEMO, '--set', out, '--probes', pf, '--json'], { encoding: 'utf8' }));
  assert.deepEqual(c.rows.map((x) => x.feature), Object.keys(DEFAULT_FEATURES));
  for (const x of c.rows) assert.ok(x.transcoder.layer === 2 && x.transcoder.unit === 'transcoder' && x.neuron.layer === 2 && x.transcoder.heldOutAuc >= 0 && x.transcoder.heldOutAuc <= 1);
  const text = execFileSync(process.execPath, [CLI, 'transcoder', 'compare', DEMO, '--set', out, '--probes', pf], { encoding: 'utf8' });
  assert.match(text, new RegExp(`city +L2 #${c.rows[0].neuron.neuron} +${c.rows[0].neuron.heldOutAuc.toFixed(3)} +L2 #${c.rows[0].transcoder.neuron} +${c.rows[0].transcoder.heldOutAuc.toFixed(3)}`));
  assert.throws(() => execFileSync(process.execPath, [CLI, 'transcoder', 'compare', DEMO], { stdio: 'pipe' }), /needs DIR and --set SET/);
});

test('in a Worker: the same bytes as in-process, progress messages with the training FVU, a stop from this side; a set loaded there answers as in-process', async () => {
  const opts = { layers: [4], features: 128, k: 4, tokens: 2048, valTokens: 128, buffer: 1024, batch: 256 };
  const model = await loadModel(DEMO, { threads: 1 });
  const here = await trainTranscoders(model, opts);
  const P = probes(7, 24), ids = model.tokenizer.encode('I flew from Paris to Tokyo last week', { addSpecial: true });
  const setHere = await loadTranscoders(model, here.files);
  const inProcess = {
    hook: model.forward(ids, { hooks: ['blocks.4.transcoder.hook_feature'], transcoders: { set: setHere } }).hooks['blocks.4.transcoder.hook_feature'],
    cmp: neuronsVsFeatures(model, setHere, P, { sizes: [1, 4] }),
    dec: model.decomposePrediction(ids, { transcoder: { set: setHere, layer: 4 } }).features,
    out: setHere.featureOutput(4, 3, { k: 2 }),
  };
  model.dispose();
  const w = await loadModelInWorker(DEMO, { threads: 1 });
  try {
  const seen = [];
  const fvus = [];
  const there = await w.trainTranscoders({ ...opts, onProgress: (p) => { seen.push(p.phase); if (p.layers?.[0].steps) fvus.push(p.layers[0].fvu); } });
  assert.equal(Buffer.compare(Buffer.from(here.files['transcoders.bin']), Buffer.from(there.files['transcoders.bin'])), 0);
  assert.deepEqual(there.scores, here.scores);
  assert.ok(seen.includes('train') && seen.includes('score'), `progress phases: ${[...new Set(seen)]}`);
  assert.equal(fvus.at(-1), there.scores.layers[0].train_fvu, 'the last training report carries the last batch\'s FVU');
  // the set in the worker: hooks, the comparison, the decomposition and a feature's output as in-process
  const set = await w.loadTranscoders(there.files);
  assert.deepEqual([set.layers, set.features, set.k], [[4], 128, 4]);
  const hook = (await w.forward(ids, { hooks: ['blocks.4.transcoder.hook_feature'], transcoders: { set } })).hooks['blocks.4.transcoder.hook_feature'];
  assert.deepEqual(Array.from(hook), Array.from(inProcess.hook));
  const prog = [];
  assert.deepEqual(await w.neuronsVsFeatures(set, P, { sizes: [1, 4], onProgress: (p) => prog.push(p.done) }), inProcess.cmp);
  assert.equal(prog.length, 2 * P.length, 'one progress message per probe pass, both searches');
  assert.deepEqual((await w.decomposePrediction(ids, { transcoder: { set, layer: 4 } })).features, inProcess.dec);
  assert.deepEqual(await set.featureOutput(4, 3, { k: 2 }), inProcess.out);
  assert.deepEqual((await w.findFeatureNeurons(P, { transcoders: set, top: 1, layers: [4], byLang: true })).best, inProcess.cmp.rows.map((r) => r.transcoder));
  await set.dispose();
  await assert.rejects(w.forward(ids, { transcoders: { set } }), { code: 'E_STATE', message: /disposed/ });
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

test('a prediction decomposed by transcoder feature: each feature\'s term, the bias and the error against float64 from the set\'s files; the terms sum to the MLP part', async () => {
  const { model, set, weights } = await smallSet([7], { threads: 1, exact: true });
  const { W_enc, b_enc, W_dec, b_dec } = weights(7);
  const H = model.config.hidden_size, F = SMALL.features, K = SMALL.k;
  const ids = model.tokenizer.encode('我上周从巴黎飞到东京，天气很好。', { addSpecial: true });
  const d = model.decomposePrediction(ids, { transcoder: { set, layer: 7 } });
  const mlp = d.parts.find((q) => q.kind === 'mlp' && q.layer === 7).value;
  assert.equal(d.features.layer, 7);
  // brute force: the features at the position from the MLP input, what each writes read by the head
  const h = model.forward(ids, { stats: false, logits: 'none', hooks: ['blocks.7.ln2.hook_normalized', 'blocks.7.hook_mlp_out'] }).hooks;
  const p = ids.length - 1, x = h['blocks.7.ln2.hook_normalized'].subarray(p * H, (p + 1) * H), y = h['blocks.7.hook_mlp_out'].subarray(p * H, (p + 1) * H);
  const z = new Float64Array(F);
  for (let f = 0; f < F; f++) { let s = b_enc[f]; for (let i = 0; i < H; i++) s += x[i] * W_enc[i * F + f]; z[f] = s; }
  const top = Array.from(z.keys()).sort((a, b) => z[b] - z[a] || a - b).slice(0, K).filter((f) => z[f] > 0);
  assert.deepEqual(d.features.active.map((a) => a.feature).sort((a, b) => a - b), [...top].sort((a, b) => a - b), 'the features that fire');
  const head = (v) => model.unembedDirection(Float32Array.from(v), { k: 1 }).logits[d.token] * d.scale;
  const yhat = Float64Array.from(b_dec);
  let big = 0;
  for (const f of top) {
    const row = W_dec.subarray(f * H, (f + 1) * H);
    for (let o = 0; o < H; o++) yhat[o] += z[f] * row[o];
    const want = z[f] * head(row), got = d.features.active.find((a) => a.feature === f);
    assert.ok(Math.abs(got.activation - z[f]) <= 1e-4 * Math.abs(z[f]) + 1e-5, `feature ${f}: activation ${got.activation} vs ${z[f]}`);
    assert.ok(Math.abs(got.value - want) <= 1e-3 * Math.abs(want) + 1e-4, `feature ${f}: term ${got.value} vs ${want}`);
    big = Math.max(big, Math.abs(want));
  }
  assert.ok(big > 1e-3, 'some feature writes something measurable');
  assert.ok(Math.abs(d.features.bias - head(b_dec)) <= 1e-3 * Math.abs(head(b_dec)) + 1e-4, 'the bias term');
  const err = head(Array.from(y, (v, o) => v - yhat[o]));
  assert.ok(Math.abs(d.features.error - err) <= 1e-3 * (Math.abs(err) + big) + 1e-4, `the error ${d.features.error} vs ${err}`);
  // the three parts computed here from the files (features, bias, error) sum to the engine's MLP part
  const parts = top.reduce((a, f) => a + z[f] * head(W_dec.subarray(f * H, (f + 1) * H)), 0) + head(b_dec) + err;
  assert.ok(Math.abs(parts - mlp) <= 1e-3 * (Math.abs(mlp) + big) + 1e-4, `features + bias + error from the files: ${parts}, the MLP part ${mlp}`);
  // what a feature writes, read by the head: its decoder row
  const f0 = d.features.active[0].feature, fo = set.featureOutput(7, f0, { k: 3 });
  assert.deepEqual(Array.from(fo.direction), Array.from(Float32Array.from(W_dec.subarray(f0 * H, (f0 + 1) * H))));
  assert.equal(fo.promoted.length, 3);
  assert.throws(() => set.featureOutput(7, F), { code: 'E_ARG', message: new RegExp(`feature ${F}`) });
  assert.throws(() => model.decomposePrediction(ids, { transcoder: { set, layer: 3 } }), { code: 'E_ARG', message: /no layer 3/ });
  assert.throws(() => model.decomposePrediction(ids, { transcoder: { set: {}, layer: 7 } }), { code: 'E_ARG' });
  model.dispose();
});

test('transcoder features searched like neurons: held-out AUCs, top activations and the neurons-read-together curve against brute force', async () => {
  const { model, set } = await smallSet([2, 5], { threads: 1 });
  const P = probes(5, 40), F = SMALL.features, I = model.config.intermediate_size;
  const res = findFeatureNeurons(model, P, { transcoders: set, top: 1, features: { city: DEFAULT_FEATURES.city } });
  const best = res.best[0];
  assert.equal(best.unit, 'transcoder');
  assert.ok([2, 5].includes(best.layer) && best.neuron < F);
  // brute force: the feature's activation at every token from forward(), the positives and
  // negatives by hand, the held-out AUC by counting pairs
  const split = Math.floor(P.length / 2), pos = [], neg = [], npos = [], nneg = [];
  const hook = `blocks.${best.layer}.transcoder.hook_feature`, post = `blocks.${best.layer}.mlp.hook_post`;
  const n0pos = [], n0neg = []; // the first part's neuron activations (for the neurons read together)
  for (let p = 0; p < P.length; p++) {
    const ids = model.tokenizer.encode(P[p].text, { addSpecial: true });
    const h = model.forward(ids, { stats: false, logits: 'none', hooks: [hook, post], transcoders: { set, layers: [best.layer] } }).hooks;
    const offs = tokenOffsets(model.tokenizer, ids);
    offs.forEach(([a, b], t) => {
      const over = P[p].spans.filter((s) => s.start < b && s.end > a && b > a);
      const isPos = over.some((s) => s.label === 'city' && s.end <= b);
      const isNeg = b > a && /\S/.test(P[p].text.slice(a, b)) && !over.some((s) => s.label === 'city') && over.some((s) => ['name', 'noun', 'country'].includes(s.label) && s.end <= b); // at word ends too
      const row = h[post].slice(t * I, (t + 1) * I);
      if (p < split) { if (isPos) n0pos.push(row); if (isNeg) n0neg.push(row); return; }
      if (isPos) { pos.push(h[hook][t * F + best.neuron]); npos.push(row); }
      if (isNeg) { neg.push(h[hook][t * F + best.neuron]); nneg.push(row); }
    });
  }
  const pairs = (ps, ns) => { let c = 0; for (const a of ps) for (const b of ns) c += a > b ? 1 : a === b ? 0.5 : 0; return c / (ps.length * ns.length); };
  const sgn = (v) => v.map((a) => best.sign * a);
  assert.equal(best.nPos, pos.length);
  assert.ok(Math.abs(best.heldOutAuc - pairs(sgn(pos), sgn(neg))) < 1e-12, `held-out AUC ${best.heldOutAuc} vs ${pairs(sgn(pos), sgn(neg))}`);
  // its strongest activation over the probes is the largest value of its hook
  const ta = neuronTopActivations(model, P, { layer: best.layer, neuron: best.neuron, k: 1, transcoders: set });
  let max = -Infinity;
  for (const pr of P) {
    const ids = model.tokenizer.encode(pr.text, { addSpecial: true });
    const h = model.forward(ids, { stats: false, logits: 'none', hooks: [hook], transcoders: { set, layers: [best.layer] } }).hooks[hook];
    for (let t = 0; t < ids.length; t++) max = Math.max(max, h[t * F + best.neuron]);
  }
  assert.equal(ta.top[0].activation, max);
  // neurons read together: one neuron = the best neuron's own held-out AUC; two, recomputed by hand
  const nv = findFeatureNeurons(model, P, { layers: [best.layer], top: 1, features: { city: DEFAULT_FEATURES.city }, combine: [1, 2] });
  const c = nv.best[0].combined;
  assert.equal(c[0].heldOutAuc, nv.best[0].heldOutAuc);
  const rank = Array.from({ length: I }, (_, j) => { const a = pairs(n0pos.map((v) => v[j]), n0neg.map((v) => v[j])); return [Math.max(a, 1 - a), j, a >= 0.5 ? 1 : -1]; })
    .sort((x, y) => y[0] - x[0] || x[1] - y[1]);
  const w = rank.slice(0, 2).map(([, j, sign]) => {
    const mean = (vs) => vs.reduce((a, v) => a + v[j], 0) / vs.length, mp = mean(n0pos), mn = mean(n0neg);
    const ss = n0pos.reduce((a, v) => a + (v[j] - mp) ** 2, 0) + n0neg.reduce((a, v) => a + (v[j] - mn) ** 2, 0);
    return [j, (sign * Math.abs(mp - mn)) / (ss / (n0pos.length + n0neg.length - 2))];
  });
  const score = (v) => w.reduce((a, [j, wj]) => a + wj * v[j], 0);
  assert.ok(Math.abs(c[1].heldOutAuc - pairs(npos.map(score), nneg.map(score))) < 1e-9, `two neurons: ${c[1].heldOutAuc} vs ${pairs(npos.map(score), nneg.map(score))}`);
  const cmp = neuronsVsFeatures(model, set, P, { features: { city: DEFAULT_FEATURES.city }, sizes: [1, 2, 4] });
  const row = cmp.rows[0];
  assert.equal(row.transcoder.heldOutAuc, best.heldOutAuc);
  assert.deepEqual(row.combined.map((x) => x.n), [1, 2, 4]);
  const m = row.combined.find((x) => x.heldOutAuc >= best.heldOutAuc);
  assert.equal(row.neuronsToMatch, m ? m.n : null);
  assert.throws(() => findFeatureNeurons(model, P, { transcoders: set, layers: [3] }), { code: 'E_ARG', message: /no layer 3/ });
  assert.throws(() => neuronTopActivations(model, P, { layer: 2, neuron: F, transcoders: set }), { code: 'E_ARG', message: /feature/ });
  assert.throws(() => findFeatureNeurons(model, P, { combine: [0] }), { code: 'E_ARG', message: /combine/ });
  model.dispose();
});

test('a feature\'s card (computed label, examples, histogram, what it writes), the features on a text, and a push calibrated to its scale, against brute force', async () => {
  const { model, set, weights } = await smallSet([3], { threads: 1 });
  const { W_dec } = weights(3);
  const P = probes(4, 30), F = SMALL.features, H = model.config.hidden_size, hook = 'blocks.3.transcoder.hook_feature';
  // every probe token's features, by hand
  const split = Math.floor(P.length / 2), rows = [];
  let max = [-Infinity];
  P.forEach((p, i) => {
    const ids = model.tokenizer.encode(p.text, { addSpecial: true });
    const h = model.forward(ids, { stats: false, logits: 'none', hooks: [hook], transcoders: { set } }).hooks[hook];
    tokenOffsets(model.tokenizer, ids).forEach(([a, b], t) => {
      if (b <= a || !/\S/.test(p.text.slice(a, b))) return;
      rows.push({ half: i < split ? 0 : 1, z: h.slice(t * F, (t + 1) * F), labels: new Set(p.spans.filter((s) => s.start < b && s.end > a).map((s) => s.label)) });
    });
  });
  // the feature that fires most often on city tokens
  const cityRows = rows.filter((x) => x.labels.has('city'));
  let f = 0, most = -1;
  for (let j = 0; j < F; j++) { const n = cityRows.filter((x) => x.z[j] > 0).length; if (n > most) { most = n; f = j; } }
  const card = featureCard(model, set, P, { layer: 3, feature: f, k: 3 });
  const pairs = (ps, ns) => { let c = 0; for (const a of ps) for (const b of ns) c += a > b ? 1 : a === b ? 0.5 : 0; return c / (ps.length * ns.length); };
  const aucOf = (half, name) => { const rs = rows.filter((x) => x.half === half); return pairs(rs.filter((x) => x.labels.has(name)).map((x) => x.z[f]), rs.filter((x) => !x.labels.has(name)).map((x) => x.z[f])); };
  for (const l of card.labels) {
    assert.ok(Math.abs(l.auc - aucOf(0, l.label)) < 1e-12 && Math.abs(l.heldOutAuc - aucOf(1, l.label)) < 1e-12, `${l.label}: ${l.auc}, ${l.heldOutAuc}`);
  }
  assert.equal(card.label.label, card.labels[0].label);
  assert.ok(card.labels.every((l) => l.auc <= card.label.auc));
  assert.ok(Math.abs(card.frequency - rows.filter((x) => x.z[f] > 0).length / rows.length) < 1e-12);
  assert.deepEqual(Array.from(card.output.direction), Array.from(Float32Array.from(W_dec.subarray(f * H, (f + 1) * H))));
  assert.ok(card.top.length === 3 && card.top[0].activation >= card.top[2].activation && card.atQuantiles.length === 4 && card.histogram.counts.length === 24);
  assert.equal(card.scale, card.top[0].activation);
  // the features on a text: each token's strongest, and the text's ranking, by hand
  const text = '我上周从巴黎飞到东京。I flew from Paris to Tokyo.';
  const on = featuresOnText(model, set, text, { layer: 3, k: 4, top: 5 });
  const ids = model.tokenizer.encode(text, { addSpecial: true });
  const h = model.forward(ids, { stats: false, logits: 'none', hooks: [hook], transcoders: { set } }).hooks[hook];
  on.tokens.forEach((tk, t) => {
    const z = h.subarray(t * F, (t + 1) * F), want = Array.from(z.keys()).sort((a, b) => z[b] - z[a] || a - b).slice(0, 4).filter((j) => z[j] > 0);
    assert.deepEqual(tk.features.map((x) => x.feature), want, `token ${t}`);
  });
  let bestF = -1, bestV = -Infinity;
  for (let t = 0; t < ids.length; t++) for (let j = 0; j < F; j++) if (h[t * F + j] > bestV) { bestV = h[t * F + j]; bestF = j; }
  assert.deepEqual([on.features[0].feature, on.features[0].activation], [bestF, bestV]);
  // a push of 2 × its scale on the feature = adding that multiple of its decoder row to the MLP's output
  const cities = featureTokens(model, P, { label: 'city' });
  const push = pushNeuron(model, 'I flew from Paris to', { layer: 3, neuron: f, values: [2 * card.scale], tokens: cities, transcoders: set });
  const ids2 = model.tokenizer.encode('I flew from Paris to', { addSpecial: true });
  const vec = Float32Array.from(W_dec.subarray(f * H, (f + 1) * H), (w) => w * 2 * card.scale);
  const direct = model.forward(ids2, { stats: false, logits: 'last', interventions: [{ hook: 'blocks.3.hook_mlp_out', op: 'add', vector: vec }] });
  assert.ok(Math.abs(push.after[0].p - tokenSetProbability(direct.logits, cities)) < 1e-5, `${push.after[0].p} vs ${tokenSetProbability(direct.logits, cities)}`);
  assert.throws(() => featuresOnText(model, set, text, { layer: 4 }), { code: 'E_ARG', message: /no layer 4/ });
  assert.throws(() => pushNeuron(model, 'x', { layer: 3, neuron: F, values: [1], tokens: cities, transcoders: set }), { code: 'E_ARG', message: /feature/ });
  model.dispose();
});

test('the memory preflight counts what a session allocates; a set that cannot fit is E_MEMORY before anything is allocated', async () => {
  const model = await loadModel(DEMO, { threads: 2 }); // two threads: the run state's per-thread work areas are counted too
  const e = model.e, o = { layers: [1, 4], features: 512, k: 16, buffer: 2048, batch: 512 };
  const mem = transcoderMemory(model, o);
  assert.ok(mem.bytes > 0 && mem.free > mem.bytes);
  // the engine's own session, driven by hand: heap growth after creating, training, scoring
  const before = e.x.ms_heap_used();
  const s = e.c.tc_session_create(model.m, o.layers, o.features, o.k, 128, o.buffer, o.batch, 1, 1e-3, 1);
  const eos = model.info().tokenizer.eos_token_ids[0];
  let n = 0;
  for (const seq of corpusSequences(model, 31, 128, eos)) { if (n++ >= 20) break; if (e.c.tc_room(s) < seq.length) e.c.tc_train(s); e.c.tc_feed(s, seq); }
  e.c.tc_train(s);
  e.c.tc_eval_reset(s, 1);
  for (const seq of corpusSequences(model, 32, 128, eos)) { e.c.tc_eval_feed(s, seq); break; }
  const grown = e.x.ms_heap_used() - before, counted = mem.bytes - mem.parts.saved;
  e.c.tc_session_destroy(s);
  assert.ok(grown <= counted && grown >= 0.97 * counted, `the session holds ${grown} bytes; the preflight counts ${counted}`);
  // 11 layers of 2^20 features: refused with the sizes, nothing allocated
  const h0 = e.x.ms_heap_used();
  await assert.rejects(trainTranscoders(model, { features: 1 << 20, k: 8 }), { code: 'E_MEMORY', message: /11 layers of 1048576 features need \d+ MB .* fewer layers/ });
  assert.equal(e.x.ms_heap_used(), h0);
  model.dispose();
});

test('patching transcoder features: all of a layer\'s, or one alone, from the clean run = adding their decoder rows\' difference to the MLP output', async () => {
  const { model, set, weights } = await smallSet([5], { threads: 1 });
  const { W_dec } = weights(5);
  const H = model.config.hidden_size, F = SMALL.features, hook = 'blocks.5.transcoder.hook_feature';
  const enc = (t) => model.tokenizer.encode(t, { addSpecial: true });
  const clean = enc('I flew from Paris to'), corrupted = enc('I flew from Tokyo to');
  assert.equal(clean.length, corrupted.length);
  const [a, b] = [clean, corrupted].map((ids) => model.forward(ids, { hooks: [hook], stats: false, logits: 'none', transcoders: { set } }).hooks[hook]);
  const p = clean.findIndex((id, i) => id !== corrupted[i]);
  const diff = [model.tokenizer.encode(' Tokyo')[0], model.tokenizer.encode(' London')[0]];
  const direct = (fs) => {
    const v = new Float32Array(clean.length * H);
    for (const f of fs) for (let o = 0; o < H; o++) v[p * H + o] += (a[p * F + f] - b[p * F + f]) * W_dec[f * H + o];
    const z = model.forward(corrupted, { stats: false, logits: 'last', interventions: [{ hook: 'blocks.5.hook_mlp_out', op: 'add', vector: v.subarray(p * H, (p + 1) * H), positions: [p] }] }).logits;
    return z[diff[0]] - z[diff[1]];
  };
  const all = model.activationPatching(clean, corrupted, { hook: 'transcoder.hook_feature', transcoders: { set }, metric: { logitDiff: diff }, positions: [p] });
  assert.deepEqual(all.layers, [5]);
  const every = Array.from({ length: F }, (_, f) => f);
  assert.ok(Math.abs(all.value[0][0] - direct(every)) < 1e-3, `all features: ${all.value[0][0]} vs ${direct(every)}`);
  const moved = every.filter((f) => a[p * F + f] !== b[p * F + f]).slice(0, 3);
  assert.ok(moved.length > 0, 'some feature differs at the changed token');
  const one = model.activationPatching(clean, corrupted, { hook: 'transcoder.hook_feature', transcoders: { set }, layers: [5], features: moved, metric: { logitDiff: diff }, positions: [p] });
  assert.deepEqual(one.features, moved);
  moved.forEach((f, i) => assert.ok(Math.abs(one.value[i][0] - direct([f])) < 1e-3, `feature ${f}: ${one.value[i][0]} vs ${direct([f])}`));
  // patching a run with itself changes nothing
  const self = model.activationPatching(clean, clean, { hook: 'transcoder.hook_feature', transcoders: { set }, metric: 'kl' });
  assert.ok(self.value[0].every((v) => v === 0));
  assert.throws(() => model.activationPatching(clean, corrupted, { hook: 'transcoder.hook_feature', metric: 'kl' }), { code: 'E_ARG', message: /needs transcoders/ });
  assert.throws(() => model.activationPatching(clean, corrupted, { hook: 'transcoder.hook_feature', transcoders: { set }, features: [1], metric: 'kl' }), { code: 'E_ARG', message: /layers: \[L\]/ });
  model.dispose();
});
