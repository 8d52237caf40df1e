/* gemm with float weights (f32, f16, bf16) and f32 activations, scalar: the definitions the SIMD128
 * twins (wasm/gemm_float_simd128.c) are tested against. */
#include "../kernels.h"
#include "../quant.h"
#include <string.h>
#include <stdint.h>

void ms_gemm_f32w_f32a_generic(const void *W, size_t rows, size_t cols, const float *X, int T, float *Y) {
    const float *w = W;
    for (size_t o = 0; o < rows; o++)
        for (int t = 0; t < T; t++) Y[(size_t)t * rows + o] = ms_dot_f32_generic(w + o * cols, X + (size_t)t * cols, cols);
}

void ms_gemm_f16w_f32a_generic(const void *W, size_t rows, size_t cols, const float *X, int T, float *Y) {
    const uint16_t *w = W;
    for (size_t o = 0; o < rows; o++)
        for (int t = 0; t < T; t++) {
            const float *x = X + (size_t)t * cols;
            float s = 0;
            for (size_t i = 0; i < cols; i++) s += ms_f16_to_f32(w[o * cols + i]) * x[i];
            Y[(size_t)t * rows + o] = s;
        }
}

void ms_gemm_bf16w_f32a_generic(const void *W, size_t rows, size_t cols, const float *X, int T, float *Y) {
    const uint16_t *w = W;
    for (size_t o = 0; o < rows; o++)
        for (int t = 0; t < T; t++) {
            const float *x = X + (size_t)t * cols;
            float s = 0;
            for (size_t i = 0; i < cols; i++) s += ms_bf16_to_f32(w[o * cols + i]) * x[i];
            Y[(size_t)t * rows + o] = s;
        }
}
