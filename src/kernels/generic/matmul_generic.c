/* Scalar reference kernels: the definition every SIMD kernel is tested against. */
#include "../kernels.h"
#include "../quant.h"
#include <string.h>
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

void ms_dot_rows_f32_generic(float *y, const float *x, const float *A, size_t stride, size_t n, size_t k, float scale) {
    for (size_t u = 0; u < n; u++) y[u] = scale * ms_dot_f32_generic(x, A + u * stride, k);
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
static void matmul_x4_generic(const void *W, int q4, size_t rows, size_t cols, const float *X, int T, float *Y) {
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
static void matmul_x4_x2i16_generic(const void *W, int q4, size_t rows, size_t cols, const float *X, int T, float *Y) {
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

void ms_matmul_q8_0x4_x2i16_generic(const void *W, size_t rows, size_t cols, const float *X, int T, float *Y) {
    matmul_x4_x2i16_generic(W, 0, rows, cols, X, T, Y);
}

void ms_matmul_q4_0x4_x2i16_generic(const void *W, size_t rows, size_t cols, const float *X, int T, float *Y) {
    matmul_x4_x2i16_generic(W, 1, rows, cols, X, T, Y);
}

void ms_matmul_q8_0x4_generic(const void *W, size_t rows, size_t cols, const float *X, int T, float *Y) {
    matmul_x4_generic(W, 0, rows, cols, X, T, Y);
}

void ms_matmul_q4_0x4_generic(const void *W, size_t rows, size_t cols, const float *X, int T, float *Y) {
    matmul_x4_generic(W, 1, rows, cols, X, T, Y);
}

/* Out += sign * A B (kernels.h). Tiles of 4 rows x 16 columns held in locals while K runs, so each
 * row of B is loaded once per 4 rows of A (clang vectorizes the tile). */
void ms_gemm_acc_f32_generic(float *Out, size_t os, const float *A, size_t ars, size_t acs, const float *B, size_t bs,
                     int M, int K, int N, float sign) {
    enum { TM = 4, TN = 16 };
    int i = 0;
    for (; i + TM <= M; i += TM) {
        int y = 0;
        for (; y + TN <= N; y += TN) {
            float acc[TM][TN];
            for (int r = 0; r < TM; r++) for (int c = 0; c < TN; c++) acc[r][c] = 0;
            for (int x = 0; x < K; x++) {
                const float *b = B + (size_t)x * bs + y;
                for (int r = 0; r < TM; r++) {
                    const float a = A[(size_t)(i + r) * ars + (size_t)x * acs];
                    for (int c = 0; c < TN; c++) acc[r][c] += a * b[c];
                }
            }
            for (int r = 0; r < TM; r++) for (int c = 0; c < TN; c++) Out[(size_t)(i + r) * os + y + c] += sign * acc[r][c];
        }
        for (; y < N; y++)
            for (int r = 0; r < TM; r++) {
                float acc = 0;
                for (int x = 0; x < K; x++) acc += A[(size_t)(i + r) * ars + (size_t)x * acs] * B[(size_t)x * bs + y];
                Out[(size_t)(i + r) * os + y] += sign * acc;
            }
    }
    for (; i < M; i++)
        for (int y = 0; y < N; y++) {
            float acc = 0;
            for (int x = 0; x < K; x++) acc += A[(size_t)i * ars + (size_t)x * acs] * B[(size_t)x * bs + y];
            Out[(size_t)i * os + y] += sign * acc;
        }
}
