/* f32 x f32 products for attention and Gated DeltaNet, SIMD128: dot, dot_rows (4 key rows at a
 * time), gemm_acc (4 x 8 tiles). Scalar twins: generic/vector_generic.c. */
#ifdef __wasm_simd128__
#include <wasm_simd128.h>
#include <stdint.h>
#include "../kernels.h"
#include "../quant.h"
#include "simd128_common.h"

float ms_dot_f32_simd128(const float *a, const float *b, size_t n) {
    v128_t s0 = wasm_f32x4_splat(0), s1 = wasm_f32x4_splat(0);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        s0 = wasm_f32x4_add(s0, wasm_f32x4_mul(wasm_v128_load(a + i), wasm_v128_load(b + i)));
        s1 = wasm_f32x4_add(s1, wasm_f32x4_mul(wasm_v128_load(a + i + 4), wasm_v128_load(b + i + 4)));
    }
    for (; i + 4 <= n; i += 4) s0 = wasm_f32x4_add(s0, wasm_f32x4_mul(wasm_v128_load(a + i), wasm_v128_load(b + i)));
    float s = hsum(wasm_f32x4_add(s0, s1));
    for (; i < n; i++) s += a[i] * b[i];
    return s;
}

/* One row's sum: lanes paired as (0 + 2) + (1 + 3), then the k % 4 tail; the 4-row reduction
 * below adds in the same order, so a row gives the same score in a group of four or alone. */
static inline float dot_row_f32(const float *x, const float *a, size_t k) {
    v128_t s = wasm_f32x4_splat(0);
    size_t i = 0;
    for (; i + 4 <= k; i += 4) s = wasm_f32x4_add(s, wasm_f32x4_mul(wasm_v128_load(x + i), wasm_v128_load(a + i)));
    float r = (wasm_f32x4_extract_lane(s, 0) + wasm_f32x4_extract_lane(s, 2)) + (wasm_f32x4_extract_lane(s, 1) + wasm_f32x4_extract_lane(s, 3));
    for (; i < k; i++) r += x[i] * a[i];
    return r;
}

/* Scores of one query against 4 key rows at a time: each x vector loaded once for 4 rows, four
 * independent sums, and the four reduced together by two rounds of shuffles. */
void ms_dot_rows_f32_4r_simd128(float *y, const float *x, const float *A, size_t stride, size_t n, size_t k, float scale) {
    size_t u = 0;
    for (; u + 4 <= n; u += 4) {
        const float *a0 = A + u * stride, *a1 = a0 + stride, *a2 = a1 + stride, *a3 = a2 + stride;
        v128_t s0 = wasm_f32x4_splat(0), s1 = s0, s2 = s0, s3 = s0;
        size_t i = 0;
        for (; i + 4 <= k; i += 4) {
            const v128_t xv = wasm_v128_load(x + i);
            s0 = wasm_f32x4_add(s0, wasm_f32x4_mul(xv, wasm_v128_load(a0 + i)));
            s1 = wasm_f32x4_add(s1, wasm_f32x4_mul(xv, wasm_v128_load(a1 + i)));
            s2 = wasm_f32x4_add(s2, wasm_f32x4_mul(xv, wasm_v128_load(a2 + i)));
            s3 = wasm_f32x4_add(s3, wasm_f32x4_mul(xv, wasm_v128_load(a3 + i)));
        }
        /* [s0_0 + s0_2, s1_0 + s1_2, s0_1 + s0_3, s1_1 + s1_3], the same for rows 2 and 3, then
         * lane r = row r's (0 + 2) + (1 + 3) */
        const v128_t p01 = wasm_f32x4_add(wasm_i32x4_shuffle(s0, s1, 0, 4, 1, 5), wasm_i32x4_shuffle(s0, s1, 2, 6, 3, 7));
        const v128_t p23 = wasm_f32x4_add(wasm_i32x4_shuffle(s2, s3, 0, 4, 1, 5), wasm_i32x4_shuffle(s2, s3, 2, 6, 3, 7));
        v128_t t = wasm_f32x4_add(wasm_i32x4_shuffle(p01, p23, 0, 1, 4, 5), wasm_i32x4_shuffle(p01, p23, 2, 3, 6, 7));
        if (i < k) {
            float r[4];
            wasm_v128_store(r, t);
            for (; i < k; i++) { r[0] += x[i] * a0[i]; r[1] += x[i] * a1[i]; r[2] += x[i] * a2[i]; r[3] += x[i] * a3[i]; }
            t = wasm_v128_load(r);
        }
        wasm_v128_store(y + u, wasm_f32x4_mul(t, wasm_f32x4_splat(scale)));
    }
    for (; u < n; u++) y[u] = scale * dot_row_f32(x, A + u * stride, k);
}

/* Out += sign * A B (kernels.h), tiles of 4 rows x 8 columns: 8 accumulators, each row of B (two
 * vectors) loaded once per 4 rows of A, the A values splatted. Row and column tails go to the
 * generic kernel. */
void ms_gemm_acc_f32_4x8_simd128(float *Out, size_t os, const float *A, size_t ars, size_t acs, const float *B, size_t bs,
                                 int M, int K, int N, float sign) {
    const v128_t sg = wasm_f32x4_splat(sign);
    int i = 0;
    for (; i + 4 <= M; i += 4) {
        int y = 0;
        for (; y + 8 <= N; y += 8) {
            v128_t c[4][2];
            for (int r = 0; r < 4; r++) c[r][0] = c[r][1] = wasm_f32x4_splat(0);
            const float *a = A + (size_t)i * ars;
            for (int x = 0; x < K; x++) {
                const float *b = B + (size_t)x * bs + y;
                const v128_t b0 = wasm_v128_load(b), b1 = wasm_v128_load(b + 4);
                for (int r = 0; r < 4; r++) {
                    const v128_t av = wasm_f32x4_splat(a[(size_t)r * ars + (size_t)x * acs]);
                    c[r][0] = wasm_f32x4_add(c[r][0], wasm_f32x4_mul(av, b0));
                    c[r][1] = wasm_f32x4_add(c[r][1], wasm_f32x4_mul(av, b1));
                }
            }
            for (int r = 0; r < 4; r++) {
                float *o = Out + (size_t)(i + r) * os + y;
                wasm_v128_store(o, wasm_f32x4_add(wasm_v128_load(o), wasm_f32x4_mul(sg, c[r][0])));
                wasm_v128_store(o + 4, wasm_f32x4_add(wasm_v128_load(o + 4), wasm_f32x4_mul(sg, c[r][1])));
            }
        }
        if (y < N) ms_gemm_acc_f32_generic(Out + (size_t)i * os + y, os, A + (size_t)i * ars, ars, acs, B + y, bs, 4, K, N - y, sign);
    }
    if (i < M) ms_gemm_acc_f32_generic(Out + (size_t)i * os, os, A + (size_t)i * ars, ars, acs, B, bs, M - i, K, N, sign);
}
#else
typedef int ms_no_simd128_here; /* ISO C forbids an empty translation unit */
#endif
