// A room of <section id="fires">: neurons or features? The reader trains a transcoder for one MLP
// in the page (in the model's Worker: trainTranscoders, progress with each batch's FVU drawn as it
// falls, a stop button), reads its held-out scores, and sees the best single neuron against the best
// single transcoder feature for city, negation and code (neuronsVsFeatures on the page's probes).
// A trained set is kept in this browser's Cache Storage per model and choice, like a weight set,
// and shown again when the same choice comes back.
import { $, bi, biSvg, chartWidth, escapeHtml, fillLayerPicker, fmt, guard, int, modelLangs, nl, on, readableToken, setText, state } from '../core.js';

const NAME = { city: { zh: '城市名', en: 'city' }, negation: { zh: '否定词', en: 'negation' }, code: { zh: '代码', en: 'code' } };
const CACHE = 'mlpscope-transcoders-v1';
const my = { run: 0, ac: null, set: null, layer: null, points: [], bestLayer: null, result: null, card: null, cities: null };
const LABEL_WORDS = { city: { zh: '城市名', en: 'city names' }, negation: { zh: '否定词', en: 'negation' }, code: { zh: '代码', en: 'code' }, name: { zh: '人名', en: 'names' }, noun: { zh: '名词', en: 'nouns' }, country: { zh: '国家名', en: 'countries' } };
const PUSH_TEXT = { zh: '我上周从巴黎飞到', en: 'I flew from Paris to' };
const SEARCH_TEXT = { zh: '我上周从巴黎飞到东京。', en: 'I flew from Paris to Tokyo.' };

export function mount() {
  // a run of the previous model ends here: every later answer of it sees a newer run and drops out
  on('unload', () => { my.run++; stop(); dropSet(); clear(); $('tc-train').disabled = true; $('tc-stop').disabled = true; });
  on('model', () => {
    fillLayerPicker($('tc-layer'), Math.floor(state.info.config.num_hidden_layers / 2));
    // a big model (Qwen3.5-0.8B: about 80 tokens a second on two threads) trains on fewer tokens
    // and scores on fewer: minutes, not hours; the engine's preflight refuses what would not fit
    const big = !small();
    $('tc-tokens').value = big ? '20000' : '100000';
    $('tc-train').disabled = !state.model?.tokenizer;
    setText($('tc-progress'), big ? { zh: '这是个大模型：捕获激活的速度就是它的预填充速度（两线程每秒约 80 个 token），2 万个 token 要几分钟。', en: 'This is a big model: activations are captured at its prefill speed (about 80 tokens a second on two threads), so 20,000 tokens take minutes.' } : null);
  });
  on('settled', () => showCached());
  // the city neuron's layer is where the comparison means most: chosen once per model
  on('features', ({ neurons }) => {
    const c = (neurons[state.lang] ?? neurons.en ?? []).find((b) => b.feature === 'city');
    if (c && my.bestLayer === null) { my.bestLayer = c.layer; $('tc-layer').value = String(c.layer); showCached(); }
  });
  $('tc-train').addEventListener('click', () => train());
  $('tc-stop').addEventListener('click', () => my.ac?.abort());
  for (const id of ['tc-layer', 'tc-features', 'tc-tokens']) $(id).addEventListener('change', () => showCached());
  // a feature of the table or of the search opens its card
  for (const box of ['tc-compare', 'tc-search-out']) $(box).addEventListener('click', (e) => {
    const b = e.target.closest('button[data-feature]');
    if (b) showFeature(Number(b.dataset.feature));
  });
  placeholders();
  $('tc-search').addEventListener('click', () => search());
  $('tc-push').addEventListener('click', () => push());
  on('lang', () => {
    // the example sentences follow the page's language until the reader types their own
    for (const [id, t] of [['tc-push-text', PUSH_TEXT], ['tc-search-text', SEARCH_TEXT]]) if (Object.values(t).includes($(id).value)) $(id).value = t[state.lang];
  });
}

