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
 * Per block of 32 columns: the 4 scales, then the codes of column pairs: 8 bytes per pair of
 * columns (c, c+1), r0c r0c+1 r1c r1c+1 r2c r2c+1 r3c r3c+1, pair after pair. Widened to 16 bits,
 * such 8 bytes are one i16x8 vector whose dot product with a token's codes (c, c+1) gives the four
 * rows' partial sums at once; a 4-row matvec reads one sequential stream. Same size as 4 q8_0 rows. */
typedef struct {
    float d[4];
    int8_t q[4 * MS_QK];
} ms_block_q8_0x4; /* 144 bytes */

/* q4_0x4: four q4_0 rows interleaved for the int8-activation kernels. Per block of 32 columns: the
 * 4 scales, then 4 chunks of 16 bytes, chunk i for columns 8i .. 8i+7. A chunk read as eight
 * 16-bit lanes holds in lane 2r+k the columns 8i+k, +2, +4, +6 of row r in its four nibbles (lowest
 * first), so nibble j of every lane is the same pair layout as q8_0x4's for columns 8i+2j, +1.
 * Unlike q4_0 the nibbles are signed (two's complement, value = code - 8), so SIMD code can
 * sign-extend them with 16-bit shifts (or, xor-ed with 0x88 per byte, read them back as q4_0's
 * unsigned codes, value + 8). Same size as 4 q4_0 rows. */
typedef struct {
    float d[4];
    uint8_t q[4 * MS_QK / 2];
} ms_block_q4_0x4; /* 80 bytes */

/* Where row r (0..3), column c (0..31) of an interleaved block lives: its byte in q (q4: the
 * nibble too, 0 low, 1 high). The repack and every reader go through these. */
static inline int ms_q8x4_at(int r, int c) { return 8 * (c >> 1) + 2 * r + (c & 1); }
static inline int ms_q4x4_at(int r, int c) { return 16 * (c >> 3) + 4 * r + 2 * (c & 1) + ((c >> 2) & 1); }
static inline int ms_q4x4_nibble(int c) { return (c >> 1) & 1; }
/* The code of row r, column c of an interleaved block. */
static inline int ms_q8x4_code(const ms_block_q8_0x4 *b, int r, int c) { return b->q[ms_q8x4_at(r, c)]; }
static inline int ms_q4x4_code(const ms_block_q4_0x4 *b, int r, int c) {
    const int byte = b->q[ms_q4x4_at(r, c)];
    return ((ms_q4x4_nibble(c) ? byte >> 4 : byte & 15) ^ 8) - 8;
}
_Static_assert(sizeof(ms_block_q8_0x4) == 4 * sizeof(ms_block_q8_0), "q8_0x4 is 4 q8_0 blocks");
_Static_assert(sizeof(ms_block_q4_0x4) == 4 * sizeof(ms_block_q4_0), "q4_0x4 is 4 q4_0 blocks");

/* rows % 4 == 0; convert in place (tmp: the bytes of 4 rows in the source layout). Returns SIZE_MAX,
 * or the index (row * blocks per row + block) of the first block whose scale is not finite: then
 * the rows from that one's group of 4 on are left in the source layout. */
size_t ms_repack_q8_0x4(void *data, size_t rows, size_t n, void *tmp);
size_t ms_repack_q4_0x4(void *data, size_t rows, size_t n, void *tmp);
void ms_dequantize_row_q8_0x4(const ms_block_q8_0x4 *x, size_t row, float *y, size_t n);
void ms_dequantize_row_q4_0x4(const ms_block_q4_0x4 *x, size_t row, float *y, size_t n);
/* activations quantized per block of 32 for the int8 dot: codes and one scale per block */
void ms_quantize_act_q8(const float *x, int8_t *q, float *d, size_t n);
/* activations split into two 16-bit codes per value for the exact integer kernels: per block of
 * 32, x = hi * dh + lo * dl + e with dh = max|x| / 32767, dl = dh / 32768 and |e| <= dl / 2, i.e.
 * within 2^-31 of the block's largest value: finer than f32's own rounding of the dot product.
 * Codes fit |hi| <= 32767, |lo| <= 16385. A block with a value that is not finite gets NaN scales. */
void ms_quantize_act_i16x2(const float *x, int16_t *hi, int16_t *lo, float *dh, float *dl, size_t n);

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
