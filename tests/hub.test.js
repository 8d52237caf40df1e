// Hugging Face checkpoints loaded straight from a hub, converted while they stream in (js/hub.js),
// against a loopback server that answers like the hub (tests/hub-server.js): synthetic checkpoints
// with the real Qwen3.5 layout (BF16, index-sharded, vision and MTP tensors present) and a Qwen3
// one. Checked: the weights equal `mlpscope convert`'s byte for byte (logits bit for bit, files
// identical); the server log shows no byte of a skipped tensor was asked for; the wasm heap stays
// within the converted weights plus the staging buffers; abort frees everything; the second load
// comes from the cache with the server gone; cuts and 500s recover, wrong lengths, servers without
// Range, missing repositories and non-finite values fail typed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import fs from 'node:fs';
import path from 'node:path';
import { loadModel, loadModelInWorker, createEngine, listCachedModels } from '../js/index.js';
import { writeHfCheckpoint } from './hf-writer.js';
import { startHub } from './hub-server.js';
import { CLI, ROOT, tmpDir } from './helpers.js';

const run = promisify(execFile);
// the CLI keeps hub conversions in MLPSCOPE_CACHE (else ~/.cache/mlpscope): a folder of the test's own
const cliCache = tmpDir('hub-cli-cache');
const cli = async (...args) => (await run(process.execPath, [CLI, ...args], { maxBuffer: 1 << 26, env: { ...process.env, MLPSCOPE_CACHE: cliCache } })).stdout;

async function checkpoint(cfg, { dtype = 'BF16', shards = 3 } = {}) {
  const syn = tmpDir('hub-syn'), hf = tmpDir('hub-hf');
  await cli('synth', '--config', path.join(ROOT, 'tests/configs', cfg + '.json'), '--seed', '4', '--out', syn);
  writeHfCheckpoint(syn, hf, { dtype, shards, tokenizer: true, tokenizerMinVocab: 300 });
  return hf;
}
const QWEN = await checkpoint('qwen35-b');            // BF16, 3 files + index, vision and MTP tensors
const QWEN3 = await checkpoint('llama-qk', { dtype: 'F32', shards: 1 }); // Qwen3ForCausalLM (q/k norms), one file
const convertedQ8 = {};
for (const [k, dir] of Object.entries({ QWEN, QWEN3 })) { convertedQ8[k] = tmpDir('hub-conv'); await cli('convert', dir, '--out', convertedQ8[k], '--dtype', 'q8'); }

const ids = [3, 17, 42, 99, 5, 64, 120, 7];
const logits = (m) => m.forward(ids, { logits: 'all' }).logits;
const refLogits = {};
for (const k of ['QWEN', 'QWEN3']) { const m = await loadModel(convertedQ8[k]); refLogits[k] = logits(m); m.dispose(); }
const quick = { retries: 2, retryDelayMs: 5 };

/** byte ranges [start, end) of the tensors a converter must skip, per file */
function skippedRanges(dir) {
  const out = [];
  for (const f of fs.readdirSync(dir).filter((x) => x.endsWith('.safetensors'))) {
    const b = fs.readFileSync(path.join(dir, f));
    const n = Number(b.readBigUInt64LE(0));
    const h = JSON.parse(b.subarray(8, 8 + n).toString());
    for (const [name, t] of Object.entries(h)) if (/^(model\.visual\.|mtp\.)/.test(name)) out.push({ file: f, name, start: 8 + n + t.data_offsets[0], end: 8 + n + t.data_offsets[1] });
  }
  return out;
}

