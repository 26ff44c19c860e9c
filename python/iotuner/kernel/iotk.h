/* Support of an I/O kernel made by `iotuner kernel`: loop reduction and path
 * switching. Written into every kernel; needs no other header. */
#ifndef IOTK_H
#define IOTK_H

#include <stddef.h>

/* One execution of a reduced loop: at most `limit` of its `trips` iterations run. */
struct iotk_loop {
    int id;
    int reduced;
    long long trips;
    long long limit;
    long long done;
};

struct iotk_loop iotk_loop_enter(int id, long long trips);
void iotk_loop_leave(struct iotk_loop *loop);
/* The path under the prefix when the call writes, or when it reads a file the kernel wrote there;
 * else (an input of the application) the path as given. */
const char *iotk_path(const char *path, int writes);
const char *iotk_open_path(const char *path, int writes); /* iotk_path, and records the open for the validation */
int iotk_open_writes(int flags);          /* open(2) flags that write or create */
int iotk_fopen_writes(const char *mode);  /* fopen(3) modes that write or create */

/* Allocations of a kernel without the compute: the memory is zeroed, so that its pages are the
 * process's own, as the application's are after it computed into them. (Not realloc: what it keeps
 * may be values the kernel needs.) */
void *iotk_malloc(size_t size);
void *iotk_calloc(size_t count, size_t size);

static __inline__ int iotk_loop_next(struct iotk_loop *loop)
{
    return loop->done++ < loop->limit;
}

/* Iterations of for (i = a; i < b (or <=, >, >=); i += s (or -= s)), counted before the loop starts. */
static __inline__ long long iotk_trip(long long a, long long b, long long s, int up, int inclusive)
{
    if (s <= 0)
        return -1; /* unknown: the loop is not reduced */
    if (up)
        return inclusive ? (a <= b ? (b - a) / s + 1 : 0) : (a < b ? (b - a + s - 1) / s : 0);
    return inclusive ? (a >= b ? (a - b) / s + 1 : 0) : (a > b ? (a - b + s - 1) / s : 0);
}

/* Opens a block that lasts as long as the loop after it: leaving it by any path
 * (end, break, return, goto) closes the loop's record. */
#define IOTK_LOOP(id, trips) \
    struct iotk_loop iotk_loop_##id __attribute__((cleanup(iotk_loop_leave))) = iotk_loop_enter(id, trips)

#endif
