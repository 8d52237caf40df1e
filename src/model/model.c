#include "model.h"
#include "../util/threads.h"
#include "../util/platform.h"
#include "../kernels/dtype.h"
#include "../kernels/quant.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MS_ALIGN 64

/* ---- the tensors a family + config require ---------------------------------------------- */

typedef struct {
    ms_tensor *t;
    int n, cap;
} spec_list;

static int add_spec(spec_list *s, int is_matrix, int64_t d0, int64_t d1, int64_t d2, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
#include <stdarg.h>
static int add_spec(spec_list *s, int is_matrix, int64_t d0, int64_t d1, int64_t d2, const char *fmt, ...) {
    if (s->n == s->cap) {
        int cap = s->cap ? s->cap * 2 : 64;
        ms_tensor *nt = realloc(s->t, (size_t)cap * sizeof *nt);
        if (!nt) return 0;
        s->t = nt;
        s->cap = cap;
    }
    ms_tensor *t = &s->t[s->n++];
    memset(t, 0, sizeof *t);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t->name, sizeof t->name, fmt, ap);
    va_end(ap);
    t->shape[0] = d0; t->shape[1] = d1; t->shape[2] = d2;
    t->ndim = d2 ? 3 : d1 ? 2 : 1;
    t->rows = d0;
    t->cols = (d1 ? d1 : 1) * (d2 ? d2 : 1);
    t->is_matrix = is_matrix;
    t->shard = -1;
    t->dtype = -1;
    return 1;
}

static int build_specs(const ms_config *c, spec_list *s) {
    int ok = 1;
    const int64_t H = c->hidden, I = c->intermediate;
    ok &= add_spec(s, 1, c->vocab, H, 0, "embed_tokens");
    ok &= add_spec(s, 0, H, 0, 0, "norm");
    if (!c->tied) ok &= add_spec(s, 1, c->vocab, H, 0, "lm_head");
    for (int l = 0; l < c->n_layers && ok; l++) {
        ok &= add_spec(s, 0, H, 0, 0, "layers.%d.input_layernorm", l);
        if (c->mixer[l] == MS_MIXER_ATTENTION) {
            int64_t qd = (int64_t)c->n_heads * c->head_dim, kvd = (int64_t)c->n_kv_heads * c->head_dim;
            ok &= add_spec(s, 1, c->attn_gate ? 2 * qd : qd, H, 0, "layers.%d.self_attn.q_proj", l);
            ok &= add_spec(s, 1, kvd, H, 0, "layers.%d.self_attn.k_proj", l);
            ok &= add_spec(s, 1, kvd, H, 0, "layers.%d.self_attn.v_proj", l);
            ok &= add_spec(s, 1, H, qd, 0, "layers.%d.self_attn.o_proj", l);
            if (c->qk_norm) {
                ok &= add_spec(s, 0, c->head_dim, 0, 0, "layers.%d.self_attn.q_norm", l);
                ok &= add_spec(s, 0, c->head_dim, 0, 0, "layers.%d.self_attn.k_norm", l);
            }
        } else {
            int64_t kd = ms_cfg_gdn_key_dim(c), vd = ms_cfg_gdn_value_dim(c), conv = ms_cfg_gdn_conv_dim(c);
            ok &= add_spec(s, 1, conv, H, 0, "layers.%d.linear_attn.in_proj_qkv", l);
            ok &= add_spec(s, 1, vd, H, 0, "layers.%d.linear_attn.in_proj_z", l);
            ok &= add_spec(s, 1, c->lin_v_heads, H, 0, "layers.%d.linear_attn.in_proj_b", l);
            ok &= add_spec(s, 1, c->lin_v_heads, H, 0, "layers.%d.linear_attn.in_proj_a", l);
            ok &= add_spec(s, 0, conv, 1, c->conv_kernel, "layers.%d.linear_attn.conv1d", l);
            ok &= add_spec(s, 0, c->lin_v_heads, 0, 0, "layers.%d.linear_attn.dt_bias", l);
            ok &= add_spec(s, 0, c->lin_v_heads, 0, 0, "layers.%d.linear_attn.A_log", l);
            ok &= add_spec(s, 0, c->lin_v_dim, 0, 0, "layers.%d.linear_attn.norm", l);
            ok &= add_spec(s, 1, H, vd, 0, "layers.%d.linear_attn.out_proj", l);
            (void)kd;
        }
        ok &= add_spec(s, 0, H, 0, 0, "layers.%d.post_attention_layernorm", l);
        if (c->sandwich_norms) {
            ok &= add_spec(s, 0, H, 0, 0, "layers.%d.pre_feedforward_layernorm", l);
            ok &= add_spec(s, 0, H, 0, 0, "layers.%d.post_feedforward_layernorm", l);
        }
        ok &= add_spec(s, 1, I, H, 0, "layers.%d.mlp.gate_proj", l);
        ok &= add_spec(s, 1, I, H, 0, "layers.%d.mlp.up_proj", l);
        ok &= add_spec(s, 1, H, I, 0, "layers.%d.mlp.down_proj", l);
    }
    return ok;
}

int ms_model_specs(const ms_config *c, ms_tensor **out, int *n) {
    spec_list s = {0};
    if (!build_specs(c, &s)) { free(s.t); return 0; }
    *out = s.t;
    *n = s.n;
    return 1;
}

ms_tensor *ms_model_find(ms_model *m, const char *name) {
    for (int i = 0; i < m->n_tensors; i++)
        if (strcmp(m->tensors[i].name, name) == 0) return &m->tensors[i];
    return NULL;
}

