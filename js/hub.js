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
import { isNode, nodeImport } from './platform.js';
import { MlpscopeError } from './errors.js';
import { guardedFetch, chunks, responseBytes, transient, cachedSource } from './source.js';
import { openStore, entryKey } from './cache.js';
import { beginModel, endModel, loadWeightSet, withRetry, sleep, eachConcurrently, pickEngine, newHasher, loadNodeCrypto } from './loader.js';

export const DEFAULT_HUB_URL = 'https://huggingface.co';
/** dtype names the loader and the CLI accept, and the engine's names for them */
export const HUB_DTYPES = { f32: 'f32', f16: 'f16', bf16: 'bf16', q8: 'q8_0', q4: 'q4_0', q8_0: 'q8_0', q4_0: 'q4_0' };
const SHARD_BYTES = 64 * 2 ** 20;   // the converter's default: the same shards as `mlpscope convert`
const RUN_BYTES = 64 * 2 ** 20;     // one Range request covers adjacent tensors up to this many bytes
const STAGING = 4 * 2 ** 20;        // source bytes gathered before a block of rows is converted
const CACHE_PIECE = 2 ** 20;        // shards go to the cache in copies of this size

/** @param {unknown} s */
export const isHubSpec = (s) => typeof s === 'string' && /^hf:/i.test(s);

/**
 * `hf:owner/name[@revision]` → its parts (E_ARG for anything else).
 * @param {string} spec @returns {{repo: string, revision: string}}
 */
export function parseHubSpec(spec) {
  const m = /^hf:([A-Za-z0-9][A-Za-z0-9._-]*\/[A-Za-z0-9][A-Za-z0-9._-]*)(?:@([A-Za-z0-9][A-Za-z0-9._/-]*))?$/i.exec(spec);
  if (!m || m[1].includes('..') || (m[2] ?? '').includes('..'))
    throw new MlpscopeError('E_ARG', `${spec}: not a Hugging Face source (expected hf:owner/name or hf:owner/name@revision)`);
  return { repo: m[1], revision: m[2] ?? 'main' };
}

const enc = (p) => p.split('/').map(encodeURIComponent).join('/');
const dec = new TextDecoder();

/** Whether a source that has no manifest.json is a checkpoint folder (it has a config.json). */
export async function isHubFolder(source, opts = {}) {
  const s = String(source);
  if (isNode && !/^(https?|blob|data):/i.test(s)) {
    const fs = await nodeImport('node:fs'), path = await nodeImport('node:path');
    const dir = s.startsWith('file:') ? (await nodeImport('node:url')).fileURLToPath(s) : s;
    return fs.existsSync(path.join(dir, 'config.json'));
  }
  try {
    const r = await guardedFetch(new URL('config.json', folderUrl(s)), 'config.json', { signal: opts.signal, stallTimeoutMs: opts.stallTimeoutMs, missingCode: 'E_CHECKPOINT' });
    await r.body?.cancel();
    r.guard.done();
    return true;
  } catch { return false; }
}

/** Whether the cache holds a converted copy of the checkpoint folder at this URL (for an offline visit). */
export async function hasConvertedCopy(source, opts = {}) {
  const s = String(source);
  if (!/^(https?|blob):/i.test(s) && isNode) return false;
  const store = await openStore({ cache: opts.cache, cacheDir: opts.cacheDir });
  if (!store) return false;
  return !!(await store.match(entryKey(`${folderUrl(s).href}mlpscope-${dtypesOf(opts).key}/`, 'manifest.json')));
}

function folderUrl(s) {
  const u = new URL(s, typeof location !== 'undefined' ? location.href : undefined);
  if (!u.pathname.endsWith('/')) u.pathname += '/';
  return u;
}

/**
 * Where a checkpoint's files come from. small(file): the whole file, or null when it is not there;
 * range(file, start, end): bytes start..end (inclusive) as chunks; identity: what the converted
 * weight set in the cache must have been made from (null: cannot tell before fetching).
 * @typedef {{ name: string, cacheFolder: string | null, identity: object | null, offline?: boolean,
 *   resolve(signal?: AbortSignal): Promise<void>,
 *   small(file: string, signal?: AbortSignal): Promise<Uint8Array | null>,
 *   range(file: string, start: number, end: number, signal?: AbortSignal): Promise<{stream: AsyncIterable<Uint8Array>, total: number, tag: string | null}>,
 *   sizeHint(file: string): number | null }} Remote
 */

