// <section id="fires">: what an MLP neuron fires on. The feature search over the probe sentences
// (cached per weight set), one card per feature with its best neuron shading a sentence, and the
// any-neuron card (shading, the most active neurons at a token, where it fires most in the probes
// with a histogram, what it writes). Announces 'features' (the neurons found, per language) and
// asks for a knock-out ('knockout') when the reader wants one switched off.
import { $, bi, biSvg, chartWidth, checkNeuron, readableToken, rovingGroup, emit, escapeHtml, fillLayerPicker, guard, modelLangs, nl, on, setBi, setText, state, tokenTexts, urlKey, urlStart, writeUrl } from '../core.js';
import { shadeTokens } from '../widgets/shade.js';

/** each feature card's sentence, per language */
const PROBE_SENTENCES = {
  en: { city: 'I flew from Paris to Tokyo last week', negation: 'The food was not bad at all', code: 'Try this loop: for i in range(10):' },
  zh: { city: '我上周从巴黎飞到东京', negation: '饭菜一点也不好。我从不在星期一去北京', code: '试试这个循环：for i in range(10):' },
};
const FEATURES = ['city', 'negation', 'code'];
const NAME = { city: { zh: '城市名', en: 'city' }, negation: { zh: '否定词', en: 'negation' }, code: { zh: '代码', en: 'code' } };
export const TITLES = { city: { zh: '在城市名上激活', en: 'fires on city names' }, negation: { zh: '在否定词上激活', en: 'fires on negation' }, code: { zh: '在代码内部激活', en: 'fires inside code' } };
const LANG = { zh: { zh: '中文', en: 'Chinese' }, en: { zh: '英文', en: 'English' } };

/** this section's own state: the search result, the any-neuron card's neuron and numbers */
const my = { features: null, cardsRun: 0, neuron: null, fires: null, topActs: null, shared: null };

export function mount() {
  my.shared = /^(\d+):(\d+):(-?1)$/.exec(urlStart.get('neuron') ?? ''); // a shared link's neuron, once
  urlKey('neuron', () => (my.topActs ? `${my.topActs.l}:${my.topActs.j}:${my.topActs.sign}` : null));
  on('unload', clear);
  on('model', fillPickers);
  on('settled', () => findFeatures());
  on('lang', () => { if (bilingual()) renderCards(); });
  $('fires-run').addEventListener('click', () => showNeuron());
  $('fires-tok').addEventListener('change', () => { if (my.fires) renderNeighbours(); });
  $('fires-ko').addEventListener('click', () => emit('knockout', { layer: Number($('fires-layer').value), neuron: Number($('fires-neuron').value) }));
  for (const box of ['features', 'features-more']) $(box).addEventListener('click', (e) => {
    const b = e.target.closest('.feature-inspect');
    if (!b) return;
    pick(b.dataset.layer, b.dataset.neuron, b.dataset.sign);
    $('deeper-neuron').open = true; // the card sits one panel deeper
    showNeuron().then(() => $('fires-card').scrollIntoView({ behavior: 'smooth', block: 'start' }));
  });
  setBi($('fires-sign').options[0], { zh: '正值', en: 'positive' });
  setBi($('fires-sign').options[1], { zh: '负值', en: 'negative' });
}

function clear() {
  my.features = null; my.fires = null; my.topActs = null;
  $('features').innerHTML = ''; $('features-more').innerHTML = '';
  setText($('features-note'), { zh: '正在加载模型…', en: 'loading the model…' });
  for (const id of ['fires-top', 'fires-up', 'fires-down', 'fires-out', 'fires-neighbours', 'fires-hist', 'fires-range']) $(id).innerHTML = '';
  for (const id of ['fires-top-note', 'fires-hist-cap', 'fires-readout', 'fires-describe']) $(id).textContent = '';
}

