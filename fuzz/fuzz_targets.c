/* libFuzzer targets for every parser and text path, one binary per target (selected with
 * -DTARGET_xxx by build.sh fuzz). Each input must end in a typed error or a valid result: never
 * a crash, an out-of-bounds access, a leak or undefined behaviour (ASan + UBSan are on). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "../src/model/model.h"
#include "../src/io/llama2c_checkpoint.h"
#include "../src/io/hf_config.h"
#include "../src/io/safetensors.h"
#include "../src/tokenizer/tokenizer.h"
#include "../src/tokenizer/chat.h"
#include "../src/tokenizer/unicode.h"
#include "../src/util/json.h"

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);

#if defined(TARGET_json)
int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) {
    ms_json j;
    char e[160];
    if (!ms_json_parse(&j, (const char *)d, n, e, sizeof e)) ms_json_free(&j);
    return 0;
}
#elif defined(TARGET_manifest)
int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) {
    ms_err e;
    ms_model *m = ms_model_from_manifest((const char *)d, n, 0, &e);
    if (m) { ms_param_counts pc; ms_model_count(m, &pc); }
    ms_model_free(m);
    return 0;
}
#elif defined(TARGET_config)
int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) {
    ms_config c;
    ms_err e;
    if (!ms_config_from_text((const char *)d, n, &c, &e)) (void)ms_state_bytes(&c, 16, 4);
    return 0;
}
#elif defined(TARGET_safetensors)
int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) {
    ms_err e;
    uint64_t hl;
    if (n < 8 || ms_st_parse_len(d, n, &hl, "fuzz", &e)) return 0;
    ms_st_file f;
    if (!ms_st_parse((const char *)d + 8, hl, n, &f, "fuzz", &e)) ms_st_free(&f);
    return 0;
}
#elif defined(TARGET_llama2c_checkpoint)
/* the input is the checkpoint file, read through an in-memory ms_io */
typedef struct { const uint8_t *d; size_t n; } mem;
static int m_open(void *c, const char *name, int mode) { (void)c; (void)name; return mode == 'r' ? 0 : -1; }
static int m_close(void *c, int h) { (void)c; (void)h; return 0; }
static int64_t m_size(void *c, int h) { (void)h; return (int64_t)((mem *)c)->n; }
static int m_read(void *c, int h, uint64_t off, void *buf, size_t n) {
    mem *m = c;
    (void)h;
    if (off > m->n || n > m->n - off) return -1;
    memcpy(buf, m->d + off, n);
    return 0;
}
static int m_write(void *c, int h, const void *b, size_t n) { (void)c; (void)h; (void)b; (void)n; return -1; }
int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) {
    mem m = {d, n};
    ms_io io = {&m, m_open, m_close, m_size, m_read, m_write, NULL, NULL};
    ms_conv_plan p;
    ms_err e;
    if (!ms_plan_llama2c(&p, &io, "ckpt", NULL, &e)) {
        int ns;
        ms_conv_opts o = {.dtype = 0, .embed_dtype = -1, .shard_bytes = 1 << 20};
        (void)ms_plan_layout(&p, &o, &ns, &e);
        ms_plan_free(&p);
    }
    return 0;
}
#elif defined(TARGET_tokenizer_bin) || defined(TARGET_msbpe)
int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) {
    if (n < 2) return 0;
#ifdef TARGET_tokenizer_bin
    const char *kind = "llama2c";
    int vocab = 3 + d[0]; /* the manifest gives the count; let the input choose it */
#else
    const char *kind = "bpe-bytelevel";
    int vocab = 0;
#endif
    ms_err e;
    ms_tokenizer *t = ms_tokenizer_load(kind, d + 1, n - 1, vocab, &e);
    if (t) {
        int32_t ids[64];
        int k = 0;
        if (!ms_tokenizer_encode(t, "a b\xc3\xa9 12 <|x|>", 13, 1, ids, 64, &k, &e)) {
            char buf[4];
            const char *p;
            for (int i = 0; i < k; i++) (void)ms_tokenizer_piece(t, i ? ids[i - 1] : -1, ids[i], &p, buf);
        }
        char *s = ms_tokenizer_token_string(t, 0);
        free(s);
        ms_tokenizer_free(t);
    }
    return 0;
}
#elif defined(TARGET_tokenizer_json)
int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) {
    uint8_t *blob = NULL;
    size_t bl = 0;
    ms_err e;
    char *chat = NULL; /* the same bytes read as a tokenizer_config.json */
    if (!ms_chat_info_json((const char *)d, n, NULL, &chat, &e)) free(chat);
    if (!ms_bpe_import((const char *)d, n, NULL, 0, NULL, 0, &blob, &bl, NULL, &e)) {
        ms_tokenizer *t = ms_tokenizer_load("bpe-bytelevel", blob, bl, 0, &e);
        if (t) {
            int32_t ids[40];
            int k = 0;
            (void)ms_tokenizer_encode(t, "hello world 123", 15, 0, ids, 40, &k, &e);
            ms_tokenizer_free(t);
        }
    }
    free(blob);
    return 0;
}
#elif defined(TARGET_bpe_encode)
/* a fixed small byte-level tokenizer, arbitrary input bytes as text */
static ms_tokenizer *tok;
static const char TJ[] =
    "{\"model\": {\"type\": \"BPE\", \"vocab\": {VOCAB}, \"merges\": [[\"h\",\"e\"],[\"l\",\"l\"],[\"he\",\"ll\"],[\"\\u0120\",\"w\"]]},"
    " \"normalizer\": {\"type\": \"NFC\"}, \"decoder\": {\"type\": \"ByteLevel\"},"
    " \"pre_tokenizer\": {\"type\": \"Sequence\", \"pretokenizers\": [{\"type\": \"Split\", \"pattern\": {\"Regex\": \"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\\\r\\\\n\\\\p{L}\\\\p{N}]?[\\\\p{L}\\\\p{M}]+|\\\\p{N}| ?[^\\\\s\\\\p{L}\\\\p{M}\\\\p{N}]+[\\\\r\\\\n]*|\\\\s*[\\\\r\\\\n]+|\\\\s+(?!\\\\S)|\\\\s+\"}},"
    " {\"type\": \"ByteLevel\", \"use_regex\": false}]}, \"added_tokens\": [{\"id\": 260, \"content\": \"<|end|>\", \"special\": true}]}";
