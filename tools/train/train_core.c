/* The demo model's trainer: a llama-family decoder (RMSNorm, RoPE attention in the halves
 * layout, SwiGLU MLP, tied embedding) with hand-written backward, AdamW, cosine schedule and
 * gradient clipping. `real` is float for training and double for the finite-difference test
 * (tests/native/test_train.c includes this file with REAL=double). The forward is the engine's
 * math; tests/train.test.js checks that the engine computes the same logits from the weights
 * this trainer writes. Matmuls are written as axpy loops (no reductions across lanes), so results
 * do not depend on the vector width. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/engine/sample.h"

#ifndef REAL
#define REAL float
#endif
typedef REAL real;

typedef struct {
    int H, I, L, nh, hd, V, T; /* hidden, intermediate, layers, heads, head dim, vocab, sequence */
    double eps, theta;
} tcfg;

/* parameters (and gradients, Adam moments) as one flat array with views */
typedef struct {
    real *emb;                          /* [V][H] tied with the head */
    real *rms_att, *wq, *wk, *wv, *wo;  /* per layer, stacked: [L][H], [L][H][H] ... */
    real *rms_ffn, *w1, *w2, *w3;       /* [L][H], [L][I][H], [L][H][I], [L][I][H] */
    real *rms_final;                    /* [H] */
} tparams;

static size_t tparams_count(const tcfg *c) {
    size_t H = (size_t)c->H, I = (size_t)c->I, L = (size_t)c->L;
    return (size_t)c->V * H + L * (2 * H + 4 * H * H + 3 * I * H) + H;
}

static void tparams_view(const tcfg *c, real *base, tparams *p) {
    size_t H = (size_t)c->H, I = (size_t)c->I, L = (size_t)c->L;
    real *q = base;
    p->emb = q; q += (size_t)c->V * H;
    p->rms_att = q; q += L * H;
    p->wq = q; q += L * H * H;
    p->wk = q; q += L * H * H;
    p->wv = q; q += L * H * H;
    p->wo = q; q += L * H * H;
    p->rms_ffn = q; q += L * H;
    p->w1 = q; q += L * I * H;
    p->w2 = q; q += L * H * I;
    p->w3 = q; q += L * I * H;
    p->rms_final = q;
}

/* ---- matmuls, register-blocked: an MR x (NV vectors) block of the output lives in registers
 * while the inner dimension streams past (AVX-512: 4 x 4 vectors, 16 of its 32 registers; AVX2:
 * 6 x 2, 12 of its 16, the usual shape for 16 registers). The summation order of every output
 * element is the plain sequential one (k = 0, 1, ...), with multiply and add kept separate
 * (-ffp-contract=off), so the result is bit-identical to the scalar loops whatever the vector
 * width and block shape: only the order in which output elements are visited changes. ---- */
#if (defined(__AVX2__) || defined(__AVX512F__)) && !defined(TRAIN_SCALAR)
#define TRAIN_VEC 1
#ifdef __AVX512F__
#define VBYTES 64
#else
#define VBYTES 32
#endif
#ifndef MR /* the block shape can be set from outside: tests/train-gemm builds several */
#if VBYTES == 64
#define MR 4
#define NV 4
#else
#define MR 6
#define NV 2
#endif
#endif
#define KC 128 /* gemm_nn packs B in strips of KC x NV vectors (AVX2 8 KB, AVX-512 32 KB: L1) */
typedef real vreal __attribute__((vector_size(VBYTES)));
#define VW ((int)(VBYTES / sizeof(real)))
static inline vreal vld(const real *p) { vreal v; memcpy(&v, p, sizeof v); return v; }
static inline void vst(real *p, vreal v) { memcpy(p, &v, sizeof v); }
#else
#define TRAIN_VEC 0
#endif

/* C[N][O] = (acc ? C : 0) + X[N][K] . B[K][O]. The inner dimension is taken in chunks of KC,
 * and each chunk's strip of B is first copied to a contiguous buffer: B's rows can be 4 KB
 * apart (the head's 1024 columns), and a strip read in place then thrashes one L1 set. The
 * accumulators go back to C between chunks, which keeps the sequential order. */
