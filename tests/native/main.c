/* ms_tests MODELS_DIR TMP_DIR [GROUP...] — native unit and model tests (also built with ASan+UBSan).
 * MODELS_DIR holds stories260K/ (llama2.c's model and goldens, not part of the repository); the
 * groups that read it are `llama` and `bad_inputs`. With no GROUP, every group runs. */
#include "check.h"
#include <stdlib.h>
#include <string.h>
#include "../../src/util/error.h"
int ms_t_failed, ms_t_checks;

static const struct { const char *name; void (*run)(const ms_t_env *); } GROUPS[] = {
    {"units", test_units}, {"llama", test_llama}, {"bad_inputs", test_bad_inputs}, {"train", test_train}, {"interventions", test_interventions}, {"convert_stream", test_convert_stream}, {"transcoder", test_transcoder},
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
