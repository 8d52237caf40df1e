// <section id="try">: the reader's own sentence (every chart recomputes from it), switching a
// neuron (or a whole MLP) off and how the prediction moves (before and after, the change in words,
// where in the sentence it mattered, which neurons are worth switching off here, all measured), and
// pushing a feature neuron while the model continues the sentence (steering).
import { klDivergence, topTokens } from 'mlpscope';
import { continuation, continuationHtml } from '../widgets/continue.js';
import { $, DEFAULT_TEXTS, probeTextsInLang, bi, checkNeuron, escapeHtml, fillLayerPicker, guard, modelLangs, on, runText, setBi, setText, skipCard, state, tokenTexts } from '../core.js';
import { shadeTokens } from '../widgets/shade.js';

const my = { searching: false, koChosen: false, ko: null, koRead: null, suggest: null, steerNeurons: null, steer: null, units: null };

export function mount() {
  $('try-run').addEventListener('click', async () => { my.koChosen = false; await run($('try-text').value); });
  on('search', (on_) => { my.searching = on_; });
  on('unload', () => { my.steerNeurons = null; my.steer = null; my.units = null; my.writer = null; fillSteer(); for (const id of ['steer-before', 'steer-after', 'steer-note']) $(id).textContent = ''; });
  on('model', fillPickers);
  on('run', async () => { renderStatus(); await renderBefore(); resetSteer(); });
  on('run-refused', (why) => setText($('try-status'), why));
  on('features', ({ neurons }) => { my.steerNeurons = neurons; fillSteer(); });
  on('writer', (w) => { my.writer = w; fillSteer(); });
  on('lang', fillSteer);
  on('lang', followLanguage);
  on('knockout', async ({ layer, neuron }) => {
    $('ko-layer').value = String(layer); $('ko-neuron').value = String(neuron);
    $('ko-whole').checked = false; $('ko-neuron').disabled = false;
    my.koChosen = true;
    $('ko-card').scrollIntoView({ behavior: 'smooth', block: 'start' });
    await knockOut();
  });
  $('ko-layer').addEventListener('change', () => { my.koChosen = true; });
  $('ko-neuron').addEventListener('change', () => { my.koChosen = true; });
  $('ko-whole').addEventListener('change', () => { $('ko-neuron').disabled = $('ko-whole').checked; });
  $('ko-btn').addEventListener('click', () => knockOut());
  $('ko-tokens').addEventListener('click', (e) => { const el = e.target.closest('.tok'); if (el) readToken(el); });
  $('ko-tokens').addEventListener('keydown', (e) => { const el = e.target.closest('.tok'); if (el && (e.key === 'Enter' || e.key === ' ')) { e.preventDefault(); readToken(el); } });
  $('ko-suggest').addEventListener('click', () => suggest());
  $('ko-suggest-list').addEventListener('click', (e) => {
    const b = e.target.closest('button');
    if (!b) return;
    $('ko-whole').checked = false; $('ko-neuron').disabled = false;
    $('ko-layer').value = b.dataset.layer; $('ko-neuron').value = b.dataset.neuron;
    my.koChosen = true;
    knockOut();
  });
  $('steer-strength').addEventListener('input', () => { $('steer-value').textContent = `×${$('steer-strength').value}`; });
  $('steer-btn').addEventListener('click', runSteer);
}

/** The example sentence follows the page's language, until the reader writes one of their own. */
async function followLanguage(lang) {
  const next = DEFAULT_TEXTS[lang];
  if (state.text !== state.defaultText || state.text === next) return;
  state.defaultText = next;
  $('try-text').value = next;
  if (state.model) await run(next);
  else state.text = next;
}

/** the reader's sentence through every chart; what could not run is said here */
async function run(text) {
  setText($('try-status'), my.searching ? { zh: '计算中…（模型正在完成神经元搜索，完成后马上运行你的句子）', en: 'computing… (the model is finishing the neuron search; your sentence runs right after it)' } : { zh: '计算中…', en: 'computing…' });
  try {
    const r = await runText(text);
    if (!r.ok && !r.stale) setText($('try-status'), r.why);
  } catch (err) {
    setText($('try-status'), { zh: `没能运行这句话：${err.message}`, en: `The sentence could not run: ${err.message}` });
  }
}

