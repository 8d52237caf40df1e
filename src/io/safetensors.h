/* safetensors: u64 little-endian header length N, N bytes of JSON header
 * {"__metadata__": {...}, "name": {"dtype": "BF16", "shape": [..], "data_offsets": [begin, end]}},
 * then the data. Offsets are relative to the data start. The reader validates everything: header
 * length within the file, JSON well-formed, dtypes known, shapes sane, offsets inside the data,
 * byte counts equal to shape x element size, no two tensors overlapping. */
#ifndef MS_SAFETENSORS_H
#define MS_SAFETENSORS_H
#include <stddef.h>
#include <stdint.h>
#include "../util/error.h"

typedef struct {
    char name[160];
    int dtype;         /* ms_dtype for F32/F16/BF16; -1 for other (valid but unsupported) dtypes */
    char dtype_name[8];
    int ndim;
    int64_t shape[8];
    uint64_t offset;   /* absolute offset in the file */
    uint64_t bytes;
} ms_st_tensor;

typedef struct {
    ms_st_tensor *t;
    int n;
} ms_st_file;

#define MS_ST_MAX_HEADER (100u << 20)

/* header: the first 8 + N bytes of the file (the caller reads 8, then N); file_size for bounds.
 * `what` names the file in messages. */
int ms_st_parse_len(const uint8_t first8[8], uint64_t file_size, uint64_t *header_len, const char *what, ms_err *err);
int ms_st_parse(const char *json, size_t len, uint64_t file_size, ms_st_file *out, const char *what, ms_err *err);
void ms_st_free(ms_st_file *f);
#endif
