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

/* General categories, in the order of the generated table (unicode_gc.c); Cn (unassigned) last */
#define MS_GC_LIST(X) X(Lu) X(Ll) X(Lt) X(Lm) X(Lo) X(Mn) X(Mc) X(Me) X(Nd) X(Nl) X(No) X(Pc) X(Pd) X(Ps) X(Pe) \
    X(Pi) X(Pf) X(Po) X(Sm) X(Sc) X(Sk) X(So) X(Zs) X(Zl) X(Zp) X(Cc) X(Cf) X(Cs) X(Co) X(Cn)
enum {
#define MS_X(c) MS_GC_##c,
    MS_GC_LIST(MS_X)
#undef MS_X
    MS_GC__COUNT
};
/* The general category of a code point (MS_GC_*), from unicode_gc.c */
int ms_uni_gc_of(uint32_t cp);

/* generated tables */
extern const uint32_t ms_uni_gc[][3];
extern const int ms_uni_gc_n;
extern const char ms_uni_gc_version[];
extern const uint32_t ms_uni_L[][2], ms_uni_M[][2], ms_uni_N[][2], ms_uni_WS[][2];
extern const int ms_uni_L_n, ms_uni_M_n, ms_uni_N_n, ms_uni_WS_n;
extern const uint32_t ms_uni_ccc[][3], ms_uni_decomp[][3], ms_uni_comp[][3];
extern const int ms_uni_ccc_n, ms_uni_decomp_n, ms_uni_comp_n;
#endif