static void gemm_nn(real *C, const real *X, const real *B, int N, int K, int O, int acc) {
    int o0 = 0;
#if TRAIN_VEC
    const int OB = NV * VW;
    real pk[KC * NV * VW];
    for (; o0 + OB <= O; o0 += OB)
        for (int k0 = 0; k0 < K; k0 += KC) {
            const int kn = K - k0 < KC ? K - k0 : KC, zero = k0 == 0 && !acc;
            for (int k = 0; k < kn; k++) memcpy(pk + (size_t)k * OB, B + (size_t)(k0 + k) * O + o0, sizeof(real) * OB);
            int n0 = 0;
            for (; n0 + MR <= N; n0 += MR) {
                vreal c[MR][NV];
                real *cp = C + (size_t)n0 * O + o0;
                const real *x = X + (size_t)n0 * K + k0;
                for (int r = 0; r < MR; r++) for (int j = 0; j < NV; j++) c[r][j] = zero ? (vreal){0} : vld(cp + (size_t)r * O + j * VW);
                for (int k = 0; k < kn; k++) {
                    vreal w[NV];
                    for (int j = 0; j < NV; j++) w[j] = vld(pk + (size_t)k * OB + j * VW);
                    for (int r = 0; r < MR; r++) {
                        real xv = x[(size_t)r * K + k];
                        for (int j = 0; j < NV; j++) c[r][j] += xv * w[j];
                    }
                }
                for (int r = 0; r < MR; r++) for (int j = 0; j < NV; j++) vst(cp + (size_t)r * O + j * VW, c[r][j]);
            }
            for (; n0 < N; n0++) {
                vreal c[NV];
                real *cp = C + (size_t)n0 * O + o0;
                const real *x = X + (size_t)n0 * K + k0;
                for (int j = 0; j < NV; j++) c[j] = zero ? (vreal){0} : vld(cp + j * VW);
                for (int k = 0; k < kn; k++) for (int j = 0; j < NV; j++) c[j] += x[k] * vld(pk + (size_t)k * OB + j * VW);
                for (int j = 0; j < NV; j++) vst(cp + j * VW, c[j]);
            }
        }
    for (; o0 + VW <= O; o0 += VW) { /* narrow outputs (a head's width): one vector of columns */
        int n0 = 0;
        for (; n0 + 4 <= N; n0 += 4) {
            vreal c[4];
            for (int r = 0; r < 4; r++) c[r] = acc ? vld(C + (size_t)(n0 + r) * O + o0) : (vreal){0};
            for (int k = 0; k < K; k++) {
                vreal w = vld(B + (size_t)k * O + o0);
                for (int r = 0; r < 4; r++) c[r] += X[(size_t)(n0 + r) * K + k] * w;
            }
            for (int r = 0; r < 4; r++) vst(C + (size_t)(n0 + r) * O + o0, c[r]);
        }
        for (; n0 < N; n0++) {
            vreal c = acc ? vld(C + (size_t)n0 * O + o0) : (vreal){0};
            for (int k = 0; k < K; k++) c += X[(size_t)n0 * K + k] * vld(B + (size_t)k * O + o0);
            vst(C + (size_t)n0 * O + o0, c);
        }
    }
#endif
    for (int n = 0; n < N; n++) /* remaining columns (all of them in the scalar build) */
        for (int o = o0; o < O; o++) {
            real s = acc ? C[(size_t)n * O + o] : 0;
            for (int k = 0; k < K; k++) s += X[(size_t)n * K + k] * B[(size_t)k * O + o];
            C[(size_t)n * O + o] = s;
        }
}