test('hf:owner/name: the Qwen3.5 layout (BF16, index-sharded, vision + MTP) loads bit-equal to `mlpscope convert --dtype q8`, and no skipped byte is asked for', async () => {
  const hub = await startHub({ 'Qwen/Tiny': QWEN });
  try {
    const phases = [];
    const m = await loadModel('hf:Qwen/Tiny', { hubUrl: hub.url, cache: false, ...quick, onProgress: (p) => phases.push(p) });
    assert.deepEqual(logits(m), refLogits.QWEN);
    assert.equal(m.info().source, 'hf:Qwen/Tiny@main');
    m.dispose();
    // progress: source bytes downloaded, then shards converted, then the model prepared
    const seen = [...new Set(phases.map((p) => p.phase))];
    assert.deepEqual(seen, ['download', 'convert', 'prepare']);
    const dl = phases.filter((p) => p.phase === 'download');
    assert.ok(dl.at(-1).loaded === dl.at(-1).total && dl.at(-1).total > 0 && dl.every((p, k) => !k || p.loaded >= dl[k - 1].loaded));
    // every request for tensor bytes was a Range request on the pinned commit; none touched a
    // vision or MTP tensor
    const skipped = skippedRanges(QWEN);
    assert.ok(skipped.length >= 8, 'the checkpoint has vision and MTP tensors');
    const weightReqs = hub.log.filter((l) => l.file?.endsWith('.safetensors'));
    assert.ok(weightReqs.length > 0 && weightReqs.every((l) => l.range && l.path.includes(`/resolve/${hub.commits['Qwen/Tiny']}/`)));
    for (const l of weightReqs) {
      const [, a, b] = /bytes=(\d+)-(\d+)/.exec(l.range).map(Number);
      for (const s of skipped) assert.ok(!(s.file === l.file && a < s.end && b >= s.start), `${l.range} of ${l.file} overlaps ${s.name}`);
    }
    const asked = weightReqs.reduce((n, l) => { const [, a, b] = /bytes=(\d+)-(\d+)/.exec(l.range).map(Number); return n + b - a + 1; }, 0);
    const files = fs.readdirSync(QWEN).filter((x) => x.endsWith('.safetensors')).reduce((n, f) => n + fs.statSync(path.join(QWEN, f)).size, 0);
    const skippedBytes = skipped.reduce((n, s) => n + s.end - s.start, 0);
    assert.ok(asked <= files - skippedBytes, `asked ${asked} bytes of ${files}, ${skippedBytes} of them skipped tensors`);
  } finally { await hub.close(); }
});

test('a Qwen3 checkpoint (one safetensors file, F32) and the same through a plain folder URL and from disk', async () => {
  const hub = await startHub({ 'Org/Qwen3-Tiny': QWEN3 });
  try {
    for (const src of ['hf:Org/Qwen3-Tiny', `${hub.url}/plain/Org/Qwen3-Tiny/`, QWEN3]) {
      const m = await loadModel(src, { hubUrl: hub.url, cache: false, ...quick });
      assert.deepEqual(logits(m), refLogits.QWEN3, src);
      m.dispose();
    }
  } finally { await hub.close(); }
});

test('mlpscope convert hf:… writes the same files as converting a downloaded copy; mlpscope run hf:… answers', async () => {
  const hub = await startHub({ 'Qwen/Tiny': QWEN });
  try {
    const out = tmpDir('hub-cli');
    await cli('convert', 'hf:Qwen/Tiny', '--out', out, '--dtype', 'q8', '--hub-url', hub.url);
    const files = fs.readdirSync(convertedQ8.QWEN).sort();
    assert.deepEqual(fs.readdirSync(out).sort(), files);
    for (const f of files) assert.ok(fs.readFileSync(path.join(out, f)).equals(fs.readFileSync(path.join(convertedQ8.QWEN, f))), `${f} differs`);
    const r = JSON.parse(await cli('run', 'hf:Qwen/Tiny', '--ids', ids.join(','), '--max-tokens', '2', '--json', '--hub-url', hub.url));
    const m = await loadModel(convertedQ8.QWEN);
    const want = [];
    for await (const s of m.generate(ids, { maxTokens: 2 })) want.push(s.id);
    m.dispose();
    assert.deepEqual(r.prompt_ids, ids);
    assert.deepEqual(r.ids.slice(ids.length), want, 'the same greedy tokens as the converted weight set');
  } finally { await hub.close(); }
});

