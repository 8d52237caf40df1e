#include "json.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

typedef struct {
    const char *s;
    size_t n, i;
    ms_json *j;
    char *err;
    size_t errlen;
    int failed;
} parser;

static void perr(parser *p, const char *what) {
    if (p->failed) return;
    p->failed = 1;
    size_t line = 1, col = 1;
    for (size_t k = 0; k < p->i && k < p->n; k++) {
        if (p->s[k] == '\n') { line++; col = 1; } else col++;
    }
    if (p->err && p->errlen) snprintf(p->err, p->errlen, "line %zu col %zu: %s", line, col, what);
}

static int32_t new_node(parser *p, int type) {
    ms_json *j = p->j;
    if (j->n_nodes >= MS_JSON_MAX_NODES) { perr(p, "too many values"); return -1; }
    if (j->n_nodes == j->cap_nodes) {
        int32_t cap = j->cap_nodes ? j->cap_nodes * 2 : 64;
        if (cap > MS_JSON_MAX_NODES) cap = MS_JSON_MAX_NODES;
        ms_jnode *nn = realloc(j->nodes, (size_t)cap * sizeof *nn);
        if (!nn) { perr(p, "out of memory"); return -1; }
        j->nodes = nn;
        j->cap_nodes = cap;
    }
    ms_jnode *nd = &j->nodes[j->n_nodes];
    memset(nd, 0, sizeof *nd);
    nd->type = (uint8_t)type;
    nd->next = nd->child = nd->key = nd->str = -1;
    return j->n_nodes++;
}

static int str_reserve(parser *p, size_t extra) {
    ms_json *j = p->j;
    if (j->n_strs + extra <= j->cap_strs) return 1;
    size_t cap = j->cap_strs ? j->cap_strs : 256;
    while (cap < j->n_strs + extra) {
        if (cap > ((size_t)1 << 30)) { perr(p, "string data too large"); return 0; }
        cap *= 2;
    }
    char *ns = realloc(j->strs, cap);
    if (!ns) { perr(p, "out of memory"); return 0; }
    j->strs = ns;
    j->cap_strs = cap;
    return 1;
}

static void ws(parser *p) {
    while (p->i < p->n) {
        char c = p->s[p->i];
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r') p->i++; else break;
    }
}

static int put_utf8(parser *p, uint32_t cp) {
    if (!str_reserve(p, 4)) return 0;
    char *o = p->j->strs + p->j->n_strs;
    size_t k = 0;
    if (cp < 0x80) o[k++] = (char)cp;
    else if (cp < 0x800) { o[k++] = (char)(0xC0 | (cp >> 6)); o[k++] = (char)(0x80 | (cp & 63)); }
    else if (cp < 0x10000) { o[k++] = (char)(0xE0 | (cp >> 12)); o[k++] = (char)(0x80 | ((cp >> 6) & 63)); o[k++] = (char)(0x80 | (cp & 63)); }
    else { o[k++] = (char)(0xF0 | (cp >> 18)); o[k++] = (char)(0x80 | ((cp >> 12) & 63)); o[k++] = (char)(0x80 | ((cp >> 6) & 63)); o[k++] = (char)(0x80 | (cp & 63)); }
    p->j->n_strs += k;
    return 1;
}

static int hex4(parser *p, uint32_t *out) {
    if (p->n - p->i < 4) { perr(p, "truncated \\u escape"); return 0; }
    uint32_t v = 0;
    for (int k = 0; k < 4; k++) {
        char c = p->s[p->i++];
        v <<= 4;
        if (c >= '0' && c <= '9') v |= (uint32_t)(c - '0');
        else if (c >= 'a' && c <= 'f') v |= (uint32_t)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') v |= (uint32_t)(c - 'A' + 10);
        else { perr(p, "bad \\u escape"); return 0; }
    }
    *out = v;
    return 1;
}

