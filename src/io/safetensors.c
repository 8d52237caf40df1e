#include "safetensors.h"
#include "../kernels/dtype.h"
#include "../util/json.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ms_st_parse_len(const uint8_t b[8], uint64_t file_size, uint64_t *header_len, const char *what, ms_err *err) {
    uint64_t n = 0;
    for (int i = 7; i >= 0; i--) n = (n << 8) | b[i];
    if (file_size < 8) return ms_fail(err, MS_E_CHECKPOINT, "%s: %llu bytes is too short for a safetensors file", what, (unsigned long long)file_size);
    if (n < 2 || n > MS_ST_MAX_HEADER || n > file_size - 8)
        return ms_fail(err, MS_E_CHECKPOINT, "%s: header length %llu is impossible (file %llu bytes, limit %u)", what,
                       (unsigned long long)n, (unsigned long long)file_size, MS_ST_MAX_HEADER);
    *header_len = n;
    return MS_OK;
}

static int elem_size(const char *dt, int *ms_dt) {
    static const struct { const char *n; int sz, ms; } T[] = {
        {"F32", 4, MS_F32}, {"F16", 2, MS_F16}, {"BF16", 2, MS_BF16}, {"F64", 8, -1}, {"I64", 8, -1}, {"I32", 4, -1},
        {"I16", 2, -1}, {"I8", 1, -1}, {"U8", 1, -1}, {"BOOL", 1, -1}, {"U16", 2, -1}, {"U32", 4, -1}, {"U64", 8, -1},
        {"F8_E4M3", 1, -1}, {"F8_E5M2", 1, -1}};
    for (size_t i = 0; i < sizeof T / sizeof *T; i++)
        if (!strcmp(dt, T[i].n)) { *ms_dt = T[i].ms; return T[i].sz; }
    return 0;
}

typedef struct { uint64_t b, e; int i; } rng;
static int cmp_rng(const void *a, const void *b) {
    const rng *x = a, *y = b;
    return x->b < y->b ? -1 : x->b > y->b;
}