/* C[O][I] += A[N][O]^T . B[N][I] (B's rows are at most the MLP width apart: read in place) */
static void gemm_tn(real *C, const real *A, const real *B, int N, int O, int I) {
    int i0 = 0;
#if TRAIN_VEC
    const int IB = NV * VW;
    for (; i0 + IB <= I; i0 += IB) {
        int o0 = 0;
        for (; o0 + MR <= O; o0 += MR) {
            vreal c[MR][NV];
            real *cp = C + (size_t)o0 * I + i0;
            for (int r = 0; r < MR; r++) for (int j = 0; j < NV; j++) c[r][j] = vld(cp + (size_t)r * I + j * VW);
            for (int n = 0; n < N; n++) {
                const real *a = A + (size_t)n * O + o0, *b = B + (size_t)n * I + i0;
                vreal w[NV];
                for (int j = 0; j < NV; j++) w[j] = vld(b + j * VW);
                for (int r = 0; r < MR; r++) {
                    real av = a[r];
                    for (int j = 0; j < NV; j++) c[r][j] += av * w[j];
                }
            }
            for (int r = 0; r < MR; r++) for (int j = 0; j < NV; j++) vst(cp + (size_t)r * I + j * VW, c[r][j]);
        }
        for (; o0 < O; o0++) {
            vreal c[NV];
            for (int j = 0; j < NV; j++) c[j] = vld(C + (size_t)o0 * I + i0 + j * VW);
            for (int n = 0; n < N; n++) {
                real a = A[(size_t)n * O + o0];
                for (int j = 0; j < NV; j++) c[j] += a * vld(B + (size_t)n * I + i0 + j * VW);
            }
            for (int j = 0; j < NV; j++) vst(C + (size_t)o0 * I + i0 + j * VW, c[j]);
        }
    }
    for (; i0 + VW <= I; i0 += VW)
        for (int o = 0; o < O; o++) {
            vreal c = vld(C + (size_t)o * I + i0);
            for (int n = 0; n < N; n++) c += A[(size_t)n * O + o] * vld(B + (size_t)n * I + i0);
            vst(C + (size_t)o * I + i0, c);
        }
#endif
    for (int o = 0; o < O; o++)
        for (int i = i0; i < I; i++) {
            real s = C[(size_t)o * I + i];
            for (int n = 0; n < N; n++) s += A[(size_t)n * O + o] * B[(size_t)n * I + i];
            C[(size_t)o * I + i] = s;
        }
}

/* Y[n][o] = sum_i X[n][i] W[o][i]  (Wt: W transposed, [i][o]) */
static void mm_fwd(real *Y, const real *X, const real *Wt, int N, int O, int I) { gemm_nn(Y, X, Wt, N, I, O, 0); }
/* dX[n][i] += sum_o dY[n][o] W[o][i];  dW[o][i] += sum_n dY[n][o] X[n][i] */
static void mm_bwd(real *dX, real *dW, const real *dY, const real *X, const real *W, int N, int O, int I) {
    if (dX) gemm_nn(dX, dY, W, N, O, I, 1);
    gemm_tn(dW, dY, X, N, O, I);
}

static void transpose(real *dst, const real *src, int rows, int cols) {
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < cols; c++) dst[(size_t)c * rows + r] = src[(size_t)r * cols + c];
}

/* ---- RMSNorm: y = x * r * w, r = 1/sqrt(mean(x^2) + eps) ---- */
static real rms_fwd(real *y, const real *x, const real *w, int n, double eps) {
    double ss = 0;
    for (int i = 0; i < n; i++) ss += (double)x[i] * x[i];
    real r = (real)(1.0 / sqrt(ss / n + eps));
    for (int i = 0; i < n; i++) y[i] = x[i] * r * w[i];
    return r;
}
static void rms_bwd(real *dx, real *dw, const real *dy, const real *x, const real *w, real r, int n) {
    double s = 0;
    for (int i = 0; i < n; i++) { s += (double)dy[i] * w[i] * x[i]; dw[i] += dy[i] * x[i] * r; }
    real k = (real)(s * r * r * r / n);
    for (int i = 0; i < n; i++) dx[i] += r * w[i] * dy[i] - k * x[i];
}

/* ---- RoPE, halves layout over the whole head: (x[i], x[i+d/2]) turns by pos * theta^(-2i/d) ---- */
static void rope_table(real *tab, int T, int hd, double theta) { /* [T][hd/2] cos, then [T][hd/2] sin */
    for (int t = 0; t < T; t++)
        for (int i = 0; i < hd / 2; i++) {
            double ang = t * pow(theta, -2.0 * i / hd);
            tab[(size_t)t * (hd / 2) + i] = (real)cos(ang);
            tab[(size_t)(T + t) * (hd / 2) + i] = (real)sin(ang);
        }
}
static void rope(real *x, int nh, int hd, const real *tab, int T, int pos, int inverse) {
    int half = hd / 2;
    for (int i = 0; i < half; i++) {
        real c = tab[(size_t)pos * half + i], s = tab[(size_t)(T + pos) * half + i];
        if (inverse) s = -s;
        for (int h = 0; h < nh; h++) {
            real *v = x + (size_t)h * hd;
            real a = v[i], b = v[i + half];
            v[i] = a * c - b * s;
            v[i + half] = b * c + a * s;
        }
    }
}

