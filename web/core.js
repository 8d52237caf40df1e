// The page's shared pieces: its state, the DOM and language helpers, token-piece labels.

export const $ = (id) => document.getElementById(id);
export const fmt = (x, d = 3) => (Number.isFinite(x) ? x.toFixed(d) : '–');
export const int = (n) => Number(n).toLocaleString('en-US');
export const silu = (z) => z / (1 + Math.exp(-z));
/** the sentence the page starts with, in the page's starting language */
export const DEFAULT_TEXTS = { en: 'I flew from Paris to Tokyo last week. The food was not bad at all.', zh: '我上周从巴黎飞到东京。饭菜一点也不好。' };
/** each feature card's sentence, per language */
export const PROBE_SENTENCES = {
  en: { city: 'I flew from Paris to Tokyo last week', negation: 'The food was not bad at all', code: 'Try this loop: for i in range(10):' },
  zh: { city: '我上周从巴黎飞到东京', negation: '饭菜一点也不好。我从不在星期一去北京', code: '试试这个循环：for i in range(10):' },
};
/** the languages the loaded model was trained on (a weight set that does not say: English) */
export const modelLangs = () => state.entry?.languages ?? ['en'];
export const FEATURE_NAMES_ZH = { city: '城市名', negation: '否定词', code: '代码' };
export const FEATURE_TITLES = { city: ['在城市名上激活', 'fires on city names'], negation: ['在否定词上激活', 'fires on negation'], code: ['在代码内部激活', 'fires inside code'] };

export const state = { model: null, entry: null, ids: [], text: DEFAULT_TEXTS.zh, defaultText: DEFAULT_TEXTS.zh, run: null, features: null, busy: Promise.resolve(), lang: 'zh' };
window.__mlpscope = state; // for tests and the curious
export const L = (zh, en) => (state.lang === 'zh' ? zh : en);
export const nl = (t) => escapeHtml(t).replace(/\n/g, '⏎');
export function checkNeuron(input, msg) {
  const I = state.info.config.intermediate_size, v = input.value.trim(), j = Number(v);
  const ok = v !== '' && Number.isInteger(j) && j >= 0 && j < I;
  input.setAttribute('aria-invalid', String(!ok));
  if (!ok) { msg.textContent = L(`神经元编号要在 0 到 ${I - 1} 之间（这一层有 ${I} 个神经元），“${v}”不行。`, `A neuron number must be between 0 and ${I - 1} (this layer has ${I} neurons); "${v}" is not.`); msg.dataset.invalid = '1'; }
  else if (msg.dataset.invalid) { msg.textContent = ''; delete msg.dataset.invalid; }
  return ok;
}
/** a token piece as a label: "北 (1/3)" for a share of a character split over tokens */
export function pieceLabel(p) { return p.of ? `${p.text} (${p.part}/${p.of})` : p.text; }
/** a piece for a crowded axis: a split character once, on the token where it starts ("·" after) */
export function pieceShort(p) { return p.part > 1 ? [...p.text].slice(1).join('') || '·' : p.text; }
/** one token on its own as text: a lone byte of a character as \xNN, never "�" */
export async function tokText(id) { return (await state.model.tokenizer.pieces([id]))[0].text; }
/** a token piece as HTML with its whitespace visible: each space a dotted space (still a space to
 *  copy and to screen readers), a newline ⏎, a tab → */
export function pieceHtml(s) {
  return escapeHtml(s).replace(/ /g, '<span class="ws"> </span>').replace(/\n/g, '<span class="ws">⏎</span>').replace(/\t/g, '<span class="ws">→</span>');
}
export function escapeHtml(s) { return String(s).replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' }[c])); }

// ---------------------------------------------------------------- the page's state in its URL
/** model, language, sentence, layer of the per-token chart and the neuron card's neuron (and the
 *  hub mirror, `hub`): a view can be shared as a link (read once at start) */
export function writeUrl() {
  if (!state.entry) return;
  const q = new URLSearchParams();
  q.set('model', state.entry.id === 'url' ? 'url' : state.entry.id);
  if (state.entry.id === 'url') q.set('url', state.entry.url);
  const hub = new URLSearchParams(location.search).get('hub'); // a mirror for the hub model stays
  if (hub) q.set('hub', hub);
  q.set('lang', state.lang);
  if (state.text !== state.defaultText) q.set('text', state.text);
  q.set('layer', $('corr-layer').value);
  if (state.topActs) q.set('neuron', `${state.topActs.l}:${state.topActs.j}:${state.topActs.sign}`);
  history.replaceState(null, '', `${location.pathname}?${q}`);
}
