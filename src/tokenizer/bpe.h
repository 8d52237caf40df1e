/* BPE from a compact binary file that tools/convert makes from a Hugging Face tokenizer.json
 * (docs/format.md, "bpe-bytelevel"): byte-level BPE (GPT-2 / Qwen / Llama-3 / GPT-4o style) and
 * SentencePiece-style BPE on characters with byte fallback (Llama 2, Gemma 3):
 *   "MSBPE\0v1" | u32 flags (1 NFC, 2 ignore_merges, 4 characters) | u32 pretokenizer |
 *   u32 chat template | i32 bos | u32 n_vocab | u32 n_merges | u32 n_added | u32 n_pipeline |
 *   n_pipeline bytes: JSON {"normalizer", "pre_tokenizer", "decoder", "unk", "fuse_unk",
 *                     "byte_fallback"} when pretokenizer is 0 (the general pipeline, pipeline.h)
 *   n_vocab x (u32 len, bytes)   token id -> raw bytes (byte-level: after undoing the byte map;
 *                                characters: the token string as it is)
 *   n_merges x (u32 left, u32 right, u32 result)   in rank order
 *   n_added x (u32 id, u32 flags, u32 len, bytes)  flags: 1 special, 2 lstrip, 4 rstrip
 * Everything is validated on load; encoding never fails on valid UTF-8. */
#ifndef MS_BPE_H
#define MS_BPE_H
#include <stddef.h>
#include <stdint.h>
#include "../util/error.h"
#include "pipeline.h"

enum { MS_BPE_NFC = 1, MS_BPE_IGNORE_MERGES = 2, MS_BPE_CHARS = 4 };
/* The chat templates the engine renders itself, X(ID, name) in code order (engine info
 * "chat_kinds", index = code; the JS side's tokenizer.chatTemplate names) */
#define MS_CHAT_LIST(X) X(NONE, "none") X(CHATML, "chatml") X(QWEN3, "qwen3") X(QWEN35, "qwen3.5")
enum {
#define MS_X(id, name) MS_CHAT_##id,
    MS_CHAT_LIST(MS_X)
#undef MS_X
    MS_CHAT__COUNT
};

typedef struct {
    uint32_t flags, pretok, chat;
    int32_t bos;
    uint32_t n_vocab, n_merges, n_added;
    uint32_t *off;            /* [n_vocab + 1] into blob */
    uint8_t *blob;
    /* merges: open-addressing hash (left, right) -> (rank, result) */
    uint64_t *mkey;
    uint32_t *mrank, *mres, mcap;
    /* raw bytes -> id */
    uint32_t *vh, vcap;
    int32_t byte_id[256];
    /* added tokens, longest first */
    uint32_t *a_id, *a_flags, *a_off, *a_len;
    uint8_t *a_blob;
    uint32_t a_start[257];    /* a_order[a_start[b] .. a_start[b + 1]): the added tokens starting */
    uint32_t *a_order;        /* with byte b, longest first (Gemma 3 has 6,415 of them) */
    /* the general pipeline (pretok 0): normalizers, pre-tokenizers, decoders; the model's
     * unknown token (-1: none), fuse_unk, byte_fallback (byte_id then holds the <0xNN> ids) */
    ms_pipeline *pipe;
    int32_t unk;
    int fuse_unk, byte_fallback;
    /* characters (MS_BPE_CHARS): each token's text after the decoders, [n_vocab + 1] into dblob */
    uint32_t *doff;
    uint8_t *dblob;
} ms_tok_bpe;

int ms_bpe_load(ms_tok_bpe *t, const uint8_t *d, size_t n, int vocab_limit, ms_err *err);
void ms_bpe_free(ms_tok_bpe *t);
/* ids must hold len + 2 entries (one token per byte at most, plus BOS) */
int ms_bpe_encode(const ms_tok_bpe *t, const char *text, size_t len, int add_bos, int32_t *ids, int cap, int *n, ms_err *err);
/* the bytes token id reads as after prev (-1: it starts the text) */
size_t ms_bpe_piece(const ms_tok_bpe *t, int prev, int id, const char **out);
/* token string as in tokenizer.json (byte-level form); returns malloc'd string or NULL */
char *ms_bpe_token_string(const ms_tok_bpe *t, int id);
int ms_bpe_token_id(const ms_tok_bpe *t, const char *s, size_t n);
/* tokenizer.json (+ optional tokenizer_config.json) -> binary file (malloc'd). rows > 0: the
 * model's embedding rows; added tokens with an id at or past them are left out (they can never be
 * fed to the model: Gemma 3's <image_soft_token>, id 262144, beside a 262,144-row text model). */
int ms_bpe_import(const char *tok_json, size_t tlen, const char *cfg_json, size_t clen, const char *tpl_override,
                  int rows, uint8_t **out, size_t *out_len, int *bos_out, ms_err *err);
/* A weight set's chat object, {"template": ..., "bos_token": ..., "eos_token": ...} as JSON text
 * (malloc'd in *out; NULL when there is no template): the template is tpl_override (a
 * chat_template.jinja file) or tokenizer_config.json's chat_template (a string, or the "default"
 * entry of a list of {name, template}); the token strings are tokenizer_config.json's. */
int ms_chat_info_json(const char *cfg_json, size_t clen, const char *tpl_override, char **out, ms_err *err);
/* The same as a malloc'd text that is "null" when there is no template; NULL: the error in err */
char *ms_chat_info_text(const char *cfg_json, size_t clen, const char *tpl_override, ms_err *err);
/* GPT-2's byte -> code point map */
uint32_t ms_byte_to_unicode(uint8_t b);
#endif
