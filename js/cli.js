#!/usr/bin/env node
// mlpscope command line (Node + the wasm engine: no C compiler needed).
//   mlpscope convert (HF_FOLDER | hf:OWNER/NAME[@REV] | CKPT TOKENIZER) --out DIR [--dtype f32|f16|bf16|q8|q4] [--shard-size BYTES]
//   mlpscope synth --config (qwen3.5-0.8b | gemma3-270m | gemma3-1b | llama-398m | FILE.json) [--seed S] [--dtype D] --out DIR
//   mlpscope info DIR [--context N]
//   mlpscope tokenize SOURCE --text T [--json]     SOURCE: a weight set or a tokenizer.json folder
//   mlpscope run DIR (--prompt TEXT | --ids 1,2,3) [--max-tokens N] [--temperature T] [--seed S]
//                [--top-k K] [--top-p P] [--top-logits K] [--json] [--threads N|auto] [--exact]
//   mlpscope features DIR [--probes FILE] [--top N] [--layers 0,2] [--directions] [--by-lang] [--json]
//   mlpscope neuron DIR --layer L --neuron J [--sign 1|-1] [--k K] [--window W] [--texts FILE | --probes FILE] [--quadrants] [--json]
//   mlpscope classes DIR [--layers 0,2] [--threshold T] [--no-fold-norm] [--json]
//   mlpscope bilinear DIR --layer L (--token T | --neuron J) [--k K] [--gap TEXT] [--json]
//   mlpscope language DIR [--share S] [--probes FILE] [--held FILE] [--json]
//   mlpscope superweights DIR [--prompt TEXT] [--k K] [--texts FILE] [--json]
//   mlpscope story DIR --prompt TEXT [--label city] [--lang zh|en] [--per-layer N] [--push TEXT] [--multiples 1,2,4] [--probes FILE] [--json]
//   mlpscope lens DIR (--prompt TEXT | --ids 1,2,3) [--position P] [--k K] [--json]
//   mlpscope decompose DIR (--prompt TEXT | --ids 1,2,3) [--position P] [--token T | --diff A,B] [--neurons L] [--json]
//   mlpscope patch DIR --clean TEXT --corrupted TEXT (--diff A,B | --kl) [--hook H] [--layers 0,2] [--json]
//   mlpscope transcoder train DIR --out OUT [--layers 0,2 | --layer L] [--features F] [--k K] [--tokens N] [--val-tokens N]
//                [--epochs E] [--lr X] [--seed S] [--threads N|auto] [--no-replacement] [--json]
//   mlpscope transcoder compare DIR --set SET [--probes FILE] [--json]
import fs from 'node:fs';
import { findFeatureNeurons, neuronTopActivations, neuronQuadrants, featureTokens, neuronsForTokens, pushNeuron, neuronsVsFeatures } from './features.js';
import { loadModel } from './loader.js';
import { languageNeurons, languageLoss, languageSwitch } from './language.js';
import { superWeights } from './superweights.js';
import { trainTranscoders, TRANSCODER_DEFAULTS, loadTranscoders } from './transcoder.js';
import { topTokens } from './model.js';
import { loadTokenizer } from './tokenizer.js';
import { createEngine } from './wasm.js';
import { CONFIG_PRESETS } from './config.js';
import { nodeHost } from './node-host.js';
import { progressLine } from './progress.js';
import { statsTable, statsJson } from './stats-table.js';
import { fileDtype } from './options.js';
import { MlpscopeError } from './errors.js';
import { demoModelUrl } from './demo.js';
import { isHubSpec, convertHub } from './hub.js';
import { fileURLToPath } from 'node:url';

const USAGE = `usage:
  mlpscope --help | --version
  mlpscope convert (HF_FOLDER | hf:OWNER/NAME[@REV] | CKPT TOKENIZER) --out DIR [--dtype f32|f16|bf16|q8|q4] [--embed-dtype D]
               [--shard-size BYTES] [--hub-url URL]
  mlpscope synth --config (qwen3.5-0.8b | gemma3-270m | gemma3-1b | llama-398m | FILE.json) [--seed S] [--dtype D] [--embed-dtype D] --out DIR
  mlpscope info DIR [--context N]
  mlpscope run DIR (--prompt TEXT | --ids 1,2,3) [--max-tokens N] [--temperature T] [--seed S]
               [--top-k K] [--top-p P] [--top-logits K] [--json] [--threads N|auto] [--exact] [--stop S]
               [--dtype D] [--hub-url URL]
  mlpscope features DIR [--probes FILE] [--top N] [--layers 0,2] [--directions] [--by-lang] [--json]
  mlpscope neuron DIR --layer L --neuron J [--sign 1|-1] [--k K] [--window W] [--texts FILE | --probes FILE] [--quadrants] [--json]
  mlpscope classes DIR [--layers 0,2] [--threshold T] [--no-fold-norm] [--json]
  mlpscope bilinear DIR --layer L (--token T | --neuron J) [--k K] [--gap TEXT] [--json]
  mlpscope language DIR [--share S] [--probes FILE] [--held FILE] [--json]
  mlpscope superweights DIR [--prompt TEXT] [--k K] [--texts FILE] [--json]
  mlpscope story DIR --prompt TEXT [--label city] [--lang zh|en] [--per-layer N] [--push TEXT] [--multiples 1,2,4]
               [--probes FILE] [--json]
  mlpscope lens DIR (--prompt TEXT | --ids 1,2,3) [--position P] [--k K] [--json]
  mlpscope decompose DIR (--prompt TEXT | --ids 1,2,3) [--position P] [--token T | --diff A,B] [--neurons L] [--top N] [--json]
  mlpscope patch DIR --clean TEXT --corrupted TEXT (--diff A,B | --kl) [--hook H] [--layers 0,2] [--json]
  mlpscope transcoder train DIR --out OUT [--layers 0,2 | --layer L] [--features F] [--k K] [--tokens N] [--val-tokens N]
               [--epochs E] [--lr X] [--seed S] [--threads N|auto] [--no-replacement] [--json]
  mlpscope transcoder compare DIR --set SET [--probes FILE] [--json]
    (DIR may be @demo: the demo model that comes with the package, weights/demo/; or a Hugging Face
     checkpoint, converted while it loads: hf:OWNER/NAME[@REV] (hub: --hub-url, else $HF_ENDPOINT,
     else https://huggingface.co; kept converted in $MLPSCOPE_CACHE or ~/.cache/mlpscope), a URL of
     a folder laid out like a hub repository, or such a folder on disk. --dtype: q8 unless said.
     probes: a JSON file {probes: [{text, spans: [{start, end, label}]}]} or its array; default: the
     project's generated probe set, seed 9, 160 sentences. texts: one text per line.
     classes: every neuron's input-output class from the cosines of its w_gate, w_in and w_out
     (threshold 0.5 unless said; the MLP norm's gain folded into w_gate and w_in unless --no-fold-norm).
     bilinear: layer L's MLP as a quadratic form read out along token T's logit (T: an id, or a text
     whose first token it is) or neuron J alone, its top K eigenvectors read by the head; --gap TEXT:
     KL and loss change on TEXT with each layer's SiLU replaced by z/2.
     language: the language-specific neurons of the probes' languages (default share 0.01), the loss
     per language of held-out probes (--held, default the project's probe set with seed 21) with
     each language's neurons off, and greedy continuations of held-out first half-sentences.
     superweights: per layer the largest MLP output on --prompt and the down_proj weight that makes
     most of it; the K (3) layers where it stands out most, that weight zeroed vs the largest other
     weight zeroed: the loss on --texts (one per line; default the held-out probes).
     transcoder train: a TopK transcoder per MLP (default every layer; 2048 features, k 32, 400,000
     tokens of the project's corpus), scored on held-out text (FVU, L0, dead features, the loss and KL
     with each MLP and then all of them replaced); writes the transcoder set to OUT (docs/format.md).
     transcoder compare: per labelled feature (city, negation, code) the best neuron against the best
     feature of the set SET (held-out ROC AUC, both languages and each), and how many of the feature's
     layer's neurons read together match it (default probes: the project's set, seed 9, 400 texts).
     story: which neurons write the next tokens that start a --label span of the probes (switched off
     one by one), and the strongest writer pushed on --push TEXT in multiples of its own top activation)`;

