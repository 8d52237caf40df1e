#include "tc_session.h"
#include "../engine/forward.h"
#include "../engine/sample.h"
#include "../util/sha256.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int layer;
    ms_tc_trainer *tr;
    ms_transcoder *tc;        /* exported, raw units */
    float *bx, *by;           /* buffer [cap][H] each */
    ms_tc_step last;
    double train_tokens;
    ms_tc_eval ev;
    double kl, ce, ce_zero;   /* replacement sums over the eval tokens */
} tc_layer;

struct ms_tc_session {
    ms_model *m;
    ms_state *st;
    ms_tc_session_opts o;
    int n;
    tc_layer *L;
    int cap, used;
    float *batch_x, *batch_y;
    int32_t *perm;
    uint64_t rng;
    /* scoring */
    int replacement, evaluating;
    double eval_tokens, ce_tokens, kl_tokens, ce_model, kl_all, ce_all;
    float *logits0, *logits1, *cap_x, *cap_y, *scratch;
    float *p0;                /* [T][V] the model's next-token probabilities of the sequence scored */
    double *lz0;              /* [T] their log-normalisers */
    ms_mlp_replacement *rep;  /* [n_layers of the model] */
    float *rep_z, *rep_val;
    int32_t *rep_idx;
};

static int nomem(ms_err *err, const char *what) { return ms_fail(err, MS_E_MEMORY, "transcoders: cannot allocate %s", what); }

void ms_tc_session_free(ms_tc_session *s) {
    if (!s) return;
    for (int i = 0; s->L && i < s->n; i++) {
        ms_tc_trainer_free(s->L[i].tr);
        ms_transcoder_free(s->L[i].tc);
        free(s->L[i].bx); free(s->L[i].by);
        ms_tc_eval_free(&s->L[i].ev);
    }
    free(s->L);
    ms_state_free(s->st);
    free(s->batch_x); free(s->batch_y); free(s->perm);
    free(s->logits0); free(s->logits1); free(s->p0); free(s->lz0); free(s->cap_x); free(s->cap_y); free(s->scratch);
    free(s->rep); free(s->rep_z); free(s->rep_val); free(s->rep_idx);
    free(s);
}

/* the session's options with their defaults filled in and their sizes made consistent */
static void with_defaults(const ms_config *c, ms_tc_session_opts *o) {
    if (o->ctx <= 0) o->ctx = 128;
    if (o->buffer_tokens <= 0) o->buffer_tokens = 8192;
    if (o->batch <= 0) o->batch = 1024;
    if (o->epochs <= 0) o->epochs = 1;
    if (o->ctx > c->max_pos && c->max_pos > 0) o->ctx = c->max_pos;
    if (o->buffer_tokens < o->ctx) o->buffer_tokens = o->ctx;
    if (o->batch > o->buffer_tokens) o->batch = o->buffer_tokens;
}

