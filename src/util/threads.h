/* A small pool of threads for row-partitioned work (matmuls). The caller takes part in every job:
 * part 0 runs on the calling thread, parts 1..n-1 on the workers; ms_pool_run returns when all
 * parts are done. Idle workers sleep (a futex wait in wasm, a condition variable natively); in wasm
 * they first poll for a few microseconds, since during a forward pass the next job follows sooner
 * than a sleeping thread wakes.
 *
 * Natively the workers are pthreads started by ms_pool_new. In wasm they are Web Workers (or Node
 * worker_threads) started by js/threads.js: each instantiates the multi-threaded module over the
 * same shared memory, gets its own stack, and calls ms_pool_worker(pool, i), which returns only
 * when the pool is stopped. A pool of 1 thread runs everything inline. */
#ifndef MS_THREADS_H
#define MS_THREADS_H
#include "error.h"

#define MS_POOL_MAX 64 /* most threads a pool can have */

typedef void (*ms_job_fn)(void *ctx, int part, int n_parts);
typedef struct ms_pool ms_pool;

/* n_threads >= 1, counting the caller. Natively the workers start here; in wasm the pool only
 * waits for workers to attach (ms_pool_worker). */
ms_pool *ms_pool_new(int n_threads, ms_err *err);
int ms_pool_threads(const ms_pool *p);
/* Runs fn(ctx, i, n) for every part i; NULL pool or 1 thread: fn(ctx, 0, 1) inline. */
void ms_pool_run(ms_pool *p, ms_job_fn fn, void *ctx);
/* p if `rows` independent rows come to at least two per thread, else NULL (not worth a wake-up):
 * for ms_pool_run over the tokens of a batch. */
ms_pool *ms_pool_for_rows(ms_pool *p, int rows);
/* wasm: whether the calling thread may block in memory.atomic.wait (not on a browser's main
 * thread); when it may not, ms_pool_run waits for the workers by polling. */
void ms_pool_set_caller_can_block(ms_pool *p, int yes);
/* The worker loop (wasm workers call it; natively it is the pthread body). */
void ms_pool_worker(ms_pool *p, int part);
/* Stops the workers (they return from ms_pool_worker) and frees the pool. */
void ms_pool_free(ms_pool *p);
/* workers currently inside ms_pool_worker (wasm: js/threads.js waits for all before use) */
int ms_pool_workers_running(const ms_pool *p);
/* 1 if this build can run more than one thread */
int ms_pool_supported(void);
#endif
