// loadModelInWorker(): the same API as loadModel(), every call async, the engine in a Web Worker
// so the page never blocks. Typed arrays come back transferred (no copies).
import { MlpscopeError } from './errors.js';

class Rpc {
  constructor(worker) {
    this.worker = worker;
    this.next = 1;
    this.pending = new Map();
    worker.onmessage = ({ data }) => {
      const p = this.pending.get(data.id);
      if (!p) return;
      if (data.progress) { p.onProgress?.(data.progress); return; }
      this.pending.delete(data.id);
      if (data.ok) p.resolve(data.result);
      else p.reject(new MlpscopeError(data.error.code, data.error.message.replace(/^E_[A-Z_]+: /, '')));
    };
    worker.onerror = (e) => {
      for (const p of this.pending.values()) p.reject(new MlpscopeError('E_STATE', `worker failed: ${e.message}`));
      this.pending.clear();
    };
  }
  call(op, args = [], { onProgress, transfer = [] } = {}) {
    const id = this.next++;
    const promise = new Promise((resolve, reject) => this.pending.set(id, { resolve, reject, onProgress }));
    promise.id = id;
    this.worker.postMessage({ id, op, args }, transfer);
    return promise;
  }
}

const plain = (opts = {}) => Object.fromEntries(Object.entries(opts).filter(([, v]) => typeof v !== 'function' && !(typeof AbortSignal !== 'undefined' && v instanceof AbortSignal)));

/** The model's tokenizer, proxied: every method returns a promise. */
class WorkerTokenizer {
  constructor(rpc, info) { Object.assign(this, info); this.rpc = rpc; }
  encode(text, opts) { return this.rpc.call('encode', [text, opts]); }
  decode(ids) { return this.rpc.call('decode', [Array.from(ids)]); }
  idToToken(id) { return this.rpc.call('idToToken', [id]); }
  tokenToId(s) { return this.rpc.call('tokenToId', [s]); }
  pretokenize(text) { return this.rpc.call('pretokenize', [text]); }
  applyChatTemplate(messages, opts) { return this.rpc.call('applyChatTemplate', [messages, opts]); }
}

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
  info() { return this.rpc.call('info'); }
  forward(ids, opts = {}) { return this.rpc.call('forward', [Array.from(ids), plain(opts)]); }
  reset() { return this.rpc.call('reset'); }
  /** findFeatureNeurons() run inside the worker */
  findFeatureNeurons(probes, opts = {}) {
    const { onProgress, ...rest } = opts; // the callback stays here; the worker posts progress messages
    return this.rpc.call('features', [probes, { ...rest, progress: !!onProgress }], { onProgress });
  }
  /** neuronTopActivations() run inside the worker */
  neuronTopActivations(texts, opts) { return this.rpc.call('topActivations', [texts, opts]); }
  neuronOutput(layer, neuron, opts = {}) { return this.rpc.call('neuronOutput', [layer, neuron, opts]); }
  unembedDirection(v, opts = {}) { return this.rpc.call('unembedDirection', [Array.from(v), opts]); }
  setDeltaNetMode(mode) { return this.rpc.call('setDeltaNetMode', [mode]); }
  async *generate(prompt, opts = {}) {
    const gid = await this.rpc.call('genStart', [prompt, plain(opts)]);
    try {
      for (;;) {
        if (opts.signal?.aborted) throw new MlpscopeError('E_ABORTED', 'generation aborted');
        const r = await this.rpc.call('genNext', [gid]);
        if (r.done) return;
        yield r.value;
      }
    } finally { await this.rpc.call('genStop', [gid]).catch(() => {}); }
  }
  async dispose() {
    try { await this.rpc.call('dispose'); } finally { this.worker.terminate(); }
  }
}

/**
 * @param {string|URL} source URL of a weight set
 * @param {import('./index.js').LoadOptions & {workerUrl?: string|URL}} [opts]
 * @returns {Promise<WorkerModel>}
 */
export async function loadModelInWorker(source, opts = {}) {
  const worker = new Worker(opts.workerUrl ?? new URL('./worker.js', import.meta.url), { type: 'module' });
  const rpc = new Rpc(worker);
  const url = new URL(String(source), typeof location !== 'undefined' ? location.href : undefined).href;
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
