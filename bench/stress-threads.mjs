#!/usr/bin/env node
// Threaded passes compared with one thread, bit for bit, in wasm (Node; --browser: Chromium's
// threaded build too). Not a test: it runs for minutes, under as much load as asked for.
//   node bench/stress-threads.mjs [--procs 4] [--passes 500] [--threads 2,3] [--dtypes f32,q8,q4]
//        [--modes int8,exact] [--fresh 10] [--browser] [--out DIR]
// Every process (--procs of them at once: oversubscribing the cores is the point) makes the
// synthetic models it needs (tests/configs/qwen35-threads.json: a Qwen3.5 hybrid whose matrices
// are big enough to be split), computes a one-thread reference per weight type and activation mode
// (a 69-token prefill with every token's logits, the statistics and two hooks, then one decode
// step) and then runs --passes threaded passes per case, each compared with the reference. Every
// --fresh passes the model is disposed and loaded again (a new engine: new workers, a new pool, the
// weights laid out again by the threads). A difference is reported with the rows it touches.
// bench/stress_threads.c is the native twin (pthreads, and ThreadSanitizer in build/tsan/).
import { execFileSync, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import fs from 'node:fs';
import os from 'node:os';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const opt = (k, d) => { const i = args.indexOf(k); return i >= 0 ? args[i + 1] : d; };
const list = (k, d) => opt(k, d).split(',').filter(Boolean);
const threadsList = list('--threads', '2,3').map(Number), dtypes = list('--dtypes', 'f32,q8,q4'), modes = list('--modes', 'int8,exact');
const passes = Number(opt('--passes', 500)), fresh = Number(opt('--fresh', 10)), procs = Number(opt('--procs', 4));
const T = 69;
const ids = Array.from({ length: T + 1 }, (_, i) => (i * 131 + 7) % 2048);
const HOOKS = ['blocks.1.mlp.hook_post', 'blocks.3.hook_resid_post'];

/** the weight sets, made once per --out folder (a child is handed the folder) */
function models(out) {
  const cfg = path.join(ROOT, 'tests/configs/qwen35-threads.json');
  for (const dt of dtypes) {
    const d = path.join(out, dt);
    if (fs.existsSync(path.join(d, 'manifest.json'))) continue;
    execFileSync(process.execPath, [path.join(ROOT, 'bin/mlpscope.js'), 'synth', '--config', cfg, '--seed', '5', '--dtype', dt, '--out', d], { stdio: 'pipe' });
  }
}

/** one prefill + one decode step, everything a test compares */
function pass(m) {
  const pre = m.forward(ids.slice(0, T), { logits: 'all', hooks: HOOKS });
  const dec = m.forward(ids.slice(T), { continue: true });
  return { pre, dec };
}

/** '' when equal bit for bit, else what differs and where (rows = tokens) */
function compare(want, got, V) {
  const rowsDiffer = (a, b, w) => {
    const rows = [];
    for (let t = 0; t < a.length / w; t++) for (let i = t * w; i < (t + 1) * w; i++) if (!Object.is(a[i], b[i])) { rows.push(t); break; }
    return rows;
  };
  const out = [];
  const r = rowsDiffer(want.pre.logits, got.pre.logits, V);
  if (r.length) out.push(`prefill logits rows ${r.join(' ')}`);
  if (rowsDiffer(want.dec.logits, got.dec.logits, V).length) out.push('decode logits');
  for (const h of HOOKS) {
    const w = want.pre.hooks[h].length / T, rr = rowsDiffer(want.pre.hooks[h], got.pre.hooks[h], w);
    if (rr.length) out.push(`${h} rows ${rr.join(' ')}`);
  }
  for (const k of Object.keys(want.pre.stats)) {
    if (k === 'layer_ms' || k === 'timings') continue;
    if (JSON.stringify(want.pre.stats[k]) !== JSON.stringify(got.pre.stats[k])) out.push(`stats.${k}`);
  }
  return out.join('; ');
}

async function child(out) {
  const { loadModel } = await import(path.join(ROOT, 'js/index.js'));
  const result = { passes: 0, differ: 0, cases: [] };
  for (const dt of dtypes) for (const mode of dt === 'f32' ? ['plain'] : modes) {
    const dir = path.join(out, dt), int8Activations = mode === 'int8';
    const one = await loadModel(dir, { threads: 1, int8Activations });
    const want = pass(one), V = one.info().config.vocab_size;
    one.dispose();
    for (const threads of threadsList) {
      let m = null, differ = 0;
      const first = [];
      for (let p = 0; p < passes; p++) {
        if (p % fresh === 0) { m?.dispose(); m = await loadModel(dir, { threads, int8Activations }); }
        if (m.info().build.threads !== threads) throw new Error(`asked for ${threads} threads, got ${m.info().build.threads}: ${m.info().build.why}`);
        const what = compare(want, pass(m), V);
        if (what) { differ++; if (first.length < 3) first.push(`pass ${p}: ${what}`); }
      }
      m.dispose();
      result.passes += passes;
      result.differ += differ;
      result.cases.push({ dt, mode, threads, passes, differ, first });
    }
  }
  console.log(JSON.stringify(result));
}

/** --browser: the same loop in Chromium's threaded build, `procs` tabs at once, each alternating
 *  between the page's main thread (it polls for the workers) and a Worker (it sleeps) */
async function browserRuns(out) {
  const { chromium } = await import('playwright-core');
  const { serve } = await import('../tools/serve.mjs');
  const mounts = Object.fromEntries(dtypes.map((dt) => [`/w/${dt}`, path.join(out, dt)]));
  const server = await serve({ root: ROOT, mounts });
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-quic', '--no-first-run', '--disable-sync', '--disable-dev-shm-usage'] });
  try {
    return await Promise.all(Array.from({ length: procs }, async () => {
      const page = await browser.newPage();
      await page.goto(server.url + 'tests/browser/api.html');
      await page.waitForFunction(() => window.mlpscope);
      return page.evaluate(async ({ dtypes, modes, threadsList, passes, fresh, T, ids, HOOKS }) => {
        const { loadModel, loadModelInWorker } = window.mlpscope;
        const same = (a, b) => a.length === b.length && a.every((x, i) => Object.is(x, b[i]));
        const pass = async (m) => {
          const pre = await m.forward(ids.slice(0, T), { logits: 'all', hooks: HOOKS });
          const dec = await m.forward(ids.slice(T), { continue: true });
          return { pre, dec };
        };
        const differs = (w, g) => {
          const out = [];
          if (!same(w.pre.logits, g.pre.logits)) out.push('prefill logits');
          if (!same(w.dec.logits, g.dec.logits)) out.push('decode logits');
          for (const h of HOOKS) if (!same(w.pre.hooks[h], g.pre.hooks[h])) out.push(h);
          return out.join('; ');
        };
        const result = { passes: 0, differ: 0, cases: [] };
        for (const dt of dtypes) for (const mode of dt === 'f32' ? ['plain'] : modes) {
          const int8Activations = mode === 'int8', url = `/w/${dt}/`;
          const one = await loadModel(url, { threads: 1, cache: false, int8Activations });
          const want = await pass(one);
          one.dispose();
          for (const threads of threadsList) for (const where of ['page', 'worker']) {
            let m = null, differ = 0;
            const first = [];
            const open = () => (where === 'page' ? loadModel : loadModelInWorker)(url, { threads, cache: false, int8Activations });
            for (let p = 0; p < passes; p++) {
              if (p % fresh === 0) { await m?.dispose(); m = await open(); }
              const what = differs(want, await pass(m));
              if (what) { differ++; if (first.length < 3) first.push(`pass ${p}: ${what}`); }
            }
            const info = await m.info();
            if (info.build.threads !== threads) throw new Error(`asked for ${threads} threads, got ${info.build.why}`);
            await m.dispose();
            result.passes += passes; result.differ += differ;
            result.cases.push({ dt, mode: `${mode} (${where})`, threads, passes, differ, first });
          }
        }
        return result;
      }, { dtypes, modes, threadsList, passes, fresh, T, ids, HOOKS });
    }));
  } finally { await browser.close(); await server.close(); }
}

async function parent() {
  const out = opt('--out', fs.mkdtempSync(path.join(os.tmpdir(), 'mlpscope-stress-')));
  models(out);
  const t0 = Date.now();
  const runs = args.includes('--browser') ? await browserRuns(out) : await Promise.all(Array.from({ length: procs }, () => new Promise((resolve, reject) => {
    const c = spawn(process.execPath, [fileURLToPath(import.meta.url), '--child', out, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
    let text = '';
    c.stdout.on('data', (d) => { text += d; });
    c.on('exit', (code) => code === 0 ? resolve(JSON.parse(text.trim().split('\n').pop())) : reject(new Error(`a child exited with ${code}: ${text}`)));
  })));
  const byCase = new Map();
  for (const r of runs) for (const c of r.cases) {
    const k = `${c.dt} ${c.mode} ${c.threads} threads`;
    const s = byCase.get(k) ?? { passes: 0, differ: 0, first: [] };
    s.passes += c.passes; s.differ += c.differ; s.first.push(...c.first);
    byCase.set(k, s);
  }
  console.log(`| case | passes | differ from 1 thread |\n|---|---|---|`);
  for (const [k, s] of byCase) console.log(`| ${k} | ${s.passes} | ${s.differ} |${s.first.length ? ' ' + s.first.slice(0, 3).join(' / ') : ''}`);
  const total = runs.reduce((n, r) => n + r.passes, 0), differ = runs.reduce((n, r) => n + r.differ, 0);
  console.log(`\n${total} threaded passes in ${procs} ${args.includes('--browser') ? 'Chromium tabs' : 'processes'} on ${os.availableParallelism?.() ?? os.cpus().length} cores ` +
    `(${((Date.now() - t0) / 1000).toFixed(0)} s, Node ${process.version}): ${differ} differ from one thread`);
  if (!args.includes('--out')) fs.rmSync(out, { recursive: true, force: true });
  process.exitCode = differ ? 1 : 0;
}

if (args[0] === '--child') await child(args[1]);
else await parent();
