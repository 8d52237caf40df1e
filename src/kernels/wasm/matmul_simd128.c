/* WASM SIMD128 matmul kernels. Each has a scalar twin in generic/ and is compared to it on awkward
 * shapes by tests/kernels.test.js. Tile: 1 weight row x up to 4 activation rows (tokens), so a
 * weight row is read once per 4 tokens. */
#ifdef __wasm_simd128__
#include <wasm_simd128.h>
#include <stdint.h>
#include "../kernels.h"
#include "../quant.h"

static inline float hsum(v128_t v) {
    return (wasm_f32x4_extract_lane(v, 0) + wasm_f32x4_extract_lane(v, 1)) +
           (wasm_f32x4_extract_lane(v, 2) + wasm_f32x4_extract_lane(v, 3));
}

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

void ms_matmul_f32_1x4_simd128(const void *W, size_t rows, size_t cols, const float *X, int T, float *Y) {
    const float *w = W;
    for (size_t o = 0; o < rows; o++) {
        const float *wr = w + o * cols;
        int t = 0;
        for (; t + 4 <= T; t += 4) {
            const float *x0 = X + (size_t)t * cols, *x1 = x0 + cols, *x2 = x1 + cols, *x3 = x2 + cols;
            v128_t a0 = wasm_f32x4_splat(0), a1 = a0, a2 = a0, a3 = a0;
            size_t i = 0;
            for (; i + 4 <= cols; i += 4) {
                v128_t wv = wasm_v128_load(wr + i);
                a0 = wasm_f32x4_add(a0, wasm_f32x4_mul(wv, wasm_v128_load(x0 + i)));
                a1 = wasm_f32x4_add(a1, wasm_f32x4_mul(wv, wasm_v128_load(x1 + i)));
                a2 = wasm_f32x4_add(a2, wasm_f32x4_mul(wv, wasm_v128_load(x2 + i)));
                a3 = wasm_f32x4_add(a3, wasm_f32x4_mul(wv, wasm_v128_load(x3 + i)));
            }
            float s0 = hsum(a0), s1 = hsum(a1), s2 = hsum(a2), s3 = hsum(a3);
            for (; i < cols; i++) { s0 += wr[i] * x0[i]; s1 += wr[i] * x1[i]; s2 += wr[i] * x2[i]; s3 += wr[i] * x3[i]; }
            Y[(size_t)t * rows + o] = s0; Y[(size_t)(t + 1) * rows + o] = s1;
            Y[(size_t)(t + 2) * rows + o] = s2; Y[(size_t)(t + 3) * rows + o] = s3;
        }
        for (; t < T; t++) Y[(size_t)t * rows + o] = ms_dot_f32_simd128(wr, X + (size_t)t * cols, cols);
    }
}

/* 8 half-precision weights -> 2 f32x4 vectors, in registers. bf16: the top half of an f32.
 * f16: move sign, exponent and mantissa into f32 position and multiply by 2^112, which rebiases
 * the exponent and turns f16 subnormals into the right normal f32s exactly; inf/NaN (exponent 31)
 * get the f32 all-ones exponent. */
static inline v128_t f16x4_to_f32(v128_t v) {
    const v128_t em = wasm_v128_and(v, wasm_i32x4_splat(0x7fff)), sign = wasm_i32x4_shl(wasm_v128_and(v, wasm_i32x4_splat(0x8000)), 16);
    const v128_t bits = wasm_i32x4_shl(em, 13);
    const v128_t scaled = wasm_f32x4_mul(bits, wasm_f32x4_splat(0x1p112f));
    const v128_t special = wasm_v128_or(bits, wasm_i32x4_splat(0x7f800000));
    const v128_t is_special = wasm_i32x4_ge(em, wasm_i32x4_splat(0x7c00));
    return wasm_v128_or(wasm_v128_bitselect(special, scaled, is_special), sign);
}

static inline void half8_to_f32(const uint16_t *p, const int bf, v128_t *lo, v128_t *hi) {
    const v128_t h = wasm_v128_load(p);
    const v128_t a = wasm_u32x4_extend_low_u16x8(h), b = wasm_u32x4_extend_high_u16x8(h);
    if (bf) { *lo = wasm_i32x4_shl(a, 16); *hi = wasm_i32x4_shl(b, 16); }
    else { *lo = f16x4_to_f32(a); *hi = f16x4_to_f32(b); }
}

