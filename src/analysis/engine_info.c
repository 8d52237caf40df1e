/* Every table of the engine that a host needs, listed from the tables themselves (X-macro lists
 * and the kernel table), so nothing is copied by hand on the other side. */
#include "engine_info.h"
#include "run.h"
#include "weights.h"
#include "../model/hooks.h"
#include "../tokenizer/bpe.h"
#include "../kernels/dtype.h"
#include "../kernels/kernels.h"
#include "../util/json.h"
#include <stdlib.h>

/* a JSON list of the names of an X(ID, name) list, in code order */
#define NAMES(list) do { int k_ = 0; ms_buf_puts(&b, "["); list(NAME_ITEM) ms_buf_puts(&b, "]"); (void)k_; } while (0)
#define NAME_ITEM(id, name) ms_buf_printf(&b, "%s\"%s\"", k_++ ? "," : "", name);

char *ms_describe_engine(void) {
    ms_buf b = {0};
    ms_buf_puts(&b, "{\"hooks\":[");
    for (int h = 0; h < MS_HOOK__COUNT; h++)
        ms_buf_printf(&b, "%s{\"name\":\"%s\",\"id\":%d,\"width\":\"%s\",\"what\":\"%s\"}", h ? "," : "", ms_hook_table[h].name, h,
                      ms_hook_table[h].width == MS_WIDTH_MLP ? "intermediate_size" : "hidden_size", ms_hook_table[h].what);
    ms_buf_puts(&b, "],\"interventions\":[");
    for (int h = 0; h < MS_HOOK__COUNT; h++) ms_buf_printf(&b, "%s\"%s\"", h ? "," : "", ms_hook_table[h].name);
    ms_buf_puts(&b, "],\"intervention_ops\":[");
    for (int k = 0; k < MS_IV__COUNT; k++) ms_buf_printf(&b, "%s\"%s\"", k ? "," : "", ms_iv_op_names[k]);
    ms_buf_puts(&b, "],\"stats\":[");
    for (int i = 0; i < MS_STAT__COUNT; i++) {
        const ms_stat_info *s = &ms_stat_table[i];
        ms_buf_printf(&b, "%s{\"name\":\"%s\",\"id\":%d,\"type\":\"%s\",\"shape\":[", i ? "," : "", s->name, i, s->type);
        ms_buf_puts(&b, ms_shape_dims[s->shape]);
        ms_buf_printf(&b, "],\"when\":\"%s\",\"what\":\"%s\"}", s->when == MS_WHEN_GDN ? "gdn" : "always", s->what);
    }
    ms_buf_puts(&b, "],\"errors\":");
#define ERROR_ITEM(id, what) ms_buf_printf(&b, "%s\"E_%s\"", k_++ ? "," : "", #id);
    {
        int k_ = 0;
        ms_buf_puts(&b, "[");
        MS_ERROR_LIST(ERROR_ITEM)
        ms_buf_puts(&b, "]");
    }
    ms_buf_puts(&b, ",\"activations\":");
    NAMES(MS_ACT_LIST);
    ms_buf_puts(&b, ",\"chat_kinds\":");
    NAMES(MS_CHAT_LIST);
    ms_buf_puts(&b, ",\"logits_modes\":");
    NAMES(MS_LOGITS_LIST);
    ms_buf_puts(&b, ",\"neuron_geometry\":");
    NAMES(MS_GEO_LIST);
    ms_buf_puts(&b, ",\"lens\":{\"shape\":[" MS_LENS_SHAPE "],\"kinds\":[");
    {
        int k_ = 0;
#define MS_X(id, hook) ms_buf_printf(&b, "%s\"%s\"", k_++ ? "," : "", ms_hook_name(hook));
        MS_LENS_KINDS(MS_X)
#undef MS_X
    }
    ms_buf_puts(&b, "]},\"dtypes\":[");
    for (int d = 0; d < MS_DTYPE__COUNT; d++) {
        const char *sh = ms_dtype_short_name(d);
        ms_buf_printf(&b, "%s{\"name\":\"%s\",\"id\":%d,\"short\":", d ? "," : "", ms_dtype_name(d), d);
        if (sh) ms_buf_printf(&b, "\"%s\"", sh); else ms_buf_puts(&b, "null");
        ms_buf_printf(&b, ",\"in_files\":%s}", ms_dtype_in_files(d) ? "true" : "false");
    }
    ms_buf_puts(&b, "],\"gemm_kernels\":[");
    for (int i = 0; i < ms_n_gemm_kernels; i++) {
        const ms_gemm_kernel *g = &ms_gemm_kernels[i];
        ms_buf_printf(&b, "%s{\"id\":%d,\"name\":\"%s\",\"weights\":\"%s\",\"activations\":\"%s\",\"isa\":\"%s\",\"tile_rows\":%d,"
                      "\"tile_tokens\":%d,\"decode_rows\":%d,\"row_step\":%d,\"col_step\":%d,\"col_block\":%d,\"col_chunk\":%d,"
                      "\"row_chunk\":%d,\"max_cols\":%d}", i ? "," : "", i, g->name, ms_dtype_name(g->dtype), g->acts, g->simd == MS_ISA_RELAXED_U8 ? "relaxedu8" : g->simd == MS_ISA_RELAXED ? "relaxed" : g->simd ? "simd128" : "generic",
                      g->tile_rows, g->tile_tokens, g->decode_rows ? g->decode_rows : g->tile_rows, g->row_step, g->col_step, g->col_block,
                      g->col_chunk, g->row_chunk, g->max_cols);
    }
    ms_buf_puts(&b, "]}");
    if (b.oom) { ms_buf_free(&b); return NULL; }
    return b.p;
}
