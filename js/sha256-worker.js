// Worker thread of the Node sha256 pool (sha256-pool.js): keeps one running hash per session,
// hashes each posted piece and sends its buffer back for reuse.
import { parentPort } from 'node:worker_threads';
import { createHash } from 'node:crypto';

/** @type {Map<number, import('node:crypto').Hash>} */
const sessions = new Map();
parentPort.on('message', (m) => {
  if (m.drop) { sessions.delete(m.id); return; }
  let h = sessions.get(m.id);
  if (!h) sessions.set(m.id, (h = createHash('sha256')));
  if (m.final) { sessions.delete(m.id); parentPort.postMessage({ id: m.id, hex: h.digest('hex') }); return; }
  h.update(new Uint8Array(m.buf, 0, m.len));
  parentPort.postMessage({ id: m.id, buf: m.buf }, [m.buf]);
});
