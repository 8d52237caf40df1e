/* gemm with block-quantized weights in the 4-row interleaved layouts (q8_0x4, q4_0x4; quant.h) and
 * integer activations, SIMD128: int8 codes per block of 32 (i8a, the default) or two 16-bit codes
 * (i16x2a, exact up to f32 rounding). Tiles: decode 16x1 (four 4-row groups a quarter of the matrix
 * apart x one token), prefill 8x4 (two groups x up to 4 tokens, over column chunks of 4096).
 * Scalar twins: generic/gemm_qx4_generic.c. */
#ifdef __wasm_simd128__
#include <wasm_simd128.h>
#include <stdint.h>
#include "../kernels.h"
#include "../quant.h"
#include "simd128_common.h"

/* int8 activations x the 4-row interleaved layouts (quant.h). In both layouts one i16x8 vector of
 * weights holds two adjacent columns of the four rows (r0c r0c+1 r1c r1c+1 .. r3c r3c+1), so
 * i32x4.dot_i16x8_s against the token's two activation codes of those columns (a 32-bit splat)
 * gives the four rows' partial sums in the four lanes at once: a block's 16 column pairs are summed
 * in integers, then scaled once per block in f32 (four rows in one vector, no horizontal sums).
 * Integer sums are exact, so a token's result is the same alone, beside other tokens or other row
 * groups, and equal to the scalar twin's (same f32 operations in the same order). */

/* The i16x8 weight vector of column pair 4i+j of a block's codes q (i, j = 0..3; v: the 16 bytes at
 * q + 16i, loaded once per i for q4). q8: each column pair is 8 bytes, sign-extended as loaded.
 * q4: 16 bytes of signed nibbles read as eight 16-bit lanes; pair 4i+j is nibble j of each lane,
 * moved to the lane's top by a left shift and sign-extended back by an arithmetic right shift
 * (the prefill tile, where the shifts are shared by the tokens and take no register, and the
 * exact i16x2a kernels). */
static inline v128_t x4_q4_pair(v128_t v, int j) {
    switch (j) {
    case 0: return wasm_i16x8_shr(wasm_i16x8_shl(v, 12), 12);
    case 1: return wasm_i16x8_shr(wasm_i16x8_shl(v, 8), 12);
    case 2: return wasm_i16x8_shr(wasm_i16x8_shl(v, 4), 12);
    default: return wasm_i16x8_shr(v, 12);
    }
}
static inline v128_t x4_pair(const uint8_t *q, v128_t v, const int q4, int i, int j) {
    return q4 ? x4_q4_pair(v, j) : wasm_i16x8_load8x8(q + 32 * i + 8 * j);
}

/* q4 with one instruction per nibble (the int8-activation decode tile): the 16 bytes are flipped once
 * (v128.xor with 0x8888), so nibble j of a lane holds a_j = code + 8, 0..15 unsigned;
 * nibbles 0-2 are masked where they lie (16^j a_j) and nibble 3 is shifted down (a_j). The token's
 * codes of pair 4i+j come shifted left to match (x4_q4_scale: by 8, 4, 0, 8 bits), so every product
 * is 256 a_j x, and a block's integer sum is 256 (the signed sum + xo, 8 times the block's code sum:
 * x4_q4_codes); shifted down and offset (x4_q4_signed) it is the signed sum itself, so the result
 * is the same bit for bit as with two shifts per nibble, and as the scalar twin's. Bounds: |256 x|
 * <= 32512 fits i16; a block's sum <= 16 dots x 2 x 15 x 32512 < 2^31. On the 3584 x 1024 decode
 * tile in Node: 15.3-16.4 GB/s streamed against 14.5 with two shifts per nibble. */
static inline v128_t x4_q4_nibble(v128_t v, int j, v128_t m0, v128_t m1, v128_t m2) {
    switch (j) {
    case 0: return wasm_v128_and(v, m0);
    case 1: return wasm_v128_and(v, m1);
    case 2: return wasm_v128_and(v, m2);
    default: return wasm_u16x8_shr(v, 12);
    }
}
static inline v128_t x4_q4_scale(v128_t x, int j) { return j == 2 ? x : wasm_i16x8_shl(x, j == 1 ? 4 : 8); }
static inline v128_t x4_q4_signed(v128_t is, int32_t xo) { return wasm_i32x4_sub(wasm_i32x4_shr(is, 8), wasm_i32x4_splat(xo)); }
/* A token's codes x (nb blocks) as the q4 decode tile takes them: scaled to xs, the sums to xo. */
static void x4_q4_codes(const int16_t *x, size_t nb, int16_t *xs, int32_t *xo) {
    for (size_t p = 0; p < nb * MS_QK / 2; p++) wasm_v128_store32_lane(xs + 2 * p, x4_q4_scale(wasm_v128_load32_splat(x + 2 * p), (int)(p & 3)), 0);
    for (size_t b = 0; b < nb; b++) {
        int32_t sum = 0;
        for (int c = 0; c < MS_QK; c++) sum += x[b * MS_QK + c];
        xo[b] = 8 * sum;
    }
}

