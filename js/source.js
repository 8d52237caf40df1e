// Where a weight set comes from: a local folder (Node) or a URL prefix (Node and browsers).
// Both give the same three operations, so the loader has one code path.
import { MlpscopeError } from './errors.js';

const isNode = typeof process !== 'undefined' && !!process.versions?.node;

/**
 * @typedef {{ name: string,
 *   text(file: string): Promise<string>,
 *   bytes(file: string): Promise<Uint8Array>,
 *   stream(file: string, signal?: AbortSignal): Promise<AsyncIterable<Uint8Array>> }} Source
 */

/** @param {string|URL} src @returns {Promise<Source>} */
export async function openSource(src) {
  const s = String(src);
  if (/^(https?|blob|data):/i.test(s) || (!isNode && !s.startsWith('file:'))) return urlSource(s);
  if (!isNode) throw new MlpscopeError('E_ARG', `cannot open ${s} in a browser: pass a URL`);
  return folderSource(s.startsWith('file:') ? new URL(s).pathname : s);
}

function urlSource(base) {
  const baseUrl = new URL(base.endsWith('/') ? base : base + '/', typeof location !== 'undefined' ? location.href : undefined);
  const get = async (file, signal) => {
    let r;
    try {
      r = await fetch(new URL(file, baseUrl), { signal });
    } catch (e) {
      if (signal?.aborted) throw new MlpscopeError('E_ABORTED', `loading ${file} was aborted`);
      throw new MlpscopeError('E_NETWORK', `${file}: ${e.message}`);
    }
    if (r.status === 404) throw new MlpscopeError(file === 'manifest.json' ? 'E_MANIFEST' : 'E_SHARD_MISSING', `${file}: HTTP 404`);
    if (!r.ok) throw new MlpscopeError('E_NETWORK', `${file}: HTTP ${r.status}`);
    return r;
  };
  return {
    name: baseUrl.href,
    text: async (f) => (await get(f)).text(),
    bytes: async (f) => new Uint8Array(await (await get(f)).arrayBuffer()),
    stream: async (f, signal) => {
      const r = await get(f, signal);
      const reader = r.body.getReader();
      return { async *[Symbol.asyncIterator]() { for (;;) { const { done, value } = await reader.read(); if (done) return; yield value; } } };
    },
  };
}

async function folderSource(dir) {
  const fs = await import('node:fs');
  const path = await import('node:path');
  const full = (f) => path.join(dir, f);
  const missing = (f, e) => new MlpscopeError(f === 'manifest.json' ? 'E_MANIFEST' : 'E_SHARD_MISSING', `${full(f)}: ${e.code === 'ENOENT' ? 'no such file' : e.message}`);
  return {
    name: dir,
    text: async (f) => { try { return await fs.promises.readFile(full(f), 'utf8'); } catch (e) { throw missing(f, e); } },
    bytes: async (f) => { try { return new Uint8Array(await fs.promises.readFile(full(f))); } catch (e) { throw missing(f, e); } },
    stream: async (f, signal) => {
      try { await fs.promises.access(full(f)); } catch (e) { throw missing(f, e); }
      return fs.createReadStream(full(f), { highWaterMark: 1 << 20, signal });
    },
  };
}
