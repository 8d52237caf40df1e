#include "kernels.h"
#include "dtype.h"

int ms_kernels_have_simd(void) {
#ifdef __wasm_simd128__
    return 1;
#else
    return 0;
#endif
}

void ms_kernels_init(ms_kernels *k, int want_simd) {
    k->name = "generic";
    k->matmul[MS_F32] = ms_matmul_f32_generic;
    k->matmul[MS_F16] = ms_matmul_f16_generic;
    k->matmul[MS_BF16] = ms_matmul_bf16_generic;
    k->matmul[MS_Q8_0] = ms_matmul_q8_0_generic;
    k->matmul[MS_Q4_0] = ms_matmul_q4_0_generic;
    k->matmul[MS_Q8_0X4] = ms_matmul_q8_0x4_generic;
    k->matmul[MS_Q4_0X4] = ms_matmul_q4_0x4_generic;
    k->dot = ms_dot_f32_generic;
    k->dot_rows = ms_dot_rows_f32_generic;
    k->gemm_acc = ms_gemm_acc_f32_generic;
    k->silu_mul = ms_silu_mul_f32_generic;
    k->exp_sum = ms_exp_sum_f32_generic;
    k->sumsq = ms_sumsq_f32_generic;
#ifdef __wasm_simd128__
    if (want_simd) {
        k->name = "wasm-simd128";
        k->matmul[MS_F32] = ms_matmul_f32_1x4_simd128;
        k->matmul[MS_F16] = ms_matmul_f16_simd128;
        k->matmul[MS_BF16] = ms_matmul_bf16_simd128;
        k->matmul[MS_Q8_0] = ms_matmul_q8_0_simd128;
        k->matmul[MS_Q4_0] = ms_matmul_q4_0_simd128;
        k->matmul[MS_Q8_0X4] = ms_matmul_q8_0x4_simd128;
        k->matmul[MS_Q4_0X4] = ms_matmul_q4_0x4_simd128;
        k->dot = ms_dot_f32_simd128;
        k->dot_rows = ms_dot_rows_f32_4r_simd128;
        k->gemm_acc = ms_gemm_acc_f32_4x8_simd128;
        k->silu_mul = ms_silu_mul_f32_simd128;
        k->exp_sum = ms_exp_sum_f32_simd128;
        k->sumsq = ms_sumsq_f32_simd128;
    }
#else
    (void)want_simd;
#endif
    for (int d = 0; d < MS_DTYPE__COUNT; d++) k->matmul_exact[d] = k->matmul[d];
    k->matmul_exact[MS_Q8_0X4] = ms_matmul_q8_0x4_x2i16_generic;
    k->matmul_exact[MS_Q4_0X4] = ms_matmul_q4_0x4_x2i16_generic;
#ifdef __wasm_simd128__
    if (want_simd) {
        k->matmul_exact[MS_Q8_0X4] = ms_matmul_q8_0x4_x2i16_simd128;
        k->matmul_exact[MS_Q4_0X4] = ms_matmul_q4_0x4_x2i16_simd128;
    }
#endif
}
