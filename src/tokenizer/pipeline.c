#include "pipeline.h"
#include "unicode.h"
#include <stdlib.h>
#include <string.h>

static int type_is(const ms_json *j, int32_t n, const char *type) {
    const char *t = ms_json_str(j, ms_json_get(j, n, "type"));
    return t && !strcmp(t, type);
}
static const char *type_of(const ms_json *j, int32_t n) {
    const char *t = ms_json_str(j, ms_json_get(j, n, "type"));
    return t ? t : "(no type)";
}
static int absent(const ms_json *j, int32_t n) { return n < 0 || j->nodes[n].type == MS_JNULL; }

static char *dup(const char *s, size_t n) {
    char *d = malloc(n + 1);
    if (d) { memcpy(d, s, n); d[n] = 0; }
    return d;
}

/* {"String": s} as a literal; Regex patterns are refused here (where only literals are handled) */
static int string_pattern(const ms_json *j, int32_t n, const char *where, char **out, size_t *len, ms_err *err) {
    int32_t pat = ms_json_get(j, n, "pattern");
    int32_t sn = ms_json_get(j, pat, "String");
    const char *s = ms_json_str(j, sn);
    if (!s || !*s) return ms_fail(err, MS_E_TOKEN, "tokenizer.json: %s: only a non-empty String pattern is supported", where);
    *len = (size_t)j->nodes[sn].len;
    if (!(*out = dup(s, *len))) return ms_fail(err, MS_E_MEMORY, "tokenizer: out of memory");
    return MS_OK;
}

static int add_norm(ms_pipeline *p, const ms_json *j, int32_t n, ms_err *err) {
    if (p->n_norm == MS_PIPE_MAX) return ms_fail(err, MS_E_TOKEN, "tokenizer.json: more than %d normalizers", MS_PIPE_MAX);
    ms_norm_op *op = &p->norm[p->n_norm];
    if (type_is(j, n, "NFC")) op->kind = MS_NORM_NFC;
    else if (type_is(j, n, "Prepend")) {
        int32_t s = ms_json_get(j, n, "prepend");
        if (!ms_json_str(j, s)) return ms_fail(err, MS_E_TOKEN, "tokenizer.json: normalizer Prepend has no \"prepend\" string");
        op->kind = MS_NORM_PREPEND;
        op->la = (size_t)j->nodes[s].len;
        if (!(op->a = dup(ms_json_str(j, s), op->la))) return ms_fail(err, MS_E_MEMORY, "tokenizer: out of memory");
    } else if (type_is(j, n, "Replace")) {
        op->kind = MS_NORM_REPLACE;
        if (string_pattern(j, n, "normalizer Replace", &op->a, &op->la, err)) return MS_E_TOKEN;
        int32_t c = ms_json_get(j, n, "content");
        if (!ms_json_str(j, c)) return ms_fail(err, MS_E_TOKEN, "tokenizer.json: normalizer Replace has no \"content\"");
        op->lb = (size_t)j->nodes[c].len;
        if (!(op->b = dup(ms_json_str(j, c), op->lb))) return ms_fail(err, MS_E_MEMORY, "tokenizer: out of memory");
    } else return ms_fail(err, MS_E_TOKEN, "tokenizer.json: normalizer \"%s\" is not supported (NFC, Prepend, Replace, Sequence)", type_of(j, n));
    p->n_norm++;
    return MS_OK;
}

static int split_behavior(const char *b) {
    if (!b) return 0;
    if (!strcmp(b, "Removed")) return MS_SPLIT_REMOVED;
    if (!strcmp(b, "Isolated")) return MS_SPLIT_ISOLATED;
    if (!strcmp(b, "MergedWithPrevious")) return MS_SPLIT_MERGED_PREV;
    if (!strcmp(b, "MergedWithNext")) return MS_SPLIT_MERGED_NEXT;
    if (!strcmp(b, "Contiguous")) return MS_SPLIT_CONTIGUOUS;
    return 0;
}

