#include "transcoder.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

void *ms_tc_alloc(uint64_t a, uint64_t b, size_t elem, int zero) {
    if (a && b > UINT64_MAX / a) return NULL;
    const uint64_t n = a * b;
    if (!n) return malloc(1);
    if (n > (uint64_t)(SIZE_MAX / elem)) return NULL;
    return zero ? calloc((size_t)n, elem) : malloc((size_t)n * elem);
}

size_t ms_transcoder_n_params(int d_in, int d_out, int n_features) {
    const size_t F = (size_t)n_features;
    return (size_t)d_in * F + F + F * (size_t)d_out + (size_t)d_out;
}

static void tc_view(ms_transcoder *tc) {
    const size_t F = (size_t)tc->n_features;
    tc->w_enc = tc->params;
    tc->b_enc = tc->w_enc + (size_t)tc->d_in * F;
    tc->w_dec = tc->b_enc + F;
    tc->b_dec = tc->w_dec + F * (size_t)tc->d_out;
}

ms_transcoder *ms_transcoder_new(int d_in, int d_out, int n_features, int k, ms_err *err) {
    if (d_in < 1 || d_out < 1 || d_in > 65536 || d_out > 65536)
        { ms_fail(err, MS_E_ARG, "transcoder: widths %d -> %d are outside [1, 65536]", d_in, d_out); return NULL; }
    if (n_features < 1 || n_features > MS_TC_MAX_FEATURES)
        { ms_fail(err, MS_E_ARG, "transcoder: %d features is outside [1, %d]", n_features, MS_TC_MAX_FEATURES); return NULL; }
    if (k < 1 || k > n_features) { ms_fail(err, MS_E_ARG, "transcoder: k = %d is outside [1, %d] (the feature count)", k, n_features); return NULL; }
    ms_transcoder *tc = calloc(1, sizeof *tc);
    const size_t n = ms_transcoder_n_params(d_in, d_out, n_features);
    const uint64_t n64 = ((uint64_t)d_in + (uint64_t)d_out + 1) * (uint64_t)n_features + (uint64_t)d_out; /* n, in 64 bits */
    if (!tc || n64 > (uint64_t)(SIZE_MAX / (2 * sizeof(float))) || !(tc->params = calloc(n, sizeof(float)))) {
        free(tc);
        ms_fail(err, MS_E_MEMORY, "transcoder: cannot allocate %zu parameters", n);
        return NULL;
    }
    tc->d_in = d_in; tc->d_out = d_out; tc->n_features = n_features; tc->k = k;
    tc_view(tc);
    return tc;
}

void ms_transcoder_free(ms_transcoder *tc) {
    if (!tc) return;
    free(tc->params);
    free(tc);
}

/* ---- the encoder: z[N][F] = b + x[N][K] . W[K][F] ----
 * A 4-row x 16-column tile in the compiler's 4-lane vectors (wasm SIMD128 under emcc -msimd128,
 * SSE natively); the same order of additions in every path, so any split of rows over threads
 * gives the same z. */
typedef float v4f __attribute__((vector_size(16)));
static inline v4f v4_load(const float *p) { v4f v; memcpy(&v, p, sizeof v); return v; }
static inline void v4_store(float *p, v4f v) { memcpy(p, &v, sizeof v); }

