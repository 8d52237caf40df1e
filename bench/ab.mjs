#!/usr/bin/env node
// A/B of two builds of the engine on one model: each measurement runs in a fresh Node process,
// the two builds take turns (A B, B A, A B, ...), and the median of each is printed. Two models
// loaded into one process are not on equal terms (the one loaded second runs 3-6% faster here,
// docs/decisions.md), which is why this does not load both into one process.
//   node bench/ab.mjs --a ROOT_A --b ROOT_B --model DIR [--threads 1] [--prefill 512 | --decode 64 [--after 20]] [--rounds 5]
// --after P: the decode steps follow a P-token prompt (long-context decode).
// ROOT_A / ROOT_B: checkouts whose js/index.js and build/wasm/ are built (e.g. a `git worktree`).
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const args = process.argv.slice(2);
const opt = (k, d) => { const i = args.indexOf(k); return i >= 0 ? args[i + 1] : d; };

if (args.includes('--child')) {
  const { loadModel } = await import(path.resolve(opt('--root'), 'js/index.js'));
  const threads = Number(opt('--threads', 1)), prefill = Number(opt('--prefill', 0)), decode = Number(opt('--decode', 0));
  const after = Number(opt('--after', 20));
  const m = await loadModel(opt('--model'), { int8Activations: true, threads, contextLength: Math.max(prefill, 32, after) + decode + 1 });
  const V = m.info().config.vocab_size;
  const ids = Array.from({ length: Math.max(prefill, 32, after) }, (_, i) => (i * 7919 + 13) % V);
  m.forward(ids.slice(0, 32), { stats: false }); // warm-up: V8 compiles the hot functions
  let tps;
  if (decode) {
    m.forward(ids.slice(0, after), { stats: false });
    const t0 = performance.now();
    for (let i = 0; i < decode; i++) m.forward([(i * 31 + 7) % V], { stats: false, continue: true });
    tps = decode / ((performance.now() - t0) / 1000);
  } else {
    const t0 = performance.now();
    m.forward(ids.slice(0, prefill), { stats: false });
    tps = prefill / ((performance.now() - t0) / 1000);
  }
  m.dispose();
  console.log(JSON.stringify({ tps }));
} else {
  const roots = { A: opt('--a'), B: opt('--b') }, model = opt('--model');
  if (!roots.A || !roots.B || !model) { console.error('usage: node bench/ab.mjs --a ROOT_A --b ROOT_B --model DIR [--threads N] [--prefill 512 | --decode 64 [--after P]] [--rounds 5]'); process.exit(2); }
  const decode = opt('--decode'), after = opt('--after', '20');
  const what = decode ? ['--decode', decode, '--after', after] : ['--prefill', opt('--prefill', '512')];
  const rounds = Number(opt('--rounds', 5)), res = { A: [], B: [] };
  for (let r = 0; r < rounds; r++)
    for (const k of r % 2 ? ['B', 'A'] : ['A', 'B']) {
      const out = execFileSync(process.execPath, [fileURLToPath(import.meta.url), '--child', '--root', roots[k], '--model', model, '--threads', opt('--threads', '1'), ...what], { encoding: 'utf8' });
      res[k].push(JSON.parse(out.trim().split('\n').pop()).tps);
    }
  const med = (a) => [...a].sort((x, y) => x - y)[a.length >> 1];
  for (const k of ['A', 'B']) console.log(`${k} ${roots[k]}: ${decode ? `decode ${decode} (after ${after})` : `prefill ${what[1]}`} tokens, ${opt('--threads', '1')} thread(s): median ${med(res[k]).toFixed(2)} tok/s (${res[k].map((x) => x.toFixed(2)).join(' ')})`);
  console.log(`B / A = ${(med(res.B) / med(res.A)).toFixed(3)}`);
}
