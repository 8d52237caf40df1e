// Service worker: keeps the page's own files (HTML, JS, CSS, wasm, model list, probes) for offline
// use. Network first, cache as fallback, so a deployed update is picked up when online. Weight
// files are not handled here: the loader keeps verified shards in the Cache API itself.
const CACHE = 'mlpscope-site-v3';
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
      return r;
    } catch (err) {
      const hit = await cache.match(ev.request, { ignoreSearch: true });
      if (hit) return hit;
      throw err;
    }
  })());
});
