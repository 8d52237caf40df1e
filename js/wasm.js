// The wasm boundary, JS side: instantiates build/wasm/mlpscope.wasm (a standalone module, no
// Emscripten JS runtime) in Node, browsers and workers, and binds the C ABI of src/api/api.c from
// one table (ABI below): every other module calls `engine.c.<name>(...)` and never touches raw
// exports. The engine's tables (hook points, statistics, error codes, activation modes, chat
// kinds, logits modes, the lens layout, dtypes) are read from the engine itself (`engine.info`,
// C's ms_engine_info), never copied here or anywhere else on the JS side.
import { isNode, nodeImport } from './platform.js';
import { MlpscopeError } from './errors.js';
import { startThreads, stopThreads, threadSupport, hardwareThreads } from './threads.js';
import { relaxedSupport, relaxedImports } from './relaxed.js';


/** Default location of the module, relative to this file (works from node_modules and static hosting). */
export const defaultWasmUrl = new URL('../build/wasm/mlpscope.wasm', import.meta.url);
/** The multi-threaded twin (wasm atomics, shared memory), beside it. */
export const defaultMtWasmUrl = new URL('../build/wasm/mlpscope-mt.wasm', import.meta.url);
/** The relaxed-SIMD tiles for each (src/kernels/wasm/gemm_qx4_relaxed.c, built by clang-16), beside them. */
export const defaultRelaxedWasmUrl = new URL('../build/wasm/mlpscope-relaxed.wasm', import.meta.url);
export const defaultMtRelaxedWasmUrl = new URL('../build/wasm/mlpscope-relaxed-mt.wasm', import.meta.url);
/** The test builds (kernel and benchmark exports too; a checkout's build only, not in the package). */
const testWasmUrls = [new URL('../build/wasm/mlpscope-test.wasm', import.meta.url), new URL('../build/wasm/mlpscope-mt-test.wasm', import.meta.url)];

/** @returns {Promise<ArrayBuffer|Uint8Array>} */
async function fetchWasm(url) {
  const notBuilt = (why) => new MlpscopeError('E_ENGINE', `the engine ${url.pathname.split('/').pop()} is not there (${why}): ` +
    'in a checkout of the repository, build it with ./build.sh wasm (npm start and npm test build it too); ' +
    'an installed package ships it, so reinstall the package');
  if (isNode && url.protocol === 'file:') {
    const { readFile } = await nodeImport('node:fs/promises');
    try { return await readFile(url); } catch (e) { if (e.code === 'ENOENT') throw notBuilt(`no file ${url.pathname}`); throw e; }
  }
  const r = await fetch(url);
  if (r.status === 404) throw notBuilt(`HTTP 404 for ${url}`);
  if (!r.ok) throw new MlpscopeError('E_NETWORK', `cannot fetch ${url}: HTTP ${r.status}`);
  return r.arrayBuffer();
}

/**
 * The C ABI, one row per export of src/api/api.c (without the ms_ prefix): [result, ...arguments].
 * Arguments: 'i' int, 'f' float or double, 'p' pointer the caller manages; 'sz' a string or bytes
 * copied in for the call, passed as (pointer, byte length); 's0' a string passed NUL-terminated;
 * 'i32' integers copied in as int32 (pointer), 'i32n' the same as (pointer, count); 'f32n' numbers
 * copied in as float32 (pointer, count); 'err' the
 * engine's error record (supplied here, not by the caller). Results: 'v' none, 'i', 'f', 'p'
 * (unsigned), 'rc' (non-zero: throw the engine's error), 'p!' (NULL: throw), 'i!' (negative:
 * throw), 'json' (a malloc'd JSON text, parsed and freed), 'owned' (a malloc'd string or NULL:
 * string or undefined, freed), 'text!' (a malloc'd string, freed; NULL: throw).
 * @type {Record<string, string[]>}
 */