uint64_t ms_tc_session_bytes(const ms_model *m, int n_layers, const ms_tc_session_opts *opts, double parts[4]) {
    const ms_config *c = &m->cfg;
    ms_tc_session_opts o = *opts;
    with_defaults(c, &o);
    const uint64_t H = (uint64_t)c->hidden, V = (uint64_t)c->vocab, T = (uint64_t)o.ctx, F = (uint64_t)(o.n_features > 0 ? o.n_features : 1),
                   K = (uint64_t)(o.k > 0 ? o.k : 1), B = (uint64_t)o.batch, cap = (uint64_t)o.buffer_tokens, L = (uint64_t)(n_layers > 0 ? n_layers : 0),
                   NL = (uint64_t)c->n_layers, n = (uint64_t)ms_transcoder_n_params((int)H, (int)H, (int)F);
    uint64_t kaux = o.train.k_aux > 0 ? (uint64_t)o.train.k_aux : (H / 2 > 0 ? H / 2 : 1);
    if (kaux > F) kaux = F;
    const uint64_t f4 = sizeof(float);
    /* per layer: the transcoder being trained, its gradient and Adam's two moments, the exported
     * copy, the trainer's batch scratch, the feature counters and the scores' sums */
    const uint64_t weights = L * (5 * n * f4 + F * 4 + F + 2 * H * f4 + B * (4 * H * f4 + F * f4 + K * 8 + kaux * 8) + H * 8 + F * 4);
    /* the captured activations: each layer's buffer, one sequence's capture, a batch */
    const uint64_t acts = L * 2 * cap * H * f4 + 2 * L * T * H * f4 + 2 * B * H * f4 + cap * 4;
    /* scoring: three [T][vocab] logit arrays, the features of a sequence, the run's state */
    const uint64_t scoring = 3 * T * V * f4 + T * 8 + T * (F + 2 * K + H) * f4 + T * F * f4 + NL * T * K * 8 + NL * sizeof(ms_mlp_replacement) + ms_state_bytes_threads(c, (int)T, (int)T, ms_pool_threads(m->pool));
    /* the saved set */
    const uint64_t saved = L * n * f4;
    /* the structs themselves and malloc's headers (about 20 allocations per layer, 20 more) */
    const uint64_t books = 16384 + L * 4096;
    if (parts) { parts[0] = (double)(weights + books); parts[1] = (double)acts; parts[2] = (double)scoring; parts[3] = (double)saved; }
    return weights + books + acts + scoring + saved;
}

ms_tc_session *ms_tc_session_new(ms_model *m, const int32_t *layers, int n_layers, const ms_tc_session_opts *o, ms_err *err) {
    const ms_config *c = &m->cfg;
    if (!m->finalized) { ms_fail(err, MS_E_STATE, "transcoders: the model is not fully loaded"); return NULL; }
    if (n_layers < 1 || n_layers > c->n_layers) { ms_fail(err, MS_E_ARG, "transcoders: %d layers asked (the model has %d)", n_layers, c->n_layers); return NULL; }
    for (int i = 0; i < n_layers; i++) {
        if (layers[i] < 0 || layers[i] >= c->n_layers) { ms_fail(err, MS_E_ARG, "transcoders: layer %d does not exist (the model has %d)", layers[i], c->n_layers); return NULL; }
        for (int k = 0; k < i; k++)
            if (layers[k] == layers[i]) { ms_fail(err, MS_E_ARG, "transcoders: layer %d listed twice", layers[i]); return NULL; }
    }
    ms_tc_session *s = calloc(1, sizeof *s);
    if (!s) { nomem(err, "a session"); return NULL; }
    s->m = m;
    s->o = *o;
    with_defaults(c, &s->o);
    const int H = c->hidden, V = c->vocab, T = s->o.ctx;
    s->n = n_layers;
    s->cap = s->o.buffer_tokens;
    s->rng = ms_rng_seed(s->o.train.seed ^ 0x5eed0ffULL);
    if (!(s->L = calloc((size_t)n_layers, sizeof *s->L))) { nomem(err, "the layers"); ms_tc_session_free(s); return NULL; }
    for (int i = 0; i < n_layers; i++) {
        tc_layer *l = &s->L[i];
        l->layer = layers[i];
        if (!(l->tr = ms_tc_trainer_new(H, H, o->n_features, o->k, &s->o.train, err)) ||
            !(l->tc = ms_transcoder_new(H, H, o->n_features, o->k, err))) { ms_tc_session_free(s); return NULL; }
        l->bx = ms_tc_alloc((uint64_t)s->cap, (uint64_t)H, sizeof(float), 0);
        l->by = ms_tc_alloc((uint64_t)s->cap, (uint64_t)H, sizeof(float), 0);
        if (!l->bx || !l->by) { nomem(err, "the activation buffer"); ms_tc_session_free(s); return NULL; }
        if (ms_tc_eval_init(&l->ev, H, o->n_features, err)) { ms_tc_session_free(s); return NULL; }
    }
    const size_t F = (size_t)o->n_features, K = (size_t)o->k;
    s->batch_x = ms_tc_alloc((uint64_t)s->o.batch, (uint64_t)H, sizeof(float), 0);
    s->batch_y = ms_tc_alloc((uint64_t)s->o.batch, (uint64_t)H, sizeof(float), 0);
    s->perm = ms_tc_alloc((uint64_t)s->cap, 1, sizeof(int32_t), 0);
    s->logits0 = ms_tc_alloc((uint64_t)T, (uint64_t)V, sizeof(float), 0);
    s->logits1 = ms_tc_alloc((uint64_t)T, (uint64_t)V, sizeof(float), 0);
    s->p0 = ms_tc_alloc((uint64_t)T, (uint64_t)V, sizeof(float), 0);
    s->lz0 = malloc((size_t)T * sizeof(double));
    s->cap_x = ms_tc_alloc((uint64_t)n_layers * T, (uint64_t)H, sizeof(float), 0);
    s->cap_y = ms_tc_alloc((uint64_t)n_layers * T, (uint64_t)H, sizeof(float), 0);
    s->scratch = ms_tc_alloc((uint64_t)T, (uint64_t)F + 2 * K + (uint64_t)H, sizeof(float), 0);
    s->rep = calloc((size_t)c->n_layers, sizeof *s->rep);
    s->rep_z = ms_tc_alloc((uint64_t)T, F, sizeof(float), 0);
    s->rep_val = ms_tc_alloc((uint64_t)c->n_layers * T, K, sizeof(float), 0);
    s->rep_idx = ms_tc_alloc((uint64_t)c->n_layers * T, K, sizeof(int32_t), 0);
    if (!s->batch_x || !s->batch_y || !s->perm || !s->logits0 || !s->logits1 || !s->p0 || !s->lz0 || !s->cap_x || !s->cap_y || !s->scratch ||
        !s->rep || !s->rep_z || !s->rep_val || !s->rep_idx) { nomem(err, "the session's buffers"); ms_tc_session_free(s); return NULL; }
    if (!(s->st = ms_state_create(m, T, T, err))) { ms_tc_session_free(s); return NULL; }
    return s;
}

