#include "convert.h"
#include "../kernels/dtype.h"
#include "../kernels/quant.h"
#include "../tokenizer/tokenizer.h"
#include "../util/json.h"
#include "../util/sha256.h"
#include "../model/model.h"
#include "hf_config.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ALIGN 64
#define BLOCK_BYTES (4u << 20) /* rows are streamed in blocks of about this many source bytes */

void ms_plan_free(ms_conv_plan *p) {
    free(p->t);
    free(p->tok_blob);
    free(p->tok_chat_json);
    free(p->config_json);
    memset(p, 0, sizeof *p);
}

static size_t src_elem(int dt) { return dt == MS_F32 ? 4 : 2; }

int ms_convert_rows(const void *src, int src_dtype, void *dst, int dst_dtype, size_t rows, size_t cols, float *tmp) {
    for (size_t r = 0; r < rows; r++) {
        const uint8_t *s = (const uint8_t *)src + r * cols * src_elem(src_dtype);
        for (size_t i = 0; i < cols; i++) {
            if (src_dtype == MS_F32) memcpy(&tmp[i], s + 4 * i, 4);
            else {
                uint16_t h;
                memcpy(&h, s + 2 * i, 2);
                tmp[i] = src_dtype == MS_F16 ? ms_f16_to_f32(h) : ms_bf16_to_f32(h);
            }
        }
        uint8_t *d = (uint8_t *)dst + ms_dtype_bytes(dst_dtype, r, cols);
        switch (dst_dtype) {
        case MS_F32: memcpy(d, tmp, cols * 4); break;
        case MS_F16: for (size_t i = 0; i < cols; i++) { uint16_t h = ms_f32_to_f16(tmp[i]); memcpy(d + 2 * i, &h, 2); } break;
        case MS_BF16: for (size_t i = 0; i < cols; i++) { uint16_t h = ms_f32_to_bf16(tmp[i]); memcpy(d + 2 * i, &h, 2); } break;
        case MS_Q8_0: ms_quantize_row_q8_0(tmp, (ms_block_q8_0 *)(void *)d, cols); break;
        case MS_Q4_0: ms_quantize_row_q4_0(tmp, (ms_block_q4_0 *)(void *)d, cols); break;
        default: return -1;
        }
    }
    return 0;
}

int ms_plan_layout(ms_conv_plan *p, const ms_conv_opts *o, int *n_shards, ms_err *err) {
    uint64_t limit = o->shard_bytes ? o->shard_bytes : (64u << 20);
    int shard = 0;
    uint64_t pos = 0;
    for (int i = 0; i < p->n; i++) {
        ms_conv_tensor *t = &p->t[i];
        size_t rows = (size_t)t->shape[0], cols = (size_t)(t->ndim > 1 ? t->shape[1] : 1) * (size_t)(t->ndim > 2 ? t->shape[2] : 1);
        int is_embed = !strcmp(t->name, "embed_tokens") || !strcmp(t->name, "lm_head");
        int dt = !t->is_matrix ? MS_F32 : (is_embed && o->embed_dtype >= 0) ? o->embed_dtype : o->dtype;
        /* block types need whole blocks along a row; such tensors keep f16 (q8) / f32 precision */
        if ((dt == MS_Q8_0 || dt == MS_Q4_0) && cols % MS_QK) dt = MS_F32;
        t->dtype = dt;
        t->bytes = ms_dtype_bytes(dt, rows, cols);
        if (!t->bytes) return ms_fail(err, MS_E_TENSOR, "tensor %s: cannot be stored as %s", t->name, ms_dtype_name(dt));
        uint64_t start = (pos + ALIGN - 1) / ALIGN * ALIGN;
        if (pos > 0 && start + t->bytes > limit) { shard++; start = 0; }
        t->shard = shard;
        t->offset = start;
        pos = start + t->bytes;
    }
    *n_shards = shard + 1;
    return MS_OK;
}

void ms_shard_name(char *out, size_t n, int i, int total) {
    snprintf(out, n, "model-%05d-of-%05d.bin", i + 1, total);
}

