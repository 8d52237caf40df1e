#ifdef __wasm_simd128__
#include <wasm_simd128.h>
#endif
#include "quant.h"
#include <math.h>
#include <string.h>
#include <stdint.h>

void ms_quantize_row_q8_0(const float *x, ms_block_q8_0 *y, size_t n) {
    for (size_t b = 0; b < n / MS_QK; b++) {
        const float *xb = x + b * MS_QK;
        float amax = 0;
        for (int j = 0; j < MS_QK; j++) { float a = fabsf(xb[j]); if (a > amax) amax = a; }
        float d = amax / 127.0f, id = d > 0 ? 1.0f / d : 0.0f;
        y[b].d = d;
        for (int j = 0; j < MS_QK; j++) y[b].q[j] = (int8_t)lrintf(xb[j] * id);
    }
}

void ms_dequantize_row_q8_0(const ms_block_q8_0 *x, float *y, size_t n) {
    for (size_t b = 0; b < n / MS_QK; b++)
        for (int j = 0; j < MS_QK; j++) y[b * MS_QK + j] = x[b].d * (float)x[b].q[j];
}

void ms_quantize_row_q4_0(const float *x, ms_block_q4_0 *y, size_t n) {
    for (size_t b = 0; b < n / MS_QK; b++) {
        const float *xb = x + b * MS_QK;
        float amax = 0, max = 0;
        for (int j = 0; j < MS_QK; j++) { float a = fabsf(xb[j]); if (a > amax) { amax = a; max = xb[j]; } }
        float d = max / -8.0f, id = d != 0 ? 1.0f / d : 0.0f;
        y[b].d = d;
        for (int j = 0; j < MS_QK / 2; j++) {
            int lo = (int)lrintf(xb[j] * id), hi = (int)lrintf(xb[j + MS_QK / 2] * id);
            lo = lo < -8 ? -8 : lo > 7 ? 7 : lo;
            hi = hi < -8 ? -8 : hi > 7 ? 7 : hi;
            y[b].q[j] = (uint8_t)((lo + 8) | ((hi + 8) << 4));
        }
    }
}

void ms_dequantize_row_q4_0(const ms_block_q4_0 *x, float *y, size_t n) {
    for (size_t b = 0; b < n / MS_QK; b++)
        for (int j = 0; j < MS_QK / 2; j++) {
            y[b * MS_QK + j] = x[b].d * (float)((x[b].q[j] & 15) - 8);
            y[b * MS_QK + j + MS_QK / 2] = x[b].d * (float)((x[b].q[j] >> 4) - 8);
        }
}

float ms_f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h >> 15) << 31, exp = (h >> 10) & 31, man = h & 1023, bits;
    if (exp == 0) {
        if (man == 0) bits = sign;
        else { /* subnormal */
            float f = ldexpf((float)man, -24);
            return sign ? -f : f;
        }
    } else if (exp == 31) bits = sign | 0x7F800000u | (man << 13);
    else bits = sign | ((exp + 112) << 23) | (man << 13);
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

uint16_t ms_f32_to_f16(float f) {
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000;
    float a = fabsf(f);
    if (isnan(f)) return (uint16_t)(sign | 0x7E00);
    if (a >= 65520.0f) return (uint16_t)(sign | 0x7C00);
    if (a < 6.103515625e-05f) { /* subnormal half: round to a multiple of 2^-24 */
        uint32_t m = (uint32_t)lrintf(a * 16777216.0f);
        return (uint16_t)(sign | m);
    }
    uint32_t ax = x & 0x7FFFFFFF;
    uint32_t r = ax + 0x0FFF + ((ax >> 13) & 1); /* round to nearest even at bit 13 */
    return (uint16_t)(sign | (((r >> 23) - 112) << 10) | ((r >> 13) & 1023));
}

