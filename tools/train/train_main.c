/* mlpscope-train: learns a byte-level BPE vocabulary from a text corpus, trains the demo model
 * (llama family, SwiGLU MLP) on both cores, and writes weight sets (f32 and q8) with the tokenizer.
 *   mlpscope-train --train T.txt --val V.txt --out DIR [--steps N] [--threads 2] [--seed S]
 *                  [--ckpt FILE] [--resume] [--log FILE] ...   (see usage())
 *   mlpscope-train --logits CKPT --ids 1,2,3     trainer-side logits of the last token (tests) */
#define _GNU_SOURCE
#include "train_core.c"
#include "../../src/io/convert.h"
#include "../../src/kernels/dtype.h"
#include "../../src/tokenizer/tokenizer.h"
#include "../../src/tokenizer/pretokenize.h"
#include "../../src/util/json.h"
#include "../native_host.h"
#include <pthread.h>
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>

typedef struct {
    const char *train, *val, *out, *ckpt, *log;
    int vocab, steps, threads, batch, eval_every, ckpt_every, resume, eval_windows;
    uint64_t seed;
    double drop, adrop;
    double noise;     /* --input-noise: the probability that an input token is replaced by a random one */
    double noise_end; /* --input-noise-end: the probability at the last step (linear from --input-noise) */
    double noise_share; /* --noise-share: the share of the training sequences that get input noise (others stay clean) */
    double gate_init; /* standard deviation of the initial gate matrix w1 */
    long bpe_bytes;   /* --bpe-bytes: learn the vocabulary from the first N bytes of --train (0: all of it) */
    int stop_at;      /* stop after this step with a checkpoint, as an interruption would (0: run to --steps) */
    tcfg c;
    tadam o;
} opts_t;

/* The trainer is a command-line tool: when memory runs out it says how much, for what, and exits. */
static void *xmalloc(size_t n, const char *what) {
    void *p = malloc(n ? n : 1);
    if (!p) { fprintf(stderr, "mlpscope-train: out of memory (%zu bytes for %s)\n", n, what); exit(1); }
    return p;
}
static void *xcalloc(size_t n, size_t size, const char *what) {
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p) { fprintf(stderr, "mlpscope-train: out of memory (%zu × %zu bytes for %s)\n", n, size, what); exit(1); }
    return p;
}

static double now_s(void) { struct timespec ts; clock_gettime(CLOCK_MONOTONIC, &ts); return ts.tv_sec + ts.tv_nsec * 1e-9; }
static uint64_t rnd(uint64_t *s) { *s ^= *s << 13; *s ^= *s >> 7; *s ^= *s << 17; return *s; }
static double gauss(uint64_t *s) {
    double u1 = ((rnd(s) >> 11) + 1.0) / 9007199254740993.0, u2 = (rnd(s) >> 11) / 9007199254740992.0;
    return sqrt(-2 * log(u1)) * cos(2 * 3.14159265358979323846 * u2);
}

/* ---------------- BPE vocabulary learning ---------------- */
typedef struct { uint8_t *b; uint32_t n; uint32_t count; uint32_t *sym; uint32_t nsym; } word;

static uint64_t fnv(const uint8_t *p, size_t n) { uint64_t h = 1469598103934665603ull; for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ull; return h; }

/* Learns vocab-1 tokens (256 bytes + merges) + <|endoftext|>; writes the bpe-bytelevel blob. */
static uint8_t *learn_bpe(const char *text, size_t n, int vocab, size_t *out_len) {
    /* count pre-tokenized pieces (Qwen2 pattern) */
    uint32_t cap = 1 << 20, nw = 0;
    word *w = xcalloc(cap, sizeof *w, "the BPE word table");
    uint32_t *slot = xmalloc(cap * 2 * sizeof *slot, "the BPE word index");
    memset(slot, 0xFF, cap * 2 * sizeof *slot);
    for (size_t i = 0; i < n;) {
        size_t l = ms_pretok_next(MS_PRE_QWEN2, text, n, i);
        if (!l) l = 1;
        uint64_t h = fnv((const uint8_t *)text + i, l);
        uint32_t k = (uint32_t)h & (cap * 2 - 1);
        while (slot[k] != UINT32_MAX && !(w[slot[k]].n == l && !memcmp(w[slot[k]].b, text + i, l))) k = (k + 1) & (cap * 2 - 1);
        if (slot[k] == UINT32_MAX) {
            if (nw == cap) { fprintf(stderr, "mlpscope-train: more than %u distinct pre-tokenized words to learn the vocabulary from; take fewer bytes with --bpe-bytes N\n", cap); exit(2); }
            slot[k] = nw;
            w[nw].b = xmalloc(l, "a BPE word");
            memcpy(w[nw].b, text + i, l);
            w[nw].n = (uint32_t)l;
            w[nw].sym = xmalloc(l * sizeof(uint32_t), "a BPE word");
            for (size_t q = 0; q < l; q++) w[nw].sym[q] = (uint8_t)text[i + q];
            w[nw].nsym = (uint32_t)l;
            nw++;
        }
        w[slot[k]].count++;
        i += l;
    }
    free(slot);
    int nmerge = vocab - 256 - 1;
    uint32_t (*merges)[3] = xmalloc((size_t)nmerge * sizeof *merges, "the BPE merges");
    uint8_t **tokb = xcalloc((size_t)vocab, sizeof *tokb, "the vocabulary");
    uint32_t *tokn = xcalloc((size_t)vocab, sizeof *tokn, "the vocabulary");
    for (int b = 0; b < 256; b++) { tokb[b] = xmalloc(1, "the vocabulary"); tokb[b][0] = (uint8_t)b; tokn[b] = 1; }
    /* pair counts in a dense table over current ids (vocab <= 4096 keeps it small) */
    uint64_t *pc = xmalloc((size_t)vocab * vocab * sizeof *pc, "the BPE pair counts");
    for (int m = 0; m < nmerge; m++) {
        int cur = 256 + m;
        memset(pc, 0, (size_t)cur * vocab * sizeof *pc);
        for (uint32_t q = 0; q < nw; q++)
            for (uint32_t j = 0; j + 1 < w[q].nsym; j++) pc[(size_t)w[q].sym[j] * vocab + w[q].sym[j + 1]] += w[q].count;
        uint64_t best = 0;
        size_t bi = 0;
        for (size_t x = 0; x < (size_t)cur * vocab; x++) if (pc[x] > best) { best = pc[x]; bi = x; } /* ties: lowest ids */
        if (!best) { nmerge = m; break; }
        uint32_t a = (uint32_t)(bi / vocab), b = (uint32_t)(bi % vocab);
        merges[m][0] = a; merges[m][1] = b; merges[m][2] = (uint32_t)cur;
        tokn[cur] = tokn[a] + tokn[b];
        tokb[cur] = xmalloc(tokn[cur], "the vocabulary");
        memcpy(tokb[cur], tokb[a], tokn[a]);
        memcpy(tokb[cur] + tokn[a], tokb[b], tokn[b]);
        for (uint32_t q = 0; q < nw; q++) {
            uint32_t o = 0;
            for (uint32_t j = 0; j < w[q].nsym; j++) {
                if (j + 1 < w[q].nsym && w[q].sym[j] == a && w[q].sym[j + 1] == b) { w[q].sym[o++] = (uint32_t)cur; j++; }
                else w[q].sym[o++] = w[q].sym[j];
            }
            w[q].nsym = o;
        }
    }
    free(pc);
    /* blob: header, vocab, merges, one added token */
    int nv = 256 + nmerge + 1;
    size_t cap2 = 64 + (size_t)nv * 8 + (size_t)nmerge * 12 + 64;
    for (int t = 0; t < 256 + nmerge; t++) cap2 += tokn[t];
    uint8_t *o = xmalloc(cap2, "the tokenizer blob"), *p = o;
#define P32(v) do { uint32_t vv = (uint32_t)(v); memcpy(p, &vv, 4); p += 4; } while (0)
    memcpy(p, "MSBPE\0v1", 8); p += 8;
    P32(1); P32(MS_PRE_QWEN2); P32(0); P32(0xFFFFFFFFu); P32(nv); P32(nmerge); P32(1); P32(0);
    for (int t = 0; t < 256 + nmerge; t++) { P32(tokn[t]); memcpy(p, tokb[t], tokn[t]); p += tokn[t]; }
    P32(0); /* the added token's vocab entry is empty */
    for (int m = 0; m < nmerge; m++) { P32(merges[m][0]); P32(merges[m][1]); P32(merges[m][2]); }
    P32(nv - 1); P32(1); P32(13); memcpy(p, "<|endoftext|>", 13); p += 13;
#undef P32
    *out_len = (size_t)(p - o);
    for (uint32_t q = 0; q < nw; q++) { free(w[q].b); free(w[q].sym); }
    free(w);
    for (int t = 0; t < vocab; t++) free(tokb[t]);
    free(tokb); free(tokn); free(merges);
    return o;
}

