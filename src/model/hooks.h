/* What a forward call can show: the hook points of a block (TransformerLens names) and the
 * per-call statistics. Both are tables, one row each; the engine exports them by name
 * (ms_describe_engine in model/describe.c), so the JS side reads them and never copies them.
 * Adding a statistic is one row in MS_STAT_LIST plus its computation in engine/forward.c. */
#ifndef MS_HOOKS_H
#define MS_HOOKS_H
#include <stddef.h>
#include <stdint.h>
#include "config.h"

/* X(ID, name, width, what): width is MS_WIDTH_HIDDEN (d_model) or MS_WIDTH_MLP (d_mlp) */
#define MS_HOOK_LIST(X)                                                                                           \
    X(RESID_PRE, "hook_resid_pre", MS_WIDTH_HIDDEN, "the residual stream entering the block")                   \
    X(ATTN_OUT, "hook_attn_out", MS_WIDTH_HIDDEN, "what the mixer (attention or Gated DeltaNet) adds (Gemma: after post_attention_layernorm)")           \
    X(RESID_MID, "hook_resid_mid", MS_WIDTH_HIDDEN, "the stream after the mixer, before the MLP")                \
    X(MLP_OUT, "hook_mlp_out", MS_WIDTH_HIDDEN, "what the MLP adds (down_proj output; Gemma: after post_feedforward_layernorm)")                           \
    X(RESID_POST, "hook_resid_post", MS_WIDTH_HIDDEN, "the stream leaving the block")                            \
    X(MLP_PRE, "mlp.hook_pre", MS_WIDTH_MLP, "gate_proj of the normed stream, before the gate's SiLU (Gemma: GELU)")                      \
    X(MLP_PRE_LINEAR, "mlp.hook_pre_linear", MS_WIDTH_MLP, "up_proj of the normed stream")                      \
    X(MLP_POST, "mlp.hook_post", MS_WIDTH_MLP, "act(gate) * up, act SiLU or GELU: the neurons, the input of down_proj")          \
    X(LN1_NORMALIZED, "ln1.hook_normalized", MS_WIDTH_HIDDEN, "the mixer's input: the stream after RMSNorm and its weight") \
    X(LN2_NORMALIZED, "ln2.hook_normalized", MS_WIDTH_HIDDEN, "the MLP's input: the stream after RMSNorm and its weight (a transcoder's input)")

enum { MS_WIDTH_HIDDEN, MS_WIDTH_MLP };
typedef enum {
#define MS_X(id, name, width, what) MS_HOOK_##id,
    MS_HOOK_LIST(MS_X)
#undef MS_X
    MS_HOOK__COUNT
} ms_hook;

/* what an intervention does to a hook's values (engine/forward.h, ms_intervention) */
enum { MS_IV_SCALE, MS_IV_SET, MS_IV_ADD, MS_IV__COUNT };
extern const char *const ms_iv_op_names[MS_IV__COUNT];

typedef struct { const char *name; int width; const char *what; } ms_hook_info;
extern const ms_hook_info ms_hook_table[MS_HOOK__COUNT];

/* X(field, C type, element type, shape, when, what). Shapes: MS_SHAPE_L [layer], MS_SHAPE_LT
 * [layer][token], MS_SHAPE_LTK [layer][token][top_k], MS_SHAPE_LTH [layer][token][gdn_head]
 * (tokens of one forward call). when: MS_WHEN_ALWAYS, or MS_WHEN_GDN (only models with Gated
 * DeltaNet layers; 0 in attention layers). */