static int bind(ms_model *m) {
    char nm[MS_NAME_MAX];
    m->embed = ms_model_find(m, "embed_tokens");
    m->final_norm = ms_model_find(m, "norm");
    m->lm_head = m->cfg.tied ? m->embed : ms_model_find(m, "lm_head");
#define B(field, suffix) do { snprintf(nm, sizeof nm, "layers.%d.%s", l, suffix); L->field = ms_model_find(m, nm); } while (0)
    for (int l = 0; l < m->cfg.n_layers; l++) {
        ms_layer *L = &m->layers[l];
        memset(L, 0, sizeof *L);
        B(input_norm, "input_layernorm");
        if (m->cfg.sandwich_norms) {
            B(attn_out_norm, "post_attention_layernorm"); B(post_norm, "pre_feedforward_layernorm");
            B(mlp_out_norm, "post_feedforward_layernorm");
        } else B(post_norm, "post_attention_layernorm");
        B(wq, "self_attn.q_proj"); B(wk, "self_attn.k_proj"); B(wv, "self_attn.v_proj"); B(wo, "self_attn.o_proj");
        B(q_norm, "self_attn.q_norm"); B(k_norm, "self_attn.k_norm");
        B(in_qkv, "linear_attn.in_proj_qkv"); B(in_z, "linear_attn.in_proj_z"); B(in_b, "linear_attn.in_proj_b");
        B(in_a, "linear_attn.in_proj_a"); B(conv, "linear_attn.conv1d"); B(dt_bias, "linear_attn.dt_bias");
        B(A_log, "linear_attn.A_log"); B(gdn_norm, "linear_attn.norm"); B(out_proj, "linear_attn.out_proj");
        B(gate, "mlp.gate_proj"); B(up, "mlp.up_proj"); B(down, "mlp.down_proj");
    }
#undef B
    return m->embed && m->final_norm && m->lm_head;
}

/* ---- manifest ---------------------------------------------------------------------------- */

static int copy_str(char *dst, size_t cap, const char *s) {
    if (!s || strlen(s) >= cap) return 0;
    memcpy(dst, s, strlen(s) + 1);
    return 1;
}

static int is_hex64(const char *s) {
    if (!s || strlen(s) != 64) return 0;
    for (int i = 0; i < 64; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))) return 0;
    return 1;
}

/* A file name inside the weight set: no path separators, no "..", printable. */
static int safe_file_name(const char *s) {
    if (!s || !*s || strlen(s) > 200 || strcmp(s, ".") == 0 || strcmp(s, "..") == 0) return 0;
    for (const char *p = s; *p; p++)
        if (*p == '/' || *p == '\\' || (unsigned char)*p < 0x20) return 0;
    return 1;
}

typedef struct { int shard; uint64_t off, end; int idx; } span;
static int cmp_span(const void *a, const void *b) {
    const span *x = a, *y = b;
    if (x->shard != y->shard) return x->shard < y->shard ? -1 : 1;
    return x->off < y->off ? -1 : x->off > y->off;
}

