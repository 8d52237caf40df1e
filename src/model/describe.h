/* A loaded model described as data (JSON text, malloc'd; NULL when out of memory); the engine's
 * own tables: analysis/engine_info.h. */
#ifndef MS_DESCRIBE_H
#define MS_DESCRIBE_H
#include "model.h"

/* family, kernels, activations, config, params, weight_bytes, tokenizer, shards, dtypes */
char *ms_describe_model(const ms_model *m);
/* "plain", "int8", "exact" */
const char *ms_activations_name(int mode);
#endif
