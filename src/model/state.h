/* Per-sequence runtime state: KV cache for attention layers, conv + recurrent state for Gated
 * DeltaNet layers, and scratch buffers for a batch of up to n_batch tokens. All sized once at
 * creation from the config: the forward pass never allocates. */
#ifndef MS_STATE_H
#define MS_STATE_H
#include "model.h"

typedef struct ms_state {
    const ms_model *m;
    int n_ctx, n_batch, pos;
    int gdn_chunk;      /* chunk size of the chunked GDN prefill, 1..MS_GDN_CHUNK_MAX */
    int gdn_recurrent;  /* 1: always use the token-by-token recurrence (reference) */
    float *k_cache[MS_MAX_LAYERS], *v_cache[MS_MAX_LAYERS]; /* [n_ctx][kv_dim] */
    float *conv_state[MS_MAX_LAYERS];                       /* [conv_kernel-1][conv_dim] raw rows */
    float *S[MS_MAX_LAYERS];                                /* [Hv][dk][dv] */
    /* batch scratch */
    float *x, *xn, *mix_out, *mlp_out;  /* [B][H] */
    float *gate, *up;                   /* [B][I] */
    float *qg, *k, *v, *o;              /* attention */
    float *mixed, *z, *ba, *y, *core;   /* GDN projections, conv output, core output */
    float *gdn_beta, *gdn_g;            /* [B][Hv] */
    float *chunk;                       /* chunked GDN work areas, one per thread */
    float *att_work;                    /* attention work areas (scores), one per thread */
    int n_work;                         /* how many (the model's threads when the state was made) */
    float *row;                         /* [max(H, I)] */
    double *gdn_norm2;                  /* [B][Hv] squared state norms (stats) */
    float *arena;
    size_t bytes;
} ms_state;

ms_state *ms_state_create(const ms_model *m, int n_ctx, int n_batch, ms_err *err);
void ms_state_free(ms_state *s);
void ms_state_reset(ms_state *s); /* back to position 0, caches cleared */
/* How Gated DeltaNet layers run a prefill: chunks of `chunk` tokens (1..MS_GDN_CHUNK_MAX) or,
 * recurrent, token by token (the reference definition) */
int ms_state_set_gdn_mode(ms_state *s, int recurrent, int chunk, ms_err *err);
size_t ms_state_chunk_floats(const ms_config *c, int chunk);
/* The model's thread pool if this state has a work area for each of its threads, else NULL (run
 * on the calling thread): layers that share work over threads with per-thread scratch use it. */
struct ms_pool *ms_state_pool(const ms_state *s);
/* queries per block of the prefill attention, and the floats of one thread's work area for it */
#define MS_ATTN_BLOCK 32
/* Gated DeltaNet chunk: the work areas fit the largest; 32 measured fastest (docs/decisions.md) */
#define MS_GDN_CHUNK_MAX 64
#define MS_GDN_CHUNK_DEFAULT 32
size_t ms_state_attn_floats(const ms_config *c, int n_ctx);
#endif
