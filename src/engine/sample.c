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

/* A candidate token: its logit (once chosen and sorted: its unnormalised probability) and its id.
 * "Better" = the higher logit, then the lower id, so the order (and therefore a seed's samples)
 * never depends on the sort algorithm. Candidates are chosen by logit, so e^x is only taken for
 * the kept ones. */
typedef struct { float v; int32_t id; } cand;

static int better(cand a, cand b) { return a.v > b.v || (a.v == b.v && a.id < b.id); }
static int cand_cmp(const void *x, const void *y) {
    cand a = *(const cand *)x, b = *(const cand *)y;
    return better(a, b) ? -1 : better(b, a) ? 1 : 0;
}

/* The k best of n with a heap whose root is the worst kept: O(n log k). Returns how many. */
static int top_k_select(const float *logits, int n, int k, cand *h) {
    int m = 0;
    for (int i = 0; i < n; i++) {
        cand c = {logits[i], i};
        if (m < k) { /* sift up */
            int j = m++;
            while (j > 0 && better(h[(j - 1) / 2], c)) { h[j] = h[(j - 1) / 2]; j = (j - 1) / 2; }
            h[j] = c;
        } else if (better(c, h[0])) { /* replace the root, sift down */
            int j = 0;
            for (;;) {
                int a = 2 * j + 1, w = j;
                cand cw = c;
                if (a < m && better(cw, h[a])) { w = a; cw = h[a]; }
                if (a + 1 < m && better(cw, h[a + 1])) w = a + 1;
                if (w == j) break;
                h[j] = h[w];
                j = w;
            }
            h[j] = c;
        }
    }
    return m;
}

int ms_sample(const float *logits, int n, float temperature, int top_k, float top_p, uint64_t *rng,
              float *logprob, float *scratch, ms_exp_sum_fn exp_sum) {
    int best = 0;
    for (int i = 1; i < n; i++) if (logits[i] > logits[best]) best = i;
    /* a temperature so small that 1/T overflows samples like 0 (greedy) */
    if (!(temperature > 0) || !isfinite(1.0f / temperature)) temperature = 0;
    const float T = temperature > 0 ? temperature : 1.0f, inv_t = 1.0f / T, lb = logits[best];
    /* with nothing to cut, the draw walks the vocabulary in id order over the same values that
     * make the denominator: they are kept in scratch instead of being computed twice */
    const int walk = temperature > 0 && n > 1 && !(top_k > 0 && top_k < n) && !(top_p < 1.0f);
    const double z = (exp_sum ? exp_sum : ms_exp_sum_f32_generic)(walk ? scratch : NULL, logits, (size_t)n, lb, inv_t);
    const double lz = log(z);
    int pick = best;
    if (temperature > 0 && n > 1) {
        cand *c = (cand *)(void *)scratch; /* 2n floats: room for n candidates */
        int m = 0;
        double sum = 0;
        if (top_k > 0 && top_k < n) {
            m = top_k_select(logits, n, top_k, c);
        } else if (top_p < 1.0f) {
            /* Only tokens with p >= (1 - top_p) / (n - 1) can be in the nucleus: all the others
             * together hold less than 1 - top_p. Only those (in logit terms, with a margin for
             * rounding) are sorted. */
            const double cut = (1.0 - (top_p > 0 ? top_p : 0)) / (n - 1) * z;
            const float lcut = lb + (float)((log(cut) - 1e-3) * T);
            for (int i = 0; i < n; i++) if (logits[i] >= lcut || i == best) c[m++] = (cand){logits[i], i};
        }
        if (m) {
            qsort(c, (size_t)m, sizeof *c, cand_cmp);
            for (int a = 0; a < m; a++) { c[a].v = expf((c[a].v - lb) * inv_t); sum += c[a].v; }
            if (top_p < 1.0f) { /* the smallest prefix holding top_p of the mass */
                const double total = top_k > 0 && top_k < n ? sum : z; /* top-k first, then top-p within it */
                double acc = 0;
                for (int a = 0; a < m; a++) { acc += c[a].v; if (acc >= top_p * total) { m = a + 1; break; } }
                sum = 0;
                for (int a = 0; a < m; a++) sum += c[a].v;
            }
            double r = rng_f32(rng) * sum, acc = 0;
            pick = c[m - 1].id;
            for (int a = 0; a < m; a++) { acc += c[a].v; if (r < acc) { pick = c[a].id; break; } }
        } else { /* walk: scratch holds e^((logit - max) / T) of every token */
            double r = rng_f32(rng) * z, acc = 0;
            pick = best;
            for (int i = 0; i < n; i++) { acc += scratch[i]; if (r < acc) { pick = i; break; } }
        }
    }
    if (logprob) *logprob = (float)((logits[pick] - lb) * inv_t - lz);
    return pick;
}
