/* The benchmark programs time their own loops with the monotonic clock. */
#ifndef IOTUNER_BENCH_NOW_H
#define IOTUNER_BENCH_NOW_H
#include <time.h>

static inline double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}
#endif
