/* A small strict JSON reader (RFC 8259) for manifests and configs. It parses the whole text
 * into a flat node array; children of an object/array are linked by `next`. Limits on depth and
 * node count keep hostile inputs bounded. Strings are decoded to UTF-8 (\u escapes and surrogate
 * pairs included); invalid UTF-8 in the input is rejected. */
#ifndef MS_JSON_H
#define MS_JSON_H
#include <stddef.h>
#include <stdint.h>

typedef enum { MS_JNULL, MS_JBOOL, MS_JNUM, MS_JSTR, MS_JARR, MS_JOBJ } ms_jtype;

typedef struct {
    uint8_t type;
    uint8_t boolean;
    int32_t next;   /* next sibling, -1 if none */
    int32_t child;  /* first child (arrays, objects), -1 if empty */
    int32_t count;  /* number of children */
    int32_t key;    /* object members: offset of the key string in strs, -1 otherwise */
    int32_t keylen;
    int32_t str;    /* strings: offset in strs */
    int32_t len;
    double num;
} ms_jnode;

typedef struct {
    ms_jnode *nodes;
    int32_t n_nodes, cap_nodes;
    char *strs; /* decoded strings, each NUL-terminated */
    size_t n_strs, cap_strs;
} ms_json;

#define MS_JSON_MAX_DEPTH 64
#define MS_JSON_MAX_NODES 4000000

/* Returns 0 on success; on failure fills errbuf with "line L col C: what". */
int ms_json_parse(ms_json *j, const char *text, size_t len, char *errbuf, size_t errlen);
void ms_json_free(ms_json *j);

/* Accessors (node index based; -1 means absent). */
int32_t ms_json_get(const ms_json *j, int32_t obj, const char *key);
const char *ms_json_str(const ms_json *j, int32_t node); /* NULL if not a string */
const char *ms_json_key(const ms_json *j, int32_t node);
/* Integer value if node is a number with an exact integer value in [lo, hi]. */
int ms_json_int(const ms_json *j, int32_t node, int64_t lo, int64_t hi, int64_t *out);
int ms_json_num(const ms_json *j, int32_t node, double *out);
int ms_json_bool(const ms_json *j, int32_t node, int *out);

/* Minimal writer helpers: append to a growable buffer. */
typedef struct { char *p; size_t n, cap; int oom; } ms_buf;
void ms_buf_puts(ms_buf *b, const char *s);
void ms_buf_printf(ms_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void ms_buf_json_str(ms_buf *b, const char *s); /* quoted, escaped */
void ms_buf_free(ms_buf *b);
#endif