function clear() {
  my.points = []; my.result = null; my.bestLayer = null; my.cities = null;
  for (const id of ['tc-scores', 'tc-compare', 'tc-compare-note', 'tc-chart-cap']) $(id).innerHTML = '';
  delete $('tc-card').dataset.done;
  hideFeature();
  placeholders();
}
/** the charts before they have data: a line saying what will be drawn there */
function placeholders() {
  const say = (svg, H, s) => { const W = chartWidth(svg, H, () => placeholders()); svg.innerHTML = `<text x="${W / 2}" y="${H / 2}" text-anchor="middle">${biSvg(s)}</text>`; };
  if (!my.points.length) say($('tc-chart'), 170, { zh: '训练时，这里画出每批的 FVU', en: 'While it trains, each batch’s FVU is drawn here' });
  if (!my.card) say($('tc-f-hist'), 120, { zh: '点一个特征，这里画出它的激活分布', en: 'Click a feature: its activations are drawn here' });
}
function hideFeature() {
  my.card = null;
  $('tc-feature').hidden = true; $('tc-search-box').hidden = true;
  for (const id of ['tc-search-out', 'tc-f-top', 'tc-f-range', 'tc-f-up', 'tc-f-down', 'tc-push-table', 'tc-f-title', 'tc-f-label', 'tc-f-hist-cap']) $(id).innerHTML = '';
  placeholders();
}
function stop() { my.ac?.abort(); my.ac = null; }
function dropSet() { const s = my.set; my.set = null; my.layer = null; s?.dispose().catch(() => {}); hideFeature(); }

/** the reader's choice: layer, features, training tokens (k 32; each buffer of captured tokens
 *  trained on 4 times, which on the demo model takes 100,000 tokens from FVU 0.18 to 0.02 for
 *  about a quarter more time; 4096 held-out tokens) */
const choice = () => ({ layers: [Number($('tc-layer').value)], features: Number($('tc-features').value), k: 32, tokens: Number($('tc-tokens').value), epochs: 4, valTokens: small() ? 4096 : 512 });
const small = () => state.info.config.hidden_size < 512;
/** the probe sentences: fewer for a big model (each is a pass through it; as the fires section) */
const probeTexts = () => (state.probes && !small() ? state.probes.slice(0, 48) : state.probes);
/** which weights a set belongs to: the weight set's manifest hash, or the hub checkpoint and dtype */
const modelKey = () => state.info?.manifestSha256 ?? state.entry?.manifestSha256 ?? (state.entry?.kind === 'hf' ? `${state.entry.source}:${state.entry.dtype}` : null);
const cacheUrl = (key, c, file) => `https://mlpscope.cache/transcoders/${encodeURIComponent(key)}/${c.layers[0]}-${c.features}-${c.k}-${c.tokens}-${c.epochs}-${c.valTokens}/${file}`;
/** the run is still the page's latest, on the model it started with */
const current = (run, m) => run === my.run && state.model === m;

async function cacheGet(key, c) {
  if (typeof caches === 'undefined' || !key) return null;
  try {
    const cache = await caches.open(CACHE);
    const [m, b, r] = await Promise.all(['manifest.json', 'transcoders.bin', 'result.json'].map((f) => cache.match(cacheUrl(key, c, f))));
    if (!m || !b || !r) return null;
    return { ...(await r.json()), files: { 'manifest.json': await m.text(), 'transcoders.bin': new Uint8Array(await b.arrayBuffer()) } };
  } catch { return null; }
}
async function cachePut(key, c, r) {
  if (typeof caches === 'undefined' || !key) return;
  try {
    const cache = await caches.open(CACHE);
    const { files, ...rest } = r;
    await cache.put(cacheUrl(key, c, 'manifest.json'), new Response(files['manifest.json']));
    await cache.put(cacheUrl(key, c, 'transcoders.bin'), new Response(files['transcoders.bin']));
    await cache.put(cacheUrl(key, c, 'result.json'), new Response(JSON.stringify(rest)));
  } catch { /* storage full or off: train again next time */ }
}

