#include "unicode.h"
#include <stdlib.h>
#include <string.h>

static int in_ranges(const uint32_t (*r)[2], int n, uint32_t cp) {
    int lo = 0, hi = n - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (cp < r[mid][0]) hi = mid - 1;
        else if (cp > r[mid][1]) lo = mid + 1;
        else return 1;
    }
    return 0;
}

int ms_uni_flags(uint32_t cp) {
    if (cp < 0x80) {
        if ((cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z')) return MS_UNI_L;
        if (cp >= '0' && cp <= '9') return MS_UNI_N;
        if (cp == ' ' || (cp >= 9 && cp <= 13)) return MS_UNI_WS;
        return 0;
    }
    int f = 0;
    if (in_ranges(ms_uni_L, ms_uni_L_n, cp)) f |= MS_UNI_L;
    else if (in_ranges(ms_uni_M, ms_uni_M_n, cp)) f |= MS_UNI_M;
    else if (in_ranges(ms_uni_N, ms_uni_N_n, cp)) f |= MS_UNI_N;
    if (in_ranges(ms_uni_WS, ms_uni_WS_n, cp)) f |= MS_UNI_WS;
    return f;
}

int ms_uni_gc_of(uint32_t cp) {
    int lo = 0, hi = ms_uni_gc_n - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (cp < ms_uni_gc[mid][0]) hi = mid - 1;
        else if (cp > ms_uni_gc[mid][1]) lo = mid + 1;
        else return (int)ms_uni_gc[mid][2];
    }
    return MS_GC_Cn;
}

size_t ms_utf8_decode(const unsigned char *s, size_t n, uint32_t *cp) {
    if (!n) return 0;
    unsigned c = s[0];
    if (c < 0x80) { *cp = c; return 1; }
    size_t len;
    uint32_t v;
    if ((c & 0xE0) == 0xC0) { len = 2; v = c & 0x1F; }
    else if ((c & 0xF0) == 0xE0) { len = 3; v = c & 0x0F; }
    else if ((c & 0xF8) == 0xF0) { len = 4; v = c & 0x07; }
    else return 0;
    if (n < len) return 0;
    for (size_t k = 1; k < len; k++) {
        if ((s[k] & 0xC0) != 0x80) return 0;
        v = (v << 6) | (s[k] & 0x3F);
    }
    if ((len == 2 && v < 0x80) || (len == 3 && v < 0x800) || (len == 4 && (v < 0x10000 || v > 0x10FFFF)) || (v >= 0xD800 && v <= 0xDFFF))
        return 0;
    *cp = v;
    return len;
}

size_t ms_utf8_encode(uint32_t cp, unsigned char o[4]) {
    if (cp < 0x80) { o[0] = (unsigned char)cp; return 1; }
    if (cp < 0x800) { o[0] = (unsigned char)(0xC0 | (cp >> 6)); o[1] = (unsigned char)(0x80 | (cp & 63)); return 2; }
    if (cp < 0x10000) { o[0] = (unsigned char)(0xE0 | (cp >> 12)); o[1] = (unsigned char)(0x80 | ((cp >> 6) & 63)); o[2] = (unsigned char)(0x80 | (cp & 63)); return 3; }
    o[0] = (unsigned char)(0xF0 | (cp >> 18)); o[1] = (unsigned char)(0x80 | ((cp >> 12) & 63));
    o[2] = (unsigned char)(0x80 | ((cp >> 6) & 63)); o[3] = (unsigned char)(0x80 | (cp & 63));
    return 4;
}

int ms_utf8_valid(const char *s, size_t n) {
    size_t i = 0;
    uint32_t cp;
    while (i < n) {
        size_t l = ms_utf8_decode((const unsigned char *)s + i, n - i, &cp);
        if (!l) return 0;
        i += l;
    }
    return 1;
}

/* ---- NFC ---- */
enum { SBase = 0xAC00, LBase = 0x1100, VBase = 0x1161, TBase = 0x11A7, LCount = 19, VCount = 21, TCount = 28,
       NCount = VCount * TCount, SCount = LCount * NCount };

static int ccc_of(uint32_t cp) {
    if (cp < 0x300) return 0;
    int lo = 0, hi = ms_uni_ccc_n - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (cp < ms_uni_ccc[mid][0]) hi = mid - 1;
        else if (cp > ms_uni_ccc[mid][1]) lo = mid + 1;
        else return (int)ms_uni_ccc[mid][2];
    }
    return 0;
}

