/* stories260K natively: llama2.c goldens, decode-vs-prefill, hook invariants. */
#include "check.h"
#include "../../tools/native_host.h"
#include "../../src/util/json.h"
#include "../../src/util/threads.h"
#include "../../src/analysis/attribution.h"
#include <stdlib.h>
#include <string.h>

static ms_model *convert_and_load(const ms_t_env *env, const char *sub, ms_tokenizer **tok) {
    char out[600], ck[600], tk[600];
    snprintf(out, sizeof out, "%s/%s", env->tmp, sub);
    snprintf(ck, sizeof ck, "%s/stories260K/stories260K.bin", env->shared);
    snprintf(tk, sizeof tk, "%s/stories260K/tok512.bin", env->shared);
    ms_err e = {0};
    int rc = ms_native_convert_llama2c(ck, tk, out, &e);
    CHECK(rc == 0, "convert: %s", e.msg);
    ms_model *m = ms_load_weightset(out, tok, &e);
    CHECK(m != NULL, "load: %s", e.msg);
    return m;
}

static double num_at(const ms_json *j, int32_t arr, int i) {
    int32_t c = j->nodes[arr].child;
    while (i-- > 0) c = j->nodes[c].next;
    return j->nodes[c].num;
}
static int32_t elem(const ms_json *j, int32_t arr, int i) {
    int32_t c = j->nodes[arr].child;
    while (i-- > 0) c = j->nodes[c].next;
    return c;
}

