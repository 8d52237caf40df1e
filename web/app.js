// The lesson page: a live model (in a Web Worker) behind every chart. Plain ES modules, no
// framework. web/core.js holds what the sections share (state, the bus, strings in two languages,
// cards that say when they failed); each section of the page is one module named after its
// <section id> that mounts itself and subscribes to what it needs; the header loads models.
// Adding a section: its <section> in index.html, its module in sections/, one line below.
import { $, DEFAULT_TEXTS, setLang, state, urlStart } from './core.js';
import * as header from './header.js';
import * as deeper from './widgets/deeper.js';
import * as toc from './sections/toc.js';
import * as intro from './sections/intro.js';
import * as perToken from './sections/per-token.js';
import * as gated from './sections/gated.js';
import * as neurons from './sections/neurons.js';
import * as siluSection from './sections/silu.js';
import * as geglu from './sections/geglu.js';
import * as budget from './sections/budget.js';
import * as fires from './sections/fires.js';
import * as transcoderRoom from './sections/transcoder.js';
import * as story from './sections/story.js';
import * as correction from './sections/correction.js';
import * as tryIt from './sections/try.js';
import * as takeaways from './sections/takeaways.js';

for (const s of [header, deeper, toc, intro, perToken, gated, neurons, siluSection, geglu, budget, fires, transcoderRoom, story, correction, tryIt, takeaways]) s.mount();

async function start() {
  let lang = 'zh';
  try { lang = localStorage.getItem('mlpscope-lang') || 'zh'; } catch { /* ignore */ }
  const q = urlStart;
  if (q.get('lang') === 'en' || q.get('lang') === 'zh') lang = q.get('lang');
  // the example sentence in the language the page opens in (the demo model knows both)
  state.defaultText = state.text = DEFAULT_TEXTS[lang];
  if (q.get('text')) state.text = q.get('text').slice(0, 4000);
  $('try-text').value = state.text;
  $('fires-text').value = DEFAULT_TEXTS[lang];
  await setLang(lang);
  if (await isolateOnce()) return; // the page reloads, cross-origin isolated
  try { state.probes = (await (await fetch('probes.json')).json()).probes; } catch { state.probes = null; }
  const models = await header.listModels();
  const want = q.get('model');
  const first = want === 'url' && q.get('url') ? { id: 'url', url: q.get('url'), label: { zh: q.get('url'), en: q.get('url') }, kind: 'unknown' } : models.find((m) => m.id === want) ?? models[0];
  if (first?.kind === 'hf') {
    // a link to the hub model never starts a large download by itself: the default model first,
    // then the note with the download size (or the cached copy, straight away)
    $('model-select').value = models[0].id;
    await header.load(models[0]);
    $('model-select').value = first.id;
    await header.askHub(first);
  } else if (first) {
    $('model-select').value = first.id;
    if (first.id === 'url') { $('url-box').hidden = false; $('model-url').value = first.url; }
    await header.load(first);
  }
}
/** On a host that sends no COOP/COEP headers the service worker (sw.js) adds them to the page's own
 *  responses; once it controls the page, one reload makes the page cross-origin isolated, so the
 *  threaded engine can run. Returns true when the page is about to reload. At most once per tab
 *  session: a browser that will not isolate the page (or keeps service workers off) runs it on one
 *  thread, and the footer says why. */
async function isolateOnce() {
  if (!('serviceWorker' in navigator)) return false;
  const reg = navigator.serviceWorker.register('sw.js').catch(() => null);
  if (globalThis.crossOriginIsolated || !globalThis.isSecureContext) return false;
  let tried = true;
  try { tried = sessionStorage.getItem('mlpscope-isolation-reload') === '1'; } catch { /* storage off: never reload */ }
  if (tried || !(await reg)) return false;
  const controlled = navigator.serviceWorker.controller ? true : await new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), 10000); // a worker that never takes over: go on
    navigator.serviceWorker.addEventListener('controllerchange', () => { clearTimeout(timer); resolve(true); }, { once: true });
  });
  if (!controlled) return false;
  sessionStorage.setItem('mlpscope-isolation-reload', '1');
  location.reload();
  return true;
}

start();
