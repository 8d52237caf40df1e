/* A sampler: what generation keeps between tokens (the random state, the scratch the sampler
 * sorts in, the last token's log-probability), made once per generation with the kernel that sums
 * the softmax, so each token costs one call. The draw itself is ms_sample (sample.h). */
#ifndef MS_SAMPLER_H
#define MS_SAMPLER_H
#include "sample.h"
#include "../util/error.h"

typedef struct ms_sampler ms_sampler;
/* seed: an integer in [0, 2^64) (anything else, NaN too, means 0); n_vocab: the most logits a
 * draw will see */
ms_sampler *ms_sampler_new(double seed, int n_vocab, ms_err *err);
void ms_sampler_free(ms_sampler *s);
/* the next token from logits[0..n) (n <= n_vocab; see ms_sample); -1 when n is out of range */
int ms_sampler_next(ms_sampler *s, const float *logits, int n, float temperature, int top_k, float top_p);
/* log p of the last token drawn, under the temperature-scaled distribution before truncation */
float ms_sampler_logprob(const ms_sampler *s);
#endif
