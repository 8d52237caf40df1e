// Seeded fuzzing of the JS-side inputs the libFuzzer targets (fuzz/) do not reach: the analysis
// calls' arguments (interventions, patching, steering, decomposition), the Worker protocol's
// messages (hostile structured-clone values, wrong types, huge arrays, missing fields) and the
// hub's JSON answers (model API, index, config, tokenizer files). Every input ends in a result or
// an MlpscopeError with a code of the engine's table — never another exception, a crash of the
// worker or a hang — and the heap in use returns to where it started. Longer runs:
// MLPSCOPE_FUZZ_JS_RUNS (default 1) multiplies the execution counts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { Worker } from 'node:worker_threads';
import http from 'node:http';
import path from 'node:path';
import { loadModel, createEngine, MlpscopeError } from '../js/index.js';
import { writeHfCheckpoint } from './hf-writer.js';
import { startHub } from './hub-server.js';
import { CLI, ROOT, tmpDir } from './helpers.js';

const RUNS = Math.max(1, Number(process.env.MLPSCOPE_FUZZ_JS_RUNS ?? 1));
const dir = tmpDir('fuzz-api');
execFileSync(process.execPath, [CLI, 'synth', '--config', path.join(ROOT, 'tests/configs/qwen35-a.json'), '--seed', '5', '--out', dir], { stdio: 'pipe' });
const engine0 = await createEngine();
const CODES = new Set(engine0.info.errors.map((e) => e.code ?? e));

function rng(seed) { let s = (seed * 2654435761 >>> 0) || 1; return () => { s ^= s << 13; s >>>= 0; s ^= s >>> 17; s ^= s << 5; s >>>= 0; return s / 4294967296; }; }

/** hostile values a structured clone can carry */
function atom(r) {
  const A = [undefined, null, true, false, 0, -1, 1, 3, 2 ** 31, -(2 ** 31) - 1, 2 ** 53, 1.5, -0.5, NaN, Infinity, -Infinity, -0, 1e300,
    '', 'x', '0', 'blocks.0.mlp.hook_post', 'blocks.99.mlp.hook_post', 'hook_resid_pre', 'mlp.hook_post', 'blocks.-1.hook_resid_pre', '__proto__', 'constructor', 'toString', 'kl', 'last', 'all', 'mean',
    [], {}, [[]], [null], ['1'], [NaN], [1e9], [-1e9], new Float32Array(3), new Float32Array(0), new Uint8Array(5), new Int32Array([1, 2]), new Float64Array([NaN]),
    new Date(0), new Map([[1, 2]]), new Set([1]), /re/, new ArrayBuffer(8), 10n];
  return A[Math.floor(r() * A.length)];
}
/** a huge array, now and then: the length checks must come before any work proportional to it */
function huge(r) { const n = [1e5, 2e6][Math.floor(r() * 2)]; return r() < 0.5 ? new Array(n).fill(1) : new Float32Array(n); }

/** 1–3 mutations of a valid value: a node replaced by a hostile one, a key dropped or added, a
 *  wrap in an array, a huge array */
function mutate(v, r, keys) {
  const clone = (x) => (ArrayBuffer.isView(x) ? x.slice() : Array.isArray(x) ? x.map(clone) : x && typeof x === 'object' && x.constructor === Object ? Object.fromEntries(Object.entries(x).map(([k, y]) => [k, clone(y)])) : x);
  const root = { v: clone(v) };
  const n = 1 + Math.floor(r() * 3);
  for (let i = 0; i < n; i++) {
    // pick a random container and a slot in it
    const nodes = [];
    // below the top: a call's argument list stays a list, a JSON document an object
    (function walk(o) { if (o && typeof o === 'object' && !ArrayBuffer.isView(o) && nodes.length < 200) { nodes.push(o); for (const k of Object.keys(o)) walk(o[k]); } })(root.v);
    if (!nodes.length) return root.v;
    const o = nodes[Math.floor(r() * nodes.length)];
    const ks = Object.keys(o);
    const k = ks.length && r() < 0.8 ? ks[Math.floor(r() * ks.length)] : (Array.isArray(o) ? String(o.length + Math.floor(r() * 3)) : keys[Math.floor(r() * keys.length)]);
    const what = r();
    if (what < 0.55) o[k] = atom(r);
    else if (what < 0.7) delete o[k];
    else if (what < 0.8) o[k] = [o[k]];
    else if (what < 0.87) o[k] = huge(r);
    else if (what < 0.95) o[keys[Math.floor(r() * keys.length)]] = atom(r);
    else o[k] = typeof o[k] === 'number' ? -o[k] - 1 : atom(r);
  }
  return root.v;
}
const KEYS = ['hook', 'layer', 'op', 'value', 'vector', 'neurons', 'dims', 'positions', 'scale', 'metric', 'logitDiff', 'layers', 'at', 'k', 'normalize',
  'position', 'token', 'hooks', 'logits', 'logitLens', 'topK', 'stats', 'continue', 'interventions', 'maxTokens', 'stop', 'temperature', 'topP', 'seed', 'afterMixer'];

