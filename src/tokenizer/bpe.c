#include "bpe.h"
#include "pretokenize.h"
#include "unicode.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char MAGIC[8] = {'M', 'S', 'B', 'P', 'E', 0, 'v', '1'};

uint32_t ms_byte_to_unicode(uint8_t b) {
    /* printable Latin-1 bytes map to themselves; the rest to U+0100 upwards, in byte order */
    if ((b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE)) return b;
    uint32_t k = 0;
    for (uint32_t x = 0; x < b; x++)
        if (!((x >= 0x21 && x <= 0x7E) || (x >= 0xA1 && x <= 0xAC) || (x >= 0xAE))) k++;
    return 0x100 + k;
}

static uint64_t hash64(uint64_t x) {
    x ^= x >> 33; x *= 0xff51afd7ed558ccdull; x ^= x >> 33; x *= 0xc4ceb9fe1a85ec53ull; x ^= x >> 33;
    return x;
}
static uint64_t hash_bytes(const uint8_t *p, size_t n) {
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ull;
    return hash64(h);
}

static int vocab_find(const ms_tok_bpe *t, const uint8_t *p, size_t n) {
    if (!t->vcap) return -1;
    for (uint32_t h = (uint32_t)hash_bytes(p, n) & (t->vcap - 1);; h = (h + 1) & (t->vcap - 1)) {
        uint32_t id = t->vh[h];
        if (id == UINT32_MAX) return -1;
        if (t->off[id + 1] - t->off[id] == n && !memcmp(t->blob + t->off[id], p, n)) return (int)id;
    }
}

static int merge_find(const ms_tok_bpe *t, uint32_t a, uint32_t b, uint32_t *rank, uint32_t *res) {
    uint64_t key = ((uint64_t)a << 32) | b;
    for (uint32_t h = (uint32_t)hash64(key) & (t->mcap - 1);; h = (h + 1) & (t->mcap - 1)) {
        if (t->mkey[h] == UINT64_MAX) return 0;
        if (t->mkey[h] == key) { *rank = t->mrank[h]; *res = t->mres[h]; return 1; }
    }
}

static uint32_t rd(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }

void ms_bpe_free(ms_tok_bpe *t) {
    free(t->off); free(t->blob); free(t->mkey); free(t->mrank); free(t->mres); free(t->vh);
    free(t->a_id); free(t->a_flags); free(t->a_off); free(t->a_len); free(t->a_blob); free(t->a_order);
    if (t->pipe) ms_pipeline_free(t->pipe);
    free(t->pipe); free(t->doff); free(t->dblob);
    memset(t, 0, sizeof *t);
}

static uint32_t pow2_above(uint64_t n) {
    uint32_t c = 16;
    while (c < 2 * n && c < (1u << 30)) c <<= 1;
    return c;
}

/* The file's four sections, each read by one function from byte *pp on; an error leaves what was
 * allocated in t for ms_bpe_load to free. */
#define NEED(k, what) do { if (n - p < (size_t)(k)) return ms_fail(err, MS_E_TOKEN, "tokenizer file: truncated in %s", what); } while (0)
#define BAD(...) return ms_fail(err, MS_E_TOKEN, __VA_ARGS__)

/* the pipeline section: tokenizer.json's normalizer, pre_tokenizer and decoder as the importer
 * checked them, and the model's unknown-token settings */
