/* A loaded model described as data (JSON), for the JS side to read instead of copying C's
 * structures: docs/architecture.md, "The wasm boundary". The engine's tables: analysis/engine_info.c. */
#include "describe.h"
#include "hooks.h"
#include "../kernels/dtype.h"
#include "../util/json.h"
#include <stdlib.h>

const char *ms_activations_name(int mode) {
    static const char *const names[MS_ACT__COUNT] = {
#define MS_X(id, name) name,
        MS_ACT_LIST(MS_X)
#undef MS_X
    };
    return mode >= 0 && mode < MS_ACT__COUNT ? names[mode] : "?";
}

char *ms_describe_model(const ms_model *m) {
    const ms_config *c = &m->cfg;
    ms_param_counts pc;
    ms_model_count(m, &pc);
    ms_buf b = {0};
    ms_buf_printf(&b, "{\"family\":\"%s\",\"kernels\":\"%s\",\"activations\":\"%s\",\"config\":{\"hidden_size\":%d,\"intermediate_size\":%d,"
                      "\"num_hidden_layers\":%d,\"vocab_size\":%d,\"max_position_embeddings\":%d,\"num_attention_heads\":%d,"
                      "\"num_key_value_heads\":%d,\"head_dim\":%d,\"rotary_dim\":%d,\"rope_theta\":%.17g,\"rms_norm_eps\":%.9g,"
                      "\"tie_word_embeddings\":%s,\"rope_layout\":\"%s\",\"linear_num_key_heads\":%d,\"linear_num_value_heads\":%d,"
                      "\"linear_key_head_dim\":%d,\"linear_value_head_dim\":%d,\"linear_conv_kernel_dim\":%d,\"layer_types\":[",
                  ms_family_name(c->family), m->kern.name, ms_activations_name(m->activations), c->hidden, c->intermediate, c->n_layers, c->vocab, c->max_pos,
                  c->n_heads, c->n_kv_heads, c->head_dim, c->rotary_dim, c->rope_theta, (double)c->eps, c->tied ? "true" : "false",
                  c->rope_layout == MS_ROPE_PAIRS ? "pairs" : "halves", c->lin_k_heads, c->lin_v_heads, c->lin_k_dim,
                  c->lin_v_dim, c->conv_kernel);
    for (int l = 0; l < c->n_layers; l++)
        ms_buf_printf(&b, "%s\"%s\"", l ? "," : "", c->mixer[l] == MS_MIXER_GDN ? "linear_attention" : c->sliding[l] ? "sliding_attention" : "full_attention");
    ms_buf_printf(&b, "],\"hidden_activation\":\"%s\",\"sliding_window\":%d,\"query_pre_attn_scalar\":%.17g},\"params\":{\"total\":%lld,\"embedding\":%lld,\"mlp\":%lld,\"mixer\":%lld,\"norms\":%lld,\"lm_head\":%lld},"
                      "\"weight_bytes\":%zu,\"tokenizer\":{\"kind\":\"%s\",\"file\":\"%s\",\"sha256\":\"%s\",\"bytes\":%llu,"
                      "\"vocab_size\":%d,\"bos_token_id\":%d,\"eos_token_ids\":[",
                  c->gate_act == MS_GATE_GELU_TANH ? "gelu_pytorch_tanh" : "silu", c->sliding_window, c->query_scalar,
                  (long long)pc.total, (long long)pc.embedding, (long long)pc.mlp, (long long)pc.mixer, (long long)pc.norms,
                  (long long)pc.head, m->weight_bytes, m->tok.kind, m->tok.file, m->tok.sha256, (unsigned long long)m->tok.bytes,
                  m->tok.vocab_size, m->tok.bos_id);
    for (int i = 0; i < m->tok.n_eos; i++) ms_buf_printf(&b, "%s%d", i ? "," : "", m->tok.eos_ids[i]);
    ms_buf_puts(&b, "],\"chat\":");
    if (!m->tok.chat_template) ms_buf_puts(&b, "null");
    else {
        const char *keys[3] = {"template", "bos_token", "eos_token"}, *vals[3] = {m->tok.chat_template, m->tok.chat_bos, m->tok.chat_eos};
        for (int k = 0; k < 3; k++) {
            ms_buf_printf(&b, "%s\"%s\":", k ? "," : "{", keys[k]);
            if (vals[k]) ms_buf_json_str(&b, vals[k]); else ms_buf_puts(&b, "null");
        }
        ms_buf_puts(&b, "}");
    }
    ms_buf_puts(&b, "},\"shards\":[");
    for (int s = 0; s < m->n_shards; s++)
        ms_buf_printf(&b, "%s{\"file\":\"%s\",\"bytes\":%llu,\"sha256\":\"%s\"}", s ? "," : "", m->shards[s].file,
                      (unsigned long long)m->shards[s].bytes, m->shards[s].sha256);
    ms_buf_puts(&b, "],\"dtypes\":{");
    int first = 1;
    for (int d = 0; d < MS_DTYPE__COUNT; d++) {
        size_t by = 0;
        int n = 0;
        for (int i = 0; i < m->n_tensors; i++) if (m->tensors[i].dtype == d) { by += m->tensors[i].bytes; n++; }
        if (n) { ms_buf_printf(&b, "%s\"%s\":{\"tensors\":%d,\"bytes\":%zu}", first ? "" : ",", ms_dtype_name(d), n, by); first = 0; }
    }
    ms_buf_puts(&b, "}}");
    if (b.oom) { ms_buf_free(&b); return NULL; }
    return b.p;
}

