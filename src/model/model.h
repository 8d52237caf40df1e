/* The model: config + tensor table. Built from a weight-set manifest (docs/format.md): every tensor the
 * family and config require must be listed with the right shape and an allowed dtype, inside its
 * shard, without overlaps; nothing unexpected may be listed. Tensor buffers are allocated
 * individually (the wasm heap cannot hand out one multi-GB block) and filled by the host. */
#ifndef MS_MODEL_H
#define MS_MODEL_H
#include <stddef.h>
#include <stdint.h>
#include "config.h"
#include "../kernels/kernels.h"

#define MS_NAME_MAX 96

typedef struct {
    char name[MS_NAME_MAX];
    int dtype;
    int ndim;
    int64_t shape[3];
    int64_t rows, cols; /* as a matrix: rows = shape[0], cols = product of the rest */
    size_t bytes;
    int shard;
    uint64_t offset;
    void *data;
    int is_matrix; /* may be quantized */
    int prepared;  /* checked (and repacked for int8 activations, conv1d made tap-major) by ms_model_prepare */
} ms_tensor;

typedef struct {
    ms_tensor *input_norm, *post_norm; /* the mixer's and the MLP's input norms (Gemma 3: input_layernorm, pre_feedforward_layernorm) */
    ms_tensor *attn_out_norm, *mlp_out_norm; /* Gemma 3's norms on the two outputs (post_attention / post_feedforward_layernorm) */
    /* softmax attention */
    ms_tensor *wq, *wk, *wv, *wo, *q_norm, *k_norm;
    /* Gated DeltaNet */
    ms_tensor *in_qkv, *in_z, *in_b, *in_a, *conv, *dt_bias, *A_log, *gdn_norm, *out_proj;
    /* SwiGLU MLP */
    ms_tensor *gate, *up, *down;
} ms_layer;

typedef struct {
    char file[256];
    uint64_t bytes;
    char sha256[65];
} ms_shard;

typedef struct {
    char kind[32];
    char file[256];
    char sha256[65];
    uint64_t bytes;
    int vocab_size;   /* real vocabulary (<= config vocab) */
    int bos_id;       /* -1 if none */
    int eos_ids[8];
    int n_eos;
    /* the checkpoint's chat template and its special tokens (manifest tokenizer.chat; NULL: none),
     * owned by the model */
    char *chat_template, *chat_bos, *chat_eos;
} ms_tokinfo;

/* How q8_0 / q4_0 matrices (rows in fours) run. Both integer modes repack them at load time to the
 * 4-row interleaved layouts (quant.h) and run integer dot products:
 *   MS_ACT_INT8   activations rounded to int8 per block of 32 (the default: fastest; llama.cpp does
 *                 the same for these block types)
 *   MS_ACT_EXACT  activations split into two 16-bit codes per value: exact up to f32 rounding
 *   MS_ACT_PLAIN  no repack: the plain layouts with f32 activations (the reference kernels) */
/* X(ID, name): one row per mode, in code order; the engine lists them by name (engine info
 * "activations", index = code), which is how the JS side names them */
#define MS_ACT_LIST(X) X(PLAIN, "plain") X(INT8, "int8") X(EXACT, "exact")
typedef enum {
#define MS_X(id, name) MS_ACT_##id,
    MS_ACT_LIST(MS_X)
#undef MS_X
    MS_ACT__COUNT
} ms_activations;

typedef struct ms_model {
    ms_config cfg;
    ms_tensor *tensors;
    int n_tensors;
    ms_layer layers[MS_MAX_LAYERS];
    ms_tensor *embed, *final_norm, *lm_head; /* lm_head == embed when tied */
    ms_shard *shards;
    int n_shards;
    ms_tokinfo tok;
    size_t weight_bytes;
    int allocated, finalized;
    int activations;      /* ms_activations: how q8_0/q4_0 matrices meet their inputs */
    ms_kernels kern;
    struct ms_pool *pool; /* threads for the matmuls (util/threads.h); NULL: one thread. Not owned. */
} ms_model;

/* Loading a weight set, the one sequence every host runs (js/weightset.js through src/api/api.c,
 * tools/native_host.c): ms_model_open; for each shard, the host writes its bytes where
 * ms_model_shard_layout says and checks them against the manifest's size and sha256, then
 * ms_model_finish_shard (checked and laid out while other shards are still arriving); at the end
 * ms_model_finish. `activations` (ms_activations) must be the same in every call.
 * ms_model_open: the manifest parsed and validated (allocate=0: the table only, for a memory
 * preflight) with the kernels of `simd` (0: the portable C ones). */