static int add_pre(ms_pipeline *p, const ms_json *j, int32_t n, int last, ms_err *err) {
    if (p->byte_level) return ms_fail(err, MS_E_TOKEN, "tokenizer.json: pre-tokenizer \"%s\" after ByteLevel is not supported", type_of(j, n));
    if (type_is(j, n, "ByteLevel")) {
        int use_regex = 1, prefix = 0;
        ms_json_bool(j, ms_json_get(j, n, "use_regex"), &use_regex);
        ms_json_bool(j, ms_json_get(j, n, "add_prefix_space"), &prefix);
        if (!last) return ms_fail(err, MS_E_TOKEN, "tokenizer.json: pre-tokenizer ByteLevel must come last");
        if (prefix) return ms_fail(err, MS_E_TOKEN, "tokenizer.json: pre-tokenizer ByteLevel.add_prefix_space is not supported");
        if (use_regex) return ms_fail(err, MS_E_TOKEN, "tokenizer.json: pre-tokenizer ByteLevel with use_regex is only supported alone");
        p->byte_level = 1;
        return MS_OK;
    }
    if (p->n_pre == MS_PIPE_MAX) return ms_fail(err, MS_E_TOKEN, "tokenizer.json: more than %d pre-tokenizers", MS_PIPE_MAX);
    ms_pre_op *op = &p->pre[p->n_pre];
    if (type_is(j, n, "Split")) {
        op->kind = MS_PT_SPLIT;
        op->behavior = split_behavior(ms_json_str(j, ms_json_get(j, n, "behavior")));
        if (!op->behavior) return ms_fail(err, MS_E_TOKEN, "tokenizer.json: pre-tokenizer Split has an unknown behavior");
        ms_json_bool(j, ms_json_get(j, n, "invert"), &op->invert);
        int32_t pat = ms_json_get(j, n, "pattern"), rx = ms_json_get(j, pat, "Regex");
        if (ms_json_str(j, rx)) {
            ms_err e2 = {0};
            if (!(op->re = ms_regex_compile(ms_json_str(j, rx), (size_t)j->nodes[rx].len, &e2)))
                return ms_fail(err, e2.code, "tokenizer.json: pre-tokenizer Split pattern: %s", e2.msg);
        } else if (string_pattern(j, n, "pre-tokenizer Split", &op->lit, &op->llen, err)) return MS_E_TOKEN;
    } else if (type_is(j, n, "Metaspace")) {
        if (p->n_pre) return ms_fail(err, MS_E_TOKEN, "tokenizer.json: pre-tokenizer Metaspace must come first");
        op->kind = MS_PT_METASPACE;
        const char *r = ms_json_str(j, ms_json_get(j, n, "replacement"));
        if (!r || !*r || strlen(r) > 4) return ms_fail(err, MS_E_TOKEN, "tokenizer.json: pre-tokenizer Metaspace needs a one-character replacement");
        op->rlen = strlen(r);
        memcpy(op->rep, r, op->rlen);
        const char *sch = ms_json_str(j, ms_json_get(j, n, "prepend_scheme"));
        int prefix = 1;
        if (ms_json_bool(j, ms_json_get(j, n, "add_prefix_space"), &prefix) && !sch) sch = prefix ? "always" : "never";
        if (!sch) sch = "always";
        op->prepend = !strcmp(sch, "always") ? MS_PREPEND_ALWAYS : !strcmp(sch, "first") ? MS_PREPEND_FIRST : !strcmp(sch, "never") ? MS_PREPEND_NEVER : 0;
        if (!op->prepend) return ms_fail(err, MS_E_TOKEN, "tokenizer.json: Metaspace.prepend_scheme \"%s\" is unknown", sch);
        op->split = 1;
        ms_json_bool(j, ms_json_get(j, n, "split"), &op->split);
    } else return ms_fail(err, MS_E_TOKEN, "tokenizer.json: pre-tokenizer \"%s\" is not supported (Split, Metaspace, ByteLevel, Sequence)", type_of(j, n));
    p->n_pre++;
    return MS_OK;
}