/* Decode: one token (codes widened to i16 at x, block scales at xd) x NG 4-row groups (weights at
 * bs[k], results to ys[k][0..3]); the token's two codes of a column pair come as a 32-bit splat
 * (q4: scaled, and xo the code sums: see above). NG is a constant at each call. A lone token runs
 * NG = 4 groups a quarter of the matrix apart: four independent weight streams keep more
 * cache-line reads in flight (measured: 8-9 GB/s from memory against 5 GB/s with one). */
static inline __attribute__((always_inline)) void x4_tile_decode(const uint8_t *const bs[4], const int NG, const int q4, size_t nb, size_t bsz,
                                                                  const int16_t *x, const int32_t *xo, const float *xd, float *const ys[4]) {
    const v128_t flip = wasm_i16x8_splat((int16_t)0x8888), m[3] = {wasm_i16x8_splat(0x000F), wasm_i16x8_splat(0x00F0), wasm_i16x8_splat(0x0F00)};
    v128_t acc[4];
    for (int k = 0; k < NG; k++) acc[k] = wasm_f32x4_splat(0);
    for (size_t b = 0; b < nb; b++) {
        v128_t is[4];
        /* the quarter loop stays rolled: V8 runs it 1.36-1.42x faster than clang's unrolled copy */
#pragma clang loop unroll(disable)
        for (int i = 0; i < 4; i++) {
            v128_t v[4];
            for (int k = 0; k < NG; k++) v[k] = q4 ? wasm_v128_xor(wasm_v128_load(bs[k] + b * bsz + 16 + 16 * i), flip) : flip;
            for (int j = 0; j < 4; j++) {
                const v128_t xj = wasm_v128_load32_splat(x + b * MS_QK + 8 * i + 2 * j);
                for (int k = 0; k < NG; k++) {
                    const v128_t w = q4 ? x4_q4_nibble(v[k], j, m[0], m[1], m[2]) : wasm_i16x8_load8x8(bs[k] + b * bsz + 16 + 32 * i + 8 * j);
                    const v128_t p = wasm_i32x4_dot_i16x8(w, xj);
                    is[k] = i || j ? wasm_i32x4_add(is[k], p) : p;
                }
            }
        }
        for (int k = 0; k < NG; k++) {
            const v128_t sum = q4 ? x4_q4_signed(is[k], xo[b]) : is[k];
            acc[k] = wasm_f32x4_add(acc[k], wasm_f32x4_mul(wasm_f32x4_convert_i32x4(sum), wasm_f32x4_mul(wasm_v128_load(bs[k] + b * bsz), wasm_f32x4_splat(xd[b]))));
        }
    }
    for (int k = 0; k < NG; k++) wasm_v128_store(ys[k], acc[k]);
}

/* ms_quantize_act_q8 (quant.c) with SIMD, writing the codes widened to i16: the same block maximum,
 * the same scale and reciprocal, the same products rounded to nearest-even, so the codes and
 * scales are identical to the scalar ones. */
static void quantize_act_i16(const float *x, int16_t *q, float *d, size_t n) {
    for (size_t b = 0; b < n / MS_QK; b++) {
        const float *xb = x + b * MS_QK;
        v128_t m = wasm_f32x4_abs(wasm_v128_load(xb));
        for (int j = 4; j < MS_QK; j += 4) m = wasm_f32x4_max(m, wasm_f32x4_abs(wasm_v128_load(xb + j)));
        m = wasm_f32x4_max(m, wasm_i32x4_shuffle(m, m, 2, 3, 0, 1));
        m = wasm_f32x4_max(m, wasm_i32x4_shuffle(m, m, 1, 0, 3, 2));
        const float amax = wasm_f32x4_extract_lane(m, 0), s = amax / 127.0f, is = s > 0 ? 1.0f / s : 0.0f;
        d[b] = s;
        const v128_t vis = wasm_f32x4_splat(is);
        for (int j = 0; j < MS_QK; j += 8) {
            const v128_t lo = wasm_i32x4_trunc_sat_f32x4(wasm_f32x4_nearest(wasm_f32x4_mul(wasm_v128_load(xb + j), vis)));
            const v128_t hi = wasm_i32x4_trunc_sat_f32x4(wasm_f32x4_nearest(wasm_f32x4_mul(wasm_v128_load(xb + j + 4), vis)));
            wasm_v128_store(q + b * MS_QK + j, wasm_i16x8_narrow_i32x4(lo, hi));
        }
    }
}

/* Prefill: NG (1 or 2) row groups x NT (2..4) tokens over blocks [b0, b1), continuing the sums in
 * ys when not first (the same f32 operations as one pass, so still equal to the scalar twin). The
 * codes come already splatted: xsp holds the blocks as [block][pair][token 0..3] vectors, so the
 * dot takes them from memory as they are. Measured on one 3584 x 1024 q8 matrix x 64 tokens:
 * 33 GMAC/s, against 28 for the 1 x 4 tile that splatted codes in its loop and 28 for this tile
 * with the 16 column pairs of a block fully unrolled (V8 runs the rolled loop faster); in a
 * stand-alone test 4 x 4 and 2 x 8 tiles ran at 31 and 27 against 34 for 2 x 4. */
