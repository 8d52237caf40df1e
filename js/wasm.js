// Instantiates build/wasm/mlpscope.wasm (a standalone module: no Emscripten JS runtime) in Node,
// browsers and workers, and wraps the C ABI of src/api/api.c with memory helpers.
import { MlpscopeError } from './errors.js';
import { startThreads, stopThreads, threadSupport } from './threads.js';

const isNode = typeof process !== 'undefined' && !!process.versions?.node;

/** Default location of the module, relative to this file (works from node_modules and static hosting). */
export const defaultWasmUrl = new URL('../build/wasm/mlpscope.wasm', import.meta.url);
/** The multi-threaded twin (wasm atomics, shared memory), beside it. */
export const defaultMtWasmUrl = new URL('../build/wasm/mlpscope-mt.wasm', import.meta.url);

/** @returns {Promise<ArrayBuffer|Uint8Array>} */
async function fetchWasm(url) {
  const notBuilt = (why) => new MlpscopeError('E_ENGINE', `the engine ${url.pathname.split('/').pop()} is not there (${why}): ` +
    'in a checkout of the repository, build it with ./build.sh wasm (npm start and npm test build it too); ' +
    'an installed package ships it, so reinstall the package');
  if (isNode && url.protocol === 'file:') {
    const { readFile } = await import('node:fs/promises');
    try { return await readFile(url); } catch (e) { if (e.code === 'ENOENT') throw notBuilt(`no file ${url.pathname}`); throw e; }
  }
  const r = await fetch(url);
  if (r.status === 404) throw notBuilt(`HTTP 404 for ${url}`);
  if (!r.ok) throw new MlpscopeError('E_NETWORK', `cannot fetch ${url}: HTTP ${r.status}`);
  return r.arrayBuffer();
}

const textEncoder = new TextEncoder();
const textDecoder = new TextDecoder();

/**
 * The instantiated engine: exports plus helpers. One per model is fine; a module is ~200 KB.
 */
export class Engine {
  constructor(instance, host, memory) {
    this.x = instance.exports;
    this.memory = /** @type {WebAssembly.Memory} */ (memory ?? this.x.memory);
    this.host = host;
    this.errPtr = this.x.ms_err_new();
    /** threads running the matmuls (1: the single-threaded build) */
    this.threads = 1;
    this._threads = null;
  }
  /** the C thread pool (0 without threads), for ms_model_set_pool */
  get pool() { return this._threads?.pool ?? 0; }
  /** Stops the worker threads, if any (the engine stays usable, single-threaded). */
  shutdown() {
    stopThreads(this, this._threads);
    this._threads = null;
    this.threads = 1;
  }
  get u8() { return new Uint8Array(this.memory.buffer); }
  get f32() { return new Float32Array(this.memory.buffer); }
  get i32() { return new Int32Array(this.memory.buffer); }
  get f64() { return new Float64Array(this.memory.buffer); }
  /** heap size in bytes */
  get heapBytes() { return this.memory.buffer.byteLength; }

  /**
   * Grow the memory at once so that `bytes` more can be allocated without growing it again:
   * allocating a model's tensors one by one grows a non-shared memory in hundreds of steps, which
   * measured 80-200 ms for 0.8B shapes. Never shrinks; the 4 GiB limit still applies.
   * @param {number} bytes
   */
  reserve(bytes) {
    const PAGE = 65536, want = Math.min(4 * 1024 ** 3 - PAGE, this.x.ms_heap_break() + bytes + (1 << 20));
    const have = this.memory.buffer.byteLength;
    if (want <= have) return;
    try { this.memory.grow(Math.ceil((want - have) / PAGE)); } catch { /* then malloc fails with a typed error where it matters */ }
  }

