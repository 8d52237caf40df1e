/* Measurement helpers for bench/: a streaming-bandwidth probe, an int8 multiply-accumulate peak
 * probe, and a reference kernel in the
 * style of ggml's q8_0 x q8_0 dot product (f16 scale per block of 32, plain row-major rows,
 * activations quantized per block), so the benchmark can print our kernels' speed relative to it
 * from one run. Not used by the engine. */
#ifdef __wasm_simd128__
#include <wasm_simd128.h>
#include <stdint.h>
#include <stddef.h>
#include "../quant.h"

/* sums `bytes` of memory as i32x4 lanes, `reps` times, in `streams` (1 or 4) sequential streams a
 * 1/streams of the buffer apart, as the decode tile reads four row groups a quarter of the matrix
 * apart (more cache-line reads in flight); returns the sum (so nothing is skipped) */
int32_t ms_bench_stream(const void *p, size_t bytes, int reps, int streams) {
    v128_t acc0 = wasm_i32x4_splat(0), acc1 = acc0, acc2 = acc0, acc3 = acc0;
    if (streams == 4) {
        const size_t q = bytes / 4 / 16 * 16;
        for (int r = 0; r < reps; r++)
            for (size_t i = 0; i + 16 <= q; i += 16) {
                const uint8_t *s = (const uint8_t *)p + i;
                acc0 = wasm_i32x4_add(acc0, wasm_v128_load(s));
                acc1 = wasm_i32x4_add(acc1, wasm_v128_load(s + q));
                acc2 = wasm_i32x4_add(acc2, wasm_v128_load(s + 2 * q));
                acc3 = wasm_i32x4_add(acc3, wasm_v128_load(s + 3 * q));
            }
    } else
        for (int r = 0; r < reps; r++)
            for (size_t i = 0; i + 64 <= bytes; i += 64) {
                const uint8_t *q = (const uint8_t *)p + i;
                acc0 = wasm_i32x4_add(acc0, wasm_v128_load(q));
                acc1 = wasm_i32x4_add(acc1, wasm_v128_load(q + 16));
                acc2 = wasm_i32x4_add(acc2, wasm_v128_load(q + 32));
                acc3 = wasm_i32x4_add(acc3, wasm_v128_load(q + 48));
            }
    v128_t a = wasm_i32x4_add(wasm_i32x4_add(acc0, acc1), wasm_i32x4_add(acc2, acc3));
    return wasm_i32x4_extract_lane(a, 0) + wasm_i32x4_extract_lane(a, 1) + wasm_i32x4_extract_lane(a, 2) + wasm_i32x4_extract_lane(a, 3);
}

/* The multiply-accumulate peak of the int8 prefill tile's own instruction sequence, memory aside:
 * per column pair, two weight vectors sign-extended as loaded (i16x8.load8x8_s) and four token
 * vectors (v128.load), eight i32x4.dot_i16x8_s + i32x4.add into 8 independent sums (the 2 x 4
 * tile), all operands from `buf` (at least 8 KB, so in L1). 64 MACs a pair; `steps` pairs. Returns a
 * lane sum so nothing is skipped. The limit a prefill's matmuls could reach on one thread. */
