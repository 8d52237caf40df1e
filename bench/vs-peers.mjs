#!/usr/bin/env node
// One table: mlpscope and the peers users would pick instead, in this Node, all taking turns round
// after round so that all see the same machine, with the machine's limits measured in every round
// (bench/limits.mjs) and each row's prefill and decode given as fractions of them.
//   - Llama-398M shape (hidden 1024, 24 layers, SwiGLU 3584, 8 heads of 128, vocab 32000, tied
//     head, q8): mlpscope, wllama (llama.cpp compiled to wasm) and onnxruntime-web (the engine of
//     transformers.js, its wasm SIMD backend);
//   - Qwen3.5-0.8B shapes (q8, and q4 layers with a q8 head): mlpscope only (neither peer's harness
//     builds a Gated DeltaNet model).
//   node bench/vs-peers.mjs [--peers wllama,ort-web] [--shared DIR] [--rounds 3] [--threads 1,2]
//                           [--shapes llama,qwen3.5] [--chromium] [--table FILE]
// Every run writes its rounds to build/bench/vs-peers[-chromium].json; --table FILE prints the
// table of such a file again without measuring.
// --chromium: the same in Debian's Chromium (one fresh browser per measurement, pages isolated so
// threads run), where relaxed SIMD runs and mlpscope's 'auto' may choose it; the limits are taken
// in a page too (the relaxed u8 tile's peak beside SIMD128's); ort-web runs its harness's page
// (web/bench.html), wllama is not measured there.
// Each peer is a harness folder (by default the maintainers' copies in the shared folder beside the
// checkout, DIR/peers/<name>): copied to build/bench/<name>, its npm package installed there and its
// model written by its own script (Python with numpy; onnx for ort-web). A peer that cannot be set
// up is skipped with the reason, and the others are measured.
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { synth } from './models.mjs';
import { PROBE } from './limits.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const opt = (k, d) => { const i = args.indexOf(k); return i >= 0 ? args[i + 1] : d; };
const NP = 128, NG = 64, LONG = 512;

// ---- one mlpscope measurement in a child process, like the peers' (bench/measure-model.mjs)
if (args[0] === '--measure') {
  const { loadModel } = await import('../js/index.js');
  const { measureModel } = await import('./measure-model.mjs');
  const m = await loadModel(args[1], { threads: Number(args[2]), contextLength: Math.max(NP + NG, LONG) + 8 });
  console.log(JSON.stringify(measureModel(m, { np: NP, ng: NG, long: LONG })));
  m.dispose();
  process.exit(0);
}

const tableOnly = opt('--table', null);
const saved = tableOnly ? JSON.parse(fs.readFileSync(tableOnly, 'utf8')) : null;
const inChromium = saved ? saved.chromium : args.includes('--chromium');
const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update'];

/** Runs `fn(page)` in a fresh headless Chromium on `url`, then closes it. */
async function inBrowser(url, fn) {
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium', args: CHROMIUM_ARGS });
  try {
    const page = await browser.newPage();
    page.setDefaultTimeout(1800000);
    await page.goto(url);
    return await fn(page);
  } finally { await browser.close(); }
}

let server = null; // tools/serve.mjs over the checkout, the models mounted at /w/<n>/ (isolated: threads run)
async function pageServer(dirs) {
  if (!server) {
    const { serve } = await import('../tools/serve.mjs');
    server = await serve({ root, mounts: Object.fromEntries(dirs.map((d, i) => [`/w/${i}`, d])) });
    server.dirs = dirs;
  }
  return server;
}

/** mlpscope in a page: as --measure above (bench/measure-model.mjs; the page's default relaxedSimd 'auto') */
async function measureInPage(dir, threads) {
  const srv = server, key = srv.dirs.indexOf(dir);
  return inBrowser(`${srv.url}tests/browser/api.html`, async (page) => {
    await page.waitForFunction(() => window.mlpscope);
    return page.evaluate(async ({ key, threads, NP, NG, LONG }) => {
      const { measureModel } = await import('/bench/measure-model.mjs');
      const m = await window.mlpscope.loadModel(`/w/${key}/`, { threads, cache: false, contextLength: Math.max(NP + NG, LONG) + 8 });
      const r = measureModel(m, { np: NP, ng: NG, long: LONG });
      m.dispose();
      return r;
    }, { key, threads, NP, NG, LONG });
  });
}

/** The limits in a page, as bench/limits.mjs takes them in Node: read bandwidth (1 and 2 threads; the better of one and four streams), the SIMD128 tile's peak and, where the
 *  unsigned-byte relaxed level runs, the u8 tile's (one thread; two threads: the SIMD128 probe on a
 *  pool, scaled for u8 by the one-thread ratio) */