function fillPickers() {
  fillLayerPicker($('ko-layer'));
  $('ko-neuron').max = state.info.config.intermediate_size - 1;
}

function renderStatus() {
  const n = state.ids.length, ms = state.run.timings.total_ms.toFixed(1);
  const split = state.pieces.filter((p) => p.of).length, known = state.entry?.kind === 'trained';
  const s = { zh: `${n} 个 token，前向用时 ${ms} 毫秒。`, en: `${n} tokens, forward pass ${ms} ms.` };
  if (state.cut) { s.zh += ` 文字有 ${state.cut} 个 token，超出上下文长度：只用了前 ${n} 个。`; s.en += ` The text has ${state.cut} tokens, more than the context length: only the first ${n} are used.`; }
  if (split && known) {
    if (modelLangs().includes('zh')) {
      s.zh += ` 有 ${split} 个 token 只是某个字符的一部分（字节级 token）：这个模型的词表里没有这些字符，它们被拆成了字节。图表照常计算，但模型在这些地方的预测意义不大。`;
      s.en += ` ${split} tokens are only part of a character (byte-level tokens): this model's vocabulary has no token for those characters, so they are split into bytes. The charts are computed as usual, but the model's predictions there mean little.`;
    } else {
      s.zh += ` 有 ${split} 个 token 只是某个字符的一部分（字节级 token）：这个模型只用英文训练过，中文等文字会被拆成字节，图表照常计算，但模型的预测没有意义。想看中文，请选中英双语的演示模型，或加载 Qwen3.5-0.8B 这样的真实模型。`;
      s.en += ` ${split} tokens are only part of a character (byte-level tokens): this model was trained on English only, so other scripts are split into bytes. The charts are computed as usual, but the model's predictions mean nothing here. For Chinese, pick the bilingual demo model or load a real model such as Qwen3.5-0.8B.`;
    }
  }
  setText($('try-status'), s);
}

