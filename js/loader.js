// loadModel: manifest -> preflight -> tensor buffers in the wasm heap -> shards streamed straight
// into them (sha256 checked on the fly) -> finalize -> tokenizer -> runtime state.
import { isNode, nodeImport } from './platform.js';
import { createEngine } from './wasm.js';
import { threadSupport, hardwareThreads } from './threads.js';
import { openSource } from './source.js';
import { MlpscopeError } from './errors.js';
import { Tokenizer } from './tokenizer.js';
import { Model } from './model.js';
import { isHubSpec, isHubFolder, hasConvertedCopy, loadHub } from './hub.js';

const WASM32_LIMIT = 4 * 1024 ** 3;
// In Node the shard hash runs in OpenSSL (SHA extensions where the CPU has them: several times the
// engine's portable C sha256 in wasm); browsers have no incremental SubtleCrypto digest, so they
// hash with the engine. Both are checked against each other by the tests.
// node:crypto, imported by the first loadModel in Node (not by a top-level await, which older
// bundle targets refuse)
let nodeCrypto;
export const loadNodeCrypto = async () => (nodeCrypto ??= isNode ? await nodeImport('node:crypto').catch(() => null) : null);

/** An incremental sha256 over shard bytes: `update(bytes, heapPtr)` sees each piece once, in order. */
export function newHasher(e) {
  if (nodeCrypto) {
    const h = nodeCrypto.createHash('sha256');
    return { update: (bytes) => { h.update(bytes); }, hex: () => h.digest('hex'), free() {} };
  }
  let sha = e.c.sha_new();
  return {
    update: (bytes, ptr) => { e.c.sha_update(sha, ptr, bytes.length); },
    hex: () => { const out = e.malloc(65); e.c.sha_final(sha, out); const x = e.cstr(out); e.free(out); return x; },
    free: () => { if (sha) e.free(sha); sha = 0; },
  };
}

/**
 * @typedef {{ onProgress?: (p: {loaded: number, total: number, file: string, fromCache: boolean}) => void,
 *   signal?: AbortSignal, contextLength?: number, maxContext?: number, memoryBudget?: number, simd?: boolean,
 *   batchSize?: number, parallel?: number, engine?: import('./wasm.js').Engine,
 *   activations?: 'int8'|'exact'|'plain', exact?: boolean, int8Activations?: boolean,
 *   manifestSha256?: string, stallTimeoutMs?: number, jinja?: {Template: any} | null, cacheDir?: string, cache?: boolean,
 *   wasmUrl?: URL|string, mtWasmUrl?: URL|string, threadWorkerUrl?: URL|string,
 *   hubUrl?: string, dtype?: string, embedDtype?: string }} LoadOptions
 *   hubUrl / dtype / embedDtype: for Hugging Face sources (js/hub.js).
 *   How q8 / q4 matrices meet their inputs (`activations`): 'int8' (the default) rounds each block
 *   of 32 inputs to int8 and runs integer dot products, as llama.cpp does: fastest, with the
 *   accuracy stated in docs/api.md; 'exact' splits each input into two 16-bit codes and is exact up
 *   to f32 rounding, at about half the speed in prefill and nearly the same in decode; 'plain' runs
 *   the reference f32 kernels on the file's own layout (slow). `exact: true` is 'exact';
 *   `int8Activations: false / true` is 'exact' / 'int8' (the option's earlier name).
 */

const ACTIVATION_MODES = { plain: 0, int8: 1, exact: 2 };

/** The activation mode asked for by the load options (see LoadOptions). */
export function activationMode(opts) {
  const asked = [];
  if (opts.activations !== undefined) {
    if (!(opts.activations in ACTIVATION_MODES)) throw new MlpscopeError('E_ARG', `activations: '${opts.activations}' is not one of ${Object.keys(ACTIVATION_MODES).join(', ')}`);
    asked.push(['activations', opts.activations]);
  }
  if (opts.exact !== undefined) {
    if (typeof opts.exact !== 'boolean') throw new MlpscopeError('E_ARG', 'exact: expected true or false');
    asked.push(['exact', opts.exact ? 'exact' : 'int8']);
  }
  if (opts.int8Activations !== undefined) {
    if (typeof opts.int8Activations !== 'boolean') throw new MlpscopeError('E_ARG', 'int8Activations: expected true or false');
    asked.push(['int8Activations', opts.int8Activations ? 'int8' : 'exact']);
  }
  const modes = new Set(asked.map(([, m]) => m));
  if (modes.size > 1) throw new MlpscopeError('E_ARG', `${asked.map(([k]) => k).join(' and ')} disagree: ${asked.map(([k, m]) => `${k} asks for '${m}'`).join(', ')}`);
  return asked.length ? asked[0][1] : 'int8';
}

