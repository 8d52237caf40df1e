/* ms_tests SHARED_MODELS_DIR TMP_DIR — native unit and model tests (also built with ASan+UBSan). */
#include "check.h"
#include <stdlib.h>
#include "../../src/util/error.h"
int ms_t_failed, ms_t_checks;
int main(int argc, char **argv) {
    if (argc < 3) { fprintf(stderr, "usage: ms_tests SHARED_MODELS_DIR TMP_DIR\n"); return 2; }
    ms_t_env env = {argv[1], argv[2]};
    test_units(&env);
    test_llama(&env);
    test_bad_inputs(&env);
    test_train(&env);
    printf("%d checks, %d failed\n", ms_t_checks, ms_t_failed);
    return ms_t_failed ? 1 : 0;
}
