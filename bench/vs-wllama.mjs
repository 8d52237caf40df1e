#!/usr/bin/env node
// mlpscope against wllama (llama.cpp compiled to wasm), the peer users would pick instead, on the
// same synthetic Llama-398M shape (hidden 1024, 24 layers, SwiGLU 3584, 8 heads of 128, vocab
// 32000, tied head, q8_0), one thread, in this Node, the two taking turns round after round so
// both see the same machine. Prints each round and the medians with their ratios.
//   node bench/vs-wllama.mjs [--peer DIR] [--rounds 3] [--threads 1]
// DIR is the wllama harness (a package.json pinning @wllama/wllama, node-bench.mjs that runs its
// Node-compatible build, make_gguf.py that writes the GGUF); by default the maintainers' copy in
// the shared folder beside the checkout. It is copied to build/bench/wllama and installed there
// with npm; when that is impossible the script says why and measures mlpscope alone.
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const opt = (k, d) => { const i = args.indexOf(k); return i >= 0 ? args[i + 1] : d; };
const NP = 128, NG = 64;

// ---- one mlpscope measurement (run in a child process, like wllama's): prefill NP tokens, then
// NG tokens, statistics on (the default path); decode speed excludes the first token, as llama.cpp's
if (args[0] === '--measure') {
  const { loadModel } = await import('../js/index.js');
  const m = await loadModel(args[1], { threads: Number(args[2]), contextLength: NP + NG + 8 });
  const V = m.config.vocab_size, ids = Array.from({ length: NP }, (_, i) => (i * 7919 + 13) % V);
  m.forward(ids.slice(0, 16)); // warm-up, like wllama's
  let t = performance.now();
  let r = m.forward(ids, { logits: 'last' });
  const pp = NP / ((performance.now() - t) / 1000);
  let next = 0;
  for (let i = 1; i < V; i++) if (r.logits[i] > r.logits[next]) next = i;
  t = performance.now();
  for (let k = 1; k < NG; k++) { r = m.forward([next], { continue: true }); next = (next * 31 + 7) % V; }
  const tg = (NG - 1) / ((performance.now() - t) / 1000);
  console.log(JSON.stringify({ pp, tg, build: m.info().build }));
  m.dispose();
  process.exit(0);
}

const rounds = Number(opt('--rounds', 3)), threads = Number(opt('--threads', 1));
const model = path.join(root, 'build/bench/llama-398m-q8');
if (!fs.existsSync(path.join(model, 'manifest.json'))) {
  fs.mkdirSync(path.dirname(model), { recursive: true });
  spawnSync(process.execPath, [path.join(root, 'bin/mlpscope.js'), 'synth', '--config', 'llama-398m', '--seed', '1', '--dtype', 'q8', '--out', model], { stdio: 'inherit' });
}

/** Sets up the peer; returns its folder or a sentence saying why it cannot run. */
function setUpPeer() {
  const src = path.resolve(opt('--peer', process.env.MLPSCOPE_WLLAMA ?? path.join(process.env.MLPSCOPE_SHARED ?? path.join(root, '../shared'), 'peers/wllama')));
  if (!fs.existsSync(path.join(src, 'node-bench.mjs'))) return `no wllama harness at ${src} (--peer DIR)`;
  const dir = path.join(root, 'build/bench/wllama');
  if (!fs.existsSync(path.join(dir, 'node_modules/@wllama/wllama'))) {
    fs.cpSync(src, dir, { recursive: true });
    const r = spawnSync('npm', ['install', '--no-audit', '--no-fund'], { cwd: dir, encoding: 'utf8' });
    if (r.status !== 0) return `npm install of the wllama harness failed: ${(r.stderr || r.stdout).trim().split('\n').slice(-3).join(' ')}`;
  }
  const gguf = path.join(dir, 'models/synth-llama-q8_0.gguf');
  if (!fs.existsSync(gguf)) {
    fs.mkdirSync(path.dirname(gguf), { recursive: true });
    const tries = ['python3', '/usr/bin/python3'].map((py) => spawnSync(py, ['make_gguf.py', 'q8_0', gguf], { cwd: dir, encoding: 'utf8' }));
    if (!tries.some((r) => r.status === 0)) return `make_gguf.py failed (it needs numpy: apt-get install python3-numpy): ${(tries[0].stderr || '').trim().split('\n').at(-1)}`;
  }
  return { dir };
}

const peer = setUpPeer();
if (typeof peer === 'string') console.log(`wllama skipped: ${peer}. Measuring mlpscope alone.`);
const rows = [];
for (let k = 0; k < rounds; k++) {
  const row = {};
  if (typeof peer !== 'string') {
    const out = path.join(peer.dir, `results/round-${process.pid}-${k}.json`);
    fs.mkdirSync(path.dirname(out), { recursive: true });
    const r = spawnSync(process.execPath, ['node-bench.mjs', out, 'quant=q8_0', `threads=${threads}`, 'reps=1', `np=${NP}`, `ng=${NG}`], { cwd: peer.dir, encoding: 'utf8' });
    const m = /pp (\d+)@([\d.]+) tg (\d+)@([\d.]+)/.exec(r.stdout);
    if (m) { row.wpp = Number(m[2]); row.wtg = Number(m[4]); } else console.log(`wllama round ${k + 1} failed: ${(r.stdout + r.stderr).trim().split('\n').slice(-2).join(' ')}`);
  }
  const r = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--measure', model, String(threads)], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(r.stderr);
  const mine = JSON.parse(r.stdout);
  row.pp = mine.pp; row.tg = mine.tg; row.build = mine.build;
  rows.push(row);
  console.log(`round ${k + 1}: mlpscope prefill ${row.pp.toFixed(1)} / decode ${row.tg.toFixed(2)} tok/s` +
    (row.wpp ? `; wllama ${row.wpp.toFixed(2)} / ${row.wtg.toFixed(2)} tok/s; ratio ${(row.pp / row.wpp).toFixed(1)}× / ${(row.tg / row.wtg).toFixed(1)}×` : ''));
}
const median = (a) => [...a].sort((x, y) => x - y)[a.length >> 1];
const pick = (k) => median(rows.map((r) => r[k]).filter(Number.isFinite));
console.log(`\nLlama-398M shape, q8_0, ${threads} thread${threads > 1 ? 's' : ''}, prompt ${NP} then ${NG} tokens, medians of ${rounds} alternating rounds; mlpscope's path: ${rows[0].build.activations} activations, statistics on\n`);
console.log('| engine | prefill tok/s | decode tok/s |\n|---|---|---|');
console.log(`| mlpscope | ${pick('pp').toFixed(1)} | ${pick('tg').toFixed(2)} |`);
if (rows.some((r) => r.wpp)) {
  console.log(`| wllama 3.13 (Node compat build) | ${pick('wpp').toFixed(2)} | ${pick('wtg').toFixed(2)} |`);
  console.log(`| ratio | ${(pick('pp') / pick('wpp')).toFixed(1)}× | ${(pick('tg') / pick('wtg')).toFixed(1)}× |`);
}
