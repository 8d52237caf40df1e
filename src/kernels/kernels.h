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
/* y[i] = gelu(g[i]) * u[i] (u NULL: gelu(g[i])) with the tanh GELU of Gemma's GeGLU,
 * gelu(x) = x/2 (1 + tanh(z)) = x / (1 + e^(-2z)), z = sqrt(2/pi) (x + 0.044715 x^3); y may alias g or u. */
typedef void (*ms_gelu_tanh_mul_fn)(float *y, const float *g, const float *u, size_t n);
/* y[i] = e^((x[i] - shift) * scale) (y NULL: not stored; y may be x), returning their sum accumulated
 * in double: softmax numerators and denominator (attention scores, the sampler's vocabulary). For
 * exponents a <= 88; a term with a < -87 counts as 0; a NaN makes the sum NaN. */
typedef double (*ms_exp_sum_fn)(float *y, const float *x, size_t n, float shift, float scale);
/* sum of x[i]^2: 16 f32 partial sums (element i goes to sum i % 16 for the whole 16-element blocks),
 * added in double in lane order, plus the tail in double; the generic and SIMD128 kernels follow
 * the same order, so they agree bit for bit (a statistic: the Gated DeltaNet state's norm) */
typedef double (*ms_sumsq_fn)(const float *x, size_t n);

typedef struct {
    const char *name;        /* "generic", "wasm-simd128" or "wasm-simd128+relaxed" */
    int level;               /* the MS_ISA_* it was made for (ms_kernels_init) */
    ms_matmul_fn matmul[MS_DTYPE__COUNT]; /* indexed by ms_dtype */
    /* the same with exact (f32-accurate) activations: differs only for the x4 layouts, whose
     * matmul[] entries quantize activations to int8 */
    ms_matmul_fn matmul_exact[MS_DTYPE__COUNT];
    ms_dot_fn dot;
    ms_dot_rows_fn dot_rows;
    ms_gemm_acc_fn gemm_acc;
    ms_silu_mul_fn silu_mul;
    ms_gelu_tanh_mul_fn gelu_tanh_mul;
    ms_exp_sum_fn exp_sum;
    ms_sumsq_fn sumsq;
} ms_kernels;

/* Kernel names follow one grammar: ms_<op>_<weights>w_<activations>a[_<tile>]_<isa> for the matrix
 * products with weights (op gemm: Y[t][o] = Σ W[o][i] X[t][i]), ms_<op>_<type>[_<tile>]_<isa> for
 * the rest. weights: f32, f16, bf16, q8_0, q4_0 (rows of 32-weight blocks, the file layout),
 * q8_0x4, q4_0x4 (the same blocks, 4 rows interleaved: quant.h); activations: f32, i8 (int8 codes
 * per block of 32), i16x2 (two 16-bit codes per value: exact up to f32 rounding); tile: weight rows
 * x tokens (gemm), rows (dot_rows: 4r), M x N (gemm_acc); isa: generic (portable scalar C, in
 * generic/) or simd128 (WASM SIMD128, in wasm/). Files hold one family each: gemm_float_*,
 * gemm_qblock_*, gemm_qx4_*, vector_* (f32 x f32 products), activation_*; every wasm/ file has its
 * generic/ twin. */

/* One row per gemm kernel: what it multiplies and the edges of its loops, from which
 * tests/kernels.test.js derives its test shapes (below, at and above each edge); ms_kernels_init
 * picks from it, and the engine lists it (engine info "gemm_kernels"). */
typedef struct {
    const char *name;
    ms_matmul_fn fn;
    int dtype;                   /* the weights' ms_dtype */
    const char *acts;            /* activations: "f32", "i8", "i16x2" */
    int simd;                    /* its level: MS_ISA_GENERIC (generic/), _SIMD128 or _RELAXED (wasm/) */
    int tile_rows, tile_tokens;  /* the inner tile: weight rows x tokens */
    int decode_rows;             /* rows per step with a single token (0: tile_rows) */
    int row_step, col_step;      /* rows are a multiple of row_step, columns of col_step */
    int col_block;               /* columns per inner step (a vector, a block) */
    int col_chunk, row_chunk;    /* columns / rows processed in chunks of this many (0: none) */
    int max_cols;                /* above this many columns the generic twin runs (0: none) */
} ms_gemm_kernel;
extern const ms_gemm_kernel ms_gemm_kernels[];
extern const int ms_n_gemm_kernels;

/* Kernel levels, each a superset of the one before: the portable C kernels; SIMD128 (when the
 * build has it); SIMD128 with relaxed-SIMD kernels, whose tiles live in a separate module the host
 * links in (wasm/gemm_qx4_relaxed.c): "relaxed" needs only the instruction as specified for
 * operands in 0..127, "relaxedu8" needs it to read its second operand as unsigned 8-bit and add in
 * 32 bits (x86 AVX-VNNI). A host asks for a relaxed level only when it linked that module and
 * checked the engine computes what the level needs (js/relaxed.js). */
