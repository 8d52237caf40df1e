/* Model configuration: the Hugging Face keys we read (docs/format.md) turned into one struct for both
 * families, with every value range-checked. */
#ifndef MS_CONFIG_H
#define MS_CONFIG_H
#include <stdint.h>
#include "../util/error.h"
#include "../util/json.h"

#define MS_MAX_LAYERS 256
#define MS_MAX_CONV_KERNEL 16 /* Gated DeltaNet convolution taps */

typedef enum { MS_FAMILY_LLAMA = 1, MS_FAMILY_QWEN3_5 = 2, MS_FAMILY_GEMMA3 = 3 } ms_family;
/* the gated MLP's gate: SwiGLU (silu) or GeGLU (GELU, tanh approximation: Gemma) */
typedef enum { MS_GATE_SILU = 0, MS_GATE_GELU_TANH = 1 } ms_gate_act;
typedef enum { MS_MIXER_ATTENTION = 0, MS_MIXER_GDN = 1 } ms_mixer;
typedef enum { MS_ROPE_PAIRS = 0, MS_ROPE_HALVES = 1 } ms_rope_layout;

typedef struct {
    int family;
    int hidden;        /* hidden_size */
    int intermediate;  /* intermediate_size */
    int n_layers;      /* num_hidden_layers */
    int vocab;         /* vocab_size (rows of the embedding; may be padded) */
    int max_pos;       /* max_position_embeddings */
    float eps;         /* rms_norm_eps */
    float norm_offset; /* 1 for zero-centred norms (qwen3_5: y = x*r*(1+w)), else 0 */
    int tied;          /* tie_word_embeddings */
    /* attention */
    int n_heads, n_kv_heads, head_dim, rotary_dim;
    double rope_theta;
    int rope_layout;   /* pairs (llama2.c) or halves (HF) */
    int qk_norm;       /* per-head q/k RMSNorm (Qwen3, Qwen3.5) */
    int attn_gate;     /* q_proj carries a per-head sigmoid output gate (Qwen3.5) */
    /* Gated DeltaNet */
    int lin_k_heads, lin_v_heads, lin_k_dim, lin_v_dim, conv_kernel;
    uint8_t mixer[MS_MAX_LAYERS]; /* ms_mixer per layer */
    /* Gemma 3 */
    int gate_act;        /* ms_gate_act */
    int sandwich_norms;  /* post_attention_layernorm on the mixer's output, pre/post_feedforward_layernorm around the MLP */
    float embed_scale;   /* the embedding row is multiplied by this (Gemma: sqrt(hidden_size)); 1 otherwise */
    double query_scalar; /* scores are q.k / sqrt(query_scalar): head_dim, or Gemma's query_pre_attn_scalar */
    int sliding_window;  /* sliding layers see the last sliding_window positions (their own included) */
    double rope_theta_local; /* sliding layers' RoPE base (rope_local_base_freq) */
    double rope_scale;   /* global layers' linear RoPE scaling: positions divided by this (1: none) */
    uint8_t sliding[MS_MAX_LAYERS]; /* 1: a sliding-window (local) attention layer */
} ms_config;

/* Reads `config` (an object node of j) for the given family. */
int ms_config_from_json(ms_config *c, int family, const ms_json *j, int32_t obj, ms_err *err);
int ms_config_validate(const ms_config *c, ms_err *err);
int ms_family_from_name(const char *s); /* 0 if unknown */
const char *ms_family_name(int f);
/* Derived sizes */
static inline int ms_cfg_q_dim(const ms_config *c) { return c->n_heads * c->head_dim; }
static inline int ms_cfg_kv_dim(const ms_config *c) { return c->n_kv_heads * c->head_dim; }
static inline int ms_cfg_gdn_key_dim(const ms_config *c) { return c->lin_k_heads * c->lin_k_dim; }
static inline int ms_cfg_gdn_value_dim(const ms_config *c) { return c->lin_v_heads * c->lin_v_dim; }
static inline int ms_cfg_gdn_conv_dim(const ms_config *c) { return 2 * ms_cfg_gdn_key_dim(c) + ms_cfg_gdn_value_dim(c); }
int ms_cfg_n_mixer(const ms_config *c, int kind);
/* The config as a JSON object with Hugging Face key names (appends to b). */
void ms_config_to_json(const ms_config *c, ms_buf *b);
#endif
