/* Tokenizers behind one interface. Kinds: "llama2c" (tokenizer.bin of llama2.c, SentencePiece-
 * style score-ordered merges with byte fallback). The byte-level BPE kind comes with its issue. */
#ifndef MS_TOKENIZER_H
#define MS_TOKENIZER_H
#include <stddef.h>
#include <stdint.h>
#include "../util/error.h"

typedef struct {
    int vocab_size;
    int max_token_length;
    char *blob;        /* all piece bytes */
    uint32_t *off;     /* [vocab_size + 1] piece i = blob[off[i] .. off[i+1]) */
    float *scores;
    int32_t *sorted;   /* ids sorted by piece bytes (then id) for lookup */
    int bos_id, eos_id;
    uint8_t byte_id_valid[256];
    int32_t byte_id[256]; /* id of the <0xNN> token for byte NN */
} ms_tok_llama2c;

typedef struct {
    int kind; /* 1 = llama2c */
    ms_tok_llama2c l2c;
} ms_tokenizer;

enum { MS_TOK_LLAMA2C = 1 };

/* Parse a tokenizer file of the given kind ("llama2c"); vocab_size from the manifest. */
ms_tokenizer *ms_tokenizer_load(const char *kind, const uint8_t *data, size_t len, int vocab_size, ms_err *err);
void ms_tokenizer_free(ms_tokenizer *t);
/* Encode UTF-8 text. ids must hold at least len + 3 entries. add_bos: prepend BOS. */
int ms_tokenizer_encode(const ms_tokenizer *t, const char *text, size_t len, int add_bos, int32_t *ids, int cap,
                        int *n_out, ms_err *err);
/* The bytes token `id` contributes after `prev` (-1 if none). Returns length; *out points into
 * the tokenizer or into buf (>= 1 byte). Control tokens (BOS/EOS) contribute nothing. */
size_t ms_tokenizer_piece(const ms_tokenizer *t, int prev, int id, const char **out, char *buf);
int ms_tokenizer_vocab(const ms_tokenizer *t);
int ms_tokenizer_bos(const ms_tokenizer *t);
#endif