static int load_pipeline(ms_tok_bpe *t, const char *s, size_t n, ms_err *err) {
    ms_json j = {0};
    char jerr[160];
    if (ms_json_parse(&j, s, n, jerr, sizeof jerr)) BAD("tokenizer file: the pipeline section: %s", jerr);
    int rc = MS_OK;
    int64_t unk = -1;
    if (!(t->pipe = calloc(1, sizeof *t->pipe))) rc = ms_fail(err, MS_E_MEMORY, "tokenizer: out of memory");
    else rc = ms_pipeline_parse(t->pipe, &j, ms_json_get(&j, 0, "normalizer"), ms_json_get(&j, 0, "pre_tokenizer"), ms_json_get(&j, 0, "decoder"), err);
    if (!rc && !ms_json_int(&j, ms_json_get(&j, 0, "unk"), -1, (int64_t)t->n_vocab - 1, &unk))
        rc = ms_fail(err, MS_E_TOKEN, "tokenizer file: the pipeline's unk id is missing or out of range");
    if (!rc && !t->pipe->byte_level != !!(t->flags & MS_BPE_CHARS))
        rc = ms_fail(err, MS_E_TOKEN, "tokenizer file: the characters flag disagrees with the pre-tokenizer");
    t->unk = (int32_t)unk;
    ms_json_bool(&j, ms_json_get(&j, 0, "fuse_unk"), &t->fuse_unk);
    ms_json_bool(&j, ms_json_get(&j, 0, "byte_fallback"), &t->byte_fallback);
    ms_json_free(&j);
    return rc;
}

static int load_header(ms_tok_bpe *t, const uint8_t *d, size_t n, size_t *pp, int vocab_limit, ms_err *err) {
    size_t p = 0;
    NEED(40, "the header");
    if (memcmp(d, MAGIC, 8)) BAD("tokenizer file: not a bpe-bytelevel file (bad magic)");
    t->flags = rd(d + 8); t->pretok = rd(d + 12); t->chat = rd(d + 16); t->bos = (int32_t)rd(d + 20);
    t->n_vocab = rd(d + 24); t->n_merges = rd(d + 28); t->n_added = rd(d + 32);
    uint32_t n_pipe = rd(d + 36);
    if (t->flags > 7 || t->pretok > 4 || t->chat > 3) BAD("tokenizer file: unknown flags, pre-tokenizer or template kind");
    if ((t->pretok == 0) != (n_pipe > 0) || n_pipe > (1u << 20) || n - 40 < n_pipe) BAD("tokenizer file: the pipeline section is missing, misplaced or truncated");
    if (t->pretok && (t->flags & MS_BPE_CHARS)) BAD("tokenizer file: a fixed byte-level pre-tokenizer on a character vocabulary");
    if (t->n_vocab < 1 || t->n_vocab > (1u << 22) || (vocab_limit > 0 && t->n_vocab > (uint32_t)vocab_limit))
        BAD("tokenizer file: %u tokens (the model has %d embedding rows)", t->n_vocab, vocab_limit);
    if (t->n_merges > (1u << 23) || t->n_added > 65536) BAD("tokenizer file: too many merges or added tokens");
    if (t->bos < -1 || t->bos >= (int32_t)t->n_vocab) BAD("tokenizer file: BOS id %d out of range", t->bos);
    t->unk = -1;
    *pp = 40 + n_pipe;
    return n_pipe ? load_pipeline(t, (const char *)d + 40, n_pipe, err) : MS_OK;
}

/* the vocabulary: lengths checked first, then one blob, the offsets and the lookup hash */
static int load_vocab(ms_tok_bpe *t, const uint8_t *d, size_t n, size_t *pp, ms_err *err) {
    size_t p = *pp, total = 0, q = p;
    t->off = malloc(((size_t)t->n_vocab + 1) * sizeof *t->off);
    for (uint32_t i = 0; i < t->n_vocab; i++) {
        NEED(q - p + 4, "the vocabulary");
        uint32_t l = rd(d + q);
        if (l > 4096) BAD("tokenizer file: token %u is %u bytes long", i, l);
        q += 4;
        if (n - q < l) BAD("tokenizer file: truncated in token %u", i);
        q += l;
        total += l;
    }
    t->blob = malloc(total + 1);
    t->vcap = pow2_above(t->n_vocab);
    t->vh = malloc((size_t)t->vcap * sizeof *t->vh);
    if (!t->off || !t->blob || !t->vh) BAD("tokenizer: out of memory");
    memset(t->vh, 0xFF, (size_t)t->vcap * sizeof *t->vh);
    size_t o = 0;
    for (uint32_t i = 0; i < t->n_vocab; i++) {
        uint32_t l = rd(d + p);
        p += 4;
        t->off[i] = (uint32_t)o;
        memcpy(t->blob + o, d + p, l);
        o += l;
        p += l;
        t->off[i + 1] = (uint32_t)o;
        if (!l) continue; /* an unused id */
        if (vocab_find(t, t->blob + t->off[i], l) >= 0) BAD("tokenizer file: token %u duplicates an earlier token", i);
        uint32_t h = (uint32_t)hash_bytes(t->blob + t->off[i], l) & (t->vcap - 1);
        while (t->vh[h] != UINT32_MAX) h = (h + 1) & (t->vcap - 1);
        t->vh[h] = i;
    }
    for (int b = 0; b < 256; b++) {
        uint8_t c = (uint8_t)b;
        char name[8];
        snprintf(name, sizeof name, "<0x%02X>", b);
        if (!(t->flags & MS_BPE_CHARS)) t->byte_id[b] = vocab_find(t, &c, 1);
        else t->byte_id[b] = t->byte_fallback ? vocab_find(t, (const uint8_t *)name, 6) : -1;
    }
    *pp = p;
    return MS_OK;
}

