/* ms_tests MODELS_DIR TMP_DIR [GROUP...] — native unit and model tests (also built with ASan+UBSan).
 * MODELS_DIR holds stories260K/ (llama2.c's model and goldens, not part of the repository); the
 * groups that read it are `llama` and `bad_inputs`. With no GROUP, every group runs. */
#include "check.h"
#include <stdlib.h>
#include <string.h>
#include "../../src/util/error.h"
#include "../../tools/native_host.h"
#include "../../src/io/synth.h"
#include <sys/stat.h>
int ms_t_failed, ms_t_checks;

struct ms_model *ms_t_synth_model(const ms_t_env *env, const char *tag, const char *config, size_t len, unsigned long long seed) {
    char dir[600];
    snprintf(dir, sizeof dir, "%s/%s", env->tmp, tag);
    mkdir(dir, 0755);
    ms_err e = {0};
    ms_native_io h;
    ms_io io;
    ms_native_io_init(&h, &io, dir);
    io.log = NULL;
    ms_conv_plan p;
    ms_conv_opts o = {.dtype = 0, .embed_dtype = -1, .shard_bytes = 64u << 20};
    int rc = ms_plan_synth(&p, config, len, seed, &e);
    if (!rc) rc = ms_convert_finish(&p, &io, &o, &e);
    else ms_plan_free(&p);
    ms_native_io_close_all(&h);
    CHECK(rc == 0, "synth %s: %s", tag, e.msg);
    ms_model *m = rc ? NULL : ms_load_weightset(dir, NULL, &e);
    CHECK(m != NULL, "load %s: %s", tag, e.msg);
    return m;
}

static const struct { const char *name; void (*run)(const ms_t_env *); } GROUPS[] = {
    {"units", test_units}, {"llama", test_llama}, {"bad_inputs", test_bad_inputs}, {"train", test_train}, {"interventions", test_interventions}, {"convert_stream", test_convert_stream}, {"transcoder", test_transcoder}, {"tokenizer", test_tokenizer},
};
enum { N_GROUPS = sizeof GROUPS / sizeof GROUPS[0] };

int main(int argc, char **argv) {
    if (argc < 3) { fprintf(stderr, "usage: ms_tests MODELS_DIR TMP_DIR [GROUP...]\n"); return 2; }
    ms_t_env env = {argv[1], argv[2]};
    for (int a = 3; a < argc; a++) {
        int known = 0;
        for (int g = 0; g < N_GROUPS; g++) known |= !strcmp(argv[a], GROUPS[g].name);
        if (!known) { fprintf(stderr, "ms_tests: unknown group '%s'\n", argv[a]); return 2; }
    }
    for (int g = 0; g < N_GROUPS; g++) {
        int run = argc == 3;
        for (int a = 3; a < argc; a++) run |= !strcmp(argv[a], GROUPS[g].name);
        if (run) GROUPS[g].run(&env);
    }
    printf("%d checks, %d failed\n", ms_t_checks, ms_t_failed);
    return ms_t_failed ? 1 : 0;
}
