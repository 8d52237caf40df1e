// Switching a neuron (or a whole MLP) off, and how the prediction moves: the probabilities before
// and after, the change in words, where in the sentence it mattered (tap a token for its numbers),
// and which neurons are worth switching off here (measured, not guessed).
import { klDivergence, topTokens } from 'mlpscope';
import { $, L, checkNeuron, escapeHtml, state, tokText } from '../core.js';
import { shadeTokens } from './neurons.js';

export async function renderKnockoutBefore() {
  const top = topOf(state.run.logits, 5);
  $('ko-before').innerHTML = await tokenList(top);
  if (!state.koChosen) { // default: the most active neuron of the last layer at the last token
    const st = state.run.stats, l = st.layers - 1;
    $('ko-layer').value = String(l);
    $('ko-neuron').value = st.top_idx[l][(st.T - 1) * st.topK];
  }
  $('ko-after').innerHTML = '';
  delete $('ko-kl').dataset.kl;
  $('ko-where').hidden = true;
  state.ko = null; state.koRead = null; state.koSuggest = null;
  renderKoText();
}
/** the k most likely next tokens over the real vocabulary, with their probabilities */
export function topOf(logits, k) {
  const n = state.info.tokenizer.vocab_size || logits.length;
  return topTokens(logits.subarray(0, n), k).map((t) => ({ id: t.id, p: t.prob }));
}
/** softmax over the real vocabulary (padded rows left out) */
function probs(logits) {
  const n = state.info.tokenizer.vocab_size || logits.length, p = new Float64Array(n);
  let mx = -Infinity, z = 0;
  for (let i = 0; i < n; i++) if (logits[i] > mx) mx = logits[i];
  for (let i = 0; i < n; i++) { p[i] = Math.exp(logits[i] - mx); z += p[i]; }
  for (let i = 0; i < n; i++) p[i] /= z;
  return p;
}
const pct = (p) => `${(100 * p).toFixed(1)}%`;
/** a list of tokens with their probability; with `before`, also the change from it (percentage points) */
export async function tokenList(top, before) {
  const out = [];
  for (const t of top) {
    const d = before ? 100 * (t.p - before[t.id]) : null;
    const delta = d === null ? '' : ` <span class="delta">(${d >= 0 ? '+' : '−'}${Math.abs(d).toFixed(1)})</span>`;
    out.push(`<li data-id="${t.id}" data-p="${t.p}"${before ? ` data-before="${before[t.id]}"` : ''}>${escapeHtml(JSON.stringify(await tokText(t.id)))} · ${pct(t.p)}${delta}</li>`);
  }
  return out.join('');
}
/** what a KL divergence means, in words (the numbers beside it say exactly) */
export function klWords(kl) {
  if (kl < 1e-4) return L('几乎看不出变化', 'no visible change');
  if (kl < 1e-2) return L('轻轻推了一下', 'a slight nudge');
  if (kl < 0.1) return L('看得出来、但不大的变化', 'a noticeable but modest change');
  if (kl < 1) return L('很大的变化', 'a large change');
  return L('几乎换了一个预测', 'almost a different prediction');
}
$('ko-layer').addEventListener('change', () => { state.koChosen = true; });
$('ko-neuron').addEventListener('change', () => { state.koChosen = true; });
$('ko-whole').addEventListener('change', () => { $('ko-neuron').disabled = $('ko-whole').checked; });
// the per-position view needs every position's logits twice; past this many floats (32 MB each:
// Qwen3.5's 248,320-token vocabulary × 33 tokens) only the last position is compared
export const KO_ALL_LIMIT = 8 * 1024 * 1024;
$('ko-btn').addEventListener('click', () => knockOut());
async function knockOut() {
  const m = state.model, ids = state.ids, c = state.info.config, T = ids.length;
  const l = Number($('ko-layer').value), whole = $('ko-whole').checked;
  if (!whole && !checkNeuron($('ko-neuron'), $('ko-kl'))) { $('ko-after').innerHTML = ''; state.ko = null; return; }
  const j = whole ? -1 : Number($('ko-neuron').value);
  const neurons = whole ? Array.from({ length: c.intermediate_size }, (_, i) => i) : [j];
  const all = c.vocab_size * T <= KO_ALL_LIMIT;
  const logits = all ? 'all' : 'last';
  $('ko-kl').textContent = L('计算中…', 'Computing…');
  $('ko-after').innerHTML = '';
  const base = all ? (await m.forward(ids, { stats: false, logits })).logits : state.run.logits;
  const r = await m.forward(ids, { stats: false, logits, interventions: [{ layer: l, hook: 'mlp.hook_post', neurons, scale: 0 }] });
  const V = r.logits.length / (all ? T : 1);
  const row = (x, t) => x.subarray(t * V, (t + 1) * V);
  const last = (x) => row(x, all ? T - 1 : 0);
  const pb = probs(last(base)), pa = probs(last(r.logits));
  const after = await tokenList(topOf(last(r.logits), 5), pb);
  let big = 0; // the token whose probability moved most
  for (let i = 1; i < pb.length; i++) if (Math.abs(pa[i] - pb[i]) > Math.abs(pa[big] - pb[big])) big = i;
  const perPos = all ? Array.from({ length: T }, (_, t) => klDivergence(row(base, t), row(r.logits, t))) : null;
  const kl = all ? perPos[T - 1] : klDivergence(base, r.logits);
  state.ko = { l, j, kl, perPos, peak: null, moved: { tok: JSON.stringify(await tokText(big)), before: pb[big], after: pa[big] } };
  if (perPos) {
    let tp = 0;
    for (let t = 1; t < T; t++) if (perPos[t] > perPos[tp]) tp = t;
    const top1 = (x) => { let b = 0; for (let i = 1; i < V; i++) if (x[i] > x[b]) b = i; return b; };
    const dec = async (id) => JSON.stringify(await tokText(id));
    state.ko.peak = { t: tp, kl: perPos[tp], at: await dec(ids[tp]), before: await dec(top1(row(base, tp))), after: await dec(top1(row(r.logits, tp))) };
    // the sentence's own next token at each position: its probability before and after
    const next = ids.slice(1).map((id, t) => ({ id, before: probs(row(base, t))[id], after: probs(row(r.logits, t))[id] }));
    let drop = 0;
    for (let t = 1; t < next.length; t++) if (next[t].after - next[t].before < next[drop].after - next[drop].before) drop = t;
    state.ko.next = next;
    state.ko.drop = next.length ? { t: drop, at: await dec(ids[drop]), tok: await dec(ids[drop + 1]), ...next[drop] } : null;
    await shadeTokens($('ko-tokens'), ids, perPos);
    const chips = $('ko-tokens').querySelectorAll('.tok');
    chips.forEach((el, t) => {
      el.dataset.t = t; el.tabIndex = 0;
      if (next[t]) { el.dataset.pBefore = next[t].before; el.dataset.pAfter = next[t].after; }
    });
    $('ko-tokens').dataset.kl = JSON.stringify(perPos);
  }
  $('ko-where').hidden = !perPos;
  state.koRead = null;
  renderKoText();
  $('ko-kl').dataset.kl = kl;
  $('ko-after').innerHTML = after; // last: tests wait for it
}
/** tap (or focus and Enter) a token of "where it mattered": its KL and the next token's probability */
async function readToken(el) {
  const k = state.ko, t = Number(el.dataset.t);
  if (!k?.perPos || !Number.isInteger(t)) return;
  const n = k.next[t];
  state.koRead = { t, at: JSON.stringify(await tokText(state.ids[t])), next: n ? { ...n, tok: JSON.stringify(await tokText(n.id)) } : null };
  renderKoRead();
}
function renderKoRead() {
  const r = state.koRead, k = state.ko;
  if (!r || !k?.perPos) { $('ko-read').textContent = ''; return; }
  const n = r.next, kl = k.perPos[r.t];
  const tail = n ? L(`句子里接下来的 ${n.tok} 的概率：${pct(n.before)} → ${pct(n.after)}。`, `the sentence's next token ${n.tok}: ${pct(n.before)} → ${pct(n.after)}.`)
    : L('这是最后一个 token，句子里没有下一个。', 'this is the last token; the sentence has no next one.');
  $('ko-read').textContent = L(`${r.at}（第 ${r.t} 个 token）之后：KL = ${kl.toExponential(2)} nats（${klWords(kl)}）；${tail}`,
    `After ${r.at} (token ${r.t}): KL = ${kl.toExponential(2)} nats (${klWords(kl)}); ${tail}`);
}
$('ko-tokens').addEventListener('click', (e) => { const el = e.target.closest('.tok'); if (el) readToken(el); });
$('ko-tokens').addEventListener('keydown', (e) => { const el = e.target.closest('.tok'); if (el && (e.key === 'Enter' || e.key === ' ')) { e.preventDefault(); readToken(el); } });

