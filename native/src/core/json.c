/* JSON reader (recursive descent, depth-limited) and writer. */
#include "iotuner/json.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 64

typedef struct {
    const char *p, *end, *start;
    int line;
    const char *line_start;
    char *err;
    size_t errlen;
    int failed;
} parser;

static void fail(parser *ps, const char *what)
{
    if (ps->failed)
        return;
    ps->failed = 1;
    if (ps->err && ps->errlen)
        snprintf(ps->err, ps->errlen, "line %d, column %d: %s", ps->line,
                 (int)(ps->p - ps->line_start) + 1, what);
}

static void skip_ws(parser *ps)
{
    while (ps->p < ps->end) {
        char c = *ps->p;
        if (c == '\n') {
            ps->line++;
            ps->line_start = ps->p + 1;
        } else if (c != ' ' && c != '\t' && c != '\r') {
            return;
        }
        ps->p++;
    }
}

static iot_json *new_value(parser *ps, iot_json_type t)
{
    iot_json *v = calloc(1, sizeof *v);
    if (!v) {
        fail(ps, "out of memory");
        return NULL;
    }
    v->type = t;
    v->line = ps->line;
    return v;
}

static int add_item(parser *ps, iot_json *container, char *key, iot_json *item)
{
    size_t n = container->count + 1;
    iot_json **items = realloc(container->items, n * sizeof *items);
    if (!items) {
        fail(ps, "out of memory");
        return -1;
    }
    container->items = items;
    if (container->type == IOT_JSON_OBJECT) {
        char **keys = realloc(container->keys, n * sizeof *keys);
        if (!keys) {
            fail(ps, "out of memory");
            return -1;
        }
        container->keys = keys;
        keys[n - 1] = key;
    }
    items[n - 1] = item;
    container->count = n;
    return 0;
}

static void put_utf8(iot_buf *b, unsigned cp)
{
    char out[4];
    size_t n;
    if (cp < 0x80) {
        out[0] = (char)cp;
        n = 1;
    } else if (cp < 0x800) {
        out[0] = (char)(0xC0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3F));
        n = 2;
    } else if (cp < 0x10000) {
        out[0] = (char)(0xE0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        n = 3;
    } else {
        out[0] = (char)(0xF0 | (cp >> 18));
        out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[3] = (char)(0x80 | (cp & 0x3F));
        n = 4;
    }
    iot_buf_append(b, out, n);
}

static int hex4(parser *ps, unsigned *out)
{
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        if (ps->p >= ps->end || !isxdigit((unsigned char)*ps->p)) {
            fail(ps, "bad \\u escape in string");
            return -1;
        }
        char c = *ps->p++;
        v = v * 16 + (unsigned)(isdigit((unsigned char)c) ? c - '0' : (tolower((unsigned char)c) - 'a' + 10));
    }
    *out = v;
    return 0;
}

