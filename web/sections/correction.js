// <section id="correction">: the MLP writes a small correction. Per token of a chosen layer the
// MLP's write against the layer's output; the MLP's share of every layer's output (bars on a
// 0-100% axis, with words computed from them); the logit lens after each mixer and each MLP; and
// who wrote the prediction (the final logit split into the embedding, every mixer and every MLP).
import { $, arrowSteps, bi, biSvg, chartWidth, escapeHtml, fillLayerPicker, guard, layerRatios, mixerName, nl, on, pieceLabel, pieceShort, setText, cardNote, state, tokenTexts, urlKey, urlStart, writeUrl } from '../core.js';

/** the lens looks at most this many positions in one pass (the engine's limit, the last ones) */
export const LENS_MAX = 64;
const my = { corrLayerSet: false, lensChosen: false, lens: null, dp: null };

export function mount() {
  urlKey('layer', () => $('corr-layer').value);
  on('model', fillPickers);
  on('unload', () => { my.lens = null; my.dp = null; for (const id of ['bars', 'layer-chart', 'lens-table', 'dp-table']) $(id).innerHTML = ''; });
  on('run', async () => {
    await guard($('corr-chart-card'), async () => { renderBars(); renderLayerChart(); });
    fillLensTokens();
    my.lensChosen = false;
    await renderLens();
  });
  $('corr-layer').addEventListener('change', () => { renderLayerChart(); writeUrl(); });
  $('lens-token').addEventListener('change', () => { my.lensChosen = true; renderLens(); });
  arrowSteps($('layer-chart').parentElement, (d) => {
    const T = state.run?.stats.T, t = Number($('layer-readout').dataset.t);
    if (T && my.showToken) my.showToken(Math.max(0, Math.min(T - 1, t + d)));
  });
}

function fillPickers() {
  const c = state.info.config, s = fillLayerPicker($('corr-layer'));
  if (!my.corrLayerSet) { // a shared link's layer: the first model only
    const raw = urlStart.get('layer'), want = raw == null || raw === '' ? NaN : Number(raw);
    s.value = String(Number.isInteger(want) && want >= 0 && want < c.num_hidden_layers ? want : Math.floor(c.num_hidden_layers / 2));
    my.corrLayerSet = true;
  }
}

/** the words under the all-layers chart, computed from the loaded model's ratios (thresholds stated in the text) */
export function barsSummary(ratios, { random = false } = {}) {
  const pct = (r) => `${(100 * r).toFixed(0)}%`, n = ratios.length;
  const small = ratios.filter((r) => r < 0.25).length, large = ratios.map((r, l) => [r, l]).filter(([r]) => r > 0.5), mid = n - small - large.length;
  const sorted = [...ratios].sort((x, y) => x - y), median = sorted[Math.floor((n - 1) / 2)];
  const ls = large.map(([, l]) => l);
  const s = { zh: `这个模型的 ${n} 层里：${small} 层的 MLP 写入不到该层输出长度的 25%，${mid} 层在 25%–50% 之间，${large.length} 层超过一半${large.length ? `（第 ${ls.join('、')} 层）` : ''}；中位数 ${pct(median)}。`,
    en: `Of ${n} layers, ${small} write under 25% of the layer's output length, ${mid} between 25% and 50%, ${large.length} over half${large.length ? ` (layer${large.length > 1 ? 's' : ''} ${ls.join(ls.length === 2 ? ' and ' : ', ')})` : ''}; median ${pct(median)}.` };
  if (ratios[0] > 0.5) {
    s.zh += ' 第 0 层与众不同：它读到的残差流只有很短的嵌入向量，所以 MLP 写入的和它一样大，更像嵌入的第二部分。';
    s.en += ' Layer 0 is different: the stream it reads is only the short embedding, so its MLP writes about as much, more a second half of the embedding than a correction.';
  }
  // the top layers: in trained models the last MLPs often write more again (they turn the stream
  // into the next token's logits)
  const top = ratios.slice(-2), mids = ratios.slice(1, -2);
  if (!random && mids.length >= 3 && Math.max(...top) > 1.5 * Math.max(...[...mids].sort((x, y) => x - y).slice(0, Math.ceil(mids.length / 2)))) {
    const t = ratios.length - 1;
    s.zh += ` 最后几层又升高（第 ${t - 1} 层 ${pct(ratios[t - 1])}、第 ${t} 层 ${pct(ratios[t])}）：靠近输出的 MLP 把残差流改写成预测，写得更多。`;
    s.en += ` The last layers rise again (layer ${t - 1} ${pct(ratios[t - 1])}, layer ${t} ${pct(ratios[t])}): near the output, MLPs turn the stream into the prediction and write more.`;
  }
  if (random) {
    // random weights learned nothing: whatever the bars show is the initialisation, not the lesson
    s.zh += ' 这个模型的权重是随机的，没有训练过：这些长条只反映随机初始化下各部分写入的大小，既不支持也不反驳课文的说法。';
    s.en += ' This model\'s weights are random, never trained: the bars only show how much each part writes at random initialisation, which neither supports nor contradicts the lesson.';
    return s;
  }
  const holds = median < 0.5 && large.length <= Math.max(1, Math.floor(n / 4));
  s.zh += holds ? ' 大多数层是课文说的“小修正”：预测来自许多次写入之和。' : ' 这个小模型的图景和课文不完全一样：课文说的是 Qwen3.5-0.8B 这样更深的模型；这里的长条如实显示当前模型的数字。';
  s.en += holds ? ' Most layers show the lesson\'s small correction: the prediction is the sum of many writes.' : ' This small model does not fully show the lesson\'s picture, which is about deeper models such as Qwen3.5-0.8B; the bars show the loaded model as it is.';
  return s;
}

