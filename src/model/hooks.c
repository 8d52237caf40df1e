#include "hooks.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

const ms_hook_info ms_hook_table[MS_HOOK__COUNT] = {
#define MS_X(id, name, width, what) {name, width, what},
    MS_HOOK_LIST(MS_X)
#undef MS_X
};

const char *const ms_iv_op_names[MS_IV__COUNT] = {"scale", "set", "add"};

const ms_stat_info ms_stat_table[MS_STAT__COUNT] = {
#define MS_X(field, ctype, type, shape, when, what) {#field, type, what, shape, when, offsetof(ms_stats, field), sizeof(ctype)},
    MS_STAT_LIST(MS_X)
#undef MS_X
};

const char *const ms_shape_dims[4] = {"\"layer\"", "\"layer\",\"token\"", "\"layer\",\"token\",\"top_k\"",
                                      "\"layer\",\"token\",\"gdn_head\""};

size_t ms_stats_count(const ms_stats *st, int id) {
    if (id < 0 || id >= MS_STAT__COUNT) return 0;
    const size_t L = (size_t)st->n_layers, LT = L * (size_t)st->T;
    switch (ms_stat_table[id].shape) {
    case MS_SHAPE_L: return L;
    case MS_SHAPE_LTK: return LT * (size_t)st->topk;
    case MS_SHAPE_LTH: return LT * (size_t)st->gdn_heads;
    default: return LT;
    }
}

void *ms_stats_array(const ms_stats *st, int id) {
    if (!st || id < 0 || id >= MS_STAT__COUNT) return NULL;
    return *(void *const *)((const char *)st + ms_stat_table[id].offset);
}

ms_stats *ms_stats_create(const ms_config *c, int T, int topk) {
    if (T < 1 || topk < 0 || topk > c->intermediate) return NULL;
    ms_stats *st = calloc(1, sizeof *st);
    if (!st) return NULL;
    st->n_layers = c->n_layers; st->T = T; st->topk = topk;
    st->gdn_heads = ms_cfg_n_mixer(c, MS_MIXER_GDN) ? c->lin_v_heads : 0;
    for (int i = 0; i < MS_STAT__COUNT; i++) {
        const ms_stat_info *s = &ms_stat_table[i];
        if (s->when == MS_WHEN_GDN && !st->gdn_heads) continue;
        const size_t n = ms_stats_count(st, i);
        void *p = calloc(n ? n : 1, s->elem_bytes);
        if (!p) { ms_stats_free(st); return NULL; }
        *(void **)((char *)st + s->offset) = p;
    }
    return st;
}

void ms_stats_free(ms_stats *st) {
    if (!st) return;
    for (int i = 0; i < MS_STAT__COUNT; i++) free(ms_stats_array(st, i));
    free(st);
}

int ms_hook_width(const ms_config *c, int hook) {
    if (hook < 0 || hook >= MS_HOOK__COUNT) return 0;
    return ms_hook_table[hook].width == MS_WIDTH_MLP ? c->intermediate : c->hidden;
}

const char *ms_hook_name(int hook) { return hook >= 0 && hook < MS_HOOK__COUNT ? ms_hook_table[hook].name : "?"; }

int ms_hook_from_name(const char *kind, size_t n) {
    for (int h = 0; h < MS_HOOK__COUNT; h++)
        if (strlen(ms_hook_table[h].name) == n && !memcmp(ms_hook_table[h].name, kind, n)) return h;
    return -1;
}

int ms_hook_parse(const ms_config *c, const char *name, size_t n, int *layer, int *hook, ms_err *err) {
    const int shown = n > 80 ? 80 : (int)n;
    size_t i = 7;
    long l = 0;
    if (n > 7 && !memcmp(name, "blocks.", 7) && name[i] >= '0' && name[i] <= '9') {
        while (i < n && name[i] >= '0' && name[i] <= '9' && l < 1000000) l = l * 10 + (name[i++] - '0');
        if (i < n && name[i] == '.' && (*hook = ms_hook_from_name(name + i + 1, n - i - 1)) >= 0) {
            if (l >= c->n_layers)
                return ms_fail(err, MS_E_ARG, "hook \"%.*s\": layer %ld does not exist (the model has %d)", shown, name, l, c->n_layers);
            *layer = (int)l;
            return MS_OK;
        }
    }
    char kinds[256] = "";
    for (int h = 0; h < MS_HOOK__COUNT; h++) {
        strncat(kinds, h ? "|" : "", sizeof kinds - strlen(kinds) - 1);
        strncat(kinds, ms_hook_table[h].name, sizeof kinds - strlen(kinds) - 1);
    }
    return ms_fail(err, MS_E_ARG, "unknown hook \"%.*s\" (expected blocks.{layer}.%s)", shown, name, kinds);
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
