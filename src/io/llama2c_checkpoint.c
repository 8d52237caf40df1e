/* llama2.c checkpoints, the legacy "v0" layout written by llama2.c's export (run.c reads it):
 * int32 dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size (negative: separate
 * classifier), seq_len; then f32 arrays token_embedding, rms_att, wq, wk, wv, wo, rms_ffn, w1, w2,
 * w3, rms_final, legacy RoPE tables (seq_len * head_size), [wcls]. Mapped to HF names. */
#include "llama2c_checkpoint.h"
#include "../kernels/dtype.h"
#include "../util/json.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int add(ms_conv_plan *p, int is_matrix, int64_t d0, int64_t d1, uint64_t off, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
static int add(ms_conv_plan *p, int is_matrix, int64_t d0, int64_t d1, uint64_t off, const char *fmt, ...) {
    if (p->n == p->cap) {
        int cap = p->cap ? p->cap * 2 : 64;
        ms_conv_tensor *nt = realloc(p->t, (size_t)cap * sizeof *nt);
        if (!nt) return 0;
        p->t = nt;
        p->cap = cap;
    }
    ms_conv_tensor *t = &p->t[p->n++];
    memset(t, 0, sizeof *t);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t->name, sizeof t->name, fmt, ap);
    va_end(ap);
    t->ndim = d1 ? 2 : 1;
    t->shape[0] = d0;
    t->shape[1] = d1;
    t->is_matrix = is_matrix;
    t->src_dtype = MS_F32;
    t->src_off = off;
    return 1;
}