static char *parse_string_raw(parser *ps)
{
    iot_buf b;
    iot_buf_init(&b);
    ps->p++; /* opening quote */
    for (;;) {
        if (ps->p >= ps->end) {
            fail(ps, "unterminated string");
            break;
        }
        unsigned char c = (unsigned char)*ps->p;
        if (c == '"') {
            ps->p++;
            char *s = iot_buf_take(&b);
            if (!s)
                fail(ps, "out of memory");
            return s;
        }
        if (c < 0x20) {
            fail(ps, "control character in string");
            break;
        }
        if (c >= 0x80) { /* a whole UTF-8 sequence, or an error: reports and messages stay valid text */
            size_t n = iot_utf8_valid_prefix((const unsigned char *)ps->p, (size_t)(ps->end - ps->p));
            if (n == 0) {
                fail(ps, "invalid UTF-8 in string");
                break;
            }
            iot_buf_append(&b, (const char *)ps->p, n);
            ps->p += n;
            continue;
        }
        if (c != '\\') {
            iot_buf_append(&b, (const char *)ps->p, 1);
            ps->p++;
            continue;
        }
        ps->p++;
        if (ps->p >= ps->end) {
            fail(ps, "unterminated string");
            break;
        }
        char e = *ps->p++;
        switch (e) {
        case '"': iot_buf_puts(&b, "\""); break;
        case '\\': iot_buf_puts(&b, "\\"); break;
        case '/': iot_buf_puts(&b, "/"); break;
        case 'b': iot_buf_puts(&b, "\b"); break;
        case 'f': iot_buf_puts(&b, "\f"); break;
        case 'n': iot_buf_puts(&b, "\n"); break;
        case 'r': iot_buf_puts(&b, "\r"); break;
        case 't': iot_buf_puts(&b, "\t"); break;
        case 'u': {
            unsigned cp;
            if (hex4(ps, &cp) < 0)
                goto out;
            if (cp >= 0xD800 && cp < 0xDC00 && ps->end - ps->p >= 6 && ps->p[0] == '\\' && ps->p[1] == 'u') {
                unsigned lo;
                ps->p += 2;
                if (hex4(ps, &lo) < 0)
                    goto out;
                if (lo < 0xDC00 || lo >= 0xE000) {
                    fail(ps, "\\u escape: a high surrogate without its low half");
                    goto out;
                }
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            } else if (cp >= 0xD800 && cp < 0xE000) {
                fail(ps, "\\u escape: a lone surrogate is not a character");
                goto out;
            }
            if (cp == 0) {
                fail(ps, "\\u0000 is not allowed in strings");
                goto out;
            }
            put_utf8(&b, cp);
            break;
        }
        default:
            ps->p--;
            fail(ps, "bad escape in string");
            goto out;
        }
    }
out:
    iot_buf_free(&b);
    return NULL;
}

static iot_json *parse_value(parser *ps, int depth);

static iot_json *parse_number(parser *ps)
{
    const char *s = ps->p;
    int integral = 1;
    if (ps->p < ps->end && *ps->p == '-')
        ps->p++;
    if (ps->p >= ps->end || !isdigit((unsigned char)*ps->p)) {
        fail(ps, "bad number");
        return NULL;
    }
    if (*ps->p == '0' && ps->p + 1 < ps->end && isdigit((unsigned char)ps->p[1])) {
        fail(ps, "numbers may not have leading zeros");
        return NULL;
    }
    while (ps->p < ps->end && isdigit((unsigned char)*ps->p))
        ps->p++;
    if (ps->p < ps->end && *ps->p == '.') {
        integral = 0;
        ps->p++;
        if (ps->p >= ps->end || !isdigit((unsigned char)*ps->p)) {
            fail(ps, "bad number");
            return NULL;
        }
        while (ps->p < ps->end && isdigit((unsigned char)*ps->p))
            ps->p++;
    }
    if (ps->p < ps->end && (*ps->p == 'e' || *ps->p == 'E')) {
        integral = 0;
        ps->p++;
        if (ps->p < ps->end && (*ps->p == '+' || *ps->p == '-'))
            ps->p++;
        if (ps->p >= ps->end || !isdigit((unsigned char)*ps->p)) {
            fail(ps, "bad number");
            return NULL;
        }
        while (ps->p < ps->end && isdigit((unsigned char)*ps->p))
            ps->p++;
    }
    char tmp[64];
    size_t n = (size_t)(ps->p - s);
    if (n >= sizeof tmp) {
        fail(ps, "number too long");
        return NULL;
    }
    memcpy(tmp, s, n);
    tmp[n] = 0;
    iot_json *v = new_value(ps, IOT_JSON_NUMBER);
    if (!v)
        return NULL;
    v->number = strtod(tmp, NULL);
    if (integral) {
        errno = 0;
        long long ll = strtoll(tmp, NULL, 10);
        if (errno == 0) {
            v->is_integer = 1;
            v->integer = ll;
        }
    }
    return v;
}

static int match_word(parser *ps, const char *w)
{
    size_t n = strlen(w);
    if ((size_t)(ps->end - ps->p) >= n && memcmp(ps->p, w, n) == 0) {
        ps->p += n;
        return 1;
    }
    return 0;
}

