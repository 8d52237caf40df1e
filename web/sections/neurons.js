// Neurons that fire: token shading, the feature search (cached per weight set), the any-neuron card.
import { fillSteerOptions } from './steer.js';
import { $, FEATURE_NAMES_ZH, FEATURE_TITLES, L, PROBE_SENTENCES, checkNeuron, modelLangs, escapeHtml, nl, pieceHtml, pieceLabel, pieceShort, state, tokText, writeUrl } from '../core.js';

// ---------------------------------------------------------------- neurons that fire
export async function shade(el, text, layer, neuron, sign = 1) {
  const m = state.model, I = state.info.config.intermediate_size;
  const ids = await m.tokenizer.encode(text);
  const r = await m.forward(ids, { stats: false, logits: 'none', hooks: [`blocks.${layer}.mlp.hook_post`] });
  await shadeTokens(el, ids, Array.from(ids, (_, t) => sign * r.hooks[`blocks.${layer}.mlp.hook_post`][t * I + neuron]));
}
/** contrast of white and of the page's dark text on the shade at `alpha` over white (WCAG ratios) */
export function shadeContrast(alpha) {
  const lin = (c) => { c /= 255; return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4; };
  const lum = (rgb) => 0.2126 * lin(rgb[0]) + 0.7152 * lin(rgb[1]) + 0.0722 * lin(rgb[2]);
  const L0 = lum([36, 87, 197].map((c) => 255 + (c - 255) * alpha)), dark = lum([29, 35, 43]);
  return { white: 1.05 / (L0 + 0.05), dark: (L0 + 0.05) / (dark + 0.05) };
}
/** Around the middle of the shade scale neither white nor dark text reaches 4.5:1 (for any shade
 *  colour: the two ratios multiply to about 16). Alphas in that band snap to its nearer edge. */
export const SHADE_BAND = (() => {
  const bad = Array.from({ length: 101 }, (_, i) => i / 100).filter((a) => { const c = shadeContrast(a); return Math.max(c.white, c.dark) < 4.6; });
  return bad.length ? [bad[0] - 0.01, bad.at(-1) + 0.01] : null;
})();
export function shadeAlpha(alpha) {
  if (!SHADE_BAND || alpha <= SHADE_BAND[0] || alpha >= SHADE_BAND[1]) return alpha;
  return alpha < (SHADE_BAND[0] + SHADE_BAND[1]) / 2 ? SHADE_BAND[0] : SHADE_BAND[1];
}
export function textOn(alpha) { const c = shadeContrast(alpha); return c.white > c.dark ? '#fff' : '#1d232b'; }
/** each token shaded by its value: positive values darker, scaled to the largest |value|; returns the pieces */
export async function shadeTokens(el, ids, values) {
  const mx = Math.max(1e-6, ...values.map(Math.abs));
  const raw = await state.model.tokenizer.pieces(ids), pieces = raw.map(pieceLabel), parts = [];
  for (let t = 0; t < ids.length; t++) {
    const a = values[t], alpha = shadeAlpha(Math.max(0, a) / mx); // readable text on every shade
    // a character split over several tokens shows once, on the token where it starts
    const shown = pieceShort(raw[t]);
    parts.push(`<span class="tok${raw[t].of ? ' split' : ''}" data-act="${a}" title="${escapeHtml(pieces[t])}: ${a.toFixed(3)}" style="background:rgba(var(--shade),${alpha.toFixed(2)});color:${textOn(alpha)}">${pieceHtml(shown)}</span>`);
  }
  el.innerHTML = parts.join('');
  return pieces;
}

