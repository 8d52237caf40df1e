/* Transcoders natively (and under ASan/UBSan): the gradient against central finite differences
 * (main and auxiliary loss), the loss falling on data a sparse dictionary made, the same weights
 * for any split over threads, the export in raw units; then a session on a synthetic model: its
 * held-out FVU and the replacement's output against a float64 brute-force computation from the
 * exported weights, and the replacement with the error term equal to the model bit for bit. */
#include "check.h"
#include "../../tools/native_host.h"
#include "../../src/io/synth.h"
#include "../../src/layers/transcoder.h"
#include "../../src/analysis/tc_session.h"
#include "../../src/engine/sample.h"
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <math.h>

static double unif(uint64_t *s) { /* [-1, 1) */
    *s ^= *s >> 12; *s ^= *s << 25; *s ^= *s >> 27;
    return (double)((*s * 2685821657736338717ULL) >> 11) / 4503599627370496.0 - 1.0;
}

/* rows from a hidden sparse dictionary: x random, y = sum of 3 of 24 atoms chosen by x, plus noise */
static void dict_data(float *x, float *y, int N, int Di, int Do, uint64_t seed) {
    uint64_t r = ms_rng_seed(seed);
    enum { ATOMS = 24 };
    static float enc[ATOMS][64], dec[ATOMS][64];
    uint64_t q = ms_rng_seed(77);
    for (int a = 0; a < ATOMS; a++)
        for (int i = 0; i < 64; i++) { enc[a][i] = (float)unif(&q); dec[a][i] = (float)unif(&q); }
    for (int n = 0; n < N; n++) {
        float *xn = x + (size_t)n * Di, *yn = y + (size_t)n * Do;
        for (int i = 0; i < Di; i++) xn[i] = (float)unif(&r);
        for (int o = 0; o < Do; o++) yn[o] = 0.01f * (float)unif(&r);
        for (int pick = 0; pick < 3; pick++) {
            int best = -1;
            double bv = -1e30;
            for (int a = pick * 8; a < pick * 8 + 8; a++) {
                double z = 0;
                for (int i = 0; i < Di; i++) z += enc[a][i] * xn[i];
                if (z > bv) { bv = z; best = a; }
            }
            for (int o = 0; o < Do; o++) yn[o] += (float)(bv > 0 ? bv : 0) * dec[best][o];
        }
    }
}

static void test_gradient(void) {
    enum { Di = 6, Do = 5, F = 24, K = 3, N = 3 };
    ms_err e = {0};
    ms_tc_train_opts o = {0};
    o.k_aux = 4; o.dead_tokens = 1; o.seed = 5; o.aux_coef = 0.25;
    ms_tc_trainer *t = ms_tc_trainer_new(Di, Do, F, K, &o, &e);
    CHECK(t != NULL, "trainer: %s", e.msg);
    if (!t) return;
    float x[N * Di], y[N * Do];
    dict_data(x, y, N, Di, Do, 3);
    ms_tc_step st;
    /* one step: the biases move off zero and the features that did not fire become dead */
    CHECK(ms_tc_train_step(t, x, y, 2, NULL, &st, &e) == 0, "step: %s", e.msg); /* 2 rows: 6 of the 12 fire at most */
    CHECK(ms_tc_trainer_dead(t) > 0, "after a step with dead_tokens 1 some features are dead (%d)", ms_tc_trainer_dead(t));
    dict_data(x, y, N, Di, Do, 4);
    ms_transcoder *p = ms_tc_trainer_params(t);
    const size_t np = ms_transcoder_n_params(Di, Do, F);
    float *g = malloc(np * sizeof(float));
    const double L0 = ms_tc_loss_grad(t, x, y, N, g, NULL, NULL, &e);
    CHECK(isfinite(L0) && L0 > 0, "loss %g", L0);
    /* With the auxiliary loss on, its target (y - y_hat) is held fixed, as in Gao et al.: a central
     * difference sees it only where the main output does not move, i.e. for the parameters of
     * features the main TopK did not pick (then mse is unchanged bit for bit). For the others the
     * check runs with the auxiliary loss off, in a second pass. */
    int bad = 0, tested = 0, nonzero = 0, aux_tested = 0;
    double worst = 0;
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1) { /* the auxiliary loss off: every coordinate */
            ms_tc_trainer_free(t);
            o.aux_coef = -1;
            t = ms_tc_trainer_new(Di, Do, F, K, &o, &e);
            float x0[2 * Di], y0[2 * Do];
            dict_data(x0, y0, 2, Di, Do, 3);
            ms_tc_train_step(t, x0, y0, 2, NULL, &st, &e);
            p = ms_tc_trainer_params(t);
            ms_tc_loss_grad(t, x, y, N, g, NULL, NULL, &e);
        }
        for (size_t i = 0; i < np; i++) {
            const float keep = p->params[i], h = 1e-3f;
            double pu[2], pd[2];
            p->params[i] = keep + h;
            const double up = ms_tc_loss_grad(t, x, y, N, NULL, pu, NULL, &e);
            p->params[i] = keep - h;
            const double dn = ms_tc_loss_grad(t, x, y, N, NULL, pd, NULL, &e);
            p->params[i] = keep;
            if (pass == 0 && (pu[0] != pd[0] || pu[1] == pd[1])) continue; /* mse moved, or not an auxiliary parameter */
            const double num = (up - dn) / ((double)(keep + h) - (double)(keep - h)); /* the step as f32 rounded it */
            const double d = fabs(num - g[i]), tol = 3e-4 + 2e-2 * fabs(num);
            tested++;
            aux_tested += pass == 0;
            nonzero += g[i] != 0;
            if (d > tol) { bad++; if (d > worst) worst = d; }
        }
    }
    CHECK(bad == 0, "gradient: %d of %d coordinates differ from central differences (worst %g)", bad, tested, worst);
    CHECK(aux_tested >= 10, "the auxiliary loss's gradient is checked on %d coordinates", aux_tested);
    CHECK(nonzero > (int)(np / 4), "the gradient reaches the parameters (%d of %d tested non-zero)", nonzero, tested);
    free(g);
    ms_tc_trainer_free(t);
}

