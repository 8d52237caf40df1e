#include "layers.h"
#include "../util/threads.h"

/* SwiGLU MLP:  mlp(m) = down_proj( silu(gate_proj m) ⊙ up_proj m ); Gemma's GeGLU has the tanh
 * GELU in place of silu (gelu(z) = z/2 (1 + tanh(sqrt(2/pi) (z + 0.044715 z^3)))).
 * The three steps are separate so that hooks (mlp.hook_pre = gate_proj m, mlp.hook_pre_linear =
 * up_proj m, mlp.hook_post = the product) and interventions can sit between them. */
void ms_mlp_gate_up(ms_state *s, int l, const float *m_in, int B) {
    const ms_layer *L = &s->m->layers[l];
    ms_linear(s->m, L->gate, m_in, B, s->gate);
    ms_linear(s->m, L->up, m_in, B, s->up);
}

typedef struct { ms_state *s; int B, bilinear; } mlp_job;

static void activate_part(void *ctx, int part, int n) {
    const mlp_job *j = ctx;
    const size_t I = (size_t)j->s->m->cfg.intermediate;
    const size_t i0 = I * (size_t)(j->B * part / n), i1 = I * (size_t)(j->B * (part + 1) / n);
    float *g = j->s->gate, *u = j->s->up;
    if (!j->bilinear && j->s->m->cfg.gate_act == MS_GATE_GELU_TANH) j->s->m->kern.gelu_tanh_mul(g + i0, g + i0, u + i0, i1 - i0);
    else if (!j->bilinear) j->s->m->kern.silu_mul(g + i0, g + i0, u + i0, i1 - i0);
    else /* silu(z) = z/2 + z^2/4 - ... (gelu: z/2 + z^2/sqrt(2 pi) + ...): the first term makes the neuron
          * (w_gate.x)(w_in.x)/2, bilinear in x */
        for (size_t i = i0; i < i1; i++) g[i] = 0.5f * g[i] * u[i];
}

/* bilinear: the SiLU replaced by its linear term z/2 (an ablation: how far the layer is from a
 * bilinear MLP, analysis/weights.h's interaction matrix) */
void ms_mlp_activate(ms_state *s, int B, int bilinear) {
    mlp_job job = {s, B, bilinear};
    ms_pool_run(ms_pool_for_rows(s->m->pool, B), activate_part, &job); /* tokens over threads */
}

void ms_mlp_down(ms_state *s, int l, int B, float *out) {
    ms_linear(s->m, s->m->layers[l].down, s->gate, B, out);
}
