#include "native_host.h"
#include "../src/util/sha256.h"
#include "../src/io/llama2c_checkpoint.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int h_open(void *c, const char *name, int mode) {
    ms_native_io *h = c;
    char path[1100];
    if (mode == 'w') snprintf(path, sizeof path, "%s/%s", h->out_dir, name);
    else snprintf(path, sizeof path, "%s", name);
    FILE *f = fopen(path, mode == 'w' ? "wb" : "rb");
    if (!f) return -1;
    for (int i = 0; i < 64; i++)
        if (!h->files[i]) { h->files[i] = f; return i; }
    fclose(f);
    return -1;
}
static int h_close(void *c, int i) {
    ms_native_io *h = c;
    if (i < 0 || i >= 64 || !h->files[i]) return -1;
    int rc = fclose(h->files[i]);
    h->files[i] = NULL;
    return rc;
}
static int64_t h_size(void *c, int i) {
    ms_native_io *h = c;
    struct stat st;
    if (fstat(fileno(h->files[i]), &st)) return -1;
    return (int64_t)st.st_size;
}
static int h_read(void *c, int i, uint64_t off, void *buf, size_t n) {
    ms_native_io *h = c;
    if (fseeko(h->files[i], (off_t)off, SEEK_SET)) return -1;
    return fread(buf, 1, n, h->files[i]) == n ? 0 : -1;
}
static int h_write(void *c, int i, const void *buf, size_t n) {
    ms_native_io *h = c;
    return fwrite(buf, 1, n, h->files[i]) == n ? 0 : -1;
}
static void h_log(void *c, const char *line) { (void)c; fprintf(stderr, "%s\n", line); }

void ms_native_io_init(ms_native_io *h, ms_io *io, const char *out_dir) {
    memset(h, 0, sizeof *h);
    snprintf(h->out_dir, sizeof h->out_dir, "%s", out_dir ? out_dir : ".");
    *io = (ms_io){h, h_open, h_close, h_size, h_read, h_write, h_log, NULL};
}

void ms_native_io_close_all(ms_native_io *h) {
    for (int i = 0; i < 64; i++) if (h->files[i]) { fclose(h->files[i]); h->files[i] = NULL; }
}

uint8_t *ms_read_file(const char *path, size_t *len, ms_err *err) {
    FILE *f = fopen(path, "rb");
    if (!f) { ms_fail(err, MS_E_SHARD_MISSING, "%s: cannot open", path); return NULL; }
    struct stat st;
    if (fstat(fileno(f), &st) || st.st_size < 0) { fclose(f); ms_fail(err, MS_E_SHARD_MISSING, "%s: cannot stat", path); return NULL; }
    uint8_t *b = malloc((size_t)st.st_size + 1);
    if (!b) { fclose(f); ms_fail(err, MS_E_MEMORY, "%s: cannot allocate %lld bytes", path, (long long)st.st_size); return NULL; }
    if (fread(b, 1, (size_t)st.st_size, f) != (size_t)st.st_size) { fclose(f); free(b); ms_fail(err, MS_E_SHARD_SIZE, "%s: short read", path); return NULL; }
    fclose(f);
    b[st.st_size] = 0;
    *len = (size_t)st.st_size;
    return b;
}

ms_tokenizer *ms_load_tokenizer_file(const char *dir, const ms_tokinfo *ti, ms_err *err) {
    char path[1100];
    size_t len;
    snprintf(path, sizeof path, "%s/%s", dir, ti->file);
    uint8_t *tb = ms_read_file(path, &len, err);
    if (!tb) { if (err) err->code = MS_E_TOKEN; return NULL; }
    if (ti->sha256[0]) {
        char hex[65];
        ms_sha256_of(tb, len, hex);
        if (strcmp(hex, ti->sha256) != 0) {
            free(tb);
            ms_fail(err, MS_E_SHARD_HASH, "%s: sha256 %s does not match the manifest (%s)", ti->file, hex, ti->sha256);
            return NULL;
        }
    }
    ms_tokenizer *t = ms_tokenizer_load(ti->kind, tb, len, ti->vocab_size, err);
    free(tb);
    return t;
}

ms_model *ms_load_weightset(const char *dir, ms_tokenizer **tok, ms_err *err) {
    return ms_load_weightset_opts(dir, NULL, tok, err);
}

