/* Handles -> module records (iotuner/handles.h): linear probing on a
 * multiplicative hash (pointers' aligned low bits, hid_t's type in the high
 * bits and small ncids all spread), removal by backward shift (no
 * tombstones: a long run of opens and closes keeps probes short). */
#include "iotuner/handles.h"

#include <stdlib.h>
#include <string.h>

struct iot_handle_slot {
    uint64_t key;
    void *value; /* NULL: empty */
};

#define FIRST_CAP 64

static inline size_t home(uint64_t key, size_t cap)
{
    return (size_t)((key * 0x9E3779B97F4A7C15ull) >> 32) & (cap - 1);
}

/* Under the lock. The slot of key, or the empty slot where it would go. */
static iot_handle_slot *probe(iot_handle_slot *slots, size_t cap, uint64_t key)
{
    size_t j = home(key, cap);
    while (slots[j].value && slots[j].key != key)
        j = (j + 1) & (cap - 1);
    return &slots[j];
}

/* Under the lock. 0, or -1 when the slots could not be allocated. */
static int grow(iot_handles *t)
{
    size_t cap = t->cap ? t->cap * 2 : FIRST_CAP;
    iot_handle_slot *slots = cap > t->cap ? (t->alloc ? t->alloc : calloc)(cap, sizeof *slots) : NULL;
    if (!slots)
        return -1;
    for (size_t i = 0; i < t->cap; i++)
        if (t->slots[i].value)
            *probe(slots, cap, t->slots[i].key) = t->slots[i];
    free(t->slots);
    t->slots = slots;
    t->cap = cap;
    return 0;
}

static inline void changed(iot_handles *t)
{
    atomic_fetch_add_explicit(&t->generation, 1, memory_order_release);
}

int iot_handles_put(iot_handles *t, uint64_t key, void *value)
{
    if (!value)
        return -1;
    pthread_mutex_lock(&t->lock);
    /* kept at most half full; a table that cannot grow still takes entries up to 7/8 (probes get longer) */
    if ((t->n + 1) * 2 > t->cap && grow(t) && (t->n + 1) * 8 > t->cap * 7) {
        pthread_mutex_unlock(&t->lock);
        return -1;
    }
    iot_handle_slot *s = probe(t->slots, t->cap, key);
    if (s->value)
        changed(t); /* a new record for a handle still in the table (a close the module never saw) */
    else
        t->n++;
    s->key = key;
    s->value = value;
    pthread_mutex_unlock(&t->lock);
    return 0;
}

void *iot_handles_find(iot_handles *t, uint64_t key)
{
    pthread_mutex_lock(&t->lock);
    void *v = t->n ? probe(t->slots, t->cap, key)->value : NULL;
    pthread_mutex_unlock(&t->lock);
    return v;
}

/* Removes key while its value is expected (NULL: any value). */
static void *take(iot_handles *t, uint64_t key, const void *expected)
{
    pthread_mutex_lock(&t->lock);
    void *v = NULL;
    if (t->n) {
        size_t mask = t->cap - 1, i = (size_t)(probe(t->slots, t->cap, key) - t->slots);
        v = t->slots[i].value;
        if (v && expected && v != expected)
            v = NULL;
        if (v) {
            /* backward shift: move up every later entry of the run whose home is not between the hole and it */
            for (size_t j = (i + 1) & mask; t->slots[j].value; j = (j + 1) & mask) {
                size_t h = home(t->slots[j].key, t->cap);
                if (((j - h) & mask) >= ((j - i) & mask)) {
                    t->slots[i] = t->slots[j];
                    i = j;
                }
            }
            t->slots[i] = (iot_handle_slot){0, NULL};
            t->n--;
            changed(t);
        }
    }
    pthread_mutex_unlock(&t->lock);
    return v;
}

void *iot_handles_take(iot_handles *t, uint64_t key)
{
    return take(t, key, NULL);
}

int iot_handles_remove(iot_handles *t, uint64_t key, const void *value)
{
    return value && take(t, key, value) != NULL;
}

int iot_handles_read(iot_handles *t, uint64_t key, void *out, size_t size)
{
    pthread_mutex_lock(&t->lock);
    void *v = t->n ? probe(t->slots, t->cap, key)->value : NULL;
    if (v)
        memcpy(out, v, size);
    pthread_mutex_unlock(&t->lock);
    return v != NULL;
}

int iot_handles_update(iot_handles *t, uint64_t key, void (*fn)(void *value, void *arg), void *arg)
{
    pthread_mutex_lock(&t->lock);
    void *v = t->n ? probe(t->slots, t->cap, key)->value : NULL;
    if (v) {
        fn(v, arg);
        changed(t);
    }
    pthread_mutex_unlock(&t->lock);
    return v != NULL;
}

void iot_handles_each(iot_handles *t, void (*fn)(uint64_t key, void *value, void *arg), void *arg)
{
    pthread_mutex_lock(&t->lock);
    for (size_t i = 0; i < t->cap; i++)
        if (t->slots[i].value)
            fn(t->slots[i].key, t->slots[i].value, arg);
    pthread_mutex_unlock(&t->lock);
}

void iot_handles_clear(iot_handles *t, void (*drop)(void *value))
{
    pthread_mutex_lock(&t->lock);
    iot_handle_slot *slots = t->slots;
    size_t cap = t->cap;
    t->slots = NULL;
    t->cap = t->n = 0;
    changed(t);
    pthread_mutex_unlock(&t->lock);
    for (size_t i = 0; drop && i < cap; i++)
        if (slots[i].value)
            drop(slots[i].value);
    free(slots);
}

size_t iot_handles_count(iot_handles *t)
{
    pthread_mutex_lock(&t->lock);
    size_t n = t->n;
    pthread_mutex_unlock(&t->lock);
    return n;
}