export const ABI = {
  malloc: ['p', 'i'], free: ['v', 'p'], err_new: ['p'], err_code: ['i', 'p'], err_msg: ['p', 'p'], err_reset: ['v', 'p'],
  code_str: ['p', 'i'], have_simd: ['i'], heap_used: ['f'], heap_break: ['f'], engine_info: ['json'],
  // a model: created from its manifest, shards laid out as they arrive, finished
  model_create: ['p!', 'sz', 'i', 'i', 'err'], model_destroy: ['v', 'p'], model_finish_shard: ['rc', 'p', 'i', 'i', 'err'],
  model_finish: ['rc', 'p', 'i', 'err'], model_set_pool: ['v', 'p', 'p'], model_weight_bytes: ['f', 'p'],
  model_state_bytes: ['f', 'p', 'i', 'i'], model_n_shards: ['i', 'p'], model_shard_segments: ['i', 'p', 'i', 'p'],
  model_n_tensors: ['i', 'p'], model_info: ['json', 'p'], model_set_kernels: ['rc', 'p', 'i', 'err'], model_time_kernels: ['text!', 'p', 'i', 'i', 'i', 'err'],
  mlp_down_column: ['rc', 'p', 'i', 'i', 'p', 'err'], unembed_direction: ['rc', 'p', 'p', 'p', 'err'],
  mlp_down_readout: ['rc', 'p', 'i', 'p', 'p', 'err'], mlp_write_scale: ['rc', 'p', 'i', 'p', 'i', 'p', 'err'], mlp_neuron_geometry: ['rc', 'p', 'i', 'i', 'p', 'err'], mlp_interaction: ['rc', 'p', 'i', 'p', 'i', 'p', 'err'], weight_get: ['rc', 'p', 's0', 'i', 'i', 'p', 'err'], weight_row: ['rc', 'p', 's0', 'i', 'p', 'err'], weight_cols: ['i!', 'p', 's0', 'err'], weight_zero: ['rc', 'p', 's0', 'i', 'i', 'p', 'err'], weight_restore: ['rc', 'p', 's0', 'i', 'i', 'i', 'err'], head_readout: ['rc', 'p', 'i', 'i', 'p', 'err'],
  // threads (js/threads.js)
  pool_create: ['p!', 'i', 'err'], pool_destroy: ['v', 'p'], pool_enter: ['v', 'p', 'i'], pool_running: ['i', 'p'],
  pool_caller_can_block: ['v', 'p', 'i'],
  // a sequence's state, and one forward call on it (a run)
  state_new: ['p!', 'p', 'i', 'i', 'err'], state_destroy: ['v', 'p'], state_clear: ['v', 'p'], state_pos: ['i', 'p'],
  state_set_gdn: ['rc', 'p', 'i', 'i', 'err'], unembed_vec: ['v', 'p', 'p', 'p'],
  run_new: ['p!', 'p', 'i', 'i', 'i', 'i', 'err'], run_hook: ['i!', 'p', 'sz', 'err'], run_hook_data: ['p', 'p', 'i'],
  run_hook_count: ['f', 'p', 'i'], run_intervene: ['rc', 'p', 'i', 'sz', 'i', 'i32n', 'i32n', 'f', 'f32n', 'err'],
  run_lens: ['rc', 'p', 'i32n', 'i', 'i', 'i', 'err'], run_bilinear: ['rc', 'p', 'i', 'err'], run_exec: ['rc', 'p', 'i32', 'err'], run_logits: ['p', 'p'],
  run_stat: ['p', 'p', 'i'], run_lens_top_ids: ['p', 'p'], run_lens_top_logits: ['p', 'p'], run_lens_top_probs: ['p', 'p'],
  run_free: ['v', 'p'],
  // sampling: one sampler per generation (its random state, scratch and the last logprob)
  sampler_create: ['p!', 'f', 'i', 'err'], sampler_destroy: ['v', 'p'], sampler_draw: ['i', 'p', 'p', 'i', 'f', 'i', 'f'],
  sampler_last_logprob: ['f', 'p'],
  // tokenizer
  tok_load: ['p!', 's0', 'sz', 'i', 'err'], tok_free: ['v', 'p'], tok_encode: ['i!', 'p', 'sz', 'i', 'p', 'i', 'err'],
  tok_piece: ['i', 'p', 'i', 'i', 'p', 'p'], tok_vocab: ['i', 'p'], tok_bos: ['i', 'p'], tok_max_ids: ['i', 'i'],
  tok_chat_kind: ['i', 'p'], tok_token_string: ['owned', 'p', 'i'], tok_token_id: ['i', 'p', 'sz'],
  tok_chat: ['p!', 'p', 'sz', 'i', 'i', 'p', 'err'], tok_pretokenize: ['i', 'p', 'p', 'i', 'p', 'i'],
  tok_import: ['p!', 'sz', 'sz', 'p', 'err'], tok_chat_info: ['text!', 'sz', 'sz', 'err'],
  // sha256 of shards as they stream in
  sha_new: ['p!'], sha_update: ['v', 'p', 'p', 'i'], sha_final: ['v', 'p', 'p'],
  // converter and synthetic weight sets (host I/O through the imports below)
  convert: ['rc', 's0', 's0', 'i', 'i', 'i', 'f', 'err'], synth: ['rc', 'sz', 'f', 'i', 'i', 'f', 'err'], config_summary: ['text!', 'sz', 'err'],
  // conversion while a Hugging Face checkpoint streams in (js/hub.js)
  conv_open_hf: ['p!', 'i', 'i', 'f', 'err'], conv_manifest: ['text!', 'p', 's0', 'err'], conv_plan_json: ['json', 'p'],
  conv_rows: ['rc', 'p', 'i', 'p', 'f', 'f', 'p', 'err'], conv_tokenizer: ['p', 'p', 'p'], conv_close: ['v', 'p'],
  // transcoders: a session captures, trains and scores some layers' (js/transcoder.js)
  tc_session_create: ['p!', 'p', 'i32n', 'i', 'i', 'i', 'i', 'i', 'i', 'f', 'f', 'err'], tc_session_destroy: ['v', 'p'], tc_session_bytes: ['f', 'p', 'i', 'i', 'i', 'i', 'i', 'i', 'p'],
  tc_feed: ['rc', 'p', 'i32n', 'err'], tc_room: ['i', 'p'], tc_train: ['rc', 'p', 'err'], tc_eval_reset: ['rc', 'p', 'i', 'err'],
  tc_eval_feed: ['rc', 'p', 'i32n', 'err'], tc_report: ['json', 'p'], tc_save: ['text!', 'p', 's0', 'p', 'err'],
  // a loaded transcoder, and one on a forward call (its features read, edited, or the MLP replaced)
  tc_create: ['p!', 'i', 'i', 'i', 'p', 'err'], tc_destroy: ['v', 'p'], tc_readout: ['v', 'p', 'p', 'p'], tc_decoder_row: ['rc', 'p', 'i', 'p', 'err'], run_transcoder: ['rc', 'p', 'i', 'p', 'i', 'i', 'err'],
  run_feature_edit: ['rc', 'p', 'i', 'i', 'i', 'f', 'i32n', 'err'], run_features_of: ['p', 'p', 'i'],
};

