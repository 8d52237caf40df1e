// Writes synthetic Hugging Face checkpoints (config.json + safetensors, single or index-sharded,
// F32 or BF16, real Qwen3.5 tensor names including the vision and MTP tensors a converter must
// skip) from one of our f32 weight sets. Used only by tests.
import fs from 'node:fs';
import path from 'node:path';

function bf16Bits(f) {
  const b = new DataView(new ArrayBuffer(4));
  b.setFloat32(0, f);
  const x = b.getUint32(0);
  return ((x + 0x7fff + ((x >> 16) & 1)) >>> 16) & 0xffff; // round to nearest even
}

export function byteToUnicode() {
  const keep = (b) => (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || b >= 0xae;
  const out = [];
  let k = 0;
  for (let b = 0; b < 256; b++) out[b] = String.fromCodePoint(keep(b) ? b : 0x100 + k++);
  return out;
}

function hfName(family, name, layout) {
  if (name === 'lm_head') return 'lm_head.weight';
  const bare = /linear_attn\.(dt_bias|A_log)$/.test(name);
  const prefix = family === 'qwen3_5' || layout === 'multimodal' ? 'model.language_model.' : 'model.';
  return prefix + name + (bare ? '' : '.weight');
}

/** The weight set's tensors with HF names, each read from its shard only when written (a 0.8B
 * checkpoint is gigabytes): f32 tensors become BF16 when asked (rounded to nearest even), bf16
 * tensors pass through as BF16.
 * @returns {{man: any, tensors: {name, dtype, shape, bytes: number, read: () => Uint8Array}[]}} */
function tensorsOf(dir, dtype, family, layout) {
  const man = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
  const files = man.shards.map((s) => path.join(dir, s.file));
  const raw = (t) => {
    const fd = fs.openSync(files[t.shard], 'r'), b = Buffer.alloc(t.bytes);
    try { fs.readSync(fd, b, 0, t.bytes, t.offset); } finally { fs.closeSync(fd); }
    return new Uint8Array(b.buffer, b.byteOffset, b.length);
  };
  const out = [];
  for (const t of man.tensors) {
    if (t.dtype !== 'f32' && t.dtype !== 'bf16') throw new Error('hf-writer needs an f32 (or bf16) weight set');
    const keepF32 = /linear_attn\.(A_log|norm)$/.test(t.name); // as in the real checkpoint
    const name = hfName(family, t.name, layout);
    if (t.dtype === 'bf16') { out.push({ name, dtype: 'BF16', shape: t.shape, bytes: t.bytes, read: () => raw(t) }); continue; }
    if (dtype === 'BF16' && !keepF32) {
      out.push({ name, dtype: 'BF16', shape: t.shape, bytes: t.bytes / 2, read: () => {
        const b = raw(t), f = new Float32Array(b.buffer, b.byteOffset, b.length / 4), u = new Uint16Array(f.length);
        for (let i = 0; i < f.length; i++) u[i] = bf16Bits(f[i]);
        return new Uint8Array(u.buffer);
      } });
    } else out.push({ name, dtype: 'F32', shape: t.shape, bytes: t.bytes, read: () => raw(t) });
  }
  return { man, tensors: out };
}

const sizeOf = (t) => t.data ? t.data.length : t.bytes;
const bytesOf = (t) => t.data ?? t.read();

/** The 8-byte length and the JSON header of a safetensors file for these tensors (padded to `align`). */
function headerOf(tensors, { metadata = { format: 'pt' }, align = 8 } = {}) {
  const header = { __metadata__: metadata };
  let off = 0;
  for (const t of tensors) { header[t.name] = { dtype: t.dtype, shape: t.shape, data_offsets: [off, off + sizeOf(t)] }; off += sizeOf(t); }
  let h = JSON.stringify(header);
  while ((8 + Buffer.byteLength(h)) % align) h += ' ';
  const hb = Buffer.from(h), len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(hb.length), 0);
  return Buffer.concat([len, hb]);
}

/** A safetensors file written tensor by tensor (only one tensor's bytes in memory at a time). */
export function writeSafetensors(file, tensors, opts) {
  const fd = fs.openSync(file, 'w');
  try {
    fs.writeSync(fd, headerOf(tensors, opts));
    for (const t of tensors) fs.writeSync(fd, bytesOf(t));
  } finally { fs.closeSync(fd); }
}

