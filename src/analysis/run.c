#include "run.h"
#include "lens.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_HOOKS = 256, MAX_INTERVENTIONS = 64, MAX_LENS = 64, MAX_PATTERNS = 64, MAX_FEATURE_EDITS = 4096 };

struct ms_run {
    ms_state *s;
    int T;
    ms_stats *stats;
    float *logits;
    ms_forward_opts o;
    ms_capture cap[MAX_HOOKS];
    ms_intervention iv[MAX_INTERVENTIONS];
    void *iv_mem[MAX_INTERVENTIONS]; /* each intervention's own copy of its dims, positions and vector */
    ms_pattern_capture pat[MAX_PATTERNS]; /* attention patterns; hook index MAX_HOOKS + k */
    int pat_K;
    /* logit lens */
    int n_lens, lens_k, lens_kinds, lens_real;
    int32_t lens_pos[MAX_LENS];
    int lens_cap0;          /* its captures: [kind][layer] from cap[lens_cap0] */
    int32_t *lens_ids;
    float *lens_logits, *lens_probs;
    uint8_t bilinear[MS_MAX_LAYERS]; /* MLPs whose SiLU is replaced by z/2 (ms_run_add_bilinear) */
    /* transcoders (ms_run_add_transcoder): one per layer, their buffers and feature edits */
    ms_mlp_replacement *rep;         /* [n_layers], NULL until one is added */
    ms_feature_edit *edits[MS_MAX_LAYERS]; /* each edit owns its positions */
};

ms_run *ms_run_create(ms_state *s, int T, int want_stats, int topk, int logits_mode, ms_err *err) {
    const ms_config *c = &s->m->cfg;
    if (T < 1) { ms_fail(err, MS_E_ARG, "empty input: at least one token is needed"); return NULL; }
    if (want_stats && (topk < 0 || topk > c->intermediate)) {
        ms_fail(err, MS_E_ARG, "topK %d is outside [0, %d] (the MLP's width)", topk, c->intermediate);
        return NULL;
    }
    if (logits_mode < 0 || logits_mode >= MS_LOGITS__COUNT) { ms_fail(err, MS_E_ARG, "logits mode %d is not 0, 1 or 2", logits_mode); return NULL; }
    ms_run *r = calloc(1, sizeof *r);
    if (!r) { ms_fail(err, MS_E_MEMORY, "out of memory"); return NULL; }
    r->s = s;
    r->T = T;
    if (want_stats && !(r->stats = ms_stats_create(c, T, topk))) {
        free(r);
        ms_fail(err, MS_E_MEMORY, "cannot allocate the statistics of %d tokens", T);
        return NULL;
    }
    if (logits_mode != MS_LOGITS_NONE) {
        size_t n = (size_t)c->vocab * (logits_mode == MS_LOGITS_ALL ? (size_t)T : 1);
        if (!(r->logits = malloc(n * sizeof(float)))) {
            ms_run_destroy(r);
            ms_fail(err, MS_E_MEMORY, "cannot allocate logits (%zu floats)", n);
            return NULL;
        }
    }
    r->o.stats = r->stats;
    r->o.logits = r->logits;
    r->o.logits_all = logits_mode == MS_LOGITS_ALL;
    r->o.captures = r->cap;
    r->o.interventions = r->iv;
    r->o.patterns = r->pat;
    r->pat_K = s->pos + T;
    return r;
}

void ms_run_destroy(ms_run *r) {
    if (!r) return;
    for (int i = 0; i < r->o.n_captures; i++) free(r->cap[i].dst);
    for (int i = 0; i < r->o.n_patterns; i++) free(r->pat[i].dst);
    for (int i = 0; i < r->o.n_interventions; i++) free(r->iv_mem[i]);
    for (int l = 0; r->rep && l < r->s->m->cfg.n_layers; l++) {
        ms_mlp_replacement *p = &r->rep[l];
        free(p->z); free(p->val); free(p->idx); free(p->features); free(p->y);
        for (int i = 0; i < p->n_edits; i++) free((void *)r->edits[l][i].positions);
        free(r->edits[l]);
    }
    free(r->rep);
    ms_stats_free(r->stats);
    free(r->logits);
    free(r->lens_ids); free(r->lens_logits); free(r->lens_probs);
    free(r);
}

