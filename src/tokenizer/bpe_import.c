/* tokenizer.json (Hugging Face `tokenizers`) -> the binary bpe-bytelevel file (bpe.h).
 * Accepted: model BPE. Byte-level files whose normalizer is none/NFC and whose pre-tokenizer is
 * one of the known split patterns (GPT-2, Qwen2/Qwen3, Qwen3.5, Llama-3) keep the fixed, hand-
 * compiled pre-tokenizer (pretokenize.h); every other file goes through the general pipeline
 * (pipeline.h: Split with any regex the engine takes, Metaspace, Replace/Prepend normalizers,
 * SentencePiece-style decoders), on bytes (a ByteLevel pre-tokenizer) or on characters with
 * byte_fallback / unk_token / fuse_unk. Anything else is refused with E_TOKEN naming the field,
 * rather than tokenized differently. */
#include "bpe.h"
#include "pipeline.h"
#include "pretokenize.h"
#include "unicode.h"
#include "../util/json.h"
#include <stdlib.h>
#include <string.h>

static const char *const PAT_QWEN2 =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
static const char *const PAT_QWEN35 =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+|\\p{N}| ?[^\\s\\p{L}\\p{M}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
static const char *const PAT_LLAMA3 =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

static int type_is(const ms_json *j, int32_t n, const char *type) {
    const char *t = ms_json_str(j, ms_json_get(j, n, "type"));
    return t && !strcmp(t, type);
}

/* byte-level string -> raw bytes (a code point outside the byte map keeps its UTF-8 bytes) */
static void unbyte_table(int16_t inv[0x144]) {
    for (int k = 0; k < 0x144; k++) inv[k] = -1;
    for (int b = 0; b < 256; b++) inv[ms_byte_to_unicode((uint8_t)b)] = (int16_t)b;
}

static size_t unbyte(const int16_t *inv, const char *s, size_t n, uint8_t *out) {
    size_t i = 0, o = 0;
    while (i < n) {
        uint32_t cp;
        size_t l = ms_utf8_decode((const unsigned char *)s + i, n - i, &cp);
        if (!l) { out[o++] = (uint8_t)s[i++]; continue; }
        if (cp < 0x144 && inv[cp] >= 0) out[o++] = (uint8_t)inv[cp];
        else { memcpy(out + o, s + i, l); o += l; }
        i += l;
    }
    return o;
}

typedef struct { uint8_t *p; size_t n, cap; int oom; } bytes;
static void put(bytes *b, const void *d, size_t n) {
    if (b->oom) return;
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->n + n) cap *= 2;
        uint8_t *np = realloc(b->p, cap);
        if (!np) { b->oom = 1; return; }
        b->p = np;
        b->cap = cap;
    }
    memcpy(b->p + b->n, d, n);
    b->n += n;
}
static void put32(bytes *b, uint32_t v) {
    uint8_t x[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    put(b, x, 4);
}

typedef struct { uint8_t *raw; uint32_t len; } tok;
typedef struct { uint32_t *slot; uint32_t cap; const tok *v; } idmap;
static uint64_t hb(const uint8_t *p, size_t n) {
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ull;
    return h ^ (h >> 29);
}
static int id_of(const idmap *m, const uint8_t *p, size_t n) {
    for (uint32_t h = (uint32_t)hb(p, n) & (m->cap - 1);; h = (h + 1) & (m->cap - 1)) {
        uint32_t id = m->slot[h];
        if (id == UINT32_MAX) return -1;
        if (m->v[id].len == n && !memcmp(m->v[id].raw, p, n)) return (int)id;
    }
}

static int chat_kind(const char *tpl) {
    if (!tpl || !strstr(tpl, "<|im_start|>")) return MS_CHAT_NONE;
    if (strstr(tpl, "enable_thinking is defined and enable_thinking is true")) return MS_CHAT_QWEN35;
    if (strstr(tpl, "enable_thinking")) return MS_CHAT_QWEN3;
    return MS_CHAT_CHATML;
}

/* tokenizer_config.json's chat_template: a string, or the "default" entry of a list of {name, template} */
static const char *config_template(const ms_json *c) {
    if (!c->n_nodes) return NULL;
    int32_t t = ms_json_get(c, 0, "chat_template");
    if (t >= 0 && c->nodes[t].type == MS_JARR)
        for (int32_t e = c->nodes[t].child; e >= 0; e = c->nodes[e].next) {
            const char *name = ms_json_str(c, ms_json_get(c, e, "name"));
            if (name && !strcmp(name, "default")) return ms_json_str(c, ms_json_get(c, e, "template"));
        }
    return ms_json_str(c, t);
}

/* a special token's text: "…" or {"content": "…"} */
static const char *token_text(const ms_json *c, const char *key) {
    int32_t t = ms_json_get(c, 0, key);
    const char *s = ms_json_str(c, t);
    return s ? s : ms_json_str(c, ms_json_get(c, t, "content"));
}

int ms_chat_info_json(const char *cj, size_t clen, const char *tpl_override, char **out, ms_err *err) {
    ms_json c = {0};
    char jerr[160];
    *out = NULL;
    if (cj && clen && ms_json_parse(&c, cj, clen, jerr, sizeof jerr)) return ms_fail(err, MS_E_TOKEN, "tokenizer_config.json: %s", jerr);
    const char *tpl = tpl_override ? tpl_override : config_template(&c);
    int rc = MS_OK;
    if (tpl && *tpl) {
        ms_buf b = {0};
        ms_buf_puts(&b, "{\"template\": ");
        ms_buf_json_str(&b, tpl);
        const char *keys[2] = {"bos_token", "eos_token"};
        for (int k = 0; k < 2; k++) {
            const char *v = c.n_nodes ? token_text(&c, keys[k]) : NULL;
            ms_buf_printf(&b, ", \"%s\": ", keys[k]);
            if (v) ms_buf_json_str(&b, v); else ms_buf_puts(&b, "null");
        }
        ms_buf_puts(&b, "}");
        if (b.oom) { ms_buf_free(&b); rc = ms_fail(err, MS_E_MEMORY, "out of memory"); }
        else *out = b.p;
    }
    ms_json_free(&c);
    return rc;
}

char *ms_chat_info_text(const char *cj, size_t clen, const char *tpl_override, ms_err *err) {
    char *out = NULL;
    if (ms_chat_info_json(cj, clen, tpl_override, &out, err)) return NULL;
    if (out) return out;
    if (!(out = malloc(5))) { ms_fail(err, MS_E_MEMORY, "out of memory"); return NULL; }
    memcpy(out, "null", 5);
    return out;
}

/* node n of j written back as JSON (the pipeline section keeps tokenizer.json's own objects) */
static void write_json(ms_buf *b, const ms_json *j, int32_t n, int depth) {
    if (n < 0 || depth > MS_JSON_MAX_DEPTH) { ms_buf_puts(b, "null"); return; }
    const ms_jnode *x = &j->nodes[n];
    switch (x->type) {
    case MS_JNULL: ms_buf_puts(b, "null"); break;
    case MS_JBOOL: ms_buf_puts(b, x->boolean ? "true" : "false"); break;
    case MS_JNUM: ms_buf_printf(b, "%.17g", x->num); break;
    case MS_JSTR: ms_buf_json_str(b, ms_json_str(j, n)); break;
    default:
        ms_buf_puts(b, x->type == MS_JARR ? "[" : "{");
        for (int32_t e = x->child; e >= 0; e = j->nodes[e].next) {
            if (e != x->child) ms_buf_puts(b, ",");
            if (x->type == MS_JOBJ) { ms_buf_json_str(b, ms_json_key(j, e)); ms_buf_puts(b, ":"); }
            write_json(b, j, e, depth + 1);
        }
        ms_buf_puts(b, x->type == MS_JARR ? "]" : "}");
    }
}

/* the fixed byte-level pre-tokenizer this file's normalizer / pre_tokenizer / decoder name, 0 if
 * none; *flags gets NFC */
static uint32_t fixed_pretok(const ms_json *j, uint32_t *flags) {
    int32_t norm = ms_json_get(j, 0, "normalizer");
    if (norm >= 0 && j->nodes[norm].type != MS_JNULL) {
        if (type_is(j, norm, "NFC")) *flags |= MS_BPE_NFC;
        else if (type_is(j, norm, "Sequence")) {
            int32_t list = ms_json_get(j, norm, "normalizers");
            for (int32_t e = list >= 0 ? j->nodes[list].child : -1; e >= 0; e = j->nodes[e].next) {
                if (type_is(j, e, "NFC")) *flags |= MS_BPE_NFC;
                else return 0;
            }
        } else return 0;
    }
    if (!type_is(j, ms_json_get(j, 0, "decoder"), "ByteLevel")) return 0;
    int32_t pt = ms_json_get(j, 0, "pre_tokenizer");
    if (type_is(j, pt, "ByteLevel")) {
        int use_regex = 1, prefix = 0;
        ms_json_bool(j, ms_json_get(j, pt, "use_regex"), &use_regex);
        ms_json_bool(j, ms_json_get(j, pt, "add_prefix_space"), &prefix);
        return use_regex && !prefix ? MS_PRE_GPT2 : 0;
    }
    if (type_is(j, pt, "Sequence")) {
        int32_t list = ms_json_get(j, pt, "pretokenizers");
        int32_t first = list >= 0 ? j->nodes[list].child : -1, second = first >= 0 ? j->nodes[first].next : -1;
        const char *pat = ms_json_str(j, ms_json_get(j, ms_json_get(j, first, "pattern"), "Regex"));
        const char *beh = ms_json_str(j, ms_json_get(j, first, "behavior"));
        int use_regex = 1, invert = 0, prefix = 0;
        ms_json_bool(j, ms_json_get(j, second, "use_regex"), &use_regex);
        ms_json_bool(j, ms_json_get(j, second, "add_prefix_space"), &prefix);
        ms_json_bool(j, ms_json_get(j, first, "invert"), &invert);
        /* (files written before the engine read "behavior" may leave it out: Isolated, as before) */
        if (type_is(j, first, "Split") && pat && (!beh || !strcmp(beh, "Isolated")) && !invert && type_is(j, second, "ByteLevel") &&
            !use_regex && !prefix && j->nodes[second].next < 0) {
            if (!strcmp(pat, PAT_QWEN2)) return MS_PRE_QWEN2;
            if (!strcmp(pat, PAT_QWEN35)) return MS_PRE_QWEN35;
            if (!strcmp(pat, PAT_LLAMA3)) return MS_PRE_LLAMA3;
        }
    }
    return 0;
}

/* rows > 0: unlink the added tokens whose id is rows or more (ms_bpe_import) */
static void drop_added_past(ms_json *j, int rows) {
    int32_t arr = ms_json_get(j, 0, "added_tokens"), prev = -1;
    if (rows <= 0 || arr < 0 || j->nodes[arr].type != MS_JARR) return;
    for (int32_t e = j->nodes[arr].child; e >= 0; e = j->nodes[e].next) {
        int64_t id;
        if (ms_json_int(j, ms_json_get(j, e, "id"), 0, (1 << 22) - 1, &id) && id >= rows) {
            if (prev >= 0) j->nodes[prev].next = j->nodes[e].next;
            else j->nodes[arr].child = j->nodes[e].next;
            j->nodes[arr].count--;
        } else prev = e;
    }
}

int ms_bpe_import(const char *tj, size_t tlen, const char *cj, size_t clen, const char *tpl_override, int rows, uint8_t **out,
                  size_t *out_len, int *bos_out, ms_err *err) {
    ms_json j = {0}, c = {0};
    char jerr[160];
    int rc = MS_OK;
    tok *v = NULL;
    idmap m = {0};
    bytes b = {0};
    uint8_t *buf = NULL;
    uint32_t n_vocab = 0;
    int16_t inv[0x144];
    unbyte_table(inv);
    *out = NULL;
    if (ms_json_parse(&j, tj, tlen, jerr, sizeof jerr)) return ms_fail(err, MS_E_TOKEN, "tokenizer.json: %s", jerr);
    drop_added_past(&j, rows);
    if (cj && clen && ms_json_parse(&c, cj, clen, jerr, sizeof jerr)) { rc = ms_fail(err, MS_E_TOKEN, "tokenizer_config.json: %s", jerr); goto done; }
    int32_t model = ms_json_get(&j, 0, "model");
    if (!type_is(&j, model, "BPE")) {
        const char *mt = ms_json_str(&j, ms_json_get(&j, model, "type"));
        rc = ms_fail(err, MS_E_TOKEN, "tokenizer.json: model.type \"%s\" is not supported (only \"BPE\")", mt ? mt : "(none)");
        goto done;
    }
    int fb = 0, ign = 0, fuse = 0;
    double dropout = 0;
    ms_json_bool(&j, ms_json_get(&j, model, "byte_fallback"), &fb);
    ms_json_bool(&j, ms_json_get(&j, model, "ignore_merges"), &ign);
    ms_json_bool(&j, ms_json_get(&j, model, "fuse_unk"), &fuse);
    if (ms_json_num(&j, ms_json_get(&j, model, "dropout"), &dropout) && dropout > 0) { rc = ms_fail(err, MS_E_TOKEN, "tokenizer.json: model.dropout is not supported"); goto done; }
    const char *keys[2] = {"continuing_subword_prefix", "end_of_word_suffix"};
    for (int k = 0; k < 2; k++) {
        const char *val = ms_json_str(&j, ms_json_get(&j, model, keys[k]));
        if (val && *val) { rc = ms_fail(err, MS_E_TOKEN, "tokenizer.json: model.%s is not supported", keys[k]); goto done; }
    }
    uint32_t flags = ign ? MS_BPE_IGNORE_MERGES : 0;
    uint32_t pretok = fb ? 0 : fixed_pretok(&j, &flags);
    ms_pipeline pipe;
    int chars = 0, rewrites = 0; /* rewrites: a normalizer other than NFC changes the text */
    if (!pretok) { /* the general pipeline: checked here, rebuilt by the loader from the same JSON */
        flags &= ~(uint32_t)MS_BPE_NFC;
        if ((rc = ms_pipeline_parse(&pipe, &j, ms_json_get(&j, 0, "normalizer"), ms_json_get(&j, 0, "pre_tokenizer"), ms_json_get(&j, 0, "decoder"), err))) goto done;
        chars = !pipe.byte_level;
        for (int k = 0; k < pipe.n_norm; k++) rewrites |= pipe.norm[k].kind != MS_NORM_NFC;
        ms_pipeline_free(&pipe);
        if (!chars && fb) { rc = ms_fail(err, MS_E_TOKEN, "tokenizer.json: model.byte_fallback with a ByteLevel pre-tokenizer is not supported"); goto done; }
        if (chars) flags |= MS_BPE_CHARS;
    }

    /* vocabulary */
    int32_t vocab = ms_json_get(&j, model, "vocab"), added = ms_json_get(&j, 0, "added_tokens");
    if (vocab < 0 || j.nodes[vocab].type != MS_JOBJ) { rc = ms_fail(err, MS_E_TOKEN, "tokenizer.json: model.vocab missing"); goto done; }
    int64_t id;
    for (int32_t e = j.nodes[vocab].child; e >= 0; e = j.nodes[e].next) {
        if (!ms_json_int(&j, e, 0, (1 << 22) - 1, &id)) { rc = ms_fail(err, MS_E_TOKEN, "tokenizer.json: vocab entry \"%s\" has a bad id", ms_json_key(&j, e)); goto done; }
        if ((uint32_t)id + 1 > n_vocab) n_vocab = (uint32_t)id + 1;
    }
    for (int32_t e = added >= 0 ? j.nodes[added].child : -1; e >= 0; e = j.nodes[e].next)
        if (ms_json_int(&j, ms_json_get(&j, e, "id"), 0, (1 << 22) - 1, &id) && (uint32_t)id + 1 > n_vocab) n_vocab = (uint32_t)id + 1;
    v = calloc(n_vocab + 1, sizeof *v);
    m.cap = 16;
    while (m.cap < 2 * n_vocab + 2) m.cap <<= 1;
    m.slot = malloc(m.cap * sizeof *m.slot);
    buf = malloc(4096 * 4);
    if (!v || !m.slot || !buf) { rc = ms_fail(err, MS_E_MEMORY, "tokenizer: out of memory"); goto done; }
    memset(m.slot, 0xFF, m.cap * sizeof *m.slot);
    m.v = v;
    for (int32_t e = j.nodes[vocab].child; e >= 0; e = j.nodes[e].next) {
        ms_json_int(&j, e, 0, (1 << 22) - 1, &id);
        const char *k = ms_json_key(&j, e);
        size_t kl = (size_t)j.nodes[e].keylen;
        if (kl > 4096) { rc = ms_fail(err, MS_E_TOKEN, "tokenizer.json: token %lld is too long", (long long)id); goto done; }
        if (v[id].raw) { rc = ms_fail(err, MS_E_TOKEN, "tokenizer.json: id %lld is used by two tokens", (long long)id); goto done; }
        size_t rl = chars ? kl : unbyte(inv, k, kl, buf);
        if (chars) memcpy(buf, k, kl);
        if (!rl) { rc = ms_fail(err, MS_E_TOKEN, "tokenizer.json: empty token for id %lld", (long long)id); goto done; }
        if (id_of(&m, buf, rl) >= 0) { rc = ms_fail(err, MS_E_TOKEN, "tokenizer.json: token \"%s\" (id %lld) duplicates another token's bytes", k, (long long)id); goto done; }
        v[id].raw = malloc(rl);
        if (!v[id].raw) { rc = ms_fail(err, MS_E_MEMORY, "tokenizer: out of memory"); goto done; }
        memcpy(v[id].raw, buf, rl);
        v[id].len = (uint32_t)rl;
        uint32_t h = (uint32_t)hb(buf, rl) & (m.cap - 1);
        while (m.slot[h] != UINT32_MAX) h = (h + 1) & (m.cap - 1);
        m.slot[h] = (uint32_t)id;
    }
    int bos = -1;
    if (c.n_nodes) { /* BOS when tokenizer_config.json asks for it */
        int add_bos = 0;
        ms_json_bool(&c, ms_json_get(&c, 0, "add_bos_token"), &add_bos);
        int32_t bt = ms_json_get(&c, 0, "bos_token");
        const char *bs = ms_json_str(&c, bt);
        if (!bs) bs = ms_json_str(&c, ms_json_get(&c, bt, "content"));
        if (add_bos && bs)
            for (int32_t e = added >= 0 ? j.nodes[added].child : -1; e >= 0; e = j.nodes[e].next) {
                const char *ct = ms_json_str(&j, ms_json_get(&j, e, "content"));
                if (ct && !strcmp(ct, bs) && ms_json_int(&j, ms_json_get(&j, e, "id"), 0, n_vocab - 1, &id)) bos = (int)id;
            }
    }
    const char *tpl = tpl_override ? tpl_override : config_template(&c);
    int32_t merges = ms_json_get(&j, model, "merges");
    uint32_t n_merges = merges >= 0 && j.nodes[merges].type == MS_JARR ? (uint32_t)j.nodes[merges].count : 0;
    uint32_t n_added = added >= 0 && j.nodes[added].type == MS_JARR ? (uint32_t)j.nodes[added].count : 0;
    ms_buf ext = {0};
    if (!pretok) {
        int64_t unk = -1;
        const char *us = ms_json_str(&j, ms_json_get(&j, model, "unk_token"));
        if (us) {
            size_t ul = strlen(us);
            if (ul <= 4096) unk = chars ? id_of(&m, (const uint8_t *)us, ul) : id_of(&m, buf, unbyte(inv, us, ul, buf));
        }
        ms_buf_puts(&ext, "{\"normalizer\":");
        write_json(&ext, &j, ms_json_get(&j, 0, "normalizer"), 0);
        ms_buf_puts(&ext, ",\"pre_tokenizer\":");
        write_json(&ext, &j, ms_json_get(&j, 0, "pre_tokenizer"), 0);
        ms_buf_puts(&ext, ",\"decoder\":");
        write_json(&ext, &j, ms_json_get(&j, 0, "decoder"), 0);
        ms_buf_printf(&ext, ",\"unk\":%lld,\"fuse_unk\":%s,\"byte_fallback\":%s}", (long long)unk, fuse ? "true" : "false", fb ? "true" : "false");
        if (ext.oom) { ms_buf_free(&ext); rc = ms_fail(err, MS_E_MEMORY, "tokenizer: out of memory"); goto done; }
    }
    put(&b, "MSBPE\0v1", 8);
    put32(&b, flags); put32(&b, pretok); put32(&b, (uint32_t)chat_kind(tpl)); put32(&b, (uint32_t)bos);
    put32(&b, n_vocab); put32(&b, n_merges); put32(&b, n_added); put32(&b, (uint32_t)ext.n);
    if (ext.n) put(&b, ext.p, ext.n);
    ms_buf_free(&ext);
    for (uint32_t i = 0; i < n_vocab; i++) { put32(&b, v[i].len); if (v[i].len) put(&b, v[i].raw, v[i].len); }
    uint32_t r = 0;
    for (int32_t e = n_merges ? j.nodes[merges].child : -1; e >= 0; e = j.nodes[e].next, r++) {
        const char *a = NULL, *bb = NULL;
        size_t la = 0, lb = 0;
        if (j.nodes[e].type == MS_JSTR) {
            const char *s = ms_json_str(&j, e), *sp = strchr(s, ' ');
            if (sp && sp != s && sp[1] && !strchr(sp + 1, ' ')) { a = s; la = (size_t)(sp - s); bb = sp + 1; lb = strlen(bb); }
        } else if (j.nodes[e].type == MS_JARR && j.nodes[e].count == 2) {
            int32_t x = j.nodes[e].child;
            a = ms_json_str(&j, x); bb = ms_json_str(&j, j.nodes[x].next);
            if (a && bb) { la = (size_t)j.nodes[x].len; lb = (size_t)j.nodes[j.nodes[x].next].len; }
        }
        if (!a || !bb || la > 2048 || lb > 2048) { rc = ms_fail(err, MS_E_TOKEN, "tokenizer.json: merge %u is malformed", r); goto done; }
        size_t ra = chars ? la : unbyte(inv, a, la, buf), rb = chars ? lb : unbyte(inv, bb, lb, buf + ra);
        if (chars) { memcpy(buf, a, la); memcpy(buf + la, bb, lb); }
        int ia = id_of(&m, buf, ra), ib = id_of(&m, buf + ra, rb), ic = id_of(&m, buf, ra + rb);
        if (ia < 0 || ib < 0 || ic < 0) { rc = ms_fail(err, MS_E_TOKEN, "tokenizer.json: merge %u (\"%.*s\" + \"%.*s\") uses a token that is not in the vocabulary", r, (int)la, a, (int)lb, bb); goto done; }
        put32(&b, (uint32_t)ia); put32(&b, (uint32_t)ib); put32(&b, (uint32_t)ic);
    }
    for (int32_t e = n_added ? j.nodes[added].child : -1; e >= 0; e = j.nodes[e].next) {
        const char *ct = ms_json_str(&j, ms_json_get(&j, e, "content"));
        if (!ct || !*ct || !ms_json_int(&j, ms_json_get(&j, e, "id"), 0, n_vocab - 1, &id)) { rc = ms_fail(err, MS_E_TOKEN, "tokenizer.json: an added token has no content or a bad id"); goto done; }
        int sp = 0, ls = 0, rs = 0, nz = 0;
        ms_json_bool(&j, ms_json_get(&j, e, "special"), &sp);
        /* such a token is matched in the normalized text by the Hugging Face library; the engine
         * matches added tokens in the raw text, which is the same unless Prepend/Replace rewrote it */
        if (rewrites && ms_json_bool(&j, ms_json_get(&j, e, "normalized"), &nz) && nz) {
            rc = ms_fail(err, MS_E_TOKEN, "tokenizer.json: added token \"%s\" has normalized: true under a Prepend/Replace normalizer (not supported)", ct);
            goto done;
        }
        ms_json_bool(&j, ms_json_get(&j, e, "lstrip"), &ls);
        ms_json_bool(&j, ms_json_get(&j, e, "rstrip"), &rs);
        put32(&b, (uint32_t)id); put32(&b, (uint32_t)(sp | ls << 1 | rs << 2)); put32(&b, (uint32_t)strlen(ct)); put(&b, ct, strlen(ct));
    }
    if (b.oom) { rc = ms_fail(err, MS_E_MEMORY, "tokenizer: out of memory"); goto done; }
    *out = b.p;
    *out_len = b.n;
    b.p = NULL;
    if (bos_out) *bos_out = bos;
done:
    if (v) for (uint32_t i = 0; i <= n_vocab; i++) free(v[i].raw);
    free(v); free(m.slot); free(buf); free(b.p);
    ms_json_free(&j);
    ms_json_free(&c);
    return rc;
}