/** A repository on a hub: the model API for the commit and the file list, /resolve/ URLs for files. */
function hubRemote(spec, opts) {
  const { repo, revision } = parseHubSpec(spec);
  const hub = String(opts.hubUrl ?? (isNode ? globalThis.process?.env?.HF_ENDPOINT : undefined) ?? DEFAULT_HUB_URL).replace(/\/+$/, '');
  const stallTimeoutMs = opts.stallTimeoutMs;
  let commit = null, files = null;
  const fileUrl = (file) => `${hub}/${enc(repo)}/resolve/${encodeURIComponent(commit ?? revision)}/${enc(file)}`;
  const remote = {
    name: `hf:${repo}@${revision}`,
    repo, revision, hub,
    cacheFolder: null,
    identity: null,
    offline: false,
    async resolve(signal) {
      const url = `${hub}/api/models/${enc(repo)}/revision/${encodeURIComponent(revision)}?blobs=true`;
      let info;
      try {
        info = await withRetry(async () => JSON.parse(dec.decode(await responseBytes(await guardedFetch(url, `${repo}@${revision}`, { signal, stallTimeoutMs, missingCode: 'E_CHECKPOINT' })))),
          1, opts.retryDelayMs ?? 250, signal);
      } catch (err) {
        if (err.code === 'E_CHECKPOINT' || (err.code === 'E_NETWORK' && / HTTP 40[13]/.test(err.message)))
          throw new MlpscopeError('E_CHECKPOINT', `hf:${repo}@${revision}: no such repository or revision on ${hub} (or it needs a login): ${err.message}`);
        if (err.code === 'E_ABORTED') throw err;
        if (err instanceof SyntaxError) throw new MlpscopeError('E_CHECKPOINT', `hf:${repo}@${revision}: the hub's answer is not JSON`);
        remote.offline = true; // no network: the cache may still have it
        remote.offlineWhy = err.message;
        return;
      }
      if (typeof info?.sha !== 'string' || !Array.isArray(info.siblings))
        throw new MlpscopeError('E_CHECKPOINT', `hf:${repo}@${revision}: the hub's answer has no commit or file list`);
      commit = info.sha;
      files = new Map(info.siblings.filter((f) => typeof f?.rfilename === 'string').map((f) => [f.rfilename, f]));
      const hashes = {};
      for (const [name, f] of files) if (/\.(json|safetensors|jinja)$/.test(name)) hashes[name] = f.lfs?.sha256 ?? f.blobId ?? null;
      remote.identity = { repo, revision, commit, files: hashes };
    },
    async small(file, signal) {
      if (files && !files.has(file)) return null;
      try { return await withRetry(async () => responseBytes(await guardedFetch(fileUrl(file), file, { signal, stallTimeoutMs, missingCode: 'E_CHECKPOINT' })), opts.retries ?? 4, opts.retryDelayMs ?? 250, signal); } catch (err) {
        if (err.notFound) return null;
        throw err;
      }
    },
    range: (file, start, end, signal) => httpRange(fileUrl(file), file, start, end, signal, stallTimeoutMs),
    sizeHint: (file) => files?.get(file)?.lfs?.size ?? files?.get(file)?.size ?? null,
  };
  remote.cacheFolder = `${hub}/${enc(repo)}/resolve/${encodeURIComponent(revision)}/`;
  return remote;
}

/** A folder URL laid out like a repository (a static server, a mirror without the model API). */
function folderRemote(source, opts) {
  const base = folderUrl(String(source));
  const tags = {};
  const remote = {
    name: base.href,
    cacheFolder: base.href,
    identity: null,
    offline: false,
    async resolve() {},
    async small(file, signal) {
      try {
        return await withRetry(async () => {
          const r = await guardedFetch(new URL(file, base), file, { signal, stallTimeoutMs: opts.stallTimeoutMs, missingCode: 'E_CHECKPOINT' });
          tags[file] = r.headers.get('etag') ?? r.headers.get('last-modified') ?? r.headers.get('content-length');
          return responseBytes(r);
        }, opts.retries ?? 4, opts.retryDelayMs ?? 250, signal);
      } catch (err) {
        if (err.notFound) return null;
        if (file === 'config.json' && err.code === 'E_NETWORK') { remote.offline = true; remote.offlineWhy = err.message; }
        throw err;
      }
    },
    async range(file, start, end, signal) {
      const r = await httpRange(new URL(file, base), file, start, end, signal, opts.stallTimeoutMs);
      if (r.tag) tags[file] = r.tag;
      return r;
    },
    sizeHint: () => null,
    /** after config and headers are in: what they were (ETag, or Last-Modified, or size) */
    seal() { remote.identity = { url: base.href, files: { ...tags } }; },
  };
  return remote;
}

