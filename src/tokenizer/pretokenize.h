/* Pre-tokenizers of byte-level BPE models, written out by hand (no regex engine). Each returns the
 * byte length of the next piece at position i of valid UTF-8 text, following the regex's
 * leftmost-first alternation and backtracking exactly:
 *  GPT-2:     's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
 *  Qwen2/3:   (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
 *  Qwen3.5:   as Qwen2/3 with [\p{L}\p{M}]+ for the letter run and \p{M} excluded from the
 *             punctuation run (combining marks stay with their letters)
 *  Llama-3:   as Qwen2/3 with \p{N}{1,3} */
#ifndef MS_PRETOKENIZE_H
#define MS_PRETOKENIZE_H
#include <stddef.h>
enum { MS_PRE_GPT2 = 1, MS_PRE_QWEN2 = 2, MS_PRE_QWEN35 = 3, MS_PRE_LLAMA3 = 4 };
size_t ms_pretok_next(int kind, const char *s, size_t n, size_t i);
#endif
