// Language-specific neurons (Tang et al., ACL 2024, "Language-specific neurons: the key to
// multilingual capabilities in large language models", arXiv 2402.16438): a neuron's activation
// probability per language is the share of that language's tokens on which its gate is open
// (mlp.hook_pre > 0, so silu > 0); normalised over the languages, the entropy of those
// probabilities (LAPE) is low for neurons that fire for one language only. Switching those neurons
// off (mlp.hook_post set to 0) and letting the model continue a prompt shows what they do:
// languageSwitch measures the share of Chinese characters in greedy continuations before and after.
import { MlpscopeError } from './errors.js';
import * as A from './args.js';
import { nextTokenLoss } from './select.js';

/** What these functions use of a Model (js/model.js). @typedef {{ config: any, nLayers: number, tokenizer: any, _alive(): void,
 *   forward(ids: ArrayLike<number>, opts?: object): any }} LanguageModel */

/**
 * Activation probabilities per language of every neuron, their entropy, and the neurons of lowest
 * entropy among those that fire often enough for some language.
 * @param {LanguageModel} model @param {Record<string, string[]>} texts per language (at least two)
 * @param {{share?: number, quantile?: number}} [opts] share: the fraction of all neurons kept
 *   (default 0.01); quantile: a kept neuron's largest probability must reach this quantile of all
 *   the probabilities (default 0.95), so rarely firing neurons are left out
 */
export function languageNeurons(model, texts, opts) {
  const where = 'languageNeurons()';
  model._alive();
  const { share = 0.01, quantile = 0.95 } = A.options(opts, where);
  if (!model.tokenizer) throw new MlpscopeError('E_TOKEN', `${where}: this model has no tokenizer`);
  A.options(texts, where);
  const langs = Object.keys(texts);
  if (langs.length < 2) throw new MlpscopeError('E_ARG', `${where}: texts needs at least two languages, got ${langs.length}`);
  for (const lang of langs) {
    A.list(texts[lang], where, `texts.${lang}`);
    if (!texts[lang].length) throw new MlpscopeError('E_ARG', `${where}: texts.${lang} is empty`);
    texts[lang].forEach((t, i) => { if (typeof t !== 'string') throw new MlpscopeError('E_ARG', `${where}: texts.${lang}[${i}] is ${A.show(t)}, not a string`); });
  }
  if (typeof share !== 'number' || !(share > 0 && share <= 1)) throw new MlpscopeError('E_ARG', `${where}: share must be a number in (0, 1], got ${A.show(share)}`);
  if (typeof quantile !== 'number' || !(quantile >= 0 && quantile < 1)) throw new MlpscopeError('E_ARG', `${where}: quantile must be a number in [0, 1), got ${A.show(quantile)}`);
  const L = model.nLayers, I = model.config.intermediate_size, N = L * I;
  const hooks = Array.from({ length: L }, (_, l) => `blocks.${l}.mlp.hook_pre`), posts = hooks.map((h) => h.replace('hook_pre', 'hook_post'));
  const probs = {}, tokens = {}, means = {};
  for (const lang of langs) {
    const fired = new Float64Array(N), sum = new Float64Array(N);
    let n = 0;
    for (const text of texts[lang]) {
      const ids = model.tokenizer.encode(text);
      if (!ids.length) continue;
      const r = model.forward(ids, { stats: false, logits: 'none', hooks: [...hooks, ...posts] });
      const T = ids.length;
      for (let l = 0; l < L; l++) {
        const h = r.hooks[hooks[l]], v = r.hooks[posts[l]], o = l * I;
        for (let t = 0; t < T; t++) for (let k = 0; k < I; k++) { if (h[t * I + k] > 0) fired[o + k]++; sum[o + k] += v[t * I + k]; }
      }
      n += T;
    }
    if (!n) throw new MlpscopeError('E_ARG', `${where}: texts.${lang} has no tokens`);
    probs[lang] = Float32Array.from(fired, (f) => f / n);
    means[lang] = Float32Array.from(sum, (x) => x / n);
    tokens[lang] = n;
  }
  // entropy of the probabilities normalised over the languages (0: one language only)
  const entropy = new Float32Array(N), top = new Float32Array(N);
  for (let i = 0; i < N; i++) {
    let s = 0, mx = 0;
    for (const lang of langs) { s += probs[lang][i]; mx = Math.max(mx, probs[lang][i]); }
    let e = 0;
    if (s > 0) for (const lang of langs) { const q = probs[lang][i] / s; if (q > 0) e -= q * Math.log(q); }
    entropy[i] = s > 0 ? e : Math.log(langs.length);
    top[i] = mx;
  }
  const all = Float64Array.from(langs.flatMap((lang) => Array.from(probs[lang]))).sort();
  const threshold = all[Math.min(all.length - 1, Math.floor(quantile * all.length))];
  const keep = Math.max(1, Math.round(share * N));
  const order = Array.from({ length: N }, (_, i) => i).filter((i) => top[i] >= threshold && top[i] > 0)
    .sort((a, b) => entropy[a] - entropy[b] || a - b).slice(0, keep);
  const neurons = order.map((i) => {
    const p = Object.fromEntries(langs.map((lang) => [lang, probs[lang][i]])), mean = Object.fromEntries(langs.map((lang) => [lang, means[lang][i]]));
    return { layer: Math.floor(i / I), neuron: i % I, entropy: entropy[i], probs: p, mean, lang: langs.reduce((a, b) => (p[b] > p[a] ? b : a)) };
  });
  const byLang = Object.fromEntries(langs.map((lang) => [lang, neurons.filter((x) => x.lang === lang)]));
  return { langs, tokens, threshold, neurons, byLang, probs, means, entropy };
}

