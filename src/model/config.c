#include "config.h"
#include <math.h>
#include <string.h>

int ms_family_from_name(const char *s) {
    if (!s) return 0;
    if (strcmp(s, "llama") == 0) return MS_FAMILY_LLAMA;
    if (strcmp(s, "qwen3_5") == 0) return MS_FAMILY_QWEN3_5;
    return 0;
}

const char *ms_family_name(int f) {
    return f == MS_FAMILY_LLAMA ? "llama" : f == MS_FAMILY_QWEN3_5 ? "qwen3_5" : "?";
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

int ms_config_from_json(ms_config *c, int family, const ms_json *j, int32_t obj, ms_err *err) {
    memset(c, 0, sizeof *c);
    if (obj < 0 || j->nodes[obj].type != MS_JOBJ) return ms_fail(err, MS_E_CONFIG, "config: not an object");
    c->family = family;
    int rc;
    const int64_t BIG = 1 << 24;
    if ((rc = get_int(j, obj, "hidden_size", 1, 0, 1, 65536, &c->hidden, err))) return rc;
    if ((rc = get_int(j, obj, "intermediate_size", 1, 0, 1, 1 << 20, &c->intermediate, err))) return rc;
    if ((rc = get_int(j, obj, "num_hidden_layers", 1, 0, 1, MS_MAX_LAYERS, &c->n_layers, err))) return rc;
    if ((rc = get_int(j, obj, "vocab_size", 1, 0, 1, BIG, &c->vocab, err))) return rc;
    if ((rc = get_int(j, obj, "max_position_embeddings", 0, 4096, 1, BIG, &c->max_pos, err))) return rc;
    if ((rc = get_int(j, obj, "num_attention_heads", 1, 0, 1, 4096, &c->n_heads, err))) return rc;
    if ((rc = get_int(j, obj, "num_key_value_heads", 0, c->n_heads, 1, 4096, &c->n_kv_heads, err))) return rc;
    if (c->hidden % c->n_heads && ms_json_get(j, obj, "head_dim") < 0)
        return ms_fail(err, MS_E_CONFIG, "config: hidden_size %d is not a multiple of num_attention_heads %d and head_dim is absent", c->hidden, c->n_heads);
    if ((rc = get_int(j, obj, "head_dim", 0, c->hidden / c->n_heads, 2, 4096, &c->head_dim, err))) return rc;
    double eps = 0;
    if ((rc = get_num(j, obj, "rms_norm_eps", family == MS_FAMILY_QWEN3_5 ? 1e-6 : 1e-5, 1e-12, 0.1, &eps, err))) return rc;
    c->eps = (float)eps;
    c->norm_offset = family == MS_FAMILY_QWEN3_5 ? 1.0f : 0.0f;
    if ((rc = get_bool(j, obj, "tie_word_embeddings", family == MS_FAMILY_QWEN3_5, &c->tied, err))) return rc;

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
    c->rope_theta = theta;
    c->rotary_dim = (int)(c->head_dim * prf + 1e-9);
    c->rotary_dim -= c->rotary_dim % 2;
    const char *layout = ms_json_str(j, ms_json_get(j, obj, "rope_layout"));
    if (!layout || strcmp(layout, "halves") == 0) c->rope_layout = MS_ROPE_HALVES;
    else if (strcmp(layout, "pairs") == 0) c->rope_layout = MS_ROPE_PAIRS;
    else return ms_fail(err, MS_E_CONFIG, "config: rope_layout must be \"pairs\" or \"halves\", not \"%s\"", layout);

    if (family == MS_FAMILY_LLAMA) {
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
    if (c->family != MS_FAMILY_LLAMA && c->family != MS_FAMILY_QWEN3_5)
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
    if (!(c->eps > 0) || !isfinite(c->rope_theta) || c->rope_theta <= 0)
        return ms_fail(err, MS_E_CONFIG, "config: rms_norm_eps and rope_theta must be positive");
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