/* documents separated by blank lines -> ids, <|endoftext|> after each */
static int32_t *encode_corpus(const ms_tokenizer *tok, const char *path, const char *text, size_t n, int eos, size_t *count) {
    size_t cap = n + 16, k = 0;
    int32_t *ids = xmalloc(cap * sizeof *ids, "the encoded corpus"), *tmp = xmalloc((ms_tokenizer_max_ids(n) + 1) * sizeof *tmp, "the encoder's buffer");
    ms_err e = {0};
    size_t i = 0;
    while (i < n) {
        const char *end = strstr(text + i, "\n\n");
        size_t j = end ? (size_t)(end - text) : n;
        int m = 0;
        if (j > i && ms_tokenizer_encode(tok, text + i, j - i, 0, tmp, (int)ms_tokenizer_max_ids(j - i), &m, &e)) { fprintf(stderr, "mlpscope-train: %s, in the paragraph at byte %zu: %s\n", path, i, e.msg); exit(1); }
        if (k + (size_t)m + 1 > cap) { cap = (k + m + 1) * 2; ids = realloc(ids, cap * sizeof *ids); if (!ids) { fprintf(stderr, "mlpscope-train: out of memory (%zu bytes for the encoded corpus)\n", cap * sizeof *ids); exit(1); } }
        memcpy(ids + k, tmp, (size_t)m * sizeof *ids);
        k += (size_t)m;
        ids[k++] = eos;
        i = end ? j + 2 : n;
    }
    free(tmp);
    *count = k;
    return ids;
}

/* ---------------- training ---------------- */
/* Runs fn on jobs[0..nt) (each `size` bytes): job 0 on this thread, the others on their own; a
 * thread that cannot start has its job run here instead (same work, same results). */
static void run_jobs(void *(*fn)(void *), void *jobs, size_t size, int nt) {
    pthread_t th[16];
    int started[16] = {0};
    for (int k = 1; k < nt; k++) started[k] = pthread_create(&th[k], NULL, fn, (char *)jobs + (size_t)k * size) == 0;
    for (int k = 0; k < nt; k++) if (!started[k]) fn((char *)jobs + (size_t)k * size);
    for (int k = 1; k < nt; k++) if (started[k]) pthread_join(th[k], NULL);
}

typedef struct {
    const tcfg *c; const tparams *p; const tT *wt;
    const int32_t *data; const size_t *offs; int first, n;
    real *gbuf; tparams g; tact a; real *abuf; double loss; real lscale;
    real drop, adrop; uint64_t dseed; /* dropout (MLP units, attention output) and this step's seed */
    double noise; int32_t *in;        /* input noise and its buffer of T tokens (used when noise > 0) */
    size_t replaced;                  /* input tokens replaced so far (reported at the end) */
    double share;                     /* the share of sequences that get the noise */
} job;

/* the AdamW update of elements [i0, i1) */
typedef struct { const tcfg *c; const tadam *o; const tadam_k *k; real *w; const real *g; real *m, *v; size_t i0, i1; } adam_job;
static void *run_adam(void *arg) {
    adam_job *j = arg;
    t_adam_range(j->c, j->o, j->k, j->w, j->g, j->m, j->v, j->i0, j->i1);
    return NULL;
}