static void init(void) {
    ms_buf v = {0};
    ms_buf_puts(&v, "{");
    for (int b = 0; b < 256; b++) {
        unsigned char u[4];
        size_t l = ms_utf8_encode(ms_byte_to_unicode((uint8_t)b), u);
        char s[8] = {0};
        memcpy(s, u, l);
        ms_buf_printf(&v, "%s", b ? ", " : "");
        ms_buf_json_str(&v, s);
        ms_buf_printf(&v, ": %d", b);
    }
    ms_buf_puts(&v, ", \"he\": 256, \"ll\": 257, \"hell\": 258, \"\\u0120w\": 259}");
    ms_buf t = {0};
    const char *at = strstr(TJ, "{VOCAB}");
    char *pre = strndup(TJ, (size_t)(at - TJ));
    ms_buf_puts(&t, pre);
    ms_buf_puts(&t, v.p);
    ms_buf_puts(&t, at + 7);
    free(pre);
    uint8_t *blob;
    size_t bl;
    ms_err e;
    if (ms_bpe_import(t.p, t.n, NULL, 0, NULL, 0, &blob, &bl, NULL, &e)) abort();
    tok = ms_tokenizer_load("bpe-bytelevel", blob, bl, 0, &e);
    if (!tok) abort();
    free(blob);
    ms_buf_free(&v);
    ms_buf_free(&t);
}
int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) {
    if (!tok) init();
    size_t cap = ms_tokenizer_max_ids(n);
    int32_t *ids = malloc(cap * sizeof *ids);
    int k = 0;
    ms_err e;
    if (!ms_tokenizer_encode(tok, (const char *)d, n, 0, ids, (int)cap, &k, &e)) {
        /* decoding the ids gives back the text with each stretch between special tokens in NFC
         * (the special token is matched first, as in Hugging Face tokenizers: "<|end|>" + U+0338
         * stays two pieces although NFC of the whole would compose '>' + U+0338 into U+226F) */
        static const char sp[] = "<|end|>";
        const size_t sl = sizeof sp - 1;
        char *nfc = malloc(3 * n + 16);
        size_t nl = 0;
        for (size_t i = 0; i <= n;) {
            size_t j = i;
            while (j < n && !(n - j >= sl && !memcmp(d + j, sp, sl))) j++;
            size_t l;
            char *seg = ms_nfc((const char *)d + i, j - i, &l);
            if (!seg) abort();
            memcpy(nfc + nl, seg, l);
            nl += l;
            free(seg);
            if (j >= n) break;
            memcpy(nfc + nl, sp, sl);
            nl += sl;
            i = j + sl;
        }
        size_t o = 0;
        char *back = malloc(nl + 16);
        for (int i = 0; i < k; i++) {
            const char *p;
            char buf[4];
            size_t l = ms_tokenizer_piece(tok, -1, ids[i], &p, buf);
            if (o + l > nl) abort();
            memcpy(back + o, p, l);
            o += l;
        }
        if (o != nl || memcmp(back, nfc, nl)) abort();
        free(back);
        free(nfc);
    }
    free(ids);
    return 0;
}
#elif defined(TARGET_regex)
/* a pattern (up to the first NUL byte) and a subject (the rest, when it is UTF-8): every match
 * must lie inside the subject on character boundaries */
