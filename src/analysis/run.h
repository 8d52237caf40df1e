/* One forward call as a user asks for it: statistics, hooks by name, interventions, the logit
 * lens and logits, set up first, then executed once. This is what the wasm API exposes
 * (api/api.c wraps these functions one to one). */
#ifndef MS_RUN_H
#define MS_RUN_H
#include "../engine/forward.h"

typedef struct ms_run ms_run;

/* What logits a call returns, X(ID, name) in code order (engine info "logits_modes", index = code):
 * none, the last token's, every token's ([T][vocab]) */
#define MS_LOGITS_LIST(X) X(NONE, "none") X(LAST, "last") X(ALL, "all")
enum {
#define MS_X(id, name) MS_LOGITS_##id,
    MS_LOGITS_LIST(MS_X)
#undef MS_X
    MS_LOGITS__COUNT
};
/* The logit lens results: one array per field (ids, logits, probs) laid out [position][kind]
 * [layer][k] (MS_LENS_SHAPE, engine info "lens"), the kinds X(ID, hook) in order: the stream
 * leaving each block, and with after_mixer also the stream before its MLP */
#define MS_LENS_SHAPE "\"position\",\"kind\",\"layer\",\"k\""
#define MS_LENS_KINDS(X) X(POST, MS_HOOK_RESID_POST) X(MID, MS_HOOK_RESID_MID)

/* T tokens; want_stats with topk neurons per token; logits_mode MS_LOGITS_* */
ms_run *ms_run_create(ms_state *s, int T, int want_stats, int topk, int logits_mode, ms_err *err);
void ms_run_destroy(ms_run *r);
/* capture hook `name` ("blocks.{layer}.{hook}"): returns its index (the same for a name asked twice) */
int ms_run_add_hook(ms_run *r, const char *name, size_t n, ms_err *err);
/* the captured values of hook index i after ms_run_execute, [T][width]; *count = T * width */
const float *ms_run_hook_values(const ms_run *r, int i, size_t *count);
/* change hook `hook` (a block's hook point, e.g. "hook_resid_post" or "mlp.hook_post") of `layer`
 * (engine/forward.h, ms_intervention): op MS_IV_SCALE / SET / ADD; dims and positions (sequence
 * positions) empty for all; vector empty (use value) or one value per component */
int ms_run_add_intervention(ms_run *r, int layer, const char *hook, size_t hook_len, int op, const int32_t *dims, int n_dims,
                            const int32_t *positions, int n_positions, float value, const float *vector, int n_vector, ms_err *err);
/* layer `layer`'s MLP runs with its SiLU replaced by z/2, its bilinear term (engine/forward.h) */
int ms_run_add_bilinear(ms_run *r, int layer, ms_err *err);
/* the logit lens at `positions` (negative: from the end) of every layer's hook_resid_post and,
 * with after_mixer, hook_resid_mid: the k most likely of the first n_real tokens */
/* A transcoder on layer `layer` for this call (engine/forward.h, ms_mlp_replacement): keep_error
 * keeps the MLP's output (feature edits add what they change), else the transcoder replaces it;
 * want_features keeps the features of every token, dense ([T][F], ms_run_features). The
 * transcoder must outlive the run. */
int ms_run_add_transcoder(ms_run *r, int layer, const ms_transcoder *tc, int keep_error, int want_features, ms_err *err);
/* scale / set / add one feature (-1: every feature) of that layer's transcoder, at sequence
 * positions (none: all) */
int ms_run_add_feature_edit(ms_run *r, int layer, int feature, int op, float value, const int32_t *positions, int n_positions, ms_err *err);
const float *ms_run_features(const ms_run *r, int layer);
int ms_run_add_lens(ms_run *r, const int32_t *positions, int n, int k, int after_mixer, int n_real, ms_err *err);
int ms_run_execute(ms_run *r, const int32_t *ids, ms_err *err);

float *ms_run_logits_of(const ms_run *r);
const ms_stats *ms_run_stats_of(const ms_run *r);
/* lens results, laid out as MS_LENS_SHAPE says */
const int32_t *ms_run_lens_ids(const ms_run *r);
const float *ms_run_lens_logits(const ms_run *r);
const float *ms_run_lens_probs(const ms_run *r);
#endif