size_t ms_conv_tensor_cols(const ms_conv_tensor *t) {
    return (size_t)(t->ndim > 1 ? t->shape[1] : 1) * (size_t)(t->ndim > 2 ? t->shape[2] : 1);
}

size_t ms_conv_row_src_bytes(const ms_conv_tensor *t) { return ms_conv_tensor_cols(t) * src_elem(t->src_dtype); }

void ms_plan_shard_sizes(const ms_conv_plan *p, int n_shards, uint64_t *sizes) {
    for (int s = 0; s < n_shards; s++) sizes[s] = 0;
    for (int i = 0; i < p->n; i++)
        if (p->t[i].shard < n_shards && p->t[i].offset + p->t[i].bytes > sizes[p->t[i].shard])
            sizes[p->t[i].shard] = p->t[i].offset + p->t[i].bytes;
}

int ms_convert_block(const ms_conv_tensor *t, const void *src, size_t r0, size_t nr, void *dst, float *tmp, ms_err *err) {
    size_t cols = ms_conv_tensor_cols(t);
    const uint8_t *s = src;
    for (size_t k = 0; k < nr * cols; k++) {
        float v;
        if (t->src_dtype == MS_F32) memcpy(&v, s + 4 * k, 4);
        else { uint16_t h; memcpy(&h, s + 2 * k, 2); v = t->src_dtype == MS_F16 ? ms_f16_to_f32(h) : ms_bf16_to_f32(h); }
        if (!isfinite(v)) return ms_fail(err, MS_E_TENSOR, "tensor %s: source value %zu is not finite", t->name, r0 * cols + k);
    }
    if (ms_convert_rows(src, t->src_dtype, dst, t->dtype, nr, cols, tmp)) return ms_fail(err, MS_E_TENSOR, "tensor %s: cannot be stored as %s", t->name, ms_dtype_name(t->dtype));
    return MS_OK;
}

int ms_plan_tokenizer(const ms_conv_plan *p, const ms_io *io, uint8_t **out, int64_t *len, char hex[65], ms_err *err) {
    *out = NULL;
    *len = 0;
    hex[0] = 0;
    if (!p->tok_kind[0] || !strcmp(p->tok_kind, "none")) return MS_OK;
    uint8_t *tb;
    int64_t n;
    if (p->tok_blob) {
        n = (int64_t)p->tok_blob_len;
        if (!(tb = malloc(p->tok_blob_len + 1))) return ms_fail(err, MS_E_MEMORY, "out of memory");
        memcpy(tb, p->tok_blob, p->tok_blob_len);
    } else {
        int th = io->open(io->ctx, p->tok_src, 'r');
        if (th < 0) return ms_fail(err, MS_E_TOKEN, "%s: cannot open", p->tok_src);
        n = io->size(io->ctx, th);
        tb = n >= 0 && n < (64 << 20) ? malloc((size_t)n + 1) : NULL;
        if (!tb || io->read(io->ctx, th, 0, tb, (size_t)n)) {
            free(tb);
            io->close(io->ctx, th);
            return ms_fail(err, MS_E_TOKEN, "%s: cannot read (or larger than 64 MiB)", p->tok_src);
        }
        io->close(io->ctx, th);
    }
    ms_tokenizer *tk = ms_tokenizer_load(p->tok_kind, tb, (size_t)n, p->tok_vocab, err);
    if (tk && ms_tokenizer_vocab(tk) > p->tok_vocab) {
        ms_fail(err, MS_E_TOKEN, "tokenizer has %d tokens, more than the real vocabulary %d", ms_tokenizer_vocab(tk), p->tok_vocab);
        ms_tokenizer_free(tk);
        tk = NULL;
    }
    if (!tk) { free(tb); return err && err->code ? err->code : MS_E_TOKEN; }
    ms_tokenizer_free(tk);
    ms_sha256 sh;
    uint8_t d[32];
    ms_sha256_init(&sh);
    ms_sha256_update(&sh, tb, (size_t)n);
    ms_sha256_final(&sh, d);
    ms_sha256_hex(d, hex);
    *out = tb;
    *len = n;
    return MS_OK;
}

