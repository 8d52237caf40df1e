/* What a single MLP neuron writes, read in vocabulary space ("direct logit attribution"):
 * neuron j of layer l adds h_j * down[:, j] to the residual stream; the head sees that write
 * through the final RMSNorm's gain, so its direct effect on the logits is
 *     lm_head · ((norm_offset + final_norm) ⊙ down[:, j])        (per unit of h_j)
 * up to the positive factor 1/rms of the final residual. Later layers are ignored: it is the
 * neuron's direct path only. */
#ifndef MS_ATTRIBUTION_H
#define MS_ATTRIBUTION_H
#include "../model/model.h"

/* out[hidden] = column `neuron` of layer `layer`'s down_proj (the neuron's write direction) */
int ms_mlp_down_column(const ms_model *m, int layer, int neuron, float *out, ms_err *err);
/* logits[vocab] = lm_head · ((norm_offset + final_norm) ⊙ v), v of hidden size (the final RMSNorm's
 * gain without its 1/rms: for the whole norm, ms_unembed in engine/forward.h) */
int ms_unembed_direction(const ms_model *m, const float *v, float *logits, ms_err *err);
#endif
