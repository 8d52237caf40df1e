/* gemm with the 4-row interleaved block-quantized layouts (q8_0x4, q4_0x4) and integer activations
 * (int8 per block: i8a; two 16-bit codes: i16x2a), scalar: the definitions the SIMD128 twins
 * (wasm/gemm_qx4_simd128.c) are tested against, bit for bit. */
#include "../kernels.h"
#include "../quant.h"
#include <string.h>
#include <stdint.h>

/* Codes and scale of row r (0..3) of block `bi` of a 4-row interleaved matrix (quant.h). */
static float x4_block_row(const void *W, int q4, size_t bi, int r, int8_t c[MS_QK]) {
    if (q4) {
        const ms_block_q4_0x4 *blk = (const ms_block_q4_0x4 *)W + bi;
        for (int j = 0; j < MS_QK; j++) c[j] = (int8_t)ms_q4x4_code(blk, r, j);
        return blk->d[r];
    }
    const ms_block_q8_0x4 *blk = (const ms_block_q8_0x4 *)W + bi;
    for (int j = 0; j < MS_QK; j++) c[j] = (int8_t)ms_q8x4_code(blk, r, j);
    return blk->d[r];
}

/* int8 or int4 weights (4-row interleaved) x int8-quantized activations: for each block of 32,
 * the integer dot product times the weight scale times the activation scale. */
static void gemm_qx4_i8a(const void *W, int q4, size_t rows, size_t cols, const float *X, int T, float *Y) {
    const size_t nb = cols / MS_QK;
    int8_t q[16384], c[MS_QK];
    float d[16384 / MS_QK];
    for (int t = 0; t < T; t++) {
        const float *x = X + (size_t)t * cols;
        if (cols > sizeof q) { /* very wide rows: dequantized fallback */
            for (size_t o = 0; o < rows; o++) {
                float s = 0;
                for (size_t b = 0; b < nb; b++) {
                    const float dw = x4_block_row(W, q4, (o / 4) * nb + b, (int)(o % 4), c);
                    for (int j = 0; j < MS_QK; j++) s += dw * c[j] * x[b * MS_QK + j];
                }
                Y[(size_t)t * rows + o] = s;
            }
            continue;
        }
        ms_quantize_act_q8(x, q, d, cols);
        for (size_t g = 0; g < rows / 4; g++) {
            float acc[4] = {0, 0, 0, 0};
            for (size_t b = 0; b < nb; b++) {
                const int8_t *xb = q + b * MS_QK;
                for (int r = 0; r < 4; r++) {
                    const float dw = x4_block_row(W, q4, g * nb + b, r, c);
                    int32_t s = 0;
                    for (int j = 0; j < MS_QK; j++) s += (int32_t)c[j] * xb[j];
                    acc[r] += (float)s * (dw * d[b]);
                }
            }
            for (int r = 0; r < 4; r++) Y[(size_t)t * rows + g * 4 + r] = acc[r];
        }
    }
}

/* The same weights x activations split into two 16-bit codes (quant.h, ms_quantize_act_i16x2):
 * each part is an integer dot product per block, scaled and summed over the blocks in f32 like the
 * int8 kernel's, and the token's result is the high part's sum plus the low part's. Exact up to
 * f32 rounding, like a float kernel; bit-identical to the SIMD twin, which runs the two parts as
 * two rows of its int8 prefill tile. */
static void gemm_qx4_i16x2a(const void *W, int q4, size_t rows, size_t cols, const float *X, int T, float *Y) {
    enum { MAXC = 16384 };
    const size_t nb = cols / MS_QK;
    int16_t hi[MAXC], lo[MAXC];
    int8_t c[MS_QK];
    float dh[MAXC / MS_QK], dl[MAXC / MS_QK];
    for (int t = 0; t < T && cols > MAXC; t++) /* very wide rows: the dequantized weights in f32 */
        for (size_t o = 0; o < rows; o++) {
            float s = 0;
            for (size_t b = 0; b < nb; b++) {
                const float dw = x4_block_row(W, q4, (o / 4) * nb + b, (int)(o % 4), c);
                for (int j = 0; j < MS_QK; j++) s += dw * c[j] * X[(size_t)t * cols + b * MS_QK + j];
            }
            Y[(size_t)t * rows + o] = s;
        }
    for (int t = 0; t < T && cols <= MAXC; t++) {
        ms_quantize_act_i16x2(X + (size_t)t * cols, hi, lo, dh, dl, cols);
        for (size_t g = 0; g < rows / 4; g++) {
            float ah[4] = {0, 0, 0, 0}, al[4] = {0, 0, 0, 0};
            for (size_t b = 0; b < nb; b++)
                for (int r = 0; r < 4; r++) {
                    const float dw = x4_block_row(W, q4, g * nb + b, r, c);
                    int32_t sh = 0, sl = 0;
                    for (int j = 0; j < MS_QK; j++) { sh += (int32_t)c[j] * hi[b * MS_QK + j]; sl += (int32_t)c[j] * lo[b * MS_QK + j]; }
                    ah[r] += (float)sh * (dw * dh[b]);
                    al[r] += (float)sl * (dw * dl[b]);
                }
            for (int r = 0; r < 4; r++) Y[(size_t)t * rows + g * 4 + r] = ah[r] + al[r];
        }
    }
}

void ms_gemm_q8_0x4w_i16x2a_generic(const void *W, size_t rows, size_t cols, const float *X, int T, float *Y) {
    gemm_qx4_i16x2a(W, 0, rows, cols, X, T, Y);
}

void ms_gemm_q4_0x4w_i16x2a_generic(const void *W, size_t rows, size_t cols, const float *X, int T, float *Y) {
    gemm_qx4_i16x2a(W, 1, rows, cols, X, T, Y);
}

void ms_gemm_q8_0x4w_i8a_generic(const void *W, size_t rows, size_t cols, const float *X, int T, float *Y) {
    gemm_qx4_i8a(W, 0, rows, cols, X, T, Y);
}

void ms_gemm_q4_0x4w_i8a_generic(const void *W, size_t rows, size_t cols, const float *X, int T, float *Y) {
    gemm_qx4_i8a(W, 1, rows, cols, X, T, Y);
}