/* one head's columns of a [T][H] array, contiguous [T][hd]; and back (adding) */
static void head_get(real *dst, const real *src, int T, int H, int hd, int h) {
    for (int t = 0; t < T; t++) memcpy(dst + (size_t)t * hd, src + (size_t)t * H + (size_t)h * hd, (size_t)hd * sizeof(real));
}
static void head_add(real *dst, const real *src, int T, int H, int hd, int h) {
    for (int t = 0; t < T; t++)
        for (int i = 0; i < hd; i++) dst[(size_t)t * H + (size_t)h * hd + i] += src[(size_t)t * hd + i];
}

/* exp in the precision of `real` (float exp in training, double in the gradient test) */
static real rexp(real x) { return sizeof(real) == sizeof(float) ? (real)expf((float)x) : (real)exp((double)x); }

static real sigm(real x) { return (real)1 / ((real)1 + (real)exp(-(double)x)); }

/* Activations of one sequence, kept for the backward pass. */
typedef struct {
    real *x;       /* [L+1][T][H] residual stream entering each layer (x[L] = final) */
    real *xn1, *q, *k, *v, *P, *o, *x1, *xn2, *g, *u, *h; /* per layer */
    real *sg;      /* [L][T][I] sigmoid(g), kept so that the backward pass need not compute it again */
    real *r1, *r2; /* [L][T] */
    real *xf, *rf, *logits;
    /* backward scratch */
    real *dx, *dxn, *dq, *dk, *dv, *dP, *do_, *dg, *du, *dh, *dlogits, *dxf;
    real *hq, *hk, *hv, *hkt, *hvt, *hdo, *hdq, *hdk, *hdv, *S; /* one head, contiguous [T][hd] / [hd][T] / [T][T] */
    real *rope;
    /* dropout on the MLP's hidden units (training only; 0 = off): a unit is dropped where
     * drop_hash(dseed, layer, index) falls below `drop`, kept ones are scaled by 1/(1-drop);
     * the backward pass draws the same masks again instead of storing them */
    real drop;
    real adrop;    /* the same on the attention heads' output (before wo); 0 = off */
    uint64_t dseed;
} tact;

/* a unit's dropout draw: the engine's splitmix64 mixer over (seed, layer, index) */
static uint64_t drop_hash(uint64_t seed, int l, size_t i) { return ms_rng_seed(seed ^ ((uint64_t)(unsigned)l << 48) ^ (uint64_t)i); }
/* multiplies x[0..n) by each unit's factor, 0 (dropped) or 1/(1-p); `stream` keeps the MLP's
 * masks (the layer) apart from the attention output's (32 + the layer). Called only for p > 0. */
static void dropout(real *x, size_t n, real p, uint64_t seed, int stream) {
    const real keep = (real)(1.0 / (1.0 - p));
    for (size_t i = 0; i < n; i++) x[i] *= (double)(drop_hash(seed, stream, i) >> 11) * 0x1p-53 < p ? 0 : keep;
}

static size_t tact_count(const tcfg *c) {
    size_t T = (size_t)c->T, H = (size_t)c->H, I = (size_t)c->I, L = (size_t)c->L, nh = (size_t)c->nh, V = (size_t)c->V;
    return (L + 1) * T * H + L * (T * H * 7 + nh * T * T + T * I * 4 + 2 * T) + T * H + T + T * V
         + T * H * 6 + T * T + T * I * 3 + T * V + T * H
         + 9 * T * (H / nh) + T * T + T * (H / nh);
}

static void tact_view(const tcfg *c, real *b, tact *a) {
    size_t T = (size_t)c->T, H = (size_t)c->H, I = (size_t)c->I, L = (size_t)c->L, nh = (size_t)c->nh, V = (size_t)c->V;
#define TK(n) (b += (n), b - (n))
    a->x = TK((L + 1) * T * H);
    a->xn1 = TK(L * T * H); a->q = TK(L * T * H); a->k = TK(L * T * H); a->v = TK(L * T * H);
    a->P = TK(L * nh * T * T); a->o = TK(L * T * H); a->x1 = TK(L * T * H); a->xn2 = TK(L * T * H);
    a->g = TK(L * T * I); a->u = TK(L * T * I); a->h = TK(L * T * I); a->sg = TK(L * T * I);
    a->r1 = TK(L * T); a->r2 = TK(L * T);
    a->xf = TK(T * H); a->rf = TK(T); a->logits = TK(T * V);
    a->dx = TK(T * H); a->dxn = TK(T * H); a->dq = TK(T * H); a->dk = TK(T * H); a->dv = TK(T * H); a->do_ = TK(T * H);
    a->dP = TK(T * T); a->dg = TK(T * I); a->du = TK(T * I); a->dh = TK(T * I);
    a->dlogits = TK(T * V); a->dxf = TK(T * H);
    size_t hd = H / nh;
    a->hq = TK(T * hd); a->hk = TK(T * hd); a->hv = TK(T * hd); a->hkt = TK(T * hd); a->hvt = TK(T * hd);
    a->hdo = TK(T * hd); a->hdq = TK(T * hd); a->hdk = TK(T * hd); a->hdv = TK(T * hd); a->S = TK(T * T);
    a->rope = TK(T * hd);
    a->drop = 0;
    a->adrop = 0;
    a->dseed = 0;
#undef TK
}

