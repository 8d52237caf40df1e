// The bad-input catalogue: each case builds a broken input from a good one and names the typed
// error it must produce. tests/bad-inputs.test.js runs every file case through the wasm build
// (CLI / loadModel), the native build and the ASan+UBSan native build.
import fs from 'node:fs';
import path from 'node:path';
import { safetensorsBytes } from '../hf-writer.js';

const rd = (d, f) => fs.readFileSync(path.join(d, f));
const wr = (d, f, b) => fs.writeFileSync(path.join(d, f), b);
const json = (d, f) => JSON.parse(rd(d, f).toString());
const wjson = (d, f, o) => wr(d, f, JSON.stringify(o));

/** Rewrites model.safetensors' JSON header with edit(header) (data untouched unless given). */
function editHeader(d, edit, { lenDelta = 0, raw } = {}) {
  const b = rd(d, 'model.safetensors');
  const n = Number(b.readBigUInt64LE(0));
  const header = JSON.parse(b.subarray(8, 8 + n).toString());
  const data = b.subarray(8 + n);
  let h = raw ?? JSON.stringify(edit(header) ?? header);
  // keep the data offset unchanged by padding/truncating the header text to n bytes when possible
  if (Buffer.byteLength(h) < n) h += ' '.repeat(n - Buffer.byteLength(h));
  const hb = Buffer.from(h);
  const out = Buffer.alloc(8 + hb.length + data.length);
  out.writeBigUInt64LE(BigInt(hb.length + lenDelta), 0);
  hb.copy(out, 8);
  data.copy(out, 8 + hb.length);
  wr(d, 'model.safetensors', out);
}
const firstText = (h) => Object.keys(h).find((k) => k.startsWith('model.language_model.layers.0.mlp.up_proj'));

