/* Training and scoring transcoders (analysis/transcoder.h) for some layers of a loaded model:
 * the engine captures each layer's MLP input and output (ln2.hook_normalized, hook_mlp_out) into
 * a buffer of tokens, one forward pass serving every layer; the trainers then take shuffled
 * batches of it. The host drives the loop (feed sequences, train when the buffer is full, score
 * on held-out sequences), so natively and in a Worker the same C does the work while the host
 * reports progress and can stop between calls.
 *
 * Scores on held-out text: FVU, L0 and the dead fraction per layer, and the replacement score —
 * next-token KL and cross-entropy when one MLP (then all of them) is replaced by its transcoder,
 * against the model and against that MLP zero-ablated (the fraction of the loss recovered). */
#ifndef MS_TC_SESSION_H
#define MS_TC_SESSION_H
#include "../model/model.h"
#include "../util/json.h"
#include "../layers/transcoder.h"

typedef struct {
    int n_features, k;
    int ctx;            /* longest sequence fed (default 128) */
    int buffer_tokens;  /* tokens captured before a round of training (default 8192) */
    int batch;          /* rows per Adam step (default 1024) */
    int epochs;         /* passes over each buffer (default 1) */
    ms_tc_train_opts train;
} ms_tc_session_opts;

typedef struct ms_tc_session ms_tc_session;
ms_tc_session *ms_tc_session_new(ms_model *m, const int32_t *layers, int n_layers, const ms_tc_session_opts *o, ms_err *err);
void ms_tc_session_free(ms_tc_session *s);
/* What a session of n_layers layers with these options allocates over its life (creation,
 * training, scoring, saving), in bytes: parts, if not NULL, gets [the transcoders and their
 * optimizer state, the captured activations, scoring, the saved set]. For a preflight: nothing is
 * allocated. */
uint64_t ms_tc_session_bytes(const ms_model *m, int n_layers, const ms_tc_session_opts *o, double parts[4]);
/* Captures one sequence (T <= ctx tokens, run from position 0) into the buffer; E_ARG when it
 * does not fit (ms_tc_session_room). */
int ms_tc_session_feed(ms_tc_session *s, const int32_t *ids, int T, ms_err *err);
int ms_tc_session_room(const ms_tc_session *s);
/* Trains every layer on the buffer (epochs x shuffled batches), then empties it. */
int ms_tc_session_train(ms_tc_session *s, ms_err *err);
/* held-out scores: reset (exports the current transcoders), feed sequences, report */
int ms_tc_session_eval_reset(ms_tc_session *s, int replacement, ms_err *err);
int ms_tc_session_eval_feed(ms_tc_session *s, const int32_t *ids, int T, ms_err *err);
/* JSON: {"layers":[{layer, features, k, steps, train_tokens, train_fvu, fvu, l0, dead, kl, ce,
 * ce_zero, recovered}], "ce_model", "all": {kl, ce}, "eval_tokens"}; NULL when out of memory
 * (caller frees) */
char *ms_tc_session_report(const ms_tc_session *s);
int ms_tc_session_n_layers(const ms_tc_session *s);
/* the exported (raw-unit) transcoder of the session's i-th layer, refreshed by eval_reset or
 * ms_tc_session_export */
const ms_transcoder *ms_tc_session_transcoder(const ms_tc_session *s, int i);
int ms_tc_session_export(ms_tc_session *s, ms_err *err);
/* The session's transcoders as a transcoder set: manifest JSON (into *manifest) and the one
 * binary file it names (*bin, *bin_len; caller frees). model_sha256: the model's shard hash the
 * set belongs to (recorded, checked on load). docs/format.md, "Transcoder sets". */
int ms_tc_session_save(ms_tc_session *s, const char *model_name, ms_buf *manifest, uint8_t **bin, size_t *bin_len, ms_err *err);
#endif