function parseArgs(argv, spec) {
  const out = { _: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a.startsWith('--')) {
      const eq = a.indexOf('='), k = eq > 0 ? a.slice(2, eq) : a.slice(2); // --key value or --key=value
      if (!(k in spec)) throw new MlpscopeError('E_ARG', `unknown option --${k}`);
      if (spec[k] === 'flag') {
        if (eq > 0) throw new MlpscopeError('E_ARG', `--${k} takes no value`);
        out[k] = true;
      } else if (eq > 0) out[k] = a.slice(eq + 1);
      else {
        if (i + 1 >= argv.length) throw new MlpscopeError('E_ARG', `${a} needs a value`);
        out[k] = argv[++i];
      }
    } else out._.push(a === '@demo' ? fileURLToPath(demoModelUrl) : a); // the demo model the package ships
  }
  return out;
}

/** loadModel with the loading progress line */
function load(src, opts = {}) {
  // the bytes read (a weight set) or downloaded (a Hugging Face checkpoint, converted as it arrives)
  const line = progressLine(isHubSpec(src) ? 'downloading' : 'loading', { bytes: true });
  return loadModel(src, line ? { ...opts, onProgress: ({ phase = 'download', loaded, total }) => { if (phase === 'download') line(loaded, total); } } : opts);
}

function num(v, name, { int = false, min = -Infinity, max = Infinity } = {}) {
  const n = Number(v);
  if (!Number.isFinite(n) || (int && !Number.isInteger(n)) || n < min || n > max)
    throw new MlpscopeError('E_ARG', `--${name} must be ${int ? 'an integer' : 'a number'} in [${min}, ${max}], not "${v}"`);
  return n;
}

/** the engine's code of a --dtype / --embed-dtype value (the engine's list of dtypes: q8 or q8_0, ...); -1 when not given */
function dtypeArg(e, v, name) {
  return v === undefined ? -1 : fileDtype(e.info, v, `--${name}`).id;
}

async function convert(argv) {
  const a = parseArgs(argv, { out: 'v', dtype: 'v', 'embed-dtype': 'v', 'shard-size': 'v', 'hub-url': 'v' });
  if (a._.length < 1 || !a.out) throw new MlpscopeError('E_ARG', 'convert needs a source and --out DIR\n' + USAGE);
  const [src, tok] = a._;
  if (isHubSpec(src) || /^https?:/i.test(src)) { // straight from a hub (or a folder URL laid out like one)
    const line = progressLine('downloading', { bytes: true });
    const o = { dtype: a.dtype ?? 'f32', embedDtype: a['embed-dtype'], hubUrl: a['hub-url'], cache: false,
      shardBytes: a['shard-size'] ? num(a['shard-size'], 'shard-size', { int: true, min: 4096 }) : undefined,
      onProgress: line && (({ phase, loaded, total }) => { if (phase === 'download') line(loaded, total); }) };
    const { written } = await convertHub(src, a.out, o);
    console.log(`weight set written to ${a.out} (${written.tensors} tensors in ${written.shards.length} shard(s))`);
    return;
  }
  if (!fs.existsSync(src)) throw new MlpscopeError('E_CHECKPOINT', `${src}: no such file or folder`);
  const isDir = fs.statSync(src).isDirectory();
  fs.mkdirSync(a.out, { recursive: true });
  const host = nodeHost(a.out, progressLine('converting', { bytes: true }));
  const e = await createEngine({ host });
  const dtype = Math.max(0, dtypeArg(e, a.dtype ?? 'f32', 'dtype')), embed = dtypeArg(e, a['embed-dtype'], 'embed-dtype');
  try {
    e.c.convert(src, tok ?? '', isDir ? 1 : 0, dtype, embed, a['shard-size'] ? num(a['shard-size'], 'shard-size', { int: true, min: 4096 }) : 64 * 2 ** 20);
  } finally { host.closeAll(); }
  console.log(`weight set written to ${a.out}`);
}

async function synth(argv) {
  const a = parseArgs(argv, { config: 'v', seed: 'v', dtype: 'v', 'embed-dtype': 'v', out: 'v', 'shard-size': 'v' });
  if (!a.config || !a.out) throw new MlpscopeError('E_ARG', 'synth needs --config and --out\n' + USAGE);
  const presets = CONFIG_PRESETS;
  let text = a.config;
  if (!presets.includes(a.config)) {
    try { text = fs.readFileSync(a.config, 'utf8'); } catch (e) { throw new MlpscopeError('E_CONFIG', `${a.config}: not a preset (${presets.join(', ')}) and not a readable file`); }
  }
  fs.mkdirSync(a.out, { recursive: true });
  const host = nodeHost(a.out, progressLine('writing', { bytes: true }));
  const e = await createEngine({ host });
  const dtype = Math.max(0, dtypeArg(e, a.dtype ?? 'f32', 'dtype')), embed = dtypeArg(e, a['embed-dtype'], 'embed-dtype');
  try {
    e.c.synth(text, num(a.seed ?? 0, 'seed', { int: true, min: 0 }), dtype, embed,
      a['shard-size'] ? num(a['shard-size'], 'shard-size', { int: true, min: 4096 }) : 64 * 2 ** 20);
  } finally { host.closeAll(); }
  console.log(`synthetic weight set written to ${a.out}`);
}

async function tokenize(argv) {
  const a = parseArgs(argv, { text: 'v', json: 'flag' });
  if (a._.length !== 1 || a.text === undefined) throw new MlpscopeError('E_ARG', 'tokenize needs SOURCE and --text\n' + USAGE);
  const tok = await loadTokenizer(a._[0]);
  const ids = tok.encode(a.text);
  if (a.json) process.stdout.write(JSON.stringify({ ids }) + '\n');
  else for (const id of ids) console.log(`${String(id).padStart(7)}  ${JSON.stringify(tok.idToToken(id))}`);
  tok.dispose();
}

async function info(argv) {
  const a = parseArgs(argv, { context: 'v' });
  if (a._.length !== 1) throw new MlpscopeError('E_ARG', 'info needs DIR\n' + USAGE);
  const model = await load(a._[0], a.context ? { contextLength: num(a.context, 'context', { int: true, min: 1 }) } : {});
  console.log(JSON.stringify(model.info(), null, 2));
  model.dispose();
}