static iot_json *parse_container(parser *ps, int depth, int is_object)
{
    iot_json *v = new_value(ps, is_object ? IOT_JSON_OBJECT : IOT_JSON_ARRAY);
    if (!v)
        return NULL;
    char close = is_object ? '}' : ']';
    ps->p++;
    skip_ws(ps);
    if (ps->p < ps->end && *ps->p == close) {
        ps->p++;
        return v;
    }
    for (;;) {
        char *key = NULL;
        skip_ws(ps);
        if (is_object) {
            if (ps->p >= ps->end || *ps->p != '"') {
                fail(ps, "expected a quoted key");
                break;
            }
            const char *key_at = ps->p;
            key = parse_string_raw(ps);
            if (!key)
                break;
            skip_ws(ps);
            if (ps->p >= ps->end || *ps->p != ':') {
                free(key);
                fail(ps, "expected ':' after key");
                break;
            }
            ps->p++;
            for (size_t i = 0; i < v->count; i++)
                if (!strcmp(v->keys[i], key)) {
                    char what[200];
                    snprintf(what, sizeof what, "key '%.120s' appears twice in this object", key);
                    free(key);
                    ps->p = key_at; /* the message points at the repeated key */
                    fail(ps, what);
                    goto bad;
                }
        }
        iot_json *item = parse_value(ps, depth + 1);
        if (!item) {
            free(key);
            break;
        }
        if (add_item(ps, v, key, item) < 0) {
            free(key);
            iot_json_free(item);
            break;
        }
        skip_ws(ps);
        if (ps->p < ps->end && *ps->p == ',') {
            ps->p++;
            continue;
        }
        if (ps->p < ps->end && *ps->p == close) {
            ps->p++;
            return v;
        }
        fail(ps, is_object ? "expected ',' or '}'" : "expected ',' or ']'");
        break;
    }
bad:
    iot_json_free(v);
    return NULL;
}

static iot_json *parse_value(parser *ps, int depth)
{
    if (depth > MAX_DEPTH) {
        fail(ps, "nesting too deep");
        return NULL;
    }
    skip_ws(ps);
    if (ps->p >= ps->end) {
        fail(ps, "unexpected end of text");
        return NULL;
    }
    char c = *ps->p;
    iot_json *v;
    switch (c) {
    case '{': return parse_container(ps, depth, 1);
    case '[': return parse_container(ps, depth, 0);
    case '"': {
        int line = ps->line;
        char *s = parse_string_raw(ps);
        if (!s)
            return NULL;
        v = new_value(ps, IOT_JSON_STRING);
        if (!v) {
            free(s);
            return NULL;
        }
        v->line = line;
        v->string = s;
        return v;
    }
    case 't':
    case 'f':
        if (match_word(ps, "true") || match_word(ps, "false")) {
            v = new_value(ps, IOT_JSON_BOOL);
            if (v)
                v->boolean = (c == 't');
            return v;
        }
        break;
    case 'n':
        if (match_word(ps, "null"))
            return new_value(ps, IOT_JSON_NULL);
        break;
    default:
        if (c == '-' || isdigit((unsigned char)c))
            return parse_number(ps);
    }
    fail(ps, "unexpected character");
    return NULL;
}

iot_json *iot_json_parse(const char *text, size_t len, char *err, size_t errlen)
{
    parser ps = {text, text + len, text, 1, text, err, errlen, 0};
    if (err && errlen)
        err[0] = 0;
    if (!text) {
        fail(&ps, "no text");
        return NULL;
    }
    iot_json *v = parse_value(&ps, 0);
    if (!v)
        return NULL;
    skip_ws(&ps);
    if (ps.p != ps.end) {
        fail(&ps, "text after the end of the document");
        iot_json_free(v);
        return NULL;
    }
    return v;
}

