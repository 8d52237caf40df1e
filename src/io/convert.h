/* The converter core: source checkpoint -> weight set (manifest.json + shards + tokenizer).
 * All I/O goes through host callbacks (ms_io), so the same code runs in the native CLI (stdio)
 * and in wasm under Node (fs). Tensors are streamed in row blocks: memory stays bounded by the
 * block size, whatever the checkpoint size. */
#ifndef MS_CONVERT_H
#define MS_CONVERT_H
#include <stddef.h>
#include <stdint.h>
#include "../util/error.h"
#include "../util/json.h"

typedef struct {
    void *ctx;
    /* open a file of the source (mode 'r') or of the output folder (mode 'w'); returns handle >= 0 */
    int (*open)(void *ctx, const char *name, int mode);
    int (*close)(void *ctx, int h);
    int64_t (*size)(void *ctx, int h);
    /* read exactly n bytes at offset; returns 0 on success */
    int (*read)(void *ctx, int h, uint64_t off, void *buf, size_t n);
    /* append n bytes; returns 0 on success */
    int (*write)(void *ctx, int h, const void *buf, size_t n);
    void (*log)(void *ctx, const char *line);
    /* optional (NULL: none): converted so far and in all, in bytes of the source tensors */
    void (*progress)(void *ctx, double done, double total);
} ms_io;

typedef struct ms_conv_tensor_ {
    char name[96];
    int ndim;
    int64_t shape[3];
    int is_matrix;
    int src_file;       /* index into the plan's source files; -1: generated (synth) */
    int gen;            /* generated values: 1 uniform, 2 dt_bias, 3 A_log */
    float gen_lo, gen_hi, gen_add; /* uniform(lo, hi) + add */
    int64_t gen_split;  /* rows >= gen_split are multiplied by gen_gain */
    float gen_gain;
    uint64_t gen_seed;
    /* generated values (synth.c): rows r0..r0+nr of `cols` floats; NULL: from src_mem or a file */
    void (*gen_rows)(const struct ms_conv_tensor_ *t, size_t r0, size_t nr, size_t cols, float *out);
    const void *src_mem; /* tensor values in memory (the trainer): used instead of a file when set */
    int src_dtype;      /* f32, f16, bf16 */
    uint64_t src_off;
    /* output */
    int dtype;
    size_t bytes;
    int shard;
    uint64_t offset;
} ms_conv_tensor;

typedef struct {
    char family[16];
    char *config_json;       /* the manifest's config object (text) */
    char src_files[64][512];
    int n_src_files;
    ms_conv_tensor *t;
    int n, cap;
    /* tokenizer */
    char tok_kind[32], tok_src[512], tok_out[64];
    int tok_vocab, tok_bos, tok_eos[8], n_tok_eos;
    uint8_t *tok_blob;  /* converted tokenizer bytes to write as tok_out (instead of copying tok_src) */
    size_t tok_blob_len;
    char *tok_chat_json; /* the manifest's tokenizer.chat object (JSON text), or NULL */
} ms_conv_plan;

typedef struct {
    int dtype;            /* requested dtype for matrices: f32 f16 bf16 q8_0 q4_0 */
    int embed_dtype;      /* embed_tokens / lm_head; -1: same as dtype */
    uint64_t shard_bytes; /* max bytes per shard (default 64 MiB) */
} ms_conv_opts;

/* The plans are made by the sources, each in its own file (a plan only needs this header):
 * hf_checkpoint.h (a Hugging Face folder), llama2c_checkpoint.h, synth.h (synthetic weights); the
 * trainer fills one from memory. conv_stream.h converts a plan whose source bytes come from
 * outside (js/hub.js). */
void ms_plan_free(ms_conv_plan *p);
/* Pick output dtypes and lay tensors out in shards (64-byte aligned). */
int ms_plan_layout(ms_conv_plan *p, const ms_conv_opts *o, int *n_shards, ms_err *err);
/* Write the shards, the tokenizer and manifest.json into the output (names relative to it). */
int ms_convert_write(ms_conv_plan *p, const ms_io *io, int n_shards, ms_err *err);
/* Shard i of total's file name: model-00001-of-00003.bin */
void ms_shard_name(char *out, size_t n, int i, int total);
/* The shards' file sizes (where each one's last tensor ends). */
void ms_plan_shard_sizes(const ms_conv_plan *p, int n_shards, uint64_t *sizes);
/* The tokenizer file the plan writes, validated (malloc'd into *out, NULL when the kind is none),
 * with its sha256. */
int ms_plan_tokenizer(const ms_conv_plan *p, const ms_io *io, uint8_t **out, int64_t *len, char hex[65], ms_err *err);
/* manifest.json for a laid-out plan, given each shard's size and sha256 */
int ms_plan_manifest(const ms_conv_plan *p, int n_shards, const uint64_t *sizes, const char (*hex)[65],
                     const char *tok_hex, int64_t tok_bytes, ms_buf *man, ms_err *err);
/* Rows r0..r0+nr of tensor t: source bytes (its src_dtype) -> dst (its output dtype). Every
 * source value must be finite (E_TENSOR names the tensor and the element). tmp: one row of floats. */
int ms_convert_block(const ms_conv_tensor *t, const void *src, size_t r0, size_t nr, void *dst, float *tmp, ms_err *err);
/* bytes of one row of a tensor in its source dtype */
size_t ms_conv_row_src_bytes(const ms_conv_tensor *t);
/* The common tail of every conversion: lay the plan out, write it, free it. */
int ms_convert_finish(ms_conv_plan *p, const ms_io *io, const ms_conv_opts *o, ms_err *err);
/* Convert rows of values between dtypes (src: f32/f16/bf16; dst: any). */
int ms_convert_rows(const void *src, int src_dtype, void *dst, int dst_dtype, size_t rows, size_t cols, float *tmp);

/* the largest row of a plan's tensors, in values; a tensor's values per row */
size_t ms_plan_max_cols(const ms_conv_plan *p);
size_t ms_conv_tensor_cols(const ms_conv_tensor *t);
#endif