async function run(argv) {
  const a = parseArgs(argv, { prompt: 'v', ids: 'v', 'max-tokens': 'v', temperature: 'v', seed: 'v', 'top-k': 'v', 'top-p': 'v', 'top-logits': 'v', json: 'flag', context: 'v', threads: 'v', 'int8-activations': 'flag', exact: 'flag', stop: 'v', 'hub-url': 'v', dtype: 'v' });
  if (a._.length !== 1 || (a.prompt === undefined && a.ids === undefined)) throw new MlpscopeError('E_ARG', 'run needs DIR and --prompt or --ids\n' + USAGE);
  const lo = a.context ? { contextLength: num(a.context, 'context', { int: true, min: 1 }) } : {};
  if (a.threads !== undefined) lo.threads = a.threads === 'auto' ? 'auto' : num(a.threads, 'threads', { int: true, min: 1 });
  if (a.exact) lo.exact = true;
  if (a['hub-url'] !== undefined) lo.hubUrl = a['hub-url'];
  if (a.dtype !== undefined) lo.dtype = a.dtype; // for a checkpoint converted as it loads
  if (a['int8-activations']) lo.int8Activations = true; // the default; kept so older command lines work
  const tLoad = performance.now();
  const model = await load(a._[0], lo);
  const loadMs = performance.now() - tLoad;
  const maxTokens = num(a['max-tokens'] ?? 32, 'max-tokens', { int: true, min: 0 });
  let promptIds;
  if (a.ids !== undefined) promptIds = String(a.ids).split(',').filter((s) => s.trim() !== '').map((s) => num(s, 'ids', { int: true }));
  else promptIds = model._encodePrompt(a.prompt);
  const gen = [];
  let text = '';
  const opts = { maxTokens, temperature: num(a.temperature ?? 0, 'temperature', { min: 0 }), seed: num(a.seed ?? 0, 'seed', { int: true, min: 0 }),
    topK: num(a['top-k'] ?? 0, 'top-k', { int: true, min: 0 }), topP: num(a['top-p'] ?? 1, 'top-p', { min: 0, max: 1 }) };
  if (a.stop !== undefined) opts.stop = [String(a.stop)]; // a stop string (the end-of-sequence ids still stop)
  // the statistics come from the generation passes themselves (the prompt's prefill and each
  // generated token fed back): the model reads every token once
  const g = model.generate(promptIds, { ...opts, stats: true });
  let step;
  while (!(step = await g.next()).done) {
    gen.push(step.value.id);
    text += step.value.text;
    if (!a.json) process.stdout.write(step.value.text);
  }
  const { usage, finishReason, stats: st } = step.value;
  if (!a.json) process.stdout.write('\n');
  const ids = [...promptIds, ...gen];
  const topLogits = a['top-logits'] ? num(a['top-logits'], 'top-logits', { int: true, min: 1, max: 1000 }) : 0;
  const layerMs = st.layer_ms.map((x) => Array.from(x));
  const timings = { load_ms: loadMs, prompt_tokens: usage.promptTokens, prefill_ms: usage.prefillMs, prefill_tok_per_s: usage.prefillTokPerS,
    time_to_first_token_ms: usage.timeToFirstTokenMs, generated_tokens: usage.generatedTokens, decode_ms: usage.decodeMs, decode_tok_per_s: usage.decodeTokPerS, finish_reason: finishReason };
  const info = model.e.info; // the engine's tables: the statistics it lists are the ones printed
  if (a.json) {
    const stats = statsJson(info, st);
    const out = { build: model.info().build, prompt_ids: promptIds, ids, text: model.tokenizer ? model.tokenizer.decode(promptIds) + text : '', generated_text: text, stats,
      mixer: st.mixer, layer_ms: layerMs.map((r) => r.reduce((x, y) => x + y, 0)), timings };
    if (topLogits) { // an analysis of its own: one more pass with the logits of every position
      const fw = model.forward(ids.slice(0, Math.min(ids.length, model.contextLength)), { logits: 'all', stats: false });
      const V = model.config.vocab_size;
      out.top_logits = ids.map((_, p) => topK(fw.logits.subarray(p * V, (p + 1) * V), topLogits));
    }
    process.stdout.write(JSON.stringify(out) + '\n');
  } else {
    console.log(`\nper-layer statistics over ${st.T} tokens (each the mean over the tokens (and heads); *_l2: L2 norms; mlp_ratio = |mlp_out| / |resid_post|; ms: the layer's time over all passes)`);
    for (const line of statsTable(info, st, layerMs)) console.log(line);
    const b = model.info().build;
    console.error(`\nload: ${(loadMs / 1000).toFixed(2)} s; ${b.activations} activations, ${b.threads} thread${b.threads > 1 ? 's' : ''}`);
    console.error(`prompt: ${usage.promptTokens} tokens in ${usage.prefillMs.toFixed(1)} ms = ${usage.prefillTokPerS.toFixed(1)} tok/s (time to first token ${usage.timeToFirstTokenMs.toFixed(1)} ms)`);
    console.error(`generated: ${usage.generatedTokens} tokens, ${usage.generatedTokens > 1 ? `${usage.decodeTokPerS.toFixed(1)} tok/s after the first (${usage.decodeMs.toFixed(1)} ms)` : 'no decode speed (fewer than 2)'}; stopped by ${finishReason}`);
  }
  model.dispose();
}

/** the probe set from --probes, or the project's generated one (js/corpus.js) */
async function readProbes(file) {
  if (file === undefined) {
    const { probes } = await import('./corpus.js');
    return probes(9, 160);
  }
  let v;
  try { v = JSON.parse(fs.readFileSync(file, 'utf8')); } catch (err) { throw new MlpscopeError('E_ARG', `--probes ${file}: ${err.message}`); }
  const list = Array.isArray(v) ? v : v?.probes;
  const bad = !Array.isArray(list) ? -1 : list.findIndex((p) => typeof p?.text !== 'string' || !Array.isArray(p.spans)
    || p.spans.some((s) => !Number.isInteger(s?.start) || !Number.isInteger(s?.end) || typeof s?.label !== 'string'));
  if (bad !== -1 || !list.length) throw new MlpscopeError('E_ARG', `--probes ${file}: ${bad === -1 ? 'expected {probes: [...]} or an array of probes, none found' : `probe ${bad} needs text and spans [{start, end, label}]`}`);
  return list;
}

async function features(argv) {
  const a = parseArgs(argv, { probes: 'v', top: 'v', layers: 'v', directions: 'flag', 'by-lang': 'flag', json: 'flag' });
  if (a._.length !== 1) throw new MlpscopeError('E_ARG', 'features needs DIR\n' + USAGE);
  const probes = await readProbes(a.probes);
  const model = await load(a._[0]);
  const top = num(a.top ?? 3, 'top', { int: true, min: 1, max: 1000 });
  const layers = a.layers === undefined ? undefined : String(a.layers).split(',').map((x) => num(x, 'layers', { int: true, min: 0, max: model.nLayers - 1 }));
  if (!model.tokenizer) throw new MlpscopeError('E_ARG', `${a._[0]} has no tokenizer: the probes cannot be encoded`);
  // progress on a terminal only (a big model takes minutes: one pass per group of layers)
  const line = progressLine('probe passes');
  const onProgress = line && (({ done, total }) => line(done, total));
  const res = findFeatureNeurons(model, probes, { top, layers, directions: !!a.directions, byLang: !!a['by-lang'], onProgress });
  if (a.json) {
    const dirs = res.directions?.map((d) => ({ ...d, direction: Array.from(d.direction) }));
    process.stdout.write(JSON.stringify({ tokens: res.tokens, best: res.best, perLayer: res.perLayer, ...(dirs ? { directions: dirs } : {}), ...(res.bestByLang ? { bestByLang: res.bestByLang } : {}) }) + '\n');
  } else {
    console.log(`${probes.length} probe texts, ${res.tokens} tokens; neurons chosen on the first half (AUC), reported on the second (held out)`);
    for (const [name, rows] of Object.entries(res.perLayer)) {
      console.log(`\n${name}\nlayer  neuron  sign     AUC  held-out   pos / neg`);
      for (const r of rows) console.log(`${String(r.layer).padStart(5)}  ${String(r.neuron).padStart(6)}  ${(r.sign > 0 ? '+' : '-').padStart(4)}  ${r.auc.toFixed(3).padStart(6)}  ${r.heldOutAuc.toFixed(3).padStart(8)}  ${r.nPos} / ${r.nNeg}`);
      const b = res.best.find((x) => x.feature === name), d = res.directions?.find((x) => x.feature === name);
      const byLang = b?.heldOutAucByLang ? ` (${Object.entries(b.heldOutAucByLang).map(([g, v]) => `${g} ${v.toFixed(3)}`).join(', ')})` : '';
      if (b) console.log(`best: layer ${b.layer} neuron ${b.neuron}, held-out AUC ${b.heldOutAuc.toFixed(3)}${byLang}`);
      for (const [g, bs] of Object.entries(res.bestByLang ?? {})) {
        const x = bs.find((y) => y.feature === name);
        if (x) console.log(`best within ${g}: layer ${x.layer} neuron ${x.neuron}, held-out AUC ${x.heldOutAuc.toFixed(3)}`);
      }
      if (d) console.log(`mean-difference direction of the MLP input: layer ${d.layer}, held-out AUC ${d.heldOutAuc.toFixed(3)}`);
    }
  }
  model.dispose();
}

