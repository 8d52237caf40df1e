/* The C ABI exported to JS: thin wrappers, no logic (the test build adds api_test.c); each calls one
 * function of the layer it belongs to. Pointers and sizes cross as 32-bit ints; 64-bit quantities
 * as doubles; an empty string from the host means "none" (NULL). Every function that can fail takes
 * an ms_err*. A wrapper whose export name is already the layer's function name is called <name>_api. */
#include "../analysis/attribution.h"
#include "../analysis/weights.h"
#include "../analysis/engine_info.h"
#include "../analysis/run.h"
#include "../analysis/tc_session.h"
#include "../model/describe.h"
#include "../engine/forward.h"
#include "../engine/sampler.h"
#include "../io/conv_stream.h"
#include "../io/hf_checkpoint.h"
#include "../io/hf_config.h"
#include "../io/llama2c_checkpoint.h"
#include "../io/synth.h"
#include "../kernels/quant.h"
#include "../tokenizer/tokenizer.h"
#include "../util/threads.h"
#include "../util/sha256.h"
#include "../util/json.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifdef __wasm__
#define API(name) __attribute__((export_name(#name), used))
#else
#define API(name)
#endif

API(ms_malloc) void *ms_malloc(size_t n) { return malloc(n ? n : 1); }
API(ms_free) void ms_free(void *p) { free(p); }
API(ms_err_new) ms_err *ms_err_new(void) { return calloc(1, sizeof(ms_err)); }
API(ms_err_code) int ms_err_code(const ms_err *e) { return e->code; }
API(ms_err_msg) const char *ms_err_msg(const ms_err *e) { return e->msg; }
API(ms_err_reset) void ms_err_reset(ms_err *e) { ms_err_clear(e); }
API(ms_code_str) const char *ms_code_str(int code) { return ms_code_name(code); }
API(ms_have_simd) int ms_have_simd(void) { return ms_kernels_have_simd(); }
#ifdef __wasm__
#include <malloc.h>
/* bytes currently allocated by malloc in the wasm heap (tests check dispose() returns to baseline) */
API(ms_heap_used) double ms_heap_used(void) { return (double)mallinfo().uordblks; }
void *sbrk(intptr_t increment);
/* the end of the heap malloc has taken so far: memory above it is free for the next allocations
 * (the loader grows the memory once to this + what a model needs, instead of in many steps) */
API(ms_heap_break) double ms_heap_break(void) { return (double)(uintptr_t)sbrk(0); }
#endif

/* ---- model: the weight-set load (model/model.h: open, shards finished as they arrive, finish) ---- */
API(ms_model_create) ms_model *ms_model_create(const char *text, size_t len, int allocate, int simd, ms_err *err) {
    return ms_model_open(text, len, allocate, simd, err);
}
API(ms_model_destroy) void ms_model_destroy(ms_model *m) { ms_model_free(m); }
/* kernel levels (kernels.h MS_ISA_*): a host that linked the relaxed module times it against
 * SIMD128 on the model's own weights, then picks (js/wasm.js, js/weightset.js) */
API(ms_model_set_kernels) int ms_model_set_kernels_api(ms_model *m, int level, ms_err *err) { return ms_model_set_kernels(m, level, err); }
API(ms_model_time_kernels) char *ms_model_time_kernels_api(ms_model *m, int level, int T, int reps, ms_err *err) {
    ms_kernel_timing kt;
    if (ms_model_time_kernels(m, level, T, reps, &kt, err)) return NULL;
    ms_buf b = {0};
    ms_buf_puts(&b, "{\"tensor\":");
    if (kt.tensor < 0) ms_buf_puts(&b, "null");
    else ms_buf_json_str(&b, m->tensors[kt.tensor].name);
    if (kt.tensor >= 0) ms_buf_printf(&b, ",\"dtype\":\"%s\"", ms_dtype_name(m->tensors[kt.tensor].dtype));
    ms_buf_printf(&b, ",\"rows\":%d,\"cols\":%d,\"tokens\":%d,\"simd128_ms\":%.6f,\"level_ms\":%.6f}", kt.rows, kt.cols, T, kt.simd128_ms, kt.level_ms);
    if (b.oom) { ms_buf_free(&b); ms_fail(err, MS_E_MEMORY, "kernel timing: out of memory"); return NULL; }
    return b.p;
}
API(ms_model_finish_shard) int ms_model_finish_shard_api(ms_model *m, int s, int activations, ms_err *err) {
    return ms_model_finish_shard(m, s, activations, err);
}
API(ms_model_finish) int ms_model_finish_api(ms_model *m, int activations, ms_err *err) { return ms_model_finish(m, activations, err); }
/* ---- threads (util/threads.h): js/threads.js creates the pool, starts workers that call
 * ms_pool_worker in their own instances, waits until all run, then hands the pool to a model ---- */