/* the merges: each must concatenate its two tokens; a repeated pair keeps its first rank */
static int load_merges(ms_tok_bpe *t, const uint8_t *d, size_t n, size_t *pp, ms_err *err) {
    size_t p = *pp;
    NEED((size_t)t->n_merges * 12, "the merges");
    t->mcap = pow2_above(t->n_merges + 1);
    t->mkey = malloc((size_t)t->mcap * sizeof *t->mkey);
    t->mrank = malloc((size_t)t->mcap * sizeof *t->mrank);
    t->mres = malloc((size_t)t->mcap * sizeof *t->mres);
    if (!t->mkey || !t->mrank || !t->mres) BAD("tokenizer: out of memory");
    memset(t->mkey, 0xFF, (size_t)t->mcap * sizeof *t->mkey);
    for (uint32_t r = 0; r < t->n_merges; r++, p += 12) {
        uint32_t a = rd(d + p), b = rd(d + p + 4), c = rd(d + p + 8), rr, cc;
        if (a >= t->n_vocab || b >= t->n_vocab || c >= t->n_vocab) BAD("tokenizer file: merge %u refers to a token out of range", r);
        size_t la = t->off[a + 1] - t->off[a], lb = t->off[b + 1] - t->off[b];
        if (!la || !lb || t->off[c + 1] - t->off[c] != la + lb || memcmp(t->blob + t->off[c], t->blob + t->off[a], la) ||
            memcmp(t->blob + t->off[c] + la, t->blob + t->off[b], lb))
            BAD("tokenizer file: merge %u (%u + %u -> %u) does not concatenate", r, a, b, c);
        if (merge_find(t, a, b, &rr, &cc)) continue;
        uint64_t key = ((uint64_t)a << 32) | b;
        uint32_t h = (uint32_t)hash64(key) & (t->mcap - 1);
        while (t->mkey[h] != UINT64_MAX) h = (h + 1) & (t->mcap - 1);
        t->mkey[h] = key; t->mrank[h] = r; t->mres[h] = c;
    }
    *pp = p;
    return MS_OK;
}