void iot_json_free(iot_json *v)
{
    if (!v)
        return;
    for (size_t i = 0; i < v->count; i++) {
        iot_json_free(v->items[i]);
        if (v->keys)
            free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
    free(v->string);
    free(v);
}

const iot_json *iot_json_get(const iot_json *obj, const char *key)
{
    if (!obj || obj->type != IOT_JSON_OBJECT)
        return NULL;
    for (size_t i = obj->count; i-- > 0;)
        if (strcmp(obj->keys[i], key) == 0)
            return obj->items[i];
    return NULL;
}

const char *iot_json_type_name(iot_json_type t)
{
    static const char *names[] = {"null", "true/false", "number", "string", "array", "object"};
    return (unsigned)t < sizeof names / sizeof names[0] ? names[t] : "?";
}

size_t iot_utf8_valid_prefix(const unsigned char *s, size_t len)
{
    if (!len)
        return 0;
    unsigned c = s[0];
    if (c < 0x80)
        return 1;
    size_t n;
    unsigned lo = 0x80, hi = 0xBF; /* bounds of the second byte: no overlong forms, surrogates or > U+10FFFF */
    if (c >= 0xC2 && c <= 0xDF)
        n = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        if (c == 0xE0)
            lo = 0xA0;
        else if (c == 0xED)
            hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        if (c == 0xF0)
            lo = 0x90;
        else if (c == 0xF4)
            hi = 0x8F;
    } else
        return 0;
    if (len < n || s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < n; i++)
        if ((s[i] & 0xC0) != 0x80)
            return 0;
    return n;
}

int iot_utf8_valid(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t len = strlen(s);
    while (*p) {
        size_t n = iot_utf8_valid_prefix(p, len);
        if (!n)
            return 0;
        p += n;
        len -= n;
    }
    return 1;
}

/* ---- buffer ---- */

void iot_buf_init(iot_buf *b)
{
    memset(b, 0, sizeof *b);
}

void iot_buf_free(iot_buf *b)
{
    free(b->data);
    iot_buf_init(b);
}

static int reserve(iot_buf *b, size_t extra)
{
    if (b->failed)
        return -1;
    if (b->len + extra + 1 <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + extra + 1)
        cap *= 2;
    char *d = realloc(b->data, cap);
    if (!d) {
        b->failed = 1;
        return -1;
    }
    b->data = d;
    b->cap = cap;
    return 0;
}

void iot_buf_append(iot_buf *b, const char *s, size_t n)
{
    if (reserve(b, n) < 0)
        return;
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = 0;
}

void iot_buf_puts(iot_buf *b, const char *s)
{
    iot_buf_append(b, s, strlen(s));
}

void iot_buf_printf(iot_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char small[256];
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->failed = 1;
        return;
    }
    if ((size_t)n < sizeof small) {
        iot_buf_append(b, small, (size_t)n);
        return;
    }
    if (reserve(b, (size_t)n) < 0)
        return;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

char *iot_buf_take(iot_buf *b)
{
    if (b->failed) {
        iot_buf_free(b);
        return NULL;
    }
    if (!b->data) { /* nothing appended: an empty, terminated string */
        if (reserve(b, 0) < 0)
            return NULL;
        b->data[0] = 0;
    }
    char *d = b->data;
    b->data = NULL;
    b->len = b->cap = 0;
    return d;
}

/* ---- writer ---- */

void iot_json_quote(iot_buf *b, const char *s)
{
    iot_buf_append(b, "\"", 1);
    const unsigned char *p = (const unsigned char *)s;
    for (;;) {
        const unsigned char *run = p; /* printable ASCII needs no escape: copied in one piece */
        while (*p >= 0x20 && *p < 0x80 && *p != '"' && *p != '\\')
            p++;
        if (p > run)
            iot_buf_append(b, (const char *)run, (size_t)(p - run));
        if (!*p)
            break;
        switch (*p) {
        case '"': iot_buf_append(b, "\\\"", 2); break;
        case '\\': iot_buf_append(b, "\\\\", 2); break;
        case '\n': iot_buf_append(b, "\\n", 2); break;
        case '\r': iot_buf_append(b, "\\r", 2); break;
        case '\t': iot_buf_append(b, "\\t", 2); break;
        default:
            if (*p < 0x20) {
                iot_buf_printf(b, "\\u%04x", *p);
            } else {
                size_t n = iot_utf8_valid_prefix(p, strlen((const char *)p));
                if (n) {
                    iot_buf_append(b, (const char *)p, n);
                    p += n - 1;
                } else {
                    iot_buf_append(b, "\xef\xbf\xbd", 3); /* U+FFFD for a byte that is not UTF-8 */
                }
            }
        }
        p++;
    }
    iot_buf_append(b, "\"", 1);
}