/* character-level decoders; fused: a Fuse came before (the rest applies to the whole text) */
static int add_dec(ms_pipeline *p, const ms_json *j, int32_t n, int *fused, ms_err *err) {
    if (type_is(j, n, "Fuse")) { *fused = 1; return MS_OK; }
    if (type_is(j, n, "ByteFallback")) {
        if (*fused || p->byte_fallback_dec) return ms_fail(err, MS_E_TOKEN, "tokenizer.json: decoder ByteFallback after Fuse (or twice) is not supported");
        p->byte_fallback_dec = 1;
        p->byte_fallback_at = p->n_dec;
        return MS_OK;
    }
    if (type_is(j, n, "Replace")) {
        if (p->n_dec == MS_PIPE_MAX) return ms_fail(err, MS_E_TOKEN, "tokenizer.json: too many decoders");
        ms_norm_op *op = &p->dec[p->n_dec];
        op->kind = MS_NORM_REPLACE;
        if (string_pattern(j, n, "decoder Replace", &op->a, &op->la, err)) return MS_E_TOKEN;
        int32_t c = ms_json_get(j, n, "content");
        if (!ms_json_str(j, c)) return ms_fail(err, MS_E_TOKEN, "tokenizer.json: decoder Replace has no \"content\"");
        op->lb = (size_t)j->nodes[c].len;
        if (!(op->b = dup(ms_json_str(j, c), op->lb))) return ms_fail(err, MS_E_MEMORY, "tokenizer: out of memory");
        p->n_dec++;
        /* a one-character pattern cannot span tokens: replacing per token is the same */
        uint32_t cp;
        if (*fused && ms_utf8_decode((const unsigned char *)op->a, op->la, &cp) != op->la)
            return ms_fail(err, MS_E_TOKEN, "tokenizer.json: decoder Replace of several characters after Fuse is not supported");
        return MS_OK;
    }
    if (type_is(j, n, "Strip")) {
        const char *c = ms_json_str(j, ms_json_get(j, n, "content"));
        int64_t start = 0, stop = 0;
        uint32_t cp;
        ms_json_int(j, ms_json_get(j, n, "start"), 0, 64, &start);
        ms_json_int(j, ms_json_get(j, n, "stop"), 0, 64, &stop);
        if (!c || !*c || ms_utf8_decode((const unsigned char *)c, strlen(c), &cp) != strlen(c))
            return ms_fail(err, MS_E_TOKEN, "tokenizer.json: decoder Strip needs a one-character content");
        if (*fused) {
            if (stop) return ms_fail(err, MS_E_TOKEN, "tokenizer.json: decoder Strip.stop after Fuse is not supported");
            p->text_strip_start = (int)start; p->text_strip_cp = cp;
        } else {
            if (p->tok_strip_start || p->tok_strip_stop) return ms_fail(err, MS_E_TOKEN, "tokenizer.json: two Strip decoders");
            p->tok_strip_start = (int)start; p->tok_strip_stop = (int)stop; p->tok_strip_cp = cp;
        }
        return MS_OK;
    }
    if (type_is(j, n, "Metaspace")) {
        const char *r = ms_json_str(j, ms_json_get(j, n, "replacement"));
        const char *sch = ms_json_str(j, ms_json_get(j, n, "prepend_scheme"));
        int prefix = 1;
        if (ms_json_bool(j, ms_json_get(j, n, "add_prefix_space"), &prefix) && !sch) sch = prefix ? "always" : "never";
        if (!r || !*r || p->n_dec == MS_PIPE_MAX) return ms_fail(err, MS_E_TOKEN, "tokenizer.json: decoder Metaspace needs a replacement");
        ms_norm_op *op = &p->dec[p->n_dec];
        op->kind = MS_NORM_REPLACE;
        op->la = strlen(r); op->lb = 1;
        if (!(op->a = dup(r, op->la)) || !(op->b = dup(" ", 1))) return ms_fail(err, MS_E_MEMORY, "tokenizer: out of memory");
        p->n_dec++;
        if (!sch || strcmp(sch, "never")) { p->text_strip_start = 1; p->text_strip_cp = ' '; }
        return MS_OK;
    }
    return ms_fail(err, MS_E_TOKEN, "tokenizer.json: decoder \"%s\" is not supported (ByteLevel; Replace, ByteFallback, Fuse, Strip, Metaspace, Sequence)", type_of(j, n));
}

