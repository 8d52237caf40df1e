// The live run of the reader's text: model facts, the all-layers bars, the per-token chart, the live walk.
import { $, L, checkNeuron, escapeHtml, fmt, int, pieceLabel, pieceShort, silu, state, writeUrl } from '../core.js';
import { renderKnockoutBefore } from './knockout.js';
import { renderLens } from './lens.js';
import { renderExFeedback, renderTryStatus } from './tryit.js';
import { drawNeurons } from './widgets.js';
import { attentionHook, fillAttentionPickers, renderAttention } from './mixing.js';

// ---------------------------------------------------------------- the live run
export async function runText(text) {
  const m = state.model;
  if (!m || !m.tokenizer) return;
  state.text = text;
  $('try-status').textContent = state.searching ? L('计算中…（模型正在完成神经元搜索，完成后马上运行你的句子）', 'computing… (the model is finishing the neuron search; your sentence runs right after it)') : L('计算中…', 'computing…');
  const all = await m.tokenizer.encode(text);
  const ids = all.slice(0, m.contextLength);
  if (!ids.length) { $('try-status').textContent = L('请输入一些文字。', 'Please type some text.'); return; }
  const pieces = await m.tokenizer.pieces(ids); // one call: characters split over tokens are shown whole
  // the chosen attention layer's pattern comes from the same pass (no second pass for its card)
  fillAttentionPickers();
  const pattern = attentionHook();
  const run = await m.forward(ids, { topK: 8, logits: 'last', hooks: pattern ? [pattern] : [] });
  state.ids = ids; state.pieces = pieces.map(pieceLabel); state.piecesRaw = pieces; state.run = run;
  state.cut = all.length > ids.length ? all.length : 0;
  renderModelFacts();
  renderBars();
  renderLayerChart();
  state.steer = null; // a continuation belongs to the sentence it continued
  for (const id of ['steer-before', 'steer-after', 'steer-note']) $(id).textContent = '';
  await renderAttention(run);
  await renderWalk();
  await renderKnockoutBefore();
  $('lens-token').innerHTML = $('walk-token').innerHTML;
  $('lens-token').value = String(ids.length - 1);
  state.lensChosen = false;
  await renderLens();
  renderTryStatus();
  state.ex = null; // the exercise's answer belongs to the text it was checked on
  renderExFeedback();
  // an answered quiz question quotes the live numbers: those of this text now
  document.querySelectorAll('#quiz input:checked').forEach((el) => el.dispatchEvent(new Event('change', { bubbles: true })));
  writeUrl();
  document.body.dataset.runs = String(Number(document.body.dataset.runs ?? 0) + 1);
}