static void test_training(void) {
    enum { Di = 16, Do = 12, F = 96, K = 4, N = 256 };
    ms_err e = {0};
    ms_tc_train_opts o = {0};
    o.lr = 3e-3; o.seed = 9; o.dead_tokens = 2000;
    ms_tc_trainer *a = ms_tc_trainer_new(Di, Do, F, K, &o, &e), *b = ms_tc_trainer_new(Di, Do, F, K, &o, &e);
    ms_pool *pool = ms_pool_new(2, &e);
    CHECK(a && b && pool, "set-up: %s", e.msg);
    if (!a || !b || !pool) { ms_tc_trainer_free(a); ms_tc_trainer_free(b); ms_pool_free(pool); return; }
    float *x = malloc(sizeof(float) * N * Di), *y = malloc(sizeof(float) * N * Do);
    double first = 0, last = 0;
    for (int step = 0; step < 400; step++) {
        dict_data(x, y, N, Di, Do, 100 + (uint64_t)step);
        ms_tc_step sa, sb;
        CHECK(ms_tc_train_step(a, x, y, N, NULL, &sa, &e) == 0 && ms_tc_train_step(b, x, y, N, pool, &sb, &e) == 0, "step %d: %s", step, e.msg);
        if (step == 0) first = sa.fvu;
        last = sa.fvu;
        CHECK(sa.l0 <= K, "L0 %g is at most k", sa.l0);
    }
    CHECK(last < 0.5 * first && last < 0.35, "training lowers the FVU: %g after the first step, %g after 400", first, last);
    const size_t np = ms_transcoder_n_params(Di, Do, F);
    CHECK(!memcmp(ms_tc_trainer_params(a)->params, ms_tc_trainer_params(b)->params, np * sizeof(float)),
          "one thread and two threads train the same weights, bit for bit");
    /* the export reads and writes raw activations: its output is the trainer's own, unscaled */
    ms_transcoder *raw = ms_transcoder_new(Di, Do, F, K, &e);
    CHECK(raw && ms_tc_trainer_export(a, raw, &e) == 0, "export: %s", e.msg);
    if (raw) {
        dict_data(x, y, N, Di, Do, 999);
        ms_tc_eval ev;
        CHECK(ms_tc_eval_init(&ev, Do, F, &e) == 0, "eval: %s", e.msg);
        float *scratch = malloc(ms_tc_eval_scratch(raw, N) * sizeof(float));
        ms_tc_eval_add(&ev, raw, x, y, N, scratch, pool);
        const double fvu = ms_tc_eval_fvu(&ev);
        CHECK(fvu < 0.4 && fvu > 0, "held-out FVU of the exported transcoder on raw rows: %g", fvu);
        CHECK(ms_tc_eval_l0(&ev) <= K && ms_tc_eval_dead(&ev) >= 0 && ms_tc_eval_dead(&ev) < 1, "L0 %g, dead %g", ms_tc_eval_l0(&ev), ms_tc_eval_dead(&ev));
        free(scratch);
        ms_tc_eval_free(&ev);
    }
    ms_transcoder_free(raw);
    /* bad arguments are typed errors */
    e = (ms_err){0};
    CHECK(!ms_tc_trainer_new(Di, Do, F, F + 1, NULL, &e), "k above the feature count is refused");
    CHECK_CODE(e, MS_E_ARG);
    e = (ms_err){0};
    x[5] = NAN;
    CHECK(ms_tc_train_step(a, x, y, N, NULL, NULL, &e) == MS_E_ARG, "a row with NaN is refused (%s)", e.msg);
    free(x); free(y);
    ms_tc_trainer_free(a); ms_tc_trainer_free(b);
    ms_pool_free(pool);
}

