/* A Hugging Face model folder as a conversion plan (hf_checkpoint.c). */
#ifndef MS_HF_CHECKPOINT_H
#define MS_HF_CHECKPOINT_H
#include "convert.h"
/* Build a plan from a Hugging Face model folder: config.json, model.safetensors or
 * model.safetensors.index.json + shards (F32/F16/BF16), tokenizer.json and generation_config.json
 * when present (real vocabulary size, stop tokens). */
int ms_plan_hf(ms_conv_plan *p, const ms_io *io, const char *dir, ms_err *err);
/* The folder converted into io's output (plan, layout, write) */
int ms_convert_hf(const ms_io *io, const char *dir, const ms_conv_opts *o, ms_err *err);
#endif
