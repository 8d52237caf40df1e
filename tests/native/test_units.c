#include "check.h"
#include "../../src/util/json.h"
#include "../../src/util/sha256.h"
#include "../../src/kernels/quant.h"
#include "../../src/kernels/kernels.h"
#include "../../src/model/hooks.h"
#include "../../src/engine/sample.h"
#include <math.h>
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
    ms_gemm_f32w_f32a_generic(Wd, R, C, X, T, Yr);
    ms_gemm_q8_0w_f32a_generic(Wq, R, C, X, T, Yq);
    for (int i = 0; i < T * R; i++) CHECK(fabsf(Yr[i] - Yq[i]) < 1e-4f, "q8 matmul %d: %g vs %g", i, Yr[i], Yq[i]);
}

static void topk_cases(void) {
    float x[] = {0.5f, -3, 2, 3, -0.1f, 2};
    int32_t idx[3];
    float val[3];
    ms_topk_abs(x, 6, 3, idx, val);
    CHECK(idx[0] == 1 && idx[1] == 3 && idx[2] == 2 && val[0] == -3, "topk by |x|, ties by index: %d %d %d", idx[0], idx[1], idx[2]);
}

/* The sampler against a plain reference: the whole vocabulary sorted (highest logit first, ties
 * by id), top-k cut, then the smallest prefix holding top_p of the mass, then one uniform draw
 * from the same xorshift64* stream. Picks must agree exactly, including nuclei of thousands of
 * tokens (the sampler only sorts the tokens that can be in the nucleus). With nothing cut, the
 * draw walks the vocabulary in id order. */
typedef struct { float l, p; int id; } ref_cand;
static int ref_cmp(const void *x, const void *y) {
    const ref_cand *a = x, *b = y;
    return a->l > b->l ? -1 : a->l < b->l ? 1 : a->id - b->id;
}
static float ref_rng(uint64_t *s) {
    *s ^= *s >> 12; *s ^= *s << 25; *s ^= *s >> 27;
    return (float)((*s * 0x2545F4914F6CDD1Dull) >> 40) / 16777216.0f;
}
static int ref_sample(const float *l, int n, float T, int top_k, float top_p, uint64_t *rng, ref_cand *c, int *nucleus) {
    int best = 0;
    for (int i = 1; i < n; i++) if (l[i] > l[best]) best = i;
    double z = 0;
    for (int i = 0; i < n; i++) { c[i] = (ref_cand){l[i], expf((l[i] - l[best]) * (1.0f / T)), i}; z += c[i].p; }
    qsort(c, (size_t)n, sizeof *c, ref_cmp);
    int m = top_k > 0 && top_k < n ? top_k : n;
    double sum = 0;
    for (int a = 0; a < m; a++) sum += c[a].p;
    if (top_k <= 0 || top_k >= n) sum = z;
    if (top_p < 1) {
        double acc = 0;
        for (int a = 0; a < m; a++) { acc += c[a].p; if (acc >= top_p * sum) { m = a + 1; break; } }
        sum = 0;
        for (int a = 0; a < m; a++) sum += c[a].p;
    }
    *nucleus = m;
    double r = ref_rng(rng) * sum, acc = 0;
    if (m == n) { /* nothing cut: the draw walks the vocabulary in id order */
        for (int i = 0; i < n; i++) { acc += expf((l[i] - l[best]) * (1.0f / T)); if (r < acc) return i; }
        return best;
    }
    for (int a = 0; a < m; a++) { acc += c[a].p; if (r < acc) return c[a].id; }
    return c[m - 1].id;
}

static void sample_vs_reference(void) {
    enum { N = 6000 };
    float *l = malloc(N * sizeof *l), *scratch = malloc(2 * N * sizeof *scratch);
    ref_cand *c = malloc(N * sizeof *c);
    if (!l || !scratch || !c) { CHECK(0, "out of memory"); free(l); free(scratch); free(c); return; }
    struct { float spread, T, top_p; int top_k, ties; } cases[] = {
        {1.0f, 1.0f, 0.9f, 0, 0},   /* flat: the nucleus holds thousands of tokens */
        {12.0f, 1.0f, 0.5f, 0, 0},  /* peaked: a small nucleus */
        {8.0f, 0.7f, 0.8f, 40, 0},  /* top-k, then top-p within it */
        {3.0f, 1.3f, 1.0f, 7, 1},   /* top-k over many equal logits: ties go to the lower id */
        {3.0f, 0.6f, 0.95f, 0, 1},  /* top-p with ties */
        {5.0f, 0.9f, 0.0f, 0, 0},   /* top-p 0: the most probable token only */
        {2.0f, 1.0f, 1.0f, 5000, 0}, /* top-k keeping most of the vocabulary */
        {300.0f, 1.0f, 0.99f, 4500, 0}, /* most probabilities underflow to 0 */
        {4.0f, 0.8f, 1.0f, 0, 0},   /* no truncation: a walk over the whole vocabulary */
    };
    uint64_t g = ms_rng_seed(11);
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        for (int i = 0; i < N; i++) {
            float u = ref_rng(&g);
            l[i] = cases[k].ties ? (float)(int)(u * 6) * cases[k].spread / 6 : u * cases[k].spread;
        }
        uint64_t a = ms_rng_seed(100 + k), b = a;
        int agree = 0, draws = 300, nucleus = 0;
        for (int d = 0; d < draws; d++) {
            float lp;
            int got = ms_sample(l, N, cases[k].T, cases[k].top_k, cases[k].top_p, &a, &lp, scratch, NULL);
            int want = ref_sample(l, N, cases[k].T, cases[k].top_k, cases[k].top_p, &b, c, &nucleus);
            agree += got == want;
        }
        CHECK(agree == draws, "sampler case %zu (nucleus %d tokens): %d of %d picks agree with the reference", k, nucleus, agree, draws);
        if (k == 0) CHECK(nucleus > 2000, "the flat case tests a large nucleus: %d", nucleus);
        if (k == 5) CHECK(nucleus == 1, "top-p 0 keeps one token: %d", nucleus);
    }
    free(l); free(scratch); free(c);
}

static void sample_cases(void) {
    float logits[5] = {1, 3, 2, 3.5f, -1}, scratch[10], lp;
    uint64_t r = ms_rng_seed(7);
    CHECK(ms_sample(logits, 5, 0, 0, 1, &r, &lp, scratch, NULL) == 3, "greedy picks argmax");
    int counts[5] = {0};
    for (int i = 0; i < 4000; i++) counts[ms_sample(logits, 5, 1.0f, 2, 1.0f, &r, &lp, scratch, NULL)]++;
    CHECK(counts[0] == 0 && counts[2] == 0 && counts[4] == 0 && counts[1] > 1000 && counts[3] > 1800, "top-k=2 keeps ids 1 and 3: %d %d", counts[1], counts[3]);
    uint64_t a = ms_rng_seed(5), b = ms_rng_seed(5);
    int same = 1;
    for (int i = 0; i < 50; i++) same &= ms_sample(logits, 5, 0.8f, 0, 0.9f, &a, &lp, scratch, NULL) == ms_sample(logits, 5, 0.8f, 0, 0.9f, &b, &lp, scratch, NULL);
    CHECK(same, "same seed, same samples");
    float lp2 = 1;
    CHECK(ms_sample(logits, 5, 1e-45f, 0, 1, &r, &lp2, scratch, NULL) == 3 && lp2 <= 0 && isfinite(lp2), "a denormal temperature is greedy with a finite logprob: %g", lp2);
    sample_vs_reference();
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
