/* Hugging Face model folders -> conversion plan. Name mapping:
 *   qwen3_5: "model.language_model.X(.weight)" -> X; "lm_head.weight" -> lm_head;
 *            model.visual.* and mtp.* are skipped (vision tower, multi-token-prediction head)
 *   gemma3:  "model.language_model.X" or "language_model.model.X" or "model.X" -> X; the vision
 *            tower and multi-modal projector are skipped
 *   llama/qwen2/qwen3: "model.X(.weight)" -> X; "lm_head.weight" -> lm_head
 * A stored lm_head makes the head untied, whatever the config says; q_norm/k_norm tensors in a
 * llama-family checkpoint switch on per-head q/k norm. Everything the family needs must be present
 * with the right shape; any other text tensor is an error (except rotary_emb.inv_freq buffers). */
#include "hf_checkpoint.h"
#include "hf_config.h"
#include "safetensors.h"
#include "../model/model.h"
#include "../kernels/dtype.h"
#include "../util/json.h"
#include "../tokenizer/bpe.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *read_all(const ms_io *io, const char *path, size_t *len, size_t limit, int code, ms_err *err) {
    int h = io->open(io->ctx, path, 'r');
    if (h < 0) { ms_fail(err, code, "%s: cannot open", path); return NULL; }
    int64_t n = io->size(io->ctx, h);
    char *b = (n >= 0 && (uint64_t)n <= limit) ? malloc((size_t)n + 1) : NULL;
    if (!b || io->read(io->ctx, h, 0, b, (size_t)n)) {
        free(b);
        io->close(io->ctx, h);
        ms_fail(err, code, "%s: cannot read (or larger than %zu bytes)", path, limit);
        return NULL;
    }
    io->close(io->ctx, h);
    b[n] = 0;
    *len = (size_t)n;
    return b;
}

static int exists(const ms_io *io, const char *path) {
    int h = io->open(io->ctx, path, 'r');
    if (h < 0) return 0;
    io->close(io->ctx, h);
    return 1;
}

typedef struct { char name[160]; int file; const ms_st_tensor *t; } src_entry;

static void fmt_shape(char *out, size_t cap, const int64_t *shape, int ndim) {
    size_t o = (size_t)snprintf(out, cap, "[");
    for (int d = 0; d < ndim && o < cap; d++) o += (size_t)snprintf(out + o, cap - o, "%s%lld", d ? ", " : "", (long long)shape[d]);
    if (o < cap) snprintf(out + o, cap - o, "]");
}

/* HF name -> our name; returns 0 to skip, -1 if it is not a text tensor we know */
static int map_name(int family, const char *hf, char *out, size_t cap) {
    const char *rest = NULL;
    if (!strcmp(hf, "lm_head.weight")) { snprintf(out, cap, "lm_head"); return 1; }
    if (family == MS_FAMILY_QWEN3_5) {
        if (!strncmp(hf, "model.visual.", 13) || !strncmp(hf, "mtp.", 4)) return 0;
        if (!strncmp(hf, "model.language_model.", 21)) rest = hf + 21;
        else if (!strncmp(hf, "model.", 6)) rest = hf + 6; /* text-only Qwen3_5ForCausalLM layout */
    } else if (family == MS_FAMILY_GEMMA3) {
        /* Gemma3ForConditionalGeneration: model.language_model.X (transformers >= 4.52) or
         * language_model.model.X (older files); the vision tower and projector are skipped */
        if (!strncmp(hf, "model.vision_tower.", 19) || !strncmp(hf, "vision_tower.", 13) ||
            !strncmp(hf, "model.multi_modal_projector.", 28) || !strncmp(hf, "multi_modal_projector.", 22)) return 0;
        if (!strcmp(hf, "language_model.lm_head.weight")) { snprintf(out, cap, "lm_head"); return 1; }
        if (!strncmp(hf, "model.language_model.", 21)) rest = hf + 21;
        else if (!strncmp(hf, "language_model.model.", 21)) rest = hf + 21;
        else if (!strncmp(hf, "model.", 6)) rest = hf + 6; /* Gemma3ForCausalLM */
    } else if (!strncmp(hf, "model.", 6)) rest = hf + 6;
    if (!rest) return -1;
    if (strstr(rest, "rotary_emb.inv_freq")) return 0;
    size_t l = strlen(rest);
    if (l > 7 && !strcmp(rest + l - 7, ".weight")) l -= 7;
    if (l >= cap) return -1;
    memcpy(out, rest, l);
    out[l] = 0;
    return 1;
}