API(ms_pool_create) ms_pool *ms_pool_create(int n_threads, ms_err *err) { return ms_pool_new(n_threads, err); }
API(ms_pool_destroy) void ms_pool_destroy(ms_pool *p) { ms_pool_free(p); }
API(ms_pool_enter) void ms_pool_enter(ms_pool *p, int part) { ms_pool_worker(p, part); }
API(ms_pool_running) int ms_pool_running(const ms_pool *p) { return ms_pool_workers_running(p); }
API(ms_pool_caller_can_block) void ms_pool_caller_can_block(ms_pool *p, int yes) { ms_pool_set_caller_can_block(p, yes); }
API(ms_model_set_pool) void ms_model_set_pool(ms_model *m, ms_pool *p) { m->pool = p; }
API(ms_model_weight_bytes) double ms_model_weight_bytes(const ms_model *m) { return (double)m->weight_bytes; }
API(ms_model_state_bytes) double ms_model_state_bytes(const ms_model *m, int ctx, int batch) {
    return (double)ms_state_bytes(&m->cfg, ctx, batch);
}
API(ms_model_n_shards) int ms_model_n_shards(const ms_model *m) { return m->n_shards; }
/* Segments of shard s: for each tensor in it, [offset, bytes, heap pointer] as doubles, sorted by
 * offset. out must hold 3 * n_tensors doubles. Returns the count. */
API(ms_model_shard_segments) int ms_model_shard_segments(const ms_model *m, int s, double *out) { return ms_model_shard_layout(m, s, out); }
API(ms_model_n_tensors) int ms_model_n_tensors(const ms_model *m) { return m->n_tensors; }

/* Model description as JSON (config, counts, dtypes, shards, tokenizer, activation mode). Caller frees. */
API(ms_model_info) char *ms_model_info(const ms_model *m) { return ms_describe_model(m); }
/* The engine's own tables as JSON (analysis/engine_info.h). Caller frees. */
API(ms_engine_info) char *ms_engine_info(void) { return ms_describe_engine(); }

/* ---- state and forward ---- */
API(ms_state_new) ms_state *ms_state_new(const ms_model *m, int ctx, int batch, ms_err *err) { return ms_state_create(m, ctx, batch, err); }
API(ms_state_destroy) void ms_state_destroy(ms_state *s) { ms_state_free(s); }
API(ms_state_clear) void ms_state_clear(ms_state *s) { ms_state_reset(s); }
API(ms_state_pos) int ms_state_pos(const ms_state *s) { return s->pos; }
API(ms_state_set_gdn) int ms_state_set_gdn(ms_state *s, int recurrent, int chunk, ms_err *err) { return ms_state_set_gdn_mode(s, recurrent, chunk, err); }

