// The thread race's smallest reproducer so far (bench/README.md "threads under load"): one process
// makes the Qwen3.5-hybrid test model (tests/configs/qwen35-threads.json) in f32, computes a
// one-thread reference (a 69-token prefill with every token's logits, then a decode step), then
// loads a 2-thread engine `--reps` times and compares each prefill's logits bit for bit. Prints one
// JSON line; exit code 1 when any engine differed. Run many at once on a busy machine:
//   bash bench/threads-first-engine.sh [ROUNDS=200] [COPIES=4] [OUT] [-- node flags]
// Options: --reps N (2-thread engines per process, default 1), --throwaway (start and stop a
// 2-thread engine first), --dummy-worker (start and end a plain Node Worker first), --one-between
// (a one-thread load and run before every 2-thread engine after the first), --sleep-after-start MS
// (with --worker-url URL: another js/thread-worker.js to try), --gc (a full
// garbage collection of the main isolate just before the model loads; needs node --expose-gc).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { createEngine, loadModel } from '../js/index.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2), flag = (f) => args.includes(f);
const reps = Number(args[args.indexOf('--reps') + 1]) || 1;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mlpscope-first-engine-'));
try {
  execFileSync(process.execPath, [path.join(ROOT, 'js/cli.js'), 'synth', '--config', path.join(ROOT, 'tests/configs/qwen35-threads.json'),
    '--seed', '5', '--dtype', 'f32', '--out', dir], { stdio: 'pipe' });
  const ids = Array.from({ length: 70 }, (_, i) => (i * 131 + 7) % 2048);
  const run = (m) => {
    const pre = m.forward(ids.slice(0, 69), { logits: 'all', hooks: ['blocks.1.mlp.hook_post', 'blocks.3.hook_resid_post'] });
    m.forward(ids.slice(69), { continue: true });
    return pre.logits;
  };
  const one = await loadModel(dir, { threads: 1 });
  const want = run(one);
  one.dispose();
  if (flag('--throwaway')) (await createEngine({ threads: 2 })).shutdown();
  if (flag('--dummy-worker')) await new Promise((resolve, reject) => {
    const w = new Worker('require("node:worker_threads").parentPort.postMessage(1)', { eval: true });
    w.on('message', () => w.terminate().then(resolve));
    w.on('error', reject);
  });
  const bad = [];
  for (let k = 0; k < reps; k++) {
    if (flag('--one-between') && k > 0) { const o = await loadModel(dir, { threads: 1 }); run(o); o.dispose(); }
    // --sleep-after-start MS: the 2-thread engine (its worker running) waits MS before the model loads
    const wait = Number(args[args.indexOf('--sleep-after-start') + 1]) || 0, e = wait ? await createEngine({ threads: 2, threadWorkerUrl: args.includes('--worker-url') ? args[args.indexOf('--worker-url') + 1] : undefined }) : null;
    if (e) await new Promise((r) => setTimeout(r, wait));
    if (flag('--gc')) globalThis.gc(); // needs node --expose-gc
    const m = await loadModel(dir, e ? { engine: e } : { threads: 2 });
    const got = run(m);
    m.dispose();
    e?.shutdown();
    const rows = [];
    for (let t = 0; t < 69; t++) for (let i = t * 2048; i < (t + 1) * 2048; i++) if (!Object.is(got[i], want[i])) { rows.push(t); break; }
    if (rows.length) bad.push({ engine: k, rows });
  }
  console.log(JSON.stringify({ engines: reps, differ: bad }));
  process.exitCode = bad.length ? 1 : 0;
} finally { fs.rmSync(dir, { recursive: true, force: true }); }
