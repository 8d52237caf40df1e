/* Typed errors shared by every part of the engine. No global state: each call that can fail
 * takes an ms_err* and fills it; the code maps 1:1 to the JS error codes (docs/api.md, Error codes). */
#ifndef MS_ERROR_H
#define MS_ERROR_H
#include <stddef.h>

typedef enum {
    MS_OK = 0,
    MS_E_MANIFEST,      /* manifest.json malformed or inconsistent */
    MS_E_SHARD_MISSING, /* shard file absent */
    MS_E_SHARD_SIZE,    /* shard length differs from the manifest */
    MS_E_SHARD_HASH,    /* sha256 mismatch */
    MS_E_TENSOR,        /* tensor missing, unexpected, wrong shape/dtype, bad values */
    MS_E_CONFIG,        /* config values impossible or inconsistent */
    MS_E_MEMORY,        /* allocation failed or over budget */
    MS_E_ABORTED,       /* caller aborted */
    MS_E_NETWORK,       /* transport failure (host side) */
    MS_E_TOKEN,         /* token id out of range, bad tokenizer file, bad text */
    MS_E_CONTEXT,       /* context length exceeded */
    MS_E_CHECKPOINT,    /* source checkpoint (llama2.c / safetensors) malformed */
    MS_E_ARG,           /* bad argument from the caller */
    MS_E_STATE,         /* call not valid in this state (e.g. model not finalized) */
    MS_E__COUNT
} ms_code;

typedef struct {
    int code;
    char msg[320];
} ms_err;

/* Sets err (if non-NULL) and returns code; printf-style message. */
int ms_fail(ms_err *err, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void ms_err_clear(ms_err *err);
const char *ms_code_name(int code); /* "E_MANIFEST", ... */

/* Overflow-checked size arithmetic: return 0 on overflow. */
int ms_mul_size(size_t a, size_t b, size_t *out);
int ms_add_size(size_t a, size_t b, size_t *out);

#endif