const CJK = /[\u3400-\u9fff\uf900-\ufaff\u3000-\u303f\uff00-\uffef]/gu, LATIN = /[A-Za-z]/g;
/** the share of Chinese characters (CJK ideographs and full-width punctuation) among the Chinese and Latin letters of a text; NaN without either */
export function cjkShare(text) {
  const c = (text.match(CJK) ?? []).length, l = (text.match(LATIN) ?? []).length;
  return c + l ? c / (c + l) : Number.NaN;
}

/**
 * Greedy continuations of each prompt with and without the given neurons switched off
 * (mlp.hook_post set to 0 at every position, prompt and continuation), and the share of Chinese
 * characters in each continuation.
 * @param {LanguageModel} model @param {string[]} prompts
 * @param {{neurons: {layer: number, neuron: number}[], activate?: {layer: number, neuron: number, value: number}[], maxTokens?: number}} opts
 *   activate: neurons held at a value instead (e.g. the other language's neurons at their mean
 *   activation on that language, as Tang et al. steer the output language)
 */
export function languageSwitch(model, prompts, opts) {
  const where = 'languageSwitch()';
  model._alive();
  const { neurons, activate = [], maxTokens = 16 } = A.options(opts, where);
  if (!model.tokenizer) throw new MlpscopeError('E_TOKEN', `${where}: this model has no tokenizer`);
  A.list(prompts, where, 'prompts');
  if (!prompts.length) throw new MlpscopeError('E_ARG', `${where}: prompts is empty`);
  A.list(neurons, where, 'neurons');
  if (!neurons?.length) throw new MlpscopeError('E_ARG', `${where}: neurons is empty (give {layer, neuron} pairs, e.g. languageNeurons().byLang.zh)`);
  if (!Number.isInteger(maxTokens) || maxTokens < 1 || maxTokens > 256) throw new MlpscopeError('E_ARG', `${where}: maxTokens ${A.show(maxTokens)} is not an integer in 1..256`);
  const I = model.config.intermediate_size, L = model.nLayers, perLayer = new Map();
  neurons.forEach((x, i) => {
    if (!x || !Number.isInteger(x.layer) || x.layer < 0 || x.layer >= L) throw new MlpscopeError('E_ARG', `${where}: neurons[${i}].layer ${A.show(x?.layer)} is not in 0..${L - 1}`);
    if (!Number.isInteger(x.neuron) || x.neuron < 0 || x.neuron >= I) throw new MlpscopeError('E_ARG', `${where}: neurons[${i}].neuron ${A.show(x.neuron)} is not in 0..${I - 1}`);
    if (!perLayer.has(x.layer)) perLayer.set(x.layer, new Set());
    perLayer.get(x.layer).add(x.neuron);
  });
  const off = [...perLayer].map(([layer, s]) => ({ layer, hook: 'mlp.hook_post', op: 'set', value: 0, neurons: [...s].sort((a, b) => a - b) }));
  A.list(activate, where, 'activate');
  const on = new Map();
  activate.forEach((x, i) => {
    if (!x || !Number.isInteger(x.layer) || x.layer < 0 || x.layer >= L || !Number.isInteger(x.neuron) || x.neuron < 0 || x.neuron >= I || !Number.isFinite(x.value))
      throw new MlpscopeError('E_ARG', `${where}: activate[${i}] must be {layer, neuron, value} of this model, got ${A.show(x)}`);
    if (!on.has(x.layer)) on.set(x.layer, []);
    on.get(x.layer).push(x);
  });
  for (const [layer, xs] of on) off.push({ layer, hook: 'mlp.hook_post', op: 'set', neurons: xs.map((x) => x.neuron), vector: Float32Array.from(xs, (x) => x.value) });
  const eos = new Set(model.tokenizer.eosIds ?? []);
  const real = model.tokenizer.vocabSize || model.config.vocab_size; // padded rows never win
  const greedy = (ids, interventions) => {
    const out = [];
    let r = model.forward(ids, { stats: false, logits: 'last', interventions });
    for (let s = 0; s < maxTokens; s++) {
      const lg = r.logits; let best = 0;
      for (let i = 1; i < real; i++) if (lg[i] > lg[best]) best = i;
      if (eos.has(best)) break;
      out.push(best);
      if (s + 1 < maxTokens) r = model.forward([best], { stats: false, logits: 'last', interventions, continue: true });
    }
    return model.tokenizer.decode(out);
  };
  const rows = prompts.map((prompt, i) => {
    if (typeof prompt !== 'string' || !prompt) throw new MlpscopeError('E_ARG', `${where}: prompts[${i}] is ${A.show(prompt)}, not a non-empty string`);
    const ids = model.tokenizer.encode(prompt), before = greedy(ids, []), after = greedy(ids, off);
    return { prompt, before: { text: before, cjk: cjkShare(before) }, after: { text: after, cjk: cjkShare(after) } };
  });
  const mean = (k) => { const v = rows.map((r) => r[k].cjk).filter((x) => !Number.isNaN(x)); return v.length ? v.reduce((a, b) => a + b, 0) / v.length : Number.NaN; };
  return { neurons: neurons.length, activated: activate.length, maxTokens, prompts: rows, before: mean('before'), after: mean('after'), changed: rows.filter((r) => r.before.text !== r.after.text).length };
}