static int32_t list_of(const ms_json *j, int32_t n, const char *key) {
    int32_t l = ms_json_get(j, n, key);
    return l >= 0 && j->nodes[l].type == MS_JARR ? j->nodes[l].child : -2;
}

int ms_pipeline_parse(ms_pipeline *p, const ms_json *j, int32_t norm, int32_t pre, int32_t dec, ms_err *err) {
    memset(p, 0, sizeof *p);
    int rc = MS_OK;
    if (!absent(j, norm)) {
        if (type_is(j, norm, "Sequence")) {
            int32_t e = list_of(j, norm, "normalizers");
            if (e == -2) rc = ms_fail(err, MS_E_TOKEN, "tokenizer.json: normalizer Sequence has no list");
            for (; e >= 0 && !rc; e = j->nodes[e].next) rc = add_norm(p, j, e, err);
        } else rc = add_norm(p, j, norm, err);
    }
    if (!rc && !absent(j, pre)) {
        if (type_is(j, pre, "Sequence")) {
            int32_t e = list_of(j, pre, "pretokenizers");
            if (e == -2) rc = ms_fail(err, MS_E_TOKEN, "tokenizer.json: pre_tokenizer Sequence has no list");
            for (; e >= 0 && !rc; e = j->nodes[e].next) rc = add_pre(p, j, e, j->nodes[e].next < 0, err);
        } else rc = add_pre(p, j, pre, 1, err);
    }
    if (!rc) {
        int fused = 0;
        if (p->byte_level) {
            if (!type_is(j, dec, "ByteLevel")) rc = ms_fail(err, MS_E_TOKEN, "tokenizer.json: a ByteLevel pre-tokenizer needs the ByteLevel decoder");
        } else if (absent(j, dec)) {
            rc = MS_OK;
        } else if (type_is(j, dec, "Sequence")) {
            int32_t e = list_of(j, dec, "decoders");
            if (e == -2) rc = ms_fail(err, MS_E_TOKEN, "tokenizer.json: decoder Sequence has no list");
            for (; e >= 0 && !rc; e = j->nodes[e].next) rc = add_dec(p, j, e, &fused, err);
        } else if (type_is(j, dec, "ByteLevel")) {
            rc = ms_fail(err, MS_E_TOKEN, "tokenizer.json: decoder ByteLevel without a ByteLevel pre-tokenizer is not supported");
        } else rc = add_dec(p, j, dec, &fused, err);
    }
    if (rc) ms_pipeline_free(p);
    return rc;
}

void ms_pipeline_free(ms_pipeline *p) {
    for (int k = 0; k < MS_PIPE_MAX; k++) {
        free(p->norm[k].a); free(p->norm[k].b); free(p->dec[k].a); free(p->dec[k].b);
        ms_regex_free(p->pre[k].re); free(p->pre[k].lit);
    }
    memset(p, 0, sizeof *p);
}

/* s with every a replaced by b (malloc'd) */
static char *replace_all(const char *s, size_t n, const char *a, size_t la, const char *b, size_t lb, size_t *out_len) {
    size_t count = 0;
    for (size_t i = 0; la && i + la <= n;) { if (!memcmp(s + i, a, la)) { count++; i += la; } else i++; }
    size_t cap = n + (lb > la ? count * (lb - la) : 0);
    char *o = malloc(cap + 1);
    if (!o) return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n;) {
        if (la && i + la <= n && !memcmp(s + i, a, la)) { memcpy(o + k, b, lb); k += lb; i += la; }
        else o[k++] = s[i++];
    }
    o[k] = 0;
    *out_len = k;
    return o;
}

char *ms_pipeline_normalize(const ms_pipeline *p, const char *s, size_t n, size_t *out_len) {
    char *cur = dup(s, n);
    size_t len = n;
    for (int k = 0; k < p->n_norm && cur; k++) {
        const ms_norm_op *op = &p->norm[k];
        char *nx = NULL;
        size_t nl = 0;
        if (op->kind == MS_NORM_NFC) nx = ms_nfc(cur, len, &nl);
        else if (op->kind == MS_NORM_REPLACE) nx = replace_all(cur, len, op->a, op->la, op->b, op->lb, &nl);
        else if (!len) { nx = dup(cur, 0); } /* Prepend leaves empty text empty */
        else if ((nx = malloc(len + op->la + 1))) { memcpy(nx, op->a, op->la); memcpy(nx + op->la, cur, len); nl = len + op->la; nx[nl] = 0; }
        free(cur);
        cur = nx;
        len = nl;
    }
    *out_len = len;
    return cur;
}