async function neuron(argv) {
  const a = parseArgs(argv, { layer: 'v', neuron: 'v', sign: 'v', k: 'v', window: 'v', texts: 'v', probes: 'v', json: 'flag', quadrants: 'flag' });
  if (a._.length !== 1 || a.layer === undefined || a.neuron === undefined) throw new MlpscopeError('E_ARG', 'neuron needs DIR, --layer and --neuron\n' + USAGE);
  let texts;
  if (a.texts !== undefined) {
    try { texts = fs.readFileSync(a.texts, 'utf8').split('\n').filter((l) => l.trim() !== ''); } catch (err) { throw new MlpscopeError('E_ARG', `--texts ${a.texts}: ${err.message}`); }
    if (!texts.length) throw new MlpscopeError('E_ARG', `--texts ${a.texts}: no text in it`);
  } else texts = await readProbes(a.probes);
  const model = await load(a._[0]);
  if (!model.tokenizer) throw new MlpscopeError('E_ARG', `${a._[0]} has no tokenizer: the texts cannot be encoded`);
  const opts = { layer: num(a.layer, 'layer', { int: true, min: 0, max: model.nLayers - 1 }), neuron: num(a.neuron, 'neuron', { int: true, min: 0, max: model.config.intermediate_size - 1 }),
    sign: num(a.sign ?? 1, 'sign', { int: true, min: -1, max: 1 }), k: num(a.k ?? 10, 'k', { int: true, min: 1, max: 10000 }), window: num(a.window ?? 6, 'window', { int: true, min: 0, max: 1000 }) };
  if (opts.sign === 0) throw new MlpscopeError('E_ARG', '--sign must be 1 or -1, not "0"');
  if (a.quadrants) { printQuadrants(neuronQuadrants(model, texts, { layer: opts.layer, neuron: opts.neuron, k: a.k === undefined ? 3 : opts.k, window: opts.window }), a.json); model.dispose(); return; }
  const res = neuronTopActivations(model, texts, opts);
  // what it writes, as it fires: a neuron firing negatively writes minus its column
  const o = model.neuronOutput(opts.layer, opts.neuron, { k: 10 });
  const [up, down] = opts.sign > 0 ? [o.promoted, o.suppressed] : [o.suppressed, o.promoted];
  const show = (t) => ({ id: t.id, text: t.text, logit: opts.sign * t.logit });
  const writes = { norm: o.norm, up: up.map(show), down: down.map(show) };
  if (a.json) process.stdout.write(JSON.stringify({ ...res, writes }) + '\n');
  else {
    console.log(`layer ${opts.layer} neuron ${opts.neuron} (mlp.hook_post): ${res.tokens} tokens of ${texts.length} texts, mean ${res.mean.toFixed(4)}, ${opts.sign > 0 ? 'positive' : 'negative'} on ${(100 * res.positive).toFixed(1)}%`);
    for (const x of res.top) console.log(`${x.activation.toFixed(3).padStart(9)}  ${JSON.stringify(x.before).slice(1, -1)}[[${JSON.stringify(x.piece).slice(1, -1)}]]${JSON.stringify(x.after).slice(1, -1)}`);
    const line = (ts) => ts.map((t) => `${JSON.stringify(t.text)} ${t.logit.toFixed(2)}`).join(', ');
    console.log(`when it fires it writes |down_proj column| = ${o.norm.toFixed(3)}; read by the head it pushes up ${line(writes.up)}`);
    console.log(`and pushes down ${line(writes.down)}`);
    const w = model.neuronWeightClass(opts.layer, opts.neuron);
    console.log(`from its weights: ${w.class.replace('_', ' ')}${w.atypical ? ' (atypical)' : ''}; cos(w_gate, w_in) ${w.cosGateIn.toFixed(3)}, cos(w_gate, w_out) ${w.cosGateOut.toFixed(3)}, cos(w_in, w_out) ${w.cosInOut.toFixed(3)}`);
  }
  model.dispose();
}

/** A layer's MLP as a bilinear form (js/bilinear.js), and with --gap how far each MLP is from it. */
async function bilinear(argv) {
  const a = parseArgs(argv, { layer: 'v', token: 'v', neuron: 'v', k: 'v', gap: 'v', json: 'flag' });
  if (a._.length !== 1 || a.layer === undefined || (a.token === undefined) === (a.neuron === undefined)) throw new MlpscopeError('E_ARG', 'bilinear needs DIR, --layer and one of --token or --neuron\n' + USAGE);
  const model = await load(a._[0]);
  const opts = { layer: num(a.layer, 'layer', { int: true, min: 0, max: model.nLayers - 1 }), k: num(a.k ?? 5, 'k', { int: true, min: 1, max: model.config.hidden_size }) };
  if (a.neuron !== undefined) opts.neuron = num(a.neuron, 'neuron', { int: true, min: 0, max: model.config.intermediate_size - 1 });
  else if (/^\d+$/.test(String(a.token))) opts.token = num(a.token, 'token', { int: true, min: 0, max: model.config.vocab_size - 1 });
  else {
    if (!model.tokenizer) throw new MlpscopeError('E_ARG', `${a._[0]} has no tokenizer: give --token as an id`);
    const ids = model.tokenizer.encode(String(a.token));
    if (!ids.length) throw new MlpscopeError('E_ARG', `--token ${JSON.stringify(a.token)} encodes to no token`);
    opts.token = ids[0];
  }
  const v = model.bilinearView(opts);
  const gap = a.gap !== undefined ? model.bilinearGap(model.tokenizer ? String(a.gap) : String(a.gap).split(',').map((x) => num(x, 'gap', { int: true }))) : undefined;
  model.dispose();
  const eig = v.eigen.map((p) => ({ value: p.value, residual: p.residual, promoted: p.promoted.map((t) => t.text), suppressed: p.suppressed.map((t) => t.text) }));
  if (a.json) { process.stdout.write(JSON.stringify({ layer: v.layer, source: v.source, token: v.token, neuron: v.neuron, trace: v.trace, frobenius2: v.frobenius2, explained: v.explained, eigen: eig, gap }) + '\n'); return; }
  console.log(`layer ${v.layer}'s MLP read out along ${v.source === 'neuron' ? `neuron ${v.neuron} alone` : `the logit of token ${v.token}`}, SiLU replaced by z/2: x̂ᵀQx̂; the top ${eig.length} eigenvectors hold ${(100 * v.explained).toFixed(1)}% of Σλ²`);
  for (const p of eig) console.log(`${p.value >= 0 ? '+' : ''}${p.value.toFixed(4).padStart(9)}  reads as ${p.promoted.map((t) => JSON.stringify(t)).join(' ')}  …  ${p.suppressed.map((t) => JSON.stringify(t)).join(' ')}`);
  if (gap) {
    console.log(`\neach MLP with SiLU replaced by z/2 on ${gap.tokens} tokens (loss ${gap.loss.toFixed(4)} nats):\nlayer   KL (nats)   loss change`);
    for (const r of gap.layers) console.log(`${String(r.layer).padStart(5)}  ${r.kl.toFixed(5).padStart(10)}  ${(r.dLoss >= 0 ? '+' : '') + r.dLoss.toFixed(5)}`);
    console.log(`  all  ${gap.all.kl.toFixed(5).padStart(10)}  ${(gap.all.dLoss >= 0 ? '+' : '') + gap.all.dLoss.toFixed(5)}`);
  }
}

