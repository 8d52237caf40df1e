/* Reading a model configuration from any of the JSON forms we meet: our manifest
 * ({"family", "config"}), a Hugging Face config.json (model_type llama / qwen2 / qwen3 /
 * qwen3_5 / gemma3 with their text_config, gemma3_text), or {"family": ..., ...keys} written by hand. */
#ifndef MS_HF_CONFIG_H
#define MS_HF_CONFIG_H
#include "../model/config.h"
int ms_config_from_text(const char *text, size_t len, ms_config *c, ms_err *err);
/* Built-in shapes: "qwen3.5-0.8b", "gemma3-270m", "gemma3-1b", "llama-398m" (the wasm-peer comparison shape). */
const char *ms_config_preset(const char *name);
/* A config (JSON text in any form above, or a preset name) summarised as JSON (malloc'd, *out):
 * {"family", "config": {...HF keys}, "params": {"total", "embedding", "mlp", "mixer", "norms",
 * "lm_head", "mlp_per_layer"}}, the counts from the tensors the family requires (no weights). */
int ms_config_summary(const char *text, size_t len, char **out, ms_err *err);
#endif