/**
 * @param {string|URL} source a weight-set folder (Node) or URL prefix; `hf:owner/name[@revision]`,
 *   or a folder (URL, or a path in Node) laid out like a Hugging Face repository: converted while
 *   it streams in (js/hub.js)
 * @param {LoadOptions} [opts]
 * @returns {Promise<Model>}
 */
export async function loadModel(source, opts = {}) {
  await loadNodeCrypto();
  if (isHubSpec(source)) return loadHub(source, opts);
  const { signal, retries = 4, retryDelayMs = 250 } = opts;
  activationMode(opts); // bad options fail before anything is fetched
  const src = await openSource(source, { cache: opts.cache, cacheDir: opts.cacheDir, stallTimeoutMs: opts.stallTimeoutMs });
  if (signal?.aborted) throw new MlpscopeError('E_ABORTED', `loading ${src.name} was aborted`);
  // the manifest is the root of trust for every shard hash: with a pinned manifestSha256 its bytes
  // are verified too (a corrupted download is fetched again, then refused)
  let manifestText;
  try {
    manifestText = await withRetry(async () => {
      const text = await src.text('manifest.json', signal);
      if (opts.manifestSha256) {
        const e0 = opts.engine ?? (loadModel._shaEngine ??= await createEngine());
        const got = sha256Hex(e0, new TextEncoder().encode(text));
        if (got !== opts.manifestSha256) {
          const err = new MlpscopeError('E_MANIFEST', `manifest.json: sha256 ${got} does not match the pinned ${opts.manifestSha256}`);
          err.retryable = true;
          throw err;
        }
      }
      return text;
    }, retries, retryDelayMs, signal);
  } catch (err) {
    // no manifest.json, but a config.json: a checkpoint laid out like a Hugging Face repository
    if (err?.notFound && !opts.manifestSha256 && await isHubFolder(source, opts)) return loadHub(source, opts);
    // ... or, with the network gone, one whose converted copy is in the cache
    if (err?.code === 'E_NETWORK' && !opts.manifestSha256 && await hasConvertedCopy(source, opts).catch(() => false)) return loadHub(source, opts);
    throw err;
  }
  return loadWeightSet(src, manifestText, opts);
}

/**
 * Loads a weight set from an opened source whose manifest.json has been read (js/hub.js uses it
 * for a converted checkpoint kept in the cache).
 * @param {import('./source.js').Source} src @param {string} manifestText @param {LoadOptions} opts
 */
export async function loadWeightSet(src, manifestText, opts) {
  await loadNodeCrypto();
  const { onProgress, signal, parallel = 3, retries = 4, retryDelayMs = 250 } = opts;
  // the manifest is read by the engine alone (model_create): its shards and tokenizer come back
  // as the model's description
  const stage = await beginModel(manifestText, opts);
  const { e, model } = stage, manifest = stage.described;
  try {
    const nShards = e.c.model_n_shards(model);
    const total = manifest.shards.reduce((a, s) => a + s.bytes, 0);
    let loaded = 0;
    onProgress?.({ phase: 'download', loaded, total, file: 'manifest.json', fromCache: false });
    const segBuf = e.malloc(e.c.model_n_tensors(model) * 24);
    // one controller for all shard streams: the caller's abort, or the first fatal error, stops them all
    const inner = new AbortController();
    const onAbort = () => inner.abort();
    signal?.addEventListener('abort', onAbort, { once: true });
    if (signal?.aborted) inner.abort();
    const shardOpts = { signal: inner.signal, retries, retryDelayMs, onRetry: opts.onRetry };
    try {
      await eachConcurrently(nShards, parallel, inner, signal, src.name, async (s) => {
        await loadShard(e, model, s, manifest.shards[s], src, segBuf, shardOpts, (n, fromCache) => {
          loaded += n;
          onProgress?.({ phase: 'download', loaded, total, file: manifest.shards[s].file, fromCache });
        });
        // check and lay out this shard's tensors now, while the other shards are still read
        e.c.model_finish_shard(model, s, stage.actCode);
      });
    } finally { e.free(segBuf); signal?.removeEventListener('abort', onAbort); }
    const tok = manifest.tokenizer;
    const tokenizerBytes = async () => {
      let tb;
      try { tb = await withRetry(() => src.bytes(tok.file, signal, tok.sha256 || undefined), retries, retryDelayMs, signal); } catch (err) {
        if (err.code === 'E_ABORTED') throw err;
        throw new MlpscopeError('E_TOKEN', `tokenizer file ${tok.file}: ${err.message}`);
      }
      if (tok.sha256 && sha256Hex(e, tb) !== tok.sha256) {
        await src.forget?.(tok.file, tok.sha256);
        throw new MlpscopeError('E_SHARD_HASH', `${tok.file}: sha256 does not match the manifest`);
      }
      return tb;
    };
    const m = await endModel(stage, tokenizerBytes, src.name, opts);
    // the cache keeps what this manifest names: shards replaced under the same URLs are dropped
    const named = [...manifest.shards, ...(tok.file ? [tok] : [])].map((f) => ({ file: f.file, sha256: f.sha256 || undefined }));
    await src.prune?.(named).catch(() => 0);
    return m;
  } catch (err) {
    stage.abandon();
    throw err;
  }
}

