// The loader over HTTP against injected faults: every run ends in a correct model (after retry or
// resume) or in a typed error naming the shard, never in a usable half-loaded model.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { loadModel, MlpscopeError } from '../js/index.js';
import { startServer } from './fault-server.js';
import { CLI, ROOT, tmpDir } from './helpers.js';

const dir = tmpDir('faults');
execFileSync(process.execPath, [CLI, 'synth', '--config', path.join(ROOT, 'tests/configs/qwen35-q.json'), '--seed', '8', '--shard-size', '65536', '--out', dir], { stdio: 'pipe' });
const man = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
const total = man.shards.reduce((a, s) => a + s.bytes, 0);
const shard = man.shards[2].file;
const ids = [1, 5, 9, 200, 7, 3];
const local = await loadModel(dir);
const want = local.forward(ids).logits;
local.dispose();
const srv = await startServer(dir);
after(() => srv.close());

const opts = (extra = {}) => ({ retryDelayMs: 5, ...extra });
async function loadsCorrectly(label, o = {}) {
  const seen = [];
  const m = await loadModel(srv.url, opts({ onProgress: (p) => seen.push(p), ...o }));
  assert.deepEqual(m.forward(ids).logits, want, `${label}: logits differ from the local load`);
  const last = seen.at(-1);
  assert.equal(last.total, total, `${label}: progress total`);
  assert.equal(last.loaded, total, `${label}: progress ends at the total`);
  m.dispose();
  return seen;
}
const fault = (f) => { srv.faults.length = 0; srv.log.length = 0; srv.faults.push({ times: 1, ...f }); };

test(`clean load over HTTP: ${man.shards.length} shards, progress exact`, async () => {
  srv.faults.length = 0;
  await loadsCorrectly('clean');
});

test('info().manifestSha256 names the weight set: the sha256 of its manifest.json, the same over HTTP and from a folder', async () => {
  const { createHash } = await import('node:crypto');
  const want = createHash('sha256').update(fs.readFileSync(path.join(dir, 'manifest.json'))).digest('hex');
  srv.faults.length = 0;
  const a = await loadModel(srv.url, opts()), b = await loadModel(dir);
  assert.equal(a.info().manifestSha256, want);
  assert.equal(b.info().manifestSha256, want);
  a.dispose(); b.dispose();
  const other = tmpDir('faults-other');
  execFileSync(process.execPath, [CLI, 'synth', '--config', path.join(ROOT, 'tests/configs/qwen35-q.json'), '--seed', '9', '--out', other], { stdio: 'pipe' });
  const c = await loadModel(other);
  assert.notEqual(c.info().manifestSha256, want, 'other weights, another identity');
  c.dispose();
});

test('404 on a shard: E_SHARD_MISSING naming it', async () => {
  fault({ file: shard, kind: 404 });
  await assert.rejects(loadModel(srv.url, opts()), (e) => e.code === 'E_SHARD_MISSING' && e.message.includes(shard));
});

test('500 twice, then success: retried', async () => {
  fault({ file: shard, kind: 500, times: 2 });
  await loadsCorrectly('500 then ok');
  assert.equal(srv.log.filter((l) => l.file === shard).length, 3);
});

test('503 forever: E_NETWORK naming the shard after the retries', async () => {
  fault({ file: shard, kind: 503, times: 1000 });
  await assert.rejects(loadModel(srv.url, opts({ retries: 3 })), (e) => e.code === 'E_NETWORK' && e.message.includes(shard));
  srv.faults.length = 0;
});

test('connection cut mid-shard: resumed with a Range request', async () => {
  fault({ file: shard, kind: 'cut', at: 0.4 });
  await loadsCorrectly('cut');
  const reqs = srv.log.filter((l) => l.file === shard);
  assert.equal(reqs.length, 2);
  assert.match(reqs[1].range, /^bytes=[1-9]\d*-$/);
});

test('cut, then a server that ignores Range: restarts the shard from byte 0', async () => {
  srv.faults.length = 0; srv.log.length = 0;
  srv.faults.push({ file: shard, kind: 'cut', times: 1, at: 0.3 }, { file: shard, kind: 'norange', times: 1 });
  const seen = await loadsCorrectly('norange');
  assert.ok(seen.some((p, i) => i > 0 && p.loaded < seen[i - 1].loaded), 'progress steps back when the shard restarts');
});

test('a flipped byte once: refetched; always: E_SHARD_HASH naming the shard', async () => {
  fault({ file: shard, kind: 'flip' });
  await loadsCorrectly('flip once');
  fault({ file: shard, kind: 'flip', times: 1000 });
  await assert.rejects(loadModel(srv.url, opts({ retries: 2 })), (e) => e.code === 'E_SHARD_HASH' && e.message.includes(shard));
  srv.faults.length = 0;
});

test('wrong lengths: too long always gives E_SHARD_SIZE; too short is resumed', async () => {
  fault({ file: shard, kind: 'long', times: 1000 });
  await assert.rejects(loadModel(srv.url, opts({ retries: 1 })), (e) => e.code === 'E_SHARD_SIZE' && e.message.includes(shard));
  fault({ file: shard, kind: 'short', at: 0.5 });
  await loadsCorrectly('short');
});

test('slow responses still load', async () => {
  srv.faults.length = 0;
  for (const s of man.shards) srv.faults.push({ file: s.file, kind: 'slow', times: 1 });
  await loadsCorrectly('slow');
});

