#include "conv_stream.h"
#include "hf_checkpoint.h"
#include "../kernels/dtype.h"
#include <stdlib.h>
#include <string.h>

int ms_conv_stream_open_hf(ms_conv_stream *s, const ms_io *io, const char *dir, const ms_conv_opts *o, ms_err *err) {
    memset(s, 0, sizeof *s);
    int rc = ms_plan_hf(&s->plan, io, dir, err);
    if (rc) return rc;
    if (!rc) rc = ms_plan_layout(&s->plan, o, &s->n_shards, err);
    if (!rc && !(s->tmp = malloc(ms_plan_max_cols(&s->plan) * sizeof(float)))) rc = ms_fail(err, MS_E_MEMORY, "out of memory");
    if (!rc) rc = ms_plan_tokenizer(&s->plan, io, &s->tok, &s->tok_bytes, s->tok_hex, err);
    if (rc) ms_conv_stream_close(s);
    return rc;
}

int ms_conv_stream_manifest(const ms_conv_stream *s, const char *shard_hex, ms_buf *out, ms_err *err) {
    char (*hex)[65] = calloc((size_t)s->n_shards, 65);
    uint64_t *sizes = calloc((size_t)s->n_shards, sizeof *sizes);
    int rc = MS_OK;
    if (!hex || !sizes) rc = ms_fail(err, MS_E_MEMORY, "out of memory");
    for (int k = 0; !rc && k < s->n_shards; k++) {
        /* before the shards are hashed: 64 zeros (the manifest is then only read for its layout) */
        if (shard_hex && strlen(shard_hex) >= (size_t)(k + 1) * 64) memcpy(hex[k], shard_hex + 64 * k, 64);
        else memset(hex[k], '0', 64);
    }
    if (!rc) {
        ms_plan_shard_sizes(&s->plan, s->n_shards, sizes);
        rc = ms_plan_manifest(&s->plan, s->n_shards, sizes, (const char (*)[65])hex, s->tok_hex, s->tok_bytes, out, err);
    }
    free(hex);
    free(sizes);
    return rc;
}

int ms_conv_stream_rows(ms_conv_stream *s, int i, const void *src, size_t r0, size_t nr, void *tensor_base, ms_err *err) {
    if (i < 0 || i >= s->plan.n) return ms_fail(err, MS_E_ARG, "tensor index %d outside [0, %d)", i, s->plan.n);
    const ms_conv_tensor *t = &s->plan.t[i];
    if (r0 > (size_t)t->shape[0] || nr > (size_t)t->shape[0] - r0) return ms_fail(err, MS_E_ARG, "tensor %s: rows %zu..%zu outside its %lld", t->name, r0, r0 + nr, (long long)t->shape[0]);
    return ms_convert_block(t, src, r0, nr, (uint8_t *)tensor_base + ms_dtype_bytes(t->dtype, r0, ms_conv_tensor_cols(t)), s->tmp, err);
}

void ms_conv_stream_close(ms_conv_stream *s) {
    ms_plan_free(&s->plan);
    free(s->tmp);
    free(s->tok);
    memset(s, 0, sizeof *s);
}

ms_conv_stream *ms_conv_stream_new_hf(const ms_io *io, const char *dir, const ms_conv_opts *o, ms_err *err) {
    ms_conv_stream *s = malloc(sizeof *s);
    if (!s) { ms_fail(err, MS_E_MEMORY, "out of memory"); return NULL; }
    if (ms_conv_stream_open_hf(s, io, dir, o, err)) { free(s); return NULL; }
    return s;
}

void ms_conv_stream_free(ms_conv_stream *s) {
    if (!s) return;
    ms_conv_stream_close(s);
    free(s);
}

char *ms_conv_stream_manifest_text(const ms_conv_stream *s, const char *shard_hex, ms_err *err) {
    ms_buf b = {0};
    if (ms_conv_stream_manifest(s, shard_hex, &b, err)) { ms_buf_free(&b); return NULL; }
    return b.p;
}

char *ms_conv_stream_plan_json(const ms_conv_stream *s) {
    ms_buf b = {0};
    ms_buf_puts(&b, "{\"files\": [");
    for (int k = 0; k < s->plan.n_src_files; k++) {
        const char *f = strrchr(s->plan.src_files[k], '/');
        ms_buf_puts(&b, k ? ", " : "");
        ms_buf_json_str(&b, f ? f + 1 : s->plan.src_files[k]);
    }
    ms_buf_puts(&b, "], \"shards\": [");
    uint64_t *sizes = calloc((size_t)s->n_shards, sizeof *sizes);
    if (!sizes) { ms_buf_free(&b); return NULL; }
    ms_plan_shard_sizes(&s->plan, s->n_shards, sizes);
    for (int k = 0; k < s->n_shards; k++) {
        char nm[64];
        ms_shard_name(nm, sizeof nm, k, s->n_shards);
        ms_buf_printf(&b, "%s{\"file\": \"%s\", \"bytes\": %llu}", k ? ", " : "", nm, (unsigned long long)sizes[k]);
    }
    free(sizes);
    if (s->tok) ms_buf_printf(&b, "], \"tokenizer\": {\"file\": \"%s\", \"sha256\": \"%s\", \"bytes\": %lld}, \"tensors\": [", s->plan.tok_out, s->tok_hex, (long long)s->tok_bytes);
    else ms_buf_puts(&b, "], \"tokenizer\": null, \"tensors\": [");
    for (int i = 0; i < s->plan.n; i++) {
        const ms_conv_tensor *t = &s->plan.t[i];
        ms_buf_printf(&b, "%s{\"name\": \"%s\", \"file\": %d, \"src_offset\": %llu, \"row_bytes\": %zu, \"rows\": %lld, \"shard\": %d, \"offset\": %llu, \"bytes\": %zu}",
                      i ? ", " : "", t->name, t->src_file, (unsigned long long)t->src_off, ms_conv_row_src_bytes(t), (long long)t->shape[0],
                      t->shard, (unsigned long long)t->offset, t->bytes);
    }
    ms_buf_puts(&b, "]}");
    if (b.oom) { ms_buf_free(&b); return NULL; }
    return b.p;
}
