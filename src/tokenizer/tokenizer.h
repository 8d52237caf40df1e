/* Tokenizers behind one interface. Kinds: "llama2c" (llama2.c's tokenizer.bin: SentencePiece-
 * style score-ordered merges with byte fallback) and "bpe-bytelevel" (GPT-2 / Qwen / Llama-3
 * byte-level BPE, converted from tokenizer.json; see bpe.h). */
#ifndef MS_TOKENIZER_H
#define MS_TOKENIZER_H
#include <stddef.h>
#include <stdint.h>
#include "../util/error.h"
#include "bpe.h"

typedef struct {
    int vocab_size;
    int max_token_length;
    char *blob;        /* all piece bytes */
    uint32_t *off;     /* [vocab_size + 1] piece i = blob[off[i] .. off[i+1]) */
    float *scores;
    int32_t *sorted;   /* ids sorted by piece bytes (then id) for lookup */
    int bos_id, eos_id;
} ms_tok_llama2c;

enum { MS_TOK_LLAMA2C = 1, MS_TOK_BPE = 2 };

typedef struct {
    int kind;
    ms_tok_llama2c l2c;
    ms_tok_bpe bpe;
} ms_tokenizer;

/* Parse a tokenizer file of the given kind; vocab_size: the manifest's (llama2c: exact count;
 * bpe: an upper bound, the embedding rows). */
ms_tokenizer *ms_tokenizer_load(const char *kind, const uint8_t *data, size_t len, int vocab_size, ms_err *err);
void ms_tokenizer_free(ms_tokenizer *t);
/* Encode UTF-8 text. ids must hold at least ms_tokenizer_max_ids(len) entries. */
int ms_tokenizer_encode(const ms_tokenizer *t, const char *text, size_t len, int add_bos, int32_t *ids, int cap,
                        int *n_out, ms_err *err);
size_t ms_tokenizer_max_ids(size_t len);
/* The bytes token `id` contributes after `prev` (-1 if none). Returns length; *out points into
 * the tokenizer or into buf (>= 1 byte). llama2c's BOS/EOS contribute nothing. */
size_t ms_tokenizer_piece(const ms_tokenizer *t, int prev, int id, const char **out, char *buf);
int ms_tokenizer_vocab(const ms_tokenizer *t);
int ms_tokenizer_bos(const ms_tokenizer *t);
int ms_tokenizer_chat_kind(const ms_tokenizer *t);
/* token string (tokenizer.json / tokenizer.bin form), malloc'd; NULL if out of range */
char *ms_tokenizer_token_string(const ms_tokenizer *t, int id);
int ms_tokenizer_token_id(const ms_tokenizer *t, const char *s, size_t n);
/* Pre-tokenization of (NFC) text into pieces: each piece's end offset (bytes) into ends[cap];
 * returns the count, or -1 if cap is too small. One piece for tokenizers without a pre-tokenizer. */
int ms_tokenizer_pretokenize(const ms_tokenizer *t, const char *s, size_t n, int32_t *ends, int cap);
/* A JSON message list rendered with the chat template the tokenizer's kind names (chat.h):
 * *out malloc'd, its length in *len */
int ms_tokenizer_chat(const ms_tokenizer *t, const char *messages_json, size_t n, int add_generation_prompt, int thinking,
                      char **out, size_t *len, ms_err *err);
#endif
