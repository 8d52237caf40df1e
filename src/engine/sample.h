/* Token sampling, shared by every host so that a seed means the same thing everywhere. */
#ifndef MS_SAMPLE_H
#define MS_SAMPLE_H
#include <stdint.h>
#include "../kernels/kernels.h"
/* Picks a token from logits[0..n) (n = the tokenizer's real vocabulary: padded rows are never
 * candidates). temperature 0 = argmax. top_k <= 0: all; top_p >= 1: all. rng: xorshift64* state,
 * advanced on use. scratch: 2*n floats. Returns the id; *logprob = log p(id) under the
 * temperature-scaled distribution before truncation. exp_sum: the kernel for the softmax
 * denominator (NULL: the scalar one). */
int ms_sample(const float *logits, int n, float temperature, int top_k, float top_p, uint64_t *rng,
              float *logprob, float *scratch, ms_exp_sum_fn exp_sum);
uint64_t ms_rng_seed(uint64_t seed);
#endif
