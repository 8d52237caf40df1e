/* Exports for tests and bench/ only: built into build/wasm/mlpscope-test.wasm (and its threaded
 * twin) with -DMS_TEST_EXPORTS, absent from the release modules. Kernels run by dtype and ISA on
 * caller data; the memory read probe and a ggml-style reference kernel for the benchmark. */
typedef int ms_api_test_only; /* (keeps the file a translation unit without MS_TEST_EXPORTS) */
#ifdef MS_TEST_EXPORTS
#include "../io/convert.h"
#include "../kernels/dtype.h"
#include "../kernels/kernels.h"
#include "../kernels/quant.h"
#include "../util/threads.h"
#include <stdlib.h>

#define API(name) __attribute__((export_name(#name), used))

/* ---- kernel access for tests: quantize rows, run one matmul with a chosen kernel set ---- */
API(ms_dbg_weight_bytes) double ms_dbg_weight_bytes(int dtype, int rows, int cols) { return (double)ms_dtype_bytes(dtype, (size_t)rows, (size_t)cols); }
API(ms_dbg_quantize) int ms_dbg_quantize(int dtype, const float *src, int rows, int cols, void *dst) {
    float *tmp = malloc((size_t)cols * sizeof(float));
    if (!tmp) return -1;
    const int file_dtype = dtype == MS_Q8_0X4 ? MS_Q8_0 : dtype == MS_Q4_0X4 ? MS_Q4_0 : dtype;
    int rc = ms_convert_rows(src, MS_F32, dst, file_dtype, (size_t)rows, (size_t)cols, tmp);
    if (!rc && file_dtype != dtype) { /* then the load-time repack */
        void *t2 = rows % 4 ? NULL : malloc(4 * ms_dtype_bytes(file_dtype, 1, (size_t)cols));
        if (!t2) rc = -1;
        else if ((dtype == MS_Q8_0X4 ? ms_repack_q8_0x4 : ms_repack_q4_0x4)(dst, (size_t)rows, (size_t)cols, t2) != SIZE_MAX) rc = -1;
        free(t2);
    }
    free(tmp);
    return rc;
}
API(ms_dbg_matmul) void ms_dbg_matmul(int dtype, int simd, const void *W, int rows, int cols, const float *X, int T, float *Y) {
    ms_kernels k;
    ms_kernels_init(&k, simd);
    k.matmul[dtype](W, (size_t)rows, (size_t)cols, X, T, Y);
}

/* one kernel of the gemm table (kernels.h ms_gemm_kernels, listed in engine info) by its index */
API(ms_dbg_gemm) int ms_dbg_gemm(int index, const void *W, int rows, int cols, const float *X, int T, float *Y) {
    if (index < 0 || index >= ms_n_gemm_kernels) return -1;
    ms_gemm_kernels[index].fn(W, (size_t)rows, (size_t)cols, X, T, Y);
    return 0;
}

/* the exact-activation kernel of a dtype (kernels.h matmul_exact; differs for the x4 layouts) */
API(ms_dbg_matmul_exact) void ms_dbg_matmul_exact(int dtype, int simd, const void *W, int rows, int cols, const float *X, int T, float *Y) {
    ms_kernels k;
    ms_kernels_init(&k, simd);
    k.matmul_exact[dtype](W, (size_t)rows, (size_t)cols, X, T, Y);
}

API(ms_dbg_gemm_acc) void ms_dbg_gemm_acc(int simd, float *Out, int os, const float *A, int ars, int acs, const float *B, int bs, int M, int K, int N, float sign) {
    ms_kernels k;
    ms_kernels_init(&k, simd);
    k.gemm_acc(Out, (size_t)os, A, (size_t)ars, (size_t)acs, B, (size_t)bs, M, K, N, sign);
}

API(ms_dbg_dot_rows) void ms_dbg_dot_rows(int simd, float *y, const float *x, const float *A, int stride, int n, int k, float scale) {
    ms_kernels k_;
    ms_kernels_init(&k_, simd);
    k_.dot_rows(y, x, A, (size_t)stride, (size_t)n, (size_t)k, scale);
}

