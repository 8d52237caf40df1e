// TransformerLens 3's names for the Gated DeltaNet hook points of Qwen3.5 (js/aliases.js): the
// same values as our hook point or per-head statistic (beta and g against the float64 reference),
// interventions under the alias, and typed errors where a name has no meaning for a layer.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { loadModel } from '../js/index.js';
import { Reference } from './reference/reference.js';
import { CLI, ROOT, tmpDir } from './helpers.js';

test('blocks.N.linear_attn.* (TransformerLens 3) read the same values as our hook and statistics; interventions accept the hook alias', async () => {
  const dir = tmpDir('tl3');
  execFileSync(process.execPath, [CLI, 'synth', '--config', path.join(ROOT, 'tests/configs/qwen35-a.json'), '--seed', '5', '--dtype', 'f32', '--out', dir], { stdio: 'pipe' });
  const model = await loadModel(dir, { threads: 1 }), ref = new Reference(dir);
  const mixers = model.info().mixers, lin = mixers.indexOf('linear'), full = mixers.indexOf('full'), Hv = model.config.linear_num_value_heads;
  assert.ok(lin >= 0 && full >= 0);
  const ids = [3, 17, 250, 9, 44, 101], T = ids.length, p = `blocks.${lin}.linear_attn`;
  const r = model.forward(ids, { stats: false, hooks: [`${p}.hook_out`, `${p}.hook_linear_attn_out`, `blocks.${lin}.hook_attn_out`, `${p}.hook_beta`, `${p}.hook_ssm_write`, `${p}.hook_log_decay`, `${p}.hook_ssm_decay`] });
  assert.equal(r.stats, null, 'statistics not asked for are not returned');
  assert.deepEqual(Array.from(r.hooks[`${p}.hook_out`]), Array.from(r.hooks[`blocks.${lin}.hook_attn_out`]));
  assert.deepEqual(Array.from(r.hooks[`${p}.hook_linear_attn_out`]), Array.from(r.hooks[`blocks.${lin}.hook_attn_out`]));
  assert.equal(r.hooks[`${p}.hook_beta`].length, T * Hv);
  assert.deepEqual(Array.from(r.hooks[`${p}.hook_ssm_write`]), Array.from(r.hooks[`${p}.hook_beta`]));
  assert.deepEqual(Array.from(r.hooks[`${p}.hook_ssm_decay`]), Array.from(r.hooks[`${p}.hook_log_decay`]));
  const want = ref.run(ids).stats;
  for (let t = 0; t < T; t++) for (let h = 0; h < Hv; h++) {
    const b = r.hooks[`${p}.hook_beta`][t * Hv + h], g = r.hooks[`${p}.hook_log_decay`][t * Hv + h];
    assert.ok(Math.abs(b - want.gdn_beta_head[lin][t][h]) < 1e-5, `beta t${t} h${h}`);
    assert.ok(Math.abs(g - want.gdn_log_decay_head[lin][t][h]) < 1e-5 * (1 + Math.abs(want.gdn_log_decay_head[lin][t][h])), `g t${t} h${h}: ${g}`);
    assert.ok(g <= 0);
  }
  // with statistics on, the alias is the statistic's row of that layer
  const s = model.forward(ids, { hooks: [`${p}.hook_log_decay`] });
  assert.deepEqual(Array.from(s.hooks[`${p}.hook_log_decay`]), Array.from(s.stats.gdn_log_decay_head[lin]));
  for (let i = 0; i < T * Hv; i++) assert.ok(Math.abs(Math.exp(s.stats.gdn_log_decay_head[lin][i]) - s.stats.gdn_decay_head[lin][i]) < 1e-6);
  // an intervention under the alias is the one under our name
  const base = model.forward(ids, { logits: 'all', interventions: [{ hook: `blocks.${lin}.hook_attn_out`, op: 'scale', value: 0.5 }] }).logits;
  for (const iv of [{ hook: `${p}.hook_out`, op: 'scale', value: 0.5 }, { hook: 'linear_attn.hook_out', layer: lin, op: 'scale', value: 0.5 }])
    assert.deepEqual(Array.from(model.forward(ids, { logits: 'all', interventions: [iv] }).logits), Array.from(base));
  // typed errors
  assert.throws(() => model.forward(ids, { hooks: [`blocks.${full}.linear_attn.hook_beta`] }), { code: 'E_ARG', message: new RegExp(`layer ${full} is a full-attention layer`) });
  assert.throws(() => model.forward(ids, { hooks: ['blocks.99.linear_attn.hook_out'] }), { code: 'E_ARG', message: /layer 99 does not exist/ });
  assert.throws(() => model.forward(ids, { interventions: [{ hook: `${p}.hook_beta`, op: 'set', value: 0 }] }), { code: 'E_ARG', message: /can be read, not changed/ });
  assert.throws(() => model.forward(ids, { hooks: [`${p}.hook_q`] }), { code: 'E_ARG' }, 'a TransformerLens 3 name without a value here stays unknown');
  model.dispose();
});