static void tc_gemm_f32_4x16_vec(float *z, const float *x, const float *w, const float *b, int N, int K, int F) {
    int f0 = 0;
    for (; f0 + 16 <= F; f0 += 16) {
        int n = 0;
        for (; n + 4 <= N; n += 4) {
            v4f acc[4][4];
            for (int r = 0; r < 4; r++)
                for (int j = 0; j < 4; j++) acc[r][j] = v4_load(b + f0 + 4 * j);
            for (int k = 0; k < K; k++) {
                const float *wk = w + (size_t)k * F + f0;
                const v4f w0 = v4_load(wk), w1 = v4_load(wk + 4), w2 = v4_load(wk + 8), w3 = v4_load(wk + 12);
                for (int r = 0; r < 4; r++) {
                    const float xv = x[(size_t)(n + r) * K + k];
                    acc[r][0] += xv * w0; acc[r][1] += xv * w1; acc[r][2] += xv * w2; acc[r][3] += xv * w3;
                }
            }
            for (int r = 0; r < 4; r++)
                for (int j = 0; j < 4; j++) v4_store(z + (size_t)(n + r) * F + f0 + 4 * j, acc[r][j]);
        }
        for (; n < N; n++) {
            v4f acc[4];
            for (int j = 0; j < 4; j++) acc[j] = v4_load(b + f0 + 4 * j);
            for (int k = 0; k < K; k++) {
                const float xv = x[(size_t)n * K + k], *wk = w + (size_t)k * F + f0;
                for (int j = 0; j < 4; j++) acc[j] += xv * v4_load(wk + 4 * j);
            }
            for (int j = 0; j < 4; j++) v4_store(z + (size_t)n * F + f0 + 4 * j, acc[j]);
        }
    }
    for (int n = 0; n < N; n++) /* the last F % 16 columns */
        for (int f = f0; f < F; f++) {
            float s = b[f];
            for (int k = 0; k < K; k++) s += x[(size_t)n * K + k] * w[(size_t)k * F + f];
            z[(size_t)n * F + f] = s;
        }
}

/* The k largest of z[0..F) over the features allowed by mask (NULL: all), descending, ties to the
 * lower index; val = max(z, 0). Fewer than k allowed: the rest idx -1, val 0. */
static void topk_relu(const float *z, int F, int k, const uint8_t *mask, int32_t *idx, float *val) {
    int n = 0;
    for (int f = 0; f < F; f++) {
        if (mask && !mask[f]) continue;
        const float v = z[f];
        if (n == k && !(v > val[k - 1])) continue;
        int i = n < k ? n++ : k - 1;
        while (i > 0 && v > val[i - 1]) { val[i] = val[i - 1]; idx[i] = idx[i - 1]; i--; }
        val[i] = v; idx[i] = f;
    }
    for (int i = 0; i < n; i++) val[i] = val[i] > 0 ? val[i] : 0;
    for (int i = n; i < k; i++) { idx[i] = -1; val[i] = 0; }
}

typedef struct {
    const ms_transcoder *tc;
    const float *x;
    float *z;
    int32_t *idx;
    float *val;
    int N;
    /* training: the auxiliary selection over the dead features */
    const uint8_t *dead;
    int k_aux;
    int32_t *aidx;
    float *aval;
} encode_job;

static void encode_part(void *ctx, int part, int n_parts) {
    const encode_job *j = ctx;
    const ms_transcoder *tc = j->tc;
    const int n0 = (int)((int64_t)j->N * part / n_parts), n1 = (int)((int64_t)j->N * (part + 1) / n_parts);
    if (n1 <= n0) return;
    const size_t F = (size_t)tc->n_features;
    tc_gemm_f32_4x16_vec(j->z + (size_t)n0 * F, j->x + (size_t)n0 * tc->d_in, tc->w_enc, tc->b_enc, n1 - n0, tc->d_in, tc->n_features);
    for (int n = n0; n < n1; n++) {
        topk_relu(j->z + (size_t)n * F, tc->n_features, tc->k, NULL, j->idx + (size_t)n * tc->k, j->val + (size_t)n * tc->k);
        if (j->dead)
            topk_relu(j->z + (size_t)n * F, tc->n_features, j->k_aux, j->dead, j->aidx + (size_t)n * j->k_aux, j->aval + (size_t)n * j->k_aux);
    }
}

void ms_transcoder_encode(const ms_transcoder *tc, const float *x, int N, float *z, int32_t *idx, float *val, ms_pool *pool) {
    encode_job j = {tc, x, z, idx, val, N, NULL, 0, NULL, NULL};
    ms_pool_run(ms_pool_for_rows(pool, N), encode_part, &j);
}

static void decode_rows(const ms_transcoder *tc, const int32_t *idx, const float *val, int k, int N, const float *b, float *y) {
    const int D = tc->d_out;
    for (int n = 0; n < N; n++) {
        float *yn = y + (size_t)n * D;
        if (b) memcpy(yn, b, (size_t)D * sizeof(float));
        else memset(yn, 0, (size_t)D * sizeof(float));
        for (int i = 0; i < k; i++) {
            const float a = val[(size_t)n * k + i];
            if (a == 0) continue;
            const float *d = tc->w_dec + (size_t)idx[(size_t)n * k + i] * D;
            for (int o = 0; o < D; o++) yn[o] += a * d[o];
        }
    }
}

