/* Native host: file I/O for the converter and a weight-set loader for tools and tests. It loads
 * a weight set through the same C calls as the wasm build (model/model.h: ms_model_open,
 * ms_model_shard_layout, ms_model_finish_shard, ms_model_finish), with stdio for the bytes. */
#ifndef MS_NATIVE_HOST_H
#define MS_NATIVE_HOST_H
#include "../src/engine/forward.h"
#include "../src/io/convert.h"
#include "../src/tokenizer/tokenizer.h"

typedef struct {
    char in_dir[512], out_dir[512]; /* sources are opened as given; outputs inside out_dir */
    void *files[64];
} ms_native_io;

void ms_native_io_init(ms_native_io *h, ms_io *io, const char *out_dir);
void ms_native_io_close_all(ms_native_io *h);

/* Converts a llama2.c checkpoint (+ optional tok*.bin) into an f32 weight set in out_dir
 * (created if missing). 0 on success, else the error code with err set. */
int ms_native_convert_llama2c(const char *ckpt, const char *tok, const char *out_dir, ms_err *err);

/* Reads dir/manifest.json, allocates, reads and verifies every shard, finishes the model (plain
 * activations). Tokenizer optional (tok may be NULL). */
ms_model *ms_load_weightset(const char *dir, ms_tokenizer **tok, ms_err *err);
/* The same with options: the activation mode (ms_activations; the model's default when
 * use_default_activations) and a thread pool attached before the weights are laid out, so the
 * repack for integer activations is shared over its threads (the pool is not owned). */
typedef struct { int activations; struct ms_pool *pool; } ms_native_load_opts;
ms_model *ms_load_weightset_opts(const char *dir, const ms_native_load_opts *o, ms_tokenizer **tok, ms_err *err);
/* Reads and verifies (sha256) the tokenizer file a manifest names, then loads it. */
ms_tokenizer *ms_load_tokenizer_file(const char *dir, const ms_tokinfo *ti, ms_err *err);
/* Reads a whole file; returns NULL and sets err on failure. */
uint8_t *ms_read_file(const char *path, size_t *len, ms_err *err);
#endif