function fillPickers() {
  fillLayerPicker($('fires-layer'));
  $('fires-neuron').max = state.info.config.intermediate_size - 1;
}
const pick = (l, j, sign) => { $('fires-layer').value = String(l); $('fires-neuron').value = String(j); $('fires-sign').value = String(sign); };

/** the probe sentences: fewer for the big models (each one is a forward pass) */
const probeTexts = () => (state.info.config.hidden_size >= 512 ? state.probes.slice(0, 48) : state.probes);
/** whether the cards show one neuron per language (a small model trained on both languages) */
const bilingual = () => !!my.features?.bestByLang?.zh && !!my.features?.bestByLang?.en;
/** the feature neurons of a language: its own for a bilingual model, else the best over all probes */
const featureBest = (lang = state.lang) => (bilingual() ? my.features.bestByLang[lang] : my.features?.best ?? []);

/** Searches the feature neurons over the probe sentences (or takes them from this browser's
 *  storage: the search is kept per weight set and probe set), draws the cards, announces them. */
async function findFeatures() {
  const m = state.model;
  if (!m?.tokenizer || !state.probes) { $('features').innerHTML = ''; $('features-more').innerHTML = ''; setText($('features-note'), { zh: '这个模型没有分词器，无法运行探针。', en: 'This model has no tokenizer, so the probes cannot run.' }); return; }
  const probes = probeTexts();
  const searching = (p) => {
    const n = p ? ` ${p.done} / ${p.total}` : '';
    setText($('features-note'), probes.length < state.probes.length
      ? { zh: `正在用 ${probes.length} 个探针句子寻找神经元（大模型只用一部分探针；每个句子都要跑一遍整个模型）…${n}`, en: `Searching neurons with ${probes.length} probe sentences (a big model gets a part of them: each one is a pass through the whole model)…${n}` }
      : { zh: `正在用探针句子寻找神经元…${n}`, en: `Searching neurons with the probe sentences…${n}` });
  };
  const which = state.info.manifestSha256 ?? state.entry?.manifestSha256 ?? (state.entry?.kind === 'hf' ? `${state.entry.source}:${state.entry.dtype}` : null);
  const key = which ? `mlpscope-features-v3:${which}:${probes.length}:${probes[0]?.text.length ?? 0}` : null;
  let res = null;
  try { res = key && JSON.parse(localStorage.getItem(key) ?? 'null'); } catch { res = null; }
  document.body.dataset.featuresFrom = res ? 'cache' : 'search';
  if (!res) {
    searching(null);
    await emit('search', true);
    // a small model trained on both languages: also one search per language (its own neurons)
    const byLang = modelLangs().includes('zh') && modelLangs().includes('en') && probes.length === state.probes.length;
    document.body.dataset.featureSearches = String(Number(document.body.dataset.featureSearches ?? 0) + 1); // tests: a cached visit runs none
    try { res = await m.findFeatureNeurons(probes, { top: 2, directions: true, topActivations: 8, quantiles: RANGE.slice(0, 3), byLang, onProgress: searching }); } finally { await emit('search', false); }
    if (key) try { localStorage.setItem(key, JSON.stringify(res, (k, v) => (ArrayBuffer.isView(v) ? Array.from(v) : v))); } catch { /* storage full or private mode: search again next time */ }
  }
  if (state.model !== m) return; // another model was chosen meanwhile
  my.features = res;
  const neurons = Object.fromEntries(['zh', 'en'].map((g) => [g, featureBest(g).filter((b) => TITLES[b.feature]).map((b) => ({ ...b, title: TITLES[b.feature] }))]));
  await emit('features', { neurons });
  await renderCards();
  // the neuron card: the one a shared link names (once), else the best feature neuron
  const b0 = featureBest()[0], s = my.shared;
  if (s && Number(s[1]) < state.info.config.num_hidden_layers) { pick(s[1], s[2], s[3]); my.shared = null; await showNeuron(); }
  else if (b0) { pick(b0.layer, b0.neuron, b0.sign); await showNeuron(); }
}