/* the added (special) tokens, to the end of the file: kept longest first so the first match wins */
static int load_added(ms_tok_bpe *t, const uint8_t *d, size_t n, size_t p, ms_err *err) {
    t->a_id = calloc(t->n_added + 1, sizeof *t->a_id);
    t->a_flags = calloc(t->n_added + 1, sizeof *t->a_flags);
    t->a_off = calloc(t->n_added + 1, sizeof *t->a_off);
    t->a_len = calloc(t->n_added + 1, sizeof *t->a_len);
    size_t atot = 0, q = p;
    for (uint32_t i = 0; i < t->n_added; i++) {
        NEED(q - p + 12, "the added tokens");
        uint32_t l = rd(d + q + 8);
        if (l < 1 || l > 1024) BAD("tokenizer file: added token %u has a bad length (%u)", i, l);
        if (n - q - 12 < l) BAD("tokenizer file: truncated in added token %u", i);
        q += 12 + l;
        atot += l;
    }
    if (q != n) BAD("tokenizer file: %zu trailing bytes", n - q);
    t->a_blob = malloc(atot + 1);
    if (!t->a_id || !t->a_flags || !t->a_off || !t->a_len || !t->a_blob) BAD("tokenizer: out of memory");
    size_t ao = 0;
    for (uint32_t i = 0; i < t->n_added; i++) {
        uint32_t id = rd(d + p), fl = rd(d + p + 4), l = rd(d + p + 8);
        if (id >= t->n_vocab) BAD("tokenizer file: added token id %u out of range", id);
        if (!ms_utf8_valid((const char *)d + p + 12, l)) BAD("tokenizer file: added token %u is not UTF-8", id);
        for (uint32_t k = 0; k < i; k++) if (t->a_id[k] == id) BAD("tokenizer file: added token id %u listed twice", id);
        uint32_t k = i; /* insertion by length, longest first */
        while (k > 0 && t->a_len[k - 1] < l) { t->a_id[k] = t->a_id[k - 1]; t->a_flags[k] = t->a_flags[k - 1]; t->a_off[k] = t->a_off[k - 1]; t->a_len[k] = t->a_len[k - 1]; k--; }
        t->a_id[k] = id; t->a_flags[k] = fl; t->a_off[k] = (uint32_t)ao; t->a_len[k] = l;
        memcpy(t->a_blob + ao, d + p + 12, l);
        ao += l;
        p += 12 + l;
    }
    /* buckets by first byte, keeping the longest-first order inside each */
    if (!(t->a_order = malloc((t->n_added + 1) * sizeof *t->a_order))) BAD("tokenizer: out of memory");
    uint32_t fill[256] = {0};
    for (uint32_t a = 0; a < t->n_added; a++) t->a_start[t->a_blob[t->a_off[a]] + 1]++;
    for (int b = 0; b < 256; b++) t->a_start[b + 1] += t->a_start[b];
    for (uint32_t a = 0; a < t->n_added; a++) {
        uint8_t b = t->a_blob[t->a_off[a]];
        t->a_order[t->a_start[b] + fill[b]++] = a;
    }
    return MS_OK;
}
#undef NEED
#undef BAD

/* characters: what each token reads as, after the per-token decoders (added tokens: their
 * content through the same decoders, as the reference decodes them) */
static int decode_table(ms_tok_bpe *t, ms_err *err) {
    size_t total = 0, cap = 0;
    t->doff = malloc(((size_t)t->n_vocab + 1) * sizeof *t->doff);
    int32_t *added = malloc((size_t)t->n_vocab * sizeof *added); /* id -> its added-token entry */
    if (!t->doff || !added) { free(added); return ms_fail(err, MS_E_MEMORY, "tokenizer: out of memory"); }
    for (uint32_t i = 0; i < t->n_vocab; i++) added[i] = -1;
    for (uint32_t a = 0; a < t->n_added; a++) added[t->a_id[a]] = (int32_t)a;
    for (uint32_t i = 0; i < t->n_vocab; i++) {
        const uint8_t *src = t->blob + t->off[i];
        size_t sl = t->off[i + 1] - t->off[i], dl;
        if (added[i] >= 0) { src = t->a_blob + t->a_off[added[i]]; sl = t->a_len[added[i]]; }
        char *dec = ms_pipeline_decode_token(t->pipe, (const char *)src, sl, &dl);
        if (!dec) { free(added); return ms_fail(err, MS_E_MEMORY, "tokenizer: out of memory"); }
        if (total + dl + 1 > cap) {
            size_t nc = cap ? cap * 2 : 1 << 16;
            while (nc < total + dl + 1) nc *= 2;
            uint8_t *nb = realloc(t->dblob, nc);
            if (!nb) { free(dec); free(added); return ms_fail(err, MS_E_MEMORY, "tokenizer: out of memory"); }
            t->dblob = nb;
            cap = nc;
        }
        t->doff[i] = (uint32_t)total;
        memcpy(t->dblob + total, dec, dl);
        total += dl;
        free(dec);
    }
    free(added);
    t->doff[t->n_vocab] = (uint32_t)total;
    if (!t->dblob && !(t->dblob = malloc(1))) return ms_fail(err, MS_E_MEMORY, "tokenizer: out of memory");
    return MS_OK;
}