/** a set trained earlier in this browser for the current choice: shown with its comparison */
async function showCached() {
  const m = state.model;
  if (!m || my.ac) return; // not while training
  const c = choice(), run = ++my.run;
  const r = await cacheGet(modelKey(), c);
  if (!current(run, m) || !r) return;
  my.points = r.points ?? [];
  await finish(m, c, r, run, true);
}

async function train() {
  const m = state.model, key = modelKey();
  if (!m) return;
  stop();
  const c = choice(), run = ++my.run, ac = new AbortController();
  my.ac = ac; my.points = []; my.result = null;
  draw(c); // the previous line goes: the chart says what it will show
  delete $('tc-card').dataset.done;
  $('tc-train').disabled = true; $('tc-stop').disabled = false;
  for (const id of ['tc-scores', 'tc-compare', 'tc-compare-note']) $(id).innerHTML = '';
  const t0 = performance.now();
  try {
    const r = await guard($('tc-card'), async () => {
      try { return await m.trainTranscoders({ ...c, signal: ac.signal, onProgress: (p) => progress(p, c, run) }); } catch (err) {
        if (!current(run, m)) return null; // another model or run took over: its panel is not this one's
        if (err?.code !== 'E_ABORTED') throw err;
        setText($('tc-progress'), { zh: '已停止。', en: 'Stopped.' });
        return null; // the reader stopped it: not a failure of the card
      }
    }, null);
    // training is over: Stop has nothing more to stop (the comparison after it is short)
    if (my.ac === ac) { my.ac = null; $('tc-stop').disabled = true; }
    if (!r || !current(run, m)) return;
    r.points = my.points;
    r.pageSeconds = (performance.now() - t0) / 1000;
    await cachePut(key, c, r);
    await finish(m, c, r, run, false);
  } finally {
    if (my.ac === ac) my.ac = null;
    if (current(run, m)) { $('tc-train').disabled = !m.tokenizer; $('tc-stop').disabled = true; }
  }
}

function progress(p, c, run) {
  if (run !== my.run) return; // an older run's message
  const left = Number.isFinite(p.secondsLeft) ? Math.ceil(p.secondsLeft) : '–';
  if (p.phase === 'train') {
    const l = p.layers?.[0];
    if (l?.steps && Number.isFinite(l.fvu) && my.points.at(-1)?.[0] !== p.done) my.points.push([p.done, l.fvu]);
    setText($('tc-progress'), { zh: `训练中：${int(p.done)} / ${int(p.total)} 个 token，每秒 ${int(Math.round(p.tokensPerSecond))} 个，还要约 ${left} 秒`, en: `Training: ${int(p.done)} / ${int(p.total)} tokens, ${int(Math.round(p.tokensPerSecond))} a second, about ${left} s left` });
    draw(c);
  } else setText($('tc-progress'), { zh: `在留出文本上打分：${int(p.done)} / ${int(p.total)} 个 token`, en: `Scoring on held-out text: ${int(p.done)} / ${int(p.total)} tokens` });
}

