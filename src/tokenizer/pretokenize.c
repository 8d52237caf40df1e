#include "pretokenize.h"
#include "unicode.h"
#include <stdint.h>

typedef struct { const unsigned char *s; size_t n; } text;

/* code point at byte i: returns its length (0 at the end) */
static size_t at(const text *t, size_t i, uint32_t *cp) {
    if (i >= t->n) return 0;
    size_t l = ms_utf8_decode(t->s + i, t->n - i, cp);
    if (!l) { *cp = 0xFFFD; l = 1; } /* callers pass valid UTF-8; stay safe anyway */
    return l;
}

static int is_ws(uint32_t cp) { return (ms_uni_flags(cp) & MS_UNI_WS) != 0; }

/* byte length of the run of code points satisfying pred starting at i (max count: limit) */
static size_t run(const text *t, size_t i, int (*pred)(uint32_t, int), int kind, int limit) {
    size_t j = i;
    uint32_t cp;
    size_t l;
    int count = 0;
    while (count < limit && (l = at(t, j, &cp)) && pred(cp, kind)) { j += l; count++; }
    return j - i;
}

static int letter(uint32_t cp, int kind) {
    int f = ms_uni_flags(cp);
    return (f & MS_UNI_L) || (kind == MS_PRE_QWEN35 && (f & MS_UNI_M));
}
static int number(uint32_t cp, int kind) { (void)kind; return (ms_uni_flags(cp) & MS_UNI_N) != 0; }
/* [^\s\p{L}\p{N}] (Qwen3.5: also not \p{M}) */
static int punct(uint32_t cp, int kind) {
    int f = ms_uni_flags(cp);
    if (f & (MS_UNI_WS | MS_UNI_L | MS_UNI_N)) return 0;
    return !(kind == MS_PRE_QWEN35 && (f & MS_UNI_M));
}
static int newline(uint32_t cp, int kind) { (void)kind; return cp == '\r' || cp == '\n'; }
static int space(uint32_t cp, int kind) { (void)kind; return is_ws(cp); }

static int lower_is(uint32_t cp, char c) {
    if (cp < 128) return (cp | 0x20) == (uint32_t)c;
    return c == 's' && cp == 0x17F; /* ſ folds to s */
}

static size_t contraction(const text *t, size_t i, int ci) {
    if (i >= t->n || t->s[i] != '\'') return 0;
    uint32_t a = 0, b = 0;
    size_t la = at(t, i + 1, &a);
    size_t lb = la ? at(t, i + 1 + la, &b) : 0;
    if (!la) return 0;
    static const char *const alts[] = {"s", "t", "re", "ve", "m", "ll", "d"};
    for (int k = 0; k < 7; k++) {
        const char *w = alts[k];
        if (ci) {
            if (!lower_is(a, w[0])) continue;
            if (w[1] && !(lb && lower_is(b, w[1]))) continue;
        } else {
            if (a != (uint32_t)w[0]) continue;
            if (w[1] && !(lb && b == (uint32_t)w[1])) continue;
        }
        return 1 + la + (w[1] ? lb : 0);
    }
    return 0;
}

/* \s+ run from i; *last_len = byte length of its last code point */
static size_t ws_run(const text *t, size_t i, size_t *last_len, size_t *last_nl_end) {
    size_t j = i, l;
    uint32_t cp;
    *last_len = 0;
    *last_nl_end = 0;
    while ((l = at(t, j, &cp)) && is_ws(cp)) {
        j += l;
        *last_len = l;
        if (cp == '\r' || cp == '\n') *last_nl_end = j;
    }
    return j - i;
}

size_t ms_pretok_next(int kind, const char *s, size_t n, size_t i) {
    text t = {(const unsigned char *)s, n};
    uint32_t c0 = 0, c1 = 0;
    size_t l0 = at(&t, i, &c0), l1 = l0 ? at(&t, i + l0, &c1) : 0, m;
    if (!l0) return 0;
    const int gpt2 = kind == MS_PRE_GPT2;
    if ((m = contraction(&t, i, !gpt2))) return m;
    if (gpt2) {
        /* ' ?\p{L}+', ' ?\p{N}+', ' ?[^\s\p{L}\p{N}]+' */
        int (*preds[3])(uint32_t, int) = {letter, number, punct};
        for (int k = 0; k < 3; k++) {
            if (c0 == ' ' && l1 && preds[k](c1, kind)) return 1 + run(&t, i + 1, preds[k], kind, 1 << 30);
            if (preds[k](c0, kind)) return run(&t, i, preds[k], kind, 1 << 30);
        }
    } else {
        /* [^\r\n\p{L}\p{N}]?\p{L}+  (Qwen3.5: [\p{L}\p{M}]+) */
        int f0 = ms_uni_flags(c0);
        int prefix = c0 != '\r' && c0 != '\n' && !(f0 & (MS_UNI_L | MS_UNI_N));
        if (prefix && l1 && letter(c1, kind)) return l0 + run(&t, i + l0, letter, kind, 1 << 30);
        if (letter(c0, kind)) return run(&t, i, letter, kind, 1 << 30);
        /* \p{N}  (Llama-3: \p{N}{1,3}) */
        if (number(c0, kind)) return run(&t, i, number, kind, kind == MS_PRE_LLAMA3 ? 3 : 1);
        /*  ?[^\s\p{L}\p{N}]+[\r\n]* */
        if (c0 == ' ' && l1 && punct(c1, kind)) {
            size_t r = 1 + run(&t, i + 1, punct, kind, 1 << 30);
            return r + run(&t, i + r, newline, kind, 1 << 30);
        }
        if (punct(c0, kind)) {
            size_t r = run(&t, i, punct, kind, 1 << 30);
            return r + run(&t, i + r, newline, kind, 1 << 30);
        }
    }
    if (is_ws(c0)) {
        size_t last_len, nl_end, w = ws_run(&t, i, &last_len, &nl_end);
        if (!gpt2 && nl_end) return nl_end - i;            /* \s*[\r\n]+ */
        if (i + w == n) return w;                           /* \s+(?!\S) at the end */
        if (w > last_len) return w - last_len;              /* \s+(?!\S): leave the last one */
        return w;                                           /* \s+ */
    }
    (void)space;
    return l0; /* not reached for valid input */
}
