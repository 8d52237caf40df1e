#include "forward.h"
#include "../layers/layers.h"
#include "../util/platform.h"
#include <math.h>
#include <string.h>

/* Copy rows [B][width] of a hook (tokens t0 .. t0+B-1 of the call) into every capture that asked for it. */
static void capture(const ms_forward_opts *o, int l, int hook, const float *src, int width, int t0, int B) {
    for (int i = 0; i < o->n_captures; i++) {
        const ms_capture *c = &o->captures[i];
        if (c->layer != l || c->hook != hook) continue;
        if (!c->positions) memcpy(c->dst + (size_t)t0 * width, src, (size_t)B * width * sizeof(float));
        else
            for (int k = 0; k < c->n_positions; k++)
                if (c->positions[k] >= t0 && c->positions[k] < t0 + B)
                    memcpy(c->dst + (size_t)k * width, src + (size_t)(c->positions[k] - t0) * width, (size_t)width * sizeof(float));
    }
}

/* Apply the interventions on hook `hook` of layer l to rows [B][width] (sequence positions pos0 .. pos0+B-1). */
static void intervene(const ms_forward_opts *o, int l, int hook, float *x, int width, int pos0, int B) {
    for (int i = 0; i < o->n_interventions; i++) {
        const ms_intervention *iv = &o->interventions[i];
        if (iv->layer != l || iv->hook != hook) continue;
        const int n = iv->dims ? iv->n_dims : width;
        for (int t = 0; t < B; t++) {
            int hit = !iv->positions;
            for (int k = 0; !hit && k < iv->n_positions; k++) hit = iv->positions[k] == pos0 + t;
            if (!hit) continue;
            float *row = x + (size_t)t * width;
            for (int k = 0; k < n; k++) {
                float *v = row + (iv->dims ? iv->dims[k] : k);
                const float w = iv->vector ? iv->vector[k] : iv->value;
                if (iv->op == MS_IV_SCALE) *v *= iv->value;
                else if (iv->op == MS_IV_SET) *v = w;
                else *v += w;
            }
        }
    }
}

/* intervene, then capture: what every hook point does as the pass goes by */
static void hook_point(const ms_forward_opts *o, int l, int hook, float *x, int width, int t0, int pos0, int B) {
    if (o->n_interventions) intervene(o, l, hook, x, width, pos0, B);
    capture(o, l, hook, x, width, t0, B);
}

int ms_intervention_check(const ms_config *c, const ms_intervention *iv, int n_ctx, ms_err *err) {
    if (iv->hook < 0 || iv->hook >= MS_HOOK__COUNT) return ms_fail(err, MS_E_ARG, "intervention: no hook %d", iv->hook);
    if (iv->layer < 0 || iv->layer >= c->n_layers) return ms_fail(err, MS_E_ARG, "intervention: layer %d does not exist (the model has %d)", iv->layer, c->n_layers);
    if (iv->op < 0 || iv->op >= MS_IV__COUNT) return ms_fail(err, MS_E_ARG, "intervention: operation %d is not scale, set or add", iv->op);
    if (!isfinite(iv->value)) return ms_fail(err, MS_E_ARG, "intervention: the value is not a finite number");
    const int width = ms_hook_width(c, iv->hook);
    const char *name = ms_hook_table[iv->hook].name, *what = ms_hook_table[iv->hook].width == MS_WIDTH_MLP ? "neuron" : "dimension";
    if (iv->dims && (iv->n_dims < 1 || iv->n_dims > width)) return ms_fail(err, MS_E_ARG, "intervention on %s: %d components (it has %d)", name, iv->n_dims, width);
    for (int k = 0; iv->dims && k < iv->n_dims; k++)
        if (iv->dims[k] < 0 || iv->dims[k] >= width)
            return ms_fail(err, MS_E_ARG, "intervention on blocks.%d.%s: %s %d outside [0, %d)", iv->layer, name, what, iv->dims[k], width);
    for (int k = 0; iv->positions && k < iv->n_positions; k++)
        if (iv->positions[k] < 0 || iv->positions[k] >= n_ctx)
            return ms_fail(err, MS_E_ARG, "intervention: position %d outside the context [0, %d)", iv->positions[k], n_ctx);
    const int n = iv->dims ? iv->n_dims : width;
    for (int k = 0; iv->vector && k < n; k++)
        if (!isfinite(iv->vector[k])) return ms_fail(err, MS_E_ARG, "intervention: vector value %d is not a finite number", k);
    return MS_OK;
}