export async function findFeatures() {
  const m = state.model;
  if (!m.tokenizer || !state.probes) { $('features').innerHTML = ''; $('features-note').textContent = L('这个模型没有分词器，无法运行探针。', 'This model has no tokenizer, so the probes cannot run.'); return; }
  const probes = probeTexts();
  const searching = (p) => {
    const n = p ? ` ${p.done} / ${p.total}` : '';
    $('features-note').textContent = probes.length < state.probes.length
      ? L(`正在用 ${probes.length} 个探针句子寻找神经元（大模型只用一部分探针；每个句子都要跑一遍整个模型）…${n}`, `Searching neurons with ${probes.length} probe sentences (a big model gets a part of them: each one is a pass through the whole model)…${n}`)
      : L(`正在用探针句子寻找神经元…${n}`, `Searching neurons with the probe sentences…${n}`);
  };
  // the search result is kept per weight set (its manifest hash) and probe set: a second visit
  // shows the cards at once instead of searching again
  const which = state.entry?.manifestSha256 ?? (state.entry?.kind === 'hf' ? `${state.entry.source}:${state.entry.dtype}` : null);
  const key = which ? `mlpscope-features-v2:${which}:${probes.length}:${probes[0]?.text.length ?? 0}` : null;
  let res = null;
  try { res = key && JSON.parse(localStorage.getItem(key) ?? 'null'); } catch { res = null; }
  document.body.dataset.featuresFrom = res ? 'cache' : 'search';
  if (!res) {
    searching(null);
    state.searching = true;
    // a small model trained on both languages: also one search per language (its own neurons)
    const byLang = modelLangs().includes('zh') && modelLangs().includes('en') && probes.length === state.probes.length;
    document.body.dataset.featureSearches = String(Number(document.body.dataset.featureSearches ?? 0) + 1); // tests: a cached visit runs none
    try { res = await m.findFeatureNeurons(probes, { top: 2, directions: true, topActivations: 8, byLang, onProgress: searching }); } finally { state.searching = false; }
    if (key) try { localStorage.setItem(key, JSON.stringify(res, (k, v) => (ArrayBuffer.isView(v) ? Array.from(v) : v))); } catch { /* storage full or private mode: search again next time */ }
  }
  if (state.model !== m) return; // another model was chosen meanwhile
  state.features = res;
  await renderFeatureCards();
  const b0 = featureBest()[0];
  // the neuron card: the one a shared link names (once), else the best feature neuron
  const shared = /^(\d+):(\d+):(-?1)$/.exec(state.fromUrl?.neuron ?? '');
  if (shared && Number(shared[1]) < state.info.config.num_hidden_layers) {
    $('fires-layer').value = shared[1]; $('fires-neuron').value = shared[2]; $('fires-sign').value = shared[3];
    state.fromUrl.neuron = null;
    await showNeuron();
  } else if (b0) { $('fires-layer').value = String(b0.layer); $('fires-neuron').value = b0.neuron; $('fires-sign').value = String(b0.sign); await showNeuron(); }
}
/** whether the cards show one neuron per language (a small model trained on both languages) */
export const bilingual = () => !!state.features?.bestByLang?.zh && !!state.features?.bestByLang?.en;
/** the feature neurons the page works with: the page language's own for a bilingual model, else
 *  the best over all probes */
export function featureBest(lang = state.lang) {
  return bilingual() ? state.features.bestByLang[lang] : state.features?.best ?? [];
}
/** the three feature cards from the search result: each neuron shading its sentence (for a
 *  bilingual model one neuron and one sentence per language, the page's language first); run
 *  again on a language switch, since the page language's neuron is the card's */