int ms_tc_session_room(const ms_tc_session *s) { return s->cap - s->used; }
int ms_tc_session_n_layers(const ms_tc_session *s) { return s->n; }
const ms_transcoder *ms_tc_session_transcoder(const ms_tc_session *s, int i) { return i >= 0 && i < s->n ? s->L[i].tc : NULL; }

/* one forward pass from position 0 with the layers' MLP input and output captured into x/y ([n][T][H]) */
static int capture_run(ms_tc_session *s, const int32_t *ids, int T, float *x, float *y, float *logits, const ms_mlp_replacement *rep, ms_err *err) {
    const int H = s->m->cfg.hidden;
    enum { MAXC = 2 * MS_MAX_LAYERS };
    ms_capture caps[MAXC];
    int nc = 0;
    for (int i = 0; x && i < s->n; i++) {
        caps[nc++] = (ms_capture){s->L[i].layer, MS_HOOK_LN2_NORMALIZED, x + (size_t)i * T * H, NULL, 0};
        caps[nc++] = (ms_capture){s->L[i].layer, MS_HOOK_MLP_OUT, y + (size_t)i * T * H, NULL, 0};
    }
    ms_forward_opts fo = {0};
    fo.captures = caps;
    fo.n_captures = nc;
    fo.logits = logits;
    fo.logits_all = logits != NULL;
    fo.replace = rep;
    ms_state_reset(s->st);
    return ms_forward(s->st, ids, T, &fo, err);
}

static int check_seq(const ms_tc_session *s, int T, ms_err *err) {
    if (T < 1 || T > s->o.ctx) return ms_fail(err, MS_E_ARG, "transcoders: a sequence of %d tokens (1 to %d)", T, s->o.ctx);
    return MS_OK;
}