/** Safetensors / Hugging Face folder cases: input = a valid single-file HF checkpoint folder. */
export const hfCases = [
  { id: 'st-header-len-past-eof', code: 'E_CHECKPOINT', match: /header length .* impossible/, build: (d) => { const b = rd(d, 'model.safetensors'); b.writeBigUInt64LE(BigInt(b.length), 0); wr(d, 'model.safetensors', b); } },
  { id: 'st-header-len-tiny', code: 'E_CHECKPOINT', match: /impossible/, build: (d) => { const b = rd(d, 'model.safetensors'); b.writeBigUInt64LE(1n, 0); wr(d, 'model.safetensors', b); } },
  { id: 'st-header-len-huge', code: 'E_CHECKPOINT', match: /impossible/, build: (d) => { const b = rd(d, 'model.safetensors'); b.writeBigUInt64LE(0xffffffffffffn, 0); wr(d, 'model.safetensors', b); } },
  { id: 'st-file-4-bytes', code: 'E_CHECKPOINT', match: /too short/, build: (d) => wr(d, 'model.safetensors', Buffer.from([1, 2, 3, 4])) },
  { id: 'st-header-not-json', code: 'E_CHECKPOINT', match: /not valid JSON/, build: (d) => editHeader(d, null, { raw: '{"a": [1, 2' }) },
  { id: 'st-header-array', code: 'E_CHECKPOINT', match: /not a JSON object/, build: (d) => editHeader(d, null, { raw: '[1, 2, 3]' }) },
  { id: 'st-dtype-missing', code: 'E_CHECKPOINT', match: /unknown dtype/, build: (d) => editHeader(d, (h) => { delete h[firstText(h)].dtype; }) },
  { id: 'st-dtype-unknown', code: 'E_CHECKPOINT', match: /unknown dtype "F12"/, build: (d) => editHeader(d, (h) => { h[firstText(h)].dtype = 'F12'; }) },
  { id: 'st-shape-negative', code: 'E_CHECKPOINT', match: /bad dimension/, build: (d) => editHeader(d, (h) => { h[firstText(h)].shape[0] = -4; }) },
  { id: 'st-shape-fraction', code: 'E_CHECKPOINT', match: /bad dimension/, build: (d) => editHeader(d, (h) => { h[firstText(h)].shape[0] = 2.5; }) },
  { id: 'st-shape-overflow', code: 'E_CHECKPOINT', match: /(overflows|bad dimension)/, build: (d) => editHeader(d, (h) => { h[firstText(h)].shape = [2 ** 40, 2 ** 40, 2 ** 40]; }) },
  { id: 'st-offsets-reversed', code: 'E_CHECKPOINT', match: /outside/, build: (d) => editHeader(d, (h) => { const o = h[firstText(h)].data_offsets; h[firstText(h)].data_offsets = [o[1], o[0]]; }) },
  { id: 'st-offsets-past-data', code: 'E_CHECKPOINT', match: /outside/, build: (d) => editHeader(d, (h) => { h[firstText(h)].data_offsets[1] += 1e9; }) },
  { id: 'st-bytes-vs-shape', code: 'E_CHECKPOINT', match: /bytes for/, build: (d) => editHeader(d, (h) => { h[firstText(h)].shape[0] -= 1; }) },
  { id: 'st-overlap', code: 'E_CHECKPOINT', match: /overlap/, build: (d) => editHeader(d, (h) => { const ks = Object.keys(h).filter((k) => k !== '__metadata__'); h[ks[1]].data_offsets = [...h[ks[0]].data_offsets]; h[ks[1]].shape = [...h[ks[0]].shape]; h[ks[1]].dtype = h[ks[0]].dtype; }) },
  { id: 'st-truncated-data', code: 'E_CHECKPOINT', match: /outside/, build: (d) => { const b = rd(d, 'model.safetensors'); wr(d, 'model.safetensors', b.subarray(0, b.length - 100)); } },
  { id: 'st-needed-tensor-u32', code: 'E_CHECKPOINT', match: /dtype U32 is not supported/, build: (d) => editHeader(d, (h) => { h[firstText(h)].dtype = 'U32'; }) },
  { id: 'hf-missing-tensor', code: 'E_TENSOR', match: /layers\.1\.mlp\.down_proj: missing/, build: (d) => { const b = rd(d, 'model.safetensors'); const n = Number(b.readBigUInt64LE(0)); const h = JSON.parse(b.subarray(8, 8 + n).toString()); delete h['model.language_model.layers.1.mlp.down_proj.weight']; editHeader(d, () => h); } },
  { id: 'hf-wrong-shape', code: 'E_TENSOR', match: /shape \[.*\] in the checkpoint, the config needs/, build: (d) => { const c = json(d, 'config.json'); c.text_config.intermediate_size += 32; wjson(d, 'config.json', c); } },
  { id: 'hf-unexpected-tensor', code: 'E_TENSOR', match: /side_proj\.weight: not part of a qwen3_5 model/, build: (d) => editHeader(d, (h) => { h['model.language_model.layers.0.mlp.side_proj.weight'] = { dtype: 'F32', shape: [0], data_offsets: [0, 0] }; }) },
  { id: 'hf-untied-without-head', code: 'E_TENSOR', match: /lm_head\.weight: missing/, build: (d) => { const c = json(d, 'config.json'); c.tie_word_embeddings = false; c.text_config.tie_word_embeddings = false; wjson(d, 'config.json', c); } },
  { id: 'hf-config-missing', code: 'E_CONFIG', match: /config\.json: cannot open/, build: (d) => fs.rmSync(path.join(d, 'config.json')) },
  { id: 'hf-config-model-type', code: 'E_CONFIG', match: /model_type "gpt_neox" is not supported/, build: (d) => wjson(d, 'config.json', { model_type: 'gpt_neox', hidden_size: 8 }) },
  { id: 'hf-config-layer-type', code: 'E_CONFIG', match: /layer_types\[1\]/, build: (d) => { const c = json(d, 'config.json'); c.text_config.layer_types = c.text_config.layer_types.map((t, i) => (i === 1 ? 'mamba' : t)); wjson(d, 'config.json', c); } },
  { id: 'hf-nan-weight', code: 'E_TENSOR', match: /not finite/, build: (d) => { const b = rd(d, 'model.safetensors'); const n = Number(b.readBigUInt64LE(0)); const h = JSON.parse(b.subarray(8, 8 + n).toString()); const t = h['model.language_model.layers.0.mlp.gate_proj.weight']; b.writeFloatLE(NaN, 8 + n + t.data_offsets[0] + 40); wr(d, 'model.safetensors', b); } },
  { id: 'hf-index-missing-file', code: 'E_CHECKPOINT', match: /model-00002-of-00002\.safetensors: cannot open/, build: (d) => { const b = rd(d, 'model.safetensors'); const n = Number(b.readBigUInt64LE(0)); const h = JSON.parse(b.subarray(8, 8 + n).toString()); const wm = {}; for (const k of Object.keys(h)) if (k !== '__metadata__') wm[k] = 'model.safetensors'; wm[Object.keys(wm)[0]] = 'model-00002-of-00002.safetensors'; wjson(d, 'model.safetensors.index.json', { weight_map: wm }); } },
  { id: 'hf-index-path-traversal', code: 'E_CHECKPOINT', match: /bad file name/, build: (d) => wjson(d, 'model.safetensors.index.json', { weight_map: { 'model.language_model.norm.weight': '../../etc/passwd' } }) },
  { id: 'hf-index-not-json', code: 'E_CHECKPOINT', match: /index\.json/, build: (d) => wr(d, 'model.safetensors.index.json', '{"weight_map": {') },
];

