// The lesson page: a live model (in a Web Worker) behind every chart. Plain ES modules, no framework.
import { loadModelInWorker, topTokens } from './js/index.js';

const $ = (id) => document.getElementById(id);
const fmt = (x, d = 3) => (Number.isFinite(x) ? x.toFixed(d) : '–');
const int = (n) => Number(n).toLocaleString('en-US');
const silu = (z) => z / (1 + Math.exp(-z));
const DEFAULT_TEXT = 'I flew from Paris to Tokyo last week. The food was not bad at all.';
const PROBE_SENTENCES = { city: 'I flew from Paris to Tokyo last week', negation: 'The food was not bad at all', code: 'Try this loop: for i in range(10):' };
const FEATURE_NAMES_ZH = { city: '城市名', negation: '否定词', code: '代码' };
const FEATURE_TITLES = { city: ['在城市名上激活', 'fires on city names'], negation: ['在否定词上激活', 'fires on negation'], code: ['在代码内部激活', 'fires inside code'] };

const state = { model: null, entry: null, ids: [], text: DEFAULT_TEXT, run: null, features: null, busy: Promise.resolve(), lang: 'zh' };
window.__mlpscope = state; // for tests and the curious

// ---------------------------------------------------------------- language
function setLang(lang) {
  state.lang = lang;
  document.documentElement.lang = lang === 'zh' ? 'zh' : 'en';
  document.documentElement.dataset.lang = lang;
  $('lang-toggle').textContent = lang === 'zh' ? 'English' : '中文';
  $('progress').setAttribute('aria-label', lang === 'zh' ? '加载进度' : 'loading progress');
  try { localStorage.setItem('mlpscope-lang', lang); } catch { /* private mode */ }
  renderDynamicText();
  writeUrl();
}
const L = (zh, en) => (state.lang === 'zh' ? zh : en);
$('lang-toggle').addEventListener('click', () => setLang(state.lang === 'zh' ? 'en' : 'zh'));

// ---------------------------------------------------------------- static widgets
function drawSilu() {
  const svg = $('silu-svg'), W = 640, H = 300, x0 = 40, y0 = 20, w = W - 60, h = H - 50;
  const X = (z) => x0 + ((z + 6) / 12) * w, Y = (v) => y0 + h - ((v + 1) / 7) * h;
  const path = (f) => Array.from({ length: 241 }, (_, i) => { const z = -6 + i * 0.05; return `${i ? 'L' : 'M'}${X(z).toFixed(1)},${Y(f(z)).toFixed(1)}`; }).join('');
  const z = Number($('silu-z').value);
  const zmin = -1.2784645, vmin = silu(zmin);
  svg.innerHTML = `<line x1="${x0}" y1="${Y(0)}" x2="${x0 + w}" y2="${Y(0)}" stroke="#999"/><line x1="${X(0)}" y1="${y0}" x2="${X(0)}" y2="${y0 + h}" stroke="#999"/>
    ${[-6, -4, -2, 0, 2, 4, 6].map((t) => `<text x="${X(t) - 6}" y="${y0 + h + 16}">${t}</text>`).join('')}
    <path d="${path((v) => Math.max(0, v))}" fill="none" stroke="#7a8597" stroke-width="2.5" stroke-dasharray="6 4"/>
    <path d="${path(silu)}" fill="none" stroke="var(--mlp)" stroke-width="3"/>
    <circle cx="${X(zmin)}" cy="${Y(vmin)}" r="4" fill="var(--fg)"/><text x="${X(zmin) - 60}" y="${Y(vmin) + 20}">min ≈ −0.278 @ z ≈ −1.278</text>
    <line x1="${X(z)}" y1="${y0}" x2="${X(z)}" y2="${y0 + h}" stroke="var(--accent)"/>
    <circle cx="${X(z)}" cy="${Y(silu(z))}" r="5" fill="var(--mlp)"/><circle cx="${X(z)}" cy="${Y(Math.max(0, z))}" r="5" fill="#7a8597"/>
    <text x="${x0 + 8}" y="${y0 + 14}" fill="var(--mlp)">SiLU</text><text x="${x0 + 8}" y="${y0 + 30}">${L('ReLU（虚线）', 'ReLU (dashed)')}</text>`;
}
function onSilu() {
  const z = Number($('silu-z').value), s = silu(z), r = Math.max(0, z);
  $('silu-z-out').textContent = z.toFixed(1);
  $('silu-val').textContent = s.toFixed(3);
  $('relu-val').textContent = r.toFixed(3);
  $('diff-val').textContent = (s - r).toFixed(3);
  $('silu-sentence').textContent = z < 0
    ? L(`在 z = ${z.toFixed(1)}（负值）处，ReLU 硬归零为 ${r.toFixed(3)}，SiLU 仍漏过 ${s.toFixed(3)}——软门还放行一点信号。`, `At z = ${z.toFixed(1)} (negative), ReLU cuts to ${r.toFixed(3)} while SiLU still lets ${s.toFixed(3)} through: the soft gate passes a little signal.`)
    : L(`在 z = ${z.toFixed(1)} 处两者接近：SiLU = ${s.toFixed(3)}，ReLU = ${r.toFixed(3)}。`, `At z = ${z.toFixed(1)} the two are close: SiLU = ${s.toFixed(3)}, ReLU = ${r.toFixed(3)}.`);
  drawSilu();
}
$('silu-z').addEventListener('input', onSilu);