export function renderKoText() {
  renderKoRead();
  renderSuggest();
  const k = state.ko;
  const what = !k ? '' : k.j < 0 ? L(`第 ${k.l} 层的整个 MLP`, `the whole MLP of layer ${k.l}`) : L(`第 ${k.l} 层的神经元 ${k.j}`, `neuron ${k.j} of layer ${k.l}`);
  const mv = k?.moved;
  $('ko-kl').textContent = !k ? '' : L(`关掉${what}后，下一个 token 的分布变了 KL = ${k.kl.toExponential(2)} nats：${klWords(k.kl)}。变化最大的单个 token 是 ${mv.tok}：${pct(mv.before)} → ${pct(mv.after)}。`,
    `With ${what} switched off, the next-token distribution moved by KL = ${k.kl.toExponential(2)} nats: ${klWords(k.kl)}. The token whose probability moved most is ${mv.tok}: ${pct(mv.before)} → ${pct(mv.after)}.`);
  const p = k?.peak;
  $('ko-peak').textContent = !p ? '' : p.before === p.after
    ? L(`变化最大的是 ${p.at}（第 ${p.t} 个 token）之后的预测：KL = ${p.kl.toExponential(2)} nats，最可能的下一个 token 仍是 ${p.before}。`,
      `The biggest change is in the prediction after ${p.at} (token ${p.t}): KL = ${p.kl.toExponential(2)} nats; the most likely next token is still ${p.before}.`)
    : L(`变化最大的是 ${p.at}（第 ${p.t} 个 token）之后的预测：KL = ${p.kl.toExponential(2)} nats，最可能的下一个 token 从 ${p.before} 变成 ${p.after}。`,
      `The biggest change is in the prediction after ${p.at} (token ${p.t}): KL = ${p.kl.toExponential(2)} nats; the most likely next token went from ${p.before} to ${p.after}.`);
  const d = k?.drop;
  $('ko-drop').textContent = !d ? '' : d.after >= d.before
    ? L('句子里的每个下一个 token 的概率都没有下降。', "No token of the sentence became less likely as the next one.")
    : L(`句子自己的下一个 token 里，损失最大的是 ${d.at} 之后的 ${d.tok}：${pct(d.before)} → ${pct(d.after)}。点一个 token 看它的数字。`,
      `Of the sentence's own next tokens, the one that lost most is ${d.tok} after ${d.at}: ${pct(d.before)} → ${pct(d.after)}. Tap a token for its numbers.`);
}

