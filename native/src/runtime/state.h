/* What every part of the runtime shares: the process's state, the clocks,
 * the sampling of call times, warnings, and the real symbols we interpose.
 * A leaf: state.c calls nothing else of the runtime, so any file may use it.
 *
 * The library is LD_PRELOADed into unmodified applications. It links neither
 * MPI nor HDF5: every call into them goes through dlsym, so the library also
 * loads harmlessly into mpiexec, shells and serial programs, and never drags
 * a second HDF5 into a process. */
#ifndef IOTUNER_STATE_H
#define IOTUNER_STATE_H

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>
#include <x86intrin.h>

#include "iotuner/core.h"
#include "iotuner/record.h"

#define IOT_EXPORT __attribute__((visibility("default")))
/* initial-exec: a preloaded library gets static TLS, so no __tls_get_addr call on the hot path */
#define IOT_TLS __thread __attribute__((tls_model("initial-exec")))

/* A wrapper of the tables in iotuner/calls.h, exported under the call's name. */
#define IOT_DECLARE(ret, name, params, ...) IOT_EXPORT ret name params;

/* ---- timing: a calibrated TSC when the kernel trusts it, else the monotonic clock ---- */

extern int iot_use_tsc;

static inline uint64_t iot_ticks(void)
{
    if (iot_use_tsc)
        return __rdtsc();
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
/* At start-up: picks the clock and remembers where its calibration begins. */
void iot_clock_start(void);
/* A duration in ticks, in seconds. */
double iot_ticks_to_seconds(uint64_t ticks);
/* A moment in ticks, in seconds on the run's common clock (rank 0's monotonic clock). */
double iot_clock_of(uint64_t ticks);

/* Small calls past the first IOT_EXACT_CALLS of a phase are timed on a random
 * sample of one in IOT_SAMPLE_EVERY, weighted to stay unbiased: reading the
 * clock twice costs ~22 ns, 3-5% of a small cached write. Large calls are
 * always timed. The gaps between sampled calls are random (uniform over
 * 1..2*IOT_SAMPLE_EVERY-1, mean IOT_SAMPLE_EVERY), so periodic call patterns
 * cannot alias; counting a gap down costs less than a draw per call. */
#define IOT_EXACT_CALLS 1024
#define IOT_SAMPLE_EVERY 16
#define IOT_SMALL_CALL 65536

extern IOT_TLS uint32_t iot_sample_gap; /* calls of this thread until the next sampled one; 0: not drawn yet */
/* Draws the next gap. */
uint32_t iot_sample_next_gap(void);

static inline int iot_sample_draw(void)
{
    uint32_t gap = iot_sample_gap;
    if (__builtin_expect(gap > 1, 1)) {
        iot_sample_gap = gap - 1;
        return 0;
    }
    iot_sample_gap = iot_sample_next_gap();
    return gap == 1;
}

/* Weight of this call's measured time: 1 (exact), IOT_SAMPLE_EVERY (sampled) or 0 (not timed). */
static inline unsigned iot_time_weight(uint64_t call_index, size_t bytes)
{
    if (bytes >= IOT_SMALL_CALL || call_index < IOT_EXACT_CALLS)
        return 1;
    return iot_sample_draw() ? IOT_SAMPLE_EVERY : 0;
}

/* ---- real symbols ---- */

/* Resolves the next definition of a symbol we interpose (cached by the caller), never the library's own: the
 * program's own, when it was linked with `iotuner link-flags` (iot_linked_symbol), else the next library's. */
void *iot_next_symbol(const char *name);
/* A library function we call: the program's own when linked in, else the first definition. */
void *iot_any_symbol(const char *name);
/* What the program's link object registered (iotuner_link_register), or NULL. */
void *iot_linked_symbol(const char *name);
#define IOT_REAL(var, name)                                                                                   \
    do {                                                                                                     \
        if (__builtin_expect(!(var), 0))                                                                     \
            (var) = iot_next_symbol(name);                                                                   \
    } while (0)

/* ---- the process ---- */

#define IOT_MAX_WARNINGS 64 /* per process; later ones are dropped */

/* Written by the lifecycle (lifecycle.c) and through the functions below; read by everyone. */
typedef struct {
    int disabled;            /* IOTUNER_DISABLE, a launcher, another MPI's ABI: pure pass-through */
    int verbose;
    int count_ops;           /* IOTUNER_COUNT_OPS: counting mode (docs/runtime.md) */
    iot_settings *settings;  /* NULL when none or rejected */
    char *settings_path;
    char *settings_error;    /* why the settings were rejected */
    int settings_warned_before; /* `iotuner run` printed that already (IOTUNER_SETTINGS_WARNED) */
    char *report_path;       /* IOTUNER_REPORT */
    char *log_dir;           /* IOTUNER_LOGPATH, when there is no IOTUNER_REPORT */
    time_t start_time;
    int warned;

    int mpi_initialized;     /* we saw MPI_Init succeed */
    int mpi_finalized;
    int mpi_unseen;          /* MPI was initialized, but not through our MPI_Init: rank known from MPI */
    char *incomplete;        /* why this report holds only this process's share of an MPI job; NULL: complete */
    int spawned;             /* processes this rank started with MPI_Comm_spawn (as the root of the call) */
    int spawned_group;       /* this process was started by MPI_Comm_spawn: its report is its group's alone */
    int rank, nprocs, nnodes;
    int used[IOT_KINDS];     /* this process opened files of that layer */
    char library[IOT_KINDS][256]; /* the MPI library's version (IOT_KIND_MPIIO's), HDF5's */
    uint64_t t_init;
    double clock_offset;     /* this rank's monotonic clock minus rank 0's, seconds */
    char **warnings;
    size_t nwarnings;
    unsigned char warning_printed[IOT_MAX_WARNINGS]; /* this process printed warnings[i] on stderr */
} iot_state;

extern iot_state iot_g;

/* Per thread: inside our own code (what it does is not the application's, and is not tracked). */
extern IOT_TLS int iot_internal;

/* Per thread: how deep in the MPI wrappers (abi.h's iot_wrap_*). The outermost measures; one entered inside it
 * (the MPI library's MPI_x calling its own PMPI_x, or another wrapped MPI call) only forwards. */
extern IOT_TLS int iot_mpi_depth;

static inline int iot_active(void)
{
    return !iot_g.disabled && !iot_internal;
}

/* What the layers tell the process state (they never write it themselves). */
void iot_state_disable(void);                          /* the library steps aside for good */
void iot_state_used(iot_phase_kind kind);              /* a file of this layer was opened */
void iot_state_library(iot_phase_kind kind, const char *version); /* the layer's library, as it names itself */
void iot_state_rank(int rank);                         /* the rank, learned without MPI_Init (Fortran) */
void iot_state_mpi_unseen(int rank);                   /* MPI runs, MPI_Init went around us: this rank */
void iot_state_incomplete(const char *why);            /* the report will hold this process's share only */

/* This process's rank and the job's size from the launcher's environment, before (or without) MPI_Init:
 * rank 0 when launched alone, size 0 when no launcher says. */
int iot_launch_rank(void);
int iot_launch_size(void);
/* pid (0: this process) runs a launcher or one of its proxies (mpiexec, hydra, srun, prte, ...). */
int iot_is_launcher(pid_t pid);

/* Prints the one settings warning (rank 0, or a serial process). */
void iot_warn_settings_once(void);
/* Adds a warning to the run report (and prints it with IOTUNER_VERBOSE). */
void iot_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A warning printed once per process on stderr (rank 0 only), and in the report. */
void iot_warn_once(int *flag, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