static inline __attribute__((always_inline)) void x4_tile_splatted(const uint8_t *const bs[2], const int NG, const int NT, const int q4, size_t b0, size_t b1,
                                                                    size_t bsz, const v128_t *xsp, const float *const ds[4], float *const ys[2][4], const int first) {
    v128_t acc[2][4];
    for (int k = 0; k < NG; k++) for (int u = 0; u < NT; u++) acc[k][u] = first ? wasm_f32x4_splat(0) : wasm_v128_load(ys[k][u]);
    for (size_t b = b0; b < b1; b++) {
        const v128_t *xb = xsp + (b - b0) * 64;
        v128_t is[2][4];
        if (!q4) {
            for (int p = 0; p < 16; p++) {
                v128_t w[2];
                for (int k = 0; k < NG; k++) w[k] = wasm_i16x8_load8x8(bs[k] + b * bsz + 16 + 8 * p);
                for (int u = 0; u < NT; u++) {
                    const v128_t x = xb[p * 4 + u];
                    for (int k = 0; k < NG; k++) {
                        const v128_t d = wasm_i32x4_dot_i16x8(w[k], x);
                        is[k][u] = p ? wasm_i32x4_add(is[k][u], d) : d;
                    }
                }
            }
        } else {
            for (int k = 0; k < NG; k++) for (int u = 0; u < NT; u++) is[k][u] = wasm_i32x4_splat(0);
#pragma clang loop unroll(disable)
            for (int i = 0; i < 4; i++) { /* a quarter of the block: 16 bytes, 4 pairs */
                v128_t v[2];
                for (int k = 0; k < NG; k++) v[k] = wasm_v128_load(bs[k] + b * bsz + 16 + 16 * i);
                for (int j = 0; j < 4; j++) {
                    v128_t w[2];
                    for (int k = 0; k < NG; k++) w[k] = x4_q4_pair(v[k], j);
                    for (int u = 0; u < NT; u++) {
                        const v128_t x = xb[(4 * i + j) * 4 + u];
                        for (int k = 0; k < NG; k++) is[k][u] = wasm_i32x4_add(is[k][u], wasm_i32x4_dot_i16x8(w[k], x));
                    }
                }
            }
        }
        for (int k = 0; k < NG; k++) {
            const v128_t d = wasm_v128_load(bs[k] + b * bsz);
            for (int u = 0; u < NT; u++)
                acc[k][u] = wasm_f32x4_add(acc[k][u], wasm_f32x4_mul(wasm_f32x4_convert_i32x4(is[k][u]), wasm_f32x4_mul(d, wasm_f32x4_splat(ds[u][b]))));
        }
    }
    for (int k = 0; k < NG; k++) for (int u = 0; u < NT; u++) wasm_v128_store(ys[k][u], acc[k][u]);
}

/* One tile of nt (2..4) tokens over all row groups, two at a time, for blocks [b0, b1). */
static inline __attribute__((always_inline)) void x4_prefill(const uint8_t *W, const int q4, size_t G, size_t nb, size_t bsz, size_t rows, const int nt,
                                                              size_t b0, size_t b1, const v128_t *xsp, const float *const ds[4], float *y0) {
    const int first = b0 == 0;
    for (size_t g = 0; g < G; g += 2) {
        const int ng = G - g >= 2 ? 2 : 1;
        const uint8_t *bs[2];
        float *ys[2][4];
        for (int k = 0; k < ng; k++) {
            bs[k] = W + (g + k) * nb * bsz;
            for (int u = 0; u < nt; u++) ys[k][u] = y0 + (size_t)u * rows + (g + k) * 4;
        }
        if (ng == 2) {
            if (nt == 4) x4_tile_splatted(bs, 2, 4, q4, b0, b1, bsz, xsp, ds, ys, first);
            else if (nt == 3) x4_tile_splatted(bs, 2, 3, q4, b0, b1, bsz, xsp, ds, ys, first);
            else x4_tile_splatted(bs, 2, 2, q4, b0, b1, bsz, xsp, ds, ys, first);
        } else {
            if (nt == 4) x4_tile_splatted(bs, 1, 4, q4, b0, b1, bsz, xsp, ds, ys, first);
            else if (nt == 3) x4_tile_splatted(bs, 1, 3, q4, b0, b1, bsz, xsp, ds, ys, first);
            else x4_tile_splatted(bs, 1, 2, q4, b0, b1, bsz, xsp, ds, ys, first);
        }
    }
}

/* A tile of nt (2..4) tokens, codes at xs[u], through the columns in chunks of KC: each chunk's
 * codes are splatted once into xsp (KC / 2 pairs x 4 tokens x 16 bytes = 128 KB, in L2) and every
 * pair of row groups reads them from there. */