test('the cache: a second load comes from it with the server gone (every shard fromCache), the same logits; a new commit converts again', async () => {
  const cacheDir = tmpDir('hub-cache');
  let hub = await startHub({ 'Qwen/Tiny': QWEN });
  const first = await loadModel('hf:Qwen/Tiny', { hubUrl: hub.url, cacheDir, ...quick });
  first.dispose();
  const url = hub.url;
  await hub.close();
  const events = [];
  const again = await loadModel('hf:Qwen/Tiny', { hubUrl: url, cacheDir, ...quick, onProgress: (p) => p.file !== 'manifest.json' && events.push(p) });
  assert.deepEqual(logits(again), refLogits.QWEN);
  again.dispose();
  assert.ok(events.length && events.every((p) => p.fromCache), 'every shard from the cache');
  const sets = await listCachedModels({ cacheDir });
  assert.equal(sets.length, 1);
  assert.match(sets[0].url, /\/Qwen\/Tiny\/resolve\/main\/mlpscope-q8_0\/$/);
  // a changed checkpoint (new commit): converted again, the old shards dropped
  const changed = tmpDir('hub-changed');
  for (const f of fs.readdirSync(QWEN)) fs.copyFileSync(path.join(QWEN, f), path.join(changed, f));
  const cfg = JSON.parse(fs.readFileSync(path.join(changed, 'generation_config.json')));
  fs.writeFileSync(path.join(changed, 'generation_config.json'), JSON.stringify({ ...cfg, note: 'new commit' }));
  hub = await startHub({ 'Qwen/Tiny': changed }, { port: Number(new URL(url).port) }); // the same hub URL
  try {
    const n = hub.log.length;
    const m = await loadModel('hf:Qwen/Tiny', { hubUrl: hub.url, cacheDir, ...quick });
    m.dispose();
    assert.ok(hub.log.slice(n).some((l) => l.file?.endsWith('.safetensors')), 'a new commit is converted again');
    const after = await listCachedModels({ cacheDir });
    assert.equal(after.length, 1);
    assert.equal(after[0].files.length, sets[0].files.length, 'no second copy kept');
  } finally { await hub.close(); }
});

test('wasm memory: the converted weights + staging, not a second copy; abort frees everything', async () => {
  const hub = await startHub({ 'Qwen/Tiny': QWEN });
  try {
    const e1 = await createEngine(), e2 = await createEngine();
    const base = e1.heapBytes;
    const m1 = await loadModel(convertedQ8.QWEN, { engine: e1 });
    const m2 = await loadModel('hf:Qwen/Tiny', { hubUrl: hub.url, cache: false, engine: e2, ...quick });
    const plain = e1.heapBytes - base, hubBytes = e2.heapBytes - base;
    const staging = 3 * 4 * 2 ** 20;
    assert.ok(hubBytes <= plain + staging + (2 << 20), `heap growth: hub ${hubBytes}, weight set ${plain}`);
    m1.dispose(); m2.dispose();
    // abort in the middle of the download: typed, and the heap is back where it was
    const e3 = await createEngine();
    const used0 = e3.c.heap_used();
    const ac = new AbortController();
    await assert.rejects(loadModel('hf:Qwen/Tiny', { hubUrl: hub.url, cache: false, engine: e3, signal: ac.signal, ...quick,
      onProgress: (p) => { if (p.phase === 'download' && p.loaded > 0) ac.abort(); } }), (e) => e.code === 'E_ABORTED' && e.name === 'AbortError');
    assert.equal(e3.c.heap_used(), used0, 'abort frees the plan, the staging and the model');
  } finally { await hub.close(); }
});

