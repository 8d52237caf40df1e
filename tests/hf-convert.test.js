// The converter on synthetic Hugging Face checkpoints with the real Qwen3.5 layout: F32 and BF16,
// single file and index-sharded, vision/MTP tensors skipped, tied and untied heads, real vocabulary
// and stop tokens recorded; checked against the float64 reference. Native and wasm converters
// must write identical weight sets.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { loadModel } from '../js/index.js';
import { Reference } from './reference/reference.js';
import { writeHfCheckpoint } from './hf-writer.js';
import { CLI, ROOT, tmpDir } from './helpers.js';

const NATIVE = path.join(ROOT, 'build/native/mlpscope-native');
const synth = (cfg, seed = 4) => {
  const out = tmpDir('hf-src');
  execFileSync(process.execPath, [CLI, 'synth', '--config', path.join(ROOT, 'tests/configs', cfg + '.json'), '--seed', String(seed), '--out', out], { stdio: 'pipe' });
  return out;
};
const convert = (src, extra = []) => {
  const out = tmpDir('hf-out');
  execFileSync(process.execPath, [CLI, 'convert', src, '--out', out, ...extra], { stdio: 'pipe' });
  return out;
};
function worstRel(model, ref, ids) {
  const V = model.config.vocab_size;
  const r = model.forward(ids, { logits: 'all' });
  let w = 0;
  ref.logits.forEach((g, t) => {
    const s = Math.max(...g.map(Math.abs));
    for (let i = 0; i < V; i++) w = Math.max(w, Math.abs(r.logits[t * V + i] - g[i]) / s);
  });
  return w;
}

for (const [cfg, dtype, shards] of [['qwen35-a', 'F32', 1], ['qwen35-b', 'BF16', 3], ['qwen35-c', 'F32', 2], ['qwen35-a', 'BF16', 1]]) {
  test(`HF Qwen3.5 checkpoint ${cfg}, ${dtype}, ${shards === 1 ? 'single file' : shards + ' shards + index'}`, async () => {
    const src = synth(cfg);
    const hf = tmpDir('hf');
    writeHfCheckpoint(src, hf, { dtype, shards, tokenizer: true, tokenizerMinVocab: 300 });
    const out = convert(hf);
    const man = JSON.parse(fs.readFileSync(path.join(out, 'manifest.json'), 'utf8'));
    const V = man.config.vocab_size;
    assert.equal(man.family, 'qwen3_5');
    assert.ok(!man.tensors.some((t) => /visual|mtp/.test(t.name)), 'vision and MTP tensors are skipped');
    assert.equal(man.tensors.some((t) => t.name === 'lm_head'), !JSON.parse(fs.readFileSync(path.join(src, 'manifest.json'))).config.tie_word_embeddings);
    if (V >= 300) { // a byte-level BPE tokenizer was written with the checkpoint
      assert.equal(man.tokenizer.kind, 'bpe-bytelevel');
      assert.equal(man.tokenizer.file, 'tokenizer.msbpe');
    } else assert.equal(man.tokenizer.kind, 'none');
    const real = V >= 300 ? V - 4 : V;
    assert.equal(man.tokenizer.vocab_size, real);
    assert.equal(man.tokenizer.bos_token_id, null);
    assert.deepEqual(man.tokenizer.eos_token_ids, [V - 8, V - 10]);
    const ids = Array.from({ length: 70 }, (_, i) => (i * 97 + 5) % real);
    const model = await loadModel(out);
    // against the reference on the converted weights (which hold the BF16-rounded values) ...
    const wConv = worstRel(model, new Reference(out).run(ids), ids);
    assert.ok(wConv < 1e-4, `converted vs reference: ${wConv}`);
    // ... and against the original f32 weights: exact for F32 sources, BF16 rounding otherwise
    const wOrig = worstRel(model, new Reference(src).run(ids), ids);
    assert.ok(dtype === 'F32' ? wOrig < 1e-4 : wOrig < 5e-2, `converted vs original: ${wOrig}`);
    console.log(`# ${cfg} ${dtype}: vs reference ${wConv.toExponential(2)}, vs original weights ${wOrig.toExponential(2)}`);
    // sampling never picks a padded row: even at huge temperature
    for await (const t of model.generate(ids.slice(0, 5), { maxTokens: 30, temperature: 50, seed: 3, stop: [] })) assert.ok(t.id < real);
    if (model.tokenizer) { // the converted tokenizer works: text round-trips and chat renders the Qwen3.5 way
      const text = 'the rain in spain stays mainly';
      assert.equal(model.tokenizer.decode(model.tokenizer.encode(text)), text);
      assert.ok(model.tokenizer.encode(text).length < text.length, 'merges apply');
      assert.equal(model.tokenizer.applyChatTemplate([{ role: 'user', content: 'hi' }]), '<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n');
      assert.deepEqual(model.tokenizer.encode('<|im_start|>x<|im_end|>').filter((i) => i >= V - 10), [V - 9, V - 8]);
    }
    model.dispose();
    // native converter writes the same files
    const nat = tmpDir('hf-nat');
    execFileSync(NATIVE, ['convert', hf, '--out', nat], { stdio: 'pipe' });
    for (const f of fs.readdirSync(out)) assert.ok(fs.readFileSync(path.join(out, f)).equals(fs.readFileSync(path.join(nat, f))), f);
  });
}

