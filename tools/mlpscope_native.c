/* mlpscope-native: the native build of the converter and runner (for tools, tests and
 * sanitizers). Users normally run `mlpscope` (Node + wasm), which has the same commands.
 *   mlpscope-native convert CKPT TOKENIZER --out DIR [--dtype f32|f16|bf16|q8|q4] [--shard-size BYTES]
 *   mlpscope-native run DIR (--prompt TEXT | --ids 1,2,3) [--max-tokens N] [--temperature T] [--top-k K]
 *        [--top-p P] [--seed S] [--threads N]
 *   mlpscope-native synth --config (qwen3.5-0.8b | llama-398m | FILE.json) [--seed S] [--dtype D] --out DIR
 *   mlpscope-native forward DIR --ids 1,2,3 [--recurrent] [--chunk N] [--batch N] [--split K]
 *        one forward pass; prints JSON {logits (last token), stats, info} (tests compare it)
 *   mlpscope-native info DIR      parameter counts and memory
 *   mlpscope-native tokenize SOURCE --text T   SOURCE: a weight set or a folder with tokenizer.json
 *   mlpscope-native transcoder train DIR --train TEXT --val TEXT --out OUT [--layers 0,3 | --layer L]
 *        [--features F] [--k K] [--train-tokens N] [--val-tokens N] [--epochs E] [--batch B]
 *        [--buffer N] [--lr X] [--seed S] [--threads N] [--no-replacement]
 *        transcoders for the MLPs (docs/cli.md, "Transcoders"); TEXT: paragraphs apart by a blank line */
#include "native_host.h"
#include "../src/util/threads.h"
#include "../src/engine/sample.h"
#include "../src/kernels/dtype.h"
#include "../src/io/hf_config.h"
#include "../src/io/hf_checkpoint.h"
#include "../src/io/llama2c_checkpoint.h"
#include "../src/io/synth.h"
#include "../src/model/hooks.h"
#include "../src/util/json.h"
#include "../src/util/platform.h"
#include "../src/analysis/tc_session.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int die(const ms_err *e) {
    fprintf(stderr, "error %s: %s\n", ms_code_name(e->code), e->msg);
    return 1;
}

static int parse_dtype(const char *s) {
    if (!strcmp(s, "q8")) return MS_Q8_0;
    if (!strcmp(s, "q4")) return MS_Q4_0;
    return ms_dtype_from_name(s);
}

static int cmd_convert(int argc, char **argv) {
    const char *src[2] = {0}, *out = NULL;
    int ns = 0, dtype = MS_F32, embed_dtype = -1;
    unsigned long long shard = 64ull << 20;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--out") && i + 1 < argc) out = argv[++i];
        else if (!strcmp(argv[i], "--dtype") && i + 1 < argc) dtype = parse_dtype(argv[++i]);
        else if (!strcmp(argv[i], "--embed-dtype") && i + 1 < argc) embed_dtype = parse_dtype(argv[++i]);
        else if (!strcmp(argv[i], "--shard-size") && i + 1 < argc) shard = strtoull(argv[++i], NULL, 10);
        else if (ns < 2) src[ns++] = argv[i];
    }
    ms_err e = {0};
    if (ns < 1 || !out) { fprintf(stderr, "usage: mlpscope-native convert CKPT TOKENIZER --out DIR [--dtype D]\n"); return 2; }
    if (dtype < 0 || embed_dtype < -1) { ms_fail(&e, MS_E_ARG, "unknown dtype"); return die(&e); }
    mkdir(out, 0755);
    ms_native_io h;
    ms_io io;
    ms_native_io_init(&h, &io, out);
    ms_conv_plan p;
    struct stat sst;
    int is_dir = stat(src[0], &sst) == 0 && S_ISDIR(sst.st_mode);
    int rc = is_dir ? ms_plan_hf(&p, &io, src[0], &e) : ms_plan_llama2c(&p, &io, src[0], src[1], &e);
    ms_conv_opts o = {.dtype = dtype, .embed_dtype = embed_dtype, .shard_bytes = shard};
    if (!rc) rc = ms_convert_finish(&p, &io, &o, &e);
    else ms_plan_free(&p);
    ms_native_io_close_all(&h);
    return rc ? die(&e) : 0;
}

