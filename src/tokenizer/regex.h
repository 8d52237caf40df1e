/* A small backtracking regex engine over UTF-8, for the Split pre-tokenizers and Replace rules of
 * tokenizer.json files. It takes the subset those patterns use, with the semantics of the
 * Oniguruma engine the Hugging Face library runs them on (leftmost match, alternatives tried in
 * order, greedy quantifiers that give back one character at a time):
 *   literals and escapes (\r \n \t \f \v \xHH \x{H..} \uHHHH, escaped punctuation), '.', ^, $,
 *   classes [...] / [^...] with ranges and the escapes below, \s \S (Unicode White_Space),
 *   \p{..} \P{..} (general categories: L Lu Ll Lt Lm Lo M Mn Mc Me N Nd Nl No P Pc Pd Ps Pe Pi Pf
 *   Po S Sm Sc Sk So Z Zs Zl Zp C Cc Cf Cs Co Cn), quantifiers ? * + {n} {n,} {n,m} on a
 *   character, class or escape, groups ( ), (?: ), (?i: ) with an optional ? after them,
 *   lookahead (?= ) (?! ), alternation |.
 * Anything else (\d, \w, \b, back-references, lookbehind, lazy or possessive quantifiers,
 * repeated groups, inline flags other than (?i: ) is refused at compile time with E_TOKEN naming
 * the construct and its byte offset, rather than matched differently. Matching recurses only
 * along the pattern (runs of one character are counted in a loop), so its depth is bounded by
 * the pattern (at most MS_REGEX_MAX_NODES items), not by the text. */
#ifndef MS_REGEX_H
#define MS_REGEX_H
#include <stddef.h>
#include "../util/error.h"

typedef struct ms_regex ms_regex;

/* Compiles pat[0..n); NULL with err set on a construct outside the subset or a syntax error. */
ms_regex *ms_regex_compile(const char *pat, size_t n, ms_err *err);
void ms_regex_free(ms_regex *re);
#define MS_REGEX_MAX_NODES 4096
/* The leftmost match in s[0..n) starting at or after byte `from` (a character boundary): 1 and
 * its bytes [*ms, *me), 0 when there is none, -1 when the search ran out of its backtracking
 * budget (about a million steps plus 256 per byte: a pattern that backtracks exponentially).
 * s must be valid UTF-8. */
int ms_regex_search(const ms_regex *re, const char *s, size_t n, size_t from, size_t *ms, size_t *me);
#endif