void ms_transcoder_decode(const ms_transcoder *tc, const int32_t *idx, const float *val, int N, float *y) {
    decode_rows(tc, idx, val, tc->k, N, tc->b_dec, y);
}

void ms_transcoder_readout(const ms_transcoder *tc, const float *u, double *out) {
    const int F = tc->n_features, D = tc->d_out;
    for (int f = 0; f <= F; f++) {
        const float *w = f < F ? tc->w_dec + (size_t)f * D : tc->b_dec;
        double s = 0;
        for (int o = 0; o < D; o++) s += (double)w[o] * u[o];
        out[f] = s;
    }
}

/* ---- training ---- */
struct ms_tc_trainer {
    ms_transcoder *p;        /* parameters in training units */
    float *grad, *m, *v;     /* [n_params] */
    uint32_t *since;         /* [F] tokens since each feature last fired (saturating) */
    uint8_t *dead;           /* [F] */
    ms_tc_train_opts o;
    double sx, sy;           /* data scales: x' = sx x, y' = sy y */
    int steps, scaled;
    /* batch scratch, grown as needed */
    int cap;
    float *xs, *ys, *z, *val, *aval, *yhat, *ehat;
    int32_t *idx, *aidx;
    float *gy; /* [2][d_out]: the gradient at y_hat and at the dead features' e_hat, one row */
};

static uint64_t splitmix(uint64_t x) { /* a seed spread over the bits (xorshift needs a non-zero state) */
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return x ? x : 1;
}

static double normal(uint64_t *s) { /* Box-Muller from xorshift64* */
    uint64_t a, b;
    *s ^= *s >> 12; *s ^= *s << 25; *s ^= *s >> 27; a = *s * 2685821657736338717ULL;
    *s ^= *s >> 12; *s ^= *s << 25; *s ^= *s >> 27; b = *s * 2685821657736338717ULL;
    const double u = ((double)(a >> 11) + 0.5) / 9007199254740992.0, w = (double)(b >> 11) / 9007199254740992.0;
    return sqrt(-2 * log(u)) * cos(6.283185307179586 * w);
}

static void unit_rows(float *w, int rows, int cols) {
    for (int r = 0; r < rows; r++) {
        double s = 0;
        float *wr = w + (size_t)r * cols;
        for (int c = 0; c < cols; c++) s += (double)wr[c] * wr[c];
        if (s > 0) {
            const float inv = (float)(1 / sqrt(s));
            for (int c = 0; c < cols; c++) wr[c] *= inv;
        }
    }
}

