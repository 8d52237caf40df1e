/* Small SIMD128 helpers shared by the kernel families of this folder. */
#ifndef MS_SIMD128_COMMON_H
#define MS_SIMD128_COMMON_H
#include <wasm_simd128.h>

/* the four lanes' sum, paired as (0 + 1) + (2 + 3) */
static inline float hsum(v128_t v) {
    return (wasm_f32x4_extract_lane(v, 0) + wasm_f32x4_extract_lane(v, 1)) +
           (wasm_f32x4_extract_lane(v, 2) + wasm_f32x4_extract_lane(v, 3));
}
#endif
