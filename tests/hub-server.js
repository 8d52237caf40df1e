// A loopback server that answers like a Hugging Face hub for the tests: the model API
// (/api/models/<repo>/revision/<rev>?blobs=true: commit and file list with sizes and LFS sha256)
// and /<repo>/resolve/<rev>/<file> with HTTP Range (206 + Content-Range, the end clamped to the
// file), ETag, X-Repo-Commit and CORS for pages on another origin. Every request is logged with
// its byte range, so a test can prove which bytes were (not) asked for; faults are injected on
// demand. Also serves a repository folder as a plain static folder under /plain/<repo>/.
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';

const sha = (b, alg = 'sha256') => crypto.createHash(alg).update(b).digest('hex');

/**
 * @param {Record<string, string>} repos repo id ("owner/name") -> folder of its files
 * @param {{port?: number}} [o] a port to listen on (a test that restarts the hub keeps its URL)
 * @returns {Promise<{url: string, log: {path: string, repo?: string, file?: string, range: string|null, status: number}[],
 *   faults: {file: string, kind: number|'cut'|'short'|'total'|'norange', times?: number, at?: number}[],
 *   commits: Record<string, string>, close(): Promise<void>}>}
 */
export async function startHub(repos, { port = 0 } = {}) {
  const log = [], faults = [], sockets = new Set();
  const commits = {}, listing = {};
  for (const [repo, dir] of Object.entries(repos)) {
    const files = fs.readdirSync(dir).filter((f) => fs.statSync(path.join(dir, f)).isFile()).sort();
    listing[repo] = files.map((f) => {
      const full = path.join(dir, f), size = fs.statSync(full).size;
      const h256 = crypto.createHash('sha256'), h1 = crypto.createHash('sha1');
      const fd = fs.openSync(full, 'r'), buf = Buffer.alloc(8 << 20);
      for (let n; (n = fs.readSync(fd, buf, 0, buf.length, null)) > 0;) { h256.update(buf.subarray(0, n)); h1.update(buf.subarray(0, n)); }
      fs.closeSync(fd);
      const sha256 = h256.digest('hex');
      const lfs = f.endsWith('.safetensors') ? { sha256, size, pointerSize: 134 } : undefined;
      return { rfilename: f, size, blobId: h1.digest('hex'), sha256, ...(lfs ? { lfs } : {}) };
    });
    commits[repo] = sha(JSON.stringify(listing[repo]), 'sha1');
  }
  const info = (repo, file) => listing[repo].find((f) => f.rfilename === file);
  const cors = { 'access-control-allow-origin': '*', 'access-control-expose-headers': 'Content-Range, Content-Length, ETag, X-Repo-Commit, Accept-Ranges' };
  const server = http.createServer((req, res) => {
    const u = new URL(req.url, 'http://x');
    const p = decodeURIComponent(u.pathname);
    const entry = { path: p, range: req.headers.range ?? null, status: 0 };
    log.push(entry);
    const send = (status, headers, body) => { entry.status = status; res.writeHead(status, { ...cors, ...headers }); res.end(body); };
    if (req.method === 'OPTIONS') { entry.status = 204; res.writeHead(204, { ...cors, 'access-control-allow-headers': 'Range', 'access-control-allow-methods': 'GET, HEAD' }); res.end(); return; }
    let m = /^\/api\/models\/([^/]+\/[^/]+)\/revision\/(.+)$/.exec(p);
    if (m) {
      const [, repo, rev] = m;
      entry.repo = repo;
      if (!repos[repo] || (rev !== 'main' && rev !== commits[repo])) { send(404, { 'content-type': 'application/json' }, '{"error":"Repository not found"}'); return; }
      send(200, { 'content-type': 'application/json' }, JSON.stringify({ id: repo, sha: commits[repo], siblings: listing[repo].map(({ sha256, ...f }) => f) }));
      return;
    }
    m = /^\/([^/]+\/[^/]+)\/resolve\/([^/]+)\/(.+)$/.exec(p) ?? /^\/plain\/([^/]+\/[^/]+)\/()(.+)$/.exec(p);
    if (!m || !repos[m[1]] || (m[2] && m[2] !== 'main' && m[2] !== commits[m[1]])) { send(404, {}, 'not found'); return; }
    const [, repo, , file] = m;
    Object.assign(entry, { repo, file });
    const full = path.join(repos[repo], path.basename(file));
    const fi = faults.findIndex((f) => f.file === file || f.file === '*');
    const fault = fi >= 0 ? faults[fi] : null;
    if (fault && --fault.times <= 0) faults.splice(fi, 1);
    if (fault && typeof fault.kind === 'number') { send(fault.kind, {}, 'fault'); return; }
    const meta = info(repo, path.basename(file));
    if (!meta) { send(404, {}, 'Entry not found'); return; }
    const size = meta.size;
    // the bytes asked for, read from disk as they are sent (a checkpoint may be gigabytes)
    const stream = (start, end, cutAt) => {
      const rs = fs.createReadStream(full, { start, end: cutAt === undefined ? end : Math.max(start, start + cutAt - 1) });
      if (cutAt === 0) { rs.destroy(); res.socket.destroy(); return; }
      rs.pipe(res, { end: cutAt === undefined });
      if (cutAt !== undefined) rs.on('end', () => res.socket.destroy());
    };
    const headers = { 'content-type': 'application/octet-stream', 'accept-ranges': 'bytes', etag: `"${meta.sha256}"`, 'x-repo-commit': commits[repo] };
    const r = /^bytes=(\d+)-(\d*)$/.exec(req.headers.range ?? '');
    if (r && fault?.kind !== 'norange') {
      const start = Number(r[1]), end = Math.min(r[2] === '' ? size - 1 : Number(r[2]), size - 1);
      if (start >= size) { send(416, { 'content-range': `bytes */${size}` }, ''); return; }
      const n = end + 1 - start, at = Math.floor((fault?.at ?? 0.5) * n);
      const total = fault?.kind === 'total' ? size + 1000 : size; // a file that is not what the hub listed
      headers['content-range'] = `bytes ${start}-${end}/${total}`;
      // 'short': an honest length, but fewer bytes than asked; 'cut': the connection dies at `at`
      headers['content-length'] = fault?.kind === 'short' ? at : n;
      entry.status = 206;
      res.writeHead(206, { ...cors, ...headers });
      if (fault?.kind === 'short') { if (at) fs.createReadStream(full, { start, end: start + at - 1 }).pipe(res); else res.end(); return; }
      stream(start, end, fault?.kind === 'cut' ? at : undefined);
      return;
    }
    headers['content-length'] = size;
    entry.status = 200;
    res.writeHead(200, { ...cors, ...headers });
    stream(0, size - 1);
  });
  server.on('connection', (s) => { sockets.add(s); s.on('close', () => sockets.delete(s)); });
  await new Promise((r) => server.listen(port, '127.0.0.1', r));
  const bound = server.address().port;
  return {
    url: `http://127.0.0.1:${bound}`,
    log, faults, commits,
    close: () => new Promise((r) => { for (const s of sockets) s.destroy(); server.close(r); }),
  };
}
