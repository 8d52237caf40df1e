/* Element types of weight tensors and their byte sizes. The block layouts of the quantized
 * types live in quant.h; this header only says how many bytes a row of n values takes. */
#ifndef MS_DTYPE_H
#define MS_DTYPE_H
#include <stddef.h>
#include <stdint.h>

/* X(ID, name, short name or NULL, in files): one row per type, in code order. The engine lists
 * them (engine info "dtypes"); the short names are what the loader's `dtype` option and the CLI's
 * --dtype accept besides the full ones. The x4 types are runtime layouts only (quant.h: q8_0 / q4_0
 * repacked 4 rows at a time), never in files. */
#define MS_DTYPE_LIST(X)                  \
    X(F32, "f32", "f32", 1)               \
    X(F16, "f16", "f16", 1)               \
    X(BF16, "bf16", "bf16", 1)            \
    X(Q8_0, "q8_0", "q8", 1)              \
    X(Q4_0, "q4_0", "q4", 1)              \
    X(Q8_0X4, "q8_0x4", NULL, 0)          \
    X(Q4_0X4, "q4_0x4", NULL, 0)

typedef enum {
#define MS_X(id, name, short_name, in_files) MS_##id,
    MS_DTYPE_LIST(MS_X)
#undef MS_X
    MS_DTYPE__COUNT
} ms_dtype;

const char *ms_dtype_name(int dt);
int ms_dtype_from_name(const char *s); /* a type of files by its full name; -1 if unknown */
const char *ms_dtype_short_name(int dt); /* "q8", ...; NULL for the runtime layouts */
int ms_dtype_in_files(int dt);
/* Bytes for `rows` rows of `cols` values; 0 if the shape is impossible for the type
 * (e.g. block types need cols % 32 == 0) or on overflow. */
size_t ms_dtype_bytes(int dt, size_t rows, size_t cols);
#endif
