#include "layers.h"
#include "../util/threads.h"

/* Softmax attention, as in Llama and in Qwen3.5's full-attention layers:
 *   q, k, v = wq·xn, wk·xn, wv·xn        (Qwen3.5: wq also yields a gate per head, interleaved
 *                                         per head as [query(head_dim) | gate(head_dim)])
 *   q, k    = rmsnorm per head (Qwen3, Qwen3.5), then RoPE on the first rotary_dim dims
 *   o_h     = softmax(q_h·K_j / sqrt(head_dim)) V_j   over positions 0..p, kv head j = h / group
 *             (Gemma 3: / sqrt(query_pre_attn_scalar); its sliding layers see positions p-window+1..p
 *             and turn by their own RoPE base; the global ones divide positions by the RoPE factor)
 *   o_h    *= sigmoid(gate_h)                (Qwen3.5)
 *   out     = wo·o
 * Decode and short batches take one query at a time; a prefill batch takes MS_ATTN_BLOCK queries
 * of one head at a time as two matrix products (attn_heads_blocked); either way the heads are
 * shared over the threads, each with its own work area. */
typedef struct {
    ms_state *s;
    int l, B;
    int hd, nh, kvd, group, qstride, qout, qd; /* head dim, query heads, kv width, heads per kv head, strides */
    float scale;                                /* 1 / sqrt(head_dim) (Gemma: 1 / sqrt(query_pre_attn_scalar)) */
    int window;                                 /* > 0: a sliding-window layer sees its last `window` positions */
    const float *kc, *vc;                       /* this layer's K and V caches [n_ctx][kvd] */
    const ms_attn_pattern *pattern;             /* optional: the weights are copied out here */
} attn_job;

/* the first key position query position p sees: 0, or in a sliding-window layer p - window + 1 */
static inline int first_key(const attn_job *j, int p) { return j->window && p >= j->window ? p - j->window + 1 : 0; }

/* the weights of query row t (of the batch) of head h, a[u] * inv for keys first..last (0 before), by stride */
static void keep_pattern(const attn_job *j, int h, int t, const float *a, size_t stride, float inv, int first, int last) {
    const ms_attn_pattern *P = j->pattern;
    float *row = P->dst + ((size_t)h * P->T + (size_t)(P->t0 + t)) * P->K;
    for (int u = 0; u < first && u < P->K; u++) row[u] = 0.0f;
    for (int u = first; u <= last && u < P->K; u++) row[u] = a[(size_t)u * stride] * inv;
    for (int u = last + 1; u < P->K; u++) row[u] = 0.0f;
}

/* o_h *= sigmoid(gate_h), the Qwen3.5 output gate, for token row t of head h */
static void attn_gate(const attn_job *j, int t, int h) {
    const float *g = j->s->qg + (size_t)t * j->qout + (size_t)h * j->qstride + j->hd;
    float *oh = j->s->o + (size_t)t * j->qd + (size_t)h * j->hd;
    for (int i = 0; i < j->hd; i++) oh[i] *= ms_sigmoid(g[i]);
}

/* Work area `part` (one per thread): Q^T of a block [hd][MS_ATTN_BLOCK], then the scores
 * [n_ctx][MS_ATTN_BLOCK] (the one-query path uses the first n_ctx of them). */
static float *attn_work(const ms_state *s, int part) {
    return s->att_work + (size_t)part * ms_state_attn_floats(&s->m->cfg, s->n_ctx);
}

/* Query heads [nh * part / n, nh * (part + 1) / n), one query at a time (decode, small batches):
 * scores by dot products, then a weighted sum of V. The heads of this range that share a KV head
 * (Qwen3.5: 4 query heads per KV head) go together, so each K and V row is read from memory once
 * for all of them; per head the arithmetic is the same as one head at a time. Scores come four
 * key rows at a time from the dot_rows kernel. */