float ms_bf16_to_f32(uint16_t h) {
    uint32_t bits = (uint32_t)h << 16;
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

uint16_t ms_f32_to_bf16(float f) {
    uint32_t x;
    memcpy(&x, &f, 4);
    if (isnan(f)) return (uint16_t)((x >> 16) | 0x40);
    x += 0x7FFF + ((x >> 16) & 1);
    return (uint16_t)(x >> 16);
}

/* Block b of the four rows src[0..3] (plain layout) written as one interleaved block (quant.h). */
static void put_q8_0x4(void *dst, const unsigned char *const src[4]) {
    ms_block_q8_0x4 *d = dst;
    const ms_block_q8_0 *q[4];
    for (int r = 0; r < 4; r++) { q[r] = (const ms_block_q8_0 *)src[r]; d->d[r] = q[r]->d; }
#ifdef __wasm_simd128__
    /* a 4 x 16 transposition of 16-bit column pairs: rows a, b, c, d interleaved pair by pair */
    for (int h = 0; h < 2; h++) {
        const v128_t a = wasm_v128_load(q[0]->q + 16 * h), b = wasm_v128_load(q[1]->q + 16 * h);
        const v128_t c = wasm_v128_load(q[2]->q + 16 * h), e = wasm_v128_load(q[3]->q + 16 * h);
        const v128_t ab0 = wasm_i16x8_shuffle(a, b, 0, 8, 1, 9, 2, 10, 3, 11), ce0 = wasm_i16x8_shuffle(c, e, 0, 8, 1, 9, 2, 10, 3, 11);
        const v128_t ab1 = wasm_i16x8_shuffle(a, b, 4, 12, 5, 13, 6, 14, 7, 15), ce1 = wasm_i16x8_shuffle(c, e, 4, 12, 5, 13, 6, 14, 7, 15);
        int8_t *o = d->q + 64 * h;
        wasm_v128_store(o, wasm_i32x4_shuffle(ab0, ce0, 0, 4, 1, 5));
        wasm_v128_store(o + 16, wasm_i32x4_shuffle(ab0, ce0, 2, 6, 3, 7));
        wasm_v128_store(o + 32, wasm_i32x4_shuffle(ab1, ce1, 0, 4, 1, 5));
        wasm_v128_store(o + 48, wasm_i32x4_shuffle(ab1, ce1, 2, 6, 3, 7));
    }
#else
    for (int r = 0; r < 4; r++)
        for (int c = 0; c < MS_QK; c++) d->q[ms_q8x4_at(r, c)] = q[r]->q[c];
#endif
}

static void put_q4_0x4(void *dst, const unsigned char *const src[4]) {
    ms_block_q4_0x4 *d = dst;
    for (int r = 0; r < 4; r++) {
        const ms_block_q4_0 *q = (const ms_block_q4_0 *)src[r];
        d->d[r] = q->d;
        /* q4_0: column j < 16 is the low nibble of q[j], else the high one of q[j - 16]. Each byte
         * is written whole: column c + k (c = 8i + 4h, k = 0, 1) low, c + k + 2 high. */
        for (int c = 0; c < MS_QK; c += 4)
            for (int k = 0; k < 2; k++) {
                const int lo = c + k, hi = lo + 2;
                const int nlo = lo < 16 ? q->q[lo] & 15 : q->q[lo - 16] >> 4, nhi = hi < 16 ? q->q[hi] & 15 : q->q[hi - 16] >> 4;
                d->q[ms_q4x4_at(r, lo)] = (uint8_t)((nlo | nhi << 4) ^ 0x88); /* code - 8 as signed nibbles */
            }
    }
}

/* In place, four rows at a time: the 4 rows are copied to tmp, then written back interleaved.
 * The interleaved block of 4 rows has the size of 4 plain blocks, so rows stay where they were.
 * The scales are checked while the rows are in tmp (both plain layouts begin with a float scale). */
static size_t repack_x4(void *data, size_t rows, size_t n, void *tmp, size_t bsz, void (*put)(void *, const unsigned char *const[4])) {
    const size_t nb = n / MS_QK;
    for (size_t r0 = 0; r0 < rows; r0 += 4) {
        unsigned char *rowsp = (unsigned char *)data + r0 * nb * bsz;
        memcpy(tmp, rowsp, 4 * nb * bsz);
        for (size_t k = 0; k < 4 * nb; k++) {
            float d;
            memcpy(&d, (const unsigned char *)tmp + k * bsz, sizeof d);
            if (!isfinite(d)) return r0 * nb + k; /* rows from r0 on are left as they were */
        }
        for (size_t b = 0; b < nb; b++) {
            const unsigned char *src[4];
            for (int r = 0; r < 4; r++) src[r] = (const unsigned char *)tmp + ((size_t)r * nb + b) * bsz;
            put(rowsp + 4 * b * bsz, src);
        }
    }
    return SIZE_MAX;
}

size_t ms_repack_q8_0x4(void *data, size_t rows, size_t n, void *tmp) { return repack_x4(data, rows, n, tmp, sizeof(ms_block_q8_0), put_q8_0x4); }
size_t ms_repack_q4_0x4(void *data, size_t rows, size_t n, void *tmp) { return repack_x4(data, rows, n, tmp, sizeof(ms_block_q4_0), put_q4_0x4); }

void ms_dequantize_row_q4_0x4(const ms_block_q4_0x4 *x, size_t row, float *y, size_t n) {
    const size_t nb = n / MS_QK, g = row / 4;
    const int r = (int)(row % 4);
    for (size_t b = 0; b < nb; b++)
        for (int c = 0; c < MS_QK; c++) y[b * MS_QK + c] = x[g * nb + b].d[r] * (float)ms_q4x4_code(&x[g * nb + b], r, c);
}

void ms_dequantize_row_q8_0x4(const ms_block_q8_0x4 *x, size_t row, float *y, size_t n) {
    const size_t nb = n / MS_QK, g = row / 4;
    const int r = (int)(row % 4);
    for (size_t b = 0; b < nb; b++)
        for (int c = 0; c < MS_QK; c++) y[b * MS_QK + c] = x[g * nb + b].d[r] * (float)ms_q8x4_code(&x[g * nb + b], r, c);
}

void ms_quantize_act_i16x2(const float *x, int16_t *hi, int16_t *lo, float *dh, float *dl, size_t n) {
    for (size_t b = 0; b < n / MS_QK; b++) {
        const float *xb = x + b * MS_QK;
        float amax = 0;
        int finite = 1;
        for (int j = 0; j < MS_QK; j++) { float a = fabsf(xb[j]); finite &= isfinite(a); if (a > amax) amax = a; }
        const float h = amax / 32767.0f, l = h / 32768.0f;
        dh[b] = finite ? h : NAN;
        dl[b] = finite ? l : NAN;
        for (int j = 0; j < MS_QK; j++) {
            int16_t qh = 0, ql = 0;
            if (finite && h > 0) {
                /* in double: x / h and the remainder x - qh * h are exact enough that lo is the
                 * rounded remainder in units of l */
                const double v = (double)xb[j] / (double)h, r = nearbyint(v);
                qh = (int16_t)(r > 32767 ? 32767 : r < -32767 ? -32767 : r);
                if (l > 0) { /* (l underflows to 0 only for blocks below 2^-111: then hi alone) */
                    const double rl = nearbyint(((double)xb[j] - (double)qh * (double)h) / (double)l);
                    ql = (int16_t)(rl > 32767 ? 32767 : rl < -32767 ? -32767 : rl);
                }
            }
            hi[b * MS_QK + j] = qh;
            lo[b * MS_QK + j] = ql;
        }
    }
}

void ms_quantize_act_q8(const float *x, int8_t *q, float *d, size_t n) {
    for (size_t b = 0; b < n / MS_QK; b++) {
        const float *xb = x + b * MS_QK;
        float amax = 0;
        for (int j = 0; j < MS_QK; j++) { float a = fabsf(xb[j]); if (a > amax) amax = a; }
        float s = amax / 127.0f, is = s > 0 ? 1.0f / s : 0.0f;
        d[b] = s;
        for (int j = 0; j < MS_QK; j++) q[b * MS_QK + j] = (int8_t)lrintf(xb[j] * is);
    }
}