static int add_capture(ms_run *r, int layer, int hook, const int32_t *positions, int n_positions, ms_err *err) {
    const ms_config *c = &r->s->m->cfg;
    if (r->o.n_captures >= MAX_HOOKS) { ms_fail(err, MS_E_ARG, "at most %d hooks per call", MAX_HOOKS); return -1; }
    const size_t rows = positions ? (size_t)n_positions : (size_t)r->T;
    float *dst = malloc(rows * (size_t)ms_hook_width(c, hook) * sizeof(float));
    if (!dst) { ms_fail(err, MS_E_MEMORY, "cannot allocate the values of hook %s of layer %d", ms_hook_name(hook), layer); return -1; }
    r->cap[r->o.n_captures] = (ms_capture){layer, hook, dst, positions, n_positions};
    return r->o.n_captures++;
}

/* "blocks.{layer}.attn.hook_pattern": the attention weights of a full-attention layer */
static int add_pattern(ms_run *r, const char *name, size_t n, ms_err *err) {
    const ms_config *c = &r->s->m->cfg;
    static const char tail[] = ".attn.hook_pattern";
    const size_t tl = sizeof tail - 1;
    if (n <= 7 + tl || memcmp(name + n - tl, tail, tl)) return -2;
    long l = 0;
    size_t i = 7;
    while (i < n - tl && name[i] >= '0' && name[i] <= '9' && l < 1000000) l = l * 10 + (name[i++] - '0');
    if (i == 7 || i != n - tl) return -2; /* not this form */
    const int shown = n > 80 ? 80 : (int)n;
    if (l >= c->n_layers) { ms_fail(err, MS_E_ARG, "hook \"%.*s\": layer %ld does not exist (the model has %d)", shown, name, l, c->n_layers); return -1; }
    if (c->mixer[l] != MS_MIXER_ATTENTION) { ms_fail(err, MS_E_ARG, "hook \"%.*s\": layer %ld is a Gated DeltaNet layer, which has no attention pattern", shown, name, l); return -1; }
    for (int k = 0; k < r->o.n_patterns; k++) if (r->pat[k].layer == (int)l) return MAX_HOOKS + k;
    if (r->o.n_patterns >= MAX_PATTERNS) { ms_fail(err, MS_E_ARG, "at most %d attention patterns per call", MAX_PATTERNS); return -1; }
    const size_t count = (size_t)c->n_heads * (size_t)r->T * (size_t)r->pat_K;
    float *dst = count <= ((size_t)1 << 28) ? malloc(count * sizeof(float)) : NULL;
    if (!dst) { ms_fail(err, MS_E_MEMORY, "cannot allocate the attention pattern of layer %ld (%zu floats)", l, count); return -1; }
    r->pat[r->o.n_patterns] = (ms_pattern_capture){(int)l, dst};
    return MAX_HOOKS + r->o.n_patterns++;
}

int ms_run_add_hook(ms_run *r, const char *name, size_t n, ms_err *err) {
    int layer, hook;
    if (n > 7 + 18 && !memcmp(name, "blocks.", 7)) {
        const int k = add_pattern(r, name, n, err);
        if (k != -2) return k;
    }
    if (ms_hook_parse(&r->s->m->cfg, name, n, &layer, &hook, err)) return -1;
    for (int i = 0; i < r->o.n_captures; i++)
        if (r->cap[i].layer == layer && r->cap[i].hook == hook && !r->cap[i].positions) return i;
    return add_capture(r, layer, hook, NULL, 0, err);
}