static const char CONFIG[] =
    "{\"family\": \"llama\", \"config\": {\"hidden_size\": 32, \"intermediate_size\": 96, \"num_hidden_layers\": 3,"
    " \"vocab_size\": 64, \"num_attention_heads\": 4, \"num_key_value_heads\": 2, \"head_dim\": 8,"
    " \"max_position_embeddings\": 64, \"tie_word_embeddings\": true}}";

#ifndef EPOCHS
#define EPOCHS 4
#endif
#ifndef SEQ
#define SEQ 120
#endif
static void test_session(const ms_t_env *env) {
    ms_err e = {0};
    ms_model *m = ms_t_synth_model(env, "native-tc", CONFIG, sizeof CONFIG - 1, 4);
    if (!m) return;
    enum { T = 24, H = 32, F = 64, K = 6 };
    const int32_t layers[2] = {2, 0};
    ms_tc_session_opts o = {0};
    o.n_features = F; o.k = K; o.ctx = T; o.buffer_tokens = 96; o.batch = 48; o.epochs = EPOCHS; o.train.lr = 3e-3; o.train.seed = 1;
    ms_tc_session *s = ms_tc_session_new(m, layers, 2, &o, &e);
    CHECK(s != NULL, "session: %s", e.msg);
    if (!s) { ms_model_free(m); return; }
    uint64_t r = ms_rng_seed(11);
    int32_t ids[T];
    for (int seq = 0; seq < SEQ; seq++) {
        for (int t = 0; t < T; t++) ids[t] = (int32_t)((unif(&r) + 1) * 31.99);
        if (ms_tc_session_room(s) < T) CHECK(ms_tc_session_train(s, &e) == 0, "train: %s", e.msg);
        CHECK(ms_tc_session_feed(s, ids, T, &e) == 0, "feed: %s", e.msg);
    }
    CHECK(ms_tc_session_train(s, &e) == 0, "train: %s", e.msg);
    e = (ms_err){0};
    CHECK(ms_tc_session_feed(s, ids, T + 1, &e) == MS_E_ARG, "a sequence longer than ctx is refused");
    e = (ms_err){0};
    CHECK(ms_tc_session_eval_reset(s, 1, &e) == 0, "eval reset: %s", e.msg);
    /* the held-out rows, kept for the brute-force check */
    enum { SEQS = 4 };
    static int32_t held[SEQS][T];
    for (int q = 0; q < SEQS; q++) {
        for (int t = 0; t < T; t++) held[q][t] = (int32_t)((unif(&r) + 1) * 31.99);
        CHECK(ms_tc_session_eval_feed(s, held[q], T, &e) == 0, "eval: %s", e.msg);
    }
    char *rep = ms_tc_session_report(s);
    CHECK(rep != NULL, "report");
    ms_json j = {0};
    char eb[128];
    CHECK(rep && ms_json_parse(&j, rep, strlen(rep), eb, sizeof eb) == 0, "report is JSON: %s", rep ? rep : "");
    /* brute force, f64: each layer's FVU from the exported weights over the same rows */
    ms_state *st = ms_state_create(m, T, T, &e);
    const int V = m->cfg.vocab;
    float *lplain = malloc(sizeof(float) * T * V), *lrep = malloc(sizeof(float) * T * V);
    float *xin = malloc(sizeof(float) * T * H), *yout = malloc(sizeof(float) * T * H), *yrep = malloc(sizeof(float) * T * H);
    int32_t *ridx = malloc(sizeof(int32_t) * T * K);
    float *rval = malloc(sizeof(float) * T * K), *rz = malloc(sizeof(float) * T * F);
    const int32_t lay = ms_json_get(&j, 0, "layers");
    int li = 0;
    for (int32_t node = lay >= 0 ? j.nodes[lay].child : -1; node >= 0; node = j.nodes[node].next, li++) {
        const ms_transcoder *tc = ms_tc_session_transcoder(s, li);
        const int L = layers[li];
        double fvu = -1, sse = 0, sy[H] = {0}, syy = 0, n = 0, worst = 0, kl = -1, ce = -1, kl_bf = 0, ce_bf = 0;
        ms_json_num(&j, ms_json_get(&j, node, "fvu"), &fvu);
        ms_json_num(&j, ms_json_get(&j, node, "kl"), &kl);
        ms_json_num(&j, ms_json_get(&j, node, "ce"), &ce);
        for (int q = 0; q < SEQS; q++) {
            ms_capture caps[2] = {{L, MS_HOOK_LN2_NORMALIZED, xin, NULL, 0}, {L, MS_HOOK_MLP_OUT, yout, NULL, 0}};
            ms_forward_opts fo = {0};
            fo.captures = caps; fo.n_captures = 2;
            fo.logits = lplain; fo.logits_all = 1;
            ms_state_reset(st);
            CHECK(ms_forward(st, held[q], T, &fo, &e) == 0, "forward: %s", e.msg);
            /* the forward pass with this layer's MLP replaced writes the transcoder's output */
            ms_mlp_replacement rp[3] = {{0}};
            rp[L] = (ms_mlp_replacement){.tc = tc, .rows = T, .z = rz, .val = rval, .idx = ridx};
            ms_capture cap2 = {L, MS_HOOK_MLP_OUT, yrep, NULL, 0};
            ms_forward_opts fr = {0};
            fr.captures = &cap2; fr.n_captures = 1; fr.replace = rp;
            fr.logits = lrep; fr.logits_all = 1;
            ms_state_reset(st);
            CHECK(ms_forward(st, held[q], T, &fr, &e) == 0, "replaced forward: %s", e.msg);
            /* with the error term, every feature scaled by 1 at every position: the model, bit for bit
             * (the edit path decodes twice and adds the difference, which is exactly 0) */
            ms_feature_edit one = {-1, MS_IV_SCALE, NULL, 0, 1.0f};
            float *yid = malloc(sizeof(float) * T * 2 * H), *ycap = malloc(sizeof(float) * T * H), *lid = malloc(sizeof(float) * T * V);
            ms_mlp_replacement rk[3] = {{0}};
            rk[L] = (ms_mlp_replacement){.tc = tc, .keep_error = 1, .rows = T, .z = rz, .val = rval, .idx = ridx, .y = yid, .edits = &one, .n_edits = 1};
            ms_forward_opts fk = {0};
            fk.replace = rk; fk.logits = lid; fk.logits_all = 1;
            ms_state_reset(st);
            CHECK(ms_forward(st, held[q], T, &fk, &e) == 0 && !memcmp(lid, lplain, sizeof(float) * T * V), "layer %d: every feature scaled by 1 with the error term changes no bit (%s)", L, e.msg);
            one.value = 0; /* every feature zeroed with the error term: the MLP's output minus the transcoder's feature part */
            ms_capture ck = {L, MS_HOOK_MLP_OUT, ycap, NULL, 0};
            fk.captures = &ck; fk.n_captures = 1;
            ms_state_reset(st);
            CHECK(ms_forward(st, held[q], T, &fk, &e) == 0, "zeroed features: %s", e.msg);
            double wz = 0;
            for (int t = 0; t < T; t++) for (int o2 = 0; o2 < H; o2++) { /* y - (a . W_dec), in f64 from the replaced run's output */
                double fp = yrep[t * H + o2] - tc->b_dec[o2];
                const double d = fabs(ycap[t * H + o2] - (yout[t * H + o2] - fp));
                if (d > wz) wz = d;
            }
            CHECK(wz < 1e-4, "layer %d: features zeroed with the error term leave the MLP output minus their writes (largest difference %g)", L, wz);
            free(yid); free(ycap); free(lid);
            for (int t = 0; t < T; t++) { /* KL(model || replaced) and the replaced run's next-token loss, f64 */
                const float *a = lplain + (size_t)t * V, *b = lrep + (size_t)t * V;
                double za = 0, zb = 0;
                for (int v = 0; v < V; v++) { za += exp((double)a[v]); zb += exp((double)b[v]); }
                for (int v = 0; v < V; v++) kl_bf += exp((double)a[v]) / za * (((double)a[v] - log(za)) - ((double)b[v] - log(zb)));
                if (t + 1 < T) ce_bf += log(zb) - b[held[q][t + 1]];
            }
            for (int t = 0; t < T; t++) {
                double z[F], yh[H];
                int used[F] = {0};
                for (int f = 0; f < F; f++) {
                    z[f] = tc->b_enc[f];
                    for (int i = 0; i < H; i++) z[f] += (double)xin[t * H + i] * tc->w_enc[(size_t)i * F + f];
                }
                for (int o2 = 0; o2 < H; o2++) yh[o2] = tc->b_dec[o2];
                for (int kk = 0; kk < K; kk++) { /* the K largest, ties to the lower index */
                    int best = -1;
                    for (int f = 0; f < F; f++) if (!used[f] && (best < 0 || z[f] > z[best])) best = f;
                    used[best] = 1;
                    if (z[best] > 0)
                        for (int o2 = 0; o2 < H; o2++) yh[o2] += z[best] * tc->w_dec[(size_t)best * H + o2];
                }
                for (int o2 = 0; o2 < H; o2++) {
                    const double yv = yout[t * H + o2], d = yh[o2] - yv;
                    sse += d * d; sy[o2] += yv; syy += yv * yv;
                    const double dr = fabs(yrep[t * H + o2] - yh[o2]);
                    if (dr > worst) worst = dr;
                }
                n++;
            }
        }
        double m2 = 0;
        for (int o2 = 0; o2 < H; o2++) m2 += sy[o2] * sy[o2];
        const double want = sse / (syy - m2 / n);
        CHECK(fabs(fvu - want) <= 1e-4 + 1e-3 * want, "layer %d: FVU %g, brute force %g", L, fvu, want);
        CHECK(worst < 1e-4, "layer %d: the replaced MLP writes the transcoder's output (largest difference %g)", L, worst);
        CHECK(want < 1, "layer %d: the transcoder explains some variance (FVU %g)", L, want);
        kl_bf /= SEQS * T;
        ce_bf /= SEQS * (T - 1);
        CHECK(fabs(kl - kl_bf) <= 1e-6 + 1e-3 * kl_bf && kl_bf > 0, "layer %d: replacement KL %g, brute force %g", L, kl, kl_bf);
        CHECK(fabs(ce - ce_bf) <= 1e-4 * ce_bf, "layer %d: replacement loss %g, brute force %g", L, ce, ce_bf);
    }
    CHECK(li == 2, "two layers reported (%d)", li);
    /* the set on disk: manifest + one binary, its hash in the manifest */
    ms_buf man = {0};
    uint8_t *bin = NULL;
    size_t bl = 0;
    CHECK(ms_tc_session_save(s, "synthetic", &man, &bin, &bl, &e) == 0, "save: %s", e.msg);
    CHECK(bl == 2 * ms_transcoder_n_params(H, H, F) * sizeof(float), "the binary holds both layers (%zu bytes)", bl);
    ms_json jm = {0};
    CHECK(man.p && ms_json_parse(&jm, man.p, man.n, eb, sizeof eb) == 0, "manifest is JSON: %s", eb);
    ms_json_free(&jm);
    ms_buf_free(&man);
    free(bin);
    free(lplain); free(lrep);
    free(xin); free(yout); free(yrep); free(ridx); free(rval); free(rz);
    ms_state_free(st);
    ms_json_free(&j);
    free(rep);
    ms_tc_session_free(s);
    ms_model_free(m);
}

void test_transcoder(const ms_t_env *env) {
    test_gradient();
    test_training();
    test_session(env);
}