/* Input noise (training only): each of the T input tokens is replaced, with probability p, by a
 * token drawn uniformly from the vocabulary; the targets stay the true next tokens. A token then
 * no longer vouches for its context by itself (a code token may turn up in prose), so what kind
 * of text this is has to be gathered from the tokens around it. The draws are hashes of (step,
 * sequence, position), like the dropout masks, so runs stay bit-reproducible. */
static const int32_t *noisy_inputs(int32_t *out, const int32_t *seq, int T, int V, double p, uint64_t seed, size_t *replaced) {
    for (int t = 0; t < T; t++) {
        int hit = (double)(drop_hash(seed, 0, (size_t)t) >> 11) * 0x1p-53 < p;
        out[t] = hit ? (int32_t)(drop_hash(seed, 1, (size_t)t) % (uint64_t)V) : seq[t];
        *replaced += (size_t)hit;
    }
    return out;
}

/* The input noise of a step: --input-noise at the first step, --input-noise-end at the last,
 * linear between (a function of the step alone, so a resumed run draws the same). */
static double noise_at(const opts_t *O, int step) {
    if (O->noise_end == O->noise || O->steps < 2) return O->noise;
    return O->noise + (O->noise_end - O->noise) * (double)step / (double)(O->steps - 1);
}

static void *run_job(void *arg) {
    job *j = arg;
    memset(j->gbuf, 0, tparams_count(j->c) * sizeof(real));
    j->loss = 0;
    for (int b = j->first; b < j->first + j->n; b++) {
        const int32_t *seq = j->data + j->offs[b];
        j->a.drop = j->drop;
        j->a.adrop = j->adrop;
        j->a.dseed = drop_hash(j->dseed, 63, (size_t)b);
        int noisy = j->noise > 0 && (double)(drop_hash(j->dseed, 61, (size_t)b) >> 11) * 0x1p-53 < j->share;
        const int32_t *in = noisy ? noisy_inputs(j->in, seq, j->c->T, j->c->V, j->noise, drop_hash(j->dseed, 62, (size_t)b), &j->replaced) : seq;
        j->loss += t_forward(j->c, j->p, j->wt, in, seq + 1, &j->a);
        t_backward(j->c, j->p, in, seq + 1, &j->a, &j->g, j->lscale);
    }
    return NULL;
}

/* one evaluation window per call: windows w = first, first + step, ... into loss[w] */
typedef struct {
    const tcfg *c; const tparams *p; const tT *wt; const int32_t *val; size_t stride;
    int first, step, windows; tact *a; double *loss;
} eval_job;

static void *run_eval(void *arg) {
    eval_job *j = arg;
    j->a->drop = j->a->adrop = 0; /* evaluation sees the whole model */
    for (int w = j->first; w < j->windows; w += j->step) {
        const int32_t *seq = j->val + (size_t)w * j->stride;
        j->loss[w] = t_forward(j->c, j->p, j->wt, seq, seq + 1, j->a);
    }
    return NULL;
}

/* Mean validation loss over `windows` evenly spaced windows, shared among the jobs' threads. Each
 * window's loss does not depend on which thread computed it, and they are summed in window order,
 * so the result is the same for any thread count. */
static double eval_loss(const tcfg *c, const tparams *p, const tT *wt, const int32_t *val, size_t nval, int windows, job *jobs, int nt) {
    double *loss = xmalloc((size_t)windows * sizeof *loss, "validation losses"), sum = 0;
    size_t stride = (nval - c->T - 1) / (size_t)windows;
    eval_job ej[16];
    for (int k = 0; k < nt; k++) ej[k] = (eval_job){c, p, wt, val, stride, k, nt, windows, &jobs[k].a, loss};
    run_jobs(run_eval, ej, sizeof *ej, nt);
    for (int w = 0; w < windows; w++) sum += loss[w];
    free(loss);
    return sum / ((double)windows * c->T);
}

static int write_weightset(const opts_t *O, const char *dir, const tparams *p, int dtype, const uint8_t *tok, size_t toklen) {
    const tcfg *c = &O->c;
    mkdir(dir, 0755);
    ms_conv_plan pl;
    memset(&pl, 0, sizeof pl);
    snprintf(pl.family, sizeof pl.family, "llama");
    ms_buf b = {0};
    ms_buf_printf(&b, "{\"architectures\": [\"LlamaForCausalLM\"], \"source\": \"mlpscope-train\", \"hidden_size\": %d, \"intermediate_size\": %d, "
                      "\"num_hidden_layers\": %d, \"num_attention_heads\": %d, \"num_key_value_heads\": %d, \"head_dim\": %d, \"vocab_size\": %d, "
                      "\"max_position_embeddings\": %d, \"rms_norm_eps\": %g, \"rope_theta\": %g, \"rope_layout\": \"halves\", \"tie_word_embeddings\": true}",
                  c->H, c->I, c->L, c->nh, c->nh, c->hd, c->V, c->T, c->eps, c->theta);
    pl.config_json = b.p;
    size_t H = (size_t)c->H, I = (size_t)c->I;
    pl.cap = 2 + 9 * c->L;
    pl.t = xcalloc((size_t)pl.cap, sizeof *pl.t, "the tensor list");
    typedef struct { const char *name; const real *ptr; int64_t d0, d1; } entry;
    entry *list = xmalloc((size_t)(2 + 9 * c->L) * sizeof *list, "the tensor list");
    int k = 0;
    list[k++] = (entry){"embed_tokens", p->emb, c->V, c->H};
    static const char *const names[9] = {"input_layernorm", "self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj",
                                         "post_attention_layernorm", "mlp.gate_proj", "mlp.down_proj", "mlp.up_proj"};
    for (int l = 0; l < c->L; l++) {
        const real *ptrs[9] = {p->rms_att + l * H, p->wq + l * H * H, p->wk + l * H * H, p->wv + l * H * H, p->wo + l * H * H,
                               p->rms_ffn + l * H, p->w1 + l * I * H, p->w2 + l * H * I, p->w3 + l * I * H};
        const int64_t d0[9] = {c->H, c->H, c->H, c->H, c->H, c->H, c->I, c->H, c->I}, d1[9] = {0, c->H, c->H, c->H, c->H, 0, c->H, c->I, c->H};
        for (int q = 0; q < 9; q++) list[k++] = (entry){names[q], ptrs[q], d0[q], d1[q]};
    }
    list[k++] = (entry){"norm", p->rms_final, c->H, 0};
    for (int q = 0; q < k; q++) {
        ms_conv_tensor *t = &pl.t[pl.n++];
        if (q >= 1 && q < k - 1) snprintf(t->name, sizeof t->name, "layers.%d.%s", (q - 1) / 9, list[q].name);
        else snprintf(t->name, sizeof t->name, "%s", list[q].name);
        t->ndim = list[q].d1 ? 2 : 1;
        t->shape[0] = list[q].d0;
        t->shape[1] = list[q].d1;
        t->is_matrix = list[q].d1 != 0;
        t->src_dtype = MS_F32;
        t->src_file = -1;
        t->src_mem = list[q].ptr;
    }
    free(list);
    pl.tok_blob = xmalloc(toklen, "the tokenizer blob");
    memcpy(pl.tok_blob, tok, toklen);
    pl.tok_blob_len = toklen;
    snprintf(pl.tok_kind, sizeof pl.tok_kind, "bpe-bytelevel");
    snprintf(pl.tok_out, sizeof pl.tok_out, "tokenizer.msbpe");
    pl.tok_vocab = c->V;
    pl.tok_bos = -1;
    pl.tok_eos[0] = c->V - 1;
    pl.n_tok_eos = 1;
    ms_native_io h;
    ms_io io;
    ms_native_io_init(&h, &io, dir);
    io.log = NULL;
    ms_err e = {0};
    ms_conv_opts co = {.dtype = dtype, .embed_dtype = -1, .shard_bytes = 64u << 20};
    int rc = ms_convert_finish(&pl, &io, &co, &e);
    ms_native_io_close_all(&h);
    if (rc) fprintf(stderr, "writing %s: %s: %s\n", dir, ms_code_name(rc), e.msg);
    return rc;
}