/** the batch FVU against the tokens trained on: it should fall */
function draw(c) {
  const svg = $('tc-chart'), H = 170, W = chartWidth(svg, H, () => draw(c)), x0 = 44, y0 = 12, w = W - x0 - 12, h = H - 50;
  const pts = my.points;
  if (!pts.length) { placeholders(); return; }
  const top = Math.max(0.2, ...pts.map((q) => q[1])) * 1.05, X = (t) => x0 + (t / c.tokens) * w, Y = (v) => y0 + h - (Math.min(v, top) / top) * h;
  const ticks = [0, top / 2, top].map((v) => `<text x="4" y="${Y(v) + 4}">${v.toFixed(2)}</text><line x1="${x0}" x2="${x0 + w}" y1="${Y(v)}" y2="${Y(v)}" stroke="#e5e2dc"/>`).join('');
  svg.innerHTML = `${ticks}<line x1="${x0}" y1="${y0 + h}" x2="${x0 + w}" y2="${y0 + h}" stroke="#999"/>
    <path d="${pts.map(([t, v], i) => `${i ? 'L' : 'M'}${X(t).toFixed(1)},${Y(v).toFixed(1)}`).join('')}" fill="none" stroke="var(--mlp)" stroke-width="2.5"/>
    ${pts.length ? `<circle cx="${X(pts.at(-1)[0])}" cy="${Y(pts.at(-1)[1])}" r="4" fill="var(--mlp)"/>` : ''}
    <text x="${x0}" y="${H - 10}">${biSvg({ zh: `训练 token（0 到 ${int(c.tokens)}）`, en: `tokens trained (0 to ${int(c.tokens)})` })}</text>`;
  setText($('tc-chart-cap'), { zh: `纵轴：每个训练批次上的 FVU（MLP 输出的方差里转码器没解释的比例，越低越好），最新 ${fmt(pts.at(-1)[1])}。`, en: `Up: FVU on each training batch (the share of the MLP output's variance the transcoder leaves unexplained; lower is better), latest ${fmt(pts.at(-1)[1])}.` });
}

/** the held-out scores, then neurons against features on the page's probes */
async function finish(m, c, r, run, cached) {
  if (!current(run, m)) return;
  const s = r.scores.layers[0], L = c.layers[0];
  my.result = r;
  draw(c);
  const how = cached ? { zh: '（这个浏览器里以前训练过，从缓存读出）', en: ' (trained in this browser before, read from its cache)' }
    : { zh: `（训练 ${fmt(r.trainSeconds, 1)} 秒，每秒 ${int(Math.round(r.tokensPerSecond))} 个 token；打分 ${fmt(r.scoreSeconds, 1)} 秒）`, en: ` (training ${fmt(r.trainSeconds, 1)} s, ${int(Math.round(r.tokensPerSecond))} tokens a second; scoring ${fmt(r.scoreSeconds, 1)} s)` };
  const rec = Number.isFinite(s.recovered) ? s.recovered : null;
  $('tc-scores').innerHTML = bi({
    zh: `第 ${L} 层，${int(c.features)} 个特征，每个 token 最多 ${c.k} 个，${int(c.tokens)} 个训练 token（每批捕获的激活训练 ${c.epochs} 遍）${how.zh}。在 ${int(r.scores.eval_tokens)} 个留出 token 上：FVU ${fmt(s.fvu)}，平均每个 token 激活 ${fmt(s.l0, 1)} 个特征（L0），${fmt(100 * s.dead, 1)}% 的特征一次也没激活。把这一层的 MLP 换成转码器，下一个词的平均损失从 ${fmt(r.scores.ce_model, 3)} 变成 ${fmt(s.ce, 3)}（把 MLP 直接去掉是 ${fmt(s.ce_zero, 3)}${rec !== null ? `，找回了 ${fmt(100 * rec, 1)}%` : ''}）。`,
    en: `Layer ${L}, ${int(c.features)} features, at most ${c.k} per token, ${int(c.tokens)} training tokens (each buffer of captured activations trained on ${c.epochs} times)${how.en}. On ${int(r.scores.eval_tokens)} held-out tokens: FVU ${fmt(s.fvu)}, ${fmt(s.l0, 1)} features active per token on average (L0), ${fmt(100 * s.dead, 1)}% of the features never fired. With this layer's MLP replaced by the transcoder the mean next-token loss goes from ${fmt(r.scores.ce_model, 3)} to ${fmt(s.ce, 3)} (with the MLP removed: ${fmt(s.ce_zero, 3)}${rec !== null ? `; ${fmt(100 * rec, 1)}% recovered` : ''}).`,
  });
  $('tc-card').dataset.fvu = String(s.fvu);
  const probes = probeTexts();
  if (!probes || !m.tokenizer) return;
  dropSet();
  const cmp = await guard($('tc-card'), async () => {
    try {
      const set = await m.loadTranscoders(r.files);
      if (!current(run, m)) { set.dispose().catch(() => {}); return null; }
      my.set = set; my.layer = L;
      const byLang = modelLangs().includes('zh') && modelLangs().includes('en') && probes.length === state.probes.length;
      return await m.neuronsVsFeatures(set, probes, { byLang, onProgress: (p) => { if (current(run, m)) setText($('tc-compare-note'), { zh: `正在比较神经元和特征：${p.done} / ${p.total} 次探针计算`, en: `Comparing neurons and features: ${p.done} / ${p.total} probe passes` }); } });
    } catch (err) { if (current(run, m)) throw err; return null; } // the model changed meanwhile: not this panel's failure
  }, null);
  if (!cmp || !current(run, m)) return;
  renderCompare(cmp, L);
  $('tc-search-box').hidden = false;
  $('tc-card').dataset.done = cached ? 'cache' : 'trained';
}