static int cmd_run(int argc, char **argv) {
    const char *dir = NULL, *prompt = NULL, *ids_s = NULL;
    int max_tokens = 32, topk = 0, threads = 1;
    float temperature = 0, top_p = 1;
    unsigned long long seed = 42;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--prompt") && i + 1 < argc) prompt = argv[++i];
        else if (!strcmp(argv[i], "--ids") && i + 1 < argc) ids_s = argv[++i];
        else if (!strcmp(argv[i], "--max-tokens") && i + 1 < argc) max_tokens = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--temperature") && i + 1 < argc) temperature = (float)atof(argv[++i]);
        else if (!strcmp(argv[i], "--seed") && i + 1 < argc) seed = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--top-k") && i + 1 < argc) topk = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--top-p") && i + 1 < argc) top_p = (float)atof(argv[++i]);
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = atoi(argv[++i]);
        else dir = argv[i];
    }
    ms_err e = {0};
    if (!dir || (!prompt && !ids_s)) { fprintf(stderr, "usage: mlpscope-native run DIR (--prompt TEXT | --ids 1,2,3) [--threads N]\n"); return 2; }
    ms_pool *pool = ms_pool_new(threads, &e);
    if (!pool) return die(&e);
    ms_tokenizer *tok = NULL;
    ms_model *m = ms_load_weightset(dir, &tok, &e);
    if (!m) { ms_pool_free(pool); return die(&e); }
    m->pool = pool;
    int cap = (int)(prompt ? strlen(prompt) : strlen(ids_s)) + 3 + max_tokens;
    int32_t *ids = malloc((size_t)cap * sizeof *ids);
    int n = 0, rc = 0;
    if (prompt) {
        if (!tok) { ms_fail(&e, MS_E_TOKEN, "weight set has no tokenizer; use --ids"); rc = 1; }
        else if (ms_tokenizer_encode(tok, prompt, strlen(prompt), 1, ids, cap, &n, &e)) rc = 1;
    } else
        for (char *p = (char *)ids_s; *p && n < cap;) { ids[n++] = (int32_t)strtol(p, &p, 10); if (*p == ',') p++; else if (*p) break; }
    ms_state *s = rc ? NULL : ms_state_create(m, m->cfg.max_pos, 64, &e);
    float *logits = malloc((size_t)m->cfg.vocab * sizeof(float) * 3);
    uint64_t rng = ms_rng_seed(seed);
    if (s) {
        ms_forward_opts o = {.logits = logits};
        int prev = -1;
        if (ms_forward(s, ids, n, &o, &e)) rc = 1;
        for (int k = 0; k < max_tokens && !rc; k++) {
            int next = ms_sample(logits, m->tok.vocab_size, temperature, topk, top_p, &rng, NULL, logits + m->cfg.vocab, NULL);
            if (tok) {
                const char *pc;
                char b[4];
                size_t l = ms_tokenizer_piece(tok, prev < 0 ? ids[n - 1] : prev, next, &pc, b);
                fwrite(pc, 1, l, stdout);
            } else printf("%d ", next);
            prev = next;
            int stop = 0;
            for (int q = 0; q < m->tok.n_eos; q++) stop |= next == m->tok.eos_ids[q];
            if (stop || (tok && next == m->tok.bos_id) || s->pos >= s->n_ctx) break;
            if (ms_forward(s, &next, 1, &o, &e)) rc = 1;
        }
        printf("\n");
    } else rc = 1;
    if (rc) die(&e);
    free(logits);
    free(ids);
    ms_state_free(s);
    ms_tokenizer_free(tok);
    ms_model_free(m);
    ms_pool_free(pool);
    return rc;
}

