#include "weights.h"
#include "../util/threads.h"
#include <math.h>
#include <stdlib.h>

typedef struct {
    const ms_model *m;
    int layer;
    const float *gain;  /* the MLP norm's gain [hidden], or NULL (fold_norm off) */
    const float *downT; /* down_proj transposed: [intermediate][hidden] */
    float *rows;        /* two hidden-sized rows per part */
    float *out;
} geometry_job;

/* neurons [I * part / n, I * (part + 1) / n): w_gate and w_in dequantized row by row, w_out from downT */
static void geometry_part(void *ctx, int part, int n) {
    const geometry_job *j = ctx;
    const ms_layer *L = &j->m->layers[j->layer];
    const int H = j->m->cfg.hidden, I = j->m->cfg.intermediate;
    float *g = j->rows + (size_t)part * 2 * H, *u = g + H;
    for (int k = I * part / n; k < I * (part + 1) / n; k++) {
        ms_tensor_row_f32(L->gate, k, g);
        ms_tensor_row_f32(L->up, k, u);
        const float *o = j->downT + (size_t)k * H;
        double gg = 0, uu = 0, oo = 0, gu = 0, go = 0, uo = 0;
        for (int h = 0; h < H; h++) {
            const double w = j->gain ? j->gain[h] : 1.0, gh = w * g[h], uh = w * u[h], oh = o[h];
            gg += gh * gh; uu += uh * uh; oo += oh * oh;
            gu += gh * uh; go += gh * oh; uo += uh * oh;
        }
        const double ng = sqrt(gg), nu = sqrt(uu), no = sqrt(oo);
        float *r = j->out + (size_t)k * MS_GEO__COUNT;
        /* a zero vector has no direction: its cosines are 0 */
        r[MS_GEO_COS_GATE_IN] = ng > 0 && nu > 0 ? (float)(gu / (ng * nu)) : 0.0f;
        r[MS_GEO_COS_GATE_OUT] = ng > 0 && no > 0 ? (float)(go / (ng * no)) : 0.0f;
        r[MS_GEO_COS_IN_OUT] = nu > 0 && no > 0 ? (float)(uo / (nu * no)) : 0.0f;
        r[MS_GEO_NORM_GATE] = (float)ng;
        r[MS_GEO_NORM_IN] = (float)nu;
        r[MS_GEO_NORM_OUT] = (float)no;
    }
}

int ms_mlp_neuron_geometry(const ms_model *m, int layer, int fold_norm, float *out, ms_err *err) {
    const ms_config *c = &m->cfg;
    if (!m->finalized) return ms_fail(err, MS_E_STATE, "model is not fully loaded");
    if (layer < 0 || layer >= c->n_layers) return ms_fail(err, MS_E_ARG, "layer %d is not in 0..%d", layer, c->n_layers - 1);
    const ms_layer *L = &m->layers[layer];
    const int H = c->hidden, I = c->intermediate;
    ms_pool *pool = ms_pool_for_rows(m->pool, I);
    const int parts = pool ? ms_pool_threads(pool) : 1;
    float *downT = malloc((size_t)I * H * sizeof *downT);
    float *rows = malloc((size_t)(parts * 2 + 1) * (size_t)(H > I ? H : I) * sizeof *rows);
    float *gain = fold_norm ? malloc((size_t)H * sizeof *gain) : NULL;
    if (!downT || !rows || (fold_norm && !gain)) {
        free(downT); free(rows); free(gain);
        return ms_fail(err, MS_E_MEMORY, "cannot allocate %zu bytes for layer %d's neuron geometry", (size_t)I * H * sizeof(float), layer);
    }
    /* down_proj [hidden][intermediate], dequantized row by row into its transpose; folding the
     * norms also folds Gemma 3's post-MLP norm gain into w_out (the direction written) */
    for (int h = 0; h < H; h++) {
        ms_tensor_row_f32(L->down, h, rows);
        const float g = fold_norm && L->mlp_out_norm ? c->norm_offset + ((const float *)L->mlp_out_norm->data)[h] : 1.0f;
        for (int k = 0; k < I; k++) downT[(size_t)k * H + h] = rows[k] * g;
    }
    if (gain)
        for (int h = 0; h < H; h++) gain[h] = c->norm_offset + ((const float *)L->post_norm->data)[h];
    geometry_job job = {m, layer, gain, downT, rows, out};
    ms_pool_run(pool, geometry_part, &job);
    free(downT); free(rows); free(gain);
    return MS_OK;
}

typedef struct {
    const float *G, *U, *c; /* [I][H] w_gate and w_in rows (gain folded in or not), c[I] */
    int H, I;
    float *P;               /* [H][H]: P[i][j] = sum_k c_k G[k][i] U[k][j] */
} interaction_job;

static void interaction_part(void *ctx, int part, int n) {
    const interaction_job *j = ctx;
    const int H = j->H;
    for (int i = H * part / n; i < H * (part + 1) / n; i++) {
        float *p = j->P + (size_t)i * H;
        for (int h = 0; h < H; h++) p[h] = 0;
        for (int k = 0; k < j->I; k++) {
            if (j->c[k] == 0) continue; /* its rows were never filled (ms_mlp_interaction) */
            const float a = j->c[k] * j->G[(size_t)k * H + i];
            if (a == 0) continue;
            const float *u = j->U + (size_t)k * H;
            for (int h = 0; h < H; h++) p[h] += a * u[h];
        }
    }
}

int ms_mlp_interaction(const ms_model *m, int layer, const float *c, int fold_norm, float *Q, ms_err *err) {
    const ms_config *cf = &m->cfg;
    if (!m->finalized) return ms_fail(err, MS_E_STATE, "model is not fully loaded");
    if (layer < 0 || layer >= cf->n_layers) return ms_fail(err, MS_E_ARG, "layer %d is not in 0..%d", layer, cf->n_layers - 1);
    const ms_layer *L = &m->layers[layer];
    const int H = cf->hidden, I = cf->intermediate;
    for (int k = 0; k < I; k++)
        if (!isfinite(c[k])) return ms_fail(err, MS_E_ARG, "the read-out weight of neuron %d is not a finite number", k);
    float *G = malloc((size_t)I * H * sizeof *G), *U = malloc((size_t)I * H * sizeof *U);
    if (!G || !U) {
        free(G); free(U);
        return ms_fail(err, MS_E_MEMORY, "cannot allocate %zu bytes for layer %d's interaction matrix", 2 * (size_t)I * H * sizeof(float), layer);
    }
    const float *w = L->post_norm->data;
    for (int k = 0; k < I; k++) {
        float *g = G + (size_t)k * H, *u = U + (size_t)k * H;
        if (c[k] == 0) continue; /* rows that take no part are never read */
        ms_tensor_row_f32(L->gate, k, g);
        ms_tensor_row_f32(L->up, k, u);
        if (fold_norm)
            for (int h = 0; h < H; h++) { const float s = cf->norm_offset + w[h]; g[h] *= s; u[h] *= s; }
    }
    interaction_job job = {G, U, c, H, I, Q};
    ms_pool_run(ms_pool_for_rows(m->pool, H), interaction_part, &job);
    /* Q = (P + Pᵀ) / 4, in place */
    for (int i = 0; i < H; i++)
        for (int j = i; j < H; j++) {
            const float q = 0.25f * (Q[(size_t)i * H + j] + Q[(size_t)j * H + i]);
            Q[(size_t)i * H + j] = q;
            Q[(size_t)j * H + i] = q;
        }
    free(G); free(U);
    return MS_OK;
}
