#!/usr/bin/env node
// A small static server for the page, the package and weight sets: correct MIME types (wasm,
// ES modules), HTTP Range, and the COOP/COEP headers that make the page cross-origin isolated
// (SharedArrayBuffer, threads).
//   node tools/serve.mjs [--port 8080] [--root DIR] [--mount /url-prefix=DIR ...] [--plain]
// --plain: no COOP/COEP/CORP headers, as a plain static host (GitHub Pages, python3 -m http.server)
// serves; the page's service worker (web/sw.js) then adds them itself after one reload.
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const TYPES = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8', '.json': 'application/json; charset=utf-8', '.wasm': 'application/wasm', '.svg': 'image/svg+xml',
  '.png': 'image/png', '.txt': 'text/plain; charset=utf-8', '.webmanifest': 'application/manifest+json', '.map': 'application/json' };

/** the headers that make a page cross-origin isolated (left out with `plain`) */
const ISOLATION = { 'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp', 'Cross-Origin-Resource-Policy': 'same-origin' };

/**
 * @param {{root: string, mounts?: Record<string, string>, port?: number, host?: string, log?: boolean, plain?: boolean}} o
 * @returns {Promise<{url: string, server: http.Server, close(): Promise<void>}>}
 */
export async function serve({ root, mounts = {}, port = 0, host = '127.0.0.1', log = false, plain = false }) {
  const sockets = new Set();
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://x');
    let rel = decodeURIComponent(url.pathname);
    let base = root;
    for (const [prefix, dir] of Object.entries(mounts)) if (rel.startsWith(prefix + '/')) { base = dir; rel = rel.slice(prefix.length); break; }
    const file = path.join(base, path.normalize(rel).replace(/^(\.\.[/\\])+/, ''));
    if (!file.startsWith(path.resolve(base))) { res.writeHead(403); res.end(); return; }
    let target = file;
    try { if (fs.statSync(target).isDirectory()) target = path.join(target, 'index.html'); } catch { /* 404 below */ }
    const headers = { ...(plain ? {} : ISOLATION), 'Accept-Ranges': 'bytes', 'Cache-Control': 'no-cache' };
    let st;
    try { st = fs.statSync(target); } catch { res.writeHead(404, headers); res.end('not found'); if (log) console.log(404, req.url); return; }
    headers['Content-Type'] = TYPES[path.extname(target)] ?? 'application/octet-stream';
    const m = /bytes=(\d+)-(\d*)/.exec(req.headers.range ?? '');
    if (m) {
      const start = Number(m[1]), end = m[2] ? Math.min(Number(m[2]), st.size - 1) : st.size - 1;
      if (start >= st.size) { res.writeHead(416, { ...headers, 'Content-Range': `bytes */${st.size}` }); res.end(); return; }
      res.writeHead(206, { ...headers, 'Content-Range': `bytes ${start}-${end}/${st.size}`, 'Content-Length': end - start + 1 });
      fs.createReadStream(target, { start, end }).pipe(res);
    } else {
      res.writeHead(200, { ...headers, 'Content-Length': st.size });
      if (req.method === 'HEAD') res.end(); else fs.createReadStream(target).pipe(res);
    }
    if (log) console.log(m ? 206 : 200, req.url);
  });
  server.on('connection', (s) => { sockets.add(s); s.on('close', () => sockets.delete(s)); });
  await new Promise((r) => server.listen(port, host, r));
  return { url: `http://${host}:${server.address().port}/`, server,
    close: () => new Promise((r) => { for (const s of sockets) s.destroy(); server.close(r); }) };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const opt = (k, d) => { const i = args.indexOf(k); return i >= 0 ? args[i + 1] : d; };
  const mounts = {};
  args.forEach((a, i) => { if (a === '--mount') { const [p, d] = args[i + 1].split('='); mounts[p] = path.resolve(d); } });
  const root = path.resolve(opt('--root', path.join(path.dirname(fileURLToPath(import.meta.url)), '..')));
  const port = Number(opt('--port', 8080)), host = opt('--host', '127.0.0.1');
  let s;
  try {
    s = await serve({ root, mounts, port, host, log: args.includes('--log'), plain: args.includes('--plain') });
  } catch (e) {
    if (e.code !== 'EADDRINUSE') throw e;
    console.error(`serve: port ${port} on ${host} is in use; choose another one, e.g. PORT=${port + 1} npm start (or --port ${port + 1})`);
    process.exit(1);
  }
  console.log(`serving ${root} at ${s.url}\nopen ${s.url} in a browser (Ctrl+C stops the server)`);
}