export async function renderFeatureCards() {
  const res = state.features, m = state.model, run = (state.cardsRun = (state.cardsRun ?? 0) + 1);
  if (!res) return;
  const stale = () => state.model !== m || state.features !== res || state.cardsRun !== run; // a newer draw took over
  delete document.body.dataset.featureCards; // set again when every card is drawn (tests wait for it)
  fillSteerOptions();
  const langs = bilingual() ? [state.lang, state.lang === 'zh' ? 'en' : 'zh'] : ['en'];
  const cards = [];
  for (const name of ['city', 'negation', 'code']) {
    const b = featureBest().find((x) => x.feature === name);
    const rows = langs.map((g) => `<p class="note feature-meta" data-lang="${g}"></p><div class="tokens" data-lang="${g}"></div>`).join('');
    cards.push(`<div class="card" id="feature-${name}" data-layer="${b?.layer ?? ''}" data-neuron="${b?.neuron ?? ''}" data-auc="${b?.heldOutAuc ?? ''}">
      <h3 class="feature-title"></h3>${rows}<p class="note feature-same"></p><p class="note feature-top"></p>
      ${b ? `<button type="button" class="link feature-inspect" data-layer="${b.layer}" data-neuron="${b.neuron}" data-sign="${b.sign}"></button>` : ''}</div>`);
  }
  $('features').innerHTML = cards.join('');
  // its strongest activations: is the selective neuron also a clean one?
  state.featureTops = Object.fromEntries(featureBest().map((b) => [b.feature, b.top]));
  renderFeatureText(); // titles, numbers and buttons at once; the shading follows
  // "look closer": the neuron goes into the any-neuron card below
  for (const btn of document.querySelectorAll('.feature-inspect')) btn.addEventListener('click', async () => {
    $('fires-layer').value = btn.dataset.layer; $('fires-neuron').value = btn.dataset.neuron; $('fires-sign').value = btn.dataset.sign;
    await showNeuron();
    $('fires-card').scrollIntoView({ behavior: 'smooth', block: 'start' });
  });
  for (const name of ['city', 'negation', 'code']) {
    const card = $(`feature-${name}`);
    for (const g of langs) {
      const b = (bilingual() ? featureBest(g) : featureBest()).find((x) => x.feature === name);
      if (b) await shade(card.querySelector(`.tokens[data-lang="${g}"]`), PROBE_SENTENCES[bilingual() ? g : 'en'][name], b.layer, b.neuron, b.sign);
      if (stale()) return;
    }
    // where no single neuron is clean, show that a direction of the residual stream is
    const d = weakWithDirection(name);
    if (d) {
      card.insertAdjacentHTML('beforeend', `<p class="note feature-dir" data-layer="${d.layer}" data-auc="${d.heldOutAuc}"></p><div class="tokens dir-tokens"></div>`);
      await shadeDirection(card.querySelector('.dir-tokens'), PROBE_SENTENCES[bilingual() ? state.lang : 'en'][name], d);
      if (stale()) return;
    }
  }
  renderFeatureText();
  document.body.dataset.featureCards = langs[0];
}
/** the probe sentences a neuron's top activations are taken from: fewer for the big models (each one is a forward pass) */
export const probeTexts = () => (state.info.config.hidden_size >= 512 ? state.probes.slice(0, 48) : state.probes);
/** the most active neurons (|mlp.hook_post|, every layer) at one token of the card's text, as buttons
 *  that load them into the card; the token defaults to where the card's neuron fires most */