function renderBars() {
  const ratios = layerRatios(), mixers = state.info.mixers;
  setText($('bars-note'), barsSummary(ratios, { random: state.entry?.kind === 'random' }));
  const kinds = [...new Set(mixers)];
  const layerKind = { linear: { zh: '线性注意力（Gated DeltaNet）层', en: 'linear-attention (Gated DeltaNet) layer' }, sliding: { zh: '滑动窗口（局部）注意力层', en: 'sliding-window (local) attention layer' }, full: { zh: '全量注意力层', en: 'full-attention layer' } };
  $('bars-legend').innerHTML = kinds.length > 1 ? kinds.map((k) => `<span class="key ${k}"></span>${bi(layerKind[k] ?? layerKind.full)}`).join(' ') : '';
  // an absolute 0-100% axis: a bar's height is its ratio, so "small" looks small
  $('bars').innerHTML = [100, 75, 50, 25].map((g) => `<div class="grid${g === 50 ? ' half' : ''}" style="bottom:${g}%"><span>${g}%</span></div>`).join('') +
    ratios.map((r, l) => `<div class="bar ${mixers[l]}" role="button" tabindex="0" data-layer="${l}" data-ratio="${r}" data-mixer="${mixers[l]}"
    style="height:${(100 * Math.min(1, r)).toFixed(1)}%"><b aria-hidden="true">${(100 * r).toFixed(0)}%</b><span aria-hidden="true">${l}</span><span class="sr">${bi({ zh: `第 ${l} 层：${(100 * r).toFixed(1)}%`, en: `layer ${l}: ${(100 * r).toFixed(1)}%` })}</span></div>`).join('');
  $('bars').querySelectorAll('.bar').forEach((b) => {
    const pick = () => {
      $('bars').querySelectorAll('.bar').forEach((x) => x.classList.toggle('sel', x === b));
      const l = Number(b.dataset.layer), r = Number(b.dataset.ratio), pct = (100 * r).toFixed(1);
      const kind = b.dataset.mixer === 'linear' ? { zh: '线性注意力（Gated DeltaNet）', en: 'linear attention (Gated DeltaNet)' } : b.dataset.mixer === 'sliding' ? { zh: '滑动窗口注意力', en: 'sliding-window attention' } : { zh: '全量注意力', en: 'full attention' };
      setText($('bar-readout'), { zh: `第 ${l} 层 · MLP / layer-output ratio = ${pct}% · 混合器：${kind.zh}`, en: `Layer ${l} · MLP / layer-output ratio = ${pct}% · mixer: ${kind.en}` });
      $('bar-readout').dataset.layer = l;
      $('bar-readout').dataset.ratio = r;
      $('corr-layer').value = String(l);
      renderLayerChart();
    };
    b.addEventListener('click', pick);
    b.addEventListener('keydown', (ev) => { if (ev.key === 'Enter' || ev.key === ' ') { ev.preventDefault(); pick(); } });
  });
  // keep the reader's selection
  const sel = $('bar-readout').dataset.layer;
  if (sel !== undefined && sel < ratios.length) $('bars').querySelector(`.bar[data-layer="${sel}"]`).click();
}