/**
 * The mean next-token loss of each language's texts with the given neurons switched off (set to 0
 * at every position) against the unchanged model: Tang et al.'s first test of language-specific
 * neurons (switching a language's neurons off should hurt that language most).
 * @param {LanguageModel} model @param {Record<string, string[]>} texts per language
 * @param {{neurons: {layer: number, neuron: number}[]}} opts
 */
export function languageLoss(model, texts, opts) {
  const where = 'languageLoss()';
  model._alive();
  const { neurons } = A.options(opts, where);
  if (!model.tokenizer) throw new MlpscopeError('E_TOKEN', `${where}: this model has no tokenizer`);
  A.options(texts, where);
  A.list(neurons, where, 'neurons');
  const L = model.nLayers, I = model.config.intermediate_size, perLayer = new Map();
  (neurons ?? []).forEach((x, i) => {
    if (!x || !Number.isInteger(x.layer) || x.layer < 0 || x.layer >= L || !Number.isInteger(x.neuron) || x.neuron < 0 || x.neuron >= I) throw new MlpscopeError('E_ARG', `${where}: neurons[${i}] must be {layer, neuron} of this model, got ${A.show(x)}`);
    if (!perLayer.has(x.layer)) perLayer.set(x.layer, new Set());
    perLayer.get(x.layer).add(x.neuron);
  });
  const off = [...perLayer].map(([layer, s]) => ({ layer, hook: 'mlp.hook_post', op: 'set', value: 0, neurons: [...s] }));
  const V = model.config.vocab_size, n = model.tokenizer.vocabSize || V;
  const loss = (ids, interventions) => nextTokenLoss(model.forward(ids, { stats: false, logits: 'all', interventions }).logits, ids, V, n).sum;
  const out = {};
  for (const [lang, list] of Object.entries(texts)) {
    A.list(list, where, `texts.${lang}`);
    let before = 0, after = 0, count = 0;
    for (const text of list) {
      if (typeof text !== 'string') throw new MlpscopeError('E_ARG', `${where}: texts.${lang} holds ${A.show(text)}, not a string`);
      const ids = model.tokenizer.encode(text);
      if (ids.length < 2) continue;
      before += loss(ids, []); after += loss(ids, off); count += ids.length - 1;
    }
    if (!count) throw new MlpscopeError('E_ARG', `${where}: texts.${lang} has no text of 2 tokens or more`);
    out[lang] = { tokens: count, before: before / count, after: after / count, change: (after - before) / count };
  }
  return out;
}