export function renderNeighbours() {
  const f = state.fires, st = f.stats, k = st.topK;
  const t = Number($('fires-tok').value), cur = [Number($('fires-layer').value), Number($('fires-neuron').value)];
  const chips = [];
  for (let l = 0; l < st.layers; l++)
    for (let i = 0; i < k; i++) {
      const j = st.top_idx[l][t * k + i], v = st.top_val[l][t * k + i];
      chips.push(`<button type="button" data-layer="${l}" data-neuron="${j}" data-act="${v}" aria-pressed="${l === cur[0] && j === cur[1]}">L${l} · #${j} · ${v.toFixed(2)}</button>`);
    }
  $('fires-neighbours').innerHTML = chips.join('');
  for (const b of $('fires-neighbours').querySelectorAll('button')) b.addEventListener('click', () => {
    $('fires-layer').value = b.dataset.layer; $('fires-neuron').value = b.dataset.neuron;
    $('fires-sign').value = Number(b.dataset.act) < 0 ? '-1' : '1';
    showNeuron();
  });
}
$('fires-tok').addEventListener('change', () => { if (state.fires) renderNeighbours(); });
/** the "any neuron" card: shade the reader's text, then list where the neuron fires most in the probes */
export async function showNeuron() {
  const l = Number($('fires-layer').value), j = Number($('fires-neuron').value), sign = Number($('fires-sign').value);
  const I = state.info.config.intermediate_size;
  if (!checkNeuron($('fires-neuron'), $('fires-top-note'))) {
    for (const id of ['fires-top', 'fires-up', 'fires-down', 'fires-out', 'fires-neighbours']) $(id).innerHTML = '';
    state.topActs = null; state.fires = null;
    return;
  }
  if (!state.model.tokenizer) return;
  // the card says at once that it is working, and shows nothing of the previous neuron meanwhile
  const busy = `<li class="note">${L('计算中…', 'computing…')}</li>`;
  for (const id of ['fires-top', 'fires-up', 'fires-down']) $(id).innerHTML = busy;
  $('fires-top-note').textContent = L('计算中…', 'computing…');
  // one pass over the card's text: the neuron's activation at every token (shading) and the engine's
  // top-3 neurons of every layer at every token (the chips)
  const m = state.model, ids = await m.tokenizer.encode($('fires-text').value), hook = `blocks.${l}.mlp.hook_post`;
  if (!ids.length) return;
  const r = await m.forward(ids, { stats: true, topK: 3, logits: 'none', hooks: [hook] });
  const values = Array.from(ids, (_, t) => sign * r.hooks[hook][t * I + j]);
  const pieces = await shadeTokens($('fires-out'), ids, values);
  state.fires = { stats: r.stats, values, pieces };
  // the colour scale of the shading, and a token's value on a click or tap (phones have no hover)
  const mx = Math.max(1e-6, ...values.map(Math.abs));
  $('fires-scale').querySelector('.hi').textContent = mx.toFixed(2);
  $('fires-readout').textContent = '';
  $('fires-out').querySelectorAll('.tok').forEach((el, t) => el.addEventListener('click', () => {
    $('fires-readout').dataset.t = String(t);
    renderFiresReadout();
  }));
  $('fires-tok').innerHTML = pieces.map((p, t) => `<option value="${t}">${t}: ${escapeHtml(JSON.stringify(p))}</option>`).join('');
  $('fires-tok').value = String(values.reduce((b, v, t) => (v > values[b] ? t : b), 0)); // where it fires most
  renderNeighbours();
  // what it writes: a neuron firing negatively writes minus its column, so up and down swap
  // (byte pieces that are not text on their own, shown as �, are left out: they say nothing to a reader)
  const out = await state.model.neuronOutput(l, j, { k: 40 });
  const [up, down] = sign > 0 ? [out.promoted, out.suppressed] : [out.suppressed, out.promoted];
  const list = async (ts) => {
    const rows = [];
    for (const t of ts) {
      const text = await tokText(t.id);
      if (!text || /\\x[0-9A-F]{2}|[\uFFFD\u0000-\u0008\u000B-\u001F\u007F]/.test(text)) continue;
      rows.push(`<li data-id="${t.id}" data-logit="${sign * t.logit}"><code>${nl(text)}</code> · ${(sign * t.logit).toFixed(2)}</li>`);
      if (rows.length === 6) break;
    }
    return rows.join('');
  };
  $('fires-up').innerHTML = await list(up);
  $('fires-down').innerHTML = await list(down);
  if (!state.probes) return;
  const texts = probeTexts();
  const res = await state.model.neuronTopActivations(texts, { layer: l, neuron: j, sign, k: 8, window: 6 });
  $('fires-top').innerHTML = res.top.map((x) => `<li data-act="${x.activation}" data-text="${x.text}" data-token="${x.token}"><code>${nl(x.before)}<mark>${escapeHtml(x.piece)}</mark>${nl(x.after)}</code> · ${x.activation.toFixed(3)}</li>`).join('');
  state.topActs = { l, j, sign, texts: texts.length, tokens: res.tokens, positive: res.positive, histogram: res.histogram, kth: res.top.at(-1)?.activation, mean: res.mean };
  renderTopActsNote();
  drawHistogram();
  writeUrl();
}
/** a context around a token, its line breaks shown as ⏎ */
export function renderTopActsNote() {
  const a = state.topActs;
  $('fires-sign').options[0].textContent = L('正值', 'positive');
  $('fires-sign').options[1].textContent = L('负值', 'negative');
  $('fires-top-note').textContent = !a ? '' : L(`在 ${a.texts} 个探针句子的 ${a.tokens} 个 token 中排序；第 ${a.l} 层神经元 ${a.j} 在其中 ${(100 * a.positive).toFixed(1)}% 的 token 上为${a.sign > 0 ? '正' : '负'}值。`,
    `Ranked over ${a.tokens} tokens of ${a.texts} probe sentences; neuron ${a.j} of layer ${a.l} is ${a.sign > 0 ? 'positive' : 'negative'} on ${(100 * a.positive).toFixed(1)}% of them.`);
}
/** the best direction for a feature whose best neuron is below 0.9 held out (trained models only) */
export function weakWithDirection(name) {
  const f = state.features, b = featureBest().find((x) => x.feature === name), d = f?.directions?.find((x) => x.feature === name);
  return b && d && b.heldOutAuc < 0.9 && d.heldOutAuc > b.heldOutAuc && state.entry?.kind !== 'random' ? d : null;
}
export async function shadeDirection(el, text, d) {
  const m = state.model, H = state.info.config.hidden_size;
  const ids = await m.tokenizer.encode(text);
  const r = await m.forward(ids, { stats: false, logits: 'none', hooks: [`blocks.${d.layer}.hook_resid_mid`] });
  const x = r.hooks[`blocks.${d.layer}.hook_resid_mid`];
  const proj = Array.from(ids, (_, t) => {
    let ss = 0, dot = 0;
    for (let i = 0; i < H; i++) { const v = x[t * H + i]; ss += v * v; dot += v * d.direction[i]; }
    return dot / Math.sqrt(ss / H + 1e-12) - d.threshold;
  });
  await shadeTokens(el, ids, proj);
}
/** the held-out AUC within each language's probes, when the probes carry both */
function byLang(b) {
  const a = b.heldOutAucByLang;
  return a?.zh !== undefined && a?.en !== undefined ? L(`；中文 ${a.zh.toFixed(3)}，英文 ${a.en.toFixed(3)}`, `; Chinese ${a.zh.toFixed(3)}, English ${a.en.toFixed(3)}`) : '';
}
export function renderFeatureText() {
  if (!state.features) return;
  const two = bilingual(), LANG = { zh: ['中文', 'Chinese'], en: ['英文', 'English'] };
  for (const name of ['city', 'negation', 'code']) {
    const b = featureBest().find((x) => x.feature === name), card = $(`feature-${name}`);
    if (!card) continue;
    card.querySelector('.feature-title').textContent = `“${L(...FEATURE_TITLES[name])}”`;
    const dirNote = card.querySelector('.feature-dir'), d = weakWithDirection(name);
    if (dirNote && d) {
      const zh = FEATURE_NAMES_ZH[name] ?? name;
      dirNote.textContent = L(`不是一个神经元，而是一个方向：第 ${d.layer} 层 MLP 的输入（除以 RMS）投影到“${zh} token 均值减其余 token 均值”的方向上，留出探针上的 AUC = ${d.heldOutAuc.toFixed(3)}。模型知道哪里是${zh}，只是这份知识分散在许多神经元之间：`,
        `Not a neuron but a direction: layer ${d.layer}'s MLP input (divided by its RMS) projected on the difference between the mean ${name} token and the mean other token separates them with held-out AUC ${d.heldOutAuc.toFixed(3)}. The model knows where ${name} is; the knowledge is spread over many neurons:`);
    }
    const inspect = card.querySelector('.feature-inspect');
    if (inspect) inspect.textContent = L('在下面的卡片里细看这个神经元 ↓', 'Look closer at this neuron in the card below ↓');
    const top = state.featureTops?.[name], topNote = card.querySelector('.feature-top');
    if (top && topNote) {
      const n = top.filter((x) => x.labels?.includes(name)).length, k = top.length, pieces = top.map((x) => JSON.stringify(x.piece)).join(' ');
      const what = { city: ['在城市名里', 'inside a city name', 'inside city names'], negation: ['是否定词', 'a negation word', 'negation words'], code: ['在代码里', 'inside code', 'inside code'] }[name];
      topNote.dataset.in = n; topNote.dataset.k = k;
      topNote.textContent = L(`它在探针句子里最强的 ${k} 次激活中，有 ${n} 次${what[0]}：${pieces}。`, `Of its ${k} strongest activations in the probe sentences, ${n} ${n === 1 ? 'is' : 'are'} ${n === 1 ? what[1] : what[2]}: ${pieces}.`)
        + (n < k / 2 && state.entry?.kind !== 'random' ? L('有选择性不等于单义：它把这类 token 排在其它 token 前面（这就是 AUC），但激活最强的却是别的东西。', ' Selective is not the same as monosemantic: it ranks these tokens above the others (that is the AUC), yet it fires hardest on other things.') : '');
    }
    for (const meta of card.querySelectorAll('.feature-meta')) {
      const g = meta.dataset.lang, x = two ? featureBest(g).find((y) => y.feature === name) : b;
      const pre = two ? L(`${LANG[g][0]}：`, `${LANG[g][1]}: `) : '', where = two ? L(`${LANG[g][0]}留出探针`, `held-out ${LANG[g][1]} probes`) : L('留出探针', 'held-out probes');
      meta.textContent = x ? pre + L(`第 ${x.layer} 层 · 神经元 ${x.neuron}${x.sign < 0 ? '（负向）' : ''} · ${where}上的 AUC = ${x.heldOutAuc.toFixed(3)}（${x.nPos} 个正例 / ${x.nNeg} 个反例${byLang(x)}）`,
        `layer ${x.layer} · neuron ${x.neuron}${x.sign < 0 ? ' (negative direction)' : ''} · AUC on ${where} = ${x.heldOutAuc.toFixed(3)} (${x.nPos} positive / ${x.nNeg} negative tokens${byLang(x)})`) : pre + L('没有找到。', 'none found.');
    }
    // the two languages' neurons: the same one, or two different ones
    const same = card.querySelector('.feature-same'), zh = two && featureBest('zh').find((y) => y.feature === name), en = two && featureBest('en').find((y) => y.feature === name);
    same.textContent = !(zh && en) ? '' : zh.layer === en.layer && zh.neuron === en.neuron
      ? L('两种语言里最好的是同一个神经元。', 'The best neuron is the same in both languages.')
      : L(`两种语言里最好的神经元不是同一个（中文：第 ${zh.layer} 层 #${zh.neuron}；英文：第 ${en.layer} 层 #${en.neuron}）：这个小模型为两种语言的${FEATURE_NAMES_ZH[name]}各学了自己的神经元。`,
        `The best neuron is not the same in the two languages (Chinese: layer ${zh.layer} #${zh.neuron}; English: layer ${en.layer} #${en.neuron}): this small model learned a ${name} neuron for each language.`);
  }
  const weak = featureBest().filter((b) => b.heldOutAuc < 0.9);
  const random = state.entry?.kind === 'random';
  $('features-note').textContent = random
    ? L('注意：这是随机权重的模型，没有学到任何东西——上面的“最佳”神经元只是噪声里挑出来的，不代表真实特征。', 'Note: this model has random weights and has learned nothing; the “best” neurons above are picked from noise and are not real features.')
    : weak.length ? L(`这个模型${two ? `在${LANG[state.lang][0]}里` : '里'}${weak.map((b) => FEATURE_NAMES_ZH[b.feature] ?? b.feature).join('、')}没有干净的单个神经元（最好的 AUC 也低于 0.9）——它们各自只覆盖一部分这类 token，太小的模型常常如此。`, `This model has no clean single neuron for ${weak.map((b) => b.feature).join(', ')}${two ? ` in ${LANG[state.lang][1]}` : ''} (the best held-out AUC is below 0.9): each candidate covers only some tokens of the kind, as is common in small models.`)
      : L(`在 ${state.features.tokens} 个探针 token 上找到；选择用一半探针，AUC 在另一半上计算${two ? '（每种语言各自找、各自算）' : ''}。`, `Found over ${state.features.tokens} probe tokens; chosen on half of the probes, AUC measured on the other half${two ? ' (each language searched and measured on its own probes)' : ''}.`);
}
$('fires-run').addEventListener('click', showNeuron);
// the same neuron into the knock-out card, switched off on the reader's sentence
$('fires-ko').addEventListener('click', async () => {
  $('ko-layer').value = $('fires-layer').value; $('ko-neuron').value = $('fires-neuron').value;
  $('ko-whole').checked = false; $('ko-neuron').disabled = false;
  state.koChosen = true;
  $('ko-btn').click();
  $('ko-btn').closest('.card').scrollIntoView({ behavior: 'smooth', block: 'start' });
});

