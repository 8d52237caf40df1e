// loadModelInWorker(): the same API as loadModel(), every call async, the engine in a worker so
// the caller never blocks: a module Web Worker in browsers, node:worker_threads in Node. Typed
// arrays come back transferred (no copies).
import { isNode, nodeImport } from './platform.js';
import { MlpscopeError } from './errors.js';
import { MODEL_CALLS, TOKENIZER_CALLS, FUNCTION_CALLS, wireArgs, SET_KEY, optsIndex } from './protocol.js';


/** One interface over both kinds of worker: post, listen for messages and failures, terminate. */
async function startWorker(url) {
  if (typeof Worker !== 'undefined') {
    const w = new Worker(url, { type: 'module' });
    return {
      post: (msg, transfer) => w.postMessage(msg, transfer),
      listen: (onMessage, onFailure) => { w.onmessage = ({ data }) => onMessage(data); w.onerror = (e) => onFailure(e.message); },
      terminate: () => w.terminate(),
    };
  }
  if (!isNode) throw new MlpscopeError('E_ARG', 'loadModelInWorker needs Workers, which this environment does not have: use loadModel');
  const { Worker: NodeWorker } = await nodeImport('node:worker_threads');
  const w = new NodeWorker(url);
  let ended = false;
  return {
    post: (msg, transfer) => w.postMessage(msg, transfer),
    listen: (onMessage, onFailure) => {
      w.on('message', onMessage);
      w.on('error', (e) => onFailure(e.message));
      w.on('exit', (code) => { if (!ended) onFailure(`the worker exited (code ${code})`); });
    },
    terminate: () => { ended = true; return w.terminate(); },
  };
}

class Rpc {
  constructor(worker) {
    this.worker = worker;
    this.next = 1;
    this.pending = new Map();
    worker.listen((data) => {
      const p = this.pending.get(data.id);
      if (!p) return;
      if (data.progress) { p.onProgress?.(data.progress); return; }
      this.pending.delete(data.id);
      if (data.ok) p.resolve(data.result);
      else p.reject(new MlpscopeError(data.error.code, data.error.message.replace(/^E_[A-Z_]+: /, '')));
    }, (why) => this.close(`worker failed: ${why}`));
  }
  /** no more calls: the pending ones and every later one are E_STATE with this reason */
  close(why) {
    this.closed = why;
    for (const p of this.pending.values()) p.reject(new MlpscopeError('E_STATE', why));
    this.pending.clear();
  }
  call(op, args = [], { onProgress, transfer = [] } = {}) {
    if (this.closed) return Promise.reject(new MlpscopeError('E_STATE', this.closed));
    const id = this.next++;
    const promise = new Promise((resolve, reject) => this.pending.set(id, { resolve, reject, onProgress }));
    promise.id = id;
    this.worker.post({ id, op, args }, transfer);
    return promise;
  }
}

// options that cross into the Worker: no callbacks, signals or modules (the Worker imports
// @huggingface/jinja by name itself); URLs as absolute strings (a relative one is the caller's)
const here = () => (typeof location !== 'undefined' ? location.href : undefined);
const plain = (opts = {}) => Object.fromEntries(Object.entries(opts)
  .filter(([k, v]) => k !== 'jinja' && k !== 'workerUrl' && typeof v !== 'function' && !(typeof AbortSignal !== 'undefined' && v instanceof AbortSignal))
  .map(([k, v]) => [k, /Url$/.test(k) && v != null ? absolute(v) : v]));
function absolute(v) { try { return new URL(String(v), here()).href; } catch { return String(v); } }

/**
 * A transcoder set loaded into the worker's engine (WorkerModel.loadTranscoders): pass it where the
 * in-process API takes a TranscoderSet (forward's `transcoders.set`, findFeatureNeurons'
 * `transcoders`, decomposePrediction's `transcoder.set`, neuronsVsFeatures).
 */
export class WorkerTranscoderSet {
  constructor(rpc, r) { this.rpc = rpc; this.handle = r.handle; this.layers = r.layers; this.features = r.features; this.k = r.k; this.scores = r.scores; }
  /** what a feature writes and the tokens it promotes and suppresses (TranscoderSet.featureOutput) */
  featureOutput(layer, feature, opts) { return this.rpc.call('featureOutput', [{ [SET_KEY]: this.handle }, layer, feature, opts]); }
  async dispose() { if (!this.rpc.closed) await this.rpc.call('disposeTranscoders', [{ [SET_KEY]: this.handle }]); }
}
/** arguments for the wire: a WorkerTranscoderSet anywhere in them (a few levels deep) becomes its handle */
function wire(v, depth = 0) {
  if (v instanceof WorkerTranscoderSet) return { [SET_KEY]: v.handle };
  if (!v || typeof v !== 'object' || ArrayBuffer.isView(v) || depth > 4 || v instanceof URL) return v;
  if (Array.isArray(v)) return v.length > 64 ? v : v.map((x) => wire(x, depth + 1));
  if (Object.getPrototypeOf(v) !== Object.prototype) return v;
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, wire(x, depth + 1)]));
}

