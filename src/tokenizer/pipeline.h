/* The general tokenizer.json pipeline (docs/format.md, "bpe-bytelevel", pre-tokenizer 0): the
 * normalizers, pre-tokenizers and decoders of a Hugging Face tokenizer.json that the fixed
 * byte-level patterns (pretokenize.h) do not cover, read from their JSON form. The importer
 * checks a tokenizer.json with it and copies those three objects into the tokenizer file; the
 * loader reads them back with it.
 *   normalizers:    NFC, Prepend, Replace (a String pattern), Sequence of these
 *   pre-tokenizers: Split (String or Regex pattern, any behavior, invert), Metaspace (first),
 *                   ByteLevel (last, without its own regex unless alone), Sequence of these
 *   decoders:       ByteLevel (byte-level vocabularies); otherwise Replace (String), ByteFallback,
 *                   Fuse, Strip, Metaspace, Sequence of these
 * Anything else is refused with E_TOKEN naming it. */
#ifndef MS_PIPELINE_H
#define MS_PIPELINE_H
#include <stddef.h>
#include <stdint.h>
#include "../util/error.h"
#include "../util/json.h"
#include "regex.h"

enum { MS_NORM_NFC = 1, MS_NORM_PREPEND, MS_NORM_REPLACE };
enum { MS_PT_SPLIT = 1, MS_PT_METASPACE };
enum { MS_SPLIT_REMOVED = 1, MS_SPLIT_ISOLATED, MS_SPLIT_MERGED_PREV, MS_SPLIT_MERGED_NEXT, MS_SPLIT_CONTIGUOUS };
enum { MS_PREPEND_ALWAYS = 1, MS_PREPEND_FIRST, MS_PREPEND_NEVER };
#define MS_PIPE_MAX 16

typedef struct { int kind; char *a, *b; size_t la, lb; } ms_norm_op;       /* Replace a -> b, Prepend a */
typedef struct {
    int kind;
    ms_regex *re;                  /* Split: a Regex pattern, or NULL and the literal lit */
    char *lit; size_t llen;
    int behavior, invert;
    char rep[8]; size_t rlen;      /* Metaspace: the replacement character */
    int prepend, split;
} ms_pre_op;

typedef struct {
    ms_norm_op norm[MS_PIPE_MAX]; int n_norm;
    ms_pre_op pre[MS_PIPE_MAX]; int n_pre;
    int byte_level;                /* ends in ByteLevel: symbols are bytes, decoder ByteLevel */
    /* character-level decoding: per-token Replace rules (a -> b) and Strip counts, ByteFallback,
     * and what is stripped at the start of the whole text (Strip after Fuse, Metaspace) */
    ms_norm_op dec[MS_PIPE_MAX]; int n_dec;
    int byte_fallback_dec, byte_fallback_at; /* ByteFallback, after byte_fallback_at Replace rules */
    int tok_strip_start, tok_strip_stop, text_strip_start;
    uint32_t tok_strip_cp, text_strip_cp;
} ms_pipeline;

/* Reads the three objects (node indices, -1 or a null node when absent) of j. */
int ms_pipeline_parse(ms_pipeline *p, const ms_json *j, int32_t norm, int32_t pre, int32_t dec, ms_err *err);
void ms_pipeline_free(ms_pipeline *p);
/* Normalizes a segment of text (malloc'd, length in *out_len); NULL when out of memory. */
char *ms_pipeline_normalize(const ms_pipeline *p, const char *s, size_t n, size_t *out_len);
/* Metaspace's rewrite of a (normalized) segment: NULL when out of memory; *out == s when there is
 * no Metaspace step. first: the segment begins the text. */
int ms_pipeline_metaspace(const ms_pipeline *p, const char *s, size_t n, int first, char **out, size_t *out_len);
/* Pre-tokenizes s[0..n) into pieces [starts[k], ends[k]); returns the count, -1 when out of memory,
 * -2 when a Split regex ran out of its backtracking budget (regex.h).
 * *starts and *ends are malloc'd (free them). */
int ms_pipeline_pieces(const ms_pipeline *p, const char *s, size_t n, uint32_t **starts, uint32_t **ends);
/* One token's text through the per-token decoders (malloc'd, *out_len); NULL when out of memory. */
char *ms_pipeline_decode_token(const ms_pipeline *p, const char *s, size_t n, size_t *out_len);
#endif
