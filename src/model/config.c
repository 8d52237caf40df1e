#include "config.h"
#include <math.h>
#include <string.h>

int ms_family_from_name(const char *s) {
    if (!s) return 0;
    if (strcmp(s, "llama") == 0) return MS_FAMILY_LLAMA;
    if (strcmp(s, "qwen3_5") == 0) return MS_FAMILY_QWEN3_5;
    if (strcmp(s, "gemma3") == 0) return MS_FAMILY_GEMMA3;
    return 0;
}

const char *ms_family_name(int f) {
    return f == MS_FAMILY_LLAMA ? "llama" : f == MS_FAMILY_QWEN3_5 ? "qwen3_5" : f == MS_FAMILY_GEMMA3 ? "gemma3" : "?";
}

int ms_cfg_n_mixer(const ms_config *c, int kind) {
    int n = 0;
    for (int l = 0; l < c->n_layers; l++) n += c->mixer[l] == kind;
    return n;
}

/* Integer key: required if def < 0 is passed as `required`. */
static int get_int(const ms_json *j, int32_t obj, const char *key, int required, int64_t def,
                   int64_t lo, int64_t hi, int *out, ms_err *err) {
    int32_t n = ms_json_get(j, obj, key);
    if (n < 0 || j->nodes[n].type == MS_JNULL) {
        if (required) return ms_fail(err, MS_E_CONFIG, "config: missing integer field '%s'", key);
        *out = (int)def;
        return 0;
    }
    int64_t v;
    if (!ms_json_int(j, n, lo, hi, &v))
        return ms_fail(err, MS_E_CONFIG, "config: field '%s' must be an integer in [%lld, %lld]", key,
                       (long long)lo, (long long)hi);
    *out = (int)v;
    return 0;
}

static int get_num(const ms_json *j, int32_t obj, const char *key, double def, double lo, double hi,
                   double *out, ms_err *err) {
    int32_t n = ms_json_get(j, obj, key);
    if (n < 0 || j->nodes[n].type == MS_JNULL) { *out = def; return 0; }
    double v;
    if (!ms_json_num(j, n, &v) || !(v >= lo && v <= hi))
        return ms_fail(err, MS_E_CONFIG, "config: field '%s' must be a number in [%g, %g]", key, lo, hi);
    *out = v;
    return 0;
}

static int get_bool(const ms_json *j, int32_t obj, const char *key, int def, int *out, ms_err *err) {
    int32_t n = ms_json_get(j, obj, key);
    if (n < 0 || j->nodes[n].type == MS_JNULL) { *out = def; return 0; }
    if (!ms_json_bool(j, n, out)) return ms_fail(err, MS_E_CONFIG, "config: field '%s' must be true or false", key);
    return 0;
}

/* A RoPE block of Gemma 3 ({"rope_type": "default" | "linear", "factor", "rope_theta"}) or null */
static int gemma3_rope(const ms_json *j, int32_t o, const char *what, double *theta, double *scale, ms_err *err) {
    if (o < 0 || j->nodes[o].type == MS_JNULL) return MS_OK;
    if (j->nodes[o].type != MS_JOBJ) return ms_fail(err, MS_E_CONFIG, "config: %s must be an object or null", what);
    const char *type = ms_json_str(j, ms_json_get(j, o, "rope_type"));
    if (!type) type = ms_json_str(j, ms_json_get(j, o, "type"));
    int rc;
    if (ms_json_get(j, o, "rope_theta") >= 0 && (rc = get_num(j, o, "rope_theta", *theta, 1.0, 1e12, theta, err))) return rc;
    if (!type || !strcmp(type, "default")) return MS_OK;
    if (strcmp(type, "linear"))
        return ms_fail(err, MS_E_CONFIG, "config: %s.rope_type \"%s\" is not supported (default or linear)", what, type);
    return get_num(j, o, "factor", 1.0, 1.0, 1e6, scale, err);
}

/* Gemma 3 text (HF Gemma3TextConfig): GeGLU, zero-centred norms around both sublayers, q/k norms,
 * scaled embedding, sliding-window layers with their own RoPE base between global ones. */
