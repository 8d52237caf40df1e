/* The engine's own tables as data (JSON), for the JS side to read instead of copying C's enums
 * and tables: docs/architecture.md, "The wasm boundary". */
#ifndef MS_ENGINE_INFO_H
#define MS_ENGINE_INFO_H

/* {"hooks": [{name, id, width, what}], "interventions": [hook names], "intervention_ops": [...],
 *  "stats": [{name, id, type, shape: ["layer", "token", ...], when: "always"|"gdn", what}],
 *  "errors": [names of the codes after MS_OK, by code], "activations": [names by code],
 *  "chat_kinds": [names by code], "logits_modes": [names by code], "lens": {shape, kinds},
 *  "dtypes": [{name, id, short, in_files}], "gemm_kernels": [...]}; malloc'd, NULL when out of memory */
char *ms_describe_engine(void);
#endif
