/* Minimal JSON reader and writer for iotuner's two documents (settings in,
 * run report out). No MPI, no HDF5: usable from the runtime and from Python. */
#ifndef IOTUNER_JSON_H
#define IOTUNER_JSON_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    IOT_JSON_NULL,
    IOT_JSON_BOOL,
    IOT_JSON_NUMBER,
    IOT_JSON_STRING,
    IOT_JSON_ARRAY,
    IOT_JSON_OBJECT
} iot_json_type;

typedef struct iot_json iot_json;
struct iot_json {
    iot_json_type type;
    int line; /* 1-based line of the value in the source text, for messages */
    int boolean;
    double number;
    int is_integer;   /* number literal had no fraction or exponent and fits int64 */
    int64_t integer;
    char *string;     /* STRING */
    size_t count;     /* ARRAY / OBJECT */
    iot_json **items; /* ARRAY / OBJECT values */
    char **keys;      /* OBJECT keys, in source order */
};

/* Parses text (len bytes). Strings must be valid UTF-8 and an object may
 * not repeat a key. On error returns NULL and writes
 * "line L, column C: what" into err. */
iot_json *iot_json_parse(const char *text, size_t len, char *err, size_t errlen);
void iot_json_free(iot_json *v);
/* Object member by key, or NULL. */
const iot_json *iot_json_get(const iot_json *obj, const char *key);
const char *iot_json_type_name(iot_json_type t);

/* Length of the valid UTF-8 sequence at s (1 for ASCII), 0 if none. */
size_t iot_utf8_valid_prefix(const unsigned char *s, size_t len);
/* 1 when the NUL-terminated s is valid UTF-8. */
int iot_utf8_valid(const char *s);

/* Growable text buffer with a JSON writer on top. Errors (out of memory)
 * are sticky: check iot_buf.failed once at the end. */
typedef struct {
    char *data;
    size_t len, cap;
    int failed;
    int depth;
    unsigned char need_comma[64]; /* per nesting level */
} iot_buf;

void iot_buf_init(iot_buf *b);
void iot_buf_free(iot_buf *b);
void iot_buf_append(iot_buf *b, const char *s, size_t n);
void iot_buf_puts(iot_buf *b, const char *s);
void iot_buf_printf(iot_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Detaches the NUL-terminated text (caller frees); NULL if failed. */
char *iot_buf_take(iot_buf *b);

/* JSON writer. key is NULL inside arrays. */
void iot_jw_begin_object(iot_buf *b, const char *key);
void iot_jw_end_object(iot_buf *b);
void iot_jw_begin_array(iot_buf *b, const char *key);
void iot_jw_end_array(iot_buf *b);
void iot_jw_string(iot_buf *b, const char *key, const char *value); /* NULL value -> null */
void iot_jw_int(iot_buf *b, const char *key, int64_t value);
void iot_jw_double(iot_buf *b, const char *key, double value); /* non-finite -> null */
void iot_jw_bool(iot_buf *b, const char *key, int value);
void iot_jw_null(iot_buf *b, const char *key);
/* Writes JSON text as it is (text this library wrote itself). */
void iot_jw_raw(iot_buf *b, const char *key, const char *json);
/* Writes an already-parsed value (deep copy as text). */
void iot_jw_value(iot_buf *b, const char *key, const iot_json *v);
/* Writes a JSON string literal (quoted, escaped) without key/comma handling.
 * Bytes that are not UTF-8 (a file name can hold any) become U+FFFD, so
 * the output is always valid UTF-8. */
void iot_json_quote(iot_buf *b, const char *s);

#ifdef __cplusplus
}
#endif
#endif