static int gemma3_keys(ms_config *c, const ms_json *j, int32_t obj, ms_err *err) {
    int rc, flag = 0;
    const char *act = ms_json_str(j, ms_json_get(j, obj, "hidden_activation"));
    if (!act) act = ms_json_str(j, ms_json_get(j, obj, "hidden_act"));
    if (act && strcmp(act, "gelu_pytorch_tanh"))
        return ms_fail(err, MS_E_CONFIG, "config: hidden_activation \"%s\" is not supported (Gemma 3 uses gelu_pytorch_tanh)", act);
    static const char *const unsupported[] = {"attn_logit_softcapping", "final_logit_softcapping"};
    for (int i = 0; i < 2; i++) {
        int32_t n = ms_json_get(j, obj, unsupported[i]);
        if (n >= 0 && j->nodes[n].type != MS_JNULL) return ms_fail(err, MS_E_CONFIG, "config: %s is not supported (Gemma 2 style soft-capping)", unsupported[i]);
    }
    if ((rc = get_bool(j, obj, "use_bidirectional_attention", 0, &flag, err))) return rc;
    if (flag) return ms_fail(err, MS_E_CONFIG, "config: use_bidirectional_attention is not supported (an encoder such as EmbeddingGemma)");
    c->gate_act = MS_GATE_GELU_TANH;
    c->sandwich_norms = 1;
    c->qk_norm = 1;
    c->attn_gate = 0;
    c->embed_scale = sqrtf((float)c->hidden);
    if ((rc = get_num(j, obj, "query_pre_attn_scalar", 256, 1e-6, 1e9, &c->query_scalar, err))) return rc;
    if ((rc = get_int(j, obj, "sliding_window", 0, 4096, 1, 1 << 24, &c->sliding_window, err))) return rc;
    /* RoPE: rope_theta / rope_scaling for global layers and rope_local_base_freq for local ones, or
     * (newer files) rope_parameters {"full_attention": {...}, "sliding_attention": {...}} */
    double theta = 0, local = 0;
    if ((rc = get_num(j, obj, "rope_theta", 1e6, 1.0, 1e12, &theta, err))) return rc;
    if ((rc = get_num(j, obj, "rope_local_base_freq", 1e4, 1.0, 1e12, &local, err))) return rc;
    c->rope_scale = 1.0;
    if ((rc = gemma3_rope(j, ms_json_get(j, obj, "rope_scaling"), "rope_scaling", &theta, &c->rope_scale, err))) return rc;
    int32_t rp = ms_json_get(j, obj, "rope_parameters");
    if (rp >= 0 && j->nodes[rp].type == MS_JOBJ && (ms_json_get(j, rp, "full_attention") >= 0 || ms_json_get(j, rp, "sliding_attention") >= 0)) {
        double unused = 1.0;
        if ((rc = gemma3_rope(j, ms_json_get(j, rp, "full_attention"), "rope_parameters.full_attention", &theta, &c->rope_scale, err))) return rc;
        if ((rc = gemma3_rope(j, ms_json_get(j, rp, "sliding_attention"), "rope_parameters.sliding_attention", &local, &unused, err))) return rc;
        if (unused != 1.0) return ms_fail(err, MS_E_CONFIG, "config: rope scaling on the sliding layers is not supported");
    }
    c->rope_theta = theta;
    c->rope_theta_local = local;
    c->rotary_dim = c->head_dim;
    c->rope_layout = MS_ROPE_HALVES;
    int32_t lt = ms_json_get(j, obj, "layer_types");
    if (lt >= 0 && j->nodes[lt].type != MS_JNULL) {
        if (j->nodes[lt].type != MS_JARR || j->nodes[lt].count != c->n_layers)
            return ms_fail(err, MS_E_CONFIG, "config: layer_types must be an array of num_hidden_layers (%d) strings", c->n_layers);
        int l = 0;
        for (int32_t e = j->nodes[lt].child; e >= 0; e = j->nodes[e].next, l++) {
            const char *s = ms_json_str(j, e);
            if (s && !strcmp(s, "sliding_attention")) c->sliding[l] = 1;
            else if (!s || strcmp(s, "full_attention"))
                return ms_fail(err, MS_E_CONFIG, "config: layer_types[%d] is \"%s\"; expected \"sliding_attention\" or \"full_attention\"", l, s ? s : "(not a string)");
        }
    } else {
        int pattern = 6;
        const char *key = ms_json_get(j, obj, "sliding_window_pattern") >= 0 ? "sliding_window_pattern" : "_sliding_window_pattern";
        if ((rc = get_int(j, obj, key, 0, 6, 1, MS_MAX_LAYERS, &pattern, err))) return rc;
        for (int l = 0; l < c->n_layers; l++) c->sliding[l] = (l + 1) % pattern != 0;
    }
    for (int l = 0; l < c->n_layers; l++) c->mixer[l] = MS_MIXER_ATTENTION;
    return MS_OK;
}

