// SHA-256 of what is loaded. In Node the shard hash runs in OpenSSL (SHA extensions where the CPU
// has them: several times the engine's portable C sha256 in wasm); browsers have no incremental
// SubtleCrypto digest, so they hash with the engine. Both are checked against each other by the tests.
import { isNode, nodeImport } from './platform.js';

// node:crypto, imported by the first load in Node (not by a top-level await, which older bundle
// targets refuse)
let nodeCrypto;
/** Makes newHasher use node:crypto from now on where there is one (Node). */
export const loadNodeCrypto = async () => (nodeCrypto ??= isNode ? await nodeImport('node:crypto').catch(() => null) : null);
/** Whether hashes run in node:crypto (a local file is then read straight into the heap). */
export const hashesInNode = () => !!nodeCrypto;

/**
 * An incremental sha256 over shard bytes: `update(bytes, heapPtr)` sees each piece once, in order
 * (heapPtr: where `bytes` are in the engine's heap, for the engine's own sha256).
 * @param {import('./wasm.js').Engine} e
 * @returns {{update(bytes: Uint8Array, ptr: number): void, hex(): string, free(): void}}
 */
export function newHasher(e) {
  if (nodeCrypto) {
    const h = nodeCrypto.createHash('sha256');
    return { update: (bytes) => { h.update(bytes); }, hex: () => h.digest('hex'), free() {} };
  }
  let sha = e.c.sha_new();
  return {
    update: (bytes, ptr) => { e.c.sha_update(sha, ptr, bytes.length); },
    hex: () => { const out = e.malloc(65); e.c.sha_final(sha, out); const x = e.cstr(out); e.free(out); return x; },
    free: () => { if (sha) e.free(sha); sha = 0; },
  };
}

/** The sha256 (hex) of bytes, computed by the engine. @param {import('./wasm.js').Engine} e @param {Uint8Array} bytes */
export function sha256Hex(e, bytes) {
  const h = e.c.sha_new();
  const p = e.bytes(bytes);
  e.c.sha_update(h, p, bytes.length);
  const out = e.malloc(65);
  e.c.sha_final(h, out);
  const hex = e.cstr(out);
  e.free(p); e.free(out); e.free(h);
  return hex;
}