test('HF Qwen3-style llama checkpoint: q/k norm detected, untied head, quantized output', async () => {
  const src = synth('llama-qk');
  const hf = tmpDir('hf-llama');
  writeHfCheckpoint(src, hf, { dtype: 'BF16' });
  const out = convert(hf);
  const man = JSON.parse(fs.readFileSync(path.join(out, 'manifest.json'), 'utf8'));
  assert.equal(man.family, 'llama');
  assert.equal(man.config.use_qk_norm, true);
  assert.ok(man.tensors.some((t) => t.name === 'layers.0.self_attn.q_norm'));
  const model = await loadModel(out);
  const ids = Array.from({ length: 20 }, (_, i) => (i * 13) % 150);
  assert.ok(worstRel(model, new Reference(out).run(ids), ids) < 1e-4);
  model.dispose();
  const q8 = convert(hf, ['--dtype', 'q8', '--embed-dtype', 'f16']);
  const m8 = JSON.parse(fs.readFileSync(path.join(q8, 'manifest.json'), 'utf8'));
  assert.equal(m8.tensors.find((t) => t.name === 'layers.1.mlp.up_proj').dtype, 'q8_0');
  assert.equal(m8.tensors.find((t) => t.name === 'embed_tokens').dtype, 'f16');
  assert.equal(m8.tensors.find((t) => t.name === 'layers.1.input_layernorm').dtype, 'f32');
  const mq = await loadModel(q8);
  const r = mq.forward(ids);
  assert.ok(r.logits.every(Number.isFinite));
  mq.dispose();
});

test('weights/qwen3.5-0.8b.sh converts a downloaded folder (its offline half)', () => {
  const src = synth('qwen35-a');
  const hf = tmpDir('hf-script');
  writeHfCheckpoint(src, hf, { dtype: 'BF16', shards: 2 });
  const out = tmpDir('hf-script-out');
  execFileSync('bash', [path.join(ROOT, 'weights/qwen3.5-0.8b.sh'), '--from', hf, '--out', out, '--dtype', 'q8', '--embed-dtype', 'f16'], { stdio: 'pipe' });
  const man = JSON.parse(fs.readFileSync(path.join(out, 'manifest.json'), 'utf8'));
  assert.equal(man.family, 'qwen3_5');
  assert.equal(man.tensors.find((t) => t.name === 'layers.0.mlp.gate_proj').dtype, 'q8_0');
  assert.equal(man.tensors.find((t) => t.name === 'embed_tokens').dtype, 'f16');
});