/** The same file as bytes in memory (for small, hand-made bad inputs). */
export function safetensorsBytes(tensors, opts) {
  return Buffer.concat([headerOf(tensors, opts), ...tensors.map((t) => Buffer.from(bytesOf(t)))]);
}

function extras(family, layout) {
  if (family !== 'qwen3_5' && layout !== 'multimodal') return [];
  const r = (n, dt, shape) => {
    const count = shape.reduce((a, b) => a * b, 1) * (dt === 'F32' ? 4 : dt === 'I64' ? 8 : 2);
    const d = new Uint8Array(count);
    for (let i = 0; i < count; i++) d[i] = (i * 37 + 11) & 255;
    return { name: n, dtype: dt, shape, data: d };
  };
  if (family === 'gemma3') return [ // Gemma3ForConditionalGeneration: a SigLIP tower and the projector
    r('model.vision_tower.vision_model.embeddings.patch_embedding.weight', 'BF16', [8, 3, 2, 2]),
    r('model.vision_tower.vision_model.encoder.layers.0.mlp.fc1.bias', 'F32', [8]),
    r('model.vision_tower.vision_model.post_layernorm.weight', 'BF16', [8]),
    r('model.multi_modal_projector.mm_input_projection_weight', 'BF16', [8, 16]),
    r('model.multi_modal_projector.mm_soft_emb_norm.weight', 'BF16', [8]),
  ];
  return [
    r('model.visual.patch_embed.proj.weight', 'BF16', [8, 3, 2, 4, 4]),
    r('model.visual.patch_embed.proj.bias', 'F32', [8]),
    r('model.visual.blocks.0.attn.qkv.weight', 'BF16', [24, 8]),
    r('model.visual.merger.linear_fc2.weight', 'BF16', [16, 8]),
    r('model.visual.pos_embed.position_ids', 'I64', [4]),
    r('mtp.fc.weight', 'BF16', [8, 16]),
    r('mtp.layers.0.self_attn.q_proj.weight', 'BF16', [16, 8]),
    r('mtp.norm.weight', 'BF16', [8]),
  ];
}

/**
 * @param {string} synthDir an f32 weight set (from `mlpscope synth`)
 * @param {string} outDir
 * @param {{dtype?: 'F32'|'BF16', shards?: number, tokenizer?: boolean, layout?: 'causal'|'multimodal'}} [opts]
 *   layout (Gemma 3): Gemma3ForCausalLM ("model.X") or Gemma3ForConditionalGeneration
 *   ("model.language_model.X", a text_config, vision tensors to skip)
 */