/** the project's held-out probe set (seed 21, 80 texts), or a --held / --probes file */
async function heldOut(file) {
  if (file !== undefined) return readProbes(file);
  const { probes } = await import('./corpus.js');
  return probes(21, 80);
}
const byLangOf = (ps) => { const out = {}; for (const p of ps) if (p.lang) (out[p.lang] ??= []).push(p.text); return out; };
/** first halves of held-out prose sentences (no code), at most n per language */
function halfSentences(ps, lang, n) {
  const s = ps.filter((p) => p.lang === lang).flatMap((p) => p.text.split(/(?<=[。.!?！？\n])/)).map((x) => x.trim()).filter((x) => x && !/[{}=;[\]:：]/.test(x));
  const uniq = [...new Set(s)].filter((x) => (lang === 'zh' ? /^[\u4e00-\u9fff]/ : /^[A-Z]/).test(x)).slice(0, n);
  return uniq.map((x) => (lang === 'zh' ? [...x].slice(0, Math.ceil([...x].length / 2)).join('') : x.split(' ').slice(0, Math.ceil(x.split(' ').length / 2)).join(' ')));
}

/** Language-specific neurons (js/language.js) and what switching them off does. */
async function language(argv) {
  const a = parseArgs(argv, { share: 'v', probes: 'v', held: 'v', json: 'flag' });
  if (a._.length !== 1) throw new MlpscopeError('E_ARG', 'language needs DIR\n' + USAGE);
  const texts = byLangOf(await readProbes(a.probes)), held = await heldOut(a.held), heldTexts = byLangOf(held);
  if (Object.keys(texts).length < 2) throw new MlpscopeError('E_ARG', 'language: the probes need texts in at least two languages (each probe\'s "lang")');
  const model = await load(a._[0]);
  const r = languageNeurons(model, texts, { share: num(a.share ?? 0.01, 'share', { min: 0 }) });
  const loss = Object.fromEntries(r.langs.map((lang) => [lang, languageLoss(model, heldTexts, { neurons: r.byLang[lang] })]));
  const sw = Object.fromEntries(r.langs.filter((lang) => lang === 'zh' || lang === 'en').map((lang) => {
    const prompts = halfSentences(held, lang, 20);
    return [lang, prompts.length && r.byLang[lang].length ? languageSwitch(model, prompts, { neurons: r.byLang[lang], maxTokens: 12 }) : null];
  }));
  model.dispose();
  if (a.json) {
    process.stdout.write(JSON.stringify({ langs: r.langs, tokens: r.tokens, threshold: r.threshold, neurons: r.neurons, loss,
      switch: Object.fromEntries(Object.entries(sw).map(([k, v]) => [k, v && { before: v.before, after: v.after, changed: v.changed, prompts: v.prompts.length }])) }) + '\n');
    return;
  }
  console.log(`${r.neurons.length} language-specific neurons (${r.langs.map((l) => `${r.byLang[l].length} ${l}`).join(', ')}; tokens ${r.langs.map((l) => `${l} ${r.tokens[l]}`).join(', ')})`);
  console.log('layer  neuron  lang  entropy  ' + r.langs.map((l) => `P(${l})`.padStart(7)).join(' '));
  for (const x of r.neurons.slice(0, 10)) console.log(`${String(x.layer).padStart(5)}  ${String(x.neuron).padStart(6)}  ${x.lang.padStart(4)}  ${x.entropy.toFixed(3).padStart(7)}  ${r.langs.map((l) => x.probs[l].toFixed(2).padStart(7)).join(' ')}`);
  console.log(`\nheld-out loss change (nats per token) with one language's neurons off:\noff   ${r.langs.map((l) => l.padStart(9)).join(' ')}`);
  for (const off of r.langs) console.log(`${off.padEnd(4)}  ${r.langs.map((l) => ((loss[off][l].change >= 0 ? '+' : '') + loss[off][l].change.toFixed(4)).padStart(9)).join(' ')}`);
  for (const [lang, v] of Object.entries(sw)) if (v) console.log(`${lang} prompts (${v.prompts.length}), ${lang} neurons off: share of Chinese characters in the continuations ${v.before.toFixed(3)} → ${v.after.toFixed(3)}; ${v.changed} of ${v.prompts.length} continuations changed`);
}

/** Super weights (js/superweights.js). */
async function superweightsCmd(argv) {
  const a = parseArgs(argv, { prompt: 'v', k: 'v', texts: 'v', json: 'flag' });
  if (a._.length !== 1) throw new MlpscopeError('E_ARG', 'superweights needs DIR\n' + USAGE);
  let evalTexts;
  if (a.texts !== undefined) {
    try { evalTexts = fs.readFileSync(a.texts, 'utf8').split('\n').filter((l) => l.trim() !== ''); } catch (err) { throw new MlpscopeError('E_ARG', `--texts ${a.texts}: ${err.message}`); }
  } else evalTexts = (await heldOut()).map((p) => p.text);
  const model = await load(a._[0]);
  if (!model.tokenizer) throw new MlpscopeError('E_ARG', `${a._[0]} has no tokenizer: the texts cannot be encoded`);
  const r = superWeights(model, String(a.prompt ?? '我上周从巴黎飞到东京。The food was not bad at all.'), { k: num(a.k ?? 3, 'k', { int: true, min: 1, max: model.nLayers }), evalTexts });
  model.dispose();
  if (a.json) { process.stdout.write(JSON.stringify(r) + '\n'); return; }
  console.log(`largest MLP output per layer on the prompt (× the layer's median |output|) and the down_proj weight that makes most of it:`);
  for (const x of r.layers) console.log(`  layer ${String(x.layer).padStart(2)}: row ${String(x.row).padStart(5)} ${x.spike.toFixed(1).padStart(7)}×  W[${x.row}][${x.col}] = ${x.weight.toFixed(4)}, ${(100 * x.share).toFixed(0)}% of it`);
  console.log(`loss on ${r.evalTokens} predictions: ${r.loss.toFixed(4)} nats; zeroing one weight:`);
  for (const c of r.candidates) console.log(`  ${c.tensor}[${c.row}][${c.col}]: ${c.dLoss >= 0 ? '+' : ''}${c.dLoss.toFixed(4)}   (the largest other weight, [${c.control.row}][${c.control.col}] = ${c.control.value.toFixed(4)}: ${c.control.dLoss >= 0 ? '+' : ''}${c.control.dLoss.toFixed(4)})`);
}

