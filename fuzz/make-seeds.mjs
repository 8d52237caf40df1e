#!/usr/bin/env node
// Writes the small seed corpora in fuzz/corpus/<target>/ from files the project makes itself
// (synthetic weight sets, a synthetic HF checkpoint, the demo tokenizer). Re-run to refresh.
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { safetensorsBytes, writeHfCheckpoint } from '../tests/hf-writer.js';
import { createEngine } from '../js/index.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const C = path.join(root, 'fuzz/corpus');
const tmp = fs.mkdtempSync('/tmp/mlpscope-seeds-');
const put = (t, name, data) => { fs.mkdirSync(path.join(C, t), { recursive: true }); fs.writeFileSync(path.join(C, t, name), data); };
const cli = (...a) => execFileSync(process.execPath, [path.join(root, 'bin/mlpscope.js'), ...a], { stdio: 'pipe' });

for (const cfg of ['qwen35-a', 'llama-hf', 'gemma3-a']) {
  const out = path.join(tmp, cfg);
  cli('synth', '--config', path.join(root, 'tests/configs', cfg + '.json'), '--out', out);
  const man = fs.readFileSync(path.join(out, 'manifest.json'));
  put('manifest', cfg + '.json', man);
  put('json', cfg + '.json', man);
  put('config', cfg + '.json', fs.readFileSync(path.join(root, 'tests/configs', cfg + '.json')));
}
put('json', 'small.json', '{"a": [1, -2.5e3, true, null, "x\\u00e9\\ud83d\\ude00"], "b": {}}');
const f32 = (n) => new Uint8Array(Float32Array.from({ length: n }, (_, i) => Math.sin(i)).buffer);
put('safetensors', 'tiny.safetensors', safetensorsBytes([
  { name: 'model.embed_tokens.weight', dtype: 'F32', shape: [4, 2], data: f32(8) },
  { name: 'model.norm.weight', dtype: 'BF16', shape: [2], data: new Uint8Array(4) },
  { name: 'x', dtype: 'I64', shape: [1], data: new Uint8Array(8) }]));