int ms_config_from_json(ms_config *c, int family, const ms_json *j, int32_t obj, ms_err *err) {
    memset(c, 0, sizeof *c);
    if (obj < 0 || j->nodes[obj].type != MS_JOBJ) return ms_fail(err, MS_E_CONFIG, "config: not an object");
    c->family = family;
    int rc;
    const int64_t BIG = 1 << 24;
    /* Gemma 3's multimodal configs leave text_config keys at Gemma3TextConfig's defaults */
    const int g3 = family == MS_FAMILY_GEMMA3, req = !g3;
    if ((rc = get_int(j, obj, "hidden_size", req, 2304, 1, 65536, &c->hidden, err))) return rc;
    if ((rc = get_int(j, obj, "intermediate_size", req, 9216, 1, 1 << 20, &c->intermediate, err))) return rc;
    if ((rc = get_int(j, obj, "num_hidden_layers", req, 26, 1, MS_MAX_LAYERS, &c->n_layers, err))) return rc;
    if ((rc = get_int(j, obj, "vocab_size", req, 262208, 1, BIG, &c->vocab, err))) return rc;
    if ((rc = get_int(j, obj, "max_position_embeddings", 0, g3 ? 131072 : 4096, 1, BIG, &c->max_pos, err))) return rc;
    if ((rc = get_int(j, obj, "num_attention_heads", req, 8, 1, 4096, &c->n_heads, err))) return rc;
    if ((rc = get_int(j, obj, "num_key_value_heads", 0, g3 ? 4 : c->n_heads, 1, 4096, &c->n_kv_heads, err))) return rc;
    if (!g3 && c->hidden % c->n_heads && ms_json_get(j, obj, "head_dim") < 0)
        return ms_fail(err, MS_E_CONFIG, "config: hidden_size %d is not a multiple of num_attention_heads %d and head_dim is absent", c->hidden, c->n_heads);
    const int gemma = g3;
    if ((rc = get_int(j, obj, "head_dim", 0, gemma ? 256 : c->hidden / c->n_heads, 2, 4096, &c->head_dim, err))) return rc;
    double eps = 0;
    if ((rc = get_num(j, obj, "rms_norm_eps", family == MS_FAMILY_LLAMA ? 1e-5 : 1e-6, 1e-12, 0.1, &eps, err))) return rc;
    c->eps = (float)eps;
    c->norm_offset = family == MS_FAMILY_LLAMA ? 0.0f : 1.0f;
    if ((rc = get_bool(j, obj, "tie_word_embeddings", family != MS_FAMILY_LLAMA, &c->tied, err))) return rc;
    c->gate_act = MS_GATE_SILU;
    c->embed_scale = 1.0f;
    c->query_scalar = c->head_dim;
    c->rope_scale = 1.0;

    /* RoPE: top-level keys, or inside rope_parameters (newer HF configs). */
    int32_t rp = ms_json_get(j, obj, "rope_parameters");
    int32_t ro = (rp >= 0 && j->nodes[rp].type == MS_JOBJ) ? rp : obj;
    double theta = 0, prf = 0;
    if ((rc = get_num(j, ro, "rope_theta", family == MS_FAMILY_QWEN3_5 ? 1e7 : 1e4, 1.0, 1e12, &theta, err))) return rc;
    if (ro != obj && ms_json_get(j, ro, "rope_theta") < 0 &&
        (rc = get_num(j, obj, "rope_theta", theta, 1.0, 1e12, &theta, err))) return rc;
    if ((rc = get_num(j, ro, "partial_rotary_factor", family == MS_FAMILY_QWEN3_5 ? 0.25 : 1.0, 0.0, 1.0, &prf, err))) return rc;
    if (ro != obj && ms_json_get(j, ro, "partial_rotary_factor") < 0 &&
        (rc = get_num(j, obj, "partial_rotary_factor", prf, 0.0, 1.0, &prf, err))) return rc;
    c->rope_theta = c->rope_theta_local = theta;
    c->rotary_dim = (int)(c->head_dim * prf + 1e-9);
    c->rotary_dim -= c->rotary_dim % 2;
    const char *layout = ms_json_str(j, ms_json_get(j, obj, "rope_layout"));
    if (!layout || strcmp(layout, "halves") == 0) c->rope_layout = MS_ROPE_HALVES;
    else if (strcmp(layout, "pairs") == 0) c->rope_layout = MS_ROPE_PAIRS;
    else return ms_fail(err, MS_E_CONFIG, "config: rope_layout must be \"pairs\" or \"halves\", not \"%s\"", layout);

    if (gemma) {
        if ((rc = gemma3_keys(c, j, obj, err))) return rc;
    } else if (family == MS_FAMILY_LLAMA) {
        if ((rc = get_bool(j, obj, "use_qk_norm", 0, &c->qk_norm, err))) return rc;
        c->attn_gate = 0;
        for (int l = 0; l < c->n_layers; l++) c->mixer[l] = MS_MIXER_ATTENTION;
    } else {
        c->qk_norm = 1;
        c->attn_gate = 1;
        if ((rc = get_int(j, obj, "linear_num_key_heads", 1, 0, 1, 4096, &c->lin_k_heads, err))) return rc;
        if ((rc = get_int(j, obj, "linear_num_value_heads", 1, 0, 1, 4096, &c->lin_v_heads, err))) return rc;
        if ((rc = get_int(j, obj, "linear_key_head_dim", 1, 0, 1, 4096, &c->lin_k_dim, err))) return rc;
        if ((rc = get_int(j, obj, "linear_value_head_dim", 1, 0, 1, 4096, &c->lin_v_dim, err))) return rc;
        if ((rc = get_int(j, obj, "linear_conv_kernel_dim", 0, 4, 1, MS_MAX_CONV_KERNEL, &c->conv_kernel, err))) return rc;
        int32_t lt = ms_json_get(j, obj, "layer_types");
        if (lt >= 0) {
            if (j->nodes[lt].type != MS_JARR || j->nodes[lt].count != c->n_layers)
                return ms_fail(err, MS_E_CONFIG, "config: layer_types must be an array of num_hidden_layers (%d) strings", c->n_layers);
            int l = 0;
            for (int32_t e = j->nodes[lt].child; e >= 0; e = j->nodes[e].next, l++) {
                const char *s = ms_json_str(j, e);
                if (s && strcmp(s, "linear_attention") == 0) c->mixer[l] = MS_MIXER_GDN;
                else if (s && strcmp(s, "full_attention") == 0) c->mixer[l] = MS_MIXER_ATTENTION;
                else return ms_fail(err, MS_E_CONFIG, "config: layer_types[%d] is \"%s\"; expected \"linear_attention\" or \"full_attention\"", l, s ? s : "(not a string)");
            }
        } else {
            int interval;
            if ((rc = get_int(j, obj, "full_attention_interval", 0, 4, 1, MS_MAX_LAYERS, &interval, err))) return rc;
            for (int l = 0; l < c->n_layers; l++)
                c->mixer[l] = ((l + 1) % interval) ? MS_MIXER_GDN : MS_MIXER_ATTENTION;
        }
    }
    return ms_config_validate(c, err);
}

