/* SHA-256 (FIPS 180-4), streaming. Used to verify shards as they are written into the heap. */
#ifndef MS_SHA256_H
#define MS_SHA256_H
#include <stddef.h>
#include <stdint.h>
typedef struct {
    uint32_t h[8];
    uint64_t len;
    uint8_t buf[64];
    size_t nbuf;
} ms_sha256;
void ms_sha256_init(ms_sha256 *s);
void ms_sha256_update(ms_sha256 *s, const void *data, size_t n);
void ms_sha256_final(ms_sha256 *s, uint8_t out[32]);
void ms_sha256_hex(const uint8_t d[32], char out[65]);
/* a hasher of its own (malloc'd; NULL when out of memory), and its digest as 64 hex digits */
ms_sha256 *ms_sha256_new(void);
void ms_sha256_final_hex(ms_sha256 *s, char hex[65]);
/* the digest of n bytes as 64 hex digits, in one call */
void ms_sha256_of(const void *data, size_t n, char hex[65]);
#endif