function renderLayerChart() {
  if (!state.run) return;
  const l = Number($('corr-layer').value || 0), st = state.run.stats, T = st.T;
  const mlp = st.mlp_out_l2[l], post = st.resid_post_l2[l], mx = Math.max(...post, ...mlp);
  // the key sits above the bars (a tall bar never covers it); a label every `step` tokens, so
  // labels never print over each other however long the sentence
  const H = 260, W = chartWidth($('layer-chart'), H, renderLayerChart), x0 = 8, y0 = 30, w = W - 16, h = H - 92, bw = w / T;
  const step = Math.max(1, Math.ceil(13 / bw));
  const labels = state.pieces.map(pieceLabel);
  const bars = Array.from({ length: T }, (_, t) => {
    const x = x0 + t * bw, hp = (post[t] / mx) * h, hm = (mlp[t] / mx) * h;
    const tick = (T - 1 - t) % step === 0 // counted from the last token, the one predicted from
      ? `<text x="${x + bw / 2}" y="${y0 + h + 12}" text-anchor="end" transform="rotate(-55 ${x + bw / 2} ${y0 + h + 12})" class="tick">${escapeHtml(pieceShort(state.pieces[t]).slice(0, 8))}</text>` : '';
    return `<rect x="${x + Math.min(1, bw / 4)}" y="${y0 + h - hp}" width="${Math.max(0.5, bw - Math.min(2, bw / 2))}" height="${hp}" fill="var(--resid)" fill-opacity=".35" data-t="${t}" data-post="${post[t]}" data-mlp="${mlp[t]}"/>
      <rect x="${x + bw * 0.25}" y="${y0 + h - hm}" width="${Math.max(0.5, bw * 0.5)}" height="${hm}" fill="var(--mlp)"/>${tick}
      <rect x="${x}" y="${y0}" width="${bw}" height="${h + 60}" fill="transparent" class="hit" data-hit="${t}"><title>${escapeHtml(labels[t])}</title></rect>`;
  }).join('');
  $('layer-chart').innerHTML = `<text x="${x0}" y="16"><tspan class="key-resid">■ |resid_post|</tspan> <tspan class="key-mlp">■ |mlp_out|</tspan> · ${biSvg({ zh: `第 ${l} 层`, en: `layer ${l}` })}</text>${bars}<rect class="sel" x="0" y="${y0 - 2}" width="${bw}" height="${h + 4}" fill="none" stroke="var(--fg)" stroke-width="1.5" visibility="hidden"/>`;
  const show = (t) => {
    const r = mlp[t] / Math.max(post[t], 1e-12), p = JSON.stringify(labels[t]);
    setText($('layer-readout'), { zh: `token ${t}（${p}）：|resid_post| = ${post[t].toFixed(2)}，|mlp_out| = ${mlp[t].toFixed(2)}，比例 ${(100 * r).toFixed(1)}%`,
      en: `token ${t} (${p}): |resid_post| = ${post[t].toFixed(2)}, |mlp_out| = ${mlp[t].toFixed(2)}, ratio ${(100 * r).toFixed(1)}%` });
    $('layer-readout').dataset.t = t;
    const sel = $('layer-chart').querySelector('rect.sel');
    sel.setAttribute('x', String(x0 + t * bw)); sel.setAttribute('visibility', 'visible');
  };
  for (const el of $('layer-chart').querySelectorAll('rect.hit')) { el.addEventListener('click', () => show(Number(el.dataset.hit))); el.addEventListener('mouseenter', () => show(Number(el.dataset.hit))); }
  my.showToken = show;
  show(Math.min(Number($('layer-readout').dataset.t ?? T - 1), T - 1));
}

// ---------------------------------------------------------------- the logit lens, and who wrote the prediction
function fillLensTokens() {
  $('lens-token').innerHTML = state.pieces.map((p, t) => `<option value="${t}">${t}: ${escapeHtml(JSON.stringify(pieceLabel(p)))}</option>`).join('');
  $('lens-token').value = String(state.ids.length - 1);
}

