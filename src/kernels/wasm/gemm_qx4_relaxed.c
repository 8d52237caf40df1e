/* gemm with q8_0x4 or q4_0x4 weights and int8 activations, relaxed SIMD: the prefill tiles of
 * ms_gemm_q8_0x4w_i8a_4x4_relaxed ("pn" below) and ms_gemm_q8_0x4w_i8a_4x8_relaxedu8 ("u8"), and
 * the prefill and decode tiles of ms_gemm_q4_0x4w_i8a_4x8_relaxed ("q4", at the end)
 * (gemm_qx4_simd128.c holds their part in the engine: the activations' quantization, and a lone
 * token's matvec, which runs the SIMD128 decode tile: on this layout a relaxed decode tile needs a
 * byte shuffle per 16 weight bytes, and measured no faster — see bench/README.md). This file is
 * built apart from the engine, by clang-16 alone, into build/wasm/mlpscope-relaxed.wasm (and
 * -relaxed-mt for the threaded engine), a module of a few KB that imports the engine's memory and
 * exports the tiles below; the engine imports them from module "relaxed". Debian's emscripten
 * (clang-14, binaryen 108) cannot build or keep relaxed instructions, hence the split.
 *
 * The instruction: i32x4.relaxed_dot_i8x16_i7x16_add_s(a, b, c): lane r gets c[r] + the sum of
 * a[4r + j] * b[4r + j], j = 0..3, for signed 8-bit a and b in 0..127 (where b has its top bit
 * set, engines differ). "pn", exact on every engine: activation codes x in [-127, 127] are split once
 * per token into p = max(x, 0) and n = max(-x, 0), both 0..127, so sum w x = sum w p - sum w n,
 * exact: the block's integer sums equal those of the SIMD128 kernel and of the scalar twin
 * (ms_gemm_q8_0x4w_i8a_generic), and the f32 steps after them are the same, so the outputs are
 * bit-identical. (Each pair of products is at most 2 * 128 * 127 < 32767, so an engine that adds
 * pairs in 16 bits first gives the same sums.)
 *
 * Layout: a q8_0x4 block (quant.h) holds the codes of column pairs, 8 bytes per pair (r0c r0c+1
 * r1c r1c+1 .. r3c r3c+1); 16 bytes are columns 4m .. 4m+3 of the four rows, and one byte shuffle
 * regroups them by row (r0c0..c3 | r1c0..c3 | ...), the order the relaxed dot sums in. Its four
 * lanes are then the four rows, as in the SIMD128 kernel.
 *
 * No stack: every buffer is the caller's, so the module needs no stack pointer and no data of its
 * own (build.sh checks that it imports only the memory and reads no global). */
#if defined(__wasm_relaxed_simd__)
#include <wasm_simd128.h>
#include <stddef.h>
#include <stdint.h>

#define QK 32
#define BSZ 144 /* sizeof(ms_block_q8_0x4): 4 f32 scales, then 128 code bytes */
#define BSZ4 80 /* sizeof(ms_block_q4_0x4): 4 f32 scales, then 64 code bytes */

typedef int32_t i32x4_t __attribute__((vector_size(16)));
typedef int8_t i8x16_t __attribute__((vector_size(16)));

/* acc + the four rows' dot products of w (signed codes, grouped by row) with x7 (0..127) */
static inline v128_t rdot(v128_t w, v128_t x7, v128_t acc) {
    return (v128_t)__builtin_wasm_relaxed_dot_i8x16_i7x16_add_s_i32x4((i8x16_t)w, (i8x16_t)x7, (i32x4_t)acc);
}
/* 16 code bytes of 4 column pairs, regrouped by row: r0c0 r0c1 r0c2 r0c3 r1c0 .. r3c3 */
static inline v128_t by_row(const uint8_t *q) {
    const v128_t v = wasm_v128_load(q);
    return wasm_i8x16_shuffle(v, v, 0, 1, 8, 9, 2, 3, 10, 11, 4, 5, 12, 13, 6, 7, 14, 15);
}

/* Prefill: one 4-row group (weights at w0) x NT (1..4) tokens, their p/n codes tiled (four slots:
 * gemm_qx4_simd128.c, pack_tiled_pn: group m of block b, slot u at xp + 128b + 16m + 4u, and at xn
 * likewise; the scales at xd + 4b + u), results to ys[u][0..3]. A weight vector is loaded and
 * regrouped once for the NT tokens; two accumulators per token (p and n) keep every sum exact. */
