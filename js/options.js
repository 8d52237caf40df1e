// The load options, read once: loadModel's caller writes one flat object (LoadOptions, as
// documented in js/index.d.ts); the loading wing works on it split into the parts each step
// needs, with the defaults filled in here and nowhere else.
import { MlpscopeError } from './errors.js';
import * as A from './args.js';

/**
 * @typedef {{ onProgress?: (p: {phase?: string, loaded: number, total: number, file: string, fromCache: boolean}) => void,
 *   signal?: AbortSignal, contextLength?: number, maxContext?: number, memoryBudget?: number, simd?: boolean,
 *   relaxedSimd?: 'auto'|boolean|'relaxed'|'relaxedu8',
 *   batchSize?: number, parallel?: number, engine?: import('./wasm.js').Engine, threads?: number|'auto', build?: 'release'|'test',
 *   activations?: 'int8'|'exact'|'plain', exact?: boolean, int8Activations?: boolean, retries?: number, retryDelayMs?: number,
 *   onRetry?: (r: {file: string, attempt: number, error: Error, resumeAt: number}) => void,
 *   manifestSha256?: string, stallTimeoutMs?: number, jinja?: {Template: any} | null, cacheDir?: string, cache?: boolean,
 *   wasmUrl?: URL|string, mtWasmUrl?: URL|string, threadWorkerUrl?: URL|string, relaxedWasmUrl?: URL|string, mtRelaxedWasmUrl?: URL|string,
 *   hubUrl?: string, dtype?: string, embedDtype?: string, shardBytes?: number }} LoadOptions
 *   hubUrl / dtype / embedDtype / shardBytes: for Hugging Face sources (js/hub.js).
 *   How q8 / q4 matrices meet their inputs (`activations`): 'int8' (the default) rounds each block
 *   of 32 inputs to int8 and runs integer dot products, as llama.cpp does: fastest, with the
 *   accuracy stated in docs/api.md; 'exact' splits each input into two 16-bit codes and is exact up
 *   to f32 rounding, at about half the speed in prefill and nearly the same in decode; 'plain' runs
 *   the reference f32 kernels on the file's own layout (slow). `exact: true` is 'exact';
 *   `int8Activations: false / true` is 'exact' / 'int8' (the option's earlier name).
 */

/**
 * The parts of LoadOptions, defaults filled in:
 *   net: how files are fetched (abort, retries with backoff, the stall timeout, retry reports);
 *   cache: where converted and downloaded files are kept; engine: which engine runs the model;
 *   model: the model's own settings (context, memory, kernels, activation mode asked for, chat
 *   template renderer); hub: the conversion of a Hugging Face checkpoint; and the rest.
 * @typedef {{
 *   net: {signal?: AbortSignal, retries: number, retryDelayMs: number, stallTimeoutMs?: number, onRetry?: Function},
 *   cache: {cache?: boolean, cacheDir?: string},
 *   engine: {engine?: import('./wasm.js').Engine, threads: number|'auto', build?: 'release'|'test', relaxedSimd: 'auto'|boolean|'relaxed'|'relaxedu8',
 *     urls: {wasmUrl?: URL|string, mtWasmUrl?: URL|string, threadWorkerUrl?: URL|string, relaxedWasmUrl?: URL|string, mtRelaxedWasmUrl?: URL|string}},
 *   model: {contextLength?: number, maxContext: number, memoryBudget?: number, simd: boolean, relaxedSimd: 'auto'|boolean|'relaxed'|'relaxedu8', batchSize: number,
 *     activations: string, jinja?: {Template: any} | null},
 *   hub: {hubUrl?: string, dtype: string, embedDtype?: string, shardBytes?: number},
 *   parallel: number, onProgress?: Function, manifestSha256?: string }} Load
 */

/**
 * Reads LoadOptions once. Checks what can be checked without the engine (the activation options
 * agree; an unknown activation mode or dtype is found against the engine's own lists later, by
 * activationCode and dtypeCodes).
 * @param {LoadOptions} [opts] @returns {Load}
 */
export function readLoadOptions(opts) {
  opts = A.options(opts, 'load options');
  checkKinds(opts);
  return {
    net: { signal: opts.signal, retries: opts.retries ?? 4, retryDelayMs: opts.retryDelayMs ?? 250, stallTimeoutMs: opts.stallTimeoutMs, onRetry: opts.onRetry },
    cache: { cache: opts.cache, cacheDir: opts.cacheDir },
    engine: { engine: opts.engine, threads: opts.threads ?? 'auto', build: opts.build, relaxedSimd: opts.relaxedSimd ?? 'auto',
      urls: { wasmUrl: opts.wasmUrl, mtWasmUrl: opts.mtWasmUrl, threadWorkerUrl: opts.threadWorkerUrl, relaxedWasmUrl: opts.relaxedWasmUrl, mtRelaxedWasmUrl: opts.mtRelaxedWasmUrl } },
    model: { contextLength: opts.contextLength, maxContext: opts.maxContext ?? 4096, memoryBudget: opts.memoryBudget, simd: opts.simd ?? true,
      relaxedSimd: opts.relaxedSimd ?? 'auto',
      batchSize: opts.batchSize ?? 64, activations: activationAsked(opts), jinja: opts.jinja },
    hub: { hubUrl: opts.hubUrl, dtype: opts.dtype ?? 'q8', embedDtype: opts.embedDtype, shardBytes: opts.shardBytes },
    parallel: opts.parallel ?? 3,
    onProgress: opts.onProgress,
    manifestSha256: opts.manifestSha256,
  };
}

