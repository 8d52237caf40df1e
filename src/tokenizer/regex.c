#include "regex.h"
#include "unicode.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Nodes form sequences linked by `next` (-1: the end of the sequence, where matching continues
 * with the enclosing group's continuation). A group or lookahead holds its alternatives as a run
 * of entries in `alts` (each the first node of a sequence, -1 for an empty one). */
enum { N_CHAR, N_CLASS, N_ANY, N_GROUP, N_LOOK, N_BOL, N_EOL };
enum { I_RANGE, I_GC, I_NOT_GC, I_WS, I_NOT_WS };

typedef struct { uint8_t type, neg, ci; int32_t min, max, next; uint32_t cp; int32_t first, count; } rnode;
typedef struct { uint8_t kind; uint32_t lo, hi; } ritem; /* I_GC: lo is a bit mask of categories */

struct ms_regex {
    rnode *nodes; int32_t n_nodes, cap_nodes;
    int32_t *alts; int32_t n_alts, cap_alts;
    ritem *items; int32_t n_items, cap_items;
    int32_t root; /* an N_GROUP holding the whole pattern */
};

/* ---- compiling ---- */
typedef struct { ms_regex *re; const char *p; size_t n, i; int ci, depth; ms_err *err; int failed; } parser;

static int fail_at(parser *ps, size_t at, const char *what) {
    if (!ps->failed) ms_fail(ps->err, MS_E_TOKEN, "regex: %s at offset %zu", what, at);
    ps->failed = 1;
    return -1;
}

#define GROW(arr, n, cap)                                                        \
    do {                                                                         \
        if ((n) == (cap)) {                                                      \
            int32_t c2 = (cap) ? 2 * (cap) : 32;                                 \
            void *np = realloc((arr), (size_t)c2 * sizeof *(arr));               \
            if (!np) return fail_at(ps, ps->i, "out of memory");                 \
            (arr) = np;                                                          \
            (cap) = c2;                                                          \
        }                                                                        \
    } while (0)

static int32_t new_node(parser *ps, int type) {
    ms_regex *re = ps->re;
    /* matching recurses at most once per node: this bounds the stack */
    if (re->n_nodes >= MS_REGEX_MAX_NODES) return fail_at(ps, ps->i, "a pattern of more than 4096 items");
    GROW(re->nodes, re->n_nodes, re->cap_nodes);
    rnode *nd = &re->nodes[re->n_nodes];
    memset(nd, 0, sizeof *nd);
    nd->type = (uint8_t)type; nd->min = nd->max = 1; nd->next = -1; nd->ci = (uint8_t)ps->ci;
    return re->n_nodes++;
}
static int add_item(parser *ps, int kind, uint32_t lo, uint32_t hi) {
    ms_regex *re = ps->re;
    GROW(re->items, re->n_items, re->cap_items);
    re->items[re->n_items++] = (ritem){(uint8_t)kind, lo, hi};
    return 0;
}

static uint32_t peek_cp(parser *ps, size_t *len) {
    uint32_t cp = 0;
    *len = ms_utf8_decode((const unsigned char *)ps->p + ps->i, ps->n - ps->i, &cp);
    if (!*len) { *len = 1; cp = 0xFFFD; }
    return cp;
}

/* \p{Name} / \pX: a mask of general categories, 0 if the name is unknown */
static uint32_t gc_mask(const char *s, size_t n) {
    static const char *const names[] = {
#define MS_X(c) #c,
        MS_GC_LIST(MS_X)
#undef MS_X
    };
    uint32_t m = 0;
    for (int k = 0; k < MS_GC__COUNT; k++)
        if ((n == 1 && names[k][0] == s[0]) || (n == 2 && !memcmp(names[k], s, 2))) m |= 1u << k;
    return m;
}