/** The three feature cards: each neuron shading its sentence (for a bilingual model one neuron and
 *  one sentence per language, the page's language first); drawn again on a language switch, since
 *  the page language's neuron is the card's. */
async function renderCards() {
  const res = my.features, m = state.model, run = ++my.cardsRun;
  if (!res) return;
  const stale = () => state.model !== m || my.features !== res || my.cardsRun !== run; // a newer draw took over
  delete document.body.dataset.featureCards; // set again when every card is drawn (tests wait for it)
  const two = bilingual(), langs = two ? [state.lang, state.lang === 'zh' ? 'en' : 'zh'] : ['en'];
  const html = FEATURES.map((name) => {
    const b = featureBest().find((x) => x.feature === name);
    const rows = langs.map((g) => `<p class="note feature-meta" data-lang="${g}"></p><div class="tokens" data-lang="${g}"></div>`).join('');
    return `<div class="card" id="feature-${name}" data-layer="${b?.layer ?? ''}" data-neuron="${b?.neuron ?? ''}" data-auc="${b?.heldOutAuc ?? ''}">
      <h3 class="feature-title">“${bi(TITLES[name])}”</h3>${rows}<p class="note feature-same"></p><p class="note feature-top"></p><p class="note feature-merged"></p><div class="feature-range"></div>
      ${b ? `<button type="button" class="link feature-inspect" data-layer="${b.layer}" data-neuron="${b.neuron}" data-sign="${b.sign}">${bi({ zh: '在下面的卡片里细看这个神经元 ↓', en: 'Look closer at this neuron in the card below ↓' })}</button>` : ''}</div>`;
  });
  // the first feature (city, the running example's) on the main path; the others one panel deeper
  $('features').innerHTML = html[0];
  $('features-more').innerHTML = html.slice(1).join('');
  renderCardText(); // titles, numbers and buttons at once; the shading follows
  for (const name of FEATURES) {
    const card = $(`feature-${name}`);
    for (const g of langs) {
      const b = featureBest(two ? g : state.lang).find((x) => x.feature === name);
      if (b) await shade(card.querySelector(`.tokens[data-lang="${g}"]`), PROBE_SENTENCES[two ? g : 'en'][name], b.layer, b.neuron, b.sign);
      if (stale()) return;
    }
    // where no single neuron is clean, show that a direction of the residual stream is
    const d = weakWithDirection(name);
    if (d) {
      const zh = NAME[name].zh;
      card.insertAdjacentHTML('beforeend', `<p class="note feature-dir" data-layer="${d.layer}" data-auc="${d.heldOutAuc}">${bi({
        zh: `不是一个神经元，而是一个方向：第 ${d.layer} 层 MLP 的输入（除以 RMS）投影到“${zh} token 均值减其余 token 均值”的方向上，留出探针上的 AUC = ${d.heldOutAuc.toFixed(3)}。模型知道哪里是${zh}，只是这份知识分散在许多神经元之间：`,
        en: `Not a neuron but a direction: layer ${d.layer}'s MLP input (divided by its RMS) projected on the difference between the mean ${name} token and the mean other token separates them with held-out AUC ${d.heldOutAuc.toFixed(3)}. The model knows where ${name} is; the knowledge is spread over many neurons:` })}</p><div class="tokens dir-tokens"></div>`);
      await shadeDirection(card.querySelector('.dir-tokens'), PROBE_SENTENCES[two ? state.lang : 'en'][name], d);
      if (stale()) return;
    }
  }
  document.body.dataset.featureCards = langs[0];
}

async function shade(el, text, layer, neuron, sign = 1) {
  const m = state.model, I = state.info.config.intermediate_size;
  const ids = await m.tokenizer.encode(text);
  const r = await m.forward(ids, { stats: false, logits: 'none', hooks: [`blocks.${layer}.mlp.hook_post`] });
  await shadeTokens(el, ids, Array.from(ids, (_, t) => sign * r.hooks[`blocks.${layer}.mlp.hook_post`][t * I + neuron]));
}
/** the best direction for a feature whose best neuron is below 0.9 held out (trained models only) */
function weakWithDirection(name) {
  const b = featureBest().find((x) => x.feature === name), d = my.features?.directions?.find((x) => x.feature === name);
  return b && d && b.heldOutAuc < 0.9 && d.heldOutAuc > b.heldOutAuc && state.entry?.kind !== 'random' ? d : null;
}
async function shadeDirection(el, text, d) {
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
  return a?.zh !== undefined && a?.en !== undefined ? { zh: `；中文 ${a.zh.toFixed(3)}，英文 ${a.en.toFixed(3)}`, en: `; Chinese ${a.zh.toFixed(3)}, English ${a.en.toFixed(3)}` } : { zh: '', en: '' };
}
function renderCardText() {
  const two = bilingual();
  for (const name of FEATURES) {
    const b = featureBest().find((x) => x.feature === name), card = $(`feature-${name}`);
    if (!card) continue;
    const top = b?.top, topNote = card.querySelector('.feature-top');
    if (top && topNote) {
      const n = top.filter((x) => x.labels?.includes(name)).length, k = top.length, pieces = top.map((x) => JSON.stringify(x.piece)).join(' ');
      const what = { city: ['在城市名里', 'inside a city name', 'inside city names'], negation: ['是否定词', 'a negation word', 'negation words'], code: ['在代码里', 'inside code', 'inside code'] }[name];
      const messy = n < k / 2 && state.entry?.kind !== 'random';
      topNote.dataset.in = n; topNote.dataset.k = k;
      setText(topNote, { zh: `它在探针句子里最强的 ${k} 次激活中，有 ${n} 次${what[0]}：${pieces}。` + (messy ? '有选择性不等于单义：它把这类 token 排在其它 token 前面（这就是 AUC），但激活最强的却是别的东西。' : ''),
        en: `Of its ${k} strongest activations in the probe sentences, ${n} ${n === 1 ? 'is' : 'are'} ${n === 1 ? what[1] : what[2]}: ${pieces}.` + (messy ? ' Selective is not the same as monosemantic: it ranks these tokens above the others (that is the AUC), yet it fires hardest on other things.' : '') });
    }
    // tokens the tokenizer made of the feature's word and its neighbours: the value is the phrase's
    const merged = (top ?? []).filter((x) => x.spans?.some((sp) => sp.label === name && x.piece.trim().length > sp.text.trim().length && x.piece.includes(sp.text.trim())));
    const mergedNote = card.querySelector('.feature-merged');
    if (mergedNote) {
      mergedNote.dataset.n = merged.length;
      const ex = merged.slice(0, 2).map((x) => { const sp = x.spans.find((y) => y.label === name); return `${JSON.stringify(x.piece)} ⊃ ${JSON.stringify(sp.text.trim())}`; }).join('，');
      setText(mergedNote, !merged.length ? null : {
        zh: `其中 ${merged.length} 个是分词器把${NAME[name].zh}和旁边的字合成的一个 token（${ex}）：这个值属于整个片段，不只属于${NAME[name].zh}本身。`,
        en: `${merged.length} of them ${merged.length === 1 ? 'is a token' : 'are tokens'} the tokenizer made of the ${name} word and its neighbours (${ex.replace(/，/g, ', ')}): the value belongs to the whole piece, not to the ${name} word alone.` });
    }
    // examples across its range, not only the strongest: the token at the median, at 90%, at 99%
    const range = card.querySelector('.feature-range');
    if (range) range.innerHTML = b?.atQuantiles?.length ? `<p class="note">${bi({ zh: '它的取值范围（所有探针 token 的百分位）：', en: 'Across its range (percentiles of all probe tokens):' })}</p><ol class="top-acts range">${b.atQuantiles.map((x) =>
      `<li data-q="${x.q}" data-act="${x.activation}"><span class="q">${(100 * x.q).toFixed(0)}%</span> <code>${nl(x.before)}<mark>${escapeHtml(x.piece)}</mark>${nl(x.after)}</code> · ${x.activation.toFixed(3)}</li>`).join('')}</ol>` : '';
    for (const meta of card.querySelectorAll('.feature-meta')) {
      const g = meta.dataset.lang, x = two ? featureBest(g).find((y) => y.feature === name) : b;
      const pre = two ? { zh: `${LANG[g].zh}：`, en: `${LANG[g].en}: ` } : { zh: '', en: '' };
      const where = two ? { zh: `${LANG[g].zh}留出探针`, en: `held-out ${LANG[g].en} probes` } : { zh: '留出探针', en: 'held-out probes' };
      const bl = x ? byLang(x) : null;
      setText(meta, x ? { zh: pre.zh + `第 ${x.layer} 层 · 神经元 ${x.neuron}${x.sign < 0 ? '（负向）' : ''} · ${where.zh}上的 AUC = ${x.heldOutAuc.toFixed(3)}（${x.nPos} 个正例 / ${x.nNeg} 个反例${bl.zh}）`,
        en: pre.en + `layer ${x.layer} · neuron ${x.neuron}${x.sign < 0 ? ' (negative direction)' : ''} · AUC on ${where.en} = ${x.heldOutAuc.toFixed(3)} (${x.nPos} positive / ${x.nNeg} negative tokens${bl.en})` }
        : { zh: pre.zh + '没有找到。', en: pre.en + 'none found.' });
    }
    // the two languages' neurons: the same one, or two different ones
    const same = card.querySelector('.feature-same'), zh = two && featureBest('zh').find((y) => y.feature === name), en = two && featureBest('en').find((y) => y.feature === name);
    setText(same, !(zh && en) ? null : zh.layer === en.layer && zh.neuron === en.neuron
      ? { zh: '两种语言里最好的是同一个神经元。', en: 'The best neuron is the same in both languages.' }
      : { zh: `两种语言的最佳神经元不同（中文：第 ${zh.layer} 层 #${zh.neuron}；英文：第 ${en.layer} 层 #${en.neuron}）：这个小模型为每种语言的${NAME[name].zh}各学了一个。`,
        en: `The two languages' best neurons differ (Chinese: layer ${zh.layer} #${zh.neuron}; English: layer ${en.layer} #${en.neuron}): this small model learned a ${name} neuron per language.` });
  }
  const weak = featureBest().filter((b) => b.heldOutAuc < 0.9);
  const g = state.lang;
  setText($('features-note'), state.entry?.kind === 'random'
    ? { zh: '注意：这是随机权重的模型，没有学到任何东西——上面的“最佳”神经元只是噪声里挑出来的，不代表真实特征。', en: 'Note: this model has random weights and has learned nothing; the “best” neurons above are picked from noise and are not real features.' }
    : weak.length ? { zh: `这个模型${two ? `在${LANG[g].zh}里` : '里'}${weak.map((b) => NAME[b.feature]?.zh ?? b.feature).join('、')}没有干净的单个神经元（最好的 AUC 也低于 0.9）——它们各自只覆盖一部分这类 token，太小的模型常常如此。`,
      en: `This model has no clean single neuron for ${weak.map((b) => b.feature).join(', ')}${two ? ` in ${LANG[g].en}` : ''} (the best held-out AUC is below 0.9): each candidate covers only some tokens of the kind, as is common in small models.` }
      : { zh: `在 ${my.features.tokens} 个探针 token 上找到${two ? '（每种语言在自己的探针上）' : ''}。`, en: `Found over ${my.features.tokens} probe tokens${two ? ', each language on its own probes' : ''}.` });
}

// ---------------------------------------------------------------- any neuron, any text
/** shade the card's text, list the most active neurons at a token, then where the neuron fires
 *  most in the probes and what it writes */
async function showNeuron() {
  const l = Number($('fires-layer').value), j = Number($('fires-neuron').value), sign = Number($('fires-sign').value);
  const I = state.info.config.intermediate_size;
  const clearCard = () => {
    for (const id of ['fires-top', 'fires-up', 'fires-down', 'fires-out', 'fires-neighbours', 'fires-hist', 'fires-range']) $(id).innerHTML = '';
    for (const id of ['fires-hist-cap', 'fires-readout', 'fires-describe']) $(id).textContent = '';
    $('fires-scale').querySelector('.hi').textContent = '';
    my.topActs = null; my.fires = null;
  };
  if (!checkNeuron($('fires-neuron'), $('fires-top-note'))) { clearCard(); return; }
  if (!state.model?.tokenizer) return;
  await guard($('fires-card'), async () => {
    // the card says at once that it is working, and shows nothing of the previous neuron meanwhile
    clearCard();
    const busy = `<li class="note">${bi({ zh: '计算中…', en: 'computing…' })}</li>`;
    for (const id of ['fires-top', 'fires-up', 'fires-down']) $(id).innerHTML = busy;
    setText($('fires-top-note'), { zh: '计算中…', en: 'computing…' });
    // one pass over the card's text: the neuron's activation at every token (shading) and the
    // engine's top-3 neurons of every layer at every token (the chips)
    const m = state.model, ids = (await m.tokenizer.encode($('fires-text').value)).slice(0, state.model.contextLength), hook = `blocks.${l}.mlp.hook_post`;
    if (!ids.length) { clearCard(); setText($('fires-top-note'), { zh: '请输入一些文字。', en: 'Please type some text.' }); return; }
    const r = await m.forward(ids, { stats: true, topK: 3, logits: 'none', hooks: [hook] });
    const values = Array.from(ids, (_, t) => sign * r.hooks[hook][t * I + j]);
    const pieces = await shadeTokens($('fires-out'), ids, values);
    my.fires = { stats: r.stats, values, pieces };
    // the colour scale of the shading, and a token's value on a click or tap (phones have no hover)
    const mx = Math.max(1e-6, ...values.map(Math.abs));
    $('fires-scale').querySelector('.hi').textContent = mx.toFixed(2);
    $('fires-out').querySelectorAll('.tok').forEach((el, t) => el.addEventListener('click', () => readToken(t)));
    $('fires-tok').innerHTML = pieces.map((p, t) => `<option value="${t}">${t}: ${escapeHtml(JSON.stringify(p))}</option>`).join('');
    $('fires-tok').value = String(values.reduce((b, v, t) => (v > values[b] ? t : b), 0)); // where it fires most
    renderNeighbours();
    // what it writes: a neuron firing negatively writes minus its column, so up and down swap
    // (byte pieces that are not text on their own, and control characters, are left out)
    const out = await m.neuronOutput(l, j, { k: 40 });
    const [up, down] = sign > 0 ? [out.promoted, out.suppressed] : [out.suppressed, out.promoted];
    const texts = await tokenTexts([...up, ...down].map((t) => t.id));
    const list = (ts, at) => ts.map((t, i) => ({ t, text: texts[at + i] }))
      .filter(({ text }) => readableToken(text)).slice(0, 6)
      .map(({ t, text }) => `<li data-id="${t.id}" data-logit="${sign * t.logit}"><code>${nl(text)}</code> · ${(sign * t.logit).toFixed(2)}</li>`).join('');
    $('fires-up').innerHTML = list(up, 0);
    $('fires-down').innerHTML = list(down, up.length);
    if (!state.probes) { $('fires-top').innerHTML = ''; $('fires-top-note').textContent = ''; return; }
    const probes = probeTexts();
    const res = await m.neuronTopActivations(probes, { layer: l, neuron: j, sign, k: 8, window: 6, quantiles: RANGE });
    const li = (x) => `<li data-act="${x.activation}" data-text="${escapeHtml(x.text)}" data-token="${x.token}"${x.q !== undefined ? ` data-q="${x.q}"` : ''}>${x.q !== undefined ? `<span class="q">${(100 * x.q).toFixed(1)}%</span> ` : ''}<code>${nl(x.before)}<mark>${escapeHtml(x.piece)}</mark>${nl(x.after)}</code> · ${x.activation.toFixed(3)}</li>`;
    $('fires-top').innerHTML = res.top.map(li).join('');
    // examples across its range, not only the top: what it does at the median, at 90%, at 99%
    $('fires-range').innerHTML = (res.atQuantiles ?? []).map(li).join('');
    // a one-line description from the labels of the probe sentences its top tokens sit in
    const counts = {};
    for (const x of res.top) for (const lab of x.labels?.length ? x.labels : ['other']) counts[lab] = (counts[lab] ?? 0) + 1;
    const kinds = Object.entries(counts).sort((a, b) => b[1] - a[1]);
    $('fires-describe').dataset.kinds = JSON.stringify(counts);
    setText($('fires-describe'), { zh: `它最强的 ${res.top.length} 次激活落在：${kinds.map(([k, n]) => `${LABEL_WORDS[k]?.zh ?? k} ${n} 次`).join('，')}（按探针句子的标注数）。`,
      en: `Its ${res.top.length} strongest activations fall on: ${kinds.map(([k, n]) => `${LABEL_WORDS[k]?.en ?? k} ${n}×`).join(', ')} (counted from the probe sentences' labels).` });
    my.topActs = { l, j, sign, texts: probes.length, tokens: res.tokens, positive: res.positive, histogram: res.histogram, kth: res.top.at(-1)?.activation, mean: res.mean };
    const a = my.topActs;
    setText($('fires-top-note'), { zh: `在 ${a.texts} 个探针句子的 ${a.tokens} 个 token 中排序；第 ${a.l} 层神经元 ${a.j} 在其中 ${(100 * a.positive).toFixed(1)}% 的 token 上为${a.sign > 0 ? '正' : '负'}值。`,
      en: `Ranked over ${a.tokens} tokens of ${a.texts} probe sentences; neuron ${a.j} of layer ${a.l} is ${a.sign > 0 ? 'positive' : 'negative'} on ${(100 * a.positive).toFixed(1)}% of them.` });
    drawHistogram();
  });
  writeUrl();
}

/** the quantiles of the any-neuron card's "across its range" examples */
const RANGE = [0.5, 0.9, 0.99, 0.999];
/** the probe labels in words */
const LABEL_WORDS = { city: { zh: '城市名', en: 'city names' }, negation: { zh: '否定词', en: 'negations' }, code: { zh: '代码', en: 'code' }, name: { zh: '人名', en: 'names' }, noun: { zh: '名词', en: 'nouns' }, country: { zh: '国家名', en: 'countries' }, other: { zh: '无标注的 token', en: 'unlabelled tokens' } };

/** the most active neurons (|mlp.hook_post|, every layer) at one token of the card's text, as
 *  buttons that load them into the card; the token defaults to where the card's neuron fires most */
function renderNeighbours() {
  const st = my.fires.stats, k = st.topK;
  const t = Number($('fires-tok').value), cur = [Number($('fires-layer').value), Number($('fires-neuron').value)];
  const chips = [];
  for (let l = 0; l < st.layers; l++)
    for (let i = 0; i < k; i++) {
      const j = st.top_idx[l][t * k + i], v = st.top_val[l][t * k + i];
      chips.push(`<button type="button" data-layer="${l}" data-neuron="${j}" data-act="${v}" aria-pressed="${l === cur[0] && j === cur[1]}">L${l} · #${j} · ${v.toFixed(2)}</button>`);
    }
  $('fires-neighbours').innerHTML = chips.join('');
  rovingGroup($('fires-neighbours')); // one Tab stop, not 3 per layer
  for (const b of $('fires-neighbours').querySelectorAll('button')) b.addEventListener('click', () => {
    pick(b.dataset.layer, b.dataset.neuron, Number(b.dataset.act) < 0 ? -1 : 1);
    showNeuron();
  });
}

/** the clicked token's value in the any-neuron card */
function readToken(t) {
  const f = my.fires;
  if (!f || t >= f.values.length) return;
  const mx = Math.max(1e-6, ...f.values.map(Math.abs)), v = f.values[t], pct = (100 * Math.max(0, v) / mx).toFixed(0), p = JSON.stringify(f.pieces[t]);
  $('fires-readout').dataset.t = String(t);
  setText($('fires-readout'), { zh: `token ${t}（${p}）：${v.toFixed(3)}，是这段文字里最大值的 ${pct}%`, en: `token ${t} (${p}): ${v.toFixed(3)}, ${pct}% of the largest in this text` });
}

/** every probe token's activation as a histogram, with the mean and the top list's cut marked */
function drawHistogram() {
  const a = my.topActs, hst = a?.histogram;
  if (!hst || !hst.counts.length) { $('fires-hist').innerHTML = ''; $('fires-hist-cap').textContent = ''; return; }
  const W = chartWidth($('fires-hist'), 150, drawHistogram), x0 = 16, w = W - 32, y0 = 10, h = 100, n = hst.counts.length, bw = w / n;
  const top = Math.max(...hst.counts), span = hst.hi - hst.lo || 1;
  const sx = (v) => x0 + ((v - hst.lo) / span) * w;
  // counts on a log scale: most tokens sit near 0, the interesting ones are a handful at the right
  const hy = (c) => (c ? (Math.log1p(c) / Math.log1p(top)) * h : 0);
  const bars = hst.counts.map((c, i) => `<rect class="hbar" x="${(x0 + i * bw + 1).toFixed(1)}" y="${(y0 + h - hy(c)).toFixed(1)}" width="${(bw - 2).toFixed(1)}" height="${hy(c).toFixed(1)}" fill="var(--mlp)" data-count="${c}"><title>${c}</title></rect>`).join('');
  const mark = (v, label, cls) => (Number.isFinite(v) ? `<line x1="${sx(v)}" x2="${sx(v)}" y1="${y0 - 4}" y2="${y0 + h}" stroke="var(--fg)" stroke-dasharray="3 3"/><text class="tick ${cls}" x="${sx(v) > W - 70 ? sx(v) - 3 : sx(v) + 3}" y="${cls === 'kth' ? y0 + 22 : y0 + 8}"${sx(v) > W - 70 ? ' text-anchor="end"' : ''}>${biSvg(label)}</text>` : '');
  $('fires-hist').innerHTML = bars + mark(a.sign * a.mean, { zh: '均值', en: 'mean' }, 'mean') + mark(a.sign * a.kth, { zh: '前 8 名', en: 'top 8' }, 'kth') +
    `<text class="tick" x="${x0}" y="${y0 + h + 16}">${hst.lo.toFixed(2)}</text><text class="tick" x="${x0 + w}" y="${y0 + h + 16}" text-anchor="end">${hst.hi.toFixed(2)}</text>`;
  setBi($('fires-hist'), { zh: `第 ${a.l} 层神经元 ${a.j} 的激活直方图`, en: `histogram of the activations of neuron ${a.j} of layer ${a.l}` }, 'aria-label');
  setText($('fires-hist-cap'), { zh: `这个神经元在 ${a.tokens} 个探针 token 上的激活分布（${a.sign > 0 ? '' : '取负后，'}纵轴为对数刻度）：大多数 token 上它几乎不动，上面列出的最强激活是右边的少数。`,
    en: `This neuron's activation over ${a.tokens} probe tokens (${a.sign > 0 ? '' : 'negated, '}counts on a log scale): on most tokens it barely moves; the strongest activations listed above are the few on the right.` });
}