/** the stream after each mixer and each MLP, read through the final norm and head at one token:
 *  on small models first over the last LENS_MAX positions, to start at the token where the most
 *  MLPs change the top guess (later ones win ties); big ones: the chosen position only */
async function renderLens() {
  const m = state.model, L_ = state.info.config.num_hidden_layers, T = state.ids.length;
  if (!m.tokenizer) return;
  await guard($('lens-card'), async () => {
    const all = !my.lensChosen && state.info.config.hidden_size < 512;
    const from = all ? Math.max(0, T - LENS_MAX) : 0;
    const positions = all ? Array.from({ length: T - from }, (_, i) => from + i) : [Number($('lens-token').value)];
    const r = await m.forward(state.ids, { stats: false, logits: 'none', logitLens: { positions, k: 1, afterMixer: true } });
    const changed = (e) => e.layers.filter((x, l) => x[0].id !== e.afterMixer[l][0].id).length;
    let at = r.logitLens[0];
    for (const e of r.logitLens) if (changed(e) >= changed(at)) at = e;
    $('lens-token').value = String(at.position);
    const ids = [];
    for (let l = 0; l < L_; l++) ids.push(at.afterMixer[l][0].id, at.layers[l][0].id);
    const texts = await tokenTexts(ids); // one call for the whole table
    const rows = [];
    for (let l = 0; l < L_; l++) {
      const cell = (x, k) => ({ id: x[0].id, p: x[0].prob, text: texts[2 * l + k] });
      rows.push({ l, mid: cell(at.afterMixer[l], 0), post: cell(at.layers[l], 1) });
    }
    my.lens = { t: at.position, rows };
    renderLensTable();
    cardNote($('lens-card'), all && from ? { zh: `句子有 ${T} 个 token：镜头先看最后 ${LENS_MAX} 个位置（选别的 token 可以看任何位置）。`, en: `The sentence has ${T} tokens: the lens first looks at the last ${LENS_MAX} positions (pick another token to see any position).` } : null);
    // who wrote the final prediction at that token: one term per part of the residual stream
    const d = await m.decomposePrediction(state.ids, { position: at.position, token: rows.at(-1).post.id });
    my.dp = { ...d, position: at.position, text: rows.at(-1).post.text };
    renderDp();
  });
}

function renderLensTable() {
  const s = my.lens;
  const cell = (x) => `<code>${nl(JSON.stringify(x.text))}</code> · ${(100 * x.p).toFixed(1)}%`;
  $('lens-table').innerHTML = `<tr><th>${bi({ zh: '层', en: 'layer' })}</th><th>${bi({ zh: '混合器之后', en: 'after the mixer' })}</th><th>${bi({ zh: 'MLP 之后', en: 'after the MLP' })}</th></tr>` +
    s.rows.map(({ l, mid, post }) => `<tr data-layer="${l}" data-mid="${mid.id}" data-post="${post.id}" data-pmid="${mid.p}" data-ppost="${post.p}"${mid.id !== post.id ? ' class="mlp-changed"' : ''}><td>${l} · ${bi(mixerName(state.info.mixers[l]))}</td><td>${cell(mid)}</td><td>${cell(post)}</td></tr>`).join('');
  const changed = s.rows.filter((r) => r.mid.id !== r.post.id).map((r) => r.l), last = s.rows.at(-1).post, lt = JSON.stringify(last.text), lp = (100 * last.p).toFixed(1);
  setText($('lens-note'), { zh: `在第 ${s.t} 个 token 之后，${changed.length ? `第 ${changed.join('、')} 层的 MLP 改变了首选 token` : '没有哪一层的 MLP 改变首选 token'}；模型最终预测 ${lt}（${lp}%）。`,
    en: `After token ${s.t}, ${changed.length ? `the MLP of layer${changed.length > 1 ? 's' : ''} ${changed.join(', ')} changed the top guess` : 'no MLP changed the top guess'}; the model finally predicts ${lt} (${lp}%).` });
}

