// The exact Qwen3.5-0.8B shapes (synthetic q8 weights) end to end, natively and in wasm:
// parameter counts, memory, finite outputs, and wasm == native.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { loadModel, fmtBytes } from '../js/index.js';
import { ROOT, tmpDir } from './helpers.js';

const NATIVE = path.join(ROOT, 'build/native/mlpscope-native');
const dir = tmpDir('q08');
after(() => fs.rmSync(dir, { recursive: true, force: true }));

test('Qwen3.5-0.8B-shaped model: 752,393,024 parameters, runs natively and in wasm', async () => {
  execFileSync(NATIVE, ['synth', '--config', 'qwen3.5-0.8b', '--seed', '5', '--dtype', 'q8', '--out', dir], { stdio: 'pipe' });
  const info = JSON.parse(execFileSync(NATIVE, ['info', dir, '256'], { encoding: 'utf8' }));
  assert.equal(info.params.total, 752_393_024);
  assert.equal(info.params.mlp, 264_241_152);
  assert.equal(info.params.embedding, 254_279_680);
  assert.equal(info.params.lm_head, 0); // tied
  const ids = [11, 2024, 77, 31337, 248000, 5, 9, 100];
  const nat = JSON.parse(execFileSync(NATIVE, ['forward', dir, '--ids', ids.join(',')], { encoding: 'utf8', maxBuffer: 1 << 28 }));
  assert.equal(nat.logits.length, 248320);
  assert.ok(nat.logits.every(Number.isFinite));

  // exact activations: the native tool runs the plain f32-activation kernels; both are exact up to
  // f32 rounding, so they agree within 1e-4 (the default int8 activations would differ by more)
  const model = await loadModel(dir, { contextLength: 256, exact: true });
  const mi = model.info();
  assert.equal(mi.params.total, 752_393_024);
  assert.equal(mi.params.mlp, 264_241_152);
  assert.deepEqual(mi.mixers.map((m, l) => (m === 'full' ? l : -1)).filter((l) => l >= 0), [3, 7, 11, 15, 19, 23]);
  console.log(`# 0.8B q8: weights ${fmtBytes(mi.memory.weights)}, state ${fmtBytes(mi.memory.state)} (context 256), wasm heap ${fmtBytes(mi.memory.heap)}; native state for context ${info.context}: ${fmtBytes(info.state_bytes)}`);
  const r = model.forward(ids);
  let w = 0, s = 0;
  for (let i = 0; i < r.logits.length; i++) { w = Math.max(w, Math.abs(r.logits[i] - nat.logits[i])); s = Math.max(s, Math.abs(nat.logits[i])); }
  assert.ok(w / s < 1e-4, `wasm vs native logits: ${w / s}`);
  for (let l = 0; l < 24; l++) {
    assert.ok(Math.abs(r.stats.resid_post_l2[l][7] - nat.resid_post_l2[l][7]) / nat.resid_post_l2[l][7] < 1e-4);
    assert.ok(r.stats.mlp_ratio[l].every((v) => v > 0 && v < 1));
  }
  model.dispose();
});
