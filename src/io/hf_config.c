#include "hf_config.h"
#include "../model/model.h"
#include <stdlib.h>
#include <string.h>

static const char QWEN35_08B[] =
    "{\"model_type\": \"qwen3_5_text\", \"hidden_size\": 1024, \"intermediate_size\": 3584, \"num_hidden_layers\": 24, "
    "\"vocab_size\": 248320, \"max_position_embeddings\": 262144, \"num_attention_heads\": 8, \"num_key_value_heads\": 2, "
    "\"head_dim\": 256, \"rms_norm_eps\": 1e-06, \"tie_word_embeddings\": true, "
    "\"rope_parameters\": {\"rope_type\": \"default\", \"rope_theta\": 10000000, \"partial_rotary_factor\": 0.25}, "
    "\"linear_num_key_heads\": 16, \"linear_num_value_heads\": 16, \"linear_key_head_dim\": 128, \"linear_value_head_dim\": 128, "
    "\"linear_conv_kernel_dim\": 4, \"full_attention_interval\": 4}";

static const char LLAMA_398M[] =
    "{\"model_type\": \"llama\", \"hidden_size\": 1024, \"intermediate_size\": 3584, \"num_hidden_layers\": 24, "
    "\"vocab_size\": 32000, \"max_position_embeddings\": 4096, \"num_attention_heads\": 8, \"num_key_value_heads\": 8, "
    "\"head_dim\": 128, \"rms_norm_eps\": 1e-05, \"rope_theta\": 10000.0, \"tie_word_embeddings\": true}";

/* Gemma 3 270M (google/gemma-3-270m config.json, the keys we read) */
static const char GEMMA3_270M[] =
    "{\"model_type\": \"gemma3_text\", \"hidden_size\": 640, \"intermediate_size\": 2048, \"num_hidden_layers\": 18, "
    "\"vocab_size\": 262144, \"max_position_embeddings\": 32768, \"num_attention_heads\": 4, \"num_key_value_heads\": 1, "
    "\"head_dim\": 256, \"rms_norm_eps\": 1e-06, \"hidden_activation\": \"gelu_pytorch_tanh\", \"query_pre_attn_scalar\": 256, "
    "\"sliding_window\": 512, \"rope_theta\": 1000000.0, \"rope_local_base_freq\": 10000.0, \"rope_scaling\": null, "
    "\"_sliding_window_pattern\": 6, \"tie_word_embeddings\": true}";

/* Gemma 3 1B (google/gemma-3-1b-it config.json, the keys we read) */
static const char GEMMA3_1B[] =
    "{\"model_type\": \"gemma3_text\", \"hidden_size\": 1152, \"intermediate_size\": 6912, \"num_hidden_layers\": 26, "
    "\"vocab_size\": 262144, \"max_position_embeddings\": 32768, \"num_attention_heads\": 4, \"num_key_value_heads\": 1, "
    "\"head_dim\": 256, \"rms_norm_eps\": 1e-06, \"hidden_activation\": \"gelu_pytorch_tanh\", \"query_pre_attn_scalar\": 256, "
    "\"sliding_window\": 512, \"rope_theta\": 1000000.0, \"rope_local_base_freq\": 10000.0, \"rope_scaling\": null, "
    "\"sliding_window_pattern\": 6, \"tie_word_embeddings\": true}";

const char *ms_config_preset(const char *name) {
    if (!name) return NULL;
    if (!strcmp(name, "gemma3-270m")) return GEMMA3_270M;
    if (!strcmp(name, "gemma3-1b")) return GEMMA3_1B;
    if (!strcmp(name, "qwen3.5-0.8b")) return QWEN35_08B;
    if (!strcmp(name, "llama-398m")) return LLAMA_398M;
    return NULL;
}

static int family_of_model_type(const char *mt, int *qk_norm) {
    *qk_norm = 0;
    if (!mt) return 0;
    if (!strcmp(mt, "qwen3_5") || !strcmp(mt, "qwen3_5_text")) return MS_FAMILY_QWEN3_5;
    if (!strcmp(mt, "gemma3") || !strcmp(mt, "gemma3_text")) return MS_FAMILY_GEMMA3;
    if (!strcmp(mt, "qwen3")) { *qk_norm = 1; return MS_FAMILY_LLAMA; }
    if (!strcmp(mt, "llama") || !strcmp(mt, "qwen2") || !strcmp(mt, "mistral")) return MS_FAMILY_LLAMA;
    return 0;
}

