/* The machine's memory read bandwidth outside wasm, for the benchmark table's context: sums a
 * 1 GiB buffer with 1 and with 2 threads (plain C; the compiler vectorises the loop). Built and
 * run by bench/engine.mjs when a C compiler is present.
 *   gcc -O3 -march=native -pthread bench/native-bandwidth.c -o build/bench/native-bandwidth */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct { const uint64_t *p; size_t n; uint64_t sum; } part;

static void *sum_part(void *arg) {
    part *pt = arg;
    uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    for (size_t i = 0; i + 4 <= pt->n; i += 4) { s0 += pt->p[i]; s1 += pt->p[i + 1]; s2 += pt->p[i + 2]; s3 += pt->p[i + 3]; }
    pt->sum = s0 + s1 + s2 + s3;
    return NULL;
}

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(void) {
    const size_t bytes = (size_t)1 << 30, n = bytes / 8;
    uint64_t *p = malloc(bytes);
    if (!p) { fprintf(stderr, "native-bandwidth: cannot allocate 1 GiB\n"); return 1; }
    memset(p, 1, bytes);
    for (int threads = 1; threads <= 2; threads++) {
        double best = 0;
        for (int rep = 0; rep < 4; rep++) {
            part parts[2];
            pthread_t th[2];
            const double t0 = now_s();
            for (int k = 0; k < threads; k++) {
                parts[k] = (part){p + k * (n / threads), n / threads, 0};
                if (pthread_create(&th[k], NULL, sum_part, &parts[k])) { fprintf(stderr, "native-bandwidth: no threads\n"); return 1; }
            }
            uint64_t total = 0;
            for (int k = 0; k < threads; k++) { pthread_join(th[k], NULL); total += parts[k].sum; }
            const double gbs = (double)bytes / (now_s() - t0) / 1e9;
            if (total != (uint64_t)n * 0x0101010101010101ull) { fprintf(stderr, "native-bandwidth: wrong sum\n"); return 1; }
            if (gbs > best) best = gbs;
        }
        printf("%d %.2f\n", threads, best);
    }
    free(p);
    return 0;
}
