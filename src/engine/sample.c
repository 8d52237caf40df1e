#include "sample.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

uint64_t ms_rng_seed(uint64_t seed) {
    uint64_t z = seed + 0x9E3779B97F4A7C15ull; /* splitmix64 so that seed 0 works */
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return z ? z : 1;
}

static float rng_f32(uint64_t *s) {
    *s ^= *s >> 12; *s ^= *s << 25; *s ^= *s >> 27;
    return (float)((*s * 0x2545F4914F6CDD1Dull) >> 40) / 16777216.0f; /* [0, 1) */
}

int ms_sample(const float *logits, int n, float temperature, int top_k, float top_p, uint64_t *rng,
              float *logprob, float *scratch) {
    int best = 0;
    for (int i = 1; i < n; i++) if (logits[i] > logits[best]) best = i;
    const float T = temperature > 0 ? temperature : 1.0f;
    double z = 0;
    for (int i = 0; i < n; i++) z += exp((double)(logits[i] - logits[best]) / T);
    const double lz = log(z);
    if (!(temperature > 0)) {
        if (logprob) *logprob = (float)-lz;
        return best;
    }
    /* candidates: sort indices by logit (descending) — selection of the top_k then top_p prefix */
    int32_t *idx = (int32_t *)(void *)scratch;
    float *p = scratch + n;
    int m = 0;
    for (int i = 0; i < n; i++) idx[m++] = i;
    int k = (top_k > 0 && top_k < n) ? top_k : n;
    /* partial selection sort is O(n k); for full sorts use insertion on the kept prefix */
    if (k < n || top_p < 1.0f) {
        if (k == n) k = n < 1024 ? n : 1024; /* top_p alone: nucleus taken within the 1024 best */
        for (int a = 0; a < k; a++) {
            int bi = a;
            for (int b = a + 1; b < n; b++) if (logits[idx[b]] > logits[idx[bi]]) bi = b;
            int tmp = idx[a]; idx[a] = idx[bi]; idx[bi] = tmp;
        }
    }
    double sum = 0;
    for (int a = 0; a < k; a++) { p[a] = (float)exp((double)(logits[idx[a]] - logits[best]) / T); sum += p[a]; }
    if (top_p < 1.0f) {
        double acc = 0;
        int keep = k;
        for (int a = 0; a < k; a++) { acc += p[a] / sum; if (acc >= top_p) { keep = a + 1; break; } }
        k = keep;
        sum = 0;
        for (int a = 0; a < k; a++) sum += p[a];
    }
    double r = rng_f32(rng) * sum, acc = 0;
    int pick = idx[k - 1];
    for (int a = 0; a < k; a++) { acc += p[a]; if (r < acc) { pick = idx[a]; break; } }
    if (logprob) *logprob = (float)((logits[pick] - logits[best]) / T - lz);
    return pick;
}
