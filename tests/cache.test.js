// The weight cache: in Node, `cacheDir` keeps a URL source's files as browsers keep them in the
// Cache API (the same code path); a second load works with the server gone; listCachedModels /
// deleteCachedModel; a shard replaced under the same URL drops the old bytes after the next load;
// a corrupt cached file is dropped and fetched again.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { loadModel, listCachedModels, deleteCachedModel } from '../js/index.js';
import { startServer } from './fault-server.js';
import { DEMO, tmpDir } from './helpers.js';

const ids = [5, 9, 200, 31];
const local = await loadModel(DEMO);
const want = local.forward(ids, { logits: 'last' }).logits;
local.dispose();

/** the demo weight set in a folder of its own (so a test can change it) */
function copyDemo() {
  const dir = tmpDir('cache-src');
  for (const f of fs.readdirSync(DEMO)) if (fs.statSync(path.join(DEMO, f)).isFile()) fs.copyFileSync(path.join(DEMO, f), path.join(dir, f));
  return dir;
}

test('cacheDir: the first load fills it, the second comes from it with the server gone, the same logits', async () => {
  const cacheDir = tmpDir('cache');
  const srv = await startServer(copyDemo());
  const url = srv.url;
  const first = [], second = [];
  let m = await loadModel(url, { cacheDir, onProgress: (p) => p.file !== 'manifest.json' && first.push(p.fromCache) });
  assert.deepEqual(m.forward(ids, { logits: 'last' }).logits, want);
  m.dispose();
  assert.ok(first.length && first.every((c) => !c), 'the first load reads the network');
  await srv.close();
  m = await loadModel(url, { cacheDir, onProgress: (p) => p.file !== 'manifest.json' && second.push(p.fromCache) });
  assert.deepEqual(m.forward(ids, { logits: 'last' }).logits, want);
  m.dispose();
  assert.ok(second.length && second.every((c) => c), `the second load reads the cache only: ${JSON.stringify(second)}`);
  await assert.rejects(loadModel(url, { cache: false }), (e) => e.code === 'E_NETWORK' || e.code === 'E_MANIFEST', 'cache: false does not read it');

  const list = await listCachedModels({ cacheDir });
  assert.equal(list.length, 1);
  assert.equal(list[0].url, url);
  const man = JSON.parse(fs.readFileSync(path.join(DEMO, 'manifest.json'), 'utf8'));
  const shard = list[0].files.find((f) => f.file === man.shards[0].file);
  assert.deepEqual(shard, { file: man.shards[0].file, sha256: man.shards[0].sha256, bytes: man.shards[0].bytes });
  assert.ok(list[0].files.some((f) => f.file === 'manifest.json' && f.sha256 === null));
  assert.ok(list[0].files.some((f) => f.file === man.tokenizer.file && f.sha256 === man.tokenizer.sha256));
  assert.equal(list[0].bytes, list[0].files.reduce((a, f) => a + f.bytes, 0));

  assert.equal(await deleteCachedModel(url + 'manifest.json', { cacheDir }), list[0].files.length, 'named by its manifest URL too');
  assert.deepEqual(await listCachedModels({ cacheDir }), []);
  assert.deepEqual(fs.readdirSync(cacheDir), [], 'no file left behind');
});

test('a shard replaced under the same URL: the next load fetches the new one and drops the old bytes', async () => {
  const cacheDir = tmpDir('cache');
  const dir = copyDemo();
  const srv = await startServer(dir);
  const url = srv.url;
  (await loadModel(url, { cacheDir })).dispose();
  const man = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
  const old = man.shards[0].sha256;
  // a new version of the weight set: the lowest bit of one f32 norm weight flipped, a new hash
  const f = path.join(dir, man.shards[0].file), b = fs.readFileSync(f);
  b[man.tensors.find((t) => t.dtype === 'f32').offset] ^= 1;
  fs.writeFileSync(f, b);
  const { createHash } = await import('node:crypto');
  man.shards[0].sha256 = createHash('sha256').update(b).digest('hex');
  fs.writeFileSync(path.join(dir, 'manifest.json'), JSON.stringify(man));
  const m = await loadModel(url, { cacheDir }), fresh = await loadModel(dir);
  assert.deepEqual(m.forward(ids, { logits: 'last' }).logits, fresh.forward(ids, { logits: 'last' }).logits, 'the new weights');
  m.dispose(); fresh.dispose();
  const files = (await listCachedModels({ cacheDir }))[0].files.filter((x) => x.file === man.shards[0].file);
  assert.deepEqual(files.map((x) => x.sha256), [man.shards[0].sha256], `the old shard (${old.slice(0, 8)}…) is gone`);
  await srv.close();
});

test('a corrupt file in the cache is dropped and fetched again', async () => {
  const cacheDir = tmpDir('cache');
  const srv = await startServer(copyDemo());
  const url = srv.url;
  (await loadModel(url, { cacheDir })).dispose();
  for (const f of fs.readdirSync(cacheDir).filter((x) => x.endsWith('.bin'))) {
    const p = path.join(cacheDir, f), b = fs.readFileSync(p);
    if (b.length > 100000) { b[1000] ^= 0x55; fs.writeFileSync(p, b); } // the shard
  }
  const m = await loadModel(url, { cacheDir });
  assert.deepEqual(m.forward(ids, { logits: 'last' }).logits, want);
  m.dispose();
  await srv.close();
});