static int cmd_synth(int argc, char **argv) {
    const char *cfg = NULL, *out = NULL;
    int dtype = MS_F32, embed_dtype = -1;
    unsigned long long seed = 0, shard = 64ull << 20;
    for (int i = 0; i + 1 < argc; i++) {
        if (!strcmp(argv[i], "--config")) cfg = argv[++i];
        else if (!strcmp(argv[i], "--out")) out = argv[++i];
        else if (!strcmp(argv[i], "--seed")) seed = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--dtype")) dtype = parse_dtype(argv[++i]);
        else if (!strcmp(argv[i], "--embed-dtype")) embed_dtype = parse_dtype(argv[++i]);
        else if (!strcmp(argv[i], "--shard-size")) shard = strtoull(argv[++i], NULL, 10);
    }
    ms_err e = {0};
    if (!cfg || !out) { fprintf(stderr, "usage: mlpscope-native synth --config NAME|FILE --out DIR [--seed S] [--dtype D]\n"); return 2; }
    if (dtype < 0) { ms_fail(&e, MS_E_ARG, "unknown dtype"); return die(&e); }
    const char *text = ms_config_preset(cfg);
    uint8_t *file = NULL;
    size_t len = 0;
    if (!text) {
        file = ms_read_file(cfg, &len, &e);
        if (!file) { e.code = MS_E_CONFIG; return die(&e); }
        text = (const char *)file;
    } else len = strlen(text);
    mkdir(out, 0755);
    ms_native_io h;
    ms_io io;
    ms_native_io_init(&h, &io, out);
    ms_conv_plan p;
    int rc = ms_plan_synth(&p, text, len, seed, &e);
    ms_conv_opts o = {.dtype = dtype, .embed_dtype = embed_dtype, .shard_bytes = shard};
    if (!rc) rc = ms_convert_finish(&p, &io, &o, &e);
    else ms_plan_free(&p);
    ms_native_io_close_all(&h);
    free(file);
    return rc ? die(&e) : 0;
}

static void json_rows(const char *name, const float *a, int L, int T, int w) {
    printf(",\"%s\":[", name);
    for (int l = 0; l < L; l++) {
        printf("%s[", l ? "," : "");
        for (int i = 0; i < T * w; i++) printf("%s%.9g", i ? "," : "", a[(size_t)l * T * w + i]);
        printf("]");
    }
    printf("]");
}

