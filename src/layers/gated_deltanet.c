#include "layers.h"
#include "../util/threads.h"

/* Gated DeltaNet (Qwen3.5 linear-attention layers), spec §3.4-3.5.
 *
 *   mixed = in_proj_qkv·xn ; z = in_proj_z·xn ; b = in_proj_b·xn ; a = in_proj_a·xn
 *   y     = silu(causal depthwise conv(mixed))          (window: K-1 stored raw rows + this one)
 *   q,k,v = split(y) per head ; q,k L2-normalised ; q *= 1/sqrt(d_k)
 *   beta  = sigmoid(b) ; g = -exp(A_log) * softplus(a + dt_bias)           (g <= 0)
 *   per value head h (key head h / (Hv/Hk)):
 *       S  = exp(g) S                      decay first
 *       d  = beta (v - S^T k)              delta rule
 *       S += k d^T                         rank-1 update
 *       o  = S^T q                         read after the update
 *   o_h   = rmsnorm(o_h) * norm.weight * silu(z_h)      (plain weight, per head)
 *   out   = out_proj·o
 *
 * Decode runs the recurrence (gdn_step). Prefill runs the same math in chunks (gdn_chunk):
 * within a chunk the recurrence is solved as a triangular system, so the work is matrix-matrix
 * and the state is read and written once per chunk. gdn_step stays as its scalar reference. */

static float softplus(float u) { return u > 20.0f ? u : log1pf(expf(u)); }

static void l2norm(float *x, int n) {
    double ss = 0;
    for (int i = 0; i < n; i++) ss += (double)x[i] * x[i];
    float r = (float)(1.0 / sqrt(ss + 1e-6));
    for (int i = 0; i < n; i++) x[i] *= r;
}

/* One token, one head. S is [dk][dv]. */
static void gdn_step(float *S, const float *q, const float *k, const float *v, float beta, float g,
                     int dk, int dv, float *u, float *o) {
    const float e = expf(g);
    for (int j = 0; j < dv; j++) u[j] = 0;
    for (int i = 0; i < dk; i++) {
        float *Si = S + (size_t)i * dv;
        for (int j = 0; j < dv; j++) { Si[j] *= e; u[j] += Si[j] * k[i]; }
    }
    for (int j = 0; j < dv; j++) u[j] = beta * (v[j] - u[j]); /* u := d */
    for (int j = 0; j < dv; j++) o[j] = 0;
    for (int i = 0; i < dk; i++) {
        float *Si = S + (size_t)i * dv;
        for (int j = 0; j < dv; j++) {
            Si[j] += k[i] * u[j];
            o[j] += Si[j] * q[i];
        }
    }
}

/* A chunk of C tokens for one head: Q, K [C][dk] (token stride qs), V [C][dv] (stride vs),
 * beta[C], g[C]. Updates S, writes O [C][dv] (stride os). norm2 (optional): [C] squared state
 * norms after each token, stride ns. gk: the model's matrix-product kernel (kernels.h). */