/* transposed weights, refreshed after each optimizer step */
typedef struct { real *wq, *wk, *wv, *wo, *w1, *w2, *w3, *emb; } tT;

static void tT_refresh(const tcfg *c, const tparams *p, tT *t) {
    size_t H = (size_t)c->H, I = (size_t)c->I;
    for (int l = 0; l < c->L; l++) {
        transpose(t->wq + l * H * H, p->wq + l * H * H, c->H, c->H);
        transpose(t->wk + l * H * H, p->wk + l * H * H, c->H, c->H);
        transpose(t->wv + l * H * H, p->wv + l * H * H, c->H, c->H);
        transpose(t->wo + l * H * H, p->wo + l * H * H, c->H, c->H);
        transpose(t->w1 + l * I * H, p->w1 + l * I * H, c->I, c->H);
        transpose(t->w2 + l * H * I, p->w2 + l * H * I, c->H, c->I);
        transpose(t->w3 + l * I * H, p->w3 + l * I * H, c->I, c->H);
    }
    transpose(t->emb, p->emb, c->V, c->H);
}

/* Forward of one sequence tokens[0..T) predicting targets[0..T) (targets may be NULL);
 * returns the summed cross-entropy (nats). Fills a. */
static double t_forward(const tcfg *c, const tparams *p, const tT *wt, const int32_t *tok, const int32_t *tgt, tact *a) {
    const int T = c->T, H = c->H, I = c->I, nh = c->nh, hd = c->hd, V = c->V;
    const real scale = (real)(1.0 / sqrt((double)hd));
    rope_table(a->rope, T, hd, c->theta);
    for (int t = 0; t < T; t++) memcpy(a->x + (size_t)t * H, p->emb + (size_t)tok[t] * H, (size_t)H * sizeof(real));
    for (int l = 0; l < c->L; l++) {
        real *x = a->x + (size_t)l * T * H, *xn1 = a->xn1 + (size_t)l * T * H, *q = a->q + (size_t)l * T * H, *k = a->k + (size_t)l * T * H;
        real *v = a->v + (size_t)l * T * H, *P = a->P + (size_t)l * nh * T * T, *o = a->o + (size_t)l * T * H, *x1 = a->x1 + (size_t)l * T * H;
        real *xn2 = a->xn2 + (size_t)l * T * H, *g = a->g + (size_t)l * T * I, *u = a->u + (size_t)l * T * I, *h = a->h + (size_t)l * T * I;
        real *sg = a->sg + (size_t)l * T * I, *xo = a->x + (size_t)(l + 1) * T * H;
        for (int t = 0; t < T; t++) a->r1[l * T + t] = rms_fwd(xn1 + (size_t)t * H, x + (size_t)t * H, p->rms_att + (size_t)l * H, H, c->eps);
        mm_fwd(q, xn1, wt->wq + (size_t)l * H * H, T, H, H);
        mm_fwd(k, xn1, wt->wk + (size_t)l * H * H, T, H, H);
        mm_fwd(v, xn1, wt->wv + (size_t)l * H * H, T, H, H);
        for (int t = 0; t < T; t++) { rope(q + (size_t)t * H, nh, hd, a->rope, T, t, 0); rope(k + (size_t)t * H, nh, hd, a->rope, T, t, 0); }
        memset(o, 0, (size_t)T * H * sizeof(real));
        for (int hh = 0; hh < nh; hh++) {
            /* S = Q K^T / sqrt(d), causal softmax by rows, O = P V */
            real *pr = P + (size_t)hh * T * T;
            head_get(a->hq, q, T, H, hd, hh);
            head_get(a->hk, k, T, H, hd, hh);
            head_get(a->hv, v, T, H, hd, hh);
            transpose(a->hkt, a->hk, T, hd);
            gemm_nn(pr, a->hq, a->hkt, T, hd, T, 0);
            for (int t = 0; t < T; t++) {
                real *row = pr + (size_t)t * T, mx = -1e30f;
                for (int j2 = 0; j2 <= t; j2++) { row[j2] *= scale; if (row[j2] > mx) mx = row[j2]; }
                double z = 0;
                for (int j2 = 0; j2 <= t; j2++) { row[j2] = rexp(row[j2] - mx); z += row[j2]; }
                const real iz = (real)(1.0 / z);
                for (int j2 = 0; j2 <= t; j2++) row[j2] *= iz;
                for (int j2 = t + 1; j2 < T; j2++) row[j2] = 0;
            }
            gemm_nn(a->hdo, pr, a->hv, T, T, hd, 0);
            head_add(o, a->hdo, T, H, hd, hh);
        }
        if (a->adrop > 0) dropout(o, (size_t)T * H, a->adrop, a->dseed, 32 + l);
        mm_fwd(x1, o, wt->wo + (size_t)l * H * H, T, H, H);
        for (size_t i = 0; i < (size_t)T * H; i++) x1[i] += x[i];
        for (int t = 0; t < T; t++) a->r2[l * T + t] = rms_fwd(xn2 + (size_t)t * H, x1 + (size_t)t * H, p->rms_ffn + (size_t)l * H, H, c->eps);
        mm_fwd(g, xn2, wt->w1 + (size_t)l * I * H, T, I, H);
        mm_fwd(u, xn2, wt->w3 + (size_t)l * I * H, T, I, H);
        for (size_t i = 0; i < (size_t)T * I; i++) { sg[i] = sigm(g[i]); h[i] = g[i] * sg[i] * u[i]; }
        if (a->drop > 0) dropout(h, (size_t)T * I, a->drop, a->dseed, l);
        mm_fwd(xo, h, wt->w2 + (size_t)l * H * I, T, H, I);
        for (size_t i = 0; i < (size_t)T * H; i++) xo[i] += x1[i];
    }
    const real *xL = a->x + (size_t)c->L * T * H;
    for (int t = 0; t < T; t++) a->rf[t] = rms_fwd(a->xf + (size_t)t * H, xL + (size_t)t * H, p->rms_final, H, c->eps);
    mm_fwd(a->logits, a->xf, wt->emb, T, V, H);
    if (!tgt) return 0;
    double loss = 0;
    for (int t = 0; t < T; t++) { /* softmax kept in dlogits for the backward pass */
        const real *lg = a->logits + (size_t)t * V;
        real *pr = a->dlogits + (size_t)t * V, mx = lg[0];
        for (int i = 1; i < V; i++) if (lg[i] > mx) mx = lg[i];
        double z = 0;
        for (int i = 0; i < V; i++) { pr[i] = rexp(lg[i] - mx); z += pr[i]; }
        const real iz = (real)(1.0 / z);
        for (int i = 0; i < V; i++) pr[i] *= iz;
        loss += log(z) + mx - lg[tgt[t]];
    }
    return loss;
}