static void attn_per_token(void *ctx, int part, int n) {
    const attn_job *j = ctx;
    const ms_state *s = j->s;
    const int hd = j->hd, nh = j->nh, kvd = j->kvd, qstride = j->qstride, n_ctx = s->n_ctx;
    const float *kc = j->kc, *vc = j->vc;
    float *att = attn_work(s, part) + (size_t)hd * MS_ATTN_BLOCK; /* scores [heads of a run][n_ctx] */
    const int h_end = nh * (part + 1) / n;
    for (int t = 0; t < j->B; t++) {
        const int p = s->pos + t, u_first = first_key(j, p);
        const float *q = s->qg + (size_t)t * j->qout;
        float *o = s->o + (size_t)t * j->qd;
        for (int h0 = nh * part / n, h1; h0 < h_end; h0 = h1) {
            const int g = h0 / j->group; /* heads h0 .. h1-1 read KV head g */
            h1 = (g + 1) * j->group < h_end ? (g + 1) * j->group : h_end;
            if (h1 - h0 > MS_ATTN_BLOCK) h1 = h0 + MS_ATTN_BLOCK;
            const int G = h1 - h0;
            for (int u0 = u_first; u0 <= p; u0 += 64) { /* 64 key rows at a time stay in cache for all G heads */
                const int nb = p + 1 - u0 < 64 ? p + 1 - u0 : 64;
                for (int r = 0; r < G; r++)
                    s->m->kern.dot_rows(att + (size_t)r * n_ctx + u0, q + (h0 + r) * qstride, kc + (size_t)u0 * kvd + (size_t)g * hd,
                                        (size_t)kvd, (size_t)nb, (size_t)hd, j->scale);
            }
            float inv[MS_ATTN_BLOCK];
            for (int r = 0; r < G; r++) {
                float *a = att + (size_t)r * n_ctx, mx = -INFINITY;
                for (int u = u_first; u <= p; u++) if (a[u] > mx) mx = a[u];
                inv[r] = (float)(1.0 / s->m->kern.exp_sum(a + u_first, a + u_first, (size_t)(p + 1 - u_first), mx, 1.0f));
                memset(o + (h0 + r) * hd, 0, (size_t)hd * sizeof(float));
                if (j->pattern) keep_pattern(j, h0 + r, t, a, 1, inv[r], u_first, p);
            }
            for (int u = u_first; u <= p; u++) {
                const float *vu = vc + (size_t)u * kvd + (size_t)g * hd;
                for (int r = 0; r < G; r++) {
                    const float a = att[(size_t)r * n_ctx + u] * inv[r];
                    float *oh = o + (h0 + r) * hd;
                    for (int i = 0; i < hd; i++) oh[i] += a * vu[i];
                }
            }
            if (s->m->cfg.attn_gate)
                for (int r = 0; r < G; r++) attn_gate(j, t, h0 + r);
        }
    }
}

/* Query heads [nh * part / n, nh * (part + 1) / n) for a prefill batch, MS_ATTN_BLOCK queries at a
 * time, as two matrix products per block with the work area of `part`:
 *   Sc^T [keys][queries] = K Q^T            (keys 0 .. last query's position)
 *   softmax down each column, causal: key u counts for query t only if u <= pos + t
 *   O [queries][head_dim] = P V              (P = the transposed Sc^T, read by strides)      */
