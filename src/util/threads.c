#include "threads.h"
#include <stdlib.h>

#ifndef MS_POOL_SPIN
#define MS_POOL_SPIN (1 << 14) /* polls of the job counter before a worker sleeps */
#endif

#if defined(__wasm__) && defined(__wasm_atomics__)
/* ---- wasm with shared memory: workers are JS workers calling ms_pool_worker ---- */
#include <stdatomic.h>

struct ms_pool {
    _Atomic int gen;     /* bumped for every job; workers wait on it */
    _Atomic int pending; /* parts still running on workers */
    _Atomic int stop;
    _Atomic int running; /* workers inside ms_pool_worker */
    int n, caller_can_block;
    ms_job_fn fn;
    void *ctx;
};

int ms_pool_supported(void) { return 1; }

static void wait_while_equal(_Atomic int *a, int v) { __builtin_wasm_memory_atomic_wait32((int *)a, v, -1); }

/* The caller waiting for the workers' parts. Measured in Node 20: a notify from a worker does not
 * always wake a main thread blocked in memory.atomic.wait (the wait ran to its timeout), while the
 * other direction works. So a caller allowed to sleep polls first (the parts usually end within
 * microseconds of each other) and then sleeps in short timed waits, which bounds a lost wake-up to
 * 0.2 ms. By default it only polls: a Node process's first threaded engine whose caller slept
 * here gave, rarely and under heavy load, wrong prefill logits (bench/README.md). */
static void caller_wait_zero(ms_pool *p, _Atomic int *a) {
    int left;
    for (int spin = 0; (left = atomic_load(a)) > 0; spin++)
        if (p->caller_can_block && spin > (1 << 22)) __builtin_wasm_memory_atomic_wait32((int *)a, left, 200000);
}
static void wake_all(_Atomic int *a) { __builtin_wasm_memory_atomic_notify((int *)a, (unsigned)-1); }

/* A worker starts from generation 0, not the current one: one that attaches late still takes its
 * part of the job in flight (the caller waits for every part, so at most one job is ever open). */
void ms_pool_worker(ms_pool *p, int part) {
    atomic_fetch_add(&p->running, 1);
    int seen = 0;
    for (;;) {
        int g;
        /* a short poll first: during a forward pass the next job follows within microseconds,
         * sooner than a sleeping thread can be woken; when idle, the thread sleeps */
        for (int spin = 0; spin < MS_POOL_SPIN && atomic_load(&p->gen) == seen && !atomic_load(&p->stop); spin++) {}
        while ((g = atomic_load(&p->gen)) == seen && !atomic_load(&p->stop)) wait_while_equal(&p->gen, seen);
        if (atomic_load(&p->stop)) break;
        seen = g;
        p->fn(p->ctx, part, p->n);
        if (atomic_fetch_sub(&p->pending, 1) == 1) wake_all(&p->pending);
    }
    atomic_fetch_sub(&p->running, 1);
    wake_all(&p->running);
}

void ms_pool_run(ms_pool *p, ms_job_fn fn, void *ctx) {
    if (!p || p->n < 2) { fn(ctx, 0, 1); return; }
    p->fn = fn;
    p->ctx = ctx;
    atomic_store(&p->pending, p->n - 1);
    atomic_fetch_add(&p->gen, 1); /* seq_cst: fn and ctx are visible before the new generation */
    wake_all(&p->gen);
    fn(ctx, 0, p->n);
    caller_wait_zero(p, &p->pending);
}

void ms_pool_set_caller_can_block(ms_pool *p, int yes) { if (p) p->caller_can_block = yes; }
int ms_pool_workers_running(const ms_pool *p) { return atomic_load(&((ms_pool *)p)->running); }

/* Wakes every worker with the stop flag and waits until none is left inside ms_pool_worker, so
 * the pool can be freed. Workers that never attached are not waited for (js/threads.js attaches
 * them all before the pool is used and terminates them after this). */
static void pool_stop(ms_pool *p) {
    atomic_store(&p->stop, 1);
    atomic_fetch_add(&p->gen, 1);
    wake_all(&p->gen);
    caller_wait_zero(p, &p->running);
}

#elif !defined(__wasm__)
/* ---- native: pthreads ---- */
#include <pthread.h>

