// The header: choosing and loading a weight set (in a Worker), its progress and its errors, the
// engine's path and speed, the language switch. A loaded model is announced on the bus ('model'),
// the reader's text runs ('run'), then 'settled' lets sections start longer work (the feature search).
import { loadModelInWorker, listCachedModels } from 'mlpscope';
import { $, emit, on, runText, setBi, setLang, setText, state, urlStart } from './core.js';

/** The lesson's own model, straight from its Hugging Face repository (converted while it streams
 * in, then kept converted in this browser's cache). `?hub=URL` points it at a mirror. */
export const HUB_MODEL = { id: 'hf-qwen3.5-0.8b', source: 'hf:Qwen/Qwen3.5-0.8B', kind: 'hf', dtype: 'q8', languages: ['zh', 'en'],
  label: { zh: 'Qwen3.5-0.8B（Hugging Face）', en: 'Qwen3.5-0.8B (Hugging Face)' }, downloadBytes: 1.6e9 };
const OTHER = { zh: '其它权重集（URL）…', en: 'another weight set (URL)…' };
/** the models the picker offers (models.json plus the hub model) */
let models = [];
/** the last load's progress, error, the hub entry asked about; the engine's speed */
const my = { progress: null, error: null, hubAsk: null, speed: null, computing: false };

export function mount() {
  $('lang-toggle').addEventListener('click', () => setLang(state.lang === 'zh' ? 'en' : 'zh'));
  on('lang', () => { renderLangToggle(); renderProgress(); });
  const sel = $('model-select');
  sel.onchange = async () => {
    $('url-box').hidden = sel.value !== 'url';
    $('hub-note').hidden = true;
    const m = models.find((x) => x.id === sel.value);
    if (m?.kind === 'hf') askHub(m);
    else if (sel.value !== 'url') load(m);
  };
  $('hub-go').onclick = () => { $('hub-note').hidden = true; load(my.hubAsk); };
  $('hub-cancel').onclick = () => {
    $('hub-note').hidden = true;
    if (state.entry) { sel.value = state.entry.id; $('url-box').hidden = state.entry.id !== 'url'; }
  };
  // a section asking for one of the site's models by id (geglu: the Gemma-3-shaped one)
  on('want-model', async (id) => {
    const m = models.find((x) => x.id === id);
    if (!m || state.entry?.id === id) return;
    sel.value = id;
    await load(m);
  });
  $('model-load').onclick = () => { const u = $('model-url').value.trim(); if (u) load({ id: 'url', url: u, label: { zh: u, en: u }, kind: 'unknown' }); };
}
function renderLangToggle() {
  $('lang-toggle').textContent = state.lang === 'zh' ? 'English' : '中文';
  setBi($('progress'), { zh: '加载进度', en: 'loading progress' }, 'aria-label');
}

/** The picker's entries: the site's models.json (with each weight set's manifest hash) and the hub model. */
export async function listModels() {
  try { models = (await (await fetch('models.json')).json()).models; } catch { models = []; /* offline and not cached */ }
  models = [...models, HUB_MODEL];
  const sel = $('model-select');
  sel.innerHTML = '';
  for (const m of [...models, { id: 'url', label: OTHER }]) {
    const o = document.createElement('option');
    o.value = m.id;
    setBi(o, m.label);
    sel.append(o);
  }
  renderLangToggle();
  return models;
}

/** Where the hub model would come from: `?hub=` (a mirror), else the public hub. */
export const hubUrl = () => urlStart.get('hub') || undefined;

/** Whether this browser already holds the converted copy of a hub entry. */
async function hubCached(m) {
  const hub = (hubUrl() ?? 'https://huggingface.co').replace(/\/+$/, '');
  const folder = `${hub}/${m.source.slice(3)}/resolve/main/mlpscope-q8_0/`;
  try { return (await listCachedModels()).find((c) => c.url === folder) ?? null; } catch { return null; }
}