static int cmd_forward(int argc, char **argv) {
    const char *dir = NULL, *ids_s = NULL;
    int recurrent = 0, chunk = MS_GDN_CHUNK_DEFAULT, batch = 64, split = 0;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--ids") && i + 1 < argc) ids_s = argv[++i];
        else if (!strcmp(argv[i], "--recurrent")) recurrent = 1;
        else if (!strcmp(argv[i], "--chunk") && i + 1 < argc) chunk = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--batch") && i + 1 < argc) batch = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--split") && i + 1 < argc) split = atoi(argv[++i]);
        else dir = argv[i];
    }
    ms_err e = {0};
    if (!dir || !ids_s) { fprintf(stderr, "usage: mlpscope-native forward DIR --ids 1,2,3\n"); return 2; }
    ms_model *m = ms_load_weightset(dir, NULL, &e);
    if (!m) return die(&e);
    int cap = (int)strlen(ids_s) + 1, n = 0;
    int32_t *ids = malloc((size_t)cap * sizeof *ids);
    for (char *p = (char *)ids_s; *p && n < cap;) { ids[n++] = (int32_t)strtol(p, &p, 10); if (*p == ',') p++; else if (*p) break; }
    int ctx = n < m->cfg.max_pos ? n : m->cfg.max_pos;
    ms_state *s = ms_state_create(m, ctx > 0 ? ctx : 1, batch, &e);
    if (!s) { free(ids); ms_model_free(m); return die(&e); }
    s->gdn_recurrent = recurrent;
    if (chunk >= 1 && chunk <= MS_GDN_CHUNK_MAX) s->gdn_chunk = chunk;
    float *logits = malloc((size_t)m->cfg.vocab * sizeof(float));
    ms_stats *st = ms_stats_create(&m->cfg, n > 0 ? n : 1, 8);
    int rc = 0;
    if (split > 0 && split < n) { /* two calls: prefill(A) then prefill(B); stats cover only B */
        ms_stats *st2 = ms_stats_create(&m->cfg, n - split, 8);
        ms_forward_opts o1 = {0}, o2 = {.stats = st2, .logits = logits};
        rc = ms_forward(s, ids, split, &o1, &e) || ms_forward(s, ids + split, n - split, &o2, &e);
        ms_stats_free(st);
        st = st2;
        n -= split;
    } else {
        ms_forward_opts o = {.stats = st, .logits = logits};
        rc = ms_forward(s, ids, n, &o, &e);
    }
    if (rc) { free(ids); free(logits); ms_stats_free(st); ms_state_free(s); ms_model_free(m); return die(&e); }
    const int L = m->cfg.n_layers, V = m->cfg.vocab;
    printf("{\"T\":%d,\"logits\":[", n);
    for (int v = 0; v < V; v++) printf("%s%.9g", v ? "," : "", logits[v]);
    printf("]");
    json_rows("resid_pre_l2", st->resid_pre_l2, L, n, 1);
    json_rows("attn_out_l2", st->attn_out_l2, L, n, 1);
    json_rows("resid_mid_l2", st->resid_mid_l2, L, n, 1);
    json_rows("mlp_out_l2", st->mlp_out_l2, L, n, 1);
    json_rows("resid_post_l2", st->resid_post_l2, L, n, 1);
    json_rows("mlp_ratio", st->mlp_ratio, L, n, 1);
    if (st->gdn_heads) { /* only a model with Gated DeltaNet layers has these rows */
        json_rows("gdn_decay", st->gdn_decay, L, n, 1);
        json_rows("gdn_beta", st->gdn_beta, L, n, 1);
        json_rows("gdn_state_norm", st->gdn_state_norm, L, n, st->gdn_heads);
    }
    printf("}\n");
    free(ids); free(logits); ms_stats_free(st); ms_state_free(s); ms_model_free(m);
    return 0;
}

static int cmd_info(int argc, char **argv) {
    ms_err e = {0};
    if (argc < 1) return 2;
    ms_model *m = ms_load_weightset(argv[0], NULL, &e);
    if (!m) return die(&e);
    ms_param_counts pc;
    ms_model_count(m, &pc);
    int ctx = argc > 1 ? atoi(argv[1]) : 4096;
    printf("{\"family\":\"%s\",\"params\":{\"total\":%lld,\"embedding\":%lld,\"mlp\":%lld,\"mixer\":%lld,\"norms\":%lld,\"lm_head\":%lld},"
           "\"weight_bytes\":%zu,\"state_bytes\":%zu,\"context\":%d}\n",
           ms_family_name(m->cfg.family), (long long)pc.total, (long long)pc.embedding, (long long)pc.mlp, (long long)pc.mixer,
           (long long)pc.norms, (long long)pc.head, m->weight_bytes, ms_state_bytes(&m->cfg, ctx, 64), ctx);
    ms_model_free(m);
    return 0;
}