export function renderModelFacts() {
  const i = state.info, c = i.config, e = state.entry;
  const name = e ? L(e.label[0], e.label[1]) : '';
  const saysRandom = /随机|random/.test(name);
  $('model-name').textContent = `${name} — ${int(i.params.total)} ${L('个参数', 'parameters')}${e?.kind === 'random' && !saysRandom ? L('（随机权重）', ' (random weights)') : ''}`;
  $('strip-layers').textContent = `× ${c.num_hidden_layers}`;
  const nLinear = state.info.mixers.filter((m) => m === 'linear').length;
  $('strip-mixer').textContent = nLinear
    ? L(`混合器（${c.num_hidden_layers - nLinear} 层注意力 / ${nLinear} 层 DeltaNet）`, `mixer (${c.num_hidden_layers - nLinear} attention / ${nLinear} DeltaNet)`)
    : L('注意力', 'attention');
  $('size-hidden').textContent = int(c.hidden_size);
  $('size-inter').textContent = int(c.intermediate_size);
  $('size-ratio').textContent = `${(c.intermediate_size / c.hidden_size).toFixed(2)}×`;
  $('size-layers').textContent = c.num_hidden_layers;
  const mlp = 3 * c.hidden_size * c.intermediate_size * c.num_hidden_layers;
  $('size-mlp-params').textContent = `${int(mlp)}`;
  $('size-mlp-params').dataset.value = mlp;
  $('size-fraction').textContent = `≈ ${(100 * mlp / i.params.total).toFixed(1)}% (${int(i.params.total)})`;
  drawNeurons(c, state.walk ?? null);
  const layerOpts = Array.from({ length: c.num_hidden_layers }, (_, l) => `<option value="${l}">${l} · ${state.info.mixers[l] === 'linear' ? 'DeltaNet' : L('注意力', 'attention')}</option>`).join('');
  for (const id of ['walk-layer', 'corr-layer', 'fires-layer', 'ko-layer']) { const s = $(id), v = s.value; s.innerHTML = layerOpts; if (v && v < c.num_hidden_layers) s.value = v; }
  if (!state.corrLayerSet) {
    const raw = state.fromUrl?.layer, want = raw == null || raw === '' ? NaN : Number(raw);
    const l = Number.isInteger(want) && want >= 0 && want < c.num_hidden_layers ? want : Math.floor(c.num_hidden_layers / 2);
    $('corr-layer').value = String(l); $('walk-layer').value = String(Math.floor(c.num_hidden_layers / 2)); state.corrLayerSet = true;
    if (state.fromUrl) state.fromUrl.layer = null; // a shared link's layer: the first model only
  }
  for (const id of ['walk-feature', 'fires-neuron', 'ko-neuron']) $(id).max = c.intermediate_size - 1;
  $('walk-token').innerHTML = state.pieces.map((p, t) => `<option value="${t}">${t}: ${escapeHtml(JSON.stringify(p))}</option>`).join('');
  $('walk-token').value = String(state.pieces.length - 1);
  // the engine's own reason string is English diagnostics: the Chinese view summarises it, the tooltip keeps it whole
  const b = i.build;
  $('build-info').textContent = `· ${L(`${b.threads > 1 ? `多线程版本，${b.threads} 个线程` : '单线程版本'}${b.simd ? '（SIMD128）' : ''}`, b.why)}`;
  $('build-info').title = b.why;
}

/** Which path the engine runs (activations, threads) and the speed of the last forward pass. */
export function renderEngineStatus() {
  const b = state.info?.build, el = $('engine-status');
  if (!b) { el.textContent = ''; return; }
  const act = { int8: L('int8 激活', 'int8 activations'), exact: L('精确激活', 'exact activations'), plain: L('f32 激活', 'f32 activations'), f32: L('f32 激活', 'f32 activations') }[b.activations] ?? b.activations;
  const threads = b.threads > 1 ? L(`${b.threads} 线程`, `${b.threads} threads`) : L('单线程', '1 thread');
  const sp = state.speed, speed = state.computing ? L('计算中…', 'computing…')
    : sp ? L(`上次：${sp.tokens} 个 token，${(sp.tokens / Math.max(sp.ms, 1e-3) * 1000).toFixed(0)} token/秒`, `last pass: ${sp.tokens} tokens, ${(sp.tokens / Math.max(sp.ms, 1e-3) * 1000).toFixed(0)} tokens/s`) : '';
  el.textContent = `${act} · ${threads}${speed ? ' · ' + speed : ''}`;
  el.title = b.why;
}

export function layerRatios() {
  const st = state.run.stats;
  return st.mlp_ratio.map((r) => r.reduce((a, b) => a + b, 0) / r.length);
}

/** the words under the all-layers chart, computed from the loaded model's ratios (thresholds stated in the text) */
export function barsSummary(ratios) {
  const pct = (r) => `${(100 * r).toFixed(0)}%`, n = ratios.length;
  const small = ratios.filter((r) => r < 0.25).length, large = ratios.map((r, l) => [r, l]).filter(([r]) => r > 0.5), mid = n - small - large.length;
  const sorted = [...ratios].sort((x, y) => x - y), median = sorted[Math.floor((n - 1) / 2)];
  const layers = (ls) => ls.join(L('、', ls.length === 2 ? ' and ' : ', '));
  let text = L(`这个模型的 ${n} 层里：${small} 层的 MLP 写入不到该层输出长度的 25%，${mid} 层在 25%–50% 之间，${large.length} 层超过一半${large.length ? `（第 ${layers(large.map(([, l]) => l))} 层）` : ''}；中位数 ${pct(median)}。`,
    `Of this model's ${n} layers, ${small} have an MLP write under 25% of the layer's output length, ${mid} between 25% and 50%, and ${large.length} over half${large.length ? ` (layer${large.length > 1 ? 's' : ''} ${layers(large.map(([, l]) => l))})` : ''}; the median is ${pct(median)}.`);
  if (ratios[0] > 0.5) text += L(' 第 0 层与众不同：它读到的残差流只有 token 的嵌入向量，还很短，所以它的 MLP 写入和残差流本身一样大——在小模型里它更像嵌入的第二部分，而不是修正。',
    ' Layer 0 is different: the stream it reads holds only the token\'s embedding and is still short, so its MLP writes about as much as the stream itself; in a small model it acts as a second half of the embedding rather than a correction.');
  text += median < 0.5 && large.length <= Math.max(1, Math.floor(n / 4))
    ? L(' 大多数层是课文说的“小修正”：预测来自许多次写入之和，没有哪一层独占。', ' Most layers show what the lesson describes, a correction added on top: the prediction is the sum of many writes, and no single layer owns it.')
    : L(' 这个小模型的图景和课文不完全一样：课文说的是 Qwen3.5-0.8B 这样更深的模型；这里的长条如实显示当前模型的数字。', ' This small model does not fully show the lesson\'s picture, which is about deeper models such as Qwen3.5-0.8B; the bars show the loaded model as it is.');
  return text;
}

