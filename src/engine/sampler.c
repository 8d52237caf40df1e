#include "sampler.h"
#include <stdlib.h>

struct ms_sampler {
    uint64_t rng;
    float logprob;
    int cap;
    ms_exp_sum_fn exp_sum;
    float *scratch; /* 2 * cap floats */
};

ms_sampler *ms_sampler_new(double seed, int n_vocab, ms_err *err) {
    if (n_vocab < 1) { ms_fail(err, MS_E_ARG, "sampler: a vocabulary of %d tokens", n_vocab); return NULL; }
    ms_sampler *s = calloc(1, sizeof *s);
    if (s) s->scratch = malloc(2 * (size_t)n_vocab * sizeof(float));
    if (!s || !s->scratch) {
        free(s);
        ms_fail(err, MS_E_MEMORY, "sampler: out of memory");
        return NULL;
    }
    /* a seed outside [0, 2^64) (or NaN) would make the conversion undefined: such seeds mean 0 */
    s->rng = ms_rng_seed(seed >= 0 && seed < 18446744073709551616.0 ? (uint64_t)seed : 0);
    s->cap = n_vocab;
    ms_kernels k;
    ms_kernels_init(&k, 1);
    s->exp_sum = k.exp_sum;
    return s;
}

void ms_sampler_free(ms_sampler *s) {
    if (!s) return;
    free(s->scratch);
    free(s);
}

int ms_sampler_next(ms_sampler *s, const float *logits, int n, float temperature, int top_k, float top_p) {
    if (n < 1 || n > s->cap) return -1;
    return ms_sample(logits, n, temperature, top_k, top_p, &s->rng, &s->logprob, s->scratch, s->exp_sum);
}

float ms_sampler_logprob(const ms_sampler *s) { return s->logprob; }
