/* Interventions and attention patterns natively (and under ASan/UBSan): a synthetic Qwen3.5-shaped
 * model; bad arguments are E_ARG; identities hold bit for bit; pattern rows sum to 1. Needs no
 * files from outside the repository. */
#include "check.h"
#include "../../tools/native_host.h"
#include "../../src/io/synth.h"
#include "../../src/analysis/run.h"
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <math.h>

static const char CONFIG[] =
    "{\"family\": \"qwen3_5\", \"config\": {\"hidden_size\": 64, \"intermediate_size\": 176, \"num_hidden_layers\": 4,"
    " \"vocab_size\": 320, \"num_attention_heads\": 4, \"num_key_value_heads\": 2, \"head_dim\": 24,"
    " \"linear_num_key_heads\": 2, \"linear_num_value_heads\": 2, \"linear_key_head_dim\": 16, \"linear_value_head_dim\": 16,"
    " \"linear_conv_kernel_dim\": 4, \"full_attention_interval\": 2, \"max_position_embeddings\": 1024, \"tie_word_embeddings\": true}}";

enum { T = 9 };
static const int32_t IDS[T] = {5, 9, 200, 31, 77, 12, 300, 4, 64};

/* logits of every position into out ([T][V]) with the given run set-up; 0 on success */
static int run_logits(ms_state *s, float *out, void (*setup)(ms_run *, ms_err *), ms_err *e) {
    ms_state_reset(s);
    ms_run *r = ms_run_create(s, T, 1, 4, 2, e);
    if (!r) return -1;
    if (setup) setup(r, e);
    int rc = e->code ? e->code : ms_run_execute(r, IDS, e);
    if (!rc) memcpy(out, ms_run_logits_of(r), sizeof(float) * (size_t)T * (size_t)s->m->cfg.vocab);
    ms_run_destroy(r);
    return rc;
}

static void scale_one_everywhere(ms_run *r, ms_err *e) {
    const char *hooks[] = {"hook_resid_pre", "hook_attn_out", "hook_resid_mid", "mlp.hook_pre", "mlp.hook_pre_linear", "mlp.hook_post", "hook_mlp_out", "hook_resid_post"};
    for (int l = 0; l < 4; l++)
        for (int h = 0; h < 8; h++)
            if (ms_run_add_intervention(r, l, hooks[h], strlen(hooks[h]), MS_IV_SCALE, NULL, 0, NULL, 0, 1.0f, NULL, 0, e)) return;
}
static void add_zero_vector(ms_run *r, ms_err *e) {
    float v[64] = {0};
    int32_t pos[2] = {2, 7};
    ms_run_add_intervention(r, 1, "hook_resid_mid", 14, MS_IV_ADD, NULL, 0, pos, 2, 0.0f, v, 64, e);
}
static void ablate(ms_run *r, ms_err *e) {
    int32_t pos[1] = {4};
    ms_run_add_intervention(r, 2, "hook_mlp_out", 12, MS_IV_SET, NULL, 0, pos, 1, 0.0f, NULL, 0, e);
}