static inline __attribute__((always_inline)) void tile_prefill(const uint8_t *w0, const int NT, size_t nb, const uint8_t *xp, const uint8_t *xn,
                                                               const float *xd, float *const ys[4]) {
    v128_t acc[4];
    for (int u = 0; u < NT; u++) acc[u] = wasm_f32x4_splat(0);
    for (size_t b = 0; b < nb; b++) {
        const uint8_t *pb = xp + b * 4 * QK, *nb_ = xn + b * 4 * QK;
        v128_t ip[4], in[4];
        for (int u = 0; u < NT; u++) ip[u] = in[u] = wasm_i32x4_splat(0);
#pragma clang loop unroll_count(2)
        for (int m = 0; m < 8; m++) {
            const v128_t w = by_row(w0 + b * BSZ + 16 + 16 * m);
            for (int u = 0; u < NT; u++) {
                ip[u] = rdot(w, wasm_v128_load32_splat(pb + 16 * m + 4 * u), ip[u]);
                in[u] = rdot(w, wasm_v128_load32_splat(nb_ + 16 * m + 4 * u), in[u]);
            }
        }
        const v128_t d = wasm_v128_load(w0 + b * BSZ);
        for (int u = 0; u < NT; u++)
            acc[u] = wasm_f32x4_add(acc[u], wasm_f32x4_mul(wasm_f32x4_convert_i32x4(wasm_i32x4_sub(ip[u], in[u])),
                                                           wasm_f32x4_mul(d, wasm_v128_load32_splat(xd + 4 * b + u))));
    }
    for (int u = 0; u < NT; u++) wasm_v128_store(ys[u], acc[u]);
}

/* T tokens, their codes tiled by four (tile t at xp + 4t * nb * 32, xn likewise, its scales at
 * xd + 4t * nb), every row group g < G: y0 + u * rows + 4g. Row groups go in blocks of rb (the
 * caller sizes them to stay in L2) and every tile runs over a block before the next block: the
 * weights come from memory once, not once per tile. */
__attribute__((export_name("q8_0x4_i8a_pn_prefill"))) void q8_0x4_i8a_pn_prefill(const uint8_t *W, size_t G, size_t nb, size_t rows, int T, const uint8_t *xp,
                                                                          const uint8_t *xn, const float *xd, float *y0, size_t rb) {
    for (size_t g0 = 0; g0 < G; g0 += rb) {
        const size_t g1 = G - g0 < rb ? G : g0 + rb;
        for (int t0 = 0; t0 < T; t0 += 4) {
            const int nt = T - t0 < 4 ? T - t0 : 4;
            for (size_t g = g0; g < g1; g++) {
                const uint8_t *w0 = W + g * nb * BSZ;
                float *ys[4];
                for (int u = 0; u < 4; u++) ys[u] = y0 + (size_t)(t0 + u) * rows + g * 4;
                const size_t o = (size_t)t0 * nb * QK;
                const float *d = xd + (size_t)t0 * nb;
                if (nt == 4) tile_prefill(w0, 4, nb, xp + o, xn + o, d, ys);
                else if (nt == 3) tile_prefill(w0, 3, nb, xp + o, xn + o, d, ys);
                else if (nt == 2) tile_prefill(w0, 2, nb, xp + o, xn + o, d, ys);
                else tile_prefill(w0, 1, nb, xp + o, xn + o, d, ys);
            }
        }
    }
}

/* ---- u8: the weights as the unsigned operand ----
 * Where the engine's relaxed dot reads its second operand as unsigned 8-bit and adds in 32 bits
 * (x86 with AVX-VNNI: one vpdpbusd; js/relaxed.js checks it with a known answer before this runs),
 * the weights can be that operand as w + 128 (0..255: a byte's top bit flipped) and the signed
 * activation codes x the first: sum x (w + 128) - 128 sum x = sum w x, one relaxed dot per 16
 * weight bytes and token, exact, with sum x per token and block computed once for all rows. */
static inline v128_t by_row_u8(const uint8_t *q) { return wasm_v128_xor(by_row(q), wasm_i8x16_splat((int8_t)0x80)); }

/* Prefill: one 4-row group x NT (1..8) tokens, their codes tiled (group m of block b, slot u at
 * x8 + 256b + 32m + 4u; -128 times the block sums and the scales at sx + 8b + u, xd + 8b + u): a
 * weight vector regrouped once for all of them; measured in Chromium on a 3584 x 1024 matrix, 8
 * tokens ran 1.3x the speed of 4 (the weights are read half as often) and 12 no faster than 8 (too
 * few registers). */