ms_tc_trainer *ms_tc_trainer_new(int d_in, int d_out, int n_features, int k, const ms_tc_train_opts *o, ms_err *err) {
    ms_tc_trainer *t = calloc(1, sizeof *t);
    if (!t) { ms_fail(err, MS_E_MEMORY, "transcoder trainer: out of memory"); return NULL; }
    if (!(t->p = ms_transcoder_new(d_in, d_out, n_features, k, err))) { free(t); return NULL; }
    if (o) t->o = *o;
    if (!(t->o.lr > 0)) t->o.lr = 1e-3;
    if (!(t->o.beta1 > 0)) t->o.beta1 = 0.9;
    if (!(t->o.beta2 > 0)) t->o.beta2 = 0.999;
    if (!(t->o.eps > 0)) t->o.eps = 1e-8;
    if (t->o.k_aux <= 0) t->o.k_aux = d_out / 2 > 0 ? d_out / 2 : 1;
    if (t->o.k_aux > n_features) t->o.k_aux = n_features;
    if (t->o.aux_coef == 0) t->o.aux_coef = 1.0 / 32;
    else if (!(t->o.aux_coef > 0)) t->o.aux_coef = 0; /* negative: no auxiliary loss */
    if (t->o.dead_tokens <= 0) t->o.dead_tokens = 20000;
    if (t->o.lr > 1 || t->o.beta1 >= 1 || t->o.beta2 >= 1 || t->o.total_steps < 0) {
        ms_fail(err, MS_E_ARG, "transcoder trainer: lr %g, beta1 %g, beta2 %g or total_steps %d out of range", t->o.lr, t->o.beta1, t->o.beta2, t->o.total_steps);
        ms_tc_trainer_free(t);
        return NULL;
    }
    const size_t n = ms_transcoder_n_params(d_in, d_out, n_features), F = (size_t)n_features;
    t->grad = calloc(n, sizeof(float)); t->m = calloc(n, sizeof(float)); t->v = calloc(n, sizeof(float));
    t->since = calloc(F, sizeof(uint32_t)); t->dead = calloc(F, 1);
    t->gy = malloc(2 * (size_t)d_out * sizeof(float));
    if (!t->grad || !t->m || !t->v || !t->since || !t->dead || !t->gy) {
        ms_tc_trainer_free(t);
        ms_fail(err, MS_E_MEMORY, "transcoder trainer: cannot allocate the optimizer state (%zu parameters)", n);
        return NULL;
    }
    /* decoder rows: random unit vectors; encoder columns: the same directions when the widths
     * agree (Gao et al.'s tied start), else their own random unit vectors */
    uint64_t rng = splitmix(t->o.seed ^ 0x7c0de5eedULL);
    ms_transcoder *p = t->p;
    for (size_t i = 0; i < F * (size_t)d_out; i++) p->w_dec[i] = (float)normal(&rng);
    unit_rows(p->w_dec, n_features, d_out);
    if (d_in == d_out)
        for (size_t f = 0; f < F; f++)
            for (int h = 0; h < d_in; h++) p->w_enc[(size_t)h * F + f] = p->w_dec[f * (size_t)d_out + h];
    else {
        const float s = (float)(1 / sqrt((double)d_in));
        for (size_t i = 0; i < (size_t)d_in * F; i++) p->w_enc[i] = s * (float)normal(&rng);
    }
    return t;
}

void ms_tc_trainer_free(ms_tc_trainer *t) {
    if (!t) return;
    ms_transcoder_free(t->p);
    free(t->grad); free(t->m); free(t->v); free(t->since); free(t->dead); free(t->gy);
    free(t->xs); free(t->ys); free(t->z); free(t->val); free(t->aval); free(t->yhat); free(t->ehat);
    free(t->idx); free(t->aidx);
    free(t);
}

ms_transcoder *ms_tc_trainer_params(ms_tc_trainer *t) { return t->p; }
int ms_tc_trainer_steps(const ms_tc_trainer *t) { return t->steps; }

int ms_tc_trainer_dead(const ms_tc_trainer *t) {
    int d = 0;
    for (int f = 0; f < t->p->n_features; f++) d += t->since[f] >= (uint32_t)t->o.dead_tokens;
    return d;
}

static int grow(ms_tc_trainer *t, int N, ms_err *err) {
    if (N <= t->cap) return MS_OK;
    const ms_transcoder *p = t->p;
    const size_t n = (size_t)N;
    free(t->xs); free(t->ys); free(t->z); free(t->val); free(t->aval); free(t->yhat); free(t->ehat); free(t->idx); free(t->aidx);
    t->xs = ms_tc_alloc(n, (uint64_t)p->d_in, sizeof(float), 0);
    t->ys = ms_tc_alloc(n, (uint64_t)p->d_out, sizeof(float), 0);
    t->yhat = ms_tc_alloc(n, (uint64_t)p->d_out, sizeof(float), 0);
    t->ehat = ms_tc_alloc(n, (uint64_t)p->d_out, sizeof(float), 0);
    t->z = ms_tc_alloc(n, (uint64_t)p->n_features, sizeof(float), 0);
    t->val = ms_tc_alloc(n, (uint64_t)p->k, sizeof(float), 0);
    t->idx = ms_tc_alloc(n, (uint64_t)p->k, sizeof(int32_t), 0);
    t->aval = ms_tc_alloc(n, (uint64_t)t->o.k_aux, sizeof(float), 0);
    t->aidx = ms_tc_alloc(n, (uint64_t)t->o.k_aux, sizeof(int32_t), 0);
    if (!t->xs || !t->ys || !t->yhat || !t->ehat || !t->z || !t->val || !t->idx || !t->aval || !t->aidx) {
        t->cap = 0;
        return ms_fail(err, MS_E_MEMORY, "transcoder trainer: cannot allocate a batch of %d rows", N);
    }
    t->cap = N;
    return MS_OK;
}