/* ---------------- checkpoints ---------------- */
static const char CK_MAGIC[8] = {'M', 'S', 'T', 'R', 'A', 'I', 'N', '1'};

static int save_ckpt(const char *path, const tcfg *c, int step, uint64_t rng, const real *w, const real *m, const real *v, size_t n, const uint8_t *tok, size_t toklen) {
    char tmp[1024];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "wb");
    if (!f) return -1;
    int32_t hdr[8] = {c->H, c->I, c->L, c->nh, c->hd, c->V, c->T, step};
    uint64_t tl = toklen, nn = n;
    int ok = fwrite(CK_MAGIC, 1, 8, f) == 8 && fwrite(hdr, 4, 8, f) == 8 && fwrite(&rng, 8, 1, f) == 1 && fwrite(&nn, 8, 1, f) == 1 &&
             fwrite(w, sizeof(real), n, f) == n && fwrite(m, sizeof(real), n, f) == n && fwrite(v, sizeof(real), n, f) == n &&
             fwrite(&tl, 8, 1, f) == 1 && fwrite(tok, 1, toklen, f) == toklen;
    ok &= fclose(f) == 0;
    return ok ? rename(tmp, path) : -1;
}

static const char *ckpt_problem(int rc) {
    return rc == -1 ? "cannot be opened" : rc == -2 ? "is not a mlpscope-train checkpoint (bad magic or short header)"
         : rc == -3 ? "has a shape that does not fit its parameter count" : "is truncated";
}

static int load_ckpt(const char *path, tcfg *c, int *step, uint64_t *rng, real **w, real **m, real **v, size_t *n, uint8_t **tok, size_t *toklen) {
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    char mg[8];
    int32_t hdr[8];
    uint64_t nn, tl;
    if (fread(mg, 1, 8, f) != 8 || memcmp(mg, CK_MAGIC, 8) || fread(hdr, 4, 8, f) != 8 || fread(rng, 8, 1, f) != 1 || fread(&nn, 8, 1, f) != 1) { fclose(f); return -2; }
    /* every size is checked before it is used: a shape the trainer could not have written is a bad file */
    for (int i = 0; i < 8; i++) if (hdr[i] < (i == 7 ? 0 : 1) || hdr[i] > (i == 5 ? 1 << 20 : i == 7 ? 1 << 30 : 1 << 16)) { fclose(f); return -3; }
    if (hdr[3] * hdr[4] != hdr[0] || hdr[4] % 2 || hdr[5] < 258 || hdr[6] < 2) { fclose(f); return -3; }
    c->H = hdr[0]; c->I = hdr[1]; c->L = hdr[2]; c->nh = hdr[3]; c->hd = hdr[4]; c->V = hdr[5]; c->T = hdr[6];
    *step = hdr[7];
    if (nn != tparams_count(c)) { fclose(f); return -3; }
    *n = (size_t)nn;
    *w = xmalloc(nn * sizeof(real), "the weights"); *m = xmalloc(nn * sizeof(real), "the optimizer state"); *v = xmalloc(nn * sizeof(real), "the optimizer state");
    int ok = fread(*w, sizeof(real), nn, f) == nn && fread(*m, sizeof(real), nn, f) == nn && fread(*v, sizeof(real), nn, f) == nn && fread(&tl, 8, 1, f) == 1 && tl < (64u << 20);
    if (ok) { *tok = xmalloc(tl, "the tokenizer blob"); *toklen = tl; ok = fread(*tok, 1, tl, f) == tl; }
    fclose(f);
    return ok ? 0 : -4;
}

/* Keeps the header and the rows of steps 1..last of a training log (a missing log is fine). */
static int trim_log(const char *path, int last) {
    ms_err e = {0};
    size_t n = 0;
    uint8_t *b = ms_read_file(path, &n, &e);
    if (!b) return 0;
    FILE *f = fopen(path, "wb");
    if (!f) { free(b); return -1; }
    int ok = 1;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && b[j] != '\n') j++;
        long step = 0; /* the row's first field; the header's "step" reads as 0 and is kept */
        for (size_t k = i; k < j && b[k] >= '0' && b[k] <= '9' && step <= last; k++) step = step * 10 + (b[k] - '0');
        if (step <= last) ok &= fwrite(b + i, 1, j - i, f) == j - i && fputc('\n', f) != EOF;
        i = j + 1;
    }
    ok &= fclose(f) == 0;
    free(b);
    return ok ? 0 : -1;
}

