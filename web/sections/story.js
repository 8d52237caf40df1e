// <section id="story">: the running example, one sentence through every step. "我上周从巴黎飞到" /
// "I flew from Paris to": (1) the model predicts a city next (the summed probability of the tokens
// city names start with); (2) the city neuron of the feature cards fires on the city but switching
// it off hardly moves that probability; (3) the neuron that does write it, found by switching off
// the most active neurons at the last token one by one (js/features.js neuronsForTokens); (4) what
// its down_proj column raises; (5) pushed on a sentence where no city comes next, in multiples of
// its own strongest activation (pushNeuron), the city probability rises. Every number is the
// loaded model's, recomputed by tests/page-story.test.js with the same API in Node.
import { $, bi, emit, escapeHtml, guard, on, probeTextsInLang, readableToken, say, setText, cardNote, skipCard, state } from '../core.js';
import { tokenSetProbability, topTokens } from 'mlpscope';
import { continuation, continuationHtml } from '../widgets/continue.js';

/** the running example in each language, and a sentence after which no city comes */
export const STORY_TEXTS = { zh: { text: '我上周从巴黎飞到', push: '饭菜一点也不' }, en: { text: 'I flew from Paris to', push: 'The food was' } };
const MULTIPLES = [1, 2, 4];
const my = { detector: null, result: null, busy: false, gen: 0 };
const card = () => $('story-card');
const pct = (p) => `${(100 * p).toFixed(p < 0.01 ? 2 : 1)}%`;
const pts = (d) => (Math.abs(100 * d) < 0.005 ? '0.00' : `${d > 0 ? '+' : '−'}${Math.abs(100 * d).toFixed(2)}`);
const q = (s) => JSON.stringify(s);

export function mount() {
  card().setAttribute('data-own-text', ''); // its own sentences, not the reader's sentence of "Try it"
  on('model', () => { my.result = null; my.detector = null; clear(); skipCard(card(), { zh: '等神经元搜索完成后开始。', en: 'Starts once the neuron search has finished.' }); });
  on('unload', () => { my.result = null; clear(); });
  on('features', ({ neurons }) => {
    my.detector = neurons;
    // a big model's story is about a hundred passes: it waits for the reader's click
    if (state.info.config.hidden_size >= 512) { skipCard(card(), { zh: '这个模型较大，故事要跑上百遍前向计算：点“走一遍”开始。', en: 'This model is large and the story takes about a hundred forward passes: press “Run the story” to start.' }); return; }
    return run();
  });
  on('lang', (lang) => {
    // the example follows the language while the reader has not typed their own
    let changed = false;
    for (const [id, k] of [['story-text', 'text'], ['story-push-text', 'push']]) {
      const other = STORY_TEXTS[lang === 'zh' ? 'en' : 'zh'][k];
      if ($(id).value === other) { $(id).value = STORY_TEXTS[lang][k]; changed = true; }
    }
    // not awaited: the story is about a hundred passes, and the other sections' answers to the
    // switch (the example sentence above all) must not wait behind it (core.emit runs them in turn)
    if (changed && my.detector && state.info.config.hidden_size < 512) void run();
  });
  $('story-run').addEventListener('click', run);
}

function clear() { for (const id of ['story-predict', 'story-detector', 'story-writer', 'story-writes', 'story-push', 'story-sum']) $(id).textContent = ''; }

/** tokens a city name starts with, in the page's language when the probes have it */
async function cityTokens(m) {
  const langs = new Set((state.probes ?? []).map((p) => p.lang));
  return m.featureTokens(state.probes, { label: 'city', ...(langs.has(state.lang) ? { lang: state.lang } : {}) });
}