static int check_rows(const ms_tc_trainer *t, const float *x, const float *y, int N, ms_err *err) {
    if (N < 1 || !x || !y) return ms_fail(err, MS_E_ARG, "transcoder trainer: an empty batch");
    const size_t nx = (size_t)N * t->p->d_in, ny = (size_t)N * t->p->d_out;
    for (size_t i = 0; i < nx; i++)
        if (!isfinite(x[i])) return ms_fail(err, MS_E_ARG, "transcoder trainer: input row %zu has a value that is not finite", i / t->p->d_in);
    for (size_t i = 0; i < ny; i++)
        if (!isfinite(y[i])) return ms_fail(err, MS_E_ARG, "transcoder trainer: target row %zu has a value that is not finite", i / t->p->d_out);
    return MS_OK;
}

/* the data scales (mean squared norm -> the width) and b_dec = the mean scaled target */
static void fix_scales(ms_tc_trainer *t, const float *x, const float *y, int N) {
    const int Di = t->p->d_in, Do = t->p->d_out;
    double sxx = 0, syy = 0;
    for (size_t i = 0; i < (size_t)N * Di; i++) sxx += (double)x[i] * x[i];
    for (size_t i = 0; i < (size_t)N * Do; i++) syy += (double)y[i] * y[i];
    t->sx = sxx > 0 ? sqrt(Di * (double)N / sxx) : 1;
    t->sy = syy > 0 ? sqrt(Do * (double)N / syy) : 1;
    for (int o = 0; o < Do; o++) {
        double s = 0;
        for (int n = 0; n < N; n++) s += y[(size_t)n * Do + o];
        t->p->b_dec[o] = (float)(t->sy * s / N);
    }
    t->scaled = 1;
}

/* Forward of a batch in training units; fills the scratch and returns the two losses. */
static void train_forward(ms_tc_trainer *t, const float *x, const float *y, int N, ms_pool *pool, double *mse, double *aux, int *n_dead) {
    const ms_transcoder *p = t->p;
    const int Di = p->d_in, Do = p->d_out, F = p->n_features;
    for (size_t i = 0; i < (size_t)N * Di; i++) t->xs[i] = (float)(t->sx * x[i]);
    for (size_t i = 0; i < (size_t)N * Do; i++) t->ys[i] = (float)(t->sy * y[i]);
    int nd = 0;
    for (int f = 0; f < F; f++) nd += t->dead[f] = t->since[f] >= (uint32_t)t->o.dead_tokens;
    const int use_aux = nd > 0 && t->o.aux_coef > 0;
    encode_job j = {p, t->xs, t->z, t->idx, t->val, N, use_aux ? t->dead : NULL, t->o.k_aux, t->aidx, t->aval};
    ms_pool_run(ms_pool_for_rows(pool, N), encode_part, &j);
    decode_rows(p, t->idx, t->val, p->k, N, p->b_dec, t->yhat);
    double se = 0, sa = 0;
    for (size_t i = 0; i < (size_t)N * Do; i++) { const double d = (double)t->yhat[i] - t->ys[i]; se += d * d; }
    if (use_aux) { /* the dead features' reconstruction of the residual e = y - y_hat (held fixed) */
        decode_rows(p, t->aidx, t->aval, t->o.k_aux, N, NULL, t->ehat);
        for (size_t i = 0; i < (size_t)N * Do; i++) {
            const double d = (double)t->ehat[i] - ((double)t->ys[i] - t->yhat[i]);
            sa += d * d;
        }
    }
    *mse = se / ((double)N * Do);
    *aux = use_aux ? sa / ((double)N * Do) : 0;
    *n_dead = use_aux ? nd : 0;
}