/** Weight-set cases: input = a valid f32 weight set (qwen3_5 synthetic, with no tokenizer). */
const man = (d) => json(d, 'manifest.json');
const setMan = (d, m) => wjson(d, 'manifest.json', m);
const editMan = (f) => (d) => { const m = man(d); f(m); setMan(d, m); };
const tensor = (m, name) => m.tensors.find((t) => t.name === name);
export const weightCases = [
  { id: 'ws-not-json', code: 'E_MANIFEST', match: /manifest\.json/, build: (d) => wr(d, 'manifest.json', '{"format": "mlpscope-weights",') },
  { id: 'ws-no-manifest', code: 'E_MANIFEST', build: (d) => fs.rmSync(path.join(d, 'manifest.json')) },
  { id: 'ws-format', code: 'E_MANIFEST', match: /format/, build: editMan((m) => { m.format = 'gguf'; }) },
  { id: 'ws-version', code: 'E_MANIFEST', match: /version/, build: editMan((m) => { m.version = 7; }) },
  { id: 'ws-family', code: 'E_CONFIG', match: /unknown family "mamba"/, build: editMan((m) => { m.family = 'mamba'; }) },
  { id: 'ws-wrong-family', code: 'E_TENSOR', match: /not part of a llama model/, build: editMan((m) => { m.family = 'llama'; }) },
  { id: 'ws-config-missing', code: 'E_MANIFEST', match: /config/, build: editMan((m) => { delete m.config; }) },
  { id: 'ws-negative-dim', code: 'E_CONFIG', match: /hidden_size/, build: editMan((m) => { m.config.hidden_size = -64; }) },
  { id: 'ws-huge-dim', code: 'E_CONFIG', match: /vocab_size/, build: editMan((m) => { m.config.vocab_size = 2 ** 33; }) },
  { id: 'ws-missing-tensor', code: 'E_TENSOR', match: /layers\.2\.mlp\.up_proj: missing/, build: editMan((m) => { m.tensors = m.tensors.filter((t) => t.name !== 'layers.2.mlp.up_proj'); }) },
  { id: 'ws-unknown-tensor', code: 'E_TENSOR', match: /layers\.9\.mlp\.up_proj: not part/, build: editMan((m) => { tensor(m, 'layers.2.mlp.up_proj').name = 'layers.9.mlp.up_proj'; }) },
  { id: 'ws-duplicate-tensor', code: 'E_TENSOR', match: /listed twice/, build: editMan((m) => { m.tensors.push({ ...tensor(m, 'norm') }); }) },
  { id: 'ws-shape', code: 'E_TENSOR', match: /shape mismatch/, build: editMan((m) => { tensor(m, 'layers.0.mlp.gate_proj').shape = [176, 65]; }) },
  { id: 'ws-shape-rank', code: 'E_TENSOR', match: /3 dimensions/, build: editMan((m) => { tensor(m, 'layers.0.linear_attn.conv1d').shape = [192, 4]; }) },
  { id: 'ws-shape-overflow', code: 'E_TENSOR', match: /shape mismatch/, build: editMan((m) => { tensor(m, 'embed_tokens').shape = [2 ** 40, 2 ** 40]; }) },
  { id: 'ws-dtype-unknown', code: 'E_TENSOR', match: /unknown dtype "f8"/, build: editMan((m) => { tensor(m, 'norm').dtype = 'f8'; }) },
  { id: 'ws-dtype-not-allowed', code: 'E_TENSOR', match: /must be f32/, build: editMan((m) => { tensor(m, 'layers.0.linear_attn.A_log').dtype = 'bf16'; }) },
  { id: 'ws-bytes', code: 'E_TENSOR', match: /'bytes' must be/, build: editMan((m) => { tensor(m, 'norm').bytes += 4; }) },
  { id: 'ws-misaligned', code: 'E_TENSOR', match: /aligned/, build: editMan((m) => { tensor(m, 'norm').offset += 4; }) },
  { id: 'ws-outside-shard', code: 'E_TENSOR', match: /outside shard/, build: editMan((m) => { tensor(m, 'norm').offset = Math.ceil(m.shards[0].bytes / 64) * 64; }) },
  { id: 'ws-overlap', code: 'E_TENSOR', match: /overlaps/, build: editMan((m) => { tensor(m, 'norm').offset = tensor(m, 'embed_tokens').offset; }) },
  { id: 'ws-shard-index', code: 'E_TENSOR', match: /'shard'/, build: editMan((m) => { tensor(m, 'norm').shard = 3; }) },
  { id: 'ws-negative-offset', code: 'E_TENSOR', match: /'offset'/, build: editMan((m) => { tensor(m, 'norm').offset = -64; }) },
  { id: 'ws-shard-name-path', code: 'E_MANIFEST', match: /plain file name/, build: editMan((m) => { m.shards[0].file = '../../etc/passwd'; }) },
  { id: 'ws-shard-hash-format', code: 'E_MANIFEST', match: /sha256/, build: editMan((m) => { m.shards[0].sha256 = 'xyz'; }) },
  { id: 'ws-shard-missing', code: 'E_SHARD_MISSING', match: /model-00001-of-00001\.bin/, build: (d) => fs.rmSync(path.join(d, 'model-00001-of-00001.bin')) },
  { id: 'ws-shard-short', code: 'E_SHARD_SIZE', match: /model-00001-of-00001\.bin/, build: (d) => { const b = rd(d, 'model-00001-of-00001.bin'); wr(d, 'model-00001-of-00001.bin', b.subarray(0, b.length - 1)); } },
  { id: 'ws-shard-long', code: 'E_SHARD_SIZE', match: /model-00001-of-00001\.bin/, build: (d) => { const b = rd(d, 'model-00001-of-00001.bin'); wr(d, 'model-00001-of-00001.bin', Buffer.concat([b, Buffer.alloc(3)])); } },
  { id: 'ws-shard-zero-length', code: 'E_SHARD_SIZE', match: /model-00001-of-00001\.bin/, build: (d) => wr(d, 'model-00001-of-00001.bin', Buffer.alloc(0)) },
  { id: 'ws-shard-flipped-byte', code: 'E_SHARD_HASH', match: /model-00001-of-00001\.bin/, build: (d) => { const b = rd(d, 'model-00001-of-00001.bin'); b[b.length >> 1] ^= 0x10; wr(d, 'model-00001-of-00001.bin', b); } },
  { id: 'ws-nan-weight', code: 'E_TENSOR', match: /layers\.0\.mlp\.up_proj: value 5 is not finite/, build: (d) => {
    const m = man(d); const t = tensor(m, 'layers.0.mlp.up_proj'); const b = rd(d, m.shards[t.shard].file); b.writeFloatLE(NaN, t.offset + 20); wr(d, m.shards[t.shard].file, b);
    m.shards[t.shard].sha256 = sha256(b); setMan(d, m); } },
  { id: 'ws-inf-weight', code: 'E_TENSOR', match: /norm: value 0 is not finite/, build: (d) => {
    const m = man(d); const t = tensor(m, 'norm'); const b = rd(d, m.shards[t.shard].file); b.writeFloatLE(-Infinity, t.offset); wr(d, m.shards[t.shard].file, b);
    m.shards[t.shard].sha256 = sha256(b); setMan(d, m); } },
  { id: 'ws-eos-out-of-range', code: 'E_MANIFEST', match: /eos_token_ids/, build: editMan((m) => { m.tokenizer = { kind: 'none', vocab_size: 300, eos_token_ids: [300] }; }) },
  { id: 'ws-tokenizer-vocab', code: 'E_MANIFEST', match: /vocab_size/, build: editMan((m) => { m.tokenizer = { kind: 'none', vocab_size: 100000 }; }) },
  { id: 'ws-chat-not-object', code: 'E_MANIFEST', match: /tokenizer\.chat must be an object/, build: editMan((m) => { m.tokenizer = { kind: 'none', vocab_size: 300, chat: 'chatml' }; }) },
  { id: 'ws-chat-token-type', code: 'E_MANIFEST', match: /tokenizer\.chat\.eos_token must be a string or null/, build: editMan((m) => { m.tokenizer = { kind: 'none', vocab_size: 300, chat: { template: '{{ x }}', eos_token: 7 } }; }) },
];

