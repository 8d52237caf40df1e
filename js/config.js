// A model configuration summarised without any weights: its family, its keys as the engine reads
// them and its parameter counts, from the tensors the family requires (src/io/hf_config.h,
// ms_config_summary). The lesson's budget table compares models this way (Gemma 3 270M beside
// Qwen3.5-0.8B), and a caller can size a model before downloading it.
import { createEngine } from './wasm.js';
import { MlpscopeError } from './errors.js';

/** The built-in shapes the engine knows by name (`mlpscope synth --config NAME` takes them too). */
export const CONFIG_PRESETS = Object.freeze(['qwen3.5-0.8b', 'gemma3-270m', 'gemma3-1b', 'llama-398m']);

/**
 * @param {string | object} config a preset name (CONFIG_PRESETS), a Hugging Face config.json (text
 *   or object, text_config included), or our manifest's {family, config}
 * @param {{engine?: unknown}} [opts]
 * @returns {Promise<{family: string, config: Record<string, unknown>, params: {total: number, embedding: number,
 *   mlp: number, mixer: number, norms: number, lm_head: number, mlp_per_layer: number}}>}
 */
export async function configSummary(config, opts = {}) {
  const text = typeof config === 'string' ? config : config && typeof config === 'object' ? JSON.stringify(config) : null;
  if (!text) throw new MlpscopeError('E_ARG', `configSummary(): a preset name, config.json text or object, not ${typeof config}`);
  const e = /** @type {any} */ (opts.engine) ?? await createEngine();
  return JSON.parse(e.c.config_summary(text));
}