const float *ms_run_hook_values(const ms_run *r, int i, size_t *count) {
    if (i >= MAX_HOOKS && i < MAX_HOOKS + r->o.n_patterns) {
        *count = (size_t)r->s->m->cfg.n_heads * (size_t)r->T * (size_t)r->pat_K;
        return r->pat[i - MAX_HOOKS].dst;
    }
    if (i < 0 || i >= r->o.n_captures) { *count = 0; return NULL; }
    const ms_capture *c = &r->cap[i];
    *count = (c->positions ? (size_t)c->n_positions : (size_t)r->T) * (size_t)ms_hook_width(&r->s->m->cfg, c->hook);
    return c->dst;
}

int ms_run_add_intervention(ms_run *r, int layer, const char *hook, size_t hook_len, int op, const int32_t *dims, int n_dims,
                            const int32_t *positions, int n_positions, float value, const float *vector, int n_vector, ms_err *err) {
    const ms_config *c = &r->s->m->cfg;
    const int h = ms_hook_from_name(hook, hook_len);
    const int shown = hook_len > 80 ? 80 : (int)hook_len;
    if (r->o.n_interventions >= MAX_INTERVENTIONS) return ms_fail(err, MS_E_ARG, "at most %d interventions per call", MAX_INTERVENTIONS);
    if (h < 0) return ms_fail(err, MS_E_ARG, "intervention on \"%.*s\": not a hook point of a block", shown, hook);
    if (n_dims < 0 || n_positions < 0 || n_vector < 0) return ms_fail(err, MS_E_ARG, "intervention: a negative count");
    const int n = n_dims ? n_dims : ms_hook_width(c, h);
    if (n_vector && (op == MS_IV_SCALE || n_vector != n))
        return ms_fail(err, MS_E_ARG, op == MS_IV_SCALE ? "intervention: scale takes a value, not a vector"
                                                         : "intervention on blocks.%d.%s: a vector of %d values for %d components", layer, ms_hook_table[h].name, n_vector, n);
    /* the engine's own rules, on the caller's arrays, before a copy is kept */
    const ms_intervention given = {.layer = layer, .hook = h, .op = op, .dims = n_dims ? dims : NULL, .n_dims = n_dims,
                                   .positions = n_positions ? positions : NULL, .n_positions = n_positions, .value = value,
                                   .vector = n_vector ? vector : NULL};
    const int rc = ms_intervention_check(c, &given, r->s->n_ctx, err);
    if (rc) return rc;
    /* one block: dims, positions, vector */
    const size_t bytes = (size_t)n_dims * sizeof(int32_t) + (size_t)n_positions * sizeof(int32_t) + (size_t)n_vector * sizeof(float);
    uint8_t *mem = malloc(bytes ? bytes : 1);
    if (!mem) return ms_fail(err, MS_E_MEMORY, "out of memory");
    int32_t *d = (int32_t *)(void *)mem, *p = d + n_dims;
    float *v = (float *)(void *)(p + n_positions);
    if (n_dims) memcpy(d, dims, (size_t)n_dims * sizeof *d);
    if (n_positions) memcpy(p, positions, (size_t)n_positions * sizeof *p);
    if (n_vector) memcpy(v, vector, (size_t)n_vector * sizeof *v);
    const int k = r->o.n_interventions++;
    r->iv_mem[k] = mem;
    r->iv[k] = given;
    r->iv[k].dims = n_dims ? d : NULL;
    r->iv[k].positions = n_positions ? p : NULL;
    r->iv[k].vector = n_vector ? v : NULL;
    return MS_OK;
}

int ms_run_add_bilinear(ms_run *r, int layer, ms_err *err) {
    const ms_config *c = &r->s->m->cfg;
    if (layer < 0 || layer >= c->n_layers) return ms_fail(err, MS_E_ARG, "bilinearMlp: layer %d is not in 0..%d", layer, c->n_layers - 1);
    r->bilinear[layer] = 1;
    r->o.bilinear_mlp = r->bilinear;
    return MS_OK;
}