static int hexval(char c) {
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* An escape after '\' at ps->i. Either a code point (*cp, returns 1) or a class item added to
 * the item list (returns 2); -1 on error. */
static int escape(parser *ps, uint32_t *cp) {
    size_t at = ps->i - 1;
    if (ps->i >= ps->n) return fail_at(ps, at, "a trailing backslash");
    char c = ps->p[ps->i++];
    switch (c) {
    case 'r': *cp = '\r'; return 1;
    case 'n': *cp = '\n'; return 1;
    case 't': *cp = '\t'; return 1;
    case 'f': *cp = '\f'; return 1;
    case 'v': *cp = '\v'; return 1;
    case 's': return add_item(ps, I_WS, 0, 0) ? -1 : 2;
    case 'S': return add_item(ps, I_NOT_WS, 0, 0) ? -1 : 2;
    case 'p': case 'P': {
        const char *name = ps->p + ps->i;
        size_t len = 1;
        if (ps->i < ps->n && ps->p[ps->i] == '{') {
            const char *close = memchr(name, '}', ps->n - ps->i);
            if (!close) return fail_at(ps, at, "an unterminated \\p{");
            name++;
            len = (size_t)(close - name);
            ps->i += len + 2;
        } else if (ps->i < ps->n) ps->i++;
        else return fail_at(ps, at, "a truncated \\p");
        uint32_t m = len >= 1 && len <= 2 ? gc_mask(name, len) : 0;
        if (!m) return fail_at(ps, at, "an unsupported Unicode class (\\p{..} takes general categories such as L, Lu, N, P)");
        return add_item(ps, c == 'p' ? I_GC : I_NOT_GC, m, 0) ? -1 : 2;
    }
    case 'x': case 'u': {
        uint32_t v = 0;
        int digits = c == 'x' ? 2 : 4;
        if (c == 'x' && ps->i < ps->n && ps->p[ps->i] == '{') { ps->i++; digits = 8; }
        int k = 0;
        for (; k < digits && ps->i < ps->n && hexval(ps->p[ps->i]) >= 0; k++) v = v * 16 + (uint32_t)hexval(ps->p[ps->i++]);
        if (digits == 8) { if (ps->i >= ps->n || ps->p[ps->i] != '}') return fail_at(ps, at, "a bad \\x{..} escape"); ps->i++; }
        else if (k != digits) return fail_at(ps, at, "a bad hexadecimal escape");
        if (v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) return fail_at(ps, at, "an escape outside Unicode scalar values");
        *cp = v;
        return 1;
    }
    default:
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) {
            char what[64];
            snprintf(what, sizeof what, "an unsupported escape \\%c", c);
            return fail_at(ps, at, what);
        }
        if ((unsigned char)c >= 0x80) { ps->i--; size_t l; *cp = peek_cp(ps, &l); ps->i += l; return 1; }
        *cp = (uint32_t)(unsigned char)c; /* escaped punctuation stands for itself */
        return 1;
    }
}

/* [...] at ps->i (after '['): items from re->n_items on; returns the node */
static int32_t parse_class(parser *ps) {
    size_t at = ps->i - 1;
    int32_t nd = new_node(ps, N_CLASS);
    if (nd < 0) return -1;
    if (ps->i < ps->n && ps->p[ps->i] == '^') { ps->re->nodes[nd].neg = 1; ps->i++; }
    ps->re->nodes[nd].first = ps->re->n_items;
    int first = 1;
    for (;;) {
        if (ps->i >= ps->n) return fail_at(ps, at, "an unterminated character class");
        char c = ps->p[ps->i];
        if (c == ']' && !first) { ps->i++; break; }
        if (c == '[') return fail_at(ps, ps->i, "a nested class or POSIX bracket ([ inside [...])");
        if (c == '&' && ps->i + 1 < ps->n && ps->p[ps->i + 1] == '&') return fail_at(ps, ps->i, "a class intersection (&&)");
        first = 0;
        uint32_t lo;
        size_t l;
        if (c == '\\') {
            ps->i++;
            int r = escape(ps, &lo);
            if (r < 0) return -1;
            if (r == 2) continue;
        } else { lo = peek_cp(ps, &l); ps->i += l; }
        uint32_t hi = lo;
        if (ps->i + 1 < ps->n && ps->p[ps->i] == '-' && ps->p[ps->i + 1] != ']') {
            size_t dash = ps->i++;
            if (ps->p[ps->i] == '\\') {
                ps->i++;
                int r = escape(ps, &hi);
                if (r < 0) return -1;
                if (r == 2) return fail_at(ps, dash, "a range ending in a class escape");
            } else { hi = peek_cp(ps, &l); ps->i += l; }
            if (hi < lo) return fail_at(ps, dash, "a range out of order");
        }
        if (add_item(ps, I_RANGE, lo, hi)) return -1;
    }
    ps->re->nodes[nd].count = ps->re->n_items - ps->re->nodes[nd].first;
    return nd;
}