export function renderBars() {
  const ratios = layerRatios(), mixers = state.info.mixers;
  $('bars-note').textContent = barsSummary(ratios);
  const kinds = [...new Set(mixers)];
  $('bars-legend').innerHTML = kinds.length > 1 ? kinds.map((k) => `<span class="key ${k}"></span>${k === 'linear' ? L('线性注意力（Gated DeltaNet）层', 'linear-attention (Gated DeltaNet) layer') : L('全量注意力层', 'full-attention layer')}`).join(' ') : '';
  // an absolute 0-100% axis: a bar's height is its ratio, so "small" looks small
  const label = (l, r) => L(`第 ${l} 层：${(100 * r).toFixed(1)}%`, `layer ${l}: ${(100 * r).toFixed(1)}%`);
  $('bars').innerHTML = [100, 75, 50, 25].map((g) => `<div class="grid${g === 50 ? ' half' : ''}" style="bottom:${g}%"><span>${g}%</span></div>`).join('') +
    ratios.map((r, l) => `<div class="bar ${mixers[l]}" role="button" tabindex="0" data-layer="${l}" data-ratio="${r}" data-mixer="${mixers[l]}"
    style="height:${(100 * Math.min(1, r)).toFixed(1)}%"><b aria-hidden="true">${(100 * r).toFixed(0)}%</b><span aria-hidden="true">${l}</span><span class="sr">${label(l, r)}</span></div>`).join('');
  $('bars').querySelectorAll('.bar').forEach((b) => {
    const pick = () => {
      $('bars').querySelectorAll('.bar').forEach((x) => x.classList.toggle('sel', x === b));
      const l = Number(b.dataset.layer), r = Number(b.dataset.ratio);
      const kind = b.dataset.mixer === 'linear' ? L('线性注意力（Gated DeltaNet）', 'linear attention (Gated DeltaNet)') : L('全量注意力', 'full attention');
      $('bar-readout').textContent = L(`第 ${l} 层 · MLP / layer-output ratio = ${(100 * r).toFixed(1)}% · 混合器：${kind}`, `Layer ${l} · MLP / layer-output ratio = ${(100 * r).toFixed(1)}% · mixer: ${kind}`);
      $('bar-readout').dataset.layer = l;
      $('bar-readout').dataset.ratio = r;
      $('corr-layer').value = String(l);
      renderLayerChart();
    };
    b.addEventListener('click', pick);
    b.addEventListener('keydown', (ev) => { if (ev.key === 'Enter' || ev.key === ' ') { ev.preventDefault(); pick(); } });
  });
  // keep the reader's selection (and re-render its text, e.g. after a language switch)
  const sel = $('bar-readout').dataset.layer;
  if (sel !== undefined && sel < ratios.length) $('bars').querySelector(`.bar[data-layer="${sel}"]`).click();
}