/** valid calls on this model, the starting points of the mutations */
function templates(info) {
  const L = info.config.num_hidden_layers ?? info.config.n_layers, d = info.hooks?.hook_resid_pre ?? info.config.hidden_size ?? info.config.dim, ff = info.hooks?.['mlp.hook_post'] ?? info.config.intermediate_size;
  const ids = [1, 5, 9, 14, 2, 7];
  return [
    ['forward', [ids, { hooks: ['blocks.0.mlp.hook_post'], interventions: [{ hook: 'blocks.1.mlp.hook_post', neurons: [0, 3], op: 'set', value: 0, positions: [-1] }], logits: 'last', logitLens: { positions: [-1], k: 3 }, topK: 4 }]],
    ['forward', [ids, { interventions: [{ hook: 'hook_resid_pre', layer: 0, op: 'add', vector: new Float32Array(d).fill(0.1) }, { hook: 'blocks.0.hook_mlp_out', op: 'scale', value: 0.5, dims: [1, 2] }] }]],
    ['activationPatching', [ids, [1, 5, 9, 14, 3, 7], { hook: 'hook_resid_pre', metric: { logitDiff: [2, 3] }, layers: [0, L - 1], positions: [0, 4] }]],
    ['activationPatching', [ids, [1, 5, 9, 14, 3, 7], { hook: 'mlp.hook_post', metric: 'kl' }]],
    ['steeringVector', [[ids, [2, 3, 4]], [[4, 5], [6, 7, 8]], { hook: 'blocks.0.hook_resid_post', at: 'mean' }]],
    ['decomposePrediction', [ids, { position: 3, logitDiff: [4, 5], neurons: L - 1 }]],
    ['neuronOutput', [L - 1, ff - 1, { k: 4 }]],
    ['unembedDirection', [new Float32Array(d).fill(0.5), { k: 3, normalize: true }]],
    ['generate', [ids, { maxTokens: 3, temperature: 0.7, seed: 3, interventions: [{ hook: 'blocks.0.mlp.hook_post', neurons: [1], op: 'add', value: 2 }] }]],
  ];
}
async function call(m, name, args) {
  if (name === 'generate') { const out = []; for await (const t of m.generate(...args)) out.push(t.id); return out; }
  return m[name](...args);
}
const show = (v) => String(JSON.stringify(v, (k, x) => (typeof x === 'bigint' ? `${x}n` : ArrayBuffer.isView(x) ? `${x.constructor.name}(${x.length})` : Array.isArray(x) && x.length > 20 ? `[${x.length} items]` : x))).slice(0, 300);
/** failures by where they come from (the first frame of their stack), so one run lists them all */
function collector() {
  const seen = new Map();
  return {
    add(key, what) { if (!seen.has(key)) seen.set(key, what); },
    check() { assert.equal(seen.size, 0, `${seen.size} kinds of failure:\n${[...seen.values()].slice(0, 12).join('\n')}`); },
  };
}
function typed(err, where, bad) {
  if (err instanceof MlpscopeError && CODES.has(err.code)) return true;
  const at = String(err?.stack ?? '').split('\n').find((l) => /\/js\//.test(l)) ?? String(err);
  bad.add(at, `${where}: ${err?.name} ${err?.code ?? ''}: ${err?.message}\n    ${at.trim()}`);
  return false;
}

test('analysis arguments: seeded mutations of interventions, patching, steering and decomposition calls end in results or typed errors; heap and numbers back to the start', async () => {
  const m = await loadModel(dir, { contextLength: 64 });
  const T = templates(m.info());
  const ids = [1, 5, 9, 14, 2, 7];
  const want = m.forward(ids, { logits: 'all' }).logits;
  for (const [name, args] of T) await call(m, name, args); // every valid call once: scratch that grows once has grown
  m.reset();
  const baseline = m.info().memory.heapUsed;
  const r = rng(11), counts = { ok: 0 }, bad = collector();
  const N = 1500 * RUNS;
  for (let i = 0; i < N; i++) {
    const [name, args] = T[Math.floor(r() * T.length)];
    const a = mutate(args, r, KEYS);
    try { await call(m, name, a); counts.ok++; } catch (err) { if (typed(err, `#${i} ${name} ${show(a)}`, bad)) counts[err.code] = (counts[err.code] ?? 0) + 1; }
  }
  bad.check();
  m.reset();
  assert.equal(m.info().memory.heapUsed, baseline, 'heap in use back to its start');
  assert.deepEqual(m.forward(ids, { logits: 'all' }).logits, want, 'an unchanged model: no intervention outlived its call');
  console.log(`# ${N} calls: ${JSON.stringify(counts)}`);
  assert.ok(counts.ok > N / 20 && counts.E_ARG > N / 10, 'the mutations reach both sides');
  m.dispose();
});

/** a raw worker on js/worker.js, talked to message by message */
function rawWorker() {
  const w = new Worker(new URL('../js/worker.js', import.meta.url));
  const waiting = new Map(), stray = [];
  let exited = null;
  w.on('message', (d) => { if (d && d.progress) return; const f = waiting.get(d?.id); if (f) { waiting.delete(d.id); f(d); } else stray.push(d); });
  w.on('error', (e) => { exited = `error: ${e.message}`; });
  w.on('exit', (c) => { exited ??= `exit ${c}`; for (const f of waiting.values()) f(null); });
  return {
    send(msg, id) { return new Promise((res) => { if (exited) { res(null); return; } waiting.set(id, res); w.postMessage(msg); }); },
    get exited() { return exited; }, stray, terminate: () => w.terminate(),
  };
}

test('the Worker protocol: hostile messages (unknown and prototype operations, wrong types, huge arrays, missing fields) get typed answers; the worker lives and its heap returns', async () => {
  const w = rawWorker();
  let id = 1;
  const ask = async (op, args) => { const i = id++; const d = await w.send({ id: i, op, args }, i); assert.ok(d, `${op}: the worker ${w.exited}`); return d; };
  const loaded = await ask('load', [dir, { contextLength: 64 }]);
  assert.ok(loaded.ok, JSON.stringify(loaded.error));
  const info = loaded.result.info;
  const T = templates(info).filter(([n]) => n !== 'generate');
  const ids = [1, 5, 9, 14, 2, 7];
  const want = (await ask('forward', [ids, { logits: 'all' }])).result.logits;
  for (const [name, args] of T) await ask(name, args);
  await ask('reset', []);
  const baseline = (await ask('info', [])).result.memory.heapUsed;
  const OPS = ['info', 'forward', 'reset', 'setDeltaNetMode', 'neuronOutput', 'unembedDirection', 'hookNames', 'activationPatching', 'decomposePrediction', 'steeringVector',
    'encode', 'decode', 'pieces', 'tokenTexts', 'idToToken', 'tokenToId', 'pretokenize', 'applyChatTemplate', 'findFeatureNeurons', 'neuronTopActivations',
    'abort', 'genStart', 'genNext', 'genStop',
    'constructor', 'toString', '__proto__', 'hasOwnProperty', 'valueOf', '__defineGetter__', 'nope', '', 42, null, undefined, ['forward']];
  const r = rng(23), counts = { ok: 0 }, bad = collector();
  const N = 2000 * RUNS;
  let gens = 0;
  for (let i = 0; i < N; i++) {
    const x = r();
    let msg;
    const mid = id++;
    if (x < 0.04) msg = [null, 42, 'forward', [mid, 'forward'], { op: 'forward' }, { id: mid }, { id: mid, op: 'forward', args: 'ids' }, { id: mid, op: 'forward', args: { 0: ids } }, { id: mid, op: 'info', args: null }][Math.floor(r() * 9)];
    else if (x < 0.5) { const [name, args] = T[Math.floor(r() * T.length)]; msg = { id: mid, op: name, args: mutate(args, r, KEYS) }; }
    else if (x < 0.6) { msg = { id: mid, op: 'genStart', args: mutate([ids, { maxTokens: 2, temperature: 0.5, seed: 1 }], r, KEYS) }; gens++; }
    else if (x < 0.7) msg = { id: mid, op: ['genNext', 'genStop', 'abort'][Math.floor(r() * 3)], args: [r() < 0.7 ? 1 + Math.floor(r() * (gens + 1)) : atom(r)] };
    else msg = { id: mid, op: OPS[Math.floor(r() * OPS.length)], args: r() < 0.3 ? atom(r) : Array.from({ length: Math.floor(r() * 4) }, () => (r() < 0.1 ? huge(r) : atom(r))) };
    // a message with an id of its own gets exactly one answer with that id; the others get one with
    // no id (id: null), which a client ignores
    const hasId = msg && typeof msg === 'object' && !Array.isArray(msg) && msg.id === mid;
    const d = await w.send(msg, hasId ? mid : null);
    assert.ok(d, `#${i} ${show(msg)}: the worker ${w.exited}`);
    assert.equal(typeof d.ok, 'boolean');
    if (d.ok) counts.ok++;
    else if (CODES.has(d.error.code) && d.error.name === 'MlpscopeError' && typeof d.error.message === 'string') counts[d.error.code] = (counts[d.error.code] ?? 0) + 1;
    else bad.add(`${d.error.name} ${d.error.message}`, `#${i} ${show(msg)}: ${d.error.name} ${d.error.code}: ${d.error.message}`);
  }
  bad.check();
  for (let g = 1; g <= gens + 1; g++) await ask('genStop', [g]);
  await ask('reset', []);
  const end = (await ask('info', [])).result.memory.heapUsed;
  assert.equal(end, baseline, 'heap in use back to its start');
  assert.deepEqual((await ask('forward', [ids, { logits: 'all' }])).result.logits, want, 'the model computes what it did before the storm');
  // hostile loads: a typed error each, and the worker loads a good model after them
  const loads = [[null], [42], [{}], [[dir]], [dir, { contextLength: -1 }], [dir, { dtype: {} }], [dir, { threads: 'x' }], ['hf:'], ['hf:a/b/c/d'], [dir, null], [dir, { activations: 7 }], [dir, { signal: 1 }], []];
  for (const a of loads) { const d = await ask('load', a); if (!d.ok) { assert.ok(CODES.has(d.error.code) && d.error.name === 'MlpscopeError', `load ${JSON.stringify(a)}: ${d.error.code} ${d.error.message}`); counts[`load ${d.error.code}`] = (counts[`load ${d.error.code}`] ?? 0) + 1; } }
  assert.ok((await ask('load', [dir, { contextLength: 64 }])).ok);
  assert.deepEqual((await ask('forward', [ids, { logits: 'all' }])).result.logits, want);
  assert.equal(w.stray.length, 0, 'no answer came with an id that was not asked');
  console.log(`# ${N} messages + ${loads.length} hostile loads: ${JSON.stringify(counts)}`);
  await w.terminate();
});

// ---------------------------------------------------------------- the hub's JSON answers
const syn = tmpDir('fuzz-hub-syn'), hf = tmpDir('fuzz-hub-hf');
execFileSync(process.execPath, [CLI, 'synth', '--config', path.join(ROOT, 'tests/configs/qwen35-a.json'), '--seed', '6', '--out', syn], { stdio: 'pipe' });
writeHfCheckpoint(syn, hf, { dtype: 'BF16', shards: 2, tokenizer: true, tokenizerMinVocab: 300 });
const JSON_FILES = ['config.json', 'model.safetensors.index.json', 'tokenizer_config.json', 'tokenizer.json', 'generation_config.json'];

/** a proxy in front of the fake hub that rewrites one JSON answer per request: the model API's or
 *  a JSON file's */
async function mutatingProxy(target) {
  const state = { mutate: null };
  const server = http.createServer(async (req, res) => {
    const up = await fetch(target + req.url, { headers: req.headers.range ? { range: req.headers.range } : {} });
    let body = Buffer.from(await up.arrayBuffer());
    const headers = Object.fromEntries([...up.headers].filter(([k]) => !['content-length', 'content-encoding', 'transfer-encoding', 'connection'].includes(k)));
    const p = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    const kind = p.startsWith('/api/models/') ? 'api' : JSON_FILES.find((f) => p.endsWith('/' + f));
    if (kind && state.mutate && up.status === 200) body = Buffer.from(state.mutate(kind, body.toString('utf8')));
    res.writeHead(up.status, headers);
    res.end(body);
  });
  await new Promise((res) => server.listen(0, '127.0.0.1', res));
  return { url: `http://127.0.0.1:${server.address().port}`, state, close: () => new Promise((res) => server.close(res)) };
}

test('the hub\'s JSON answers: seeded mutations of the model API, index, config and tokenizer files load or fail typed, naming the file; heap back to the start', { timeout: 600000 }, async () => {
  const hub = await startHub({ 'Qwen/Tiny': hf });
  const proxy = await mutatingProxy(hub.url);
  try {
    const e = await createEngine();
    const ok = await loadModel('hf:Qwen/Tiny', { hubUrl: proxy.url, cache: false, retries: 0, engine: e });
    const ids = [3, 17, 42, 99, 5];
    const want = ok.forward(ids).logits;
    ok.dispose();
    const baseline = e.c.heap_used();
    const r = rng(31), counts = { loaded: 0 }, bad = collector();
    const N = 120 * RUNS;
    for (let i = 0; i < N; i++) {
      const target = ['api', ...JSON_FILES][Math.floor(r() * (JSON_FILES.length + 1))];
      const how = r();
      proxy.state.mutate = (kind, text) => {
        if (kind !== target) return text;
        if (how < 0.15) return text.slice(0, Math.floor(r() * text.length)); // cut short: not JSON
        if (how < 0.2) return ['null', '[]', '42', '"x"', '{}', '{"a":'.repeat(5000)][Math.floor(r() * 6)];
        return JSON.stringify(mutate(JSON.parse(text), r, ['siblings', 'sha', 'weight_map', 'architectures', 'text_config', 'hidden_size', 'num_hidden_layers', 'vocab_size', 'model', 'vocab', 'merges', 'added_tokens', 'chat_template', 'eos_token', 'bos_token', 'layer_types', 'rfilename', 'size', 'lfs']), (k, x) => (typeof x === 'bigint' ? Number(x) : x));
      };
      let m = null;
      try {
        m = await loadModel('hf:Qwen/Tiny', { hubUrl: proxy.url, cache: false, retries: 0, engine: e });
        const out = m.forward(ids).logits;
        if (!out.every(Number.isFinite)) bad.add(`finite ${target}`, `#${i} ${target}: loaded, but its logits are not finite: a config value that should have been refused`);
        counts.loaded++;
        if (out.every((x, k) => x === want[k])) counts['loaded, same numbers'] = (counts['loaded, same numbers'] ?? 0) + 1;
      } catch (err) {
        if (typed(err, `#${i} ${target}`, bad)) {
          // the message names the file at fault (or, for the model API's answer, the repository)
          if (!err.message.includes(target === 'api' ? 'hf:Qwen/Tiny' : target) && !/\.(json|safetensors)\b/.test(err.message)) bad.add(`names ${target}`, `#${i} ${target}: the message does not name the file: ${err.message}`);
          counts[err.code] = (counts[err.code] ?? 0) + 1;
        }
      } finally { m?.dispose(); }
      assert.equal(e.c.heap_used(), baseline, `#${i} ${target}: heap back to its start`);
    }
    bad.check();
    console.log(`# ${N} loads with a mutated answer: ${JSON.stringify(counts)}`);
  } finally { await proxy.close(); await hub.close(); }
});
