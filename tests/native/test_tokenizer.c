/* The tokenizer's regex engine and general pipeline (SentencePiece-style BPE, Split behaviors)
 * on small synthetic files, under the sanitizers: matches, refusals with their offsets, long
 * inputs that must not recurse per character, and every truncation of a converted file. */
#include "check.h"
#include <stdlib.h>
#include <string.h>
#include "../../src/tokenizer/regex.h"
#include "../../src/tokenizer/tokenizer.h"
#include "../../src/util/json.h"

/* all matches of pat in s, as "a|b|c" */
static void matches(const char *pat, const char *s, const char *want) {
    ms_err e = {0};
    ms_regex *re = ms_regex_compile(pat, strlen(pat), &e);
    CHECK(re != NULL, "compile %s: %s", pat, e.msg);
    if (!re) return;
    char got[256] = "";
    size_t n = strlen(s), at = 0, ms, me, o = 0;
    while (at <= n && ms_regex_search(re, s, n, at, &ms, &me) > 0) {
        o += (size_t)snprintf(got + o, sizeof got - o, "%s%.*s", o ? "|" : "", (int)(me - ms), s + ms);
        at = me > ms ? me : ms + 1;
        if (o >= sizeof got - 1) break;
    }
    CHECK(!strcmp(got, want), "/%s/ on \"%s\": got \"%s\", want \"%s\"", pat, s, got, want);
    ms_regex_free(re);
}

static void refused(const char *pat, const char *want) {
    ms_err e = {0};
    ms_regex *re = ms_regex_compile(pat, strlen(pat), &e);
    CHECK(!re && e.code == MS_E_TOKEN && strstr(e.msg, want), "/%s/: want an error with \"%s\", got %s", pat, want, re ? "a regex" : e.msg);
    ms_regex_free(re);
}

static void test_regex(void) {
    matches("\\p{N}{1,3}", "a12345b6", "123|45|6");
    matches("(?i:'s|'t|'re)", "IT'S we'RE x'T", "'S|'RE|'T");
    matches("\\s+(?!\\S)|\\s+", "a   b ", "  | | ");
    matches("[^\\r\\n\\p{L}\\p{N}]?\\p{L}+", "hi, there", "hi| there");
    matches("[\\p{Lu}]+[\\p{Ll}]*", "ABCdef GHi", "ABCdef|GHi");
    matches("[一-龥぀-ゟ]+", "ab漢字かなcd", "漢字かな");
    matches("\\P{L}+", "ab12!c", "12!");
    matches("x(?=y)|z", "xyxzz", "x|z|z");
    matches("^a|b$", "aab", "a|b");
    matches("[\\x41-\\x43\\u00e9]+", "ABCDé", "ABC|é");
    matches("a{2,}", "a aa aaa", "aa|aaa");
    matches("[^a]", "aéa", "é");
    matches("(?:ab)?c", "abc c", "abc|c");
    refused("\\d", "unsupported escape \\d at offset 0");
    refused("ab(?<=b)", "unsupported group kind (lookbehind, named group or inline flag) at offset 2");
    refused("a+?", "lazy or possessive quantifier at offset 2");
    refused("(ab)*", "repeated group (only ? may follow a group) at offset 4");
    refused("[a-", "unterminated character class at offset 0");
    refused("(a", "unclosed group at offset 0");
    refused("a)", "unmatched ')' at offset 1");
    refused("*", "nothing to repeat at offset 0");
    refused("\\p{Xx}", "unsupported Unicode class");
    refused("[z-a]", "range out of order at offset 2");
    char deep[80] = "";
    for (int k = 0; k < 34; k++) strcat(deep, "(");
    refused(deep, "nested too deeply");
    /* long runs: counted in a loop, not by recursion (1 MB of spaces) */
    size_t n = 1 << 20;
    char *big = malloc(n + 2);
    CHECK(big != NULL, "malloc");
    if (!big) return;
    memset(big, ' ', n);
    big[n] = 'x';
    big[n + 1] = 0;
    ms_err e = {0};
    const char *pat = "\\s+(?!\\S)|\\s+";
    ms_regex *re = ms_regex_compile(pat, strlen(pat), &e);
    size_t ms = 0, me = 0;
    CHECK(re && ms_regex_search(re, big, n + 1, 0, &ms, &me) == 1 && ms == 0 && me == n - 1, "long run: [%zu, %zu)", ms, me);
    ms_regex_free(re);
    /* exponential backtracking ends in -1 (the step budget), not in a hang */
    const char *evil = "(?:a?)(?:a?)(?:a?)(?:a?)(?:a?)(?:a?)(?:a?)(?:a?)(?:a?)(?:a?)(?:a?)(?:a?)(?:a?)(?:a?)(?:a?)(?:a?)(?:a?)(?:a?)(?:a?)(?:a?)(?:a?)(?:a?)(?:a?)(?:a?)"
                       "aaaaaaaaaaaaaaaaaaaaaaaab";
    re = ms_regex_compile(evil, strlen(evil), &e);
    CHECK(re && ms_regex_search(re, "aaaaaaaaaaaaaaaaaaaaaaaa", 24, 0, &ms, &me) == -1, "exponential pattern: not cut off");
    ms_regex_free(re);
    /* the pattern size is bounded (so is the matcher's recursion) */
    char *long_pat = malloc(2 * 5000 + 1);
    if (long_pat) {
        for (int k = 0; k < 5000; k++) memcpy(long_pat + 2 * k, "a?", 2);
        long_pat[10000] = 0;
        re = ms_regex_compile(long_pat, 10000, &e);
        CHECK(!re && strstr(e.msg, "more than 4096 items"), "a 5000-item pattern: %s", re ? "compiled" : e.msg);
        ms_regex_free(re);
        free(long_pat);
    }
    free(big);
}

