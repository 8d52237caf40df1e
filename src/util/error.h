/* Typed errors shared by every part of the engine. No global state: each call that can fail
 * takes an ms_err* and fills it; the code maps 1:1 to the JS error codes (docs/api.md, Error codes). */
#ifndef MS_ERROR_H
#define MS_ERROR_H
#include <stddef.h>

/* X(ID, what): one row per error code, in code order (MS_E_<ID>, named "E_<ID>"). The engine lists
 * them (engine info "errors"); js/index.d.ts's ErrorCode is generated from that list. */
#define MS_ERROR_LIST(X)                                                                 \
    X(MANIFEST, "manifest.json malformed or inconsistent")                             \
    X(SHARD_MISSING, "shard file absent")                                              \
    X(SHARD_SIZE, "shard length differs from the manifest")                            \
    X(SHARD_HASH, "sha256 mismatch")                                                   \
    X(TENSOR, "tensor missing, unexpected, wrong shape/dtype, bad values")             \
    X(CONFIG, "config values impossible or inconsistent")                              \
    X(MEMORY, "allocation failed or over budget")                                      \
    X(ABORTED, "caller aborted")                                                       \
    X(NETWORK, "transport failure (host side)")                                        \
    X(TOKEN, "token id out of range, bad tokenizer file, bad text")                    \
    X(CONTEXT, "context length exceeded")                                              \
    X(CHECKPOINT, "source checkpoint (llama2.c / safetensors) malformed")              \
    X(ARG, "bad argument from the caller")                                             \
    X(STATE, "call not valid in this state (e.g. model not finalized)")

typedef enum {
    MS_OK = 0,
#define MS_X(id, what) MS_E_##id,
    MS_ERROR_LIST(MS_X)
#undef MS_X
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