/** Transcoders for the MLPs (js/transcoder.js): trained on the project's corpus, scored, saved. */
async function transcoder(argv) {
  const [sub, ...more] = argv;
  if (sub === 'compare') return transcoderCompare(more);
  if (sub !== 'train') throw new MlpscopeError('E_ARG', 'transcoder: the subcommands are train and compare\n' + USAGE);
  const a = parseArgs(more, { out: 'v', layers: 'v', layer: 'v', features: 'v', k: 'v', tokens: 'v', 'val-tokens': 'v', epochs: 'v', lr: 'v', seed: 'v', threads: 'v', 'no-replacement': 'flag', json: 'flag' });
  if (a.layer !== undefined && a.layers !== undefined) throw new MlpscopeError('E_ARG', 'transcoder train: give --layers or --layer, not both');
  a.layers ??= a.layer; // --layer L: one layer
  if (a._.length !== 1 || !a.out) throw new MlpscopeError('E_ARG', 'transcoder train needs DIR and --out OUT\n' + USAGE);
  const D = TRANSCODER_DEFAULTS;
  const opts = {
    features: num(a.features ?? D.features, 'features', { int: true, min: 1 }), k: num(a.k ?? D.k, 'k', { int: true, min: 1 }),
    tokens: num(a.tokens ?? D.tokens, 'tokens', { int: true, min: 1 }), valTokens: num(a['val-tokens'] ?? D.valTokens, 'val-tokens', { int: true, min: 0 }),
    epochs: num(a.epochs ?? D.epochs, 'epochs', { int: true, min: 1 }), lr: num(a.lr ?? D.lr, 'lr', { min: 0 }),
    seed: num(a.seed ?? D.seed, 'seed', { int: true, min: 0 }), replacement: !a['no-replacement'],
  };
  const lo = {};
  if (a.threads !== undefined) lo.threads = a.threads === 'auto' ? 'auto' : num(a.threads, 'threads', { int: true, min: 1 });
  const model = await load(a._[0], lo);
  if (a.layers !== undefined) opts.layers = String(a.layers).split(',').map((x) => num(x, 'layers', { int: true, min: 0, max: model.nLayers - 1 }));
  const lines = { train: progressLine('training', { unit: ' tok' }), score: progressLine('scoring', { unit: ' tok' }) };
  opts.onProgress = (p) => lines[p.phase]?.(p.done, p.total);
  const r = await trainTranscoders(model, opts);
  model.dispose();
  fs.mkdirSync(a.out, { recursive: true });
  fs.writeFileSync(`${a.out}/transcoders.bin`, r.files['transcoders.bin']);
  fs.writeFileSync(`${a.out}/manifest.json`, r.files['manifest.json']);
  const { files, ...rest } = r;
  if (a.json) { process.stdout.write(JSON.stringify(rest) + '\n'); return; }
  const f = (v, d = 3) => (v === null || v === undefined ? '   -' : v.toFixed(d));
  console.log(`${r.layers.length} transcoder${r.layers.length > 1 ? 's' : ''}, ${r.features} features, k ${r.k}: ${r.trainTokens} tokens in ${r.trainSeconds.toFixed(1)} s (${r.tokensPerSecond.toFixed(0)} tok/s, ${r.threads} thread${r.threads > 1 ? 's' : ''}); scored on ${r.scores.eval_tokens} held-out tokens`);
  console.log('layer    FVU     L0   dead      KL   loss  (model ' + f(r.scores.ce_model, 4) + ', MLP zeroed)  recovered');
  for (const l of r.scores.layers)
    console.log(`${String(l.layer).padStart(5)} ${f(l.fvu).padStart(6)} ${f(l.l0, 1).padStart(6)} ${f(l.dead).padStart(6)} ${f(l.kl, 4).padStart(7)} ${f(l.ce, 4).padStart(6)}  ${f(l.ce_zero, 4).padStart(20)}  ${f(l.recovered, 2).padStart(9)}`);
  if (r.scores.all.kl !== null) console.log(`every layer replaced at once: KL ${f(r.scores.all.kl, 4)}, loss ${f(r.scores.all.ce, 4)}`);
  console.log(`wrote ${a.out}/manifest.json and transcoders.bin (${r.files['transcoders.bin'].length} bytes)`);
}

/** Neurons against a transcoder set's features on labelled probes (js/features.js neuronsVsFeatures). */
async function transcoderCompare(argv) {
  const a = parseArgs(argv, { set: 'v', probes: 'v', json: 'flag' });
  if (a._.length !== 1 || !a.set) throw new MlpscopeError('E_ARG', 'transcoder compare needs DIR and --set SET\n' + USAGE);
  const list = a.probes === undefined ? (await import('./corpus.js')).probes(9, 400) : await readProbes(a.probes);
  const model = await load(a._[0]);
  const set = await loadTranscoders(model, a.set);
  const line = progressLine('probe passes');
  const r = neuronsVsFeatures(model, set, list, { onProgress: line && (({ done, total }) => line(done, total)) });
  model.dispose();
  if (a.json) { process.stdout.write(JSON.stringify(r) + '\n'); return; }
  const f = (x) => (x ? `L${x.layer} #${x.neuron}`.padEnd(10) + ' ' + x.heldOutAuc.toFixed(3) : '-'.padEnd(16));
  const g = (x) => (x ? x.heldOutAuc.toFixed(3) : '  -  ');
  console.log(`${list.length} probe texts, ${r.tokens} tokens; chosen on the first half, held-out ROC AUC on the second`);
  console.log('feature   best neuron        best transcoder feature   neurons to match   by language (neuron / feature)');
  for (const row of r.rows) {
    const langs = Object.entries(row.byLang ?? {}).map(([k, v]) => `${k} ${g(v.neuron)} / ${g(v.transcoder)}`).join('   ');
    console.log(`${row.feature.padEnd(9)} ${f(row.neuron)}   ${f(row.transcoder)}          ${String(row.neuronsToMatch ?? `> ${row.combined.at(-1)?.n ?? 0}`).padStart(8)}           ${langs}`);
  }
}

/** Every neuron's input-output class from its weights (js/geometry.js), counted per layer. */
async function classes(argv) {
  const a = parseArgs(argv, { layers: 'v', threshold: 'v', 'no-fold-norm': 'flag', json: 'flag' });
  if (a._.length !== 1) throw new MlpscopeError('E_ARG', 'classes needs DIR\n' + USAGE);
  const model = await load(a._[0]);
  const layers = a.layers === undefined ? undefined : String(a.layers).split(',').map((x) => num(x, 'layers', { int: true, min: 0, max: model.nLayers - 1 }));
  const threshold = num(a.threshold ?? 0.5, 'threshold', { min: 0 });
  const t0 = performance.now();
  const r = model.neuronWeightClasses({ layers, threshold, foldNorm: !a['no-fold-norm'] });
  const ms = performance.now() - t0;
  model.dispose();
  if (a.json) {
    process.stdout.write(JSON.stringify({ threshold: r.threshold, foldNorm: r.foldNorm, classes: r.classes, ms,
      layers: r.layers.map((l) => ({ layer: l.layer, neurons: l.classes.length, counts: l.counts, atypical: l.atypicalCount, medianCosInOut: l.medianCosInOut })) }) + '\n');
    return;
  }
  const short = { enrichment: 'enrich', conditional_enrichment: 'c.enrich', depletion: 'deplete', conditional_depletion: 'c.deplete', proportional_change: 'prop.', orthogonal_output: 'orth.' };
  console.log(`input-output classes from the weights (threshold ${r.threshold}, norm gain ${r.foldNorm ? 'folded in' : 'not folded in'}), ${ms.toFixed(0)} ms`);
  console.log(`layer ${r.classes.map((c) => short[c].padStart(9)).join(' ')}  atypical  median cos(in,out)`);
  for (const l of r.layers) console.log(`${String(l.layer).padStart(5)} ${r.classes.map((c) => String(l.counts[c]).padStart(9)).join(' ')}  ${String(l.atypicalCount).padStart(8)}  ${l.medianCosInOut.toFixed(3).padStart(18)}`);
}