/* a tiny SentencePiece-style tokenizer.json: ▁ words, byte fallback, a Strip decoder */
static char *sp_json(int byte_fallback, const char *pre) {
    ms_buf b = {0};
    ms_buf_puts(&b, "{\"model\": {\"type\": \"BPE\", \"unk_token\": \"<unk>\", \"fuse_unk\": true, \"byte_fallback\": ");
    ms_buf_puts(&b, byte_fallback ? "true" : "false");
    ms_buf_puts(&b, ", \"vocab\": {\"<unk>\": 0, \"<s>\": 1, \"</s>\": 2");
    for (int k = 0; k < 256; k++) ms_buf_printf(&b, ", \"<0x%02X>\": %d", k, 3 + k);
    ms_buf_puts(&b, ", \"\\u2581\": 259, \"a\": 260, \"b\": 261, \"\\u2581a\": 262, \"ab\": 263, \"\\u2581ab\": 264, \"c\": 265},"
                    " \"merges\": [\"\\u2581 a\", \"a b\", \"\\u2581a b\"]},"
                    " \"normalizer\": {\"type\": \"Sequence\", \"normalizers\": [{\"type\": \"Prepend\", \"prepend\": \"\\u2581\"},"
                    " {\"type\": \"Replace\", \"pattern\": {\"String\": \" \"}, \"content\": \"\\u2581\"}]},"
                    " \"pre_tokenizer\": ");
    ms_buf_puts(&b, pre);
    ms_buf_puts(&b, ", \"decoder\": {\"type\": \"Sequence\", \"decoders\": [{\"type\": \"Replace\", \"pattern\": {\"String\": \"\\u2581\"}, \"content\": \" \"},"
                    " {\"type\": \"ByteFallback\"}, {\"type\": \"Fuse\"}, {\"type\": \"Strip\", \"content\": \" \", \"start\": 1, \"stop\": 0}]},"
                    " \"added_tokens\": [{\"id\": 2, \"content\": \"</s>\", \"special\": true}]}");
    return b.p;
}

static ms_tokenizer *import(const char *json, uint8_t **bin, size_t *bl) {
    ms_err e = {0};
    *bin = NULL;
    if (ms_bpe_import(json, strlen(json), NULL, 0, NULL, 0, bin, bl, NULL, &e)) { CHECK(0, "import: %s", e.msg); return NULL; }
    ms_tokenizer *t = ms_tokenizer_load("bpe-bytelevel", *bin, *bl, 0, &e);
    CHECK(t != NULL, "load: %s", e.msg);
    return t;
}

static void encodes(ms_tokenizer *t, const char *text, const int32_t *want, int nw, const char *back) {
    int32_t ids[64];
    int k = 0;
    ms_err e = {0};
    int rc = ms_tokenizer_encode(t, text, strlen(text), 0, ids, 64, &k, &e);
    CHECK(rc == 0, "encode %s: %s", text, e.msg);
    int same = k == nw;
    for (int i = 0; same && i < k; i++) same = ids[i] == want[i];
    CHECK(same, "encode \"%s\": %d ids, first %d", text, k, k ? ids[0] : -1);
    char out[128];
    size_t o = 0;
    for (int i = 0; i < k; i++) {
        const char *p;
        char buf[8];
        size_t l = ms_tokenizer_piece(t, i ? ids[i - 1] : -1, ids[i], &p, buf);
        if (o + l < sizeof out) { memcpy(out + o, p, l); o += l; }
    }
    out[o] = 0;
    CHECK(!strcmp(out, back), "decode of \"%s\": \"%s\"", text, out);
}

