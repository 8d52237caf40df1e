#include "state.h"
#include "../util/threads.h"
#include <stdlib.h>
#include <string.h>

size_t ms_state_chunk_floats(const ms_config *c, int C) {
    size_t dk = (size_t)c->lin_k_dim, dv = (size_t)c->lin_v_dim;
    /* gdn_chunk's A, Att, KK, DD: C*C each; W: C*dk; D: C*dv; cum: C; K S0 (state norms): C*dv.
     * gdn_step needs dv. */
    return 4 * (size_t)C * C + (size_t)C * dk + 2 * (size_t)C * dv + (size_t)C;
}

ms_pool *ms_state_pool(const ms_state *s) {
    return s->m->pool && s->n_work >= ms_pool_threads(s->m->pool) ? s->m->pool : NULL;
}

size_t ms_state_attn_floats(const ms_config *c, int n_ctx) {
    /* Q^T of one block [head_dim][block], scores [n_ctx][block] */
    return ((size_t)c->head_dim + (size_t)n_ctx) * MS_ATTN_BLOCK;
}

/* Floats needed; 0 on overflow. Layout is mirrored by carve() below. */
static size_t plan(const ms_config *c, int n_ctx, int B, int chunk, int n_work, size_t *out) {
    size_t H = (size_t)c->hidden, I = (size_t)c->intermediate, n = 0;
    size_t kvd = (size_t)ms_cfg_kv_dim(c), qd = (size_t)ms_cfg_q_dim(c);
    size_t qout = c->attn_gate ? 2 * qd : qd;
    size_t n_attn = (size_t)ms_cfg_n_mixer(c, MS_MIXER_ATTENTION), n_gdn = (size_t)ms_cfg_n_mixer(c, MS_MIXER_GDN);
    size_t conv = n_gdn ? (size_t)ms_cfg_gdn_conv_dim(c) : 0, vd = n_gdn ? (size_t)ms_cfg_gdn_value_dim(c) : 0;
    size_t Hv = n_gdn ? (size_t)c->lin_v_heads : 0;
    size_t ctx = (size_t)n_ctx, b = (size_t)B;
    double est = (double)n_attn * 2 * ctx * kvd + (double)n_gdn * ((c->conv_kernel - 1.0) * conv + Hv * c->lin_k_dim * c->lin_v_dim) +
                 b * (4.0 * H + 2.0 * I + qout + 2.0 * kvd + qd + 2.0 * conv + 2.0 * vd + 4.0 * Hv) + H + I +
                 (n_attn ? (double)n_work * ((double)c->head_dim + ctx) * MS_ATTN_BLOCK : 0.0);
    if (est > 1.2e9) return 0; /* > 4.8 GB: cannot exist in wasm32 anyway */
    n += n_attn * 2 * ctx * kvd;
    n += n_gdn * ((size_t)(c->conv_kernel - 1) * conv + Hv * (size_t)c->lin_k_dim * (size_t)c->lin_v_dim);
    n += b * (4 * H + 2 * I + qout + 2 * kvd + qd);
    n += b * (2 * conv + 2 * vd + 2 * Hv) + b * 2 * Hv;
    n += n_gdn ? (size_t)n_work * ms_state_chunk_floats(c, chunk) : 0; /* one GDN work area per thread */
    n += n_attn ? (size_t)n_work * ms_state_attn_floats(c, n_ctx) : 0; /* one attention work area per thread */
    n += (H > I ? H : I);
    *out = n;
    return n;
}

size_t ms_state_bytes(const ms_config *c, int n_ctx, int n_batch) { return ms_state_bytes_threads(c, n_ctx, n_batch, 1); }

size_t ms_state_bytes_threads(const ms_config *c, int n_ctx, int n_batch, int n_threads) {
    size_t n;
    if (!plan(c, n_ctx, n_batch, MS_GDN_CHUNK_MAX, n_threads, &n)) return 0;
    /* the floats, the struct, and the per-row squared norms of the DeltaNet state (doubles) */
    return n * sizeof(float) + sizeof(ms_state) + (size_t)n_batch * (size_t)(c->lin_v_heads > 0 ? c->lin_v_heads : 1) * sizeof(double);
}

