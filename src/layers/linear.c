#include "layers.h"
#include "../util/threads.h"

/* Y = W X for T tokens, split over the model's threads: a single token (decode) splits the output
 * rows (in fours, the interleave of the x4 layouts), several tokens split the tokens (in fours,
 * the kernels' token tile), so each thread streams its own rows or reuses the whole matrix for its
 * own tokens. Every output value goes through the same arithmetic either way, so any thread count
 * gives bit-identical results (tests/threads.test.js). */
typedef struct {
    ms_matmul_fn fn;
    const ms_tensor *W;
    const float *X;
    int T;
    float *Y;
} linear_job;

static void linear_part(void *ctx, int part, int n) {
    const linear_job *j = ctx;
    const size_t rows = (size_t)j->W->rows, cols = (size_t)j->W->cols;
    if (j->T == 1) {
        const size_t groups = (rows + 3) / 4, g0 = groups * (size_t)part / (size_t)n, g1 = groups * (size_t)(part + 1) / (size_t)n;
        const size_t r0 = 4 * g0, r1 = 4 * g1 < rows ? 4 * g1 : rows;
        if (r1 > r0)
            j->fn((const char *)j->W->data + ms_dtype_bytes(j->W->dtype, r0, cols), r1 - r0, cols, j->X, 1, j->Y + r0);
    } else { /* in tiles of 4 tokens, the kernels' token tile, so each token lands in the same tile */
        const long tiles = (j->T + 3) / 4;
        const int t0 = (int)(4 * (tiles * part / n)), t1e = (int)(4 * (tiles * (part + 1) / n));
        const int t1 = t1e < j->T ? t1e : j->T;
        if (t1 > t0) j->fn(j->W->data, rows, cols, j->X + (size_t)t0 * cols, t1 - t0, j->Y + (size_t)t0 * rows);
    }
}

static void linear_run(const ms_model *m, ms_matmul_fn fn, const ms_tensor *W, const float *X, int T, float *Y) {
    linear_job j = {fn, W, X, T, Y};
    /* small products are not worth waking the workers for (a wake-up costs microseconds) */
    if (!m->pool || (size_t)W->rows * (size_t)W->cols * (size_t)T < ((size_t)1 << 18) || W->rows < 8) { linear_part(&j, 0, 1); return; }
    ms_pool_run(m->pool, linear_part, &j);
}

void ms_linear(const ms_model *m, const ms_tensor *W, const float *X, int T, float *Y) {
    linear_run(m, m->kern.matmul[W->dtype], W, X, T, Y);
}

void ms_linear_exact(const ms_model *m, const ms_tensor *W, const float *X, int T, float *Y) {
    linear_run(m, m->kern.matmul_exact[W->dtype], W, X, T, Y);
}