/**
 * Runs `job(k)` for k = 0..n-1, `parallel` at a time. On the first failure the others take no new
 * work and `inner` is aborted; all are waited for (none may write into freed memory afterwards),
 * then the first failure is thrown (an abort of the caller's `signal` as E_ABORTED).
 */
export async function eachConcurrently(n, parallel, inner, signal, name, job) {
  let next = 0, failed = null;
  const worker = async () => {
    while (next < n && !failed) {
      const k = next++;
      try { await job(k); } catch (err) {
        if (!failed) { failed = signal?.aborted ? new MlpscopeError('E_ABORTED', `loading ${name} was aborted`) : err; inner.abort(); }
        throw err;
      }
    }
  };
  const results = await Promise.allSettled(Array.from({ length: Math.min(parallel, n) }, worker));
  if (failed) throw failed;
  for (const r of results) if (r.status === 'rejected') throw r.reason;
}

/**
 * The first half of every load: the engine, the memory preflight from the manifest alone (nothing
 * downloaded yet), one memory growth for all tensors and the state, the model with its tensor
 * buffers allocated. `extraBytes`: working memory the caller will allocate during the load.
 * @param {string} manifestText @param {LoadOptions} opts
 * @param {{engine?: any, ownsEngine?: boolean, threadsWhy?: string, extraBytes?: number}} [given]
 */
export async function beginModel(manifestText, opts, given = {}) {
  const { memoryBudget, simd = true, batchSize = 64 } = opts;
  const actCode = ACTIVATION_MODES[activationMode(opts)];
  const urls = { wasmUrl: opts.wasmUrl, mtWasmUrl: opts.mtWasmUrl, threadWorkerUrl: opts.threadWorkerUrl };
  let e, threadsWhy, ownsEngine;
  if (given.engine) ({ engine: e, why: threadsWhy, owns: ownsEngine } = { engine: given.engine, why: given.threadsWhy ?? 'the engine passed in', owns: !!given.ownsEngine });
  else if (opts.engine) ({ engine: e, why: threadsWhy, owns: ownsEngine } = { engine: opts.engine, why: 'the engine passed in', owns: false });
  else ({ engine: e, why: threadsWhy } = await pickEngine(opts.threads ?? 'auto', urls)), ownsEngine = true;
  let model = 0;
  try {
    const pre = e.c.model_create(manifestText, 0, simd ? 1 : 0);
    const described = e.c.model_info(pre); // the manifest as the engine read it: shards, tokenizer
    const cfgMax = described.config.max_position_embeddings;
    const ctx = opts.contextLength ?? Math.min(cfgMax, opts.maxContext ?? 4096);
    if (!(Number.isInteger(ctx) && ctx >= 1 && ctx <= cfgMax)) {
      e.c.model_destroy(pre);
      throw new MlpscopeError('E_CONTEXT', `contextLength ${ctx} outside [1, ${cfgMax}] (max_position_embeddings)`);
    }
    const weightBytes = e.c.model_weight_bytes(pre);
    const stateBytes = e.c.model_state_bytes(pre, ctx, batchSize);
    e.c.model_destroy(pre);
    const extra = given.extraBytes ?? 0;
    const need = weightBytes + stateBytes + extra + e.heapBytes;
    if (!stateBytes || need > WASM32_LIMIT)
      throw new MlpscopeError('E_MEMORY', `model needs ${fmtBytes(weightBytes)} of weights + ${fmtBytes(stateBytes)} of state for context ${ctx}: over the 4 GiB wasm32 limit`);
    if (memoryBudget && weightBytes + stateBytes > memoryBudget)
      throw new MlpscopeError('E_MEMORY', `model needs ${fmtBytes(weightBytes + stateBytes)} (weights + state for context ${ctx}), over the budget of ${fmtBytes(memoryBudget)}`);
    e.reserve(weightBytes + stateBytes + extra); // one memory growth for all tensors and the state
    model = e.c.model_create(manifestText, 1, simd ? 1 : 0);
    if (e.pool) e.c.model_set_pool(model, e.pool); // from the start: the int8 repack of each shard uses the threads too
    return { e, model, ctx, actCode, ownsEngine, threadsWhy, weightBytes, described,
      abandon() { if (model) e.c.model_destroy(model); model = 0; if (ownsEngine) e.shutdown(); } };
  } catch (err) {
    if (model) e.c.model_destroy(model);
    if (ownsEngine) e.shutdown();
    throw err;
  }
}