int ms_plan_manifest(const ms_conv_plan *p, int n_shards, const uint64_t *sizes, const char (*hex)[65],
                     const char *tok_hex, int64_t tok_bytes, ms_buf *man, ms_err *err) {
    ms_buf_printf(man, "{\n  \"format\": \"mlpscope-weights\",\n  \"version\": 1,\n  \"family\": \"%s\",\n  \"config\": %s,\n", p->family, p->config_json);
    if (p->tok_kind[0]) {
        if (!strcmp(p->tok_kind, "none")) ms_buf_printf(man, "  \"tokenizer\": {\"kind\": \"none\", \"vocab_size\": %d, \"bos_token_id\": ", p->tok_vocab);
        else ms_buf_printf(man, "  \"tokenizer\": {\"kind\": \"%s\", \"file\": \"%s\", \"bytes\": %lld, \"sha256\": \"%s\", \"vocab_size\": %d, \"bos_token_id\": ",
                           p->tok_kind, p->tok_out, (long long)tok_bytes, tok_hex, p->tok_vocab);
        if (p->tok_bos >= 0) ms_buf_printf(man, "%d", p->tok_bos); else ms_buf_puts(man, "null");
        ms_buf_puts(man, ", \"eos_token_ids\": [");
        for (int k = 0; k < p->n_tok_eos; k++) ms_buf_printf(man, "%s%d", k ? ", " : "", p->tok_eos[k]);
        ms_buf_puts(man, "]");
        if (p->tok_chat_json) { ms_buf_puts(man, ",\n    \"chat\": "); ms_buf_puts(man, p->tok_chat_json); }
        ms_buf_puts(man, "},\n");
    }
    ms_buf_puts(man, "  \"shards\": [\n");
    for (int s = 0; s < n_shards; s++) {
        char nm[64];
        ms_shard_name(nm, sizeof nm, s, n_shards);
        ms_buf_printf(man, "    {\"file\": \"%s\", \"bytes\": %llu, \"sha256\": \"%s\"}%s\n", nm, (unsigned long long)sizes[s], hex[s], s + 1 < n_shards ? "," : "");
    }
    ms_buf_puts(man, "  ],\n  \"tensors\": [\n");
    for (int i = 0; i < p->n; i++) {
        const ms_conv_tensor *t = &p->t[i];
        ms_buf_printf(man, "    {\"name\": \"%s\", \"dtype\": \"%s\", \"shape\": [", t->name, ms_dtype_name(t->dtype));
        for (int d = 0; d < t->ndim; d++) ms_buf_printf(man, "%s%lld", d ? ", " : "", (long long)t->shape[d]);
        ms_buf_printf(man, "], \"shard\": %d, \"offset\": %llu, \"bytes\": %zu}%s\n", t->shard, (unsigned long long)t->offset, t->bytes, i + 1 < p->n ? "," : "");
    }
    ms_buf_puts(man, "  ]\n}\n");
    return man->oom ? ms_fail(err, MS_E_MEMORY, "out of memory writing the manifest") : MS_OK;
}