static int32_t parse_alts(parser *ps, int32_t group);

/* one atom and its quantifier; returns the node (-1 on error) */
static int32_t parse_atom(parser *ps) {
    size_t at = ps->i;
    char c = ps->p[ps->i];
    int32_t nd;
    if (c == '(') {
        ps->i++;
        int type = N_GROUP, neg = 0, saved_ci = ps->ci;
        if (ps->i < ps->n && ps->p[ps->i] == '?') {
            char k = ps->i + 1 < ps->n ? ps->p[ps->i + 1] : 0;
            if (k == ':') ps->i += 2;
            else if (k == '=' || k == '!') { type = N_LOOK; neg = k == '!'; ps->i += 2; }
            else if (k == 'i' && ps->i + 2 < ps->n && ps->p[ps->i + 2] == ':') { ps->ci = 1; ps->i += 3; }
            else return fail_at(ps, at, "an unsupported group kind (lookbehind, named group or inline flag)");
        }
        if (++ps->depth > 32) return fail_at(ps, at, "groups nested too deeply");
        nd = new_node(ps, type);
        if (nd < 0 || parse_alts(ps, nd) < 0) return -1;
        ps->depth--;
        ps->ci = saved_ci;
        if (ps->i >= ps->n || ps->p[ps->i] != ')') return fail_at(ps, at, "an unclosed group");
        ps->i++;
        ps->re->nodes[nd].neg = (uint8_t)neg;
    } else if (c == '[') {
        ps->i++;
        if ((nd = parse_class(ps)) < 0) return -1;
    } else if (c == '.') {
        ps->i++;
        if ((nd = new_node(ps, N_ANY)) < 0) return -1;
    } else if (c == '^' || c == '$') {
        ps->i++;
        if ((nd = new_node(ps, c == '^' ? N_BOL : N_EOL)) < 0) return -1;
    } else if (c == '*' || c == '+' || c == '?' || c == '{') {
        return fail_at(ps, at, "a quantifier with nothing to repeat");
    } else {
        uint32_t cp;
        size_t l;
        if (c == '\\') {
            ps->i++;
            int32_t before = ps->re->n_items;
            int r = escape(ps, &cp);
            if (r < 0) return -1;
            if (r == 2) { /* \s, \p{..}: a one-item class */
                if ((nd = new_node(ps, N_CLASS)) < 0) return -1;
                ps->re->nodes[nd].first = before;
                ps->re->nodes[nd].count = 1;
                goto quant;
            }
        } else { cp = peek_cp(ps, &l); ps->i += l; }
        if ((nd = new_node(ps, N_CHAR)) < 0) return -1;
        ps->re->nodes[nd].cp = cp;
    }
quant:
    if (ps->i >= ps->n) return nd;
    c = ps->p[ps->i];
    int32_t mn = 1, mx = 1;
    size_t qat = ps->i;
    if (c == '?') { mn = 0; ps->i++; }
    else if (c == '*') { mn = 0; mx = -1; ps->i++; }
    else if (c == '+') { mx = -1; ps->i++; }
    else if (c == '{') {
        size_t j = ps->i + 1;
        int64_t a = 0, b;
        int da = 0, db = 0;
        while (j < ps->n && ps->p[j] >= '0' && ps->p[j] <= '9' && a < 100000) { a = a * 10 + (ps->p[j++] - '0'); da++; }
        b = a;
        if (j < ps->n && ps->p[j] == ',') {
            j++;
            b = 0;
            while (j < ps->n && ps->p[j] >= '0' && ps->p[j] <= '9' && b < 100000) { b = b * 10 + (ps->p[j++] - '0'); db++; }
            if (!db) b = -1;
        } else db = 1;
        if (!da || j >= ps->n || ps->p[j] != '}' || (b >= 0 && b < a)) return fail_at(ps, qat, "a malformed {n,m} quantifier");
        mn = (int32_t)a; mx = (int32_t)b;
        ps->i = j + 1;
    } else return nd;
    if (ps->i < ps->n && (ps->p[ps->i] == '?' || ps->p[ps->i] == '+'))
        return fail_at(ps, ps->i, "a lazy or possessive quantifier");
    rnode *x = &ps->re->nodes[nd];
    if (x->type == N_LOOK || x->type == N_BOL || x->type == N_EOL) return fail_at(ps, qat, "a quantifier on a lookahead or anchor");
    if (x->type == N_GROUP && !(mx == 1 && mn <= 1)) return fail_at(ps, qat, "a repeated group (only ? may follow a group)");
    x->min = mn; x->max = mx;
    return nd;
}

