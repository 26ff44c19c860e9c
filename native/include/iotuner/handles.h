/* A thread-safe table from a library's handle (an MPI_File, an HDF5 hid_t, a
 * PnetCDF ncid, widened to 64 bits) to a module's record of it, which the
 * table only points at: each module keeps its own record type. One lock per
 * table; lookups can skip it through a per-thread cache of the last hit.
 * Fail-open: when the table cannot grow, an insert reports it and the handle
 * stays untracked; the application's call is never affected. */
#ifndef IOTUNER_HANDLES_H
#define IOTUNER_HANDLES_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

typedef struct iot_handle_slot iot_handle_slot;

typedef struct iot_handles {
    pthread_mutex_t lock;
    iot_handle_slot *slots; /* open addressing, cap a power of two; NULL until the first insert */
    size_t cap, n;
    /* bumped by every remove, replace and update: a thread's cached hit is good while it is unchanged */
    _Atomic uint64_t generation;
    /* the slots' allocator (calloc's signature); NULL: calloc. A seam for the tests of the fail-open path. */
    void *(*alloc)(size_t count, size_t size);
} iot_handles;

#define IOT_HANDLES_INIT {PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0, 0, NULL}

/* Widening without sign games: an int ncid and an int64_t hid_t keep their value, a pointer its address. */
#define IOT_HANDLE_INT(v) ((uint64_t)(int64_t)(v))
#define IOT_HANDLE_PTR(p) ((uint64_t)(uintptr_t)(p))

/* Maps key to value (not NULL), replacing a value already there. 0, or -1 when the table cannot grow. */
int iot_handles_put(iot_handles *t, uint64_t key, void *value);
/* The value of key, or NULL. */
void *iot_handles_find(iot_handles *t, uint64_t key);
/* Removes key; returns its value (the caller frees it), or NULL when it was not there. */
void *iot_handles_take(iot_handles *t, uint64_t key);
/* Removes key only while it maps to value (a record that replaced it stays). 1 when removed. */
int iot_handles_remove(iot_handles *t, uint64_t key, const void *value);
/* Copies size bytes of key's value into out under the table's lock: a snapshot no update tears. 1, or 0. */
int iot_handles_read(iot_handles *t, uint64_t key, void *out, size_t size);
/* Runs fn on key's value under the table's lock (a change every thread's cache will see). 1, or 0. */
int iot_handles_update(iot_handles *t, uint64_t key, void (*fn)(void *value, void *arg), void *arg);
/* Calls fn on every entry, in no order, under the table's lock (fn must not use the table). */
void iot_handles_each(iot_handles *t, void (*fn)(uint64_t key, void *value, void *arg), void *arg);
/* Removes every entry, giving each value to drop (may be NULL), and frees the slots. */
void iot_handles_clear(iot_handles *t, void (*drop)(void *value));
size_t iot_handles_count(iot_handles *t);

/* ---- a thread's last hit: declare one per table as thread-local (zeroed) ---- */

typedef struct {
    uint64_t key;
    void *value; /* NULL: nothing cached */
    uint64_t generation;
} iot_handle_cache;

static inline uint64_t iot_handles_generation(iot_handles *t)
{
    return atomic_load_explicit(&t->generation, memory_order_acquire);
}

/* key's value, from this thread's cache while nothing was removed or changed anywhere since it was filled.
 * *cached (may be NULL) says which: 1 from the cache, 0 from the table. */
static inline void *iot_handles_find_cached(iot_handles *t, iot_handle_cache *c, uint64_t key, int *cached)
{
    uint64_t gen = iot_handles_generation(t); /* read first: a remove meanwhile makes the filled cache stale */
    int hit = c->value && c->key == key && c->generation == gen;
    if (cached)
        *cached = hit;
    if (hit)
        return c->value;
    void *v = iot_handles_find(t, key);
    c->key = key;
    c->value = v;
    c->generation = gen;
    return v;
}

#endif
