/* The forward pass: prefill (T > 1) and decode (T == 1) are the same call. */
#ifndef MS_FORWARD_H
#define MS_FORWARD_H
#include "../model/state.h"
#include "../model/hooks.h"

/* A copy of hook `hook` of layer `layer` into dst: every token of the call ([T][width]) or, with
 * positions, only those tokens of the call, in that order ([n_positions][width]). */
typedef struct {
    int layer, hook;
    float *dst;
    const int32_t *positions; /* optional: 0 .. T-1 */
    int n_positions;
} ms_capture;
typedef struct {
    int layer, hook;          /* MS_HOOK_MLP_POST: scale chosen neurons; MS_HOOK_MLP_OUT: scale all */
    const int32_t *neurons;   /* for MS_HOOK_MLP_POST */
    int n_neurons;
    float scale;
} ms_intervention;

typedef struct {
    ms_stats *stats;                 /* optional; sized for T */
    const ms_capture *captures;
    int n_captures;
    const ms_intervention *interventions;
    int n_interventions;
    float *logits;                   /* optional: [vocab] for the last token, or [T][vocab] */
    int logits_all;
} ms_forward_opts;

/* Runs T tokens from the state's current position and advances it. Validates ids, context and
 * options before touching the state: on error the state is unchanged. */
int ms_forward(ms_state *s, const int32_t *ids, int T, const ms_forward_opts *o, ms_err *err);
/* final RMSNorm + head for one residual vector (logit lens uses it on any layer's output) */
void ms_unembed(ms_state *s, const float *resid, float *logits);
#endif