/* y[B][H] = b_dec + the features of dense[B][F] in index order (zeros skipped) */
static void decode_dense(const ms_transcoder *tc, const float *dense, int B, float *y) {
    const int H = tc->d_out, F = tc->n_features;
    for (int t = 0; t < B; t++) {
        float *yt = y + (size_t)t * H;
        memcpy(yt, tc->b_dec, (size_t)H * sizeof(float));
        for (int f = 0; f < F; f++) {
            const float a = dense[(size_t)t * F + f];
            if (a == 0) continue;
            const float *d = tc->w_dec + (size_t)f * H;
            for (int o = 0; o < H; o++) yt[o] += a * d[o];
        }
    }
}

/* The MLP's output read or replaced by a transcoder (forward.h, ms_mlp_replacement) */
static void replace_mlp(ms_state *s, const ms_mlp_replacement *r, int t0, int pos0, int B) {
    const ms_transcoder *tc = r->tc;
    const int F = tc->n_features, K = tc->k, H = tc->d_out;
    int32_t *idx = r->idx + (size_t)t0 * K;
    float *val = r->val + (size_t)t0 * K, *a = r->z;
    ms_transcoder_encode(tc, s->xn, B, r->z, idx, val, s->m->pool);
    if (r->keep_error && !r->features && !r->n_edits) return;
    memset(a, 0, (size_t)B * F * sizeof(float)); /* the features, dense (z is no longer needed) */
    for (int t = 0; t < B; t++)
        for (int i = 0; i < K; i++)
            if (idx[(size_t)t * K + i] >= 0) a[(size_t)t * F + idx[(size_t)t * K + i]] = val[(size_t)t * K + i];
    float *y0 = r->y, *y1 = r->y ? r->y + (size_t)B * H : NULL;
    if (r->n_edits && r->keep_error) decode_dense(tc, a, B, y0);
    for (int i = 0; i < r->n_edits; i++) {
        const ms_feature_edit *ed = &r->edits[i];
        for (int t = 0; t < B; t++) {
            int hit = !ed->positions;
            for (int k = 0; !hit && k < ed->n_positions; k++) hit = ed->positions[k] == pos0 + t;
            if (!hit) continue;
            const int f0 = ed->feature < 0 ? 0 : ed->feature, f1 = ed->feature < 0 ? F : ed->feature + 1;
            for (int f = f0; f < f1; f++) {
                float *v = a + (size_t)t * F + f;
                if (ed->op == MS_IV_SCALE) *v *= ed->value;
                else if (ed->op == MS_IV_SET) *v = ed->value;
                else *v += ed->value;
            }
        }
    }
    if (r->features) memcpy(r->features + (size_t)t0 * F, a, (size_t)B * F * sizeof(float));
    if (!r->keep_error) { decode_dense(tc, a, B, s->mlp_out); return; }
    if (!r->n_edits) return;
    decode_dense(tc, a, B, y1);
    for (size_t i = 0; i < (size_t)B * H; i++) /* what the edits change; nothing where they change nothing (not even -0 to +0) */
        if (y1[i] != y0[i]) s->mlp_out[i] += y1[i] - y0[i];
}

static void l2_rows(float *dst, const float *x, int width, int B) {
    for (int t = 0; t < B; t++) dst[t] = (float)ms_l2(x + (size_t)t * width, width);
}

static void add_rows(float *x, const float *d, size_t n) {
    for (size_t i = 0; i < n; i++) x[i] += d[i];
}

void ms_unembed(ms_state *s, const float *resid, float *logits) {
    const ms_model *m = s->m;
    ms_rmsnorm(s->row, resid, m->final_norm->data, m->cfg.hidden, m->cfg.eps, m->cfg.norm_offset);
    ms_linear(m, m->lm_head, s->row, 1, logits);
}

