/* The layers of both families, one file each, each with its equations at the top (the Qwen3.5
 * ones follow the model's published reference code). Batches of B tokens are [B][width] rows. */
#ifndef MS_LAYERS_H
#define MS_LAYERS_H
#include <math.h>
#include <string.h>
#include "../model/state.h"

/* rmsnorm.c: y = x / sqrt(mean(x^2) + eps) * (offset + w) */
void ms_rmsnorm(float *y, const float *x, const float *w, int n, float eps, float offset);
/* the same for B rows [B][n], shared over the model's threads when B is large enough */
void ms_rmsnorm_rows(const ms_model *m, float *y, const float *x, const float *w, int B, int n, float eps, float offset);
/* linear.c: Y[t] = W X[t] for t < T, any weight dtype */
void ms_linear(const ms_model *m, const ms_tensor *W, const float *X, int T, float *Y);
/* the same with exact activations whatever the model's mode (analysis of weight directions) */
void ms_linear_exact(const ms_model *m, const ms_tensor *W, const float *X, int T, float *Y);
/* rope.c: rotate the first rotary_dim dims of each of n_heads heads (head h at x + h*head_stride) */
void ms_rope(float *x, int n_heads, int head_stride, int rotary_dim, double pos, double theta, int layout);
/* attention.c: softmax attention (GQA, RoPE, optional q/k norm and sigmoid output gate) for B
 * tokens at positions s->pos .. s->pos+B-1; writes the o_proj output to out [B][H]. */
/* where a batch's attention weights go, when asked for: rows t0 .. t0+B-1 of [head][T][K] */
typedef struct { float *dst; int T, K, t0; } ms_attn_pattern;
void ms_attention(ms_state *s, int l, const float *xn, int B, float *out, const ms_attn_pattern *pattern);
/* gated_deltanet.c: Gated DeltaNet mixer for B tokens; out [B][H]. If stats_norm2 is non-NULL it
 * receives each token's per-head squared Frobenius state norm [B][Hv]; decay/beta [B] the means. */
void ms_gated_deltanet(ms_state *s, int l, const float *xn, int B, float *out,
                       double *stats_norm2, float *stats_decay, float *stats_beta);
/* mlp_swiglu.c: mlp(m) = down_proj( act(gate_proj m) ⊙ up_proj m ), act silu (SwiGLU) or the tanh
 * GELU (GeGLU, Gemma), in steps for the hooks */
void ms_mlp_gate_up(ms_state *s, int l, const float *m_in, int B);   /* -> s->gate, s->up */
void ms_mlp_activate(ms_state *s, int B, int bilinear);              /* s->gate = act(gate) ⊙ up, or (bilinear) gate/2 ⊙ up */
void ms_mlp_down(ms_state *s, int l, int B, float *out);             /* out = down_proj s->gate */

static inline float ms_sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }
#endif