import { createHash } from 'node:crypto';
function sha256(b) { return createHash('sha256').update(b).digest('hex'); }
export { safetensorsBytes };

/** Tokenizer cases: input = a folder holding a small valid byte-level tokenizer.json (+ config),
 *  or a weight set with a tokenizer file (kind given per case); run through `tokenize`. */
const tj = (d) => json(d, 'tokenizer.json');
const editTj = (f) => (d) => { const t = tj(d); f(t); wjson(d, 'tokenizer.json', t); };
export const tokenizerJsonCases = [
  { id: 'tj-not-json', code: 'E_TOKEN', match: /tokenizer\.json/, build: (d) => wr(d, 'tokenizer.json', '{"model": {"type": "BPE", "vocab": {') },
  { id: 'tj-not-bpe', code: 'E_TOKEN', match: /model\.type "WordPiece" is not supported/, build: editTj((t) => { t.model.type = 'WordPiece'; }) },
  { id: 'tj-byte-fallback', code: 'E_TOKEN', match: /byte_fallback with a ByteLevel pre-tokenizer/, build: editTj((t) => { t.model.byte_fallback = true; }) },
  { id: 'tj-normalizer', code: 'E_TOKEN', match: /normalizer "NFKC"/, build: editTj((t) => { t.normalizer = { type: 'NFKC' }; }) },
  { id: 'tj-pretokenizer', code: 'E_TOKEN', match: /pre-tokenizer Split pattern: .*unsupported escape \\w at offset 0/, build: editTj((t) => { t.pre_tokenizer.pretokenizers[0].pattern.Regex = '\\w+'; }) },
  { id: 'tj-decoder', code: 'E_TOKEN', match: /needs the ByteLevel decoder/, build: editTj((t) => { t.decoder = { type: 'Metaspace' }; }) },
  { id: 'tj-unigram', code: 'E_TOKEN', match: /model\.type "Unigram" is not supported/, build: editTj((t) => { t.model = { type: 'Unigram', unk_id: 0, vocab: [['<unk>', 0]] }; }) },
  { id: 'tj-regex-lookbehind', code: 'E_TOKEN', match: /unsupported group kind .* at offset 2/, build: editTj((t) => { t.pre_tokenizer.pretokenizers[0].pattern.Regex = 'a|(?<=b)c'; }) },
  { id: 'tj-split-behavior', code: 'E_TOKEN', match: /Split has an unknown behavior/, build: editTj((t) => { t.pre_tokenizer.pretokenizers[0].behavior = 'Sideways'; }) },
  { id: 'tj-bad-merge', code: 'E_TOKEN', match: /merge 0 .* not in the vocabulary/, build: editTj((t) => { t.model.merges[0] = ['zz', 'qq']; }) },
  { id: 'tj-merge-shape', code: 'E_TOKEN', match: /merge 1 is malformed/, build: editTj((t) => { t.model.merges[1] = ['a']; }) },
  { id: 'tj-duplicate-id', code: 'E_TOKEN', match: /used by two tokens/, build: editTj((t) => { t.model.vocab.zzzz = t.model.vocab.a; }) },
  { id: 'tj-negative-id', code: 'E_TOKEN', match: /bad id/, build: editTj((t) => { t.model.vocab.zzzz = -3; }) },
  { id: 'tj-added-no-content', code: 'E_TOKEN', match: /added token/, build: editTj((t) => { t.added_tokens[0].content = ''; }) },
  { id: 'tj-no-vocab', code: 'E_TOKEN', match: /model\.vocab missing/, build: editTj((t) => { delete t.model.vocab; }) },
];
/** Binary tokenizer files inside a weight set (kind bpe-bytelevel or llama2c): run through tokenize */
const editBin = (file, f) => (d) => { const b = Buffer.from(rd(d, file)); const out = f(b) ?? b; wr(d, file, out); const m = man(d); m.tokenizer.sha256 = sha256(out); m.tokenizer.bytes = out.length; setMan(d, m); };
export const tokenizerBinCases = [
  { id: 'msbpe-truncated', code: 'E_TOKEN', match: /truncated/, build: editBin('tokenizer.msbpe', (b) => b.subarray(0, b.length - 7)) },
  { id: 'msbpe-magic', code: 'E_TOKEN', match: /bad magic/, build: editBin('tokenizer.msbpe', (b) => { b[0] = 0x58; }) },
  { id: 'msbpe-header-only', code: 'E_TOKEN', match: /truncated/, build: editBin('tokenizer.msbpe', (b) => b.subarray(0, 20)) },
  { id: 'msbpe-merge-range', code: 'E_TOKEN', match: /merge 0 refers to a token out of range/, build: editBin('tokenizer.msbpe', (b) => { const nv = b.readUInt32LE(24); let p = 40; for (let i = 0; i < nv; i++) p += 4 + b.readUInt32LE(p); b.writeUInt32LE(0xfffffff, p); }) },
  { id: 'msbpe-merge-concat', code: 'E_TOKEN', match: /does not concatenate/, build: editBin('tokenizer.msbpe', (b) => { const nv = b.readUInt32LE(24); let p = 40; for (let i = 0; i < nv; i++) p += 4 + b.readUInt32LE(p); b.writeUInt32LE(b.readUInt32LE(p + 4), p + 8); }) },
  { id: 'msbpe-trailing', code: 'E_TOKEN', match: /trailing/, build: editBin('tokenizer.msbpe', (b) => Buffer.concat([b, Buffer.from([1, 2, 3])])) },
  { id: 'msbpe-added-dup', code: 'E_TOKEN', match: /listed twice/, build: editBin('tokenizer.msbpe', (b) => { const nv = b.readUInt32LE(24), nm = b.readUInt32LE(28); let p = 40; for (let i = 0; i < nv; i++) p += 4 + b.readUInt32LE(p); p += 12 * nm; const first = b.readUInt32LE(p); p += 12 + b.readUInt32LE(p + 8); b.writeUInt32LE(first, p); }) },
  { id: 'msbpe-flags', code: 'E_TOKEN', match: /unknown flags/, build: editBin('tokenizer.msbpe', (b) => { b.writeUInt32LE(99, 12); }) },
  { id: 'msbpe-vocab-too-big', code: 'E_TOKEN', match: /tokens \(the model has/, build: (d) => { const m = man(d); m.tokenizer.vocab_size = 20; m.tokenizer.eos_token_ids = []; setMan(d, m); } },
  { id: 'msbpe-hash', code: 'E_SHARD_HASH', match: /tokenizer\.msbpe/, build: (d) => { const b = rd(d, 'tokenizer.msbpe'); b[50] ^= 1; wr(d, 'tokenizer.msbpe', b); } },
];