export function writeHfCheckpoint(synthDir, outDir, { dtype = 'F32', shards = 1, tokenizer = true, tokenizerMinVocab = 300, layout = 'causal' } = {}) {
  fs.mkdirSync(outDir, { recursive: true });
  const fam0 = JSON.parse(fs.readFileSync(path.join(synthDir, 'manifest.json'), 'utf8')).family;
  const { man, tensors } = tensorsOf(synthDir, dtype, fam0, layout);
  const all = [...tensors, ...extras(man.family, layout)];
  const c = { ...man.config };
  let config;
  if (man.family === 'gemma3') {
    delete c.rope_layout; delete c.partial_rotary_factor;
    const text = { ...c, model_type: 'gemma3_text', attention_bias: false, attn_logit_softcapping: null, final_logit_softcapping: null,
      use_bidirectional_attention: false, eos_token_id: [c.vocab_size - 9, c.vocab_size - 7], bos_token_id: 2, pad_token_id: 0 };
    config = layout === 'multimodal'
      ? { architectures: ['Gemma3ForConditionalGeneration'], model_type: 'gemma3', text_config: text, boi_token_index: 5, image_token_index: 6,
        mm_tokens_per_image: 4, vision_config: { model_type: 'siglip_vision_model', hidden_size: 8, num_hidden_layers: 1 } }
      : { architectures: ['Gemma3ForCausalLM'], ...text };
  } else if (man.family === 'qwen3_5') {
    const tied = c.tie_word_embeddings;
    delete c.rope_layout;
    const rope_parameters = { rope_type: 'default', rope_theta: c.rope_theta, partial_rotary_factor: c.partial_rotary_factor, mrope_section: [2, 1, 1], mrope_interleaved: true };
    delete c.rope_theta; delete c.partial_rotary_factor;
    config = { architectures: ['Qwen3_5ForConditionalGeneration'], model_type: 'qwen3_5', tie_word_embeddings: tied,
      image_token_id: 5, text_config: { ...c, model_type: 'qwen3_5_text', rope_parameters, attn_output_gate: true, eos_token_id: c.vocab_size - 9 },
      vision_config: { depth: 1, hidden_size: 8, model_type: 'qwen3_5' } };
  } else {
    delete c.rope_layout; delete c.use_qk_norm; delete c.partial_rotary_factor;
    config = { architectures: ['Qwen3ForCausalLM'], model_type: 'qwen3', ...c, eos_token_id: c.vocab_size - 9 };
  }
  fs.writeFileSync(path.join(outDir, 'config.json'), JSON.stringify(config, null, 2));
  if (shards <= 1) writeSafetensors(path.join(outDir, 'model.safetensors'), all);
  else {
    const weight_map = {};
    const per = Math.ceil(all.length / shards);
    for (let s = 0; s < shards; s++) {
      const part = all.slice(s * per, (s + 1) * per);
      const file = `model-${String(s + 1).padStart(5, '0')}-of-${String(shards).padStart(5, '0')}.safetensors`;
      writeSafetensors(path.join(outDir, file), part);
      for (const t of part) weight_map[t.name] = file;
    }
    fs.writeFileSync(path.join(outDir, 'model.safetensors.index.json'), JSON.stringify({ metadata: { total_size: 0 }, weight_map }, null, 2));
  }
  if (tokenizer && c.vocab_size < tokenizerMinVocab) {
    // too few rows for 256 byte tokens: no tokenizer, only the stop tokens
    const V = c.vocab_size;
    fs.writeFileSync(path.join(outDir, 'generation_config.json'), JSON.stringify({ eos_token_id: [V - 8, V - 10] }));
  } else if (tokenizer) {
    // a byte-level BPE tokenizer.json (Qwen3.5 pattern) whose real vocabulary ends 4 rows before
    // the embedding's: 256 byte tokens, merges of letter pairs, 6 added tokens, then padding
    const V = c.vocab_size;
    const b2u = byteToUnicode();
    const vocab = {};
    for (let b = 0; b < 256; b++) vocab[b2u[b]] = b;
    const merges = [];
    const letters = 'etaoinshrdlucmfwypvbgkqjxz';
    let id = 256;
    outer: for (const x of letters) for (const y of letters) {
      if (id >= V - 10) break outer;
      vocab[x + y] = id++;
      merges.push([x, y]);
    }
    const names = ['<|endoftext|>', '<|im_start|>', '<|im_end|>', '<think>', '</think>', '<|pad|>'];
    const added_tokens = names.map((content, k) => ({ id: V - 10 + k, content, special: k < 3 || k === 5, lstrip: false, rstrip: false, normalized: false, single_word: false }));
    const pattern = String.raw`(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`;
    fs.writeFileSync(path.join(outDir, 'tokenizer.json'), JSON.stringify({
      version: '1.0', added_tokens, normalizer: { type: 'NFC' },
      pre_tokenizer: { type: 'Sequence', pretokenizers: [{ type: 'Split', pattern: { Regex: pattern }, behavior: 'Isolated', invert: false }, { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: false }] },
      decoder: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: false },
      model: { type: 'BPE', dropout: null, unk_token: null, byte_fallback: false, ignore_merges: false, vocab, merges } }));
    fs.writeFileSync(path.join(outDir, 'tokenizer_config.json'), JSON.stringify({ add_bos_token: false, bos_token: null,
      chat_template: QWEN35_LIKE_TEMPLATE }));
    fs.writeFileSync(path.join(outDir, 'generation_config.json'), JSON.stringify({ eos_token_id: [V - 8, V - 10] }));
  }
  return { config, tensors: all };
}

/** A ChatML template with Qwen3.5's thinking switch (non-thinking by default), written for the tests:
 *  the engine recognises it and must render it exactly as @huggingface/jinja does. */
export const QWEN35_LIKE_TEMPLATE = "{%- for message in messages %}{{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>\\n' }}{%- endfor %}" +
  "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- if enable_thinking is defined and enable_thinking is true %}{{- '<think>\\n' }}" +
  "{%- else %}{{- '<think>\\n\\n</think>\\n\\n' }}{%- endif %}{%- endif %}";
