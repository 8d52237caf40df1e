/* Scalar reference activations: the definition the SIMD128 twins are tested against. */
#include "../kernels.h"
#include <math.h>

/* y = silu(g) * u, or silu(g) when u is NULL; silu(x) = x / (1 + e^-x). y may be g. */
void ms_silu_mul_f32_generic(float *y, const float *g, const float *u, size_t n) {
    for (size_t i = 0; i < n; i++) {
        const float s = g[i] / (1.0f + expf(-g[i]));
        y[i] = u ? s * u[i] : s;
    }
}

/* y = gelu(g) * u with the tanh GELU written as x / (1 + e^(-2z)) (kernels.h); y may be g. */
void ms_gelu_tanh_mul_f32_generic(float *y, const float *g, const float *u, size_t n) {
    for (size_t i = 0; i < n; i++) {
        const float x = g[i], z2 = 1.5957691216f * (x + 0.044715f * x * x * x); /* 2 sqrt(2/pi) = 1.5957691216 */
        const float s = x / (1.0f + expf(-z2));
        y[i] = u ? s * u[i] : s;
    }
}

double ms_exp_sum_f32_generic(float *y, const float *x, size_t n, float shift, float scale) {
    double z = 0;
    for (size_t i = 0; i < n; i++) {
        const float a = (x[i] - shift) * scale, e = a < -87.0f ? 0.0f : expf(a);
        if (y) y[i] = e;
        z += e;
    }
    return z;
}

double ms_sumsq_f32_generic(const float *x, size_t n) {
    float acc[16] = {0};
    size_t i = 0;
    for (; i + 16 <= n; i += 16)
        for (int k = 0; k < 16; k++) acc[k] += x[i + k] * x[i + k];
    double s = 0;
    for (int k = 0; k < 16; k++) s += acc[k];
    for (; i < n; i++) s += (double)x[i] * x[i];
    return s;
}