static int check(const ms_state *s, const int32_t *ids, int T, const ms_forward_opts *o, ms_err *err) {
    const ms_config *c = &s->m->cfg;
    if (!s->m->finalized) return ms_fail(err, MS_E_STATE, "model is not fully loaded");
    if (T < 1) return ms_fail(err, MS_E_ARG, "empty input: at least one token is needed");
    if ((int64_t)s->pos + T > s->n_ctx)
        return ms_fail(err, MS_E_CONTEXT, "context overflow: %d tokens at position %d exceed the context length %d", T, s->pos, s->n_ctx);
    for (int t = 0; t < T; t++)
        if (ids[t] < 0 || ids[t] >= c->vocab) return ms_fail(err, MS_E_TOKEN, "token id %d at position %d is outside [0, %d)", ids[t], t, c->vocab);
    if (!o) return MS_OK;
    if (o->stats && (o->stats->T != T || o->stats->n_layers != c->n_layers)) return ms_fail(err, MS_E_ARG, "stats buffer sized for another call");
    for (int i = 0; i < o->n_captures; i++) {
        const ms_capture *cp = &o->captures[i];
        if (cp->layer < 0 || cp->layer >= c->n_layers || cp->hook < 0 || cp->hook >= MS_HOOK__COUNT || !cp->dst)
            return ms_fail(err, MS_E_ARG, "capture %d: no hook %d in layer %d", i, cp->hook, cp->layer);
        for (int k = 0; cp->positions && k < cp->n_positions; k++)
            if (cp->positions[k] < 0 || cp->positions[k] >= T)
                return ms_fail(err, MS_E_ARG, "capture %d: position %d outside [0, %d)", i, cp->positions[k], T);
    }
    for (int i = 0; i < o->n_patterns; i++)
        if (o->patterns[i].layer < 0 || o->patterns[i].layer >= c->n_layers || c->mixer[o->patterns[i].layer] != MS_MIXER_ATTENTION || !o->patterns[i].dst)
            return ms_fail(err, MS_E_ARG, "attention pattern %d: layer %d is not a full-attention layer", i, o->patterns[i].layer);
    for (int l = 0; o->replace && l < c->n_layers; l++) {
        const ms_mlp_replacement *r = &o->replace[l];
        if (!r->tc) continue;
        if (r->tc->d_in != c->hidden || r->tc->d_out != c->hidden || !r->z || !r->idx || !r->val || r->rows < T || (r->n_edits && !r->y))
            return ms_fail(err, MS_E_ARG, "transcoder of layer %d: widths %d -> %d (the model's %d) or room for %d rows (%d tokens)", l, r->tc->d_in, r->tc->d_out, c->hidden, r->rows, T);
        for (int i = 0; i < r->n_edits; i++) {
            const ms_feature_edit *ed = &r->edits[i];
            if (ed->feature < -1 || ed->feature >= r->tc->n_features || ed->op < 0 || ed->op >= MS_IV__COUNT || !isfinite(ed->value))
                return ms_fail(err, MS_E_ARG, "blocks.%d.transcoder.hook_feature: feature %d (of %d), operation %d or value %g out of range", l, ed->feature, r->tc->n_features, ed->op, ed->value);
            for (int k = 0; ed->positions && k < ed->n_positions; k++)
                if (ed->positions[k] < 0 || ed->positions[k] >= s->n_ctx)
                    return ms_fail(err, MS_E_ARG, "blocks.%d.transcoder.hook_feature: position %d outside the context [0, %d)", l, ed->positions[k], s->n_ctx);
        }
    }
    for (int i = 0; i < o->n_interventions; i++) {
        const int rc = ms_intervention_check(c, &o->interventions[i], s->n_ctx, err);
        if (rc) return rc;
    }
    return MS_OK;
}