/* A forward call (analysis/run.h): set up, executed once, read, freed. */
API(ms_run_new) ms_run *ms_run_new(ms_state *s, int T, int want_stats, int topk, int logits_mode, ms_err *err) {
    return ms_run_create(s, T, want_stats, topk, logits_mode, err);
}
API(ms_run_hook) int ms_run_hook(ms_run *r, const char *name, size_t n, ms_err *err) { return ms_run_add_hook(r, name, n, err); }
API(ms_run_hook_data) const float *ms_run_hook_data(const ms_run *r, int i) { size_t n; return ms_run_hook_values(r, i, &n); }
API(ms_run_hook_count) double ms_run_hook_count(const ms_run *r, int i) { size_t n; ms_run_hook_values(r, i, &n); return (double)n; }
API(ms_run_intervene) int ms_run_intervene(ms_run *r, int layer, const char *hook, size_t hook_len, int op, const int32_t *dims, int n_dims,
                                           const int32_t *positions, int n_positions, float value, const float *vector, int n_vector, ms_err *err) {
    return ms_run_add_intervention(r, layer, hook, hook_len, op, dims, n_dims, positions, n_positions, value, vector, n_vector, err);
}
API(ms_run_bilinear) int ms_run_bilinear(ms_run *r, int layer, ms_err *err) { return ms_run_add_bilinear(r, layer, err); }
API(ms_run_lens) int ms_run_lens(ms_run *r, const int32_t *positions, int n, int k, int after_mixer, int n_real, ms_err *err) {
    return ms_run_add_lens(r, positions, n, k, after_mixer, n_real, err);
}
API(ms_mlp_down_column) int ms_mlp_down_column_api(ms_model *m, int layer, int neuron, float *out, ms_err *err) { return ms_mlp_down_column(m, layer, neuron, out, err); }
API(ms_unembed_direction) int ms_unembed_direction_api(ms_model *m, const float *v, float *logits, ms_err *err) { return ms_unembed_direction(m, v, logits, err); }
API(ms_mlp_down_readout) int ms_mlp_down_readout_api(ms_model *m, int layer, const float *u, float *out, ms_err *err) { return ms_mlp_down_readout(m, layer, u, out, err); }
API(ms_mlp_write_scale) int ms_mlp_write_scale_api(ms_model *m, int layer, const float *h, int T, float *out, ms_err *err) { return ms_mlp_write_scale(m, layer, h, T, out, err); }
API(ms_mlp_neuron_geometry) int ms_mlp_neuron_geometry_api(ms_model *m, int layer, int fold_norm, float *out, ms_err *err) { return ms_mlp_neuron_geometry(m, layer, fold_norm, out, err); }
API(ms_mlp_interaction) int ms_mlp_interaction_api(ms_model *m, int layer, const float *c, int fold_norm, float *q, ms_err *err) { return ms_mlp_interaction(m, layer, c, fold_norm, q, err); }
API(ms_weight_get) int ms_weight_get(ms_model *m, const char *name, int row, int col, float *out, ms_err *err) {
    ms_tensor *t;
    int rc = ms_model_weight_at(m, name, row, col, &t, err);
    if (!rc) *out = ms_tensor_get(t, row, col);
    return rc;
}
/* the column count of matrix `name` (negative: an error) */
API(ms_weight_cols) int ms_weight_cols(ms_model *m, const char *name, ms_err *err) {
    ms_tensor *t;
    return ms_model_weight_at(m, name, 0, 0, &t, err) ? -1 : (int)t->cols;
}
/* row `row` of matrix `name`, dequantized: out[cols] */
API(ms_weight_row) int ms_weight_row(ms_model *m, const char *name, int row, float *out, ms_err *err) {
    ms_tensor *t;
    int rc = ms_model_weight_at(m, name, row, 0, &t, err);
    if (!rc) ms_tensor_row_f32(t, row, out);
    return rc;
}
/* element (row, col) of matrix `name` set to 0; *saved: the bits ms_weight_restore puts back */
API(ms_weight_zero) int ms_weight_zero(ms_model *m, const char *name, int row, int col, uint32_t *saved, ms_err *err) {
    ms_tensor *t;
    int rc = ms_model_weight_at(m, name, row, col, &t, err);
    if (!rc) *saved = ms_tensor_zero(t, row, col);
    return rc;
}
API(ms_weight_restore) int ms_weight_restore(ms_model *m, const char *name, int row, int col, int saved, ms_err *err) {
    ms_tensor *t;
    int rc = ms_model_weight_at(m, name, row, col, &t, err);
    if (!rc) ms_tensor_restore(t, row, col, (uint32_t)saved);
    return rc;
}
API(ms_head_readout) int ms_head_readout_api(ms_model *m, int token, int minus, float *out, ms_err *err) { return ms_head_readout(m, token, minus, out, err); }
API(ms_run_exec) int ms_run_exec(ms_run *r, const int32_t *ids, ms_err *err) { return ms_run_execute(r, ids, err); }
API(ms_run_logits) float *ms_run_logits(const ms_run *r) { return ms_run_logits_of(r); }
/* statistic `id` (a row of ms_engine_info's "stats") of the run, NULL when not collected */
API(ms_run_stat) void *ms_run_stat(const ms_run *r, int id) { return ms_stats_array(ms_run_stats_of(r), id); }
API(ms_run_lens_top_ids) const int32_t *ms_run_lens_top_ids(const ms_run *r) { return ms_run_lens_ids(r); }
API(ms_run_lens_top_logits) const float *ms_run_lens_top_logits(const ms_run *r) { return ms_run_lens_logits(r); }
API(ms_run_lens_top_probs) const float *ms_run_lens_top_probs(const ms_run *r) { return ms_run_lens_probs(r); }
API(ms_run_free) void ms_run_free(ms_run *r) { ms_run_destroy(r); }
/* final norm + head of an arbitrary residual vector (logit lens) */
API(ms_unembed_vec) void ms_unembed_vec(ms_state *s, const float *resid, float *logits) { ms_unembed(s, resid, logits); }