ms_state *ms_state_create(const ms_model *m, int n_ctx, int n_batch, ms_err *err) {
    const ms_config *c = &m->cfg;
    if (n_ctx < 1 || n_ctx > c->max_pos) {
        ms_fail(err, MS_E_CONTEXT, "context length %d outside [1, %d] (max_position_embeddings)", n_ctx, c->max_pos);
        return NULL;
    }
    if (n_batch < 1 || n_batch > 4096) { ms_fail(err, MS_E_ARG, "batch size %d outside [1, 4096]", n_batch); return NULL; }
    const int chunk = MS_GDN_CHUNK_MAX, n_work = ms_pool_threads(m->pool);
    size_t nf;
    if (!plan(c, n_ctx, n_batch, chunk, n_work, &nf)) { ms_fail(err, MS_E_MEMORY, "state for context %d does not fit in memory", n_ctx); return NULL; }
    ms_state *s = calloc(1, sizeof *s);
    float *a = s ? calloc(nf, sizeof(float)) : NULL;
    double *g2 = a ? calloc((size_t)n_batch * (size_t)(c->lin_v_heads > 0 ? c->lin_v_heads : 1), sizeof(double)) : NULL;
    if (!g2) {
        free(a);
        free(s);
        ms_fail(err, MS_E_MEMORY, "cannot allocate %zu bytes of runtime state (context %d)", nf * sizeof(float), n_ctx);
        return NULL;
    }
    s->m = m; s->n_ctx = n_ctx; s->n_batch = n_batch; s->gdn_chunk = MS_GDN_CHUNK_DEFAULT;
    s->arena = a;
    s->gdn_norm2 = g2;
    s->bytes = nf * sizeof(float);
    size_t H = (size_t)c->hidden, I = (size_t)c->intermediate, B = (size_t)n_batch, ctx = (size_t)n_ctx;
    size_t kvd = (size_t)ms_cfg_kv_dim(c), qd = (size_t)ms_cfg_q_dim(c), qout = c->attn_gate ? 2 * qd : qd;
    int n_gdn = ms_cfg_n_mixer(c, MS_MIXER_GDN);
    size_t conv = n_gdn ? (size_t)ms_cfg_gdn_conv_dim(c) : 0, vd = n_gdn ? (size_t)ms_cfg_gdn_value_dim(c) : 0;
    size_t Hv = n_gdn ? (size_t)c->lin_v_heads : 0;
#define TAKE(n) (a += (n), a - (n))
    for (int l = 0; l < c->n_layers; l++) {
        if (c->mixer[l] == MS_MIXER_ATTENTION) { s->k_cache[l] = TAKE(ctx * kvd); s->v_cache[l] = TAKE(ctx * kvd); }
        else {
            s->conv_state[l] = TAKE((size_t)(c->conv_kernel - 1) * conv);
            s->S[l] = TAKE(Hv * (size_t)c->lin_k_dim * (size_t)c->lin_v_dim);
        }
    }
    s->x = TAKE(B * H); s->xn = TAKE(B * H); s->mix_out = TAKE(B * H); s->mlp_out = TAKE(B * H);
    s->gate = TAKE(B * I); s->up = TAKE(B * I);
    s->qg = TAKE(B * qout); s->k = TAKE(B * kvd); s->v = TAKE(B * kvd); s->o = TAKE(B * qd);
    s->mixed = TAKE(B * conv); s->y = TAKE(B * conv); s->z = TAKE(B * vd); s->core = TAKE(B * vd);
    s->ba = TAKE(B * 2 * Hv); s->gdn_beta = TAKE(B * Hv); s->gdn_g = TAKE(B * Hv);
    s->chunk = n_gdn ? TAKE((size_t)n_work * ms_state_chunk_floats(c, chunk)) : NULL;
    s->att_work = ms_cfg_n_mixer(c, MS_MIXER_ATTENTION) ? TAKE((size_t)n_work * ms_state_attn_floats(c, n_ctx)) : NULL;
    s->n_work = n_work;
    s->row = TAKE(H > I ? H : I);
#undef TAKE
    return s;
}

void ms_state_free(ms_state *s) {
    if (!s) return;
    free(s->arena);
    free(s->gdn_norm2);
    free(s);
}

void ms_state_reset(ms_state *s) {
    const ms_config *c = &s->m->cfg;
    s->pos = 0;
    for (int l = 0; l < c->n_layers; l++) {
        if (c->mixer[l] == MS_MIXER_GDN) {
            memset(s->conv_state[l], 0, (size_t)(c->conv_kernel - 1) * (size_t)ms_cfg_gdn_conv_dim(c) * sizeof(float));
            memset(s->S[l], 0, (size_t)c->lin_v_heads * (size_t)c->lin_k_dim * (size_t)c->lin_v_dim * sizeof(float));
        }
    }
}

int ms_state_set_gdn_mode(ms_state *s, int recurrent, int chunk, ms_err *err) {
    if (chunk < 1 || chunk > MS_GDN_CHUNK_MAX) return ms_fail(err, MS_E_ARG, "DeltaNet chunk %d is outside [1, %d]", chunk, MS_GDN_CHUNK_MAX);
    s->gdn_recurrent = recurrent != 0;
    s->gdn_chunk = chunk;
    return MS_OK;
}