int32_t ms_bench_mac_peak(const void *buf, int steps) {
    const uint8_t *w = buf, *xb = (const uint8_t *)buf + 4096; /* 512 pairs of 2 x 8 weight bytes; 64 x 4 token vectors */
    v128_t a0 = wasm_i32x4_splat(0), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
    for (int i = 0; i < steps; i++) {
        const uint8_t *wp = w + (size_t)(i & 255) * 16, *xp = xb + (size_t)(i & 63) * 64;
        const v128_t w0 = wasm_i16x8_load8x8(wp), w1 = wasm_i16x8_load8x8(wp + 8);
        const v128_t x0 = wasm_v128_load(xp), x1 = wasm_v128_load(xp + 16), x2 = wasm_v128_load(xp + 32), x3 = wasm_v128_load(xp + 48);
        a0 = wasm_i32x4_add(a0, wasm_i32x4_dot_i16x8(w0, x0));
        a1 = wasm_i32x4_add(a1, wasm_i32x4_dot_i16x8(w1, x0));
        a2 = wasm_i32x4_add(a2, wasm_i32x4_dot_i16x8(w0, x1));
        a3 = wasm_i32x4_add(a3, wasm_i32x4_dot_i16x8(w1, x1));
        a4 = wasm_i32x4_add(a4, wasm_i32x4_dot_i16x8(w0, x2));
        a5 = wasm_i32x4_add(a5, wasm_i32x4_dot_i16x8(w1, x2));
        a6 = wasm_i32x4_add(a6, wasm_i32x4_dot_i16x8(w0, x3));
        a7 = wasm_i32x4_add(a7, wasm_i32x4_dot_i16x8(w1, x3));
    }
    v128_t a = wasm_i32x4_add(wasm_i32x4_add(wasm_i32x4_add(a0, a1), wasm_i32x4_add(a2, a3)), wasm_i32x4_add(wasm_i32x4_add(a4, a5), wasm_i32x4_add(a6, a7)));
    return wasm_i32x4_extract_lane(a, 0) + wasm_i32x4_extract_lane(a, 1) + wasm_i32x4_extract_lane(a, 2) + wasm_i32x4_extract_lane(a, 3);
}

typedef struct { uint16_t d; int8_t qs[32]; } ggml_style_block_q8_0; /* 34 bytes */

/* converts a q8_0 (f32 scale) row set into the ggml-style layout (f16 scales) */
void ms_bench_to_ggml_q8_0(const ms_block_q8_0 *src, void *dst, size_t nblocks) {
    ggml_style_block_q8_0 *o = dst;
    for (size_t i = 0; i < nblocks; i++) {
        o[i].d = ms_f32_to_f16(src[i].d);
        for (int j = 0; j < 32; j++) o[i].qs[j] = src[i].q[j];
    }
}

/* y[r] = sum_b d_w * d_x * dot(qw, qx), one row at a time, activations quantized per block */
void ms_bench_ggml_q8_0_matvec(const void *W, size_t rows, size_t cols, const float *x, float *y, int8_t *xq, float *xd) {
    const ggml_style_block_q8_0 *w = W;
    const size_t nb = cols / 32;
    ms_quantize_act_q8(x, xq, xd, cols);
    for (size_t r = 0; r < rows; r++) {
        v128_t acc = wasm_f32x4_splat(0);
        for (size_t b = 0; b < nb; b++) {
            const ggml_style_block_q8_0 *blk = &w[r * nb + b];
            const int8_t *qx = xq + b * 32;
            v128_t s = wasm_i32x4_add(
                wasm_i32x4_add(wasm_i32x4_dot_i16x8(wasm_i16x8_load8x8(blk->qs), wasm_i16x8_load8x8(qx)),
                               wasm_i32x4_dot_i16x8(wasm_i16x8_load8x8(blk->qs + 8), wasm_i16x8_load8x8(qx + 8))),
                wasm_i32x4_add(wasm_i32x4_dot_i16x8(wasm_i16x8_load8x8(blk->qs + 16), wasm_i16x8_load8x8(qx + 16)),
                               wasm_i32x4_dot_i16x8(wasm_i16x8_load8x8(blk->qs + 24), wasm_i16x8_load8x8(qx + 24))));
            acc = wasm_f32x4_add(acc, wasm_f32x4_mul(wasm_f32x4_convert_i32x4(s), wasm_f32x4_splat(ms_f16_to_f32(blk->d) * xd[b])));
        }
        y[r] = wasm_f32x4_extract_lane(acc, 0) + wasm_f32x4_extract_lane(acc, 1) + wasm_f32x4_extract_lane(acc, 2) + wasm_f32x4_extract_lane(acc, 3);
    }
}
#else
typedef int ms_no_bench_here;
#endif