/* f16 / bf16 weights, decoded in the kernel: 1 weight row x up to 4 tokens, like the f32 kernel. */
static inline __attribute__((always_inline)) void matmul_half_simd128(const void *W, const int bf, size_t rows, size_t cols, const float *X, int T, float *Y) {
    const uint16_t *w = W;
    for (size_t o = 0; o < rows; o++) {
        const uint16_t *wr = w + o * cols;
        for (int t0 = 0; t0 < T; t0 += 4) {
            const int nt = T - t0 < 4 ? T - t0 : 4;
            const float *x = X + (size_t)t0 * cols;
            v128_t acc[4] = {wasm_f32x4_splat(0), wasm_f32x4_splat(0), wasm_f32x4_splat(0), wasm_f32x4_splat(0)};
            size_t i = 0;
            for (; i + 8 <= cols; i += 8) {
                v128_t lo, hi;
                half8_to_f32(wr + i, bf, &lo, &hi);
                for (int u = 0; u < nt; u++)
                    acc[u] = wasm_f32x4_add(acc[u], wasm_f32x4_add(wasm_f32x4_mul(lo, wasm_v128_load(x + (size_t)u * cols + i)),
                                                                   wasm_f32x4_mul(hi, wasm_v128_load(x + (size_t)u * cols + i + 4))));
            }
            for (int u = 0; u < nt; u++) {
                float sum = hsum(acc[u]);
                for (size_t k = i; k < cols; k++) sum += (bf ? ms_bf16_to_f32(wr[k]) : ms_f16_to_f32(wr[k])) * x[(size_t)u * cols + k];
                Y[(size_t)(t0 + u) * rows + o] = sum;
            }
        }
    }
}

void ms_matmul_f16_simd128(const void *W, size_t rows, size_t cols, const float *X, int T, float *Y) { matmul_half_simd128(W, 0, rows, cols, X, T, Y); }
void ms_matmul_bf16_simd128(const void *W, size_t rows, size_t cols, const float *X, int T, float *Y) { matmul_half_simd128(W, 1, rows, cols, X, T, Y); }

/* int8 codes -> 4 f32x4 vectors */
static inline void q8_to_f32(const int8_t *q, v128_t out[8]) {
    v128_t b0 = wasm_v128_load(q), b1 = wasm_v128_load(q + 16);
    v128_t h0 = wasm_i16x8_extend_low_i8x16(b0), h1 = wasm_i16x8_extend_high_i8x16(b0);
    v128_t h2 = wasm_i16x8_extend_low_i8x16(b1), h3 = wasm_i16x8_extend_high_i8x16(b1);
    out[0] = wasm_f32x4_convert_i32x4(wasm_i32x4_extend_low_i16x8(h0));
    out[1] = wasm_f32x4_convert_i32x4(wasm_i32x4_extend_high_i16x8(h0));
    out[2] = wasm_f32x4_convert_i32x4(wasm_i32x4_extend_low_i16x8(h1));
    out[3] = wasm_f32x4_convert_i32x4(wasm_i32x4_extend_high_i16x8(h1));
    out[4] = wasm_f32x4_convert_i32x4(wasm_i32x4_extend_low_i16x8(h2));
    out[5] = wasm_f32x4_convert_i32x4(wasm_i32x4_extend_high_i16x8(h2));
    out[6] = wasm_f32x4_convert_i32x4(wasm_i32x4_extend_low_i16x8(h3));
    out[7] = wasm_f32x4_convert_i32x4(wasm_i32x4_extend_high_i16x8(h3));
}


/* One dequantized block (8 x f32x4 weights, scale d) against the same 32 inputs of nt tokens
 * (rows of x, `stride` floats apart): lane-wise partial sums into acc, reduced once per row later. */
static inline void block_dot_f32x4(const v128_t wq[8], v128_t d, const float *x, size_t stride, int nt, v128_t acc[4]) {
    for (int u = 0; u < nt; u++, x += stride) {
        v128_t s = wasm_f32x4_mul(wq[0], wasm_v128_load(x));
        for (int k = 1; k < 8; k++) s = wasm_f32x4_add(s, wasm_f32x4_mul(wq[k], wasm_v128_load(x + 4 * k)));
        acc[u] = wasm_f32x4_add(acc[u], wasm_f32x4_mul(s, d));
    }
}

void ms_matmul_q8_0_simd128(const void *W, size_t rows, size_t cols, const float *X, int T, float *Y) {
    const ms_block_q8_0 *w = W;
    size_t nb = cols / MS_QK;
    for (size_t o = 0; o < rows; o++) {
        for (int t0 = 0; t0 < T; t0 += 4) {
            int nt = T - t0 < 4 ? T - t0 : 4;
            v128_t acc[4] = {wasm_f32x4_splat(0), wasm_f32x4_splat(0), wasm_f32x4_splat(0), wasm_f32x4_splat(0)};
            for (size_t b = 0; b < nb; b++) {
                const ms_block_q8_0 *blk = &w[o * nb + b];
                v128_t wq[8];
                q8_to_f32(blk->q, wq);
                const v128_t d = wasm_f32x4_splat(blk->d);
                block_dot_f32x4(wq, d, X + (size_t)t0 * cols + b * MS_QK, cols, nt, acc);
            }
            for (int u = 0; u < nt; u++) Y[(size_t)(t0 + u) * rows + o] = hsum(acc[u]);
        }
    }
}