int ms_forward(ms_state *s, const int32_t *ids, int T, const ms_forward_opts *o, ms_err *err) {
    static const ms_forward_opts none = {0};
    int rc = check(s, ids, T, o, err);
    if (rc) return rc;
    if (!o) o = &none;
    const ms_model *m = s->m;
    const ms_config *c = &m->cfg;
    const int H = c->hidden, I = c->intermediate;
    ms_stats *st = o->stats;
    const int start = s->pos; /* the call's first token in the sequence */
    if (st)
        for (int l = 0; l < c->n_layers; l++) st->layer_ms[l] = 0;

    for (int t0 = 0; t0 < T; t0 += s->n_batch) {
        const int B = T - t0 < s->n_batch ? T - t0 : s->n_batch;
        const int pos0 = s->pos; /* the batch's first token in the sequence */
        for (int t = 0; t < B; t++) ms_tensor_row_f32(m->embed, ids[t0 + t], s->x + (size_t)t * H);
        if (c->embed_scale != 1.0f) /* Gemma: the embedding times sqrt(hidden_size) */
            for (size_t i = 0; i < (size_t)B * H; i++) s->x[i] *= c->embed_scale;

        for (int l = 0; l < c->n_layers; l++) {
            const ms_layer *L = &m->layers[l];
            const double t_start = ms_now_ms();
            const size_t at = (size_t)l * T + t0; /* stats index of (layer l, first token of batch) */

            /* resid_pre -> mixer -> resid_mid */
            hook_point(o, l, MS_HOOK_RESID_PRE, s->x, H, t0, pos0, B);
            if (st) l2_rows(st->resid_pre_l2 + at, s->x, H, B);
            ms_rmsnorm_rows(m, s->xn, s->x, L->input_norm->data, B, H, c->eps, c->norm_offset);
            hook_point(o, l, MS_HOOK_LN1_NORMALIZED, s->xn, H, t0, pos0, B);
            if (c->mixer[l] == MS_MIXER_ATTENTION) {
                ms_attn_pattern pat = {NULL, T, start + T, t0};
                for (int i = 0; i < o->n_patterns; i++)
                    if (o->patterns[i].layer == l) pat.dst = o->patterns[i].dst;
                ms_attention(s, l, s->xn, B, s->mix_out, pat.dst ? &pat : NULL);
            }
            else {
                ms_gated_deltanet(s, l, s->xn, B, s->mix_out, st ? s->gdn_norm2 : NULL,
                                  st ? st->gdn_decay + at : NULL, st ? st->gdn_beta + at : NULL);
                if (st)
                    for (int t = 0; t < B; t++)
                        for (int h = 0; h < st->gdn_heads; h++) {
                            const size_t k = (at + t) * st->gdn_heads + h, th = (size_t)t * st->gdn_heads + h;
                            st->gdn_state_norm[k] = (float)sqrt(s->gdn_norm2[th]);
                            st->gdn_decay_head[k] = expf(s->gdn_g[th]);
                            st->gdn_beta_head[k] = s->gdn_beta[th];
                            st->gdn_log_decay_head[k] = s->gdn_g[th];
                        }
            }
            if (L->attn_out_norm) /* Gemma 3: the mixer's output is normed before it joins the stream */
                ms_rmsnorm_rows(m, s->mix_out, s->mix_out, L->attn_out_norm->data, B, H, c->eps, c->norm_offset);
            hook_point(o, l, MS_HOOK_ATTN_OUT, s->mix_out, H, t0, pos0, B);
            if (st) l2_rows(st->attn_out_l2 + at, s->mix_out, H, B);
            add_rows(s->x, s->mix_out, (size_t)B * H);
            hook_point(o, l, MS_HOOK_RESID_MID, s->x, H, t0, pos0, B);
            if (st) l2_rows(st->resid_mid_l2 + at, s->x, H, B);

            /* the gated MLP (SwiGLU; Gemma: GeGLU) on its input norm (post_attention_layernorm;
             * Gemma: pre_feedforward_layernorm) */
            ms_rmsnorm_rows(m, s->xn, s->x, L->post_norm->data, B, H, c->eps, c->norm_offset);
            hook_point(o, l, MS_HOOK_LN2_NORMALIZED, s->xn, H, t0, pos0, B);
            ms_mlp_gate_up(s, l, s->xn, B);
            hook_point(o, l, MS_HOOK_MLP_PRE, s->gate, I, t0, pos0, B);
            hook_point(o, l, MS_HOOK_MLP_PRE_LINEAR, s->up, I, t0, pos0, B);
            ms_mlp_activate(s, B, o->bilinear_mlp && o->bilinear_mlp[l]);
            hook_point(o, l, MS_HOOK_MLP_POST, s->gate, I, t0, pos0, B);
            if (st && st->topk)
                for (int t = 0; t < B; t++)
                    ms_topk_abs(s->gate + (size_t)t * I, I, st->topk, st->top_idx + (at + t) * st->topk, st->top_val + (at + t) * st->topk);
            ms_mlp_down(s, l, B, s->mlp_out);
            if (L->mlp_out_norm) /* Gemma 3: post_feedforward_layernorm on what the MLP writes */
                ms_rmsnorm_rows(m, s->mlp_out, s->mlp_out, L->mlp_out_norm->data, B, H, c->eps, c->norm_offset);
            if (o->replace && o->replace[l].tc) replace_mlp(s, &o->replace[l], t0, pos0, B);
            hook_point(o, l, MS_HOOK_MLP_OUT, s->mlp_out, H, t0, pos0, B);
            if (st) l2_rows(st->mlp_out_l2 + at, s->mlp_out, H, B);
            add_rows(s->x, s->mlp_out, (size_t)B * H);
            hook_point(o, l, MS_HOOK_RESID_POST, s->x, H, t0, pos0, B);
            if (st) {
                l2_rows(st->resid_post_l2 + at, s->x, H, B);
                for (int t = 0; t < B; t++) {
                    float rp = st->resid_post_l2[at + t];
                    st->mlp_ratio[at + t] = rp > 0 ? st->mlp_out_l2[at + t] / rp : 0.0f;
                }
#ifdef MS_TEST_EXPORTS /* the test builds' own statistic (model/hooks.h, MS_STAT_TEST_ROWS) */
                for (int t = 0; t < B; t++) {
                    float mx = 0;
                    for (int i = 0; i < H; i++) mx = fmaxf(mx, fabsf(s->x[(size_t)t * H + i]));
                    st->resid_post_max[at + t] = mx;
                }
#endif
                st->layer_ms[l] += ms_now_ms() - t_start;
            }
        }
        s->pos += B;

        /* logits */
        if (o->logits && o->logits_all)
            for (int t = 0; t < B; t++) ms_unembed(s, s->x + (size_t)t * H, o->logits + (size_t)(t0 + t) * c->vocab);
        else if (o->logits && t0 + B == T)
            ms_unembed(s, s->x + (size_t)(B - 1) * H, o->logits);
    }
    return MS_OK;
}