/** Runs the story; a later call supersedes an earlier one still running (only the last one shows). */
async function run() {
  const gen = ++my.gen;
  const m = state.model, text = $('story-text').value.trim(), pushText = $('story-push-text').value.trim();
  if (!m?.tokenizer || !state.probes) { skipCard(card(), { zh: '这个模型没有分词器或探针句子，讲不了这个故事。', en: 'This model has no tokenizer or probe sentences, so the story cannot run.' }); return; }
  if (!text || !pushText) { skipCard(card(), { zh: '两个句子都不能是空的。', en: 'Neither sentence may be empty.' }); return; }
  await guard(card(), async () => {
    cardNote(card());
    setText($('story-predict'), { zh: '计算中…', en: 'computing…' });
    for (const id of ['story-detector', 'story-writer', 'story-writes', 'story-push', 'story-sum']) $(id).textContent = '';
    const big = state.info.config.hidden_size >= 512;
    const tokens = await cityTokens(m);
    if (!tokens.length) throw new Error(say({ zh: '探针句子里没有城市名', en: 'the probe sentences have no city names' }));
    // (1) + (3): the prediction, and each candidate switched off
    const found = await m.neuronsForTokens(text, { tokens, perLayer: big ? 2 : 8 });
    if (state.model !== m) return;
    const ids = await m.tokenizer.encode(text);
    const top3 = await topNext(m, (await m.forward(ids, { stats: false, logits: 'last' })).logits, ids);
    // (2) the detector: the feature card's city neuron, its value on the sentence, switched off
    const det = my.detector?.[state.lang]?.find((b) => b.feature === 'city') ?? null;
    let detector = null;
    if (det) {
      const hook = `blocks.${det.layer}.mlp.hook_post`, I = state.info.config.intermediate_size;
      const r = await m.forward(ids, { stats: false, logits: 'none', hooks: [hook] });
      const off = await m.forward(ids, { stats: false, logits: 'last', interventions: [{ hook, neurons: [det.neuron], op: 'set', value: 0 }] });
      const acts = Array.from({ length: ids.length }, (_, t) => r.hooks[hook][t * I + det.neuron]);
      let at = 0;
      for (let t = 1; t < ids.length; t++) if (det.sign * acts[t] > det.sign * acts[at]) at = t;
      const texts = await m.tokenizer.tokenTexts(ids);
      detector = { ...det, at, piece: texts[at], value: acts[at], p: tokenSetProbability(off.logits, tokens) };
    }
    // (3) the writer: where it fires on the sentence, and its own scale over the probe sentences
    const w = found.candidates[0];
    const sign = w.activation < 0 ? -1 : 1;
    const topActs = await m.neuronTopActivations(probeTextsInLang(), { layer: w.layer, neuron: w.neuron, sign, k: 5, window: 3 });
    const unit = topActs.top[0]?.activation ?? w.activation;
    // (4) what its column writes, in the direction it fires
    const out = await m.neuronOutput(w.layer, w.neuron, { k: 40 });
    const citySet = new Set(tokens), raised = (sign > 0 ? out.promoted : out.suppressed).filter((t) => readableToken(t.text)).slice(0, 10);
    // (5) pushed on the other sentence
    const push = await m.pushNeuron(pushText, { layer: w.layer, neuron: w.neuron, tokens, values: MULTIPLES.map((k) => k * unit), k: 3 });
    const pushIds = await m.tokenizer.encode(pushText);
    const gens = [await continuation(m, pushIds, null)];
    for (const a of push.after) gens.push(await continuation(m, pushIds, { hook: `blocks.${w.layer}.mlp.hook_post`, neurons: [w.neuron], op: 'add', value: a.value }));
    if (state.model !== m || gen !== my.gen) return;
    my.result = { text, pushText, tokens: tokens.length, found, top3, detector, writer: { ...w, sign, unit, top: topActs.top }, raised, cityRaised: raised.filter((t) => citySet.has(t.id)).length, push, gens };
    render();
    // 'writer': the neuron that writes "a city comes next" ({layer, neuron, sign}), for the push card
    await emit('writer', { layer: w.layer, neuron: w.neuron, sign, lang: state.lang });
  }, null);
}

/** the three likeliest next tokens, as text read after the sentence */
async function topNext(m, logits, ids) {
  const top = topTokens(logits, 3);
  const texts = await m.tokenizer.tokenTexts(top.map((t) => t.id), { after: ids });
  return top.map((t, i) => ({ id: t.id, text: texts[i], p: t.prob }));
}

