/* stress-threads: threaded forward passes compared with one thread, bit for bit, natively (the
 * pthread pool runs the same layers as wasm, with the generic kernels). Built by
 * `./build.sh stress` twice: build/native/stress-threads (-O2) and build/tsan/stress-threads
 * (clang -fsanitize=thread). Its wasm twin is bench/stress-threads.mjs.
 *
 *   stress-threads DIR... [--passes N] [--threads 2,3] [--modes plain,int8,exact] [--fresh K]
 *
 * For every weight set and activation mode: a one-thread reference (prefill of 69 tokens with
 * every token's logits, the statistics and two hook captures, then one decode step), then N passes
 * per thread count, each compared with it (memcmp); every K passes the model is loaded again with
 * the pool attached before its weights are laid out (a threaded repack). Prints one line per case
 * and a total; exit 1 on any difference. */
#include "../tools/native_host.h"
#include "../src/util/threads.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { T_PRE = 69, N_CAP = 2 };

typedef struct {
    float *logits_pre, *logits_dec, *cap[N_CAP];
    ms_stats *st;
} outputs;

static const char *const mode_names[] = {"plain", "int8", "exact"};

static int run_once(ms_model *m, ms_state *s, const int32_t *ids, outputs *o, ms_err *e) {
    const int L = m->cfg.n_layers;
    ms_capture caps[N_CAP] = {{1 % L, MS_HOOK_MLP_POST, o->cap[0], NULL, 0}, {3 % L, MS_HOOK_RESID_POST, o->cap[1], NULL, 0}};
    ms_forward_opts pre = {.stats = o->st, .captures = caps, .n_captures = N_CAP, .logits = o->logits_pre, .logits_all = 1};
    ms_forward_opts dec = {.logits = o->logits_dec};
    ms_state_reset(s);
    if (ms_forward(s, ids, T_PRE, &pre, e)) return 1;
    return ms_forward(s, ids + T_PRE, 1, &dec, e);
}

static int outputs_new(const ms_model *m, outputs *o) {
    const size_t V = (size_t)m->cfg.vocab;
    memset(o, 0, sizeof *o);
    o->logits_pre = calloc(V * T_PRE, sizeof(float));
    o->logits_dec = calloc(V, sizeof(float));
    o->cap[0] = calloc((size_t)T_PRE * (size_t)m->cfg.intermediate, sizeof(float));
    o->cap[1] = calloc((size_t)T_PRE * (size_t)m->cfg.hidden, sizeof(float));
    o->st = ms_stats_create(&m->cfg, T_PRE, 8);
    return o->logits_pre && o->logits_dec && o->cap[0] && o->cap[1] && o->st;
}
static void outputs_free(outputs *o) {
    free(o->logits_pre); free(o->logits_dec); free(o->cap[0]); free(o->cap[1]);
    ms_stats_free(o->st);
}

/* which output differs ("" if none): timings excepted */
static const char *differs(const ms_model *m, const outputs *a, const outputs *b) {
    const size_t V = (size_t)m->cfg.vocab;
    if (memcmp(a->logits_pre, b->logits_pre, V * T_PRE * sizeof(float))) return "prefill logits";
    if (memcmp(a->logits_dec, b->logits_dec, V * sizeof(float))) return "decode logits";
    if (memcmp(a->cap[0], b->cap[0], (size_t)T_PRE * (size_t)m->cfg.intermediate * sizeof(float))) return "blocks.1.mlp.hook_post";
    if (memcmp(a->cap[1], b->cap[1], (size_t)T_PRE * (size_t)m->cfg.hidden * sizeof(float))) return "blocks.3.hook_resid_post";
    for (int id = 0; id < MS_STAT__COUNT; id++) {
        if (id == MS_STAT_layer_ms) continue;
        const void *x = ms_stats_array(a->st, id), *y = ms_stats_array(b->st, id);
        if (x && memcmp(x, y, ms_stats_count(a->st, id) * ms_stat_table[id].elem_bytes)) return ms_stat_table[id].name;
    }
    return "";
}

static ms_model *load(const char *dir, int mode, ms_pool *pool, ms_err *e) {
    ms_native_load_opts lo = {.activations = mode, .pool = pool};
    return ms_load_weightset_opts(dir, &lo, NULL, e);
}

