#!/usr/bin/env node
// mlpscope against the peers users would pick instead, on the same synthetic Llama-398M shape
// (hidden 1024, 24 layers, SwiGLU 3584, 8 heads of 128, vocab 32000, tied head, q8), in this Node,
// all taking turns round after round so all see the same machine: wllama (llama.cpp compiled to
// wasm) and onnxruntime-web (the engine of transformers.js, its wasm SIMD backend). Prints each
// round and the medians with their ratios.
//   node bench/vs-peers.mjs [--peers wllama,ort-web] [--shared DIR] [--rounds 3] [--threads 1]
// Each peer is a harness folder (by default the maintainers' copies in the shared folder beside the
// checkout, DIR/peers/<name>): copied to build/bench/<name>, its npm package installed there and its
// model written by its own script (Python with numpy; onnx for ort-web). A peer that cannot be set
// up is skipped with the reason, and the others are measured.
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const opt = (k, d) => { const i = args.indexOf(k); return i >= 0 ? args[i + 1] : d; };
const NP = 128, NG = 64;

// ---- one mlpscope measurement (run in a child process, like the peers'): prefill NP tokens, then
// NG tokens, statistics on (the default path); decode speed excludes the first token, as llama.cpp's
if (args[0] === '--measure') {
  const { loadModel } = await import('../js/index.js');
  const m = await loadModel(args[1], { threads: Number(args[2]), contextLength: NP + NG + 8 });
  const V = m.config.vocab_size, ids = Array.from({ length: NP }, (_, i) => (i * 7919 + 13) % V);
  // warm-up as the ort-web harness does it (a 16-token prompt and 4 steps, at least 3 times and for
  // at least 3 s): V8 runs wasm from its baseline compiler until the hot functions are re-compiled
  for (let n = 0, t0 = performance.now(); n < 3 || performance.now() - t0 < 3000; n++) {
    m.forward(ids.slice(0, 16));
    for (let k = 0; k < 4; k++) m.forward([k + 1], { continue: true });
  }
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

const shared = path.resolve(opt('--shared', process.env.MLPSCOPE_SHARED ?? path.join(root, '../shared')));
const tail = (r) => `${r.stderr ?? ''}${r.stdout ?? ''}`.trim().split('\n').slice(-2).join(' ');
/** runs a peer's Python script (the first interpreter that succeeds: pyenv's, then Debian's) */
function python(dir, argv) {
  for (const py of ['python3', '/usr/bin/python3']) if (spawnSync(py, argv, { cwd: dir, encoding: 'utf8' }).status === 0) return true;
  return false;
}

/** The peers: each sets itself up (its folder, or a sentence saying why it cannot run) and
 *  measures one round (prefill and decode tok/s, or null). */
const PEERS = {
  wllama: {
    label: 'wllama 3.13 (llama.cpp → wasm, Node compat build)',
    setUp(dir) {
      if (!fs.existsSync(path.join(dir, 'node_modules/@wllama/wllama'))) {
        const r = spawnSync('npm', ['install', '--no-audit', '--no-fund'], { cwd: dir, encoding: 'utf8' });
        if (r.status !== 0) return `npm install failed: ${tail(r)}`;
      }
      const gguf = path.join(dir, 'models/synth-llama-q8_0.gguf');
      if (!fs.existsSync(gguf)) {
        fs.mkdirSync(path.dirname(gguf), { recursive: true });
        if (!python(dir, ['make_gguf.py', 'q8_0', gguf])) return 'make_gguf.py failed (it needs numpy: apt-get install python3-numpy)';
      }
      return null;
    },
    measure(dir, out) {
      const r = spawnSync(process.execPath, ['node-bench.mjs', out, 'quant=q8_0', `threads=${threads}`, 'reps=1', `np=${NP}`, `ng=${NG}`], { cwd: dir, encoding: 'utf8' });
      const m = /pp (\d+)@([\d.]+) tg (\d+)@([\d.]+)/.exec(r.stdout);
      return m ? { pp: Number(m[2]), tg: Number(m[4]) } : (console.log(`wllama failed: ${tail(r)}`), null);
    },
  },
  'ort-web': {
    label: 'onnxruntime-web (transformers.js\'s engine, wasm SIMD, q8 as transformers.js quantizes)',
    setUp(dir) {
      // only what its bench.mjs needs: onnxruntime-web at the harness's pinned version
      const pinned = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')).dependencies?.['onnxruntime-web'];
      if (!pinned) return 'its package.json pins no onnxruntime-web';
      if (!fs.existsSync(path.join(dir, 'node_modules/onnxruntime-web'))) {
        fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'ort-web-peer', private: true, dependencies: { 'onnxruntime-web': pinned } }, null, 2));
        const r = spawnSync('npm', ['install', '--no-audit', '--no-fund'], { cwd: dir, encoding: 'utf8' });
        if (r.status !== 0) return `npm install failed: ${tail(r)}`;
      }
      if (!fs.existsSync(path.join(dir, 'models/synth-llama-398m/onnx/model_quantized.onnx'))
        && !python(dir, ['make_onnx.py', 'q8', 'models/synth-llama-398m'])) return 'make_onnx.py failed (it needs numpy and onnx: apt-get install python3-numpy python3-onnx)';
      return null;
    },
    measure(dir, out) {
      const r = spawnSync(process.execPath, ['bench.mjs', out, 'model=models/synth-llama-398m', 'quant=q8', `threads=${threads}`, 'reps=1', `np=${NP}`, `ng=${NG}`], { cwd: dir, encoding: 'utf8' });
      const m = /prefill \d+ @ ([\d.]+) tok\/s, decode \d+ @ ([\d.]+) tok\/s/.exec(r.stdout);
      return m ? { pp: Number(m[1]), tg: Number(m[2]) } : (console.log(`ort-web failed: ${tail(r)}`), null);
    },
  },
};