static char *read_text(const char *path, size_t *n) {
    ms_err e = {0};
    uint8_t *b = ms_read_file(path, n, &e);
    if (!b) { fprintf(stderr, "%s\n", e.msg); exit(1); }
    return (char *)b;
}

static _Noreturn void usage(void) {
    fprintf(stderr, "usage: mlpscope-train --train FILE --val FILE --out DIR [--out-f32 DIR] [--steps N] [--batch B] [--threads K]\n"
                    "         [--vocab V] [--hidden H] [--layers L] [--heads N] [--inter I] [--ctx T] [--lr X] [--wd X] [--mlp-dropout P] [--attn-dropout P] [--input-noise P]\n"
                    "         [--bpe-bytes N] (learn the vocabulary from the first N bytes of --train)\n"
                    "         [--input-noise-end P] [--noise-share S] [--gate-init SD] [--seed S]\n"
                    "         [--ckpt FILE] [--resume] [--ckpt-every N] [--stop-at N] [--log FILE] [--eval-every N]\n"
                    "         (--stop-at N: stop after step N with a checkpoint, as an interruption would; --resume goes on)\n"
                    "       mlpscope-train --logits CKPT --ids 1,2,3\n");
    exit(2);
}

/* The command line into O (defaults first); --logits / --ids / --out-f32 go to their own outputs. */
static void parse_args(int argc, char **argv, opts_t *O, const char **logits_ckpt, const char **ids_s, const char **out_f32, int *noise_end_given) {
    *O = (opts_t){0};
    O->vocab = 1024; O->steps = 3000; O->threads = 2; O->batch = 16; O->eval_every = 100; O->ckpt_every = 200; O->eval_windows = 64; O->seed = 1; O->gate_init = 0.02; O->noise_share = 1;
    O->c = (tcfg){.H = 128, .I = 448, .L = 6, .nh = 4, .T = 128, .eps = 1e-5, .theta = 10000.0};
    O->o = (tadam){.lr = 3e-3, .min_lr = 3e-4, .b1 = 0.9, .b2 = 0.95, .eps = 1e-8, .wd = 0.1, .clip = 1.0, .warmup = 100};
    *noise_end_given = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
#define OPT(name) (!strcmp(a, name) && v && (i++, 1))
        if (OPT("--train")) O->train = v; else if (OPT("--val")) O->val = v; else if (OPT("--out")) O->out = v;
        else if (OPT("--out-f32")) *out_f32 = v; else if (OPT("--ckpt")) O->ckpt = v; else if (OPT("--log")) O->log = v;
        else if (OPT("--steps")) O->steps = atoi(v); else if (OPT("--batch")) O->batch = atoi(v); else if (OPT("--threads")) O->threads = atoi(v);
        else if (OPT("--vocab")) O->vocab = atoi(v); else if (OPT("--hidden")) O->c.H = atoi(v); else if (OPT("--layers")) O->c.L = atoi(v);
        else if (OPT("--heads")) O->c.nh = atoi(v); else if (OPT("--inter")) O->c.I = atoi(v); else if (OPT("--ctx")) O->c.T = atoi(v);
        else if (OPT("--lr")) O->o.lr = atof(v), O->o.min_lr = O->o.lr / 10; else if (OPT("--seed")) O->seed = strtoull(v, NULL, 10);
        else if (OPT("--eval-every")) O->eval_every = atoi(v); else if (OPT("--ckpt-every")) O->ckpt_every = atoi(v);
        else if (OPT("--warmup")) O->o.warmup = atoi(v); else if (OPT("--wd")) O->o.wd = atof(v);
        else if (OPT("--mlp-dropout")) O->drop = atof(v); else if (OPT("--attn-dropout")) O->adrop = atof(v);
        else if (OPT("--gate-init")) O->gate_init = atof(v); else if (OPT("--input-noise")) O->noise = atof(v);
        else if (OPT("--input-noise-end")) { O->noise_end = atof(v); *noise_end_given = 1; }
        else if (OPT("--noise-share")) O->noise_share = atof(v);
        else if (OPT("--bpe-bytes")) O->bpe_bytes = atol(v);
        else if (OPT("--logits")) *logits_ckpt = v; else if (OPT("--ids")) *ids_s = v;
        else if (!strcmp(a, "--resume")) O->resume = 1;
        else if (OPT("--stop-at")) O->stop_at = atoi(v);
        else usage();
#undef OPT
    }
}

