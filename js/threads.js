// Starting and stopping the worker threads of the multi-threaded engine. The pool itself (job
// hand-out, sleeping workers) is C: src/util/threads.c. Here each extra thread becomes a Worker
// (node:worker_threads in Node, a module Web Worker in browsers) running js/thread-worker.js.
import { isNode, nodeImport } from './platform.js';
import { MlpscopeError } from './errors.js';

const STACK = 1 << 20; // per worker; the kernels keep ~150 KB of activation codes on the stack

/** The two exports a helper thread calls (js/thread-worker.js stands alone, so a bundle can copy
 * it as it is: the engine hands it these names with its start-up data). */
export const THREAD_ENTRY = { stackRestore: 'stackRestore', enter: 'ms_pool_enter' };

/** What the threads need of an engine (js/wasm.js's Engine, which imports this module):
 * @typedef {{ c: Record<string, Function>, memory: WebAssembly.Memory, malloc(n: number): number, free(p: number): void }} ThreadedEngine */

/** Whether this JS environment can share wasm memory between threads at all, and why not. */
export function threadSupport() {
  // a page's SharedArrayBuffer hangs on its isolation: name the cause, not the symptom
  if (!isNode && globalThis.crossOriginIsolated !== true) return { ok: false, why: 'the page is not cross-origin isolated (COOP/COEP headers)' };
  if (typeof SharedArrayBuffer === 'undefined') return { ok: false, why: 'SharedArrayBuffer is not available here' };
  if (!isNode && typeof Worker === 'undefined') return { ok: false, why: 'Workers are not available here' };
  return { ok: true, why: '' };
}

/** Hardware threads available to this process. */
export async function hardwareThreads() {
  if (isNode) { const os = await nodeImport('node:os'); return os.availableParallelism?.() ?? os.cpus().length; }
  return globalThis.navigator?.hardwareConcurrency ?? 1;
}

/**
 * Creates the pool in the engine and starts n - 1 workers on it; resolves when every worker is
 * inside the pool's loop (so the first job cannot be missed).
 * @param {ThreadedEngine} e @param {WebAssembly.Module} module @param {number} n
 * @param {URL} [workerUrl] @param {WebAssembly.Module | null} [relaxedModule] the relaxed-SIMD tiles
 *   (shared-memory build), linked into every worker's instance as into the caller's
 */
export async function startThreads(e, module, n, workerUrl, relaxedModule = null) {
  const pool = e.c.pool_create(n);
  // The caller waits for the workers' parts by polling only, never sleeping in
  // memory.atomic.wait. A browser's main thread may not block at all; and in Node, a process's
  // first threaded engine whose caller slept there gave, rarely and only under heavy load, wrong
  // prefill logits (bench/README.md, "threads under load": 4 of 900 processes against 0 of 2,100 polling). The parts end within microseconds of each other unless a worker lost its core.
  e.c.pool_caller_can_block(pool, 0);
  const workers = [], stacks = [];
  const url = workerUrl ?? new URL('./thread-worker.js', import.meta.url);
  const NodeWorker = isNode ? (await nodeImport('node:worker_threads')).Worker : null;
  try {
    await Promise.all(Array.from({ length: n - 1 }, (_, i) => new Promise((resolve, reject) => {
      const stack = e.malloc(STACK);
      stacks.push(stack);
      const data = { module, relaxedModule, memory: e.memory, pool, part: i + 1, stackTop: (stack + STACK) & ~15, entry: THREAD_ENTRY };
      const w = isNode ? new NodeWorker(url, { workerData: data }) : new Worker(url, { type: 'module' });
      workers.push(w);
      const onMsg = (m) => {
        const d = isNode ? m : m.data;
        if (d.ready) { if (isNode) w.unref(); resolve(); } // a sleeping worker must not keep Node alive
        else if (d.error) reject(new MlpscopeError('E_STATE', `thread ${i + 1}: ${d.error}`));
      };
      if (isNode) { w.on('message', onMsg); w.on('error', reject); } else { w.onmessage = onMsg; w.onerror = (ev) => reject(new MlpscopeError('E_STATE', `thread ${i + 1}: ${ev.message}`)); w.postMessage(data); }
    })));
    // "ready" is posted just before the worker enters the loop: wait until all are in
    const t0 = Date.now();
    while (e.c.pool_running(pool) < n - 1) {
      if (Date.now() - t0 > 10000) throw new MlpscopeError('E_STATE', `only ${e.c.pool_running(pool)} of ${n - 1} threads started`);
      await new Promise((r) => setTimeout(r, 1));
    }
  } catch (err) {
    stopThreads(e, { pool, workers, stacks });
    throw err;
  }
  return { pool, workers, stacks, n };
}

/** Stops the pool (workers leave their loop), then ends the workers and frees their stacks.
 * @param {ThreadedEngine} e */
export function stopThreads(e, t) {
  if (!t?.pool) return;
  e.c.pool_destroy(t.pool);
  t.pool = 0;
  for (const w of t.workers) w.terminate();
  for (const s of t.stacks) e.free(s);
}