static int cmd_tokenize(int argc, char **argv) {
    const char *src = NULL, *text = NULL;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--text") && i + 1 < argc) text = argv[++i];
        else src = argv[i];
    }
    ms_err e = {0};
    if (!src || !text) { fprintf(stderr, "usage: mlpscope-native tokenize SOURCE --text T\n"); return 2; }
    char path[1100];
    size_t len = 0, l2 = 0;
    ms_tokenizer *tok = NULL;
    snprintf(path, sizeof path, "%s/manifest.json", src);
    uint8_t *man = ms_read_file(path, &len, &e);
    if (man) { /* a weight set: its manifest's tokenizer (validated with the manifest) */
        ms_model *mm = ms_model_from_manifest((const char *)man, len, 0, &e);
        free(man);
        if (!mm) return die(&e);
        if (!mm->tok.kind[0] || !strcmp(mm->tok.kind, "none")) ms_fail(&e, MS_E_TOKEN, "%s: the weight set has no tokenizer", src);
        else tok = ms_load_tokenizer_file(src, &mm->tok, &e);
        ms_model_free(mm);
    } else { /* a tokenizer.json folder */
        ms_err_clear(&e);
        snprintf(path, sizeof path, "%s/tokenizer.json", src);
        uint8_t *tj = ms_read_file(path, &len, &e);
        snprintf(path, sizeof path, "%s/tokenizer_config.json", src);
        ms_err e2 = {0};
        uint8_t *cj = ms_read_file(path, &l2, &e2);
        uint8_t *blob = NULL;
        size_t bl = 0;
        if (!tj) ms_fail(&e, MS_E_TOKEN, "%s: neither manifest.json nor tokenizer.json", src);
        else if (!ms_bpe_import((char *)tj, len, cj ? (char *)cj : NULL, cj ? l2 : 0, NULL, 0, &blob, &bl, NULL, &e))
            tok = ms_tokenizer_load("bpe-bytelevel", blob, bl, 0, &e);
        free(tj); free(cj); free(blob);
    }
    if (!tok) return die(&e);
    size_t cap = ms_tokenizer_max_ids(strlen(text));
    int32_t *ids = malloc(cap * sizeof *ids);
    int n = 0, rc = ms_tokenizer_encode(tok, text, strlen(text), 1, ids, (int)cap, &n, &e);
    if (!rc) {
        printf("{\"ids\":[");
        for (int i = 0; i < n; i++) printf("%s%d", i ? "," : "", ids[i]);
        printf("]}\n");
    }
    free(ids);
    ms_tokenizer_free(tok);
    return rc ? die(&e) : 0;
}

/* A text file as one token stream: each paragraph (up to a blank line) encoded, then the first
 * stop token (the demo trainer's packing). */
static int32_t *encode_paragraphs(const ms_tokenizer *tok, const ms_model *m, const char *path, size_t limit, size_t *count, ms_err *e) {
    size_t n;
    char *text = (char *)ms_read_file(path, &n, e);
    if (!text) return NULL;
    size_t cap = 1 << 16, k = 0;
    int32_t *ids = malloc(cap * sizeof *ids), *tmp = NULL;
    const int eos = m->tok.n_eos ? m->tok.eos_ids[0] : -1;
    for (size_t i = 0; ids && i < n && k < limit;) {
        const char *end = strstr(text + i, "\n\n");
        size_t j = end ? (size_t)(end - text) : n;
        const size_t need = ms_tokenizer_max_ids(j - i) + 1;
        int got = 0;
        if (!(tmp = realloc(tmp, need * sizeof *tmp))) break;
        if (j > i && ms_tokenizer_encode(tok, text + i, j - i, 0, tmp, (int)need, &got, e)) { free(ids); ids = NULL; break; }
        if (k + (size_t)got + 1 > cap) {
            cap = (k + (size_t)got + 1) * 2;
            int32_t *r = realloc(ids, cap * sizeof *ids);
            if (!r) { free(ids); ids = NULL; break; }
            ids = r;
        }
        memcpy(ids + k, tmp, (size_t)got * sizeof *ids);
        k += (size_t)got;
        if (eos >= 0) ids[k++] = eos;
        i = j + 2;
    }
    if (!ids && !e->code) ms_fail(e, MS_E_MEMORY, "%s: out of memory while encoding", path);
    free(tmp);
    free(text);
    *count = k < limit ? k : limit;
    return ids;
}

