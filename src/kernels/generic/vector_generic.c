/* f32 x f32 products for attention and Gated DeltaNet, scalar: the definitions the SIMD128 twins
 * (wasm/vector_simd128.c) are tested against. */
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