/** the clicked token's value in the any-neuron card */
export function renderFiresReadout() {
  const f = state.fires, t = Number($('fires-readout').dataset.t);
  if (!f || !Number.isInteger(t) || t >= f.values.length) return;
  const mx = Math.max(1e-6, ...f.values.map(Math.abs)), v = f.values[t];
  $('fires-readout').textContent = L(`token ${t}（${JSON.stringify(f.pieces[t])}）：${v.toFixed(3)}，是这段文字里最大值的 ${(100 * Math.max(0, v) / mx).toFixed(0)}%`,
    `token ${t} (${JSON.stringify(f.pieces[t])}): ${v.toFixed(3)}, ${(100 * Math.max(0, v) / mx).toFixed(0)}% of the largest in this text`);
}

/** every probe token's activation as a histogram, with the mean and the top list's cut marked */
export function drawHistogram() {
  const a = state.topActs, hst = a?.histogram;
  if (!hst || !hst.counts.length) { $('fires-hist').innerHTML = ''; $('fires-hist-cap').textContent = ''; return; }
  const W = 640, x0 = 40, w = W - 60, y0 = 10, h = 100, n = hst.counts.length, bw = w / n;
  const top = Math.max(...hst.counts), span = hst.hi - hst.lo || 1;
  const sx = (v) => x0 + ((v - hst.lo) / span) * w;
  // counts on a log scale: most tokens sit near 0, the interesting ones are a handful at the right
  const hy = (c) => (c ? (Math.log1p(c) / Math.log1p(top)) * h : 0);
  const bars = hst.counts.map((c, i) => `<rect class="hbar" x="${(x0 + i * bw + 1).toFixed(1)}" y="${(y0 + h - hy(c)).toFixed(1)}" width="${(bw - 2).toFixed(1)}" height="${hy(c).toFixed(1)}" fill="var(--mlp)" data-count="${c}"><title>${c}</title></rect>`).join('');
  const mark = (v, label, cls) => (Number.isFinite(v) ? `<line x1="${sx(v)}" x2="${sx(v)}" y1="${y0 - 4}" y2="${y0 + h}" stroke="var(--fg)" stroke-dasharray="3 3"/><text class="tick ${cls}" x="${sx(v) + 3}" y="${y0 + 8}">${label}</text>` : '');
  $('fires-hist').innerHTML = bars + mark(a.sign * a.mean, L('均值', 'mean'), 'mean') + mark(a.sign * a.kth, L('前 8 名', 'top 8'), 'kth') +
    `<text class="tick" x="${x0}" y="${y0 + h + 16}">${hst.lo.toFixed(2)}</text><text class="tick" x="${x0 + w}" y="${y0 + h + 16}" text-anchor="end">${hst.hi.toFixed(2)}</text>`;
  $('fires-hist').setAttribute('aria-label', L(`第 ${a.l} 层神经元 ${a.j} 的激活直方图`, `histogram of the activations of neuron ${a.j} of layer ${a.l}`));
  $('fires-hist-cap').textContent = L(`这个神经元在 ${a.tokens} 个探针 token 上的激活分布（${a.sign > 0 ? '' : '取负后，'}纵轴为对数刻度）：大多数 token 上它几乎不动，上面列出的最强激活是右边的少数。`,
    `This neuron's activation over ${a.tokens} probe tokens (${a.sign > 0 ? '' : 'negated, '}counts on a log scale): on most tokens it barely moves; the strongest activations listed above are the few on the right.`);
}
