/* gemm with block-quantized weights in their file layout (q8_0, q4_0: rows of 32-weight blocks)
 * and f32 activations, SIMD128: each block dequantized in registers; tile 1x4 (one weight row x up
 * to 4 tokens). Scalar twins: generic/gemm_qblock_generic.c. */
#ifdef __wasm_simd128__
#include <wasm_simd128.h>
#include <stdint.h>
#include "../kernels.h"
#include "../quant.h"
#include "simd128_common.h"

/* int8 codes -> 4 f32x4 vectors */
static inline void q8_to_f32(const int8_t *q, v128_t out[8]) {
    v128_t b0 = wasm_v128_load(q), b1 = wasm_v128_load(q + 16);
    v128_t h0 = wasm_i16x8_extend_low_i8x16(b0), h1 = wasm_i16x8_extend_high_i8x16(b0);
    v128_t h2 = wasm_i16x8_extend_low_i8x16(b1), h3 = wasm_i16x8_extend_high_i8x16(b1);
    out[0] = wasm_f32x4_convert_i32x4(wasm_i32x4_extend_low_i16x8(h0));
    out[1] = wasm_f32x4_convert_i32x4(wasm_i32x4_extend_high_i16x8(h0));
    out[2] = wasm_f32x4_convert_i32x4(wasm_i32x4_extend_low_i16x8(h1));
    out[3] = wasm_f32x4_convert_i32x4(wasm_i32x4_extend_high_i16x8(h1));
    out[4] = wasm_f32x4_convert_i32x4(wasm_i32x4_extend_low_i16x8(h2));
    out[5] = wasm_f32x4_convert_i32x4(wasm_i32x4_extend_high_i16x8(h2));
    out[6] = wasm_f32x4_convert_i32x4(wasm_i32x4_extend_low_i16x8(h3));
    out[7] = wasm_f32x4_convert_i32x4(wasm_i32x4_extend_high_i16x8(h3));
}


/* One dequantized block (8 x f32x4 weights, scale d) against the same 32 inputs of nt tokens
 * (rows of x, `stride` floats apart): lane-wise partial sums into acc, reduced once per row later. */
static inline void block_dot_f32x4(const v128_t wq[8], v128_t d, const float *x, size_t stride, int nt, v128_t acc[4]) {
    for (int u = 0; u < nt; u++, x += stride) {
        v128_t s = wasm_f32x4_mul(wq[0], wasm_v128_load(x));
        for (int k = 1; k < 8; k++) s = wasm_f32x4_add(s, wasm_f32x4_mul(wq[k], wasm_v128_load(x + 4 * k)));
        acc[u] = wasm_f32x4_add(acc[u], wasm_f32x4_mul(s, d));
    }
}

void ms_gemm_q8_0w_f32a_1x4_simd128(const void *W, size_t rows, size_t cols, const float *X, int T, float *Y) {
    const ms_block_q8_0 *w = W;
    size_t nb = cols / MS_QK;
    for (size_t o = 0; o < rows; o++) {
        for (int t0 = 0; t0 < T; t0 += 4) {
            int nt = T - t0 < 4 ? T - t0 : 4;
            v128_t acc[4] = {wasm_f32x4_splat(0), wasm_f32x4_splat(0), wasm_f32x4_splat(0), wasm_f32x4_splat(0)};
            for (size_t b = 0; b < nb; b++) {
                const ms_block_q8_0 *blk = &w[o * nb + b];
                v128_t wq[8];
                q8_to_f32(blk->q, wq);
                const v128_t d = wasm_f32x4_splat(blk->d);
                block_dot_f32x4(wq, d, X + (size_t)t0 * cols + b * MS_QK, cols, nt, acc);
            }
            for (int u = 0; u < nt; u++) Y[(size_t)(t0 + u) * rows + o] = hsum(acc[u]);
        }
    }
}

void ms_gemm_q4_0w_f32a_1x4_simd128(const void *W, size_t rows, size_t cols, const float *X, int T, float *Y) {
    const ms_block_q4_0 *w = W;
    size_t nb = cols / MS_QK;
    const v128_t m4 = wasm_i8x16_splat(15), eight = wasm_i8x16_splat(8);
    for (size_t o = 0; o < rows; o++) {
        for (int t0 = 0; t0 < T; t0 += 4) {
            int nt = T - t0 < 4 ? T - t0 : 4;
            v128_t acc[4] = {wasm_f32x4_splat(0), wasm_f32x4_splat(0), wasm_f32x4_splat(0), wasm_f32x4_splat(0)};
            for (size_t b = 0; b < nb; b++) {
                const ms_block_q4_0 *blk = &w[o * nb + b];
                v128_t raw = wasm_v128_load(blk->q);
                int8_t q[32];
                wasm_v128_store(q, wasm_i8x16_sub(wasm_v128_and(raw, m4), eight));
                wasm_v128_store(q + 16, wasm_i8x16_sub(wasm_u8x16_shr(raw, 4), eight));
                v128_t wq[8];
                q8_to_f32(q, wq);
                const v128_t d = wasm_f32x4_splat(blk->d);
                block_dot_f32x4(wq, d, X + (size_t)t0 * cols + b * MS_QK, cols, nt, acc);
            }
            for (int u = 0; u < nt; u++) Y[(size_t)(t0 + u) * rows + o] = hsum(acc[u]);
        }
    }
}
#else
typedef int ms_no_simd128_here; /* ISO C forbids an empty translation unit */
#endif