static void gdn_chunk(float *S, const float *Q, const float *K, size_t qs, const float *V, size_t vs,
                      const float *beta, size_t bs, const float *g, float *O, size_t os, int C, int dk, int dv,
                      float *work, double *norm2, size_t ns, ms_gemm_acc_fn gk) {
    float *A = work, *Att = A + C * C, *KK = Att + C * C, *DD = KK + C * C;
    float *W = DD + C * C, *D = W + (size_t)C * dk, *cum = D + (size_t)C * dv;
    /* cumulative log-decay */
    float run = 0;
    for (int i = 0; i < C; i++) { run += g[i * bs]; cum[i] = run; }
    /* Gram matrices K K^T and Q K^T (through K^T, held in W's place until W is built), then the
     * decays and the triangular system (I + A); only entries j <= i are used */
    float *Kt = W;
    for (int i = 0; i < C; i++)
        for (int x = 0; x < dk; x++) Kt[(size_t)x * C + i] = K[i * qs + x];
    for (int i = 0; i < C * C; i++) KK[i] = Att[i] = 0;
    gk(KK, (size_t)C, K, qs, 1, Kt, (size_t)C, C, dk, C, 1.0f);
    gk(Att, (size_t)C, Q, qs, 1, Kt, (size_t)C, C, dk, C, 1.0f);
    for (int i = 0; i < C; i++)
        for (int j = 0; j <= i; j++) {
            const float dec = expf(cum[i] - cum[j]);
            A[i * C + j] = j < i ? beta[i * bs] * KK[i * C + j] * dec : 0;
            Att[i * C + j] *= dec;
        }
    /* forward substitution: D_i = beta_i v_i - sum_{j<i} A_ij D_j  (the U of the WY form)
     *                       W_i = beta_i e^{cum_i} k_i - sum_{j<i} A_ij W_j
     * in row blocks of SB: what earlier blocks contribute is one matrix product per block, only
     * the triangle inside a block goes row by row */
    enum { SB = 16 };
    for (int i = 0; i < C; i++) {
        const float bi = beta[i * bs], ei = expf(cum[i]);
        for (int x = 0; x < dv; x++) D[(size_t)i * dv + x] = bi * V[i * vs + x];
        for (int x = 0; x < dk; x++) W[(size_t)i * dk + x] = bi * ei * K[i * qs + x];
    }
    for (int b0 = 0; b0 < C; b0 += SB) {
        const int nb = C - b0 < SB ? C - b0 : SB;
        if (b0) {
            gk(D + (size_t)b0 * dv, (size_t)dv, A + (size_t)b0 * C, (size_t)C, 1, D, (size_t)dv, nb, b0, dv, -1.0f);
            gk(W + (size_t)b0 * dk, (size_t)dk, A + (size_t)b0 * C, (size_t)C, 1, W, (size_t)dk, nb, b0, dk, -1.0f);
        }
        for (int i = b0; i < b0 + nb; i++) {
            float *Di = D + (size_t)i * dv, *Wi = W + (size_t)i * dk;
            for (int j = b0; j < i; j++) {
                const float a = A[i * C + j];
                const float *Dj = D + (size_t)j * dv, *Wj = W + (size_t)j * dk;
                for (int x = 0; x < dv; x++) Di[x] -= a * Dj[x];
                for (int x = 0; x < dk; x++) Wi[x] -= a * Wj[x];
            }
        }
    }
    /* D -= W S0 : the new values the state actually absorbs */
    gk(D, (size_t)dv, W, (size_t)dk, 1, S, (size_t)dv, C, dk, dv, -1.0f);
    /* O_i = e^{cum_i} S0^T q_i + sum_{j<=i} Att_ij D_j  (Qe: the scaled q_i, in W's place) */
    float *Qe = W;
    for (int i = 0; i < C; i++) {
        const float ei = expf(cum[i]);
        float *Oi = O + i * os;
        for (int x = 0; x < dk; x++) Qe[(size_t)i * dk + x] = Q[i * qs + x] * ei;
        for (int y = 0; y < dv; y++) Oi[y] = 0;
    }
    gk(O, os, Qe, (size_t)dk, 1, S, (size_t)dv, C, dk, dv, 1.0f);
    for (int b0 = 0; b0 < C; b0 += SB) { /* the causal sum, in the same row blocks */
        const int nb = C - b0 < SB ? C - b0 : SB;
        if (b0) gk(O + (size_t)b0 * os, os, Att + (size_t)b0 * C, (size_t)C, 1, D, (size_t)dv, nb, b0, dv, 1.0f);
        for (int i = b0; i < b0 + nb; i++) {
            float *Oi = O + i * os;
            for (int j = b0; j <= i; j++) {
                const float a = Att[i * C + j];
                const float *Dj = D + (size_t)j * dv;
                for (int y = 0; y < dv; y++) Oi[y] += a * Dj[y];
            }
        }
    }
    /* Per-token state norms without materialising each state:
     *   S_i = a_i S0 + sum_{j<=i} c_ij k_j D_j^T,  a_i = e^{cum_i}, c_ij = e^{cum_i - cum_j}
     *   |S_i|^2 = a_i^2 |S0|^2 + 2 a_i P_i + F_i, with p_j = k_j^T S0 D_j,
     *   P_i = e^{g_i} P_{i-1} + p_i,  F_i = sum_{j,l<=i} c_ij c_il (k_j.k_l)(D_j.D_l). */
    if (norm2) {
        double n0 = 0;
        for (size_t x = 0; x < (size_t)dk * dv; x++) n0 += (double)S[x] * S[x];
        for (int j = 0; j < C; j++) {
            const float *Dj = D + (size_t)j * dv;
            for (int l = 0; l <= j; l++) {
                const float *Dl = D + (size_t)l * dv;
                float dd = 0;
                for (int y = 0; y < dv; y++) dd += Dj[y] * Dl[y];
                DD[j * C + l] = dd;
            }
        }
        /* KS = K S0 as one product (the work area has room for it after cum), then p_i = KS_i . D_i */
        float *KS = cum + C;
        for (size_t x = 0; x < (size_t)C * dv; x++) KS[x] = 0;
        gk(KS, (size_t)dv, K, qs, 1, S, (size_t)dv, C, dk, dv, 1.0f);
        double P = 0, F = 0;
        for (int i = 0; i < C; i++) {
            const float *KSi = KS + (size_t)i * dv, *Di = D + (size_t)i * dv;
            double pi = 0;
            for (int y = 0; y < dv; y++) pi += (double)KSi[y] * Di[y];
            const double eg = exp((double)g[i * bs]);
            /* cross sum over j < i of c_{i-1,j} G_ij, G = KK ⊙ DD */
            double cross = 0;
            for (int j = 0; j < i; j++) cross += exp((double)cum[i - 1] - cum[j]) * KK[i * C + j] * DD[i * C + j];
            F = eg * eg * F + 2 * eg * cross + (double)KK[i * C + i] * DD[i * C + i];
            P = eg * P + pi;
            const double ai = exp((double)cum[i]);
            double v = ai * ai * n0 + 2 * ai * P + F;
            norm2[i * ns] = v > 0 ? v : 0;
        }
    }
    /* S = e^{cum_last} S0 + sum_i e^{cum_last - cum_i} k_i D_i^T  (Kw: the scaled k_i, in W's place) */
    const float el = expf(cum[C - 1]);
    for (size_t x = 0; x < (size_t)dk * dv; x++) S[x] *= el;
    float *Kw = W;
    for (int i = 0; i < C; i++) {
        const float w = expf(cum[C - 1] - cum[i]);
        for (int x = 0; x < dk; x++) Kw[(size_t)i * dk + x] = w * K[i * qs + x];
    }
    gk(S, (size_t)dv, Kw, 1, (size_t)dk, D, (size_t)dv, dk, C, dv, 1.0f);
}