// ---------------------------------------------------------------- neurons worth switching off
/** candidates: the strongest |activation| neurons of each layer at the last token (the run's
 *  statistics hold them); each one is switched off for real and ranked by the KL it causes */
$('ko-suggest').addEventListener('click', () => suggest());
async function suggest() {
  const m = state.model, ids = state.ids, st = state.run.stats, T = st.T;
  const per = state.info.config.hidden_size >= 512 ? 1 : 3; // a big model: one pass per layer
  const cand = [];
  for (let l = 0; l < st.layers; l++) for (let k = 0; k < Math.min(per, st.topK); k++) cand.push({ l, j: st.top_idx[l][(T - 1) * st.topK + k] });
  const base = state.run.logits, runId = state.run;
  for (let i = 0; i < cand.length; i++) {
    state.koSuggest = { done: i, n: cand.length, per, best: null };
    renderSuggest();
    const r = await m.forward(ids, { stats: false, logits: 'last', interventions: [{ layer: cand[i].l, hook: 'mlp.hook_post', neurons: [cand[i].j], scale: 0 }] });
    if (state.run !== runId) return; // the sentence changed meanwhile: this list would be stale
    cand[i].kl = klDivergence(base, r.logits);
  }
  cand.sort((a, b) => b.kl - a.kl);
  state.koSuggest = { done: cand.length, n: cand.length, per, best: cand.slice(0, 5) };
  renderSuggest();
}
function renderSuggest() {
  const s = state.koSuggest;
  if (!s) { $('ko-suggest-note').textContent = ''; $('ko-suggest-list').innerHTML = ''; return; }
  if (!s.best) { $('ko-suggest-note').textContent = L(`计算中… 已试 ${s.done} / ${s.n} 个候选`, `Computing… ${s.done} of ${s.n} candidates tried`); $('ko-suggest-list').innerHTML = ''; return; }
  $('ko-suggest-note').textContent = L(`试了 ${s.n} 个候选（每层在最后一个 token 上 |激活| 最大的 ${s.per} 个神经元），每个都真的关掉跑了一遍。对最后一个 token 的预测影响最大的是：`,
    `Tried ${s.n} candidates (the ${s.per} neuron${s.per > 1 ? 's' : ''} of each layer with the largest |activation| at the last token), each one switched off in a real pass. The ones that move the last prediction most:`);
  $('ko-suggest-list').innerHTML = s.best.map((c) => `<li><button type="button" data-layer="${c.l}" data-neuron="${c.j}" data-kl="${c.kl}">${L(`第 ${c.l} 层 · 神经元 ${c.j}`, `layer ${c.l} · neuron ${c.j}`)} · KL ${c.kl.toExponential(2)} · ${klWords(c.kl)}</button></li>`).join('');
}
$('ko-suggest-list').addEventListener('click', (e) => {
  const b = e.target.closest('button');
  if (!b) return;
  $('ko-whole').checked = false; $('ko-neuron').disabled = false;
  $('ko-layer').value = b.dataset.layer; $('ko-neuron').value = b.dataset.neuron;
  state.koChosen = true;
  knockOut();
});
