#!/usr/bin/env node
// Writes the demo corpus or probe sentences of js/corpus.js (the generator) to a file:
//   node tools/corpus.mjs --seed 1 --docs 200000 --out corpus.txt        training text
//   node tools/corpus.mjs --seed 9 --probes 400 --out probes.jsonl       labelled sentences
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { corpus, probes } from '../js/corpus.js';

export * from '../js/corpus.js';

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const opt = (k, d) => { const i = args.indexOf(k); return i >= 0 ? args[i + 1] : d; };
  const seed = Number(opt('--seed', 1)), out = opt('--out', '-');
  const text = args.includes('--probes')
    ? probes(seed, Number(opt('--probes', 100))).map((p) => JSON.stringify(p)).join('\n') + '\n'
    : corpus(seed, Number(opt('--docs', 1000))).join('\n\n') + '\n';
  if (out === '-') process.stdout.write(text); else fs.writeFileSync(out, text);
}