/* Every number from the command line checked before it sizes or divides anything: 0, or 2 (said why). */
static int check_opts(opts_t *O, int noise_end_given) {
    const struct { const char *name; long v, lo, hi; } range[] = {
        {"--steps", O->steps, 1, 100000000}, {"--batch", O->batch, 1, 1 << 16}, {"--threads", O->threads, 1, 16},
        {"--eval-every", O->eval_every, 1, 1 << 30}, {"--ckpt-every", O->ckpt_every, 1, 1 << 30}, {"--vocab", O->vocab, 258, 1 << 16},
        {"--hidden", O->c.H, 2, 8192}, {"--layers", O->c.L, 1, 256}, {"--heads", O->c.nh, 1, 256}, {"--inter", O->c.I, 1, 1 << 16},
        {"--ctx", O->c.T, 2, 1 << 14}, {"--bpe-bytes", O->bpe_bytes, 0, 1L << 40}};
    for (size_t i = 0; i < sizeof range / sizeof range[0]; i++)
        if (range[i].v < range[i].lo || range[i].v > range[i].hi) {
            fprintf(stderr, "mlpscope-train: %s must be an integer in [%ld, %ld] (got %ld)\n", range[i].name, range[i].lo, range[i].hi, range[i].v);
            return 2;
        }
    if (O->c.H % O->c.nh || (O->c.H / O->c.nh) % 2) {
        fprintf(stderr, "mlpscope-train: --hidden %d must split into --heads %d heads of an even size (RoPE rotates pairs)\n", O->c.H, O->c.nh);
        return 2;
    }
    if (!(O->o.lr >= 0 && O->o.lr < 10) || !(O->o.wd >= 0 && O->o.wd < 100) || O->o.warmup < 0) {
        fprintf(stderr, "mlpscope-train: --lr must be in [0, 10), --wd in [0, 100) and --warmup >= 0 (got %g, %g, %d)\n", O->o.lr, O->o.wd, O->o.warmup);
        return 2;
    }
    if (!noise_end_given) O->noise_end = O->noise;
    if (!(O->drop >= 0 && O->drop < 1) || !(O->adrop >= 0 && O->adrop < 1) || !(O->noise >= 0 && O->noise < 1) || !(O->noise_end >= 0 && O->noise_end < 1)) {
        fprintf(stderr, "--mlp-dropout, --attn-dropout, --input-noise and --input-noise-end take a probability in [0, 1) (got %g, %g, %g and %g)\n",
                O->drop, O->adrop, O->noise, O->noise_end);
        return 2;
    }
    if (O->resume && !O->ckpt) {
        fprintf(stderr, "--resume needs the --ckpt file to resume from\n");
        return 2;
    }
    if (O->stop_at < 0 || (O->stop_at && !O->ckpt)) {
        fprintf(stderr, "--stop-at N needs N >= 1 and a --ckpt file to stop into (got %d%s)\n", O->stop_at, O->ckpt ? "" : ", no --ckpt");
        return 2;
    }
    if (!(O->noise_share > 0 && O->noise_share <= 1)) {
        fprintf(stderr, "mlpscope-train: --noise-share takes the share of sequences given input noise, in (0, 1] (got %g)\n", O->noise_share);
        return 2;
    }
    if (!(O->gate_init > 0 && O->gate_init < 10)) {
        fprintf(stderr, "--gate-init takes a standard deviation in (0, 10) (got %g)\n", O->gate_init);
        return 2;
    }
    O->o.steps = O->steps;
    return 0;
}

/* The transposed copies of the weights the forward and backward passes read, in one allocation. */
static tT transposed(const tcfg *c, const tparams *p, size_t np) {
    size_t H = (size_t)c->H, I = (size_t)c->I, L = (size_t)c->L;
    real *tb = xmalloc(np * sizeof(real), "the transposed weights");
    tT wt = {tb, tb + L * H * H, tb + 2 * L * H * H, tb + 3 * L * H * H, tb + 4 * L * H * H, tb + 4 * L * H * H + L * I * H,
             tb + 4 * L * H * H + L * I * H + L * H * I, tb + 4 * L * H * H + 3 * L * I * H};
    tT_refresh(c, p, &wt);
    return wt;
}

/* --logits CKPT --ids 1,2,3: the trainer's own logits at the last position (for the test that
 * compares the engine with the trainer). Returns the exit status. */
static int print_logits(const opts_t *O, const char *logits_ckpt, const char *ids_s) {
    tcfg c = O->c;
    int step; uint64_t r; real *w, *m, *v; size_t n, tl; uint8_t *tok;
    if (!ids_s) usage();
    int rc = load_ckpt(logits_ckpt, &c, &step, &r, &w, &m, &v, &n, &tok, &tl);
    if (rc) { fprintf(stderr, "mlpscope-train: checkpoint %s %s\n", logits_ckpt, ckpt_problem(rc)); return 1; }
    int32_t ids[4096]; int k = 0, bad = !*ids_s;
    for (const char *q = ids_s; *q;) {
        char *end;
        long id = strtol(q, &end, 10);
        bad = end == q || (*end && *end != ',') || k == 4096;
        if (bad) break;
        if (id < 0 || id >= c.V) { fprintf(stderr, "mlpscope-train: --ids: id %ld is outside the vocabulary of %s (0..%d)\n", id, logits_ckpt, c.V - 1); return 2; }
        ids[k++] = (int32_t)id;
        q = *end ? end + 1 : end;
    }
    if (bad) { fprintf(stderr, "mlpscope-train: --ids needs at least one token id and at most 4096, comma-separated (got \"%s\")\n", ids_s); return 2; }
    c.T = k; c.eps = 1e-5; c.theta = 10000.0;
    tparams p; tparams_view(&c, w, &p);
    tT wt = transposed(&c, &p, tparams_count(&c));
    real *ab = xmalloc(tact_count(&c) * sizeof(real), "the activations");
    tact a; tact_view(&c, ab, &a);
    t_forward(&c, &p, &wt, ids, NULL, &a);
    printf("{\"logits\":[");
    for (int i = 0; i < c.V; i++) printf("%s%.9g", i ? "," : "", (double)a.logits[(size_t)(k - 1) * c.V + i]);
    printf("]}\n");
    return 0;
}

/* The weights, optimizer state and tokenizer: from the checkpoint (--resume), or a BPE vocabulary
 * learned from the training text and freshly initialised weights. 0, or the exit status. */
