// Choosing and loading a weight set (in a Worker), its progress and its errors.
import { loadModelInWorker, listCachedModels } from 'mlpscope';
import { $, L, state } from '../core.js';
import { findFeatures } from './neurons.js';
import { renderEngineStatus, runText } from './run.js';

// ---------------------------------------------------------------- models
/** The lesson's own model, straight from its Hugging Face repository (converted while it streams
 * in, then kept converted in this browser's cache). `?hub=URL` points it at a mirror. */
export const HUB_MODEL = { id: 'hf-qwen3.5-0.8b', source: 'hf:Qwen/Qwen3.5-0.8B', kind: 'hf', dtype: 'q8', languages: ['zh', 'en'],
  label: ['Qwen3.5-0.8B（Hugging Face）', 'Qwen3.5-0.8B (Hugging Face)'], downloadBytes: 1.6e9 };

export async function listModels() {
  let models = [];
  try { models = (await (await fetch('models.json')).json()).models; } catch { /* offline and not cached */ }
  models = [...models, HUB_MODEL];
  const sel = $('model-select');
  sel.innerHTML = models.map((m) => `<option value="${m.id}">${L(m.label[0], m.label[1])}</option>`).join('') + `<option value="url">${L('其它权重集（URL）…', 'another weight set (URL)…')}</option>`;
  state.models = models;
  sel.onchange = async () => {
    $('url-box').hidden = sel.value !== 'url';
    $('hub-note').hidden = true;
    const m = models.find((x) => x.id === sel.value);
    if (m?.kind === 'hf') askHub(m);
    else if (sel.value !== 'url') load(m);
  };
  $('hub-go').onclick = () => { $('hub-note').hidden = true; load(state.hubAsk); };
  $('hub-cancel').onclick = () => {
    $('hub-note').hidden = true;
    if (state.entry) { $('model-select').value = state.entry.id; $('url-box').hidden = state.entry.id !== 'url'; }
  };
  $('model-load').onclick = () => { const u = $('model-url').value.trim(); if (u) load({ id: 'url', url: u, label: [u, u], kind: 'unknown' }); };
  return models;
}

/** Where the hub model would come from: `?hub=` (a mirror), else the public hub. */
export const hubUrl = () => new URLSearchParams(location.search).get('hub') || undefined;

/** Whether this browser already holds the converted copy of a hub entry. */
async function hubCached(m) {
  const hub = (hubUrl() ?? 'https://huggingface.co').replace(/\/+$/, '');
  const folder = `${hub}/${m.source.slice(3)}/resolve/main/mlpscope-q8_0/`;
  try { return (await listCachedModels()).find((c) => c.url === folder) ?? null; } catch { return null; }
}

/** Before a first download of the hub model: what it costs, and a button to start. */
export async function askHub(m) {
  state.hubAsk = m;
  const cached = await hubCached(m);
  if (cached) { load(m); return; } // converted before: loads from the cache, offline too
  renderHubNote();
  $('hub-note').hidden = false;
  $('hub-go').focus();
}

export function renderHubNote() {
  const m = state.hubAsk;
  if (!m) return;
  const gb = (m.downloadBytes / 1e9).toFixed(1);
  $('hub-note-text').textContent = L(
    `第一次加载要从 Hugging Face 下载约 ${gb} GB（BF16 权重），边下载边在浏览器里转换成 q8；之后再访问直接用本浏览器缓存里转换好的副本（约 0.9 GB，离线也行）。需要约 1.2 GB 内存。`,
    `The first load downloads about ${gb} GB from Hugging Face (BF16 weights), converted to q8 in your browser as it arrives; later visits use the converted copy in this browser's cache (about 0.9 GB, offline too). Needs about 1.2 GB of memory.`);
}

/** the download line under the model picker, in the active language (re-rendered on a switch) */
export function renderProgress() {
  const p = state.progress;
  if (!p) return;
  const mb = (n) => (n / 1048576).toFixed(1);
  const what = { download: p.converting ? L('下载并转换 ', 'downloading and converting ') : '', convert: L('转换 ', 'converting '), prepare: L('准备 ', 'preparing ') }[p.phase ?? 'download'] ?? '';
  $('progress-text').textContent = what + `${mb(p.loaded)} / ${mb(p.total)} MB · ${(p.loaded / 1048576 / Math.max(p.seconds, 0.001)).toFixed(1)} MB/s` +
    (p.fromCache ? L(' · 来自缓存', ' · from cache') : '') + (p.done == null ? '' : L(` · 用时 ${p.done.toFixed(1)} 秒`, ` · ${p.done.toFixed(1)} s`));
}

/** the load error line, in the active language (the engine's message itself is English) */
export function renderLoadError() {
  const e = state.loadError;
  const label = (m) => (m.kind === 'unknown' ? m.url : L(m.label[0], m.label[1]));
  const msg = e ? String(e.message).replace(/^E_[A-Z_]+: /, '').replace(/\.$/, '') : '';
  $('load-error').textContent = !e ? '' : L(`加载 ${label(e.entry)} 失败（${e.code ?? 'error'}）：${msg}`, `Loading ${label(e.entry)} failed (${e.code ?? 'error'}): ${msg}`) +
    (e.back ? L(`。已换回 ${label(e.back)}。`, `. Back to ${label(e.back)}.`) : '');
}

export async function load(entry, { keepError = false } = {}) {
  const t0 = performance.now();
  if (!keepError) { state.loadError = null; renderLoadError(); }
  const prev = state.entry;
  $('progress').value = 0;
  state.progress = null;
  delete document.body.dataset.ready; // set again when this model has run and its features are found
  // nothing of the previous model stays on screen with working buttons while this one loads
  state.features = null;
  state.steer = null;
  state.walk = null;
  $('steer-btn').disabled = true;
  $('features').innerHTML = '';
  $('features-note').textContent = L('正在加载模型…', 'loading the model…');
  for (const id of ['fires-top', 'fires-up', 'fires-down', 'fires-out', 'fires-neighbours']) $(id).innerHTML = '';
  const old = state.model;
  state.model = null;
  try {
    await old?.dispose();
    const hub = entry.kind === 'hf';
    const model = await loadModelInWorker(hub ? entry.source : new URL(entry.url, location.href), {
      maxContext: 512,
      ...(hub ? { hubUrl: hubUrl(), dtype: entry.dtype } : { manifestSha256: entry.manifestSha256 }),
      onProgress: ({ phase, loaded, total, fromCache }) => {
        if (phase === 'prepare') return;
        $('progress').value = total ? loaded / total : 0;
        state.progress = { phase, converting: hub && !fromCache, loaded, total, fromCache, seconds: (performance.now() - t0) / 1000, done: null };
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