API(ms_dbg_silu_mul) void ms_dbg_silu_mul(int simd, float *y, const float *g, const float *u, int n) {
    ms_kernels k;
    ms_kernels_init(&k, simd);
    k.silu_mul(y, g, u, (size_t)n);
}

API(ms_dbg_gelu_tanh_mul) void ms_dbg_gelu_tanh_mul(int simd, float *y, const float *g, const float *u, int n) {
    ms_kernels k;
    ms_kernels_init(&k, simd);
    k.gelu_tanh_mul(y, g, u, (size_t)n);
}

API(ms_dbg_sumsq) double ms_dbg_sumsq(int simd, const float *x, int n) {
    ms_kernels k;
    ms_kernels_init(&k, simd);
    return k.sumsq(x, (size_t)n);
}

API(ms_dbg_exp_sum) double ms_dbg_exp_sum(int simd, float *y, const float *x, int n, float shift, float scale) {
    ms_kernels k;
    ms_kernels_init(&k, simd);
    return k.exp_sum(y, x, (size_t)n, shift, scale);
}

#ifdef __wasm_simd128__
/* ---- bench/ helpers ---- */
int32_t ms_bench_stream(const void *p, size_t bytes, int reps, int streams);
void ms_bench_to_ggml_q8_0(const ms_block_q8_0 *src, void *dst, size_t nblocks);
void ms_bench_ggml_q8_0_matvec(const void *W, size_t rows, size_t cols, const float *x, float *y, int8_t *xq, float *xd);
API(ms_bench_stream_bytes) int32_t ms_bench_stream_bytes(const void *p, size_t bytes, int reps, int streams) { return ms_bench_stream(p, bytes, reps, streams); }
int32_t ms_bench_mac_peak(const void *buf, int steps);
API(ms_bench_mac) int32_t ms_bench_mac(const void *buf, int steps) { return ms_bench_mac_peak(buf, steps); }
/* the read probe on every thread of a pool at once, each on its own part of the buffer: the
 * bandwidth threaded decode can draw on, measured in wasm like the one-thread figure */
typedef struct { const uint8_t *p; size_t bytes; int reps, streams; } bench_stream_job;
static void bench_stream_part(void *ctx, int part, int n_parts) {
    const bench_stream_job *j = ctx;
    const size_t per = j->bytes / (size_t)n_parts / 64 * 64;
    volatile int32_t sink = ms_bench_stream(j->p + (size_t)part * per, per, j->reps, j->streams);
    (void)sink;
}
API(ms_bench_stream_pool) void ms_bench_stream_pool(ms_pool *pool, const void *p, size_t bytes, int reps, int streams) {
    bench_stream_job j = {p, bytes, reps, streams};
    ms_pool_run(pool, bench_stream_part, &j);
}
/* the multiply-accumulate probe on every thread of a pool at once (each its own 8 KB of operands):
 * the compute limit of threaded prefill, measured like the one-thread figure (two vCPUs of a VM
 * may share one core's SIMD units) */
typedef struct { const uint8_t *p; int steps; } bench_mac_job;
static void bench_mac_part(void *ctx, int part, int n_parts) {
    (void)n_parts;
    const bench_mac_job *j = ctx;
    volatile int32_t sink = ms_bench_mac_peak(j->p + (size_t)part * 8192, j->steps);
    (void)sink;
}
API(ms_bench_mac_pool) void ms_bench_mac_pool(ms_pool *pool, const void *p, int steps) {
    bench_mac_job j = {p, steps};
    ms_pool_run(pool, bench_mac_part, &j);
}
API(ms_bench_ggml_prep) void ms_bench_ggml_prep(const void *q8, void *dst, size_t nblocks) { ms_bench_to_ggml_q8_0(q8, dst, nblocks); }
API(ms_bench_ggml_matvec) void ms_bench_ggml_matvec(const void *W, int rows, int cols, const float *x, float *y, int8_t *xq, float *xd) {
    ms_bench_ggml_q8_0_matvec(W, (size_t)rows, (size_t)cols, x, y, xq, xd);
}
#endif
#endif