/* ---- sampling (engine/sampler.h): one sampler per generation ---- */
API(ms_sampler_create) ms_sampler *ms_sampler_create(double seed, int n_vocab, ms_err *err) { return ms_sampler_new(seed, n_vocab, err); }
API(ms_sampler_destroy) void ms_sampler_destroy(ms_sampler *s) { ms_sampler_free(s); }
API(ms_sampler_draw) int ms_sampler_draw(ms_sampler *s, const float *logits, int n, float temperature, int top_k, float top_p) {
    return ms_sampler_next(s, logits, n, temperature, top_k, top_p);
}
API(ms_sampler_last_logprob) float ms_sampler_last_logprob(const ms_sampler *s) { return ms_sampler_logprob(s); }

/* ---- tokenizer ---- */
API(ms_tok_load) ms_tokenizer *ms_tok_load(const char *kind, const uint8_t *data, size_t len, int vocab, ms_err *err) {
    return ms_tokenizer_load(kind, data, len, vocab, err);
}
API(ms_tok_free) void ms_tok_free(ms_tokenizer *t) { ms_tokenizer_free(t); }
API(ms_tok_encode) int ms_tok_encode(const ms_tokenizer *t, const char *text, size_t len, int add_bos, int32_t *ids, int cap, ms_err *err) {
    int n = 0;
    if (ms_tokenizer_encode(t, text, len, add_bos, ids, cap, &n, err)) return -1;
    return n;
}
/* piece bytes: writes a pointer to them into *out; returns length */
API(ms_tok_piece) int ms_tok_piece(const ms_tokenizer *t, int prev, int id, const char **out, char *buf) {
    return (int)ms_tokenizer_piece(t, prev, id, out, buf);
}
API(ms_tok_vocab) int ms_tok_vocab(const ms_tokenizer *t) { return ms_tokenizer_vocab(t); }
API(ms_tok_bos) int ms_tok_bos(const ms_tokenizer *t) { return ms_tokenizer_bos(t); }
API(ms_tok_max_ids) int ms_tok_max_ids(int len) { return (int)ms_tokenizer_max_ids((size_t)len); }
API(ms_tok_chat_kind) int ms_tok_chat_kind(const ms_tokenizer *t) { return ms_tokenizer_chat_kind(t); }
API(ms_tok_token_string) char *ms_tok_token_string(const ms_tokenizer *t, int id) { return ms_tokenizer_token_string(t, id); }
API(ms_tok_token_id) int ms_tok_token_id(const ms_tokenizer *t, const char *s, size_t n) { return ms_tokenizer_token_id(t, s, n); }
/* A JSON message list rendered with the tokenizer's chat template: a malloc'd string (length in
 * *len) or NULL with err set */
