// The page's shared pieces: the little state every section needs (model, info, the reader's text,
// its ids and pieces, the run, the language), an event bus the sections subscribe to, the one
// bilingual string mechanism, the card guard (a failed update says so and greys its card), and
// the page's URL. Sections import this file and the widgets, never each other.

export const $ = (id) => document.getElementById(id);
export const fmt = (x, d = 3) => (Number.isFinite(x) ? x.toFixed(d) : '–');
export const int = (n) => Number(n).toLocaleString('en-US');
export const silu = (z) => z / (1 + Math.exp(-z));
export function escapeHtml(s) { return String(s).replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' }[c])); }
/** the sentence the page starts with, in the language it opens in */
export const DEFAULT_TEXTS = { en: 'I flew from Paris to Tokyo last week. The food was not bad at all.', zh: '我上周从巴黎飞到东京。饭菜一点也不好。' };

/** What every section may read. Written only here and by the loader (model, info, entry) and
 *  the run (text, ids, pieces, run, cut); each section keeps everything else to itself. */
export const state = { model: null, info: null, entry: null, lang: 'zh', text: DEFAULT_TEXTS.zh, defaultText: DEFAULT_TEXTS.zh,
  ids: [], pieces: [], run: null, runId: 0, cut: 0, probes: null };
window.__mlpscope = state; // for tests and the curious

// ---------------------------------------------------------------- the bus
// Events: 'model' (a model is loaded: state.model, state.info), 'run' (the reader's text ran:
// state.ids, state.pieces, state.run, state.runId), 'lang' (the page language changed), and the
// sections' own (each documented where it is emitted). A subscriber's failure is its own: the
// others still run, and a guarded card says what failed.
const subscribers = new Map();
/** @param {string} event @param {(payload: any) => any} fn */
export function on(event, fn) {
  if (!subscribers.has(event)) subscribers.set(event, []);
  subscribers.get(event).push(fn);
}
/** Runs every subscriber of `event` (one after the other: they share the model's worker) and
 *  resolves when all are done; an exception is reported and does not stop the others. */
export async function emit(event, payload) {
  for (const fn of subscribers.get(event) ?? []) {
    try { await fn(payload); } catch (err) { report(err); }
  }
}
function report(err) {
  console.error(err); // a page error the tests look for: every failure of a card is also shown on it
}

// ---------------------------------------------------------------- charts at the width they get
// A chart draws in SVG units equal to CSS pixels at the width its figure has (at most `max`), so
// its text keeps its size on a phone and nothing needs a sideways scroll; when the width changes
// (a phone turned, a window resized) it draws again.
const drawn = new WeakMap(); // svg -> { width, redraw }
/** the width to draw `svg` at, and its viewBox set to it: `redraw` runs again when it changes
 * @param {SVGSVGElement} svg @param {number} height @param {() => void} redraw @returns {number} */
export function chartWidth(svg, height, redraw, max = 640) {
  const box = svg.parentElement?.clientWidth || max;
  const width = Math.max(240, Math.min(max, Math.floor(box - 2))); // inside the svg's 1 px border
  svg.setAttribute('viewBox', `0 0 ${width} ${height}`);
  svg.style.maxWidth = `${width + 2}px`;
  if (!drawn.has(svg)) resizes.observe(svg.parentElement ?? svg);
  drawn.set(svg, { width, redraw, max });
  return width;
}
const resizes = typeof ResizeObserver === 'undefined' ? { observe() {} } : new ResizeObserver((entries) => {
  for (const e of entries) {
    const svg = e.target.tagName.toLowerCase() === 'svg' ? e.target : e.target.querySelector(':scope > svg');
    const d = svg && drawn.get(svg);
    if (!d) continue;
    const want = Math.max(240, Math.min(d.max, Math.floor((e.target.clientWidth || d.max) - 2)));
    if (want !== d.width) requestAnimationFrame(() => d.redraw());
  }
});

/** The arrow keys on a focusable chart step its selection (the keyboard twin of a tap):
 *  `step(d)` gets -1 (left / up) or +1 (right / down). */
export function arrowSteps(el, step) {
  el.addEventListener('keydown', (ev) => {
    const d = { ArrowLeft: -1, ArrowUp: -1, ArrowRight: 1, ArrowDown: 1 }[ev.key];
    if (!d) return;
    ev.preventDefault();
    step(d);
  });
}

/** A group of buttons as one Tab stop (a roving tabindex): Tab enters at the pressed one (or
 *  the first), the arrow keys, Home and End move between them, Enter / Space press. */
export function rovingGroup(box) {
  const items = [...box.querySelectorAll('button')];
  if (!items.length) return;
  const start = items.find((b) => b.getAttribute('aria-pressed') === 'true') ?? items[0];
  for (const b of items) b.tabIndex = b === start ? 0 : -1;
  box.setAttribute('role', 'toolbar');
  box.onkeydown = (ev) => {
    const i = items.indexOf(document.activeElement);
    if (i < 0) return;
    const j = { ArrowLeft: i - 1, ArrowUp: i - 1, ArrowRight: i + 1, ArrowDown: i + 1, Home: 0, End: items.length - 1 }[ev.key];
    if (j === undefined) return;
    ev.preventDefault();
    const next = items[Math.max(0, Math.min(items.length - 1, j))];
    items[i].tabIndex = -1; next.tabIndex = 0; next.focus();
  };
}

// ---------------------------------------------------------------- strings in two languages
// One mechanism: a string is {zh, en}. In the page's HTML both languages stand side by side as
// <span lang="zh"> / <span lang="en"> and the stylesheet shows the page's language; text a section
// writes comes out the same way (bi), so a language switch redraws nothing but the few places that
// cannot hold two spans: attributes and <option>s (setBi keeps both and the switch swaps them).
/** @typedef {{zh: string, en: string}} Bi */
/** both languages as HTML, each escaped */
export const bi = (s) => `<span lang="zh">${escapeHtml(s.zh)}</span><span lang="en">${escapeHtml(s.en)}</span>`;
/** both languages as HTML whose parts are HTML already (the caller escaped what needs it) */
export const biHtml = (s) => `<span lang="zh">${s.zh}</span><span lang="en">${s.en}</span>`;
/** both languages inside an SVG <text> */
export const biSvg = (s) => `<tspan lang="zh">${escapeHtml(s.zh)}</tspan><tspan lang="en">${escapeHtml(s.en)}</tspan>`;
/** the page language's side of a string */
export const say = (s) => s[state.lang];
/** writes both languages into an element (or '' to clear it) */
export function setText(el, s) { el.innerHTML = s ? bi(s) : ''; }
/** for what cannot hold two spans: an attribute ('text': the element's text) kept in both
 *  languages and shown in the page's (a language switch swaps every one of them) */
export function setBi(el, s, attr = 'text') {
  el.dataset.bi = '';
  el.dataset[`bi${attr === 'text' ? 'Text' : attr.replace(/(^|-)([a-z])/g, (_, __, c) => c.toUpperCase())}`] = JSON.stringify(s);
  apply(el, attr, s);
}
function apply(el, attr, s) { if (attr === 'text') el.textContent = s[state.lang]; else el.setAttribute(attr, s[state.lang]); }
/** Switches the page's language: the stylesheet shows its spans, the kept attributes follow. */
export async function setLang(lang) {
  state.lang = lang;
  document.documentElement.lang = lang;
  document.documentElement.dataset.lang = lang;
  for (const el of document.querySelectorAll('[data-bi]')) {
    for (const [k, v] of Object.entries(el.dataset)) {
      if (!k.startsWith('bi') || k === 'bi') continue;
      const name = k.slice(2);
      apply(el, name === 'Text' ? 'text' : name.replace(/[A-Z]/g, (c, i) => (i ? '-' : '') + c.toLowerCase()), JSON.parse(v));
    }
  }
  try { localStorage.setItem('mlpscope-lang', lang); } catch { /* private mode */ }
  await emit('lang', lang);
  writeUrl();
}

// ---------------------------------------------------------------- cards that say when they failed
// A live card shows the numbers of the sentence that ran last. While it recomputes it is marked
// busy; when its work on a new sentence (or model) fails it keeps the old content greyed out under
// a message saying so, in both languages, and `data-run` tells which run its numbers belong to.
/** Runs `work` for a card: busy while it runs, then 'ok' with the run it belongs to, or 'failed'
 *  with the reason shown on the card. Returns work's result (undefined when it failed). */
export async function guard(card, work, runId = state.runId) {
  // a card with a text of its own (data-own-text) does not follow the reader's sentence
  if (card.hasAttribute('data-own-text')) runId = null;
  const stale = () => runId !== null && runId !== state.runId;
  card.dataset.state = 'busy';
  let box = card.querySelector(':scope > .card-error');
  try {
    const r = await work();
    if (stale()) return r; // a newer run took over: it marks the card
    card.dataset.state = 'ok';
    card.dataset.run = runId === null ? 'own' : String(runId);
    box?.remove();
    return r;
  } catch (err) {
    if (stale()) return undefined;
    card.dataset.state = 'failed';
    if (!box) { box = document.createElement('p'); box.className = 'card-error'; box.setAttribute('role', 'alert'); card.prepend(box); }
    const why = String(err?.message ?? err).replace(/^E_[A-Z_]+: /, '');
    box.innerHTML = biHtml({ zh: `这张卡片没能用新的句子更新（${escapeHtml(why)}）：下面灰色的是上一次的结果。`,
      en: `This card could not be updated for the new sentence (${escapeHtml(why)}): what is greyed out below is the previous result.` });
    report(err);
    return undefined;
  }
}
/** Marks a card as holding nothing for the current run, with a note why (a limit, no model) or,
 *  without `s`, as emptied for the new sentence (a result that belonged to the old one). Outside a
 *  guard only: inside one, the card is still busy until its work is done (use cardNote). */
export function skipCard(card, s) {
  card.dataset.state = 'ok';
  card.dataset.run = String(state.runId);
  card.querySelector(':scope > .card-error')?.remove();
  cardNote(card, s);
}
/** Sets (or, without `s`, removes) a card's note about its current content (a limit it keeps to),
 *  leaving its state alone: a card inside guard() stays busy until all its work is done. */
export function cardNote(card, s) {
  let box = card.querySelector(':scope > .card-note');
  if (!s) { box?.remove(); return; }
  if (!box) { box = document.createElement('p'); box.className = 'note card-note'; card.prepend(box); }
  box.innerHTML = bi(s);
}

// ---------------------------------------------------------------- the reader's text, run once for everyone
const runHooks = new Set();
/** A section that reads a hook on the reader's text asks for it here: it comes with the run's own
 *  pass (run.hooks) instead of a second one. `fn()` returns hook names (or none). */
export function wantHooks(fn) { runHooks.add(fn); }
/** How many tokens of the reader's text run: the model's context, at most. */
export const contextLimit = () => state.model?.contextLength ?? 512;

let textRuns = 0;
/** Tokenizes and runs the reader's text once (statistics, the last token's logits and every
 *  section's hooks), then tells the sections ('run'). A text longer than the context runs cut to
 *  it (state.cut says how long it was); an empty one is refused with a message. When a later call
 *  starts before this one is done, this one changes nothing and resolves { ok: false, stale: true }
 *  (a language switch's example run never lands on top of the reader's own sentence). */
export async function runText(text) {
  const seq = ++textRuns; // the latest request wins: an earlier one still on its way changes nothing
  const m = state.model;
  if (!m?.tokenizer) return { ok: false, why: { zh: '这个模型没有分词器。', en: 'This model has no tokenizer.' } };
  const all = await m.tokenizer.encode(text);
  const ids = all.slice(0, contextLimit());
  if (!ids.length) return { ok: false, why: { zh: '请输入一些文字。', en: 'Please type some text.' } };
  const pieces = await m.tokenizer.pieces(ids); // one call: characters split over tokens are shown whole
  const hooks = [...new Set([...runHooks].flatMap((f) => f() ?? []))];
  let run;
  try { run = await m.forward(ids, { topK: 8, logits: 'last', hooks }); } catch (err) {
    if (seq !== textRuns) return { ok: false, stale: true };
    // no card may go on showing the previous sentence as if it were this one
    for (const card of document.querySelectorAll('[data-run]:not([data-own-text])')) await guard(card, () => { throw err; });
    throw err;
  }
  if (seq !== textRuns) return { ok: false, stale: true };
  state.text = text;
  state.ids = ids; state.pieces = pieces; state.run = run;
  state.cut = all.length > ids.length ? all.length : 0;
  const runId = ++state.runId;
  await emit('run', runId);
  writeUrl();
  document.body.dataset.runs = String(Number(document.body.dataset.runs ?? 0) + 1);
  // every section has answered this run: with no newer run started, the page shows this text
  document.body.dataset.settled = String(runId);
  return { ok: true };
}

// ---------------------------------------------------------------- token pieces
/** a token piece as a label: "北 (1/3)" for a share of a character split over tokens */
export function pieceLabel(p) { return p.of ? `${p.text} (${p.part}/${p.of})` : p.text; }
/** a piece for a crowded axis: a split character once, on the token where it starts ("·" after) */
export function pieceShort(p) { return p.part > 1 ? [...p.text].slice(1).join('') || '·' : p.text; }
/** a piece as HTML with its whitespace visible: each space a dotted space (still a space to copy
 *  and to screen readers), a newline ⏎, a tab → */
export function pieceHtml(s) {
  return escapeHtml(s).replace(/ /g, '<span class="ws"> </span>').replace(/\n/g, '<span class="ws">⏎</span>').replace(/\t/g, '<span class="ws">→</span>');
}
/** whether a token's text can stand in a list of words: not a lone byte (\xNN), not a control or
 *  replacement character, not only whitespace, not a control token such as <|endoftext|> */
export function readableToken(text) {
  return !!text && !/\\x[0-9A-F]{2}|[\uFFFD\u0000-\u0008\u000B-\u001F\u007F]/.test(text) && /\S/.test(text) && !/^<\|[^|<>]*\|>$|^<\/?s>$|^<unk>$|^<pad>$/.test(text);
}
/** The probe sentences of the page's language (all of them when none is in it; the first 24 for a
 *  big model, each being a pass): where a neuron's own scale, its strongest activation, is read. */
export function probeTextsInLang() {
  const all = state.probes ?? [], inLang = all.filter((p) => p.lang === state.lang);
  return (inLang.length ? inLang : all).map((p) => p.text).slice(0, state.info?.config.hidden_size >= 512 ? 24 : 200);
}
/** a text with its line breaks shown as ⏎ */
export const nl = (t) => escapeHtml(t).replace(/\n/g, '⏎');
/** Each token on its own as text (a lone byte of a character as \xNN, never "�"), for a whole
 *  render in one call to the model's worker. */
export async function tokenTexts(ids) { return ids.length ? state.model.tokenizer.tokenTexts(Array.from(ids)) : []; }

// ---------------------------------------------------------------- checks every section uses
/** Whether a neuron-number input holds an integer in [0, intermediate_size); if not, says so in
 *  `msg` (the input marked invalid) and returns false. A valid value clears a previous message. */
export function checkNeuron(input, msg) {
  const I = state.info.config.intermediate_size, v = input.value.trim(), j = Number(v);
  const ok = v !== '' && Number.isInteger(j) && j >= 0 && j < I;
  input.setAttribute('aria-invalid', String(!ok));
  if (!ok) { setText(msg, { zh: `神经元编号要在 0 到 ${I - 1} 之间（这一层有 ${I} 个神经元），“${v}”不行。`, en: `A neuron number must be between 0 and ${I - 1} (this layer has ${I} neurons); "${v}" is not.` }); msg.dataset.invalid = '1'; }
  else if (msg.dataset.invalid) { msg.textContent = ''; delete msg.dataset.invalid; }
  return ok;
}
/** the languages the loaded model was trained on (a weight set that does not say: English) */
export const modelLangs = () => state.entry?.languages ?? ['en'];
/** the mean over tokens of |mlp_out| / |resid_post| per layer, from a run's statistics */
export function layerRatios(run = state.run) {
  return run.stats.mlp_ratio.map((r) => r.reduce((a, b) => a + b, 0) / r.length);
}
/** a mixer's name */
export const mixerName = (kind) => (kind === 'linear' || kind === 'deltanet' ? { zh: 'DeltaNet', en: 'DeltaNet' } : kind === 'sliding' ? { zh: '局部注意力', en: 'local attention' } : { zh: '注意力', en: 'attention' });
/** Fills a <select> with the loaded model's layers ("3 · DeltaNet"); the chosen layer stays when the
 *  new model has it, else `fallback` is chosen. Returns the select. */
export function fillLayerPicker(s, fallback = 0) {
  const n = state.info.config.num_hidden_layers, v = s.value;
  s.innerHTML = '';
  for (let l = 0; l < n; l++) {
    const o = document.createElement('option');
    o.value = String(l);
    const mx = mixerName(state.info.mixers[l]);
    setBi(o, { zh: `${l} · ${mx.zh}`, en: `${l} · ${mx.en}` });
    s.append(o);
  }
  s.value = v !== '' && Number(v) < n ? v : String(fallback);
  return s;
}

// ---------------------------------------------------------------- the page's state in its URL
// Sections own their keys: `urlKey(name, get)` registers how to read a key's current value; the
// page writes all of them (read once at start: `urlStart`). A view can be shared as a link.
const urlKeys = new Map();
export const urlStart = new URLSearchParams(location.search);
export function urlKey(name, get) { urlKeys.set(name, get); }
export function writeUrl() {
  if (!state.entry) return;
  const q = new URLSearchParams();
  q.set('model', state.entry.id === 'url' ? 'url' : state.entry.id);
  if (state.entry.id === 'url') q.set('url', state.entry.url);
  const hub = urlStart.get('hub'); // a mirror for the hub model stays
  if (hub) q.set('hub', hub);
  q.set('lang', state.lang);
  if (state.text !== state.defaultText) q.set('text', state.text);
  for (const [k, get] of urlKeys) { const v = get(); if (v != null && v !== '') q.set(k, v); }
  history.replaceState(null, '', `${location.pathname}?${q}`);
}