/** Each option is of its kind (a wrong one is E_ARG naming it); ranges are checked where used. */
function checkKinds(o) {
  const fail = (k, want) => { throw new MlpscopeError('E_ARG', `${k}: expected ${want}, not ${A.show(o[k])}`); };
  const is = (k, ok, want) => { if (o[k] !== undefined && !ok(o[k])) fail(k, want); };
  const count = (v) => Number.isInteger(v) && v >= 0, num = (v) => typeof v === 'number' && v >= 0 && !Number.isNaN(v);
  for (const k of ['retries', 'parallel', 'batchSize', 'maxContext', 'shardBytes']) is(k, count, 'an integer >= 0');
  is('contextLength', Number.isInteger, 'an integer');
  for (const k of ['retryDelayMs', 'stallTimeoutMs', 'memoryBudget']) is(k, num, 'a number >= 0');
  for (const k of ['onProgress', 'onRetry']) is(k, (v) => typeof v === 'function', 'a function');
  for (const k of ['simd', 'cache']) is(k, (v) => typeof v === 'boolean', 'true or false');
  is('relaxedSimd', (v) => typeof v === 'boolean' || v === 'auto' || v === 'relaxed' || v === 'relaxedu8', "'auto', true, false, 'relaxed' or 'relaxedu8'");
  for (const k of ['dtype', 'embedDtype', 'hubUrl', 'cacheDir']) is(k, (v) => typeof v === 'string', 'a string');
  for (const k of ['wasmUrl', 'mtWasmUrl', 'threadWorkerUrl', 'relaxedWasmUrl', 'mtRelaxedWasmUrl']) is(k, (v) => typeof v === 'string' || v instanceof URL, 'a URL');
  is('signal', (v) => typeof AbortSignal !== 'undefined' && v instanceof AbortSignal, 'an AbortSignal');
  is('manifestSha256', (v) => typeof v === 'string' && /^[0-9a-f]{64}$/i.test(v), 'a sha256 in hex (64 digits)');
  is('engine', (v) => v !== null && typeof v === 'object' && typeof v.c === 'object', 'an engine from createEngine()');
  is('jinja', (v) => v === null || (typeof v === 'object' && typeof v.Template === 'function'), "null or @huggingface/jinja's module");
}

/** The activation mode the options ask for ('int8' unless one says otherwise): `activations`,
 * `exact` and `int8Activations` must agree (E_ARG naming the ones that do not). */
function activationAsked(opts) {
  const asked = [];
  if (opts.activations !== undefined) asked.push(['activations', opts.activations]);
  if (opts.exact !== undefined) {
    if (typeof opts.exact !== 'boolean') throw new MlpscopeError('E_ARG', 'exact: expected true or false');
    asked.push(['exact', opts.exact ? 'exact' : 'int8']);
  }
  if (opts.int8Activations !== undefined) {
    if (typeof opts.int8Activations !== 'boolean') throw new MlpscopeError('E_ARG', 'int8Activations: expected true or false');
    asked.push(['int8Activations', opts.int8Activations ? 'int8' : 'exact']);
  }
  const modes = new Set(asked.map(([, m]) => m));
  if (modes.size > 1) throw new MlpscopeError('E_ARG', `${asked.map(([k]) => k).join(' and ')} disagree: ${asked.map(([k, m]) => `${k} asks for '${m}'`).join(', ')}`);
  return asked.length ? asked[0][1] : 'int8';
}

/**
 * The engine's code of an activation mode (its index in engine.info.activations).
 * @param {{activations: string[]}} info @param {string} name
 */
export function activationCode(info, name) {
  const code = info.activations.indexOf(name);
  if (code < 0) throw new MlpscopeError('E_ARG', `activations: '${name}' is not one of ${info.activations.join(', ')}`);
  return code;
}

/**
 * A dtype a weight set can be converted to, by its full or short name ('q8' or 'q8_0'), as the
 * engine lists them: `{name, id}` (E_ARG naming `what` for anything else).
 * @param {{dtypes: {name: string, id: number, short: string | null, in_files: boolean}[]}} info
 * @param {string} v @param {string} what the option's name in messages
 */
export function fileDtype(info, v, what) {
  const files = info.dtypes.filter((d) => d.in_files);
  const d = files.find((x) => x.name === v || x.short === v);
  if (!d) throw new MlpscopeError('E_ARG', `${what}: '${v}' is not one of ${files.map((x) => x.short ?? x.name).join(', ')}`);
  return d;
}