void ms_matmul_q4_0_simd128(const void *W, size_t rows, size_t cols, const float *X, int T, float *Y) {
    const ms_block_q4_0 *w = W;
    size_t nb = cols / MS_QK;
    const v128_t m4 = wasm_i8x16_splat(15), eight = wasm_i8x16_splat(8);
    for (size_t o = 0; o < rows; o++) {
        for (int t0 = 0; t0 < T; t0 += 4) {
            int nt = T - t0 < 4 ? T - t0 : 4;
            v128_t acc[4] = {wasm_f32x4_splat(0), wasm_f32x4_splat(0), wasm_f32x4_splat(0), wasm_f32x4_splat(0)};
            for (size_t b = 0; b < nb; b++) {
                const ms_block_q4_0 *blk = &w[o * nb + b];
                v128_t raw = wasm_v128_load(blk->q);
                int8_t q[32];
                wasm_v128_store(q, wasm_i8x16_sub(wasm_v128_and(raw, m4), eight));
                wasm_v128_store(q + 16, wasm_i8x16_sub(wasm_u8x16_shr(raw, 4), eight));
                v128_t wq[8];
                q8_to_f32(q, wq);
                const v128_t d = wasm_f32x4_splat(blk->d);
                block_dot_f32x4(wq, d, X + (size_t)t0 * cols + b * MS_QK, cols, nt, acc);
            }
            for (int u = 0; u < nt; u++) Y[(size_t)(t0 + u) * rows + o] = hsum(acc[u]);
        }
    }
}

/* Row r (0..3) of a 4-row interleaved block as four i16x8 vectors. q8: columns 0-7, 8-15, 16-23,
 * 24-31, from two 16-byte chunks 64 bytes apart. q4: one 16-byte chunk of signed nibbles read as
 * eight 16-bit lanes, each sign-extended out of its lane by a left and an arithmetic right shift:
 * the low nibbles of even bytes (columns 0, 2, .. 14), high nibbles of even bytes (16, 18, .. 30),
 * low nibbles of odd bytes (1, 3, .. 15), high nibbles of odd bytes (17, 19, .. 31). The
 * activations of a q4 matrix are put in that same column order once per token (q4_perm_block). */
static inline void x4_row_q8(const int8_t *q, int r, v128_t w[4]) {
    const int8_t *a = q + 16 * r, *b = q + 64 + 16 * r;
    w[0] = wasm_i16x8_load8x8(a); w[1] = wasm_i16x8_load8x8(a + 8);
    w[2] = wasm_i16x8_load8x8(b); w[3] = wasm_i16x8_load8x8(b + 8);
}

static inline void x4_row_q4(const uint8_t *q, int r, v128_t w[4]) {
    const v128_t v = wasm_v128_load(q + 16 * r);
    w[0] = wasm_i16x8_shr(wasm_i16x8_shl(v, 12), 12);
    w[1] = wasm_i16x8_shr(wasm_i16x8_shl(v, 8), 12);
    w[2] = wasm_i16x8_shr(wasm_i16x8_shl(v, 4), 12);
    w[3] = wasm_i16x8_shr(v, 12);
}

/* 32 activation codes into the column order of x4_row_q4: even columns of each half, then odd */
static inline void q4_perm_block(int8_t *x) {
    const v128_t lo = wasm_v128_load(x), hi = wasm_v128_load(x + 16);
    wasm_v128_store(x, wasm_i8x16_shuffle(lo, hi, 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30));
    wasm_v128_store(x + 16, wasm_i8x16_shuffle(lo, hi, 1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31));
}

/* The exact integer dot product of one row's block with 32 activation codes (i16x8 vectors). */
static inline v128_t x4_dot(const v128_t w[4], v128_t x0, v128_t x1, v128_t x2, v128_t x3) {
    return wasm_i32x4_add(wasm_i32x4_add(wasm_i32x4_dot_i16x8(w[0], x0), wasm_i32x4_dot_i16x8(w[1], x1)),
                          wasm_i32x4_add(wasm_i32x4_dot_i16x8(w[2], x2), wasm_i32x4_dot_i16x8(w[3], x3)));
}
#define X4_DOT_AT(w, x) x4_dot(w, wasm_v128_load(x), wasm_v128_load((x) + 8), wasm_v128_load((x) + 16), wasm_v128_load((x) + 24))