static int parse_list(const char *s, int *out, int max, const char *const *names, int n_names) {
    int n = 0;
    for (const char *p = s; *p && n < max;) {
        const char *q = strchr(p, ',');
        size_t len = q ? (size_t)(q - p) : strlen(p);
        int v = -1;
        for (int i = 0; names && i < n_names; i++) if (strlen(names[i]) == len && !strncmp(names[i], p, len)) v = i;
        if (!names) v = atoi(p);
        if (v < 0) return -1;
        out[n++] = v;
        p += len + (q ? 1 : 0);
    }
    return n;
}

int main(int argc, char **argv) {
    const char *dirs[16];
    int n_dirs = 0, passes = 200, fresh = 50, threads[8] = {2, 3}, n_threads = 2, modes[3] = {0, 1, 2}, n_modes = 3;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--passes") && i + 1 < argc) passes = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--fresh") && i + 1 < argc) fresh = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc) n_threads = parse_list(argv[++i], threads, 8, NULL, 0);
        else if (!strcmp(argv[i], "--modes") && i + 1 < argc) n_modes = parse_list(argv[++i], modes, 3, mode_names, 3);
        else if (argv[i][0] != '-' && n_dirs < 16) dirs[n_dirs++] = argv[i];
        else { fprintf(stderr, "stress-threads: unknown argument %s\n", argv[i]); return 2; }
    }
    if (!n_dirs || n_threads < 1 || n_modes < 1 || passes < 1 || fresh < 1) {
        fprintf(stderr, "usage: stress-threads DIR... [--passes N] [--threads 2,3] [--modes plain,int8,exact] [--fresh K]\n");
        return 2;
    }
    int32_t ids[T_PRE + 1];
    long total = 0, bad = 0;
    for (int d = 0; d < n_dirs; d++) for (int mi = 0; mi < n_modes; mi++) {
        ms_err e = {0};
        ms_model *m1 = load(dirs[d], modes[mi], NULL, &e);
        if (!m1) { fprintf(stderr, "%s: %s\n", dirs[d], e.msg); return 1; }
        for (int i = 0; i <= T_PRE; i++) ids[i] = (int32_t)((i * 131 + 7) % m1->cfg.vocab);
        outputs want, got;
        ms_state *s1 = ms_state_create(m1, 128, T_PRE, &e);
        if (!s1 || !outputs_new(m1, &want) || !outputs_new(m1, &got) || run_once(m1, s1, ids, &want, &e)) {
            fprintf(stderr, "%s: reference pass: %s\n", dirs[d], e.msg);
            return 1;
        }
        ms_state_free(s1);
        for (int ti = 0; ti < n_threads; ti++) {
            ms_pool *pool = ms_pool_new(threads[ti], &e);
            if (!pool) { fprintf(stderr, "pool: %s\n", e.msg); return 1; }
            long case_bad = 0;
            const char *first = "";
            ms_model *m = NULL;
            ms_state *s = NULL;
            for (int p = 0; p < passes; p++) {
                if (p % fresh == 0) { /* a fresh model: the weights laid out again, by the pool */
                    ms_state_free(s);
                    ms_model_free(m);
                    m = load(dirs[d], modes[mi], pool, &e);
                    s = m ? ms_state_create(m, 128, T_PRE, &e) : NULL;
                    if (!s) { fprintf(stderr, "%s: %s\n", dirs[d], e.msg); return 1; }
                }
                if (run_once(m, s, ids, &got, &e)) { fprintf(stderr, "threaded pass: %s\n", e.msg); return 1; }
                const char *what = differs(m1, &want, &got);
                if (*what) { if (!case_bad) first = what; case_bad++; }
            }
            printf("%s %s %d threads: %d passes, %ld differ%s%s\n", dirs[d], mode_names[modes[mi]], threads[ti], passes, case_bad,
                   case_bad ? ", first in " : "", first);
            fflush(stdout);
            total += passes;
            bad += case_bad;
            ms_state_free(s);
            ms_model_free(m);
            ms_pool_free(pool);
        }
        outputs_free(&want);
        outputs_free(&got);
        ms_model_free(m1);
    }
    printf("total: %ld threaded passes, %ld differ from one thread\n", total, bad);
    return bad ? 1 : 0;
}