int ms_tc_session_feed(ms_tc_session *s, const int32_t *ids, int T, ms_err *err) {
    if (check_seq(s, T, err)) return err->code;
    if (T > s->cap - s->used) return ms_fail(err, MS_E_ARG, "transcoders: %d tokens do not fit in the buffer (%d left): train first", T, s->cap - s->used);
    const int H = s->m->cfg.hidden;
    int rc = capture_run(s, ids, T, s->cap_x, s->cap_y, NULL, NULL, err);
    if (rc) return rc;
    for (int i = 0; i < s->n; i++) {
        memcpy(s->L[i].bx + (size_t)s->used * H, s->cap_x + (size_t)i * T * H, (size_t)T * H * sizeof(float));
        memcpy(s->L[i].by + (size_t)s->used * H, s->cap_y + (size_t)i * T * H, (size_t)T * H * sizeof(float));
    }
    s->used += T;
    return MS_OK;
}

static uint32_t rnd(uint64_t *r, uint32_t n) {
    *r ^= *r >> 12; *r ^= *r << 25; *r ^= *r >> 27;
    return (uint32_t)(((*r * 2685821657736338717ULL) >> 32) % n);
}

int ms_tc_session_train(ms_tc_session *s, ms_err *err) {
    const int H = s->m->cfg.hidden, N = s->used, B = s->o.batch;
    if (N < 1) return MS_OK;
    for (int e = 0; e < s->o.epochs; e++) {
        for (int i = 0; i < N; i++) s->perm[i] = i;
        for (int i = N - 1; i > 0; i--) { const uint32_t j = rnd(&s->rng, (uint32_t)i + 1); const int32_t t = s->perm[i]; s->perm[i] = s->perm[j]; s->perm[j] = t; }
        for (int b0 = 0; b0 < N; b0 += B) { /* every row: the last batch may be smaller */
            const int nb = N - b0 < B ? N - b0 : B;
            for (int i = 0; i < s->n; i++) {
                tc_layer *l = &s->L[i];
                for (int r = 0; r < nb; r++) {
                    memcpy(s->batch_x + (size_t)r * H, l->bx + (size_t)s->perm[b0 + r] * H, (size_t)H * sizeof(float));
                    memcpy(s->batch_y + (size_t)r * H, l->by + (size_t)s->perm[b0 + r] * H, (size_t)H * sizeof(float));
                }
                const int rc = ms_tc_train_step(l->tr, s->batch_x, s->batch_y, nb, s->m->pool, &l->last, err);
                if (rc) return rc;
                l->train_tokens += nb;
            }
        }
    }
    s->used = 0;
    return MS_OK;
}

int ms_tc_session_export(ms_tc_session *s, ms_err *err) {
    for (int i = 0; i < s->n; i++) {
        const int rc = ms_tc_trainer_export(s->L[i].tr, s->L[i].tc, err);
        if (rc) return rc;
    }
    return MS_OK;
}

int ms_tc_session_eval_reset(ms_tc_session *s, int replacement, ms_err *err) {
    s->evaluating = 0; /* until every evaluator is ready again */
    int rc = ms_tc_session_export(s, err);
    if (rc) return rc;
    const ms_config *c = &s->m->cfg;
    for (int i = 0; i < s->n; i++) {
        tc_layer *l = &s->L[i];
        ms_tc_eval_free(&l->ev);
        if ((rc = ms_tc_eval_init(&l->ev, c->hidden, s->o.n_features, err))) return rc;
        l->kl = l->ce = l->ce_zero = 0;
    }
    s->replacement = replacement;
    s->evaluating = 1;
    s->eval_tokens = s->ce_tokens = s->kl_tokens = s->ce_model = s->kl_all = s->ce_all = 0;
    return MS_OK;
}