ms_model *ms_model_open(const char *manifest, size_t len, int allocate, int simd, ms_err *err);
int ms_model_finish_shard(ms_model *m, int shard, int activations, ms_err *err);
int ms_model_finish(ms_model *m, int activations, ms_err *err);

/* Parse + validate a manifest. With allocate=0 nothing but the table is allocated (preflight). */
ms_model *ms_model_from_manifest(const char *text, size_t len, int allocate, ms_err *err);
void ms_model_free(ms_model *m);
/* After the host filled the tensors of shard `shard` (or of every shard: shard < 0): checks their
 * values (finite) and, with int8 activations, repacks q8_0/q4_0 matrices to the 4-row interleaved
 * layouts. Tensors already prepared are skipped, so a loader can prepare each shard as it arrives
 * while others are still being read. */
int ms_model_prepare(ms_model *m, int shard, ms_err *err);
/* Chooses the activation mode (before the first ms_model_prepare; the same in every later call). */
int ms_model_set_activations(ms_model *m, int mode, ms_err *err);
/* The kernels of `level` (kernels.h MS_ISA_*): MS_ISA_RELAXED only where the host linked the
 * relaxed module in; the activation mode keeps its kernels (exact stays exact). */
int ms_model_set_kernels(ms_model *m, int level, ms_err *err);
/* Times the SIMD128 kernel of q8_0x4 weights with int8 activations and that of `level` (a relaxed
 * one: the host has linked it in) on one of the model's own laid-out matrices (the largest of at
 * most 4M weights, its first 1024 rows at most) for T tokens: the best of `reps` samples each
 * (a sample: as many calls as fill ~2 ms), alternating, after 40 ms of untimed rounds. A model without such a matrix gets out->tensor = -1. */
typedef struct { int tensor, rows, cols; double simd128_ms, level_ms; } ms_kernel_timing;
int ms_model_time_kernels(ms_model *m, int level, int T, int reps, ms_kernel_timing *out, ms_err *err);
/* After the host filled every tensor buffer: prepares what is left; the model is ready to run. */
int ms_model_finalize(ms_model *m, ms_err *err);
ms_tensor *ms_model_find(ms_model *m, const char *name);
/* The tensors (names, shapes, matrix or not) a family + config require, in canonical order.
 * The caller frees *out. Returns 0 on allocation failure. */
int ms_model_specs(const ms_config *c, ms_tensor **out, int *n);
/* Parameter counts (embedding counted once when tied). */
typedef struct { int64_t total, embedding, mlp, mixer, norms, head; } ms_param_counts;
void ms_model_count(const ms_model *m, ms_param_counts *pc);
/* the same over a tensor list (ms_model_specs: a config's tensors, before any weights exist) */
void ms_tensors_count(const ms_tensor *ts, int n_tensors, ms_param_counts *pc);
/* Bytes the runtime state needs for a context of n_ctx tokens and batches of up to n_batch. */
size_t ms_state_bytes(const ms_config *c, int n_ctx, int n_batch);
/* ... exactly, as ms_state_create allocates it with n_threads work areas (ms_state_bytes: one) */
size_t ms_state_bytes_threads(const ms_config *c, int n_ctx, int n_batch, int n_threads);
/* Fetch row `row` of a (possibly quantized) matrix tensor as float. */
void ms_tensor_row_f32(const ms_tensor *t, int64_t row, float *out);
/* One element of a matrix as the kernels read it (row, col in range: the caller checks). */
float ms_tensor_get(const ms_tensor *t, int64_t row, int64_t col);
/* Sets one element of a matrix to exactly 0 in its own dtype (a zero code in a quantized block, the
 * block's scale kept) and returns the bits that put it back with ms_tensor_restore: an edit of
 * the weights in place, for ablations such as removing a single weight. */
uint32_t ms_tensor_zero(ms_tensor *t, int64_t row, int64_t col);
void ms_tensor_restore(ms_tensor *t, int64_t row, int64_t col, uint32_t saved);
/* The matrix `name` of the model with (row, col) in range, or E_ARG naming what is wrong. */
int ms_model_weight_at(ms_model *m, const char *name, int64_t row, int64_t col, ms_tensor **out, ms_err *err);
/* Segments of shard s: for each tensor in it, [offset, bytes, heap pointer] as doubles, sorted by
 * offset (the loader copies a shard's bytes straight into place). out: 3 * n_tensors doubles. */
int ms_model_shard_layout(const ms_model *m, int s, double *out);
#endif