/* Length of a valid UTF-8 sequence starting at s[i], or 0. */
static size_t utf8_len(const unsigned char *s, size_t n) {
    unsigned c = s[0];
    if (c < 0x80) return 1;
    size_t len; uint32_t cp;
    if ((c & 0xE0) == 0xC0) { len = 2; cp = c & 0x1F; }
    else if ((c & 0xF0) == 0xE0) { len = 3; cp = c & 0x0F; }
    else if ((c & 0xF8) == 0xF0) { len = 4; cp = c & 0x07; }
    else return 0;
    if (n < len) return 0;
    for (size_t k = 1; k < len; k++) {
        if ((s[k] & 0xC0) != 0x80) return 0;
        cp = (cp << 6) | (s[k] & 0x3F);
    }
    if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF))) return 0;
    if (cp >= 0xD800 && cp <= 0xDFFF) return 0;
    return len;
}

/* Parses a string at p->i (which points at the opening quote); returns offset in strs. */
static int32_t parse_string(parser *p, int32_t *lenout) {
    p->i++; /* quote */
    size_t start = p->j->n_strs;
    if (start > INT32_MAX - 16) { perr(p, "string data too large"); return -1; }
    for (;;) {
        if (p->i >= p->n) { perr(p, "unterminated string"); return -1; }
        unsigned char c = (unsigned char)p->s[p->i];
        if (c == '"') { p->i++; break; }
        if (c < 0x20) { perr(p, "control character in string"); return -1; }
        if (c == '\\') {
            p->i++;
            if (p->i >= p->n) { perr(p, "unterminated escape"); return -1; }
            char e = p->s[p->i++];
            uint32_t cp;
            switch (e) {
            case '"': cp = '"'; break;
            case '\\': cp = '\\'; break;
            case '/': cp = '/'; break;
            case 'b': cp = 8; break;
            case 'f': cp = 12; break;
            case 'n': cp = 10; break;
            case 'r': cp = 13; break;
            case 't': cp = 9; break;
            case 'u':
                if (!hex4(p, &cp)) return -1;
                if (cp >= 0xD800 && cp <= 0xDBFF) {
                    uint32_t lo;
                    if (p->n - p->i < 2 || p->s[p->i] != '\\' || p->s[p->i + 1] != 'u') { perr(p, "lone surrogate"); return -1; }
                    p->i += 2;
                    if (!hex4(p, &lo)) return -1;
                    if (lo < 0xDC00 || lo > 0xDFFF) { perr(p, "bad surrogate pair"); return -1; }
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                } else if (cp >= 0xDC00 && cp <= 0xDFFF) { perr(p, "lone surrogate"); return -1; }
                break;
            default: perr(p, "bad escape"); return -1;
            }
            if (!put_utf8(p, cp)) return -1;
        } else {
            size_t l = utf8_len((const unsigned char *)p->s + p->i, p->n - p->i);
            if (!l) { perr(p, "invalid UTF-8 in string"); return -1; }
            if (!str_reserve(p, l)) return -1;
            memcpy(p->j->strs + p->j->n_strs, p->s + p->i, l);
            p->j->n_strs += l;
            p->i += l;
        }
    }
    if (!str_reserve(p, 1)) return -1;
    p->j->strs[p->j->n_strs++] = 0;
    size_t len = p->j->n_strs - start - 1;
    if (len > INT32_MAX) { perr(p, "string too long"); return -1; }
    *lenout = (int32_t)len;
    return (int32_t)start;
}

static int32_t parse_value(parser *p, int depth);

static int32_t parse_number(parser *p) {
    size_t st = p->i;
    if (p->s[p->i] == '-') p->i++;
    if (p->i >= p->n) { perr(p, "bad number"); return -1; }
    if (p->s[p->i] == '0') p->i++;
    else if (p->s[p->i] >= '1' && p->s[p->i] <= '9') { while (p->i < p->n && p->s[p->i] >= '0' && p->s[p->i] <= '9') p->i++; }
    else { perr(p, "bad number"); return -1; }
    if (p->i < p->n && p->s[p->i] == '.') {
        p->i++;
        if (p->i >= p->n || p->s[p->i] < '0' || p->s[p->i] > '9') { perr(p, "bad number"); return -1; }
        while (p->i < p->n && p->s[p->i] >= '0' && p->s[p->i] <= '9') p->i++;
    }
    if (p->i < p->n && (p->s[p->i] == 'e' || p->s[p->i] == 'E')) {
        p->i++;
        if (p->i < p->n && (p->s[p->i] == '+' || p->s[p->i] == '-')) p->i++;
        if (p->i >= p->n || p->s[p->i] < '0' || p->s[p->i] > '9') { perr(p, "bad number"); return -1; }
        while (p->i < p->n && p->s[p->i] >= '0' && p->s[p->i] <= '9') p->i++;
    }
    char tmp[64];
    size_t l = p->i - st;
    if (l >= sizeof tmp) { perr(p, "number too long"); return -1; }
    memcpy(tmp, p->s + st, l);
    tmp[l] = 0;
    double v = strtod(tmp, NULL);
    if (!isfinite(v)) { perr(p, "number out of range"); return -1; }
    int32_t nd = new_node(p, MS_JNUM);
    if (nd >= 0) p->j->nodes[nd].num = v;
    return nd;
}

