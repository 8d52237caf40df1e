// Switching a neuron (or a whole MLP) off, and how the prediction moves.
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
  state.ko = null;
  renderKoText();
}
/** the k most likely next tokens over the real vocabulary, with their probabilities */
export function topOf(logits, k) {
  const n = state.info.tokenizer.vocab_size || logits.length;
  return topTokens(logits.subarray(0, n), k).map((t) => ({ id: t.id, p: t.prob }));
}
export async function tokenList(top) {
  const out = [];
  for (const t of top) out.push(`<li data-id="${t.id}" data-p="${t.p}">${escapeHtml(JSON.stringify(await tokText(t.id)))} · ${(100 * t.p).toFixed(1)}%</li>`);
  return out.join('');
}
$('ko-layer').addEventListener('change', () => { state.koChosen = true; });
$('ko-neuron').addEventListener('change', () => { state.koChosen = true; });
$('ko-whole').addEventListener('change', () => { $('ko-neuron').disabled = $('ko-whole').checked; });
// the per-position view needs every position's logits twice; past this many floats (32 MB each:
// Qwen3.5's 248,320-token vocabulary × 33 tokens) only the last position is compared
export const KO_ALL_LIMIT = 8 * 1024 * 1024;
$('ko-btn').addEventListener('click', async () => {
  const m = state.model, ids = state.ids, c = state.info.config, T = ids.length;
  const l = Number($('ko-layer').value), whole = $('ko-whole').checked;
  if (!whole && !checkNeuron($('ko-neuron'), $('ko-kl'))) { $('ko-after').innerHTML = ''; state.ko = null; return; }
  const j = whole ? -1 : Number($('ko-neuron').value);
  const neurons = whole ? Array.from({ length: c.intermediate_size }, (_, i) => i) : [j];
  const all = c.vocab_size * T <= KO_ALL_LIMIT;
  const logits = all ? 'all' : 'last';
  const base = all ? (await m.forward(ids, { stats: false, logits })).logits : state.run.logits;
  const r = await m.forward(ids, { stats: false, logits, interventions: [{ layer: l, hook: 'mlp.hook_post', neurons, scale: 0 }] });
  const V = r.logits.length / (all ? T : 1);
  const last = (x) => x.subarray((all ? T - 1 : 0) * V, (all ? T : 1) * V);
  const after = await tokenList(topOf(last(r.logits), 5));
  const perPos = all ? Array.from({ length: T }, (_, t) => klDivergence(base.subarray(t * V, (t + 1) * V), r.logits.subarray(t * V, (t + 1) * V))) : null;
  const kl = all ? perPos[T - 1] : klDivergence(base, r.logits);
  state.ko = { l, j, kl, perPos, peak: null };
  if (perPos) {
    let tp = 0;
    for (let t = 1; t < T; t++) if (perPos[t] > perPos[tp]) tp = t;
    const top1 = (x) => { let b = 0; for (let i = 1; i < V; i++) if (x[i] > x[b]) b = i; return b; };
    const bs = base.subarray(tp * V, (tp + 1) * V), ks = r.logits.subarray(tp * V, (tp + 1) * V);
    const dec = async (id) => JSON.stringify(await tokText(id));
    state.ko.peak = { t: tp, kl: perPos[tp], at: await dec(ids[tp]), before: await dec(top1(bs)), after: await dec(top1(ks)) };
    await shadeTokens($('ko-tokens'), ids, perPos);
    $('ko-tokens').dataset.kl = JSON.stringify(perPos);
  }
  $('ko-where').hidden = !perPos;
  renderKoText();
  $('ko-kl').dataset.kl = kl;
  $('ko-after').innerHTML = after; // last: tests wait for it
});
export function renderKoText() {
  const k = state.ko;
  const what = !k ? '' : k.j < 0 ? L(`第 ${k.l} 层的整个 MLP`, `the whole MLP of layer ${k.l}`) : L(`第 ${k.l} 层的神经元 ${k.j}`, `neuron ${k.j} of layer ${k.l}`);
  $('ko-kl').textContent = !k ? '' : L(`关掉${what}后，下一个 token 分布的 KL 变化 = ${k.kl.toExponential(2)} nats。`,
    `With ${what} switched off, the next-token distribution moved by KL = ${k.kl.toExponential(2)} nats.`);
  const p = k?.peak;
  $('ko-peak').textContent = !p ? '' : p.before === p.after
    ? L(`变化最大的是 ${p.at}（第 ${p.t} 个 token）之后的预测：KL = ${p.kl.toExponential(2)} nats，最可能的下一个 token 仍是 ${p.before}。`,
      `The biggest change is in the prediction after ${p.at} (token ${p.t}): KL = ${p.kl.toExponential(2)} nats; the most likely next token is still ${p.before}.`)
    : L(`变化最大的是 ${p.at}（第 ${p.t} 个 token）之后的预测：KL = ${p.kl.toExponential(2)} nats，最可能的下一个 token 从 ${p.before} 变成 ${p.after}。`,
      `The biggest change is in the prediction after ${p.at} (token ${p.t}): KL = ${p.kl.toExponential(2)} nats; the most likely next token went from ${p.before} to ${p.after}.`);
}
