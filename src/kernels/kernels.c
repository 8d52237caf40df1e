#include "kernels.h"
#include "dtype.h"
#include "quant.h"
#include <string.h>

int ms_kernels_have_simd(void) {
#ifdef __wasm_simd128__
    return 1;
#else
    return 0;
#endif
}

#define GEN(name, dt, acts, tr, tt, rs, cs, cb) {#name, name, dt, acts, 0, tr, tt, 0, rs, cs, cb, 0, 0, 0}
const ms_gemm_kernel ms_gemm_kernels[] = {
    GEN(ms_gemm_f32w_f32a_generic, MS_F32, "f32", 1, 1, 1, 1, 1),
    GEN(ms_gemm_f16w_f32a_generic, MS_F16, "f32", 1, 1, 1, 1, 1),
    GEN(ms_gemm_bf16w_f32a_generic, MS_BF16, "f32", 1, 1, 1, 1, 1),
    GEN(ms_gemm_q8_0w_f32a_generic, MS_Q8_0, "f32", 1, 1, 1, MS_QK, MS_QK),
    GEN(ms_gemm_q4_0w_f32a_generic, MS_Q4_0, "f32", 1, 1, 1, MS_QK, MS_QK),
    GEN(ms_gemm_q8_0x4w_i8a_generic, MS_Q8_0X4, "i8", 4, 1, 4, MS_QK, MS_QK),
    GEN(ms_gemm_q4_0x4w_i8a_generic, MS_Q4_0X4, "i8", 4, 1, 4, MS_QK, MS_QK),
    GEN(ms_gemm_q8_0x4w_i16x2a_generic, MS_Q8_0X4, "i16x2", 4, 1, 4, MS_QK, MS_QK),
    GEN(ms_gemm_q4_0x4w_i16x2a_generic, MS_Q4_0X4, "i16x2", 4, 1, 4, MS_QK, MS_QK),
#ifdef __wasm_simd128__
    /* name, fn, weights, acts, simd, tile rows x tokens, decode rows, row step, col step, col block, col chunk, row chunk, max cols */
    {"ms_gemm_f32w_f32a_1x4_simd128", ms_gemm_f32w_f32a_1x4_simd128, MS_F32, "f32", 1, 1, 4, 0, 1, 1, 4, 0, 0, 0},
    {"ms_gemm_f16w_f32a_1x4_simd128", ms_gemm_f16w_f32a_1x4_simd128, MS_F16, "f32", 1, 1, 4, 0, 1, 1, 8, 0, 0, 0},
    {"ms_gemm_bf16w_f32a_1x4_simd128", ms_gemm_bf16w_f32a_1x4_simd128, MS_BF16, "f32", 1, 1, 4, 0, 1, 1, 8, 0, 0, 0},
    {"ms_gemm_q8_0w_f32a_1x4_simd128", ms_gemm_q8_0w_f32a_1x4_simd128, MS_Q8_0, "f32", 1, 1, 4, 0, 1, MS_QK, MS_QK, 0, 0, 0},
    {"ms_gemm_q4_0w_f32a_1x4_simd128", ms_gemm_q4_0w_f32a_1x4_simd128, MS_Q4_0, "f32", 1, 1, 4, 0, 1, MS_QK, MS_QK, 0, 0, 0},
    {"ms_gemm_q8_0x4w_i8a_simd128", ms_gemm_q8_0x4w_i8a_simd128, MS_Q8_0X4, "i8", 1, 8, 4, 16, 4, MS_QK, MS_QK, 4096, 0, 16384},
    {"ms_gemm_q4_0x4w_i8a_simd128", ms_gemm_q4_0x4w_i8a_simd128, MS_Q4_0X4, "i8", 1, 8, 4, 16, 4, MS_QK, MS_QK, 4096, 0, 16384},
    {"ms_gemm_q8_0x4w_i16x2a_simd128", ms_gemm_q8_0x4w_i16x2a_simd128, MS_Q8_0X4, "i16x2", 1, 8, 2, 16, 4, MS_QK, MS_QK, 4096, 1024, 16384},
    {"ms_gemm_q4_0x4w_i16x2a_simd128", ms_gemm_q4_0x4w_i16x2a_simd128, MS_Q4_0X4, "i16x2", 1, 8, 2, 16, 4, MS_QK, MS_QK, 4096, 1024, 16384},
    {"ms_gemm_q8_0x4w_i8a_4x4_relaxed", ms_gemm_q8_0x4w_i8a_4x4_relaxed, MS_Q8_0X4, "i8", MS_ISA_RELAXED, 4, 4, 16, 4, MS_QK, MS_QK, 0, 0, 16384},
    {"ms_gemm_q8_0x4w_i8a_4x8_relaxedu8", ms_gemm_q8_0x4w_i8a_4x8_relaxedu8, MS_Q8_0X4, "i8", MS_ISA_RELAXED_U8, 4, 8, 16, 4, MS_QK, MS_QK, 0, 0, 16384},
    {"ms_gemm_q4_0x4w_i8a_4x8_relaxed", ms_gemm_q4_0x4w_i8a_4x8_relaxed, MS_Q4_0X4, "i8", MS_ISA_RELAXED, 4, 8, 16, 4, MS_QK, MS_QK, 0, 0, 16384},
#endif
};
#undef GEN
const int ms_n_gemm_kernels = (int)(sizeof ms_gemm_kernels / sizeof ms_gemm_kernels[0]);

