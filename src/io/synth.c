/* Deterministic synthetic weight sets for any config of every family (tests, benchmarks).
 * Values are uniform draws from a counter-based generator keyed by (seed, tensor name, index),
 * so any row block can be produced independently, identically on every platform.
 * Scaling keeps activations in a realistic range over many layers:
 *   embedding ~ unit variance (after Gemma's sqrt(hidden) scaling); input projections std 1/sqrt(fan_in); output projections
 *   (o_proj, out_proj, down_proj) std 1/sqrt(fan_in * 2 * layers); norm weights near their
 *   neutral value (1, or 0 for zero-centred norms); the V rows of in_proj_qkv get gain 4 so that
 *   Gated DeltaNet outputs stay well above the gated norm's epsilon (spec §9);
 *   A_log = log U(1, 16), dt_bias = softplus^-1(exp U(log 1e-3, log 1e-1)) as in HF's init. */
#include "synth.h"
#include "hf_config.h"
#include "../model/model.h"
#include "../kernels/dtype.h"
#include "../util/json.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t mix64(uint64_t z) {
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static uint64_t name_hash(const char *s) {
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* uniform in [0, 1) with 24 bits: exact in float on every platform */
static float unit(uint64_t key, uint64_t i) { return (float)(mix64(key ^ mix64(i)) >> 40) * (1.0f / 16777216.0f); }

static void synth_rows(const ms_conv_tensor *t, size_t r0, size_t nr, size_t cols, float *out) {
    for (size_t r = 0; r < nr; r++)
        for (size_t c = 0; c < cols; c++) {
            uint64_t i = (uint64_t)(r0 + r) * cols + c;
            float u = unit(t->gen_seed, i), v;
            if (t->gen == 2) {
                double dt = exp(log(1e-3) + u * (log(1e-1) - log(1e-3)));
                v = (float)(dt + log(-expm1(-dt)));
            } else if (t->gen == 3) v = (float)log(1.0 + 15.0 * u);
            else v = t->gen_lo + (t->gen_hi - t->gen_lo) * u + t->gen_add;
            if ((int64_t)(r0 + r) >= t->gen_split) v *= t->gen_gain;
            out[r * cols + c] = v;
        }
}

static int ends_with(const char *s, const char *suf) {
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && !strcmp(s + a - b, suf);
}

int ms_plan_synth(ms_conv_plan *p, const char *text, size_t len, uint64_t seed, ms_err *err) {
    memset(p, 0, sizeof *p);
    ms_config c;
    int rc = ms_config_from_text(text, len, &c, err);
    if (rc) return rc;
    ms_tensor *specs;
    int n;
    if (!ms_model_specs(&c, &specs, &n)) return ms_fail(err, MS_E_MEMORY, "out of memory");
    p->t = calloc((size_t)n, sizeof *p->t);
    if (!p->t) { free(specs); return ms_fail(err, MS_E_MEMORY, "out of memory"); }
    p->n = p->cap = n;
    const float zero_centred = c.norm_offset;
    for (int i = 0; i < n; i++) {
        const ms_tensor *s = &specs[i];
        ms_conv_tensor *t = &p->t[i];
        snprintf(t->name, sizeof t->name, "%s", s->name);
        t->ndim = s->ndim;
        memcpy(t->shape, s->shape, sizeof t->shape);
        t->is_matrix = s->is_matrix;
        t->src_file = -1;
        t->gen_rows = synth_rows;
        t->src_dtype = MS_F32;
        t->gen = 1;
        t->gen_seed = mix64(seed ^ name_hash(s->name));
        t->gen_split = INT64_MAX;
        t->gen_gain = 1;
        float a; /* half-width of the uniform range */
        if (!strcmp(s->name, "embed_tokens")) a = sqrtf(3.0f) / c.embed_scale; /* unit variance after Gemma's scaling */
        else if (ends_with(s->name, "dt_bias")) { t->gen = 2; a = 0; }
        else if (ends_with(s->name, "A_log")) { t->gen = 3; a = 0; }
        else if (ends_with(s->name, "conv1d")) a = 0.5f;
        else if (ends_with(s->name, "linear_attn.norm")) { a = 0.1f; t->gen_add = 1.0f; }
        else if (!s->is_matrix) { a = 0.1f; t->gen_add = zero_centred ? 0.0f : 1.0f; } /* norms */
        else {
            double fan_in = (double)s->cols, std = 1.0 / sqrt(fan_in);
            if (ends_with(s->name, "o_proj") || ends_with(s->name, "out_proj") || ends_with(s->name, "down_proj"))
                std /= sqrt(2.0 * c.n_layers);
            a = (float)(std * sqrt(3.0));
            if (ends_with(s->name, "in_proj_qkv")) { t->gen_split = 2 * (int64_t)ms_cfg_gdn_key_dim(&c); t->gen_gain = 4.0f; }
        }
        t->gen_lo = -a;
        t->gen_hi = a;
    }
    free(specs);
    snprintf(p->family, sizeof p->family, "%s", ms_family_name(c.family));
    ms_buf b = {0};
    ms_config_to_json(&c, &b);
    if (b.oom) { ms_buf_free(&b); return ms_fail(err, MS_E_MEMORY, "out of memory"); }
    p->config_json = b.p;
    return MS_OK;
}

int ms_convert_synth(const ms_io *io, const char *config_or_preset, size_t len, uint64_t seed, const ms_conv_opts *o, ms_err *err) {
    const char *preset = ms_config_preset(config_or_preset);
    ms_conv_plan p;
    int rc = ms_plan_synth(&p, preset ? preset : config_or_preset, preset ? strlen(preset) : len, seed, err);
    if (rc) { ms_plan_free(&p); return rc; }
    return ms_convert_finish(&p, io, o, err);
}
