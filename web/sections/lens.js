// The logit lens: what the stream predicts after each mixer and after each MLP.
import { $, L, nl, state, tokText } from '../core.js';

// ---------------------------------------------------------------- logit lens: after the mixer, after the MLP
export async function renderLens() {
  const m = state.model, L_ = state.info.config.num_hidden_layers, T = state.ids.length;
  if (!m.tokenizer) return;
  // small models: every position, to start at the token where the most MLPs change the top guess
  // (later ones win ties); big ones: the chosen position only
  const all = !state.lensChosen && state.info.config.hidden_size < 512;
  const positions = all ? Array.from({ length: T }, (_, t) => t) : [Number($('lens-token').value)];
  const r = await m.forward(state.ids, { stats: false, logits: 'none', logitLens: { positions, k: 1, afterMixer: true } });
  const changed = (e) => e.layers.filter((x, l) => x[0].id !== e.afterMixer[l][0].id).length;
  let at = r.logitLens[0];
  for (const e of r.logitLens) if (changed(e) >= changed(at)) at = e;
  $('lens-token').value = String(at.position);
  const cell = async (x) => ({ id: x[0].id, p: x[0].prob, text: await tokText(x[0].id) });
  const rows = [];
  for (let l = 0; l < L_; l++) rows.push({ l, mid: await cell(at.afterMixer[l]), post: await cell(at.layers[l]) });
  state.lens = { t: at.position, rows };
  state.dp = null;
  renderLensTable();
  // who wrote the final prediction at that token: one term per part of the residual stream
  const d = await m.decomposePrediction(state.ids, { position: at.position, token: rows.at(-1).post.id });
  state.dp = { ...d, text: rows.at(-1).post.text };
  renderDp();
}

const fmt = (v) => (v >= 0 ? '+' : '−') + Math.abs(v).toFixed(2);
export function renderDp() {
  const d = state.dp;
  if (!d) { $('dp-table').innerHTML = ''; $('dp-note').textContent = ''; return; }
  const max = Math.max(...d.parts.map((q) => Math.abs(q.value)), 1e-9);
  const bar = (q, cls) => {
    const w = (50 * Math.abs(q.value)) / max;
    return `<td class="b"><div class="dp-track"><span class="dp-bar ${cls}" style="${q.value >= 0 ? `left:50%` : `right:50%`};width:${w.toFixed(2)}%"></span></div></td><td class="v">${fmt(q.value)}</td>`;
  };
  const emb = d.parts[0], layers = [];
  for (let i = 1; i < d.parts.length; i += 2) layers.push({ l: d.parts[i].layer, mixer: d.parts[i], mlp: d.parts[i + 1] });
  const mixName = (q) => (q.kind === 'deltanet' ? 'DeltaNet' : L('注意力', 'attention'));
  $('dp-table').innerHTML = `<tr><th>${L('层', 'layer')}</th><th colspan="2">${L('混合器', 'mixer')}</th><th colspan="2">MLP</th></tr>` +
    `<tr data-part="embed" data-value="${emb.value}"><td>${L('词嵌入', 'embedding')}</td>${bar(emb, 'embed')}<td></td><td></td></tr>` +
    layers.map(({ l, mixer, mlp }) => `<tr data-layer="${l}" data-mixer="${mixer.value}" data-mlp="${mlp.value}"><td>${l} · ${mixName(mixer)}</td>${bar(mixer, 'mixer')}${bar(mlp, 'mlp')}</tr>`).join('');
  const sumOf = (kind) => d.parts.filter((q) => kind.includes(q.kind)).reduce((a, q) => a + q.value, 0);
  const mlps = sumOf(['mlp']), mixers = sumOf(['attention', 'deltanet']);
  const top = d.parts.slice(1).reduce((a, q) => (Math.abs(q.value) > Math.abs(a.value) ? q : a));
  const topName = top.kind === 'mlp' ? L(`第 ${top.layer} 层的 MLP`, `the MLP of layer ${top.layer}`) : L(`第 ${top.layer} 层的${mixName(top)}`, `the ${mixName(top)} of layer ${top.layer}`);
  $('dp-note').textContent = L(
    `预测 ${JSON.stringify(d.text)} 的 logit 为 ${d.logit.toFixed(2)}：所有 MLP 合计 ${fmt(mlps)}，所有混合器合计 ${fmt(mixers)}，词嵌入 ${fmt(emb.value)}（各部分之和 ${d.sum.toFixed(2)}）。单独最大的一笔来自${topName}（${fmt(top.value)}）。`,
    `The logit of ${JSON.stringify(d.text)} is ${d.logit.toFixed(2)}: all MLPs together ${fmt(mlps)}, all mixers ${fmt(mixers)}, the embedding ${fmt(emb.value)} (the parts sum to ${d.sum.toFixed(2)}). The largest single write comes from ${topName} (${fmt(top.value)}).`);
}
export function renderLensTable() {
  const s = state.lens;
  if (!s) return;
  const cell = (x) => `<code>${nl(JSON.stringify(x.text))}</code> · ${(100 * x.p).toFixed(1)}%`;
  $('lens-table').innerHTML = `<tr><th>${L('层', 'layer')}</th><th>${L('混合器之后', 'after the mixer')}</th><th>${L('MLP 之后', 'after the MLP')}</th></tr>` +
    s.rows.map(({ l, mid, post }) => `<tr data-layer="${l}" data-mid="${mid.id}" data-post="${post.id}" data-pmid="${mid.p}" data-ppost="${post.p}"${mid.id !== post.id ? ' class="mlp-changed"' : ''}><td>${l} · ${state.info.mixers[l] === 'linear' ? 'DeltaNet' : L('注意力', 'attention')}</td><td>${cell(mid)}</td><td>${cell(post)}</td></tr>`).join('');
  const changed = s.rows.filter((r) => r.mid.id !== r.post.id).map((r) => r.l), last = s.rows.at(-1).post;
  renderDp();
  $('lens-note').textContent = L(`在第 ${s.t} 个 token 之后，${changed.length ? `第 ${changed.join('、')} 层的 MLP 改变了首选 token` : '没有哪一层的 MLP 改变首选 token'}；模型最终预测 ${JSON.stringify(last.text)}（${(100 * last.p).toFixed(1)}%）。`,
    `After token ${s.t}, ${changed.length ? `the MLP of layer${changed.length > 1 ? 's' : ''} ${changed.join(', ')} changed the top guess` : 'no MLP changed the top guess'}; the model finally predicts ${JSON.stringify(last.text)} (${(100 * last.p).toFixed(1)}%).`);
}
$('lens-token').addEventListener('change', () => { state.lensChosen = true; renderLens(); });