int ms_bpe_load(ms_tok_bpe *t, const uint8_t *d, size_t n, int vocab_limit, ms_err *err) {
    memset(t, 0, sizeof *t);
    size_t p = 0;
    int rc = load_header(t, d, n, &p, vocab_limit, err);
    if (rc == MS_OK) rc = load_vocab(t, d, n, &p, err);
    if (rc == MS_OK) rc = load_merges(t, d, n, &p, err);
    if (rc == MS_OK) rc = load_added(t, d, n, p, err);
    if (rc == MS_OK && (t->flags & MS_BPE_CHARS)) rc = decode_table(t, err);
    if (rc != MS_OK) ms_bpe_free(t);
    return rc;
}

/* ---- encoding ---- */
typedef struct { uint32_t rank, pos, left, right; } cand;
static int cand_less(const cand *a, const cand *b) { return a->rank < b->rank || (a->rank == b->rank && a->pos < b->pos); }
static void heap_push(cand *h, size_t *n, cand c) {
    size_t i = (*n)++;
    h[i] = c;
    while (i && cand_less(&h[i], &h[(i - 1) / 2])) { cand t = h[i]; h[i] = h[(i - 1) / 2]; h[(i - 1) / 2] = t; i = (i - 1) / 2; }
}
static cand heap_pop(cand *h, size_t *n) {
    cand top = h[0];
    h[0] = h[--*n];
    size_t i = 0;
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < *n && cand_less(&h[l], &h[m])) m = l;
        if (r < *n && cand_less(&h[r], &h[m])) m = r;
        if (m == i) break;
        cand t = h[i]; h[i] = h[m]; h[m] = t; i = m;
    }
    return top;
}

/* per-call scratch: the symbols of one piece (linked list + merge heap) and the output ids; both
 * grow with the longest piece (normalizers can make text longer than the input) */
typedef struct { uint32_t *id; int32_t *prev, *next; cand *heap; size_t cap; int32_t *out; size_t out_cap; int k; } work;

static int work_fit(work *w, size_t n, ms_err *err) {
    if (n > (1u << 30)) return ms_fail(err, MS_E_MEMORY, "tokenizer: a piece of %zu bytes is too long", n);
    if (n > w->cap) {
        size_t c = n + n / 2 + 16;
        uint32_t *id = realloc(w->id, c * 4);
        if (id) w->id = id;
        int32_t *pv = id ? realloc(w->prev, c * 4) : NULL;
        if (pv) w->prev = pv;
        int32_t *nx = pv ? realloc(w->next, c * 4) : NULL;
        if (nx) w->next = nx;
        cand *h = nx ? realloc(w->heap, c * 3 * sizeof(cand)) : NULL;
        if (!h) return ms_fail(err, MS_E_MEMORY, "tokenizer: out of memory");
        w->heap = h;
        w->cap = c;
    }
    if ((size_t)w->k + n + 2 > w->out_cap) {
        size_t c = ((size_t)w->k + n + 2) * 2;
        int32_t *o = realloc(w->out, c * 4);
        if (!o) return ms_fail(err, MS_E_MEMORY, "tokenizer: out of memory");
        w->out = o;
        w->out_cap = c;
    }
    return MS_OK;
}

/* merges the n symbols in w->id by rank (a heap of candidate pairs over a linked list: each
 * merge is O(log n)), then appends them to the output */