typedef struct { real *w, *m, *v; size_t np; uint8_t *tokblob; size_t toklen; int start; uint64_t rng; } run_state;
static int start_or_resume(opts_t *O, const char *train, size_t ntrain, run_state *R, double t0) {
    tcfg *c = &O->c;
    *R = (run_state){.rng = O->seed * 0x9E3779B97F4A7C15ull + 1};
    /* --resume: a missing checkpoint starts from step 0 (the run stopped before its first one); a
     * checkpoint that exists but cannot be used is an error, not a silent fresh start */
    int ck = O->resume && O->ckpt ? load_ckpt(O->ckpt, c, &R->start, &R->rng, &R->w, &R->m, &R->v, &R->np, &R->tokblob, &R->toklen) : -1;
    if (ck < -1) { fprintf(stderr, "mlpscope-train: checkpoint %s %s; remove it to start again\n", O->ckpt, ckpt_problem(ck)); return 2; }
    if (O->resume && ck == -1) fprintf(stderr, "no checkpoint at %s yet: starting from step 0\n", O->ckpt);
    if (ck == 0) {
        fprintf(stderr, "resumed %s at step %d\n", O->ckpt, R->start);
        return 0;
    }
    c->V = O->vocab;
    /* --bpe-bytes: a prefix of the corpus, cut after the last whole document (blank line) in it */
    size_t nbpe = ntrain;
    if (O->bpe_bytes > 0 && (size_t)O->bpe_bytes < ntrain) {
        nbpe = (size_t)O->bpe_bytes;
        while (nbpe > 1 && !(train[nbpe - 1] == '\n' && train[nbpe - 2] == '\n')) nbpe--;
        if (nbpe <= 1) nbpe = (size_t)O->bpe_bytes;
    }
    R->tokblob = learn_bpe(train, nbpe, O->vocab, &R->toklen);
    fprintf(stderr, "learned a %d-token BPE vocabulary in %.1f s\n", O->vocab, now_s() - t0);
    R->np = tparams_count(c);
    R->w = xcalloc(R->np, sizeof(real), "the weights"); R->m = xcalloc(R->np, sizeof(real), "the optimizer state"); R->v = xcalloc(R->np, sizeof(real), "the optimizer state");
    tparams p; tparams_view(c, R->w, &p);
    size_t H = (size_t)c->H, L = (size_t)c->L, I = (size_t)c->I;
    uint64_t ir = O->seed + 12345;
    const double sd = 0.02, sd_out = 0.02 / sqrt(2.0 * c->L);
    for (size_t i = 0; i < (size_t)c->V * H; i++) p.emb[i] = (real)(sd * gauss(&ir));
    for (size_t i = 0; i < L * H * H; i++) { p.wq[i] = (real)(sd * gauss(&ir)); p.wk[i] = (real)(sd * gauss(&ir)); p.wv[i] = (real)(sd * gauss(&ir)); p.wo[i] = (real)(sd_out * gauss(&ir)); }
    for (size_t i = 0; i < L * I * H; i++) { p.w1[i] = (real)(O->gate_init * gauss(&ir)); p.w3[i] = (real)(sd * gauss(&ir)); p.w2[i] = (real)(sd_out * gauss(&ir)); }
    for (size_t i = 0; i < L * H; i++) { p.rms_att[i] = 1; p.rms_ffn[i] = 1; }
    for (size_t i = 0; i < H; i++) p.rms_final[i] = 1;
    return 0;
}

/* Cross-entropy on the validation windows of the train unigram distribution (add-one): the loss a
 * model that ignores context would reach. */
static double unigram_baseline(const tcfg *c, const int32_t *tr, size_t ntok, const int32_t *va, size_t nvt, int windows) {
    double *uni = xcalloc((size_t)c->V, sizeof(double), "the unigram counts"), ubase = 0;
    for (size_t i = 0; i < ntok; i++) uni[tr[i]] += 1;
    for (int i = 0; i < c->V; i++) uni[i] = (uni[i] + 1) / ((double)ntok + c->V);
    size_t stride = (nvt - c->T - 1) / (size_t)windows;
    for (int wnd = 0; wnd < windows; wnd++) for (int t = 1; t <= c->T; t++) ubase -= log(uni[va[(size_t)wnd * stride + t]]);
    free(uni);
    return ubase / ((double)windows * c->T);
}

/* One optimizer step: the batch's gradients over the threads, summed in thread order with their
 * norm in one pass, then Adam over the threads and the transposed copies refreshed. Returns the
 * mean training loss; *gn the gradient norm. */
static double train_step(const opts_t *O, tcfg *c, tparams *p, tT *wt, run_state *R, const int32_t *tr, size_t ntok, int step,
                         job *jobs, int nt, real *grad, size_t *offs, double *gn_out) {
    for (int b = 0; b < O->batch; b++) offs[b] = (size_t)(rnd(&R->rng) % (ntok - c->T - 1));
    int per = O->batch / nt, extra = O->batch % nt, first = 0;
    for (int k = 0; k < nt; k++) {
        jobs[k] = (job){c, p, wt, tr, offs, first, per + (k < extra), jobs[k].gbuf, jobs[k].g, jobs[k].a, jobs[k].abuf, 0, (real)(1.0 / ((double)O->batch * c->T)),
                   (real)O->drop, (real)O->adrop, O->seed * 0xD1B54A32D192ED03ull + (uint64_t)step, noise_at(O, step), jobs[k].in, jobs[k].replaced, O->noise_share};
        first += jobs[k].n;
    }
    run_jobs(run_job, jobs, sizeof *jobs, nt);
    double loss = 0;
    for (int k = 0; k < nt; k++) loss += jobs[k].loss;
    double gn = 0;
    for (size_t i = 0; i < R->np; i++) {
        real s = jobs[0].gbuf[i];
        for (int k = 1; k < nt; k++) s += jobs[k].gbuf[i];
        grad[i] = s;
        gn += (double)s * s;
    }
    gn = sqrt(gn);
    const tadam_k K = t_adam_prep(c, &O->o, step, R->w, gn);
    adam_job aj[16];
    for (int k = 0; k < nt; k++) aj[k] = (adam_job){c, &O->o, &K, R->w, grad, R->m, R->v, R->np * (size_t)k / (size_t)nt, R->np * (size_t)(k + 1) / (size_t)nt};
    run_jobs(run_adam, aj, sizeof *aj, nt);
    tT_refresh(c, p, wt);
    *gn_out = gn;
    return loss / ((double)O->batch * c->T);
}

/* What the input noise did, counted (stderr: summary.json keeps its fields). */
static void report_noise(const opts_t *O, const job *jobs, int nt, int start, int T) {
    if (!(O->noise > 0 || O->noise_end > 0)) return;
    size_t replaced = 0, seen = (size_t)(O->steps - start) * (size_t)O->batch * (size_t)T;
    for (int k = 0; k < nt; k++) replaced += jobs[k].replaced;
    if (O->noise_end != O->noise) fprintf(stderr, "input noise %g to %g", O->noise, O->noise_end);
    else fprintf(stderr, "input noise %g", O->noise);
    if (O->noise_share < 1) fprintf(stderr, " in a share %g of the sequences", O->noise_share);
    fprintf(stderr, ": %zu of %zu input tokens replaced (%.4f)\n", replaced, seen, (double)replaced / (double)seen);
}

