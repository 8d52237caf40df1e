// TransformerLens 3's names for Qwen3.5's Gated DeltaNet hook points (its GatedDeltaNetBridge,
// `blocks.N.linear_attn.*`), accepted by forward({hooks, interventions}) where they denote values
// this engine has: the same hook point under another name, or a per-head statistic of the layer
// (read-only: it is collected, not a point the pass can be changed at). docs/api.md has the table.

/** One row per accepted name: `hook` for a hook point of ours, `stat` for a statistic ([token][head]). */
export const TL3_ALIASES = Object.freeze([
  { name: 'linear_attn.hook_out', hook: 'hook_attn_out', what: 'the layer\'s output into the residual stream' },
  { name: 'linear_attn.hook_linear_attn_out', hook: 'hook_attn_out', what: 'the same (TransformerLens 3\'s second name for it)' },
  { name: 'linear_attn.hook_beta', stat: 'gdn_beta_head', what: 'beta = sigmoid(b) per value head: how strongly the token is written' },
  { name: 'linear_attn.hook_ssm_write', stat: 'gdn_beta_head', what: 'the same (its SSM-style name)' },
  { name: 'linear_attn.hook_log_decay', stat: 'gdn_log_decay_head', what: 'g per value head, the log of the state\'s decay (≤ 0)' },
  { name: 'linear_attn.hook_ssm_decay', stat: 'gdn_log_decay_head', what: 'the same (its SSM-style name)' },
]);

/**
 * A TransformerLens 3 name resolved for this model: null when `name` is not one; otherwise the
 * layer and either our hook (`hook`: its full name) or the statistic (`stat`), or `error` when the
 * layer has no Gated DeltaNet (or does not exist).
 * @param {string} name @param {('full'|'linear'|'sliding')[]} mixers
 * @returns {null | {layer: number, alias: string, hook?: string, stat?: string, error?: string}}
 */
export function resolveAlias(name, mixers) {
  const m = /^blocks\.(\d+)\.(linear_attn\..+)$/.exec(name);
  const row = m && TL3_ALIASES.find((a) => a.name === m[2]);
  if (!row) return null;
  const layer = Number(m[1]);
  if (layer >= mixers.length) return { layer, alias: name, error: `hook "${name}": layer ${layer} does not exist (the model has ${mixers.length})` };
  if (mixers[layer] !== 'linear') return { layer, alias: name, error: `hook "${name}": layer ${layer} is a ${mixers[layer] === 'sliding' ? 'sliding-window attention' : 'full-attention'} layer, which has no linear_attn (Gated DeltaNet)` };
  return row.hook ? { layer, alias: name, hook: `blocks.${layer}.${row.hook}` } : { layer, alias: name, stat: row.stat };
}