enum { KC = 4096 };
static inline __attribute__((always_inline)) void x4_prefill_chunks(const uint8_t *W, const int q4, size_t G, size_t nb, size_t rows, int nt,
                                                                     const int16_t *const xs[4], const float *const ds[4], float *y0) {
    const size_t bsz = q4 ? sizeof(ms_block_q4_0x4) : sizeof(ms_block_q8_0x4);
    v128_t xsp[KC / 2 * 4];
    for (size_t b0 = 0; b0 < nb; b0 += KC / MS_QK) {
        const size_t b1 = nb - b0 < KC / MS_QK ? nb : b0 + KC / MS_QK;
        for (size_t p = 0; p < (b1 - b0) * MS_QK / 2; p++)
            for (int u = 0; u < nt; u++) xsp[p * 4 + u] = wasm_v128_load32_splat(xs[u] + b0 * MS_QK + 2 * p);
        x4_prefill(W, q4, G, nb, bsz, rows, nt, b0, b1, xsp, ds, y0);
    }
}
static __attribute__((noinline)) void x4_prefill_q8(const uint8_t *W, size_t G, size_t nb, size_t rows, int nt, const int16_t *const xs[4],
                                                    const float *const ds[4], float *y0) {
    x4_prefill_chunks(W, 0, G, nb, rows, nt, xs, ds, y0);
}
static __attribute__((noinline)) void x4_prefill_q4(const uint8_t *W, size_t G, size_t nb, size_t rows, int nt, const int16_t *const xs[4],
                                                    const float *const ds[4], float *y0) {
    x4_prefill_chunks(W, 1, G, nb, rows, nt, xs, ds, y0);
}

/* One token over all row groups: four groups a quarter of the matrix apart, then the rest.
 * Prefill and decode are separate functions per weight type (noinline below): V8 compiles each
 * wasm function as a whole, and with both loops in one function the one-token matvec ran 3-13%
 * slower than before the prefill tile was added (kernel A/B, medians of three rounds). */
static inline __attribute__((always_inline)) void x4_decode(const uint8_t *W, const int q4, size_t G, size_t nb, const int16_t *x, const int32_t *xo, const float *xd, float *y0) {
    const size_t bsz = q4 ? sizeof(ms_block_q4_0x4) : sizeof(ms_block_q8_0x4), q = G / 4;
    for (size_t g = 0; g < q; g++) {
        const uint8_t *bs[4];
        float *ys[4];
        for (int k = 0; k < 4; k++) { bs[k] = W + (g + k * q) * nb * bsz; ys[k] = y0 + (g + k * q) * 4; }
        x4_tile_decode(bs, 4, q4, nb, bsz, x, xo, xd, ys);
    }
    for (size_t g = 4 * q; g < G; g++) {
        const uint8_t *bs[4] = {W + g * nb * bsz};
        float *ys[4] = {y0 + g * 4};
        x4_tile_decode(bs, 1, q4, nb, bsz, x, xo, xd, ys);
    }
}
static __attribute__((noinline)) void x4_decode_q8(const uint8_t *W, size_t G, size_t nb, const int16_t *x16, const float *xd, float *y0) {
    x4_decode(W, 0, G, nb, x16, 0, xd, y0);
}
static __attribute__((noinline)) void x4_decode_q4(const uint8_t *W, size_t G, size_t nb, const int16_t *xs, const int32_t *xo, const float *xd, float *y0) {
    x4_decode(W, 1, G, nb, xs, xo, xd, y0);
}

/* Activations are quantized per block of 32 and widened to i16 once per token. A lone token
 * (decode) reads four row groups at once; tiles of 2-4 tokens (prefill) go to x4_prefill_*. */
static inline __attribute__((always_inline)) void gemm_qx4_i8a(const void *W, const int q4, size_t rows, size_t cols, const float *X, int T, float *Y) {
    const size_t nb = cols / MS_QK, G = rows / 4;
    enum { MAXC = 16384, TB = 4 }; /* 128 KB of codes on the stack (stacks are 1 MB; the prefill's splats take 128 KB more) */
    if (cols > MAXC) { (q4 ? ms_gemm_q4_0x4w_i8a_generic : ms_gemm_q8_0x4w_i8a_generic)(W, rows, cols, X, T, Y); return; }
    int16_t x16[TB][MAXC];
    float xd[TB][MAXC / MS_QK];
    int32_t xo[MAXC / MS_QK]; /* q4 decode: each block's code sum times 8 (x4_q4_codes) */
    for (int t0 = 0; t0 < T; t0 += TB) {
        const int nt = T - t0 < TB ? T - t0 : TB;
        for (int u = 0; u < nt; u++) quantize_act_i16(X + (size_t)(t0 + u) * cols, x16[u], xd[u], cols);
        const float *ds[4] = {xd[0], xd[1], xd[2], xd[3]};
        float *const y0 = Y + (size_t)t0 * rows;
        if (nt == 1 && q4) { x4_q4_codes(x16[0], nb, x16[1], xo); x4_decode_q4((const uint8_t *)W, G, nb, x16[1], xo, xd[0], y0); continue; }
        if (nt == 1) { x4_decode_q8((const uint8_t *)W, G, nb, x16[0], xd[0], y0); continue; }
        const int16_t *xs[4] = {x16[0], x16[1], x16[2], x16[3]};
        (q4 ? x4_prefill_q4 : x4_prefill_q8)((const uint8_t *)W, G, nb, rows, nt, xs, ds, y0);
    }
}

