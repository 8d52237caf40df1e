#include "layers.h"

/* RMSNorm. llama: y = w * x * r. Qwen3.5 stores zero-centred weights: y = (1 + w) * x * r.
 * r = 1 / sqrt(mean(x^2) + eps), the mean accumulated in double. */
void ms_rmsnorm(float *y, const float *x, const float *w, int n, float eps, float offset) {
    double ss = 0;
    for (int i = 0; i < n; i++) ss += (double)x[i] * x[i];
    float r = (float)(1.0 / sqrt(ss / n + eps));
    for (int i = 0; i < n; i++) y[i] = x[i] * r * (offset + w[i]);
}