/* alternatives up to ')' or the end, into group node g */
static int32_t parse_alts(parser *ps, int32_t g) {
    /* alternatives are collected on a local list first: nested groups append to alts meanwhile */
    int32_t heads[256], nh = 0;
    for (;;) {
        int32_t head = -1, last = -1;
        while (ps->i < ps->n && ps->p[ps->i] != '|' && ps->p[ps->i] != ')') {
            int32_t nd = parse_atom(ps);
            if (nd < 0) return -1;
            if (last >= 0) ps->re->nodes[last].next = nd; else head = nd;
            last = nd;
        }
        if (nh == 256) return fail_at(ps, ps->i, "more than 256 alternatives in one group");
        heads[nh++] = head;
        if (ps->i < ps->n && ps->p[ps->i] == '|') { ps->i++; continue; }
        break;
    }
    ms_regex *re = ps->re;
    re->nodes[g].first = re->n_alts;
    re->nodes[g].count = nh;
    for (int32_t k = 0; k < nh; k++) {
        GROW(re->alts, re->n_alts, re->cap_alts);
        re->alts[re->n_alts++] = heads[k];
    }
    return 0;
}

void ms_regex_free(ms_regex *re) {
    if (!re) return;
    free(re->nodes); free(re->alts); free(re->items);
    free(re);
}

ms_regex *ms_regex_compile(const char *pat, size_t n, ms_err *err) {
    ms_regex *re = calloc(1, sizeof *re);
    if (!re) { ms_fail(err, MS_E_MEMORY, "regex: out of memory"); return NULL; }
    parser ps = {re, pat, n, 0, 0, 0, err, 0};
    if (!ms_utf8_valid(pat, n)) { ms_fail(err, MS_E_TOKEN, "regex: the pattern is not UTF-8"); ms_regex_free(re); return NULL; }
    re->root = new_node(&ps, N_GROUP);
    if (re->root < 0 || parse_alts(&ps, re->root) < 0) { ms_regex_free(re); return NULL; }
    if (ps.i < n) { fail_at(&ps, ps.i, "an unmatched ')'"); ms_regex_free(re); return NULL; }
    return re;
}

/* ---- matching ---- */
typedef struct kont { int32_t node; const struct kont *up; } kont;
typedef struct { const ms_regex *re; const unsigned char *s; size_t n, end; uint64_t steps, limit; } mctx;

/* case folding for (?i: ): ASCII, plus the two non-ASCII code points whose simple case folding
 * is an ASCII letter (U+017F long s -> s, U+212A Kelvin sign -> k), as Oniguruma folds them */
static uint32_t fold(uint32_t c) {
    if (c >= 'A' && c <= 'Z') return c + 32;
    if (c == 0x17F) return 's';
    if (c == 0x212A) return 'k';
    return c;
}