int ms_st_parse(const char *json, size_t len, uint64_t file_size, ms_st_file *out, const char *what, ms_err *err) {
    memset(out, 0, sizeof *out);
    ms_json j;
    char jerr[160];
    if (ms_json_parse(&j, json, len, jerr, sizeof jerr)) return ms_fail(err, MS_E_CHECKPOINT, "%s: header is not valid JSON: %s", what, jerr);
    int rc = MS_OK;
    if (j.nodes[0].type != MS_JOBJ) { rc = ms_fail(err, MS_E_CHECKPOINT, "%s: header is not a JSON object", what); goto done; }
    out->t = calloc((size_t)(j.nodes[0].count ? j.nodes[0].count : 1), sizeof *out->t);
    if (!out->t) { rc = ms_fail(err, MS_E_MEMORY, "out of memory"); goto done; }
    const uint64_t data_start = 8 + (uint64_t)len, data_size = file_size - data_start;
    for (int32_t e = j.nodes[0].child; e >= 0; e = j.nodes[e].next) {
        const char *name = ms_json_key(&j, e);
        if (!strcmp(name, "__metadata__")) {
            if (j.nodes[e].type != MS_JOBJ) { rc = ms_fail(err, MS_E_CHECKPOINT, "%s: __metadata__ must be an object", what); goto done; }
            continue;
        }
        if (strlen(name) >= sizeof out->t[0].name) { rc = ms_fail(err, MS_E_CHECKPOINT, "%s: tensor name too long", what); goto done; }
        for (int k = 0; k < out->n; k++)
            if (!strcmp(out->t[k].name, name)) { rc = ms_fail(err, MS_E_CHECKPOINT, "%s: tensor %s listed twice", what, name); goto done; }
        ms_st_tensor *t = &out->t[out->n];
        memcpy(t->name, name, strlen(name) + 1);
        if (j.nodes[e].type != MS_JOBJ) { rc = ms_fail(err, MS_E_CHECKPOINT, "%s: tensor %s: entry is not an object", what, name); goto done; }
        const char *dt = ms_json_str(&j, ms_json_get(&j, e, "dtype"));
        int ms_dt = -1, es = dt ? elem_size(dt, &ms_dt) : 0;
        if (!es) { rc = ms_fail(err, MS_E_CHECKPOINT, "%s: tensor %s: unknown dtype \"%s\"", what, name, dt ? dt : "(missing)"); goto done; }
        t->dtype = ms_dt;
        snprintf(t->dtype_name, sizeof t->dtype_name, "%s", dt);
        int32_t shp = ms_json_get(&j, e, "shape");
        if (shp < 0 || j.nodes[shp].type != MS_JARR || j.nodes[shp].count > 8) { rc = ms_fail(err, MS_E_CHECKPOINT, "%s: tensor %s: shape must be an array of at most 8 sizes", what, name); goto done; }
        uint64_t numel = 1;
        t->ndim = 0;
        for (int32_t s = j.nodes[shp].child; s >= 0; s = j.nodes[s].next) {
            int64_t v;
            if (!ms_json_int(&j, s, 0, (int64_t)1 << 40, &v)) { rc = ms_fail(err, MS_E_CHECKPOINT, "%s: tensor %s: bad dimension in shape", what, name); goto done; }
            t->shape[t->ndim++] = v;
            if (v && numel > UINT64_MAX / 16 / (uint64_t)v) { rc = ms_fail(err, MS_E_CHECKPOINT, "%s: tensor %s: shape overflows", what, name); goto done; }
            numel *= (uint64_t)v;
        }
        int32_t offs = ms_json_get(&j, e, "data_offsets");
        int64_t b, en;
        if (offs < 0 || j.nodes[offs].type != MS_JARR || j.nodes[offs].count != 2 ||
            !ms_json_int(&j, j.nodes[offs].child, 0, INT64_MAX / 2, &b) || !ms_json_int(&j, j.nodes[j.nodes[offs].child].next, 0, INT64_MAX / 2, &en)) {
            rc = ms_fail(err, MS_E_CHECKPOINT, "%s: tensor %s: data_offsets must be [begin, end]", what, name);
            goto done;
        }
        if (en < b || (uint64_t)en > data_size) { rc = ms_fail(err, MS_E_CHECKPOINT, "%s: tensor %s: data_offsets [%lld, %lld] outside the %llu data bytes", what, name, (long long)b, (long long)en, (unsigned long long)data_size); goto done; }
        if ((uint64_t)(en - b) != numel * (uint64_t)es) { rc = ms_fail(err, MS_E_CHECKPOINT, "%s: tensor %s: %lld bytes for %llu %s values", what, name, (long long)(en - b), (unsigned long long)numel, dt); goto done; }
        t->offset = data_start + (uint64_t)b;
        t->bytes = (uint64_t)(en - b);
        out->n++;
    }
    rng *r = malloc((size_t)(out->n ? out->n : 1) * sizeof *r);
    if (!r) { rc = ms_fail(err, MS_E_MEMORY, "out of memory"); goto done; }
    for (int k = 0; k < out->n; k++) r[k] = (rng){out->t[k].offset, out->t[k].offset + out->t[k].bytes, k};
    qsort(r, (size_t)out->n, sizeof *r, cmp_rng);
    for (int k = 1; k < out->n; k++)
        if (r[k].b < r[k - 1].e && r[k].e > r[k].b) {
            rc = ms_fail(err, MS_E_CHECKPOINT, "%s: tensors %s and %s overlap", what, out->t[r[k - 1].i].name, out->t[r[k].i].name);
            break;
        }
    free(r);
done:
    ms_json_free(&j);
    if (rc) ms_st_free(out);
    return rc;
}

void ms_st_free(ms_st_file *f) {
    free(f->t);
    memset(f, 0, sizeof *f);
}
