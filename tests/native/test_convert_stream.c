/* The converter fed from outside, as js/hub.js feeds it in wasm while a checkpoint streams in —
 * natively, and under ASan/UBSan. A tiny Hugging Face checkpoint (BF16, plus a buffer the plan must
 * skip) is written; ms_convert_finish converts the folder (the reference); the streaming plan is
 * made from the same files and every tensor's source bytes are handed over in row blocks of uneven
 * sizes, converted straight into shard buffers. Shards and manifest must equal the reference byte
 * for byte. Rows outside a tensor and unknown tensors are E_ARG; a NaN is E_TENSOR naming it. */
#include "check.h"
#include "../../tools/native_host.h"
#include "../../src/io/conv_stream.h"
#include "../../src/io/hf_checkpoint.h"
#include "../../src/io/hf_config.h"
#include "../../src/model/model.h"
#include "../../src/util/json.h"
#include "../../src/util/sha256.h"
#include "../../src/kernels/dtype.h"
#include "../../src/kernels/quant.h"
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <math.h>

static const char CONFIG[] = "{\"model_type\": \"llama\", \"hidden_size\": 64, \"intermediate_size\": 96, \"num_hidden_layers\": 2, "
    "\"vocab_size\": 80, \"num_attention_heads\": 4, \"num_key_value_heads\": 2, \"rope_theta\": 10000.0, "
    "\"max_position_embeddings\": 128, \"tie_word_embeddings\": false}";

static uint8_t *slurp(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = malloc((size_t)len + 1);
    if (b && fread(b, 1, (size_t)len, f) != (size_t)len) { free(b); b = NULL; }
    fclose(f);
    *n = (size_t)len;
    return b;
}

/* config.json + model.safetensors for CONFIG: every tensor BF16 with values from a formula, and a
 * rotary inv_freq buffer (F32) that the converter skips */
static int write_checkpoint(const char *dir) {
    char path[600];
    snprintf(path, sizeof path, "%s/config.json", dir);
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    fputs(CONFIG, f);
    fclose(f);
    ms_config c;
    ms_err e = {0};
    if (ms_config_from_text(CONFIG, sizeof CONFIG - 1, &c, &e)) return -1;
    ms_tensor *specs;
    int n;
    if (!ms_model_specs(&c, &specs, &n)) return -1;
    ms_buf h = {0};
    uint64_t off = 0;
    ms_buf_puts(&h, "{\"__metadata__\": {\"format\": \"pt\"}, \"model.layers.0.self_attn.rotary_emb.inv_freq\": {\"dtype\": \"F32\", \"shape\": [8], \"data_offsets\": [0, 32]}");
    off = 32;
    for (int i = 0; i < n; i++) {
        uint64_t cnt = 1;
        for (int d = 0; d < specs[i].ndim; d++) cnt *= (uint64_t)specs[i].shape[d];
        if (!strcmp(specs[i].name, "lm_head")) ms_buf_puts(&h, ", \"lm_head.weight\"");
        else ms_buf_printf(&h, ", \"model.%s.weight\"", specs[i].name);
        ms_buf_puts(&h, ": {\"dtype\": \"BF16\", \"shape\": [");
        for (int d = 0; d < specs[i].ndim; d++) ms_buf_printf(&h, "%s%lld", d ? ", " : "", (long long)specs[i].shape[d]);
        ms_buf_printf(&h, "], \"data_offsets\": [%llu, %llu]}", (unsigned long long)off, (unsigned long long)(off + 2 * cnt));
        off += 2 * cnt;
    }
    ms_buf_puts(&h, "}");
    while ((8 + h.n) % 8) ms_buf_puts(&h, " ");
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    f = fopen(path, "wb");
    if (!f || h.oom) { free(specs); ms_buf_free(&h); if (f) fclose(f); return -1; }
    uint64_t hl = h.n;
    fwrite(&hl, 8, 1, f); /* little-endian hosts only, like the converter's tests */
    fwrite(h.p, 1, h.n, f);
    for (int k = 0; k < 8; k++) { float v = 1.0f / (float)(k + 1); fwrite(&v, 4, 1, f); }
    uint64_t k = 0;
    for (int i = 0; i < n; i++) {
        uint64_t cnt = 1;
        for (int d = 0; d < specs[i].ndim; d++) cnt *= (uint64_t)specs[i].shape[d];
        for (uint64_t j = 0; j < cnt; j++, k++) {
            uint16_t b = ms_f32_to_bf16(0.05f * sinf((float)k * 0.37f) + (strstr(specs[i].name, "norm") ? 1.0f : 0.0f));
            fwrite(&b, 2, 1, f);
        }
    }
    fclose(f);
    free(specs);
    ms_buf_free(&h);
    return 0;
}

