/* llama2.c tokenizer (tokenizer.bin): encode and decode exactly as run.c does.
 * File: int32 max_token_length, then per token: float32 score, int32 length, bytes.
 * encode: [BOS] + (" " dummy prefix if text non-empty) + one token per UTF-8 character (or its
 * bytes + 3 when the character is not in the vocabulary), then repeatedly merge the adjacent pair
 * whose concatenation is in the vocabulary with the highest score (leftmost on ties). */
#include "tokenizer.h"
#include <stdlib.h>
#include <string.h>



static int piece_cmp(const ms_tok_llama2c *t, const char *a, size_t la, int32_t id) {
    const char *b = t->blob + t->off[id];
    size_t lb = t->off[id + 1] - t->off[id];
    size_t n = la < lb ? la : lb;
    int c = memcmp(a, b, n);
    if (c) return c;
    return la < lb ? -1 : la > lb;
}

/* merge sort of ids by piece (stable, so equal pieces keep id order; no qsort context needed) */
static void sort_ids(const ms_tok_llama2c *t, int32_t *a, int32_t *tmp, int n) {
    if (n < 2) return;
    int h = n / 2;
    sort_ids(t, a, tmp, h);
    sort_ids(t, a + h, tmp, n - h);
    int i = 0, j = h, k = 0;
    while (i < h && j < n) {
        const char *pj = t->blob + t->off[a[j]];
        size_t lj = t->off[a[j] + 1] - t->off[a[j]];
        if (piece_cmp(t, pj, lj, a[i]) < 0) tmp[k++] = a[j++]; else tmp[k++] = a[i++];
    }
    while (i < h) tmp[k++] = a[i++];
    while (j < n) tmp[k++] = a[j++];
    memcpy(a, tmp, (size_t)n * sizeof *a);
}

static int lookup(const ms_tok_llama2c *t, const char *s, size_t len) {
    int lo = 0, hi = t->vocab_size; /* first index with piece >= s */
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (piece_cmp(t, s, len, t->sorted[mid]) > 0) lo = mid + 1; else hi = mid;
    }
    if (lo < t->vocab_size && piece_cmp(t, s, len, t->sorted[lo]) == 0) return t->sorted[lo];
    return -1;
}

static int rd32(const uint8_t *p) { return (int)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24); }

int ms_l2c_load(ms_tok_llama2c *t, const uint8_t *d, size_t len, int vocab, ms_err *err) {
    memset(t, 0, sizeof *t);
    if (vocab < 3 || vocab > (1 << 22)) return ms_fail(err, MS_E_TOKEN, "tokenizer.bin: vocabulary size %d out of range", vocab);
    if (len < 4) return ms_fail(err, MS_E_TOKEN, "tokenizer.bin: truncated header (%zu bytes)", len);
    t->vocab_size = vocab;
    t->max_token_length = rd32(d);
    if (t->max_token_length < 1 || t->max_token_length > 65536)
        return ms_fail(err, MS_E_TOKEN, "tokenizer.bin: max_token_length %d out of range", t->max_token_length);
    /* first pass: bounds */
    size_t p = 4, total = 0;
    for (int i = 0; i < vocab; i++) {
        if (len - p < 8) return ms_fail(err, MS_E_TOKEN, "tokenizer.bin: truncated at token %d", i);
        int l = rd32(d + p + 4);
        if (l < 0 || l > 65536) return ms_fail(err, MS_E_TOKEN, "tokenizer.bin: token %d has length %d", i, l);
        p += 8;
        if (len - p < (size_t)l) return ms_fail(err, MS_E_TOKEN, "tokenizer.bin: truncated in the bytes of token %d", i);
        p += (size_t)l;
        total += (size_t)l;
    }
    if (p != len) return ms_fail(err, MS_E_TOKEN, "tokenizer.bin: %zu trailing bytes after %d tokens", len - p, vocab);
    t->blob = malloc(total + 1);
    t->off = malloc(((size_t)vocab + 1) * sizeof *t->off);
    t->scores = malloc((size_t)vocab * sizeof *t->scores);
    t->sorted = malloc((size_t)vocab * sizeof *t->sorted);
    int32_t *tmp = malloc((size_t)vocab * sizeof *tmp);
    if (!t->blob || !t->off || !t->scores || !t->sorted || !tmp) { free(tmp); return ms_fail(err, MS_E_MEMORY, "tokenizer: out of memory"); }
    p = 4;
    size_t o = 0;
    for (int i = 0; i < vocab; i++) {
        memcpy(&t->scores[i], d + p, 4);
        int l = rd32(d + p + 4);
        p += 8;
        t->off[i] = (uint32_t)o;
        memcpy(t->blob + o, d + p, (size_t)l);
        o += (size_t)l;
        p += (size_t)l;
        t->sorted[i] = i;
    }
    t->off[vocab] = (uint32_t)o;
    sort_ids(t, t->sorted, tmp, vocab);
    free(tmp);
    t->bos_id = 1;
    t->eos_id = 2;
    return MS_OK;
}