/* log-softmax helpers over the vocabulary, in f64 */
static double log_z(const float *x, int V) {
    double mx = -INFINITY, s = 0;
    for (int v = 0; v < V; v++) mx = x[v] > mx ? x[v] : mx;
    for (int v = 0; v < V; v++) s += exp((double)x[v] - mx);
    return mx + log(s);
}
/* the model's own run of a sequence: its probabilities and normalisers (for the KLs), and its
 * summed next-token cross-entropy over positions 0..T-2 */
static double model_run_scores(ms_tc_session *s, const int32_t *ids, int T, int V, int Vr) {
    double ce = 0;
    for (int t = 0; t < T; t++) {
        const float *x = s->logits0 + (size_t)t * V;
        const double lz = log_z(x, Vr);
        s->lz0[t] = lz;
        for (int v = 0; v < Vr; v++) s->p0[(size_t)t * V + v] = (float)exp((double)x[v] - lz);
        if (t + 1 < T) ce += lz - x[ids[t + 1]];
    }
    return ce;
}

/* a changed run (logits1) against the model's: adds the summed KL(model || changed) over the T
 * positions to *kl (when kl is not NULL) and the summed next-token cross-entropy to *ce */
static void changed_run_scores(const ms_tc_session *s, const int32_t *ids, int T, int V, int Vr, double *kl, double *ce) {
    for (int t = 0; t < T; t++) {
        const float *q = s->logits1 + (size_t)t * V, *x0 = s->logits0 + (size_t)t * V, *p = s->p0 + (size_t)t * V;
        const double lzq = log_z(q, Vr);
        if (kl) {
            double k = 0;
            for (int v = 0; v < Vr; v++)
                if (p[v] > 0) k += p[v] * (((double)x0[v] - s->lz0[t]) - ((double)q[v] - lzq));
            *kl += k > 0 ? k : 0;
        }
        if (t + 1 < T) *ce += lzq - q[ids[t + 1]];
    }
}

/* the replacement for the model's layers: layer `only` (or every session layer when -1) */
static void set_replacement(ms_tc_session *s, int only, int keep_error, int T) {
    const ms_config *c = &s->m->cfg;
    const size_t K = (size_t)s->o.k;
    memset(s->rep, 0, (size_t)c->n_layers * sizeof *s->rep);
    for (int i = 0; i < s->n; i++) {
        if (only >= 0 && i != only) continue;
        const int l = s->L[i].layer;
        s->rep[l] = (ms_mlp_replacement){.tc = s->L[i].tc, .keep_error = keep_error, .rows = T, .z = s->rep_z, .val = s->rep_val + (size_t)l * T * K, .idx = s->rep_idx + (size_t)l * T * K};
    }
}

