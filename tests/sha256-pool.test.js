// Node hashes local shards on worker threads (js/sha256-pool.js). Its digests must equal
// node:crypto's over the same bytes whatever the piece sizes and however sessions interleave; a
// dead worker must turn into a rejected promise (the loader then hashes that shard itself), never a
// hang; and a load must give the same model, and the same typed errors, with 0, 1 or 2 hash threads.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { createSha256Pool } from '../js/sha256-pool.js';
import { loadModel } from '../js/index.js';
import { CLI, ROOT, tmpDir } from './helpers.js';

const bytes = (n, seed) => { const b = new Uint8Array(n); let x = seed >>> 0; for (let i = 0; i < n; i++) { x = (x * 1664525 + 1013904223) >>> 0; b[i] = x >>> 24; } return b; };

test('pool digests equal node:crypto on awkward piece sizes, sessions interleaved over 2 workers', async () => {
  const pool = createSha256Pool(2);
  try {
    const inputs = [[], [1], [8 << 20, 1], [3, (8 << 20) + 5, 0, 7], [65536, 65536, 12345]].map((sizes, k) => sizes.map((n, j) => bytes(n, 100 * k + j)));
    const sessions = inputs.map(() => pool.session());
    // feed the sessions round robin, one piece at a time, as concurrent shard loads do
    for (let j = 0; j < 4; j++)
      await Promise.all(inputs.map((pieces, k) => pieces[j] && sessions[k].update(pieces[j].length, (off, n) => pieces[j].subarray(off, off + n))));
    const got = await Promise.all(sessions.map((s) => s.hex()));
    inputs.forEach((pieces, k) => {
      const h = createHash('sha256');
      for (const p of pieces) h.update(p);
      assert.equal(got[k], h.digest('hex'), `input ${k} (${pieces.map((p) => p.length)})`);
    });
  } finally { pool.close(); }
});

test('a worker that dies: the session rejects (hashWorkerFailed), later updates reject too, nothing hangs', async () => {
  const pool = createSha256Pool(1);
  try {
    const s = pool.session();
    const data = bytes(3 << 20, 7);
    await s.update(data.length, (off, n) => data.subarray(off, off + n));
    await pool.workers[0].terminate();
    await assert.rejects(s.hex(), (e) => e.hashWorkerFailed === true && /sha256 worker failed/.test(e.message));
    const s2 = pool.session();
    const many = bytes(40 << 20, 9); // more pieces than the pool has buffers
    await assert.rejects(s2.update(many.length, (off, n) => many.subarray(off, off + n)), (e) => e.hashWorkerFailed === true);
  } finally { pool.close(); }
});

test('local load: the same logits with 0, 1 and 2 hash threads; a changed byte is E_SHARD_HASH naming the shard with each', async () => {
  const dir = tmpDir('hash-threads');
  execFileSync(process.execPath, [CLI, 'synth', '--config', path.join(ROOT, 'tests/configs/qwen35-q.json'), '--seed', '4', '--shard-size', '65536', '--out', dir], { stdio: 'pipe' });
  const man = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
  assert.ok(man.shards.length >= 4, `${man.shards.length} shards`);
  const ids = [3, 1, 4, 1, 5, 9, 2, 6];
  const logits = [];
  for (const hashThreads of [0, 1, 2]) {
    const m = await loadModel(dir, { hashThreads, parallel: 3 });
    logits.push(m.forward(ids).logits);
    m.dispose();
  }
  assert.deepEqual(logits[1], logits[0]);
  assert.deepEqual(logits[2], logits[0]);
  const bad = tmpDir('hash-threads-bad');
  for (const f of fs.readdirSync(dir)) fs.copyFileSync(path.join(dir, f), path.join(bad, f));
  const victim = man.shards[man.shards.length - 2];
  const p = path.join(bad, victim.file);
  const b = fs.readFileSync(p);
  b[b.length >> 1] ^= 0x40;
  fs.writeFileSync(p, b);
  for (const hashThreads of [0, 1, 2])
    await assert.rejects(loadModel(bad, { hashThreads }), (e) => e.code === 'E_SHARD_HASH' && e.message.includes(victim.file), `hashThreads ${hashThreads}`);
});