/**
 * The second half: every shard is in and finished; lay out what is left, load the tokenizer
 * (`tokenizerBytes()` gives its verified file), make the runtime state.
 * @returns {Promise<Model>}
 */
export async function endModel(stage, tokenizerBytes, sourceName, opts) {
  const { e, model } = stage;
  if (opts.signal?.aborted) throw new MlpscopeError('E_ABORTED', `loading ${sourceName} was aborted`);
  let state = 0, tokenizer = null;
  try {
    e.c.model_finish(model, stage.actCode);
    const info = e.c.model_info(model);
    if (info.tokenizer.kind && info.tokenizer.kind !== 'none') {
      const tb = await tokenizerBytes();
      tokenizer = Tokenizer.load(e, info.tokenizer.kind, tb, { vocabSize: info.tokenizer.vocab_size, eosIds: info.tokenizer.eos_token_ids, chat: info.tokenizer.chat });
      await tokenizer.prepareChat(opts.jinja);
    }
    state = e.c.state_new(model, stage.ctx, opts.batchSize ?? 64);
    // the mode that runs (from the engine): q8/q4 matrices in the mode asked for; other weights
    // take f32 activations whatever the mode
    const quantized = Object.keys(info.dtypes).some((d) => d.startsWith('q8_0') || d.startsWith('q4_0'));
    const act = quantized ? info.activations : 'f32';
    const buildWhy = { int8: 'int8 activations with 4-row interleaved q8/q4 weights; ', exact: 'exact activations (two 16-bit codes) with 4-row interleaved q8/q4 weights; ',
      plain: 'f32 activations with the plain q8/q4 layouts (reference kernels); ', f32: '' }[act] +
      (e.threads > 1 ? `multi-threaded SIMD128 build, ${e.threads} threads (${stage.threadsWhy})` : `single-threaded SIMD128 build (${stage.threadsWhy})`);
    return new Model(e, model, state, info, tokenizer, { contextLength: stage.ctx, source: sourceName, buildWhy, ownsEngine: stage.ownsEngine });
  } catch (err) {
    tokenizer?.dispose();
    if (state) e.c.state_destroy(state);
    throw err;
  }
}

/**
 * The engine for a load: the multi-threaded build when threads can run here and more than one is
 * wanted ('auto': one per hardware thread, at most 4), else the single-threaded one, with the reason.
 * @param {number|'auto'} want
 */
export async function pickEngine(want, urls) {
  if (want !== 'auto' && !(Number.isInteger(want) && want >= 1 && want <= 64))
    throw new MlpscopeError('E_ARG', `threads: ${JSON.stringify(want)} is neither 'auto' nor an integer in [1, 64]`);
  const sup = threadSupport();
  const hw = await hardwareThreads();
  const n = want === 'auto' ? Math.min(hw, 4) : want;
  if (n < 2) return { engine: await createEngine(urls), why: want === 'auto' ? `threads: auto, ${hw} hardware thread` : 'threads: 1 asked for' };
  if (!sup.ok) return { engine: await createEngine(urls), why: `threads: ${want}, but ${sup.why}` };
  try {
    return { engine: await createEngine({ ...urls, threads: n }), why: `threads: ${want}${want === 'auto' ? `, ${hw} hardware threads` : ''}` };
  } catch (err) {
    return { engine: await createEngine(urls), why: `threads: ${want}, but the threaded build did not start: ${err.message}` };
  }
}

