// TransformerLens-style hook names <-> the engine's (layer, hook) pairs.
import { MlpscopeError } from './errors.js';

/** Index = the engine's ms_hook enum. */
export const HOOKS = ['hook_resid_pre', 'hook_attn_out', 'hook_resid_mid', 'hook_mlp_out', 'hook_resid_post',
  'mlp.hook_pre', 'mlp.hook_pre_linear', 'mlp.hook_post'];

/** 'blocks.5.mlp.hook_post' -> {layer: 5, hook: 7} */
export function parseHook(name, nLayers) {
  const m = /^blocks\.(\d+)\.(.+)$/.exec(String(name));
  const hook = m ? HOOKS.indexOf(m[2]) : -1;
  if (!m || hook < 0) throw new MlpscopeError('E_ARG', `unknown hook "${name}" (expected blocks.{layer}.${HOOKS.join('|')})`);
  const layer = Number(m[1]);
  if (layer >= nLayers) throw new MlpscopeError('E_ARG', `hook "${name}": layer ${layer} does not exist (the model has ${nLayers})`);
  return { layer, hook };
}

/** hook kind (without the blocks.{l}. prefix) -> engine id */
export function hookId(kind) {
  const i = HOOKS.indexOf(kind);
  if (i < 0) throw new MlpscopeError('E_ARG', `unknown hook "${kind}"`);
  return i;
}
