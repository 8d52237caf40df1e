#include "tokenizer.h"
#include <stdlib.h>
#include <string.h>

int ms_l2c_load(ms_tok_llama2c *t, const uint8_t *d, size_t len, int vocab, ms_err *err);
void ms_l2c_free(ms_tok_llama2c *t);
int ms_l2c_encode(const ms_tok_llama2c *t, const char *text, size_t len, int add_bos, int32_t *ids, int cap, int *n_out, ms_err *err);
size_t ms_l2c_piece(const ms_tok_llama2c *t, int prev, int id, const char **out, char *buf);

ms_tokenizer *ms_tokenizer_load(const char *kind, const uint8_t *data, size_t len, int vocab_size, ms_err *err) {
    if (!kind || strcmp(kind, "llama2c") != 0) {
        ms_fail(err, MS_E_TOKEN, "tokenizer kind \"%s\" is not supported", kind ? kind : "(none)");
        return NULL;
    }
    ms_tokenizer *t = calloc(1, sizeof *t);
    if (!t) { ms_fail(err, MS_E_MEMORY, "tokenizer: out of memory"); return NULL; }
    t->kind = MS_TOK_LLAMA2C;
    if (ms_l2c_load(&t->l2c, data, len, vocab_size, err)) { ms_tokenizer_free(t); return NULL; }
    return t;
}

void ms_tokenizer_free(ms_tokenizer *t) {
    if (!t) return;
    if (t->kind == MS_TOK_LLAMA2C) ms_l2c_free(&t->l2c);
    free(t);
}

int ms_tokenizer_encode(const ms_tokenizer *t, const char *text, size_t len, int add_bos, int32_t *ids, int cap, int *n_out, ms_err *err) {
    return ms_l2c_encode(&t->l2c, text, len, add_bos, ids, cap, n_out, err);
}

size_t ms_tokenizer_piece(const ms_tokenizer *t, int prev, int id, const char **out, char *buf) {
    return ms_l2c_piece(&t->l2c, prev, id, out, buf);
}

int ms_tokenizer_vocab(const ms_tokenizer *t) { return t->l2c.vocab_size; }
int ms_tokenizer_bos(const ms_tokenizer *t) { return t->l2c.bos_id; }