void test_convert_stream(const ms_t_env *env) {
    char dir[512], ref[512], path[700];
    snprintf(dir, sizeof dir, "%s/cs-hf", env->tmp);
    snprintf(ref, sizeof ref, "%s/cs-ref", env->tmp);
    mkdir(dir, 0755);
    mkdir(ref, 0755);
    CHECK(write_checkpoint(dir) == 0, "writing the checkpoint");
    ms_conv_opts o = {.dtype = MS_Q8_0, .embed_dtype = MS_Q4_0, .shard_bytes = 16384};

    /* the reference: the folder converted by the converter itself */
    ms_native_io h;
    ms_io io;
    ms_native_io_init(&h, &io, ref);
    ms_err e = {0};
    ms_conv_plan p;
    int rc = ms_plan_hf(&p, &io, dir, &e);
    if (!rc) rc = ms_convert_finish(&p, &io, &o, &e);
    else ms_plan_free(&p);
    CHECK(rc == 0, "convert: %s", e.msg);
    ms_native_io_close_all(&h);

    /* the same, fed from outside */
    ms_native_io h2;
    ms_io io2;
    ms_native_io_init(&h2, &io2, env->tmp);
    ms_conv_stream s;
    rc = ms_conv_stream_open_hf(&s, &io2, dir, &o, &e);
    CHECK(rc == 0, "stream plan: %s", e.msg);
    if (rc) return;
    CHECK(s.n_shards > 1, "several shards (%d)", s.n_shards);
    uint64_t *sizes = calloc((size_t)s.n_shards, sizeof *sizes);
    uint8_t **shard = calloc((size_t)s.n_shards, sizeof *shard);
    ms_plan_shard_sizes(&s.plan, s.n_shards, sizes);
    for (int k = 0; k < s.n_shards; k++) shard[k] = calloc(1, (size_t)sizes[k] + 1);
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    size_t flen = 0;
    uint8_t *file = slurp(path, &flen);
    CHECK(file != NULL, "reading the checkpoint back");
    size_t steps[] = {1, 3, 7, 2, 11, 5};
    int step = 0;
    for (int i = 0; file && i < s.plan.n; i++) {
        const ms_conv_tensor *t = &s.plan.t[i];
        size_t rows = (size_t)t->shape[0], rb = ms_conv_row_src_bytes(t);
        CHECK(t->src_off + rows * rb <= flen, "tensor %s inside the file", t->name);
        for (size_t r0 = 0; r0 < rows;) {
            size_t nr = steps[step++ % 6];
            if (nr > rows - r0) nr = rows - r0;
            rc = ms_conv_stream_rows(&s, i, file + t->src_off + r0 * rb, r0, nr, shard[t->shard] + t->offset, &e);
            CHECK(rc == 0, "rows %zu..%zu of %s: %s", r0, r0 + nr, t->name, e.msg);
            r0 += nr;
        }
    }
    char *hex = calloc((size_t)s.n_shards * 64 + 1, 1);
    for (int k = 0; k < s.n_shards; k++) {
        ms_sha256 sh;
        uint8_t d[32];
        char hx[65];
        ms_sha256_init(&sh);
        ms_sha256_update(&sh, shard[k], (size_t)sizes[k]);
        ms_sha256_final(&sh, d);
        ms_sha256_hex(d, hx);
        memcpy(hex + 64 * k, hx, 64);
        snprintf(path, sizeof path, "%s/model-%05d-of-%05d.bin", ref, k + 1, s.n_shards);
        size_t n = 0;
        uint8_t *want = slurp(path, &n);
        CHECK(want && n == sizes[k] && !memcmp(want, shard[k], n), "shard %d equals the converter's (%zu vs %llu bytes)", k, n, (unsigned long long)sizes[k]);
        free(want);
    }
    ms_buf man = {0};
    rc = ms_conv_stream_manifest(&s, hex, &man, &e);
    snprintf(path, sizeof path, "%s/manifest.json", ref);
    size_t mn = 0;
    uint8_t *mwant = slurp(path, &mn);
    CHECK(rc == 0 && mwant && man.n == mn && !memcmp(man.p, mwant, mn), "manifest equals the converter's");
    free(mwant);
    ms_buf_free(&man);

    /* wrong calls and a NaN */
    uint16_t nan_row[256];
    for (int k = 0; k < 256; k++) nan_row[k] = ms_f32_to_bf16(0.5f);
    CHECK(ms_conv_stream_rows(&s, s.plan.n, nan_row, 0, 1, shard[0], &e) == MS_E_ARG, "tensor index out of range");
    e = (ms_err){0};
    CHECK(ms_conv_stream_rows(&s, 0, nan_row, (size_t)s.plan.t[0].shape[0], 1, shard[0], &e) == MS_E_ARG && strstr(e.msg, s.plan.t[0].name), "rows past the end: %s", e.msg);
    e = (ms_err){0};
    int w = -1;
    for (int i = 0; i < s.plan.n && w < 0; i++) if (s.plan.t[i].ndim == 2 && ms_conv_row_src_bytes(&s.plan.t[i]) <= sizeof nan_row) w = i;
    if (w >= 0) {
        nan_row[3] = 0x7fc0;
        rc = ms_conv_stream_rows(&s, w, nan_row, 0, 1, shard[s.plan.t[w].shard] + s.plan.t[w].offset, &e);
        CHECK(rc == MS_E_TENSOR && strstr(e.msg, s.plan.t[w].name) && strstr(e.msg, "not finite"), "NaN named: %s", e.msg);
    }
    free(file);
    free(hex);
    for (int k = 0; k < s.n_shards; k++) free(shard[k]);
    free(shard);
    free(sizes);
    ms_conv_stream_close(&s);
    ms_native_io_close_all(&h2);
}