const BUDGETS = {
  ffn4: { label: ['经典 FFN，4×', 'classic FFN, 4×'], mats: [['up', 4], ['down', 4]] },
  swiglu4: { label: ['SwiGLU，4×', 'SwiGLU, 4×'], mats: [['gate', 4], ['up', 4], ['down', 4]] },
  swiglu83: { label: ['SwiGLU，8⁄3×', 'SwiGLU, 8⁄3×'], mats: [['gate', 8 / 3], ['up', 8 / 3], ['down', 8 / 3]] },
  qwen: { label: ['Qwen3.5，3.5×', 'Qwen3.5, 3.5×'], mats: [['gate', 3.5], ['up', 3.5], ['down', 3.5]] },
};
const COLORS = { gate: 'var(--gate)', up: 'var(--up)', down: 'var(--down)' };
function drawBudget() {
  // all four configurations on one 12 h² scale, the chosen one highlighted: lengths compare across rows
  const key = document.querySelector('input[name=budget]:checked').value, b = BUDGETS[key];
  const total = b.mats.reduce((a, [, r]) => a + r, 0); // in h² units
  const scale = 100 / 12;
  $('budget-bars').innerHTML = Object.entries(BUDGETS).map(([k, cfg]) => {
    let left = 0;
    const segs = cfg.mats.map(([m, r]) => { const seg = `<div class="bseg" data-mat="${m}" style="left:${left}%;width:${r * scale}%;background:${COLORS[m]}">${m}_proj ${fmtH(r)}</div>`; left += r * scale; return seg; }).join('');
    const t = cfg.mats.reduce((a, [, r]) => a + r, 0);
    return `<div class="brow${k === key ? ' sel' : ''}" data-key="${k}"><span class="blabel">${L(...cfg.label)}</span><div class="btrack" data-total="${t}"${k === key ? ' id="budget-track"' : ''}>${segs}<div class="baseline" style="left:${8 * scale}%" title="8 h²"></div></div></div>`;
  }).join('');
  const pct = Math.round((total / 8 - 1) * 100);
  $('budget-total').textContent = L(`${L(...b.label)}：合计 ${fmtH(total)}（虚线 = 朴素 FFN 的 8 h²）：${pct === 0 ? '与朴素模块相同' : `比朴素模块多 ${pct}%`}。`, `${L(...b.label)}: total ${fmtH(total)} (dashed line = the plain FFN's 8 h²): ${pct === 0 ? 'the same as the plain block' : `${pct}% more than the plain block`}.`);
}
function fmtH(r) { const t = { 4: '4 h²', 8: '8 h²', 12: '12 h²', 10.5: '10.5 h²', 3.5: '3.5 h²' }[r]; return t ?? (Math.abs(r - 8 / 3) < 1e-9 ? '8⁄3 h²' : `${r} h²`); }
document.querySelectorAll('input[name=budget]').forEach((el) => el.addEventListener('change', drawBudget));
$('budget-toggle').addEventListener('click', () => {
  const keys = Object.keys(BUDGETS), cur = document.querySelector('input[name=budget]:checked').value;
  $(`budget-${keys[(keys.indexOf(cur) + 1) % keys.length]}`).checked = true;
  drawBudget();
});

/** The MLP as neurons: x feeds two parallel branches, gate (then SiLU) and up, which meet at ⊙;
 *  the product goes through down back to the stream's width. */
function drawNeurons(cfg) {
  const H = cfg ? cfg.hidden_size : 1024, I = cfg ? cfg.intermediate_size : 3584;
  const col = (x, n, color, cy, span, r = 6) => { const ys = Array.from({ length: n }, (_, i) => cy + (i - (n - 1) / 2) * (span / Math.max(n - 1, 1))); return { x, ys, svg: ys.map((y) => `<circle cx="${x}" cy="${y}" r="${r}" fill="${color}"/>`).join('') }; };
  const inp = col(60, 4, 'var(--resid)', 160, 120, 7);
  const gate = col(230, 6, 'var(--gate)', 92, 90), up = col(230, 6, 'var(--up)', 228, 90);
  const prod = col(400, 6, 'var(--mlp)', 160, 150), out = col(580, 4, 'var(--resid)', 160, 120, 7);
  const lines = (a, b, c, o = '.22') => a.ys.flatMap((y1) => b.ys.map((y2) => `<line x1="${a.x}" y1="${y1}" x2="${b.x}" y2="${y2}" stroke="${c}" stroke-opacity="${o}"/>`)).join('');
  // neuron i of gate and neuron i of up meet in product i: one line each, no mixing
  const pair = prod.ys.map((y, i) => `<line x1="${gate.x}" y1="${gate.ys[i]}" x2="${prod.x}" y2="${y}" stroke="var(--gate)" stroke-opacity=".7"/><line x1="${up.x}" y1="${up.ys[i]}" x2="${prod.x}" y2="${y}" stroke="var(--up)" stroke-opacity=".7"/>`).join('');
  $('neuron-svg').innerHTML = `${lines(inp, gate, 'var(--gate)')}${lines(inp, up, 'var(--up)')}${pair}${lines(prod, out, 'var(--down)')}${inp.svg}${gate.svg}${up.svg}${prod.svg}${out.svg}
    <text x="16" y="240">x (${int(H)})</text>
    <text x="176" y="30" fill="var(--gate)">gate_proj → SiLU (${int(I)})</text>
    <text x="196" y="296" fill="var(--up)">up_proj (${int(I)})</text>
    <text x="372" y="66">⊙ (${int(I)})</text>
    <text x="452" y="240" fill="var(--down)">down_proj → ${int(H)}</text>`;
}

// ---------------------------------------------------------------- models
async function listModels() {
  let models = [];
  try { models = (await (await fetch('models.json')).json()).models; } catch { /* offline and not cached */ }
  const sel = $('model-select');
  sel.innerHTML = models.map((m) => `<option value="${m.id}">${L(m.label[0], m.label[1])}</option>`).join('') + `<option value="url">${L('其它权重集（URL）…', 'another weight set (URL)…')}</option>`;
  state.models = models;
  sel.onchange = () => {
    $('url-box').hidden = sel.value !== 'url';
    if (sel.value !== 'url') load(models.find((m) => m.id === sel.value));
  };
  $('model-load').onclick = () => { const u = $('model-url').value.trim(); if (u) load({ id: 'url', url: u, label: [u, u], kind: 'unknown' }); };
  return models;
}

