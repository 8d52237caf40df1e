#include "stats.h"
#include <math.h>
#include <stdlib.h>

ms_stats *ms_stats_create(const ms_config *c, int T, int topk) {
    if (T < 1 || topk < 0 || topk > c->intermediate) return NULL;
    ms_stats *st = calloc(1, sizeof *st);
    if (!st) return NULL;
    size_t LT = (size_t)c->n_layers * (size_t)T;
    st->n_layers = c->n_layers; st->T = T; st->topk = topk;
    st->gdn_heads = ms_cfg_n_mixer(c, MS_MIXER_GDN) ? c->lin_v_heads : 0;
    st->resid_pre_l2 = calloc(LT, sizeof(float)); st->attn_out_l2 = calloc(LT, sizeof(float));
    st->resid_mid_l2 = calloc(LT, sizeof(float)); st->mlp_out_l2 = calloc(LT, sizeof(float));
    st->resid_post_l2 = calloc(LT, sizeof(float)); st->mlp_ratio = calloc(LT, sizeof(float));
    st->top_idx = calloc(LT * (size_t)(topk ? topk : 1), sizeof(int32_t));
    st->top_val = calloc(LT * (size_t)(topk ? topk : 1), sizeof(float));
    st->layer_ms = calloc((size_t)c->n_layers, sizeof(double));
    st->gdn_state_norm = calloc(LT * (size_t)(st->gdn_heads ? st->gdn_heads : 1), sizeof(float));
    st->gdn_decay = calloc(LT, sizeof(float)); st->gdn_beta = calloc(LT, sizeof(float));
    if (!st->resid_pre_l2 || !st->attn_out_l2 || !st->resid_mid_l2 || !st->mlp_out_l2 || !st->resid_post_l2 ||
        !st->mlp_ratio || !st->top_idx || !st->top_val || !st->layer_ms || !st->gdn_state_norm || !st->gdn_decay ||
        !st->gdn_beta) {
        ms_stats_free(st);
        return NULL;
    }
    return st;
}

void ms_stats_free(ms_stats *st) {
    if (!st) return;
    free(st->resid_pre_l2); free(st->attn_out_l2); free(st->resid_mid_l2); free(st->mlp_out_l2);
    free(st->resid_post_l2); free(st->mlp_ratio); free(st->top_idx); free(st->top_val); free(st->layer_ms);
    free(st->gdn_state_norm); free(st->gdn_decay); free(st->gdn_beta);
    free(st);
}

int ms_hook_width(const ms_config *c, int hook) {
    if (hook < 0 || hook >= MS_HOOK__COUNT) return 0;
    return hook >= MS_HOOK_MLP_PRE ? c->intermediate : c->hidden;
}

const char *ms_hook_name(int hook) {
    static const char *const n[MS_HOOK__COUNT] = {"hook_resid_pre", "hook_attn_out", "hook_resid_mid", "hook_mlp_out",
                                                 "hook_resid_post", "mlp.hook_pre", "mlp.hook_pre_linear", "mlp.hook_post"};
    return hook >= 0 && hook < MS_HOOK__COUNT ? n[hook] : "?";
}

double ms_l2(const float *x, int n) {
    double s = 0;
    for (int i = 0; i < n; i++) s += (double)x[i] * x[i];
    return sqrt(s);
}

void ms_topk_abs(const float *x, int n, int k, int32_t *idx, float *val) {
    if (k > n) k = n;
    int filled = 0;
    for (int i = 0; i < n; i++) {
        float a = fabsf(x[i]);
        if (filled == k && !(a > fabsf(val[k - 1]))) continue;
        int p = filled < k ? filled++ : k - 1;
        while (p > 0 && fabsf(val[p - 1]) < a) { idx[p] = idx[p - 1]; val[p] = val[p - 1]; p--; }
        idx[p] = i;
        val[p] = x[i];
    }
}
