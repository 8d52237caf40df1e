/* The trainer's backward pass against central finite differences, in double precision, for every
 * parameter kind (embedding, attention/MLP matrices, all three norms). */
#define REAL double
#define TRAIN_SCALAR 1
#include "../../tools/train/train_core.c"
#include "check.h"
#include <stdio.h>

static double loss_of(const tcfg *c, real *w, const int32_t *tok, tact *a, real *tb) {
    tparams p;
    tparams_view(c, w, &p);
    size_t H = (size_t)c->H, I = (size_t)c->I, L = (size_t)c->L;
    tT wt = {tb, tb + L * H * H, tb + 2 * L * H * H, tb + 3 * L * H * H, tb + 4 * L * H * H, tb + 4 * L * H * H + L * I * H,
             tb + 4 * L * H * H + L * I * H + L * H * I, tb + 4 * L * H * H + 3 * L * I * H};
    tT_refresh(c, &p, &wt);
    return t_forward(c, &p, &wt, tok, tok + 1, a);
}

void test_train(const ms_t_env *env) {
    (void)env;
    tcfg c = {.H = 16, .I = 24, .L = 2, .nh = 2, .hd = 8, .V = 37, .T = 7, .eps = 1e-5, .theta = 10000.0};
    size_t n = tparams_count(&c);
    real *w = malloc(n * sizeof(real)), *g = calloc(n, sizeof(real)), *tb = malloc(n * sizeof(real));
    real *ab = malloc(tact_count(&c) * sizeof(real));
    tact a;
    tact_view(&c, ab, &a);
    uint64_t s = 42;
    for (size_t i = 0; i < n; i++) { s ^= s << 13; s ^= s >> 7; s ^= s << 17; w[i] = ((double)(s >> 11) / 9007199254740992.0 - 0.5) * 0.6; }
    tparams p, d;
    tparams_view(&c, w, &p);
    tparams_view(&c, g, &d);
    for (size_t i = 0; i < (size_t)c.L * c.H; i++) { p.rms_att[i] += 1; p.rms_ffn[i] += 1; }
    for (int i = 0; i < c.H; i++) p.rms_final[i] += 1;
    int32_t tok[8] = {3, 17, 5, 36, 0, 11, 11, 29};
    double worst_all = 0, loss_plain = 0;
    for (int with_dropout = 0; with_dropout < 2; with_dropout++) {
        /* the second round trains with dropout on the MLP units and the attention output: the masks
         * are a function of the seed, so the loss stays a smooth function of the weights */
        a.drop = with_dropout ? 0.3 : 0;
        a.adrop = with_dropout ? 0.25 : 0;
        a.dseed = 977;
        memset(g, 0, n * sizeof(real));
        double loss = loss_of(&c, w, tok, &a, tb);
        if (!with_dropout) loss_plain = loss;
        else CHECK(fabs(loss - loss_plain) > 1e-3, "dropout changes the loss (%.6f with, %.6f without)", loss, loss_plain);
        t_backward(&c, &p, tok, tok + 1, &a, &d, 1.0);
        struct { const char *name; real *base; size_t len; } kinds[] = {
            {"embedding", p.emb, (size_t)c.V * c.H}, {"rms_att", p.rms_att, (size_t)c.L * c.H}, {"wq", p.wq, (size_t)c.L * c.H * c.H},
            {"wk", p.wk, (size_t)c.L * c.H * c.H}, {"wv", p.wv, (size_t)c.L * c.H * c.H}, {"wo", p.wo, (size_t)c.L * c.H * c.H},
            {"rms_ffn", p.rms_ffn, (size_t)c.L * c.H}, {"w1 (gate)", p.w1, (size_t)c.L * c.I * c.H}, {"w2 (down)", p.w2, (size_t)c.L * c.H * c.I},
            {"w3 (up)", p.w3, (size_t)c.L * c.I * c.H}, {"rms_final", p.rms_final, (size_t)c.H}};
        for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++) {
            double worst = 0;
            for (int probe = 0; probe < 12; probe++) {
                size_t idx = (size_t)(probe * 7919 + 13) % kinds[k].len;
                real *x = kinds[k].base + idx, keep = *x, h = 1e-5;
                *x = keep + h;
                double lp = loss_of(&c, w, tok, &a, tb);
                *x = keep - h;
                double lm = loss_of(&c, w, tok, &a, tb);
                *x = keep;
                double fd = (lp - lm) / (2 * h), an = g[kinds[k].base - w + idx];
                double err = fabs(fd - an) / fmax(fabs(fd) + fabs(an), 1e-6);
                if (err > worst) worst = err;
            }
            CHECK(worst < 1e-6, "gradient of %s%s: relative error %.3g vs finite differences", kinds[k].name,
                  with_dropout ? " (with dropout)" : "", worst);
            if (worst > worst_all) worst_all = worst;
        }
    }
    printf("trainer backward vs finite differences: worst relative error %.2g over 11 parameter kinds, without and with dropout\n", worst_all);
    free(w); free(g); free(tb); free(ab);
}
