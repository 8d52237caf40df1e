/* The trainer's register-blocked matmuls (tools/train/train_core.c) against plain scalar loops,
 * bit for bit, on awkward sizes: row counts that leave tails of every length, column counts
 * that are not a multiple of the block or of the vector, inner dimensions across the packing
 * chunk (KC), with and without accumulation. Built by build.sh with the trainer's ISA flags and
 * each block shape given on the command line (-DMR=.. -DNV=..); run by tests/demo-model.test.js.
 * Bit equality is the claim the training log's reproducibility rests on. */
#include "../../tools/train/train_core.c"
#include <stdio.h>

static void ref_nn(real *C, const real *X, const real *B, int N, int K, int O, int acc) {
    for (int n = 0; n < N; n++)
        for (int o = 0; o < O; o++) {
            real s = acc ? C[(size_t)n * O + o] : 0;
            for (int k = 0; k < K; k++) s += X[(size_t)n * K + k] * B[(size_t)k * O + o];
            C[(size_t)n * O + o] = s;
        }
}
static void ref_tn(real *C, const real *A, const real *B, int N, int O, int I) {
    for (int o = 0; o < O; o++)
        for (int i = 0; i < I; i++) {
            real s = C[(size_t)o * I + i];
            for (int n = 0; n < N; n++) s += A[(size_t)n * O + o] * B[(size_t)n * I + i];
            C[(size_t)o * I + i] = s;
        }
}
static void fill(real *p, size_t n, uint64_t seed) {
    uint64_t s = ms_rng_seed(seed);
    for (size_t i = 0; i < n; i++) { s ^= s << 13; s ^= s >> 7; s ^= s << 17; p[i] = (real)((double)(s >> 11) / 9007199254740992.0 - 0.5); }
}

int main(void) {
    static const int sizes[] = {1, 2, 5, 6, 7, 13, 16, 31, 32, 33, 47, 64, 100, 128, 129, 257, 300};
    const int ns = (int)(sizeof sizes / sizeof sizes[0]);
    int cases = 0, bad = 0;
    for (int a = 0; a < ns; a++)
        for (int b = 0; b < ns; b++)
            for (int c = 0; c < ns; c += 3) {
                const int N = sizes[a], K = sizes[b], O = sizes[(c + a + b) % ns];
                size_t nx = (size_t)N * K, nb = (size_t)K * O, nc = (size_t)N * O;
                real *X = malloc(nx * sizeof(real)), *B = malloc(nb * sizeof(real));
                real *C1 = malloc(nc * sizeof(real)), *C2 = malloc(nc * sizeof(real));
                real *D1 = malloc(nb * sizeof(real)), *D2 = malloc(nb * sizeof(real)), *Y = malloc(nc * sizeof(real));
                if (!X || !B || !C1 || !C2 || !D1 || !D2 || !Y) { fprintf(stderr, "out of memory\n"); return 2; }
                fill(X, nx, 1 + (uint64_t)cases); fill(B, nb, 2 + (uint64_t)cases); fill(Y, nc, 3 + (uint64_t)cases);
                for (int acc = 0; acc < 2; acc++) {
                    fill(C1, nc, 4 + (uint64_t)cases); memcpy(C2, C1, nc * sizeof(real));
                    gemm_nn(C1, X, B, N, K, O, acc); ref_nn(C2, X, B, N, K, O, acc);
                    cases++;
                    if (memcmp(C1, C2, nc * sizeof(real))) { bad++; fprintf(stderr, "gemm_nn N=%d K=%d O=%d acc=%d differs\n", N, K, O, acc); }
                }
                /* D[K][O] += X[N][K]^T . Y[N][O] */
                fill(D1, nb, 5 + (uint64_t)cases); memcpy(D2, D1, nb * sizeof(real));
                gemm_tn(D1, X, Y, N, K, O); ref_tn(D2, X, Y, N, K, O);
                cases++;
                if (memcmp(D1, D2, nb * sizeof(real))) { bad++; fprintf(stderr, "gemm_tn N=%d O=%d I=%d differs\n", N, K, O); }
                free(X); free(B); free(C1); free(C2); free(D1); free(D2); free(Y);
            }
    printf("trainer matmuls, vector %s, block %d x %d vectors: %d cases, %d differ from the scalar loops\n",
           TRAIN_VEC ? "on" : "off", MR, NV, cases, bad);
    return bad ? 1 : 0;
}