/* Exact activations on the same layouts: each token is split into two 16-bit code rows (hi, lo:
 * ms_quantize_act_i16x2). In prefill they run as two tokens of the int8 prefill tile above, over
 * row chunks of RC rows into a small buffer, the token's result being hi + lo; a lone token
 * (decode) runs the decode tile with two dots per weight vector. The weights are read once per
 * pair of tokens (decode: once) and every dot is an integer one: the int8 kernels' pace for twice
 * the multiply-adds. Bit-identical to ms_matmul_*_x2i16_generic. */
/* Decode with exact activations: one token's hi and lo codes against NG row groups a quarter of the
 * matrix apart (as x4_tile_decode), two integer dots per weight vector, the two sums kept apart
 * until the end (hi + lo, as the generic twin). */
static inline __attribute__((always_inline)) void x4_tile_decode_x2i16(const uint8_t *const bs[4], const int NG, const int q4, size_t nb, size_t bsz,
                                                                        const int16_t *xh, const int16_t *xl, const float *dh, const float *dl, float *const ys[4]) {
    v128_t ah[4], al[4];
    for (int k = 0; k < NG; k++) ah[k] = al[k] = wasm_f32x4_splat(0);
    for (size_t b = 0; b < nb; b++) {
        v128_t ih[4], il[4];
        for (int i = 0; i < 4; i++) {
            v128_t v[4];
            for (int k = 0; k < NG; k++) v[k] = q4 ? wasm_v128_load(bs[k] + b * bsz + 16 + 16 * i) : wasm_i32x4_splat(0);
            for (int j = 0; j < 4; j++) {
                const v128_t h = wasm_v128_load32_splat(xh + b * MS_QK + 8 * i + 2 * j), l = wasm_v128_load32_splat(xl + b * MS_QK + 8 * i + 2 * j);
                for (int k = 0; k < NG; k++) {
                    const v128_t w = x4_pair(bs[k] + b * bsz + 16, v[k], q4, i, j);
                    const v128_t ph = wasm_i32x4_dot_i16x8(w, h), pl = wasm_i32x4_dot_i16x8(w, l);
                    ih[k] = i || j ? wasm_i32x4_add(ih[k], ph) : ph;
                    il[k] = i || j ? wasm_i32x4_add(il[k], pl) : pl;
                }
            }
        }
        for (int k = 0; k < NG; k++) {
            const v128_t d = wasm_v128_load(bs[k] + b * bsz);
            ah[k] = wasm_f32x4_add(ah[k], wasm_f32x4_mul(wasm_f32x4_convert_i32x4(ih[k]), wasm_f32x4_mul(d, wasm_f32x4_splat(dh[b]))));
            al[k] = wasm_f32x4_add(al[k], wasm_f32x4_mul(wasm_f32x4_convert_i32x4(il[k]), wasm_f32x4_mul(d, wasm_f32x4_splat(dl[b]))));
        }
    }
    for (int k = 0; k < NG; k++) wasm_v128_store(ys[k], wasm_f32x4_add(ah[k], al[k]));
}

static inline __attribute__((always_inline)) void x4_decode_x2i16(const uint8_t *W, const int q4, size_t G, size_t nb, const int16_t *xh, const int16_t *xl,
                                                                   const float *dh, const float *dl, float *y0) {
    const size_t bsz = q4 ? sizeof(ms_block_q4_0x4) : sizeof(ms_block_q8_0x4), q = G / 4;
    for (size_t g = 0; g < q; g++) {
        const uint8_t *bs[4];
        float *ys[4];
        for (int k = 0; k < 4; k++) { bs[k] = W + (g + k * q) * nb * bsz; ys[k] = y0 + (g + k * q) * 4; }
        x4_tile_decode_x2i16(bs, 4, q4, nb, bsz, xh, xl, dh, dl, ys);
    }
    for (size_t g = 4 * q; g < G; g++) {
        const uint8_t *bs[4] = {W + g * nb * bsz};
        float *ys[4] = {y0 + g * 4};
        x4_tile_decode_x2i16(bs, 1, q4, nb, bsz, xh, xl, dh, dl, ys);
    }
}
static __attribute__((noinline)) void x4_decode_x2i16_q8(const uint8_t *W, size_t G, size_t nb, const int16_t *xh, const int16_t *xl, const float *dh, const float *dl, float *y0) {
    x4_decode_x2i16(W, 0, G, nb, xh, xl, dh, dl, y0);
}
static __attribute__((noinline)) void x4_decode_x2i16_q4(const uint8_t *W, size_t G, size_t nb, const int16_t *xh, const int16_t *xl, const float *dh, const float *dl, float *y0) {
    x4_decode_x2i16(W, 1, G, nb, xh, xl, dh, dl, y0);
}

