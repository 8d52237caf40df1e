#include "error.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdint.h>

int ms_fail(ms_err *err, int code, const char *fmt, ...) {
    if (err) {
        err->code = code;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return code;
}

void ms_err_clear(ms_err *err) {
    if (err) { err->code = MS_OK; err->msg[0] = 0; }
}

const char *ms_code_name(int code) {
    static const char *const names[MS_E__COUNT] = {
        "OK",
#define MS_X(id, what) "E_" #id,
        MS_ERROR_LIST(MS_X)
#undef MS_X
    };
    return (code >= 0 && code < MS_E__COUNT) ? names[code] : "E_UNKNOWN";
}

int ms_mul_size(size_t a, size_t b, size_t *out) {
    if (a != 0 && b > SIZE_MAX / a) return 0;
    *out = a * b;
    return 1;
}

int ms_add_size(size_t a, size_t b, size_t *out) {
    if (b > SIZE_MAX - a) return 0;
    *out = a + b;
    return 1;
}
