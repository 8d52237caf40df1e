/* The engine and a loaded model described as data (JSON text, malloc'd; NULL when out of memory). */
#ifndef MS_DESCRIBE_H
#define MS_DESCRIBE_H
#include "model.h"

/* {"hooks": [{name, id, width, what}], "interventions": [hook names], "stats": [{name, id, type,
 *   shape: ["layer", "token", ...], when: "always"|"gdn", what}], "errors": [...], "activations": [...]} */
char *ms_describe_engine(void);
/* family, kernels, activations, config, params, weight_bytes, tokenizer, shards, dtypes */
char *ms_describe_model(const ms_model *m);
/* "plain", "int8", "exact" */
const char *ms_activations_name(int mode);
#endif