int ms_tc_session_eval_feed(ms_tc_session *s, const int32_t *ids, int T, ms_err *err) {
    if (!s->evaluating) return ms_fail(err, MS_E_STATE, "transcoders: call eval_reset before scoring");
    if (check_seq(s, T, err)) return err->code;
    const ms_config *c = &s->m->cfg;
    const int H = c->hidden, V = c->vocab; /* rows of the logits; the real vocabulary Vr is what is scored */
    const int Vr = s->m->tok.vocab_size > 0 && s->m->tok.vocab_size <= V ? s->m->tok.vocab_size : V;
    int rc = capture_run(s, ids, T, s->cap_x, s->cap_y, s->replacement ? s->logits0 : NULL, NULL, err);
    if (rc) return rc;
    for (int i = 0; i < s->n; i++)
        ms_tc_eval_add(&s->L[i].ev, s->L[i].tc, s->cap_x + (size_t)i * T * H, s->cap_y + (size_t)i * T * H, T, s->scratch, s->m->pool);
    s->eval_tokens += T;
    if (!s->replacement) return MS_OK;
    s->ce_model += model_run_scores(s, ids, T, V, Vr);
    s->ce_tokens += T - 1;
    s->kl_tokens += T;
    for (int i = 0; i < s->n; i++) { /* one MLP replaced (no error term), then zero-ablated */
        set_replacement(s, i, 0, T);
        if ((rc = capture_run(s, ids, T, NULL, NULL, s->logits1, s->rep, err))) return rc;
        changed_run_scores(s, ids, T, V, Vr, &s->L[i].kl, &s->L[i].ce);
        ms_intervention zero = {s->L[i].layer, MS_HOOK_MLP_OUT, MS_IV_SET, NULL, 0, NULL, 0, 0.0f, NULL};
        ms_forward_opts fo = {0};
        fo.interventions = &zero; fo.n_interventions = 1;
        fo.logits = s->logits1; fo.logits_all = 1;
        ms_state_reset(s->st);
        if ((rc = ms_forward(s->st, ids, T, &fo, err))) return rc;
        changed_run_scores(s, ids, T, V, Vr, NULL, &s->L[i].ce_zero);
    }
    set_replacement(s, -1, 0, T); /* every session layer at once */
    if ((rc = capture_run(s, ids, T, NULL, NULL, s->logits1, s->rep, err))) return rc;
    changed_run_scores(s, ids, T, V, Vr, &s->kl_all, &s->ce_all);
    return MS_OK;
}

static void num(ms_buf *b, const char *key, double v) {
    if (isfinite(v)) ms_buf_printf(b, "\"%s\":%.6g", key, v);
    else ms_buf_printf(b, "\"%s\":null", key);
}

char *ms_tc_session_report(const ms_tc_session *s) {
    ms_buf b = {0};
    const int rep = s->replacement && s->ce_tokens > 0;
    ms_buf_printf(&b, "{\"eval_tokens\":%.0f,\"layers\":[", s->eval_tokens);
    for (int i = 0; i < s->n; i++) {
        const tc_layer *l = &s->L[i];
        ms_buf_printf(&b, "%s{\"layer\":%d,\"features\":%d,\"k\":%d,\"steps\":%d,\"train_tokens\":%.0f,", i ? "," : "", l->layer, s->o.n_features, s->o.k,
                      ms_tc_trainer_steps(l->tr), l->train_tokens);
        num(&b, "train_fvu", ms_tc_trainer_steps(l->tr) ? l->last.fvu : NAN); ms_buf_puts(&b, ",");
        ms_buf_printf(&b, "\"train_dead\":%d,", ms_tc_trainer_dead(l->tr));
        const int ev = l->ev.n > 0;
        num(&b, "fvu", ev ? ms_tc_eval_fvu(&l->ev) : NAN); ms_buf_puts(&b, ",");
        num(&b, "l0", ev ? ms_tc_eval_l0(&l->ev) : NAN); ms_buf_puts(&b, ",");
        num(&b, "dead", ev ? ms_tc_eval_dead(&l->ev) : NAN); ms_buf_puts(&b, ",");
        num(&b, "kl", rep ? l->kl / s->kl_tokens : NAN); ms_buf_puts(&b, ",");
        num(&b, "ce", rep ? l->ce / s->ce_tokens : NAN); ms_buf_puts(&b, ",");
        num(&b, "ce_zero", rep ? l->ce_zero / s->ce_tokens : NAN); ms_buf_puts(&b, ",");
        const double cm = s->ce_model / s->ce_tokens, gap = (l->ce_zero - s->ce_model) / s->ce_tokens;
        num(&b, "recovered", rep && gap > 0 ? (l->ce_zero / s->ce_tokens - l->ce / s->ce_tokens) / gap : NAN);
        (void)cm;
        ms_buf_puts(&b, "}");
    }
    ms_buf_puts(&b, "],");
    num(&b, "ce_model", rep ? s->ce_model / s->ce_tokens : NAN); ms_buf_puts(&b, ",\"all\":{");
    num(&b, "kl", rep ? s->kl_all / s->kl_tokens : NAN); ms_buf_puts(&b, ",");
    num(&b, "ce", rep ? s->ce_all / s->ce_tokens : NAN); ms_buf_puts(&b, "}}");
    if (b.oom) { ms_buf_free(&b); return NULL; }
    return b.p;
}

