// Reliability: the heap returns to its baseline after dispose (20 load/dispose cycles on one
// engine), and 200 seeded runs of randomized HTTP fault schedules each end in a correct model or
// a typed error, without leaking memory.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { loadModel, createEngine, MlpscopeError } from '../js/index.js';
import { startServer } from './fault-server.js';
import { CLI, ROOT, tmpDir } from './helpers.js';

const dir = tmpDir('rel');
execFileSync(process.execPath, [CLI, 'synth', '--config', path.join(ROOT, 'tests/configs/qwen35-a.json'), '--seed', '4', '--shard-size', '32768', '--out', dir], { stdio: 'pipe' });
const man = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
const { createHash } = await import('node:crypto');
const manifestSha256 = createHash('sha256').update(fs.readFileSync(path.join(dir, 'manifest.json'))).digest('hex');
const ids = [1, 2, 3, 50, 60, 70];
const ref = await loadModel(dir);
const want = ref.forward(ids).logits;
ref.dispose();

test('the two shard hashers agree: node:crypto (Node loads) and the engine\'s C sha256 (browser loads)', async () => {
  const { sha256Hex } = await import('../js/hash.js');
  const e = await createEngine();
  let seed = 7;
  for (const n of [0, 1, 55, 56, 63, 64, 65, 1000, 65536 + 3]) {
    const b = Uint8Array.from({ length: n }, () => { seed = (seed * 1103515245 + 12345) >>> 0; return seed >>> 24; });
    assert.equal(sha256Hex(e, b), createHash('sha256').update(b).digest('hex'), `${n} bytes`);
  }
  // and a shard of the weight set hashes to the manifest's value both ways
  const shard = fs.readFileSync(path.join(dir, man.shards[0].file));
  assert.equal(sha256Hex(e, shard), man.shards[0].sha256);
});

test('dispose returns the heap to its baseline: 20 load / forward / generate / dispose cycles', async () => {
  const e = await createEngine();
  const baseline = e.c.heap_used();
  let after1 = 0;
  for (let i = 0; i < 20; i++) {
    const m = await loadModel(dir, { engine: e });
    m.forward(ids, { hooks: ['blocks.1.mlp.hook_post'], logitLens: { positions: [-1] } });
    for await (const t of m.generate(ids, { maxTokens: 3 })) void t;
    m.dispose();
    if (i === 0) after1 = e.c.heap_used();
  }
  const end = e.c.heap_used();
  console.log(`# heap in use: baseline ${baseline} B, after 1 cycle ${after1} B, after 20 cycles ${end} B (wasm memory ${e.heapBytes} B)`);
  assert.equal(after1, baseline);
  assert.equal(end, baseline);
});

const KINDS = [404, 500, 503, 'cut', 'flip', 'long', 'short', 'slow', 'norange', 'hang'];
function rng(seed) { let s = seed * 2654435761 >>> 0 || 1; return () => { s ^= s << 13; s >>>= 0; s ^= s >>> 17; s ^= s << 5; s >>>= 0; return s / 4294967296; }; }
const srv = await startServer(dir);
after(() => srv.close());

test('200 seeded random fault schedules: a correct model or a typed error naming the file, never a leak', async () => {
  const e = await createEngine();
  const baseline = e.c.heap_used();
  const outcomes = {};
  for (let seed = 1; seed <= 200; seed++) {
    const r = rng(seed);
    srv.faults.length = 0;
    const n = Math.floor(r() * 4);
    const files = ['manifest.json', ...man.shards.map((s) => s.file)];
    for (let k = 0; k < n; k++) srv.faults.push({ file: files[Math.floor(r() * files.length)], kind: KINDS[Math.floor(r() * KINDS.length)], times: 1 + Math.floor(r() * 3), at: 0.1 + 0.8 * r() });
    const abortAt = r() < 0.15 ? Math.floor(r() * 5) : -1;
    const ac = new AbortController();
    let progressCount = 0;
    let outcome;
    try {
      const m = await loadModel(srv.url, { engine: e, retries: 2, retryDelayMs: 1, signal: ac.signal, manifestSha256, stallTimeoutMs: 300,
        onProgress: () => { if (++progressCount === abortAt) ac.abort(); } });
      assert.deepEqual(m.forward(ids).logits, want, `seed ${seed}: a loaded model computes the right numbers`);
      m.dispose();
      outcome = 'loaded';
    } catch (err) {
      assert.ok(err instanceof MlpscopeError, `seed ${seed}: ${err}`);
      assert.ok(['E_MANIFEST', 'E_SHARD_MISSING', 'E_SHARD_SIZE', 'E_SHARD_HASH', 'E_NETWORK', 'E_ABORTED'].includes(err.code), `seed ${seed}: ${err.code}`);
      if (err.code !== 'E_ABORTED') assert.ok(files.some((f) => err.message.includes(f)) || /manifest/.test(err.message), `seed ${seed}: the message names the file: ${err.message}`);
      outcome = err.code;
    }
    outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
    assert.equal(e.c.heap_used(), baseline, `seed ${seed}: memory returned after ${outcome}`);
  }
  srv.faults.length = 0;
  console.log(`# 200 runs: ${JSON.stringify(outcomes)}`);
  assert.ok(outcomes.loaded >= 50, 'most schedules are survivable with retries');
});

// Tests leave the user's home alone (tests/helpers.js gives every test process an empty home and
// checks after its tests that nothing wrote the default cache there). The check itself is tested:
// a test file that writes into the default cache folder fails, one that does not passes.
test('the home-folder check: a test that writes the default cache fails, and the real home is not touched', async () => {
  const { TEST_HOME } = await import('./helpers.js');
  const os = await import('node:os');
  assert.equal(os.homedir(), TEST_HOME, 'this process runs with an empty home of its own');
  assert.notEqual(process.env.HOME, undefined);
  const d = tmpDir('home-check');
  const probe = (write) => {
    const f = path.join(d, `${write ? 'writes' : 'clean'}.test.mjs`);
    fs.writeFileSync(f, `import { test } from 'node:test';
import fs from 'node:fs';
import path from 'node:path';
import { defaultCacheDir } from ${JSON.stringify(path.join(ROOT, 'js/hub.js'))};
import ${JSON.stringify(path.join(ROOT, 'tests/helpers.js'))};
test('t', async () => { const c = await defaultCacheDir(); if (${write}) { fs.mkdirSync(c, { recursive: true }); fs.writeFileSync(path.join(c, 'x'), 'x'); } });
`);
    const env = { ...process.env, HOME: d };
    delete env.NODE_TEST_CONTEXT; // a test runner of its own, not a child of this one
    try { execFileSync(process.execPath, ['--test', f], { stdio: 'pipe', env }); return { ok: true, out: '' }; } catch (e) { return { ok: false, out: String(e.stdout) }; }
  };
  const clean = probe(false), dirty = probe(true);
  assert.ok(clean.ok, clean.out);
  assert.ok(!dirty.ok, 'a test writing the default cache fails');
  assert.match(dirty.out, /wrote the default cache under the home folder/);
  assert.deepEqual(fs.readdirSync(d).filter((n) => n.startsWith('.')), [], 'the home given to the child (its HOME) got nothing: it ran in an empty home of its own');
});