/** The lesson's running example for any text: P(the next token starts a `label` span), the
 *  neurons whose switching off lowers it most, and the strongest one pushed on another text. */
async function story(argv) {
  const a = parseArgs(argv, { prompt: 'v', label: 'v', lang: 'v', 'per-layer': 'v', push: 'v', multiples: 'v', probes: 'v', json: 'flag' });
  if (a._.length !== 1 || a.prompt === undefined) throw new MlpscopeError('E_ARG', 'story needs DIR and --prompt\n' + USAGE);
  const probes = await readProbes(a.probes);
  const multiples = String(a.multiples ?? '1,2,4').split(',').map((x) => num(x, 'multiples'));
  const model = await load(a._[0]);
  if (!model.tokenizer) throw new MlpscopeError('E_ARG', `${a._[0]} has no tokenizer: the texts cannot be encoded`);
  const label = a.label ?? 'city', lang = a.lang;
  const tokens = featureTokens(model, probes, { label, ...(lang !== undefined ? { lang } : {}) });
  if (!tokens.length) throw new MlpscopeError('E_ARG', `no probe has a "${label}" span${lang !== undefined ? ` in language "${lang}"` : ''}: no tokens to look for`);
  const perLayer = num(a['per-layer'] ?? 8, 'per-layer', { int: true, min: 1, max: 64 });
  const found = neuronsForTokens(model, a.prompt, { tokens, perLayer });
  const w = found.candidates[0];
  let writer = null, push = null;
  if (w) {
    const sign = w.activation < 0 ? -1 : 1;
    const texts = probes.filter((p) => lang === undefined || p.lang === lang).map((p) => p.text);
    const top = neuronTopActivations(model, texts, { layer: w.layer, neuron: w.neuron, sign, k: 3, window: 3 }).top;
    writer = { ...w, sign, unit: top[0]?.activation ?? w.activation, top };
    if (a.push !== undefined)
      push = pushNeuron(model, a.push, { layer: w.layer, neuron: w.neuron, tokens, values: multiples.map((k) => k * writer.unit), k: 3 });
  }
  if (a.json) process.stdout.write(JSON.stringify({ label, tokens: tokens.length, p: found.p, passes: found.passes, candidates: found.candidates, writer, push }) + '\n');
  else {
    const pct = (p) => `${(100 * p).toFixed(2)}%`, pts = (d) => `${d >= 0 ? '+' : ''}${(100 * d).toFixed(2)}`;
    console.log(`P(next token starts a "${label}" span: ${tokens.length} tokens from the probes) = ${pct(found.p)} after ${JSON.stringify(a.prompt)}`);
    console.log(`${found.candidates.length} candidates (the ${perLayer} largest |mlp.hook_post| per layer at the last token), each switched off; ${found.passes} passes`);
    console.log('layer  neuron  activation   P(off)   change (pts)');
    for (const c of found.candidates.slice(0, 10)) console.log(`${String(c.layer).padStart(5)}  ${String(c.neuron).padStart(6)}  ${c.activation.toFixed(3).padStart(10)}  ${pct(c.p).padStart(7)}  ${pts(c.delta).padStart(12)}`);
    if (writer) {
      console.log(`writer: layer ${writer.layer} neuron ${writer.neuron}; its own scale (strongest ${writer.sign > 0 ? 'positive' : 'negative'} activation over the probe texts): ${writer.unit.toFixed(3)}`);
      if (push) {
        const line = (r) => `${pct(r.p).padStart(7)}  next: ${r.top.map((t) => `${JSON.stringify(t.text)} ${(100 * t.prob).toFixed(1)}%`).join(', ')}`;
        console.log(`pushed on ${JSON.stringify(a.push)} (mlp.hook_post + value at every position):`);
        console.log(`  as is          ${line(push.before)}`);
        push.after.forEach((r, i) => console.log(`  +${String(multiples[i]).padEnd(3)}× (${r.value.toFixed(2).padStart(7)})  ${line(r)}`));
      }
    }
  }
  model.dispose();
}

/** --quadrants: the neuron's four (sign gate, sign up) quadrants as a table */
function printQuadrants(r, json) {
  if (json) { process.stdout.write(JSON.stringify(r) + '\n'); return; }
  console.log(`layer ${r.layer} neuron ${r.neuron}: ${r.tokens} tokens by the signs of gate (mlp.hook_pre) and up (mlp.hook_pre_linear)${r.zero ? `; ${r.zero} exactly 0` : ''}`);
  console.log('gate up   tokens  of all   mean gate  mean up  mean output  of sum|output|  largest |output|');
  for (const q of r.quadrants) {
    const top = q.top.map((x) => `${JSON.stringify(x.piece)} ${x.activation.toFixed(2)}`).join(', ');
    console.log(`  ${q.gate}   ${q.up}  ${String(q.count).padStart(7)}  ${(100 * q.frequency).toFixed(1).padStart(5)}%  ${q.meanGate.toFixed(3).padStart(9)}  ${q.meanUp.toFixed(3).padStart(7)}  ${q.meanOutput.toFixed(4).padStart(11)}  ${(100 * q.share).toFixed(1).padStart(13)}%  ${top}`);
  }
}

/** the logit lens at one position: what the stream predicts after each layer's mixer and after its MLP */
async function lens(argv) {
  const a = parseArgs(argv, { prompt: 'v', ids: 'v', position: 'v', k: 'v', json: 'flag' });
  if (a._.length !== 1 || (a.prompt === undefined && a.ids === undefined)) throw new MlpscopeError('E_ARG', 'lens needs DIR and --prompt or --ids\n' + USAGE);
  const model = await load(a._[0]);
  const ids = a.ids !== undefined ? String(a.ids).split(',').filter((x) => x.trim() !== '').map((x) => num(x, 'ids', { int: true })) : model._encodePrompt(a.prompt);
  const T = Math.min(ids.length, model.contextLength), L = model.nLayers;
  const pos = num(a.position ?? T - 1, 'position', { int: true, min: 0, max: T - 1 }), k = num(a.k ?? 3, 'k', { int: true, min: 1, max: 100 });
  const lensAt = model.forward(ids.slice(0, pos + 1), { stats: false, logits: 'none', logitLens: { positions: [pos], k, afterMixer: true } }).logitLens[0];
  const show = (ts) => ts.map((t) => ({ id: t.id, text: t.text ?? String(t.id), prob: t.prob }));
  const mixers = model.info().mixers;
  const rows = Array.from({ length: L }, (_, l) => ({ layer: l, mixer: mixers[l], afterMixer: show(lensAt.afterMixer[l]), afterMlp: show(lensAt.layers[l]) }));
  if (a.json) process.stdout.write(JSON.stringify({ position: pos, token: ids[pos], rows }) + '\n');
  else {
    const fmt = (ts) => ts.map((t) => `${JSON.stringify(t.text)} ${(100 * t.prob).toFixed(1)}%`).join(', ');
    console.log(`logit lens after token ${pos} (${model.tokenizer ? JSON.stringify(model.tokenizer.pieces(ids.slice(0, pos + 1)).at(-1).text) : ids[pos]}); * = the MLP changed the top token`);
    for (const row of rows) {
      const ch = row.afterMixer[0].id !== row.afterMlp[0].id ? '*' : ' ';
      console.log(`${String(row.layer).padStart(3)} ${row.mixer.padEnd(6)} after mixer: ${fmt(row.afterMixer)}`);
      console.log(`${ch.padStart(3)} ${''.padEnd(6)} after MLP:   ${fmt(row.afterMlp)}`);
    }
  }
  model.dispose();
}