/** Before a first download of the hub model: what it costs, and a button to start. */
export async function askHub(m) {
  my.hubAsk = m;
  if (await hubCached(m)) { load(m); return; } // converted before: loads from the cache, offline too
  const gb = (m.downloadBytes / 1e9).toFixed(1);
  setText($('hub-note-text'), {
    zh: `第一次加载要从 Hugging Face 下载约 ${gb} GB（BF16 权重），边下载边在浏览器里转换成 q8；之后再访问直接用本浏览器缓存里转换好的副本（约 0.9 GB，离线也行）。需要约 1.2 GB 内存。`,
    en: `The first load downloads about ${gb} GB from Hugging Face (BF16 weights), converted to q8 in your browser as it arrives; later visits use the converted copy in this browser's cache (about 0.9 GB, offline too). Needs about 1.2 GB of memory.` });
  $('hub-note').hidden = false;
  $('hub-go').focus();
}

/** the download line under the model picker */
function renderProgress() {
  const p = my.progress;
  if (!p) { $('progress-text').textContent = ''; return; }
  const mb = (n) => (n / 1048576).toFixed(1);
  const what = { download: p.converting ? { zh: '下载并转换 ', en: 'downloading and converting ' } : { zh: '', en: '' }, convert: { zh: '转换 ', en: 'converting ' }, prepare: { zh: '准备 ', en: 'preparing ' } }[p.phase ?? 'download'] ?? { zh: '', en: '' };
  const line = `${mb(p.loaded)} / ${mb(p.total)} MB · ${(p.loaded / 1048576 / Math.max(p.seconds, 0.001)).toFixed(1)} MB/s`;
  setText($('progress-text'), { zh: what.zh + line + (p.fromCache ? ' · 来自缓存' : '') + (p.done == null ? '' : ` · 用时 ${p.done.toFixed(1)} 秒`),
    en: what.en + line + (p.fromCache ? ' · from cache' : '') + (p.done == null ? '' : ` · ${p.done.toFixed(1)} s`) });
}

/** the load error line (the engine's message itself is English) */
function renderLoadError() {
  const e = my.error;
  if (!e) { $('load-error').textContent = ''; return; }
  const label = (m) => (m.kind === 'unknown' ? { zh: m.url, en: m.url } : m.label);
  const msg = String(e.message).replace(/^E_[A-Z_]+: /, '').replace(/\.$/, '');
  setText($('load-error'), {
    zh: `加载 ${label(e.entry).zh} 失败（${e.code ?? 'error'}）：${msg}` + (e.back ? `。已换回 ${label(e.back).zh}。` : ''),
    en: `Loading ${label(e.entry).en} failed (${e.code ?? 'error'}): ${msg}` + (e.back ? `. Back to ${label(e.back).en}.` : '') });
}

