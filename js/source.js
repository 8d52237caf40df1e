// Where a weight set comes from: a local folder (Node) or a URL prefix (Node and browsers).
// Both give the same operations, so the loader has one code path. URL sources support resuming
// with HTTP Range and, in browsers, a Cache API cache keyed by URL + sha256.
import { isNode, nodeImport } from './platform.js';
import { MlpscopeError } from './errors.js';
import { openStore, pruneStale, entryKey } from './cache.js';

export { CACHE_NAME } from './cache.js';

/**
 * @typedef {{ stream: AsyncIterable<Uint8Array>, start: number, fromCache: boolean,
 *   commit?: () => Promise<void>, discard?: () => Promise<void> }} Opened
 * @typedef {{ name: string,
 *   text(file: string, signal?: AbortSignal): Promise<string>,
 *   bytes(file: string, signal?: AbortSignal): Promise<Uint8Array>,
 *   open(file: string, opts: {signal?: AbortSignal, start?: number, sha256?: string}): Promise<Opened> }} Source
 */

/** @param {string|URL} src @param {{cache?: boolean}} [opts] @returns {Promise<Source>} */
export async function openSource(src, opts = {}) { // opts: {cache, cacheDir, stallTimeoutMs}
  // a weight set is named by its folder; its manifest.json's own URL or path names it too
  const s = String(src).replace(/(^|[/\\])manifest\.json([?#].*)?$/, '$1');
  if (/^(https?|blob|data):/i.test(s) || (!isNode && !s.startsWith('file:'))) return urlSource(s, opts);
  if (!isNode) throw new MlpscopeError('E_ARG', `cannot open ${s} in a browser: pass a URL`);
  // a file: URL becomes a path the platform's way (percent-escapes such as %20 decoded)
  return folderSource(s.startsWith('file:') ? (await nodeImport('node:url')).fileURLToPath(s) : s);
}

/** Errors worth another attempt: transport failures and server-side 5xx/429. */
export function retryable(err) { return err?.retryable === true; }
export function transient(code, msg) { const e = new MlpscopeError(code, msg); e.retryable = true; return e; }

/** `promise`, or a rejection as soon as the signal aborts (at once if it already has); the abort
 * listener is removed when either happens, so a long download adds none per chunk. */
function raceAbort(promise, signal) {
  if (!signal) return promise;
  if (signal.aborted) { promise.catch(() => {}); return Promise.reject(new Error('aborted')); } // its later rejection is expected
  let onAbort;
  const stop = new Promise((_, reject) => { onAbort = () => reject(new Error('aborted')); signal.addEventListener('abort', onAbort, { once: true }); });
  return Promise.race([promise, stop]).finally(() => signal.removeEventListener('abort', onAbort));
}

/** A request's own abort controller: follows the caller's signal, and aborts when no data has
 * arrived for `ms` (a stalled server must not hang the loader). */
function stallGuard(signal, ms) {
  const ac = new AbortController();
  const onAbort = () => ac.abort();
  signal?.addEventListener('abort', onAbort, { once: true });
  let timer, stalled = false;
  const touch = () => { clearTimeout(timer); timer = setTimeout(() => { stalled = true; ac.abort(); }, ms); };
  touch();
  return { signal: ac.signal, touch, stalled: () => stalled, done: () => { clearTimeout(timer); signal?.removeEventListener('abort', onAbort); } };
}

/** A transport failure (or a stall, or the caller's abort) as a typed error. */
function failure(file, e, signal, guard, stallTimeoutMs) {
  if (signal?.aborted) return new MlpscopeError('E_ABORTED', `loading ${file} was aborted`);
  if (guard?.stalled()) return transient('E_NETWORK', `${file}: no data for ${stallTimeoutMs} ms`);
  return e instanceof MlpscopeError ? e : transient('E_NETWORK', `${file}: ${e.message}`);
}

/**
 * One GET with a stall guard: 404 is `notFound` (code E_MANIFEST for manifest.json, else
 * `missingCode`), 5xx / 429 / 408 and transport failures are retryable E_NETWORK. The response
 * carries the guard for `chunks()`.
 * @param {URL|string} url @param {string} file names the file in messages
 * @param {{signal?: AbortSignal, headers?: Record<string, string>, stallTimeoutMs?: number, missingCode?: string}} [o]
 */
export async function guardedFetch(url, file, { signal, headers, stallTimeoutMs = 30000, missingCode = 'E_SHARD_MISSING' } = {}) {
  const guard = stallGuard(signal, stallTimeoutMs);
  let r;
  try {
    r = await fetch(url, { signal: guard.signal, headers, cache: 'no-store' });
  } catch (e) {
    guard.done();
    throw failure(file, e, signal, guard, stallTimeoutMs);
  }
  guard.touch();
  const fail = (err) => { guard.done(); r.body?.cancel?.().catch?.(() => {}); throw err; };
  if (r.status === 404) { const err = new MlpscopeError(file === 'manifest.json' ? 'E_MANIFEST' : /** @type {any} */ (missingCode), `${file}: HTTP 404 (not found)`); err.notFound = true; fail(err); }
  if (r.status >= 500 || r.status === 429 || r.status === 408) fail(transient('E_NETWORK', `${file}: HTTP ${r.status}`));
  if (!r.ok) fail(new MlpscopeError('E_NETWORK', `${file}: HTTP ${r.status}`));
  r.guard = guard;
  r.file = file;
  r.userSignal = signal;
  r.stallTimeoutMs = stallTimeoutMs;
  return r;
}

/** A response body as chunks, each read raced against the stall guard and the caller's abort. */
export function chunks(r) {
  const reader = r.body.getReader();
  const g = r.guard;
  return { async *[Symbol.asyncIterator]() {
    let finished = false;
    try {
      for (;;) {
        let step;
        // race the read against the request's abort: a read started after an abort may never settle
        try { step = await raceAbort(reader.read(), g?.signal); } catch (e) { throw failure(r.file ?? 'response', e, r.userSignal, g, r.stallTimeoutMs); }
        g?.touch();
        if (step.done) { finished = true; return; }
        yield step.value;
      }
    } finally {
      g?.done();
      if (!finished) reader.cancel().catch(() => {}); // left early: the rest of the body is not wanted
      reader.releaseLock?.();
    }
  } };
}

/** A whole (small) response body, with the guard's stall and abort handling. */
export async function responseBytes(r) {
  try { return new Uint8Array(await raceAbort(r.arrayBuffer(), r.guard.signal)); } catch (e) { throw failure(r.file, e, r.userSignal, r.guard, r.stallTimeoutMs); } /* cut off or stalled */
  finally { r.guard.done(); }
}

function urlSource(base, { cache, cacheDir, stallTimeoutMs = 30000 } = {}) {
  const baseUrl = new URL(base.endsWith('/') ? base : base + '/', typeof location !== 'undefined' ? location.href : undefined);
  let storeP = null; // the cache (Cache API, or cacheDir in Node), opened once, on first use
  const store = () => (storeP ??= openStore({ cache, cacheDir }));
  const get = (file, signal, headers) => guardedFetch(new URL(file, baseUrl), file, { signal, headers, stallTimeoutMs });
  const body = chunks;
  const cacheKey = (file, sha) => entryKey(baseUrl.href, file, sha);
  // Small files: with a sha256 (tokenizer) cache-first by content; without (manifest.json)
  // network-first, keeping the last good copy for offline use.
  const small = async (file, signal, sha256) => {
    const c = await store();
    const key = cacheKey(file, sha256);
    if (c && sha256) { const hit = await c.match(key); if (hit) return new Uint8Array(await hit.arrayBuffer()); }
    try {
      const r = await get(file, signal);
      const b = await responseBytes(r);
      if (c) await c.put(key, new Response(b)).catch(() => {});
      return b;
    } catch (err) {
      if (c && !sha256 && err.code === 'E_NETWORK') { const hit = await c.match(key); if (hit) return new Uint8Array(await hit.arrayBuffer()); }
      throw err;
    }
  };
  return {
    name: baseUrl.href,
    /** drop a cached file that failed verification */
    forget: async (file, sha256) => { const c = await store(); await c?.delete(cacheKey(file, sha256)).catch(() => {}); },
    /** after a good load: drop this folder's cached files the manifest no longer names */
    prune: async (files) => pruneStale(await store(), baseUrl.href, files),
    text: async (f, signal) => new TextDecoder().decode(await small(f, signal)),
    bytes: async (f, signal, sha256) => small(f, signal, sha256),
    async open(file, { signal, start = 0, sha256 } = {}) {
      const c = sha256 ? await store() : null;
      if (c && start === 0) {
        const hit = await c.match(cacheKey(file, sha256));
        if (hit) return { stream: body(hit), start: 0, fromCache: true, discard: () => c.delete(cacheKey(file, sha256)) };
      }
      const r = await get(file, signal, start > 0 ? { Range: `bytes=${start}-` } : undefined);
      let from = 0;
      if (r.status === 206) {
        const m = /bytes (\d+)-/.exec(r.headers.get('content-range') ?? '');
        from = m ? Number(m[1]) : -1;
        if (from !== start) throw transient('E_NETWORK', `${file}: server answered a range request for ${start} with ${r.headers.get('content-range')}`);
      }
      if (c && from === 0) {
        // store a copy while streaming (the Cache API writes to disk, not to a second buffer)
        const [a, b] = r.body.tee();
        const put = c.put(cacheKey(file, sha256), new Response(b, { headers: { 'content-type': 'application/octet-stream' } }));
        put.catch(() => {});
        return { stream: body({ body: a }), start: 0, fromCache: false,
          commit: () => put, discard: async () => { await put.catch(() => {}); await c.delete(cacheKey(file, sha256)); } };
      }
      return { stream: body(r), start: from, fromCache: false };
    },
  };
}

async function folderSource(dir) {
  const fs = await nodeImport('node:fs');
  const path = await nodeImport('node:path');
  const full = (f) => path.join(dir, f);
  const missing = (f, e) => Object.assign(new MlpscopeError(f === 'manifest.json' ? 'E_MANIFEST' : 'E_SHARD_MISSING', `${full(f)}: ${e.code === 'ENOENT' ? 'no such file' : e.message}`), { notFound: e.code === 'ENOENT' });
  return {
    name: dir,
    local: true,
    text: async (f) => { try { return await fs.promises.readFile(full(f), 'utf8'); } catch (e) { throw missing(f, e); } },
    bytes: async (f) => { try { return new Uint8Array(await fs.promises.readFile(full(f))); } catch (e) { throw missing(f, e); } },
    async open(f, { signal, start = 0 } = {}) {
      try { await fs.promises.access(full(f)); } catch (e) { throw missing(f, e); }
      return { stream: fs.createReadStream(full(f), { highWaterMark: 1 << 20, signal, start }), start, fromCache: false };
    },
    /** Random access for reading a shard straight into the wasm heap (no stream buffers). */
    async openFile(f) {
      let fh;
      try { fh = await fs.promises.open(full(f), 'r'); } catch (e) { throw missing(f, e); }
      const { size } = await fh.stat();
      return {
        size,
        /** reads up to view.length bytes at `position` into view; resolves to the count read */
        read: async (view, position) => (await fh.read(view, 0, view.length, position)).bytesRead,
        close: () => fh.close(),
      };
    },
  };
}

/**
 * A weight set read from the cache alone (no network): what js/hub.js converted from a Hugging
 * Face checkpoint is kept under a folder URL of its own, and loads from here on later visits.
 * @param {any} store from openStore() @param {string} folder the folder URL (ending in '/')
 * @returns {Source}
 */
export function cachedSource(store, folder) {
  const missing = (file) => Object.assign(new MlpscopeError(file === 'manifest.json' ? 'E_MANIFEST' : 'E_SHARD_MISSING', `${folder}${file}: not in the cache`), { notFound: true });
  const entry = async (file, sha256) => {
    const hit = await store.match(entryKey(folder, file, sha256));
    if (!hit) throw missing(file);
    return hit;
  };
  return {
    name: folder,
    fromCacheOnly: true,
    forget: async (file, sha256) => { await store.delete(entryKey(folder, file, sha256)).catch(() => {}); },
    prune: async (files) => pruneStale(store, folder, [...files, { file: 'source.json' }]),
    text: async (f) => (await entry(f)).text(),
    bytes: async (f, signal, sha256) => new Uint8Array(await (await entry(f, sha256)).arrayBuffer()),
    async open(file, { sha256 } = {}) {
      const hit = await entry(file, sha256);
      return { stream: chunks(hit), start: 0, fromCache: true, discard: () => store.delete(entryKey(folder, file, sha256)) };
    },
  };
}