/* Backward of the summed loss times `scale` (1/tokens in the batch); adds into grads d. */
static void t_backward(const tcfg *c, const tparams *p, const int32_t *tok, const int32_t *tgt, tact *a, const tparams *d, real lscale) {
    const int T = c->T, H = c->H, I = c->I, nh = c->nh, hd = c->hd, V = c->V;
    const real scale = (real)(1.0 / sqrt((double)hd));
    /* a->rope still holds the forward pass's table */
    for (int t = 0; t < T; t++) { /* (softmax - onehot) / tokens; the forward pass left the softmax here */
        real *dl = a->dlogits + (size_t)t * V;
        for (int i = 0; i < V; i++) dl[i] *= lscale;
        dl[tgt[t]] -= lscale;
    }
    memset(a->dxf, 0, (size_t)T * H * sizeof(real));
    mm_bwd(a->dxf, d->emb, a->dlogits, a->xf, p->emb, T, V, H);
    memset(a->dx, 0, (size_t)T * H * sizeof(real));
    const real *xL = a->x + (size_t)c->L * T * H;
    for (int t = 0; t < T; t++) rms_bwd(a->dx + (size_t)t * H, d->rms_final, a->dxf + (size_t)t * H, xL + (size_t)t * H, p->rms_final, a->rf[t], H);
    for (int l = c->L - 1; l >= 0; l--) {
        real *x = a->x + (size_t)l * T * H, *xn1 = a->xn1 + (size_t)l * T * H, *q = a->q + (size_t)l * T * H, *k = a->k + (size_t)l * T * H;
        real *v = a->v + (size_t)l * T * H, *P = a->P + (size_t)l * nh * T * T, *o = a->o + (size_t)l * T * H, *x1 = a->x1 + (size_t)l * T * H;
        real *xn2 = a->xn2 + (size_t)l * T * H, *g = a->g + (size_t)l * T * I, *u = a->u + (size_t)l * T * I, *h = a->h + (size_t)l * T * I;
        const real *sg = a->sg + (size_t)l * T * I;
        /* x_out = x1 + W2 h ; h = silu(g) * u */
        memset(a->dh, 0, (size_t)T * I * sizeof(real));
        mm_bwd(a->dh, d->w2 + (size_t)l * H * I, a->dx, h, p->w2 + (size_t)l * H * I, T, H, I);
        if (a->drop > 0) dropout(a->dh, (size_t)T * I, a->drop, a->dseed, l); /* the forward's mask again */
        for (size_t i = 0; i < (size_t)T * I; i++) {
            real s = sg[i], si = g[i] * s;
            a->du[i] = a->dh[i] * si;
            a->dg[i] = a->dh[i] * u[i] * s * ((real)1 + g[i] * ((real)1 - s));
        }
        memset(a->dxn, 0, (size_t)T * H * sizeof(real));
        mm_bwd(a->dxn, d->w1 + (size_t)l * I * H, a->dg, xn2, p->w1 + (size_t)l * I * H, T, I, H);
        mm_bwd(a->dxn, d->w3 + (size_t)l * I * H, a->du, xn2, p->w3 + (size_t)l * I * H, T, I, H);
        /* dx (into x1) keeps the residual path; add the norm's contribution */
        for (int t = 0; t < T; t++)
            rms_bwd(a->dx + (size_t)t * H, d->rms_ffn + (size_t)l * H, a->dxn + (size_t)t * H, x1 + (size_t)t * H, p->rms_ffn + (size_t)l * H, a->r2[l * T + t], H);
        /* x1 = x + Wo o */
        memset(a->do_, 0, (size_t)T * H * sizeof(real));
        mm_bwd(a->do_, d->wo + (size_t)l * H * H, a->dx, o, p->wo + (size_t)l * H * H, T, H, H);
        if (a->adrop > 0) dropout(a->do_, (size_t)T * H, a->adrop, a->dseed, 32 + l);
        memset(a->dq, 0, (size_t)T * H * sizeof(real));
        memset(a->dk, 0, (size_t)T * H * sizeof(real));
        memset(a->dv, 0, (size_t)T * H * sizeof(real));
        for (int hh = 0; hh < nh; hh++) {
            const real *pr = P + (size_t)hh * T * T;
            head_get(a->hq, q, T, H, hd, hh);
            head_get(a->hk, k, T, H, hd, hh);
            head_get(a->hv, v, T, H, hd, hh);
            head_get(a->hdo, a->do_, T, H, hd, hh);
            transpose(a->hvt, a->hv, T, hd);
            gemm_nn(a->S, a->hdo, a->hvt, T, hd, T, 0);              /* dP = dO V^T */
            for (int t = 0; t < T; t++) {                             /* dS = P (dP - sum P dP) / sqrt(d) */
                const real *pt = pr + (size_t)t * T;
                real *st = a->S + (size_t)t * T;
                double sum = 0;
                for (int j2 = 0; j2 <= t; j2++) sum += (double)pt[j2] * st[j2];
                for (int j2 = 0; j2 <= t; j2++) st[j2] = pt[j2] * (st[j2] - (real)sum) * scale;
                for (int j2 = t + 1; j2 < T; j2++) st[j2] = 0;
            }
            memset(a->hdq, 0, (size_t)T * hd * sizeof(real));
            memset(a->hdk, 0, (size_t)T * hd * sizeof(real));
            memset(a->hdv, 0, (size_t)T * hd * sizeof(real));
            gemm_nn(a->hdq, a->S, a->hk, T, T, hd, 1);                /* dQ = dS K */
            gemm_tn(a->hdk, a->S, a->hq, T, T, hd);                   /* dK = dS^T Q */
            gemm_tn(a->hdv, pr, a->hdo, T, T, hd);                    /* dV = P^T dO */
            head_add(a->dq, a->hdq, T, H, hd, hh);
            head_add(a->dk, a->hdk, T, H, hd, hh);
            head_add(a->dv, a->hdv, T, H, hd, hh);
        }
        for (int t = 0; t < T; t++) { rope(a->dq + (size_t)t * H, nh, hd, a->rope, T, t, 1); rope(a->dk + (size_t)t * H, nh, hd, a->rope, T, t, 1); }
        memset(a->dxn, 0, (size_t)T * H * sizeof(real));
        mm_bwd(a->dxn, d->wq + (size_t)l * H * H, a->dq, xn1, p->wq + (size_t)l * H * H, T, H, H);
        mm_bwd(a->dxn, d->wk + (size_t)l * H * H, a->dk, xn1, p->wk + (size_t)l * H * H, T, H, H);
        mm_bwd(a->dxn, d->wv + (size_t)l * H * H, a->dv, xn1, p->wv + (size_t)l * H * H, T, H, H);
        for (int t = 0; t < T; t++)
            rms_bwd(a->dx + (size_t)t * H, d->rms_att + (size_t)l * H, a->dxn + (size_t)t * H, x + (size_t)t * H, p->rms_att + (size_t)l * H, a->r1[l * T + t], H);
    }
    for (int t = 0; t < T; t++) {
        real *de = d->emb + (size_t)tok[t] * H;
        const real *dx = a->dx + (size_t)t * H;
        for (int i = 0; i < H; i++) de[i] += dx[i];
    }
}