int ms_config_validate(const ms_config *c, ms_err *err) {
    if (c->family != MS_FAMILY_LLAMA && c->family != MS_FAMILY_QWEN3_5 && c->family != MS_FAMILY_GEMMA3)
        return ms_fail(err, MS_E_CONFIG, "config: unknown family");
    if (c->hidden < 1 || c->intermediate < 1 || c->n_layers < 1 || c->n_layers > MS_MAX_LAYERS || c->vocab < 1)
        return ms_fail(err, MS_E_CONFIG, "config: sizes must be positive");
    if (c->n_heads < 1 || c->n_kv_heads < 1 || c->n_heads % c->n_kv_heads)
        return ms_fail(err, MS_E_CONFIG, "config: num_attention_heads (%d) must be a positive multiple of num_key_value_heads (%d)", c->n_heads, c->n_kv_heads);
    if (c->head_dim < 2 || c->head_dim % 2)
        return ms_fail(err, MS_E_CONFIG, "config: head_dim (%d) must be even", c->head_dim);
    if (c->rotary_dim < 0 || c->rotary_dim > c->head_dim || c->rotary_dim % 2)
        return ms_fail(err, MS_E_CONFIG, "config: rotary dims (%d) must be even and at most head_dim (%d)", c->rotary_dim, c->head_dim);
    if ((int64_t)c->n_heads * c->head_dim > (1 << 20))
        return ms_fail(err, MS_E_CONFIG, "config: num_attention_heads x head_dim too large");
    if (!(c->eps > 0) || !isfinite(c->rope_theta) || c->rope_theta <= 0 || !isfinite(c->rope_theta_local) || c->rope_theta_local <= 0)
        return ms_fail(err, MS_E_CONFIG, "config: rms_norm_eps and rope_theta must be positive");
    if (!(c->query_scalar > 0) || !isfinite(c->query_scalar) || !(c->rope_scale >= 1) || !isfinite(c->rope_scale) || !(c->embed_scale > 0))
        return ms_fail(err, MS_E_CONFIG, "config: query_pre_attn_scalar and the rope scaling factor must be positive");
    for (int l = 0; l < c->n_layers; l++)
        if (c->sliding[l] && (c->sliding_window < 1 || c->mixer[l] != MS_MIXER_ATTENTION))
            return ms_fail(err, MS_E_CONFIG, "config: layer %d is a sliding-window layer but sliding_window is %d", l, c->sliding_window);
    int n_attn = ms_cfg_n_mixer(c, MS_MIXER_ATTENTION), n_gdn = ms_cfg_n_mixer(c, MS_MIXER_GDN);
    if (n_attn + n_gdn != c->n_layers) return ms_fail(err, MS_E_CONFIG, "config: unknown mixer kind");
    if (n_gdn) {
        if (c->lin_k_heads < 1 || c->lin_v_heads < 1 || c->lin_v_heads % c->lin_k_heads)
            return ms_fail(err, MS_E_CONFIG, "config: linear_num_value_heads (%d) must be a positive multiple of linear_num_key_heads (%d)", c->lin_v_heads, c->lin_k_heads);
        if (c->lin_k_dim < 1 || c->lin_v_dim < 1 || c->conv_kernel < 1 || c->conv_kernel > MS_MAX_CONV_KERNEL)
            return ms_fail(err, MS_E_CONFIG, "config: linear head dims must be positive and the conv kernel in [1, %d]", MS_MAX_CONV_KERNEL);
        if ((int64_t)c->lin_v_heads * c->lin_v_dim > (1 << 20) || (int64_t)c->lin_k_heads * c->lin_k_dim > (1 << 20))
            return ms_fail(err, MS_E_CONFIG, "config: linear attention too wide");
    }
    return MS_OK;
}