/** A folder on disk (Node): nothing to cache, nothing to resolve. */
async function localRemote(dir) {
  const fs = await nodeImport('node:fs'), path = await nodeImport('node:path');
  return {
    name: dir,
    cacheFolder: null,
    identity: null,
    offline: false,
    async resolve() {},
    async small(file) {
      try { return new Uint8Array(await fs.promises.readFile(path.join(dir, file))); } catch (e) {
        if (e.code === 'ENOENT') return null;
        throw new MlpscopeError('E_CHECKPOINT', `${path.join(dir, file)}: ${e.message}`);
      }
    },
    async range(file, start, end, signal) {
      const full = path.join(dir, file);
      let size;
      try { size = (await fs.promises.stat(full)).size; } catch (e) { throw new MlpscopeError('E_CHECKPOINT', `${full}: ${e.code === 'ENOENT' ? 'no such file' : e.message}`); }
      return { stream: fs.createReadStream(full, { start, end: Math.min(end, size - 1), highWaterMark: 1 << 20, signal }), total: size, tag: null };
    },
    sizeHint: () => null,
  };
}

/**
 * Bytes start..end of a file over HTTP with a Range request. A server that ignores Range (200) is
 * accepted only for a request from byte 0 (the rest of the body is dropped); a 206 for other bytes
 * than asked is a retryable E_NETWORK.
 */
async function httpRange(url, file, start, end, signal, stallTimeoutMs) {
  const r = await guardedFetch(url, file, { signal, stallTimeoutMs, missingCode: 'E_CHECKPOINT', headers: { Range: `bytes=${start}-${end}` } });
  const tag = r.headers.get('etag') ?? r.headers.get('last-modified');
  if (r.status === 206) {
    const m = /^bytes (\d+)-(\d+)\/(\d+|\*)$/.exec(r.headers.get('content-range') ?? '');
    if (!m || Number(m[1]) !== start) {
      r.guard.done(); r.body?.cancel().catch(() => {});
      throw transient('E_NETWORK', `${file}: asked for bytes ${start}-${end}, the server answered ${r.headers.get('content-range') ?? 'without a Content-Range'}`);
    }
    return { stream: chunks(r), total: m[3] === '*' ? Number(m[2]) + 1 : Number(m[3]), tag };
  }
  const len = Number(r.headers.get('content-length') ?? NaN);
  if (start !== 0) {
    r.guard.done(); r.body?.cancel().catch(() => {});
    throw new MlpscopeError('E_NETWORK', `${file}: the server ignored a range request (HTTP ${r.status}); converting a checkpoint while it streams needs HTTP Range support`);
  }
  return { stream: chunks(r), total: Number.isFinite(len) ? len : end + 1, tag, whole: true };
}

/**
 * Reads bytes [start, end] of a file through remote.range into `sink(chunk)`, resuming after a cut
 * from the last byte received and retrying transient failures with backoff.
 * @returns {Promise<number>} the file's total size as the server reported it
 */