export function renderLayerChart() {
  if (!state.run) return;
  const l = Number($('corr-layer').value || 0), st = state.run.stats, T = st.T;
  const mlp = st.mlp_out_l2[l], post = st.resid_post_l2[l], mx = Math.max(...post, ...mlp);
  const W = 640, H = 260, x0 = 40, y0 = 14, w = W - 56, h = H - 70, bw = w / T;
  const bars = Array.from({ length: T }, (_, t) => {
    const x = x0 + t * bw, hp = (post[t] / mx) * h, hm = (mlp[t] / mx) * h;
    return `<rect x="${x + 1}" y="${y0 + h - hp}" width="${Math.max(1, bw - 2)}" height="${hp}" fill="var(--resid)" fill-opacity=".35" data-t="${t}" data-post="${post[t]}" data-mlp="${mlp[t]}"/>
      <rect x="${x + bw * 0.25}" y="${y0 + h - hm}" width="${Math.max(1, bw * 0.5)}" height="${hm}" fill="var(--mlp)"/>
      <text x="${x + bw / 2}" y="${y0 + h + 12}" text-anchor="end" transform="rotate(-55 ${x + bw / 2} ${y0 + h + 12})" class="tick">${escapeHtml(pieceShort(state.piecesRaw[t]).slice(0, 10))}</text>
      <rect x="${x}" y="${y0}" width="${bw}" height="${h + 60}" fill="transparent" class="hit" data-hit="${t}"><title>${escapeHtml(state.pieces[t])}</title></rect>`;
  }).join('');
  $('layer-chart').innerHTML = `${bars}<text x="${x0}" y="${y0 + 4}"><tspan class="key-resid">■ |resid_post|</tspan> <tspan class="key-mlp">■ |mlp_out|</tspan> · ${L('第', 'layer ')}${l}${L(' 层', '')}</text>`;
  const show = (t) => {
    const r = mlp[t] / Math.max(post[t], 1e-12);
    $('layer-readout').textContent = L(`token ${t}（${JSON.stringify(state.pieces[t])}）：|resid_post| = ${post[t].toFixed(2)}，|mlp_out| = ${mlp[t].toFixed(2)}，比例 ${(100 * r).toFixed(1)}%`,
      `token ${t} (${JSON.stringify(state.pieces[t])}): |resid_post| = ${post[t].toFixed(2)}, |mlp_out| = ${mlp[t].toFixed(2)}, ratio ${(100 * r).toFixed(1)}%`);
    $('layer-readout').dataset.t = t;
  };
  for (const el of $('layer-chart').querySelectorAll('rect.hit')) { el.addEventListener('click', () => show(Number(el.dataset.hit))); el.addEventListener('mouseenter', () => show(Number(el.dataset.hit))); }
  show(Math.min(Number($('layer-readout').dataset.t ?? T - 1), T - 1));
}

export async function renderWalk() {
  const m = state.model, l = Number($('walk-layer').value || 0), t = Number($('walk-token').value || 0), st = state.run.stats;
  if (document.activeElement !== $('walk-feature') && !state.walkFeatureChosen) $('walk-feature').value = st.top_idx[l][t * st.topK];
  const I = state.info.config.intermediate_size;
  if (!checkNeuron($('walk-feature'), $('walk-error'))) { for (const id of ['walk-gate', 'walk-silu', 'walk-up', 'walk-out']) $(id).textContent = '–'; return; }
  const j = Number($('walk-feature').value);
  const r = await m.forward(state.ids.slice(0, t + 1), { stats: false, logits: 'none', hooks: [`blocks.${l}.mlp.hook_pre`, `blocks.${l}.mlp.hook_pre_linear`, `blocks.${l}.mlp.hook_post`] });
  const g = r.hooks[`blocks.${l}.mlp.hook_pre`][t * I + j], u = r.hooks[`blocks.${l}.mlp.hook_pre_linear`][t * I + j], p = r.hooks[`blocks.${l}.mlp.hook_post`][t * I + j];
  $('walk-gate').textContent = fmt(g); $('walk-silu').textContent = fmt(silu(g)); $('walk-up').textContent = fmt(u); $('walk-out').textContent = fmt(p);
  $('walk-out').dataset.value = p;
  // the neuron diagram lights the same neuron with the same numbers
  state.walk = { l, t, j, g, s: silu(g), u, p, piece: state.pieces[t] };
  drawNeurons(state.info.config, state.walk);
}
for (const id of ['walk-layer', 'walk-token']) $(id).addEventListener('change', () => { state.walkFeatureChosen = false; renderWalk(); });
$('walk-feature').addEventListener('change', () => { state.walkFeatureChosen = true; renderWalk(); });
$('corr-layer').addEventListener('change', () => { renderLayerChart(); writeUrl(); });