static void member(iot_buf *b, const char *key)
{
    int d = b->depth < 64 ? b->depth : 63;
    int comma = b->need_comma[d];
    b->need_comma[d] = 1;
    if (!key) {
        if (comma)
            iot_buf_append(b, ",", 1);
        return;
    }
    size_t n = 0;
    while (key[n] >= 0x20 && key[n] < 0x7f && key[n] != '"' && key[n] != '\\')
        n++;
    if (key[n]) { /* a key that needs escaping */
        if (comma)
            iot_buf_append(b, ",", 1);
        iot_json_quote(b, key);
        iot_buf_append(b, ":", 1);
        return;
    }
    if (reserve(b, n + 4) < 0) /* ,"key": in one piece */
        return;
    char *o = b->data + b->len;
    if (comma)
        *o++ = ',';
    *o++ = '"';
    memcpy(o, key, n);
    o += n;
    *o++ = '"';
    *o++ = ':';
    *o = 0;
    b->len = (size_t)(o - b->data);
}

static void open_level(iot_buf *b, const char *key, char c)
{
    member(b, key);
    iot_buf_append(b, &c, 1);
    b->depth++;
    if (b->depth < 64)
        b->need_comma[b->depth] = 0;
}

static void close_level(iot_buf *b, char c)
{
    if (b->depth > 0)
        b->depth--;
    iot_buf_append(b, &c, 1);
}

void iot_jw_begin_object(iot_buf *b, const char *key) { open_level(b, key, '{'); }
void iot_jw_end_object(iot_buf *b) { close_level(b, '}'); }
void iot_jw_begin_array(iot_buf *b, const char *key) { open_level(b, key, '['); }
void iot_jw_end_array(iot_buf *b) { close_level(b, ']'); }

void iot_jw_string(iot_buf *b, const char *key, const char *value)
{
    member(b, key);
    if (value)
        iot_json_quote(b, value);
    else
        iot_buf_append(b, "null", 4);
}

void iot_jw_int(iot_buf *b, const char *key, int64_t value)
{
    member(b, key);
    char digits[24], *p = digits + sizeof digits; /* no printf: reports can hold many thousands of numbers */
    uint64_t v = value < 0 ? -(uint64_t)value : (uint64_t)value;
    do
        *--p = (char)('0' + v % 10);
    while (v /= 10);
    if (value < 0)
        *--p = '-';
    iot_buf_append(b, p, (size_t)(digits + sizeof digits - p));
}

void iot_jw_raw(iot_buf *b, const char *key, const char *json)
{
    member(b, key);
    if (json)
        iot_buf_puts(b, json);
    else
        iot_buf_append(b, "null", 4);
}

/* digits of m (at least min_digits) at the end of buf; returns their start */
static char *utoa_end(uint64_t m, char *end, int min_digits)
{
    int n = 0;
    do {
        *--end = (char)('0' + m % 10);
        m /= 10;
        n++;
    } while (m || n < min_digits);
    return end;
}

/* %.9g's scientific form ("2.5e-07", "1.23456789e+12") for 1e-300 < |value| < 1e300. */
static size_t format_e9(double value, char *out, size_t outlen)
{
    double a = fabs(value);
    if (!(a > 1e-300 && a < 1e300))
        return (size_t)snprintf(out, outlen, "%.9g", value);
    int e = (int)floor(log10(a));
    uint64_t m = (uint64_t)llround(a * pow(10, 8 - e));
    if (m >= 1000000000ull) {
        m = (m + 5) / 10;
        e++;
    } else if (m < 100000000ull) { /* log10 rounded the wrong way */
        m = (uint64_t)llround(a * pow(10, 9 - e));
        e--;
    }
    int decimals = 8;
    while (decimals > 0 && m % 10 == 0) {
        m /= 10;
        decimals--;
    }
    char digits[24], *d = utoa_end(m, digits + sizeof digits, 1);
    size_t o = 0;
    if (value < 0)
        out[o++] = '-';
    out[o++] = *d++;
    if (decimals) {
        out[o++] = '.';
        memcpy(out + o, d, (size_t)decimals);
        o += (size_t)decimals;
    }
    out[o++] = 'e';
    out[o++] = e < 0 ? '-' : '+';
    char exp[8], *x = utoa_end((uint64_t)(e < 0 ? -e : e), exp + sizeof exp, 2);
    memcpy(out + o, x, (size_t)(exp + sizeof exp - x));
    return o + (size_t)(exp + sizeof exp - x);
}