static int class_has(const ms_regex *re, const rnode *nd, uint32_t c) {
    int hit = 0;
    for (int32_t k = 0; k < nd->count && !hit; k++) {
        const ritem *it = &re->items[nd->first + k];
        switch (it->kind) {
        case I_RANGE: hit = (c >= it->lo && c <= it->hi) || (nd->ci && fold(c) >= it->lo && fold(c) <= it->hi) ||
                            (nd->ci && c >= 'a' && c <= 'z' && c - 32 >= it->lo && c - 32 <= it->hi); break;
        case I_GC: hit = (it->lo >> ms_uni_gc_of(c)) & 1; break;
        case I_NOT_GC: hit = !((it->lo >> ms_uni_gc_of(c)) & 1); break;
        case I_WS: hit = (ms_uni_flags(c) & MS_UNI_WS) != 0; break;
        default: hit = !(ms_uni_flags(c) & MS_UNI_WS); break;
        }
    }
    return hit != nd->neg;
}

/* does the single-character node nd match at byte i? returns the character's length or 0 */
static size_t one(const mctx *x, const rnode *nd, size_t i) {
    if (i >= x->n) return 0;
    uint32_t c;
    size_t l = ms_utf8_decode(x->s + i, x->n - i, &c);
    if (!l) return 0;
    switch (nd->type) {
    case N_CHAR: return c == nd->cp || (nd->ci && fold(c) == fold(nd->cp)) ? l : 0;
    case N_CLASS: return class_has(x->re, nd, c) ? l : 0;
    default: return c != '\n' ? l : 0; /* N_ANY */
    }
}

static int m(mctx *x, int32_t node, size_t pos, const kont *k) {
    for (;;) {
        if (++x->steps > x->limit) return 0; /* search reports it */
        if (node < 0) {
            if (!k) { x->end = pos; return 1; }
            node = k->node;
            k = k->up;
            continue;
        }
        const rnode *nd = &x->re->nodes[node];
        switch (nd->type) {
        case N_BOL: if (pos != 0) return 0; node = nd->next; continue;
        case N_EOL: if (pos != x->n) return 0; node = nd->next; continue;
        case N_LOOK: {
            int hit = 0;
            for (int32_t a = 0; a < nd->count && !hit; a++) hit = m(x, x->re->alts[nd->first + a], pos, NULL);
            if (hit == nd->neg) return 0;
            node = nd->next;
            continue;
        }
        case N_GROUP: {
            kont k2 = {nd->next, k};
            for (int32_t a = 0; a < nd->count; a++)
                if (m(x, x->re->alts[nd->first + a], pos, &k2)) return 1;
            if (nd->min > 0) return 0;
            node = nd->next;
            continue;
        }
        default: break;
        }
        /* a character item: take the longest run, then give back one character at a time */
        if (nd->min == 1 && nd->max == 1) {
            size_t l = one(x, nd, pos);
            if (!l) return 0;
            pos += l;
            node = nd->next;
            continue;
        }
        size_t j = pos, l;
        int64_t cnt = 0;
        while ((nd->max < 0 || cnt < nd->max) && (l = one(x, nd, j))) { j += l; cnt++; }
        if (cnt < nd->min) return 0;
        if (nd->next < 0 && !k) { x->end = j; return 1; } /* nothing follows: the longest run wins */
        for (;;) {
            if (m(x, nd->next, j, k)) return 1;
            if (cnt == nd->min || x->steps > x->limit) return 0;
            do j--; while (j > pos && (x->s[j] & 0xC0) == 0x80);
            cnt--;
        }
    }
}

int ms_regex_search(const ms_regex *re, const char *s, size_t n, size_t from, size_t *ms, size_t *me) {
    /* a budget of backtracking steps: patterns of real tokenizers take a few per character; one
     * that backtracks exponentially ends in -1 instead of running for ever */
    mctx x = {re, (const unsigned char *)s, n, 0, 0, 1000000 + 256 * (uint64_t)(n - from)};
    for (size_t i = from; i <= n;) {
        if (m(&x, re->root, i, NULL)) { *ms = i; *me = x.end; return 1; }
        if (x.steps > x.limit) return -1;
        if (i == n) break;
        i++;
        while (i < n && (x.s[i] & 0xC0) == 0x80) i++;
    }
    return 0;
}