enum { NTU = 8 };
static inline __attribute__((always_inline)) void tile_prefill_u8(const uint8_t *w0, const int NT, size_t nb, const int8_t *x8,
                                                                  const int32_t *sx, const float *xd, float *const ys[NTU]) {
    v128_t acc[NTU];
    for (int u = 0; u < NT; u++) acc[u] = wasm_f32x4_splat(0);
    for (size_t b = 0; b < nb; b++) {
        const int8_t *xb = x8 + b * 8 * QK; /* the block's codes, tiled: group m of slot u at 32m + 4u */
        v128_t is[NTU];
        for (int u = 0; u < NT; u++) is[u] = wasm_v128_load32_splat(sx + 8 * b + u);
#pragma clang loop unroll_count(2)
        for (int m = 0; m < 8; m++) {
            const v128_t w = by_row_u8(w0 + b * BSZ + 16 + 16 * m);
            for (int u = 0; u < NT; u++) is[u] = rdot(wasm_v128_load32_splat(xb + 32 * m + 4 * u), w, is[u]);
        }
        const v128_t d = wasm_v128_load(w0 + b * BSZ);
        for (int u = 0; u < NT; u++)
            acc[u] = wasm_f32x4_add(acc[u], wasm_f32x4_mul(wasm_f32x4_convert_i32x4(is[u]), wasm_f32x4_mul(d, wasm_v128_load32_splat(xd + 8 * b + u))));
    }
    for (int u = 0; u < NT; u++) wasm_v128_store(ys[u], acc[u]);
}

/* T tokens, their codes tiled (gemm_qx4_simd128.c, pack_tiled: tile t of 8 tokens at x8 + 8t * nb * 32,
 * its block corrections and scales at sx + 8t * nb, xd + 8t * nb), every row group g < G:
 * y0 + u * rows + 4g; row groups in blocks of rb, each run by every tile before the next (as the
 * pn tiles above). q4 (a constant where it is inlined): q4_0x4 weights and tile_q4 (below), else
 * q8_0x4 and tile_prefill_u8. */
static inline __attribute__((always_inline)) void tile_i8(const int q4, const uint8_t *w0, const int NT, size_t nb, const int8_t *x8,
                                                          const int32_t *sx, const float *xd, float *const ys[NTU]);
static inline __attribute__((always_inline)) void prefill_i8(const int q4, const uint8_t *W, size_t G, size_t nb, size_t rows, int T,
                                                             const int8_t *x8, const int32_t *sx, const float *xd, float *y0, size_t rb) {
    for (size_t g0 = 0; g0 < G; g0 += rb) {
        const size_t g1 = G - g0 < rb ? G : g0 + rb;
        for (int t0 = 0; t0 < T; t0 += NTU) {
            const int nt = T - t0 < NTU ? T - t0 : NTU;
            const int8_t *x = x8 + (size_t)t0 * nb * QK;
            const int32_t *s = sx + (size_t)t0 * nb;
            const float *d = xd + (size_t)t0 * nb;
            for (size_t g = g0; g < g1; g++) {
                const uint8_t *w0 = W + g * nb * (q4 ? BSZ4 : BSZ);
                float *ys[NTU];
                for (int u = 0; u < NTU; u++) ys[u] = y0 + (size_t)(t0 + u) * rows + g * 4;
                switch (nt) {
                case 8: tile_i8(q4, w0, 8, nb, x, s, d, ys); break;
                case 7: tile_i8(q4, w0, 7, nb, x, s, d, ys); break;
                case 6: tile_i8(q4, w0, 6, nb, x, s, d, ys); break;
                case 5: tile_i8(q4, w0, 5, nb, x, s, d, ys); break;
                case 4: tile_i8(q4, w0, 4, nb, x, s, d, ys); break;
                case 3: tile_i8(q4, w0, 3, nb, x, s, d, ys); break;
                case 2: tile_i8(q4, w0, 2, nb, x, s, d, ys); break;
                default: tile_i8(q4, w0, 1, nb, x, s, d, ys); break;
                }
            }
        }
    }
}

__attribute__((export_name("q8_0x4_i8a_u8_prefill"))) void q8_0x4_i8a_u8_prefill(const uint8_t *W, size_t G, size_t nb, size_t rows, int T, const int8_t *x8,
                                                                                const int32_t *sx, const float *xd, float *y0, size_t rb) {
    prefill_i8(0, W, G, nb, rows, T, x8, sx, xd, y0, rb);
}