/* what the converter wrote, and the memory a 4096-token context will need */
static void log_summary(const ms_conv_plan *p, const ms_io *io, int n_shards) {
    char line[256];
    uint64_t by_dt[MS_DTYPE__COUNT] = {0}, total = 0;
    for (int i = 0; i < p->n; i++) { by_dt[p->t[i].dtype] += p->t[i].bytes; total += p->t[i].bytes; }
    snprintf(line, sizeof line, "wrote %d tensors, %llu bytes in %d shard(s)", p->n, (unsigned long long)total, n_shards);
    io->log(io->ctx, line);
    for (int d = 0; d < MS_DTYPE__COUNT; d++)
        if (by_dt[d]) { snprintf(line, sizeof line, "  %-5s %llu bytes", ms_dtype_name(d), (unsigned long long)by_dt[d]); io->log(io->ctx, line); }
    ms_buf cb = {0};
    ms_buf_printf(&cb, "{\"family\": \"%s\", \"config\": ", p->family);
    ms_buf_puts(&cb, p->config_json);
    ms_buf_puts(&cb, "}");
    ms_config cfg;
    ms_err ce = {0};
    if (!cb.oom && !ms_config_from_text(cb.p, cb.n, &cfg, &ce)) {
        int ctx = cfg.max_pos < 4096 ? cfg.max_pos : 4096;
        size_t st = ms_state_bytes(&cfg, ctx, 64);
        snprintf(line, sizeof line, "expected runtime memory: %.1f MiB (weights) + %.1f MiB (state for %d tokens of context)",
                 (double)total / 1048576.0, (double)st / 1048576.0, ctx);
        io->log(io->ctx, line);
    }
    ms_buf_free(&cb);
}

size_t ms_plan_max_cols(const ms_conv_plan *p) {
    size_t m = 1;
    for (int i = 0; i < p->n; i++) if (ms_conv_tensor_cols(&p->t[i]) > m) m = ms_conv_tensor_cols(&p->t[i]);
    return m;
}

static const uint8_t zeros[ALIGN];

/* One shard: zero padding up to each tensor, the tensor converted in row blocks; sha256 and size. */
static int write_shard(const ms_conv_plan *p, const ms_io *io, const int *in, int s, int n_shards, uint8_t *sbuf, uint8_t *dbuf,
                       float *tmp, double *src_done, double src_total, uint64_t *size, char hex[65], ms_err *err) {
    char nm[64];
    ms_shard_name(nm, sizeof nm, s, n_shards);
    int out = io->open(io->ctx, nm, 'w');
    if (out < 0) return ms_fail(err, MS_E_SHARD_MISSING, "%s: cannot create", nm);
    ms_sha256 sh;
    ms_sha256_init(&sh);
    uint64_t pos = 0;
    int rc = MS_OK;
    for (int i = 0; i < p->n && !rc; i++) {
        const ms_conv_tensor *t = &p->t[i];
        if (t->shard != s) continue;
        while (pos < t->offset && !rc) {
            size_t n = t->offset - pos > ALIGN ? ALIGN : (size_t)(t->offset - pos);
            if (io->write(io->ctx, out, zeros, n)) rc = ms_fail(err, MS_E_SHARD_SIZE, "%s: write failed", nm);
            ms_sha256_update(&sh, zeros, n);
            pos += n;
        }
        size_t rows = (size_t)t->shape[0], cols = ms_conv_tensor_cols(t), row_src = ms_conv_row_src_bytes(t);
        /* a block's rows fit both buffers: the converted rows can be larger than the source's (BF16
         * or F16 read, f32 written), so the larger row decides */
        const size_t row_dst = ms_dtype_bytes(t->dtype, 1, cols), row_max = row_src > row_dst ? row_src : row_dst;
        size_t per = BLOCK_BYTES / row_max ? BLOCK_BYTES / row_max : 1;
        for (size_t r0 = 0; r0 < rows && !rc; r0 += per) {
            size_t nr = rows - r0 < per ? rows - r0 : per;
            if (t->src_mem) memcpy(sbuf, (const uint8_t *)t->src_mem + r0 * row_src, nr * row_src);
            else if (t->gen_rows) t->gen_rows(t, r0, nr, cols, (float *)(void *)sbuf);
            else if (t->src_file < 0) {
                rc = ms_fail(err, MS_E_ARG, "tensor %s: no source for its values", t->name);
                break;
            } else if (io->read(io->ctx, in[t->src_file], t->src_off + r0 * row_src, sbuf, nr * row_src)) {
                rc = ms_fail(err, MS_E_CHECKPOINT, "%s: read failed in tensor %s", p->src_files[t->src_file], t->name);
                break;
            }
            if ((rc = ms_convert_block(t, sbuf, r0, nr, dbuf, tmp, err))) break;
            size_t nb = ms_dtype_bytes(t->dtype, nr, cols);
            if (io->write(io->ctx, out, dbuf, nb)) { rc = ms_fail(err, MS_E_SHARD_SIZE, "%s: write failed in tensor %s", nm, t->name); break; }
            ms_sha256_update(&sh, dbuf, nb);
            pos += nb;
            *src_done += (double)(nr * row_src);
            if (io->progress) io->progress(io->ctx, *src_done, src_total);
        }
    }
    io->close(io->ctx, out);
    uint8_t d[32];
    ms_sha256_final(&sh, d);
    ms_sha256_hex(d, hex);
    *size = pos;
    return rc;
}