int ms_run_add_transcoder(ms_run *r, int layer, const ms_transcoder *tc, int keep_error, int want_features, ms_err *err) {
    const ms_config *c = &r->s->m->cfg;
    if (layer < 0 || layer >= c->n_layers) return ms_fail(err, MS_E_ARG, "transcoder: layer %d is not in 0..%d", layer, c->n_layers - 1);
    if (!tc || tc->d_in != c->hidden || tc->d_out != c->hidden)
        return ms_fail(err, MS_E_ARG, "transcoder for layer %d: widths %d -> %d, the model's hidden size is %d", layer, tc ? tc->d_in : 0, tc ? tc->d_out : 0, c->hidden);
    if (!r->rep && !(r->rep = calloc((size_t)c->n_layers, sizeof *r->rep))) return ms_fail(err, MS_E_MEMORY, "out of memory");
    ms_mlp_replacement *p = &r->rep[layer];
    if (p->tc) return ms_fail(err, MS_E_ARG, "transcoder: layer %d has one already in this call", layer);
    const size_t T = (size_t)r->T, F = (size_t)tc->n_features, K = (size_t)tc->k;
    p->z = ms_tc_alloc(T, F, sizeof(float), 0);
    p->val = ms_tc_alloc(T, K, sizeof(float), 0);
    p->idx = ms_tc_alloc(T, K, sizeof(int32_t), 0);
    p->y = ms_tc_alloc(T, 2 * (uint64_t)c->hidden, sizeof(float), 0);
    p->features = want_features ? ms_tc_alloc(T, F, sizeof(float), 0) : NULL;
    if (!p->z || !p->val || !p->idx || !p->y || (want_features && !p->features))
        return ms_fail(err, MS_E_MEMORY, "transcoder of layer %d: cannot allocate its buffers for %zu tokens", layer, T);
    p->tc = tc;
    p->keep_error = keep_error != 0;
    p->rows = r->T;
    r->o.replace = r->rep;
    return MS_OK;
}

int ms_run_add_feature_edit(ms_run *r, int layer, int feature, int op, float value, const int32_t *positions, int n_positions, ms_err *err) {
    const ms_config *c = &r->s->m->cfg;
    if (layer < 0 || layer >= c->n_layers || !r->rep || !r->rep[layer].tc)
        return ms_fail(err, MS_E_ARG, "blocks.%d.transcoder.hook_feature: no transcoder on layer %d in this call", layer, layer);
    ms_mlp_replacement *p = &r->rep[layer];
    if (p->n_edits >= MAX_FEATURE_EDITS) return ms_fail(err, MS_E_ARG, "at most %d feature edits per layer and call", MAX_FEATURE_EDITS);
    if (feature < -1 || feature >= p->tc->n_features) return ms_fail(err, MS_E_ARG, "blocks.%d.transcoder.hook_feature: feature %d outside [0, %d) (-1: all)", layer, feature, p->tc->n_features);
    if (op < 0 || op >= MS_IV__COUNT) return ms_fail(err, MS_E_ARG, "feature edit: operation %d is not scale, set or add", op);
    if (!isfinite(value)) return ms_fail(err, MS_E_ARG, "feature edit: the value is not a finite number");
    if (n_positions < 0) return ms_fail(err, MS_E_ARG, "feature edit: a negative count");
    for (int k = 0; k < n_positions; k++)
        if (positions[k] < 0 || positions[k] >= r->s->n_ctx) return ms_fail(err, MS_E_ARG, "feature edit: position %d outside the context [0, %d)", positions[k], r->s->n_ctx);
    int32_t *pos = NULL;
    if (n_positions) {
        if (!(pos = malloc((size_t)n_positions * sizeof *pos))) return ms_fail(err, MS_E_MEMORY, "out of memory");
        memcpy(pos, positions, (size_t)n_positions * sizeof *pos);
    }
    ms_feature_edit *e = realloc(r->edits[layer], (size_t)(p->n_edits + 1) * sizeof *e);
    if (!e) { free(pos); return ms_fail(err, MS_E_MEMORY, "out of memory"); }
    r->edits[layer] = e;
    p->edits = e;
    e[p->n_edits++] = (ms_feature_edit){feature, op, pos, n_positions, value};
    return MS_OK;
}

