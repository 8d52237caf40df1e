/* gemm with float weights (f32, f16, bf16) and f32 activations, SIMD128. Tile 1x4: one weight row
 * x up to 4 tokens, so a weight row is read once per 4 tokens. Scalar twins:
 * generic/gemm_float_generic.c. */
#ifdef __wasm_simd128__
#include <wasm_simd128.h>
#include <stdint.h>
#include "../kernels.h"
#include "../quant.h"
#include "simd128_common.h"

void ms_gemm_f32w_f32a_1x4_simd128(const void *W, size_t rows, size_t cols, const float *X, int T, float *Y) {
    const float *w = W;
    for (size_t o = 0; o < rows; o++) {
        const float *wr = w + o * cols;
        int t = 0;
        for (; t + 4 <= T; t += 4) {
            const float *x0 = X + (size_t)t * cols, *x1 = x0 + cols, *x2 = x1 + cols, *x3 = x2 + cols;
            v128_t a0 = wasm_f32x4_splat(0), a1 = a0, a2 = a0, a3 = a0;
            size_t i = 0;
            for (; i + 4 <= cols; i += 4) {
                v128_t wv = wasm_v128_load(wr + i);
                a0 = wasm_f32x4_add(a0, wasm_f32x4_mul(wv, wasm_v128_load(x0 + i)));
                a1 = wasm_f32x4_add(a1, wasm_f32x4_mul(wv, wasm_v128_load(x1 + i)));
                a2 = wasm_f32x4_add(a2, wasm_f32x4_mul(wv, wasm_v128_load(x2 + i)));
                a3 = wasm_f32x4_add(a3, wasm_f32x4_mul(wv, wasm_v128_load(x3 + i)));
            }
            float s0 = hsum(a0), s1 = hsum(a1), s2 = hsum(a2), s3 = hsum(a3);
            for (; i < cols; i++) { s0 += wr[i] * x0[i]; s1 += wr[i] * x1[i]; s2 += wr[i] * x2[i]; s3 += wr[i] * x3[i]; }
            Y[(size_t)t * rows + o] = s0; Y[(size_t)(t + 1) * rows + o] = s1;
            Y[(size_t)(t + 2) * rows + o] = s2; Y[(size_t)(t + 3) * rows + o] = s3;
        }
        for (; t < T; t++) Y[(size_t)t * rows + o] = ms_dot_f32_simd128(wr, X + (size_t)t * cols, cols);
    }
}

/* 8 half-precision weights -> 2 f32x4 vectors, in registers. bf16: the top half of an f32.
 * f16: move sign, exponent and mantissa into f32 position and multiply by 2^112, which rebiases
 * the exponent and turns f16 subnormals into the right normal f32s exactly; inf/NaN (exponent 31)
 * get the f32 all-ones exponent. */
static inline v128_t f16x4_to_f32(v128_t v) {
    const v128_t em = wasm_v128_and(v, wasm_i32x4_splat(0x7fff)), sign = wasm_i32x4_shl(wasm_v128_and(v, wasm_i32x4_splat(0x8000)), 16);
    const v128_t bits = wasm_i32x4_shl(em, 13);
    const v128_t scaled = wasm_f32x4_mul(bits, wasm_f32x4_splat(0x1p112f));
    const v128_t special = wasm_v128_or(bits, wasm_i32x4_splat(0x7f800000));
    const v128_t is_special = wasm_i32x4_ge(em, wasm_i32x4_splat(0x7c00));
    return wasm_v128_or(wasm_v128_bitselect(special, scaled, is_special), sign);
}

static inline void half8_to_f32(const uint16_t *p, const int bf, v128_t *lo, v128_t *hi) {
    const v128_t h = wasm_v128_load(p);
    const v128_t a = wasm_u32x4_extend_low_u16x8(h), b = wasm_u32x4_extend_high_u16x8(h);
    if (bf) { *lo = wasm_i32x4_shl(a, 16); *hi = wasm_i32x4_shl(b, 16); }
    else { *lo = f16x4_to_f32(a); *hi = f16x4_to_f32(b); }
}

/* f16 / bf16 weights, decoded in the kernel: 1 weight row x up to 4 tokens, like the f32 kernel. */
static inline __attribute__((always_inline)) void matmul_half_simd128(const void *W, const int bf, size_t rows, size_t cols, const float *X, int T, float *Y) {
    const uint16_t *w = W;
    for (size_t o = 0; o < rows; o++) {
        const uint16_t *wr = w + o * cols;
        for (int t0 = 0; t0 < T; t0 += 4) {
            const int nt = T - t0 < 4 ? T - t0 : 4;
            const float *x = X + (size_t)t0 * cols;
            v128_t acc[4] = {wasm_f32x4_splat(0), wasm_f32x4_splat(0), wasm_f32x4_splat(0), wasm_f32x4_splat(0)};
            size_t i = 0;
            for (; i + 8 <= cols; i += 8) {
                v128_t lo, hi;
                half8_to_f32(wr + i, bf, &lo, &hi);
                for (int u = 0; u < nt; u++)
                    acc[u] = wasm_f32x4_add(acc[u], wasm_f32x4_add(wasm_f32x4_mul(lo, wasm_v128_load(x + (size_t)u * cols + i)),
                                                                   wasm_f32x4_mul(hi, wasm_v128_load(x + (size_t)u * cols + i + 4))));
            }
            for (int u = 0; u < nt; u++) {
                float sum = hsum(acc[u]);
                for (size_t k = i; k < cols; k++) sum += (bf ? ms_bf16_to_f32(wr[k]) : ms_f16_to_f32(wr[k])) * x[(size_t)u * cols + k];
                Y[(size_t)(t0 + u) * rows + o] = sum;
            }
        }
    }
}

void ms_gemm_f16w_f32a_1x4_simd128(const void *W, size_t rows, size_t cols, const float *X, int T, float *Y) { matmul_half_simd128(W, 0, rows, cols, X, T, Y); }
void ms_gemm_bf16w_f32a_1x4_simd128(const void *W, size_t rows, size_t cols, const float *X, int T, float *Y) { matmul_half_simd128(W, 1, rows, cols, X, T, Y); }
#else
typedef int ms_no_simd128_here; /* ISO C forbids an empty translation unit */
#endif