static const uint32_t *decomp_of(uint32_t cp) {
    int lo = 0, hi = ms_uni_decomp_n - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (cp < ms_uni_decomp[mid][0]) hi = mid - 1;
        else if (cp > ms_uni_decomp[mid][0]) lo = mid + 1;
        else return ms_uni_decomp[mid];
    }
    return NULL;
}

static uint32_t compose(uint32_t a, uint32_t b) {
    if (a >= LBase && a < LBase + LCount && b >= VBase && b < VBase + VCount)
        return SBase + ((a - LBase) * VCount + (b - VBase)) * TCount;
    if (a >= SBase && a < SBase + SCount && (a - SBase) % TCount == 0 && b > TBase && b < TBase + TCount)
        return a + (b - TBase);
    int lo = 0, hi = ms_uni_comp_n - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        const uint32_t *e = ms_uni_comp[mid];
        if (a < e[0] || (a == e[0] && b < e[1])) hi = mid - 1;
        else if (a > e[0] || b > e[1]) lo = mid + 1;
        else return e[2];
    }
    return 0;
}

typedef struct { uint32_t *v; size_t n, cap; int oom; } cpbuf;
static void push(cpbuf *b, uint32_t cp) {
    if (b->oom) return;
    if (b->n == b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 64;
        uint32_t *nv = realloc(b->v, cap * sizeof *nv);
        if (!nv) { b->oom = 1; return; }
        b->v = nv;
        b->cap = cap;
    }
    b->v[b->n++] = cp;
}

static void decompose(cpbuf *b, uint32_t cp, int depth) {
    if (cp >= SBase && cp < SBase + SCount) {
        uint32_t s = cp - SBase;
        push(b, LBase + s / NCount);
        push(b, VBase + (s % NCount) / TCount);
        if (s % TCount) push(b, TBase + s % TCount);
        return;
    }
    const uint32_t *d = depth < 8 ? decomp_of(cp) : NULL;
    if (!d) { push(b, cp); return; }
    decompose(b, d[1], depth + 1);
    if (d[2]) decompose(b, d[2], depth + 1);
}

char *ms_nfc(const char *s, size_t n, size_t *out_len) {
    int simple = 1;
    for (size_t i = 0; i < n && simple; i++) simple = (unsigned char)s[i] < 0xCC; /* all code points < U+0300 */
    if (simple) {
        char *o = malloc(n + 1);
        if (!o) return NULL;
        memcpy(o, s, n);
        o[n] = 0;
        *out_len = n;
        return o;
    }
    cpbuf b = {0};
    size_t i = 0;
    while (i < n) {
        uint32_t cp;
        size_t l = ms_utf8_decode((const unsigned char *)s + i, n - i, &cp);
        if (!l) { cp = 0xFFFD; l = 1; }
        decompose(&b, cp, 0);
        i += l;
    }
    if (b.oom) { free(b.v); return NULL; }
    /* canonical ordering: stable insertion sort of each run of non-starters by class */
    for (size_t k = 1; k < b.n; k++) {
        int c = ccc_of(b.v[k]);
        if (!c) continue;
        size_t j = k;
        while (j > 0 && ccc_of(b.v[j - 1]) > c) { uint32_t t = b.v[j]; b.v[j] = b.v[j - 1]; b.v[j - 1] = t; j--; }
    }
    /* canonical composition: a character composes with the last starter unless blocked, i.e.
     * unless something was kept in between whose class is 0 or >= its own (the kept marks are
     * in canonical order, so the last one has the largest class) */
    size_t out = 0, starter = (size_t)-1;
    int last_ccc = 0;
    for (size_t k = 0; k < b.n; k++) {
        uint32_t cp = b.v[k];
        int c = ccc_of(cp);
        if (starter != (size_t)-1 && (out == starter + 1 || last_ccc < c)) {
            uint32_t comp = compose(b.v[starter], cp);
            if (comp) { b.v[starter] = comp; continue; }
        }
        if (c == 0) starter = out;
        last_ccc = c;
        b.v[out++] = cp;
    }
    char *o = malloc(out * 4 + 1);
    if (!o) { free(b.v); return NULL; }
    size_t on = 0;
    for (size_t k = 0; k < out; k++) on += ms_utf8_encode(b.v[k], (unsigned char *)o + on);
    o[on] = 0;
    free(b.v);
    *out_len = on;
    return o;
}