enum { MS_ISA_GENERIC = 0, MS_ISA_SIMD128 = 1, MS_ISA_RELAXED = 2, MS_ISA_RELAXED_U8 = 3 };
/* level: the highest kernel level wanted (MS_ISA_*); a build without SIMD128 gets the generic ones. */
void ms_kernels_init(ms_kernels *k, int level);
int ms_kernels_have_simd(void);

/* generic/ */
void ms_gemm_f32w_f32a_generic(const void *W, size_t rows, size_t cols, const float *X, int T, float *Y);
void ms_gemm_f16w_f32a_generic(const void *W, size_t rows, size_t cols, const float *X, int T, float *Y);
void ms_gemm_bf16w_f32a_generic(const void *W, size_t rows, size_t cols, const float *X, int T, float *Y);
void ms_gemm_q8_0w_f32a_generic(const void *W, size_t rows, size_t cols, const float *X, int T, float *Y);
void ms_gemm_q4_0w_f32a_generic(const void *W, size_t rows, size_t cols, const float *X, int T, float *Y);
void ms_gemm_q8_0x4w_i8a_generic(const void *W, size_t rows, size_t cols, const float *X, int T, float *Y);
void ms_gemm_q4_0x4w_i8a_generic(const void *W, size_t rows, size_t cols, const float *X, int T, float *Y);
void ms_gemm_q8_0x4w_i16x2a_generic(const void *W, size_t rows, size_t cols, const float *X, int T, float *Y);
void ms_gemm_q4_0x4w_i16x2a_generic(const void *W, size_t rows, size_t cols, const float *X, int T, float *Y);
float ms_dot_f32_generic(const float *a, const float *b, size_t n);
void ms_dot_rows_f32_generic(float *y, const float *x, const float *A, size_t stride, size_t n, size_t k, float scale);
void ms_gemm_acc_f32_generic(float *Out, size_t os, const float *A, size_t ars, size_t acs, const float *B, size_t bs, int M, int K, int N, float sign);
void ms_silu_mul_f32_generic(float *y, const float *g, const float *u, size_t n);
void ms_gelu_tanh_mul_f32_generic(float *y, const float *g, const float *u, size_t n);
double ms_exp_sum_f32_generic(float *y, const float *x, size_t n, float shift, float scale);
double ms_sumsq_f32_generic(const float *x, size_t n);
#ifdef __wasm_simd128__
void ms_gemm_q8_0x4w_i8a_simd128(const void *W, size_t rows, size_t cols, const float *X, int T, float *Y);
void ms_gemm_q4_0x4w_i8a_simd128(const void *W, size_t rows, size_t cols, const float *X, int T, float *Y);
void ms_gemm_q8_0x4w_i16x2a_simd128(const void *W, size_t rows, size_t cols, const float *X, int T, float *Y);
void ms_gemm_q4_0x4w_i16x2a_simd128(const void *W, size_t rows, size_t cols, const float *X, int T, float *Y);
/* relaxed SIMD: the activations prepared here, the tiles in the relaxed module (wasm/gemm_qx4_relaxed.c) */
void ms_gemm_q8_0x4w_i8a_4x4_relaxed(const void *W, size_t rows, size_t cols, const float *X, int T, float *Y);
void ms_gemm_q8_0x4w_i8a_4x8_relaxedu8(const void *W, size_t rows, size_t cols, const float *X, int T, float *Y);
void ms_gemm_q4_0x4w_i8a_4x8_relaxed(const void *W, size_t rows, size_t cols, const float *X, int T, float *Y);
/* wasm/ */
void ms_gemm_f32w_f32a_1x4_simd128(const void *W, size_t rows, size_t cols, const float *X, int T, float *Y);
void ms_gemm_f16w_f32a_1x4_simd128(const void *W, size_t rows, size_t cols, const float *X, int T, float *Y);
void ms_gemm_bf16w_f32a_1x4_simd128(const void *W, size_t rows, size_t cols, const float *X, int T, float *Y);
void ms_gemm_q8_0w_f32a_1x4_simd128(const void *W, size_t rows, size_t cols, const float *X, int T, float *Y);
void ms_gemm_q4_0w_f32a_1x4_simd128(const void *W, size_t rows, size_t cols, const float *X, int T, float *Y);
float ms_dot_f32_simd128(const float *a, const float *b, size_t n);
void ms_dot_rows_f32_4r_simd128(float *y, const float *x, const float *A, size_t stride, size_t n, size_t k, float scale);
void ms_gemm_acc_f32_4x8_simd128(float *Out, size_t os, const float *A, size_t ars, size_t acs, const float *B, size_t bs, int M, int K, int N, float sign);
void ms_silu_mul_f32_simd128(float *y, const float *g, const float *u, size_t n);
void ms_gelu_tanh_mul_f32_simd128(float *y, const float *g, const float *u, size_t n);
double ms_exp_sum_f32_simd128(float *y, const float *x, size_t n, float shift, float scale);
double ms_sumsq_f32_simd128(const float *x, size_t n);
#endif
#endif