API(ms_tok_chat) char *ms_tok_chat(const ms_tokenizer *t, const char *msgs, size_t n, int add_gen, int thinking, size_t *len, ms_err *err) {
    char *out = NULL;
    return ms_tokenizer_chat(t, msgs, n, add_gen, thinking, &out, len, err) ? NULL : out;
}
/* piece end offsets of (NFC) text, or -1 if cap is too small */
API(ms_tok_pretokenize) int ms_tok_pretokenize(const ms_tokenizer *t, const char *s, size_t n, int32_t *ends, int cap) {
    return ms_tokenizer_pretokenize(t, s, n, ends, cap);
}
/* tokenizer.json (+ tokenizer_config.json, may be empty) -> bpe-bytelevel bytes (malloc'd) */
API(ms_tok_import) uint8_t *ms_tok_import(const char *tj, size_t tl, const char *cj, size_t cl, size_t *out_len, ms_err *err) {
    uint8_t *out = NULL;
    if (ms_bpe_import(tj, tl, cl ? cj : NULL, cl, NULL, 0, &out, out_len, NULL, err)) return NULL;
    return out;
}

/* The chat template of a tokenizer folder, as the converter keeps it: JSON {template, bos_token,
 * eos_token}, or "null" when there is none. tpl: chat_template.jinja's text ("" when absent), which
 * wins over tokenizer_config.json's chat_template (cj, may be empty). NULL: the error in err. */
API(ms_tok_chat_info) char *ms_tok_chat_info(const char *cj, size_t cl, const char *tpl, size_t tl, ms_err *err) {
    return ms_chat_info_text(cl ? cj : NULL, cl, tl ? tpl : NULL, err);
}

/* ---- sha256 ---- */
API(ms_sha_new) ms_sha256 *ms_sha_new(void) { return ms_sha256_new(); }
API(ms_sha_update) void ms_sha_update(ms_sha256 *s, const void *p, size_t n) { ms_sha256_update(s, p, n); }
API(ms_sha_final) void ms_sha_final(ms_sha256 *s, char *hex65) { ms_sha256_final_hex(s, hex65); }

/* ---- converter (host I/O through imported functions; wasm only) ---- */
#ifdef __wasm__
#define IMPORT(n) __attribute__((import_module("env"), import_name(#n)))
extern int ms_host_open(const char *name, int mode) IMPORT(ms_host_open);
extern int ms_host_close(int h) IMPORT(ms_host_close);
extern double ms_host_size(int h) IMPORT(ms_host_size);
extern int ms_host_read(int h, double off, void *buf, size_t n) IMPORT(ms_host_read);
extern int ms_host_write(int h, const void *buf, size_t n) IMPORT(ms_host_write);
extern void ms_host_log(const char *line) IMPORT(ms_host_log);
extern void ms_host_progress(double done, double total) IMPORT(ms_host_progress);
static int io_open(void *c, const char *n, int mode) { (void)c; return ms_host_open(n, mode); }
static int io_close(void *c, int h) { (void)c; return ms_host_close(h); }
static int64_t io_size(void *c, int h) { (void)c; return (int64_t)ms_host_size(h); }
static int io_read(void *c, int h, uint64_t off, void *b, size_t n) { (void)c; return ms_host_read(h, (double)off, b, n); }
static int io_write(void *c, int h, const void *b, size_t n) { (void)c; return ms_host_write(h, b, n); }
static void io_log(void *c, const char *l) { (void)c; ms_host_log(l); }
static void io_progress(void *c, double done, double total) { (void)c; ms_host_progress(done, total); }

/* Convert a llama2.c checkpoint (tok: its tokenizer.bin, or "") or, when hf_dir is set, a Hugging
 * Face model folder. */