function renderCompare(cmp, L) {
  const auc = (x) => (x ? x.heldOutAuc.toFixed(3) : '–');
  const langs = cmp.rows.some((r) => r.byLang) ? ['zh', 'en'] : [];
  const head = `<tr><th></th><th>${bi({ zh: '最好的神经元', en: 'best neuron' })}</th><th>${bi({ zh: '最好的特征', en: 'best feature' })}</th>${langs.map((g) => `<th class="by-lang">${g === 'zh' ? bi({ zh: '中文', en: 'Chinese' }) : bi({ zh: '英文', en: 'English' })}</th>`).join('')}<th>${bi({ zh: '几个神经元抵得上它', en: 'neurons to match it' })}</th></tr>`;
  const rows = cmp.rows.map((r) => `<tr data-feature="${r.feature}" data-neuron-auc="${r.neuron.heldOutAuc}" data-feature-auc="${r.transcoder.heldOutAuc}" data-match="${r.neuronsToMatch ?? ''}">
    <th>${bi(NAME[r.feature] ?? { zh: r.feature, en: r.feature })}</th><td>${auc(r.neuron)}<small> L${r.neuron.layer}#${r.neuron.neuron}</small></td><td>${auc(r.transcoder)}<small><button type="button" class="link" data-feature="${r.transcoder.neuron}">#${r.transcoder.neuron}</button></small></td>
    ${langs.map((g) => `<td class="by-lang">${auc(r.byLang?.[g]?.neuron)} / ${auc(r.byLang?.[g]?.transcoder)}</td>`).join('')}<td>${r.neuronsToMatch ?? `> ${r.combined.at(-1)?.n ?? 0}`}</td></tr>`).join('');
  $('tc-compare').innerHTML = `<caption>${bi({ zh: `留出探针句子上的 AUC（1 = 完美区分，0.5 = 瞎猜）；特征来自第 ${L} 层的转码器，神经元来自同一层的 MLP`, en: `Held-out AUC on the probe sentences (1 = perfect, 0.5 = chance); the features are layer ${L}'s transcoder's, the neurons that layer's MLP's` })}</caption><thead>${head}</thead><tbody>${rows}</tbody>`;
  const better = cmp.rows.filter((r) => r.transcoder.heldOutAuc > r.neuron.heldOutAuc).map((r) => NAME[r.feature] ?? { zh: r.feature, en: r.feature });
  setText($('tc-compare-note'), better.length
    ? { zh: `在${better.map((b) => b.zh).join('、')}上，一个转码器特征比这一层任何单个神经元都更能区分——概念分散在好几个神经元里（叠加），稀疏字典把它收拢成一个方向。最后一列：这一层的神经元要几个放在一起读（按各自的区分度加权）才追得上这个特征。`, en: `On ${better.map((b) => b.en).join(', ')}, one transcoder feature separates better than any single neuron of the layer: the concept is spread over several neurons (superposition) and the sparse dictionary gathers it into one direction. Last column: how many of the layer's neurons, read together (each weighted by how well it separates), it takes to catch up with the feature.` }
    : { zh: '这里没有一个特征比最好的单个神经元更能区分：这个小模型在这一层上，这三个概念已经有干净的神经元。换一层或者多训练一些 token 再看看。最后一列：几个神经元放在一起读才追得上最好的特征。', en: 'No feature here separates better than the best single neuron: in this small model, at this layer, the three concepts already have clean neurons. Try another layer, or more training tokens. Last column: how many neurons, read together, it takes to catch up with the best feature.' });
}

