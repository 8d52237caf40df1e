#include "lens.h"
#include <math.h>

void ms_lens_top(ms_state *s, const float *resid, int n_real, int k, float *logits_tmp, int32_t *ids, float *logits, float *probs) {
    ms_unembed(s, resid, logits_tmp);
    if (k > n_real) k = n_real;
    float mx = -INFINITY;
    for (int i = 0; i < n_real; i++) if (logits_tmp[i] > mx) mx = logits_tmp[i];
    double z = 0;
    for (int i = 0; i < n_real; i++) z += exp((double)logits_tmp[i] - mx);
    int filled = 0; /* insertion into the k best so far, descending; a tie keeps the lower id first */
    for (int i = 0; i < n_real; i++) {
        const float v = logits_tmp[i];
        if (filled == k && !(v > logits[k - 1])) continue;
        int p = filled < k ? filled++ : k - 1;
        while (p > 0 && logits[p - 1] < v) { ids[p] = ids[p - 1]; logits[p] = logits[p - 1]; p--; }
        ids[p] = i;
        logits[p] = v;
    }
    for (int j = 0; j < k; j++) probs[j] = (float)(exp((double)logits[j] - mx) / z);
}
