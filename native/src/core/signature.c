/* Call-signature table: (function, arguments but the offset) -> dense id.
 * Entries live in an array indexed by id (describing an id is O(1)); an
 * open-addressing index of id+1 (linear probing, load <= 1/2) finds them.
 * Nothing is ever removed, so the index needs no tombstones. */
#include "iotuner/grammar.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int64_t *args; /* one allocation: args, then the function name */
    char *func;
    uint64_t calls;
    uint32_t hash;
    int32_t nargs;
    int32_t offset_index;
} sig_entry;

struct iot_sigtab {
    sig_entry *e;
    size_t n, cap;
    uint32_t *slots; /* id + 1, 0 = empty */
    size_t nslots;   /* power of two */
};

static uint64_t mix64(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 33;
    return h;
}

static uint32_t sig_hash(const char *func, const int64_t *args, int nargs, int offset_index)
{
    uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a over the name, then the arguments mixed in */
    for (const unsigned char *p = (const unsigned char *)func; *p; p++)
        h = (h ^ *p) * 0x100000001b3ULL;
    h = mix64(h ^ ((uint64_t)(uint32_t)nargs << 32 | (uint32_t)(offset_index + 1)));
    for (int i = 0; i < nargs; i++)
        if (i != offset_index)
            h = mix64(h ^ (uint64_t)args[i]) + (uint64_t)i;
    return (uint32_t)(h ^ (h >> 32));
}

static int same(const sig_entry *e, uint32_t hash, const char *func, const int64_t *args, int nargs,
                int offset_index)
{
    if (e->hash != hash || e->nargs != nargs || e->offset_index != offset_index || strcmp(e->func, func))
        return 0;
    for (int i = 0; i < nargs; i++)
        if (i != offset_index && e->args[i] != args[i])
            return 0;
    return 1;
}

static int valid(const char *func, const int64_t *args, int nargs, int offset_index)
{
    return func && nargs >= 0 && nargs <= IOT_SIG_MAX_ARGS && (args || nargs == 0) && offset_index >= -1 &&
           offset_index < nargs;
}

iot_sigtab *iot_sigtab_new(void)
{
    iot_sigtab *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->nslots = 64;
    t->slots = calloc(t->nslots, sizeof *t->slots);
    if (!t->slots) {
        free(t);
        return NULL;
    }
    return t;
}

void iot_sigtab_free(iot_sigtab *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->n; i++)
        free(t->e[i].args);
    free(t->e);
    free(t->slots);
    free(t);
}

/* Slot holding the signature, or the empty slot where it would go. */
static size_t probe(const iot_sigtab *t, uint32_t hash, const char *func, const int64_t *args, int nargs,
                    int offset_index)
{
    size_t mask = t->nslots - 1, i = hash & mask;
    while (t->slots[i] && !same(&t->e[t->slots[i] - 1], hash, func, args, nargs, offset_index))
        i = (i + 1) & mask;
    return i;
}

static int grow_index(iot_sigtab *t)
{
    size_t nslots = t->nslots * 2, mask = nslots - 1;
    uint32_t *slots = calloc(nslots, sizeof *slots);
    if (!slots)
        return -1;
    for (size_t id = 0; id < t->n; id++) {
        size_t i = t->e[id].hash & mask;
        while (slots[i])
            i = (i + 1) & mask;
        slots[i] = (uint32_t)id + 1;
    }
    free(t->slots);
    t->slots = slots;
    t->nslots = nslots;
    return 0;
}

int iot_sig_find(const iot_sigtab *t, const char *func, const int64_t *args, int nargs, int offset_index)
{
    if (!t || !valid(func, args, nargs, offset_index))
        return -1;
    size_t i = probe(t, sig_hash(func, args, nargs, offset_index), func, args, nargs, offset_index);
    return t->slots[i] ? (int)t->slots[i] - 1 : -1;
}