/** Reads a C string the engine allocated for us, then frees it. */
export function sha256Hex(e, bytes) {
  const h = e.c.sha_new();
  const p = e.bytes(bytes);
  e.c.sha_update(h, p, bytes.length);
  const out = e.malloc(65);
  e.c.sha_final(h, out);
  const hex = e.cstr(out);
  e.free(p); e.free(out); e.free(h);
  return hex;
}

/** Runs fn, retrying transient failures (E_NETWORK from 5xx / transport errors) with backoff. */
export async function withRetry(fn, retries, delayMs, signal) {
  for (let attempt = 0; ; attempt++) {
    try { return await fn(); } catch (err) {
      if (!err?.retryable || attempt >= retries) throw err;
      await sleep(delayMs * 2 ** attempt, signal);
    }
  }
}

export const sleep = (ms, signal) => new Promise((resolve, reject) => {
  const onAbort = () => { clearTimeout(t); reject(new MlpscopeError('E_ABORTED', 'aborted while waiting to retry')); };
  const t = setTimeout(() => { signal?.removeEventListener('abort', onAbort); resolve(); }, ms);
  signal?.addEventListener('abort', onAbort, { once: true });
});

/**
 * Where byte `pos` of a shard goes. segs: [offset, bytes, heap address] per tensor, by offset; k:
 * the segment to start looking from. Inside a tensor: its heap address for pos (dst) and where the
 * tensor ends; between tensors (padding): dst -1 and where the next tensor starts.
 */
function placeOf(segs, n, k, pos, total) {
  while (k < n && pos >= segs[3 * k] + segs[3 * k + 1]) k++;
  const inSeg = k < n && pos >= segs[3 * k];
  return { k, end: inSeg ? segs[3 * k] + segs[3 * k + 1] : (k < n ? segs[3 * k] : total), dst: inSeg ? (segs[3 * k + 2] >>> 0) + (pos - segs[3 * k]) : -1 };
}

/**
 * Streams one shard into its tensors' heap buffers, hashing every byte in order. Transport
 * failures are retried with exponential backoff; a cut transfer resumes with HTTP Range from the
 * last byte received (or restarts if the server ignores Range); a hash mismatch refetches the
 * whole shard. Only a complete, verified shard counts.
 */
async function loadShard(e, model, s, shard, src, segBuf, o, progress) {
  const n = e.c.model_shard_segments(model, s, segBuf);
  const segs = Array.from(e.f64.subarray(segBuf >> 3, (segBuf >> 3) + 3 * n));
  if (src.openFile && nodeCrypto) return loadLocalShard(e, shard, segs, n, src, o, progress); // Node, local files
  const scratch = e.malloc(1 << 16);
  let sha = newHasher(e);
  let pos = 0, attempt = 0, lastErr = null;
  const restart = () => { sha?.free(); sha = newHasher(e); progress(-pos, false); pos = 0; };
  try {
    for (;;) {
      if (o.signal?.aborted) throw new MlpscopeError('E_ABORTED', `loading ${shard.file} was aborted`);
      let opened = null;
      try {
        opened = await src.open(shard.file, { signal: o.signal, start: pos, sha256: shard.sha256 });
        if (opened.start !== pos) restart(); // server ignored the range request: start over
        let k = 0;
        for await (const chunk0 of opened.stream) {
          if (o.signal?.aborted) throw new MlpscopeError('E_ABORTED', `loading ${shard.file} was aborted`);
          const chunk = chunk0 instanceof Uint8Array ? chunk0 : new Uint8Array(chunk0);
          if (pos + chunk.length > shard.bytes) {
            const err = new MlpscopeError('E_SHARD_SIZE', `shard ${shard.file}: more than the ${shard.bytes} bytes the manifest says`);
            err.retryable = true; err.restart = true;
            throw err;
          }
          let i = 0;
          while (i < chunk.length) {
            const at = placeOf(segs, n, k, pos, shard.bytes);
            k = at.k;
            const take = Math.min(chunk.length - i, at.end - pos, at.dst >= 0 ? Infinity : 1 << 16);
            const dst = at.dst >= 0 ? at.dst : scratch;
            const piece = chunk.subarray(i, i + take);
            e.u8.set(piece, dst);
            sha.update(piece, dst);
            i += take; pos += take;
          }
          progress(chunk.length, opened.fromCache);
        }
        if (pos < shard.bytes) {
          // a clean end before the last byte: the file is shorter than the manifest says (final for
          // a local file; over HTTP worth resuming, the server may have cut the response short)
          const err = new MlpscopeError('E_SHARD_SIZE', `shard ${shard.file}: ended at byte ${pos} of the ${shard.bytes} the manifest says`);
          err.retryable = !src.local; err.restart = opened.fromCache;
          throw err;
        }
        const hex = sha.hex();
        sha.free(); sha = null;
        if (hex !== shard.sha256) {
          const err = new MlpscopeError('E_SHARD_HASH', `shard ${shard.file}: sha256 ${hex} does not match the manifest (${shard.sha256})`);
          err.retryable = true; err.restart = true;
          throw err;
        }
        await opened.commit?.();
        return;
      } catch (err0) {
        let err = err0;
        if (err?.name === 'AbortError' || o.signal?.aborted) throw new MlpscopeError('E_ABORTED', `loading ${shard.file} was aborted`);
        if (!(err instanceof MlpscopeError)) { err = new MlpscopeError('E_NETWORK', `shard ${shard.file}: ${err?.message ?? err}`); err.retryable = true; }
        await opened?.discard?.(); // never keep a cache entry for a failed shard
        if (!err.retryable || attempt >= o.retries) {
          if (lastErr && err.code === 'E_NETWORK' && !err.message.includes(shard.file)) err.message += ` (shard ${shard.file})`;
          throw err;
        }
        lastErr = err;
        attempt++;
        if (err.restart || !sha) { if (!sha) { sha = newHasher(e); progress(-pos, false); pos = 0; } else restart(); }
        o.onRetry?.({ file: shard.file, attempt, error: err, resumeAt: pos });
        await sleep(o.retryDelayMs * 2 ** (attempt - 1), o.signal);
      }
    }
  } finally {
    e.free(scratch);
    sha?.free();
  }
}