static inline __attribute__((always_inline)) void gemm_qx4_i16x2a(const void *W, const int q4, size_t rows, size_t cols, const float *X, int T, float *Y) {
    const size_t nb = cols / MS_QK, G = rows / 4, bsz = q4 ? sizeof(ms_block_q4_0x4) : sizeof(ms_block_q8_0x4);
    enum { MAXC = 16384, RC = 1024 };
    if (cols > MAXC) { (q4 ? ms_gemm_q4_0x4w_i16x2a_generic : ms_gemm_q8_0x4w_i16x2a_generic)(W, rows, cols, X, T, Y); return; }
    int16_t codes[4][MAXC]; /* hi of token 0, lo of token 0, hi of token 1, lo of token 1 */
    float sc[4][MAXC / MS_QK], part[4][RC];
    for (int t0 = 0; t0 < T; t0 += 2) {
        const int n = T - t0 < 2 ? 1 : 2, nt = 2 * n;
        for (int u = 0; u < n; u++) ms_quantize_act_i16x2(X + (size_t)(t0 + u) * cols, codes[2 * u], codes[2 * u + 1], sc[2 * u], sc[2 * u + 1], cols);
        if (T == 1) { /* decode: the weights streamed once, four groups at a time */
            (q4 ? x4_decode_x2i16_q4 : x4_decode_x2i16_q8)((const uint8_t *)W, G, nb, codes[0], codes[1], sc[0], sc[1], Y);
            break;
        }
        const int16_t *xs[4] = {codes[0], codes[1], codes[2], codes[3]};
        const float *ds[4] = {sc[0], sc[1], sc[2], sc[3]};
        for (size_t g0 = 0; g0 < G; g0 += RC / 4) {
            const size_t gc = G - g0 < RC / 4 ? G - g0 : RC / 4;
            (q4 ? x4_prefill_q4 : x4_prefill_q8)((const uint8_t *)W + g0 * nb * bsz, gc, nb, RC, nt, xs, ds, part[0]);
            for (int u = 0; u < n; u++) {
                float *y = Y + (size_t)(t0 + u) * rows + 4 * g0;
                for (size_t i = 0; i < 4 * gc; i++) y[i] = part[2 * u][i] + part[2 * u + 1][i];
            }
        }
    }
}

/* Relaxed SIMD (q8_0x4 and q4_0x4 weights, int8 activations): the activations are quantized here
 * exactly as above; tiles of tokens run in the relaxed module (gemm_qx4_relaxed.c), which the host
 * links in as the imports below and which this engine calls only at the kernel levels the host
 * asked for (MS_ISA_RELAXED, _RELAXED_U8: js/relaxed.js checks the engine computes what each
 * needs). On q8 a lone token runs the SIMD128 decode tile above; q4 has a relaxed decode tile too.
 * All are bit-identical to the SIMD128 kernels and the scalar twins. */
#define RELAXED_IMPORT(name) __attribute__((import_module("relaxed"), import_name(#name)))
extern void ms_relaxed_q8_0x4_i8a_pn_prefill(const uint8_t *W, size_t G, size_t nb, size_t rows, int T, const uint8_t *xp, const uint8_t *xn,
                                             const float *xd, float *y0, size_t rb) RELAXED_IMPORT(q8_0x4_i8a_pn_prefill);
extern void ms_relaxed_q8_0x4_i8a_u8_prefill(const uint8_t *W, size_t G, size_t nb, size_t rows, int T, const int8_t *x8,
                                             const int32_t *sx, const float *xd, float *y0, size_t rb) RELAXED_IMPORT(q8_0x4_i8a_u8_prefill);
extern void ms_relaxed_q4_0x4_i8a_prefill(const uint8_t *W, size_t G, size_t nb, size_t rows, int T, const int8_t *x8,
                                          const int32_t *sx, const float *xd, float *y0, size_t rb) RELAXED_IMPORT(q4_0x4_i8a_prefill);
extern void ms_relaxed_q4_0x4_i8a_decode(const uint8_t *W, size_t G, size_t nb, const int8_t *x8, const int32_t *sx, const float *xd,
                                         float *y0) RELAXED_IMPORT(q4_0x4_i8a_decode);

/* The four 4-byte groups of v to o, o + stride, o + 2 stride, o + 3 stride (the tiled layouts below). */
static inline void store_groups(void *o, size_t stride, v128_t v) {
    uint8_t *p = o;
    wasm_v128_store32_lane(p, v, 0);
    wasm_v128_store32_lane(p + stride, v, 1);
    wasm_v128_store32_lane(p + 2 * stride, v, 2);
    wasm_v128_store32_lane(p + 3 * stride, v, 3);
}

/* "pn": the codes (|x| <= 127) split into their positive and negative parts, both 0..127, tiled
 * by four tokens as pack_tiled below (group k of slot u at bytes 4 (4k + u)), and the block scales
 * (4b + u) */