async function fetchSpan(remote, file, start, end, o, sink, fileSize, clampEnd = false) {
  let pos = start, attempt = 0, total = fileSize ?? null;
  for (;;) {
    if (o.signal?.aborted) throw new MlpscopeError('E_ABORTED', `loading ${file} was aborted`);
    try {
      const got = await remote.range(file, pos, end, o.signal);
      if (total !== null && got.total !== total)
        throw new MlpscopeError('E_CHECKPOINT', `${file}: the server reports ${got.total} bytes where ${total} were expected (the file changed while it was read, or is not the one the hub lists)`);
      total = got.total;
      if (clampEnd) end = Math.min(end, total - 1);
      if (end >= total) throw new MlpscopeError('E_CHECKPOINT', `${file}: ${total} bytes, but its header places data up to byte ${end + 1}`);
      let stop = false;
      for await (const c0 of got.stream) {
        if (o.signal?.aborted) throw new MlpscopeError('E_ABORTED', `loading ${file} was aborted`);
        let c = c0 instanceof Uint8Array ? c0 : new Uint8Array(c0);
        if (pos + c.length > end + 1) {
          if (!got.whole) { const err = new MlpscopeError('E_CHECKPOINT', `${file}: the server sent more bytes than the range ${start}-${end} asked for`); err.retryable = true; throw err; }
          c = c.subarray(0, end + 1 - pos);
          stop = true;
        }
        sink(c);
        pos += c.length;
        if (stop) break;
      }
      if (pos <= end) {
        const err = new MlpscopeError('E_CHECKPOINT', `${file}: the response ended at byte ${pos}, ${end + 1 - pos} bytes short of ${end + 1}`);
        err.retryable = true;
        throw err;
      }
      return total;
    } catch (err0) {
      let err = err0;
      if (err?.name === 'AbortError' || o.signal?.aborted) throw new MlpscopeError('E_ABORTED', `loading ${file} was aborted`);
      if (!(err instanceof MlpscopeError)) { err = new MlpscopeError('E_NETWORK', `${file}: ${err?.message ?? err}`); err.retryable = true; }
      if (!err.retryable || attempt >= (o.retries ?? 4)) throw err;
      attempt++;
      o.onRetry?.({ file, attempt, error: err, resumeAt: pos });
      await sleep((o.retryDelayMs ?? 250) * 2 ** (attempt - 1), o.signal);
    }
  }
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

const SMALL_FILES = ['config.json', 'generation_config.json', 'tokenizer.json', 'tokenizer_config.json', 'chat_template.jinja', 'model.safetensors.index.json'];

/**
 * Fetches what the plan is made from: the small files and every safetensors header.
 * @returns {Promise<Map<string, {bytes: Uint8Array, size: number}>>}
 */
async function fetchPlanInputs(remote, o) {
  const files = new Map();
  const got = await Promise.all(SMALL_FILES.map((f) => remote.small(f, o.signal)));
  SMALL_FILES.forEach((f, k) => { if (got[k]) files.set(f, { bytes: got[k], size: got[k].length }); });
  if (!files.has('config.json')) throw new MlpscopeError('E_CONFIG', `${remote.name}: no config.json`);
  let weightFiles = ['model.safetensors'];
  if (files.has('model.safetensors.index.json')) {
    let idx;
    try { idx = JSON.parse(dec.decode(files.get('model.safetensors.index.json').bytes)); } catch (e) { throw new MlpscopeError('E_CHECKPOINT', `model.safetensors.index.json: ${e.message}`); }
    const names = [...new Set(Object.values(idx?.weight_map ?? {}))];
    // names are checked by the engine too; here they only must not leave the folder
    if (!names.length || names.some((n) => typeof n !== 'string' || n.includes('/') || n.includes('\\') || n === '..' || n.length > 200))
      throw new MlpscopeError('E_CHECKPOINT', 'model.safetensors.index.json: weight_map is missing or names a file outside the folder');
    weightFiles = names;
  }
  await Promise.all(weightFiles.map(async (f) => {
    // the 8-byte header length, then the header: nothing past it is read before the plan says so
    const first = [];
    const size = await fetchSpan(remote, f, 0, 7, o, (c) => first.push(c.slice()), remote.sizeHint(f) ?? undefined, true);
    const head8 = concat(first);
    if (head8.length < 8) throw new MlpscopeError('E_CHECKPOINT', `${f}: too short for a safetensors file`);
    const n = Number(new DataView(head8.buffer, head8.byteOffset, 8).getBigUint64(0, true));
    if (!(n > 1 && 8 + n <= size && n <= 100 * 2 ** 20)) throw new MlpscopeError('E_CHECKPOINT', `${f}: header length ${n} does not fit the file (${size} bytes)`);
    const rest = [];
    await fetchSpan(remote, f, 8, 8 + n - 1, o, (c) => rest.push(c.slice()), size);
    files.set(f, { bytes: concat([head8, ...rest]), size });
  }));
  return files;
}

function concat(parts) {
  const n = parts.reduce((a, p) => a + p.length, 0), out = new Uint8Array(n);
  let o = 0;
  for (const p of parts) { out.set(p, o); o += p.length; }
  return out;
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

/** The engine to convert and run in: the one passed in, or the one loadModel would pick. */
async function engineFor(opts) {
  if (opts.engine) return { e: opts.engine, owns: false, why: 'the engine passed in' };
  const { engine, why } = await pickEngine(opts.threads ?? 'auto', { wasmUrl: opts.wasmUrl, mtWasmUrl: opts.mtWasmUrl, threadWorkerUrl: opts.threadWorkerUrl });
  return { e: engine, owns: true, why };
}

/** The output dtypes asked for (q8 by default; the embedding and head as the rest unless said). */
function dtypesOf(opts) {
  const name = (v, what) => {
    if (!Object.hasOwn(HUB_DTYPES, v)) throw new MlpscopeError('E_ARG', `${what}: '${v}' is not one of f32, f16, bf16, q8, q4`);
    return HUB_DTYPES[v];
  };
  const dtype = name(opts.dtype ?? 'q8', 'dtype');
  const embed = opts.embedDtype === undefined ? null : name(opts.embedDtype, 'embedDtype');
  return { dtype, embed, key: embed ? `${dtype}+${embed}` : dtype };
}

/** The Node cache folder for converted checkpoints: MLPSCOPE_CACHE, or ~/.cache/mlpscope. */
export async function defaultCacheDir() {
  if (!isNode) return undefined;
  const os = await nodeImport('node:os'), path = await nodeImport('node:path');
  return process.env.MLPSCOPE_CACHE || path.join(os.homedir(), '.cache', 'mlpscope');
}

async function remoteFor(source, opts) {
  if (isHubSpec(source)) return hubRemote(source, opts);
  const s = String(source);
  if (isNode && !/^(https?|blob|data):/i.test(s)) return localRemote(s.startsWith('file:') ? (await nodeImport('node:url')).fileURLToPath(s) : s);
  return folderRemote(s, opts);
}

const sameIdentity = (a, b) => !!a && !!b && JSON.stringify(a) === JSON.stringify(b);

/**
 * Loads a Hugging Face checkpoint, converting it while it streams in (or the converted copy from
 * the cache). Options as loadModel's, plus hubUrl, dtype ('q8' by default), embedDtype.
 * @param {string} source @param {import('./loader.js').LoadOptions & {hubUrl?: string, dtype?: string, embedDtype?: string}} opts
 */
export async function loadHub(source, opts = {}) {
  dtypesOf(opts); // bad options fail before anything is fetched
  const remote = await remoteFor(source, opts);
  const t0 = performance.now();
  await remote.resolve(opts.signal);
  const cacheDir = opts.cacheDir ?? (remote.cacheFolder && opts.cache !== false ? await defaultCacheDir() : undefined);
  const store = remote.cacheFolder ? await openStore({ cache: opts.cache, cacheDir }) : null;
  const folder = store ? `${remote.cacheFolder}mlpscope-${dtypesOf(opts).key}/` : null;
  const was = store ? await (await store.match(entryKey(folder, 'source.json')))?.json().catch(() => null) : null;
  const fromCache = async () => { const src = cachedSource(store, folder); return loadWeightSet(src, await src.text('manifest.json'), withPhase(opts)); };
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
  try { inputs = await fetchPlanInputs(remote, opts); } catch (err) {
    if (remote.offline && was) return fromCache();
    throw err;
  }
  remote.seal?.();
  if (was && remote.seal && sameIdentity(was, remote.identity)) { const m = await tryCache(); if (m) return m; }
  return convertInto(remote, inputs, opts, { store, folder, t0 });
}

/** onProgress events of a cached load keep the loader's shape, with the phase named. */
const withPhase = (opts) => ({ ...opts, onProgress: opts.onProgress && ((p) => opts.onProgress({ ...p, phase: p.phase ?? 'download' })) });

/**
 * The conversion itself, into a model (loading) or into files (`sinkFiles`: mlpscope convert hf:…).
 * @param {Remote} remote
 */
async function convertInto(remote, inputs, opts, { store, folder, t0, sinkFiles = null }) {
  await loadNodeCrypto();
  const { e, owns, why } = await engineFor(opts);
  const job = { e, conv: 0, stage: null, staging: [], shardBufs: [], cacheOk: !!store };
  try {
    const { plan, manifest0 } = openPlan(job, inputs, opts, sinkFiles), shards = plan.shards;
    const runs = sourceRuns(plan);
    const parallel = Math.max(1, Math.min(opts.parallel ?? 3, runs.length));
    const stagingBytes = Math.max(STAGING, ...plan.tensors.map((t) => t.row_bytes));
    if (sinkFiles) e.reserve(shards.reduce((a, s) => a + s.bytes, 0) + parallel * stagingBytes);
    else job.stage = await beginModel(manifest0, opts, { engine: e, ownsEngine: owns, threadsWhy: why, extraBytes: parallel * stagingBytes });
    const dst = tensorPlaces(job, plan, shards);
    for (let k = 0; k < parallel; k++) job.staging.push(e.malloc(stagingBytes));
    const report = progress(opts.onProgress, t0, plan, shards);

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
        e.c.model_finish_shard(job.stage.model, s, job.stage.actCode);
      }
      report.shard(sh);
    };
    await fetchRuns(job, remote, runs, parallel, opts, (run, buf) => rowFeeder(job, run, buf, stagingBytes, dst), (c, run) => report.bytes(c, run.file),
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
    const model = await endModel(job.stage, async () => tokBytes, remote.name, opts);
    if (job.cacheOk) await storeConverted(store, folder, remote, written, manifestText, tokBytes);
    report.prepare(1);
    return model;
  } catch (err) {
    for (const p of job.staging) e.free(p);
    if (job.conv) e.c.conv_close(job.conv);
    if (job.stage) job.stage.abandon();
    else if (owns && !sinkFiles) e.shutdown();
    throw err;
  } finally {
    if (sinkFiles) { for (const p of job.shardBufs.splice(0)) e.free(p); if (owns) e.shutdown(); }
  }
}

/** The engine's conversion plan from the fetched files (lent to the converter as its host). */
function openPlan(job, inputs, opts, sinkFiles) {
  const { e } = job, dt = dtypesOf(opts), saved = e.host;
  e.host = memoryHost(inputs);
  try { job.conv = e.c.conv_open_hf(e.c.dtype_id(dt.dtype), dt.embed ? e.c.dtype_id(dt.embed) : -1, sinkFiles ? opts.shardBytes ?? SHARD_BYTES : SHARD_BYTES); } finally { e.host = saved; }
  return { plan: e.c.conv_plan_json(job.conv), manifest0: e.c.conv_manifest(job.conv, '') };
}

/** Where each plan tensor goes: its buffer in the model (loading), or its place in its shard's
 * buffer (writing files). */
function tensorPlaces(job, plan, shards) {
  const { e, stage } = job, dst = new Array(plan.tensors.length);
  if (!stage) {
    shards.forEach((s, k) => { const p = e.malloc(Math.max(1, s.bytes)); e.u8.fill(0, p, p + s.bytes); job.shardBufs[k] = p; });
    plan.tensors.forEach((t, i) => { dst[i] = job.shardBufs[t.shard] + t.offset; });
    return dst;
  }
  const segBuf = e.malloc(plan.tensors.length * 24);
  try {
    for (let s = 0; s < shards.length; s++) {
      const n = e.c.model_shard_segments(stage.model, s, segBuf);
      const segs = e.f64.subarray(segBuf >> 3, (segBuf >> 3) + 3 * n), at = new Map();
      for (let k = 0; k < n; k++) at.set(segs[3 * k], segs[3 * k + 2] >>> 0);
      plan.tensors.forEach((t, i) => { if (t.shard === s) dst[i] = at.get(t.offset); });
    }
  } finally { e.free(segBuf); }
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
 * or the first failure stops them all (and all are waited for before the buffers are freed). */
async function fetchRuns(job, remote, runs, parallel, opts, feederFor, onBytes, onDone, inputs) {
  const { signal } = opts, inner = new AbortController(), free = [...job.staging];
  const onAbort = () => inner.abort();
  signal?.addEventListener('abort', onAbort, { once: true });
  if (signal?.aborted) inner.abort();
  try {
    await eachConcurrently(runs.length, parallel, inner, signal, remote.name, async (r) => {
      const run = runs[r], buf = free.pop();
      try {
        const feed = feederFor(run, buf);
        await fetchSpan(remote, run.file, run.start, run.end - 1, { ...opts, signal: inner.signal }, (c) => { feed.sink(c); onBytes(c, run); }, inputs.get(run.file)?.size);
        await onDone(feed.done.splice(0));
      } finally { free.push(buf); }
    });
  } finally { signal?.removeEventListener('abort', onAbort); }
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
 * @param {string} source @param {string} outDir @param {object} [opts] as loadHub's
 * @returns {Promise<{written: {shards: {file: string, bytes: number, sha256: string}[], tokenizer: object | null, tensors: number}, manifestText: string}>}
 */
export async function convertHub(source, outDir, opts = {}) {
  const fs = await nodeImport('node:fs'), path = await nodeImport('node:path');
  const remote = await remoteFor(source, opts);
  await remote.resolve(opts.signal);
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
  const inputs = await fetchPlanInputs(remote, opts);
  return convertInto(remote, inputs, { ...opts, threads: opts.threads ?? 1 }, { store: null, folder: null, t0: performance.now(), sinkFiles });
}

