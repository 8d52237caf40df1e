// <nav id="toc">: the contents rail (a teacher jumps to a section; the section in view is marked): built from the
// page's own sections and their bilingual headings, so it cannot drift from them.
import { $ } from '../core.js';

export function mount() {
  const nav = $('toc'), list = nav.querySelector('ol');
  const sections = [...document.querySelectorAll('main > section[id]')];
  list.innerHTML = '';
  for (const s of sections) {
    const h = s.querySelector('h1, h2');
    if (!h) continue;
    const li = document.createElement('li'), a = document.createElement('a');
    a.href = `#${s.id}`;
    a.dataset.section = s.id;
    // the heading's own language spans (the page shows one language at a time)
    for (const span of h.querySelectorAll('span[lang]')) a.append(span.cloneNode(true));
    if (!a.childNodes.length) a.textContent = h.textContent;
    li.append(a);
    list.append(li);
  }
  if (typeof IntersectionObserver === 'undefined') return;
  const links = new Map([...list.querySelectorAll('a')].map((a) => [a.dataset.section, a]));
  const visible = new Set();
  const mark = () => {
    const first = sections.find((s) => visible.has(s.id));
    for (const [id, a] of links) { if (first && id === first.id) a.setAttribute('aria-current', 'true'); else a.removeAttribute('aria-current'); }
    nav.dataset.current = first?.id ?? '';
  };
  const io = new IntersectionObserver((entries) => {
    for (const en of entries) { if (en.isIntersecting) visible.add(en.target.id); else visible.delete(en.target.id); }
    mark();
  }, { rootMargin: '-100px 0px -40% 0px' });
  for (const s of sections) io.observe(s);
}
