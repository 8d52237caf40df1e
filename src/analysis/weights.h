/* The weight geometry of a gated neuron (Gerstner & Schütze 2025, "input-output functionality"):
 * neuron j of layer l reads the normed stream x̂ with two rows, w_gate = gate_proj[j] and
 * w_in = up_proj[j], and writes w_out = down_proj[:, j], so it adds
 *     silu(w_gate · x̂) (w_in · x̂) w_out
 * to the residual stream. The cosines between the three vectors say, from the weights alone, what
 * the write does to the direction that was read: cos(w_in, w_out) > 0 adds more of it
 * (enrichment), < 0 takes it away (depletion); cos(w_gate, w_out) and cos(w_gate, w_in) say how
 * far the gate's own direction takes part. */
#ifndef MS_WEIGHTS_H
#define MS_WEIGHTS_H
#include "../model/model.h"

/* the values per neuron in ms_mlp_neuron_geometry's output, in this order (ms_engine_info lists
 * the names as "neuron_geometry") */
#define MS_GEO_LIST(X)                 \
    X(COS_GATE_IN, "cos_gate_in")     \
    X(COS_GATE_OUT, "cos_gate_out")   \
    X(COS_IN_OUT, "cos_in_out")       \
    X(NORM_GATE, "norm_gate")         \
    X(NORM_IN, "norm_in")             \
    X(NORM_OUT, "norm_out")
enum {
#define MS_X(id, name) MS_GEO_##id,
    MS_GEO_LIST(MS_X)
#undef MS_X
    MS_GEO__COUNT
};

/* out[intermediate][MS_GEO__COUNT] for every neuron of layer `layer`: the three cosines and three
 * norms, accumulated in double from the weights as stored (q8 / q4 rows dequantized exactly). With
 * fold_norm, w_gate and w_in are first multiplied element-wise by the MLP's RMSNorm gain
 * (norm_offset + post_attention_layernorm; Gemma 3: pre_feedforward_layernorm): the directions of
 * the residual stream they read (up to the norm's positive 1/rms), and Gemma 3's w_out by its
 * post_feedforward_layernorm gain, the direction written. Split over the model's threads by neuron. */
int ms_mlp_neuron_geometry(const ms_model *m, int layer, int fold_norm, float *out, ms_err *err);

/* The MLP of layer `layer` as a bilinear form (Pearce et al. 2025, "Bilinear MLPs enable
 * weight-based mechanistic interpretability"): near z = 0, silu(z) = z/2 + z²/4 − … (Gemma's
 * GELU: z/2 + z²/√(2π) + …, the same first term), so with
 * SiLU replaced by z/2 neuron k gives (w_gate,k · x)(w_in,k · x)/2 and a read-out of the MLP's
 * output with weights c (c_k = u · w_out,k for an output direction u; one-hot for one neuron) is
 *     Σ_k c_k (w_gate,k · x)(w_in,k · x)/2 = xᵀ Q x,   Q = ¼ Σ_k c_k (w_gate,k w_in,kᵀ + w_in,k w_gate,kᵀ)
 * Q[hidden][hidden] is symmetric; with fold_norm, w_gate and w_in carry the MLP norm's gain, so x
 * is the normed stream before its gain (resid_mid / rms). Rows of Q are split over the threads. */
int ms_mlp_interaction(const ms_model *m, int layer, const float *c, int fold_norm, float *Q, ms_err *err);
#endif
