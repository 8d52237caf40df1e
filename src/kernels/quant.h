/* Block-quantized weight layouts (docs/format.md). Blocks run along a row's input dimension:
 * each block of MS_QK consecutive values has one float scale d and integer codes q with
 * value = d * q. Kept in one header so the performance work can change layouts in one place. */
#ifndef MS_QUANT_H
#define MS_QUANT_H
#include <stddef.h>
#include <stdint.h>

#define MS_QK 32

typedef struct {
    float d;          /* scale */
    int8_t q[MS_QK];  /* codes in [-127, 127] */
} ms_block_q8_0;      /* 36 bytes */

typedef struct {
    float d;              /* scale */
    uint8_t q[MS_QK / 2]; /* value j: low nibble of q[j%16] for j<16, high nibble for j>=16,
                             stored as unsigned 0..15 meaning code-8 in [-8, 7] */
} ms_block_q4_0;          /* 20 bytes */

/* q8_0x4: four q8_0 rows interleaved for SIMD, built at load time (the file keeps plain q8_0).
 * Per block of 32 columns: the 4 scales, then the codes in 16-byte chunks in the order
 * r0[0..16) r1[0..16) r2[0..16) r3[0..16) r0[16..32) r1[16..32) r2[16..32) r3[16..32),
 * so a 4-row matvec reads one sequential stream. Same size as 4 q8_0 rows. */
typedef struct {
    float d[4];
    int8_t q[4 * MS_QK];
} ms_block_q8_0x4; /* 144 bytes */

/* q4_0x4: four q4_0 rows interleaved the same way, for the int8-activation kernels. Per block of
 * 32 columns: the 4 scales, then each row's 16 code bytes (nibble positions as in q4_0: byte j
 * holds column j low, column j + 16 high), row after row. Unlike q4_0 the nibbles are signed
 * (two's complement, value = code - 8), so SIMD code can sign-extend them with 16-bit shifts.
 * Same size as 4 q4_0 rows. */
typedef struct {
    float d[4];
    uint8_t q[4 * MS_QK / 2];
} ms_block_q4_0x4; /* 80 bytes */
/* the two weights of a q4_0x4 code byte (signed nibbles): column j (low nibble) and j + 16 (high) */
static inline int ms_q4x4_low(uint8_t b) { return ((b & 15) ^ 8) - 8; }
static inline int ms_q4x4_high(uint8_t b) { return ((b >> 4) ^ 8) - 8; }
_Static_assert(sizeof(ms_block_q8_0x4) == 4 * sizeof(ms_block_q8_0), "q8_0x4 is 4 q8_0 blocks");
_Static_assert(sizeof(ms_block_q4_0x4) == 4 * sizeof(ms_block_q4_0), "q4_0x4 is 4 q4_0 blocks");

/* rows % 4 == 0; convert in place (tmp: the bytes of 4 rows in the source layout) */
void ms_repack_q8_0x4(void *data, size_t rows, size_t n, void *tmp);
void ms_repack_q4_0x4(void *data, size_t rows, size_t n, void *tmp);
void ms_dequantize_row_q8_0x4(const ms_block_q8_0x4 *x, size_t row, float *y, size_t n);
void ms_dequantize_row_q4_0x4(const ms_block_q4_0x4 *x, size_t row, float *y, size_t n);
/* activations quantized per block of 32 for the int8 dot: codes and one scale per block */
void ms_quantize_act_q8(const float *x, int8_t *q, float *d, size_t n);

/* Quantize / dequantize one row of n values (n % MS_QK == 0). */
void ms_quantize_row_q8_0(const float *x, ms_block_q8_0 *y, size_t n);
void ms_quantize_row_q4_0(const float *x, ms_block_q4_0 *y, size_t n);
void ms_dequantize_row_q8_0(const ms_block_q8_0 *x, float *y, size_t n);
void ms_dequantize_row_q4_0(const ms_block_q4_0 *x, float *y, size_t n);

/* Half-precision conversions (round to nearest even). */
float ms_f16_to_f32(uint16_t h);
uint16_t ms_f32_to_f16(float f);
float ms_bf16_to_f32(uint16_t h);
uint16_t ms_f32_to_bf16(float f);
#endif
