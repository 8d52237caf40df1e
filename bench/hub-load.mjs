// Loading a Hugging Face checkpoint straight from a hub, measured: time and peak memory of the
// first visit (download + conversion while it streams), the second visit (the converted copy in the
// cache, the hub still there) and an offline visit (the hub gone), beside loading the same weights
// pre-converted (`mlpscope convert`) from a URL and from disk. Every load runs in a fresh process;
// peak memory is that process's maximum resident set (it includes Node itself, ~50 MiB).
//
//   node bench/hub-load.mjs [--config qwen3.5-0.8b] [--dtype q8] [--shards 2] [--work DIR] [--rounds 1]
//
// The checkpoint is synthetic (random weights with the real Qwen3.5 layout, BF16, index-sharded,
// vision and MTP tensors present), served by tests/hub-server.js on loopback: the figures measure
// the loader and the converter, not a network.
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const CLI = path.join(ROOT, 'bin/mlpscope.js');
const arg = (k, d) => { const i = process.argv.indexOf('--' + k); return i > 0 ? process.argv[i + 1] : d; };

if (process.argv[2] === '--child') {
  // one load in this process: print what it took
  const [, , , source, optsJson] = process.argv;
  const { loadModel } = await import('../js/index.js');
  const opts = JSON.parse(optsJson);
  const t0 = performance.now();
  let fromCache = 0, events = 0;
  const m = await loadModel(source, { ...opts, setDir: undefined, onProgress: (p) => { if (p.file === 'manifest.json') return; events++; if (p.fromCache) fromCache++; } });
  const ms = performance.now() - t0;
  const logits = m.forward([1, 2, 3], { logits: 'last' }).logits;
  let sum = 0;
  for (const v of logits) sum += v;
  process.stdout.write(JSON.stringify({ ms, maxRssMiB: process.resourceUsage().maxRSS / 1024, wasmMiB: m.e.heapBytes / 2 ** 20,
    weightsMiB: JSON.parse(fs.readFileSync(path.join(opts.setDir, 'manifest.json'), 'utf8')).shards.reduce((a, s) => a + s.bytes, 0) / 2 ** 20, threads: m.info().build.threads, fromCache: events > 0 && fromCache === events, check: sum }) + '\n');
  m.dispose();
  process.exit(0);
}

const config = arg('config', 'qwen3.5-0.8b'), dtype = arg('dtype', 'q8'), shards = Number(arg('shards', 2)), rounds = Number(arg('rounds', 1));
const work = arg('work', path.join(ROOT, 'build/bench/hub-' + config));
fs.mkdirSync(work, { recursive: true });
const syn = path.join(work, 'synth-bf16'), hf = path.join(work, 'hf'), set = path.join(work, 'set-' + dtype);
const step = (what, f) => { const t = performance.now(); process.stderr.write(what + '… '); f(); process.stderr.write(`${((performance.now() - t) / 1000).toFixed(1)} s\n`); };
if (!fs.existsSync(path.join(syn, 'manifest.json'))) step(`synthetic ${config}, bf16`, () => execFileSync(process.execPath, [CLI, 'synth', '--config', config, '--dtype', 'bf16', '--out', syn], { stdio: 'inherit' }));
if (!fs.existsSync(path.join(hf, 'config.json'))) {
  const { writeHfCheckpoint } = await import('../tests/hf-writer.js');
  step(`its Hugging Face layout (BF16, ${shards} files + index, vision and MTP tensors)`, () => writeHfCheckpoint(syn, hf, { dtype: 'BF16', shards, tokenizer: true }));
}
if (!fs.existsSync(path.join(set, 'manifest.json'))) step(`pre-converted weight set (${dtype})`, () => execFileSync(process.execPath, [CLI, 'convert', hf, '--out', set, '--dtype', dtype], { stdio: 'inherit' }));

// the hub mimic and a static server for the pre-converted set, in a process of their own
const server = spawn(process.execPath, ['--input-type=module', '-e', `
  import { startHub } from ${JSON.stringify(path.join(ROOT, 'tests/hub-server.js'))};
  import { serve } from ${JSON.stringify(path.join(ROOT, 'tools/serve.mjs'))};
  const hub = await startHub({ 'Qwen/Qwen3.5-0.8B': ${JSON.stringify(hf)} });
  const site = await serve({ root: ${JSON.stringify(work)} });
  console.log(JSON.stringify({ hub: hub.url, site: site.url }));
  process.stdin.on('data', async () => { await hub.close(); await site.close(); process.exit(0); });
`], { stdio: ['pipe', 'pipe', 'inherit'] });
const urls = await new Promise((resolve) => server.stdout.once('data', (d) => resolve(JSON.parse(String(d)))));
const stopServer = () => new Promise((r) => { server.on('exit', r); server.stdin.write('stop\n'); });

const child = (source, opts) => JSON.parse(execFileSync(process.execPath, [fileURLToPath(import.meta.url), '--child', source, JSON.stringify({ ...opts, setDir: set })], { encoding: 'utf8', maxBuffer: 1 << 24 }));
const rows = [];
const srcBytes = fs.readdirSync(hf).filter((f) => f.endsWith('.safetensors')).reduce((n, f) => n + fs.statSync(path.join(hf, f)).size, 0);
for (let r = 0; r < rounds; r++) {
  const cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mlpscope-hub-bench-'));
  const hubOpts = { hubUrl: urls.hub, cacheDir, dtype };
  rows.push({ what: 'hf: first visit (download + convert)', ...child('hf:Qwen/Qwen3.5-0.8B', hubOpts) });
  rows.push({ what: 'hf: second visit (converted copy in the cache)', ...child('hf:Qwen/Qwen3.5-0.8B', hubOpts) });
  rows.push({ what: 'pre-converted weight set from a URL', ...child(urls.site + path.basename(set) + '/', { cache: false }) });
  rows.push({ what: 'pre-converted weight set from disk', ...child(set, {}) });
  if (r === rounds - 1) {
    await stopServer();
    rows.push({ what: 'hf: offline visit (hub gone)', ...child('hf:Qwen/Qwen3.5-0.8B', hubOpts) });
  }
  fs.rmSync(cacheDir, { recursive: true, force: true });
}
if (rounds > 1 || server.exitCode === null) await stopServer().catch(() => {});
const checks = new Set(rows.map((x) => x.check.toFixed(3)));
console.log(`\n${config}, ${dtype}, source ${(srcBytes / 2 ** 30).toFixed(2)} GiB of BF16 safetensors (${shards} files), threads ${rows[0].threads}, ${os.cpus().length} CPUs, Node ${process.version}`);
console.log(`weights after conversion: ${rows[0].weightsMiB.toFixed(0)} MiB; every load gives the same logits: ${checks.size === 1 ? 'yes' : 'NO (' + [...checks].join(', ') + ')'}\n`);
console.log('| load | time (s) | peak RSS (MiB) | wasm memory (MiB) | all from cache |');
console.log('|---|---|---|---|---|');
for (const x of rows) console.log(`| ${x.what} | ${(x.ms / 1000).toFixed(2)} | ${x.maxRssMiB.toFixed(0)} | ${x.wasmMiB.toFixed(0)} | ${x.fromCache ? 'yes' : 'no'} |`);