static void read_tokenizer_facts(ms_conv_plan *p, const ms_io *io, const char *dir, const ms_config *c, int bos_cfg, const ms_json *cfgj) {
    char path[700];
    size_t len;
    ms_err e = {0};
    p->tok_vocab = c->vocab;
    p->tok_bos = bos_cfg;
    p->n_tok_eos = 0;
    /* real vocabulary = 1 + the largest id in tokenizer.json (model.vocab and added_tokens) */
    snprintf(path, sizeof path, "%s/tokenizer.json", dir);
    if (exists(io, path)) {
        char *t = read_all(io, path, &len, 256u << 20, MS_E_TOKEN, &e);
        ms_json j;
        char jerr[160];
        if (t && !ms_json_parse(&j, t, len, jerr, sizeof jerr)) {
            int64_t mx = -1, v;
            int32_t voc = ms_json_get(&j, ms_json_get(&j, 0, "model"), "vocab");
            if (voc >= 0 && j.nodes[voc].type == MS_JOBJ)
                for (int32_t k = j.nodes[voc].child; k >= 0; k = j.nodes[k].next)
                    if (ms_json_int(&j, k, 0, c->vocab - 1, &v) && v > mx) mx = v;
            int32_t added = ms_json_get(&j, 0, "added_tokens");
            if (added >= 0 && j.nodes[added].type == MS_JARR)
                for (int32_t k = j.nodes[added].child; k >= 0; k = j.nodes[k].next)
                    if (ms_json_int(&j, ms_json_get(&j, k, "id"), 0, c->vocab - 1, &v) && v > mx) mx = v;
            if (mx >= 0) p->tok_vocab = (int)mx + 1;
            ms_json_free(&j);
        }
        free(t);
    }
    /* stop tokens: generation_config.json eos_token_id (int or list), else config.json's */
    snprintf(path, sizeof path, "%s/generation_config.json", dir);
    ms_json g;
    int have_g = 0;
    char *gt = exists(io, path) ? read_all(io, path, &len, 1u << 20, MS_E_CONFIG, &e) : NULL;
    char jerr[160];
    if (gt && !ms_json_parse(&g, gt, len, jerr, sizeof jerr)) have_g = 1;
    const ms_json *srcs[2] = {have_g ? &g : NULL, cfgj};
    for (int s = 0; s < 2 && !p->n_tok_eos; s++) {
        if (!srcs[s]) continue;
        const ms_json *j = srcs[s];
        int32_t n = ms_json_get(j, 0, "eos_token_id");
        if (n < 0) n = ms_json_get(j, ms_json_get(j, 0, "text_config"), "eos_token_id");
        int64_t v;
        if (n >= 0 && j->nodes[n].type == MS_JARR) {
            for (int32_t k = j->nodes[n].child; k >= 0 && p->n_tok_eos < 8; k = j->nodes[k].next)
                if (ms_json_int(j, k, 0, p->tok_vocab - 1, &v)) p->tok_eos[p->n_tok_eos++] = (int)v;
        } else if (ms_json_int(j, n, 0, p->tok_vocab - 1, &v)) p->tok_eos[p->n_tok_eos++] = (int)v;
    }
    if (have_g) ms_json_free(&g);
    free(gt);
    snprintf(p->tok_kind, sizeof p->tok_kind, "none");
}