// ---------------------------------------------------------------- one feature, as Neuronpedia shows it

/** the features that fire on the reader's sentence, strongest first, as buttons that open a card */
async function search() {
  const m = state.model, set = my.set, L = my.layer, text = $('tc-search-text').value;
  if (!set || !text.trim()) return;
  const r = await guard($('tc-card'), () => m.featuresOnText(set, text, { layer: L, k: 3, top: 12 }).catch((err) => { if (set === my.set) throw err; return null; }), null);
  if (!r || set !== my.set) return;
  const pieces = r.tokens.map((t) => t.piece ?? '');
  $('tc-search-out').innerHTML = r.features.map((f) => `<button type="button" data-feature="${f.feature}" data-act="${f.activation}">#${f.feature} <small>${nl(pieces[f.token])} · ${f.activation.toFixed(2)}</small></button>`).join('')
    || bi({ zh: '没有特征激活。', en: 'No feature fires.' });
}

/** a feature's card: its computed label, where it fires, its histogram, what it writes */
async function showFeature(f) {
  const m = state.model, set = my.set, L = my.layer;
  if (!set || !state.probes) return;
  $('tc-feature').hidden = false;
  setText($('tc-f-title'), { zh: `第 ${L} 层转码器的特征 #${f}`, en: `Feature #${f} of layer ${L}'s transcoder` });
  const c = await guard($('tc-card'), () => m.featureCard(set, probeTexts(), { layer: L, feature: f, k: 6, quantiles: [0.5, 0.9, 0.99, 0.999] }).catch((err) => { if (set === my.set) throw err; return null; }), null);
  if (!c || set !== my.set) return;
  my.card = c;
  $('tc-feature').dataset.feature = String(f);
  const lab = c.label, w = lab && (LABEL_WORDS[lab.label] ?? { zh: lab.label, en: lab.label });
  $('tc-f-label').dataset.label = lab?.label ?? '';
  setText($('tc-f-label'), lab && lab.heldOutAuc > 0.6
    ? { zh: `算出来的标签：“${w.zh}”——它的激活把${w.zh}和其余 token 区分开的 AUC 在前一半探针句子上是 ${lab.auc.toFixed(3)}，在留出的后一半上是 ${lab.heldOutAuc.toFixed(3)}。它在 ${(100 * c.frequency).toFixed(1)}% 的探针 token 上激活。`,
      en: `Computed label: “${w.en}” — its activation separates ${w.en} from the other tokens with AUC ${lab.auc.toFixed(3)} on the first half of the probe sentences and ${lab.heldOutAuc.toFixed(3)} on the held-out half. It fires on ${(100 * c.frequency).toFixed(1)}% of the probe tokens.` }
    : { zh: `没有哪个探针标签能说明它（最好的是“${w?.zh ?? '–'}”，留出 AUC ${lab ? lab.heldOutAuc.toFixed(3) : '–'}）：看下面的例子。它在 ${(100 * c.frequency).toFixed(1)}% 的探针 token 上激活。`,
      en: `No probe label describes it (the best, “${w?.en ?? '–'}”, has held-out AUC ${lab ? lab.heldOutAuc.toFixed(3) : '–'}): read the examples below. It fires on ${(100 * c.frequency).toFixed(1)}% of the probe tokens.` });
  const li = (x) => `<li data-act="${x.activation}"${x.q !== undefined ? ` data-q="${x.q}"` : ''}>${x.q !== undefined ? `<span class="q">${(100 * x.q).toFixed(1)}%</span> ` : ''}<code>${nl(x.before)}<mark>${escapeHtml(x.piece)}</mark>${nl(x.after)}</code> · ${x.activation.toFixed(3)}</li>`;
  $('tc-f-top').innerHTML = c.top.map(li).join('');
  $('tc-f-range').innerHTML = (c.atQuantiles ?? []).map(li).join('');
  const toks = (list) => list.filter((t) => readableToken(t.text ?? '')).slice(0, 6).map((t) => `<li data-id="${t.id}"><code>${nl(t.text)}</code> · ${t.logit.toFixed(2)}</li>`).join('');
  $('tc-f-up').innerHTML = toks(c.output.promoted);
  $('tc-f-down').innerHTML = toks(c.output.suppressed);
  drawHist();
  $('tc-push-table').innerHTML = '';
}