API(ms_convert) int ms_convert(const char *src, const char *tok, int hf_dir, int dtype, int embed_dtype, double shard_bytes, ms_err *err) {
    ms_io io = {NULL, io_open, io_close, io_size, io_read, io_write, io_log, io_progress};
    ms_conv_opts o = {.dtype = dtype, .embed_dtype = embed_dtype, .shard_bytes = (uint64_t)shard_bytes};
    return hf_dir ? ms_convert_hf(&io, src, &o, err) : ms_convert_llama2c(&io, src, tok && *tok ? tok : NULL, &o, err);
}
/* A config (JSON text or a preset name) as JSON: its family, keys and parameter counts (hf_config.h). */
API(ms_config_summary) char *ms_config_summary_api(const char *text, size_t len, ms_err *err) {
    char *out = NULL;
    return ms_config_summary(text, len, &out, err) ? NULL : out;
}
/* Synthetic weight set from a config (JSON text or a preset name) into the host's output folder. */
API(ms_synth) int ms_synth(const char *config_or_preset, size_t len, double seed, int dtype, int embed_dtype, double shard_bytes, ms_err *err) {
    ms_io io = {NULL, io_open, io_close, io_size, io_read, io_write, io_log, io_progress};
    ms_conv_opts o = {.dtype = dtype, .embed_dtype = embed_dtype, .shard_bytes = (uint64_t)shard_bytes};
    return ms_convert_synth(&io, config_or_preset, len, (uint64_t)seed, &o, err);
}

/* ---- conversion while the source streams in (js/hub.js; io/conv_stream.h) ----
 * The plan is built through the host's files (the loader serves config.json, the tokenizer files
 * and the safetensors headers from memory under "hub/"); the loader then fetches each tensor's
 * source bytes itself and hands them over in row blocks, converted straight into the tensor. */
API(ms_conv_open_hf) ms_conv_stream *ms_conv_open_hf(int dtype, int embed_dtype, double shard_bytes, ms_err *err) {
    ms_io io = {NULL, io_open, io_close, io_size, io_read, io_write, io_log, io_progress};
    ms_conv_opts o = {.dtype = dtype, .embed_dtype = embed_dtype, .shard_bytes = (uint64_t)shard_bytes};
    return ms_conv_stream_new_hf(&io, "hub", &o, err);
}
#endif
/* manifest.json text (caller frees); hex: the shards' sha256 joined, or "" for zeros */
API(ms_conv_manifest) char *ms_conv_manifest(const ms_conv_stream *s, const char *hex, ms_err *err) {
    return ms_conv_stream_manifest_text(s, hex && *hex ? hex : NULL, err);
}
/* the plan as JSON (io/conv_stream.h) */
API(ms_conv_plan_json) char *ms_conv_plan_json(const ms_conv_stream *s) { return ms_conv_stream_plan_json(s); }
API(ms_conv_rows) int ms_conv_rows(ms_conv_stream *s, int i, const void *src, double r0, double nr, void *tensor_base, ms_err *err) {
    return ms_conv_stream_rows(s, i, src, (size_t)r0, (size_t)nr, tensor_base, err);
}
/* the converted tokenizer file (NULL when there is none); its length in *len */
API(ms_conv_tokenizer) const uint8_t *ms_conv_tokenizer(const ms_conv_stream *s, double *len) {
    *len = (double)s->tok_bytes;
    return s->tok;
}
API(ms_conv_close) void ms_conv_close(ms_conv_stream *s) { ms_conv_stream_free(s); }