async function limitsInPage() {
  return inBrowser(`${server.url}tests/browser/api.html`, async (page) => {
    await page.waitForFunction(() => window.mlpscope);
    return page.evaluate(async ({ BYTES, REPS, MAC_STEPS: STEPS, SAMPLES, STREAMS }) => {
      // limits.mjs's best(), restated: a function cannot be handed to the page
      const best = (f) => { let last = f(); for (let k = 0; k < 8; k++) { const r = f(); if (Math.abs(r - last) <= 0.03 * Math.max(r, last)) break; last = r; } return Math.max(...Array.from({ length: SAMPLES }, f)); };
      const e = await window.mlpscope.createEngine({ build: 'test', relaxedSimd: false });
      const buf = e.malloc(BYTES); e.u8.fill(1, buf, buf + BYTES);
      const bw1 = Math.max(...STREAMS.map((s) => best(() => { const t = performance.now(); e.c.bench_stream_bytes(buf, BYTES, REPS, s); return BYTES * REPS / ((performance.now() - t) / 1000) / 1e9; })));
      e.free(buf);
      const mb = e.malloc(16384); e.u8.fill(3, mb, mb + 16384);
      const mac1 = best(() => { const t = performance.now(); e.c.bench_mac(mb, STEPS); return 64 * STEPS / ((performance.now() - t) / 1000); });
      const support = (await import('/js/relaxed.js')).relaxedSupport();
      let u8 = null;
      if (support.levels.relaxedu8) {
        const rx = (await WebAssembly.instantiate(await WebAssembly.compile(await (await fetch('/build/wasm/mlpscope-relaxed-test.wasm')).arrayBuffer()), { env: { memory: e.memory } })).exports;
        u8 = best(() => { const t = performance.now(); rx.bench_mac_peak_u8(mb, STEPS / 2); return 128 * (STEPS / 2) / ((performance.now() - t) / 1000); });
      }
      e.free(mb);
      const e2 = await window.mlpscope.createEngine({ threads: 2, build: 'test', relaxedSimd: false });
      const b2 = e2.malloc(BYTES); e2.u8.fill(1, b2, b2 + BYTES);
      const bw2 = Math.max(...STREAMS.map((s) => best(() => { const t = performance.now(); e2.c.bench_stream_pool(e2.pool, b2, BYTES, REPS, s); return BYTES * REPS / ((performance.now() - t) / 1000) / 1e9; })));
      e2.free(b2);
      const m2 = e2.malloc(2 * 16384); e2.u8.fill(3, m2, m2 + 2 * 16384);
      const mac2 = best(() => { const t = performance.now(); e2.c.bench_mac_pool(e2.pool, m2, STEPS); return 2 * 64 * STEPS / ((performance.now() - t) / 1000); });
      e2.shutdown();
      return { bw1, bw2, mac1, mac2, u8mac1: u8, u8mac2: u8 ? mac2 * u8 / mac1 : null };
    }, PROBE);
  });
}

/** ort-web in a page: its harness's web/bench.html, served by its own server (COOP/COEP), one rep */
async function ortInPage(dir, threads) {
  const util = await import(path.join(dir, 'node-util.mjs')), { startServer } = await import(path.join(dir, 'server.mjs'));
  const srv = await startServer(0), base = `http://127.0.0.1:${srv.address().port}`;
  const rel = (p) => path.relative(dir, p).split(path.sep).join('/');
  const model = path.join(dir, 'models/synth-llama-398m');
  const cfg = { api: 'ort', quant: 'q8', threads, wasm: 'default', reps: 1, np: NP, ng: NG, file: util.FILES.q8, modelUrl: `${base}/${rel(model)}/`,
    modelsUrl: `${base}/${rel(path.dirname(model))}/`, modelName: path.basename(model), ortDist: `${base}/${rel(util.ortDist(dir))}/` };
  try {
    const r = await inBrowser(`${base}/web/bench.html`, async (page) => { await page.waitForFunction(() => window.benchReady === true); return page.evaluate((c) => window.runBench(c), cfg); });
    return r?.median ? { pp: r.median.prefill_tok_s, tg: r.median.decode_tok_s } : (console.log(`ort-web in Chromium failed: ${JSON.stringify(r).slice(0, 300)}`), null);
  } catch (err) { console.log(`ort-web in Chromium failed: ${err.message.split('\n')[0]}`); return null; } finally { srv.close(); }
}