/**
 * A shard from a local file: read straight into its tensors' heap buffers in 256 KiB pieces (the
 * padding between tensors into a small JS buffer), each piece hashed as soon as it has arrived,
 * while it is still in cache: measured on the 809 MiB q8 set, OpenSSL hashes such pieces at
 * 1.8 GB/s against 1.1 GB/s for 8 MiB pieces read back from memory, and with `parallel` shards in
 * flight the reads of the others go on meanwhile. Nothing is allocated in the heap meanwhile, so
 * the heap cannot grow under a pending read, and heap views are made afresh for each use. A local
 * file does not change between attempts, so there are no retries here.
 */
async function loadLocalShard(e, shard, segs, n, src, o, progress) {
  const f = await src.openFile(shard.file);
  const PIECE = 256 << 10, pad = new Uint8Array(1 << 16);
  const sha = newHasher(e);
  const bytesOf = (p) => (p.dst < 0 ? pad.subarray(0, p.len) : e.u8.subarray(p.dst, p.dst + p.len));
  try {
    if (f.size !== shard.bytes)
      throw new MlpscopeError('E_SHARD_SIZE', `shard ${shard.file}: ${f.size} bytes, the manifest says ${shard.bytes}`);
    let pos = 0, k = 0;
    while (pos < shard.bytes) {
      if (o.signal?.aborted) throw new MlpscopeError('E_ABORTED', `loading ${shard.file} was aborted`);
      const at = placeOf(segs, n, k, pos, shard.bytes);
      k = at.k;
      const piece = { dst: at.dst, len: Math.min(at.end - pos, at.dst >= 0 ? PIECE : pad.length) };
      const got = await f.read(bytesOf(piece), pos);
      if (got !== piece.len) throw new MlpscopeError('E_SHARD_SIZE', `shard ${shard.file}: ended at byte ${pos + got} of the ${shard.bytes} the manifest says`);
      sha.update(bytesOf(piece), piece.dst);
      pos += piece.len;
      progress(piece.len, false);
    }
    const hex = sha.hex();
    if (hex !== shard.sha256) throw new MlpscopeError('E_SHARD_HASH', `shard ${shard.file}: sha256 ${hex} does not match the manifest (${shard.sha256})`);
  } finally {
    sha.free();
    await f.close();
  }
}

export function fmtBytes(n) {
  if (n >= 1024 ** 3) return (n / 1024 ** 3).toFixed(2) + ' GiB';
  if (n >= 1024 ** 2) return (n / 1024 ** 2).toFixed(1) + ' MiB';
  if (n >= 1024) return (n / 1024).toFixed(1) + ' KiB';
  return n + ' B';
}
