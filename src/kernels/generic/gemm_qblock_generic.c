/* gemm with block-quantized weights in their file layout (q8_0, q4_0) and f32 activations, scalar:
 * the definitions the SIMD128 twins (wasm/gemm_qblock_simd128.c) are tested against. */
#include "../kernels.h"
#include "../quant.h"
#include <string.h>
#include <stdint.h>

void ms_gemm_q8_0w_f32a_generic(const void *W, size_t rows, size_t cols, const float *X, int T, float *Y) {
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

void ms_gemm_q4_0w_f32a_generic(const void *W, size_t rows, size_t cols, const float *X, int T, float *Y) {
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
