/* The logit lens: what the residual stream at some layer would predict if the model stopped
 * there, i.e. the final RMSNorm and the head applied to it, as softmax probabilities. */
#ifndef MS_LENS_H
#define MS_LENS_H
#include "../engine/forward.h"

/* The k most likely of the first n_real tokens for residual vector `resid`: ids, logits and
 * probabilities (softmax over the n_real logits, in double), ties to the lower id. logits_tmp
 * holds the vocabulary's logits (cfg.vocab floats). */
void ms_lens_top(ms_state *s, const float *resid, int n_real, int k, float *logits_tmp, int32_t *ids, float *logits, float *probs);
#endif
