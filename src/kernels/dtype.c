#include "dtype.h"
#include "quant.h"
#include <string.h>

static const char *const names[MS_DTYPE__COUNT] = {"f32", "f16", "bf16", "q8_0", "q4_0", "q8_0x4", "q4_0x4"};

const char *ms_dtype_name(int dt) { return (dt >= 0 && dt < MS_DTYPE__COUNT) ? names[dt] : "?"; }

int ms_dtype_from_name(const char *s) {
    for (int i = 0; i < MS_Q8_0X4; i++) /* runtime layouts are not file dtypes */
        if (s && strcmp(s, names[i]) == 0) return i;
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