/* ---- transcoders (analysis/tc_session.h): a session trains and scores some layers' ---- */
API(ms_tc_session_create) ms_tc_session *ms_tc_session_create(ms_model *m, const int32_t *layers, int n_layers, int n_features, int k, int ctx, int buffer_tokens,
                                                              int batch, int epochs, double lr, double seed, ms_err *err) {
    ms_tc_session_opts o = {0};
    o.n_features = n_features; o.k = k; o.ctx = ctx; o.buffer_tokens = buffer_tokens; o.batch = batch; o.epochs = epochs;
    o.train.lr = lr; o.train.seed = (uint64_t)seed;
    return ms_tc_session_new(m, layers, n_layers, &o, err);
}
/* the bytes such a session allocates over its life (a preflight; parts [4], see tc_session.h) */
API(ms_tc_session_bytes) double ms_tc_session_bytes_of(const ms_model *m, int n_layers, int n_features, int k, int ctx, int buffer_tokens, int batch, double *parts) {
    ms_tc_session_opts o = {0};
    o.n_features = n_features; o.k = k; o.ctx = ctx; o.buffer_tokens = buffer_tokens; o.batch = batch;
    return (double)ms_tc_session_bytes(m, n_layers, &o, parts);
}
API(ms_tc_session_destroy) void ms_tc_session_destroy(ms_tc_session *s) { ms_tc_session_free(s); }
API(ms_tc_feed) int ms_tc_feed(ms_tc_session *s, const int32_t *ids, int T, ms_err *err) { return ms_tc_session_feed(s, ids, T, err); }
API(ms_tc_room) int ms_tc_room(const ms_tc_session *s) { return ms_tc_session_room(s); }
API(ms_tc_train) int ms_tc_train(ms_tc_session *s, ms_err *err) { return ms_tc_session_train(s, err); }
API(ms_tc_eval_reset) int ms_tc_eval_reset(ms_tc_session *s, int replacement, ms_err *err) { return ms_tc_session_eval_reset(s, replacement, err); }
API(ms_tc_eval_feed) int ms_tc_eval_feed(ms_tc_session *s, const int32_t *ids, int T, ms_err *err) { return ms_tc_session_eval_feed(s, ids, T, err); }
API(ms_tc_report) char *ms_tc_report(const ms_tc_session *s) { return ms_tc_session_report(s); }
/* the set's manifest (returned, caller frees) and its binary file: out[0] = pointer (caller frees), out[1] = bytes */
API(ms_tc_save) char *ms_tc_save(ms_tc_session *s, const char *model_name, double *out, ms_err *err) {
    ms_buf b = {0};
    uint8_t *bin = NULL;
    size_t n = 0;
    if (ms_tc_session_save(s, model_name, &b, &bin, &n, err)) { ms_buf_free(&b); return NULL; }
    out[0] = (double)(uintptr_t)bin;
    out[1] = (double)n;
    return b.p;
}
/* a transcoder from its four arrays (f32, the layout of layers/transcoder.h: W_enc [d][F], b_enc, W_dec [F][d], b_dec) */
API(ms_tc_create) ms_transcoder *ms_tc_create(int d, int n_features, int k, const float *params, ms_err *err) {
    ms_transcoder *tc = ms_transcoder_new(d, d, n_features, k, err);
    if (!tc) return NULL;
    const size_t n = ms_transcoder_n_params(d, d, n_features);
    for (size_t i = 0; i < n; i++)
        if (!isfinite(params[i])) { ms_transcoder_free(tc); ms_fail(err, MS_E_TENSOR, "transcoder: value %zu of its weights is not a finite number", i); return NULL; }
    memcpy(tc->params, params, n * sizeof(float));
    return tc;
}
API(ms_tc_destroy) void ms_tc_destroy(ms_transcoder *tc) { ms_transcoder_free(tc); }
/* out [F + 1] (f64): each feature's decoder row and then b_dec, read along u [d] */
API(ms_tc_readout) void ms_tc_readout(const ms_transcoder *tc, const float *u, double *out) { ms_transcoder_readout(tc, u, out); }
/* feature f's decoder row (what it writes per unit of activation) into out [d] */
API(ms_tc_decoder_row) int ms_tc_decoder_row(const ms_transcoder *tc, int f, float *out, ms_err *err) {
    if (f < 0 || f >= tc->n_features) return ms_fail(err, MS_E_ARG, "transcoder feature %d is not in 0..%d", f, tc->n_features - 1);
    memcpy(out, tc->w_dec + (size_t)f * tc->d_out, (size_t)tc->d_out * sizeof(float));
    return 0;
}
API(ms_run_transcoder) int ms_run_transcoder(ms_run *r, int layer, const ms_transcoder *tc, int keep_error, int want_features, ms_err *err) {
    return ms_run_add_transcoder(r, layer, tc, keep_error, want_features, err);
}
API(ms_run_feature_edit) int ms_run_feature_edit(ms_run *r, int layer, int feature, int op, double value, const int32_t *positions, int n, ms_err *err) {
    return ms_run_add_feature_edit(r, layer, feature, op, (float)value, positions, n, err);
}
API(ms_run_features_of) const float *ms_run_features_of(const ms_run *r, int layer) { return ms_run_features(r, layer); }