static void attn_heads_blocked(void *ctx, int part, int n) {
    const attn_job *j = ctx;
    const ms_state *s = j->s;
    const ms_model *m = s->m;
    const int hd = j->hd, nh = j->nh, kvd = j->kvd, qout = j->qout, qd = j->qd, NB = MS_ATTN_BLOCK;
    const float scale = j->scale, *kc = j->kc, *vc = j->vc;
    float *qt = attn_work(s, part);  /* [hd][NB] */
    float *sc = qt + (size_t)hd * NB; /* [keys][NB] */
    for (int h = nh * part / n; h < nh * (part + 1) / n; h++) {
        const int g = h / j->group;
        for (int t0 = 0; t0 < j->B; t0 += NB) {
            const int nq = j->B - t0 < NB ? j->B - t0 : NB, nk = s->pos + t0 + nq;
            for (int t = 0; t < nq; t++) {
                const float *qh = s->qg + (size_t)(t0 + t) * qout + (size_t)h * j->qstride;
                for (int x = 0; x < hd; x++) qt[(size_t)x * nq + t] = qh[x];
            }
            memset(sc, 0, (size_t)nk * nq * sizeof(float));
            m->kern.gemm_acc(sc, (size_t)nq, kc + (size_t)g * hd, (size_t)kvd, 1, qt, (size_t)nq, nk, hd, nq, 1.0f);
            for (int t = 0; t < nq; t++) {
                const int last = s->pos + t0 + t, first = first_key(j, last); /* keys first..last are visible to this query */
                float mx = -INFINITY;
                for (int u = 0; u < first; u++) sc[(size_t)u * nq + t] = 0.0f;
                for (int u = first; u <= last; u++) {
                    float *a = &sc[(size_t)u * nq + t];
                    *a *= scale;
                    if (*a > mx) mx = *a;
                }
                double sum = 0;
                for (int u = first; u <= last; u++) { float *a = &sc[(size_t)u * nq + t]; *a = expf(*a - mx); sum += *a; }
                const float inv = (float)(1.0 / sum);
                for (int u = first; u <= last; u++) sc[(size_t)u * nq + t] *= inv;
                for (int u = last + 1; u < nk; u++) sc[(size_t)u * nq + t] = 0.0f;
                if (j->pattern) keep_pattern(j, h, t0 + t, sc + t, (size_t)nq, 1.0f, first, last);
            }
            float *ob = s->o + (size_t)t0 * qd + (size_t)h * hd;
            for (int t = 0; t < nq; t++) memset(ob + (size_t)t * qd, 0, (size_t)hd * sizeof(float));
            m->kern.gemm_acc(ob, (size_t)qd, sc, 1, (size_t)nq, vc + (size_t)g * hd, (size_t)kvd, nq, nk, hd, 1.0f);
            if (m->cfg.attn_gate)
                for (int t = 0; t < nq; t++) attn_gate(j, t0 + t, h);
        }
    }
}

void ms_attention(ms_state *s, int l, const float *xn, int B, float *out, const ms_attn_pattern *pattern) {
    const ms_model *m = s->m;
    const ms_config *c = &m->cfg;
    const ms_layer *L = &m->layers[l];
    const int hd = c->head_dim, nh = c->n_heads, nkv = c->n_kv_heads;
    const int kvd = nkv * hd, qstride = c->attn_gate ? 2 * hd : hd, qout = nh * qstride;

    ms_linear(m, L->wq, xn, B, s->qg);
    ms_linear(m, L->wk, xn, B, s->k);
    ms_linear(m, L->wv, xn, B, s->v);

    for (int t = 0; t < B; t++) {
        const int p = s->pos + t;
        float *q = s->qg + (size_t)t * qout, *k = s->k + (size_t)t * kvd, *v = s->v + (size_t)t * kvd;
        if (c->qk_norm) {
            for (int h = 0; h < nh; h++) ms_rmsnorm(q + h * qstride, q + h * qstride, L->q_norm->data, hd, c->eps, c->norm_offset);
            for (int h = 0; h < nkv; h++) ms_rmsnorm(k + h * hd, k + h * hd, L->k_norm->data, hd, c->eps, c->norm_offset);
        }
        const double theta = c->sliding[l] ? c->rope_theta_local : c->rope_theta, rp = c->sliding[l] ? p : p / c->rope_scale;
        ms_rope(q, nh, qstride, c->rotary_dim, rp, theta, c->rope_layout);
        ms_rope(k, nkv, hd, c->rotary_dim, rp, theta, c->rope_layout);
        memcpy(s->k_cache[l] + (size_t)p * kvd, k, (size_t)kvd * sizeof(float));
        memcpy(s->v_cache[l] + (size_t)p * kvd, v, (size_t)kvd * sizeof(float));
    }

    /* the heads are independent, so they are shared out over the model's threads, except for
     * short decode contexts (fewer than 32 positions: less work than waking a thread) */
    attn_job job = {.s = s, .l = l, .B = B, .hd = hd, .nh = nh, .kvd = kvd, .group = nh / nkv, .qstride = qstride,
                    .qout = qout, .qd = nh * hd, .scale = (float)(1.0 / sqrt(c->query_scalar)), .window = c->sliding[l] ? c->sliding_window : 0, .kc = s->k_cache[l], .vc = s->v_cache[l],
                    .pattern = pattern};
    ms_job_fn fn = B >= MS_ATTN_BLOCK / 4 ? attn_heads_blocked : attn_per_token;
    ms_pool *pool = ms_state_pool(s);
    ms_pool_run(nh > 1 && (fn == attn_heads_blocked || s->pos + B >= 32) ? pool : NULL, fn, &job);
    ms_linear(m, L->wo, s->o, B, out);
}
