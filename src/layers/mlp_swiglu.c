#include "layers.h"

/* SwiGLU MLP:  mlp(m) = down_proj( silu(gate_proj m) ⊙ up_proj m ).
 * The three steps are separate so that hooks (mlp.hook_pre = gate_proj m, mlp.hook_pre_linear =
 * up_proj m, mlp.hook_post = the product) and interventions can sit between them. */
void ms_mlp_gate_up(ms_state *s, int l, const float *m_in, int B) {
    const ms_layer *L = &s->m->layers[l];
    ms_linear(s->m, L->gate, m_in, B, s->gate);
    ms_linear(s->m, L->up, m_in, B, s->up);
}

void ms_mlp_activate(ms_state *s, int B) {
    size_t n = (size_t)B * (size_t)s->m->cfg.intermediate;
    for (size_t i = 0; i < n; i++) s->gate[i] = ms_silu(s->gate[i]) * s->up[i];
}

void ms_mlp_down(ms_state *s, int l, int B, float *out) {
    ms_linear(s->m, s->m->layers[l].down, s->gate, B, out);
}