/* value as printf's "%.9g" writes it, without printf in the common range (a report can hold a hundred
 * thousand numbers); the last digit may differ from printf's correctly rounded one. */
static size_t format_g9(double value, char *out, size_t outlen)
{
    static const double p10[] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13};
    double a = fabs(value);
    if (value == 0) {
        out[0] = '0';
        return 1;
    }
    if (!(a >= 1e-4 && a < 1e9)) /* printf's scientific notation */
        return format_e9(value, out, outlen);
    int e = 0; /* the exponent: 10^e <= a < 10^(e+1) */
    while (e < 8 && a >= p10[e + 1])
        e++;
    while (a < 1 && e > -4 && a < 1 / p10[-e])
        e--;
    int decimals = 8 - e;
    uint64_t m = (uint64_t)llround(a * p10[decimals]);
    if (m >= 1000000000ull) { /* rounded up into the next decade */
        m = (m + 5) / 10;
        if (--decimals < 0)
            return (size_t)snprintf(out, outlen, "%.9g", value);
    }
    while (decimals > 0 && m % 10 == 0) { /* %g drops trailing zeros */
        m /= 10;
        decimals--;
    }
    char digits[24], *d = utoa_end(m, digits + sizeof digits, decimals + 1);
    int n = (int)(digits + sizeof digits - d);
    size_t o = 0;
    if (value < 0)
        out[o++] = '-';
    int whole = n - decimals;
    memcpy(out + o, d, (size_t)whole);
    o += (size_t)whole;
    if (decimals) {
        out[o++] = '.';
        memcpy(out + o, d + whole, (size_t)decimals);
        o += (size_t)decimals;
    }
    return o;
}

void iot_jw_double(iot_buf *b, const char *key, double value)
{
    member(b, key);
    if (isfinite(value)) {
        char text[40];
        size_t n = format_g9(value, text, sizeof text);
        iot_buf_append(b, text, n < sizeof text ? n : sizeof text - 1);
    } else {
        iot_buf_append(b, "null", 4);
    }
}

void iot_jw_bool(iot_buf *b, const char *key, int value)
{
    member(b, key);
    iot_buf_puts(b, value ? "true" : "false");
}

void iot_jw_null(iot_buf *b, const char *key)
{
    member(b, key);
    iot_buf_append(b, "null", 4);
}

void iot_jw_value(iot_buf *b, const char *key, const iot_json *v)
{
    if (!v) {
        iot_jw_null(b, key);
        return;
    }
    switch (v->type) {
    case IOT_JSON_NULL: iot_jw_null(b, key); break;
    case IOT_JSON_BOOL: iot_jw_bool(b, key, v->boolean); break;
    case IOT_JSON_NUMBER:
        if (v->is_integer)
            iot_jw_int(b, key, v->integer);
        else
            iot_jw_double(b, key, v->number);
        break;
    case IOT_JSON_STRING: iot_jw_string(b, key, v->string); break;
    case IOT_JSON_ARRAY:
        iot_jw_begin_array(b, key);
        for (size_t i = 0; i < v->count; i++)
            iot_jw_value(b, NULL, v->items[i]);
        iot_jw_end_array(b);
        break;
    case IOT_JSON_OBJECT:
        iot_jw_begin_object(b, key);
        for (size_t i = 0; i < v->count; i++)
            iot_jw_value(b, v->keys[i], v->items[i]);
        iot_jw_end_object(b);
        break;
    }
}