static void pack_tiled_pn(const int16_t *x16, const float *d, size_t cols, int u, uint8_t *p, uint8_t *n, float *xd) {
    const v128_t z = wasm_i16x8_splat(0);
    for (size_t j = 0; j < cols; j += 16) {
        const v128_t a = wasm_v128_load(x16 + j), b = wasm_v128_load(x16 + j + 8);
        const v128_t vp = wasm_u8x16_narrow_i16x8(wasm_i16x8_max(a, z), wasm_i16x8_max(b, z));
        const v128_t vn = wasm_u8x16_narrow_i16x8(wasm_i16x8_max(wasm_i16x8_neg(a), z), wasm_i16x8_max(wasm_i16x8_neg(b), z));
        const size_t o = (j / 4 * 4 + (size_t)u) * 4;
        store_groups(p + o, 16, vp);
        store_groups(n + o, 16, vn);
    }
    for (size_t b = 0; b < cols / MS_QK; b++) xd[b * 4 + (size_t)u] = d[b];
}

/* The int8 codes of tokens as the relaxed tiles read them ("tiled"): tokens in tiles of `slots`
 * (8 for prefill, 1 for a lone token) and, in a tile, the tokens' groups of 4 codes side by side
 * (group k of slot u at bytes 4 (slots k + u)), so a prefill tile finds every token's codes at a
 * fixed offset from one pointer (a splat load with an immediate offset, no address arithmetic per
 * token: in Chromium the u8 tile ran 1.24x SIMD128 with a pointer per token, 1.52x so). Per block
 * b, slot u at slots b + u: the block's code sum times the tile's correction `corr` (-128 for u8,
 * -8 for q4) and its scale (from d[b]; d may be xd itself when slots is 1). q4: each 8 columns in
 * the order of a q4_0x4 chunk's nibbles (0 4 1 5 | 2 6 3 7: the low nibbles of a row's four bytes,
 * then the high ones); the order does not change the sum. */
static void pack_tiled(const int16_t *x16, const float *d, const int q4, const int32_t corr, size_t cols, size_t slots, size_t u, int8_t *x8,
                       int32_t *sx, float *xd) {
    for (size_t b = 0; b < cols / MS_QK; b++) {
        const int16_t *q = x16 + b * MS_QK;
        v128_t s = wasm_i16x8_splat(0);
        for (int j = 0; j < MS_QK; j += 16) {
            const v128_t a = wasm_v128_load(q + j), c = wasm_v128_load(q + j + 8);
            v128_t v = wasm_i8x16_narrow_i16x8(a, c);
            if (q4) v = wasm_i8x16_shuffle(v, v, 0, 4, 1, 5, 2, 6, 3, 7, 8, 12, 9, 13, 10, 14, 11, 15);
            store_groups(x8 + ((b * MS_QK + j) / 4 * slots + u) * 4, 4 * slots, v);
            s = wasm_i16x8_add(s, wasm_i16x8_add(a, c)); /* |lane| <= 4 * 127 */
        }
        const v128_t w = wasm_i32x4_extadd_pairwise_i16x8(s);
        sx[b * slots + u] = corr * (wasm_i32x4_extract_lane(w, 0) + wasm_i32x4_extract_lane(w, 1) + wasm_i32x4_extract_lane(w, 2) + wasm_i32x4_extract_lane(w, 3));
        xd[b * slots + u] = d[b];
    }
}

/* Relaxed prefill works on batches of tokens quantized up front (as many as RELAXED_CODES bytes of
 * codes hold), and the relaxed module runs each batch over the rows in blocks of about
 * RELAXED_BLOCK bytes of weights (in L2), every tile of tokens over a block before the next. */
enum { RELAXED_CODES = 128 * 1024, RELAXED_BLOCK = 128 * 1024, RELAXED_MAXC = 16384 };
static size_t relaxed_row_block(size_t nb, size_t bsz) {
    const size_t rb = RELAXED_BLOCK / (nb * bsz);
    return rb ? rb : 1;
}
static int relaxed_batch(size_t cols, int tile) {
    const int n = (int)(RELAXED_CODES / cols) / tile * tile;
    return n > tile ? n : tile;
}