/* Gradient of mse + aux_coef * aux into g, in the parameters' layout except the encoder block,
 * which is transposed ([F][d_in]: a feature's gradient is one contiguous row). Only the listed
 * features have a gradient in the encoder (TopK passes it to the k it kept, ReLU to those above 0).
 * The features are split over the threads: each part walks every token in order and takes the
 * features in its range, so any split gives the same sums. */
typedef struct { ms_tc_trainer *t; int N, use_aux; float *g; } grad_job;

static void grad_part(void *ctx, int part, int n_parts) {
    const grad_job *j = ctx;
    const ms_tc_trainer *t = j->t;
    const ms_transcoder *p = t->p;
    const int Di = p->d_in, Do = p->d_out, F = p->n_features, K = p->k, KA = t->o.k_aux, N = j->N;
    const int f0 = (int)((int64_t)F * part / n_parts), f1 = (int)((int64_t)F * (part + 1) / n_parts);
    float *gweT = j->g, *gbe = gweT + (size_t)Di * F, *gwd = gbe + F, *gbd = gwd + (size_t)F * Do;
    memset(gweT + (size_t)f0 * Di, 0, (size_t)(f1 - f0) * Di * sizeof(float));
    memset(gbe + f0, 0, (size_t)(f1 - f0) * sizeof(float));
    memset(gwd + (size_t)f0 * Do, 0, (size_t)(f1 - f0) * Do * sizeof(float));
    if (part == 0) { /* the output bias: the sum of the gradients at y_hat */
        memset(gbd, 0, (size_t)Do * sizeof(float));
        for (int n = 0; n < N; n++)
            for (int o = 0; o < Do; o++) gbd[o] += t->yhat[(size_t)n * Do + o];
    }
    for (int n = 0; n < N; n++) {
        const float *xs = t->xs + (size_t)n * Di;
        for (int pass = 0; pass < 1 + j->use_aux; pass++) {
            const int kk = pass ? KA : K;
            const int32_t *ix = pass ? t->aidx + (size_t)n * KA : t->idx + (size_t)n * K;
            const float *av = pass ? t->aval + (size_t)n * KA : t->val + (size_t)n * K;
            const float *gv = (pass ? t->ehat : t->yhat) + (size_t)n * Do; /* the gradients, set by the caller */
            for (int i = 0; i < kk; i++) {
                const int f = ix[i];
                const float a = av[i];
                if (f < f0 || f >= f1 || a == 0) continue; /* not above 0: no gradient through the ReLU, writes nothing */
                float *gd = gwd + (size_t)f * Do, *ge = gweT + (size_t)f * Di;
                const float *d = p->w_dec + (size_t)f * Do;
                float da = 0;
                for (int o = 0; o < Do; o++) { gd[o] += a * gv[o]; da += d[o] * gv[o]; }
                gbe[f] += da;
                for (int h = 0; h < Di; h++) ge[h] += da * xs[h];
            }
        }
    }
}

/* turns y_hat and e_hat (after the losses are summed) into the gradients at them, then runs the parts */
static void train_backward(ms_tc_trainer *t, int N, int use_aux, float *g, ms_pool *pool) {
    const int Do = t->p->d_out;
    const float c = (float)(2.0 / ((double)N * Do)), ca = (float)(2.0 * t->o.aux_coef / ((double)N * Do));
    for (size_t i = 0; i < (size_t)N * Do; i++) {
        if (use_aux) t->ehat[i] = ca * (t->ehat[i] - (t->ys[i] - t->yhat[i]));
        t->yhat[i] = c * (t->yhat[i] - t->ys[i]);
    }
    grad_job j = {t, N, use_aux, g};
    ms_pool_run(pool, grad_part, &j);
}

double ms_tc_loss_grad(ms_tc_trainer *t, const float *x, const float *y, int N, float *grad, double *parts, ms_pool *pool, ms_err *err) {
    if (check_rows(t, x, y, N, err) || grow(t, N, err)) return NAN;
    if (!t->scaled) fix_scales(t, x, y, N);
    double mse, aux;
    int nd;
    train_forward(t, x, y, N, pool, &mse, &aux, &nd);
    if (parts) { parts[0] = mse; parts[1] = aux; }
    if (grad) { /* in the parameters' own layout: the encoder block transposed back */
        const ms_transcoder *p = t->p;
        const size_t F = (size_t)p->n_features, Di = (size_t)p->d_in;
        train_backward(t, N, nd > 0, t->grad, pool);
        memcpy(grad, t->grad, ms_transcoder_n_params(p->d_in, p->d_out, p->n_features) * sizeof(float));
        for (size_t f = 0; f < F; f++)
            for (size_t h = 0; h < Di; h++) grad[h * F + f] = t->grad[f * Di + h];
    }
    return mse + t->o.aux_coef * aux;
}

