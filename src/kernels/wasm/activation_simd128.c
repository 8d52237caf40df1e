/* SIMD128 activations, four lanes at a time with a polynomial e^x (scalar twin in generic/, which
 * uses libm's expf; tests/kernels.test.js holds them to each other and to float64). */
#ifdef __wasm_simd128__
#include <wasm_simd128.h>
#include "../kernels.h"

/* e^x: x = n ln2 + r with n = round(x / ln2), |r| <= ln2 / 2; e^r by a polynomial of degree 7
 * (1 + r + r^2 p(r), Cephes' expf coefficients), 2^n built in the exponent bits. Rounding uses
 * the 1.5 * 2^23 trick: after adding it, n sits in the low mantissa bits. x is clamped to
 * [-87, 88] so 2^n stays a normal float; a NaN stays NaN (pmin / pmax keep their first operand
 * when the comparison fails). The kernel test finds silu within 1.6 ulp of float64. */
static inline v128_t exp_f32x4(v128_t x) {
    const v128_t magic = wasm_f32x4_splat(12582912.0f);
    x = wasm_f32x4_pmax(wasm_f32x4_pmin(x, wasm_f32x4_splat(88.0f)), wasm_f32x4_splat(-87.0f));
    const v128_t t = wasm_f32x4_add(wasm_f32x4_mul(x, wasm_f32x4_splat(1.44269504088896341f)), magic);
    const v128_t n = wasm_f32x4_sub(t, magic);
    /* ln 2 in two parts: n * 0.693359375 is exact for |n| <= 128 */
    v128_t r = wasm_f32x4_sub(x, wasm_f32x4_mul(n, wasm_f32x4_splat(0.693359375f)));
    r = wasm_f32x4_sub(r, wasm_f32x4_mul(n, wasm_f32x4_splat(-2.12194440e-4f)));
    v128_t p = wasm_f32x4_splat(1.9875691500e-4f);
    p = wasm_f32x4_add(wasm_f32x4_mul(p, r), wasm_f32x4_splat(1.3981999507e-3f));
    p = wasm_f32x4_add(wasm_f32x4_mul(p, r), wasm_f32x4_splat(8.3334519073e-3f));
    p = wasm_f32x4_add(wasm_f32x4_mul(p, r), wasm_f32x4_splat(4.1665795894e-2f));
    p = wasm_f32x4_add(wasm_f32x4_mul(p, r), wasm_f32x4_splat(1.6666665459e-1f));
    p = wasm_f32x4_add(wasm_f32x4_mul(p, r), wasm_f32x4_splat(5.0000001201e-1f));
    p = wasm_f32x4_add(wasm_f32x4_mul(p, wasm_f32x4_mul(r, r)), wasm_f32x4_add(r, wasm_f32x4_splat(1.0f)));
    const v128_t e = wasm_i32x4_shl(wasm_i32x4_sub(t, wasm_i32x4_splat(0x4B400000 - 127)), 23);
    return wasm_f32x4_mul(p, e);
}

static inline v128_t silu_f32x4(v128_t g) {
    return wasm_f32x4_div(g, wasm_f32x4_add(wasm_f32x4_splat(1.0f), exp_f32x4(wasm_f32x4_neg(g))));
}

/* y = silu(g) * u (u may be NULL). The tail goes through the same vector code from a padded copy,
 * so every element gets the same arithmetic wherever a caller's range starts or ends. */
void ms_silu_mul_f32_simd128(float *y, const float *g, const float *u, size_t n) {
    size_t i = 0;
    if (u) {
        for (; i + 8 <= n; i += 8) {
            const v128_t a = silu_f32x4(wasm_v128_load(g + i)), b = silu_f32x4(wasm_v128_load(g + i + 4));
            wasm_v128_store(y + i, wasm_f32x4_mul(a, wasm_v128_load(u + i)));
            wasm_v128_store(y + i + 4, wasm_f32x4_mul(b, wasm_v128_load(u + i + 4)));
        }
        for (; i + 4 <= n; i += 4) wasm_v128_store(y + i, wasm_f32x4_mul(silu_f32x4(wasm_v128_load(g + i)), wasm_v128_load(u + i)));
    } else {
        for (; i + 4 <= n; i += 4) wasm_v128_store(y + i, silu_f32x4(wasm_v128_load(g + i)));
    }
    if (i < n) {
        float tg[4] = {0, 0, 0, 0}, tu[4] = {1, 1, 1, 1}, ty[4];
        for (size_t k = i; k < n; k++) { tg[k - i] = g[k]; if (u) tu[k - i] = u[k]; }
        wasm_v128_store(ty, wasm_f32x4_mul(silu_f32x4(wasm_v128_load(tg)), wasm_v128_load(tu)));
        for (size_t k = i; k < n; k++) y[k] = ty[k - i];
    }
}

