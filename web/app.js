// The lesson page: a live model (in a Web Worker) behind every chart. Plain ES modules, no
// framework: shared state in core.js, one module per section in sections/, this file wires them
// together (language, the URL, start-up).
import { $, DEFAULT_TEXTS, L, state, writeUrl } from './core.js';
import { renderKoText } from './sections/knockout.js';
import { renderLensTable } from './sections/lens.js';
import { listModels, load, askHub, renderLoadError, renderProgress, renderHubNote } from './sections/models.js';
import { bilingual, drawHistogram, renderFeatureCards, renderFeatureText, renderFiresReadout, renderTopActsNote } from './sections/neurons.js';
import { renderBars, renderEngineStatus, renderLayerChart, renderModelFacts } from './sections/run.js';
import { renderExFeedback, renderTryStatus } from './sections/tryit.js';
import { drawAttention } from './sections/mixing.js';
import { buildContents } from './sections/toc.js';
import { fillSteerOptions, renderSteerNote } from './sections/steer.js';
import { drawBudget, drawNeurons, onSilu } from './sections/widgets.js';

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
$('lang-toggle').addEventListener('click', () => setLang(state.lang === 'zh' ? 'en' : 'zh'));

function renderDynamicText() {
  renderProgress();
  renderHubNote();
  renderEngineStatus();
  renderLoadError();
  renderKoText();
  renderExFeedback();
  drawAttention();
  if (state.model) fillSteerOptions();
  renderSteerNote();
  onSilu();
  drawBudget();
  if (state.models) { const v = $('model-select').value; listModelsLabels(); $('model-select').value = v; }
  if (state.run) { renderModelFacts(); renderBars(); renderLayerChart(); renderTryStatus(); }
  // a bilingual model's cards follow the page language's neurons: drawn again; else only words
  if (bilingual()) renderFeatureCards(); else renderFeatureText();
  renderTopActsNote();
  drawHistogram();
  renderFiresReadout();
  renderLensTable();
  document.querySelectorAll('#quiz input:checked').forEach((el) => el.dispatchEvent(new Event('change', { bubbles: true })));
}
function listModelsLabels() {
  const sel = $('model-select');
  for (const o of sel.options) { const m = state.models.find((x) => x.id === o.value); o.textContent = m ? L(m.label[0], m.label[1]) : L('其它权重集（URL）…', 'another weight set (URL)…'); }
}
/** Whether a neuron-number input holds an integer in [0, intermediate_size); if not, says so in `msg`
 *  (the input is marked invalid) and returns false. A valid value clears a previous message. */

// ---------------------------------------------------------------- start
async function start() {
  let lang = 'zh';
  try { lang = localStorage.getItem('mlpscope-lang') || 'zh'; } catch { /* ignore */ }
  const q = new URLSearchParams(location.search);
  if (q.get('lang') === 'en' || q.get('lang') === 'zh') lang = q.get('lang');
  setLang(lang);
  // the example sentence in the language the page opens in (the demo model knows both)
  state.defaultText = state.text = DEFAULT_TEXTS[lang];
  $('try-text').value = $('fires-text').value = state.text;
  state.fromUrl = { layer: q.get('layer'), neuron: q.get('neuron') };
  if (q.get('text')) { state.text = q.get('text').slice(0, 4000); $('try-text').value = state.text; }
  drawNeurons(null);
  buildContents();
  if ('serviceWorker' in navigator) navigator.serviceWorker.register('sw.js').catch(() => {});
  try { state.probes = (await (await fetch('probes.json')).json()).probes; } catch { state.probes = null; }
  const models = await listModels();
  const want = new URLSearchParams(location.search).get('model');
  const first = want === 'url' && q.get('url') ? { id: 'url', url: q.get('url'), label: [q.get('url'), q.get('url')], kind: 'unknown' } : models.find((m) => m.id === want) ?? models[0];
  if (first?.kind === 'hf') {
    // a link to the hub model never starts a large download by itself: the default model first,
    // then the note with the download size (or the cached copy, straight away)
    $('model-select').value = models[0].id;
    await load(models[0]);
    $('model-select').value = first.id;
    await askHub(first);
  } else if (first) {
    $('model-select').value = first.id;
    if (first.id === 'url') { $('url-box').hidden = false; $('model-url').value = first.url; }
    await load(first);
  }
}
start();