static int lit(parser *p, const char *w) {
    size_t l = strlen(w);
    if (p->n - p->i < l || memcmp(p->s + p->i, w, l) != 0) { perr(p, "unexpected token"); return 0; }
    p->i += l;
    return 1;
}

static int32_t parse_container(parser *p, int depth, int is_obj) {
    int32_t nd = new_node(p, is_obj ? MS_JOBJ : MS_JARR);
    if (nd < 0) return -1;
    p->i++;
    ws(p);
    int32_t last = -1, count = 0;
    if (p->i < p->n && p->s[p->i] == (is_obj ? '}' : ']')) { p->i++; return nd; }
    for (;;) {
        int32_t key = -1, keylen = 0;
        ws(p);
        if (is_obj) {
            if (p->i >= p->n || p->s[p->i] != '"') { perr(p, "expected a key string"); return -1; }
            key = parse_string(p, &keylen);
            if (key < 0) return -1;
            ws(p);
            if (p->i >= p->n || p->s[p->i] != ':') { perr(p, "expected ':'"); return -1; }
            p->i++;
        }
        int32_t v = parse_value(p, depth + 1);
        if (v < 0) return -1;
        p->j->nodes[v].key = key;
        p->j->nodes[v].keylen = keylen;
        if (last < 0) p->j->nodes[nd].child = v; else p->j->nodes[last].next = v;
        last = v;
        count++;
        ws(p);
        if (p->i >= p->n) { perr(p, "unterminated container"); return -1; }
        char c = p->s[p->i++];
        if (c == ',') continue;
        if (c == (is_obj ? '}' : ']')) break;
        perr(p, is_obj ? "expected ',' or '}'" : "expected ',' or ']'");
        return -1;
    }
    p->j->nodes[nd].count = count;
    return nd;
}

static int32_t parse_value(parser *p, int depth) {
    if (depth > MS_JSON_MAX_DEPTH) { perr(p, "nesting too deep"); return -1; }
    ws(p);
    if (p->i >= p->n) { perr(p, "unexpected end of input"); return -1; }
    char c = p->s[p->i];
    if (c == '{') return parse_container(p, depth, 1);
    if (c == '[') return parse_container(p, depth, 0);
    if (c == '"') {
        int32_t len, off = parse_string(p, &len);
        if (off < 0) return -1;
        int32_t nd = new_node(p, MS_JSTR);
        if (nd >= 0) { p->j->nodes[nd].str = off; p->j->nodes[nd].len = len; }
        return nd;
    }
    if (c == 't' || c == 'f') {
        int b = c == 't';
        if (!lit(p, b ? "true" : "false")) return -1;
        int32_t nd = new_node(p, MS_JBOOL);
        if (nd >= 0) p->j->nodes[nd].boolean = (uint8_t)b;
        return nd;
    }
    if (c == 'n') { if (!lit(p, "null")) return -1; return new_node(p, MS_JNULL); }
    if (c == '-' || (c >= '0' && c <= '9')) return parse_number(p);
    perr(p, "unexpected character");
    return -1;
}

