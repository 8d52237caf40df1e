/* Per-call statistics (docs/api.md, Statistics), TransformerLens names. All arrays are [layer][pos] (pos over
 * the tokens of one forward call) unless noted. */
#ifndef MS_STATS_H
#define MS_STATS_H
#include <stdint.h>
#include "../engine/config.h"

typedef enum {
    MS_HOOK_RESID_PRE = 0, /* blocks.{l}.hook_resid_pre */
    MS_HOOK_ATTN_OUT,      /* blocks.{l}.hook_attn_out  (attention or Gated DeltaNet output) */
    MS_HOOK_RESID_MID,     /* blocks.{l}.hook_resid_mid */
    MS_HOOK_MLP_OUT,       /* blocks.{l}.hook_mlp_out */
    MS_HOOK_RESID_POST,    /* blocks.{l}.hook_resid_post */
    MS_HOOK_MLP_PRE,       /* blocks.{l}.mlp.hook_pre        gate_proj(m), before SiLU */
    MS_HOOK_MLP_PRE_LINEAR,/* blocks.{l}.mlp.hook_pre_linear up_proj(m) */
    MS_HOOK_MLP_POST,      /* blocks.{l}.mlp.hook_post       silu(gate) ⊙ up: the neurons */
    MS_HOOK__COUNT
} ms_hook;

typedef struct {
    int n_layers, T, topk, gdn_heads;
    float *resid_pre_l2, *attn_out_l2, *resid_mid_l2, *mlp_out_l2, *resid_post_l2, *mlp_ratio;
    int32_t *top_idx; /* [layer][pos][topk], by |mlp.hook_post| descending */
    float *top_val;   /* signed values of those entries */
    double *layer_ms; /* [layer] wall time of this call */
    float *gdn_state_norm; /* [layer][pos][gdn_heads] Frobenius norm of each head's state (0 for attention layers) */
    float *gdn_decay, *gdn_beta; /* [layer][pos] mean exp(g), mean beta over heads */
} ms_stats;

ms_stats *ms_stats_create(const ms_config *c, int T, int topk);
void ms_stats_free(ms_stats *st);
int ms_hook_width(const ms_config *c, int hook);
const char *ms_hook_name(int hook); /* "hook_resid_pre", "mlp.hook_post", ... */
double ms_l2(const float *x, int n);
/* The k entries of x with the largest |x| (ties: lower index first), descending. */
void ms_topk_abs(const float *x, int n, int k, int32_t *idx, float *val);
#endif