static void bpe_merge(const ms_tok_bpe *t, size_t n, work *w) {
    for (size_t i = 0; i < n; i++) { w->prev[i] = (int32_t)i - 1; w->next[i] = i + 1 < n ? (int32_t)i + 1 : -1; }
    size_t hn = 0;
    uint32_t rank, res;
    for (size_t i = 0; i + 1 < n; i++)
        if (merge_find(t, w->id[i], w->id[i + 1], &rank, &res)) heap_push(w->heap, &hn, (cand){rank, (uint32_t)i, w->id[i], w->id[i + 1]});
    while (hn) {
        cand c = heap_pop(w->heap, &hn);
        int32_t r = w->next[c.pos];
        /* stale: the left symbol was merged away (id changed) or its neighbour changed */
        if (r < 0 || w->id[c.pos] != c.left || w->id[r] != c.right || w->prev[c.pos] == -2) continue;
        merge_find(t, c.left, c.right, &rank, &res);
        w->id[c.pos] = res;
        w->next[c.pos] = w->next[r];
        if (w->next[r] >= 0) w->prev[w->next[r]] = (int32_t)c.pos;
        w->prev[r] = -2; /* dead */
        w->id[r] = UINT32_MAX;
        int32_t pl = w->prev[c.pos], nx = w->next[c.pos];
        uint32_t r2, res2;
        if (pl >= 0 && merge_find(t, w->id[pl], w->id[c.pos], &r2, &res2)) heap_push(w->heap, &hn, (cand){r2, (uint32_t)pl, w->id[pl], w->id[c.pos]});
        if (nx >= 0 && merge_find(t, w->id[c.pos], w->id[nx], &r2, &res2)) heap_push(w->heap, &hn, (cand){r2, c.pos, w->id[c.pos], w->id[nx]});
    }
    if (n) for (int32_t i = 0; i >= 0; i = w->next[i]) w->out[w->k++] = (int32_t)w->id[i];
}

/* byte-level: the symbols are the piece's bytes */
static int bpe_word(const ms_tok_bpe *t, const uint8_t *s, size_t n, work *w, ms_err *err) {
    if (work_fit(w, n, err)) return MS_E_MEMORY;
    if (t->flags & MS_BPE_IGNORE_MERGES) {
        int whole = vocab_find(t, s, n);
        if (whole >= 0) { w->out[w->k++] = whole; return MS_OK; }
    }
    for (size_t i = 0; i < n; i++) {
        if (t->byte_id[s[i]] < 0) return ms_fail(err, MS_E_TOKEN, "byte 0x%02X has no token in this vocabulary", s[i]);
        w->id[i] = (uint32_t)t->byte_id[s[i]];
    }
    bpe_merge(t, n, w);
    return MS_OK;
}

/* characters (SentencePiece-style): the symbols are the piece's characters; one that is not in
 * the vocabulary becomes its UTF-8 bytes' <0xNN> tokens (byte_fallback, when all exist) or the
 * unknown token (runs of them one token with fuse_unk) */
static int bpe_chars(const ms_tok_bpe *t, const uint8_t *s, size_t n, work *w, ms_err *err) {
    if (work_fit(w, n, err)) return MS_E_MEMORY;
    if (t->flags & MS_BPE_IGNORE_MERGES) {
        int whole = vocab_find(t, s, n);
        if (whole >= 0) { w->out[w->k++] = whole; return MS_OK; }
    }
    size_t m = 0;
    int last_unk = 0;
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        size_t l = ms_utf8_decode(s + i, n - i, &cp);
        if (!l) l = 1;
        int id = vocab_find(t, s + i, l), bytes = t->byte_fallback;
        for (size_t b = 0; id < 0 && bytes && b < l; b++) bytes = t->byte_id[s[i + b]] >= 0;
        if (id >= 0) { w->id[m++] = (uint32_t)id; last_unk = 0; }
        else if (bytes) { for (size_t b = 0; b < l; b++) w->id[m++] = (uint32_t)t->byte_id[s[i + b]]; last_unk = 0; }
        else if (t->unk >= 0) { if (!(t->fuse_unk && last_unk)) w->id[m++] = (uint32_t)t->unk; last_unk = 1; }
        else return ms_fail(err, MS_E_TOKEN, "U+%04X has no token in this vocabulary (and no byte fallback or unk_token)", (unsigned)cp);
        i += l;
    }
    bpe_merge(t, m, w);
    return MS_OK;
}