static inline v128_t gelu_tanh_f32x4(v128_t x) {
    const v128_t x3 = wasm_f32x4_mul(wasm_f32x4_mul(x, x), x);
    const v128_t z2 = wasm_f32x4_mul(wasm_f32x4_splat(1.5957691216f), wasm_f32x4_add(x, wasm_f32x4_mul(wasm_f32x4_splat(0.044715f), x3)));
    return wasm_f32x4_div(x, wasm_f32x4_add(wasm_f32x4_splat(1.0f), exp_f32x4(wasm_f32x4_neg(z2))));
}

/* y = gelu(g) * u, the tanh GELU as x / (1 + e^(-2z)) (kernels.h); the tail as in silu_mul. */
void ms_gelu_tanh_mul_f32_simd128(float *y, const float *g, const float *u, size_t n) {
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        const v128_t a = gelu_tanh_f32x4(wasm_v128_load(g + i));
        wasm_v128_store(y + i, u ? wasm_f32x4_mul(a, wasm_v128_load(u + i)) : a);
    }
    if (i < n) {
        float tg[4] = {0, 0, 0, 0}, tu[4] = {1, 1, 1, 1}, ty[4];
        for (size_t k = i; k < n; k++) { tg[k - i] = g[k]; if (u) tu[k - i] = u[k]; }
        wasm_v128_store(ty, wasm_f32x4_mul(gelu_tanh_f32x4(wasm_v128_load(tg)), wasm_v128_load(tu)));
        for (size_t k = i; k < n; k++) y[k] = ty[k - i];
    }
}

/* e^((x - shift) * scale) for four lanes; a term below e^-87 (where exp_f32x4 clamps) counts as
 * 0, as expf would give (nearly) 0 there too. */
static inline v128_t exp_term_f32x4(v128_t x, v128_t shift, v128_t scale) {
    const v128_t a = wasm_f32x4_mul(wasm_f32x4_sub(x, shift), scale);
    return wasm_v128_andnot(exp_f32x4(a), wasm_f32x4_lt(a, wasm_f32x4_splat(-87.0f)));
}

/* e^((x - shift) * scale), stored when y is given, and their sum: four float lanes, moved into a
 * double every 256 elements so a long sum (a 248k vocabulary) keeps double accuracy; the tail
 * from a zero-padded copy (its extra lanes are not added). */
double ms_exp_sum_f32_simd128(float *y, const float *x, size_t n, float shift, float scale) {
    const v128_t sh = wasm_f32x4_splat(shift), sc = wasm_f32x4_splat(scale);
    double z = 0;
    size_t i = 0;
    while (i + 8 <= n) {
        v128_t a0 = wasm_f32x4_splat(0), a1 = a0;
        const size_t end = i + 256 <= n ? i + 256 : n - (n - i) % 8;
        for (; i < end; i += 8) {
            const v128_t e0 = exp_term_f32x4(wasm_v128_load(x + i), sh, sc), e1 = exp_term_f32x4(wasm_v128_load(x + i + 4), sh, sc);
            if (y) { wasm_v128_store(y + i, e0); wasm_v128_store(y + i + 4, e1); }
            a0 = wasm_f32x4_add(a0, e0);
            a1 = wasm_f32x4_add(a1, e1);
        }
        const v128_t s = wasm_f32x4_add(a0, a1);
        z += (double)wasm_f32x4_extract_lane(s, 0) + wasm_f32x4_extract_lane(s, 1) + wasm_f32x4_extract_lane(s, 2) +
             wasm_f32x4_extract_lane(s, 3);
    }
    for (; i < n; i += 4) {
        float t[4] = {0, 0, 0, 0}, e[4];
        const size_t k = n - i < 4 ? n - i : 4;
        for (size_t j = 0; j < k; j++) t[j] = x[i + j];
        wasm_v128_store(e, exp_term_f32x4(wasm_v128_load(t), sh, sc));
        for (size_t j = 0; j < k; j++) { if (y) y[i + j] = e[j]; z += e[j]; }
    }
    return z;
}
double ms_sumsq_f32_simd128(const float *x, size_t n) {
    v128_t a[4] = {wasm_f32x4_splat(0), wasm_f32x4_splat(0), wasm_f32x4_splat(0), wasm_f32x4_splat(0)};
    size_t i = 0;
    for (; i + 16 <= n; i += 16)
        for (int k = 0; k < 4; k++) { const v128_t v = wasm_v128_load(x + i + 4 * k); a[k] = wasm_f32x4_add(a[k], wasm_f32x4_mul(v, v)); }
    float lanes[16];
    for (int k = 0; k < 4; k++) wasm_v128_store(lanes + 4 * k, a[k]);
    double s = 0;
    for (int k = 0; k < 16; k++) s += lanes[k];
    for (; i < n; i++) s += (double)x[i] * x[i];
    return s;
}
#endif