function render() {
  const r = my.result, w = r.writer, f = r.found;
  card().dataset.text = r.text; // the sentences these numbers belong to
  card().dataset.pushText = r.pushText;
  const guess = r.top3.map((t) => `${q(t.text)} ${pct(t.p)}`).join(', ');
  $('story-predict').dataset.p = String(f.p);
  setText($('story-predict'), { zh: `模型读完 ${q(r.text)} 之后，下一个 token 是城市名开头的概率是 ${pct(f.p)}；最看好的三个：${guess}。`,
    en: `After ${q(r.text)}, the model gives ${pct(f.p)} to a city name coming next; its top three guesses: ${guess}.` });
  const d = r.detector;
  if (d) {
    $('story-detector').dataset.p = String(d.p);
    $('story-detector').dataset.neuron = `${d.layer}:${d.neuron}`;
    setText($('story-detector'), { zh: `上面卡片里的城市神经元（第 ${d.layer} 层 #${d.neuron}）在 ${q(d.piece)} 上激活最强（${d.value.toFixed(2)}）。关掉它：${pct(f.p)} → ${pct(d.p)}（${pts(d.p - f.p)} 个百分点）。认出城市的神经元，不一定是写下“下一个是城市”的那个。`,
      en: `The city neuron of the cards above (layer ${d.layer} #${d.neuron}) fires most on ${q(d.piece)} here (${d.value.toFixed(2)}). Switched off: ${pct(f.p)} → ${pct(d.p)} (${pts(d.p - f.p)} points). A neuron that recognises cities need not be the one that writes “a city comes next”.` });
  } else setText($('story-detector'), { zh: '（这个模型还没有找到城市神经元。）', en: '(No city neuron was found in this model.)' });
  $('story-writer').dataset.neuron = `${w.layer}:${w.neuron}`;
  $('story-writer').dataset.p = String(w.p);
  $('story-writer').dataset.unit = String(w.unit);
  const where = w.top.slice(0, 5).map((t) => q(t.piece ?? t.token)).join(' ');
  setText($('story-writer'), { zh: `谁写的？把最后一个 token 上最活跃的 ${f.candidates.length} 个神经元逐个关掉：影响最大的是第 ${w.layer} 层 #${w.neuron}（激活 ${w.activation.toFixed(2)}）：${pct(f.p)} → ${pct(w.p)}（${pts(w.delta)} 个百分点）。它在探针句子里激活最强的地方：${where}——城市名的前一个词。`,
    en: `Who writes it? Of the ${f.candidates.length} most active neurons at the last token, each switched off in turn, layer ${w.layer} #${w.neuron} (activation ${w.activation.toFixed(2)}) matters most: ${pct(f.p)} → ${pct(w.p)} (${pts(w.delta)} points). It fires most on ${where} in the probe sentences: the word before a city.` });
  const raised = r.raised.map((t) => escapeHtml(q(t.text))).join(' ');
  $('story-writes').dataset.cities = String(r.cityRaised);
  $('story-writes').innerHTML = bi({ zh: `它写的：它的 down_proj 列乘上它的激活（${w.sign > 0 ? '正' : '负'}），经过输出头，推高最多的 ${r.raised.length} 个 token 里有 ${r.cityRaised} 个是城市名开头：`, en: `What it writes: its down_proj column times its (${w.sign > 0 ? 'positive' : 'negative'}) activation, read through the head, raises these ${r.raised.length} tokens most; ${r.cityRaised} start a city name:` }) + ` <span class="toks">${raised}</span>`;
  const p = r.push;
  $('story-push').dataset.before = String(p.before.p);
  $('story-push').dataset.after = JSON.stringify(p.after.map((a) => a.p));
  const moved = Math.abs(p.after.at(-1).p - p.before.p) >= 0.001;
  const rows = [{ k: 0, p: p.before.p, g: r.gens[0] }, ...p.after.map((a, i) => ({ k: MULTIPLES[i], p: a.p, g: r.gens[i + 1] }))];
  $('story-push').innerHTML = bi({ zh: `推一把：${q(r.pushText)} 后面本来不该是城市。在每个位置给它的激活加上它最强激活（${w.unit.toFixed(2)}）的 1、2、4 倍，城市的概率和续写（∎ = 文本结束）：${moved ? '' : '这次推动几乎没有改变城市的概率。'}`,
    en: `Push it: after ${q(r.pushText)} no city is expected. Add 1, 2 and 4 times its strongest activation (${w.unit.toFixed(2)}) at every position; the city probability and the greedy continuation (∎ = end of text):${moved ? '' : ' this push hardly changed the city probability.'}` }) +
    `<table class="push"><tbody>${rows.map((x) => `<tr data-k="${x.k}" data-p="${x.p}"><th>${x.k ? `×${x.k}` : bi({ zh: '不推', en: 'none' })}</th><td class="v">${pct(x.p)}</td><td class="gen">${continuationHtml(x.g)}</td></tr>`).join('')}</tbody></table>`;
  setText($('story-sum'), { zh: `一个神经元只是一小份：关掉写下城市的那个，概率也只掉 ${Math.abs(100 * w.delta).toFixed(2)} 个百分点。“下一个是城市”是很多神经元一起、一点一点写下的——这正是下一节要看的。`,
    en: `One neuron is a small share: switching off the writer costs only ${Math.abs(100 * w.delta).toFixed(2)} points. Many neurons write “a city comes next” together, a little each: the next section's subject.` });
}