static inline v128_t lane_splat(v128_t s, int r) {
    switch (r) {
    case 0: return wasm_i32x4_shuffle(s, s, 0, 0, 0, 0);
    case 1: return wasm_i32x4_shuffle(s, s, 1, 1, 1, 1);
    case 2: return wasm_i32x4_shuffle(s, s, 2, 2, 2, 2);
    default: return wasm_i32x4_shuffle(s, s, 3, 3, 3, 3);
    }
}

/* One 4-row group against two tokens (xa, xc: their codes widened to i16; da, dc: their block
 * scales): each widened weight row serves both. Per token the operations and their order are those
 * of x4_groups_1tok, so a token's result does not depend on pairing. */
static inline __attribute__((always_inline)) void x4_group_2tok(const uint8_t *blk0, const int q4, size_t nb, size_t bsz, const int16_t *xa, const int16_t *xc,
                                 const float *da, const float *dc, float *ya, float *yc) {
    v128_t a0 = wasm_f32x4_splat(0), a1 = a0, a2 = a0, a3 = a0, c0 = a0, c1 = a0, c2 = a0, c3 = a0;
    for (size_t b = 0; b < nb; b++) {
        const uint8_t *blk = blk0 + b * bsz;
        const int16_t *x = xa + b * MS_QK, *z = xc + b * MS_QK;
        const v128_t d = wasm_v128_load(blk);
        const v128_t s = wasm_f32x4_mul(d, wasm_f32x4_splat(da[b])), t = wasm_f32x4_mul(d, wasm_f32x4_splat(dc[b]));
        v128_t w[4];
#define ROW(r, acc, acc2) \
        if (q4) x4_row_q4(blk + 16, r, w); else x4_row_q8((const int8_t *)blk + 16, r, w); \
        acc = wasm_f32x4_add(acc, wasm_f32x4_mul(wasm_f32x4_convert_i32x4(X4_DOT_AT(w, x)), lane_splat(s, r))); \
        acc2 = wasm_f32x4_add(acc2, wasm_f32x4_mul(wasm_f32x4_convert_i32x4(X4_DOT_AT(w, z)), lane_splat(t, r)));
        ROW(0, a0, c0) ROW(1, a1, c1) ROW(2, a2, c2) ROW(3, a3, c3)
#undef ROW
    }
    ya[0] = hsum(a0); ya[1] = hsum(a1); ya[2] = hsum(a2); ya[3] = hsum(a3);
    yc[0] = hsum(c0); yc[1] = hsum(c1); yc[2] = hsum(c2); yc[3] = hsum(c3);
}

/* ng (1 or 4, a constant at each call) 4-row groups at bs[k] against one token (xa: its int8 codes,
 * widened as they are loaded; da: its block scales): ys[k][0..3]. Decode reads four groups a
 * quarter of the matrix apart, one weight stream each: measured on this machine, a matrix streams
 * from memory at 8-9 GB/s this way against 5 GB/s one group at a time, because four independent
 * streams keep more cache-line reads in flight. */
static inline __attribute__((always_inline)) void x4_groups_1tok(const uint8_t *const bs[4], const int ng, const int q4, size_t nb, size_t bsz, const int8_t *xa, const float *da, float *const ys[4]) {
    v128_t acc[4][4];
    for (int k = 0; k < ng; k++) for (int r = 0; r < 4; r++) acc[k][r] = wasm_f32x4_splat(0);
    for (size_t b = 0; b < nb; b++) {
        const int8_t *x = xa + b * MS_QK;
        const v128_t x0 = wasm_i16x8_load8x8(x), x1 = wasm_i16x8_load8x8(x + 8), x2 = wasm_i16x8_load8x8(x + 16), x3 = wasm_i16x8_load8x8(x + 24);
        const v128_t dx = wasm_f32x4_splat(da[b]);
        for (int r = 0; r < 4; r++)
            for (int k = 0; k < ng; k++) {
                const uint8_t *B = bs[k] + b * bsz;
                const v128_t sc = wasm_f32x4_mul(wasm_v128_load(B), dx);
                v128_t w[4];
                if (q4) x4_row_q4(B + 16, r, w); else x4_row_q8((const int8_t *)B + 16, r, w);
                acc[k][r] = wasm_f32x4_add(acc[k][r], wasm_f32x4_mul(wasm_f32x4_convert_i32x4(x4_dot(w, x0, x1, x2, x3)), lane_splat(sc, r)));
            }
    }
    for (int k = 0; k < ng; k++) for (int r = 0; r < 4; r++) ys[k][r] = hsum(acc[k][r]);
}

