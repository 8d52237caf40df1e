// Node only: SHA-256 of local shard files on worker threads, so the main thread (which also copies
// shards into the heap and repacks each verified shard) does not spend most of a load hashing.
// Node's OpenSSL hashes at ≈ 0.9 GB/s on this kind of CPU; with the hash on the main thread it was
// the longest part of loading a 0.8B weight set.
//
// A session hashes one shard: `update(bytes)` copies the piece into one of the pool's transfer
// buffers and posts it to the session's worker (the worker sends the buffer back when it has hashed
// it), `hex()` resolves to the digest. Because the bytes are copied from where the caller keeps
// them (the wasm heap), the digest is over exactly the bytes the model will use.
import { Worker } from 'node:worker_threads';

const PIECE = 8 << 20;

/** @param {number} threads  worker threads (each hashes whole shards, so ≤ shards in flight helps) */
export function createSha256Pool(threads) {
  const workers = [];
  /** @type {Map<number, {resolve: (hex: string) => void, reject: (e: Error) => void}>} */
  const finals = new Map();
  /** @type {ArrayBuffer[]} */
  const free = [];
  /** @type {((b: ArrayBuffer) => void)[]} */
  const waiting = [];
  let allocated = 0, nextId = 1, broken = null, closed = false;
  const maxBuffers = 3 * threads;

  const giveBack = (buf) => { const w = waiting.shift(); if (w) w(buf); else free.push(buf); };
  const fail = (err) => {
    if (closed) return;
    broken ??= Object.assign(new Error(`sha256 worker failed: ${err?.message ?? err}`), { hashWorkerFailed: true });
    for (const f of finals.values()) f.reject(broken);
    finals.clear();
    for (const res of waiting.splice(0)) res(new ArrayBuffer(0)); // nobody will give buffers back now
  };
  for (let i = 0; i < threads; i++) {
    const w = new Worker(new URL('./sha256-worker.js', import.meta.url));
    w.on('message', (m) => {
      if (m.buf) giveBack(m.buf);
      if (m.hex) { const f = finals.get(m.id); finals.delete(m.id); f?.resolve(m.hex); }
    });
    w.on('error', fail);
    w.on('exit', (code) => { if (code !== 0) fail(new Error(`exit code ${code}`)); });
    workers.push(w);
  }
  /** @returns {Promise<ArrayBuffer>} */
  const buffer = () => {
    if (free.length) return Promise.resolve(free.pop());
    if (allocated < maxBuffers) { allocated++; return Promise.resolve(new ArrayBuffer(PIECE)); }
    return new Promise((res) => waiting.push(res));
  };
  let rr = 0;
  return {
    /** One shard's digest. */
    session() {
      const id = nextId++, w = workers[rr++ % workers.length];
      return {
        /**
         * Queue `len` bytes. `view(off, n)` returns bytes off..off+n of the piece and is called
         * only when a transfer buffer is at hand, so a heap view is never kept across an await (a
         * growing wasm memory detaches old views). The bytes are copied before this resolves.
         * @param {number} len @param {(off: number, n: number) => Uint8Array} view
         */
        async update(len, view) {
          for (let off = 0; off < len; off += PIECE) {
            const n = Math.min(PIECE, len - off);
            const buf = await buffer();
            if (broken) throw broken;
            const src = view(off, n);
            if (src.length !== n) throw new Error(`sha256 pool: piece of ${src.length} bytes, expected ${n}`);
            new Uint8Array(buf, 0, n).set(src);
            w.postMessage({ id, buf, len: n }, [buf]);
          }
        },
        /** @returns {Promise<string>} */
        hex() {
          if (broken) return Promise.reject(broken);
          const p = new Promise((resolve, reject) => finals.set(id, { resolve, reject }));
          w.postMessage({ id, final: true });
          return p;
        },
        /** Forget a session that will not be finished (error paths): the worker drops its state. */
        drop() { if (!broken) w.postMessage({ id, drop: true }); },
      };
    },
    /** the worker threads (tests stop one to check that a failure rejects instead of hanging) */
    workers,
    close() { closed = true; for (const w of workers) w.terminate(); },
  };
}
