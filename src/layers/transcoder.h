/* Transcoders: a wide sparse layer trained to stand in for one MLP (Dunefsky et al. 2024,
 * "Transcoders find interpretable LLM feature circuits"; Anthropic's circuit tracing, 2025).
 * Its input is the MLP's input (blocks.L.ln2.hook_normalized), its target the MLP's output
 * (blocks.L.hook_mlp_out):
 *
 *     z = x W_enc + b_enc                      pre-activations, one per feature   [F]
 *     a = ReLU(TopK_k(z))                      the k largest z kept, the rest 0   (the features)
 *     y = a W_dec + b_dec                      what the transcoder writes         [d_out]
 *
 * TopK as in Gao et al. 2024 ("Scaling and evaluating sparse autoencoders"): L0 is at most k by
 * construction, dead features are revived by their auxiliary loss (AuxK: the k_aux largest dead
 * features reconstruct what the live ones miss), decoder rows are kept at unit norm while training.
 * Training works on activations scaled to mean squared norm d (the scales are folded into the
 * weights when a transcoder is exported, so an exported one reads and writes raw activations).
 * Everything is f32; reductions that report scores accumulate in f64. */
#ifndef MS_TRANSCODER_H
#define MS_TRANSCODER_H
#include <stddef.h>
#include <stdint.h>
#include "../util/error.h"
#include "../util/threads.h"

#define MS_TC_MAX_FEATURES (1 << 20)

/* malloc of a * b elements of `elem` bytes, NULL when the product does not fit in size_t (wasm32:
 * 4 GB) or the allocation fails; calloc'd (zeroed) when zero is set */
void *ms_tc_alloc(uint64_t a, uint64_t b, size_t elem, int zero);

typedef struct {
    int d_in, d_out, n_features, k;
    float *w_enc; /* [d_in][F]: column f is feature f's encoder direction */
    float *b_enc; /* [F] */
    float *w_dec; /* [F][d_out]: row f is what feature f writes per unit of activation */
    float *b_dec; /* [d_out] */
    float *params; /* the one allocation the four arrays live in, in that order */
} ms_transcoder;

size_t ms_transcoder_n_params(int d_in, int d_out, int n_features);
ms_transcoder *ms_transcoder_new(int d_in, int d_out, int n_features, int k, ms_err *err);
void ms_transcoder_free(ms_transcoder *tc);

/* The features of N rows x [N][d_in]: idx/val [N][k], by z descending (ties: lower index first);
 * val = max(z, 0), so a listed feature can be 0. z: scratch [N][F]. Rows split over the pool. */
void ms_transcoder_encode(const ms_transcoder *tc, const float *x, int N, float *z, int32_t *idx, float *val, ms_pool *pool);
/* y [N][d_out] = b_dec + sum over the listed features of val * w_dec[idx] */
void ms_transcoder_decode(const ms_transcoder *tc, const int32_t *idx, const float *val, int N, float *y);
/* Every feature's write read along one direction u [d_out] (a logit's read-out vector):
 * out[f] = w_dec[f] . u for f < F and out[F] = b_dec . u, accumulated in f64 */
void ms_transcoder_readout(const ms_transcoder *tc, const float *u, double *out);

/* ---- training ---- */
typedef struct {
    double lr;           /* Adam step size (default 1e-3) */
    double beta1, beta2, eps;
    int k_aux;           /* dead features in the auxiliary loss per token (default d_out / 2) */
    double aux_coef;     /* its weight (0: the default 1/32; negative: no auxiliary loss) */
    int dead_tokens;     /* a feature not fired in this many training tokens is dead (default 20000) */
    int total_steps;     /* for the schedule: lr falls linearly to 0 over the last 20 % (0: constant) */
    uint64_t seed;
} ms_tc_train_opts;

typedef struct {
    double mse;       /* mean squared error per element, in training units (activations scaled to mean square 1) */
    double aux;       /* the auxiliary loss (0 when no feature is dead) */
    double fvu;       /* this batch's fraction of variance unexplained */
    double l0;        /* mean features > 0 per token */
    int dead;         /* features dead before the step */
} ms_tc_step;

typedef struct ms_tc_trainer ms_tc_trainer;
/* o may be NULL (defaults); zero fields take their defaults */
ms_tc_trainer *ms_tc_trainer_new(int d_in, int d_out, int n_features, int k, const ms_tc_train_opts *o, ms_err *err);
void ms_tc_trainer_free(ms_tc_trainer *t);
/* One Adam step on a batch of N rows (x [N][d_in], y [N][d_out], raw activations). The first call
 * fixes the data scales and sets b_dec to the batch's mean target. */
int ms_tc_train_step(ms_tc_trainer *t, const float *x, const float *y, int N, ms_pool *pool, ms_tc_step *out, ms_err *err);
/* The loss of a batch (mse + aux_coef * aux, training units; parts, if not NULL, gets mse and aux)
 * and, if grad is not NULL, its gradient ([n_params], the layout of ms_transcoder.params) — what a
 * step uses, exposed for the tests. As in Gao et al., the auxiliary loss's target (the residual
 * y - y_hat) is held fixed: its gradient reaches the dead features only. */
double ms_tc_loss_grad(ms_tc_trainer *t, const float *x, const float *y, int N, float *grad, double *parts, ms_pool *pool, ms_err *err);
/* the trainer's own parameters (training units; tests perturb them) */
ms_transcoder *ms_tc_trainer_params(ms_tc_trainer *t);
int ms_tc_trainer_steps(const ms_tc_trainer *t);
/* features not fired in the last dead_tokens tokens */
int ms_tc_trainer_dead(const ms_tc_trainer *t);
/* Writes the trained transcoder in raw units (scales folded in) into dst (same shape). */
int ms_tc_trainer_export(const ms_tc_trainer *t, ms_transcoder *dst, ms_err *err);

/* ---- quality on held-out rows ---- */
typedef struct {
    double n, sse, sum_l0;
    double *sum_y;    /* [d_out] */
    double sum_yy;
    uint32_t *fired;  /* [F]: times each feature was > 0 */
    int d_out, n_features;
} ms_tc_eval;
int ms_tc_eval_init(ms_tc_eval *e, int d_out, int n_features, ms_err *err);
void ms_tc_eval_free(ms_tc_eval *e);
/* adds rows: x [N][d_in] and their true outputs y [N][d_out]; scratch: [N][F] + 2 [N][k] + [N][d_out] floats */
void ms_tc_eval_add(ms_tc_eval *e, const ms_transcoder *tc, const float *x, const float *y, int N, float *scratch, ms_pool *pool);
double ms_tc_eval_fvu(const ms_tc_eval *e); /* sum |y - y_hat|^2 / sum |y - mean y|^2 */
double ms_tc_eval_l0(const ms_tc_eval *e);
double ms_tc_eval_dead(const ms_tc_eval *e); /* fraction of features that never fired */
size_t ms_tc_eval_scratch(const ms_transcoder *tc, int N);
#endif
