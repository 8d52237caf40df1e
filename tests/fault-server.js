// A loopback HTTP server for weight sets that injects faults on demand: status codes, cut
// connections, flipped bytes, wrong lengths, slow bodies, servers that ignore Range. Used by the
// loader tests (and the randomized fault-injection runs).
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';

/**
 * @param {string} dir folder to serve
 * @returns {Promise<{url: string, faults: object[], log: object[], close(): Promise<void>}>}
 *   faults: queue of {file, kind, times?, at?}; kind: 404 | 500 | 'cut' | 'flip' | 'long' | 'short' | 'slow' | 'norange' | 'hang'
 */
export async function startServer(dir) {
  const faults = [];
  const log = [];
  const sockets = new Set();
  const server = http.createServer((req, res) => {
    const file = decodeURIComponent(new URL(req.url, 'http://x').pathname.slice(1));
    const full = path.join(dir, path.basename(file));
    log.push({ file, range: req.headers.range ?? null });
    const fi = faults.findIndex((f) => f.file === file || f.file === '*');
    const fault = fi >= 0 ? faults[fi] : null;
    if (fault && --fault.times <= 0) faults.splice(fi, 1);
    if (fault && typeof fault.kind === 'number') { res.writeHead(fault.kind); res.end('fault'); return; }
    if (!fs.existsSync(full)) { res.writeHead(404); res.end(); return; }
    let data = fs.readFileSync(full);
    let start = 0;
    const m = /bytes=(\d+)-/.exec(req.headers.range ?? '');
    const useRange = m && !(fault?.kind === 'norange');
    if (useRange) start = Number(m[1]);
    let body = data.subarray(start);
    const at = Math.floor((fault?.at ?? 0.5) * body.length);
    const headers = { 'content-type': 'application/octet-stream', 'accept-ranges': 'bytes' };
    if (fault?.kind === 'flip') { body = Buffer.from(body); body[at] ^= 0x40; }
    if (fault?.kind === 'long') body = Buffer.concat([body, Buffer.from('extra bytes')]);
    if (fault?.kind === 'short') body = body.subarray(0, at); // honest length, too few bytes
    if (useRange) { headers['content-range'] = `bytes ${start}-${data.length - 1}/${data.length}`; }
    if (fault?.kind !== 'cut') headers['content-length'] = body.length;
    else headers['content-length'] = body.length; // promises all, then the connection dies at `at`
    res.writeHead(useRange ? 206 : 200, headers);
    if (fault?.kind === 'cut') { res.write(body.subarray(0, at), () => res.socket.destroy()); return; }
    if (fault?.kind === 'hang') { res.write(body.subarray(0, at)); return; }
    if (fault?.kind === 'slow') {
      let p = 0;
      const step = Math.max(1, Math.ceil(body.length / 8));
      const tick = () => { if (p >= body.length) { res.end(); return; } res.write(body.subarray(p, p + step)); p += step; setTimeout(tick, 15); };
      tick();
      return;
    }
    res.end(body);
  });
  server.on('connection', (s) => { sockets.add(s); s.on('close', () => sockets.delete(s)); });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}/`,
    faults,
    log,
    close: () => new Promise((r) => { for (const s of sockets) s.destroy(); server.close(r); }),
  };
}
