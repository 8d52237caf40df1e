/* Scalar reference kernels: the definition every SIMD kernel is tested against. */
#include "../kernels.h"
#include "../quant.h"
#include <stdint.h>

float ms_dot_f32_generic(const float *a, const float *b, size_t n) {
    float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        s0 += a[i] * b[i]; s1 += a[i + 1] * b[i + 1];
        s2 += a[i + 2] * b[i + 2]; s3 += a[i + 3] * b[i + 3];
    }
    for (; i < n; i++) s0 += a[i] * b[i];
    return (s0 + s1) + (s2 + s3);
}

void ms_matmul_f32_generic(const void *W, size_t rows, size_t cols, const float *X, int T, float *Y) {
    const float *w = W;
    for (size_t o = 0; o < rows; o++)
        for (int t = 0; t < T; t++) Y[(size_t)t * rows + o] = ms_dot_f32_generic(w + o * cols, X + (size_t)t * cols, cols);
}

void ms_matmul_f16_generic(const void *W, size_t rows, size_t cols, const float *X, int T, float *Y) {
    const uint16_t *w = W;
    for (size_t o = 0; o < rows; o++)
        for (int t = 0; t < T; t++) {
            const float *x = X + (size_t)t * cols;
            float s = 0;
            for (size_t i = 0; i < cols; i++) s += ms_f16_to_f32(w[o * cols + i]) * x[i];
            Y[(size_t)t * rows + o] = s;
        }
}

void ms_matmul_bf16_generic(const void *W, size_t rows, size_t cols, const float *X, int T, float *Y) {
    const uint16_t *w = W;
    for (size_t o = 0; o < rows; o++)
        for (int t = 0; t < T; t++) {
            const float *x = X + (size_t)t * cols;
            float s = 0;
            for (size_t i = 0; i < cols; i++) s += ms_bf16_to_f32(w[o * cols + i]) * x[i];
            Y[(size_t)t * rows + o] = s;
        }
}

void ms_matmul_q8_0_generic(const void *W, size_t rows, size_t cols, const float *X, int T, float *Y) {
    const ms_block_q8_0 *w = W;
    size_t nb = cols / MS_QK;
    for (size_t o = 0; o < rows; o++)
        for (int t = 0; t < T; t++) {
            const float *x = X + (size_t)t * cols;
            float s = 0;
            for (size_t b = 0; b < nb; b++) {
                const ms_block_q8_0 *blk = &w[o * nb + b];
                float sb = 0;
                for (int j = 0; j < MS_QK; j++) sb += (float)blk->q[j] * x[b * MS_QK + j];
                s += blk->d * sb;
            }
            Y[(size_t)t * rows + o] = s;
        }
}

void ms_matmul_q4_0_generic(const void *W, size_t rows, size_t cols, const float *X, int T, float *Y) {
    const ms_block_q4_0 *w = W;
    size_t nb = cols / MS_QK;
    for (size_t o = 0; o < rows; o++)
        for (int t = 0; t < T; t++) {
            const float *x = X + (size_t)t * cols;
            float s = 0;
            for (size_t b = 0; b < nb; b++) {
                const ms_block_q4_0 *blk = &w[o * nb + b];
                const float *xb = x + b * MS_QK;
                float sb = 0;
                for (int j = 0; j < MS_QK / 2; j++) {
                    sb += (float)((blk->q[j] & 15) - 8) * xb[j];
                    sb += (float)((blk->q[j] >> 4) - 8) * xb[j + MS_QK / 2];
                }
                s += blk->d * sb;
            }
            Y[(size_t)t * rows + o] = s;
        }
}