/* the table's kernel for these weights and activations: the one of the highest level up to `level` */
static ms_matmul_fn pick(int dtype, const char *acts, int level) {
    ms_matmul_fn fn = 0;
    int best = -1;
    for (int i = 0; i < ms_n_gemm_kernels; i++) {
        const ms_gemm_kernel *g = &ms_gemm_kernels[i];
        if (g->dtype != dtype || g->simd > level || g->simd <= best || strcmp(g->acts, acts) != 0) continue;
        fn = g->fn;
        best = g->simd;
    }
    return fn;
}

void ms_kernels_init(ms_kernels *k, int level) {
    const int simd = level >= MS_ISA_SIMD128 && ms_kernels_have_simd();
    if (!simd) level = MS_ISA_GENERIC;
    else if (level > MS_ISA_RELAXED_U8) level = MS_ISA_RELAXED_U8;
    k->level = level;
    static const char *const names[] = {"generic", "wasm-simd128", "wasm-simd128+relaxed", "wasm-simd128+relaxedu8"};
    k->name = names[level];
    /* f32 activations for the float and plain block layouts; int8 (and, exact, i16x2) for x4 */
    for (int d = 0; d < MS_DTYPE__COUNT; d++) {
        const int x4 = d == MS_Q8_0X4 || d == MS_Q4_0X4;
        k->matmul[d] = pick(d, x4 ? "i8" : "f32", level);
        k->matmul_exact[d] = pick(d, x4 ? "i16x2" : "f32", level);
    }
    k->dot = ms_dot_f32_generic;
    k->dot_rows = ms_dot_rows_f32_generic;
    k->gemm_acc = ms_gemm_acc_f32_generic;
    k->silu_mul = ms_silu_mul_f32_generic;
    k->gelu_tanh_mul = ms_gelu_tanh_mul_f32_generic;
    k->exp_sum = ms_exp_sum_f32_generic;
    k->sumsq = ms_sumsq_f32_generic;
#ifdef __wasm_simd128__
    if (simd) {
        k->dot = ms_dot_f32_simd128;
        k->dot_rows = ms_dot_rows_f32_4r_simd128;
        k->gemm_acc = ms_gemm_acc_f32_4x8_simd128;
        k->silu_mul = ms_silu_mul_f32_simd128;
        k->gelu_tanh_mul = ms_gelu_tanh_mul_f32_simd128;
        k->exp_sum = ms_exp_sum_f32_simd128;
        k->sumsq = ms_sumsq_f32_simd128;
    }
#endif
}