// ---------------------------------------------------------------- switching a neuron off
/** the k most likely next tokens over the real vocabulary, with their probabilities */
function topOf(logits, k) {
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
async function tokenList(top, before) {
  const texts = await tokenTexts(top.map((t) => t.id));
  return top.map((t, i) => {
    const d = before ? 100 * (t.p - before[t.id]) : null;
    const delta = d === null ? '' : ` <span class="delta">(${d >= 0 ? '+' : '−'}${Math.abs(d).toFixed(1)})</span>`;
    return `<li data-id="${t.id}" data-p="${t.p}"${before ? ` data-before="${before[t.id]}"` : ''}>${escapeHtml(JSON.stringify(texts[i]))} · ${pct(t.p)}${delta}</li>`;
  }).join('');
}
/** what a KL divergence means, in words (the numbers beside it say exactly) */
function klWords(kl) {
  if (kl < 1e-4) return { zh: '几乎看不出变化', en: 'no visible change' };
  if (kl < 1e-2) return { zh: '轻轻推了一下', en: 'a slight nudge' };
  if (kl < 0.1) return { zh: '看得出来、但不大的变化', en: 'a noticeable but modest change' };
  if (kl < 1) return { zh: '很大的变化', en: 'a large change' };
  return { zh: '几乎换了一个预测', en: 'almost a different prediction' };
}

async function renderBefore() {
  await guard($('ko-card'), async () => {
    $('ko-before').innerHTML = await tokenList(topOf(state.run.logits, 5));
    if (!my.koChosen) { // default: the most active neuron of the last layer at the last token
      const st = state.run.stats, l = st.layers - 1;
      $('ko-layer').value = String(l);
      $('ko-neuron').value = st.top_idx[l][(st.T - 1) * st.topK];
    }
    $('ko-after').innerHTML = '';
    delete $('ko-kl').dataset.kl;
    $('ko-where').hidden = true;
    my.ko = null; my.koRead = null; my.suggest = null;
    renderKoText();
  });
}

// the per-position view needs every position's logits twice; past this many floats (32 MB each:
// Qwen3.5's 248,320-token vocabulary × 33 tokens) only the last position is compared
const KO_ALL_LIMIT = 8 * 1024 * 1024;
async function knockOut() {
  const m = state.model, ids = state.ids, c = state.info.config, T = ids.length;
  const l = Number($('ko-layer').value), whole = $('ko-whole').checked;
  if (!whole && !checkNeuron($('ko-neuron'), $('ko-kl'))) { $('ko-after').innerHTML = ''; my.ko = null; $('ko-where').hidden = true; return; }
  const j = whole ? -1 : Number($('ko-neuron').value);
  await guard($('ko-card'), async () => {
    const neurons = whole ? Array.from({ length: c.intermediate_size }, (_, i) => i) : [j];
    const all = c.vocab_size * T <= KO_ALL_LIMIT, logits = all ? 'all' : 'last';
    setText($('ko-kl'), { zh: '计算中…', en: 'Computing…' });
    $('ko-after').innerHTML = '';
    $('ko-where').hidden = true;
    const base = all ? (await m.forward(ids, { stats: false, logits })).logits : state.run.logits;
    const r = await m.forward(ids, { stats: false, logits, interventions: [{ layer: l, hook: 'mlp.hook_post', neurons, scale: 0 }] });
    const V = r.logits.length / (all ? T : 1);
    const row = (x, t) => x.subarray(t * V, (t + 1) * V);
    const last = (x) => row(x, all ? T - 1 : 0);
    const pb = probs(last(base)), pa = probs(last(r.logits));
    let big = 0; // the token whose probability moved most
    for (let i = 1; i < pb.length; i++) if (Math.abs(pa[i] - pb[i]) > Math.abs(pa[big] - pb[big])) big = i;
    const perPos = all ? Array.from({ length: T }, (_, t) => klDivergence(row(base, t), row(r.logits, t))) : null;
    const kl = all ? perPos[T - 1] : klDivergence(base, r.logits);
    const after = await tokenList(topOf(last(r.logits), 5), pb);
    const ko = { l, j, kl, perPos, peak: null, moved: { id: big, before: pb[big], after: pa[big] } };
    const want = [big];
    if (perPos) {
      let tp = 0;
      for (let t = 1; t < T; t++) if (perPos[t] > perPos[tp]) tp = t;
      const top1 = (x) => { let b = 0; for (let i = 1; i < V; i++) if (x[i] > x[b]) b = i; return b; };
      ko.peak = { t: tp, kl: perPos[tp], at: ids[tp], before: top1(row(base, tp)), after: top1(row(r.logits, tp)) };
      // the sentence's own next token at each position: its probability before and after
      ko.next = ids.slice(1).map((id, t) => ({ id, before: probs(row(base, t))[id], after: probs(row(r.logits, t))[id] }));
      let drop = 0;
      for (let t = 1; t < ko.next.length; t++) if (ko.next[t].after - ko.next[t].before < ko.next[drop].after - ko.next[drop].before) drop = t;
      ko.drop = ko.next.length ? { t: drop, at: ids[drop], tok: ids[drop + 1], ...ko.next[drop] } : null;
      want.push(ko.peak.at, ko.peak.before, ko.peak.after, ...(ko.drop ? [ko.drop.at, ko.drop.tok] : []));
      await shadeTokens($('ko-tokens'), ids, perPos, state.pieces);
      $('ko-tokens').querySelectorAll('.tok').forEach((el, t) => { el.dataset.t = t; el.tabIndex = 0; });
      $('ko-tokens').dataset.kl = JSON.stringify(perPos);
    }
    // every token the readout names, in one call
    const texts = await tokenTexts(want), q = (id) => JSON.stringify(texts[want.indexOf(id)]);
    ko.moved.tok = q(big);
    if (ko.peak) Object.assign(ko.peak, { at: q(ko.peak.at), before: q(ko.peak.before), after: q(ko.peak.after) });
    if (ko.drop) Object.assign(ko.drop, { at: q(ko.drop.at), tok: q(ko.drop.tok) });
    my.ko = ko;
    $('ko-where').hidden = !perPos;
    my.koRead = null;
    renderKoText();
    $('ko-kl').dataset.kl = kl;
    $('ko-after').innerHTML = after; // last: tests wait for it
  });
}
/** tap (or focus and Enter) a token of "where it mattered": its KL and the next token's probability */
async function readToken(el) {
  const k = my.ko, t = Number(el.dataset.t);
  if (!k?.perPos || !Number.isInteger(t)) return;
  const n = k.next[t];
  const texts = await tokenTexts(n ? [state.ids[t], n.id] : [state.ids[t]]);
  my.koRead = { t, at: JSON.stringify(texts[0]), next: n ? { ...n, tok: JSON.stringify(texts[1]) } : null };
  renderKoRead();
}
function renderKoRead() {
  const r = my.koRead, k = my.ko;
  if (!r || !k?.perPos) { $('ko-read').textContent = ''; return; }
  const n = r.next, kl = k.perPos[r.t], w = klWords(kl), e = kl.toExponential(2);
  const tail = n ? { zh: `句子里接下来的 ${n.tok} 的概率：${pct(n.before)} → ${pct(n.after)}。`, en: `the sentence's next token ${n.tok}: ${pct(n.before)} → ${pct(n.after)}.` }
    : { zh: '这是最后一个 token，句子里没有下一个。', en: 'this is the last token; the sentence has no next one.' };
  setText($('ko-read'), { zh: `${r.at}（第 ${r.t} 个 token）之后：KL = ${e} nats（${w.zh}）；${tail.zh}`, en: `After ${r.at} (token ${r.t}): KL = ${e} nats (${w.en}); ${tail.en}` });
}

function renderKoText() {
  renderKoRead();
  renderSuggest();
  const k = my.ko;
  if (!k) { for (const id of ['ko-kl', 'ko-peak', 'ko-drop']) $(id).textContent = ''; return; }
  const what = k.j < 0 ? { zh: `第 ${k.l} 层的整个 MLP`, en: `the whole MLP of layer ${k.l}` } : { zh: `第 ${k.l} 层的神经元 ${k.j}`, en: `neuron ${k.j} of layer ${k.l}` };
  const mv = k.moved, w = klWords(k.kl), e = k.kl.toExponential(2);
  setText($('ko-kl'), { zh: `关掉${what.zh}后，下一个 token 的分布变了 KL = ${e} nats：${w.zh}。变化最大的单个 token 是 ${mv.tok}：${pct(mv.before)} → ${pct(mv.after)}。`,
    en: `With ${what.en} switched off, the next-token distribution moved by KL = ${e} nats: ${w.en}. The token whose probability moved most is ${mv.tok}: ${pct(mv.before)} → ${pct(mv.after)}.` });
  const p = k.peak;
  setText($('ko-peak'), !p ? null : p.before === p.after
    ? { zh: `变化最大的是 ${p.at}（第 ${p.t} 个 token）之后的预测：KL = ${p.kl.toExponential(2)} nats，最可能的下一个 token 仍是 ${p.before}。`,
      en: `The biggest change is in the prediction after ${p.at} (token ${p.t}): KL = ${p.kl.toExponential(2)} nats; the most likely next token is still ${p.before}.` }
    : { zh: `变化最大的是 ${p.at}（第 ${p.t} 个 token）之后的预测：KL = ${p.kl.toExponential(2)} nats，最可能的下一个 token 从 ${p.before} 变成 ${p.after}。`,
      en: `The biggest change is in the prediction after ${p.at} (token ${p.t}): KL = ${p.kl.toExponential(2)} nats; the most likely next token went from ${p.before} to ${p.after}.` });
  const d = k.drop;
  setText($('ko-drop'), !d ? null : d.after >= d.before
    ? { zh: '句子里的每个下一个 token 的概率都没有下降。', en: 'No token of the sentence became less likely as the next one.' }
    : { zh: `句子自己的下一个 token 里，损失最大的是 ${d.at} 之后的 ${d.tok}：${pct(d.before)} → ${pct(d.after)}。点一个 token 看它的数字。`,
      en: `Of the sentence's own next tokens, the one that lost most is ${d.tok} after ${d.at}: ${pct(d.before)} → ${pct(d.after)}. Tap a token for its numbers.` });
}

/** candidates: the strongest |activation| neurons of each layer at the last token (the run's
 *  statistics hold them); each one is switched off for real and ranked by the KL it causes */
async function suggest() {
  const m = state.model, ids = state.ids, st = state.run.stats, T = st.T, runId = state.runId;
  const per = state.info.config.hidden_size >= 512 ? 1 : 3; // a big model: one pass per layer
  const cand = [];
  for (let l = 0; l < st.layers; l++) for (let k = 0; k < Math.min(per, st.topK); k++) cand.push({ l, j: st.top_idx[l][(T - 1) * st.topK + k] });
  const base = state.run.logits;
  await guard($('ko-card'), async () => {
    for (let i = 0; i < cand.length; i++) {
      my.suggest = { done: i, n: cand.length, per, best: null };
      renderSuggest();
      const r = await m.forward(ids, { stats: false, logits: 'last', interventions: [{ layer: cand[i].l, hook: 'mlp.hook_post', neurons: [cand[i].j], scale: 0 }] });
      if (state.runId !== runId) return; // the sentence changed meanwhile: this list would be stale
      cand[i].kl = klDivergence(base, r.logits);
    }
    cand.sort((a, b) => b.kl - a.kl);
    my.suggest = { done: cand.length, n: cand.length, per, best: cand.slice(0, 5) };
    renderSuggest();
  }, runId);
}
function renderSuggest() {
  const s = my.suggest;
  if (!s) { $('ko-suggest-note').textContent = ''; $('ko-suggest-list').innerHTML = ''; return; }
  if (!s.best) { setText($('ko-suggest-note'), { zh: `计算中… 已试 ${s.done} / ${s.n} 个候选`, en: `Computing… ${s.done} of ${s.n} candidates tried` }); $('ko-suggest-list').innerHTML = ''; return; }
  setText($('ko-suggest-note'), { zh: `试了 ${s.n} 个候选（每层在最后一个 token 上 |激活| 最大的 ${s.per} 个神经元），每个都真的关掉跑了一遍。对最后一个 token 的预测影响最大的是：`,
    en: `Tried ${s.n} candidates (the ${s.per} neuron${s.per > 1 ? 's' : ''} of each layer with the largest |activation| at the last token), each one switched off in a real pass. The ones that move the last prediction most:` });
  $('ko-suggest-list').innerHTML = s.best.map((c) => { const w = klWords(c.kl), e = c.kl.toExponential(2); return `<li><button type="button" data-layer="${c.l}" data-neuron="${c.j}" data-kl="${c.kl}">${bi({ zh: `第 ${c.l} 层 · 神经元 ${c.j} · KL ${e} · ${w.zh}`, en: `layer ${c.l} · neuron ${c.j} · KL ${e} · ${w.en}` })}</button></li>`; }).join('');
}

// ---------------------------------------------------------------- pushing a feature neuron
/** the feature neurons to push (the page language's), once the search has found them */
function fillSteer() {
  const best = my.steerNeurons?.[state.lang] ?? [], sel = $('steer-feature'), v = sel.value;
  sel.innerHTML = '';
  for (const b of best) {
    const o = document.createElement('option');
    o.value = `${b.layer}:${b.neuron}:${b.sign}`; o.dataset.feature = b.feature;
    setBi(o, { zh: `${b.title.zh} · 第 ${b.layer} 层 #${b.neuron}`, en: `${b.title.en} · layer ${b.layer} #${b.neuron}` });
    sel.append(o);
  }
  const w = my.writer;
  if (w && w.lang === state.lang) { // the story's neuron: the one that writes "a city comes next"
    const o = document.createElement('option');
    o.value = `${w.layer}:${w.neuron}:${w.sign}`; o.dataset.feature = 'city';
    setBi(o, { zh: `写下“下一个是城市”的神经元 · 第 ${w.layer} 层 #${w.neuron}`, en: `writes “a city comes next” · layer ${w.layer} #${w.neuron}` });
    sel.append(o);
  }
  if (v && [...sel.options].some((o) => o.value === v)) sel.value = v;
  $('steer-btn').disabled = !sel.options.length;
  if (!sel.options.length) setText($('steer-note'), { zh: '等神经元搜索完成后就可以用。', en: 'Available once the neuron search has finished.' });
  else if (!my.steer) $('steer-note').textContent = '';
}
function resetSteer() {
  my.steer = null; // a continuation belongs to the sentence it continued
  for (const id of ['steer-before', 'steer-after']) $(id).textContent = '';
  skipCard($('steer-card'));
  fillSteer();
}

/** what one unit of push is for a neuron: its strongest activation over the page language's
 *  probe sentences (signed), as Neuronpedia scales steering by a feature's own maximum */
async function unitOf(l, j, sign) {
  const key = `${l}:${j}:${sign}:${state.lang}`; // per model: emptied when one is unloaded
  my.units ??= new Map();
  if (!my.units.has(key)) {
    const texts = probeTextsInLang();
    const r = texts.length ? await state.model.neuronTopActivations(texts, { layer: l, neuron: j, sign, k: 1, window: 0 }) : null;
    my.units.set(key, r?.top[0]?.activation ?? sign);
  }
  return my.units.get(key);
}

async function runSteer() {
  const opt = $('steer-feature').selectedOptions[0], c = Number($('steer-strength').value);
  if (!opt || !state.model || !state.ids.length) return;
  const [l, j, sign] = opt.value.split(':').map(Number), feature = opt.dataset.feature;
  await guard($('steer-card'), async () => {
    setText($('steer-note'), { zh: '续写中…', en: 'continuing…' });
    $('steer-before').textContent = ''; $('steer-after').textContent = '';
    const runId = state.runId, m = state.model, ids = state.ids;
    const unit = await unitOf(l, j, sign), value = c * unit;
    const langs = new Set((state.probes ?? []).map((p) => p.lang));
    const tokens = state.probes ? await m.featureTokens(state.probes, { label: feature, ...(langs.has(state.lang) ? { lang: state.lang } : {}) }) : [];
    const iv = { hook: `blocks.${l}.mlp.hook_post`, neurons: [j], op: 'add', value };
    const pushed = tokens.length ? await m.pushNeuron(ids, { layer: l, neuron: j, tokens, values: [value], k: 3 }) : null;
    const before = await continuation(m, ids, null, 16), after = await continuation(m, ids, iv, 16);
    if (state.runId !== runId) return;
    my.steer = { l, j, sign, c, unit, value, feature, before, after, p0: pushed?.before.p, p1: pushed?.after[0].p };
    $('steer-before').innerHTML = continuationHtml(before);
    $('steer-after').innerHTML = continuationHtml(after);
    $('steer-note').dataset.p0 = String(my.steer.p0 ?? ''); $('steer-note').dataset.p1 = String(my.steer.p1 ?? '');
    const title = FEATURE_WORDS[feature] ?? { zh: feature, en: feature };
    const pc = (p) => `${(100 * p).toFixed(p < 0.01 ? 2 : 1)}%`;
    const moved = pushed && Math.abs(my.steer.p1 - my.steer.p0) >= 0.001, same = before.text === after.text;
    const prob = pushed ? { zh: `下一个 token 是${title.zh}开头的概率：${pc(my.steer.p0)} → ${pc(my.steer.p1)}。`, en: `Probability that the next token starts ${title.en}: ${pc(my.steer.p0)} → ${pc(my.steer.p1)}.` } : { zh: '', en: '' };
    const verdict = same && !moved ? { zh: '这一推什么也没改变：续写一样，概率也几乎没动。试试更大的倍数，或者换一个神经元。', en: 'This push changed nothing: the same continuation, and the probability barely moved. Try a larger multiple, or another neuron.' }
      : same ? { zh: '续写没变，但概率变了。', en: 'The continuation is the same, but the probability moved.' } : { zh: '续写变了。', en: 'The continuation changed.' };
    setText($('steer-note'), { zh: `每个位置上给第 ${l} 层神经元 #${j} 的激活加上 ${c} × 它自己最强的激活（${unit.toFixed(2)}），即 ${value.toFixed(2)}：等于往残差流里加这么多倍它的 down_proj 列。${prob.zh}${verdict.zh}（∎ = 文本结束）`,
      en: `At every position, neuron #${j} of layer ${l} gets ${c} × its own strongest activation (${unit.toFixed(2)}), i.e. ${value.toFixed(2)}, added: the same as adding that many times its down_proj column to the residual stream. ${prob.en} ${verdict.en} (∎ = end of text)` });
  });
}
/** how a feature's tokens are named in the probability sentence */
const FEATURE_WORDS = { city: { zh: '城市名', en: 'a city name' }, negation: { zh: '否定词', en: 'a negation' }, code: { zh: '代码', en: 'code' } };