/* int8 activations x the 4-row interleaved layouts (quant.h). Activations are quantized per block
 * of 32 once per token (and, for token pairs, widened to i16 once); each block group holds 4 output
 * rows; the integer products go through i32x4.dot_i16x8_s and are scaled per block in f32. One
 * token (decode) reads four groups at once; several tokens go in pairs that share each widened
 * weight row (measured +17% for q8, +33% for q4 at 64 tokens). A token's arithmetic is the same
 * alone, in a pair or beside other groups, so results do not depend on T or on how work is split
 * between threads. q4 is a constant in each caller: one specialised loop per layout. */
static inline __attribute__((always_inline)) void matmul_x4_simd128(const void *W, const int q4, size_t rows, size_t cols, const float *X, int T, float *Y) {
    const size_t nb = cols / MS_QK, bsz = q4 ? sizeof(ms_block_q4_0x4) : sizeof(ms_block_q8_0x4);
    enum { MAXC = 16384, TB = 4 }; /* ~200 KB of codes on the stack (stacks are 1 MB) */
    if (cols > MAXC) { (q4 ? ms_matmul_q4_0x4_generic : ms_matmul_q8_0x4_generic)(W, rows, cols, X, T, Y); return; }
    int8_t xq[TB][MAXC];
    int16_t x16[TB][MAXC];
    float xd[TB][MAXC / MS_QK];
    for (int t0 = 0; t0 < T; t0 += TB) {
        const int nt = T - t0 < TB ? T - t0 : TB;
        for (int u = 0; u < nt; u++) {
            ms_quantize_act_q8(X + (size_t)(t0 + u) * cols, xq[u], xd[u], cols);
            if (q4) for (size_t b = 0; b < nb; b++) q4_perm_block(xq[u] + b * MS_QK);
            if (nt == 1) break; /* a lone token reads its int8 codes directly */
            size_t i = 0;
            for (; i + 16 <= cols; i += 16) {
                const v128_t v = wasm_v128_load(xq[u] + i);
                wasm_v128_store(x16[u] + i, wasm_i16x8_extend_low_i8x16(v));
                wasm_v128_store(x16[u] + i + 8, wasm_i16x8_extend_high_i8x16(v));
            }
            for (; i < cols; i++) x16[u][i] = xq[u][i];
        }
        if (nt == 1) {
            const size_t G = rows / 4, q = G / 4;
            for (size_t g = 0; g < q; g++) {
                const uint8_t *bs[4];
                float *ys[4];
                for (int k = 0; k < 4; k++) { bs[k] = (const uint8_t *)W + (g + k * q) * nb * bsz; ys[k] = Y + (size_t)t0 * rows + (g + k * q) * 4; }
                x4_groups_1tok(bs, 4, q4, nb, bsz, xq[0], xd[0], ys);
            }
            for (size_t g = 4 * q; g < G; g++) {
                const uint8_t *b1[4] = {(const uint8_t *)W + g * nb * bsz};
                float *y1[4] = {Y + (size_t)t0 * rows + g * 4};
                x4_groups_1tok(b1, 1, q4, nb, bsz, xq[0], xd[0], y1);
            }
            continue;
        }
        for (size_t g = 0; g < rows / 4; g++) {
            const uint8_t *blk0 = (const uint8_t *)W + g * nb * bsz;
            float *y = Y + (size_t)t0 * rows + g * 4;
            int u = 0;
            for (; u + 2 <= nt; u += 2) x4_group_2tok(blk0, q4, nb, bsz, x16[u], x16[u + 1], xd[u], xd[u + 1], y + (size_t)u * rows, y + (size_t)(u + 1) * rows);
            if (u < nt) {
                const uint8_t *b1[4] = {blk0};
                float *y1[4] = {y + (size_t)u * rows};
                x4_groups_1tok(b1, 1, q4, nb, bsz, xq[u], xd[u], y1);
            }
        }
    }
}

void ms_matmul_q8_0x4_simd128(const void *W, size_t rows, size_t cols, const float *X, int T, float *Y) {
    matmul_x4_simd128(W, 0, rows, cols, X, T, Y);
}

void ms_matmul_q4_0x4_simd128(const void *W, size_t rows, size_t cols, const float *X, int T, float *Y) {
    matmul_x4_simd128(W, 1, rows, cols, X, T, Y);
}
#else
typedef int ms_no_simd128_here; /* ISO C forbids an empty translation unit */
#endif
