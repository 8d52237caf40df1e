/* The kernel interface. Matmul: Y[t][o] = sum_i W[o][i] * X[t][i] for a weight matrix W (rows x
 * cols, row-major, any weight dtype) and T activation rows X (f32); beside it the f32 product the
 * chunked Gated DeltaNet needs, a dot product and the SiLU activation. One generic (scalar,
 * portable C) implementation of each lives in generic/; SIMD128 twins live in wasm/. A kernel
 * table picks one set at model creation: there is no global state. */
#ifndef MS_KERNELS_H
#define MS_KERNELS_H
#include <stddef.h>
#include "dtype.h"

typedef void (*ms_matmul_fn)(const void *W, size_t rows, size_t cols, const float *X, int T, float *Y);
typedef float (*ms_dot_fn)(const float *a, const float *b, size_t n);
/* y[u] = scale * dot(x, A + u * stride) over k values, for u < n: one query's attention scores
 * against n key rows that sit stride floats apart in the KV cache. A row's result does not depend
 * on n or on where it sits among the n. */
typedef void (*ms_dot_rows_fn)(float *y, const float *x, const float *A, size_t stride, size_t n, size_t k, float scale);
/* Out[M][N] (row stride os) += sign * A B with A[M][K] (element (i, x) at A[i * ars + x * acs], so a
 * transposed A is a stride swap) and B[K][N] (row stride bs): the chunked Gated DeltaNet's products. */
typedef void (*ms_gemm_acc_fn)(float *Out, size_t os, const float *A, size_t ars, size_t acs, const float *B, size_t bs,
                               int M, int K, int N, float sign);
/* y[i] = silu(g[i]) * u[i] (u NULL: silu(g[i])), silu(x) = x / (1 + e^-x); y may alias g or u. */
typedef void (*ms_silu_mul_fn)(float *y, const float *g, const float *u, size_t n);
/* y[i] = e^((x[i] - shift) * scale) (y NULL: not stored; y may be x), returning their sum accumulated
 * in double: softmax numerators and denominator (attention scores, the sampler's vocabulary). For
 * exponents a <= 88; a term with a < -87 counts as 0; a NaN makes the sum NaN. */
typedef double (*ms_exp_sum_fn)(float *y, const float *x, size_t n, float shift, float scale);
/* sum of x[i]^2: 16 f32 partial sums (element i goes to sum i % 16 for the whole 16-element blocks),
 * added in double in lane order, plus the tail in double; the generic and SIMD128 kernels follow
 * the same order, so they agree bit for bit (a statistic: the Gated DeltaNet state's norm) */
typedef double (*ms_sumsq_fn)(const float *x, size_t n);

typedef struct {
    const char *name;        /* "generic" or "wasm-simd128" */
    ms_matmul_fn matmul[MS_DTYPE__COUNT]; /* indexed by ms_dtype */
    /* the same with exact (f32-accurate) activations: differs only for the x4 layouts, whose
     * matmul[] entries quantize activations to int8 */
    ms_matmul_fn matmul_exact[MS_DTYPE__COUNT];
    ms_dot_fn dot;
    ms_dot_rows_fn dot_rows;
    ms_gemm_acc_fn gemm_acc;
    ms_silu_mul_fn silu_mul;
    ms_exp_sum_fn exp_sum;
    ms_sumsq_fn sumsq;
} ms_kernels;

/* want_simd: use SIMD128 kernels when this build has them. */
void ms_kernels_init(ms_kernels *k, int want_simd);
int ms_kernels_have_simd(void);

/* generic/ */
void ms_matmul_f32_generic(const void *W, size_t rows, size_t cols, const float *X, int T, float *Y);
void ms_matmul_f16_generic(const void *W, size_t rows, size_t cols, const float *X, int T, float *Y);
void ms_matmul_bf16_generic(const void *W, size_t rows, size_t cols, const float *X, int T, float *Y);
void ms_matmul_q8_0_generic(const void *W, size_t rows, size_t cols, const float *X, int T, float *Y);
void ms_matmul_q4_0_generic(const void *W, size_t rows, size_t cols, const float *X, int T, float *Y);
void ms_matmul_q8_0x4_generic(const void *W, size_t rows, size_t cols, const float *X, int T, float *Y);
void ms_matmul_q4_0x4_generic(const void *W, size_t rows, size_t cols, const float *X, int T, float *Y);
void ms_matmul_q8_0x4_x2i16_generic(const void *W, size_t rows, size_t cols, const float *X, int T, float *Y);
void ms_matmul_q4_0x4_x2i16_generic(const void *W, size_t rows, size_t cols, const float *X, int T, float *Y);
float ms_dot_f32_generic(const float *a, const float *b, size_t n);
void ms_dot_rows_f32_generic(float *y, const float *x, const float *A, size_t stride, size_t n, size_t k, float scale);
void ms_gemm_acc_f32_generic(float *Out, size_t os, const float *A, size_t ars, size_t acs, const float *B, size_t bs, int M, int K, int N, float sign);
void ms_silu_mul_f32_generic(float *y, const float *g, const float *u, size_t n);
double ms_exp_sum_f32_generic(float *y, const float *x, size_t n, float shift, float scale);
double ms_sumsq_f32_generic(const float *x, size_t n);
#ifdef __wasm_simd128__
void ms_matmul_q8_0x4_simd128(const void *W, size_t rows, size_t cols, const float *X, int T, float *Y);
void ms_matmul_q4_0x4_simd128(const void *W, size_t rows, size_t cols, const float *X, int T, float *Y);
void ms_matmul_q8_0x4_x2i16_simd128(const void *W, size_t rows, size_t cols, const float *X, int T, float *Y);
void ms_matmul_q4_0x4_x2i16_simd128(const void *W, size_t rows, size_t cols, const float *X, int T, float *Y);
/* wasm/ */
void ms_matmul_f32_1x4_simd128(const void *W, size_t rows, size_t cols, const float *X, int T, float *Y);
void ms_matmul_f16_simd128(const void *W, size_t rows, size_t cols, const float *X, int T, float *Y);
void ms_matmul_bf16_simd128(const void *W, size_t rows, size_t cols, const float *X, int T, float *Y);
void ms_matmul_q8_0_simd128(const void *W, size_t rows, size_t cols, const float *X, int T, float *Y);
void ms_matmul_q4_0_simd128(const void *W, size_t rows, size_t cols, const float *X, int T, float *Y);
float ms_dot_f32_simd128(const float *a, const float *b, size_t n);
void ms_dot_rows_f32_4r_simd128(float *y, const float *x, const float *A, size_t stride, size_t n, size_t k, float scale);
void ms_gemm_acc_f32_4x8_simd128(float *Out, size_t os, const float *A, size_t ars, size_t acs, const float *B, size_t bs, int M, int K, int N, float sign);
void ms_silu_mul_f32_simd128(float *y, const float *g, const float *u, size_t n);
double ms_exp_sum_f32_simd128(float *y, const float *x, size_t n, float shift, float scale);
double ms_sumsq_f32_simd128(const float *x, size_t n);
#endif
#endif
