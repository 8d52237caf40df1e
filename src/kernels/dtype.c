#include "dtype.h"
#include "quant.h"
#include <string.h>

static const struct { const char *name, *short_name; int in_files; } table[MS_DTYPE__COUNT] = {
#define MS_X(id, name, short_name, in_files) {name, short_name, in_files},
    MS_DTYPE_LIST(MS_X)
#undef MS_X
};

const char *ms_dtype_name(int dt) { return (dt >= 0 && dt < MS_DTYPE__COUNT) ? table[dt].name : "?"; }
const char *ms_dtype_short_name(int dt) { return (dt >= 0 && dt < MS_DTYPE__COUNT) ? table[dt].short_name : NULL; }
int ms_dtype_in_files(int dt) { return dt >= 0 && dt < MS_DTYPE__COUNT && table[dt].in_files; }

int ms_dtype_from_name(const char *s) {
    for (int i = 0; i < MS_DTYPE__COUNT; i++) /* runtime layouts are not file dtypes */
        if (s && table[i].in_files && strcmp(s, table[i].name) == 0) return i;
    return -1;
}

size_t ms_dtype_bytes(int dt, size_t rows, size_t cols) {
    size_t per_row;
    switch (dt) {
    case MS_F32: per_row = cols * 4; if (cols > SIZE_MAX / 4) return 0; break;
    case MS_F16:
    case MS_BF16: per_row = cols * 2; if (cols > SIZE_MAX / 2) return 0; break;
    case MS_Q8_0:
    case MS_Q8_0X4:
        if (cols % MS_QK) return 0;
        per_row = cols / MS_QK * sizeof(ms_block_q8_0); break;
    case MS_Q4_0:
    case MS_Q4_0X4:
        if (cols % MS_QK) return 0;
        per_row = cols / MS_QK * sizeof(ms_block_q4_0); break;
    default: return 0;
    }
    if (rows && per_row > SIZE_MAX / rows) return 0;
    return per_row * rows;
}
