// Hugging Face checkpoints loaded as they are published: `hf:owner/name[@revision]` from a hub (the
// public one or `hubUrl`), a URL of a folder laid out like a hub repository, or such a folder on
// disk (Node). What happens, in order:
//   1. the revision is resolved to a commit (the hub's model API) and the converted weight set kept
//      in the cache from an earlier visit is used when it was made from the same files;
//   2. otherwise config.json, the tokenizer files and each safetensors file's header are fetched
//      (the header with an HTTP Range request), and the engine makes its conversion plan from them
//      alone: the same plan `mlpscope convert` makes, so the weights come out byte for byte the same;
//   3. the memory preflight runs on that plan before any weight is fetched;
//   4. each run of adjacent tensors the plan needs is fetched with one Range request (vision and
//      multi-token-prediction tensors are never asked for), and its bytes are converted row block by
//      row block straight into the tensor's place in the wasm heap: a few MiB of staging per request,
//      no second copy of the weights;
//   5. each finished shard is hashed, written to the cache (in pieces of 1 MiB) and laid out for the
//      kernels; the manifest is written last, so a broken-off conversion is never taken for a whole one.
// A source of the loading wing (js/loader.js picks it): it hands the weight-set loader
// (js/weightset.js) a manifest and fills the shards through its narrow interface (openWeightSet:
// segments, finishShard, finish), or loads the converted copy with loadWeightSet.
import { isNode, nodeImport } from './platform.js';
import { MlpscopeError } from './errors.js';
import { cachedSource } from './source.js';
import { openStore, entryKey } from './cache.js';
import { engineFor } from './wasm.js';
import { readLoadOptions, fileDtype } from './options.js';
import { eachConcurrently } from './async.js';
import { newHasher, loadNodeCrypto } from './hash.js';
import { openWeightSet, loadWeightSet } from './weightset.js';
import { isHubSpec, parseHubSpec, isHubFolder, folderUrl, remoteFor, fetchSpan, fetchPlanInputs } from './hub-files.js';

export { isHubSpec, parseHubSpec, isHubFolder };
/** @typedef {import('./hub-files.js').Remote} Remote */

/** @typedef {import('./options.js').Load} Load */
/** @typedef {{e: import('./wasm.js').Engine, owns: boolean, why: string}} EngineChoice */

const SHARD_BYTES = 64 * 2 ** 20;   // the converter's default: the same shards as `mlpscope convert`
const RUN_BYTES = 64 * 2 ** 20;     // one Range request covers adjacent tensors up to this many bytes
const STAGING = 4 * 2 ** 20;        // source bytes gathered before a block of rows is converted
const CACHE_PIECE = 2 ** 20;        // shards go to the cache in copies of this size

/** Whether the cache holds a converted copy of the checkpoint folder at this URL (for an offline visit).
 * @param {string|URL} source @param {Load} o @param {import('./wasm.js').Engine['info']} info the engine's tables */
export async function hasConvertedCopy(source, o, info) {
  const s = String(source);
  if (!/^(https?|blob):/i.test(s) && isNode) return false;
  const store = await openStore(o.cache);
  if (!store) return false;
  return !!(await store.match(entryKey(`${folderUrl(s).href}mlpscope-${dtypesOf(info, o.hub).key}/`, 'manifest.json')));
}