const idsArg = (v, name) => String(v).split(',').filter((x) => x.trim() !== '').map((x) => num(x, name, { int: true }));
const tokText = (model, id) => (model.tokenizer ? JSON.stringify(model.tokenizer.tokenTexts([id])[0]) : String(id));
/** --token / --diff: a token id, or a piece of text that is one token */
function tokenArg(model, v, name) {
  if (/^\d+$/.test(String(v))) return Number(v);
  const ids = model.tokenizer ? model.tokenizer.encode(String(v)) : [];
  if (ids.length !== 1) throw new MlpscopeError('E_ARG', `--${name} ${JSON.stringify(v)} is not a token id or the text of one token (it is ${ids.length} tokens)`);
  return ids[0];
}

/** the prediction at one position split into every block's write (and one layer's neurons) */
async function decompose(argv) {
  const a = parseArgs(argv, { prompt: 'v', ids: 'v', position: 'v', token: 'v', diff: 'v', neurons: 'v', top: 'v', json: 'flag' });
  if (a._.length !== 1 || (a.prompt === undefined && a.ids === undefined)) throw new MlpscopeError('E_ARG', 'decompose needs DIR and --prompt or --ids\n' + USAGE);
  const model = await load(a._[0], { exact: true }); // exact activations: the parts sum to the logit to float rounding
  const ids = a.ids !== undefined ? idsArg(a.ids, 'ids') : model._encodePrompt(a.prompt);
  const o = { position: num(a.position ?? -1, 'position', { int: true }) };
  if (a.token !== undefined) o.token = tokenArg(model, a.token, 'token');
  if (a.diff !== undefined) { const [x, y] = String(a.diff).split(','); if (y === undefined) throw new MlpscopeError('E_ARG', '--diff takes two tokens: A,B'); o.logitDiff = [tokenArg(model, x, 'diff'), tokenArg(model, y, 'diff')]; }
  if (a.neurons !== undefined) o.neurons = num(a.neurons, 'neurons', { int: true, min: 0 });
  const top = num(a.top ?? 10, 'top', { int: true, min: 1 });
  const d = model.decomposePrediction(ids, o);
  let best = null;
  if (d.neurons) best = [...d.neurons.values.keys()].sort((x, y) => Math.abs(d.neurons.values[y]) - Math.abs(d.neurons.values[x])).slice(0, top).map((j) => ({ neuron: j, value: d.neurons.values[j] }));
  if (a.json) process.stdout.write(JSON.stringify({ ...d, neurons: d.neurons ? { layer: d.neurons.layer, sum: d.neurons.sum, top: best } : undefined }) + '\n');
  else {
    const what = d.logitDiff ? `logit(${tokText(model, d.logitDiff[0])}) − logit(${tokText(model, d.logitDiff[1])})` : `logit(${tokText(model, d.token)})`;
    console.log(`${what} after token ${d.position}: ${d.logit.toFixed(4)}; the parts below sum to ${d.sum.toFixed(4)}`);
    for (const q of d.parts) console.log(`  ${(q.layer === null ? 'embed' : `${q.layer} ${q.kind}`).padEnd(14)} ${q.value >= 0 ? '+' : ''}${q.value.toFixed(4)}`);
    if (d.neurons) {
      console.log(`layer ${d.neurons.layer}'s MLP by neuron (sum ${d.neurons.sum.toFixed(4)}), the ${top} largest:`);
      for (const b of best) console.log(`  neuron ${String(b.neuron).padEnd(6)} ${b.value >= 0 ? '+' : ''}${b.value.toFixed(4)}`);
    }
  }
  model.dispose();
}

/** activation patching: a layer × position table of how much the clean answer comes back */
async function patch(argv) {
  const a = parseArgs(argv, { clean: 'v', corrupted: 'v', hook: 'v', diff: 'v', kl: 'flag', layers: 'v', json: 'flag' });
  if (a._.length !== 1 || a.clean === undefined || a.corrupted === undefined || (a.diff === undefined) === !a.kl)
    throw new MlpscopeError('E_ARG', 'patch needs DIR, --clean TEXT, --corrupted TEXT and either --diff A,B or --kl\n' + USAGE);
  const model = await load(a._[0]);
  const clean = model._encodePrompt(a.clean), corrupted = model._encodePrompt(a.corrupted);
  let metric = 'kl';
  if (a.diff !== undefined) { const [x, y] = String(a.diff).split(','); if (y === undefined) throw new MlpscopeError('E_ARG', '--diff takes two tokens: A,B'); metric = { logitDiff: [tokenArg(model, x, 'diff'), tokenArg(model, y, 'diff')] }; }
  const r = model.activationPatching(clean, corrupted, { hook: a.hook ?? 'hook_resid_pre', metric, layers: a.layers !== undefined ? idsArg(a.layers, 'layers') : undefined });
  if (a.json) process.stdout.write(JSON.stringify(r) + '\n');
  else {
    console.log(`patching ${r.hook} of the clean run into the corrupted one (${metric === 'kl' ? 'KL to the clean prediction' : `logit difference ${a.diff}`}: clean ${r.clean.toFixed(3)}, corrupted ${r.corrupted.toFixed(3)}); share of the clean answer restored:`);
    console.log('layer ' + r.positions.map((p) => tokText(model, corrupted[p]).slice(0, 8).padStart(9)).join(''));
    r.layers.forEach((l, i) => console.log(String(l).padStart(5) + ' ' + r.restored[i].map((v) => v.toFixed(2).padStart(9)).join('')));
  }
  model.dispose();
}

function topK(logits, k) {
  return topTokens(logits, k).map((t) => [t.id, t.logit]);
}

async function main() {
  // output piped into a reader that stops early (`| head`): stop quietly, as other tools do
  process.stdout.on('error', (e) => { if (e.code === 'EPIPE') process.exit(0); throw e; });
  const [cmd, ...rest] = process.argv.slice(2);
  // --help anywhere, except as an option's value (`--prompt --help` is a prompt)
  const FLAGS = ['--json', '--directions', '--int8-activations'];
  const asked = (a, i, all) => (a === '--help' || a === '-h') && !(i > 0 && all[i - 1].startsWith('--') && !FLAGS.includes(all[i - 1]));
  if (cmd === 'help' || [cmd, ...rest].some(asked)) { console.log(USAGE); return; }
  if (cmd === '--version' || cmd === '-v') {
    console.log(JSON.parse(fs.readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version);
    return;
  }
  const json = rest.includes('--json');
  try {
    if (cmd === 'convert') await convert(rest);
    else if (cmd === 'run') await run(rest);
    else if (cmd === 'synth') await synth(rest);
    else if (cmd === 'info') await info(rest);
    else if (cmd === 'tokenize') await tokenize(rest);
    else if (cmd === 'features') await features(rest);
    else if (cmd === 'neuron') await neuron(rest);
    else if (cmd === 'classes') await classes(rest);
    else if (cmd === 'bilinear') await bilinear(rest);
    else if (cmd === 'language') await language(rest);
    else if (cmd === 'superweights') await superweightsCmd(rest);
    else if (cmd === 'lens') await lens(rest);
    else if (cmd === 'story') await story(rest);
    else if (cmd === 'decompose') await decompose(rest);
    else if (cmd === 'patch') await patch(rest);
    else if (cmd === 'transcoder') await transcoder(rest);
    else { console.error(USAGE); process.exit(2); }
  } catch (err) {
    const code = err instanceof MlpscopeError ? err.code : 'E_INTERNAL';
    const message = err instanceof MlpscopeError ? err.message : String(err?.stack ?? err);
    if (json) process.stdout.write(JSON.stringify({ error: { code, message } }) + '\n');
    else console.error(`mlpscope: ${message}`);
    process.exit(1);
  }
}
main();