static int32_t le32(const uint8_t *b) { return (int32_t)((uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24); }

int ms_plan_llama2c(ms_conv_plan *p, const ms_io *io, const char *ckpt, const char *tok, ms_err *err) {
    memset(p, 0, sizeof *p);
    int h = io->open(io->ctx, ckpt, 'r');
    if (h < 0) return ms_fail(err, MS_E_CHECKPOINT, "%s: cannot open", ckpt);
    int64_t fsize = io->size(io->ctx, h);
    uint8_t hdr[28];
    if (fsize < 28 || io->read(io->ctx, h, 0, hdr, 28)) {
        io->close(io->ctx, h);
        return ms_fail(err, MS_E_CHECKPOINT, "%s: truncated header (%lld bytes; a llama2.c checkpoint starts with 28)", ckpt, (long long)fsize);
    }
    io->close(io->ctx, h);
    if (le32(hdr) == 0x616b3432)
        return ms_fail(err, MS_E_CHECKPOINT, "%s: versioned llama2.c export (magic 'ak42') is not supported; use the legacy v0 export", ckpt);
    int32_t dim = le32(hdr), hid = le32(hdr + 4), L = le32(hdr + 8), nh = le32(hdr + 12), nkv = le32(hdr + 16), V = le32(hdr + 20), seq = le32(hdr + 24);
    int shared = V > 0;
    if (V == INT32_MIN) V = 0; /* cannot be negated: rejected below as an impossible vocabulary */
    else if (V < 0) V = -V;
    if (dim < 1 || dim > 65536 || hid < 1 || hid > (1 << 20) || L < 1 || L > 256 || nh < 1 || nh > dim || dim % nh ||
        nkv < 1 || nkv > nh || nh % nkv || V < 1 || V > (1 << 22) || seq < 1 || seq > (1 << 24) || (dim / nh) % 2)
        return ms_fail(err, MS_E_CHECKPOINT, "%s: header values impossible (dim %d, hidden %d, layers %d, heads %d/%d, vocab %d, seq %d)",
                       ckpt, dim, hid, L, nh, nkv, V, seq);
    const int64_t hs = dim / nh, kvd = hs * nkv;
    uint64_t off = 28;
    int ok = 1;
#define F(n) (off += (uint64_t)(n) * 4, off - (uint64_t)(n) * 4)
    uint64_t o_emb = F((int64_t)V * dim), o_att = F((int64_t)L * dim), o_wq = F((int64_t)L * dim * dim),
             o_wk = F((int64_t)L * kvd * dim), o_wv = F((int64_t)L * kvd * dim), o_wo = F((int64_t)L * dim * dim),
             o_ffn = F((int64_t)L * dim), o_w1 = F((int64_t)L * hid * dim), o_w2 = F((int64_t)L * dim * hid),
             o_w3 = F((int64_t)L * hid * dim), o_fin = F(dim);
    (void)F((int64_t)seq * hs); /* legacy RoPE tables, unused */
    uint64_t o_cls = shared ? 0 : F((int64_t)V * dim);
#undef F
    if ((uint64_t)fsize != off)
        return ms_fail(err, MS_E_CHECKPOINT, "%s: %s: expected %llu bytes for this header, the file has %lld", ckpt,
                       (uint64_t)fsize < off ? "truncated" : "trailing data", (unsigned long long)off, (long long)fsize);
    ok &= add(p, 1, V, dim, o_emb, "embed_tokens");
    for (int l = 0; l < L; l++) {
        ok &= add(p, 0, dim, 0, o_att + (uint64_t)l * dim * 4, "layers.%d.input_layernorm", l);
        ok &= add(p, 1, dim, dim, o_wq + (uint64_t)l * dim * dim * 4, "layers.%d.self_attn.q_proj", l);
        ok &= add(p, 1, kvd, dim, o_wk + (uint64_t)l * kvd * dim * 4, "layers.%d.self_attn.k_proj", l);
        ok &= add(p, 1, kvd, dim, o_wv + (uint64_t)l * kvd * dim * 4, "layers.%d.self_attn.v_proj", l);
        ok &= add(p, 1, dim, dim, o_wo + (uint64_t)l * dim * dim * 4, "layers.%d.self_attn.o_proj", l);
        ok &= add(p, 0, dim, 0, o_ffn + (uint64_t)l * dim * 4, "layers.%d.post_attention_layernorm", l);
        ok &= add(p, 1, hid, dim, o_w1 + (uint64_t)l * hid * dim * 4, "layers.%d.mlp.gate_proj", l);
        ok &= add(p, 1, dim, hid, o_w2 + (uint64_t)l * dim * hid * 4, "layers.%d.mlp.down_proj", l);
        ok &= add(p, 1, hid, dim, o_w3 + (uint64_t)l * hid * dim * 4, "layers.%d.mlp.up_proj", l);
    }
    ok &= add(p, 0, dim, 0, o_fin, "norm");
    if (!shared) ok &= add(p, 1, V, dim, o_cls, "lm_head");
    if (!ok) return ms_fail(err, MS_E_MEMORY, "out of memory");
    snprintf(p->family, sizeof p->family, "llama");
    snprintf(p->src_files[0], sizeof p->src_files[0], "%s", ckpt);
    p->n_src_files = 1;
    ms_buf b = {0};
    ms_buf_printf(&b, "{\"architectures\": [\"LlamaForCausalLM\"], \"source\": \"llama2.c\", \"hidden_size\": %d, \"intermediate_size\": %d, "
                      "\"num_hidden_layers\": %d, \"num_attention_heads\": %d, \"num_key_value_heads\": %d, \"head_dim\": %d, "
                      "\"vocab_size\": %d, \"max_position_embeddings\": %d, \"rms_norm_eps\": 1e-05, \"rope_theta\": 10000.0, "
                      "\"rope_layout\": \"pairs\", \"tie_word_embeddings\": %s}",
                  dim, hid, L, nh, nkv, (int)hs, V, seq, shared ? "true" : "false");
    if (b.oom) { ms_buf_free(&b); return ms_fail(err, MS_E_MEMORY, "out of memory"); }
    p->config_json = b.p;
    if (tok) {
        snprintf(p->tok_kind, sizeof p->tok_kind, "llama2c");
        snprintf(p->tok_src, sizeof p->tok_src, "%s", tok);
        snprintf(p->tok_out, sizeof p->tok_out, "tokenizer.bin");
        p->tok_vocab = V;
        p->tok_bos = 1;
        p->tok_eos[0] = 2;
        p->n_tok_eos = 1;
    }
    return MS_OK;
}

int ms_convert_llama2c(const ms_io *io, const char *ckpt, const char *tok, const ms_conv_opts *o, ms_err *err) {
    ms_conv_plan p;
    int rc = ms_plan_llama2c(&p, io, ckpt, tok, err);
    if (rc) { ms_plan_free(&p); return rc; }
    return ms_convert_finish(&p, io, o, err);
}