int ms_pipeline_metaspace(const ms_pipeline *p, const char *s, size_t n, int first, char **out, size_t *out_len) {
    *out = (char *)s;
    *out_len = n;
    if (!p->n_pre || p->pre[0].kind != MS_PT_METASPACE) return MS_OK;
    const ms_pre_op *op = &p->pre[0];
    size_t len;
    char *r = replace_all(s, n, " ", 1, op->rep, op->rlen, &len);
    if (!r) return MS_E_MEMORY;
    int pre = (op->prepend == MS_PREPEND_ALWAYS || (op->prepend == MS_PREPEND_FIRST && first)) &&
              !(len >= op->rlen && !memcmp(r, op->rep, op->rlen));
    if (pre && len) {
        char *r2 = malloc(len + op->rlen + 1);
        if (!r2) { free(r); return MS_E_MEMORY; }
        memcpy(r2, op->rep, op->rlen);
        memcpy(r2 + op->rlen, r, len + 1);
        free(r);
        r = r2;
        len += op->rlen;
    }
    *out = r;
    *out_len = len;
    return MS_OK;
}

typedef struct { uint32_t *a, *b; int n, cap; } spans;
static int span_push(spans *v, size_t a, size_t b) {
    if (v->n == v->cap) {
        int c = v->cap ? 2 * v->cap : 16;
        uint32_t *na = realloc(v->a, (size_t)c * 4);
        if (!na) return -1;
        v->a = na;
        uint32_t *nb = realloc(v->b, (size_t)c * 4);
        if (!nb) return -1;
        v->b = nb;
        v->cap = c;
    }
    v->a[v->n] = (uint32_t)a; v->b[v->n] = (uint32_t)b; v->n++;
    return 0;
}

/* next delimiter match of op in s[from..n): 1 and [*ms, *me) */
static int find(const ms_pre_op *op, const char *s, size_t n, size_t from, size_t *ms, size_t *me) {
    if (op->re) return ms_regex_search(op->re, s, n, from, ms, me);
    const char *lit = op->kind == MS_PT_METASPACE ? op->rep : op->lit;
    size_t ll = op->kind == MS_PT_METASPACE ? op->rlen : op->llen;
    for (size_t i = from; i + ll <= n; i++)
        if (!memcmp(s + i, lit, ll)) { *ms = i; *me = i + ll; return 1; }
    return 0;
}

/* one piece [a, b) split by op into out, following the Hugging Face behaviors: the parts are
 * matches and gaps (invert swaps which are the delimiters), then joined by `behavior` */
static int split_piece(const ms_pre_op *op, const char *s, size_t a, size_t b, spans *out) {
    int behavior = op->kind == MS_PT_METASPACE ? MS_SPLIT_MERGED_NEXT : op->behavior;
    int prev_delim = 0, have = 0; /* have: this piece already emitted a part */
    size_t i = a, ms = a, me = a;
    int matched = 0; /* [ms, me) is the next non-empty match at or after i (empty matches only mark a cut) */
    while (i < b) {
        size_t pa, pb;
        int delim;
        if (!matched || ms < i) {
            size_t from = i - a;
            int f;
            matched = 0;
            while ((f = find(op, s + a, b - a, from, &ms, &me)) > 0) {
                if (me > ms) { matched = 1; ms += a; me += a; break; }
                from = ms + 1;
                while (a + from < b && ((unsigned char)s[a + from] & 0xC0) == 0x80) from++;
                if (a + from >= b) break;
            }
            if (f < 0) return -2;
            if (!matched) ms = me = b;
        }
        if (ms > i) { pa = i; pb = ms; delim = op->invert; }  /* the gap before the match */
        else { pa = ms; pb = me; delim = !op->invert; matched = 0; }
        int r = 0;
        switch (behavior) {
        case MS_SPLIT_REMOVED: if (!delim) r = span_push(out, pa, pb); break;
        case MS_SPLIT_ISOLATED: r = span_push(out, pa, pb); break;
        case MS_SPLIT_MERGED_PREV:
            if (delim && !prev_delim && have) out->b[out->n - 1] = (uint32_t)pb; else r = span_push(out, pa, pb);
            break;
        case MS_SPLIT_MERGED_NEXT: /* a delimiter joins the part after it unless that is a delimiter too */
            if (prev_delim && !delim && have) out->b[out->n - 1] = (uint32_t)pb; else r = span_push(out, pa, pb);
            break;
        default: /* Contiguous: consecutive delimiters join */
            if (delim && prev_delim && have) out->b[out->n - 1] = (uint32_t)pb; else r = span_push(out, pa, pb);
            break;
        }
        if (r) return -1;
        if (!(behavior == MS_SPLIT_REMOVED && delim)) have = 1;
        prev_delim = delim;
        i = pb;
    }
    return 0;
}

