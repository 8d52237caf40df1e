#include "check.h"
#include "../../src/util/json.h"
#include "../../src/util/sha256.h"
#include "../../src/kernels/quant.h"
#include "../../src/kernels/kernels.h"
#include "../../src/stats/stats.h"
#include "../../src/engine/sample.h"
#include <stdlib.h>
#include <string.h>

static void sha(const char *in, const char *want) {
    ms_sha256 s;
    uint8_t d[32];
    char hex[65];
    ms_sha256_init(&s);
    for (size_t i = 0; i < strlen(in); i++) ms_sha256_update(&s, in + i, 1); /* byte by byte: exercises buffering */
    ms_sha256_final(&s, d);
    ms_sha256_hex(d, hex);
    CHECK(strcmp(hex, want) == 0, "sha256(%s) = %s", in, hex);
}

static void json_cases(void) {
    ms_json j;
    char e[160];
    const char *good = "{\"a\": [1, 2.5e3, -0.25, true, null, \"x\\u00e9\\ud83d\\ude00\\n\"], \"b\": {}, \"a2\": 9007199254740992}";
    CHECK(ms_json_parse(&j, good, strlen(good), e, sizeof e) == 0, "parse: %s", e);
    int32_t a = ms_json_get(&j, 0, "a");
    CHECK(a >= 0 && j.nodes[a].count == 6, "array count");
    int32_t s = j.nodes[a].child;
    for (int i = 0; i < 5; i++) s = j.nodes[s].next;
    CHECK(strcmp(ms_json_str(&j, s), "x\xc3\xa9\xf0\x9f\x98\x80\n") == 0, "unicode escapes");
    int64_t v;
    CHECK(!ms_json_int(&j, j.nodes[j.nodes[a].child].next, 0, 100, &v), "2.5e3 outside [0,100]");
    ms_json_free(&j);
    const char *bad[] = {"", "{", "[1,]", "{\"a\" 1}", "01", "1.", "\"\\ud800\"", "\"\x01\"", "[1] x", "\"\xff\"", "{\"a\":tru}", "-", "1e"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        CHECK(ms_json_parse(&j, bad[i], strlen(bad[i]), e, sizeof e) != 0, "bad json %zu accepted", i);
    /* depth limit */
    char deep[200];
    memset(deep, '[', 100);
    memset(deep + 100, ']', 100);
    CHECK(ms_json_parse(&j, deep, 200, e, sizeof e) != 0 && strstr(e, "deep"), "depth limit: %s", e);
}

static void quant_cases(void) {
    float x[96], y[96];
    for (int i = 0; i < 96; i++) x[i] = sinf((float)i * 0.7f) * (i % 7 == 0 ? 3.0f : 1.0f);
    ms_block_q8_0 q8[3];
    ms_quantize_row_q8_0(x, q8, 96);
    ms_dequantize_row_q8_0(q8, y, 96);
    float m8 = 0;
    for (int i = 0; i < 96; i++) m8 = fmaxf(m8, fabsf(x[i] - y[i]));
    CHECK(m8 <= 3.0f / 127 / 2 + 1e-6f, "q8 round trip error %g", m8);
    ms_block_q4_0 q4[3];
    ms_quantize_row_q4_0(x, q4, 96);
    ms_dequantize_row_q4_0(q4, y, 96);
    float m4 = 0;
    for (int i = 0; i < 96; i++) m4 = fmaxf(m4, fabsf(x[i] - y[i]));
    CHECK(m4 <= 3.0f / 8 / 2 + 1e-6f, "q4 round trip error %g", m4);
    /* f16 / bf16 */
    float vals[] = {0, -0.0f, 1, -2.5f, 65504, 6.1035156e-05f, 5.9604645e-08f, 1e-9f, 3.14159f};
    for (size_t i = 0; i < sizeof vals / sizeof *vals; i++) {
        float h = ms_f16_to_f32(ms_f32_to_f16(vals[i]));
        CHECK(fabsf(h - vals[i]) <= fabsf(vals[i]) * 1e-3f + 6e-8f, "f16(%g) = %g", vals[i], h);
        float b = ms_bf16_to_f32(ms_f32_to_bf16(vals[i]));
        CHECK(fabsf(b - vals[i]) <= fabsf(vals[i]) * 8e-3f, "bf16(%g) = %g", vals[i], b);
    }
    CHECK(isinf(ms_f16_to_f32(ms_f32_to_f16(1e6f))), "f16 overflow -> inf");
    /* every generic matmul agrees with the f32 one on its own dequantized weights */
    enum { R = 5, C = 64, T = 3 };
    float W[R * C], X[T * C], Yr[T * R], Yq[T * R], Wd[R * C];
    for (int i = 0; i < R * C; i++) W[i] = cosf((float)i * 1.3f);
    for (int i = 0; i < T * C; i++) X[i] = sinf((float)i * 0.31f);
    ms_block_q8_0 Wq[R * C / 32];
    for (int r = 0; r < R; r++) ms_quantize_row_q8_0(W + r * C, Wq + r * 2, C);
    for (int r = 0; r < R; r++) ms_dequantize_row_q8_0(Wq + r * 2, Wd + r * C, C);
    ms_matmul_f32_generic(Wd, R, C, X, T, Yr);
    ms_matmul_q8_0_generic(Wq, R, C, X, T, Yq);
    for (int i = 0; i < T * R; i++) CHECK(fabsf(Yr[i] - Yq[i]) < 1e-4f, "q8 matmul %d: %g vs %g", i, Yr[i], Yq[i]);
}

static void topk_cases(void) {
    float x[] = {0.5f, -3, 2, 3, -0.1f, 2};
    int32_t idx[3];
    float val[3];
    ms_topk_abs(x, 6, 3, idx, val);
    CHECK(idx[0] == 1 && idx[1] == 3 && idx[2] == 2 && val[0] == -3, "topk by |x|, ties by index: %d %d %d", idx[0], idx[1], idx[2]);
}

static void sample_cases(void) {
    float logits[5] = {1, 3, 2, 3.5f, -1}, scratch[10], lp;
    uint64_t r = ms_rng_seed(7);
    CHECK(ms_sample(logits, 5, 0, 0, 1, &r, &lp, scratch) == 3, "greedy picks argmax");
    int counts[5] = {0};
    for (int i = 0; i < 4000; i++) counts[ms_sample(logits, 5, 1.0f, 2, 1.0f, &r, &lp, scratch)]++;
    CHECK(counts[0] == 0 && counts[2] == 0 && counts[4] == 0 && counts[1] > 1000 && counts[3] > 1800, "top-k=2 keeps ids 1 and 3: %d %d", counts[1], counts[3]);
    uint64_t a = ms_rng_seed(5), b = ms_rng_seed(5);
    int same = 1;
    for (int i = 0; i < 50; i++) same &= ms_sample(logits, 5, 0.8f, 0, 0.9f, &a, &lp, scratch) == ms_sample(logits, 5, 0.8f, 0, 0.9f, &b, &lp, scratch);
    CHECK(same, "same seed, same samples");
}

void test_units(const ms_t_env *env) {
    (void)env;
    sha("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    sha("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    sha("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    json_cases();
    quant_cases();
    topk_cases();
    sample_cases();
}
