#include "layers.h"
#include "../util/threads.h"

/* RMSNorm. llama: y = w * x * r. Qwen3.5 stores zero-centred weights: y = (1 + w) * x * r.
 * r = 1 / sqrt(mean(x^2) + eps), the mean accumulated in double. */
void ms_rmsnorm(float *y, const float *x, const float *w, int n, float eps, float offset) {
    double ss = 0;
    for (int i = 0; i < n; i++) ss += (double)x[i] * x[i];
    float r = (float)(1.0 / sqrt(ss / n + eps));
    for (int i = 0; i < n; i++) y[i] = x[i] * r * (offset + w[i]);
}

/* The same norm on B rows [B][n], the rows shared out over the model's threads in a prefill. */
typedef struct { float *y; const float *x, *w; int n; float eps, offset; int B; } rows_job;

static void rows_part(void *ctx, int part, int nparts) {
    const rows_job *j = ctx;
    for (int t = j->B * part / nparts; t < j->B * (part + 1) / nparts; t++)
        ms_rmsnorm(j->y + (size_t)t * j->n, j->x + (size_t)t * j->n, j->w, j->n, j->eps, j->offset);
}

void ms_rmsnorm_rows(const ms_model *m, float *y, const float *x, const float *w, int B, int n, float eps, float offset) {
    rows_job j = {y, x, w, n, eps, offset, B};
    ms_pool_run(ms_pool_for_rows(m->pool, B), rows_part, &j);
}
