#include "attribution.h"
#include "../layers/layers.h"
#include <stdlib.h>

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
        out[h] = row[neuron];
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
