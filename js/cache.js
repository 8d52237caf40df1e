// Where downloaded weight sets are kept: in browsers the Cache API; in Node, when asked for with
// `cacheDir`, a folder with the same calls. Entries are keyed by the file's URL plus its sha256
// (`…/model-00001-of-00001.bin#sha256=<hex>`; a manifest's last good copy is `…/manifest.json#latest`),
// so a weight set is the entries under its folder URL.
import { MlpscopeError } from './errors.js';

export const CACHE_NAME = 'mlpscope-weights-v1';

/**
 * The store for `cacheDir` (Node) or the Cache API (browsers), or null when neither is there.
 * Both answer match(key), put(key, response), delete(key) and keys() (objects with `url`).
 * @param {{cacheDir?: string, cache?: boolean}} [opts] cache: false turns caching off
 */
export async function openStore({ cacheDir, cache } = {}) {
  if (cache === false) return null;
  if (cacheDir) return diskStore(String(cacheDir));
  if (typeof caches !== 'undefined') return caches.open(CACHE_NAME);
  return null;
}

/** A folder holding one `<hash>.bin` per entry and a `<hash>.json` with its key and size. */
async function diskStore(dir) {
  const name = 'node:fs', pname = 'node:path', cname = 'node:crypto'; // not literals: browser bundles leave them out
  const fs = (await import(/* webpackIgnore: true */ /* @vite-ignore */ name)).default;
  const path = (await import(/* webpackIgnore: true */ /* @vite-ignore */ pname)).default;
  const crypto = await import(/* webpackIgnore: true */ /* @vite-ignore */ cname);
  try { fs.mkdirSync(dir, { recursive: true }); } catch (err) { throw new MlpscopeError('E_ARG', `cacheDir ${dir}: ${err.message}`); }
  const base = (key) => path.join(dir, crypto.createHash('sha256').update(String(key)).digest('hex').slice(0, 40));
  const readMeta = (b) => { try { return JSON.parse(fs.readFileSync(b + '.json', 'utf8')); } catch { return null; } };
  return {
    async match(key) {
      const b = base(key), meta = readMeta(b);
      if (meta?.key !== String(key) || !fs.existsSync(b + '.bin')) return undefined;
      return new Response(await fs.openAsBlob(b + '.bin'));
    },
    async put(key, response) {
      const b = base(key), tmp = `${b}.${process.pid}.${Math.random().toString(36).slice(2)}.part`;
      const out = fs.createWriteStream(tmp);
      let bytes = 0;
      try {
        for await (const chunk of response.body) { bytes += chunk.length; if (!out.write(chunk)) await new Promise((r) => out.once('drain', r)); }
        await new Promise((resolve, reject) => out.end((err) => (err ? reject(err) : resolve())));
        fs.renameSync(tmp, b + '.bin'); // whole or not at all
        fs.writeFileSync(b + '.json', JSON.stringify({ key: String(key), bytes, time: Date.now() }));
      } catch (err) { out.destroy(); fs.rmSync(tmp, { force: true }); throw err; }
    },
    async delete(key) {
      const b = base(key), had = readMeta(b)?.key === String(key);
      fs.rmSync(b + '.json', { force: true }); fs.rmSync(b + '.bin', { force: true });
      return had;
    },
    async keys() {
      return fs.readdirSync(dir).filter((f) => f.endsWith('.json')).map((f) => readMeta(path.join(dir, f.slice(0, -5)))).filter(Boolean).map((m) => ({ url: m.key }));
    },
  };
}

/** The key of a file of a weight set in the store: its folder URL (ending in '/') + file, and its
 * sha256 (a verified file) or, without one, 'latest' (the last good copy of a file that changes). */
export const entryKey = (folder, file, sha256) => `${folder}${file}#${sha256 ? `sha256=${sha256}` : 'latest'}`;

/** An entry's key split into the weight set's folder URL, the file and its version (sha256 or 'latest'). */
function parseKey(key) {
  const m = /^(.*\/)([^/#]+)#(?:sha256=([0-9a-f]{64})|(latest))$/.exec(key);
  return m ? { folder: m[1], file: m[2], version: m[3] ?? m[4] } : null;
}
const folderOf = (url) => {
  const s = String(url).replace(/(^|\/)manifest\.json([?#].*)?$/, '$1');
  return new URL(s.endsWith('/') ? s : s + '/', typeof location !== 'undefined' ? location.href : undefined).href;
};

async function sizeOf(store, key) {
  const r = await store.match(key);
  return r ? (await r.blob()).size : 0;
}

/**
 * The weight sets in the cache, one per folder URL, with their files and bytes.
 * @param {{cacheDir?: string}} [opts]
 * @returns {Promise<{url: string, bytes: number, files: {file: string, sha256: string | null, bytes: number}[]}[]>}
 */
export async function listCachedModels(opts = {}) {
  const store = await openStore(opts);
  if (!store) return [];
  const sets = new Map();
  for (const req of await store.keys()) {
    const k = parseKey(req.url);
    if (!k) continue;
    if (!sets.has(k.folder)) sets.set(k.folder, { url: k.folder, bytes: 0, files: [] });
    const bytes = await sizeOf(store, req.url), set = sets.get(k.folder);
    set.files.push({ file: k.file, sha256: k.version === 'latest' ? null : k.version, bytes });
    set.bytes += bytes;
  }
  return [...sets.values()].sort((a, b) => a.url.localeCompare(b.url));
}

/**
 * Removes a weight set from the cache (its folder URL, or its manifest.json URL).
 * @param {string | URL} url @param {{cacheDir?: string}} [opts]
 * @returns {Promise<number>} how many files were removed
 */
export async function deleteCachedModel(url, opts = {}) {
  const store = await openStore(opts);
  if (!store) return 0;
  const folder = folderOf(url);
  let n = 0;
  for (const req of await store.keys()) if (parseKey(req.url)?.folder === folder && await store.delete(req.url)) n++;
  return n;
}

/**
 * After a weight set loaded: drops its entries that the manifest no longer names (a shard
 * replaced under the same URL keeps its old bytes otherwise, forever).
 * @param {any} store @param {string} folder the source's folder URL
 * @param {{file: string, sha256?: string}[]} keep the manifest's files
 * @returns {Promise<number>} entries removed
 */
export async function pruneStale(store, folder, keep) {
  if (!store) return 0;
  const wanted = new Set(keep.map((f) => `${f.file}#${f.sha256 ?? 'latest'}`));
  wanted.add('manifest.json#latest');
  let n = 0;
  for (const req of await store.keys()) {
    const k = parseKey(req.url);
    if (k?.folder === folder && !wanted.has(`${k.file}#${k.version}`) && await store.delete(req.url)) n++;
  }
  return n;
}