int ms_json_parse(ms_json *j, const char *text, size_t len, char *errbuf, size_t errlen) {
    memset(j, 0, sizeof *j);
    parser p = {text, len, 0, j, errbuf, errlen, 0};
    if (len >= 3 && (unsigned char)text[0] == 0xEF && (unsigned char)text[1] == 0xBB && (unsigned char)text[2] == 0xBF) p.i = 3;
    int32_t root = parse_value(&p, 0);
    if (root >= 0) {
        ws(&p);
        if (p.i != p.n) perr(&p, "trailing characters after the value");
    }
    if (p.failed || root != 0) {
        if (!p.failed) perr(&p, "internal");
        ms_json_free(j);
        return -1;
    }
    return 0;
}

void ms_json_free(ms_json *j) {
    free(j->nodes);
    free(j->strs);
    memset(j, 0, sizeof *j);
}

int32_t ms_json_get(const ms_json *j, int32_t obj, const char *key) {
    if (obj < 0 || obj >= j->n_nodes || j->nodes[obj].type != MS_JOBJ) return -1;
    int32_t found = -1;
    for (int32_t c = j->nodes[obj].child; c >= 0; c = j->nodes[c].next)
        if (strcmp(j->strs + j->nodes[c].key, key) == 0) found = c; /* last one wins, as JSON.parse */
    return found;
}

const char *ms_json_str(const ms_json *j, int32_t node) {
    if (node < 0 || node >= j->n_nodes || j->nodes[node].type != MS_JSTR) return NULL;
    return j->strs + j->nodes[node].str;
}

const char *ms_json_key(const ms_json *j, int32_t node) {
    if (node < 0 || node >= j->n_nodes || j->nodes[node].key < 0) return NULL;
    return j->strs + j->nodes[node].key;
}

int ms_json_int(const ms_json *j, int32_t node, int64_t lo, int64_t hi, int64_t *out) {
    if (node < 0 || node >= j->n_nodes || j->nodes[node].type != MS_JNUM) return 0;
    double v = j->nodes[node].num;
    if (!(v >= (double)lo && v <= (double)hi) || v != floor(v)) return 0;
    *out = (int64_t)v;
    return 1;
}

int ms_json_num(const ms_json *j, int32_t node, double *out) {
    if (node < 0 || node >= j->n_nodes || j->nodes[node].type != MS_JNUM) return 0;
    *out = j->nodes[node].num;
    return 1;
}

int ms_json_bool(const ms_json *j, int32_t node, int *out) {
    if (node < 0 || node >= j->n_nodes || j->nodes[node].type != MS_JBOOL) return 0;
    *out = j->nodes[node].boolean;
    return 1;
}

static void buf_grow(ms_buf *b, size_t extra) {
    if (b->oom) return;
    if (b->n + extra + 1 <= b->cap) return;
    size_t cap = b->cap ? b->cap : 1024;
    while (cap < b->n + extra + 1) cap *= 2;
    char *np = realloc(b->p, cap);
    if (!np) { b->oom = 1; return; }
    b->p = np;
    b->cap = cap;
}

void ms_buf_puts(ms_buf *b, const char *s) {
    size_t l = strlen(s);
    buf_grow(b, l);
    if (b->oom) return;
    memcpy(b->p + b->n, s, l + 1);
    b->n += l;
}

void ms_buf_printf(ms_buf *b, const char *fmt, ...) {
    char tmp[512];
    va_list ap;
    va_start(ap, fmt);
    int l = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (l < 0) { b->oom = 1; return; }
    if ((size_t)l < sizeof tmp) { ms_buf_puts(b, tmp); return; }
    buf_grow(b, (size_t)l);
    if (b->oom) return;
    va_start(ap, fmt);
    vsnprintf(b->p + b->n, (size_t)l + 1, fmt, ap);
    va_end(ap);
    b->n += (size_t)l;
}

void ms_buf_json_str(ms_buf *b, const char *s) {
    ms_buf_puts(b, "\"");
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"') ms_buf_puts(b, "\\\"");
        else if (c == '\\') ms_buf_puts(b, "\\\\");
        else if (c < 0x20) ms_buf_printf(b, "\\u%04x", c);
        else { char t[2] = {(char)c, 0}; ms_buf_puts(b, t); }
    }
    ms_buf_puts(b, "\"");
}

void ms_buf_free(ms_buf *b) {
    free(b->p);
    memset(b, 0, sizeof *b);
}
