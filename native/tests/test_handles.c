/* The handle table the runtime's modules share (iotuner/handles.h). */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "check.h"
#include "iotuner/handles.h"

/* Handles as the libraries make them: MPI_File pointers (aligned), HDF5 ids (type in the high bits), ncids. */
static uint64_t handle(int shape, uint64_t i)
{
    switch (shape) {
    case 0:
        return 0x7f3a12400000ull + i * 0x240;
    case 1:
        return (1ull << 56) | i;
    default:
        return i;
    }
}

static void add_key(uint64_t key, void *value, void *arg)
{
    uint64_t *sums = arg;
    sums[0] += key;
    sums[1] += (uint64_t)(uintptr_t)value;
    sums[2]++;
}

static int dropped;
static void drop(void *value)
{
    (void)value;
    dropped++;
}

static void many_and_removal(void)
{
    enum { N = 20000 };
    for (int shape = 0; shape < 3; shape++) {
        iot_handles t = IOT_HANDLES_INIT;
        uint64_t sum = 0;
        for (uint64_t i = 0; i < N; i++) {
            CHECK(iot_handles_put(&t, handle(shape, i), (void *)(uintptr_t)(i + 1)) == 0);
            sum += handle(shape, i);
        }
        CHECK(iot_handles_count(&t) == N);
        int wrong = 0;
        for (uint64_t i = 0; i < N; i++)
            wrong += iot_handles_find(&t, handle(shape, i)) != (void *)(uintptr_t)(i + 1);
        CHECK(wrong == 0);
        CHECK(iot_handles_find(&t, handle(shape, N)) == NULL);
        uint64_t sums[3] = {0, 0, 0};
        iot_handles_each(&t, add_key, sums);
        CHECK(sums[0] == sum && sums[1] == (uint64_t)N * (N + 1) / 2 && sums[2] == N);

        /* every third goes: the others stay findable across the shifted runs */
        for (uint64_t i = 0; i < N; i += 3)
            CHECK(iot_handles_take(&t, handle(shape, i)) == (void *)(uintptr_t)(i + 1));
        CHECK(iot_handles_take(&t, handle(shape, 0)) == NULL); /* already gone */
        CHECK(iot_handles_take(&t, handle(shape, N + 7)) == NULL);
        wrong = 0;
        for (uint64_t i = 0; i < N; i++) {
            void *want = i % 3 ? (void *)(uintptr_t)(i + 1) : NULL;
            wrong += iot_handles_find(&t, handle(shape, i)) != want;
        }
        CHECK(wrong == 0);
        CHECK(iot_handles_count(&t) == N - (N + 2) / 3);
        dropped = 0;
        iot_handles_clear(&t, drop);
        CHECK(dropped == N - (N + 2) / 3);
        CHECK(iot_handles_count(&t) == 0 && iot_handles_find(&t, handle(shape, 1)) == NULL);
        CHECK(iot_handles_put(&t, handle(shape, 1), &t) == 0 && iot_handles_find(&t, handle(shape, 1)) == &t);
        iot_handles_clear(&t, NULL);
    }
}

/* A library reuses a closed handle's value (MPICH's MPI_File, netCDF's ncid): the new record, never the old,
 * also from a thread's cache. */
static void reuse_after_close(void)
{
    iot_handles t = IOT_HANDLES_INIT;
    iot_handle_cache c = {0};
    int a, b, other, cached;
    CHECK(iot_handles_put(&t, 42, &a) == 0);
    CHECK(iot_handles_find_cached(&t, &c, 42, &cached) == &a && !cached);
    CHECK(iot_handles_find_cached(&t, &c, 42, &cached) == &a && cached);
    CHECK(iot_handles_put(&t, 43, &other) == 0); /* an open elsewhere leaves the cache good */
    CHECK(iot_handles_find_cached(&t, &c, 42, &cached) == &a && cached);
    CHECK(iot_handles_take(&t, 42) == &a);
    CHECK(iot_handles_find_cached(&t, &c, 42, &cached) == NULL && !cached);
    CHECK(iot_handles_put(&t, 42, &b) == 0);
    CHECK(iot_handles_find_cached(&t, &c, 42, &cached) == &b && !cached);
    /* a record replaced without a close in between */
    CHECK(iot_handles_put(&t, 42, &a) == 0);
    CHECK(iot_handles_count(&t) == 2);
    CHECK(iot_handles_find_cached(&t, &c, 42, &cached) == &a && !cached);
    /* a late close of the old record leaves the new one */
    CHECK(iot_handles_remove(&t, 42, &b) == 0 && iot_handles_find(&t, 42) == &a);
    CHECK(iot_handles_remove(&t, 42, &a) == 1 && iot_handles_find(&t, 42) == NULL);
    CHECK(iot_handles_remove(&t, 42, &a) == 0);
    CHECK(iot_handles_put(&t, 42, &a) == 0);
    /* another key through the same cache */
    CHECK(iot_handles_find_cached(&t, &c, 43, NULL) == &other);
    iot_handles_clear(&t, NULL);
    CHECK(iot_handles_find_cached(&t, &c, 43, &cached) == NULL && !cached);
}

typedef struct {
    int64_t disp, etype;
} view_rec;

static void set_view(void *value, void *arg)
{
    view_rec *r = value;
    r->disp = *(int64_t *)arg;
    r->etype = 2 * *(int64_t *)arg;
}