#include "../src/tokenizer/regex.h"
int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) {
    const uint8_t *z = memchr(d, 0, n);
    size_t pl = z ? (size_t)(z - d) : n;
    const char *subj = z ? (const char *)z + 1 : "";
    size_t sl = z ? n - pl - 1 : 0;
    ms_err e;
    ms_regex *re = ms_regex_compile((const char *)d, pl, &e);
    if (!re) return 0;
    if (ms_utf8_valid(subj, sl)) {
        size_t at = 0, ms, me;
        while (at <= sl && ms_regex_search(re, subj, sl, at, &ms, &me) > 0) {
            if (ms < at || me < ms || me > sl) abort();
            if ((ms < sl && (subj[ms] & 0xC0) == 0x80) || (me < sl && (subj[me] & 0xC0) == 0x80)) abort();
            at = me > ms ? me : ms + 1;
            while (at < sl && (subj[at] & 0xC0) == 0x80) at++;
        }
    }
    ms_regex_free(re);
    return 0;
}
#elif defined(TARGET_sp_encode)
/* a fixed small SentencePiece-style tokenizer (characters, byte fallback, Prepend/Replace
 * normalizers, a DeepSeek-like Split sequence, Strip decoder), arbitrary bytes as text; checks
 * decode(encode(x)) == x for UTF-8 text without U+2581 (which decodes to a space) */
