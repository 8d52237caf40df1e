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
  renderLensTable();
}
export function renderLensTable() {
  const s = state.lens;
  if (!s) return;
  const cell = (x) => `<code>${nl(JSON.stringify(x.text))}</code> · ${(100 * x.p).toFixed(1)}%`;
  $('lens-table').innerHTML = `<tr><th>${L('层', 'layer')}</th><th>${L('混合器之后', 'after the mixer')}</th><th>${L('MLP 之后', 'after the MLP')}</th></tr>` +
    s.rows.map(({ l, mid, post }) => `<tr data-layer="${l}" data-mid="${mid.id}" data-post="${post.id}" data-pmid="${mid.p}" data-ppost="${post.p}"${mid.id !== post.id ? ' class="mlp-changed"' : ''}><td>${l} · ${state.info.mixers[l] === 'linear' ? 'DeltaNet' : L('注意力', 'attention')}</td><td>${cell(mid)}</td><td>${cell(post)}</td></tr>`).join('');
  const changed = s.rows.filter((r) => r.mid.id !== r.post.id).map((r) => r.l), last = s.rows.at(-1).post;
  $('lens-note').textContent = L(`在第 ${s.t} 个 token 之后，${changed.length ? `第 ${changed.join('、')} 层的 MLP 改变了首选 token` : '没有哪一层的 MLP 改变首选 token'}；模型最终预测 ${JSON.stringify(last.text)}（${(100 * last.p).toFixed(1)}%）。`,
    `After token ${s.t}, ${changed.length ? `the MLP of layer${changed.length > 1 ? 's' : ''} ${changed.join(', ')} changed the top guess` : 'no MLP changed the top guess'}; the model finally predicts ${JSON.stringify(last.text)} (${(100 * last.p).toFixed(1)}%).`);
}
$('lens-token').addEventListener('change', () => { state.lensChosen = true; renderLens(); });