/* One shard from its file into the tensors' buffers, where ms_model_shard_layout places them (the
 * padding between tensors into a small buffer), hashed as it goes, then checked against the
 * manifest's size and sha256: what js/weightset.js does with a local file. */
static int read_shard(const ms_model *m, const char *dir, int s, double *segs, ms_err *err) {
    char path[1100];
    const ms_shard *sh = &m->shards[s];
    snprintf(path, sizeof path, "%s/%s", dir, sh->file);
    FILE *f = fopen(path, "rb");
    if (!f) return ms_fail(err, MS_E_SHARD_MISSING, "shard %s: cannot open", sh->file);
    struct stat st;
    if (fstat(fileno(f), &st) || (uint64_t)st.st_size != sh->bytes) {
        fclose(f);
        return ms_fail(err, MS_E_SHARD_SIZE, "shard %s: %lld bytes, manifest says %llu", sh->file, (long long)st.st_size, (unsigned long long)sh->bytes);
    }
    const int n = ms_model_shard_layout(m, s, segs);
    ms_sha256 hash;
    ms_sha256_init(&hash);
    uint8_t gap[4096];
    uint64_t pos = 0;
    int ok = 1;
    for (int k = 0; k <= n && ok; k++) {
        const uint64_t until = k < n ? (uint64_t)segs[3 * k] : sh->bytes;
        while (pos < until && ok) { /* padding before the next tensor (or the shard's end) */
            size_t len = until - pos > sizeof gap ? sizeof gap : (size_t)(until - pos);
            ok = fread(gap, 1, len, f) == len;
            ms_sha256_update(&hash, gap, len);
            pos += len;
        }
        if (k == n || !ok) break;
        uint8_t *dst = (uint8_t *)(uintptr_t)segs[3 * k + 2];
        const size_t len = (size_t)segs[3 * k + 1];
        ok = fread(dst, 1, len, f) == len;
        ms_sha256_update(&hash, dst, len);
        pos += len;
    }
    fclose(f);
    if (!ok) return ms_fail(err, MS_E_SHARD_SIZE, "shard %s: short read", sh->file);
    char hex[65];
    ms_sha256_final_hex(&hash, hex);
    if (strcmp(hex, sh->sha256) != 0) return ms_fail(err, MS_E_SHARD_HASH, "shard %s: sha256 %s, manifest says %s", sh->file, hex, sh->sha256);
    return MS_OK;
}

ms_model *ms_load_weightset_opts(const char *dir, const ms_native_load_opts *o, ms_tokenizer **tok, ms_err *err) {
    char path[1100];
    size_t len;
    snprintf(path, sizeof path, "%s/manifest.json", dir);
    uint8_t *text = ms_read_file(path, &len, err);
    if (!text) { if (err) err->code = MS_E_MANIFEST; return NULL; }
    /* the load every host runs (model/model.h): open, each shard filled then finished, finish */
    ms_model *m = ms_model_open((const char *)text, len, 1, 1, err);
    free(text);
    if (!m) return NULL;
    const int act = o ? o->activations : MS_ACT_PLAIN;
    double *segs = malloc(3 * (size_t)(m->n_tensors ? m->n_tensors : 1) * sizeof *segs);
    if (!segs) { ms_fail(err, MS_E_MEMORY, "out of memory"); goto fail; }
    if (o) m->pool = o->pool;
    for (int s = 0; s < m->n_shards; s++)
        if (read_shard(m, dir, s, segs, err) || ms_model_finish_shard(m, s, act, err)) goto fail;
    if (ms_model_finish(m, act, err)) goto fail;
    free(segs);
    segs = NULL;
    if (tok) {
        *tok = NULL;
        if (m->tok.kind[0] && strcmp(m->tok.kind, "none") != 0 && !(*tok = ms_load_tokenizer_file(dir, &m->tok, err))) goto fail;
    }
    return m;
fail:
    free(segs);
    ms_model_free(m);
    return NULL;
}

int ms_native_convert_llama2c(const char *ckpt, const char *tok, const char *out_dir, ms_err *err) {
    mkdir(out_dir, 0755);
    ms_native_io h;
    ms_io io;
    ms_native_io_init(&h, &io, out_dir);
    io.log = NULL;
    ms_conv_opts o = {.dtype = 0, .embed_dtype = -1, .shard_bytes = 0};
    int rc = ms_convert_llama2c(&io, ckpt, tok, &o, err);
    ms_native_io_close_all(&h);
    return rc;
}