static ms_tokenizer *tok;
static int has(const char *s, size_t n, const char *w, size_t wl) {
    for (size_t i = 0; i + wl <= n; i++) if (!memcmp(s + i, w, wl)) return 1;
    return 0;
}
static void init(void) {
    ms_buf b = {0};
    ms_buf_puts(&b, "{\"model\": {\"type\": \"BPE\", \"unk_token\": \"<unk>\", \"fuse_unk\": true, \"byte_fallback\": true, \"vocab\": {\"<unk>\": 0, \"<s>\": 1, \"</s>\": 2");
    for (int k = 0; k < 256; k++) ms_buf_printf(&b, ", \"<0x%02X>\": %d", k, 3 + k);
    ms_buf_puts(&b, ", \"\\u2581\": 259, \"a\": 260, \"b\": 261, \"\\u2581a\": 262, \"ab\": 263, \"\\u2581ab\": 264, \"1\": 265, \"\\u4e2d\": 266},"
                    " \"merges\": [\"\\u2581 a\", \"a b\", \"\\u2581a b\"]},"
                    " \"normalizer\": {\"type\": \"Sequence\", \"normalizers\": [{\"type\": \"Prepend\", \"prepend\": \"\\u2581\"},"
                    " {\"type\": \"Replace\", \"pattern\": {\"String\": \" \"}, \"content\": \"\\u2581\"}]},"
                    " \"pre_tokenizer\": {\"type\": \"Sequence\", \"pretokenizers\": ["
                    "{\"type\": \"Split\", \"pattern\": {\"Regex\": \"\\\\p{N}{1,3}\"}, \"behavior\": \"Isolated\", \"invert\": false},"
                    "{\"type\": \"Split\", \"pattern\": {\"Regex\": \"[\\u4e00-\\u9fa5]+\"}, \"behavior\": \"MergedWithNext\", \"invert\": false},"
                    "{\"type\": \"Split\", \"pattern\": {\"Regex\": \"(?i:'s|'t)|[^\\\\s\\\\p{L}]?\\\\p{L}+|\\\\s+(?!\\\\S)|\\\\s+|.\"}, \"behavior\": \"Removed\", \"invert\": true}]},"
                    " \"decoder\": {\"type\": \"Sequence\", \"decoders\": [{\"type\": \"Replace\", \"pattern\": {\"String\": \"\\u2581\"}, \"content\": \" \"},"
                    " {\"type\": \"ByteFallback\"}, {\"type\": \"Fuse\"}, {\"type\": \"Strip\", \"content\": \" \", \"start\": 1, \"stop\": 0}]},"
                    " \"added_tokens\": [{\"id\": 2, \"content\": \"</s>\", \"special\": true}]}");
    uint8_t *blob;
    size_t bl;
    ms_err e;
    if (b.oom || ms_bpe_import(b.p, b.n, NULL, 0, NULL, 0, &blob, &bl, NULL, &e)) abort();
    tok = ms_tokenizer_load("bpe-bytelevel", blob, bl, 0, &e);
    if (!tok) abort();
    free(blob);
    ms_buf_free(&b);
}
int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) {
    if (!tok) init();
    const char *s = (const char *)d;
    int cap = (int)ms_tokenizer_max_ids(n), k = 0;
    int32_t *ids = malloc((size_t)cap * 4);
    if (!ids) return 0;
    ms_err e;
    int rc = ms_tokenizer_encode(tok, s, n, 0, ids, cap, &k, &e);
    if (ms_utf8_valid(s, n) != (rc == 0)) abort(); /* valid UTF-8 always encodes (these patterns never exhaust the step budget) */
    /* the last Split keeps every character (its pattern ends in '.', and \s+ takes newlines), so
     * without U+2581 (read back as a space) and </s> (after which Prepend adds a space) the text
     * comes back exactly: the one ▁ prepended is stripped by the decoder */
    if (!rc && !has(s, n, "\xe2\x96\x81", 3) && !has(s, n, "</s>", 4)) {
        char *back = malloc(n + 16);
        size_t o = 0;
        if (!back) abort();
        for (int i = 0; i < k; i++) {
            const char *p;
            char buf[4];
            size_t l = ms_tokenizer_piece(tok, i ? ids[i - 1] : -1, ids[i], &p, buf);
            if (o + l > n) abort();
            memcpy(back + o, p, l);
            o += l;
        }
        if (o != n || memcmp(back, s, n)) abort();
        free(back);
    }
    free(ids);
    return 0;
}
#elif defined(TARGET_chat)
int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) {
    if (n < 1) return 0;
    char *out = NULL;
    size_t len;
    ms_err e;
    if (!ms_chat_render(d[0] % 4, (const char *)d + 1, n - 1, d[0] & 4, (d[0] >> 3) % 3 - 1, &out, &len, &e)) free(out);
    return 0;
}
#else
#error "define TARGET_<name>"
#endif
