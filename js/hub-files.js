// The files of a Hugging Face checkpoint, wherever it is: a repository on a hub (`hf:owner/name
// [@revision]`: the model API for the commit and the file list, /resolve/ URLs), a folder URL laid
// out like one, or such a folder on disk (Node). Small files come whole, tensors by HTTP Range,
// resumed after a cut and retried; what the conversion plan is made from (config, tokenizer files,
// safetensors headers) is fetched here too. js/hub.js converts what these give.
import { isNode, nodeImport } from './platform.js';
import { MlpscopeError } from './errors.js';
import { guardedFetch, chunks, responseBytes, transient } from './source.js';
import { withRetry, sleep } from './async.js';

/** @typedef {import('./options.js').Load} Load */

export const DEFAULT_HUB_URL = 'https://huggingface.co';

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

/** Whether a source that has no manifest.json is a checkpoint folder (it has a config.json).
 * @param {string|URL} source @param {Load} o */
export async function isHubFolder(source, o) {
  const s = String(source);
  if (isNode && !/^(https?|blob|data):/i.test(s)) {
    const fs = await nodeImport('node:fs'), path = await nodeImport('node:path');
    const dir = s.startsWith('file:') ? (await nodeImport('node:url')).fileURLToPath(s) : s;
    return fs.existsSync(path.join(dir, 'config.json'));
  }
  try {
    const r = await guardedFetch(new URL('config.json', folderUrl(s)), 'config.json', { signal: o.net.signal, stallTimeoutMs: o.net.stallTimeoutMs, missingCode: 'E_CHECKPOINT' });
    await r.body?.cancel();
    r.guard.done();
    return true;
  } catch { return false; }
}

/** A folder's URL with its trailing slash (relative: the page's). @param {string} s */
export function folderUrl(s) {
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
 *   sizeHint(file: string): number | null, has?(file: string): boolean | null }} Remote
 */

/** A repository on a hub: the model API for the commit and the file list, /resolve/ URLs for files.
 * @param {string} spec @param {string | undefined} hubUrl @param {Load['net']} net */
function hubRemote(spec, hubUrl, net) {
  const { repo, revision } = parseHubSpec(spec);
  const hub = String(hubUrl ?? (isNode ? globalThis.process?.env?.HF_ENDPOINT : undefined) ?? DEFAULT_HUB_URL).replace(/\/+$/, '');
  const { stallTimeoutMs, retries, retryDelayMs } = net;
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
          1, retryDelayMs, signal);
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
      try { return await withRetry(async () => responseBytes(await guardedFetch(fileUrl(file), file, { signal, stallTimeoutMs, missingCode: 'E_CHECKPOINT' })), retries, retryDelayMs, signal); } catch (err) {
        if (err.notFound) return null;
        throw err;
      }
    },
    range: (file, start, end, signal) => httpRange(fileUrl(file), file, start, end, signal, stallTimeoutMs),
    sizeHint: (file) => files?.get(file)?.lfs?.size ?? files?.get(file)?.size ?? null,
    has: (file) => (files ? files.has(file) : null),
  };
  remote.cacheFolder = `${hub}/${enc(repo)}/resolve/${encodeURIComponent(revision)}/`;
  return remote;
}

/** A folder URL laid out like a repository (a static server, a mirror without the model API).
 * @param {string|URL} source @param {Load['net']} net */
function folderRemote(source, net) {
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
          const r = await guardedFetch(new URL(file, base), file, { signal, stallTimeoutMs: net.stallTimeoutMs, missingCode: 'E_CHECKPOINT' });
          tags[file] = r.headers.get('etag') ?? r.headers.get('last-modified') ?? r.headers.get('content-length');
          return responseBytes(r);
        }, net.retries, net.retryDelayMs, signal);
      } catch (err) {
        if (err.notFound) return null;
        if (file === 'config.json' && err.code === 'E_NETWORK') { remote.offline = true; remote.offlineWhy = err.message; }
        throw err;
      }
    },
    async range(file, start, end, signal) {
      const r = await httpRange(new URL(file, base), file, start, end, signal, net.stallTimeoutMs);
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
 * @param {Remote} remote @param {string} file @param {number} start @param {number} end @param {Load['net']} o
 * @returns {Promise<number>} the file's total size as the server reported it
 */
export async function fetchSpan(remote, file, start, end, o, sink, fileSize, clampEnd = false) {
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
      if (!err.retryable || attempt >= o.retries) throw err;
      attempt++;
      o.onRetry?.({ file, attempt, error: err, resumeAt: pos });
      await sleep(o.retryDelayMs * 2 ** (attempt - 1), o.signal);
    }
  }
}

const SMALL_FILES = ['config.json', 'generation_config.json', 'tokenizer.json', 'tokenizer_config.json', 'chat_template.jinja', 'model.safetensors.index.json'];

/**
 * Fetches what the plan is made from: the small files and every safetensors header.
 * @param {Remote} remote @param {Load['net']} o
 * @returns {Promise<Map<string, {bytes: Uint8Array, size: number}>>}
 */
export async function fetchPlanInputs(remote, o) {
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
    const absent = names.filter((n) => remote.has?.(n) === false);
    if (absent.length) throw new MlpscopeError('E_CHECKPOINT', `model.safetensors.index.json: weight_map names ${absent.slice(0, 3).join(', ')}, which ${remote.name} does not have`);
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

/** Where the checkpoint `source` names is read from. @param {string|URL} source @param {Load} o @returns {Promise<Remote>} */
export async function remoteFor(source, o) {
  if (isHubSpec(source)) return hubRemote(String(source), o.hub.hubUrl, o.net);
  const s = String(source);
  if (isNode && !/^(https?|blob|data):/i.test(s)) return localRemote(s.startsWith('file:') ? (await nodeImport('node:url')).fileURLToPath(s) : s);
  return folderRemote(s, o.net);
}