void ms_config_to_json(const ms_config *c, ms_buf *b) {
    ms_buf_printf(b, "{\"hidden_size\": %d, \"intermediate_size\": %d, \"num_hidden_layers\": %d, \"vocab_size\": %d, "
                     "\"max_position_embeddings\": %d, \"num_attention_heads\": %d, \"num_key_value_heads\": %d, \"head_dim\": %d, "
                     "\"rms_norm_eps\": %.9g, \"rope_theta\": %.17g, \"partial_rotary_factor\": %.9g, \"rope_layout\": \"%s\", "
                     "\"tie_word_embeddings\": %s",
                  c->hidden, c->intermediate, c->n_layers, c->vocab, c->max_pos, c->n_heads, c->n_kv_heads, c->head_dim,
                  (double)c->eps, c->rope_theta, (double)c->rotary_dim / c->head_dim, c->rope_layout == MS_ROPE_PAIRS ? "pairs" : "halves",
                  c->tied ? "true" : "false");
    if (c->family == MS_FAMILY_LLAMA) ms_buf_printf(b, ", \"use_qk_norm\": %s", c->qk_norm ? "true" : "false");
    if (c->family == MS_FAMILY_GEMMA3) {
        ms_buf_printf(b, ", \"hidden_activation\": \"gelu_pytorch_tanh\", \"query_pre_attn_scalar\": %.17g, \"sliding_window\": %d, "
                         "\"rope_local_base_freq\": %.17g, \"rope_scaling\": ",
                      c->query_scalar, c->sliding_window, c->rope_theta_local);
        if (c->rope_scale != 1.0) ms_buf_printf(b, "{\"rope_type\": \"linear\", \"factor\": %.17g}", c->rope_scale);
        else ms_buf_puts(b, "null");
        ms_buf_puts(b, ", \"layer_types\": [");
        for (int l = 0; l < c->n_layers; l++) ms_buf_printf(b, "%s\"%s\"", l ? ", " : "", c->sliding[l] ? "sliding_attention" : "full_attention");
        ms_buf_puts(b, "]");
    }
    if (c->family == MS_FAMILY_QWEN3_5) {
        ms_buf_printf(b, ", \"linear_num_key_heads\": %d, \"linear_num_value_heads\": %d, \"linear_key_head_dim\": %d, "
                         "\"linear_value_head_dim\": %d, \"linear_conv_kernel_dim\": %d, \"layer_types\": [",
                      c->lin_k_heads, c->lin_v_heads, c->lin_k_dim, c->lin_v_dim, c->conv_kernel);
        for (int l = 0; l < c->n_layers; l++)
            ms_buf_printf(b, "%s\"%s\"", l ? ", " : "", c->mixer[l] == MS_MIXER_GDN ? "linear_attention" : "full_attention");
        ms_buf_puts(b, "]");
    }
    ms_buf_puts(b, "}");
}