/** The model's tokenizer, proxied: every method returns a promise (methods from protocol.js). */
class WorkerTokenizer {
  constructor(rpc, info) { Object.assign(this, info); this.rpc = rpc; }
}
for (const [name, spec] of Object.entries(TOKENIZER_CALLS))
  WorkerTokenizer.prototype[name] = function (...args) { return this.rpc.call(name, wireArgs(spec, args)); };

export class WorkerModel {
  constructor(worker, rpc, loaded) {
    this.worker = worker;
    this.rpc = rpc;
    this._info = loaded.info;
    this.tokenizer = loaded.tokenizer ? new WorkerTokenizer(rpc, loaded.tokenizer) : null;
    this.config = loaded.info.config;
    this.nLayers = loaded.info.config.num_hidden_layers;
    this.contextLength = loaded.info.contextLength;
  }
  async *generate(prompt, opts = {}) {
    const gid = await this.rpc.call('genStart', [prompt, plain(opts)]);
    try {
      for (;;) {
        if (opts.signal?.aborted) throw new MlpscopeError('E_ABORTED', 'generation aborted');
        const r = await this.rpc.call('genNext', [gid]);
        if (r.done) { this.lastGeneration = r.value; return r.value; } // the summary: finishReason, usage (and stats)
        yield r.value;
      }
    } finally { await this.rpc.call('genStop', [gid]).catch(() => {}); }
  }
  /**
   * Loads a transcoder set into the worker's model: a URL or folder (as loadTranscoders), or a
   * trainTranscoders result's `files`.
   * @param {string | URL | {'manifest.json': string, 'transcoders.bin': Uint8Array}} source
   * @returns {Promise<WorkerTranscoderSet>}
   */
  async loadTranscoders(source) {
    const src = typeof source === 'string' || source instanceof URL ? (here() || /^[a-z][a-z0-9+.-]+:/i.test(String(source)) ? new URL(String(source), here()).href : String(source)) : source;
    return new WorkerTranscoderSet(this.rpc, await this.rpc.call('loadTranscoders', [src]));
  }
  /** `await using model = await loadModelInWorker(…)` disposes it at the end of the block */
  [Symbol.asyncDispose ?? Symbol.for('Symbol.asyncDispose')]() { return this.dispose(); }

  async dispose() {
    if (this.rpc.closed) return;
    try { await this.rpc.call('dispose'); } finally { this.worker.terminate(); this.rpc.close('the model was disposed'); }
  }
}

// the proxied calls, from protocol.js: model methods (options without callbacks or signals) and
// the features.js functions run on the worker's model
for (const [name, spec] of Object.entries(MODEL_CALLS))
  WorkerModel.prototype[name] = function (...args) { return this.rpc.call(name, wire(wireArgs(spec, args).map((a) => (isOptions(a) ? plain(a) : a)))); };
for (const [name, spec] of Object.entries(FUNCTION_CALLS))
  WorkerModel.prototype[name] = async function (...args) {
    const at = optsIndex(spec), given = args[at] ?? {};
    const { onProgress, signal, ...rest } = given; // the callback and the signal stay here
    if (signal?.aborted) throw new MlpscopeError('E_ABORTED', `${name}: stopped`);
    const opts = spec.progress ? { ...rest, progress: !!onProgress } : rest; // the worker posts progress messages
    const p = this.rpc.call(name, wire([...args.slice(0, at), opts]), { onProgress });
    const onAbort = spec.signal ? () => this.rpc.call('abort', [p.id]) : null;
    if (onAbort) signal?.addEventListener('abort', onAbort, { once: true });
    try { return await p; } finally { if (onAbort) signal?.removeEventListener('abort', onAbort); }
  };
const isOptions = (a) => a !== null && typeof a === 'object' && !Array.isArray(a) && !ArrayBuffer.isView(a);

/**
 * @param {string|URL} source a weight set: a URL (browsers, Node), a folder path or file: URL (Node)
 * @param {import('./options.js').LoadOptions & {workerUrl?: string|URL}} [opts]
 * @returns {Promise<WorkerModel>}
 */
export async function loadModelInWorker(source, opts = {}) {
  if (opts.signal?.aborted) throw new MlpscopeError('E_ABORTED', `loading ${source} was aborted`);
  const worker = await startWorker(opts.workerUrl ?? new URL('./worker.js', import.meta.url));
  const rpc = new Rpc(worker);
  // relative sources are resolved here, where they were written (the page's URL; in Node the
  // current folder, which the worker shares; a Windows drive letter is a path, not a scheme)
  const where = typeof location !== 'undefined' ? location.href : undefined;
  const url = where || /^[a-z][a-z0-9+.-]+:/i.test(String(source)) ? new URL(String(source), where).href : String(source);
  const p = rpc.call('load', [url, plain(opts)], { onProgress: opts.onProgress });
  const onAbort = () => rpc.call('abort', [p.id]);
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    return new WorkerModel(worker, rpc, await p);
  } catch (err) {
    worker.terminate();
    throw err;
  } finally { opts.signal?.removeEventListener('abort', onAbort); }
}