/* tokenizer.json -> tokenizer.msbpe (bpe-bytelevel), when the folder has one */
static int import_tokenizer(ms_conv_plan *p, const ms_io *io, const char *dir, int rows, ms_err *err) {
    char path[700];
    size_t tl = 0, cl = 0;
    snprintf(path, sizeof path, "%s/tokenizer.json", dir);
    if (!exists(io, path)) return MS_OK;
    char *tj = read_all(io, path, &tl, 256u << 20, MS_E_TOKEN, err);
    if (!tj) return MS_E_TOKEN;
    snprintf(path, sizeof path, "%s/tokenizer_config.json", dir);
    char *cj = exists(io, path) ? read_all(io, path, &cl, 16u << 20, MS_E_TOKEN, err) : NULL;
    /* the chat template: chat_template.jinja (newer checkpoints) or tokenizer_config.json's */
    size_t jl = 0;
    snprintf(path, sizeof path, "%s/chat_template.jinja", dir);
    char *jt = exists(io, path) ? read_all(io, path, &jl, 1u << 20, MS_E_TOKEN, err) : NULL;
    int bos = -1;
    int rc = exists(io, path) && !jt ? MS_E_TOKEN : MS_OK;
    if (!rc) rc = ms_bpe_import(tj, tl, cj, cl, jt, rows, &p->tok_blob, &p->tok_blob_len, &bos, err);
    if (!rc) rc = ms_chat_info_json(cj, cl, jt, &p->tok_chat_json, err);
    free(tj);
    free(cj);
    free(jt);
    if (rc) return rc;
    snprintf(p->tok_kind, sizeof p->tok_kind, "bpe-bytelevel");
    snprintf(p->tok_out, sizeof p->tok_out, "tokenizer.msbpe");
    p->tok_bos = bos; /* only a BOS the tokenizer itself adds (add_bos_token / post-processor) */
    return MS_OK;
}

/* The safetensors files: the index's files (each once), or model.safetensors. */
static int list_source_files(ms_conv_plan *p, const ms_io *io, const char *dir, ms_err *err) {
    char path[700], jerr[160];
    size_t len;
    snprintf(path, sizeof path, "%s/model.safetensors.index.json", dir);
    if (!exists(io, path)) {
        snprintf(p->src_files[0], sizeof p->src_files[0], "%s/model.safetensors", dir);
        p->n_src_files = 1;
        return MS_OK;
    }
    char *idx_text = read_all(io, path, &len, 64u << 20, MS_E_CHECKPOINT, err);
    if (!idx_text) return MS_E_CHECKPOINT;
    ms_json ij = {0};
    int rc = MS_OK;
    if (ms_json_parse(&ij, idx_text, len, jerr, sizeof jerr)) { rc = ms_fail(err, MS_E_CHECKPOINT, "model.safetensors.index.json: %s", jerr); goto done; }
    int32_t wm = ms_json_get(&ij, 0, "weight_map");
    if (wm < 0 || ij.nodes[wm].type != MS_JOBJ) { rc = ms_fail(err, MS_E_CHECKPOINT, "model.safetensors.index.json: weight_map missing"); goto done; }
    for (int32_t k = ij.nodes[wm].child; k >= 0; k = ij.nodes[k].next) {
        const char *f = ms_json_str(&ij, k);
        if (!f || strchr(f, '/') || strchr(f, '\\') || !strcmp(f, "..") || strlen(f) > 200) { rc = ms_fail(err, MS_E_CHECKPOINT, "model.safetensors.index.json: bad file name for %s", ms_json_key(&ij, k)); goto done; }
        int known = 0;
        for (int q = 0; q < p->n_src_files; q++) if (!strcmp(strrchr(p->src_files[q], '/') + 1, f)) known = 1;
        if (known) continue;
        if (p->n_src_files == 64) { rc = ms_fail(err, MS_E_CHECKPOINT, "more than 64 safetensors files"); goto done; }
        snprintf(p->src_files[p->n_src_files++], sizeof p->src_files[0], "%s/%s", dir, f);
    }
done:
    ms_json_free(&ij);
    free(idx_text);
    return rc;
}

