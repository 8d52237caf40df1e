/* Synthetic weight sets as a conversion plan (synth.c). */
#ifndef MS_SYNTH_H
#define MS_SYNTH_H
#include "convert.h"
/* Build a plan of deterministic synthetic weights for a config (JSON text, any form that
 * ms_config_from_text reads). Values are seeded per tensor from `seed` and the tensor name. */
int ms_plan_synth(ms_conv_plan *p, const char *config_text, size_t len, uint64_t seed, ms_err *err);
/* A synthetic weight set for a config (JSON text, or a preset name of hf_config.h) written into
 * io's output */
int ms_convert_synth(const ms_io *io, const char *config_or_preset, size_t len, uint64_t seed, const ms_conv_opts *o, ms_err *err);
#endif