static double count_l0(const ms_tc_trainer *t, int N) {
    double l0 = 0;
    for (size_t i = 0; i < (size_t)N * t->p->k; i++) l0 += t->val[i] > 0;
    return l0;
}

/* Adam over parameter ranges split between the threads (each element's update is its own) */
typedef struct { ms_tc_trainer *t; double lr, bc1, bc2; } adam_job;

static void adam_part(void *ctx, int part, int n_parts) {
    const adam_job *j = ctx;
    ms_tc_trainer *t = j->t;
    ms_transcoder *p = t->p;
    const size_t np = ms_transcoder_n_params(p->d_in, p->d_out, p->n_features), F = (size_t)p->n_features, Di = (size_t)p->d_in;
    const size_t i0 = (size_t)((uint64_t)np * (uint64_t)part / (uint64_t)n_parts), i1 = (size_t)((uint64_t)np * (uint64_t)(part + 1) / (uint64_t)n_parts), enc = Di * F;
    const double b1 = t->o.beta1, b2 = t->o.beta2;
    for (size_t i = i0; i < i1; i++) {
        const float gi = i < enc ? t->grad[(i % F) * Di + i / F] : t->grad[i]; /* the encoder's gradient is stored transposed */
        t->m[i] = (float)(b1 * t->m[i] + (1 - b1) * gi);
        t->v[i] = (float)(b2 * t->v[i] + (1 - b2) * (double)gi * gi);
        p->params[i] -= (float)(j->lr * (t->m[i] / j->bc1) / (sqrt(t->v[i] / j->bc2) + t->o.eps));
    }
}

static double schedule(const ms_tc_trainer *t) {
    const int S = t->o.total_steps;
    if (S <= 0) return t->o.lr;
    const int decay0 = S - S / 5;
    if (t->steps < decay0) return t->o.lr;
    const double left = (double)(S - t->steps) / (double)(S - decay0);
    return t->o.lr * (left > 0 ? left : 0.02);
}

int ms_tc_train_step(ms_tc_trainer *t, const float *x, const float *y, int N, ms_pool *pool, ms_tc_step *out, ms_err *err) {
    if (check_rows(t, x, y, N, err) || grow(t, N, err)) return err ? err->code : MS_E_ARG;
    if (!t->scaled) fix_scales(t, x, y, N);
    ms_transcoder *p = t->p;
    const int Do = p->d_out, F = p->n_features, K = p->k;
    double mse, aux;
    int nd;
    train_forward(t, x, y, N, pool, &mse, &aux, &nd);
    const double l0 = count_l0(t, N);
    train_backward(t, N, nd > 0, t->grad, pool);
    t->steps++;
    adam_job aj = {t, schedule(t), 1 - pow(t->o.beta1, t->steps), 1 - pow(t->o.beta2, t->steps)};
    ms_pool_run(pool, adam_part, &aj);
    unit_rows(p->w_dec, F, Do);
    /* dead-feature clocks and the batch's scores */
    uint8_t *fired = t->dead; /* reused: the dead mask is rebuilt at the next forward */
    memset(fired, 0, (size_t)(unsigned)F);
    for (size_t i = 0; i < (size_t)N * K; i++)
        if (t->val[i] > 0) fired[t->idx[i]] = 1;
    for (int f = 0; f < F; f++) {
        const uint64_t s = fired[f] ? 0 : (uint64_t)t->since[f] + (uint64_t)N;
        t->since[f] = s > 0xffffffffu ? 0xffffffffu : (uint32_t)s;
    }
    double sst = 0;
    for (int o = 0; o < Do; o++) {
        double mu = 0;
        for (int n = 0; n < N; n++) mu += t->ys[(size_t)n * Do + o];
        mu /= N;
        for (int n = 0; n < N; n++) { const double d = t->ys[(size_t)n * Do + o] - mu; sst += d * d; }
    }
    if (out) {
        out->mse = mse; out->aux = aux; out->dead = nd;
        out->fvu = sst > 0 ? mse * N * Do / sst : 0;
        out->l0 = l0 / N;
    }
    return MS_OK;
}