function drawHist() {
  const c = my.card, svg = $('tc-f-hist');
  if (!c?.histogram.counts.length) { placeholders(); return; }
  const H = 120, W = chartWidth(svg, H, drawHist), x0 = 8, y0 = 8, w = W - 16, h = H - 36, n = c.histogram.counts.length;
  // most tokens sit at 0 (the feature is off): heights on a log scale so the firing tail shows
  const top = Math.log1p(Math.max(...c.histogram.counts));
  svg.innerHTML = c.histogram.counts.map((k, i) => { const bh = (Math.log1p(k) / top) * h; return `<rect x="${(x0 + (i * w) / n).toFixed(1)}" y="${(y0 + h - bh).toFixed(1)}" width="${(w / n - 1).toFixed(1)}" height="${bh.toFixed(1)}" fill="var(--mlp)"/>`; }).join('')
    + `<text x="${x0}" y="${H - 8}">${c.histogram.lo.toFixed(2)}</text><text x="${W - 60}" y="${H - 8}">${c.histogram.hi.toFixed(2)}</text>`;
  setText($('tc-f-hist-cap'), { zh: `它在全部 ${int(c.tokens)} 个探针 token 上的激活（24 格，高度按对数：大多数 token 上它是 0）。`, en: `Its activation on all ${int(c.tokens)} probe tokens (24 bins, heights on a log scale: on most tokens it is 0).` });
}

/** the feature pushed by 1, 2 and 4 times its own strongest activation at every position of a
 *  sentence: the probability that a city comes next and the top next tokens each time */
async function push() {
  const m = state.model, set = my.set, c = my.card, text = $('tc-push-text').value;
  if (!set || !c || !text.trim() || !(c.scale > 0)) return;
  const r = await guard($('tc-card'), async () => {
    try {
      my.cities ??= await m.featureTokens(state.probes, { label: 'city' });
      return await m.pushNeuron(text, { layer: my.layer, neuron: c.feature, values: [1, 2, 4].map((x) => x * c.scale), tokens: my.cities, k: 3, transcoders: set });
    } catch (err) { if (set === my.set) throw err; return null; }
  }, null);
  if (!r || set !== my.set) return;
  const row = (label, x) => `<tr data-p="${x.p}"><th>${label}</th><td class="v">${(100 * x.p).toFixed(2)}%</td><td>${x.top.map((t) => `<code>${nl(t.text ?? '')}</code>`).join(' ')}</td></tr>`;
  $('tc-push-table').innerHTML = `<caption>${bi({ zh: `按它自己的尺度推（1 个单位 = 它在探针上最强的一次激活 ${c.scale.toFixed(2)}），每个位置都推：下一个词是城市的概率，和最可能的下一个词`, en: `Pushed in its own unit (1 = its strongest activation on the probes, ${c.scale.toFixed(2)}) at every position: the probability that a city comes next, and the likeliest next tokens` })}</caption><tbody>`
    + row(bi({ zh: '不推', en: 'none' }), r.before) + r.after.map((x, i) => row(`×${[1, 2, 4][i]}`, x)).join('') + '</tbody>';
}
