// Service worker: keeps the page's own files (HTML, JS, CSS, wasm, model list, probes) for offline
// use. Network first, cache as fallback, so a deployed update is picked up when online. Weight
// files are not handled here: the loader keeps verified shards in the Cache API itself.
const CACHE = 'mlpscope-site-v2';
const SHELL = ['./', 'index.html', 'app.js', 'style.css', 'models.json', 'probes.json', 'js/index.js', 'js/loader.js', 'js/source.js',
  'js/wasm.js', 'js/model.js', 'js/tokenizer.js', 'js/hooks.js', 'js/errors.js', 'js/worker.js', 'js/worker-client.js', 'js/features.js',
  'js/threads.js', 'js/thread-worker.js', 'build/wasm/mlpscope.wasm', 'build/wasm/mlpscope-mt.wasm'];

self.addEventListener('install', (ev) => {
  ev.waitUntil(caches.open(CACHE).then((c) => c.addAll(SHELL)).then(() => self.skipWaiting()));
});
self.addEventListener('activate', (ev) => ev.waitUntil(self.clients.claim()));
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