void ms_l2c_free(ms_tok_llama2c *t) {
    free(t->blob); free(t->off); free(t->scores); free(t->sorted);
    memset(t, 0, sizeof *t);
}

static size_t plen(const ms_tok_llama2c *t, int id) { return t->off[id + 1] - t->off[id]; }

int ms_l2c_encode(const ms_tok_llama2c *t, const char *text, size_t len, int add_bos, int32_t *ids, int cap, int *n_out, ms_err *err) {
    int n = 0;
    if ((size_t)cap < len + 3) return ms_fail(err, MS_E_ARG, "token buffer too small");
    if (add_bos) ids[n++] = t->bos_id;
    if (len > 0) {
        int sp = lookup(t, " ", 1);
        if (sp >= 0) ids[n++] = sp;
    }
    /* one token per UTF-8 character (as run.c groups it: a lead byte and up to 3 continuations) */
    size_t i = 0;
    while (i < len) {
        size_t l = 1;
        while (i + l < len && ((unsigned char)text[i + l] & 0xC0) == 0x80 && l < 4) l++;
        int id = lookup(t, text + i, l);
        if (id >= 0) ids[n++] = id;
        else
            for (size_t k = 0; k < l; k++) {
                unsigned char b = (unsigned char)text[i + k];
                int bid = b + 3;
                if (bid >= t->vocab_size) return ms_fail(err, MS_E_TOKEN, "byte 0x%02X has no token in this vocabulary", b);
                ids[n++] = bid;
            }
        i += l;
    }
    /* merges: best score first */
    char *buf = malloc((size_t)t->max_token_length * 2 + 2 + 65536 * 2);
    if (!buf) return ms_fail(err, MS_E_MEMORY, "tokenizer: out of memory");
    for (;;) {
        float best = -1e10f;
        int best_id = -1, best_i = -1;
        for (int k = 0; k + 1 < n; k++) {
            size_t la = plen(t, ids[k]), lb = plen(t, ids[k + 1]);
            memcpy(buf, t->blob + t->off[ids[k]], la);
            memcpy(buf + la, t->blob + t->off[ids[k + 1]], lb);
            int id = lookup(t, buf, la + lb);
            if (id >= 0 && t->scores[id] > best) { best = t->scores[id]; best_id = id; best_i = k; }
        }
        if (best_i < 0) break;
        ids[best_i] = best_id;
        memmove(ids + best_i + 1, ids + best_i + 2, (size_t)(n - best_i - 2) * sizeof *ids);
        n--;
    }
    free(buf);
    *n_out = n;
    return MS_OK;
}

size_t ms_l2c_piece(const ms_tok_llama2c *t, int prev, int id, const char **out, char *buf) {
    if (id < 0 || id >= t->vocab_size || id == t->bos_id || id == t->eos_id) { *out = ""; return 0; }
    const char *p = t->blob + t->off[id];
    size_t l = plen(t, id);
    if (prev == t->bos_id && l > 0 && p[0] == ' ') { p++; l--; }
    /* <0xNN> byte tokens decode to the raw byte */
    if (l == 6 && p[0] == '<' && p[1] == '0' && p[2] == 'x' && p[5] == '>') {
        int v = 0, ok = 1;
        for (int k = 3; k < 5; k++) {
            char ch = p[k];
            v <<= 4;
            if (ch >= '0' && ch <= '9') v |= ch - '0';
            else if (ch >= 'A' && ch <= 'F') v |= ch - 'A' + 10;
            else if (ch >= 'a' && ch <= 'f') v |= ch - 'a' + 10;
            else ok = 0;
        }
        if (ok) { buf[0] = (char)v; *out = buf; return 1; }
    }
    *out = p;
    return l;
}

int ms_l2c_token_id(const ms_tok_llama2c *t, const char *s, size_t n) { return lookup(t, s, n); }