const sgn = (v) => (v >= 0 ? '+' : '−') + Math.abs(v).toFixed(2);
function renderDp() {
  const d = my.dp;
  const max = Math.max(...d.parts.map((q) => Math.abs(q.value)), 1e-9);
  const bar = (q, cls) => {
    const w = (50 * Math.abs(q.value)) / max;
    return `<td class="b"><div class="dp-track"><span class="dp-bar ${cls}" style="${q.value >= 0 ? 'left:50%' : 'right:50%'};width:${w.toFixed(2)}%"></span></div></td><td class="v">${sgn(q.value)}</td>`;
  };
  const emb = d.parts[0], layers = [];
  for (let i = 1; i < d.parts.length; i += 2) layers.push({ l: d.parts[i].layer, mixer: d.parts[i], mlp: d.parts[i + 1] });
  $('dp-table').dataset.position = String(d.position);
  $('dp-table').innerHTML = `<tr><th>${bi({ zh: '层', en: 'layer' })}</th><th colspan="2">${bi({ zh: '混合器', en: 'mixer' })}</th><th colspan="2">MLP</th></tr>` +
    `<tr data-part="embed" data-value="${emb.value}"><td>${bi({ zh: '词嵌入', en: 'embedding' })}</td>${bar(emb, 'embed')}<td></td><td></td></tr>` +
    layers.map(({ l, mixer, mlp }) => `<tr data-layer="${l}" data-mixer="${mixer.value}" data-mlp="${mlp.value}"><td>${l} · ${bi(mixerName(mixer.kind))}</td>${bar(mixer, 'mixer')}${bar(mlp, 'mlp')}</tr>`).join('');
  const sumOf = (kind) => d.parts.filter((q) => kind.includes(q.kind)).reduce((a, q) => a + q.value, 0);
  const mlps = sumOf(['mlp']), mixers = sumOf(['attention', 'deltanet']);
  const top = d.parts.slice(1).reduce((a, q) => (Math.abs(q.value) > Math.abs(a.value) ? q : a));
  const mx = mixerName(top.kind);
  const topName = top.kind === 'mlp' ? { zh: `第 ${top.layer} 层的 MLP`, en: `the MLP of layer ${top.layer}` } : { zh: `第 ${top.layer} 层的${mx.zh}`, en: `the ${mx.en} of layer ${top.layer}` };
  const tx = JSON.stringify(d.text);
  setText($('dp-note'), {
    zh: `预测 ${tx} 的 logit 为 ${d.logit.toFixed(2)}：所有 MLP 合计 ${sgn(mlps)}，所有混合器合计 ${sgn(mixers)}，词嵌入 ${sgn(emb.value)}（各部分之和 ${d.sum.toFixed(2)}）。单独最大的一笔来自${topName.zh}（${sgn(top.value)}）。`,
    en: `The logit of ${tx} is ${d.logit.toFixed(2)}: all MLPs together ${sgn(mlps)}, all mixers ${sgn(mixers)}, the embedding ${sgn(emb.value)} (the parts sum to ${d.sum.toFixed(2)}). The largest single write comes from ${topName.en} (${sgn(top.value)}).` });
  // the bars above measure length, this table one direction: say why both can be true, with both numbers
  const t = d.position ?? state.ids.length - 1, ratio = top.kind === 'mlp' ? state.run?.stats?.mlp_ratio?.[top.layer]?.[t] : undefined;
  const share = Math.abs(top.value) / Math.max(Math.abs(d.logit), 1e-9);
  $('dp-why').dataset.share = String(share);
  setText($('dp-why'), ratio === undefined ? null : {
    zh: `这和上面“MLP 只写一个小修正”不矛盾：长条量的是长度——第 ${top.layer} 层的 MLP 在这个 token 上写入的向量只有该层输出长度的 ${(100 * ratio).toFixed(0)}%；这里量的是一个方向——这个 token 的 logit 只读残差流里的一个方向，那笔写入正好落在这个方向上，于是占了 logit 的 ${(100 * share).toFixed(0)}%。一次短的写入，方向对了，也能决定预测。`,
    en: `This does not contradict “the MLP writes a small correction” above: the bars measure length (layer ${top.layer}'s MLP writes a vector ${(100 * ratio).toFixed(0)}% as long as that layer's output at this token), this table measures one direction (the token's logit reads a single direction of the stream, and that write lies along it, so it makes ${(100 * share).toFixed(0)}% of the logit). A short write in the right direction can decide a prediction.` });
}
