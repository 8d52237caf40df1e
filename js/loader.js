// loadModel: manifest -> preflight -> tensor buffers in the wasm heap -> shards streamed straight
// into them (sha256 checked on the fly) -> finalize -> tokenizer -> runtime state.
import { createEngine } from './wasm.js';
import { openSource } from './source.js';
import { MlpscopeError } from './errors.js';
import { Tokenizer } from './tokenizer.js';
import { Model } from './model.js';

const WASM32_LIMIT = 4 * 1024 ** 3;

/**
 * @typedef {{ onProgress?: (p: {loaded: number, total: number, file: string, fromCache: boolean}) => void,
 *   signal?: AbortSignal, contextLength?: number, memoryBudget?: number, simd?: boolean,
 *   batchSize?: number, parallel?: number, engine?: import('./wasm.js').Engine }} LoadOptions
 */

/**
 * @param {string|URL} source a weight-set folder (Node) or URL prefix
 * @param {LoadOptions} [opts]
 * @returns {Promise<Model>}
 */
export async function loadModel(source, opts = {}) {
  const { onProgress, signal, memoryBudget, simd = true, batchSize = 64, parallel = 3 } = opts;
  const src = await openSource(source);
  const abortCheck = () => { if (signal?.aborted) throw new MlpscopeError('E_ABORTED', `loading ${src.name} was aborted`); };
  abortCheck();
  const manifestText = await src.text('manifest.json');
  let manifest;
  try { manifest = JSON.parse(manifestText); } catch (e) { throw new MlpscopeError('E_MANIFEST', `manifest.json: ${e.message}`); }
  const e = opts.engine ?? await createEngine();
  const [mp, mlen] = e.str(manifestText);
  let model = 0, state = 0, tokenizer = null;
  try {
    // preflight from the manifest alone: no tensor memory yet
    const pre = e.x.ms_model_create(mp, mlen, 0, simd ? 1 : 0, e.err) >>> 0;
    e.check(pre);
    const cfgMax = JSON.parse(ownedStr(e, e.x.ms_model_info(pre))).config.max_position_embeddings;
    const ctx = opts.contextLength ?? Math.min(cfgMax, 4096);
    if (!(Number.isInteger(ctx) && ctx >= 1 && ctx <= cfgMax)) {
      e.x.ms_model_destroy(pre);
      throw new MlpscopeError('E_CONTEXT', `contextLength ${ctx} outside [1, ${cfgMax}] (max_position_embeddings)`);
    }
    const weightBytes = e.x.ms_model_weight_bytes(pre);
    const stateBytes = e.x.ms_model_state_bytes(pre, ctx, batchSize);
    e.x.ms_model_destroy(pre);
    const need = weightBytes + stateBytes + e.heapBytes;
    if (!stateBytes || need > WASM32_LIMIT)
      throw new MlpscopeError('E_MEMORY', `model needs ${fmtBytes(weightBytes)} of weights + ${fmtBytes(stateBytes)} of state for context ${ctx}: over the 4 GiB wasm32 limit`);
    if (memoryBudget && weightBytes + stateBytes > memoryBudget)
      throw new MlpscopeError('E_MEMORY', `model needs ${fmtBytes(weightBytes + stateBytes)} (weights + state for context ${ctx}), over the budget of ${fmtBytes(memoryBudget)}`);

    model = e.x.ms_model_create(mp, mlen, 1, simd ? 1 : 0, e.err) >>> 0;
    e.check(model);
    const nShards = e.x.ms_model_n_shards(model);
    const total = manifest.shards.reduce((a, s) => a + s.bytes, 0);
    let loaded = 0;
    const report = (file) => onProgress?.({ loaded, total, file, fromCache: false });
    report('manifest.json');
    const segBuf = e.malloc(e.x.ms_model_n_tensors(model) * 24);
    try {
      let next = 0;
      const worker = async () => {
        while (next < nShards) {
          const s = next++;
          await loadShard(e, model, s, manifest.shards[s], src, segBuf, signal, (n) => { loaded += n; report(manifest.shards[s].file); });
        }
      };
      // segBuf is shared: shards are streamed concurrently but each segment list is read up front
      await Promise.all(Array.from({ length: Math.min(parallel, nShards) }, worker));
    } finally { e.free(segBuf); }
    abortCheck();
    e.check(e.x.ms_model_finish(model, e.err) === 0);
    const info = JSON.parse(ownedStr(e, e.x.ms_model_info(model)));
    if (manifest.tokenizer && manifest.tokenizer.kind !== 'none') {
      const tb = await src.bytes(manifest.tokenizer.file);
      if (manifest.tokenizer.sha256 && sha256Hex(e, tb) !== manifest.tokenizer.sha256)
        throw new MlpscopeError('E_SHARD_HASH', `${manifest.tokenizer.file}: sha256 does not match the manifest`);
      tokenizer = Tokenizer.load(e, info.tokenizer.kind, tb, {
        vocabSize: info.tokenizer.vocab_size, bosId: info.tokenizer.bos_token_id, eosIds: info.tokenizer.eos_token_ids });
    }
    state = e.x.ms_state_new(model, ctx, batchSize, e.err) >>> 0;
    e.check(state);
    return new Model(e, model, state, info, tokenizer, { contextLength: ctx, source: src.name });
  } catch (err) {
    tokenizer?.dispose();
    if (state) e.x.ms_state_destroy(state);
    if (model) e.x.ms_model_destroy(model);
    throw err;
  } finally {
    e.free(mp);
  }
}