int main(int argc, char **argv) {
    opts_t O;
    const char *logits_ckpt = NULL, *ids_s = NULL, *out_f32 = NULL;
    int noise_end_given;
    parse_args(argc, argv, &O, &logits_ckpt, &ids_s, &out_f32, &noise_end_given);
    if (logits_ckpt) return print_logits(&O, logits_ckpt, ids_s);
    if (!O.train || !O.val || !O.out) usage();
    if (check_opts(&O, noise_end_given)) return 2;
    size_t ntrain, nval;
    char *train = read_text(O.train, &ntrain), *val = read_text(O.val, &nval);
    tcfg *c = &O.c;
    double t0 = now_s();
    run_state R;
    int rc = start_or_resume(&O, train, ntrain, &R, t0);
    if (rc) return rc;
    c->hd = c->H / c->nh;
    ms_err e = {0};
    ms_tokenizer *tok = ms_tokenizer_load("bpe-bytelevel", R.tokblob, R.toklen, c->V, &e);
    if (!tok) { fprintf(stderr, "tokenizer: %s\n", e.msg); return 1; }
    size_t ntok, nvt;
    int32_t *tr = encode_corpus(tok, O.train, train, ntrain, c->V - 1, &ntok), *va = encode_corpus(tok, O.val, val, nval, c->V - 1, &nvt);
    if (ntok < (size_t)c->T + 2 || nvt < (size_t)c->T + 2) {
        fprintf(stderr, "mlpscope-train: %s has %zu tokens: at least the context + 2 (%d) are needed\n", ntok < (size_t)c->T + 2 ? O.train : O.val,
                ntok < (size_t)c->T + 2 ? ntok : nvt, c->T + 2);
        return 2;
    }
    fprintf(stderr, "train %zu tokens (%.2f bytes/token), val %zu tokens\n", ntok, (double)ntrain / ntok, nvt);
    const double ubase = unigram_baseline(c, tr, ntok, va, nvt, O.eval_windows);

    tparams p; tparams_view(c, R.w, &p);
    tT wt = transposed(c, &p, R.np);
    int nt = O.threads; /* checked: 1..16 */
    job jobs[16];
    for (int k = 0; k < nt; k++) {
        jobs[k].gbuf = xmalloc(R.np * sizeof(real), "a thread's gradients");
        tparams_view(c, jobs[k].gbuf, &jobs[k].g);
        jobs[k].abuf = xmalloc(tact_count(c) * sizeof(real), "a thread's activations");
        tact_view(c, jobs[k].abuf, &jobs[k].a);
        jobs[k].in = xmalloc((size_t)c->T * sizeof(int32_t), "a thread's noisy inputs");
        jobs[k].replaced = 0;
    }
    real *grad = xmalloc(R.np * sizeof(real), "the gradients");
    size_t *offs = xmalloc((size_t)O.batch * sizeof *offs, "the batch offsets");
    /* resuming: the log may hold steps past the checkpoint (the run went on before it stopped);
     * they are dropped, so that each step appears once */
    if (O.log && R.start && trim_log(O.log, R.start) != 0) { fprintf(stderr, "mlpscope-train: cannot rewrite the log %s\n", O.log); return 1; }
    FILE *logf = O.log ? fopen(O.log, R.start ? "a" : "w") : NULL;
    if (O.log && !logf) { fprintf(stderr, "mlpscope-train: cannot open the log %s\n", O.log); return 1; }
    if (logf && !R.start) fprintf(logf, "step\tlr\ttrain_loss\tval_loss\tgrad_norm\ttokens_per_s\telapsed_s\n");
    double vl = NAN, tstart = now_s();
    for (int step = R.start; step < O.steps; step++) {
        double ts = now_s(), gn;
        const double loss = train_step(&O, c, &p, &wt, &R, tr, ntok, step, jobs, nt, grad, offs, &gn);
        const int last = step + 1 == O.steps, evaled = (step + 1) % O.eval_every == 0 || last;
        double tps = O.batch * c->T / (now_s() - ts); /* training only: the evaluation below is not counted */
        if (evaled) vl = eval_loss(c, &p, &wt, va, nvt, O.eval_windows, jobs, nt);
        if (logf) {
            char vs[32] = "-";
            if (evaled) snprintf(vs, sizeof vs, "%.6f", vl);
            fprintf(logf, "%d\t%.6g\t%.6f\t%s\t%.4f\t%.0f\t%.1f\n", step + 1, t_lr(&O.o, step), loss, vs, gn, tps, now_s() - tstart);
            fflush(logf);
        }
        if (evaled) fprintf(stderr, "step %5d  loss %.4f  val %.4f  lr %.2e  |g| %.3f  %.0f tok/s  %.0f s\n", step + 1, loss, vl, t_lr(&O.o, step), gn, tps, now_s() - tstart);
        const int stop = O.stop_at && step + 1 == O.stop_at && !last;
        if (O.ckpt && ((step + 1) % O.ckpt_every == 0 || last || stop) && save_ckpt(O.ckpt, c, step + 1, R.rng, R.w, R.m, R.v, R.np, R.tokblob, R.toklen) != 0) {
            fprintf(stderr, "mlpscope-train: could not write the checkpoint %s at step %d\n", O.ckpt, step + 1);
            if (stop) return 1;
        }
        if (stop) {
            if (logf) fclose(logf);
            fprintf(stderr, "stopped after step %d as asked; %s holds it: the same command with --resume goes on\n", step + 1, O.ckpt);
            ms_tokenizer_free(tok);
            return 0;
        }
    }
    if (logf) fclose(logf);
    if (isnan(vl)) vl = eval_loss(c, &p, &wt, va, nvt, O.eval_windows, jobs, nt);
    report_noise(&O, jobs, nt, R.start, c->T);
    printf("{\"val_loss\": %.6f, \"unigram_baseline\": %.6f, \"steps\": %d, \"tokens_per_step\": %d, \"train_tokens\": %zu, \"params\": %zu, \"seconds\": %.1f}\n",
           vl, ubase, O.steps, O.batch * c->T, ntok, R.np, now_s() - t0);
    rc = write_weightset(&O, O.out, &p, MS_Q8_0, R.tokblob, R.toklen);
    if (!rc && out_f32) rc = write_weightset(&O, out_f32, &p, MS_F32, R.tokblob, R.toklen);
    ms_tokenizer_free(tok);
    return rc ? 1 : 0;
}