/* ---- the transcoder set on disk (docs/format.md, "Transcoder sets") ---- */
int ms_tc_session_save(ms_tc_session *s, const char *model_name, ms_buf *manifest, uint8_t **bin, size_t *bin_len, ms_err *err) {
    int rc = ms_tc_session_export(s, err);
    if (rc) return rc;
    const ms_model *m = s->m;
    const int H = m->cfg.hidden;
    const size_t per = ms_transcoder_n_params(H, H, s->o.n_features) * sizeof(float);
    const size_t total = per * (size_t)s->n;
    uint8_t *out = ms_tc_alloc((uint64_t)per, (uint64_t)s->n, 1, 0);
    if (!out) return nomem(err, "the transcoder file");
    for (int i = 0; i < s->n; i++) memcpy(out + per * (size_t)i, s->L[i].tc->params, per); /* little-endian f32, as every target here */
    char hex[65];
    ms_sha256_of(out, total, hex);
    char *scores = ms_tc_session_report(s);
    ms_buf *b = manifest;
    ms_buf_puts(b, "{\n  \"format\": \"mlpscope-transcoders\",\n  \"version\": 1,\n  \"model\": {\"name\": ");
    ms_buf_json_str(b, model_name ? model_name : "");
    ms_buf_printf(b, ", \"hidden_size\": %d, \"num_hidden_layers\": %d, \"shards_sha256\": [", H, m->cfg.n_layers);
    for (int i = 0; i < m->n_shards; i++) ms_buf_printf(b, "%s\"%s\"", i ? ", " : "", m->shards[i].sha256);
    ms_buf_printf(b, "]},\n  \"input\": \"ln2.hook_normalized\",\n  \"output\": \"hook_mlp_out\",\n  \"activation\": \"topk_relu\",\n"
                     "  \"features\": %d,\n  \"k\": %d,\n", s->o.n_features, s->o.k);
    ms_buf_printf(b, "  \"shards\": [{\"file\": \"transcoders.bin\", \"bytes\": %zu, \"sha256\": \"%s\"}],\n  \"layers\": [\n", total, hex);
    const char *names[4] = {"W_enc", "b_enc", "W_dec", "b_dec"};
    for (int i = 0; i < s->n; i++) {
        const size_t F = (size_t)s->o.n_features;
        const size_t sizes[4] = {(size_t)H * F, F, F * H, (size_t)H};
        const size_t shapes[4][2] = {{(size_t)H, F}, {F, 0}, {F, (size_t)H}, {(size_t)H, 0}};
        size_t off = per * (size_t)i;
        ms_buf_printf(b, "    {\"layer\": %d, \"tensors\": [", s->L[i].layer);
        for (int t = 0; t < 4; t++) {
            ms_buf_printf(b, "%s{\"name\": \"%s\", \"dtype\": \"f32\", \"shape\": [%zu", t ? ", " : "", names[t], shapes[t][0]);
            if (shapes[t][1]) ms_buf_printf(b, ", %zu", shapes[t][1]);
            ms_buf_printf(b, "], \"shard\": 0, \"offset\": %zu, \"bytes\": %zu}", off, sizes[t] * sizeof(float));
            off += sizes[t] * sizeof(float);
        }
        ms_buf_printf(b, "]}%s\n", i + 1 < s->n ? "," : "");
    }
    ms_buf_puts(b, "  ],\n  \"scores\": ");
    ms_buf_puts(b, scores ? scores : "null");
    ms_buf_puts(b, "\n}\n");
    free(scores);
    if (b->oom) { free(out); return nomem(err, "the manifest"); }
    *bin = out;
    *bin_len = total;
    return MS_OK;
}