const peers = [];
for (const name of opt('--peers', 'wllama,ort-web').split(',')) {
  const p = PEERS[name], src = path.join(shared, 'peers', name), dir = path.join(root, 'build/bench', name);
  if (!p) { console.log(`${name}: no such peer (${Object.keys(PEERS).join(', ')})`); continue; }
  if (!fs.existsSync(dir)) {
    if (!fs.existsSync(path.join(src, 'package.json'))) { console.log(`${name} skipped: no harness at ${src} (--shared DIR). Measuring the others.`); continue; }
    fs.cpSync(src, dir, { recursive: true });
    spawnSync('chmod', ['-R', 'u+w', dir]); // the shared copy is read-only
  }
  const why = p.setUp(dir);
  if (why) console.log(`${name} skipped: ${why}. Measuring the others.`);
  else peers.push({ name, dir, ...p });
}

const rows = [];
for (let k = 0; k < rounds; k++) {
  const row = {};
  for (const p of peers) {
    const out = path.join(p.dir, `results/round-${process.pid}-${k}.json`);
    fs.mkdirSync(path.dirname(out), { recursive: true });
    row[p.name] = p.measure(p.dir, out);
  }
  const r = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--measure', model, String(threads)], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(r.stderr);
  const mine = JSON.parse(r.stdout);
  row.pp = mine.pp; row.tg = mine.tg; row.build = mine.build;
  rows.push(row);
  console.log(`round ${k + 1}: mlpscope prefill ${row.pp.toFixed(1)} / decode ${row.tg.toFixed(2)} tok/s` +
    peers.map((p) => row[p.name] ? `; ${p.name} ${row[p.name].pp.toFixed(2)} / ${row[p.name].tg.toFixed(2)}` : `; ${p.name} failed`).join(''));
}
const median = (a) => [...a].sort((x, y) => x - y)[a.length >> 1];
const pick = (f) => median(rows.map(f).filter(Number.isFinite));
console.log(`\nLlama-398M shape, q8, ${threads} thread${threads > 1 ? 's' : ''}, prompt ${NP} then ${NG} tokens, medians of ${rounds} alternating rounds; mlpscope's path: ${rows[0].build.activations} activations, statistics on\n`);
console.log('| engine | prefill tok/s | decode tok/s | mlpscope prefill / this | mlpscope decode / this |\n|---|---|---|---|---|');
const pp = pick((r) => r.pp), tg = pick((r) => r.tg);
console.log(`| mlpscope | ${pp.toFixed(1)} | ${tg.toFixed(2)} | | |`);
for (const p of peers) {
  const ppp = pick((r) => r[p.name]?.pp), ptg = pick((r) => r[p.name]?.tg);
  if (Number.isFinite(ppp)) console.log(`| ${p.label} | ${ppp.toFixed(2)} | ${ptg.toFixed(2)} | ${(pp / ppp).toFixed(2)}× | ${(tg / ptg).toFixed(2)}× |`);
}