/* One safetensors file's header: its tensors' names, dtypes, shapes and byte ranges. */
static int read_header(const ms_io *io, const char *file, ms_st_file *out, ms_err *err) {
    const char *what = strrchr(file, '/') + 1;
    int h = io->open(io->ctx, file, 'r');
    if (h < 0) return ms_fail(err, MS_E_CHECKPOINT, "%s: cannot open", what);
    uint8_t b8[8];
    int64_t fsz = io->size(io->ctx, h);
    uint64_t hl = 0;
    char *hdr = NULL;
    int rc = MS_OK;
    if (fsz < 8 || io->read(io->ctx, h, 0, b8, 8)) rc = ms_fail(err, MS_E_CHECKPOINT, "%s: too short for a safetensors file", what);
    if (!rc) rc = ms_st_parse_len(b8, (uint64_t)fsz, &hl, what, err);
    if (!rc && !(hdr = malloc(hl + 1))) rc = ms_fail(err, MS_E_MEMORY, "out of memory");
    if (!rc && io->read(io->ctx, h, 8, hdr, hl)) rc = ms_fail(err, MS_E_CHECKPOINT, "%s: cannot read the header", what);
    if (!rc) rc = ms_st_parse(hdr, hl, (uint64_t)fsz, out, what, err);
    free(hdr);
    io->close(io->ctx, h);
    return rc;
}

/* The checkpoint's text tensors under our names (vision, MTP and rotary buffers skipped); a stored
 * lm_head unties the head, q_norm tensors switch a llama-family model's q/k norm on. */
static int map_tensors(ms_config *c, const ms_st_file *files, int n_files, src_entry **out, int *n_out, ms_err *err) {
    int total = 0, n = 0, has_lm_head = 0, has_qnorm = 0;
    for (int f = 0; f < n_files; f++) total += files[f].n;
    src_entry *ents = calloc((size_t)(total ? total : 1), sizeof *ents);
    if (!ents) return ms_fail(err, MS_E_MEMORY, "out of memory");
    for (int f = 0; f < n_files; f++)
        for (int k = 0; k < files[f].n; k++) {
            const ms_st_tensor *t = &files[f].t[k];
            char nm[160];
            int m = map_name(c->family, t->name, nm, sizeof nm);
            if (m == 0) continue;
            if (m < 0) { free(ents); return ms_fail(err, MS_E_TENSOR, "tensor %s: not a tensor of a %s text model", t->name, ms_family_name(c->family)); }
            for (int q = 0; q < n; q++)
                if (!strcmp(ents[q].name, nm)) { free(ents); return ms_fail(err, MS_E_TENSOR, "tensor %s: stored twice", t->name); }
            snprintf(ents[n].name, sizeof ents[n].name, "%s", nm);
            ents[n].file = f;
            ents[n].t = t;
            n++;
            if (!strcmp(nm, "lm_head")) has_lm_head = 1;
            if (strstr(nm, "self_attn.q_norm")) has_qnorm = 1;
        }
    if (has_lm_head) c->tied = 0;
    else if (!c->tied) { free(ents); return ms_fail(err, MS_E_TENSOR, "tensor lm_head.weight: missing (config says the head is not tied)"); }
    if (c->family == MS_FAMILY_LLAMA && has_qnorm) c->qk_norm = 1;
    *out = ents;
    *n_out = n;
    return MS_OK;
}

/* One plan tensor per tensor the config needs, each found in the checkpoint with its shape; any
 * text tensor left over is an error. */
static int plan_tensors(ms_conv_plan *p, const ms_config *c, const src_entry *ents, int n_ents, ms_err *err) {
    ms_tensor *specs;
    int n_specs, rc = MS_OK;
    if (!ms_model_specs(c, &specs, &n_specs)) return ms_fail(err, MS_E_MEMORY, "out of memory");
    p->t = calloc((size_t)n_specs, sizeof *p->t);
    if (!p->t) { free(specs); return ms_fail(err, MS_E_MEMORY, "out of memory"); }
    p->n = p->cap = n_specs;
    for (int i = 0; i < n_specs && !rc; i++) {
        const ms_tensor *s = &specs[i];
        const src_entry *src = NULL;
        for (int q = 0; q < n_ents && !src; q++) if (!strcmp(ents[q].name, s->name)) src = &ents[q];
        if (!src) { rc = ms_fail(err, MS_E_TENSOR, "tensor %s: missing from the checkpoint", s->name); break; }
        const ms_st_tensor *t = src->t;
        int same = t->ndim == s->ndim;
        for (int d = 0; same && d < s->ndim; d++) same = t->shape[d] == s->shape[d];
        if (!same) {
            char a[96], b2[96];
            fmt_shape(a, sizeof a, t->shape, t->ndim);
            fmt_shape(b2, sizeof b2, s->shape, s->ndim);
            rc = ms_fail(err, MS_E_TENSOR, "tensor %s: shape %s in the checkpoint, the config needs %s", t->name, a, b2);
            break;
        }
        if (t->dtype < 0) { rc = ms_fail(err, MS_E_CHECKPOINT, "tensor %s: dtype %s is not supported (F32, F16, BF16)", t->name, t->dtype_name); break; }
        ms_conv_tensor *o = &p->t[i];
        snprintf(o->name, sizeof o->name, "%s", s->name);
        o->ndim = s->ndim;
        memcpy(o->shape, s->shape, sizeof o->shape);
        o->is_matrix = s->is_matrix;
        o->src_file = src->file;
        o->src_dtype = t->dtype;
        o->src_off = t->offset;
    }
    for (int q = 0; q < n_ents && !rc; q++) {
        int used = 0;
        for (int i = 0; i < n_specs && !used; i++) used = !strcmp(ents[q].name, specs[i].name);
        if (!used) rc = ms_fail(err, MS_E_TENSOR, "tensor %s: not part of a %s model with this config", ents[q].t->name, ms_family_name(c->family));
    }
    free(specs);
    return rc;
}