/* ---- q4: q4_0x4 weights, their nibbles as the 7-bit operand ----
 * A q4_0x4 chunk (quant.h) holds 8 columns of the four rows in 16 bytes, row r in bytes 4r..4r+3:
 * their low nibbles are columns 0 4 1 5 and their high nibbles columns 2 6 3 7 of the chunk. So the
 * nibbles are already grouped by row, as the relaxed dot sums: no shuffle. Flipping each nibble's
 * top bit makes the signed code s (-8..7) the unsigned u = s + 8 (0..15), which every engine reads
 * alike as the i7 operand, with the signed activation codes x the other:
 * sum s x = sum u x - 8 sum x, exact (a pair of products is at most 2 * 15 * 127, so an engine that
 * adds pairs in 16 bits first gives the same sums), with sum x per token and block computed once
 * for all rows and the codes laid out per chunk in the nibbles' column order (the engine does it).
 * Two relaxed dots per 16 weight bytes and token, against four i16 dots and seven shifts in
 * SIMD128; the block's integer sums equal the SIMD128 kernel's, and the f32 steps after them are
 * the same, so the outputs are bit-identical to it and to the scalar twin. */

static inline v128_t q4_unsigned(const uint8_t *q) { return wasm_v128_xor(wasm_v128_load(q), wasm_i8x16_splat((int8_t)0x88)); }
static inline v128_t q4_lo(v128_t u) { return wasm_v128_and(u, wasm_i8x16_splat(0x0F)); }
static inline v128_t q4_hi(v128_t u) { return wasm_v128_and(wasm_u16x8_shr(u, 4), wasm_i8x16_splat(0x0F)); }

/* Prefill: one 4-row group x NT (1..8) tokens, their codes tiled as tile_prefill_u8's (in the
 * nibbles' order; -8 times the block sums): a chunk's nibbles unpacked once for all of them. */
static inline __attribute__((always_inline)) void tile_q4(const uint8_t *w0, const int NT, size_t nb, const int8_t *x8,
                                                          const int32_t *sx, const float *xd, float *const ys[NTU]) {
    v128_t acc[NTU];
    for (int u = 0; u < NT; u++) acc[u] = wasm_f32x4_splat(0);
    for (size_t b = 0; b < nb; b++) {
        const int8_t *xb = x8 + b * 8 * QK; /* the block's codes, tiled: group m of slot u at 32m + 4u */
        v128_t is[NTU];
        for (int u = 0; u < NT; u++) is[u] = wasm_v128_load32_splat(sx + 8 * b + u);
        for (int i = 0; i < 4; i++) {
            const v128_t v = q4_unsigned(w0 + b * BSZ4 + 16 + 16 * i), lo = q4_lo(v), hi = q4_hi(v);
            for (int u = 0; u < NT; u++)
                is[u] = rdot(wasm_v128_load32_splat(xb + 64 * i + 32 + 4 * u), hi, rdot(wasm_v128_load32_splat(xb + 64 * i + 4 * u), lo, is[u]));
        }
        const v128_t d = wasm_v128_load(w0 + b * BSZ4);
        for (int u = 0; u < NT; u++)
            acc[u] = wasm_f32x4_add(acc[u], wasm_f32x4_mul(wasm_f32x4_convert_i32x4(is[u]), wasm_f32x4_mul(d, wasm_v128_load32_splat(xd + 8 * b + u))));
    }
    for (int u = 0; u < NT; u++) wasm_v128_store(ys[u], acc[u]);
}

/* Decode: one token x NG 4-row groups (weights at ws[k], results to ys[k][0..3]): four groups a
 * quarter of the matrix apart keep four weight streams in flight, as the SIMD128 decode tile. */
static inline __attribute__((always_inline)) void tile_q4_decode(const uint8_t *const ws[4], const int NG, size_t nb, const int8_t *x8,
                                                                 const int32_t *sx, const float *xd, float *const ys[4]) {
    v128_t acc[4];
    for (int k = 0; k < NG; k++) acc[k] = wasm_f32x4_splat(0);
    for (size_t b = 0; b < nb; b++) {
        /* two sums per group (low and high nibbles), so each chain of dependent dots is half as long */
        v128_t il[4], ih[4];
        const v128_t s = wasm_v128_load32_splat(sx + b); /* -8 sum x */
        for (int k = 0; k < NG; k++) { il[k] = s; ih[k] = wasm_i32x4_splat(0); }
        for (int i = 0; i < 4; i++) {
            const v128_t xl = wasm_v128_load32_splat(x8 + b * QK + 8 * i), xh = wasm_v128_load32_splat(x8 + b * QK + 8 * i + 4);
            for (int k = 0; k < NG; k++) {
                const v128_t v = q4_unsigned(ws[k] + b * BSZ4 + 16 + 16 * i);
                il[k] = rdot(xl, q4_lo(v), il[k]);
                ih[k] = rdot(xh, q4_hi(v), ih[k]);
            }
        }
        const v128_t xs = wasm_f32x4_splat(xd[b]);
        for (int k = 0; k < NG; k++)
            acc[k] = wasm_f32x4_add(acc[k], wasm_f32x4_mul(wasm_f32x4_convert_i32x4(wasm_i32x4_add(il[k], ih[k])), wasm_f32x4_mul(wasm_v128_load(ws[k] + b * BSZ4), xs)));
    }
    for (int k = 0; k < NG; k++) wasm_v128_store(ys[k], acc[k]);
}

