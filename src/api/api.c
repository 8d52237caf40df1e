/* The C ABI exported to JS: thin wrappers, no logic. Pointers and sizes cross as 32-bit ints;
 * 64-bit quantities as doubles. Every function that can fail takes an ms_err*. */
#include "../stats/attribution.h"
#include "../engine/forward.h"
#include "../engine/sample.h"
#include "../io/convert.h"
#include "../io/hf_config.h"
#include "../kernels/dtype.h"
#include "../kernels/quant.h"
#include "../tokenizer/tokenizer.h"
#include "../tokenizer/chat.h"
#include "../tokenizer/pretokenize.h"
#include "../tokenizer/unicode.h"
#include "../util/threads.h"
#include "../util/json.h"
#include "../util/sha256.h"
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

/* ---- model ---- */
API(ms_model_create) ms_model *ms_model_create(const char *text, size_t len, int allocate, int simd, ms_err *err) {
    ms_model *m = ms_model_from_manifest(text, len, allocate, err);
    if (m) ms_kernels_init(&m->kern, simd);
    return m;
}
API(ms_model_destroy) void ms_model_destroy(ms_model *m) { ms_model_free(m); }
/* Shard s is in place (hash checked): check and lay out its tensors now, while other shards are
 * still arriving. activations (ms_activations) must be the same in every call and in ms_model_finish. */
