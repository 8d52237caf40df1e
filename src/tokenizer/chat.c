/* Chat templates of the families we ship, rendered from a JSON message list
 * [{"role": "system"|"user"|"assistant"|"tool", "content": "..."}]:
 *   ChatML (Qwen):  <|im_start|>{role}\n{content}<|im_end|>\n ... then <|im_start|>assistant\n
 *   Qwen3:          + "<think>\n\n</think>\n\n" when thinking is switched off (default on)
 *   Qwen3.5 small:  + "<think>\n\n</think>\n\n" unless thinking is switched on ("<think>\n")
 *   none (llama2.c): the contents joined with "\n" (the tokenizer adds BOS) */
#include "chat.h"
#include "bpe.h"
#include "../util/json.h"
#include <string.h>

int ms_chat_render(int kind, const char *msgs, size_t len, int add_generation_prompt, int thinking, char **out, size_t *out_len, ms_err *err) {
    ms_json j;
    char jerr[160];
    *out = NULL;
    if (ms_json_parse(&j, msgs, len, jerr, sizeof jerr)) return ms_fail(err, MS_E_ARG, "messages: %s", jerr);
    int rc = MS_OK;
    ms_buf b = {0};
    if (j.nodes[0].type != MS_JARR) { rc = ms_fail(err, MS_E_ARG, "messages must be an array of {role, content}"); goto done; }
    int i = 0;
    for (int32_t e = j.nodes[0].child; e >= 0; e = j.nodes[e].next, i++) {
        const char *role = ms_json_str(&j, ms_json_get(&j, e, "role")), *content = ms_json_str(&j, ms_json_get(&j, e, "content"));
        if (!role || !content) { rc = ms_fail(err, MS_E_ARG, "messages[%d]: needs string role and content", i); goto done; }
        if (strcmp(role, "system") && strcmp(role, "user") && strcmp(role, "assistant") && strcmp(role, "tool")) {
            rc = ms_fail(err, MS_E_ARG, "messages[%d]: role \"%s\" (expected system, user, assistant or tool)", i, role);
            goto done;
        }
        if (kind == MS_CHAT_NONE) {
            if (i) ms_buf_puts(&b, "\n");
            ms_buf_puts(&b, content);
        } else {
            ms_buf_puts(&b, "<|im_start|>");
            ms_buf_puts(&b, role);
            ms_buf_puts(&b, "\n");
            ms_buf_puts(&b, content);
            ms_buf_puts(&b, "<|im_end|>\n");
        }
    }
    if (add_generation_prompt && kind != MS_CHAT_NONE) {
        ms_buf_puts(&b, "<|im_start|>assistant\n");
        if (kind == MS_CHAT_QWEN3 && thinking == 0) ms_buf_puts(&b, "<think>\n\n</think>\n\n");
        if (kind == MS_CHAT_QWEN35) ms_buf_puts(&b, thinking == 1 ? "<think>\n" : "<think>\n\n</think>\n\n");
    }
    if (b.oom) { rc = ms_fail(err, MS_E_MEMORY, "out of memory"); goto done; }
    if (!b.p) ms_buf_puts(&b, "");
    *out = b.p;
    *out_len = b.n;
    b.p = NULL;
done:
    ms_buf_free(&b);
    ms_json_free(&j);
    return rc;
}