// llama2.c checkpoint: dim 8, hidden 16, 1 layer, 2 heads, 2 kv heads, vocab 10, seq 4
const hdr = new Int32Array([8, 16, 1, 2, 2, 10, 4]);
const nfloat = 10 * 8 + 8 + 4 * 64 + 8 + 3 * 16 * 8 + 8 + 4 * 4;
put('llama2c_checkpoint', 'tiny.bin', Buffer.concat([Buffer.from(hdr.buffer), Buffer.from(f32(nfloat))]));
// llama2.c tokenizer.bin with 10 tokens (first byte: vocab - 3)
const toks = ['<unk>', '\n<s>\n', '\n</s>\n', 'a', 'b', ' ', 'ab', ' a', '<0x41>', 'ba'];
const parts = [Buffer.from(new Int32Array([6]).buffer)];
toks.forEach((t, i) => { parts.push(Buffer.from(new Float32Array([-i]).buffer), Buffer.from(new Int32Array([Buffer.byteLength(t)]).buffer), Buffer.from(t)); });
put('tokenizer_bin', 'tiny.bin', Buffer.concat([Buffer.from([7]), ...parts]));
// byte-level BPE: tokenizer.json from the synthetic HF writer, its converted binary
const hf = path.join(tmp, 'hf');
writeHfCheckpoint(path.join(tmp, 'qwen35-a'), hf, { dtype: 'F32', tokenizer: true });
put('tokenizer_json', 'qwen35-style.json', fs.readFileSync(path.join(hf, 'tokenizer.json')));
const conv = path.join(tmp, 'conv');
cli('convert', hf, '--out', conv);
put('msbpe', 'qwen35-style.msbpe', Buffer.concat([Buffer.from([0]), fs.readFileSync(path.join(conv, 'tokenizer.msbpe'))]));
// the general pipeline: a small SentencePiece-style file (characters, byte fallback, Prepend +
// Replace, Strip) and a byte-level file with a GPT-4o-like Split (Removed, invert) and a Sequence
// of Isolated Splits; their converted binaries for the msbpe target
const spVocab = { '<unk>': 0, '<s>': 1, '</s>': 2 };
for (let b = 0; b < 256; b++) spVocab[`<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`] = 3 + b;
Object.assign(spVocab, { '▁': 259, a: 260, b: 261, '▁a': 262, ab: 263, '▁ab': 264, 'é': 265 });
const sp = {
  model: { type: 'BPE', unk_token: '<unk>', fuse_unk: true, byte_fallback: true, vocab: spVocab, merges: [['▁', 'a'], ['a', 'b'], ['▁a', 'b']] },
  normalizer: { type: 'Sequence', normalizers: [{ type: 'Prepend', prepend: '▁' }, { type: 'Replace', pattern: { String: ' ' }, content: '▁' }] },
  pre_tokenizer: { type: 'Metaspace', replacement: '▁', prepend_scheme: 'never', split: true },
  decoder: { type: 'Sequence', decoders: [{ type: 'Replace', pattern: { String: '▁' }, content: ' ' }, { type: 'ByteFallback' }, { type: 'Fuse' }, { type: 'Strip', content: ' ', start: 1, stop: 0 }] },
  added_tokens: [{ id: 2, content: '</s>', special: true }, { id: 264, content: '▁ab', special: false }],
};
const blVocab = {};
const byteChar = (b) => { const keep = (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || b >= 0xae; let k = 0; for (let x = 0; x < b; x++) if (!((x >= 0x21 && x <= 0x7e) || (x >= 0xa1 && x <= 0xac) || x >= 0xae)) k++; return String.fromCodePoint(keep ? b : 0x100 + k); };
for (let b = 0; b < 256; b++) blVocab[byteChar(b)] = b;
Object.assign(blVocab, { he: 256, ll: 257, hell: 258, 'Ġw': 259 });
const split = {
  model: { type: 'BPE', ignore_merges: true, vocab: blVocab, merges: ['h e', 'l l', 'he ll', 'Ġ w'] },
  normalizer: null,
  pre_tokenizer: { type: 'Sequence', pretokenizers: [
    { type: 'Split', pattern: { Regex: '\\p{N}{1,3}' }, behavior: 'Isolated', invert: false },
    { type: 'Split', pattern: { Regex: "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?i:'s|'t|'re)?| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+" }, behavior: 'Removed', invert: true },
    { type: 'ByteLevel', add_prefix_space: false, use_regex: false }] },
  decoder: { type: 'ByteLevel' },
  added_tokens: [{ id: 256, content: '<|x|>', special: true }],
};
const engine = await createEngine();
for (const [name, json] of [['sentencepiece', sp], ['split-regex', split]]) {
  const text = JSON.stringify(json);
  put('tokenizer_json', `${name}.json`, text);
  const lp = engine.malloc(8);
  const p = engine.c.tok_import(new TextEncoder().encode(text), new Uint8Array(0), lp);
  put('msbpe', `${name}.msbpe`, Buffer.concat([Buffer.from([0]), Buffer.from(engine.u8.slice(p, p + engine.i32[lp >> 2]))]));
  engine.free(p);
  engine.free(lp);
}
for (const [i, s] of [['(?i:\'s|\'t)|[^\\s\\p{L}]?\\p{L}+|\\s+(?!\\S)|\\s+', "It's a test,  ok?\n"], ['\\p{N}{1,3}|[一-龥]+', '12345 中文'], ['x(?=y)|[^a-c\\x{41}]+?', 'xyz']].entries()) put('regex', `r${i}`, Buffer.concat([Buffer.from(s[0]), Buffer.from([0]), Buffer.from(s[1])]));
for (const [i, s] of ['ab ab', 'é aab  \n', "It's 123 中文中 x!", '</s>ab'].entries()) put('sp_encode', `t${i}.txt`, s);
for (const [i, s] of ['I flew from Paris to Tokyo.', 'hello <|end|> world', 'e\u0301cole 123 ', '注意力\n\n  x', '\u{1f468}\u200d\u{1f469}'].entries()) put('bpe_encode', `t${i}.txt`, s);
put('chat', 'chatml.json', Buffer.concat([Buffer.from([1]), Buffer.from('[{"role":"system","content":"Be brief."},{"role":"user","content":"hi"}]')]));
put('chat', 'qwen35.json', Buffer.concat([Buffer.from([3 | 8]), Buffer.from('[{"role":"user","content":"你好"}]')]));
fs.rmSync(tmp, { recursive: true, force: true });
console.log('seed corpora written to fuzz/corpus');
