#include "layers.h"

/* Softmax attention, as in Llama and in Qwen3.5's full-attention layers:
 *   q, k, v = wq·xn, wk·xn, wv·xn        (Qwen3.5: wq also yields a gate per head, interleaved
 *                                         per head as [query(head_dim) | gate(head_dim)])
 *   q, k    = rmsnorm per head (Qwen3, Qwen3.5), then RoPE on the first rotary_dim dims
 *   o_h     = softmax(q_h·K_j / sqrt(head_dim)) V_j   over positions 0..p, kv head j = h / group
 *   o_h    *= sigmoid(gate_h)                (Qwen3.5)
 *   out     = wo·o                                                                            */
void ms_attention(ms_state *s, int l, const float *xn, int B, float *out) {
    const ms_model *m = s->m;
    const ms_config *c = &m->cfg;
    const ms_layer *L = &m->layers[l];
    const int hd = c->head_dim, nh = c->n_heads, nkv = c->n_kv_heads, group = nh / nkv;
    const int qd = nh * hd, kvd = nkv * hd, qstride = c->attn_gate ? 2 * hd : hd, qout = nh * qstride;
    const float scale = 1.0f / sqrtf((float)hd);

    ms_linear(m, L->wq, xn, B, s->qg);
    ms_linear(m, L->wk, xn, B, s->k);
    ms_linear(m, L->wv, xn, B, s->v);

    for (int t = 0; t < B; t++) {
        const int p = s->pos + t;
        float *q = s->qg + (size_t)t * qout, *k = s->k + (size_t)t * kvd, *v = s->v + (size_t)t * kvd;
        if (c->qk_norm) {
            for (int h = 0; h < nh; h++) ms_rmsnorm(q + h * qstride, q + h * qstride, L->q_norm->data, hd, c->eps, c->norm_offset);
            for (int h = 0; h < nkv; h++) ms_rmsnorm(k + h * hd, k + h * hd, L->k_norm->data, hd, c->eps, c->norm_offset);
        }
        ms_rope(q, nh, qstride, c->rotary_dim, p, c->rope_theta, c->rope_layout);
        ms_rope(k, nkv, hd, c->rotary_dim, p, c->rope_theta, c->rope_layout);
        memcpy(s->k_cache[l] + (size_t)p * kvd, k, (size_t)kvd * sizeof(float));
        memcpy(s->v_cache[l] + (size_t)p * kvd, v, (size_t)kvd * sizeof(float));
    }

    for (int t = 0; t < B; t++) {
        const int p = s->pos + t;
        const float *q = s->qg + (size_t)t * qout;
        float *o = s->o + (size_t)t * qd;
        for (int h = 0; h < nh; h++) {
            const float *qh = q + h * qstride;
            const int j = h / group;
            float *att = s->att, mx = -INFINITY;
            for (int u = 0; u <= p; u++) {
                att[u] = m->kern.dot(qh, s->k_cache[l] + (size_t)u * kvd + (size_t)j * hd, (size_t)hd) * scale;
                if (att[u] > mx) mx = att[u];
            }
            double sum = 0;
            for (int u = 0; u <= p; u++) { att[u] = expf(att[u] - mx); sum += att[u]; }
            float inv = (float)(1.0 / sum);
            float *oh = o + h * hd;
            memset(oh, 0, (size_t)hd * sizeof(float));
            for (int u = 0; u <= p; u++) {
                const float *vu = s->v_cache[l] + (size_t)u * kvd + (size_t)j * hd;
                const float a = att[u] * inv;
                for (int i = 0; i < hd; i++) oh[i] += a * vu[i];
            }
            if (c->attn_gate) {
                const float *g = qh + hd;
                for (int i = 0; i < hd; i++) oh[i] *= ms_sigmoid(g[i]);
            }
        }
    }
    ms_linear(m, L->wo, s->o, B, out);
}