static void read_and_update(void)
{
    iot_handles t = IOT_HANDLES_INIT;
    iot_handle_cache c = {0};
    view_rec r = {0, 1}, copy = {-1, -1};
    int64_t d = 512;
    CHECK(iot_handles_put(&t, IOT_HANDLE_INT(-5), &r) == 0); /* a negative int keeps its value */
    CHECK(iot_handles_find(&t, (uint64_t)-5) == &r);
    CHECK(iot_handles_find_cached(&t, &c, IOT_HANDLE_INT(-5), NULL) == &r);
    uint64_t gen = iot_handles_generation(&t);
    CHECK(iot_handles_update(&t, IOT_HANDLE_INT(-5), set_view, &d) == 1);
    CHECK(r.disp == 512 && r.etype == 1024);
    CHECK(iot_handles_generation(&t) != gen); /* every thread's cache looks again */
    CHECK(iot_handles_read(&t, IOT_HANDLE_INT(-5), &copy, sizeof copy) == 1 && copy.disp == 512);
    CHECK(iot_handles_update(&t, 7, set_view, &d) == 0);
    CHECK(iot_handles_read(&t, 7, &copy, sizeof copy) == 0 && copy.disp == 512);
    iot_handles_clear(&t, NULL);
}

/* ---- threads: each opens, uses and closes its own handles, interleaved with the others' in the table ---- */

enum { THREADS = 4, PER_THREAD = 300, ROUNDS = 40 };
static iot_handles shared = IOT_HANDLES_INIT;
static __thread iot_handle_cache thread_cache;

typedef struct {
    int id;
    int wrong;
    uintptr_t values[PER_THREAD];
} worker;

static void *work(void *arg)
{
    worker *w = arg;
    for (int round = 0; round < ROUNDS; round++) {
        for (int i = 0; i < PER_THREAD; i++) { /* open: a new record; the handle values are reused each round */
            w->values[i] = ((uintptr_t)w->id << 40) | ((uintptr_t)round << 20) | (uintptr_t)(i + 1);
            if (iot_handles_put(&shared, (uint64_t)i * THREADS + (uint64_t)w->id, (void *)w->values[i]))
                w->wrong++;
        }
        for (int pass = 0; pass < 3; pass++) /* data calls: the cache answers repeated ones */
            for (int i = 0; i < PER_THREAD; i++)
                for (int k = 0; k < 2; k++)
                    w->wrong += iot_handles_find_cached(&shared, &thread_cache, (uint64_t)i * THREADS + (uint64_t)w->id,
                                                        NULL) != (void *)w->values[i];
        for (int i = 0; i < PER_THREAD; i++) /* close */
            w->wrong += iot_handles_take(&shared, (uint64_t)i * THREADS + (uint64_t)w->id) != (void *)w->values[i];
        for (int i = 0; i < PER_THREAD; i += 7)
            w->wrong += iot_handles_find_cached(&shared, &thread_cache, (uint64_t)i * THREADS + (uint64_t)w->id,
                                                NULL) != NULL;
    }
    return NULL;
}

static void threads(void)
{
    pthread_t tid[THREADS];
    worker w[THREADS];
    for (int i = 0; i < THREADS; i++) {
        w[i] = (worker){.id = i};
        CHECK(pthread_create(&tid[i], NULL, work, &w[i]) == 0);
    }
    for (int i = 0; i < THREADS; i++) {
        pthread_join(tid[i], NULL);
        CHECK(w[i].wrong == 0);
    }
    CHECK(iot_handles_count(&shared) == 0);
    iot_handles_clear(&shared, NULL);
}

/* ---- fail-open: no memory for the slots ---- */

static int allocations_left;
static void *scarce(size_t count, size_t size)
{
    return allocations_left-- > 0 ? calloc(count, size) : NULL;
}

static void fail_open(void)
{
    iot_handles t = IOT_HANDLES_INIT;
    t.alloc = scarce;
    iot_handle_cache c = {0};
    int v[64];
    allocations_left = 0; /* not even the first slots */
    CHECK(iot_handles_put(&t, 1, &v[0]) == -1);
    CHECK(iot_handles_find(&t, 1) == NULL && iot_handles_find_cached(&t, &c, 1, NULL) == NULL);
    CHECK(iot_handles_take(&t, 1) == NULL && iot_handles_count(&t) == 0);
    CHECK(iot_handles_update(&t, 1, set_view, NULL) == 0);
    uint64_t sums[3] = {0, 0, 0};
    iot_handles_each(&t, add_key, sums);
    CHECK(sums[2] == 0);

    allocations_left = 1; /* the first 64 slots, never more: fills to 7/8, then refuses */
    int stored = 0;
    for (int i = 0; i < 64; i++)
        stored += iot_handles_put(&t, handle(0, (uint64_t)i), &v[i]) == 0;
    CHECK(stored == 56);
    int wrong = 0;
    for (int i = 0; i < 64; i++)
        wrong += iot_handles_find(&t, handle(0, (uint64_t)i)) != (i < 56 ? &v[i] : NULL);
    CHECK(wrong == 0);
    CHECK(iot_handles_take(&t, handle(0, 3)) == &v[3]); /* a close makes room again */
    CHECK(iot_handles_put(&t, handle(0, 60), &v[60]) == 0 && iot_handles_find(&t, handle(0, 60)) == &v[60]);
    CHECK(iot_handles_put(&t, 99, NULL) == -1); /* NULL is no record */
    iot_handles_clear(&t, NULL);
    allocations_left = 1; /* after a clear the table starts over */
    CHECK(iot_handles_put(&t, 5, &v[5]) == 0 && iot_handles_find(&t, 5) == &v[5]);
    iot_handles_clear(&t, NULL);
}

int main(void)
{
    many_and_removal();
    reuse_after_close();
    read_and_update();
    threads();
    fail_open();
    CHECK_DONE();
}
