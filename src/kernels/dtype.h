/* Element types of weight tensors and their byte sizes. The block layouts of the quantized
 * types live in quant.h; this header only says how many bytes a row of n values takes. */
#ifndef MS_DTYPE_H
#define MS_DTYPE_H
#include <stddef.h>
#include <stdint.h>

typedef enum { MS_F32 = 0, MS_F16, MS_BF16, MS_Q8_0, MS_Q4_0,
               MS_Q8_0X4, /* runtime only: q8_0 repacked 4 rows at a time (quant.h); never in files */
               MS_Q4_0X4, /* runtime only: q4_0 repacked the same way */
               MS_DTYPE__COUNT } ms_dtype;

const char *ms_dtype_name(int dt);
int ms_dtype_from_name(const char *s); /* -1 if unknown */
/* Bytes for `rows` rows of `cols` values; 0 if the shape is impossible for the type
 * (e.g. block types need cols % 32 == 0) or on overflow. */
size_t ms_dtype_bytes(int dt, size_t rows, size_t cols);
#endif
