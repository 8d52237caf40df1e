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
#endif