API(ms_model_finish_shard) int ms_model_finish_shard(ms_model *m, int s, int activations, ms_err *err) {
    if (s < 0) return ms_fail(err, MS_E_ARG, "shard %d: not a shard index", s);
    if (m->finalized) return ms_fail(err, MS_E_STATE, "model is already finished");
    if (ms_model_set_activations(m, activations, err)) return err->code;
    return ms_model_prepare(m, s, err);
}
API(ms_model_finish) int ms_model_finish(ms_model *m, int activations, ms_err *err) {
    if (ms_model_set_activations(m, activations, err)) return err->code;
    return ms_model_finalize(m, err);
}
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
API(ms_model_shard_segments) int ms_model_shard_segments(const ms_model *m, int s, double *out) {
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
API(ms_model_n_tensors) int ms_model_n_tensors(const ms_model *m) { return m->n_tensors; }

/* Model description as JSON (config, counts, dtypes, shards, tokenizer). Caller frees. */
API(ms_model_info) char *ms_model_info(const ms_model *m) {
    const ms_config *c = &m->cfg;
    ms_param_counts pc;
    ms_model_count(m, &pc);
    ms_buf b = {0};
    ms_buf_printf(&b, "{\"family\":\"%s\",\"kernels\":\"%s\",\"config\":{\"hidden_size\":%d,\"intermediate_size\":%d,"
                      "\"num_hidden_layers\":%d,\"vocab_size\":%d,\"max_position_embeddings\":%d,\"num_attention_heads\":%d,"
                      "\"num_key_value_heads\":%d,\"head_dim\":%d,\"rotary_dim\":%d,\"rope_theta\":%.17g,\"rms_norm_eps\":%.9g,"
                      "\"tie_word_embeddings\":%s,\"rope_layout\":\"%s\",\"linear_num_key_heads\":%d,\"linear_num_value_heads\":%d,"
                      "\"linear_key_head_dim\":%d,\"linear_value_head_dim\":%d,\"linear_conv_kernel_dim\":%d,\"layer_types\":[",
                  ms_family_name(c->family), m->kern.name, c->hidden, c->intermediate, c->n_layers, c->vocab, c->max_pos,
                  c->n_heads, c->n_kv_heads, c->head_dim, c->rotary_dim, c->rope_theta, (double)c->eps, c->tied ? "true" : "false",
                  c->rope_layout == MS_ROPE_PAIRS ? "pairs" : "halves", c->lin_k_heads, c->lin_v_heads, c->lin_k_dim,
                  c->lin_v_dim, c->conv_kernel);
    for (int l = 0; l < c->n_layers; l++)
        ms_buf_printf(&b, "%s\"%s\"", l ? "," : "", c->mixer[l] == MS_MIXER_GDN ? "linear_attention" : "full_attention");
    ms_buf_printf(&b, "]},\"params\":{\"total\":%lld,\"embedding\":%lld,\"mlp\":%lld,\"mixer\":%lld,\"norms\":%lld,\"lm_head\":%lld},"
                      "\"weight_bytes\":%zu,\"tokenizer\":{\"kind\":\"%s\",\"file\":\"%s\",\"sha256\":\"%s\",\"bytes\":%llu,"
                      "\"vocab_size\":%d,\"bos_token_id\":%d,\"eos_token_ids\":[",
                  (long long)pc.total, (long long)pc.embedding, (long long)pc.mlp, (long long)pc.mixer, (long long)pc.norms,
                  (long long)pc.head, m->weight_bytes, m->tok.kind, m->tok.file, m->tok.sha256, (unsigned long long)m->tok.bytes,
                  m->tok.vocab_size, m->tok.bos_id);
    for (int i = 0; i < m->tok.n_eos; i++) ms_buf_printf(&b, "%s%d", i ? "," : "", m->tok.eos_ids[i]);
    ms_buf_puts(&b, "]},\"shards\":[");
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

/* ---- state and forward ---- */
API(ms_state_new) ms_state *ms_state_new(const ms_model *m, int ctx, int batch, ms_err *err) { return ms_state_create(m, ctx, batch, err); }
API(ms_state_destroy) void ms_state_destroy(ms_state *s) { ms_state_free(s); }
API(ms_state_clear) void ms_state_clear(ms_state *s) { ms_state_reset(s); }
API(ms_state_pos) int ms_state_pos(const ms_state *s) { return s->pos; }
API(ms_state_set_gdn) void ms_state_set_gdn(ms_state *s, int recurrent, int chunk) {
    s->gdn_recurrent = recurrent;
    if (chunk >= 1 && chunk <= MS_GDN_CHUNK_MAX) s->gdn_chunk = chunk;
}

typedef struct {
    ms_state *s;
    int T;
    ms_stats *stats;
    ms_capture cap[64];
    ms_intervention iv[64];
    int32_t *iv_neurons[64];
    ms_forward_opts o;
    float *logits;
} ms_run;

API(ms_run_new) ms_run *ms_run_new(ms_state *s, int T, int want_stats, int topk, int logits_mode, ms_err *err) {
    const ms_config *c = &s->m->cfg;
    ms_run *r = calloc(1, sizeof *r);
    if (!r) { ms_fail(err, MS_E_MEMORY, "out of memory"); return NULL; }
    r->s = s;
    r->T = T;
    if (T < 1) { free(r); ms_fail(err, MS_E_ARG, "empty input: at least one token is needed"); return NULL; }
    if (want_stats) {
        r->stats = ms_stats_create(c, T, topk);
        if (!r->stats) { free(r); ms_fail(err, topk < 0 || topk > c->intermediate ? MS_E_ARG : MS_E_MEMORY, "cannot create statistics (topK %d)", topk); return NULL; }
    }
    if (logits_mode) {
        size_t n = (size_t)c->vocab * (logits_mode == 2 ? (size_t)T : 1);
        r->logits = malloc(n * sizeof(float));
        if (!r->logits) { ms_stats_free(r->stats); free(r); ms_fail(err, MS_E_MEMORY, "cannot allocate logits (%zu floats)", n); return NULL; }
    }
    r->o.stats = r->stats;
    r->o.logits = r->logits;
    r->o.logits_all = logits_mode == 2;
    r->o.captures = r->cap;
    r->o.interventions = r->iv;
    return r;
}

API(ms_run_capture) float *ms_run_capture(ms_run *r, int layer, int hook, ms_err *err) {
    const ms_config *c = &r->s->m->cfg;
    if (r->o.n_captures >= 64) { ms_fail(err, MS_E_ARG, "at most 64 hooks per call"); return NULL; }
    if (layer < 0 || layer >= c->n_layers || hook < 0 || hook >= MS_HOOK__COUNT) { ms_fail(err, MS_E_ARG, "no hook %d in layer %d", hook, layer); return NULL; }
    float *dst = malloc((size_t)r->T * (size_t)ms_hook_width(c, hook) * sizeof(float));
    if (!dst) { ms_fail(err, MS_E_MEMORY, "cannot allocate hook buffer"); return NULL; }
    r->cap[r->o.n_captures++] = (ms_capture){layer, hook, dst};
    return dst;
}

API(ms_run_intervene) int ms_run_intervene(ms_run *r, int layer, int hook, const int32_t *neurons, int n, float scale, ms_err *err) {
    if (r->o.n_interventions >= 64) return ms_fail(err, MS_E_ARG, "at most 64 interventions per call");
    if (n < 0 || n > (1 << 20)) return ms_fail(err, MS_E_ARG, "bad neuron count");
    int32_t *cp = malloc((size_t)(n ? n : 1) * sizeof *cp);
    if (!cp) return ms_fail(err, MS_E_MEMORY, "out of memory");
    if (n) memcpy(cp, neurons, (size_t)n * sizeof *cp);
    int k = r->o.n_interventions++;
    r->iv_neurons[k] = cp;
    r->iv[k] = (ms_intervention){layer, hook, cp, n, scale};
    return MS_OK;
}

API(ms_mlp_down_column) int ms_mlp_down_column_api(ms_model *m, int layer, int neuron, float *out, ms_err *err) { return ms_mlp_down_column(m, layer, neuron, out, err); }
API(ms_unembed_direction) int ms_unembed_direction_api(ms_model *m, const float *v, float *logits, ms_err *err) { return ms_unembed_direction(m, v, logits, err); }
API(ms_run_exec) int ms_run_exec(ms_run *r, const int32_t *ids, ms_err *err) { return ms_forward(r->s, ids, r->T, &r->o, err); }
API(ms_run_logits) float *ms_run_logits(ms_run *r) { return r->logits; }
/* which: 0 resid_pre 1 attn_out 2 resid_mid 3 mlp_out 4 resid_post 5 ratio 6 top_idx 7 top_val
 *        8 layer_ms (double) 9 gdn_state_norm 10 gdn_decay 11 gdn_beta */
API(ms_run_stat) void *ms_run_stat(ms_run *r, int which) {
    ms_stats *st = r->stats;
    if (!st) return NULL;
    void *p[12] = {st->resid_pre_l2, st->attn_out_l2, st->resid_mid_l2, st->mlp_out_l2, st->resid_post_l2, st->mlp_ratio,
                   st->top_idx, st->top_val, st->layer_ms, st->gdn_state_norm, st->gdn_decay, st->gdn_beta};
    return which >= 0 && which < 12 ? p[which] : NULL;
}
API(ms_run_free) void ms_run_free(ms_run *r) {
    if (!r) return;
    for (int i = 0; i < r->o.n_captures; i++) free(r->cap[i].dst);
    for (int i = 0; i < r->o.n_interventions; i++) free(r->iv_neurons[i]);
    ms_stats_free(r->stats);
    free(r->logits);
    free(r);
}
/* final norm + head of an arbitrary residual vector (logit lens) */
API(ms_unembed_vec) void ms_unembed_vec(ms_state *s, const float *resid, float *logits) { ms_unembed(s, resid, logits); }

/* ---- sampling ---- */
API(ms_rng_new) uint64_t *ms_rng_new(double seed) {
    uint64_t *r = malloc(sizeof *r);
    /* a seed outside [0, 2^64) (or NaN) would make the conversion undefined: such seeds mean 0 */
    if (r) *r = ms_rng_seed(seed >= 0 && seed < 18446744073709551616.0 ? (uint64_t)seed : 0);
    return r;
}
API(ms_sample_next) int ms_sample_next(const float *logits, int n, float temperature, int top_k, float top_p, uint64_t *rng,
                                        float *logprob, float *scratch) {
    ms_kernels k;
    ms_kernels_init(&k, 1);
    return ms_sample(logits, n, temperature, top_k, top_p, rng, logprob, scratch, k.exp_sum);
}

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
/* Renders a JSON message list with the tokenizer's chat template; returns a malloc'd string
 * (length in *len) or NULL with err set. */
API(ms_tok_chat) char *ms_tok_chat(const ms_tokenizer *t, const char *msgs, size_t n, int add_gen, int thinking, size_t *len, ms_err *err) {
    char *out = NULL;
    if (ms_chat_render(ms_tokenizer_chat_kind(t), msgs, n, add_gen, thinking, &out, len, err)) return NULL;
    return out;
}
/* Pre-tokenization of (NFC) text into pieces: writes piece end offsets (bytes) into ends[cap];
 * returns the count, or -1 if cap is too small. One piece for tokenizers without a pre-tokenizer. */
API(ms_tok_pretokenize) int ms_tok_pretokenize(const ms_tokenizer *t, const char *s, size_t n, int32_t *ends, int cap) {
    int k = 0;
    if (t->kind != MS_TOK_BPE) { if (cap < 1) return -1; ends[0] = (int32_t)n; return n ? 1 : 0; }
    for (size_t i = 0; i < n;) {
        size_t l = ms_pretok_next((int)t->bpe.pretok, s, n, i);
        if (!l) l = 1;
        if (k >= cap) return -1;
        i += l;
        ends[k++] = (int32_t)i;
    }
    return k;
}
/* tokenizer.json (+ tokenizer_config.json, may be empty) -> bpe-bytelevel bytes (malloc'd) */
API(ms_tok_import) uint8_t *ms_tok_import(const char *tj, size_t tl, const char *cj, size_t cl, size_t *out_len, ms_err *err) {
    uint8_t *out = NULL;
    if (ms_bpe_import(tj, tl, cl ? cj : NULL, cl, &out, out_len, NULL, err)) return NULL;
    return out;
}

/* ---- sha256 ---- */
API(ms_sha_new) ms_sha256 *ms_sha_new(void) {
    ms_sha256 *s = malloc(sizeof *s);
    if (s) ms_sha256_init(s);
    return s;
}
API(ms_sha_update) void ms_sha_update(ms_sha256 *s, const void *p, size_t n) { ms_sha256_update(s, p, n); }
API(ms_sha_final) void ms_sha_final(ms_sha256 *s, char *hex65) {
    uint8_t d[32];
    ms_sha256_final(s, d);
    ms_sha256_hex(d, hex65);
}

/* ---- converter (host I/O through imported functions; wasm only) ---- */
#ifdef __wasm__
#define IMPORT(n) __attribute__((import_module("env"), import_name(#n)))
extern int ms_host_open(const char *name, int mode) IMPORT(ms_host_open);
extern int ms_host_close(int h) IMPORT(ms_host_close);
extern double ms_host_size(int h) IMPORT(ms_host_size);
extern int ms_host_read(int h, double off, void *buf, size_t n) IMPORT(ms_host_read);
extern int ms_host_write(int h, const void *buf, size_t n) IMPORT(ms_host_write);
extern void ms_host_log(const char *line) IMPORT(ms_host_log);
static int io_open(void *c, const char *n, int mode) { (void)c; return ms_host_open(n, mode); }
static int io_close(void *c, int h) { (void)c; return ms_host_close(h); }
static int64_t io_size(void *c, int h) { (void)c; return (int64_t)ms_host_size(h); }
static int io_read(void *c, int h, uint64_t off, void *b, size_t n) { (void)c; return ms_host_read(h, (double)off, b, n); }
static int io_write(void *c, int h, const void *b, size_t n) { (void)c; return ms_host_write(h, b, n); }
static void io_log(void *c, const char *l) { (void)c; ms_host_log(l); }

/* Convert a llama2.c checkpoint (tok: its tokenizer.bin, or "") or, when hf_dir is set, a Hugging
 * Face model folder. */
API(ms_convert) int ms_convert(const char *src, const char *tok, int hf_dir, int dtype, int embed_dtype, double shard_bytes, ms_err *err) {
    ms_io io = {NULL, io_open, io_close, io_size, io_read, io_write, io_log};
    ms_conv_plan p;
    int rc = hf_dir ? ms_plan_hf(&p, &io, src, err) : ms_plan_llama2c(&p, &io, src, tok && *tok ? tok : NULL, err);
    ms_conv_opts o = {.dtype = dtype, .embed_dtype = embed_dtype, .shard_bytes = (uint64_t)shard_bytes};
    if (rc) { ms_plan_free(&p); return rc; }
    return ms_convert_finish(&p, &io, &o, err);
}

/* Synthetic weight set from a config (JSON text or a preset name) into the host's output folder. */
API(ms_synth) int ms_synth(const char *config_or_preset, size_t len, double seed, int dtype, int embed_dtype, double shard_bytes, ms_err *err) {
    ms_io io = {NULL, io_open, io_close, io_size, io_read, io_write, io_log};
    const char *preset = ms_config_preset(config_or_preset);
    ms_conv_plan p;
    int rc = ms_plan_synth(&p, preset ? preset : config_or_preset, preset ? strlen(preset) : len, (uint64_t)seed, err);
    ms_conv_opts o = {.dtype = dtype, .embed_dtype = embed_dtype, .shard_bytes = (uint64_t)shard_bytes};
    if (rc) { ms_plan_free(&p); return rc; }
    return ms_convert_finish(&p, &io, &o, err);
}
#endif
API(ms_dtype_id) int ms_dtype_id(const char *name) { return ms_dtype_from_name(name); }

/* ---- kernel access for tests: quantize rows, run one matmul with a chosen kernel set ---- */
API(ms_dbg_weight_bytes) double ms_dbg_weight_bytes(int dtype, int rows, int cols) { return (double)ms_dtype_bytes(dtype, (size_t)rows, (size_t)cols); }
API(ms_dbg_quantize) int ms_dbg_quantize(int dtype, const float *src, int rows, int cols, void *dst) {
    float *tmp = malloc((size_t)cols * sizeof(float));
    if (!tmp) return -1;
    const int file_dtype = dtype == MS_Q8_0X4 ? MS_Q8_0 : dtype == MS_Q4_0X4 ? MS_Q4_0 : dtype;
    int rc = ms_convert_rows(src, MS_F32, dst, file_dtype, (size_t)rows, (size_t)cols, tmp);
    if (!rc && file_dtype != dtype) { /* then the load-time repack */
        void *t2 = rows % 4 ? NULL : malloc(4 * ms_dtype_bytes(file_dtype, 1, (size_t)cols));
        if (!t2) rc = -1;
        else if ((dtype == MS_Q8_0X4 ? ms_repack_q8_0x4 : ms_repack_q4_0x4)(dst, (size_t)rows, (size_t)cols, t2) != SIZE_MAX) rc = -1;
        free(t2);
    }
    free(tmp);
    return rc;
}
API(ms_dbg_matmul) void ms_dbg_matmul(int dtype, int simd, const void *W, int rows, int cols, const float *X, int T, float *Y) {
    ms_kernels k;
    ms_kernels_init(&k, simd);
    k.matmul[dtype](W, (size_t)rows, (size_t)cols, X, T, Y);
}

/* the exact-activation kernel of a dtype (kernels.h matmul_exact; differs for the x4 layouts) */
API(ms_dbg_matmul_exact) void ms_dbg_matmul_exact(int dtype, int simd, const void *W, int rows, int cols, const float *X, int T, float *Y) {
    ms_kernels k;
    ms_kernels_init(&k, simd);
    k.matmul_exact[dtype](W, (size_t)rows, (size_t)cols, X, T, Y);
}

API(ms_dbg_gemm_acc) void ms_dbg_gemm_acc(int simd, float *Out, int os, const float *A, int ars, int acs, const float *B, int bs, int M, int K, int N, float sign) {
    ms_kernels k;
    ms_kernels_init(&k, simd);
    k.gemm_acc(Out, (size_t)os, A, (size_t)ars, (size_t)acs, B, (size_t)bs, M, K, N, sign);
}

API(ms_dbg_dot_rows) void ms_dbg_dot_rows(int simd, float *y, const float *x, const float *A, int stride, int n, int k, float scale) {
    ms_kernels k_;
    ms_kernels_init(&k_, simd);
    k_.dot_rows(y, x, A, (size_t)stride, (size_t)n, (size_t)k, scale);
}

API(ms_dbg_silu_mul) void ms_dbg_silu_mul(int simd, float *y, const float *g, const float *u, int n) {
    ms_kernels k;
    ms_kernels_init(&k, simd);
    k.silu_mul(y, g, u, (size_t)n);
}

API(ms_dbg_sumsq) double ms_dbg_sumsq(int simd, const float *x, int n) {
    ms_kernels k;
    ms_kernels_init(&k, simd);
    return k.sumsq(x, (size_t)n);
}

API(ms_dbg_exp_sum) double ms_dbg_exp_sum(int simd, float *y, const float *x, int n, float shift, float scale) {
    ms_kernels k;
    ms_kernels_init(&k, simd);
    return k.exp_sum(y, x, (size_t)n, shift, scale);
}

#ifdef __wasm_simd128__
/* ---- bench/ helpers ---- */
int32_t ms_bench_stream(const void *p, size_t bytes, int reps);
void ms_bench_to_ggml_q8_0(const ms_block_q8_0 *src, void *dst, size_t nblocks);
void ms_bench_ggml_q8_0_matvec(const void *W, size_t rows, size_t cols, const float *x, float *y, int8_t *xq, float *xd);
API(ms_bench_stream_bytes) int32_t ms_bench_stream_bytes(const void *p, size_t bytes, int reps) { return ms_bench_stream(p, bytes, reps); }
/* the read probe on every thread of a pool at once, each on its own part of the buffer: the
 * bandwidth threaded decode can draw on, measured in wasm like the one-thread figure */
typedef struct { const uint8_t *p; size_t bytes; int reps; } bench_stream_job;
static void bench_stream_part(void *ctx, int part, int n_parts) {
    const bench_stream_job *j = ctx;
    const size_t per = j->bytes / (size_t)n_parts / 64 * 64;
    volatile int32_t sink = ms_bench_stream(j->p + (size_t)part * per, per, j->reps);
    (void)sink;
}
API(ms_bench_stream_pool) void ms_bench_stream_pool(ms_pool *pool, const void *p, size_t bytes, int reps) {
    bench_stream_job j = {p, bytes, reps};
    ms_pool_run(pool, bench_stream_part, &j);
}
API(ms_bench_ggml_prep) void ms_bench_ggml_prep(const void *q8, void *dst, size_t nblocks) { ms_bench_to_ggml_q8_0(q8, dst, nblocks); }
API(ms_bench_ggml_matvec) void ms_bench_ggml_matvec(const void *W, int rows, int cols, const float *x, float *y, int8_t *xq, float *xd) {
    ms_bench_ggml_q8_0_matvec(W, (size_t)rows, (size_t)cols, x, y, xq, xd);
}
#endif