/* One token (codes at x8 in the nibbles' order, -8 times the block sums and the scales at sx, xd), every row group
 * g < G: y0 + 4g. */
__attribute__((export_name("q4_0x4_i8a_decode"))) void q4_0x4_i8a_decode(const uint8_t *W, size_t G, size_t nb, const int8_t *x8, const int32_t *sx,
                                                                         const float *xd, float *y0) {
    const size_t q = G / 4;
    for (size_t g = 0; g < q; g++) {
        const uint8_t *ws[4];
        float *ys[4];
        for (int k = 0; k < 4; k++) { ws[k] = W + (g + k * q) * nb * BSZ4; ys[k] = y0 + (g + k * q) * 4; }
        tile_q4_decode(ws, 4, nb, x8, sx, xd, ys);
    }
    for (size_t g = 4 * q; g < G; g++) {
        const uint8_t *ws[4] = {W + g * nb * BSZ4};
        float *ys[4] = {y0 + g * 4};
        tile_q4_decode(ws, 1, nb, x8, sx, xd, ys);
    }
}

/* T tokens (as q8_0x4_i8a_u8_prefill, the codes tiled in the nibbles' order), row groups in blocks of rb. */
__attribute__((export_name("q4_0x4_i8a_prefill"))) void q4_0x4_i8a_prefill(const uint8_t *W, size_t G, size_t nb, size_t rows, int T, const int8_t *x8,
                                                                           const int32_t *sx, const float *xd, float *y0, size_t rb) {
    prefill_i8(1, W, G, nb, rows, T, x8, sx, xd, y0, rb);
}

static inline __attribute__((always_inline)) void tile_i8(const int q4, const uint8_t *w0, const int NT, size_t nb, const int8_t *x8,
                                                          const int32_t *sx, const float *xd, float *const ys[NTU]) {
    if (q4) tile_q4(w0, NT, nb, x8, sx, xd, ys);
    else tile_prefill_u8(w0, NT, nb, x8, sx, xd, ys);
}

#ifdef MS_TEST_EXPORTS
/* For bench/ only (build/wasm/mlpscope-relaxed-test.wasm): the multiply-accumulate peak of the u8
 * prefill tile's own instruction sequence, memory aside: per step one weight vector regrouped and
 * flipped (i8x16.shuffle, v128.xor) and eight token splats (v128.load32_splat), eight relaxed dots
 * into 8 independent sums, all operands from `buf` (at least 8 KB, so in L1): 128 MACs a step.
 * Returns a lane sum so nothing is skipped. */
__attribute__((export_name("bench_mac_peak_u8"))) int32_t bench_mac_peak_u8(const uint8_t *buf, int steps) {
    const uint8_t *w = buf;
    const int8_t *xb = (const int8_t *)buf + 4096;
    v128_t a[8];
    for (int u = 0; u < 8; u++) a[u] = wasm_i32x4_splat(0);
    for (int i = 0; i < steps; i++) {
        const v128_t wv = by_row_u8(w + (size_t)(i & 255) * 16);
        const int8_t *xp = xb + (size_t)(i & 127) * 32;
        for (int u = 0; u < 8; u++) a[u] = rdot(wasm_v128_load32_splat(xp + 4 * u), wv, a[u]);
    }
    v128_t t = wasm_i32x4_add(wasm_i32x4_add(wasm_i32x4_add(a[0], a[1]), wasm_i32x4_add(a[2], a[3])), wasm_i32x4_add(wasm_i32x4_add(a[4], a[5]), wasm_i32x4_add(a[6], a[7])));
    return wasm_i32x4_extract_lane(t, 0) + wasm_i32x4_extract_lane(t, 1) + wasm_i32x4_extract_lane(t, 2) + wasm_i32x4_extract_lane(t, 3);
}
#endif
#else
typedef int ms_no_relaxed_simd_here; /* ISO C forbids an empty translation unit */
#endif
