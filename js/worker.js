// The worker side of loadModelInWorker() (a Web Worker, or node:worker_threads in Node): runs
// the in-process API and answers messages. Results' typed arrays are transferred, not copied.
import { nodeImport } from './platform.js';
import { loadModel } from './loader.js';
import { MlpscopeError } from './errors.js';
import * as features from './features.js';
import * as language from './language.js';
import * as superweights from './superweights.js';
import * as transcoder from './transcoder.js';
import { MODEL_CALLS, TOKENIZER_CALLS, FUNCTION_CALLS, SET_KEY, optsIndex } from './protocol.js';

// a Web Worker talks through `self`; a Node worker through worker_threads' parentPort
const port = typeof self !== 'undefined' && typeof self.postMessage === 'function'
  ? { post: (msg, transfer) => self.postMessage(msg, transfer), listen: (f) => { self.onmessage = ({ data }) => f(data); } }
  : await nodeImport('node:worker_threads').then(({ parentPort }) => ({ post: (msg, transfer) => parentPort.postMessage(msg, transfer), listen: (f) => parentPort.on('message', f) }));

let model = null;
const gens = new Map();
const aborts = new Map();
let nextGen = 1;
const sets = new Map(); // handle -> TranscoderSet of the worker's model
let nextSet = 1;

function transferables(v, out = new Set()) {
  if (!v || typeof v !== 'object') return out;
  if (ArrayBuffer.isView(v)) { out.add(v.buffer); return out; }
  if (Array.isArray(v)) { for (const x of v) transferables(x, out); return out; }
  for (const k of Object.keys(v)) transferables(v[k], out);
  return out;
}

const need = () => { if (!model) throw new MlpscopeError('E_STATE', 'no model loaded in this worker'); return model; };
/** the arguments with every {[SET_KEY]: handle} replaced by its set (a few levels deep: options
 *  hold a set as `transcoders`, `transcoders.set` or `transcoder.set`) */
function revive(v, depth = 0) {
  if (!v || typeof v !== 'object' || ArrayBuffer.isView(v) || depth > 4) return v;
  if (Object.hasOwn(v, SET_KEY)) {
    const set = sets.get(v[SET_KEY]);
    if (!set) throw new MlpscopeError('E_STATE', 'the transcoder set was disposed (or belongs to a model this worker no longer holds)');
    return set;
  }
  if (Array.isArray(v)) return v.length > 64 ? v : v.map((x) => revive(x, depth + 1));
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, revive(x, depth + 1)]));
}
const dropSets = () => { for (const s of sets.values()) s.dispose(); sets.clear(); };
const tok = () => { const t = need().tokenizer; if (!t) throw new MlpscopeError('E_TOKEN', 'this weight set has no tokenizer'); return t; };

const ops = {
  async load(id, source, opts) {
    const ac = new AbortController();
    aborts.set(id, ac);
    try {
      dropSets();
      model?.dispose();
      model = null;
      model = await loadModel(source, { ...opts, signal: ac.signal, onProgress: (p) => port.post({ id, progress: p }) });
      return { info: model.info(), tokenizer: model.tokenizer ? { kind: model.tokenizer.kind, bosId: model.tokenizer.bosId, eosIds: model.tokenizer.eosIds, vocabSize: model.tokenizer.vocabSize, chatTemplate: model.tokenizer.chatTemplate } : null };
    } finally { aborts.delete(id); }
  },
  abort(id, target) { aborts.get(target)?.abort(); },
  genStart(id, prompt, opts) {
    const g = need().generate(prompt, opts);
    const gid = nextGen++;
    gens.set(gid, g);
    return gid;
  },
  async genNext(id, gid) {
    const g = gens.get(gid);
    if (!g) return { done: true };
    const r = await g.next();
    if (r.done) gens.delete(gid);
    return r;
  },
  async genStop(id, gid) { const g = gens.get(gid); gens.delete(gid); await g?.return(); },
  dispose() { for (const g of gens.values()) g.return(); gens.clear(); dropSets(); model?.dispose(); model = null; },
  async loadTranscoders(id, source) {
    const set = await transcoder.loadTranscoders(need(), source);
    const handle = nextSet++;
    sets.set(handle, set);
    return { handle, layers: set.layers, features: set.features, k: set.k, scores: set.scores };
  },
  featureOutput(id, set, layer, feature, opts) { return revive(set).featureOutput(layer, feature, opts); },
  disposeTranscoders(id, set) { const h = set?.[SET_KEY]; sets.get(h)?.dispose(); sets.delete(h); },
};
// the proxied calls, from protocol.js
for (const name of Object.keys(MODEL_CALLS)) ops[name] = (id, ...args) => need()[name](...revive(args));
for (const name of Object.keys(TOKENIZER_CALLS)) ops[name] = (id, ...args) => tok()[name](...args);
const functions = { ...features, ...language, ...superweights, ...transcoder };
for (const [name, spec] of Object.entries(FUNCTION_CALLS))
  ops[name] = async (id, ...wire) => {
    const args = revive(wire), at = optsIndex(spec);
    let opts = args[at];
    if (spec.progress) opts = { ...opts, onProgress: opts?.progress ? (p) => port.post({ id, progress: p }) : undefined };
    const ac = spec.signal ? new AbortController() : null;
    if (ac) { aborts.set(id, ac); opts = { ...opts, signal: ac.signal }; }
    args[at] = opts;
    try { return await functions[name](need(), ...args.slice(0, at + 1)); } finally { if (ac) aborts.delete(id); }
  };

port.listen(async (data) => {
  // a message is {id, op, args: []}; anything else is answered (id: null when it has none a
  // client could know) with E_ARG, never by a crash of the worker
  const id = data !== null && typeof data === 'object' && !Array.isArray(data) && (typeof data.id === 'number' || typeof data.id === 'string') ? data.id : null;
  try {
    if (id === null) throw new MlpscopeError('E_ARG', 'a worker message is {id, op, args}');
    const { op, args = [] } = data;
    if (typeof op !== 'string' || !Object.hasOwn(ops, op)) throw new MlpscopeError('E_ARG', `unknown operation ${String(op).slice(0, 80)}`);
    if (!Array.isArray(args)) throw new MlpscopeError('E_ARG', `${op}: args is not an array`);
    const result = await ops[op](id, ...args);
    port.post({ id, ok: true, result }, [...transferables(result)]);
  } catch (err) {
    // an exception that is not the API's own is a bug the caller still gets told about, as E_STATE
    // with its class's name (the fuzz tests look for it)
    const typed = err instanceof MlpscopeError;
    port.post({ id, ok: false, error: { code: typed ? err.code : 'E_STATE', name: typed ? 'MlpscopeError' : String(err?.name ?? typeof err), message: String(err?.message ?? err) } });
  }
});
