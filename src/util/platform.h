/* The one thing the engine asks of its host: a monotonic clock (for per-layer timings). */
#ifndef MS_PLATFORM_H
#define MS_PLATFORM_H
double ms_now_ms(void);
#endif