const rounds = Number(opt('--rounds', 3)), threadList = opt('--threads', '1,2').split(',').map(Number);
const wanted = opt('--shapes', 'llama,qwen3.5').split(',');
const SHAPES = [
  { key: 'llama', label: 'Llama-398M', peers: true, models: [synth('llama-398m', 'q8')] },
  { key: 'qwen3.5', label: 'Qwen3.5-0.8B', peers: false, models: [synth('qwen3.5-0.8b', 'q8'), synth('qwen3.5-0.8b', 'q4', 'q8')] },
].filter((sh) => wanted.includes(sh.key));

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
    measure(dir, out, threads) {
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
    measure(dir, out, threads) {
      const r = spawnSync(process.execPath, ['bench.mjs', out, 'model=models/synth-llama-398m', 'quant=q8', `threads=${threads}`, 'reps=1', `np=${NP}`, `ng=${NG}`], { cwd: dir, encoding: 'utf8' });
      const m = /prefill \d+ @ ([\d.]+) tok\/s, decode \d+ @ ([\d.]+) tok\/s/.exec(r.stdout);
      return m ? { pp: Number(m[1]), tg: Number(m[2]) } : (console.log(`ort-web failed: ${tail(r)}`), null);
    },
  },
};

const peers = [];
for (const name of saved ? [] : opt('--peers', 'wllama,ort-web').split(',')) {
  if (inChromium && name === 'wllama') { console.log('wllama skipped: --chromium measures ort-web only (wllama is 6-9x behind in Node).'); continue; }
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

const json = (r, what) => { if (r.status !== 0) throw new Error(`${what}: ${r.stderr}`); return JSON.parse(r.stdout.trim().split('\n').pop()); };
const measureSelf = (dir, threads) => json(spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--measure', dir, String(threads)], { encoding: 'utf8' }), `mlpscope on ${dir}`);

// rounds: the limits, then for each thread count the peers and mlpscope on every model
const results = saved ? saved.results : [];
if (saved) { peers.length = 0; peers.push(...saved.peers.map((x) => ({ ...PEERS[x.name], name: x.name }))); threadList.splice(0, Infinity, ...saved.threads); }
for (let k = 0; k < (saved ? 0 : rounds); k++) {
  if (inChromium) await pageServer(SHAPES.flatMap((sh) => sh.models));
  const lim = inChromium ? await limitsInPage() : json(spawnSync(process.execPath, [path.join(root, 'bench/limits.mjs')], { encoding: 'utf8' }), 'bench/limits.mjs');
  const round = { lim, cells: {} };
  const parts = [`round ${k + 1}: read ${lim.bw1.toFixed(1)} / ${lim.bw2?.toFixed(1) ?? '–'} GB/s, int8 MAC ${(lim.mac1 / 1e9).toFixed(1)} / ${lim.mac2 ? (lim.mac2 / 1e9).toFixed(1) : '–'} G/s (1 / 2 threads)`];
  for (const threads of threadList) for (const sh of SHAPES) {
    if (sh.peers) for (const p of peers) {
      const out = path.join(p.dir, `results/round-${process.pid}-${k}-${threads}.json`);
      fs.mkdirSync(path.dirname(out), { recursive: true });
      const r = inChromium ? await ortInPage(p.dir, threads) : p.measure(p.dir, out, threads);
      round.cells[`${sh.key}|${p.name}|${threads}`] = r;
      parts.push(`${sh.label} ${p.name} t${threads} ${r ? `${r.pp.toFixed(1)} / ${r.tg.toFixed(2)}` : 'failed'}`);
    }
    for (const dir of sh.models) {
      const r = inChromium ? await measureInPage(dir, threads) : measureSelf(dir, threads);
      const u8 = r.build.relaxedSimd?.isa === 'relaxedu8';
      const bw = threads > 1 ? lim.bw2 : lim.bw1, mac = u8 ? (threads > 1 ? lim.u8mac2 : lim.u8mac1) : threads > 1 ? lim.mac2 : lim.mac1;
      r.kernels = r.build.relaxedSimd?.used ? r.build.relaxedSimd.isa : 'SIMD128';
      r.computeLimit = mac / r.macs; r.bwLimit = bw * 1e9 / r.bytes;
      round.cells[`${sh.key}|${dir}|${threads}`] = r;
      parts.push(`${sh.label} mlpscope ${r.dtypes} t${threads} ${r.pp.toFixed(1)} / ${r.tg.toFixed(2)}`);
    }
  }
  results.push(round);
  console.log(parts.join('; '));
}

if (!saved) fs.writeFileSync(path.join(root, `build/bench/vs-peers${inChromium ? '-chromium' : ''}.json`),
  JSON.stringify({ chromium: inChromium, node: process.version, threads: threadList, peers: peers.map((p) => ({ name: p.name })), results }));
const median = (a) => { const b = a.filter(Number.isFinite).sort((x, y) => x - y); return b.length ? b[b.length >> 1] : NaN; };
const cells = (key) => results.map((r) => r.cells[key]).filter(Boolean);
const med = (key, f) => median(cells(key).map(f));
const fmt = (x, d = 1) => (Number.isFinite(x) ? x.toFixed(d) : '–');
const pct = (x) => (Number.isFinite(x) ? `${(100 * x).toFixed(0)}%` : '–');
const limMed = (f) => median(results.map((r) => f(r.lim) ?? NaN));
console.log(`\nMedians of ${results.length} rounds (each round: the limits, then every engine in turn, each in a fresh ${inChromium ? 'headless Chromium' : `Node ${process.version} process`} after a warm-up of ≥ 3 s). ` +
  `Prompt ${NP} tokens then ${NG} decode steps; mlpscope also prefills ${LONG} tokens. mlpscope runs its default path (int8 activations, statistics on, forward() per token). ` +
  `Limits (medians): read bandwidth ${fmt(limMed((l) => l.bw1))} / ${fmt(limMed((l) => l.bw2))} GB/s and int8 multiply-accumulate peak ${fmt(limMed((l) => l.mac1) / 1e9)} / ${fmt(limMed((l) => l.mac2) / 1e9)} GMAC/s on 1 / 2 threads${inChromium && Number.isFinite(limMed((l) => l.u8mac1 ?? NaN)) ? ` (the relaxed u8 tile: ${fmt(limMed((l) => l.u8mac1 ?? NaN) / 1e9)} on one thread)` : ''}. ` +
  'A row\'s compute limit is the peak ÷ its multiply-accumulates per token, its bandwidth limit the read bandwidth ÷ its weight bytes per token, both taken in the same round as the row' +
  (inChromium ? '; a row that runs relaxed SIMD (relaxedu8) is measured against the u8 tile\'s peak instead.\n' : '.\n'));
console.log('| shape | engine | weights | threads | prefill 128 tok/s | prefill 128 / compute limit | prefill 512 tok/s | prefill 512 / compute limit | decode tok/s | decode / bandwidth limit | mlpscope ÷ this: prefill 128, decode |');
console.log('|---|---|---|---|---|---|---|---|---|---|---|');
for (const sh of SHAPES) for (const threads of threadList) {
  const mine = `${sh.key}|${sh.models[0]}|${threads}`;
  for (const dir of sh.models) {
    const key = `${sh.key}|${dir}|${threads}`, c = cells(key)[0];
    if (!c) continue;
    console.log(`| ${sh.label} | mlpscope (${[...new Set(cells(key).map((x) => x.kernels))].join(' / ')}) | ${c.dtypes} | ${threads} | ${fmt(med(key, (r) => r.pp))} | ${pct(med(key, (r) => r.pp / r.computeLimit))} | ${fmt(med(key, (r) => r.pp512))} | ${pct(med(key, (r) => r.pp512 / r.computeLimit))} | ${fmt(med(key, (r) => r.tg), 2)} | ${pct(med(key, (r) => r.tg / r.bwLimit))} | |`);
  }
  if (sh.peers) for (const p of peers) {
    const key = `${sh.key}|${p.name}|${threads}`;
    if (!cells(key).length) { console.log(`| ${sh.label} | ${p.label} | q8 | ${threads} | failed | | | | | | |`); continue; }
    // the ratio of each round's pair (both engines saw the same machine), then the median
    const ratio = (f) => median(results.map((r) => (r.cells[key] && r.cells[mine] ? f(r.cells[mine]) / f(r.cells[key]) : NaN)));
    // the same model's multiply-accumulates per token, against the SIMD128 sequence's peak of the round
    const ofPeak = median(results.map((r) => (r.cells[key] && r.cells[mine] ? r.cells[key].pp * r.cells[mine].macs / (threads > 1 ? r.lim.mac2 : r.lim.mac1) : NaN)));
    console.log(`| ${sh.label} | ${p.label} | q8 | ${threads} | ${fmt(med(key, (r) => r.pp))} | ${pct(ofPeak)} of SIMD128's | – | – | ${fmt(med(key, (r) => r.tg), 2)} | – | ${fmt(ratio((r) => r.pp), 2)}×, ${fmt(ratio((r) => r.tg), 2)}× |`);
  }
}
await server?.close();