/** Which path the engine runs (activations, threads) and the speed of the last forward pass. */
function renderEngineStatus() {
  const b = state.info?.build, el = $('engine-status');
  if (!b) { el.textContent = ''; return; }
  const act = { int8: { zh: 'int8 激活', en: 'int8 activations' }, exact: { zh: '精确激活', en: 'exact activations' }, plain: { zh: 'f32 激活', en: 'f32 activations' }, f32: { zh: 'f32 激活', en: 'f32 activations' } }[b.activations] ?? { zh: b.activations, en: b.activations };
  const threads = b.threads > 1 ? { zh: `${b.threads} 线程`, en: `${b.threads} threads` } : { zh: '单线程', en: '1 thread' };
  const sp = my.speed, tps = sp ? (sp.tokens / Math.max(sp.ms, 1e-3) * 1000).toFixed(0) : '';
  const speed = my.computing ? { zh: '计算中…', en: 'computing…' } : sp ? { zh: `上次：${sp.tokens} 个 token，${tps} token/秒`, en: `last pass: ${sp.tokens} tokens, ${tps} tokens/s` } : null;
  setText(el, { zh: `${act.zh} · ${threads.zh}${speed ? ' · ' + speed.zh : ''}`, en: `${act.en} · ${threads.en}${speed ? ' · ' + speed.en : ''}` });
  el.title = b.why;
  // the footer: which build runs (the engine's own reason string is English diagnostics: the Chinese
  // view summarises it, the tooltip keeps it whole)
  const notIsolated = b.threads <= 1 && /cross-origin isolated/.test(b.why)
    ? { zh: '：页面没有跨源隔离（服务器不发 COOP/COEP 头，service worker 也没能补上），所以只能用一个线程', en: ' (the server sends no COOP/COEP headers and the service worker could not add them)' } : { zh: '', en: '' };
  const relaxed = b.relaxedSimd?.used ? { zh: `，q8 预填充和 q4 计算用 relaxed SIMD（${b.relaxedSimd.isa}）`, en: '' } : { zh: '', en: '' };
  setText($('build-info'), { zh: `· ${b.threads > 1 ? `多线程版本，${b.threads} 个线程` : '单线程版本'}${b.simd ? '（SIMD128）' : ''}${relaxed.zh}${notIsolated.zh}`, en: `· ${b.why}${notIsolated.en}` });
  $('build-info').title = b.why;
}

/** Loads a weight set in a Worker, announces it, runs the reader's text on it; a failure goes back
 *  to the model the page had (its memory was freed for the new one), so the page stays live. */
export async function load(entry, { keepError = false } = {}) {
  const t0 = performance.now();
  if (!keepError) { my.error = null; renderLoadError(); }
  const prev = state.entry;
  $('progress').value = 0;
  my.progress = null;
  renderProgress();
  delete document.body.dataset.ready; // set again when this model has run and its features are found
  const old = state.model;
  state.model = null;
  await emit('unload'); // nothing of the previous model stays on screen with working buttons meanwhile
  try {
    await old?.dispose();
    const hub = entry.kind === 'hf';
    const model = await loadModelInWorker(hub ? entry.source : new URL(entry.url, location.href), {
      maxContext: 512,
      ...(hub ? { hubUrl: hubUrl(), dtype: entry.dtype } : { manifestSha256: entry.manifestSha256 }),
      onProgress: ({ phase, loaded, total, fromCache }) => {
        if (phase === 'prepare') return;
        $('progress').value = total ? loaded / total : 0;
        my.progress = { phase, converting: hub && !fromCache, loaded, total, fromCache, seconds: (performance.now() - t0) / 1000, done: null };
        renderProgress();
      },
    });
    // every forward pass the page runs reports its speed beside the path that runs it
    const forward = model.forward.bind(model);
    model.forward = async (ids, opts) => {
      my.computing = true; renderEngineStatus();
      try {
        const r = await forward(ids, opts);
        my.speed = { tokens: ids.length, ms: r.timings.total_ms };
        return r;
      } finally { my.computing = false; renderEngineStatus(); }
    };
    state.model = model;
    state.entry = entry;
    my.speed = null;
    state.info = await model.info();
    if (my.progress) { my.progress.done = (performance.now() - t0) / 1000; renderProgress(); }
    renderEngineStatus();
    document.body.dataset.model = entry.id;
    await emit('model', entry);
    const r = await runText(state.text);
    if (!r.ok) await emit('run-refused', r.why);
    await emit('settled');
    document.body.dataset.ready = '1';
  } catch (err) {
    const back = prev && prev !== entry && !keepError ? prev : null;
    my.error = { entry, code: err.code, message: err.message, back };
    renderLoadError();
    document.body.dataset.loadFailed = entry.id;
    if (back) {
      if ([...$('model-select').options].some((o) => o.value === back.id)) { $('model-select').value = back.id; $('url-box').hidden = back.id !== 'url'; }
      await load(back, { keepError: true });
    } else document.body.dataset.ready = 'error';
  }
}