void test_llama(const ms_t_env *env) {
    ms_tokenizer *tok = NULL;
    ms_model *m = convert_and_load(env, "native-s260", &tok);
    if (!m || !tok) return;
    char path[600];
    size_t glen;
    ms_err e = {0};
    snprintf(path, sizeof path, "%s/stories260K/golden.json", env->shared);
    uint8_t *gtext = ms_read_file(path, &glen, &e);
    ms_json j;
    char jerr[160];
    CHECK(gtext && ms_json_parse(&j, (char *)gtext, glen, jerr, sizeof jerr) == 0, "golden.json: %s", jerr);
    if (!gtext) return;
    int32_t cases = ms_json_get(&j, 0, "cases");
    const int V = m->cfg.vocab, L = m->cfg.n_layers;
    ms_state *s = ms_state_create(m, 512, 64, &e);
    float *logits = malloc(sizeof(float) * (size_t)V * 64);
    double worst_logit = 0, worst_stat = 0;
    for (int c = 0; c < j.nodes[cases].count; c++) {
        int32_t cs = elem(&j, cases, c);
        const char *prompt = ms_json_str(&j, ms_json_get(&j, cs, "prompt"));
        int32_t pids = ms_json_get(&j, cs, "prompt_ids"), gids = ms_json_get(&j, cs, "greedy_ids");
        int32_t ids[600];
        int n = 0;
        CHECK(ms_tokenizer_encode(tok, prompt, strlen(prompt), 1, ids, 600, &n, &e) == 0, "encode");
        int same = n == j.nodes[pids].count;
        for (int i = 0; same && i < n; i++) same = ids[i] == (int)num_at(&j, pids, i);
        CHECK(same, "case %d: prompt ids differ", c);
        /* greedy continuation, token by token from the prompt */
        int T = j.nodes[gids].count, np = j.nodes[pids].count;
        for (int i = 0; i < T; i++) ids[i] = (int32_t)num_at(&j, gids, i);
        ms_state_reset(s);
        ms_forward_opts lo = {.logits = logits};
        CHECK(ms_forward(s, ids, np, &lo, &e) == 0, "prefill: %s", e.msg);
        int greedy_ok = 1;
        for (int t = np; t < T; t++) {
            int best = 0;
            for (int v = 1; v < V; v++) if (logits[v] > logits[best]) best = v;
            greedy_ok &= best == ids[t];
            CHECK(ms_forward(s, &ids[t], 1, &lo, &e) == 0, "decode: %s", e.msg);
        }
        CHECK(greedy_ok, "case %d: greedy continuation differs from llama2.c", c);
        /* all logits and stats in one prefill */
        ms_state_reset(s);
        ms_stats *st = ms_stats_create(&m->cfg, T, 8);
        ms_forward_opts o = {.stats = st, .logits = logits, .logits_all = 1};
        CHECK(ms_forward(s, ids, T, &o, &e) == 0, "forward: %s", e.msg);
        int32_t top5 = ms_json_get(&j, cs, "top5_logits");
        for (int t = 0; t < T; t++) {
            int32_t row = elem(&j, top5, t);
            for (int k = 0; k < 5; k++) {
                int32_t pair = elem(&j, row, k);
                int id = (int)num_at(&j, pair, 0);
                double d = fabs(logits[(size_t)t * V + id] - num_at(&j, pair, 1));
                if (d > worst_logit) worst_logit = d;
            }
        }
        int32_t gs = ms_json_get(&j, cs, "stats");
        const char *nm[4] = {"attn_out_l2", "mlp_out_l2", "resid_mid_l2", "resid_post_l2"};
        float *ours[4] = {st->attn_out_l2, st->mlp_out_l2, st->resid_mid_l2, st->resid_post_l2};
        for (int q = 0; q < 4; q++) {
            int32_t arr = ms_json_get(&j, gs, nm[q]);
            for (int l = 0; l < L; l++)
                for (int t = 0; t < T; t++) {
                    double g = num_at(&j, elem(&j, arr, l), t), r = fabs(ours[q][l * T + t] - g) / fmax(fabs(g), 1e-6);
                    if (r > worst_stat) worst_stat = r;
                }
        }
        ms_stats_free(st);
    }
    CHECK(worst_logit < 1e-4, "logits vs llama2.c golden: max abs diff %g", worst_logit);
    CHECK(worst_stat < 1e-4, "stats vs golden: max rel diff %g", worst_stat);
    printf("native golden: max |logit diff| %.3g, max stat rel diff %.3g\n", worst_logit, worst_stat);

    /* decode-vs-prefill */
    int32_t ids[40];
    for (int i = 0; i < 40; i++) ids[i] = (int32_t)((i * 37 + 11) % V);
    ids[0] = 1;
    float *a = malloc(sizeof(float) * (size_t)V), *b = malloc(sizeof(float) * (size_t)V);
    ms_forward_opts oa = {.logits = a}, ob = {.logits = b};
    ms_state_reset(s);
    ms_forward(s, ids, 40, &oa, &e);
    ms_state_reset(s);
    ms_forward(s, ids, 39, &ob, &e);
    ms_forward(s, ids + 39, 1, &ob, &e);
    double worst = 0, mx = 0;
    for (int v = 0; v < V; v++) { worst = fmax(worst, fabs(a[v] - b[v])); mx = fmax(mx, fabs(a[v])); }
    CHECK(worst / mx < 1e-5, "decode vs prefill: rel diff %g", worst / mx);

    /* threads: the same prefill and decode with 2 and 3 threads give bit-identical logits (the
     * matmuls split tokens or rows; every value is computed by the same code) */
    for (int nt = 2; nt <= 3; nt++) {
        ms_pool *pool = ms_pool_new(nt, &e);
        CHECK(pool != NULL, "pool of %d: %s", nt, e.msg);
        if (!pool) break;
        float *c = malloc(sizeof(float) * (size_t)V);
        ms_forward_opts oc2 = {.logits = c};
        m->pool = pool;
        int same = 1;
        for (int rep = 0; rep < 20; rep++) { /* many jobs back to back: a lost wake-up would hang here */
            ms_state_reset(s);
            CHECK(ms_forward(s, ids, 39, &oc2, &e) == 0 && ms_forward(s, ids + 39, 1, &oc2, &e) == 0, "threaded forward: %s", e.msg);
            same &= memcmp(b, c, sizeof(float) * (size_t)V) == 0;
        }
        m->pool = NULL;
        CHECK(same, "%d threads: logits differ from one thread", nt);
        ms_pool_free(pool);
        free(c);
    }
    {
        ms_err e2 = {0};
        CHECK(ms_pool_new(0, &e2) == NULL && e2.code == MS_E_ARG, "a pool of 0 threads is refused");
    }

    /* hook invariants: resid_mid = resid_pre + attn_out; resid_post = resid_mid + mlp_out */
    const int H = m->cfg.hidden, T = 12;
    float *cap[5];
    ms_capture caps[5];
    for (int k = 0; k < 5; k++) { cap[k] = malloc(sizeof(float) * (size_t)T * H); caps[k] = (ms_capture){.layer = 2, .hook = k, .dst = cap[k]}; }
    ms_forward_opts oc = {.captures = caps, .n_captures = 5};
    ms_state_reset(s);
    CHECK(ms_forward(s, ids, T, &oc, &e) == 0, "capture forward");
    double inv = 0;
    for (int i = 0; i < T * H; i++) {
        inv = fmax(inv, fabs(cap[2][i] - (cap[0][i] + cap[1][i])));
        inv = fmax(inv, fabs(cap[4][i] - (cap[2][i] + cap[3][i])));
    }
    CHECK(inv < 1e-5, "residual invariants: %g", inv);
    for (int k = 0; k < 5; k++) free(cap[k]);
    free(a); free(b);
    free(logits);
    ms_state_free(s);
    ms_json_free(&j);
    free(gtext);
    ms_tokenizer_free(tok);
    /* a neuron's write read by the head: against a plain loop over dequantized rows */
    {
        const int I = m->cfg.intermediate, Lc = m->cfg.n_layers;
        float *col = malloc(sizeof(float) * (size_t)H), *lg = malloc(sizeof(float) * (size_t)V);
        float *row = malloc(sizeof(float) * (size_t)(H > I ? H : I));
        CHECK(ms_mlp_down_column(m, Lc - 1, I - 1, col, &e) == 0, "down column: %s", e.msg);
        CHECK(ms_unembed_direction(m, col, lg, &e) == 0, "unembed direction: %s", e.msg);
        double worst_a = 0, mx_a = 0;
        for (int v = 0; v < V; v++) {
            ms_tensor_row_f32(m->lm_head, v, row);
            double acc = 0;
            for (int h = 0; h < H; h++) acc += (double)row[h] * ((const float *)m->final_norm->data)[h] * col[h];
            worst_a = fmax(worst_a, fabs(acc - lg[v]));
            mx_a = fmax(mx_a, fabs(acc));
        }
        CHECK(worst_a / mx_a < 1e-5, "neuron logits vs plain loop: rel diff %g", worst_a / mx_a);
        for (int h = 0; h < H; h++) {
            ms_tensor_row_f32(m->layers[Lc - 1].down, h, row);
            if (row[I - 1] != col[h]) { CHECK(0, "down column element %d", h); break; }
        }
        ms_err_clear(&e);
        CHECK(ms_mlp_down_column(m, Lc, 0, col, &e) == MS_E_ARG && strstr(e.msg, "layer"), "bad layer: %s", e.msg);
        ms_err_clear(&e);
        CHECK(ms_mlp_down_column(m, 0, I, col, &e) == MS_E_ARG && strstr(e.msg, "neuron"), "bad neuron: %s", e.msg);
        ms_err_clear(&e);
        free(col); free(lg); free(row);
    }
    ms_model_free(m);
}
