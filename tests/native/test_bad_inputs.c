/* Bad inputs give typed errors natively (and, under ASan/UBSan, without a report). */
#include "check.h"
#include "../../tools/native_host.h"
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int write_file(const char *path, const void *d, size_t n) {
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    size_t w = fwrite(d, 1, n, f);
    fclose(f);
    return w == n ? 0 : -1;
}

/* manifest text with the first occurrence of `from` replaced by `to` */
static int manifest_variant(const char *good, const char *from, const char *to, const char *path) {
    const char *at = strstr(good, from);
    if (!at) return -1;
    size_t n = strlen(good) - strlen(from) + strlen(to);
    char *s = malloc(n + 1);
    size_t pre = (size_t)(at - good);
    memcpy(s, good, pre);
    strcpy(s + pre, to);
    strcat(s, at + strlen(from));
    int rc = write_file(path, s, n);
    free(s);
    return rc;
}

void test_bad_inputs(const ms_t_env *env) {
    char ck[600], tk[600], dir[600], path[700];
    snprintf(ck, sizeof ck, "%s/stories260K/stories260K.bin", env->shared);
    snprintf(tk, sizeof tk, "%s/stories260K/tok512.bin", env->shared);
    ms_err e = {0};
    size_t n;
    uint8_t *ckb = ms_read_file(ck, &n, &e);
    if (!ckb) { CHECK(0, "cannot read %s", ck); return; }

    /* truncated checkpoint */
    snprintf(path, sizeof path, "%s/trunc.bin", env->tmp);
    write_file(path, ckb, n - 100);
    snprintf(dir, sizeof dir, "%s/bad-out", env->tmp);
    ms_err_clear(&e);
    CHECK(ms_native_convert_llama2c(path, tk, dir, &e) == MS_E_CHECKPOINT && strstr(e.msg, "truncated"), "truncated checkpoint: %s", e.msg);
    /* header too short */
    write_file(path, ckb, 10);
    ms_err_clear(&e);
    CHECK(ms_native_convert_llama2c(path, tk, dir, &e) == MS_E_CHECKPOINT, "short header: %s", e.msg);
    /* impossible header (heads do not divide dim) */
    uint8_t *hb = malloc(n);
    memcpy(hb, ckb, n);
    int32_t bad_heads = 7;
    memcpy(hb + 12, &bad_heads, 4);
    write_file(path, hb, n);
    ms_err_clear(&e);
    CHECK(ms_native_convert_llama2c(path, tk, dir, &e) == MS_E_CHECKPOINT && strstr(e.msg, "impossible"), "bad header: %s", e.msg);
    /* NaN weight */
    memcpy(hb, ckb, n);
    uint32_t nanbits = 0x7FC00000u;
    memcpy(hb + 28 + 4 * 1000, &nanbits, 4);
    write_file(path, hb, n);
    ms_err_clear(&e);
    CHECK(ms_native_convert_llama2c(path, tk, dir, &e) == MS_E_TENSOR && strstr(e.msg, "embed_tokens"), "NaN weight: %s", e.msg);
    free(hb);
    /* truncated tokenizer */
    size_t tn;
    uint8_t *tkb = ms_read_file(tk, &tn, &e);
    snprintf(path, sizeof path, "%s/tok-trunc.bin", env->tmp);
    write_file(path, tkb, tn - 3);
    ms_err_clear(&e);
    CHECK(ms_native_convert_llama2c(ck, path, dir, &e) == MS_E_TOKEN, "truncated tokenizer: %s", e.msg);
    free(tkb);

    /* a good weight set, then broken manifests */
    snprintf(dir, sizeof dir, "%s/good", env->tmp);
    ms_err_clear(&e);
    CHECK(ms_native_convert_llama2c(ck, tk, dir, &e) == 0, "good convert: %s", e.msg);
    snprintf(path, sizeof path, "%s/manifest.json", dir);
    size_t ml;
    char *good = (char *)ms_read_file(path, &ml, &e);
    if (!good) { CHECK(0, "no good manifest to break: %s", e.msg); free(ckb); return; }
    struct { const char *from, *to; int code; const char *what; } cases[] = {
        {"\"name\": \"layers.2.mlp.up_proj\"", "\"name\": \"layers.2.mlp.up_projX\"", MS_E_TENSOR, "unknown tensor"},
        {"\"shape\": [172, 64]", "\"shape\": [172, 65]", MS_E_TENSOR, "shape mismatch"},
        {"\"dtype\": \"f32\"", "\"dtype\": \"f33\"", MS_E_TENSOR, "unknown dtype"},
        {"\"format\": \"mlpscope-weights\"", "\"format\": \"other\"", MS_E_MANIFEST, "wrong format"},
        {"\"version\": 1", "\"version\": 2", MS_E_MANIFEST, "future version"},
        {"\"family\": \"llama\"", "\"family\": \"gpt\"", MS_E_CONFIG, "unknown family"},
        {"\"num_attention_heads\": 8", "\"num_attention_heads\": 3", MS_E_CONFIG, "heads"},
        {"\"offset\": 0,", "\"offset\": 64,", MS_E_TENSOR, "overlap"},
        {"\"offset\": 0,", "\"offset\": 3,", MS_E_TENSOR, "misaligned offset"},
        {"\"offset\": 0,", "\"offset\": 1099511627776,", MS_E_TENSOR, "offset out of shard"},
        {"\"shard\": 0", "\"shard\": 1", MS_E_TENSOR, "shard index"},
        {"\"hidden_size\": 64", "\"hidden_size\": -64", MS_E_CONFIG, "negative dim"},
        {"\"file\": \"model-00001-of-00001.bin\"", "\"file\": \"../etc/passwd\"", MS_E_MANIFEST, "path in shard name"},
        {"{", "[", MS_E_MANIFEST, "not JSON"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        char d2[700];
        snprintf(d2, sizeof d2, "%s/badman-%zu", env->tmp, k);
        mkdir(d2, 0755);
        char p2[800];
        snprintf(p2, sizeof p2, "%s/manifest.json", d2);
        CHECK(manifest_variant(good, cases[k].from, cases[k].to, p2) == 0, "variant %s", cases[k].what);
        ms_err_clear(&e);
        ms_model *m = ms_model_from_manifest(NULL, 0, 0, &e); /* NULL text is an empty manifest */
        ms_model_free(m);
        size_t l2;
        char *t2 = (char *)ms_read_file(p2, &l2, &e);
        ms_err_clear(&e);
        m = ms_model_from_manifest(t2, l2, 0, &e);
        CHECK(!m && e.code == cases[k].code, "%s: expected %s, got %s (%s)", cases[k].what, ms_code_name(cases[k].code), ms_code_name(e.code), e.msg);
        ms_model_free(m);
        free(t2);
    }
    /* a tensor missing: drop one entry */
    {
        char *s = strdup(good);
        char *at = strstr(s, "{\"name\": \"layers.0.input_layernorm\"");
        char *end = strchr(at, '}');
        memmove(at, end + 2, strlen(end + 2) + 1); /* also eats the comma+newline */
        ms_err_clear(&e);
        ms_model *m = ms_model_from_manifest(s, strlen(s), 0, &e);
        CHECK(!m && e.code == MS_E_TENSOR && strstr(e.msg, "layers.0.input_layernorm: missing"), "missing tensor: %s", e.msg);
        free(s);
    }
    /* shard corrupted / wrong size */
    snprintf(path, sizeof path, "%s/model-00001-of-00001.bin", dir);
    uint8_t *sb = ms_read_file(path, &n, &e);
    sb[5000] ^= 1;
    write_file(path, sb, n);
    ms_err_clear(&e);
    ms_model *m = ms_load_weightset(dir, NULL, &e);
    CHECK(!m && e.code == MS_E_SHARD_HASH, "flipped byte: %s", e.msg);
    sb[5000] ^= 1;
    write_file(path, sb, n - 64);
    ms_err_clear(&e);
    m = ms_load_weightset(dir, NULL, &e);
    CHECK(!m && e.code == MS_E_SHARD_SIZE, "short shard: %s", e.msg);
    write_file(path, sb, n);
    free(sb);

    /* runtime: token out of range, context overflow, empty input */
    ms_err_clear(&e);
    m = ms_load_weightset(dir, NULL, &e);
    CHECK(m != NULL, "reload: %s", e.msg);
    if (m) {
        ms_state *s = ms_state_create(m, 16, 8, &e);
        int32_t ids[20] = {1, 2, 3};
        int32_t bad = 512;
        ms_err_clear(&e);
        CHECK(ms_forward(s, &bad, 1, NULL, &e) == MS_E_TOKEN, "token out of range: %s", e.msg);
        bad = -1;
        CHECK(ms_forward(s, &bad, 1, NULL, &e) == MS_E_TOKEN, "negative token: %s", e.msg);
        CHECK(ms_forward(s, ids, 0, NULL, &e) == MS_E_ARG, "empty input: %s", e.msg);
        CHECK(ms_forward(s, ids, 17, NULL, &e) == MS_E_CONTEXT, "context overflow: %s", e.msg);
        CHECK(ms_forward(s, ids, 16, NULL, &e) == MS_OK, "full context: %s", e.msg);
        CHECK(ms_forward(s, ids, 1, NULL, &e) == MS_E_CONTEXT, "one past the end: %s", e.msg);
        ms_state *s2 = ms_state_create(m, 100000, 8, &e);
        CHECK(!s2 && e.code == MS_E_CONTEXT, "context beyond max_position_embeddings: %s", e.msg);
        ms_state_free(s);
        ms_model_free(m);
    }
    free(good);
    free(ckb);
}
