// Service worker: keeps the page's own files (HTML, JS, CSS, wasm, model list, probes) for offline
// use. Network first, cache as fallback, so a deployed update is picked up when online. Weight
// files are not handled here: the loader keeps verified shards in the Cache API itself.
// It also makes the page cross-origin isolated on any static host: the page's own responses get
// the COOP/COEP/CORP headers a plain server (GitHub Pages, python3 -m http.server) does not send,
// so after one reload (web/app.js) SharedArrayBuffer and the threaded engine are there.
const CACHE = 'mlpscope-site-v4';
const ISOLATION = { 'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp', 'Cross-Origin-Resource-Policy': 'same-origin' };

/** the response with the isolation headers it lacks (an opaque or error response as it is) */
function isolated(r) {
  if (!r || r.type === 'opaque' || r.type === 'opaqueredirect' || r.status === 0) return r;
  if (Object.keys(ISOLATION).every((k) => r.headers.has(k))) return r;
  const headers = new Headers(r.headers);
  for (const [k, v] of Object.entries(ISOLATION)) if (!headers.has(k)) headers.set(k, v);
  return new Response(r.body, { status: r.status, statusText: r.statusText, headers });
}
// every file of the site but the weights and this one: the list is written by tools/build-site.mjs
const SHELL = ['./'];

self.addEventListener('install', (ev) => {
  ev.waitUntil(caches.open(CACHE).then((c) => c.addAll(SHELL)).then(() => self.skipWaiting()));
});
self.addEventListener('activate', (ev) => ev.waitUntil((async () => {
  // an older version's files go (the weights' own cache is the loader's, not touched here)
  for (const k of await caches.keys()) if (k.startsWith('mlpscope-site-') && k !== CACHE) await caches.delete(k);
  await self.clients.claim();
})()));
self.addEventListener('fetch', (ev) => {
  const url = new URL(ev.request.url);
  if (ev.request.method !== 'GET' || url.origin !== location.origin || url.pathname.includes('/weights/')) return;
  ev.respondWith((async () => {
    const cache = await caches.open(CACHE);
    try {
      const r = await fetch(ev.request);
      if (r.ok) await cache.put(ev.request, r.clone());
      return isolated(r);
    } catch (err) {
      const hit = await cache.match(ev.request, { ignoreSearch: true });
      if (hit) return isolated(hit);
      throw err;
    }
  })());
});