int ms_tc_trainer_export(const ms_tc_trainer *t, ms_transcoder *dst, ms_err *err) {
    const ms_transcoder *p = t->p;
    if (dst->d_in != p->d_in || dst->d_out != p->d_out || dst->n_features != p->n_features)
        return ms_fail(err, MS_E_ARG, "transcoder export: the destination has another shape");
    const size_t F = (size_t)p->n_features;
    const float sx = (float)(t->scaled ? t->sx : 1), isy = (float)(t->scaled ? 1 / t->sy : 1);
    dst->k = p->k;
    for (size_t i = 0; i < (size_t)p->d_in * F; i++) dst->w_enc[i] = p->w_enc[i] * sx;
    memcpy(dst->b_enc, p->b_enc, F * sizeof(float));
    for (size_t i = 0; i < F * (size_t)p->d_out; i++) dst->w_dec[i] = p->w_dec[i] * isy;
    for (int o = 0; o < p->d_out; o++) dst->b_dec[o] = p->b_dec[o] * isy;
    return MS_OK;
}

/* ---- quality ---- */
int ms_tc_eval_init(ms_tc_eval *e, int d_out, int n_features, ms_err *err) {
    memset(e, 0, sizeof *e);
    e->d_out = d_out; e->n_features = n_features;
    e->sum_y = calloc((size_t)d_out, sizeof(double));
    e->fired = calloc((size_t)n_features, sizeof(uint32_t));
    if (!e->sum_y || !e->fired) { ms_tc_eval_free(e); return ms_fail(err, MS_E_MEMORY, "transcoder scores: out of memory"); }
    return MS_OK;
}

void ms_tc_eval_free(ms_tc_eval *e) {
    free(e->sum_y); free(e->fired);
    e->sum_y = NULL; e->fired = NULL;
}

size_t ms_tc_eval_scratch(const ms_transcoder *tc, int N) {
    return (size_t)N * ((size_t)tc->n_features + 2 * (size_t)tc->k + (size_t)tc->d_out);
}

void ms_tc_eval_add(ms_tc_eval *e, const ms_transcoder *tc, const float *x, const float *y, int N, float *scratch, ms_pool *pool) {
    const int Do = tc->d_out, K = tc->k;
    float *z = scratch, *val = z + (size_t)N * tc->n_features, *yh = val + (size_t)N * K;
    int32_t *idx = (int32_t *)(yh + (size_t)N * Do);
    ms_transcoder_encode(tc, x, N, z, idx, val, pool);
    ms_transcoder_decode(tc, idx, val, N, yh);
    for (int n = 0; n < N; n++) {
        for (int o = 0; o < Do; o++) {
            const double yv = y[(size_t)n * Do + o], d = (double)yh[(size_t)n * Do + o] - yv;
            e->sse += d * d; e->sum_y[o] += yv; e->sum_yy += yv * yv;
        }
        for (int i = 0; i < K; i++)
            if (val[(size_t)n * K + i] > 0) { e->fired[idx[(size_t)n * K + i]]++; e->sum_l0++; }
    }
    e->n += N;
}

double ms_tc_eval_fvu(const ms_tc_eval *e) {
    if (e->n <= 0) return NAN;
    double mean2 = 0;
    for (int o = 0; o < e->d_out; o++) mean2 += e->sum_y[o] * e->sum_y[o];
    const double sst = e->sum_yy - mean2 / e->n;
    return sst > 0 ? e->sse / sst : NAN;
}

double ms_tc_eval_l0(const ms_tc_eval *e) { return e->n > 0 ? e->sum_l0 / e->n : NAN; }

double ms_tc_eval_dead(const ms_tc_eval *e) {
    int d = 0;
    for (int f = 0; f < e->n_features; f++) d += !e->fired[f];
    return (double)d / e->n_features;
}