#define MS_STAT_LIST(X)                                                                                                    \
    X(resid_pre_l2, float, "f32", MS_SHAPE_LT, MS_WHEN_ALWAYS, "L2 norm of hook_resid_pre")                               \
    X(attn_out_l2, float, "f32", MS_SHAPE_LT, MS_WHEN_ALWAYS, "L2 norm of hook_attn_out (the mixer's write)")             \
    X(resid_mid_l2, float, "f32", MS_SHAPE_LT, MS_WHEN_ALWAYS, "L2 norm of hook_resid_mid")                               \
    X(mlp_out_l2, float, "f32", MS_SHAPE_LT, MS_WHEN_ALWAYS, "L2 norm of hook_mlp_out (the MLP's write)")                 \
    X(resid_post_l2, float, "f32", MS_SHAPE_LT, MS_WHEN_ALWAYS, "L2 norm of hook_resid_post")                             \
    X(mlp_ratio, float, "f32", MS_SHAPE_LT, MS_WHEN_ALWAYS, "mlp_out_l2 / resid_post_l2")                                 \
    X(top_idx, int32_t, "i32", MS_SHAPE_LTK, MS_WHEN_ALWAYS, "the top_k neurons of mlp.hook_post by |value|, descending") \
    X(top_val, float, "f32", MS_SHAPE_LTK, MS_WHEN_ALWAYS, "their signed values")                                        \
    X(layer_ms, double, "f64", MS_SHAPE_L, MS_WHEN_ALWAYS, "wall time of the call in each layer (ms)")                     \
    X(gdn_state_norm, float, "f32", MS_SHAPE_LTH, MS_WHEN_GDN, "Frobenius norm of each DeltaNet head's state")           \
    X(gdn_decay, float, "f32", MS_SHAPE_LT, MS_WHEN_GDN, "mean exp(g) over the DeltaNet heads (state decay)")            \
    X(gdn_beta, float, "f32", MS_SHAPE_LT, MS_WHEN_GDN, "mean beta over the DeltaNet heads (write strength)")          \
    X(gdn_decay_head, float, "f32", MS_SHAPE_LTH, MS_WHEN_GDN, "exp(g) of each DeltaNet head: how much of its state it keeps") \
    X(gdn_beta_head, float, "f32", MS_SHAPE_LTH, MS_WHEN_GDN, "beta of each DeltaNet head: how strongly it writes the token") \
    X(gdn_log_decay_head, float, "f32", MS_SHAPE_LTH, MS_WHEN_GDN, "g of each DeltaNet head, the log of its decay (TransformerLens 3's linear_attn.hook_log_decay)") \
    MS_STAT_TEST_ROWS(X)

/* A row the test builds alone have (-DMS_TEST_EXPORTS: build/wasm/mlpscope-test.wasm), to show that
 * one row here and its computation in engine/forward.c reach the API, the types, the CLI and the
 * Worker with no other edit (tests/stat-table.test.js) */
#ifdef MS_TEST_EXPORTS
#define MS_STAT_TEST_ROWS(X) X(resid_post_max, float, "f32", MS_SHAPE_LT, MS_WHEN_ALWAYS, "largest |value| of hook_resid_post (test builds only)")
#else
#define MS_STAT_TEST_ROWS(X)
#endif

enum { MS_SHAPE_L, MS_SHAPE_LT, MS_SHAPE_LTK, MS_SHAPE_LTH };
enum { MS_WHEN_ALWAYS, MS_WHEN_GDN };
typedef enum {
#define MS_X(field, ctype, type, shape, when, what) MS_STAT_##field,
    MS_STAT_LIST(MS_X)
#undef MS_X
    MS_STAT__COUNT
} ms_stat_id;

typedef struct {
    const char *name, *type, *what;
    int shape, when;
    size_t offset, elem_bytes; /* of the field in ms_stats, of one element */
} ms_stat_info;
extern const ms_stat_info ms_stat_table[MS_STAT__COUNT];
extern const char *const ms_shape_dims[4]; /* the dimensions' names as a JSON list body: "layer","token" */

/* The statistics of one forward call: one array per row of MS_STAT_LIST (NULL when its `when`
 * does not hold for the model). */
typedef struct {
    int n_layers, T, topk, gdn_heads;
#define MS_X(field, ctype, type, shape, when, what) ctype *field;
    MS_STAT_LIST(MS_X)
#undef MS_X
} ms_stats;

ms_stats *ms_stats_create(const ms_config *c, int T, int topk);
void ms_stats_free(ms_stats *st);
/* the array of statistic `id` (NULL if absent) and its element count */
void *ms_stats_array(const ms_stats *st, int id);
size_t ms_stats_count(const ms_stats *st, int id);

int ms_hook_width(const ms_config *c, int hook);
const char *ms_hook_name(int hook); /* "hook_resid_pre", "mlp.hook_post", ... */
/* "mlp.hook_post" -> MS_HOOK_MLP_POST; -1 if no such hook */
int ms_hook_from_name(const char *kind, size_t n);
/* "blocks.5.mlp.hook_post" -> layer 5, MS_HOOK_MLP_POST, checked against the model (E_ARG naming the
 * hook and what was expected) */
int ms_hook_parse(const ms_config *c, const char *name, size_t n, int *layer, int *hook, ms_err *err);

double ms_l2(const float *x, int n);
/* The k entries of x with the largest |x| (ties: lower index first), descending. */
void ms_topk_abs(const float *x, int n, int k, int32_t *idx, float *val);
#endif