struct ms_pool {
    int n, gen, pending, stop, started;
    ms_job_fn fn;
    void *ctx;
    pthread_mutex_t mu;
    pthread_cond_t work, done;
    pthread_t th[MS_POOL_MAX];
    struct ms_pool_arg { struct ms_pool *p; int part; } args[MS_POOL_MAX];
};

int ms_pool_supported(void) { return 1; }

void ms_pool_worker(ms_pool *p, int part) {
    pthread_mutex_lock(&p->mu);
    int seen = 0; /* as in the wasm pool: a late starter still takes the job in flight */
    for (;;) {
        while (p->gen == seen && !p->stop) pthread_cond_wait(&p->work, &p->mu);
        if (p->stop) break;
        seen = p->gen;
        pthread_mutex_unlock(&p->mu);
        p->fn(p->ctx, part, p->n);
        pthread_mutex_lock(&p->mu);
        if (--p->pending == 0) pthread_cond_signal(&p->done);
    }
    pthread_mutex_unlock(&p->mu);
}

static void *worker_main(void *arg) {
    struct ms_pool_arg *a = arg;
    ms_pool_worker(a->p, a->part);
    return NULL;
}

void ms_pool_run(ms_pool *p, ms_job_fn fn, void *ctx) {
    if (!p || p->n < 2) { fn(ctx, 0, 1); return; }
    pthread_mutex_lock(&p->mu);
    p->fn = fn;
    p->ctx = ctx;
    p->pending = p->n - 1;
    p->gen++;
    pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->mu);
    fn(ctx, 0, p->n);
    pthread_mutex_lock(&p->mu);
    while (p->pending > 0) pthread_cond_wait(&p->done, &p->mu);
    pthread_mutex_unlock(&p->mu);
}

void ms_pool_set_caller_can_block(ms_pool *p, int yes) { (void)p; (void)yes; }
int ms_pool_workers_running(const ms_pool *p) { return p->started; }

static void pool_stop(ms_pool *p) {
    pthread_mutex_lock(&p->mu);
    p->stop = 1;
    pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < p->started; i++) pthread_join(p->th[i], NULL);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->work);
    pthread_cond_destroy(&p->done);
}

#else
/* ---- wasm without shared memory: one thread ---- */
struct ms_pool { int n; };
int ms_pool_supported(void) { return 0; }
void ms_pool_worker(ms_pool *p, int part) { (void)p; (void)part; }
void ms_pool_run(ms_pool *p, ms_job_fn fn, void *ctx) { (void)p; fn(ctx, 0, 1); }
void ms_pool_set_caller_can_block(ms_pool *p, int yes) { (void)p; (void)yes; }
int ms_pool_workers_running(const ms_pool *p) { (void)p; return 0; }
static void pool_stop(ms_pool *p) { (void)p; }
#endif

ms_pool *ms_pool_new(int n_threads, ms_err *err) {
    if (n_threads < 1 || n_threads > MS_POOL_MAX) { ms_fail(err, MS_E_ARG, "threads: %d is outside [1, %d]", n_threads, MS_POOL_MAX); return NULL; }
    if (n_threads > 1 && !ms_pool_supported()) { ms_fail(err, MS_E_ARG, "threads: this build is single-threaded"); return NULL; }
    ms_pool *p = calloc(1, sizeof *p);
    if (!p) { ms_fail(err, MS_E_MEMORY, "cannot allocate a thread pool"); return NULL; }
    p->n = n_threads;
#if defined(__wasm__) && defined(__wasm_atomics__)
    p->caller_can_block = 0; /* polling only (js/threads.js says why); a host may allow sleeping */
#endif
#if !defined(__wasm__)
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->work, NULL);
    pthread_cond_init(&p->done, NULL);
    for (int i = 1; i < n_threads; i++) {
        p->args[i - 1] = (struct ms_pool_arg){p, i};
        if (pthread_create(&p->th[i - 1], NULL, worker_main, &p->args[i - 1])) {
            ms_fail(err, MS_E_MEMORY, "cannot start thread %d of %d", i + 1, n_threads);
            ms_pool_free(p); /* joins the threads already started */
            return NULL;
        }
        p->started++;
    }
#endif
    return p;
}

int ms_pool_threads(const ms_pool *p) { return p ? p->n : 1; }

ms_pool *ms_pool_for_rows(ms_pool *p, int rows) { return p && rows >= 2 * p->n ? p : NULL; }

void ms_pool_free(ms_pool *p) {
    if (!p) return;
    pool_stop(p);
    free(p);
}