test('faults: a cut answer resumes where it stopped and a 500 is retried (same weights); wrong lengths, no Range, a missing repository, bad options and NaN fail typed', async () => {
  const hub = await startHub({ 'Qwen/Tiny': QWEN });
  try {
    const file = 'model-00002-of-00003.safetensors';
    hub.faults.push({ file, kind: 'cut', times: 2, at: 0.5 }, { file: 'config.json', kind: 500, times: 1 });
    const n0 = hub.log.length;
    let m = await loadModel('hf:Qwen/Tiny', { hubUrl: hub.url, cache: false, ...quick });
    assert.deepEqual(logits(m), refLogits.QWEN);
    m.dispose();
    const reqs = hub.log.slice(n0).filter((l) => l.file === file && l.range && !/^bytes=0-7$/.test(l.range) && !/^bytes=8-/.test(l.range));
    const starts = reqs.map((l) => Number(/bytes=(\d+)-/.exec(l.range)[1]));
    assert.ok(reqs.length >= 2 && new Set(starts).size === starts.length, `resumed from later bytes: ${reqs.map((l) => l.range)}`);

    const fail = (o, code, re) => assert.rejects(loadModel('hf:Qwen/Tiny', { hubUrl: hub.url, cache: false, ...quick, ...o }), (e) => e.code === code && re.test(e.message));
    hub.faults.push({ file, kind: 'total', times: 99 });
    await fail({}, 'E_CHECKPOINT', new RegExp(`${file}: .*(changed|header places)`));
    hub.faults.length = 0;
    hub.faults.push({ file, kind: 'short', times: 99, at: 0.3 });
    await fail({}, 'E_CHECKPOINT', new RegExp(`${file}: the response ended at byte \\d+`));
    hub.faults.length = 0;
    hub.faults.push({ file, kind: 'norange', times: 99 });
    await fail({}, 'E_NETWORK', /ignored a range request .*needs HTTP Range/);
    hub.faults.length = 0;
    hub.faults.push({ file: 'config.json', kind: 500, times: 99 });
    await fail({}, 'E_NETWORK', /config\.json: HTTP 500/);
    hub.faults.length = 0;
    // the memory preflight runs on the plan (config + headers): no tensor byte is fetched first
    const n1 = hub.log.length;
    await fail({ memoryBudget: 1 << 20 }, 'E_MEMORY', /over the budget/);
    assert.ok(hub.log.slice(n1).filter((l) => l.file?.endsWith('.safetensors')).every((l) => /^bytes=(0-7|8-\d+)$/.test(l.range)), 'only the headers were read');
    await assert.rejects(loadModel('hf:Qwen/Nope', { hubUrl: hub.url, cache: false, ...quick }), (e) => e.code === 'E_CHECKPOINT' && /hf:Qwen\/Nope@main: no such repository/.test(e.message));
    await assert.rejects(loadModel('hf:Qwen/Tiny@v9', { hubUrl: hub.url, cache: false, ...quick }), (e) => e.code === 'E_CHECKPOINT' && /@v9/.test(e.message));
    await assert.rejects(loadModel('hf:not a repo', {}), (e) => e.code === 'E_ARG' && /hf:owner\/name/.test(e.message));
    await assert.rejects(loadModel('hf:Qwen/Tiny', { hubUrl: hub.url, dtype: 'q3' }), (e) => e.code === 'E_ARG' && /dtype: 'q3'/.test(e.message));
    // a safetensors header that does not fit its file: named
    const cut = tmpDir('hub-cut');
    for (const f of fs.readdirSync(QWEN)) fs.copyFileSync(path.join(QWEN, f), path.join(cut, f));
    const hb = fs.readFileSync(path.join(cut, file));
    hb.writeBigUInt64LE(BigInt(hb.length), 0);
    fs.writeFileSync(path.join(cut, file), hb);
    const hub3 = await startHub({ 'Qwen/Cut': cut });
    try {
      await assert.rejects(loadModel('hf:Qwen/Cut', { hubUrl: hub3.url, cache: false, ...quick }), (e) => e.code === 'E_CHECKPOINT' && e.message.includes(file) && /header length/.test(e.message));
    } finally { await hub3.close(); }
    // a non-finite value in a tensor: named
    const bad = tmpDir('hub-nan');
    for (const f of fs.readdirSync(QWEN)) fs.copyFileSync(path.join(QWEN, f), path.join(bad, f));
    const sf = path.join(bad, file), b = fs.readFileSync(sf), n = Number(b.readBigUInt64LE(0));
    const h = JSON.parse(b.subarray(8, 8 + n).toString());
    const [name, t] = Object.entries(h).find(([k, v]) => /mlp\.down_proj/.test(k) && v.dtype === 'BF16');
    b.writeUInt16LE(0x7fc0, 8 + n + t.data_offsets[0] + 6); // a BF16 NaN
    fs.writeFileSync(sf, b);
    const hub2 = await startHub({ 'Qwen/Bad': bad });
    try {
      await assert.rejects(loadModel('hf:Qwen/Bad', { hubUrl: hub2.url, cache: false, ...quick }),
        (e) => e.code === 'E_TENSOR' && e.message.includes(name.replace('model.language_model.', '').replace('.weight', '')) && /not finite/.test(e.message));
    } finally { await hub2.close(); }
  } finally { await hub.close(); }
});

test('in a Worker: loadModelInWorker("hf:…") with hubUrl and progress phases', async () => {
  const hub = await startHub({ 'Qwen/Tiny': QWEN });
  try {
    const phases = new Set();
    const m = await loadModelInWorker('hf:Qwen/Tiny', { hubUrl: hub.url, cache: false, ...quick, onProgress: (p) => phases.add(p.phase) });
    const r = await m.forward(ids, { logits: 'all' });
    assert.deepEqual(Array.from(r.logits), Array.from(refLogits.QWEN));
    assert.ok(phases.has('download') && phases.has('convert'));
    await m.dispose();
  } finally { await hub.close(); }
});