/** Exports of the test builds only (src/api/api_test.c): kernels by dtype and ISA, bench probes. */
export const TEST_ABI = {
  dbg_weight_bytes: ['f', 'i', 'i', 'i'], dbg_quantize: ['i', 'i', 'p', 'i', 'i', 'p'],
  dbg_matmul: ['v', 'i', 'i', 'p', 'i', 'i', 'p', 'i', 'p'], dbg_matmul_exact: ['v', 'i', 'i', 'p', 'i', 'i', 'p', 'i', 'p'],
  dbg_gemm: ['i', 'i', 'p', 'i', 'i', 'p', 'i', 'p'], dbg_gemm_acc: ['v', 'i', 'p', 'i', 'p', 'i', 'i', 'p', 'i', 'i', 'i', 'i', 'f'], dbg_dot_rows: ['v', 'i', 'p', 'p', 'p', 'i', 'i', 'i', 'f'],
  dbg_silu_mul: ['v', 'i', 'p', 'p', 'p', 'i'], dbg_gelu_tanh_mul: ['v', 'i', 'p', 'p', 'p', 'i'], dbg_sumsq: ['f', 'i', 'p', 'i'], dbg_exp_sum: ['f', 'i', 'p', 'p', 'i', 'f', 'f'],
  bench_stream_bytes: ['i', 'p', 'i', 'i', 'i'], bench_mac: ['i', 'p', 'i'], bench_mac_pool: ['v', 'p', 'p', 'i'], bench_stream_pool: ['v', 'p', 'p', 'i', 'i', 'i'], bench_ggml_prep: ['v', 'p', 'p', 'i'],
  bench_ggml_matvec: ['v', 'p', 'i', 'i', 'p', 'p', 'p', 'p'],
};

