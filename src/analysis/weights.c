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
    /* down_proj [hidden][intermediate], dequantized row by row into its transpose */
    for (int h = 0; h < H; h++) {
        ms_tensor_row_f32(L->down, h, rows);
        for (int k = 0; k < I; k++) downT[(size_t)k * H + h] = rows[k];
    }
    if (gain)
        for (int h = 0; h < H; h++) gain[h] = c->norm_offset + ((const float *)L->post_norm->data)[h];
    geometry_job job = {m, layer, gain, downT, rows, out};
    ms_pool_run(pool, geometry_part, &job);
    free(downT); free(rows); free(gain);
    return MS_OK;
}
