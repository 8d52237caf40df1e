/* Unicode for the tokenizers: UTF-8, general-category tests (L, M, N), White_Space, and NFC.
 * Tables are generated (unicode_tables.c, by tools/gen-unicode-tables.mjs). */
#ifndef MS_UNICODE_H
#define MS_UNICODE_H
#include <stddef.h>
#include <stdint.h>

enum { MS_UNI_L = 1, MS_UNI_M = 2, MS_UNI_N = 4, MS_UNI_WS = 8 };
/* Category flags of a code point. */
int ms_uni_flags(uint32_t cp);
/* Decodes one UTF-8 sequence at s (n bytes available); returns its length (1-4) and the code
 * point, or 0 for an invalid sequence (overlong, surrogate, > U+10FFFF, truncated). */
size_t ms_utf8_decode(const unsigned char *s, size_t n, uint32_t *cp);
size_t ms_utf8_encode(uint32_t cp, unsigned char out[4]);
/* 1 if s is valid UTF-8 */
int ms_utf8_valid(const char *s, size_t n);
/* NFC of valid UTF-8 text: returns a malloc'd string (*out_len bytes) or NULL on allocation
 * failure. */
char *ms_nfc(const char *s, size_t n, size_t *out_len);

/* generated tables */
extern const uint32_t ms_uni_L[][2], ms_uni_M[][2], ms_uni_N[][2], ms_uni_WS[][2];
extern const int ms_uni_L_n, ms_uni_M_n, ms_uni_N_n, ms_uni_WS_n;
extern const uint32_t ms_uni_ccc[][3], ms_uni_decomp[][3], ms_uni_comp[][3];
extern const int ms_uni_ccc_n, ms_uni_decomp_n, ms_uni_comp_n;
#endif