typedef struct {
    ms_state *s;
    int l, B;
    double *stats_norm2;
    float *stats_decay, *stats_beta;
} gdn_job;

/* Value heads [Hv * part / n, Hv * (part + 1) / n) of layer l for the B tokens in s->y, with
 * work area `part`: the recurrence token by token (decode, or the reference mode), else chunks. */
static void gdn_heads_part(void *ctx, int part, int n) {
    const gdn_job *j = ctx;
    ms_state *s = j->s;
    const ms_config *c = &s->m->cfg;
    const int Hk = c->lin_k_heads, Hv = c->lin_v_heads, dk = c->lin_k_dim, dv = c->lin_v_dim, B = j->B;
    const int kd = Hk * dk, vd = Hv * dv, conv = 2 * kd + vd, group = Hv / Hk;
    float *work = s->chunk + (size_t)part * ms_state_chunk_floats(c, MS_GDN_CHUNK_MAX);
    const int chunked = !s->gdn_recurrent && B > 1;
    for (int h = Hv * part / n; h < Hv * (part + 1) / n; h++) {
        const int kh = h / group;
        float *S = s->S[j->l] + (size_t)h * dk * dv;
        if (!chunked) {
            for (int t = 0; t < B; t++) {
                const float *yt = s->y + (size_t)t * conv;
                gdn_step(S, yt + kh * dk, yt + kd + kh * dk, yt + 2 * kd + h * dv,
                         s->gdn_beta[(size_t)t * Hv + h], s->gdn_g[(size_t)t * Hv + h], dk, dv,
                         work, s->core + (size_t)t * vd + h * dv);
                /* the state's squared norm (a statistic): the new state, still in cache */
                if (j->stats_norm2) j->stats_norm2[(size_t)t * Hv + h] = s->m->kern.sumsq(S, (size_t)dk * dv);
            }
        } else {
            for (int t0 = 0; t0 < B; t0 += s->gdn_chunk) {
                const int C = B - t0 < s->gdn_chunk ? B - t0 : s->gdn_chunk;
                const float *y0 = s->y + (size_t)t0 * conv;
                gdn_chunk(S, y0 + kh * dk, y0 + kd + kh * dk, (size_t)conv, y0 + 2 * kd + h * dv, (size_t)conv,
                          s->gdn_beta + (size_t)t0 * Hv + h, (size_t)Hv, s->gdn_g + (size_t)t0 * Hv + h,
                          s->core + (size_t)t0 * vd + h * dv, (size_t)vd, C, dk, dv, work,
                          j->stats_norm2 ? j->stats_norm2 + (size_t)t0 * Hv + h : NULL, (size_t)Hv, s->m->kern.gemm_acc);
            }
        }
        /* gated RMSNorm of this head's output (plain weight) */
        const ms_layer *L = &s->m->layers[j->l];
        for (int t = 0; t < B; t++) {
            float *o = s->core + (size_t)t * vd + h * dv;
            const float *z = s->z + (size_t)t * vd + h * dv;
            ms_rmsnorm(o, o, L->gdn_norm->data, dv, c->eps, 0.0f);
            s->m->kern.silu_mul(o, z, o, (size_t)dv);
        }
    }
}

/* Tokens [B * part / n, B * (part + 1) / n) of layer l: causal depthwise convolution over
 * [stored K-1 raw rows | this batch] and SiLU, L2-normalised q and k (q also scaled by
 * 1/sqrt(dk)), and the per-head beta = sigmoid(b), g = -exp(A_log) * softplus(a + dt_bias).
 * Each token's output depends only on inputs, so the tokens are shared out over the threads. */
