#include "attribution.h"
#include "../layers/layers.h"
#include <math.h>
#include <stdlib.h>

/* The gain a layer's MLP write passes through before it joins the stream: Gemma 3's
 * post_feedforward_layernorm (norm_offset + w)[h]; 1 for the families without one. */
static float out_gain(const ms_model *m, int layer, int64_t h) {
    const ms_tensor *n = m->layers[layer].mlp_out_norm;
    return n ? m->cfg.norm_offset + ((const float *)n->data)[h] : 1.0f;
}

int ms_mlp_down_column(const ms_model *m, int layer, int neuron, float *out, ms_err *err) {
    const ms_config *c = &m->cfg;
    if (!m->finalized) return ms_fail(err, MS_E_STATE, "model is not fully loaded");
    if (layer < 0 || layer >= c->n_layers) return ms_fail(err, MS_E_ARG, "layer %d is not in 0..%d", layer, c->n_layers - 1);
    if (neuron < 0 || neuron >= c->intermediate) return ms_fail(err, MS_E_ARG, "neuron %d is not in 0..%d", neuron, c->intermediate - 1);
    const ms_tensor *down = m->layers[layer].down; /* [hidden][intermediate] */
    float *row = malloc((size_t)down->cols * sizeof *row);
    if (!row) return ms_fail(err, MS_E_MEMORY, "cannot allocate a row of %s", down->name);
    /* quantized rows dequantize whole blocks, so the column is read row by row */
    for (int64_t h = 0; h < down->rows; h++) {
        ms_tensor_row_f32(down, h, row);
        out[h] = row[neuron] * out_gain(m, layer, h);
    }
    free(row);
    return MS_OK;
}

int ms_unembed_direction(const ms_model *m, const float *v, float *logits, ms_err *err) {
    const ms_config *c = &m->cfg;
    if (!m->finalized) return ms_fail(err, MS_E_STATE, "model is not fully loaded");
    float *g = malloc((size_t)c->hidden * sizeof *g);
    if (!g) return ms_fail(err, MS_E_MEMORY, "cannot allocate %d floats", c->hidden);
    const float *w = m->final_norm->data;
    for (int i = 0; i < c->hidden; i++) g[i] = (c->norm_offset + w[i]) * v[i];
    ms_linear_exact(m, m->lm_head, g, 1, logits); /* a weight direction: read exactly in every mode */
    free(g);
    return MS_OK;
}

int ms_mlp_down_readout(const ms_model *m, int layer, const float *u, float *out, ms_err *err) {
    const ms_config *c = &m->cfg;
    if (!m->finalized) return ms_fail(err, MS_E_STATE, "model is not fully loaded");
    if (layer < 0 || layer >= c->n_layers) return ms_fail(err, MS_E_ARG, "layer %d is not in 0..%d", layer, c->n_layers - 1);
    const ms_tensor *down = m->layers[layer].down; /* [hidden][intermediate] */
    float *row = malloc((size_t)down->cols * sizeof *row);
    if (!row) return ms_fail(err, MS_E_MEMORY, "cannot allocate a row of %s", down->name);
    for (int64_t j = 0; j < down->cols; j++) out[j] = 0;
    /* row by row (quantized rows dequantize whole blocks): out += u[h] * down[h][:] */
    for (int64_t h = 0; h < down->rows; h++) {
        ms_tensor_row_f32(down, h, row);
        const float uh = u[h] * out_gain(m, layer, h);
        for (int64_t j = 0; j < down->cols; j++) out[j] += uh * row[j];
    }
    free(row);
    return MS_OK;
}

int ms_head_readout(const ms_model *m, int token, int minus, float *out, ms_err *err) {
    const ms_config *c = &m->cfg;
    if (!m->finalized) return ms_fail(err, MS_E_STATE, "model is not fully loaded");
    const ms_tensor *head = m->lm_head; /* [vocab][hidden] */
    if (token < 0 || token >= head->rows || minus >= head->rows) return ms_fail(err, MS_E_ARG, "token %d (or %d) is not in 0..%lld", token, minus, (long long)head->rows - 1);
    float *row = malloc((size_t)c->hidden * sizeof *row);
    if (!row) return ms_fail(err, MS_E_MEMORY, "cannot allocate %d floats", c->hidden);
    ms_tensor_row_f32(head, token, out);
    if (minus >= 0) {
        ms_tensor_row_f32(head, minus, row);
        for (int i = 0; i < c->hidden; i++) out[i] -= row[i];
    }
    const float *w = m->final_norm->data;
    for (int i = 0; i < c->hidden; i++) out[i] *= c->norm_offset + w[i];
    free(row);
    return MS_OK;
}

int ms_mlp_write_scale(const ms_model *m, int layer, const float *h, int T, float *out, ms_err *err) {
    const ms_config *c = &m->cfg;
    if (!m->finalized) return ms_fail(err, MS_E_STATE, "model is not fully loaded");
    if (layer < 0 || layer >= c->n_layers) return ms_fail(err, MS_E_ARG, "layer %d is not in 0..%d", layer, c->n_layers - 1);
    if (T < 0) return ms_fail(err, MS_E_ARG, "%d tokens", T);
    if (!m->layers[layer].mlp_out_norm) {
        for (int t = 0; t < T; t++) out[t] = 1.0f;
        return MS_OK;
    }
    float *d = malloc((size_t)c->hidden * sizeof *d);
    if (!d) return ms_fail(err, MS_E_MEMORY, "cannot allocate %d floats", c->hidden);
    for (int t = 0; t < T; t++) {
        ms_linear_exact(m, m->layers[layer].down, h + (size_t)t * c->intermediate, 1, d);
        double ss = 0;
        for (int i = 0; i < c->hidden; i++) ss += (double)d[i] * d[i];
        out[t] = (float)(1.0 / sqrt(ss / c->hidden + c->eps));
    }
    free(d);
    return MS_OK;
}