static void test_sentencepiece(void) {
    uint8_t *bin;
    size_t bl;
    char *j = sp_json(1, "null");
    ms_tokenizer *t = import(j, &bin, &bl);
    if (t) {
        encodes(t, "ab c", (const int32_t[]){264, 259, 265}, 3, "ab c");
        encodes(t, "\xc3\xa9", (const int32_t[]){259, 3 + 0xC3, 3 + 0xA9}, 3, "\xc3\xa9"); /* é: byte fallback */
        encodes(t, "a</s>b", (const int32_t[]){262, 2, 259, 261}, 4, "a</s> b");         /* Prepend per segment */
        char *s = ms_tokenizer_token_string(t, 262);
        CHECK(s && !strcmp(s, "\xe2\x96\x81" "a"), "token string: %s", s ? s : "(null)");
        free(s);
        CHECK(ms_tokenizer_token_id(t, "\xe2\x96\x81" "ab", 5) == 264, "token id of ▁ab");
        /* every truncation of the converted file is refused cleanly */
        int clean = 1;
        for (size_t cut = 0; cut < bl; cut += (cut < 200 ? 1 : 97)) {
            ms_err e = {0};
            ms_tokenizer *u = ms_tokenizer_load("bpe-bytelevel", bin, cut, 0, &e);
            if (u || e.code != MS_E_TOKEN) clean = 0;
            ms_tokenizer_free(u);
        }
        CHECK(clean, "a truncated file loads or fails with another code");
        ms_tokenizer_free(t);
    }
    free(bin);
    free(j);
    /* no byte fallback: unknown characters are <unk>, a run of them one <unk> (fuse_unk) */
    j = sp_json(0, "null");
    t = import(j, &bin, &bl);
    if (t) {
        encodes(t, "\xc3\xa9\xc3\xa9", (const int32_t[]){259, 0}, 2, "<unk>");
        ms_tokenizer_free(t);
    }
    free(bin);
    free(j);
    /* a Split pre-tokenizer on characters: "ab" and "c" never merge across the cut */
    j = sp_json(1, "{\"type\": \"Split\", \"pattern\": {\"Regex\": \"b\"}, \"behavior\": \"MergedWithNext\", \"invert\": false}");
    t = import(j, &bin, &bl);
    if (t) {
        encodes(t, "ab", (const int32_t[]){262, 261}, 2, "ab");
        int32_t ends[8];
        int np = ms_tokenizer_pretokenize(t, "abab", 4, ends, 8);
        CHECK(np == 3 && ends[0] == 1 && ends[1] == 3 && ends[2] == 4, "pieces of abab (a, ba, b): %d", np);
        ms_tokenizer_free(t);
    }
    free(bin);
    free(j);
}

static void test_refusals(void) {
    const char *cases[][2] = {
        {"{\"model\": {\"type\": \"Unigram\", \"vocab\": []}}", "model.type \"Unigram\" is not supported"},
        {"{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0}, \"merges\": []}, \"pre_tokenizer\": {\"type\": \"Split\", \"pattern\": {\"Regex\": \"a|\\\\b\"}, \"behavior\": \"Isolated\"}}",
         "unsupported escape \\b at offset 2"},
        {"{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0}, \"merges\": []}, \"normalizer\": {\"type\": \"Lowercase\"}}", "normalizer \"Lowercase\" is not supported"},
        {"{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0}, \"merges\": []}, \"decoder\": {\"type\": \"CTC\"}}", "decoder \"CTC\" is not supported"},
        {"{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0}, \"merges\": []}, \"pre_tokenizer\": {\"type\": \"Sequence\", \"pretokenizers\": "
         "[{\"type\": \"ByteLevel\", \"use_regex\": false}, {\"type\": \"Split\", \"pattern\": {\"String\": \"a\"}, \"behavior\": \"Isolated\"}]}, \"decoder\": {\"type\": \"ByteLevel\"}}",
         "ByteLevel must come last"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        uint8_t *bin = NULL;
        size_t bl;
        ms_err e = {0};
        int rc = ms_bpe_import(cases[k][0], strlen(cases[k][0]), NULL, 0, NULL, 0, &bin, &bl, NULL, &e);
        CHECK(rc == MS_E_TOKEN && strstr(e.msg, cases[k][1]), "case %zu: want \"%s\", got %d %s", k, cases[k][1], rc, e.msg);
        free(bin);
    }
}

void test_tokenizer(const ms_t_env *env) {
    (void)env;
    test_regex();
    test_sentencepiece();
    test_refusals();
}