static int cmd_transcoder(int argc, char **argv) {
    const char *dir = NULL, *train = NULL, *val = NULL, *out = NULL, *layers_s = NULL;
    ms_tc_session_opts o = {0};
    o.n_features = 2048; o.k = 32;
    size_t train_tokens = (size_t)-1, val_tokens = 16384;
    int threads = 1, replacement = 1;
    if (argc < 1 || strcmp(argv[0], "train")) { fprintf(stderr, "usage: mlpscope-native transcoder train DIR --train TEXT --val TEXT --out OUT ...\n"); return 2; }
    for (int i = 1; i < argc; i++) {
        const int more = i + 1 < argc;
        if (!strcmp(argv[i], "--train") && more) train = argv[++i];
        else if (!strcmp(argv[i], "--val") && more) val = argv[++i];
        else if (!strcmp(argv[i], "--out") && more) out = argv[++i];
        else if ((!strcmp(argv[i], "--layers") || !strcmp(argv[i], "--layer")) && more) layers_s = argv[++i];
        else if (!strcmp(argv[i], "--features") && more) o.n_features = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--k") && more) o.k = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--train-tokens") && more) train_tokens = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--val-tokens") && more) val_tokens = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--epochs") && more) o.epochs = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--batch") && more) o.batch = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--buffer") && more) o.buffer_tokens = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--lr") && more) o.train.lr = atof(argv[++i]);
        else if (!strcmp(argv[i], "--seed") && more) o.train.seed = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--threads") && more) threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--no-replacement")) replacement = 0;
        else if (argv[i][0] == '-') { fprintf(stderr, "mlpscope-native transcoder: unknown option %s\n", argv[i]); return 2; }
        else dir = argv[i];
    }
    if (!dir || !train || !val || !out) { fprintf(stderr, "usage: mlpscope-native transcoder train DIR --train TEXT --val TEXT --out OUT ...\n"); return 2; }
    ms_err e = {0};
    ms_pool *pool = ms_pool_new(threads, &e);
    if (!pool) return die(&e);
    ms_tokenizer *tok = NULL;
    ms_native_load_opts lo = {MS_ACT_PLAIN, pool}; /* natively the f32 reference kernels are the faster (no SIMD int8 here) */
    ms_model *m = ms_load_weightset_opts(dir, &lo, &tok, &e);
    int rc = 1;
    int32_t layers[MS_MAX_LAYERS], nl = 0;
    int32_t *tr_ids = NULL, *va_ids = NULL;
    size_t n_tr = 0, n_va = 0;
    ms_tc_session *s = NULL;
    ms_buf man = {0};
    uint8_t *bin = NULL;
    size_t bin_len = 0;
    if (!m) goto done;
    if (!tok) { ms_fail(&e, MS_E_TOKEN, "%s: the weight set has no tokenizer", dir); goto done; }
    if (!layers_s || !strcmp(layers_s, "all"))
        for (int l = 0; l < m->cfg.n_layers; l++) layers[nl++] = l;
    else
        for (char *p = (char *)layers_s; *p && nl < MS_MAX_LAYERS;) {
            char *q;
            layers[nl++] = (int32_t)strtol(p, &q, 10);
            if (q == p || (*q && *q != ',')) { ms_fail(&e, MS_E_ARG, "--layers: '%s' is not a list of layer numbers", layers_s); goto done; }
            p = *q == ',' ? q + 1 : q;
        }
    if (!(tr_ids = encode_paragraphs(tok, m, train, train_tokens, &n_tr, &e)) || !(va_ids = encode_paragraphs(tok, m, val, val_tokens, &n_va, &e))) goto done;
    if (!(s = ms_tc_session_new(m, layers, nl, &o, &e))) goto done;
    const int T = o.ctx > 0 ? o.ctx : (m->cfg.max_pos < 128 ? m->cfg.max_pos : 128);
    fprintf(stderr, "transcoders: %d layers, %d features, k %d; %zu training tokens, %zu held out; %d thread%s\n", nl, o.n_features, o.k, n_tr, n_va, threads, threads > 1 ? "s" : "");
    const double t0 = ms_now_ms();
    for (size_t i = 0; i < n_tr; i += (size_t)T) {
        const int len = n_tr - i < (size_t)T ? (int)(n_tr - i) : T;
        if (ms_tc_session_room(s) < len && ms_tc_session_train(s, &e)) goto done;
        if (ms_tc_session_feed(s, tr_ids + i, len, &e)) goto done;
        if ((i / T) % 64 == 63 || i + (size_t)len >= n_tr) {
            const double dt = (ms_now_ms() - t0) / 1000, rate = (double)(i + (size_t)len) / dt;
            fprintf(stderr, "\r%zu / %zu tokens, %.0f tok/s, %.0f s left   ", i + (size_t)len, n_tr, rate, (double)(n_tr - i - (size_t)len) / rate);
        }
    }
    if (ms_tc_session_train(s, &e)) goto done;
    const double train_s = (ms_now_ms() - t0) / 1000;
    fprintf(stderr, "\ntrained in %.1f s; scoring on %zu held-out tokens\n", train_s, n_va);
    if (ms_tc_session_eval_reset(s, replacement, &e)) goto done;
    for (size_t i = 0; i < n_va; i += (size_t)T) {
        const int len = n_va - i < (size_t)T ? (int)(n_va - i) : T;
        if (len >= 2 && ms_tc_session_eval_feed(s, va_ids + i, len, &e)) goto done;
    }
    char *rep = ms_tc_session_report(s);
    if (!rep) { ms_fail(&e, MS_E_MEMORY, "out of memory"); goto done; }
    printf("{\"train_seconds\":%.1f,\"threads\":%d,\"scores\":%s}\n", train_s, threads, rep);
    free(rep);
    if (ms_tc_session_save(s, dir, &man, &bin, &bin_len, &e)) goto done;
    mkdir(out, 0755);
    char path[1100];
    snprintf(path, sizeof path, "%s/transcoders.bin", out);
    FILE *f = fopen(path, "wb");
    int ok = f && fwrite(bin, 1, bin_len, f) == bin_len;
    if (f && fclose(f)) ok = 0;
    if (!ok) { ms_fail(&e, MS_E_ARG, "cannot write %s", path); goto done; }
    snprintf(path, sizeof path, "%s/manifest.json", out);
    f = fopen(path, "wb");
    ok = f && fwrite(man.p, 1, man.n, f) == man.n;
    if (f && fclose(f)) ok = 0;
    if (!ok) { ms_fail(&e, MS_E_ARG, "cannot write %s", path); goto done; }
    rc = 0;
done:
    if (rc) die(&e);
    free(bin);
    ms_buf_free(&man);
    ms_tc_session_free(s);
    free(tr_ids); free(va_ids);
    ms_tokenizer_free(tok);
    ms_model_free(m);
    ms_pool_free(pool);
    return rc;
}

int main(int argc, char **argv) {
    if (argc >= 2 && !strcmp(argv[1], "transcoder")) return cmd_transcoder(argc - 2, argv + 2);
    if (argc >= 2 && !strcmp(argv[1], "tokenize")) return cmd_tokenize(argc - 2, argv + 2);
    if (argc >= 2 && !strcmp(argv[1], "synth")) return cmd_synth(argc - 2, argv + 2);
    if (argc >= 2 && !strcmp(argv[1], "forward")) return cmd_forward(argc - 2, argv + 2);
    if (argc >= 2 && !strcmp(argv[1], "info")) return cmd_info(argc - 2, argv + 2);
    if (argc >= 2 && !strcmp(argv[1], "convert")) return cmd_convert(argc - 2, argv + 2);
    if (argc >= 2 && !strcmp(argv[1], "run")) return cmd_run(argc - 2, argv + 2);
    fprintf(stderr, "usage: mlpscope-native convert|run ...\n");
    return 2;
}