/** Serves files from memory to the engine's converter (which asks for them under "hub/"). */
function memoryHost(files) {
  const open = new Map();
  let next = 1;
  return {
    open(name, mode) {
      const f = files.get(name.replace(/^hub\//, ''));
      if (mode !== 'r' || !f) return -1;
      open.set(next, f);
      return next++;
    },
    close(h) { return open.delete(h) ? 0 : -1; },
    size(h) { return open.get(h)?.size ?? -1; },
    read(h, off, view) {
      const f = open.get(h);
      if (!f || off + view.length > f.bytes.length) return -1; // only what was fetched: the headers
      view.set(f.bytes.subarray(off, off + view.length));
      return 0;
    },
    write: () => -1,
    log() {},
    progress() {},
  };
}

/** Runs of tensors adjacent in their source file (one Range request each), in file order. */
function sourceRuns(plan) {
  const byFile = new Map();
  plan.tensors.forEach((t, index) => {
    const s = { ...t, index, srcBytes: t.rows * t.row_bytes };
    if (!byFile.has(t.file)) byFile.set(t.file, []);
    byFile.get(t.file).push(s);
  });
  const runs = [];
  for (const [file, ts] of byFile) {
    ts.sort((a, b) => a.src_offset - b.src_offset);
    let run = null;
    for (const t of ts) {
      if (run && t.src_offset === run.end && run.end - run.start + t.srcBytes <= RUN_BYTES) { run.tensors.push(t); run.end += t.srcBytes; continue; }
      run = { file: plan.files[file], start: t.src_offset, end: t.src_offset + t.srcBytes, tensors: [t] };
      runs.push(run);
    }
  }
  return runs;
}

/** The output dtypes asked for, as the engine lists them (q8 by default; the embedding and head as
 * the rest unless said): names, engine codes (-1: as the rest) and the cache folder's key.
 * @param {import('./wasm.js').Engine['info']} info @param {Load['hub']} hub */
function dtypesOf(info, { dtype, embedDtype }) {
  const d = fileDtype(info, dtype, 'dtype'), em = embedDtype === undefined ? null : fileDtype(info, embedDtype, 'embedDtype');
  return { dtype: d.name, id: d.id, embed: em?.name ?? null, embedId: em ? em.id : -1, key: em ? `${d.name}+${em.name}` : d.name };
}

/** The Node cache folder for converted checkpoints: MLPSCOPE_CACHE, or ~/.cache/mlpscope. */
export async function defaultCacheDir() {
  if (!isNode) return undefined;
  const os = await nodeImport('node:os'), path = await nodeImport('node:path');
  return process.env.MLPSCOPE_CACHE || path.join(os.homedir(), '.cache', 'mlpscope');
}

const sameIdentity = (a, b) => !!a && !!b && JSON.stringify(a) === JSON.stringify(b);

/**
 * Loads a Hugging Face checkpoint, converting it while it streams in (or the converted copy from
 * the cache), into the engine js/loader.js chose.
 * @param {string|URL} source @param {Load} o @param {EngineChoice} engine
 */
export async function loadHub(source, o, engine) {
  const dt = dtypesOf(engine.e.info, o.hub); // bad options fail before anything is fetched
  const remote = await remoteFor(source, o);
  const t0 = performance.now();
  await remote.resolve(o.net.signal);
  const cacheDir = o.cache.cacheDir ?? (remote.cacheFolder && o.cache.cache !== false ? await defaultCacheDir() : undefined);
  const store = remote.cacheFolder ? await openStore({ cache: o.cache.cache, cacheDir }) : null;
  const folder = store ? `${remote.cacheFolder}mlpscope-${dt.key}/` : null;
  const was = store ? await (await store.match(entryKey(folder, 'source.json')))?.json().catch(() => null) : null;
  const fromCache = async () => { const src = cachedSource(store, folder); return loadWeightSet(src, await src.text('manifest.json'), withPhase(o), engine); };
  /** the converted copy, or null when it is damaged and the source can be converted again */
  const tryCache = async () => {
    try { return await fromCache(); } catch (err) {
      if (remote.offline || ['E_ABORTED', 'E_MEMORY', 'E_CONTEXT', 'E_ARG', 'E_ENGINE'].includes(err.code)) throw err;
      return null;
    }
  };
  // a hub's commit and file hashes are known now; a plain folder's once its small files and
  // headers are in (below); neither when it cannot be reached: then the copy is all there is
  if (was && (remote.offline || sameIdentity(was, remote.identity))) { const m = await tryCache(); if (m) return m; }
  if (remote.offline) throw new MlpscopeError('E_NETWORK', `${remote.name}: cannot reach the hub (${remote.offlineWhy}) and no converted copy is in the cache`);
  let inputs;
  try { inputs = await fetchPlanInputs(remote, o.net); } catch (err) {
    if (remote.offline && was) return fromCache();
    throw err;
  }
  remote.seal?.();
  if (was && remote.seal && sameIdentity(was, remote.identity)) { const m = await tryCache(); if (m) return m; }
  return convertInto(remote, inputs, o, engine, dt, { store, folder, t0 });
}

/** onProgress events of a cached load keep the loader's shape, with the phase named. @param {Load} o */
const withPhase = (o) => ({ ...o, onProgress: o.onProgress && ((p) => o.onProgress({ ...p, phase: p.phase ?? 'download' })) });

/**
 * The conversion itself, into a model (loading: through the weight-set loader's openWeightSet) or
 * into files (`sinkFiles`: mlpscope convert hf:…).
 * @param {Remote} remote @param {Map<string, {bytes: Uint8Array, size: number}>} inputs @param {Load} o
 * @param {EngineChoice} engine @param {ReturnType<typeof dtypesOf>} dt
 */
async function convertInto(remote, inputs, o, engine, dt, { store, folder, t0, sinkFiles = null }) {
  await loadNodeCrypto();
  const { e } = engine;
  const job = { e, conv: 0, build: null, staging: [], shardBufs: [], cacheOk: !!store };
  try {
    const { plan, manifest0 } = openPlan(job, inputs, dt, sinkFiles ? o.hub.shardBytes ?? SHARD_BYTES : SHARD_BYTES), shards = plan.shards;
    const runs = sourceRuns(plan);
    const parallel = Math.max(1, Math.min(o.parallel, runs.length));
    const stagingBytes = Math.max(STAGING, ...plan.tensors.map((t) => t.row_bytes));
    if (sinkFiles) e.reserve(shards.reduce((a, s) => a + s.bytes, 0) + parallel * stagingBytes);
    else job.build = await openWeightSet(engine, manifest0, o.model, { extraBytes: parallel * stagingBytes });
    const dst = tensorPlaces(job, plan, shards);
    for (let k = 0; k < parallel; k++) job.staging.push(e.malloc(stagingBytes));
    const report = progress(o.onProgress, t0, plan, shards);

    // a shard is finished when its last tensor is in: hashed, stored (cache or file), laid out
    const left = new Array(shards.length).fill(0);
    for (const t of plan.tensors) left[t.shard]++;
    const hexes = new Array(shards.length);
    const finishShard = async (s) => {
      const sh = shards[s], pieces = shardPieces(plan, s, dst, sh.bytes);
      hexes[s] = hashPieces(e, pieces);
      if (sinkFiles) await sinkFiles.shard(sh.file, e, pieces);
      else {
        if (store) await store.put(entryKey(folder, sh.file, hexes[s]), new Response(heapStream(e, pieces), { headers: { 'content-type': 'application/octet-stream' } })).catch(() => { job.cacheOk = false; });
        job.build.finishShard(s);
      }
      report.shard(sh);
    };
    await fetchRuns(job, remote, runs, parallel, o.net, (run, buf) => rowFeeder(job, run, buf, stagingBytes, dst), (c, run) => report.bytes(c, run.file),
      async (done) => { for (const s of done) if (--left[s] === 0) await finishShard(s); }, inputs);
    for (const p of job.staging.splice(0)) e.free(p);
    report.prepare(0);
    // the weight set as the converter writes it: its manifest (now with the shards' hashes), its files
    const manifestText = e.c.conv_manifest(job.conv, hexes.join(''));
    const written = { shards: shards.map((sh, k) => ({ ...sh, sha256: hexes[k] })), tokenizer: plan.tokenizer, tensors: plan.tensors.length };
    const tokBytes = plan.tokenizer ? convertedTokenizer(e, job.conv) : null;
    e.c.conv_close(job.conv);
    job.conv = 0;
    if (sinkFiles) {
      if (tokBytes) await sinkFiles.file(plan.tokenizer.file, tokBytes);
      await sinkFiles.file('manifest.json', new TextEncoder().encode(manifestText));
      return { written, manifestText };
    }
    const model = await job.build.finish(async () => tokBytes, remote.name, o.net.signal);
    if (job.cacheOk) await storeConverted(store, folder, remote, written, manifestText, tokBytes);
    report.prepare(1);
    return model;
  } catch (err) {
    for (const p of job.staging) e.free(p);
    if (job.conv) e.c.conv_close(job.conv);
    job.build?.abandon();
    throw err;
  } finally {
    for (const p of job.shardBufs.splice(0)) e.free(p);
  }
}

/** The engine's conversion plan from the fetched files (lent to the converter as its host). */
function openPlan(job, inputs, dt, shardBytes) {
  const { e } = job, saved = e.host;
  e.host = memoryHost(inputs);
  try { job.conv = e.c.conv_open_hf(dt.id, dt.embedId, shardBytes); } finally { e.host = saved; }
  return { plan: e.c.conv_plan_json(job.conv), manifest0: e.c.conv_manifest(job.conv, '') };
}

/** Where each plan tensor goes: its buffer in the model (loading), or its place in its shard's
 * buffer (writing files). */
function tensorPlaces(job, plan, shards) {
  const { e, build } = job, dst = new Array(plan.tensors.length);
  if (!build) {
    shards.forEach((s, k) => { const p = e.malloc(Math.max(1, s.bytes)); e.u8.fill(0, p, p + s.bytes); job.shardBufs[k] = p; });
    plan.tensors.forEach((t, i) => { dst[i] = job.shardBufs[t.shard] + t.offset; });
    return dst;
  }
  for (let s = 0; s < shards.length; s++) {
    const segs = build.segments(s), at = new Map();
    for (let k = 0; k < segs.length; k += 3) at.set(segs[k], segs[k + 2] >>> 0);
    plan.tensors.forEach((t, i) => { if (t.shard === s) dst[i] = at.get(t.offset); });
  }
  if (dst.some((a) => a === undefined)) throw new MlpscopeError('E_MANIFEST', 'the converted layout and the model disagree on where a tensor goes');
  return dst;
}

/** Progress events: source bytes downloaded (converted as they arrive), shards finished, the end. */
function progress(onProgress, t0, plan, shards) {
  const total = plan.tensors.reduce((a, t) => a + t.rows * t.row_bytes, 0), outTotal = shards.reduce((a, s) => a + s.bytes, 0);
  let loaded = 0, outDone = 0;
  const tStart = performance.now();
  const report = (p) => onProgress?.({ fromCache: false, ...p, elapsedMs: performance.now() - t0 });
  report({ phase: 'download', loaded: 0, total, file: plan.files[0], rate: 0 });
  return {
    bytes(c, file) { loaded += c.length; const secs = (performance.now() - tStart) / 1000; report({ phase: 'download', loaded, total, file, rate: secs > 0 ? loaded / secs : 0 }); },
    shard(sh) { outDone += sh.bytes; report({ phase: 'convert', loaded: outDone, total: outTotal, file: sh.file }); },
    prepare(done) { report({ phase: 'prepare', loaded: done, total: 1, file: 'manifest.json' }); },
  };
}

/**
 * The sink for one run's bytes: they gather in the staging buffer `buf`, and each time it is full
 * or a tensor's last row is in, the whole rows go through the converter into the tensor's place.
 * Returns the sink and the shards of the tensors it has finished (emptied by the caller).
 */
function rowFeeder(job, run, buf, stagingBytes, dst) {
  const { e } = job;
  let ti = 0, r0 = 0, fill = 0;
  const done = [];
  const flush = () => {
    const t = run.tensors[ti], ready = Math.floor(fill / t.row_bytes);
    if (!ready) return;
    e.c.conv_rows(job.conv, t.index, buf, r0, ready, dst[t.index]);
    r0 += ready;
    const rest = fill - ready * t.row_bytes;
    if (rest) e.u8.copyWithin(buf, buf + ready * t.row_bytes, buf + fill);
    fill = rest;
  };
  const sink = (c) => {
    for (let i = 0; i < c.length;) {
      const t = run.tensors[ti], need = (t.rows - r0) * t.row_bytes - fill, take = Math.min(c.length - i, need, stagingBytes - fill);
      e.u8.set(c.subarray(i, i + take), buf + fill);
      fill += take; i += take;
      if (take === need || fill === stagingBytes) flush();
      if (r0 === t.rows) { done.push(t.shard); ti++; r0 = 0; fill = 0; }
    }
  };
  return { sink, done };
}

/** Every run fetched, `parallel` at a time, each through its own staging buffer; the caller's abort
 * or the first failure stops them all (and all are waited for before the buffers are freed).
 * @param {Load['net']} net */
async function fetchRuns(job, remote, runs, parallel, net, feederFor, onBytes, onDone, inputs) {
  const free = [...job.staging];
  await eachConcurrently(runs.length, parallel, net.signal, remote.name, async (r, inner) => {
    const run = runs[r], buf = free.pop();
    try {
      const feed = feederFor(run, buf);
      await fetchSpan(remote, run.file, run.start, run.end - 1, { ...net, signal: inner }, (c) => { feed.sink(c); onBytes(c, run); }, inputs.get(run.file)?.size);
      await onDone(feed.done.splice(0));
    } finally { free.push(buf); }
  });
}

/** The converted tokenizer file, copied out of the engine. */
function convertedTokenizer(e, conv) {
  const lenPtr = e.malloc(8);
  try {
    const p = e.c.conv_tokenizer(conv, lenPtr), n = e.f64[lenPtr >> 3];
    return e.u8.slice(p, p + n);
  } finally { e.free(lenPtr); }
}

/** The rest of the converted set into the cache — the manifest last: an interrupted conversion
 * leaves no manifest, so it is never taken for a whole one — and older copies' files dropped. */
async function storeConverted(store, folder, remote, written, manifestText, tokBytes) {
  try {
    if (tokBytes) await store.put(entryKey(folder, written.tokenizer.file, written.tokenizer.sha256), new Response(tokBytes));
    await store.put(entryKey(folder, 'source.json'), new Response(JSON.stringify(remote.identity)));
    await store.put(entryKey(folder, 'manifest.json'), new Response(manifestText));
    const keep = [...written.shards, ...(written.tokenizer ? [written.tokenizer] : []), { file: 'source.json' }].map((f) => ({ file: f.file, sha256: f.sha256 }));
    await cachedSource(store, folder).prune(keep);
  } catch { /* a full disk only costs the next visit a conversion */ }
}

/** A shard's bytes as pieces: [heap address or -1 for zero padding, length], in file order. */
function shardPieces(plan, s, dst, bytes) {
  const ts = plan.tensors.map((t, i) => ({ ...t, addr: dst[i] })).filter((t) => t.shard === s).sort((a, b) => a.offset - b.offset);
  const out = [];
  let pos = 0;
  for (const t of ts) {
    if (t.offset > pos) out.push([-1, t.offset - pos]);
    out.push([t.addr, t.bytes]);
    pos = t.offset + t.bytes;
  }
  if (bytes > pos) out.push([-1, bytes - pos]);
  return out;
}

/** A shard's sha256 from its pieces in the heap, with the loader's hasher (OpenSSL in Node, the
 * engine's sha256 elsewhere); padding hashed from a small zeroed heap block. */
function hashPieces(e, pieces) {
  const h = newHasher(e), z = e.malloc(64);
  try {
    e.u8.fill(0, z, z + 64);
    for (const [a, n] of pieces) {
      if (a >= 0) h.update(e.u8.subarray(a, a + n), a);
      else for (let k = 0; k < n; k += 64) h.update(e.u8.subarray(z, z + Math.min(64, n - k)), z);
    }
    return h.hex();
  } finally { h.free(); e.free(z); }
}

/** A shard streamed out of the heap in copies of CACHE_PIECE bytes (the heap may grow meanwhile). */
function heapStream(e, pieces) {
  let k = 0, off = 0;
  return new ReadableStream({
    pull(ctl) {
      if (k >= pieces.length) { ctl.close(); return; }
      const [a, n] = pieces[k];
      const len = Math.min(CACHE_PIECE, n - off);
      ctl.enqueue(a >= 0 ? e.u8.slice(a + off, a + off + len) : new Uint8Array(len));
      off += len;
      if (off >= n) { k++; off = 0; }
    },
  });
}

/**
 * `mlpscope convert hf:…`: the same streaming conversion, written as a weight set into `outDir`
 * (byte for byte what converting a downloaded copy of the checkpoint writes).
 * @param {string} source @param {string} outDir @param {import('./options.js').LoadOptions} [opts] as loadModel's
 *   (one thread unless `threads` says otherwise; `shardBytes`: the shards' size, default 64 MiB)
 * @returns {Promise<{written: {shards: {file: string, bytes: number, sha256: string}[], tokenizer: object | null, tensors: number}, manifestText: string}>}
 */
export async function convertHub(source, outDir, opts = {}) {
  const fs = await nodeImport('node:fs'), path = await nodeImport('node:path');
  const o = readLoadOptions({ ...opts, threads: opts.threads ?? 1 });
  const engine = await engineFor(o.engine);
  try {
    const dt = dtypesOf(engine.e.info, o.hub);
    const remote = await remoteFor(source, o);
    await remote.resolve(o.net.signal);
    if (remote.offline) throw new MlpscopeError('E_NETWORK', `${remote.name}: cannot reach the hub (${remote.offlineWhy})`);
    fs.mkdirSync(outDir, { recursive: true });
    const sinkFiles = {
      async shard(file, e, pieces) {
        const fd = fs.openSync(path.join(outDir, file), 'w');
        try {
          const zeros = new Uint8Array(1 << 16);
          for (const [a, n] of pieces) {
            for (let k = 0; k < n; k += 1 << 20) {
              const len = Math.min(1 << 20, n - k);
              if (a >= 0) fs.writeSync(fd, e.u8.subarray(a + k, a + k + len));
              else for (let z = 0; z < len; z += zeros.length) fs.writeSync(fd, zeros, 0, Math.min(zeros.length, len - z));
            }
          }
        } finally { fs.closeSync(fd); }
      },
      async file(name, bytes) { fs.writeFileSync(path.join(outDir, name), bytes); },
    };
    const inputs = await fetchPlanInputs(remote, o.net);
    return await convertInto(remote, inputs, o, engine, dt, { store: null, folder: null, t0: performance.now(), sinkFiles });
  } finally { if (engine.owns) engine.e.shutdown(); }
}
