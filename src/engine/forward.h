/* The forward pass: prefill (T > 1) and decode (T == 1) are the same call. */
#ifndef MS_FORWARD_H
#define MS_FORWARD_H
#include "../model/state.h"
#include "../model/hooks.h"
#include "../layers/transcoder.h"

/* A copy of hook `hook` of layer `layer` into dst: every token of the call ([T][width]) or, with
 * positions, only those tokens of the call, in that order ([n_positions][width]). */
typedef struct {
    int layer, hook;
    float *dst;
    const int32_t *positions; /* optional: 0 .. T-1 */
    int n_positions;
} ms_capture;
/* A change to hook `hook` of layer `layer`, made as the pass goes by (everything after it sees the
 * changed values, the statistics and captures of that hook too):
 *   scale: x[d] *= value       set: x[d] = v[d]       add: x[d] += v[d]
 * where v[d] is vector[k] for the k-th listed component (or component d when dims is NULL), else
 * value. dims: the components (neurons of an MLP hook, dimensions of the residual stream), NULL
 * for all; positions: sequence positions (0 = the sequence's first token, so a decode step is
 * matched too), NULL for all. Zero-ablation is set 0; steering is add with a vector. */
typedef struct {
    int layer, hook, op;
    const int32_t *dims;
    int n_dims;
    const int32_t *positions;
    int n_positions;
    float value;
    const float *vector;      /* NULL, or [n_dims] (dims given) or [width] (all components) */
} ms_intervention;

/* The attention pattern of a full-attention layer (TransformerLens' attn.hook_pattern): the
 * softmax weights [head][query][key], queries the call's T tokens, keys the K = position at the
 * call's start + T positions of the sequence (a query's row is 0 past its own position). */
typedef struct {
    int layer;
    float *dst;
} ms_pattern_capture;

/* A change to one transcoder feature (blocks.L.transcoder.hook_feature; feature -1: every one), as
 * ms_intervention does to a hook: scale a *= value, set a = value, add a += value, at sequence
 * positions (NULL: all). */
typedef struct {
    int feature, op;
    const int32_t *positions;
    int n_positions;
    float value;
} ms_feature_edit;

/* One MLP read by (keep_error) or replaced by a transcoder (layers/transcoder.h) on the MLP's own
 * input (after the ln2 hook): its k features of the call's tokens land in idx/val ([rows][k],
 * rows >= the call's tokens), z ([rows][F]) is scratch. keep_error: the MLP's output stays (the
 * transcoder plus its error term is the MLP, exactly) and feature edits add what they change,
 * decode(a') - decode(a); else the transcoder's output, decode(a'), replaces it. features:
 * optional [rows][F], the features of the call's tokens, dense, after the edits. y: [rows][2][H]
 * scratch when there are edits. Decoding sums the features in index order. */
typedef struct {
    const ms_transcoder *tc;
    int keep_error, rows;
    float *z, *val;
    int32_t *idx;
    float *features, *y;
    const ms_feature_edit *edits;
    int n_edits;
} ms_mlp_replacement;

typedef struct {
    ms_stats *stats;                 /* optional; sized for T */
    const ms_pattern_capture *patterns;
    int n_patterns;
    const ms_capture *captures;
    int n_captures;
    const ms_intervention *interventions;
    int n_interventions;
    float *logits;                   /* optional: [vocab] for the last token, or [T][vocab] */
    int logits_all;
    const uint8_t *bilinear_mlp;     /* optional [n_layers]: 1 = that MLP's SiLU replaced by z/2 */
    const ms_mlp_replacement *replace; /* optional [n_layers]: .tc NULL keeps that layer's MLP */
} ms_forward_opts;

/* The rules an intervention must meet (E_ARG naming the field otherwise): ms_forward checks every
 * one before it runs, and analysis/run.c before it keeps a copy. */
int ms_intervention_check(const ms_config *c, const ms_intervention *iv, int n_ctx, ms_err *err);
/* Runs T tokens from the state's current position and advances it. Validates ids, context and
 * options before touching the state: on error the state is unchanged. */
int ms_forward(ms_state *s, const int32_t *ids, int T, const ms_forward_opts *o, ms_err *err);
/* final RMSNorm + head for one residual vector (logit lens uses it on any layer's output) */
void ms_unembed(ms_state *s, const float *resid, float *logits);
#endif