static void gdn_prep_part(void *ctx, int part, int n) {
    const gdn_job *j = ctx;
    ms_state *s = j->s;
    const ms_config *c = &s->m->cfg;
    const ms_layer *L = &s->m->layers[j->l];
    const int Hk = c->lin_k_heads, Hv = c->lin_v_heads, dk = c->lin_k_dim, K = c->conv_kernel;
    const int kd = Hk * dk, conv = 2 * kd + Hv * c->lin_v_dim, B = j->B;
    const float *w = L->conv->data;        /* tap-major [K][conv] (laid out so by ms_model_prepare) */
    const float *hist = s->conv_state[j->l]; /* [K-1][conv], oldest first */
    const float *b = s->ba, *a = s->ba + (size_t)B * Hv;
    const float *A_log = L->A_log->data, *dt_bias = L->dt_bias->data;
    const float qscale = 1.0f / sqrtf((float)dk);
    for (int t = B * part / n; t < B * (part + 1) / n; t++) {
        const float *rows[MS_MAX_CONV_KERNEL]; /* input row of tap i: a batch row, or stored history */
        for (int i = 0; i < K; i++) {
            const int r = t - (K - 1) + i;
            rows[i] = r >= 0 ? s->mixed + (size_t)r * conv : hist + (size_t)(K - 1 + r) * conv;
        }
        float *yt = s->y + (size_t)t * conv;
        for (int ch = 0; ch < conv; ch++) yt[ch] = 0;
        for (int i = 0; i < K; i++) { /* taps in order, each along all channels */
            const float *wi = w + (size_t)i * conv, *ri = rows[i];
            for (int ch = 0; ch < conv; ch++) yt[ch] += wi[ch] * ri[ch];
        }
        s->m->kern.silu_mul(yt, yt, NULL, (size_t)conv);
        for (int h = 0; h < Hk; h++) {
            float *q = yt + h * dk, *k = yt + kd + h * dk;
            l2norm(q, dk);
            l2norm(k, dk);
            for (int i = 0; i < dk; i++) q[i] *= qscale;
        }
        double dsum = 0, bsum = 0;
        for (int h = 0; h < Hv; h++) {
            const float be = ms_sigmoid(b[(size_t)t * Hv + h]);
            const float g = -expf(A_log[h]) * softplus(a[(size_t)t * Hv + h] + dt_bias[h]);
            s->gdn_beta[(size_t)t * Hv + h] = be;
            s->gdn_g[(size_t)t * Hv + h] = g;
            dsum += exp((double)g);
            bsum += be;
        }
        if (j->stats_decay) j->stats_decay[t] = (float)(dsum / Hv);
        if (j->stats_beta) j->stats_beta[t] = (float)(bsum / Hv);
    }
}

void ms_gated_deltanet(ms_state *s, int l, const float *xn, int B, float *out,
                       double *stats_norm2, float *stats_decay, float *stats_beta) {
    const ms_model *m = s->m;
    const ms_config *c = &m->cfg;
    const ms_layer *L = &m->layers[l];
    const int Hk = c->lin_k_heads, Hv = c->lin_v_heads, dk = c->lin_k_dim, dv = c->lin_v_dim;
    const int K = c->conv_kernel, kd = Hk * dk, vd = Hv * dv, conv = 2 * kd + vd;
    float *b = s->ba, *a = s->ba + (size_t)B * Hv;

    /* projections */
    ms_linear(m, L->in_qkv, xn, B, s->mixed);
    ms_linear(m, L->in_z, xn, B, s->z);
    ms_linear(m, L->in_b, xn, B, b);
    ms_linear(m, L->in_a, xn, B, a);

    /* convolution, normalisation and gates per token; then the delta rule and the gated norm per
     * value head: both shared out over the model's threads (each part with its own work area) */
    gdn_job job = {s, l, B, stats_norm2, stats_decay, stats_beta};
    ms_pool *pool = ms_state_pool(s);
    ms_pool_run(ms_pool_for_rows(pool, B), gdn_prep_part, &job);
    if (K > 1) { /* keep the last K-1 raw rows */
        float *hist = s->conv_state[l];
        for (int r = 0; r < K - 1; r++) {
            int src = B - (K - 1) + r; /* row of the batch, or older history if negative */
            float *dst = hist + (size_t)r * conv;
            if (src >= 0) memcpy(dst, s->mixed + (size_t)src * conv, (size_t)conv * sizeof(float));
            else memmove(dst, hist + (size_t)(r + B) * conv, (size_t)conv * sizeof(float));
        }
    }
    ms_pool_run(Hv > 1 ? pool : NULL, gdn_heads_part, &job);
    ms_linear(m, L->out_proj, s->core, B, out);
}
