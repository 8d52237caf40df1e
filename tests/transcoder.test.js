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
import { trainTranscoders, corpusSequences, TRANSCODER_DEFAULTS } from '../js/transcoder.js';
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

test('a saved transcoder set, read back by its manifest, gives the reported held-out FVU and L0 in float64; the error term keeps the model bit for bit', async () => {
  const model = await loadModel(DEMO, { threads: 1 });
  const r = await trainTranscoders(model, SMALL);
  const { scores, files } = r;
  assert.equal(scores.eval_tokens, SMALL.valTokens);
  assert.equal(scores.error_term_max_abs_logit_diff, 0, 'with the error term the replacement is the model itself');
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
  await assert.rejects(trainTranscoders(model, { tokens: 1e6, features: 64, k: 4, signal: AbortSignal.abort() }), { code: 'E_ABORTED' });
  // the model disposed while it trains (between two of its waits): E_STATE, not a read of freed memory
  await assert.rejects(trainTranscoders(model, { tokens: 1e6, features: 64, k: 4, onProgress: () => model.dispose() }), { code: 'E_STATE', message: /disposed/ });
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