const textEncoder = new TextEncoder();
const textDecoder = new TextDecoder();

/**
 * The instantiated engine: exports plus helpers. One per model is fine; a module is ~200 KB.
 */
export class Engine {
  constructor(instance, host, memory) {
    /** the raw exports: only this module uses them */
    this.x = instance.exports;
    this.memory = /** @type {WebAssembly.Memory} */ (memory ?? this.x.memory);
    /** the converter's file I/O (open/close/size/read/write/log/progress); js/hub.js lends it one
     * serving files from memory for the length of a call */
    this.host = host;
    this.errPtr = this.x.ms_err_new();
    /** the C ABI bound from ABI (and TEST_ABI in a test build): `engine.c.model_info(ptr)` */
    this.c = /** @type {Record<string, Function>} */ ({});
    for (const [name, sig] of Object.entries(ABI)) this.c[name] = bind(this, name, sig);
    /** whether this is a test build (its extra exports bound too) */
    this.testBuild = typeof this.x.ms_dbg_matmul === 'function';
    if (this.testBuild) for (const [name, sig] of Object.entries(TEST_ABI)) this.c[name] = bind(this, name, sig);
    /** what the engine can show, from C's own tables (js/index.d.ts, EngineInfo)
     * @type {{hooks: {name: string, id: number, width: string, what: string}[], interventions: string[], intervention_ops: string[],
     *   stats: {name: string, id: number, type: 'f32'|'i32'|'f64', shape: string[], when: 'always'|'gdn', what: string}[],
     *   errors: string[], activations: string[], chat_kinds: string[], logits_modes: string[], lens: {shape: string[], kinds: string[]},
     *   dtypes: {name: string, id: number, short: string | null, in_files: boolean}[],
     *   gemm_kernels: {id: number, name: string, weights: string, activations: string, isa: string,
     *   tile_rows: number, tile_tokens: number, decode_rows: number, row_step: number, col_step: number, col_block: number,
     *   col_chunk: number, row_chunk: number, max_cols: number}[]}} */
    this.info = this.c.engine_info();
    /** threads running the matmuls (1: the single-threaded build) */
    this.threads = 1;
    /** whether the relaxed-SIMD tiles are linked in (a model may then use them: js/weightset.js), and why (not) */
    this.relaxed = { linked: false, why: 'not asked for', levels: { relaxed: false, relaxedu8: false } };
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
  check(ok) { if (!ok) this.throwError(); }
  /** Throws the engine's last error (its code and message), clearing it. */
  throwError() {
    const code = this.cstr(this.x.ms_code_str(this.x.ms_err_code(this.errPtr)));
    const msg = this.cstr(this.x.ms_err_msg(this.errPtr));
    this.x.ms_err_reset(this.errPtr);
    throw new MlpscopeError(/** @type {any} */ (code), msg);
  }
  get err() { return this.errPtr; }
}

/**
 * @param {{wasmBinary?: ArrayBuffer|Uint8Array, wasmUrl?: URL|string, mtWasmBinary?: ArrayBuffer|Uint8Array, mtWasmUrl?: URL|string,
 *   threadWorkerUrl?: URL|string, relaxedWasmUrl?: URL|string, mtRelaxedWasmUrl?: URL|string, host?: object, threads?: number,
 *   build?: 'release'|'test', relaxedSimd?: 'auto'|boolean|'relaxed'|'relaxedu8'}} [opts]
 *   wasmUrl / mtWasmUrl / threadWorkerUrl: where a bundle keeps the single- and multi-threaded
 *   engines and js/thread-worker.js (default: beside the package's own files); relaxedWasmUrl /
 *   mtRelaxedWasmUrl: the relaxed-SIMD tiles for each (mlpscope-relaxed(-mt).wasm; missing: SIMD128 alone)
 *   build 'test': the test build of a checkout (kernel and benchmark exports, tests/ and bench/)
 *   threads > 1: the multi-threaded build with that many threads (the caller's included); throws
 *   E_ARG where threads cannot run (no SharedArrayBuffer / not cross-origin isolated)
 *   relaxedSimd 'auto' (default): link the relaxed-SIMD tiles in where the runtime runs them right
 *   (engine.relaxed says whether and why); true (or a level's name: the loader's option): the
 *   same, E_ARG where it cannot; false: never
 * @returns {Promise<Engine>}
 */
export async function createEngine(opts = {}) {
  const threads = opts.threads ?? 1;
  if (!Number.isInteger(threads) || threads < 1 || threads > 64) throw new MlpscopeError('E_ARG', `threads: ${threads} is not an integer in [1, 64]`);
  if (threads > 1) {
    const sup = threadSupport();
    if (!sup.ok) throw new MlpscopeError('E_ARG', `threads: ${threads} threads cannot run: ${sup.why}`);
  }
  if (opts.build !== undefined && opts.build !== 'release' && opts.build !== 'test') throw new MlpscopeError('E_ARG', `build: "${opts.build}" is not "release" or "test"`);
  const wantRelaxed = opts.relaxedSimd ?? 'auto';
  if (!['auto', true, false, 'relaxed', 'relaxedu8'].includes(wantRelaxed))
    throw new MlpscopeError('E_ARG', `relaxedSimd: ${JSON.stringify(wantRelaxed)} is not 'auto', true, false, 'relaxed' or 'relaxedu8'`);
  const test = opts.build === 'test';
  const here = typeof location !== 'undefined' ? location.href : undefined; // a relative URL is the page's (or the Worker's)
  const bin = threads > 1 ? (opts.mtWasmBinary ?? await fetchWasm(new URL(test ? testWasmUrls[1] : opts.mtWasmUrl ?? defaultMtWasmUrl, here)))
    : (opts.wasmBinary ?? await fetchWasm(new URL(test ? testWasmUrls[0] : opts.wasmUrl ?? defaultWasmUrl, here)));
  const host = { ...defaultHost(), ...(opts.host || {}) };
  // the threaded build imports its memory: shared, 16 MiB to start, room to grow to 4 GiB
  const memory = threads > 1 ? new WebAssembly.Memory({ initial: 256, maximum: 65536, shared: true }) : undefined;
  let engine;
  const imports = {
    env: {
      ms_now_ms: () => performance.now(),
      emscripten_notify_memory_growth: () => {},
      ms_host_open: (name, mode) => engine.host.open(engine.cstr(name), String.fromCharCode(mode)),
      ms_host_close: (h) => engine.host.close(h),
      ms_host_size: (h) => engine.host.size(h),
      ms_host_read: (h, off, buf, n) => engine.host.read(h, off, engine.u8.subarray(buf >>> 0, (buf >>> 0) + (n >>> 0))),
      ms_host_write: (h, buf, n) => engine.host.write(h, engine.u8.subarray(buf >>> 0, (buf >>> 0) + (n >>> 0))),
      ms_host_log: (p) => engine.host.log(engine.cstr(p)),
      ms_host_progress: (done, total) => engine.host.progress?.(done, total),
    },
  };
  if (memory) imports.env.memory = memory;
  // the relaxed-SIMD tiles: a module of their own over the engine's memory, where the runtime runs
  // them right (js/relaxed.js) and they were built (clang-16); 'auto' goes on without them
  const relaxed = { linked: false, why: 'relaxedSimd: false', levels: { relaxed: false, relaxedu8: false } };
  let rxModule = null, rxInstance = null;
  if (wantRelaxed !== false) {
    const sup = relaxedSupport();
    if (sup.ok) {
      try {
        const rxUrl = threads > 1 ? opts.mtRelaxedWasmUrl ?? defaultMtRelaxedWasmUrl : opts.relaxedWasmUrl ?? defaultRelaxedWasmUrl;
        rxModule = await WebAssembly.compile(await fetchWasm(new URL(rxUrl, here)));
        Object.assign(relaxed, { linked: true, why: sup.why, levels: sup.levels });
      } catch (err) { relaxed.why = `the relaxed-SIMD module did not load: ${err.message}`; }
    } else relaxed.why = sup.why;
    if (wantRelaxed !== 'auto' && !relaxed.linked) throw new MlpscopeError('E_ARG', `relaxedSimd: ${JSON.stringify(wantRelaxed)}, but ${relaxed.why}`);
  }
  const module = await WebAssembly.compile(bin);
  if (rxModule && memory) rxInstance = await WebAssembly.instantiate(rxModule, { env: { memory } });
  // the threaded engine imports its memory, so the tiles come first and are called directly; the
  // single-threaded one owns its memory, so they follow it and are reached through JS
  imports.relaxed = rxInstance ? rxInstance.exports : relaxedImports(() => rxInstance);
  const instance = await WebAssembly.instantiate(module, imports);
  instance.exports._initialize?.();
  if (rxModule && !memory) rxInstance = await WebAssembly.instantiate(rxModule, { env: { memory: instance.exports.memory } });
  engine = new Engine(instance, host, memory);
  engine.relaxed = relaxed;
  if (threads > 1) {
    engine._threads = await startThreads(engine, module, threads, opts.threadWorkerUrl && new URL(opts.threadWorkerUrl, here), rxModule);
    engine.threads = threads;
  }
  return engine;
}

/**
 * The engine for a load, and who owns it: the one passed in (`engine`; the caller keeps it), else
 * the multi-threaded build when threads can run here and more than one is wanted ('auto': one per
 * hardware thread, at most 4), else the single-threaded one; `why` says which and why.
 * @param {{engine?: Engine, threads?: number|'auto', build?: 'release'|'test', relaxedSimd?: 'auto'|boolean|'relaxed'|'relaxedu8',
 *   urls?: {wasmUrl?: URL|string, mtWasmUrl?: URL|string, threadWorkerUrl?: URL|string, relaxedWasmUrl?: URL|string, mtRelaxedWasmUrl?: URL|string}}} o
 * @returns {Promise<{e: Engine, owns: boolean, why: string}>}
 */
export async function engineFor({ engine, threads: want = 'auto', build, relaxedSimd = 'auto', urls = {} }) {
  if (engine) return { e: engine, owns: false, why: 'the engine passed in' };
  if (want !== 'auto' && !(Number.isInteger(want) && want >= 1 && want <= 64))
    throw new MlpscopeError('E_ARG', `threads: ${JSON.stringify(want)} is neither 'auto' nor an integer in [1, 64]`);
  const base = { ...urls, build, relaxedSimd };
  const sup = threadSupport();
  const hw = await hardwareThreads();
  const n = want === 'auto' ? Math.min(hw, 4) : want;
  const one = async (why) => ({ e: await createEngine(base), owns: true, why });
  if (n < 2) return one(want === 'auto' ? `threads: auto, ${hw} hardware thread` : 'threads: 1 asked for');
  if (!sup.ok) return one(`threads: ${want}, but ${sup.why}`);
  try {
    return { e: await createEngine({ ...base, threads: n }), owns: true, why: `threads: ${want}${want === 'auto' ? `, ${hw} hardware threads` : ''}` };
  } catch (err) {
    return one(`threads: ${want}, but the threaded build did not start: ${err.message}`);
  }
}

/** A JS function for export ms_<name> with signature sig (see ABI). */
function bind(e, name, [ret, ...args]) {
  const fn = e.x['ms_' + name];
  if (typeof fn !== 'function') throw new MlpscopeError('E_ENGINE', `the engine module lacks ms_${name}: rebuild it with ./build.sh wasm`);
  const simple = args.every((a) => a === 'i' || a === 'f' || a === 'p') && (ret === 'v' || ret === 'i' || ret === 'f' || ret === 'p');
  if (simple) return ret === 'p' ? (...a) => fn(...a) >>> 0 : fn; // no marshalling: the plain export
  return (...given) => {
    const pass = [], temp = [];
    let g = 0;
    try {
      for (const kind of args) {
        if (kind === 'err') { pass.push(e.errPtr); continue; }
        const v = given[g++];
        if (kind === 'sz' || kind === 's0') {
          const b = typeof v === 'string' ? textEncoder.encode(v) : v;
          const p = e.malloc(b.length + 1);
          temp.push(p);
          e.u8.set(b, p);
          e.u8[p + b.length] = 0;
          pass.push(p);
          if (kind === 'sz') pass.push(b.length);
        } else if (kind === 'i32' || kind === 'i32n') {
          const n = v.length, p = e.malloc(Math.max(1, n) * 4);
          temp.push(p);
          const view = e.i32;
          for (let k = 0; k < n; k++) {
            const x = v[k];
            if (!(Number.isInteger(x) && x >= -0x80000000 && x <= 0x7fffffff))
              throw new MlpscopeError('E_ARG', `${name}: value ${x} at index ${k} is not a 32-bit integer`);
            view[(p >> 2) + k] = x;
          }
          pass.push(p);
          if (kind === 'i32n') pass.push(n);
        } else if (kind === 'f32n') {
          const n = v.length, p = e.malloc(Math.max(1, n) * 4);
          temp.push(p);
          e.f32.set(v, p >> 2);
          pass.push(p, n);
        } else pass.push(v);
      }
      const r = fn(...pass);
      switch (ret) {
        case 'rc': if (r !== 0) e.throwError(); return undefined;
        case 'p!': if (!r) e.throwError(); return r >>> 0;
        case 'i!': if (r < 0) e.throwError(); return r;
        case 'p': return r >>> 0;
        case 'json': case 'owned': case 'text!': {
          const p = r >>> 0;
          if (!p && ret === 'text!') e.throwError();
          if (!p) { if (ret === 'owned') return undefined; throw new MlpscopeError('E_MEMORY', `${name}: out of memory in the wasm heap`); }
          const text = e.cstr(p);
          e.x.ms_free(p);
          return ret === 'json' ? JSON.parse(text) : text; // 'owned' / 'text!': the string
        }
        default: return r;
      }
    } finally { for (const p of temp) e.x.ms_free(p); }
  };
}

function defaultHost() {
  const none = () => -1;
  return { open: none, close: none, size: none, read: none, write: none, log: () => {}, progress: () => {} };
}