/** Reads a C string the engine allocated for us, then frees it. */
function ownedStr(e, p) {
  if (!p) throw new MlpscopeError('E_MEMORY', 'out of memory');
  const s = e.cstr(p);
  e.free(p);
  return s;
}

export function sha256Hex(e, bytes) {
  const h = e.x.ms_sha_new() >>> 0;
  const p = e.bytes(bytes);
  e.x.ms_sha_update(h, p, bytes.length);
  const out = e.malloc(65);
  e.x.ms_sha_final(h, out);
  const hex = e.cstr(out);
  e.free(p); e.free(out); e.free(h);
  return hex;
}

/** Streams one shard into its tensors' heap buffers, hashing every byte in order. */
async function loadShard(e, model, s, shard, src, segBuf, signal, onBytes) {
  const n = e.x.ms_model_shard_segments(model, s, segBuf);
  const segs = Array.from(e.f64.subarray(segBuf >> 3, (segBuf >> 3) + 3 * n));
  const sha = e.x.ms_sha_new() >>> 0;
  const scratch = e.malloc(1 << 16);
  let pos = 0, k = 0;
  try {
    const stream = await src.stream(shard.file, signal);
    for await (const chunk0 of stream) {
      if (signal?.aborted) throw new MlpscopeError('E_ABORTED', `loading ${shard.file} was aborted`);
      const chunk = chunk0 instanceof Uint8Array ? chunk0 : new Uint8Array(chunk0);
      if (pos + chunk.length > shard.bytes)
        throw new MlpscopeError('E_SHARD_SIZE', `shard ${shard.file}: longer than the ${shard.bytes} bytes the manifest says`);
      let i = 0;
      while (i < chunk.length) {
        while (k < n && pos >= segs[3 * k] + segs[3 * k + 1]) k++;
        const inSeg = k < n && pos >= segs[3 * k];
        const end = inSeg ? segs[3 * k] + segs[3 * k + 1] : (k < n ? segs[3 * k] : shard.bytes);
        const take = Math.min(chunk.length - i, end - pos, inSeg ? Infinity : 1 << 16);
        const dst = inSeg ? (segs[3 * k + 2] >>> 0) + (pos - segs[3 * k]) : scratch;
        e.u8.set(chunk.subarray(i, i + take), dst);
        e.x.ms_sha_update(sha, dst, take);
        i += take; pos += take;
      }
      onBytes(chunk.length);
    }
    if (pos !== shard.bytes)
      throw new MlpscopeError('E_SHARD_SIZE', `shard ${shard.file}: got ${pos} bytes, the manifest says ${shard.bytes}`);
    const out = scratch;
    e.x.ms_sha_final(sha, out);
    const hex = e.cstr(out);
    if (hex !== shard.sha256) throw new MlpscopeError('E_SHARD_HASH', `shard ${shard.file}: sha256 ${hex} does not match the manifest (${shard.sha256})`);
  } catch (err) {
    if (err?.name === 'AbortError') throw new MlpscopeError('E_ABORTED', `loading ${shard.file} was aborted`);
    throw err;
  } finally {
    e.free(scratch);
    e.free(sha);
  }
}

export function fmtBytes(n) {
  if (n >= 1024 ** 3) return (n / 1024 ** 3).toFixed(2) + ' GiB';
  if (n >= 1024 ** 2) return (n / 1024 ** 2).toFixed(1) + ' MiB';
  if (n >= 1024) return (n / 1024).toFixed(1) + ' KiB';
  return n + ' B';
}
