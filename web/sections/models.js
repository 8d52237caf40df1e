// Choosing and loading a weight set (in a Worker), its progress and its errors.
import { loadModelInWorker } from 'mlpscope';
import { $, L, state } from '../core.js';
import { findFeatures } from './neurons.js';
import { renderEngineStatus, runText } from './run.js';

// ---------------------------------------------------------------- models
export async function listModels() {
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
export function renderProgress() {
  const p = state.progress;
  if (!p) return;
  const mb = (n) => (n / 1048576).toFixed(1);
  $('progress-text').textContent = `${mb(p.loaded)} / ${mb(p.total)} MB · ${(p.loaded / 1048576 / Math.max(p.seconds, 0.001)).toFixed(1)} MB/s` +
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
