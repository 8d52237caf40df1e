#include "platform.h"
#ifdef __wasm__
/* Provided by the JS glue (performance.now()). */
extern double ms_host_now_ms(void) __attribute__((import_module("env"), import_name("ms_now_ms")));
double ms_now_ms(void) { return ms_host_now_ms(); }
#else
#include <time.h>
double ms_now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}
#endif
