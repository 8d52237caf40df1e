// loadModel: where a model comes from, decided once. The loading wing flows one way:
//   sources  — a weight-set folder or URL (js/source.js), a Hugging Face checkpoint (js/hub.js)
//   → the weight-set loader (js/weightset.js: manifest, preflight, shards into the heap, tokenizer)
//   → the model (js/model.js).
// This module reads the options (js/options.js), picks the engine, and hands the source to the
// path that reads it; it owns the engine until a model takes it over.
import { engineFor } from './wasm.js';
import { openSource } from './source.js';
import { MlpscopeError } from './errors.js';
import { readLoadOptions, activationCode } from './options.js';
import { withRetry } from './async.js';
import { sha256Hex } from './hash.js';
import { loadWeightSet } from './weightset.js';
import { isHubSpec, parseHubSpec, isHubFolder, hasConvertedCopy, loadHub } from './hub.js';

/** @typedef {import('./options.js').LoadOptions} LoadOptions */

/**
 * @param {string|URL} source a weight-set folder (Node) or URL prefix; `hf:owner/name[@revision]`,
 *   or a folder (URL, or a path in Node) laid out like a Hugging Face repository: converted while
 *   it streams in (js/hub.js)
 * @param {LoadOptions} [opts]
 * @returns {Promise<import('./model.js').Model>}
 */
export async function loadModel(source, opts = {}) {
  const o = readLoadOptions(opts); // bad options fail before anything is fetched
  if (isHubSpec(source)) parseHubSpec(source);
  const engine = await engineFor(o.engine);
  try {
    activationCode(engine.e.info, o.model.activations);
    return await fromSource(source, o, engine);
  } catch (err) {
    if (engine.owns) engine.e.shutdown();
    throw err;
  }
}

/** The path for this source: a checkpoint to convert, or a weight set (or, without a manifest, a
 * checkpoint folder, or its converted copy in the cache when the network is gone). */
async function fromSource(source, o, engine) {
  if (isHubSpec(source)) return loadHub(source, o, engine);
  const { signal, retries, retryDelayMs } = o.net;
  const src = await openSource(source, { ...o.cache, stallTimeoutMs: o.net.stallTimeoutMs });
  if (signal?.aborted) throw new MlpscopeError('E_ABORTED', `loading ${src.name} was aborted`);
  // the manifest is the root of trust for every shard hash: with a pinned manifestSha256 its bytes
  // are verified too (a corrupted download is fetched again, then refused)
  let manifestText;
  try {
    manifestText = await withRetry(async () => {
      const text = await src.text('manifest.json', signal);
      if (o.manifestSha256) {
        const got = sha256Hex(engine.e, new TextEncoder().encode(text));
        if (got !== o.manifestSha256) {
          const err = new MlpscopeError('E_MANIFEST', `manifest.json: sha256 ${got} does not match the pinned ${o.manifestSha256}`);
          err.retryable = true;
          throw err;
        }
      }
      return text;
    }, retries, retryDelayMs, signal);
  } catch (err) {
    // no manifest.json, but a config.json: a checkpoint laid out like a Hugging Face repository
    if (err?.notFound && !o.manifestSha256 && await isHubFolder(source, o)) return loadHub(source, o, engine);
    // ... or, with the network gone, one whose converted copy is in the cache
    if (err?.code === 'E_NETWORK' && !o.manifestSha256 && await hasConvertedCopy(source, o, engine.e.info).catch(() => false)) return loadHub(source, o, engine);
    throw err;
  }
  return loadWeightSet(src, manifestText, o, engine);
}