test('abort mid-download: E_ABORTED, no model', async () => {
  fault({ file: shard, kind: 'hang', at: 0.5 });
  const ac = new AbortController();
  const p = loadModel(srv.url, opts({ signal: ac.signal, onProgress: (pr) => { if (pr.loaded > 0) setTimeout(() => ac.abort(), 20); } }));
  await assert.rejects(p, (e) => e.code === 'E_ABORTED' && e.name === 'AbortError' && e instanceof MlpscopeError);
  srv.faults.length = 0;
  await assert.rejects(loadModel(srv.url, opts({ signal: AbortSignal.abort() })), (e) => e.code === 'E_ABORTED');
});

// (the hung request never ends by itself: without the stall timeout this test would hang, which its
// timeout turns into a failure; no duration is asserted)
test('a server that stalls mid-shard: the request is abandoned after stallTimeoutMs and the shard resumed', { timeout: 120000 }, async () => {
  fault({ file: shard, kind: 'hang', at: 0.5 });
  await loadsCorrectly('stall', { stallTimeoutMs: 200 });
  const reqs = srv.log.filter((l) => l.file === shard);
  assert.equal(reqs.length, 2);
  assert.match(reqs[1].range, /^bytes=[1-9]/);
  fault({ file: 'manifest.json', kind: 'hang', at: 0.5, times: 100 });
  await assert.rejects(loadModel(srv.url, opts({ stallTimeoutMs: 100, retries: 1 })), (e) => e.code === 'E_NETWORK' && /no data for 100 ms/.test(e.message));
  srv.faults.length = 0;
});

test('manifest over HTTP: 404 is E_MANIFEST, 500 once is retried, 500 forever is E_NETWORK', async () => {
  fault({ file: 'manifest.json', kind: 404 });
  await assert.rejects(loadModel(srv.url, opts()), (e) => e.code === 'E_MANIFEST');
  fault({ file: 'manifest.json', kind: 500 });
  await loadsCorrectly('manifest 500 once');
  fault({ file: 'manifest.json', kind: 500, times: 1000 });
  await assert.rejects(loadModel(srv.url, opts({ retries: 2 })), (e) => e.code === 'E_NETWORK' && /manifest\.json/.test(e.message));
  srv.faults.length = 0;
});

test('int8 and exact activations: each shard is laid out as soon as it is verified; the result does not depend on the order shards arrive in', async () => {
  const qdir = tmpDir('faults-q4');
  execFileSync(process.execPath, [CLI, 'synth', '--config', path.join(ROOT, 'tests/configs/qwen35-q.json'), '--seed', '8', '--dtype', 'q4', '--embed-dtype', 'q8', '--shard-size', '65536', '--out', qdir], { stdio: 'pipe' });
  const res = {};
  for (const activations of ['int8', 'exact']) {
    const got = [];
    for (const parallel of [1, 4]) {
      const m = await loadModel(qdir, { activations, parallel });
      const dtypes = Object.keys(m.info().dtypes);
      assert.equal(m.info().build.activations, activations);
      assert.ok(dtypes.includes('q8_0x4') && dtypes.includes('q4_0x4'), `${activations}, parallel ${parallel}: 4-row layouts in use (${dtypes})`);
      assert.ok(!dtypes.includes('q8_0') && !dtypes.includes('q4_0'), `${activations}, parallel ${parallel}: no matrix left in the plain layout (${dtypes})`);
      got.push(m.forward(ids).logits);
      m.dispose();
    }
    assert.deepEqual(got[1], got[0], `${activations}: the same logits whatever order the shards arrived in`);
    res[activations] = got[0];
  }
  assert.notDeepEqual(res.int8, res.exact, 'int8 activations change the numbers a little');
});

test('the loader grows the wasm memory once: after reserve(n), n bytes of allocations need no growth', async () => {
  const { createEngine } = await import('../js/wasm.js');
  for (const threads of [1, 2]) {
    const e = await createEngine({ threads });
    try {
      const top = e.c.heap_break();
      e.reserve(64 << 20);
      const reserved = e.heapBytes;
      assert.ok(reserved >= top + (64 << 20), `threads ${threads}: heap in use up to ${top}, memory after reserve ${reserved}`);
      const ps = Array.from({ length: 16 }, () => e.malloc(4 << 20));
      assert.equal(e.heapBytes, reserved, `threads ${threads}: 64 MiB of mallocs after reserve grew the memory`);
      for (const p of ps) e.free(p);
      e.reserve(8 * 1024 ** 3); // past the 4 GiB limit: capped, never throws
      assert.ok(e.heapBytes <= 4 * 1024 ** 3);
    } finally { e.shutdown(); }
  }
});

test('the manifest\'s own URL or path names the weight set too', async () => {
  srv.faults.length = 0;
  const m = await loadModel(srv.url + 'manifest.json', opts());
  assert.deepEqual(m.forward(ids).logits, want);
  m.dispose();
  const p = await loadModel(path.join(dir, 'manifest.json'));
  assert.deepEqual(p.forward(ids).logits, want);
  p.dispose();
});

test('20 loads with retries on one signal leave no listener on it and no warning', async () => {
  const { getEventListeners } = await import('node:events');
  const warnings = [];
  const onWarning = (w) => warnings.push(w);
  process.on('warning', onWarning);
  const ac = new AbortController();
  try {
    for (let k = 0; k < 20; k++) {
      fault({ file: 'manifest.json', kind: 500 }); // one failure each, then the retries succeed
      srv.faults.push({ file: shard, kind: 500, times: 1 });
      const m = await loadModel(srv.url, opts({ signal: ac.signal }));
      m.dispose();
    }
    await new Promise((r) => setTimeout(r, 50)); // warnings are emitted on a later tick
    assert.ok(srv.log.length > 0);
    assert.equal(getEventListeners(ac.signal, 'abort').length, 0, 'every abort listener was removed');
    assert.deepEqual(warnings.map((w) => w.name), []);
  } finally { process.off('warning', onWarning); srv.faults.length = 0; }
});