int ms_pipeline_pieces(const ms_pipeline *p, const char *s, size_t n, uint32_t **starts, uint32_t **ends) {
    spans cur = {0}, nx = {0};
    int rc = 0;
    if (n && span_push(&cur, 0, n)) rc = -1;
    for (int k = 0; k < p->n_pre && !rc; k++) {
        const ms_pre_op *op = &p->pre[k];
        if (op->kind == MS_PT_METASPACE && !op->split) continue;
        nx.n = 0;
        for (int q = 0; q < cur.n && !rc; q++) rc = split_piece(op, s, cur.a[q], cur.b[q], &nx);
        spans t = cur; cur = nx; nx = t;
    }
    free(nx.a); free(nx.b);
    if (rc) { free(cur.a); free(cur.b); return rc; }
    if (!cur.n) { /* keep the pointers valid (malloc'd) for the caller */
        free(cur.a); free(cur.b);
        cur.a = malloc(4); cur.b = malloc(4);
        if (!cur.a || !cur.b) { free(cur.a); free(cur.b); return -1; }
    }
    *starts = cur.a;
    *ends = cur.b;
    return cur.n;
}

/* <0xNN> -> NN, else -1 */
static int byte_token(const char *s, size_t n) {
    if (n != 6 || memcmp(s, "<0x", 3) || s[5] != '>') return -1;
    int v = 0;
    for (int k = 3; k < 5; k++) {
        char c = s[k];
        int h = c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (h < 0) return -1;
        v = v * 16 + h;
    }
    return v;
}

char *ms_pipeline_decode_token(const ms_pipeline *p, const char *s, size_t n, size_t *out_len) {
    char *cur = dup(s, n);
    size_t len = n;
    for (int k = 0; k < p->n_dec && cur; k++) {
        int b;
        if (p->byte_fallback_dec && k == p->byte_fallback_at && (b = byte_token(cur, len)) >= 0) { /* one byte: done */
            cur[0] = (char)b; cur[1] = 0; *out_len = 1;
            return cur;
        }
        size_t nl;
        char *nx = replace_all(cur, len, p->dec[k].a, p->dec[k].la, p->dec[k].b, p->dec[k].lb, &nl);
        free(cur);
        cur = nx;
        len = nl;
    }
    int last;
    if (cur && p->byte_fallback_dec && p->byte_fallback_at == p->n_dec && (last = byte_token(cur, len)) >= 0) {
        cur[0] = (char)last; cur[1] = 0; *out_len = 1;
        return cur;
    }
    if (cur && (p->tok_strip_start || p->tok_strip_stop)) {
        unsigned char e[4];
        size_t el = ms_utf8_encode(p->tok_strip_cp, e), a = 0, b = len;
        for (int k = 0; k < p->tok_strip_start && b - a >= el && !memcmp(cur + a, e, el); k++) a += el;
        for (int k = 0; k < p->tok_strip_stop && b - a >= el && !memcmp(cur + b - el, e, el); k++) b -= el;
        memmove(cur, cur + a, b - a);
        len = b - a;
        cur[len] = 0;
    }
    *out_len = len;
    return cur;
}