int ms_plan_hf(ms_conv_plan *p, const ms_io *io, const char *dir, ms_err *err) {
    memset(p, 0, sizeof *p);
    char path[700], jerr[160];
    size_t len;
    int rc = MS_OK, n_files = 0, n_ents = 0;
    ms_st_file files[64];
    src_entry *ents = NULL;
    ms_json cj = {0};
    ms_config c;
    memset(files, 0, sizeof files);

    snprintf(path, sizeof path, "%s/config.json", dir);
    char *cfg_text = read_all(io, path, &len, 4u << 20, MS_E_CONFIG, err);
    if (!cfg_text) return err ? err->code : MS_E_CONFIG;
    if ((rc = ms_config_from_text(cfg_text, len, &c, err))) {
        /* the reader says "config: …"; here the config is a file, named as such */
        if (err && !strncmp(err->msg, "config: ", 8)) {
            char m[sizeof err->msg];
            snprintf(m, sizeof m, "config.json: %s", err->msg + 8);
            memcpy(err->msg, m, sizeof m);
        }
        goto done;
    }
    if (ms_json_parse(&cj, cfg_text, len, jerr, sizeof jerr)) { rc = ms_fail(err, MS_E_CONFIG, "config.json: %s", jerr); goto done; }
    if ((rc = list_source_files(p, io, dir, err))) goto done;
    for (; n_files < p->n_src_files; n_files++)
        if ((rc = read_header(io, p->src_files[n_files], &files[n_files], err))) goto done;
    if ((rc = map_tensors(&c, files, n_files, &ents, &n_ents, err))) goto done;
    if ((rc = plan_tensors(p, &c, ents, n_ents, err))) goto done;
    snprintf(p->family, sizeof p->family, "%s", ms_family_name(c.family));
    ms_buf b = {0};
    ms_config_to_json(&c, &b);
    if (b.oom) { ms_buf_free(&b); rc = ms_fail(err, MS_E_MEMORY, "out of memory"); goto done; }
    p->config_json = b.p;
    int64_t bos = -1;
    if (!ms_json_int(&cj, ms_json_get(&cj, 0, "bos_token_id"), 0, c.vocab - 1, &bos)) bos = -1;
    read_tokenizer_facts(p, io, dir, &c, (int)bos, &cj);
    if (p->tok_bos >= p->tok_vocab) p->tok_bos = -1;
    rc = import_tokenizer(p, io, dir, c.vocab, err);
done:
    for (int f = 0; f < 64; f++) ms_st_free(&files[f]);
    free(ents);
    free(cfg_text);
    ms_json_free(&cj);
    if (rc) ms_plan_free(p);
    return rc;
}

int ms_convert_hf(const ms_io *io, const char *dir, const ms_conv_opts *o, ms_err *err) {
    ms_conv_plan p;
    int rc = ms_plan_hf(&p, io, dir, err);
    if (rc) { ms_plan_free(&p); return rc; }
    return ms_convert_finish(&p, io, o, err);
}