/* ---- AdamW with cosine schedule; weight decay on matrices only ---- */
typedef struct { double lr, min_lr, b1, b2, eps, wd, clip; int warmup, steps; } tadam;

static double t_lr(const tadam *o, int step) {
    if (step < o->warmup) return o->lr * (step + 1) / o->warmup;
    double pr = (double)(step - o->warmup) / (double)(o->steps > o->warmup ? o->steps - o->warmup : 1);
    if (pr > 1) pr = 1;
    return o->min_lr + 0.5 * (o->lr - o->min_lr) * (1 + cos(3.14159265358979323846 * pr));
}

/* One AdamW step in two parts, so that the update can be shared by threads. The caller sums the
 * threads' gradients and takes their norm (one pass in index order); t_adam_prep turns the norm
 * and the step into the step's constants, and t_adam_range updates elements [i0, i1). Each
 * element's update depends on that element alone, so any split gives the same weights, bit for
 * bit. Weight decay applies to matrices (wq..w3, emb), not to the norm weights. */
typedef struct { double clipk, lr, bc1, bc2; tparams pw; } tadam_k;

static tadam_k t_adam_prep(const tcfg *c, const tadam *o, int step, real *w, double gnorm) {
    tadam_k k;
    k.clipk = gnorm > o->clip ? o->clip / gnorm : 1.0;
    k.lr = t_lr(o, step);
    k.bc1 = 1 - pow(o->b1, step + 1);
    k.bc2 = 1 - pow(o->b2, step + 1);
    tparams_view(c, w, &k.pw);
    return k;
}

static void t_adam_range(const tcfg *c, const tadam *o, const tadam_k *k, real *w, const real *g, real *m, real *v, size_t i0, size_t i1) {
    const size_t LH = (size_t)c->L * (size_t)c->H;
    for (size_t i = i0; i < i1; i++) {
        const real *wi = w + i;
        int is_norm = (wi >= k->pw.rms_att && wi < k->pw.rms_att + LH) || (wi >= k->pw.rms_ffn && wi < k->pw.rms_ffn + LH) || wi >= k->pw.rms_final;
        double gi = g[i] * k->clipk;
        m[i] = (real)(o->b1 * m[i] + (1 - o->b1) * gi);
        v[i] = (real)(o->b2 * v[i] + (1 - o->b2) * gi * gi);
        double upd = (m[i] / k->bc1) / (sqrt(v[i] / k->bc2) + o->eps);
        if (!is_norm) upd += o->wd * w[i];
        w[i] = (real)(w[i] - k->lr * upd);
    }
}