/** the download line under the model picker, in the active language (re-rendered on a switch) */
function renderProgress() {
  const p = state.progress;
  if (!p) return;
  const mb = (n) => (n / 1048576).toFixed(1);
  $('progress-text').textContent = `${mb(p.loaded)} / ${mb(p.total)} MB · ${(p.loaded / 1048576 / Math.max(p.seconds, 0.001)).toFixed(1)} MB/s` +
    (p.fromCache ? L(' · 来自缓存', ' · from cache') : '') + (p.done == null ? '' : L(` · 用时 ${p.done.toFixed(1)} 秒`, ` · ${p.done.toFixed(1)} s`));
}

/** the load error line, in the active language (the engine's message itself is English) */
function renderLoadError() {
  const e = state.loadError;
  const label = (m) => (m.kind === 'unknown' ? m.url : L(m.label[0], m.label[1]));
  const msg = e ? String(e.message).replace(/^E_[A-Z_]+: /, '').replace(/\.$/, '') : '';
  $('load-error').textContent = !e ? '' : L(`加载 ${label(e.entry)} 失败（${e.code ?? 'error'}）：${msg}`, `Loading ${label(e.entry)} failed (${e.code ?? 'error'}): ${msg}`) +
    (e.back ? L(`。已换回 ${label(e.back)}。`, `. Back to ${label(e.back)}.`) : '');
}

async function load(entry, { keepError = false } = {}) {
  const t0 = performance.now();
  if (!keepError) { state.loadError = null; renderLoadError(); }
  const prev = state.entry;
  $('progress').value = 0;
  state.progress = null;
  delete document.body.dataset.ready; // set again when this model has run and its features are found
  // nothing of the previous model stays on screen with working buttons while this one loads
  state.features = null;
  $('features').innerHTML = '';
  $('features-note').textContent = L('正在加载模型…', 'loading the model…');
  for (const id of ['fires-top', 'fires-up', 'fires-down', 'fires-out', 'fires-neighbours']) $(id).innerHTML = '';
  const old = state.model;
  state.model = null;
  try {
    await old?.dispose();
    const model = await loadModelInWorker(new URL(entry.url, location.href), {
      maxContext: 512,
      manifestSha256: entry.manifestSha256,
      onProgress: ({ loaded, total, fromCache }) => {
        $('progress').value = total ? loaded / total : 0;
        state.progress = { loaded, total, fromCache, seconds: (performance.now() - t0) / 1000, done: null };
        renderProgress();
      },
    });
    // every forward pass the page runs reports its speed beside the path that runs it
    const forward = model.forward.bind(model);
    model.forward = async (ids, opts) => {
      state.computing = true; renderEngineStatus();
      try {
        const r = await forward(ids, opts);
        state.speed = { tokens: ids.length, ms: r.timings.total_ms };
        return r;
      } finally { state.computing = false; renderEngineStatus(); }
    };
    state.model = model;
    state.entry = entry;
    state.speed = null;
    state.info = await model.info();
    state.features = null;
    state.topActs = null;
    state.lens = null;
    state.fires = null;
    for (const id of ['fires-top', 'fires-up', 'fires-down']) $(id).innerHTML = '';
    if (state.progress) { state.progress.done = (performance.now() - t0) / 1000; renderProgress(); }
    document.body.dataset.model = entry.id;
    state.corrLayerSet = false;
    await runText(state.text);
    await findFeatures();
    document.body.dataset.ready = '1';
  } catch (err) {
    // the old model was disposed to free its memory: a failed load goes back to it, so the page stays live
    const back = prev && prev !== entry && !keepError ? prev : null;
    state.loadError = { entry, code: err.code, message: err.message, back };
    renderLoadError();
    document.body.dataset.loadFailed = entry.id;
    if (back) {
      if ([...$('model-select').options].some((o) => o.value === back.id)) { $('model-select').value = back.id; $('url-box').hidden = back.id !== 'url'; }
      await load(back, { keepError: true });
    } else document.body.dataset.ready = 'error';
  }
}