void test_interventions(const ms_t_env *env) {
    ms_err e = {0};
    ms_model *m = ms_t_synth_model(env, "native-iv", CONFIG, sizeof CONFIG - 1, 3);
    if (!m) return;
    ms_state *s = ms_state_create(m, 64, 64, &e);
    CHECK(s != NULL, "state: %s", e.msg);
    if (!s) { ms_model_free(m); return; }
    const size_t n = (size_t)T * (size_t)m->cfg.vocab;
    float *plain = malloc(n * sizeof(float)), *got = malloc(n * sizeof(float));

    /* identities, bit for bit */
    CHECK(run_logits(s, plain, NULL, &e) == 0, "plain run: %s", e.msg);
    e = (ms_err){0};
    CHECK(run_logits(s, got, scale_one_everywhere, &e) == 0 && !memcmp(got, plain, n * sizeof(float)), "scale 1 at every hook point changes nothing (%s)", e.msg);
    e = (ms_err){0};
    CHECK(run_logits(s, got, add_zero_vector, &e) == 0 && !memcmp(got, plain, n * sizeof(float)), "adding a zero vector changes nothing (%s)", e.msg);
    e = (ms_err){0};
    CHECK(run_logits(s, got, ablate, &e) == 0, "ablation: %s", e.msg);
    const size_t V = (size_t)m->cfg.vocab;
    CHECK(!memcmp(got, plain, 4 * V * sizeof(float)), "an ablation at position 4 leaves positions 0..3 alone");
    CHECK(memcmp(got + 4 * V, plain + 4 * V, V * sizeof(float)) != 0, "and changes position 4");

    /* bad arguments: typed errors, nothing run */
    ms_state_reset(s);
    ms_run *r = ms_run_create(s, T, 0, 0, 1, &e);
    int32_t big[1] = {1 << 20}, neg[1] = {-1};
    float nan_v[64];
    for (int i = 0; i < 64; i++) nan_v[i] = i == 5 ? NAN : 0.0f;
    struct { const char *hook; int layer, op; const int32_t *dims; int nd; const int32_t *pos; int np; float value; const float *vec; int nv; const char *what; } bad[] = {
        {"hook_nothing", 0, MS_IV_SCALE, NULL, 0, NULL, 0, 1, NULL, 0, "not a hook point"},
        {"hook_mlp_out", 9, MS_IV_SCALE, NULL, 0, NULL, 0, 1, NULL, 0, "layer 9 does not exist"},
        {"hook_mlp_out", 0, 7, NULL, 0, NULL, 0, 1, NULL, 0, "operation 7"},
        {"mlp.hook_post", 0, MS_IV_SET, big, 1, NULL, 0, 0, NULL, 0, "neuron 1048576 outside"},
        {"hook_resid_mid", 0, MS_IV_SET, NULL, 0, neg, 1, 0, NULL, 0, "position -1 outside"},
        {"hook_resid_mid", 0, MS_IV_ADD, NULL, 0, NULL, 0, 0, nan_v, 3, "a vector of 3 values for 64 components"},
        {"hook_resid_mid", 0, MS_IV_ADD, NULL, 0, NULL, 0, 0, nan_v, 64, "vector value 5 is not a finite number"},
        {"hook_resid_mid", 0, MS_IV_SET, NULL, 0, NULL, 0, NAN, NULL, 0, "value is not a finite number"},
        {"hook_resid_mid", 0, MS_IV_SCALE, NULL, 0, NULL, 0, 1, nan_v, 64, "scale takes a value, not a vector"},
    };
    for (size_t i = 0; r && i < sizeof bad / sizeof bad[0]; i++) {
        e = (ms_err){0};
        int brc = ms_run_add_intervention(r, bad[i].layer, bad[i].hook, strlen(bad[i].hook), bad[i].op, bad[i].dims, bad[i].nd, bad[i].pos, bad[i].np,
                                          bad[i].value, bad[i].vec, bad[i].nv, &e);
        CHECK(brc == MS_E_ARG && strstr(e.msg, bad[i].what), "bad intervention %zu: got %d \"%s\", wanted E_ARG with \"%s\"", i, brc, e.msg, bad[i].what);
    }
    /* attention patterns: layer 1 is full attention (interval 2), layer 0 Gated DeltaNet */
    e = (ms_err){0};
    CHECK(ms_run_add_hook(r, "blocks.0.attn.hook_pattern", 26, &e) < 0 && e.code == MS_E_ARG && strstr(e.msg, "Gated DeltaNet"), "no pattern in a DeltaNet layer: %s", e.msg);
    e = (ms_err){0};
    const int k = ms_run_add_hook(r, "blocks.1.attn.hook_pattern", 26, &e);
    CHECK(k >= 0, "pattern hook: %s", e.msg);
    CHECK(r && ms_run_execute(r, IDS, &e) == 0, "run with a pattern: %s", e.msg);
    size_t count = 0;
    const float *P = r && k >= 0 ? ms_run_hook_values(r, k, &count) : NULL;
    CHECK(P && count == (size_t)m->cfg.n_heads * T * T, "pattern size %zu", count);
    double worst = 0;
    for (int hh = 0; P && hh < m->cfg.n_heads; hh++)
        for (int t = 0; t < T; t++) {
            double sum = 0;
            for (int u = 0; u < T; u++) { const float w = P[((size_t)hh * T + t) * T + u]; sum += w; if (u > t) CHECK(w == 0.0f, "causal"); }
            if (fabs(sum - 1) > worst) worst = fabs(sum - 1);
        }
    CHECK(worst < 1e-5, "pattern rows sum to 1 (worst %g)", worst);
    ms_run_destroy(r);
    free(plain);
    free(got);
    ms_state_free(s);
    ms_model_free(m);
}
