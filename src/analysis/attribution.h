/* What a single MLP neuron writes, read in vocabulary space ("direct logit attribution"):
 * neuron j of layer l adds h_j * down[:, j] to the residual stream; the head sees that write
 * through the final RMSNorm's gain, so its direct effect on the logits is
 *     lm_head · ((norm_offset + final_norm) ⊙ down[:, j])        (per unit of h_j)
 * up to the positive factor 1/rms of the final residual. Later layers are ignored: it is the
 * neuron's direct path only. Gemma 3 norms the MLP's write (post_feedforward_layernorm) before it
 * joins the stream: its write is h_j * g ⊙ down[:, j] / rms(down h), g = norm_offset + w, so the
 * columns and read-outs below carry g, and ms_mlp_write_scale gives the per-token 1/rms. */
#ifndef MS_ATTRIBUTION_H
#define MS_ATTRIBUTION_H
#include "../model/model.h"

/* out[hidden] = column `neuron` of layer `layer`'s down_proj (the neuron's write direction; Gemma 3:
 * times the post-MLP norm's gain g) */
int ms_mlp_down_column(const ms_model *m, int layer, int neuron, float *out, ms_err *err);
/* logits[vocab] = lm_head · ((norm_offset + final_norm) ⊙ v), v of hidden size (the final RMSNorm's
 * gain without its 1/rms: for the whole norm, ms_unembed in engine/forward.h) */
int ms_unembed_direction(const ms_model *m, const float *v, float *logits, ms_err *err);
/* out[intermediate] = downᵀ · (g ⊙ u): every neuron's write direction read by one vector at once (with u
 * from ms_head_readout, each neuron's direct effect on a logit per unit of its activation) */
int ms_mlp_down_readout(const ms_model *m, int layer, const float *u, float *out, ms_err *err);
/* out[hidden] = (norm_offset + final_norm) ⊙ (lm_head[token] − lm_head[minus]) (no minus: -1): the
 * vector whose dot product with a residual write is that write's direct effect on logit(token)
 * (− logit(minus)), up to the final norm's 1/rms */
int ms_head_readout(const ms_model *m, int token, int minus, float *out, ms_err *err);
/* out[t] = the factor the MLP's write takes on token t after the neurons: 1/rms(down · h_t) for
 * Gemma 3's post-MLP norm (h [T][intermediate]: mlp.hook_post), 1 for the other families. Then
 * neuron j writes h_j * out[t] * (g ⊙ down[:, j]), and the neurons' writes sum to hook_mlp_out. */
int ms_mlp_write_scale(const ms_model *m, int layer, const float *h, int T, float *out, ms_err *err);
#endif