void ms_gemm_q8_0x4w_i8a_4x4_relaxed(const void *W, size_t rows, size_t cols, const float *X, int T, float *Y) {
    const size_t nb = cols / MS_QK, G = rows / 4;
    if (cols > RELAXED_MAXC) { ms_gemm_q8_0x4w_i8a_generic(W, rows, cols, X, T, Y); return; }
    int16_t x16[RELAXED_MAXC];
    uint8_t xp[RELAXED_CODES], xn[RELAXED_CODES]; /* 306 KB on the stack in all (with d below; threads' stacks are 1 MB) */
    float xd[RELAXED_CODES / MS_QK];
    if (T == 1) {
        quantize_act_i16(X, x16, xd, cols);
        x4_decode_q8((const uint8_t *)W, G, nb, x16, xd, Y);
        return;
    }
    const int TB = relaxed_batch(cols, 4);
    float d[RELAXED_MAXC / MS_QK];
    for (int t0 = 0; t0 < T; t0 += TB) {
        const int nt = T - t0 < TB ? T - t0 : TB;
        for (int u = 0; u < nt; u++) {
            const size_t tile = (size_t)(u / 4);
            quantize_act_i16(X + (size_t)(t0 + u) * cols, x16, d, cols);
            pack_tiled_pn(x16, d, cols, u % 4, xp + tile * 4 * cols, xn + tile * 4 * cols, xd + tile * 4 * nb);
        }
        ms_relaxed_q8_0x4_i8a_pn_prefill((const uint8_t *)W, G, nb, rows, nt, xp, xn, xd, Y + (size_t)t0 * rows, relaxed_row_block(nb, sizeof(ms_block_q8_0x4)));
    }
}

/* The two tiles that take int8 codes and their block sums (q8 "u8", q4): each batch of tokens
 * quantized up front, tiled, then the module's tile over it. A lone token: the q8 SIMD128 decode
 * tile, or the q4 relaxed one. Wider rows than the buffers hold: the scalar twin. */
static inline __attribute__((always_inline)) void relaxed_i8(const void *W, const int q4, size_t rows, size_t cols, const float *X, int T, float *Y) {
    if (cols > RELAXED_MAXC) { (q4 ? ms_gemm_q4_0x4w_i8a_generic : ms_gemm_q8_0x4w_i8a_generic)(W, rows, cols, X, T, Y); return; }
    int16_t x16[RELAXED_MAXC];
    int8_t x8[RELAXED_CODES]; /* 194 KB on the stack in all */
    int32_t sx[RELAXED_CODES / MS_QK];
    float xd[RELAXED_CODES / MS_QK], d[RELAXED_MAXC / MS_QK];
    const size_t nb = cols / MS_QK, G = rows / 4;
    if (T == 1) {
        quantize_act_i16(X, x16, xd, cols);
        if (!q4) { x4_decode_q8((const uint8_t *)W, G, nb, x16, xd, Y); return; }
        pack_tiled(x16, xd, 1, -8, cols, 1, 0, x8, sx, xd);
        ms_relaxed_q4_0x4_i8a_decode((const uint8_t *)W, G, nb, x8, sx, xd, Y);
        return;
    }
    const int TB = relaxed_batch(cols, 8);
    for (int t0 = 0; t0 < T; t0 += TB) {
        const int nt = T - t0 < TB ? T - t0 : TB;
        for (int u = 0; u < nt; u++) {
            const size_t tile = (size_t)(u / 8);
            quantize_act_i16(X + (size_t)(t0 + u) * cols, x16, d, cols);
            pack_tiled(x16, d, q4, q4 ? -8 : -128, cols, 8, (size_t)u % 8, x8 + tile * 8 * cols, sx + tile * 8 * nb, xd + tile * 8 * nb);
        }
        float *const y = Y + (size_t)t0 * rows;
        if (q4) ms_relaxed_q4_0x4_i8a_prefill((const uint8_t *)W, G, nb, rows, nt, x8, sx, xd, y, relaxed_row_block(nb, sizeof(ms_block_q4_0x4)));
        else ms_relaxed_q8_0x4_i8a_u8_prefill((const uint8_t *)W, G, nb, rows, nt, x8, sx, xd, y, relaxed_row_block(nb, sizeof(ms_block_q8_0x4)));
    }
}

void ms_gemm_q8_0x4w_i8a_4x8_relaxedu8(const void *W, size_t rows, size_t cols, const float *X, int T, float *Y) {
    relaxed_i8(W, 0, rows, cols, X, T, Y);
}

void ms_gemm_q4_0x4w_i8a_4x8_relaxed(const void *W, size_t rows, size_t cols, const float *X, int T, float *Y) {
    relaxed_i8(W, 1, rows, cols, X, T, Y);
}

void ms_gemm_q8_0x4w_i16x2a_simd128(const void *W, size_t rows, size_t cols, const float *X, int T, float *Y) {
    gemm_qx4_i16x2a(W, 0, rows, cols, X, T, Y);
}

void ms_gemm_q4_0x4w_i16x2a_simd128(const void *W, size_t rows, size_t cols, const float *X, int T, float *Y) {
    gemm_qx4_i16x2a(W, 1, rows, cols, X, T, Y);
}

void ms_gemm_q8_0x4w_i8a_simd128(const void *W, size_t rows, size_t cols, const float *X, int T, float *Y) {
    gemm_qx4_i8a(W, 0, rows, cols, X, T, Y);
}

void ms_gemm_q4_0x4w_i8a_simd128(const void *W, size_t rows, size_t cols, const float *X, int T, float *Y) {
    gemm_qx4_i8a(W, 1, rows, cols, X, T, Y);
}
#else
typedef int ms_no_simd128_here; /* ISO C forbids an empty translation unit */
#endif
