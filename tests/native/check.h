/* A tiny test harness for the native C tests. */
#ifndef MS_CHECK_H
#define MS_CHECK_H
#include <stdio.h>
#include <math.h>
extern int ms_t_failed, ms_t_checks;
#define CHECK(cond, ...) do { ms_t_checks++; if (!(cond)) { ms_t_failed++; fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); fprintf(stderr, __VA_ARGS__); fprintf(stderr, "\n"); } } while (0)
#define CHECK_CODE(err, want) CHECK((err).code == (want), "expected %s, got %s: %s", ms_code_name(want), ms_code_name((err).code), (err).msg)
typedef struct { const char *shared; const char *tmp; } ms_t_env;
struct ms_model;
/* A synthetic weight set (io/synth.h, f32) written to TMP/tag and loaded; NULL with a failed
 * CHECK when it cannot be made. */
struct ms_model *ms_t_synth_model(const ms_t_env *env, const char *tag, const char *config, size_t len, unsigned long long seed);
void test_units(const ms_t_env *env);
void test_llama(const ms_t_env *env);
void test_bad_inputs(const ms_t_env *env);
void test_train(const ms_t_env *env);
void test_interventions(const ms_t_env *env);
void test_convert_stream(const ms_t_env *env);
void test_transcoder(const ms_t_env *env);
void test_tokenizer(const ms_t_env *env);
#endif