static char *dup_str(const char *s) {
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

/* manifest tokenizer.chat: {template: string, bos_token: string | null, eos_token: string | null} */
static int parse_chat(ms_tokinfo *ti, const ms_json *j, int32_t ch, ms_err *err) {
    if (ch < 0 || j->nodes[ch].type == MS_JNULL) return MS_OK;
    const char *tpl = ms_json_str(j, ms_json_get(j, ch, "template"));
    if (j->nodes[ch].type != MS_JOBJ || !tpl || !*tpl) return ms_fail(err, MS_E_MANIFEST, "manifest: tokenizer.chat must be an object with a non-empty template");
    const char *keys[2] = {"bos_token", "eos_token"};
    char **dst[2] = {&ti->chat_bos, &ti->chat_eos};
    if (!(ti->chat_template = dup_str(tpl))) return ms_fail(err, MS_E_MEMORY, "out of memory");
    for (int k = 0; k < 2; k++) {
        int32_t n = ms_json_get(j, ch, keys[k]);
        if (n < 0 || j->nodes[n].type == MS_JNULL) continue;
        const char *v = ms_json_str(j, n);
        if (!v) return ms_fail(err, MS_E_MANIFEST, "manifest: tokenizer.chat.%s must be a string or null", keys[k]);
        if (!(*dst[k] = dup_str(v))) return ms_fail(err, MS_E_MEMORY, "out of memory");
    }
    return MS_OK;
}

static void free_chat(ms_tokinfo *ti) {
    free(ti->chat_template);
    free(ti->chat_bos);
    free(ti->chat_eos);
    ti->chat_template = ti->chat_bos = ti->chat_eos = NULL;
}

static int parse_tokinfo(ms_model *m, const ms_json *j, int32_t tk, ms_err *err) {
    ms_tokinfo *ti = &m->tok;
    free_chat(ti);
    memset(ti, 0, sizeof *ti);
    ti->bos_id = -1;
    ti->vocab_size = m->cfg.vocab;
    if (tk < 0) return MS_OK; /* a weight set may come without a tokenizer */
    if (j->nodes[tk].type != MS_JOBJ) return ms_fail(err, MS_E_MANIFEST, "manifest: 'tokenizer' must be an object");
    if (!copy_str(ti->kind, sizeof ti->kind, ms_json_str(j, ms_json_get(j, tk, "kind"))))
        return ms_fail(err, MS_E_MANIFEST, "manifest: tokenizer.kind missing");
    int no_file = !strcmp(ti->kind, "none"); /* vocabulary facts only, no tokenizer file */
    if (!no_file && (!copy_str(ti->file, sizeof ti->file, ms_json_str(j, ms_json_get(j, tk, "file"))) || !safe_file_name(ti->file)))
        return ms_fail(err, MS_E_MANIFEST, "manifest: tokenizer.file missing or not a plain file name");
    const char *h = ms_json_str(j, ms_json_get(j, tk, "sha256"));
    if (h) {
        if (!is_hex64(h)) return ms_fail(err, MS_E_MANIFEST, "manifest: tokenizer.sha256 is not 64 lowercase hex digits");
        memcpy(ti->sha256, h, 65);
    }
    int64_t v;
    int32_t n = ms_json_get(j, tk, "bytes");
    if (n >= 0) {
        if (!ms_json_int(j, n, 0, (int64_t)1 << 40, &v)) return ms_fail(err, MS_E_MANIFEST, "manifest: tokenizer.bytes invalid");
        ti->bytes = (uint64_t)v;
    }
    n = ms_json_get(j, tk, "vocab_size");
    if (n >= 0) {
        if (!ms_json_int(j, n, 1, m->cfg.vocab, &v))
            return ms_fail(err, MS_E_MANIFEST, "manifest: tokenizer.vocab_size must be in [1, %d] (the embedding rows)", m->cfg.vocab);
        ti->vocab_size = (int)v;
    }
    n = ms_json_get(j, tk, "bos_token_id");
    if (n >= 0 && j->nodes[n].type != MS_JNULL) {
        if (!ms_json_int(j, n, 0, ti->vocab_size - 1, &v)) return ms_fail(err, MS_E_MANIFEST, "manifest: tokenizer.bos_token_id out of range");
        ti->bos_id = (int)v;
    }
    n = ms_json_get(j, tk, "eos_token_ids");
    if (n >= 0) {
        if (j->nodes[n].type != MS_JARR || j->nodes[n].count > 8)
            return ms_fail(err, MS_E_MANIFEST, "manifest: tokenizer.eos_token_ids must be an array of at most 8 ids");
        for (int32_t e = j->nodes[n].child; e >= 0; e = j->nodes[e].next) {
            if (!ms_json_int(j, e, 0, ti->vocab_size - 1, &v)) return ms_fail(err, MS_E_MANIFEST, "manifest: tokenizer.eos_token_ids has an id out of range");
            ti->eos_ids[ti->n_eos++] = (int)v;
        }
    }
    return parse_chat(ti, j, ms_json_get(j, tk, "chat"), err);
}

/* manifest shards: [{file, bytes, sha256}], each file named once */
static int parse_shards(ms_model *m, const ms_json *j, int32_t sh, ms_err *err) {
    if (sh < 0 || j->nodes[sh].type != MS_JARR || j->nodes[sh].count < 1 || j->nodes[sh].count > 100000)
        return ms_fail(err, MS_E_MANIFEST, "manifest: 'shards' must be a non-empty array");
    m->n_shards = j->nodes[sh].count;
    m->shards = calloc((size_t)m->n_shards, sizeof *m->shards);
    if (!m->shards) return ms_fail(err, MS_E_MEMORY, "out of memory reading the manifest");
    int i = 0;
    for (int32_t e = j->nodes[sh].child; e >= 0; e = j->nodes[e].next, i++) {
        ms_shard *s = &m->shards[i];
        int64_t v;
        if (j->nodes[e].type != MS_JOBJ) return ms_fail(err, MS_E_MANIFEST, "manifest: shards[%d] is not an object", i);
        if (!copy_str(s->file, sizeof s->file, ms_json_str(j, ms_json_get(j, e, "file"))) || !safe_file_name(s->file))
            return ms_fail(err, MS_E_MANIFEST, "manifest: shards[%d].file missing or not a plain file name", i);
        if (!ms_json_int(j, ms_json_get(j, e, "bytes"), 0, (int64_t)1 << 40, &v))
            return ms_fail(err, MS_E_MANIFEST, "manifest: shards[%d].bytes missing or invalid (%s)", i, s->file);
        s->bytes = (uint64_t)v;
        const char *h = ms_json_str(j, ms_json_get(j, e, "sha256"));
        if (!is_hex64(h)) return ms_fail(err, MS_E_MANIFEST, "manifest: shards[%d].sha256 must be 64 lowercase hex digits (%s)", i, s->file);
        memcpy(s->sha256, h, 65);
        for (int k = 0; k < i; k++)
            if (strcmp(m->shards[k].file, s->file) == 0) return ms_fail(err, MS_E_MANIFEST, "manifest: shard file %s listed twice", s->file);
    }
    return MS_OK;
}

/* one manifest tensor entry (tensors[i]) matched against the tensor the config needs */
static int parse_tensor(ms_model *m, const ms_json *j, int32_t e, int i, ms_err *err) {
    if (j->nodes[e].type != MS_JOBJ) return ms_fail(err, MS_E_MANIFEST, "manifest: tensors[%d] is not an object", i);
    const char *name = ms_json_str(j, ms_json_get(j, e, "name"));
    if (!name) return ms_fail(err, MS_E_MANIFEST, "manifest: tensors[%d].name missing", i);
    ms_tensor *t = ms_model_find(m, name);
    if (!t) return ms_fail(err, MS_E_TENSOR, "tensor %s: not part of a %s model with this config", name, ms_family_name(m->cfg.family));
    if (t->shard >= 0) return ms_fail(err, MS_E_TENSOR, "tensor %s: listed twice", name);
    const char *dts = ms_json_str(j, ms_json_get(j, e, "dtype"));
    int dt = ms_dtype_from_name(dts);
    if (dt < 0) return ms_fail(err, MS_E_TENSOR, "tensor %s: unknown dtype \"%s\"", name, dts ? dts : "(missing)");
    if (!t->is_matrix && dt != MS_F32)
        return ms_fail(err, MS_E_TENSOR, "tensor %s: dtype %s not allowed (norms, conv and gate parameters must be f32)", name, dts);
    int32_t shp = ms_json_get(j, e, "shape");
    if (shp < 0 || j->nodes[shp].type != MS_JARR || j->nodes[shp].count != t->ndim)
        return ms_fail(err, MS_E_TENSOR, "tensor %s: shape must have %d dimensions", name, t->ndim);
    int d = 0;
    for (int32_t se = j->nodes[shp].child; se >= 0; se = j->nodes[se].next, d++) {
        int64_t v;
        if (!ms_json_int(j, se, 0, (int64_t)1 << 40, &v) || v != t->shape[d]) {
            if (t->ndim == 1) return ms_fail(err, MS_E_TENSOR, "tensor %s: shape mismatch: expected [%lld]", name, (long long)t->shape[0]);
            if (t->ndim == 2) return ms_fail(err, MS_E_TENSOR, "tensor %s: shape mismatch: expected [%lld, %lld]", name, (long long)t->shape[0], (long long)t->shape[1]);
            return ms_fail(err, MS_E_TENSOR, "tensor %s: shape mismatch: expected [%lld, %lld, %lld]", name, (long long)t->shape[0], (long long)t->shape[1], (long long)t->shape[2]);
        }
    }
    if (t->rows * t->cols > (int64_t)(SIZE_MAX / 4))
        return ms_fail(err, MS_E_MEMORY, "tensor %s: %lld values do not fit in this build's address space", name, (long long)(t->rows * t->cols));
    size_t want = ms_dtype_bytes(dt, (size_t)t->rows, (size_t)t->cols);
    if (!want) return ms_fail(err, MS_E_TENSOR, "tensor %s: dtype %s cannot hold shape (row length %lld)", name, dts, (long long)t->cols);
    int64_t shard, off, bytes;
    if (!ms_json_int(j, ms_json_get(j, e, "shard"), 0, m->n_shards - 1, &shard))
        return ms_fail(err, MS_E_TENSOR, "tensor %s: 'shard' missing or not an index into shards", name);
    if (!ms_json_int(j, ms_json_get(j, e, "offset"), 0, (int64_t)1 << 40, &off) || off % MS_ALIGN)
        return ms_fail(err, MS_E_TENSOR, "tensor %s: 'offset' missing, negative or not %d-byte aligned", name, MS_ALIGN);
    if (!ms_json_int(j, ms_json_get(j, e, "bytes"), 0, (int64_t)1 << 40, &bytes) || (uint64_t)bytes != want)
        return ms_fail(err, MS_E_TENSOR, "tensor %s: 'bytes' must be %zu for %s with this shape", name, want, dts);
    if ((uint64_t)off + (uint64_t)bytes > m->shards[shard].bytes)
        return ms_fail(err, MS_E_TENSOR, "tensor %s: bytes [%lld, %lld) lie outside shard %s (%llu bytes)", name,
                       (long long)off, (long long)(off + bytes), m->shards[shard].file, (unsigned long long)m->shards[shard].bytes);
    t->dtype = dt;
    t->shard = (int)shard;
    t->offset = (uint64_t)off;
    t->bytes = want;
    return MS_OK;
}

/* no two tensors share bytes of a shard */
static int check_overlaps(const ms_model *m, ms_err *err) {
    span *sp = malloc((size_t)m->n_tensors * sizeof *sp);
    if (!sp) return ms_fail(err, MS_E_MEMORY, "out of memory");
    for (int k = 0; k < m->n_tensors; k++)
        sp[k] = (span){m->tensors[k].shard, m->tensors[k].offset, m->tensors[k].offset + m->tensors[k].bytes, k};
    qsort(sp, (size_t)m->n_tensors, sizeof *sp, cmp_span);
    for (int k = 1; k < m->n_tensors; k++)
        if (sp[k].shard == sp[k - 1].shard && sp[k].off < sp[k - 1].end) {
            int a = sp[k - 1].idx, b = sp[k].idx;
            free(sp);
            return ms_fail(err, MS_E_TENSOR, "tensor %s: overlaps tensor %s in shard %s", m->tensors[b].name,
                           m->tensors[a].name, m->shards[m->tensors[b].shard].file);
        }
    free(sp);
    return MS_OK;
}

static int parse_manifest(ms_model *m, const ms_json *j, ms_err *err) {
    int rc;
    if (j->nodes[0].type != MS_JOBJ) return ms_fail(err, MS_E_MANIFEST, "manifest: top level must be an object");
    const char *fmt = ms_json_str(j, ms_json_get(j, 0, "format"));
    if (!fmt || strcmp(fmt, "mlpscope-weights") != 0)
        return ms_fail(err, MS_E_MANIFEST, "manifest: 'format' must be \"mlpscope-weights\"");
    int64_t ver;
    if (!ms_json_int(j, ms_json_get(j, 0, "version"), 0, 1000, &ver) || ver != 1)
        return ms_fail(err, MS_E_MANIFEST, "manifest: unsupported 'version' (this engine reads version 1)");
    const char *fam = ms_json_str(j, ms_json_get(j, 0, "family"));
    int family = ms_family_from_name(fam);
    if (!family) return ms_fail(err, MS_E_CONFIG, "manifest: unknown family \"%s\" (expected \"llama\", \"qwen3_5\" or \"gemma3\")", fam ? fam : "(missing)");
    int32_t cfg = ms_json_get(j, 0, "config");
    if (cfg < 0) return ms_fail(err, MS_E_MANIFEST, "manifest: 'config' missing");
    if ((rc = ms_config_from_json(&m->cfg, family, j, cfg, err))) return rc;
    if ((rc = parse_tokinfo(m, j, ms_json_get(j, 0, "tokenizer"), err))) return rc;
    if ((rc = parse_shards(m, j, ms_json_get(j, 0, "shards"), err))) return rc;

    /* tensors: each matched against the set the config needs; all of them present, none overlapping */
    spec_list specs = {0};
    if (!build_specs(&m->cfg, &specs)) { free(specs.t); return ms_fail(err, MS_E_MEMORY, "out of memory"); }
    m->tensors = specs.t;
    m->n_tensors = specs.n;
    int32_t tl = ms_json_get(j, 0, "tensors");
    if (tl < 0 || j->nodes[tl].type != MS_JARR) return ms_fail(err, MS_E_MANIFEST, "manifest: 'tensors' must be an array");
    int i = 0;
    for (int32_t e = j->nodes[tl].child; e >= 0; e = j->nodes[e].next, i++)
        if ((rc = parse_tensor(m, j, e, i, err))) return rc;
    for (int k = 0; k < m->n_tensors; k++)
        if (m->tensors[k].shard < 0) return ms_fail(err, MS_E_TENSOR, "tensor %s: missing from the manifest", m->tensors[k].name);
    if ((rc = check_overlaps(m, err))) return rc;
    size_t total = 0;
    for (int k = 0; k < m->n_tensors; k++)
        if (!ms_add_size(total, m->tensors[k].bytes, &total)) return ms_fail(err, MS_E_MEMORY, "weights exceed the address space");
    m->weight_bytes = total;
    if (!bind(m)) return ms_fail(err, MS_E_TENSOR, "internal: tensor binding failed");
    return MS_OK;
}

ms_model *ms_model_from_manifest(const char *text, size_t len, int allocate, ms_err *err) {
    ms_err_clear(err);
    ms_model *m = calloc(1, sizeof *m);
    if (!m) { ms_fail(err, MS_E_MEMORY, "out of memory"); return NULL; }
    ms_kernels_init(&m->kern, 1);
    ms_json j;
    char jerr[160];
    if (ms_json_parse(&j, text, len, jerr, sizeof jerr)) {
        ms_fail(err, MS_E_MANIFEST, "manifest.json: %s", jerr);
        free(m);
        return NULL;
    }
    int rc = parse_manifest(m, &j, err);
    ms_json_free(&j);
    if (rc) { ms_model_free(m); return NULL; }
    if (allocate) {
        for (int k = 0; k < m->n_tensors; k++) {
            ms_tensor *t = &m->tensors[k];
            t->data = malloc(t->bytes ? t->bytes : 1);
            if (!t->data) {
                ms_fail(err, MS_E_MEMORY, "tensor %s: cannot allocate %zu bytes", t->name, t->bytes);
                ms_model_free(m);
                return NULL;
            }
        }
        m->allocated = 1;
    }
    return m;
}

void ms_model_free(ms_model *m) {
    if (m) free_chat(&m->tok);
    if (!m) return;
    if (m->tensors)
        for (int k = 0; k < m->n_tensors; k++) free(m->tensors[k].data);
    free(m->tensors);
    free(m->shards);
    free(m);
}

/* every value must be finite: scanned in the storage type */
static int check_finite(const ms_tensor *t, ms_err *err) {
    size_t n = (size_t)t->rows * (size_t)t->cols;
    if (t->dtype == MS_F32) {
        const float *p = t->data;
        for (size_t i = 0; i < n; i++)
            if (!isfinite(p[i])) return ms_fail(err, MS_E_TENSOR, "tensor %s: value %zu is not finite", t->name, i);
    } else if (t->dtype == MS_F16 || t->dtype == MS_BF16) {
        const uint16_t *p = t->data;
        uint16_t mask = t->dtype == MS_F16 ? 0x7C00 : 0x7F80;
        for (size_t i = 0; i < n; i++)
            if ((p[i] & mask) == mask) return ms_fail(err, MS_E_TENSOR, "tensor %s: value %zu is not finite", t->name, i);
    } else if (t->dtype == MS_Q8_0) {
        const ms_block_q8_0 *b = t->data;
        for (size_t i = 0; i < n / MS_QK; i++)
            if (!isfinite(b[i].d)) return ms_fail(err, MS_E_TENSOR, "tensor %s: block %zu has a non-finite scale", t->name, i);
    } else if (t->dtype == MS_Q4_0) {
        const ms_block_q4_0 *b = t->data;
        for (size_t i = 0; i < n / MS_QK; i++)
            if (!isfinite(b[i].d)) return ms_fail(err, MS_E_TENSOR, "tensor %s: block %zu has a non-finite scale", t->name, i);
    }
    return MS_OK;
}

/* in the integer modes, q8_0 and q4_0 matrices with rows in fours become the 4-row interleaved
 * layouts of the integer kernels */
static int repackable(const ms_model *m, const ms_tensor *t) {
    return m->activations != MS_ACT_PLAIN && (t->dtype == MS_Q8_0 || t->dtype == MS_Q4_0) && t->rows % 4 == 0;
}

/* the kernel table of `level`, with the exact-activation kernels for the x4 layouts in exact mode */
static void init_kernels(ms_model *m, int level) {
    ms_kernels_init(&m->kern, level);
    if (m->activations == MS_ACT_EXACT) {
        m->kern.matmul[MS_Q8_0X4] = m->kern.matmul_exact[MS_Q8_0X4];
        m->kern.matmul[MS_Q4_0X4] = m->kern.matmul_exact[MS_Q4_0X4];
    }
}

int ms_model_set_activations(ms_model *m, int mode, ms_err *err) {
    if (mode < 0 || mode >= MS_ACT__COUNT)
        return ms_fail(err, MS_E_ARG, "activation mode %d: expected 0 (plain), 1 (int8) or 2 (exact)", mode);
    int started = 0;
    for (int k = 0; k < m->n_tensors; k++) started |= m->tensors[k].prepared;
    if (started && mode != m->activations)
        return ms_fail(err, MS_E_STATE, "activation mode %d: the weights are already laid out for mode %d", mode, m->activations);
    m->activations = mode;
    init_kernels(m, m->kern.level);
    return MS_OK;
}

int ms_model_set_kernels(ms_model *m, int level, ms_err *err) {
    if (level < MS_ISA_GENERIC || level > MS_ISA_RELAXED_U8)
        return ms_fail(err, MS_E_ARG, "kernel level %d: expected 0 (generic), 1 (SIMD128), 2 (relaxed) or 3 (relaxedu8)", level);
    init_kernels(m, level);
    return MS_OK;
}

/* Deterministic inputs in [-1, 1) for the timing below. */
static void fill_inputs(float *x, size_t n) {
    uint32_t s = 2463534242u;
    for (size_t i = 0; i < n; i++) { s ^= s << 13; s ^= s >> 17; s ^= s << 5; x[i] = (float)s / 2147483648.0f - 1.0f; }
}

int ms_model_time_kernels(ms_model *m, int level, int T, int reps, ms_kernel_timing *out, ms_err *err) {
    memset(out, 0, sizeof *out);
    out->tensor = -1;
    if (T < 1 || T > 64 || reps < 1 || reps > 100) return ms_fail(err, MS_E_ARG, "kernel timing: %d tokens, %d runs (1..64, 1..100)", T, reps);
    /* of the interleaved layout that holds more of the model's laid-out weights (q8_0x4 or q4_0x4:
     * a model with q4 layers and a q8 head is timed on q4), the largest matrix of at most 4M
     * weights, its first 1024 rows at most */
    double held[2] = {0, 0};
    for (int i = 0; i < m->n_tensors; i++) {
        const ms_tensor *c = &m->tensors[i];
        if (c->data && (c->dtype == MS_Q8_0X4 || c->dtype == MS_Q4_0X4)) held[c->dtype == MS_Q4_0X4] += (double)c->rows * c->cols;
    }
    const int dtype = held[1] > held[0] ? MS_Q4_0X4 : MS_Q8_0X4;
    const ms_tensor *t = NULL;
    for (int i = 0; i < m->n_tensors; i++) {
        const ms_tensor *c = &m->tensors[i];
        if (c->dtype == dtype && c->data && c->rows * c->cols <= (4 << 20) && (!t || c->rows * c->cols > t->rows * t->cols)) t = c;
    }
    if (!t) return MS_OK; /* no such matrix: nothing to time (out->tensor < 0) */
    const ms_gemm_kernel *k[2] = {NULL, NULL}; /* SIMD128, and the one the level runs (its highest up to it) */
    for (int i = 0; i < ms_n_gemm_kernels; i++) {
        const ms_gemm_kernel *g = &ms_gemm_kernels[i];
        if (g->dtype != t->dtype || strcmp(g->acts, "i8")) continue;
        if (g->simd == MS_ISA_SIMD128) k[0] = g;
        if (g->simd > MS_ISA_SIMD128 && g->simd <= level && (!k[1] || g->simd > k[1]->simd)) k[1] = g;
    }
    if (!k[0] || !k[1]) return ms_fail(err, MS_E_ARG, "kernel timing: this build has no %s kernel of level %d beside SIMD128", ms_dtype_name(t->dtype), level);
    const size_t rows = t->rows < 1024 ? (size_t)t->rows : 1024, cols = (size_t)t->cols;
    float *x = malloc((size_t)T * cols * sizeof(float)), *y = malloc((size_t)T * rows * sizeof(float));
    if (!x || !y) { free(x); free(y); return ms_fail(err, MS_E_MEMORY, "kernel timing: out of memory"); }
    fill_inputs(x, (size_t)T * cols);
    /* untimed rounds first, for 40 ms at least (at most 400): a wasm engine compiles a hot
     * function again with its optimizing tier in the background, and both must run that code (a
     * fresh model has run neither; with 20 ms, one timing in Chromium caught a kernel still in its
     * first tier) */
    const double w0 = ms_now_ms();
    int warm = 0;
    while (warm < 400 && ms_now_ms() - w0 < 40) {
        for (int i = 0; i < 2; i++) k[i]->fn(t->data, rows, cols, x, T, y);
        warm++;
    }
    /* each sample at least ~2 ms of calls, so a browser's coarse clock (5-100 us) does not decide */
    const double per = (ms_now_ms() - w0) / (2.0 * warm);
    const int n = per >= 2 ? 1 : per > 0 ? (int)(2 / per) + 1 : 100;
    double best[2] = {1e300, 1e300};
    for (int r = 0; r < reps; r++)
        for (int i = 0; i < 2; i++) {
            const double t0 = ms_now_ms();
            for (int c = 0; c < n; c++) k[i]->fn(t->data, rows, cols, x, T, y);
            const double dt = (ms_now_ms() - t0) / n;
            if (dt < best[i]) best[i] = dt;
        }
    free(x);
    free(y);
    out->tensor = (int)(t - m->tensors);
    out->rows = (int)rows;
    out->cols = (int)cols;
    out->simd128_ms = best[0];
    out->level_ms = best[1];
    return MS_OK;
}

/* one repack job: part p of n lays out its share of the 4-row groups with its own tmp rows and
 * notes the first block with a non-finite scale it met (SIZE_MAX: none) */
typedef struct { ms_tensor *t; unsigned char *tmp; size_t tmp_bytes; size_t bad[MS_POOL_MAX]; } repack_job;

static void repack_part(void *ctx, int part, int n) {
    repack_job *j = ctx;
    const ms_tensor *t = j->t;
    const size_t cols = (size_t)t->cols, groups = (size_t)t->rows / 4;
    const size_t g0 = groups * (size_t)part / (size_t)n, g1 = groups * (size_t)(part + 1) / (size_t)n;
    j->bad[part] = SIZE_MAX;
    if (g1 <= g0) return;
    void *rows = (char *)t->data + ms_dtype_bytes(t->dtype, 4 * g0, cols), *tmp = j->tmp + (size_t)part * j->tmp_bytes;
    const size_t bad = t->dtype == MS_Q8_0 ? ms_repack_q8_0x4(rows, 4 * (g1 - g0), cols, tmp) : ms_repack_q4_0x4(rows, 4 * (g1 - g0), cols, tmp);
    if (bad != SIZE_MAX) j->bad[part] = 4 * g0 * (cols / MS_QK) + bad;
}

/* The Gated DeltaNet convolution weight is stored [conv][1][K] (a channel's taps together); the
 * layer reads it tap-major, [K][conv], so its loop runs along the channels. Done in place, once. */
static int is_gdn_conv(const ms_model *m, const ms_tensor *t) {
    for (int l = 0; l < m->cfg.n_layers; l++)
        if (m->layers[l].conv == t) return 1;
    return 0;
}

static int transpose_taps(ms_tensor *t, ms_err *err) {
    const size_t ch = (size_t)t->rows, K = (size_t)t->cols;
    float *w = t->data, *tmp = malloc(ch * K * sizeof(float));
    if (!tmp) return ms_fail(err, MS_E_MEMORY, "cannot allocate %zu bytes to lay out %s", ch * K * sizeof(float), t->name);
    for (size_t c = 0; c < ch; c++)
        for (size_t i = 0; i < K; i++) tmp[i * ch + c] = w[c * K + i];
    memcpy(w, tmp, ch * K * sizeof(float));
    free(tmp);
    return MS_OK;
}

/* a tensor of this preparation: not done yet, and in the shard asked for (shard < 0: any) */
static int to_prepare(const ms_tensor *t, int shard) { return !t->prepared && (shard < 0 || t->shard == shard); }

/* Check the tensors of one shard (or of all, shard < 0) and lay out those the int8 kernels read
 * in 4-row groups. With a pool, each matrix's groups are split between its threads. */
int ms_model_prepare(ms_model *m, int shard, ms_err *err) {
    if (!m->allocated) return ms_fail(err, MS_E_STATE, "model has no tensor buffers");
    if (shard >= m->n_shards) return ms_fail(err, MS_E_ARG, "shard %d: the model has %d", shard, m->n_shards);
    size_t tmp_bytes = 0;
    for (int k = 0; k < m->n_tensors; k++) {
        const ms_tensor *t = &m->tensors[k];
        if (!to_prepare(t, shard)) continue;
        if (!repackable(m, t)) { /* the repack checks its scales itself, in the rows it has in hand */
            int rc = check_finite(t, err);
            if (rc) return rc;
        } else if (4 * t->bytes / (size_t)t->rows > tmp_bytes) tmp_bytes = 4 * t->bytes / (size_t)t->rows;
    }
    const int parts = m->pool ? ms_pool_threads(m->pool) : 1;
    unsigned char *tmp = NULL;
    if (tmp_bytes && !(tmp = malloc((size_t)parts * tmp_bytes)))
        return ms_fail(err, MS_E_MEMORY, "cannot allocate %zu bytes to repack weights", (size_t)parts * tmp_bytes);
    for (int k = 0; k < m->n_tensors; k++) {
        ms_tensor *t = &m->tensors[k];
        if (!to_prepare(t, shard)) continue;
        if (repackable(m, t)) {
            repack_job j = {t, tmp, tmp_bytes, {0}};
            const int n = parts > 1 && t->rows >= 64 ? parts : 1;
            if (n > 1) ms_pool_run(m->pool, repack_part, &j);
            else repack_part(&j, 0, 1);
            size_t bad = SIZE_MAX;
            for (int p = 0; p < n; p++) if (j.bad[p] < bad) bad = j.bad[p];
            if (bad != SIZE_MAX) {
                free(tmp);
                return ms_fail(err, MS_E_TENSOR, "tensor %s: block %zu has a non-finite scale", t->name, bad);
            }
            t->dtype = t->dtype == MS_Q8_0 ? MS_Q8_0X4 : MS_Q4_0X4;
        } else if (is_gdn_conv(m, t)) {
            int rc = transpose_taps(t, err);
            if (rc) { free(tmp); return rc; }
        }
        t->prepared = 1;
    }
    free(tmp);
    return MS_OK;
}

int ms_model_finalize(ms_model *m, ms_err *err) {
    int rc = ms_model_prepare(m, -1, err);
    if (rc) return rc;
    m->finalized = 1;
    return MS_OK;
}

ms_model *ms_model_open(const char *manifest, size_t len, int allocate, int simd, ms_err *err) {
    ms_model *m = ms_model_from_manifest(manifest, len, allocate, err);
    if (m) ms_kernels_init(&m->kern, simd);
    return m;
}

int ms_model_finish_shard(ms_model *m, int s, int activations, ms_err *err) {
    if (s < 0) return ms_fail(err, MS_E_ARG, "shard %d: not a shard index", s);
    if (m->finalized) return ms_fail(err, MS_E_STATE, "model is already finished");
    if (ms_model_set_activations(m, activations, err)) return err->code;
    return ms_model_prepare(m, s, err);
}

int ms_model_finish(ms_model *m, int activations, ms_err *err) {
    if (ms_model_set_activations(m, activations, err)) return err->code;
    return ms_model_finalize(m, err);
}

void ms_tensors_count(const ms_tensor *ts, int n_tensors, ms_param_counts *pc) {
    memset(pc, 0, sizeof *pc);
    for (int k = 0; k < n_tensors; k++) {
        const ms_tensor *t = &ts[k];
        int64_t n = t->rows * t->cols;
        pc->total += n;
        if (strcmp(t->name, "embed_tokens") == 0) pc->embedding += n;
        else if (strcmp(t->name, "lm_head") == 0) pc->head += n;
        else if (strstr(t->name, ".mlp.")) pc->mlp += n;
        else if (strstr(t->name, "layernorm") || strcmp(t->name, "norm") == 0) pc->norms += n;
        else pc->mixer += n;
    }
}

void ms_model_count(const ms_model *m, ms_param_counts *pc) { ms_tensors_count(m->tensors, m->n_tensors, pc); }

void ms_tensor_row_f32(const ms_tensor *t, int64_t row, float *out) {
    size_t cols = (size_t)t->cols, r = (size_t)row;
    switch (t->dtype) {
    case MS_F32: memcpy(out, (const float *)t->data + r * cols, cols * sizeof(float)); break;
    case MS_F16: for (size_t i = 0; i < cols; i++) out[i] = ms_f16_to_f32(((const uint16_t *)t->data)[r * cols + i]); break;
    case MS_BF16: for (size_t i = 0; i < cols; i++) out[i] = ms_bf16_to_f32(((const uint16_t *)t->data)[r * cols + i]); break;
    case MS_Q8_0: ms_dequantize_row_q8_0((const ms_block_q8_0 *)t->data + r * (cols / MS_QK), out, cols); break;
    case MS_Q4_0: ms_dequantize_row_q4_0((const ms_block_q4_0 *)t->data + r * (cols / MS_QK), out, cols); break;
    case MS_Q8_0X4: ms_dequantize_row_q8_0x4((const ms_block_q8_0x4 *)t->data, r, out, cols); break;
    case MS_Q4_0X4: ms_dequantize_row_q4_0x4((const ms_block_q4_0x4 *)t->data, r, out, cols); break;
    default: memset(out, 0, cols * sizeof(float));
    }
}

/* Segments of shard s: for each tensor in it, [offset, bytes, heap pointer] as doubles, sorted by
 * offset. out must hold 3 * n_tensors doubles. Returns the count. */
int ms_model_shard_layout(const ms_model *m, int s, double *out) {
    int n = 0;
    for (int i = 0; i < m->n_tensors; i++) {
        const ms_tensor *t = &m->tensors[i];
        if (t->shard != s) continue;
        int p = n++;
        while (p > 0 && out[3 * (p - 1)] > (double)t->offset) {
            memcpy(out + 3 * p, out + 3 * (p - 1), 3 * sizeof(double));
            p--;
        }
        out[3 * p] = (double)t->offset;
        out[3 * p + 1] = (double)t->bytes;
        out[3 * p + 2] = (double)(uintptr_t)t->data;
    }
    return n;
}

/* Where element (row, col) of a matrix lives: its block (quantized) or element index, and for the
 * interleaved layouts the row within the group of four. */
typedef struct { size_t block, at; int r, c; } elem_pos;
static elem_pos position_of(const ms_tensor *t, int64_t row, int64_t col) {
    const size_t cols = (size_t)t->cols, nb = cols / MS_QK;
    elem_pos p = {0, 0, 0, (int)(col % MS_QK)};
    switch (t->dtype) {
    case MS_Q8_0: case MS_Q4_0: p.block = (size_t)row * nb + (size_t)col / MS_QK; break;
    case MS_Q8_0X4: case MS_Q4_0X4: p.block = (size_t)(row / 4) * nb + (size_t)col / MS_QK; p.r = (int)(row % 4); break;
    default: p.at = (size_t)row * cols + (size_t)col;
    }
    return p;
}

float ms_tensor_get(const ms_tensor *t, int64_t row, int64_t col) {
    const elem_pos p = position_of(t, row, col);
    switch (t->dtype) {
    case MS_F32: return ((const float *)t->data)[p.at];
    case MS_F16: return ms_f16_to_f32(((const uint16_t *)t->data)[p.at]);
    case MS_BF16: return ms_bf16_to_f32(((const uint16_t *)t->data)[p.at]);
    case MS_Q8_0: { const ms_block_q8_0 *b = (const ms_block_q8_0 *)t->data + p.block; return b->d * (float)b->q[p.c]; }
    case MS_Q4_0: {
        const ms_block_q4_0 *b = (const ms_block_q4_0 *)t->data + p.block;
        const int q = p.c < MS_QK / 2 ? (b->q[p.c] & 15) : (b->q[p.c - MS_QK / 2] >> 4);
        return b->d * (float)(q - 8);
    }
    case MS_Q8_0X4: { const ms_block_q8_0x4 *b = (const ms_block_q8_0x4 *)t->data + p.block; return b->d[p.r] * (float)ms_q8x4_code(b, p.r, p.c); }
    case MS_Q4_0X4: { const ms_block_q4_0x4 *b = (const ms_block_q4_0x4 *)t->data + p.block; return b->d[p.r] * (float)ms_q4x4_code(b, p.r, p.c); }
    default: return 0.0f;
    }
}

uint32_t ms_tensor_zero(ms_tensor *t, int64_t row, int64_t col) {
    const elem_pos p = position_of(t, row, col);
    uint32_t saved = 0;
    switch (t->dtype) {
    case MS_F32: { float *w = (float *)t->data + p.at; memcpy(&saved, w, 4); *w = 0.0f; break; }
    case MS_F16: case MS_BF16: { uint16_t *w = (uint16_t *)t->data + p.at; saved = *w; *w = 0; break; } /* +0 in both */
    case MS_Q8_0: { int8_t *q = &((ms_block_q8_0 *)t->data + p.block)->q[p.c]; saved = (uint8_t)*q; *q = 0; break; }
    case MS_Q4_0: { /* nibble 8 is code 0 */
        uint8_t *q = &((ms_block_q4_0 *)t->data + p.block)->q[p.c % (MS_QK / 2)];
        const int hi = p.c >= MS_QK / 2;
        saved = hi ? *q >> 4 : *q & 15;
        *q = (uint8_t)(hi ? (*q & 15) | (8 << 4) : (*q & 0xf0) | 8);
        break;
    }
    case MS_Q8_0X4: { int8_t *q = &((ms_block_q8_0x4 *)t->data + p.block)->q[ms_q8x4_at(p.r, p.c)]; saved = (uint8_t)*q; *q = 0; break; }
    case MS_Q4_0X4: { /* nibble 0 is code 0 in this layout (quant.h, ms_q4x4_code) */
        uint8_t *q = &((ms_block_q4_0x4 *)t->data + p.block)->q[ms_q4x4_at(p.r, p.c)];
        const int hi = ms_q4x4_nibble(p.c);
        saved = hi ? *q >> 4 : *q & 15;
        *q = (uint8_t)(hi ? (*q & 15) : (*q & 0xf0));
        break;
    }
    default: break;
    }
    return saved;
}

void ms_tensor_restore(ms_tensor *t, int64_t row, int64_t col, uint32_t saved) {
    const elem_pos p = position_of(t, row, col);
    switch (t->dtype) {
    case MS_F32: memcpy((float *)t->data + p.at, &saved, 4); break;
    case MS_F16: case MS_BF16: ((uint16_t *)t->data)[p.at] = (uint16_t)saved; break;
    case MS_Q8_0: ((ms_block_q8_0 *)t->data + p.block)->q[p.c] = (int8_t)(uint8_t)saved; break;
    case MS_Q4_0: {
        uint8_t *q = &((ms_block_q4_0 *)t->data + p.block)->q[p.c % (MS_QK / 2)];
        *q = (uint8_t)(p.c >= MS_QK / 2 ? (*q & 15) | ((saved & 15) << 4) : (*q & 0xf0) | (saved & 15));
        break;
    }
    case MS_Q8_0X4: ((ms_block_q8_0x4 *)t->data + p.block)->q[ms_q8x4_at(p.r, p.c)] = (int8_t)(uint8_t)saved; break;
    case MS_Q4_0X4: {
        uint8_t *q = &((ms_block_q4_0x4 *)t->data + p.block)->q[ms_q4x4_at(p.r, p.c)];
        *q = (uint8_t)(ms_q4x4_nibble(p.c) ? (*q & 15) | ((saved & 15) << 4) : (*q & 0xf0) | (saved & 15));
        break;
    }
    default: break;
    }
}

int ms_model_weight_at(ms_model *m, const char *name, int64_t row, int64_t col, ms_tensor **out, ms_err *err) {
    if (!m->finalized) return ms_fail(err, MS_E_STATE, "model is not fully loaded");
    ms_tensor *t = ms_model_find(m, name);
    if (!t) return ms_fail(err, MS_E_ARG, "weight \"%.80s\": no such tensor", name);
    if (!t->is_matrix || is_gdn_conv(m, t)) return ms_fail(err, MS_E_ARG, "weight \"%.80s\": not a matrix that can be edited element by element", name);
    if (row < 0 || row >= t->rows) return ms_fail(err, MS_E_ARG, "weight \"%.80s\": row %lld is not in 0..%lld", name, (long long)row, (long long)t->rows - 1);
    if (col < 0 || col >= t->cols) return ms_fail(err, MS_E_ARG, "weight \"%.80s\": column %lld is not in 0..%lld", name, (long long)col, (long long)t->cols - 1);
    *out = t;
    return MS_OK;
}
