// A room of <section id="fires">: neurons or features? The reader trains a transcoder for one MLP
// in the page (in the model's Worker: trainTranscoders, progress with each batch's FVU drawn as it
// falls, a stop button), reads its held-out scores, and sees the best single neuron against the best
// single transcoder feature for city, negation and code (neuronsVsFeatures on the page's probes).
// A trained set is kept in this browser's Cache Storage per model and choice, like a weight set,
// and shown again when the same choice comes back.
import { $, bi, biSvg, chartWidth, fillLayerPicker, fmt, guard, int, modelLangs, on, setText, state } from '../core.js';

const NAME = { city: { zh: '城市名', en: 'city' }, negation: { zh: '否定词', en: 'negation' }, code: { zh: '代码', en: 'code' } };
const CACHE = 'mlpscope-transcoders-v1';
const my = { run: 0, ac: null, set: null, points: [], bestLayer: null, result: null };

export function mount() {
  on('unload', () => { stop(); dropSet(); clear(); });
  on('model', () => {
    fillLayerPicker($('tc-layer'), Math.floor(state.info.config.num_hidden_layers / 2));
    const small = state.info.config.hidden_size < 512;
    $('tc-train').disabled = !small || !state.model?.tokenizer;
    setText($('tc-progress'), small ? null : { zh: '这个房间目前只在小模型上运行（Qwen3.5-0.8B 这种尺寸要先做内存预检和分块读取激活，还没做）。', en: 'This room runs on small models for now (the Qwen3.5-0.8B shapes need a memory preflight and activations streamed in chunks first, which are not done).' });
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
}

function clear() {
  my.points = []; my.result = null; my.bestLayer = null;
  for (const id of ['tc-chart', 'tc-scores', 'tc-compare', 'tc-compare-note', 'tc-chart-cap']) $(id).innerHTML = '';
  delete $('tc-card').dataset.done;
}
function stop() { my.ac?.abort(); my.ac = null; }
function dropSet() { const s = my.set; my.set = null; s?.dispose().catch(() => {}); }

/** the reader's choice: layer, features, training tokens (k 32; each buffer of captured tokens
 *  trained on 4 times, which on the demo model takes 100,000 tokens from FVU 0.18 to 0.02 for
 *  about a quarter more time; 4096 held-out tokens) */
const choice = () => ({ layers: [Number($('tc-layer').value)], features: Number($('tc-features').value), k: 32, tokens: Number($('tc-tokens').value), epochs: 4, valTokens: 4096 });
const modelKey = () => state.info?.manifestSha256 ?? state.entry?.manifestSha256 ?? null;
const cacheUrl = (c, file) => `https://mlpscope.cache/transcoders/${modelKey()}/${c.layers[0]}-${c.features}-${c.k}-${c.tokens}-${c.epochs}-${c.valTokens}/${file}`;

async function cacheGet(c) {
  if (typeof caches === 'undefined' || !modelKey()) return null;
  try {
    const cache = await caches.open(CACHE);
    const [m, b, r] = await Promise.all(['manifest.json', 'transcoders.bin', 'result.json'].map((f) => cache.match(cacheUrl(c, f))));
    if (!m || !b || !r) return null;
    return { ...(await r.json()), files: { 'manifest.json': await m.text(), 'transcoders.bin': new Uint8Array(await b.arrayBuffer()) } };
  } catch { return null; }
}
async function cachePut(c, r) {
  if (typeof caches === 'undefined' || !modelKey()) return;
  try {
    const cache = await caches.open(CACHE);
    const { files, ...rest } = r;
    await cache.put(cacheUrl(c, 'manifest.json'), new Response(files['manifest.json']));
    await cache.put(cacheUrl(c, 'transcoders.bin'), new Response(files['transcoders.bin']));
    await cache.put(cacheUrl(c, 'result.json'), new Response(JSON.stringify(rest)));
  } catch { /* storage full or off: train again next time */ }
}

/** a set trained earlier in this browser for the current choice: shown with its comparison */
async function showCached() {
  if (!state.model || my.ac) return; // not while training
  const c = choice(), run = ++my.run;
  const r = await cacheGet(c);
  if (run !== my.run || !r) return;
  my.points = r.points ?? [];
  await finish(c, r, run, true);
}

async function train() {
  const m = state.model;
  if (!m) return;
  stop();
  const c = choice(), run = ++my.run, ac = new AbortController();
  my.ac = ac; my.points = []; my.result = null;
  delete $('tc-card').dataset.done;
  $('tc-train').disabled = true; $('tc-stop').disabled = false;
  for (const id of ['tc-scores', 'tc-compare', 'tc-compare-note']) $(id).innerHTML = '';
  const t0 = performance.now();
  try {
    const r = await guard($('tc-card'), async () => {
      try { return await m.trainTranscoders({ ...c, signal: ac.signal, onProgress: (p) => progress(p, c, run) }); } catch (err) {
        if (err?.code !== 'E_ABORTED') throw err;
        if (run === my.run) setText($('tc-progress'), { zh: '已停止。', en: 'Stopped.' });
        return null; // the reader stopped it: not a failure of the card
      }
    }, null);
    if (!r || run !== my.run) return;
    r.points = my.points;
    r.pageSeconds = (performance.now() - t0) / 1000;
    await cachePut(c, r);
    await finish(c, r, run, false);
  } finally {
    if (my.ac === ac) my.ac = null;
    $('tc-train').disabled = false; $('tc-stop').disabled = true;
  }
}

function progress(p, c, run) {
  if (run !== my.run) return;
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
  if (!pts.length) { svg.innerHTML = ''; return; }
  const top = Math.max(0.2, ...pts.map((q) => q[1])) * 1.05, X = (t) => x0 + (t / c.tokens) * w, Y = (v) => y0 + h - (Math.min(v, top) / top) * h;
  const ticks = [0, top / 2, top].map((v) => `<text x="4" y="${Y(v) + 4}">${v.toFixed(2)}</text><line x1="${x0}" x2="${x0 + w}" y1="${Y(v)}" y2="${Y(v)}" stroke="#e5e2dc"/>`).join('');
  svg.innerHTML = `${ticks}<line x1="${x0}" y1="${y0 + h}" x2="${x0 + w}" y2="${y0 + h}" stroke="#999"/>
    <path d="${pts.map(([t, v], i) => `${i ? 'L' : 'M'}${X(t).toFixed(1)},${Y(v).toFixed(1)}`).join('')}" fill="none" stroke="var(--mlp)" stroke-width="2.5"/>
    ${pts.length ? `<circle cx="${X(pts.at(-1)[0])}" cy="${Y(pts.at(-1)[1])}" r="4" fill="var(--mlp)"/>` : ''}
    <text x="${x0}" y="${H - 10}">${biSvg({ zh: `训练 token（0 到 ${int(c.tokens)}）`, en: `tokens trained (0 to ${int(c.tokens)})` })}</text>`;
  setText($('tc-chart-cap'), { zh: `纵轴：每个训练批次上的 FVU（MLP 输出的方差里转码器没解释的比例，越低越好），最新 ${fmt(pts.at(-1)[1])}。`, en: `Up: FVU on each training batch (the share of the MLP output's variance the transcoder leaves unexplained; lower is better), latest ${fmt(pts.at(-1)[1])}.` });
}

/** the held-out scores, then neurons against features on the page's probes */
async function finish(c, r, run, cached) {
  const m = state.model, s = r.scores.layers[0], L = c.layers[0];
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
  if (!state.probes || !m.tokenizer) return;
  dropSet();
  const cmp = await guard($('tc-card'), async () => {
    const set = await m.loadTranscoders(r.files);
    if (run !== my.run || state.model !== m) { set.dispose().catch(() => {}); return null; }
    my.set = set;
    const byLang = modelLangs().includes('zh') && modelLangs().includes('en');
    return m.neuronsVsFeatures(set, state.probes, { byLang, onProgress: (p) => { if (run === my.run) setText($('tc-compare-note'), { zh: `正在比较神经元和特征：${p.done} / ${p.total} 次探针计算`, en: `Comparing neurons and features: ${p.done} / ${p.total} probe passes` }); } });
  }, null);
  if (!cmp || run !== my.run) return;
  renderCompare(cmp, L);
  $('tc-card').dataset.done = cached ? 'cache' : 'trained';
}

function renderCompare(cmp, L) {
  const auc = (x) => (x ? x.heldOutAuc.toFixed(3) : '–');
  const langs = cmp.rows.some((r) => r.byLang) ? ['zh', 'en'] : [];
  const head = `<tr><th></th><th>${bi({ zh: '最好的神经元', en: 'best neuron' })}</th><th>${bi({ zh: '最好的特征', en: 'best feature' })}</th>${langs.map((g) => `<th class="by-lang">${g === 'zh' ? bi({ zh: '中文', en: 'Chinese' }) : bi({ zh: '英文', en: 'English' })}</th>`).join('')}<th>${bi({ zh: '几个神经元抵得上它', en: 'neurons to match it' })}</th></tr>`;
  const rows = cmp.rows.map((r) => `<tr data-feature="${r.feature}" data-neuron-auc="${r.neuron.heldOutAuc}" data-feature-auc="${r.transcoder.heldOutAuc}" data-match="${r.neuronsToMatch ?? ''}">
    <th>${bi(NAME[r.feature] ?? { zh: r.feature, en: r.feature })}</th><td>${auc(r.neuron)}<small> L${r.neuron.layer}#${r.neuron.neuron}</small></td><td>${auc(r.transcoder)}<small> #${r.transcoder.neuron}</small></td>
    ${langs.map((g) => `<td class="by-lang">${auc(r.byLang?.[g]?.neuron)} / ${auc(r.byLang?.[g]?.transcoder)}</td>`).join('')}<td>${r.neuronsToMatch ?? `> ${r.combined.at(-1)?.n ?? 0}`}</td></tr>`).join('');
  $('tc-compare').innerHTML = `<caption>${bi({ zh: `留出探针句子上的 AUC（1 = 完美区分，0.5 = 瞎猜）；特征来自第 ${L} 层的转码器，神经元来自同一层的 MLP`, en: `Held-out AUC on the probe sentences (1 = perfect, 0.5 = chance); the features are layer ${L}'s transcoder's, the neurons that layer's MLP's` })}</caption><thead>${head}</thead><tbody>${rows}</tbody>`;
  const better = cmp.rows.filter((r) => r.transcoder.heldOutAuc > r.neuron.heldOutAuc).map((r) => NAME[r.feature] ?? { zh: r.feature, en: r.feature });
  setText($('tc-compare-note'), better.length
    ? { zh: `在${better.map((b) => b.zh).join('、')}上，一个转码器特征比这一层任何单个神经元都更能区分——概念分散在好几个神经元里（叠加），稀疏字典把它收拢成一个方向。最后一列：这一层的神经元要几个放在一起读（按各自的区分度加权）才追得上这个特征。`, en: `On ${better.map((b) => b.en).join(', ')}, one transcoder feature separates better than any single neuron of the layer: the concept is spread over several neurons (superposition) and the sparse dictionary gathers it into one direction. Last column: how many of the layer's neurons, read together (each weighted by how well it separates), it takes to catch up with the feature.` }
    : { zh: '这里没有一个特征比最好的单个神经元更能区分：这个小模型在这一层上，这三个概念已经有干净的神经元。换一层或者多训练一些 token 再看看。最后一列：几个神经元放在一起读才追得上最好的特征。', en: 'No feature here separates better than the best single neuron: in this small model, at this layer, the three concepts already have clean neurons. Try another layer, or more training tokens. Last column: how many neurons, read together, it takes to catch up with the best feature.' });
}
