#ifndef MS_CHAT_H
#define MS_CHAT_H
#include <stddef.h>
#include "../util/error.h"
/* kind: MS_CHAT_* (bpe.h). thinking: -1 template default, 0 off, 1 on. *out is malloc'd. */
int ms_chat_render(int kind, const char *messages_json, size_t len, int add_generation_prompt, int thinking, char **out,
                   size_t *out_len, ms_err *err);
#endif
