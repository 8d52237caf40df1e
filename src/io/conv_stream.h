/* A conversion whose source bytes come from outside (js/hub.js fetching safetensors ranges) and
 * whose output goes straight to each tensor's final place in memory: the plan is built from the
 * small files and the safetensors headers alone (the io serves only those), laid out exactly as
 * ms_convert_finish would lay it out, so the weight set is byte for byte the converter's. */
#ifndef MS_CONV_STREAM_H
#define MS_CONV_STREAM_H
#include "convert.h"

typedef struct {
    ms_conv_plan plan;
    int n_shards;
    float *tmp;          /* one row of floats */
    uint8_t *tok;        /* the converted tokenizer file (NULL: none) */
    int64_t tok_bytes;
    char tok_hex[65];
} ms_conv_stream;
/* The plan of a Hugging Face folder `dir` of io (hf_checkpoint.h), laid out with o */
int ms_conv_stream_open_hf(ms_conv_stream *s, const ms_io *io, const char *dir, const ms_conv_opts *o, ms_err *err);
/* manifest.json text; shard_hex: the shards' sha256 one after another (64 hex digits each), or
 * NULL for zeros (a manifest read only for its layout, before the shards are hashed) */
int ms_conv_stream_manifest(const ms_conv_stream *s, const char *shard_hex, ms_buf *out, ms_err *err);
/* rows r0..r0+nr of plan tensor i from its source bytes into the tensor at tensor_base */
int ms_conv_stream_rows(ms_conv_stream *s, int i, const void *src, size_t r0, size_t nr, void *tensor_base, ms_err *err);
void ms_conv_stream_close(ms_conv_stream *s);

/* The same on the heap, for a host that keeps a handle: NULL with err set on failure */
ms_conv_stream *ms_conv_stream_new_hf(const ms_io *io, const char *dir, const ms_conv_opts *o, ms_err *err);
void ms_conv_stream_free(ms_conv_stream *s);
/* manifest.json as a malloc'd text (NULL: err) */
char *ms_conv_stream_manifest_text(const ms_conv_stream *s, const char *shard_hex, ms_err *err);
/* The plan as JSON text (malloc'd; NULL when out of memory): the source files' names; the output
 * shards [{file, bytes}] and tokenizer file ({file, sha256, bytes} or null); and per tensor where
 * its source bytes are and where its output goes: [{"name", "file" (source file index),
 * "src_offset", "row_bytes" (source bytes per row), "rows", "shard", "offset", "bytes"}]. */
char *ms_conv_stream_plan_json(const ms_conv_stream *s);
#endif