  malloc(n) {
    const p = this.x.ms_malloc(n) >>> 0;
    if (!p) throw new MlpscopeError('E_MEMORY', `wasm heap: cannot allocate ${n} bytes`);
    return p;
  }
  free(p) { if (p) this.x.ms_free(p); }
  /** NUL-terminated UTF-8 copy of a string; returns [ptr, byteLength] (caller frees). */
  str(s) {
    const b = textEncoder.encode(s);
    const p = this.malloc(b.length + 1);
    this.u8.set(b, p);
    this.u8[p + b.length] = 0;
    return [p, b.length];
  }
  bytes(b) {
    const p = this.malloc(b.length);
    this.u8.set(b, p);
    return p;
  }
  cstr(p) {
    p >>>= 0;
    const u8 = this.u8;
    let e = p;
    while (u8[e]) e++;
    return textDecoder.decode(u8.slice(p, e)); // a copy: TextDecoder refuses views of shared memory
  }
  /** Throws the engine's last error if rc/ptr says it failed. */
  check(ok) {
    if (ok) return;
    const code = this.cstr(this.x.ms_code_str(this.x.ms_err_code(this.errPtr)));
    const msg = this.cstr(this.x.ms_err_msg(this.errPtr));
    this.x.ms_err_reset(this.errPtr);
    throw new MlpscopeError(/** @type {any} */ (code), msg);
  }
  get err() { return this.errPtr; }
}

/**
 * @param {{wasmBinary?: ArrayBuffer|Uint8Array, wasmUrl?: URL|string, host?: object, threads?: number}} [opts]
 *   threads > 1: the multi-threaded build with that many threads (the caller's included); throws
 *   E_ARG where threads cannot run (no SharedArrayBuffer / not cross-origin isolated)
 * @returns {Promise<Engine>}
 */
export async function createEngine(opts = {}) {
  const threads = opts.threads ?? 1;
  if (!Number.isInteger(threads) || threads < 1 || threads > 64) throw new MlpscopeError('E_ARG', `threads: ${threads} is not an integer in [1, 64]`);
  if (threads > 1) {
    const sup = threadSupport();
    if (!sup.ok) throw new MlpscopeError('E_ARG', `threads: ${threads} threads cannot run: ${sup.why}`);
  }
  const bin = threads > 1 ? (opts.mtWasmBinary ?? await fetchWasm(new URL(opts.mtWasmUrl ?? defaultMtWasmUrl)))
    : (opts.wasmBinary ?? await fetchWasm(new URL(opts.wasmUrl ?? defaultWasmUrl)));
  const host = { ...defaultHost(), ...(opts.host || {}) };
  // the threaded build imports its memory: shared, 16 MiB to start, room to grow to 4 GiB
  const memory = threads > 1 ? new WebAssembly.Memory({ initial: 256, maximum: 65536, shared: true }) : undefined;
  let engine;
  const imports = {
    env: {
      ms_now_ms: () => performance.now(),
      emscripten_notify_memory_growth: () => {},
      ms_host_open: (name, mode) => host.open(engine.cstr(name), String.fromCharCode(mode)),
      ms_host_close: (h) => host.close(h),
      ms_host_size: (h) => host.size(h),
      ms_host_read: (h, off, buf, n) => host.read(h, off, engine.u8.subarray(buf >>> 0, (buf >>> 0) + (n >>> 0))),
      ms_host_write: (h, buf, n) => host.write(h, engine.u8.subarray(buf >>> 0, (buf >>> 0) + (n >>> 0))),
      ms_host_log: (p) => host.log(engine.cstr(p)),
    },
  };
  if (memory) imports.env.memory = memory;
  const module = await WebAssembly.compile(bin);
  const instance = await WebAssembly.instantiate(module, imports);
  instance.exports._initialize?.();
  engine = new Engine(instance, host, memory);
  if (threads > 1) {
    engine._threads = await startThreads(engine, module, threads);
    engine.threads = threads;
  }
  return engine;
}

function defaultHost() {
  const none = () => -1;
  return { open: none, close: none, size: none, read: none, write: none, log: () => {} };
}
