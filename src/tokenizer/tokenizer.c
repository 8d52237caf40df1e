#include "tokenizer.h"
#include "chat.h"
#include "pretokenize.h"
#include <stdlib.h>
#include <string.h>

int ms_l2c_load(ms_tok_llama2c *t, const uint8_t *d, size_t len, int vocab, ms_err *err);
void ms_l2c_free(ms_tok_llama2c *t);
int ms_l2c_encode(const ms_tok_llama2c *t, const char *text, size_t len, int add_bos, int32_t *ids, int cap, int *n_out, ms_err *err);
size_t ms_l2c_piece(const ms_tok_llama2c *t, int prev, int id, const char **out, char *buf);
int ms_l2c_token_id(const ms_tok_llama2c *t, const char *s, size_t n);

ms_tokenizer *ms_tokenizer_load(const char *kind, const uint8_t *data, size_t len, int vocab_size, ms_err *err) {
    int k = !kind ? 0 : !strcmp(kind, "llama2c") ? MS_TOK_LLAMA2C : !strcmp(kind, "bpe-bytelevel") ? MS_TOK_BPE : 0;
    if (!k) {
        ms_fail(err, MS_E_TOKEN, "tokenizer kind \"%s\" is not supported (llama2c, bpe-bytelevel)", kind ? kind : "(none)");
        return NULL;
    }
    ms_tokenizer *t = calloc(1, sizeof *t);
    if (!t) { ms_fail(err, MS_E_MEMORY, "tokenizer: out of memory"); return NULL; }
    t->kind = k;
    int rc = k == MS_TOK_LLAMA2C ? ms_l2c_load(&t->l2c, data, len, vocab_size, err) : ms_bpe_load(&t->bpe, data, len, vocab_size, err);
    if (rc) { ms_tokenizer_free(t); return NULL; }
    return t;
}

void ms_tokenizer_free(ms_tokenizer *t) {
    if (!t) return;
    if (t->kind == MS_TOK_LLAMA2C) ms_l2c_free(&t->l2c);
    else ms_bpe_free(&t->bpe);
    free(t);
}

size_t ms_tokenizer_max_ids(size_t len) { return 3 * len + 4; }

int ms_tokenizer_encode(const ms_tokenizer *t, const char *text, size_t len, int add_bos, int32_t *ids, int cap, int *n_out, ms_err *err) {
    if (t->kind == MS_TOK_LLAMA2C) return ms_l2c_encode(&t->l2c, text, len, add_bos, ids, cap, n_out, err);
    return ms_bpe_encode(&t->bpe, text, len, add_bos, ids, cap, n_out, err);
}

size_t ms_tokenizer_piece(const ms_tokenizer *t, int prev, int id, const char **out, char *buf) {
    if (t->kind == MS_TOK_LLAMA2C) return ms_l2c_piece(&t->l2c, prev, id, out, buf);
    return ms_bpe_piece(&t->bpe, prev, id, out);
}

int ms_tokenizer_vocab(const ms_tokenizer *t) { return t->kind == MS_TOK_LLAMA2C ? t->l2c.vocab_size : (int)t->bpe.n_vocab; }
int ms_tokenizer_bos(const ms_tokenizer *t) { return t->kind == MS_TOK_LLAMA2C ? t->l2c.bos_id : t->bpe.bos; }
int ms_tokenizer_chat_kind(const ms_tokenizer *t) { return t->kind == MS_TOK_BPE ? (int)t->bpe.chat : MS_CHAT_NONE; }

char *ms_tokenizer_token_string(const ms_tokenizer *t, int id) {
    if (t->kind == MS_TOK_BPE) return ms_bpe_token_string(&t->bpe, id);
    if (id < 0 || id >= t->l2c.vocab_size) return NULL;
    size_t l = t->l2c.off[id + 1] - t->l2c.off[id];
    char *s = malloc(l + 1);
    if (s) { memcpy(s, t->l2c.blob + t->l2c.off[id], l); s[l] = 0; }
    return s;
}

int ms_tokenizer_token_id(const ms_tokenizer *t, const char *s, size_t n) {
    return t->kind == MS_TOK_BPE ? ms_bpe_token_id(&t->bpe, s, n) : ms_l2c_token_id(&t->l2c, s, n);
}

int ms_tokenizer_pretokenize(const ms_tokenizer *t, const char *s, size_t n, int32_t *ends, int cap) {
    int k = 0;
    if (t->kind != MS_TOK_BPE) { if (cap < 1) return -1; ends[0] = (int32_t)n; return n ? 1 : 0; }
    if (t->bpe.pipe) { /* the pre-tokenizers alone (no normalizer); removed text joins the next piece */
        uint32_t *a, *b;
        int np = ms_pipeline_pieces(t->bpe.pipe, s, n, &a, &b);
        if (np < 0) return -1;
        for (int q = 0; q < np && k < cap; q++) ends[k++] = (int32_t)b[q];
        free(a); free(b);
        if (k < np) return -1;
        if (!k && n) { if (cap < 1) return -1; ends[k++] = (int32_t)n; }
        if (k) ends[k - 1] = (int32_t)n;
        return k;
    }
    for (size_t i = 0; i < n;) {
        size_t l = ms_pretok_next((int)t->bpe.pretok, s, n, i);
        if (!l) l = 1;
        if (k >= cap) return -1;
        i += l;
        ends[k++] = (int32_t)i;
    }
    return k;
}

int ms_tokenizer_chat(const ms_tokenizer *t, const char *messages_json, size_t n, int add_generation_prompt, int thinking,
                      char **out, size_t *len, ms_err *err) {
    return ms_chat_render(ms_tokenizer_chat_kind(t), messages_json, n, add_generation_prompt, thinking, out, len, err);
}