/* the general pipeline on one segment (text between added tokens; first: it begins the text) */
static int encode_pipeline(const ms_tok_bpe *t, const char *s, size_t n, int first, work *w, ms_err *err) {
    size_t nl, ml;
    char *norm = ms_pipeline_normalize(t->pipe, s, n, &nl), *meta = NULL;
    uint32_t *a = NULL, *b = NULL;
    int rc = MS_OK, np = 0;
    if (!norm || ms_pipeline_metaspace(t->pipe, norm, nl, first, &meta, &ml)) { rc = ms_fail(err, MS_E_MEMORY, "tokenizer: out of memory"); goto done; }
    if ((np = ms_pipeline_pieces(t->pipe, meta, ml, &a, &b)) < 0) {
        rc = np == -2 ? ms_fail(err, MS_E_TOKEN, "tokenizer: a Split pattern backtracks too much on this text (regex step budget)")
                      : ms_fail(err, MS_E_MEMORY, "tokenizer: out of memory");
        goto done;
    }
    for (int q = 0; q < np && !rc; q++) {
        const uint8_t *p = (const uint8_t *)meta + a[q];
        rc = (t->flags & MS_BPE_CHARS) ? bpe_chars(t, p, b[q] - a[q], w, err) : bpe_word(t, p, b[q] - a[q], w, err);
    }
done:
    if (meta != norm) free(meta);
    free(norm); free(a); free(b);
    return rc;
}

static int encode_segment(const ms_tok_bpe *t, const char *s, size_t n, int first, work *w, ms_err *err) {
    if (!n) return MS_OK;
    if (t->pipe) return encode_pipeline(t, s, n, first, w, err);
    char *norm = NULL;
    if (t->flags & MS_BPE_NFC) {
        size_t nl;
        norm = ms_nfc(s, n, &nl);
        if (!norm) return ms_fail(err, MS_E_MEMORY, "tokenizer: out of memory");
        s = norm;
        n = nl;
    }
    int rc = MS_OK;
    for (size_t i = 0; i < n && !rc;) {
        size_t l = ms_pretok_next((int)t->pretok, s, n, i);
        if (!l) l = 1;
        rc = bpe_word(t, (const uint8_t *)s + i, l, w, err);
        i += l;
    }
    free(norm);
    return rc;
}

int ms_bpe_encode(const ms_tok_bpe *t, const char *text, size_t len, int add_bos, int32_t *ids, int cap, int *n_out, ms_err *err) {
    if ((size_t)cap < len + 2) return ms_fail(err, MS_E_ARG, "token buffer too small");
    if (!ms_utf8_valid(text, len)) {
        size_t i = 0;
        uint32_t cp;
        size_t l;
        while ((l = ms_utf8_decode((const unsigned char *)text + i, len - i, &cp))) i += l;
        return ms_fail(err, MS_E_TOKEN, "text is not valid UTF-8 (byte %zu)", i);
    }
    work w = {0};
    int rc = work_fit(&w, len * 3 + 16, err);
    if (rc) goto done;
    if (add_bos && t->bos >= 0) w.out[w.k++] = t->bos;
    size_t seg = 0, i = 0;
    while (i <= len && !rc) {
        int hit = -1;
        if (i < len)
            for (uint32_t q = t->a_start[(uint8_t)text[i]]; q < t->a_start[(uint8_t)text[i] + 1]; q++) {
                uint32_t a = t->a_order[q];
                if (t->a_len[a] <= len - i && !memcmp(text + i, t->a_blob + t->a_off[a], t->a_len[a])) { hit = (int)a; break; }
            }
        if (hit < 0 && i < len) { i++; continue; }
        size_t seg_end = i, next = hit >= 0 ? i + t->a_len[hit] : len;
        if (hit >= 0 && (t->a_flags[hit] & 2)) /* lstrip: the token takes the spaces before it */
            while (seg_end > seg && (text[seg_end - 1] == ' ' || text[seg_end - 1] == '\t')) seg_end--;
        rc = encode_segment(t, text + seg, seg_end - seg, seg == 0, &w, err);
        if (hit < 0 || rc) break;
        if ((rc = work_fit(&w, 1, err))) break;
        w.out[w.k++] = (int32_t)t->a_id[hit];
        if (t->a_flags[hit] & 4) /* rstrip */
            while (next < len && (text[next] == ' ' || text[next] == '\t')) next++;
        seg = i = next;
    }
    if (!rc && w.k > cap) rc = ms_fail(err, MS_E_ARG, "token buffer too small (%d tokens)", w.k);
    if (!rc) { memcpy(ids, w.out, (size_t)w.k * 4); *n_out = w.k; }
done:
    free(w.id); free(w.prev); free(w.next); free(w.heap); free(w.out);
    return rc;
}