// ---------------------------------------------------------------- the live run
async function runText(text) {
  const m = state.model;
  if (!m || !m.tokenizer) return;
  state.text = text;
  $('try-status').textContent = state.searching ? L('计算中…（模型正在完成神经元搜索，完成后马上运行你的句子）', 'computing… (the model is finishing the neuron search; your sentence runs right after it)') : L('计算中…', 'computing…');
  const all = await m.tokenizer.encode(text);
  const ids = all.slice(0, m.contextLength);
  if (!ids.length) { $('try-status').textContent = L('请输入一些文字。', 'Please type some text.'); return; }
  const pieces = await m.tokenizer.pieces(ids); // one call: characters split over tokens are shown whole
  const run = await m.forward(ids, { topK: 8, logits: 'last' });
  state.ids = ids; state.pieces = pieces.map(pieceLabel); state.piecesRaw = pieces; state.run = run;
  state.cut = all.length > ids.length ? all.length : 0;
  renderModelFacts();
  renderBars();
  renderLayerChart();
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

function renderModelFacts() {
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
  drawNeurons(c);
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
function renderEngineStatus() {
  const b = state.info?.build, el = $('engine-status');
  if (!b) { el.textContent = ''; return; }
  const act = { int8: L('int8 激活', 'int8 activations'), exact: L('精确激活', 'exact activations'), plain: L('f32 激活', 'f32 activations'), f32: L('f32 激活', 'f32 activations') }[b.activations] ?? b.activations;
  const threads = b.threads > 1 ? L(`${b.threads} 线程`, `${b.threads} threads`) : L('单线程', '1 thread');
  const sp = state.speed, speed = state.computing ? L('计算中…', 'computing…')
    : sp ? L(`上次：${sp.tokens} 个 token，${(sp.tokens / Math.max(sp.ms, 1e-3) * 1000).toFixed(0)} token/秒`, `last pass: ${sp.tokens} tokens, ${(sp.tokens / Math.max(sp.ms, 1e-3) * 1000).toFixed(0)} tokens/s`) : '';
  el.textContent = `${act} · ${threads}${speed ? ' · ' + speed : ''}`;
  el.title = b.why;
}

function layerRatios() {
  const st = state.run.stats;
  return st.mlp_ratio.map((r) => r.reduce((a, b) => a + b, 0) / r.length);
}

/** the words under the all-layers chart, computed from the loaded model's ratios (thresholds stated in the text) */
function barsSummary(ratios) {
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

function renderBars() {
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

function renderLayerChart() {
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

async function renderWalk() {
  const m = state.model, l = Number($('walk-layer').value || 0), t = Number($('walk-token').value || 0), st = state.run.stats;
  if (document.activeElement !== $('walk-feature') && !state.walkFeatureChosen) $('walk-feature').value = st.top_idx[l][t * st.topK];
  const I = state.info.config.intermediate_size;
  if (!checkNeuron($('walk-feature'), $('walk-error'))) { for (const id of ['walk-gate', 'walk-silu', 'walk-up', 'walk-out']) $(id).textContent = '–'; return; }
  const j = Number($('walk-feature').value);
  const r = await m.forward(state.ids.slice(0, t + 1), { stats: false, logits: 'none', hooks: [`blocks.${l}.mlp.hook_pre`, `blocks.${l}.mlp.hook_pre_linear`, `blocks.${l}.mlp.hook_post`] });
  const g = r.hooks[`blocks.${l}.mlp.hook_pre`][t * I + j], u = r.hooks[`blocks.${l}.mlp.hook_pre_linear`][t * I + j], p = r.hooks[`blocks.${l}.mlp.hook_post`][t * I + j];
  $('walk-gate').textContent = fmt(g); $('walk-silu').textContent = fmt(silu(g)); $('walk-up').textContent = fmt(u); $('walk-out').textContent = fmt(p);
  $('walk-out').dataset.value = p;
}
for (const id of ['walk-layer', 'walk-token']) $(id).addEventListener('change', () => { state.walkFeatureChosen = false; renderWalk(); });
$('walk-feature').addEventListener('change', () => { state.walkFeatureChosen = true; renderWalk(); });
$('corr-layer').addEventListener('change', () => { renderLayerChart(); writeUrl(); });

// ---------------------------------------------------------------- logit lens: after the mixer, after the MLP
async function renderLens() {
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
function renderLensTable() {
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

async function renderKnockoutBefore() {
  const top = topOf(state.run.logits, 5);
  $('ko-before').innerHTML = await tokenList(top);
  if (!state.koChosen) { // default: the most active neuron of the last layer at the last token
    const st = state.run.stats, l = st.layers - 1;
    $('ko-layer').value = String(l);
    $('ko-neuron').value = st.top_idx[l][(st.T - 1) * st.topK];
  }
  $('ko-after').innerHTML = '';
  delete $('ko-kl').dataset.kl;
  $('ko-where').hidden = true;
  state.ko = null;
  renderKoText();
}
/** the k most likely next tokens over the real vocabulary, with their probabilities */
function topOf(logits, k) {
  const n = state.info.tokenizer.vocab_size || logits.length;
  return topTokens(logits.subarray(0, n), k).map((t) => ({ id: t.id, p: t.prob }));
}
async function tokenList(top) {
  const out = [];
  for (const t of top) out.push(`<li data-id="${t.id}" data-p="${t.p}">${escapeHtml(JSON.stringify(await tokText(t.id)))} · ${(100 * t.p).toFixed(1)}%</li>`);
  return out.join('');
}
$('ko-layer').addEventListener('change', () => { state.koChosen = true; });
$('ko-neuron').addEventListener('change', () => { state.koChosen = true; });
$('ko-whole').addEventListener('change', () => { $('ko-neuron').disabled = $('ko-whole').checked; });
// the per-position view needs every position's logits twice; past this many floats (32 MB each:
// Qwen3.5's 248,320-token vocabulary × 33 tokens) only the last position is compared
const KO_ALL_LIMIT = 8 * 1024 * 1024;
$('ko-btn').addEventListener('click', async () => {
  const m = state.model, ids = state.ids, c = state.info.config, T = ids.length;
  const l = Number($('ko-layer').value), whole = $('ko-whole').checked;
  if (!whole && !checkNeuron($('ko-neuron'), $('ko-kl'))) { $('ko-after').innerHTML = ''; state.ko = null; return; }
  const j = whole ? -1 : Number($('ko-neuron').value);
  const neurons = whole ? Array.from({ length: c.intermediate_size }, (_, i) => i) : [j];
  const all = c.vocab_size * T <= KO_ALL_LIMIT;
  const logits = all ? 'all' : 'last';
  const base = all ? (await m.forward(ids, { stats: false, logits })).logits : state.run.logits;
  const r = await m.forward(ids, { stats: false, logits, interventions: [{ layer: l, hook: 'mlp.hook_post', neurons, scale: 0 }] });
  const V = r.logits.length / (all ? T : 1);
  const last = (x) => x.subarray((all ? T - 1 : 0) * V, (all ? T : 1) * V);
  const after = await tokenList(topOf(last(r.logits), 5));
  const perPos = all ? Array.from({ length: T }, (_, t) => klDiv(base.subarray(t * V, (t + 1) * V), r.logits.subarray(t * V, (t + 1) * V))) : null;
  const kl = all ? perPos[T - 1] : klDiv(base, r.logits);
  state.ko = { l, j, kl, perPos, peak: null };
  if (perPos) {
    let tp = 0;
    for (let t = 1; t < T; t++) if (perPos[t] > perPos[tp]) tp = t;
    const top1 = (x) => { let b = 0; for (let i = 1; i < V; i++) if (x[i] > x[b]) b = i; return b; };
    const bs = base.subarray(tp * V, (tp + 1) * V), ks = r.logits.subarray(tp * V, (tp + 1) * V);
    const dec = async (id) => JSON.stringify(await tokText(id));
    state.ko.peak = { t: tp, kl: perPos[tp], at: await dec(ids[tp]), before: await dec(top1(bs)), after: await dec(top1(ks)) };
    await shadeTokens($('ko-tokens'), ids, perPos);
    $('ko-tokens').dataset.kl = JSON.stringify(perPos);
  }
  $('ko-where').hidden = !perPos;
  renderKoText();
  $('ko-kl').dataset.kl = kl;
  $('ko-after').innerHTML = after; // last: tests wait for it
});
/** KL(p‖q) in nats between the softmaxes of two logit vectors */
function klDiv(a, b) {
  let ma = -Infinity, mb = -Infinity;
  for (let i = 0; i < a.length; i++) { if (a[i] > ma) ma = a[i]; if (b[i] > mb) mb = b[i]; }
  let za = 0, zb = 0;
  for (let i = 0; i < a.length; i++) { za += Math.exp(a[i] - ma); zb += Math.exp(b[i] - mb); }
  const lza = Math.log(za), lzb = Math.log(zb);
  let kl = 0;
  for (let i = 0; i < a.length; i++) { const la = a[i] - ma - lza; kl += Math.exp(la) * (la - (b[i] - mb - lzb)); }
  return Math.max(0, kl);
}
function renderKoText() {
  const k = state.ko;
  const what = !k ? '' : k.j < 0 ? L(`第 ${k.l} 层的整个 MLP`, `the whole MLP of layer ${k.l}`) : L(`第 ${k.l} 层的神经元 ${k.j}`, `neuron ${k.j} of layer ${k.l}`);
  $('ko-kl').textContent = !k ? '' : L(`关掉${what}后，下一个 token 分布的 KL 变化 = ${k.kl.toExponential(2)} nats。`,
    `With ${what} switched off, the next-token distribution moved by KL = ${k.kl.toExponential(2)} nats.`);
  const p = k?.peak;
  $('ko-peak').textContent = !p ? '' : p.before === p.after
    ? L(`变化最大的是 ${p.at}（第 ${p.t} 个 token）之后的预测：KL = ${p.kl.toExponential(2)} nats，最可能的下一个 token 仍是 ${p.before}。`,
      `The biggest change is in the prediction after ${p.at} (token ${p.t}): KL = ${p.kl.toExponential(2)} nats; the most likely next token is still ${p.before}.`)
    : L(`变化最大的是 ${p.at}（第 ${p.t} 个 token）之后的预测：KL = ${p.kl.toExponential(2)} nats，最可能的下一个 token 从 ${p.before} 变成 ${p.after}。`,
      `The biggest change is in the prediction after ${p.at} (token ${p.t}): KL = ${p.kl.toExponential(2)} nats; the most likely next token went from ${p.before} to ${p.after}.`);
}

// ---------------------------------------------------------------- neurons that fire
async function shade(el, text, layer, neuron, sign = 1) {
  const m = state.model, I = state.info.config.intermediate_size;
  const ids = await m.tokenizer.encode(text);
  const r = await m.forward(ids, { stats: false, logits: 'none', hooks: [`blocks.${layer}.mlp.hook_post`] });
  await shadeTokens(el, ids, Array.from(ids, (_, t) => sign * r.hooks[`blocks.${layer}.mlp.hook_post`][t * I + neuron]));
}
/** contrast of white and of the page's dark text on the shade at `alpha` over white (WCAG ratios) */
function shadeContrast(alpha) {
  const lin = (c) => { c /= 255; return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4; };
  const lum = (rgb) => 0.2126 * lin(rgb[0]) + 0.7152 * lin(rgb[1]) + 0.0722 * lin(rgb[2]);
  const L0 = lum([36, 87, 197].map((c) => 255 + (c - 255) * alpha)), dark = lum([29, 35, 43]);
  return { white: 1.05 / (L0 + 0.05), dark: (L0 + 0.05) / (dark + 0.05) };
}
/** Around the middle of the shade scale neither white nor dark text reaches 4.5:1 (for any shade
 *  colour: the two ratios multiply to about 16). Alphas in that band snap to its nearer edge. */
const SHADE_BAND = (() => {
  const bad = Array.from({ length: 101 }, (_, i) => i / 100).filter((a) => { const c = shadeContrast(a); return Math.max(c.white, c.dark) < 4.6; });
  return bad.length ? [bad[0] - 0.01, bad.at(-1) + 0.01] : null;
})();
function shadeAlpha(alpha) {
  if (!SHADE_BAND || alpha <= SHADE_BAND[0] || alpha >= SHADE_BAND[1]) return alpha;
  return alpha < (SHADE_BAND[0] + SHADE_BAND[1]) / 2 ? SHADE_BAND[0] : SHADE_BAND[1];
}
function textOn(alpha) { const c = shadeContrast(alpha); return c.white > c.dark ? '#fff' : '#1d232b'; }
/** each token shaded by its value: positive values darker, scaled to the largest |value|; returns the pieces */
async function shadeTokens(el, ids, values) {
  const mx = Math.max(1e-6, ...values.map(Math.abs));
  const raw = await state.model.tokenizer.pieces(ids), pieces = raw.map(pieceLabel), parts = [];
  for (let t = 0; t < ids.length; t++) {
    const a = values[t], alpha = shadeAlpha(Math.max(0, a) / mx); // readable text on every shade
    // a character split over several tokens shows once, on the token where it starts
    const shown = pieceShort(raw[t]);
    parts.push(`<span class="tok${raw[t].of ? ' split' : ''}" data-act="${a}" title="${escapeHtml(pieces[t])}: ${a.toFixed(3)}" style="background:rgba(var(--shade),${alpha.toFixed(2)});color:${textOn(alpha)}">${escapeHtml(shown)}</span>`);
  }
  el.innerHTML = parts.join('');
  return pieces;
}

async function findFeatures() {
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
  const key = state.entry?.manifestSha256 ? `mlpscope-features-v1:${state.entry.manifestSha256}:${probes.length}:${probes[0]?.text.length ?? 0}` : null;
  let res = null;
  try { res = key && JSON.parse(localStorage.getItem(key) ?? 'null'); } catch { res = null; }
  document.body.dataset.featuresFrom = res ? 'cache' : 'search';
  if (!res) {
    searching(null);
    state.searching = true;
    try { res = await m.findFeatureNeurons(probes, { top: 2, directions: true, topActivations: 8, onProgress: searching }); } finally { state.searching = false; }
    if (key) try { localStorage.setItem(key, JSON.stringify(res, (k, v) => (ArrayBuffer.isView(v) ? Array.from(v) : v))); } catch { /* storage full or private mode: search again next time */ }
  }
  if (state.model !== m) return; // another model was chosen meanwhile
  state.features = res;
  const cards = [];
  for (const name of ['city', 'negation', 'code']) {
    const b = res.best.find((x) => x.feature === name);
    cards.push(`<div class="card" id="feature-${name}" data-layer="${b?.layer ?? ''}" data-neuron="${b?.neuron ?? ''}" data-auc="${b?.heldOutAuc ?? ''}">
      <h3 class="feature-title"></h3>
      <p class="note feature-meta"></p><div class="tokens"></div><p class="note feature-top"></p>
      ${b ? `<button type="button" class="link feature-inspect" data-layer="${b.layer}" data-neuron="${b.neuron}" data-sign="${b.sign}"></button>` : ''}</div>`);
  }
  $('features').innerHTML = cards.join('');
  // "look closer": the neuron goes into the any-neuron card below
  for (const btn of document.querySelectorAll('.feature-inspect')) btn.addEventListener('click', async () => {
    $('fires-layer').value = btn.dataset.layer; $('fires-neuron').value = btn.dataset.neuron; $('fires-sign').value = btn.dataset.sign;
    await showNeuron();
    $('fires-card').scrollIntoView({ behavior: 'smooth', block: 'start' });
  });
  state.featureTops = {};
  for (const name of ['city', 'negation', 'code']) {
    const b = res.best.find((x) => x.feature === name), card = $(`feature-${name}`);
    if (b) await shade(card.querySelector('.tokens'), PROBE_SENTENCES[name], b.layer, b.neuron, b.sign);
    // its strongest activations: is the selective neuron also a clean one?
    if (b) state.featureTops[name] = b.top;
    // where no single neuron is clean, show that a direction of the residual stream is
    const d = weakWithDirection(name);
    if (d) {
      card.insertAdjacentHTML('beforeend', `<p class="note feature-dir" data-layer="${d.layer}" data-auc="${d.heldOutAuc}"></p><div class="tokens dir-tokens"></div>`);
      await shadeDirection(card.querySelector('.dir-tokens'), PROBE_SENTENCES[name], d);
    }
  }
  renderFeatureText();
  const b0 = res.best[0];
  // the neuron card: the one a shared link names (once), else the best feature neuron
  const shared = /^(\d+):(\d+):(-?1)$/.exec(state.fromUrl?.neuron ?? '');
  if (shared && Number(shared[1]) < state.info.config.num_hidden_layers) {
    $('fires-layer').value = shared[1]; $('fires-neuron').value = shared[2]; $('fires-sign').value = shared[3];
    state.fromUrl.neuron = null;
    await showNeuron();
  } else if (b0) { $('fires-layer').value = String(b0.layer); $('fires-neuron').value = b0.neuron; $('fires-sign').value = String(b0.sign); await showNeuron(); }
}
/** the probe sentences a neuron's top activations are taken from: fewer for the big models (each one is a forward pass) */
const probeTexts = () => (state.info.config.hidden_size >= 512 ? state.probes.slice(0, 48) : state.probes);
/** the most active neurons (|mlp.hook_post|, every layer) at one token of the card's text, as buttons
 *  that load them into the card; the token defaults to where the card's neuron fires most */
function renderNeighbours() {
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
async function showNeuron() {
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
  state.fires = { stats: r.stats };
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
  state.topActs = { l, j, sign, texts: texts.length, tokens: res.tokens, positive: res.positive };
  renderTopActsNote();
  writeUrl();
}
/** a context around a token, its line breaks shown as ⏎ */
const nl = (t) => escapeHtml(t).replace(/\n/g, '⏎');
function renderTopActsNote() {
  const a = state.topActs;
  $('fires-sign').options[0].textContent = L('正值', 'positive');
  $('fires-sign').options[1].textContent = L('负值', 'negative');
  $('fires-top-note').textContent = !a ? '' : L(`在 ${a.texts} 个探针句子的 ${a.tokens} 个 token 中排序；第 ${a.l} 层神经元 ${a.j} 在其中 ${(100 * a.positive).toFixed(1)}% 的 token 上为${a.sign > 0 ? '正' : '负'}值。`,
    `Ranked over ${a.tokens} tokens of ${a.texts} probe sentences; neuron ${a.j} of layer ${a.l} is ${a.sign > 0 ? 'positive' : 'negative'} on ${(100 * a.positive).toFixed(1)}% of them.`);
}
/** the best direction for a feature whose best neuron is below 0.9 held out (trained models only) */
function weakWithDirection(name) {
  const f = state.features, b = f?.best.find((x) => x.feature === name), d = f?.directions?.find((x) => x.feature === name);
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
function renderFeatureText() {
  if (!state.features) return;
  for (const name of ['city', 'negation', 'code']) {
    const b = state.features.best.find((x) => x.feature === name), card = $(`feature-${name}`);
    if (!card) continue;
    card.querySelector('.feature-title').textContent = `“${L(...FEATURE_TITLES[name])}”`;
    const meta = card.querySelector('.feature-meta');
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
    meta.textContent = b ? L(`第 ${b.layer} 层 · 神经元 ${b.neuron}${b.sign < 0 ? '（负向）' : ''} · 留出探针上的 AUC = ${b.heldOutAuc.toFixed(3)}（${b.nPos} 个正例 / ${b.nNeg} 个反例）`, `layer ${b.layer} · neuron ${b.neuron}${b.sign < 0 ? ' (negative direction)' : ''} · AUC on held-out probes = ${b.heldOutAuc.toFixed(3)} (${b.nPos} positive / ${b.nNeg} negative tokens)`) : L('没有找到。', 'none found.');
  }
  const weak = state.features.best.filter((b) => b.heldOutAuc < 0.9);
  const random = state.entry?.kind === 'random';
  $('features-note').textContent = random
    ? L('注意：这是随机权重的模型，没有学到任何东西——上面的“最佳”神经元只是噪声里挑出来的，不代表真实特征。', 'Note: this model has random weights and has learned nothing; the “best” neurons above are picked from noise and are not real features.')
    : weak.length ? L(`这个模型里${weak.map((b) => FEATURE_NAMES_ZH[b.feature] ?? b.feature).join('、')}没有干净的单个神经元（最好的 AUC 也低于 0.9）——它们各自只覆盖一部分这类 token，太小的模型常常如此。`, `This model has no clean single neuron for ${weak.map((b) => b.feature).join(', ')} (the best held-out AUC is below 0.9): each candidate covers only some tokens of the kind, as is common in small models.`)
      : L(`在 ${state.features.tokens} 个探针 token 上找到；选择用一半探针，AUC 在另一半上计算。`, `Found over ${state.features.tokens} probe tokens; chosen on half of the probes, AUC measured on the other half.`);
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

// ---------------------------------------------------------------- try it, exercise, quiz
$('try-run').addEventListener('click', async () => { state.koChosen = false; await runText($('try-text').value); });
$('ex-check').addEventListener('click', () => {
  if (!state.run) return;
  const ratios = layerRatios().map((r) => 100 * r).filter((r) => r > 0);
  const big = Math.max(...ratios), small = Math.min(...ratios);
  const a = Number($('ex-large').value), b = Number($('ex-small').value), ok = Math.abs(a - big) <= 0.15 && Math.abs(b - small) <= 0.15;
  state.ex = { ok, big, small };
  renderExFeedback();
});
function renderExFeedback() {
  const fb = $('ex-feedback'), e = state.ex;
  if (!e) { fb.textContent = ''; fb.className = ''; return; }
  const { ok, big, small } = e;
  fb.className = ok ? 'right' : 'wrong';
  // the lesson's point holds for most layers; a small model's first or last MLP can be most of its layer's output
  const tail = big < 50
    ? L(`但即便最大的也远小于 100%——MLP 写的是修正。`, `and even the biggest is far below 100%: the MLP writes a correction.`)
    : L(`最大的那层超过一半，不再是小修正（小模型的首尾层常这样）；其余层才是修正。`, `the biggest is over half of its layer's output, no longer a small correction (common in a small model's first or last layer); the other layers are corrections.`);
  fb.textContent = ok
    ? L(`对！最大 ${big.toFixed(1)}%，最小 ${small.toFixed(1)}%：最大层的 MLP 占比是最小层的 ${(big / small).toFixed(1)} 倍，`, `Right! Largest ${big.toFixed(1)}%, smallest ${small.toFixed(1)}%: the biggest share is ${(big / small).toFixed(1)}× the smallest, `) + tail
    : L(`还不对。提示：数值在点击长条后显示；最大的是 ${big.toFixed(1)} 附近吗？`, `Not yet. Hint: the numbers appear when you click the bars; is the largest near ${big.toFixed(1)}?`);
}
const QUIZ_FEEDBACK = {
  q1: { a: ['不是：矩阵乘法会混合不同特征。⊙ 只把同一位置的两个数相乘。', 'No: a matrix product mixes features. ⊙ only multiplies the two numbers in the same position.'],
    b: ['对：逐元素相乘，门控的每个特征只管自己那一路取值。', 'Right: element-wise, each gate feature scales only its own value.'],
    c: ['不是：点积会把整个向量压成一个数，MLP 需要保留 intermediate_dim 个特征。', 'No: a dot product would collapse the vector to one number; the MLP keeps intermediate_dim features.'] },
  q2: { a: ['对：MLP 的输出是加到残差流上的修正，不是替换。', 'Right: the MLP\'s output is a correction added to the stream, not a replacement.'],
    b: ['不是：残差连接只做加法，不会覆盖。', 'No: the residual connection only adds, it never overwrites.'],
    c: ['不是：残差连接只做加法，MLP 不会取代残差流。', 'No: the residual connection only adds; the MLP does not take the stream over.'] },
  q3: { a: ['不是：精度和参数个数无关。', 'No: precision has nothing to do with the number of parameters.'],
    b: ['对：三个 hidden × intermediate 的矩阵、每层一份，加起来约占三分之一。', 'Right: three hidden × intermediate matrices per layer add up to about a third.'],
    c: ['不是：每层只有一个 MLP 模块。', 'No: there is exactly one MLP block per layer.'] },
  q4: { a: ['不一定：AUC 只比较排序，不管最强的激活落在哪里。上面的特征卡片数出了已加载模型里的情况。', 'Not necessarily: AUC compares rankings and says nothing about where the strongest activations fall. The feature cards above count it for the loaded model.'],
    b: ['对：AUC 是“正例高于反例”的概率。有选择性不等于单义——上面的特征卡片数出了它最强的激活里有几次是这类 token。', 'Right: AUC is the chance that a positive scores above a negative. Selective is not monosemantic; the feature cards above count how many of its strongest activations are of the kind.'],
    c: ['不是：SwiGLU 神经元几乎从不恰好为 0，而且 AUC 不说明它在别处激活得多不多。', 'No: a SwiGLU neuron is almost never exactly zero, and AUC says nothing about how much it fires elsewhere.'] },
};
document.querySelectorAll('#quiz fieldset').forEach((fs) => {
  fs.addEventListener('change', (ev) => {
    const q = ev.target.name, v = ev.target.value, fb = fs.querySelector('.feedback');
    const right = ev.target.hasAttribute('data-correct');
    fb.className = `feedback ${right ? 'right' : 'wrong'}`;
    fb.textContent = `${right ? '✓ ' : '✗ '}${L(...QUIZ_FEEDBACK[q][v])}` + (q === 'q2' ? liveRatioNote() : '');
  });
});

/** the loaded model's own numbers, after the quiz's answer on the size of the MLP's write */
function liveRatioNote() {
  if (!state.run) return '';
  const r = [...layerRatios()].sort((a, b) => a - b), med = r[Math.floor((r.length - 1) / 2)], over = r.filter((x) => x > 0.5).length;
  return L(` 已加载的模型：各层比例的中位数是 ${(100 * med).toFixed(0)}%，${over} 层超过 50%（见上面的长条）。`, ` The loaded model: the median layer ratio is ${(100 * med).toFixed(0)}%, and ${over} layer${over === 1 ? '' : 's'} go${over === 1 ? 'es' : ''} over 50% (see the bars above).`);
}

function renderTryStatus() {
  if (!state.run) return;
  const n = state.ids.length, ms = state.run.timings.total_ms.toFixed(1);
  const split = state.piecesRaw.filter((p) => p.of).length;
  const known = state.entry?.kind === 'trained';
  $('try-status').textContent = L(`${n} 个 token，前向用时 ${ms} 毫秒。`, `${n} tokens, forward pass ${ms} ms.`)
    + (state.cut ? L(` 文字有 ${state.cut} 个 token，超出上下文长度：只用了前 ${n} 个。`, ` The text has ${state.cut} tokens, more than the context length: only the first ${n} are used.`) : '')
    + (split && known ? L(` 有 ${split} 个 token 只是某个字符的一部分（字节级 token）：内置的小模型只用英文训练过，中文等文字会被拆成字节，图表照常计算，但模型的预测没有意义。想看中文，请加载 Qwen3.5-0.8B 这样的真实模型。`,
      ` ${split} tokens are only part of a character (byte-level tokens): the bundled small models were trained on English only, so other scripts are split into bytes. The charts are computed as usual, but the model's predictions mean nothing here. Load a real model such as Qwen3.5-0.8B for Chinese.`) : '');
}
function renderDynamicText() {
  renderProgress();
  renderEngineStatus();
  renderLoadError();
  renderKoText();
  renderExFeedback();
  onSilu();
  drawBudget();
  if (state.models) { const v = $('model-select').value; listModelsLabels(); $('model-select').value = v; }
  if (state.run) { renderModelFacts(); renderBars(); renderLayerChart(); renderTryStatus(); }
  renderFeatureText();
  renderTopActsNote();
  renderLensTable();
  document.querySelectorAll('#quiz input:checked').forEach((el) => el.dispatchEvent(new Event('change', { bubbles: true })));
}
function listModelsLabels() {
  const sel = $('model-select');
  for (const o of sel.options) { const m = state.models.find((x) => x.id === o.value); o.textContent = m ? L(m.label[0], m.label[1]) : L('其它权重集（URL）…', 'another weight set (URL)…'); }
}
/** Whether a neuron-number input holds an integer in [0, intermediate_size); if not, says so in `msg`
 *  (the input is marked invalid) and returns false. A valid value clears a previous message. */
function checkNeuron(input, msg) {
  const I = state.info.config.intermediate_size, v = input.value.trim(), j = Number(v);
  const ok = v !== '' && Number.isInteger(j) && j >= 0 && j < I;
  input.setAttribute('aria-invalid', String(!ok));
  if (!ok) { msg.textContent = L(`神经元编号要在 0 到 ${I - 1} 之间（这一层有 ${I} 个神经元），“${v}”不行。`, `A neuron number must be between 0 and ${I - 1} (this layer has ${I} neurons); "${v}" is not.`); msg.dataset.invalid = '1'; }
  else if (msg.dataset.invalid) { msg.textContent = ''; delete msg.dataset.invalid; }
  return ok;
}
/** a token piece as a label: "北 (1/3)" for a share of a character split over tokens */
function pieceLabel(p) { return p.of ? `${p.text} (${p.part}/${p.of})` : p.text; }
/** a piece for a crowded axis: a split character once, on the token where it starts ("·" after) */
function pieceShort(p) { return p.part > 1 ? [...p.text].slice(1).join('') || '·' : p.text; }
/** one token on its own as text: a lone byte of a character as \xNN, never "�" */
async function tokText(id) { return (await state.model.tokenizer.pieces([id]))[0].text; }
function escapeHtml(s) { return String(s).replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' }[c])); }

// ---------------------------------------------------------------- the page's state in its URL
/** model, language, sentence, layer of the per-token chart and the neuron card's neuron: a view
 *  can be shared as a link (read once at start) */
function writeUrl() {
  if (!state.entry) return;
  const q = new URLSearchParams();
  q.set('model', state.entry.id === 'url' ? 'url' : state.entry.id);
  if (state.entry.id === 'url') q.set('url', state.entry.url);
  q.set('lang', state.lang);
  if (state.text !== DEFAULT_TEXT) q.set('text', state.text);
  q.set('layer', $('corr-layer').value);
  if (state.topActs) q.set('neuron', `${state.topActs.l}:${state.topActs.j}:${state.topActs.sign}`);
  history.replaceState(null, '', `${location.pathname}?${q}`);
}

// ---------------------------------------------------------------- start
async function start() {
  let lang = 'zh';
  try { lang = localStorage.getItem('mlpscope-lang') || 'zh'; } catch { /* ignore */ }
  const q = new URLSearchParams(location.search);
  if (q.get('lang') === 'en' || q.get('lang') === 'zh') lang = q.get('lang');
  setLang(lang);
  state.fromUrl = { layer: q.get('layer'), neuron: q.get('neuron') };
  if (q.get('text')) { state.text = q.get('text').slice(0, 4000); $('try-text').value = state.text; }
  drawNeurons(null);
  if ('serviceWorker' in navigator) navigator.serviceWorker.register('sw.js').catch(() => {});
  try { state.probes = (await (await fetch('probes.json')).json()).probes; } catch { state.probes = null; }
  const models = await listModels();
  const want = new URLSearchParams(location.search).get('model');
  const first = want === 'url' && q.get('url') ? { id: 'url', url: q.get('url'), label: [q.get('url'), q.get('url')], kind: 'unknown' } : models.find((m) => m.id === want) ?? models[0];
  if (first) {
    $('model-select').value = first.id;
    if (first.id === 'url') { $('url-box').hidden = false; $('model-url').value = first.url; }
    await load(first);
  }
}
start();