int iot_sig_intern(iot_sigtab *t, const char *func, const int64_t *args, int nargs, int offset_index)
{
    if (!t || !valid(func, args, nargs, offset_index))
        return -1;
    uint32_t hash = sig_hash(func, args, nargs, offset_index);
    size_t i = probe(t, hash, func, args, nargs, offset_index);
    if (t->slots[i]) {
        t->e[t->slots[i] - 1].calls++;
        return (int)t->slots[i] - 1;
    }
    if (t->n > (size_t)IOT_GRAMMAR_MAX_TERMINAL)
        return -1;
    /* Make room first, so a failure leaves the table as it was. */
    if ((t->n + 1) * 2 > t->nslots) {
        if (grow_index(t))
            return -1;
        i = probe(t, hash, func, args, nargs, offset_index);
    }
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 32;
        sig_entry *e = realloc(t->e, cap * sizeof *e);
        if (!e)
            return -1;
        t->e = e;
        t->cap = cap;
    }
    size_t namelen = strlen(func) + 1;
    int64_t *block = malloc((size_t)nargs * sizeof(int64_t) + namelen);
    if (!block)
        return -1;
    if (nargs)
        memcpy(block, args, (size_t)nargs * sizeof(int64_t));
    if (offset_index >= 0)
        block[offset_index] = 0; /* the caller keeps offsets; this one means nothing */
    char *name = (char *)(block + nargs);
    memcpy(name, func, namelen);
    t->e[t->n] = (sig_entry){block, name, 1, hash, nargs, offset_index};
    t->slots[i] = (uint32_t)t->n + 1;
    return (int)t->n++;
}

size_t iot_sigtab_count(const iot_sigtab *t)
{
    return t ? t->n : 0;
}

int iot_sigtab_get(const iot_sigtab *t, int id, iot_sig *out)
{
    if (!t || id < 0 || (size_t)id >= t->n)
        return -1;
    const sig_entry *e = &t->e[id];
    *out = (iot_sig){e->func, e->args, e->nargs, e->offset_index, e->calls};
    return 0;
}

/* Appends text, truncating; out stays NUL-terminated. */
static void cat(char *out, size_t outlen, size_t *at, const char *text)
{
    while (*text && *at + 1 < outlen)
        out[(*at)++] = *text++;
    out[*at] = '\0';
}

void iot_sig_format(const iot_sigtab *t, int id, char *out, size_t outlen)
{
    if (!out || !outlen)
        return;
    iot_sig s;
    if (iot_sigtab_get(t, id, &s)) {
        snprintf(out, outlen, "?%d", id);
        return;
    }
    size_t at = 0;
    char num[32];
    cat(out, outlen, &at, s.func);
    cat(out, outlen, &at, "(");
    for (int i = 0; i < s.nargs; i++) {
        if (i)
            cat(out, outlen, &at, ", ");
        if (i == s.offset_index) {
            cat(out, outlen, &at, "offset");
        } else {
            snprintf(num, sizeof num, "%" PRId64, s.args[i]);
            cat(out, outlen, &at, num);
        }
    }
    cat(out, outlen, &at, ")");
}

void iot_sig_namer(void *sigtab, int terminal, char *buf, size_t buflen)
{
    iot_sig_format(sigtab, terminal, buf, buflen);
}

void iot_sigtab_write_json(const iot_sigtab *t, iot_buf *b, const char *key)
{
    iot_jw_begin_array(b, key);
    for (size_t id = 0; t && id < t->n; id++) {
        const sig_entry *e = &t->e[id];
        iot_jw_begin_object(b, NULL);
        iot_jw_int(b, "id", (int64_t)id);
        iot_jw_string(b, "func", e->func);
        iot_jw_begin_array(b, "args");
        for (int i = 0; i < e->nargs; i++) {
            if (i == e->offset_index)
                iot_jw_null(b, NULL);
            else
                iot_jw_int(b, NULL, e->args[i]);
        }
        iot_jw_end_array(b);
        if (e->offset_index >= 0)
            iot_jw_int(b, "offset_arg", e->offset_index);
        iot_jw_int(b, "calls", (int64_t)e->calls);
        iot_jw_end_object(b);
    }
    iot_jw_end_array(b);
}