size_t ms_bpe_piece(const ms_tok_bpe *t, int prev, int id, const char **out) {
    if (id < 0 || (uint32_t)id >= t->n_vocab) { *out = ""; return 0; }
    if (t->flags & MS_BPE_CHARS) { /* the decoded form; the text's first token loses its Strip */
        const char *p = (const char *)t->dblob + t->doff[id];
        size_t l = t->doff[id + 1] - t->doff[id];
        if (prev < 0 && t->pipe->text_strip_start) {
            unsigned char e[4];
            size_t el = ms_utf8_encode(t->pipe->text_strip_cp, e);
            for (int k = 0; k < t->pipe->text_strip_start && l >= el && !memcmp(p, e, el); k++) { p += el; l -= el; }
        }
        *out = p;
        return l;
    }
    for (uint32_t a = 0; a < t->n_added; a++)
        if (t->a_id[a] == (uint32_t)id) { *out = (const char *)t->a_blob + t->a_off[a]; return t->a_len[a]; }
    *out = (const char *)t->blob + t->off[id];
    return t->off[id + 1] - t->off[id];
}

char *ms_bpe_token_string(const ms_tok_bpe *t, int id) {
    if (id < 0 || (uint32_t)id >= t->n_vocab) return NULL;
    for (uint32_t a = 0; a < t->n_added; a++)
        if (t->a_id[a] == (uint32_t)id) {
            char *s = malloc(t->a_len[a] + 1);
            if (s) { memcpy(s, t->a_blob + t->a_off[a], t->a_len[a]); s[t->a_len[a]] = 0; }
            return s;
        }
    size_t l = t->off[id + 1] - t->off[id], o = 0;
    char *s = malloc(l * 2 + 1);
    if (!s) return NULL;
    if (t->flags & MS_BPE_CHARS) { memcpy(s, t->blob + t->off[id], l); s[l] = 0; return s; }
    for (size_t i = 0; i < l; i++) o += ms_utf8_encode(ms_byte_to_unicode(t->blob[t->off[id] + i]), (unsigned char *)s + o);
    s[o] = 0;
    return s;
}

int ms_bpe_token_id(const ms_tok_bpe *t, const char *s, size_t n) {
    for (uint32_t a = 0; a < t->n_added; a++)
        if (t->a_len[a] == n && !memcmp(t->a_blob + t->a_off[a], s, n)) return (int)t->a_id[a];
    if (t->flags & MS_BPE_CHARS) return vocab_find(t, (const uint8_t *)s, n);
    uint8_t *raw = malloc(n + 1);
    if (!raw) return -1;
    size_t i = 0, k = 0;
    while (i < n) {
        uint32_t cp;
        size_t l = ms_utf8_decode((const unsigned char *)s + i, n - i, &cp);
        int b = -1;
        for (int x = 0; l && x < 256 && b < 0; x++) if (ms_byte_to_unicode((uint8_t)x) == cp) b = x;
        if (b < 0) { free(raw); return -1; }
        raw[k++] = (uint8_t)b;
        i += l;
    }
    int id = vocab_find(t, raw, k);
    free(raw);
    return id;
}