int ms_config_from_text(const char *text, size_t len, ms_config *c, ms_err *err) {
    ms_json j;
    char jerr[160];
    if (ms_json_parse(&j, text, len, jerr, sizeof jerr)) return ms_fail(err, MS_E_CONFIG, "config: %s", jerr);
    int rc, family = 0, qk = 0;
    int32_t obj = 0;
    if (j.nodes[0].type != MS_JOBJ) { ms_json_free(&j); return ms_fail(err, MS_E_CONFIG, "config: not a JSON object"); }
    const char *fam = ms_json_str(&j, ms_json_get(&j, 0, "family"));
    if (fam) {
        family = ms_family_from_name(fam);
        int32_t inner = ms_json_get(&j, 0, "config");
        if (inner >= 0) obj = inner;
    } else {
        int32_t tc = ms_json_get(&j, 0, "text_config");
        const char *mt = ms_json_str(&j, ms_json_get(&j, 0, "model_type"));
        if (tc >= 0 && j.nodes[tc].type == MS_JOBJ) {
            const char *tmt = ms_json_str(&j, ms_json_get(&j, tc, "model_type"));
            family = family_of_model_type(tmt ? tmt : mt, &qk);
            obj = tc;
        } else family = family_of_model_type(mt, &qk);
        if (!family) {
            rc = ms_fail(err, MS_E_CONFIG, "config: model_type \"%s\" is not supported (llama, qwen2, qwen3, qwen3_5, gemma3, gemma3_text)", mt ? mt : "(missing)");
            ms_json_free(&j); /* after the message: mt points into j */
            return rc;
        }
    }
    if (!family) {
        rc = ms_fail(err, MS_E_CONFIG, "config: unknown family \"%s\"", fam);
        ms_json_free(&j);
        return rc;
    }
    rc = ms_config_from_json(c, family, &j, obj, err);
    if (!rc && obj != 0 && ms_json_get(&j, obj, "tie_word_embeddings") < 0) {
        int tied; /* Qwen3.5 keeps tie_word_embeddings at the top level too */
        if (ms_json_bool(&j, ms_json_get(&j, 0, "tie_word_embeddings"), &tied)) c->tied = tied;
    }
    if (!rc && qk) c->qk_norm = 1;
    ms_json_free(&j);
    return rc;
}

int ms_config_summary(const char *text, size_t len, char **out, ms_err *err) {
    *out = NULL;
    const char *preset = NULL;
    char name[64];
    if (len < sizeof name) { memcpy(name, text, len); name[len] = 0; preset = ms_config_preset(name); }
    if (preset) { text = preset; len = strlen(preset); }
    ms_config c;
    int rc = ms_config_from_text(text, len, &c, err);
    if (rc) return rc;
    ms_tensor *specs;
    int n;
    if (!ms_model_specs(&c, &specs, &n)) return ms_fail(err, MS_E_MEMORY, "out of memory");
    ms_param_counts pc;
    ms_tensors_count(specs, n, &pc);
    free(specs);
    ms_buf b = {0};
    ms_buf_printf(&b, "{\"family\": \"%s\", \"config\": ", ms_family_name(c.family));
    ms_config_to_json(&c, &b);
    ms_buf_printf(&b, ", \"params\": {\"total\": %lld, \"embedding\": %lld, \"mlp\": %lld, \"mixer\": %lld, \"norms\": %lld, "
                      "\"lm_head\": %lld, \"mlp_per_layer\": %lld}}",
                  (long long)pc.total, (long long)pc.embedding, (long long)pc.mlp, (long long)pc.mixer, (long long)pc.norms,
                  (long long)pc.head, (long long)3 * c.hidden * c.intermediate);
    if (b.oom) { ms_buf_free(&b); return ms_fail(err, MS_E_MEMORY, "out of memory"); }
    *out = b.p;
    return MS_OK;
}
