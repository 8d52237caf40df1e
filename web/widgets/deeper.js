// "Go deeper" panels: the advanced cards (<details class="deeper" id="deeper-…">) fold out of the
// main path and open in place. Which ones are open is part of the page's URL (?open=attn,lens), so
// a shared link opens the same panels; a link to something inside a closed panel opens it.
import { urlKey, urlStart, writeUrl } from '../core.js';

const panels = () => [...document.querySelectorAll('details.deeper[id^="deeper-"]')];
const short = (d) => d.id.slice('deeper-'.length);

export function mount() {
  const want = new Set((urlStart.get('open') ?? '').split(',').filter(Boolean));
  for (const d of panels()) {
    if (want.has(short(d)) || want.has('all')) d.open = true;
    d.addEventListener('toggle', () => writeUrl());
  }
  urlKey('open', () => panels().filter((d) => d.open).map(short).join(','));
  // a link into a closed panel (a glossary term, a contents entry) opens it first
  const reveal = (hash) => {
    const el = hash.length > 1 ? document.getElementById(decodeURIComponent(hash.slice(1))) : null;
    const d = el?.closest('details');
    if (d && !d.open) d.open = true;
  };
  document.addEventListener('click', (ev) => { const a = ev.target.closest?.('a[href^="#"]'); if (a) reveal(a.getAttribute('href')); });
  window.addEventListener('hashchange', () => reveal(location.hash));
  if (location.hash) reveal(location.hash);
}
