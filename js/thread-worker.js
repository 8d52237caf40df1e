// One extra thread of the multi-threaded engine (build/wasm/mlpscope-mt.wasm). It instantiates the
// same compiled module over the engine's shared memory, moves its stack pointer to the stack the
// engine allocated for it, and enters the pool's worker loop (src/util/threads.c), where it
// sleeps in memory.atomic.wait between jobs. The call returns when the pool is stopped.
// standalone (no imports): a bundler user copies this file beside the bundle as it is
const isNode = typeof process !== 'undefined' && !!process.versions?.node;
const workerThreads = 'node:worker_threads'; // not a literal import: bundlers leave it out

/** @param {{module: WebAssembly.Module, relaxedModule: WebAssembly.Module | null, memory: WebAssembly.Memory, pool: number,
 *   part: number, stackTop: number, entry: {stackRestore: string, enter: string}}} d entry: the export names to
 *   call (js/threads.js THREAD_ENTRY); relaxedModule: the relaxed-SIMD tiles, linked in over the same memory */
async function run(d, post) {
  try {
    const env = { memory: d.memory }, relaxed = {};
    const tiles = d.relaxedModule ? (await WebAssembly.instantiate(d.relaxedModule, { env: { memory: d.memory } })).exports : null;
    // the host imports are never called from the kernels; give every one a harmless stand-in (and
    // the relaxed tiles, when the engine has none, one that fails: the engine never calls it then)
    for (const imp of WebAssembly.Module.imports(d.module)) {
      if (imp.kind !== 'function') continue;
      if (imp.module === 'relaxed') relaxed[imp.name] = tiles?.[imp.name] ?? (() => { throw new Error(`relaxed tile ${imp.name} is not linked`); });
      else env[imp.name] = imp.name === 'ms_now_ms' ? () => performance.now() : () => -1;
    }
    const instance = await WebAssembly.instantiate(d.module, { env, relaxed });
    instance.exports[d.entry.stackRestore](d.stackTop);
    post({ ready: true });
    instance.exports[d.entry.enter](d.pool, d.part);
    post({ exited: true });
  } catch (err) {
    post({ error: String(err?.message ?? err) });
  }
}

if (isNode) {
  const { parentPort, workerData } = await import(/* webpackIgnore: true */ /* @vite-ignore */ workerThreads);
  run(workerData, (m) => parentPort.postMessage(m));
} else {
  self.onmessage = (ev) => run(ev.data, (m) => self.postMessage(m));
}
