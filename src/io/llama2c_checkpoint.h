/* A llama2.c checkpoint as a conversion plan (llama2c_checkpoint.c). */
#ifndef MS_LLAMA2C_CHECKPOINT_H
#define MS_LLAMA2C_CHECKPOINT_H
#include "convert.h"
/* Build a plan from a llama2.c checkpoint (legacy v0 header) + tokenizer.bin (tok: NULL for none). */
int ms_plan_llama2c(ms_conv_plan *p, const ms_io *io, const char *ckpt, const char *tok, ms_err *err);
/* The checkpoint converted into io's output (plan, layout, write) */
int ms_convert_llama2c(const ms_io *io, const char *ckpt, const char *tok, const ms_conv_opts *o, ms_err *err);
#endif