int ms_convert_write(ms_conv_plan *p, const ms_io *io, int n_shards, ms_err *err) {
    int rc = MS_OK;
    int in[64];
    for (int k = 0; k < 64; k++) in[k] = -1;
    char (*hex)[65] = calloc((size_t)n_shards, 65);
    uint64_t *sizes = calloc((size_t)n_shards, sizeof *sizes);
    size_t maxcols = ms_plan_max_cols(p);
    float *tmp = malloc(maxcols * sizeof(float));
    uint8_t *sbuf = malloc(BLOCK_BYTES + maxcols * 4), *dbuf = malloc(BLOCK_BYTES + maxcols * 4 + 64), *tb = NULL;
    ms_buf man = {0};
    if (!hex || !sizes || !tmp || !sbuf || !dbuf) { rc = ms_fail(err, MS_E_MEMORY, "converter: out of memory"); goto done; }
    double src_total = 0, src_done = 0; /* bytes of the source tensors, for io->progress */
    for (int i = 0; i < p->n; i++) src_total += (double)p->t[i].shape[0] * (double)ms_conv_row_src_bytes(&p->t[i]);
    for (int k = 0; k < p->n_src_files; k++) {
        in[k] = io->open(io->ctx, p->src_files[k], 'r');
        if (in[k] < 0) { rc = ms_fail(err, MS_E_CHECKPOINT, "%s: cannot open", p->src_files[k]); goto done; }
    }
    for (int s = 0; s < n_shards && !rc; s++) rc = write_shard(p, io, in, s, n_shards, sbuf, dbuf, tmp, &src_done, src_total, &sizes[s], hex[s], err);
    if (rc) goto done;
    /* the tokenizer, validated, then written */
    char tok_hex[65];
    int64_t tok_bytes = 0;
    if ((rc = ms_plan_tokenizer(p, io, &tb, &tok_bytes, tok_hex, err))) goto done;
    if (tb) {
        int oh = io->open(io->ctx, p->tok_out, 'w');
        int wr = oh >= 0 ? io->write(io->ctx, oh, tb, (size_t)tok_bytes) : -1;
        if (oh >= 0) io->close(io->ctx, oh);
        if (wr) { rc = ms_fail(err, MS_E_TOKEN, "%s: cannot write", p->tok_out); goto done; }
    }
    if ((rc = ms_plan_manifest(p, n_shards, sizes, (const char (*)[65])hex, tok_hex, tok_bytes, &man, err))) goto done;
    int mh = io->open(io->ctx, "manifest.json", 'w');
    if (mh < 0 || io->write(io->ctx, mh, man.p, man.n)) rc = ms_fail(err, MS_E_MANIFEST, "manifest.json: cannot write");
    if (mh >= 0) io->close(io->ctx, mh);
    if (!rc && io->log) log_summary(p, io, n_shards);
done:
    for (int k = 0; k < 64; k++) if (in[k] >= 0) io->close(io->ctx, in[k]);
    ms_buf_free(&man);
    free(hex); free(sizes); free(tmp); free(sbuf); free(dbuf); free(tb);
    return rc;
}

int ms_convert_finish(ms_conv_plan *p, const ms_io *io, const ms_conv_opts *o, ms_err *err) {
    int n_shards = 0, rc = ms_plan_layout(p, o, &n_shards, err);
    if (!rc) rc = ms_convert_write(p, io, n_shards, err);
    ms_plan_free(p);
    return rc;
}