const float *ms_run_features(const ms_run *r, int layer) {
    if (!r->rep || layer < 0 || layer >= r->s->m->cfg.n_layers) return NULL;
    return r->rep[layer].features;
}

int ms_run_add_lens(ms_run *r, const int32_t *positions, int n, int k, int after_mixer, int n_real, ms_err *err) {
    const ms_config *c = &r->s->m->cfg;
    if (r->n_lens) return ms_fail(err, MS_E_ARG, "logit lens: asked twice for one call");
    if (n < 1 || n > MAX_LENS) return ms_fail(err, MS_E_ARG, "logit lens: %d positions (1 to %d)", n, MAX_LENS);
    if (k < 1 || k > 1000) return ms_fail(err, MS_E_ARG, "logit lens: k %d is outside [1, 1000]", k);
    if (n_real < 1 || n_real > c->vocab) n_real = c->vocab;
    if (k > n_real) k = n_real;
    for (int i = 0; i < n; i++) {
        const int p = positions[i] < 0 ? r->T + positions[i] : positions[i];
        if (p < 0 || p >= r->T) return ms_fail(err, MS_E_ARG, "logitLens position %d outside [0, %d)", positions[i], r->T);
        r->lens_pos[i] = p;
    }
    r->lens_kinds = after_mixer ? 2 : 1;
    if (r->o.n_captures + r->lens_kinds * c->n_layers > MAX_HOOKS) return ms_fail(err, MS_E_ARG, "logit lens: too many hooks in one call");
    const size_t cells = (size_t)n * (size_t)r->lens_kinds * (size_t)c->n_layers * (size_t)k;
    r->lens_ids = malloc(cells * sizeof(int32_t));
    r->lens_logits = malloc(cells * sizeof(float));
    r->lens_probs = malloc(cells * sizeof(float));
    if (!r->lens_ids || !r->lens_logits || !r->lens_probs) return ms_fail(err, MS_E_MEMORY, "logit lens: out of memory");
    r->lens_cap0 = r->o.n_captures;
    static const int kind_hook[] = {
#define MS_X(id, hook) hook,
        MS_LENS_KINDS(MS_X)
#undef MS_X
    };
    for (int kind = 0; kind < r->lens_kinds; kind++)
        for (int l = 0; l < c->n_layers; l++)
            if (add_capture(r, l, kind_hook[kind], r->lens_pos, n, err) < 0) return err->code;
    r->n_lens = n;
    r->lens_k = k;
    r->lens_real = n_real;
    return MS_OK;
}

int ms_run_execute(ms_run *r, const int32_t *ids, ms_err *err) {
    int rc = ms_forward(r->s, ids, r->T, &r->o, err);
    if (rc || !r->n_lens) return rc;
    const ms_config *c = &r->s->m->cfg;
    float *tmp = malloc((size_t)c->vocab * sizeof(float));
    if (!tmp) return ms_fail(err, MS_E_MEMORY, "logit lens: out of memory");
    const int L = c->n_layers, H = c->hidden, k = r->lens_k;
    for (int i = 0; i < r->n_lens; i++)
        for (int kind = 0; kind < r->lens_kinds; kind++)
            for (int l = 0; l < L; l++) {
                const size_t at = (((size_t)i * r->lens_kinds + kind) * L + l) * k;
                const float *resid = r->cap[r->lens_cap0 + kind * L + l].dst + (size_t)i * H;
                ms_lens_top(r->s, resid, r->lens_real, k, tmp, r->lens_ids + at, r->lens_logits + at, r->lens_probs + at);
            }
    free(tmp);
    return MS_OK;
}

float *ms_run_logits_of(const ms_run *r) { return r->logits; }
const ms_stats *ms_run_stats_of(const ms_run *r) { return r->stats; }
const int32_t *ms_run_lens_ids(const ms_run *r) { return r->lens_ids; }
const float *ms_run_lens_logits(const ms_run *r) { return r->lens_logits; }
const float *ms_run_lens_probs(const ms_run *r) { return r->lens_probs; }
