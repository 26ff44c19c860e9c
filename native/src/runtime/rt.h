/* Internal interface of the runtime library (libiotuner.so).
 *
 * The library is LD_PRELOADed into unmodified applications. It links neither
 * MPI nor HDF5: every call into them goes through dlsym, so the library also
 * loads harmlessly into mpiexec, shells and serial programs, and never drags
 * a second HDF5 into a process. */
#ifndef IOTUNER_RT_H
#define IOTUNER_RT_H

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>
#include <x86intrin.h>

#include <mpi.h> /* MPI_Comm in the smart-mode interface */

#include "iotuner/core.h"

#define IOT_EXPORT __attribute__((visibility("default")))
/* initial-exec: a preloaded library gets static TLS, so no __tls_get_addr call on the hot path */
#define IOT_TLS __thread __attribute__((tls_model("initial-exec")))

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
double iot_ticks_to_seconds(uint64_t ticks);

/* Small calls past the first IOT_EXACT_CALLS of a phase are timed on a random
 * 1-in-IOT_SAMPLE_EVERY sample, weighted to stay unbiased: reading the clock
 * twice costs ~22 ns, 3-5% of a small cached write. Large calls are always
 * timed. Random, not every n-th, so periodic call patterns cannot alias. */
#define IOT_EXACT_CALLS 1024
#define IOT_SAMPLE_EVERY 16
#define IOT_SMALL_CALL 65536

extern IOT_TLS uint32_t iot_rng;

static inline int iot_sample_draw(void)
{
    uint32_t x = iot_rng;
    if (__builtin_expect(x == 0, 0))
        x = (uint32_t)__rdtsc() | 1u;
    x ^= x << 13; /* xorshift32 */
    x ^= x >> 17;
    x ^= x << 5;
    iot_rng = x;
    return (x & (IOT_SAMPLE_EVERY - 1)) == 0;
}

/* Weight of this call's measured time: 1 (exact), IOT_SAMPLE_EVERY (sampled) or 0 (not timed). */
static inline unsigned iot_time_weight(uint64_t call_index, size_t bytes)
{
    if (bytes >= IOT_SMALL_CALL || call_index < IOT_EXACT_CALLS)
        return 1;
    return iot_sample_draw() ? IOT_SAMPLE_EVERY : 0;
}

/* ---- real symbols ---- */

/* Resolves the next definition of a symbol we interpose (cached by the caller). */
void *iot_next_symbol(const char *name);
#define IOT_REAL(var, name)                                                                                   \
    do {                                                                                                     \
        if (__builtin_expect(!(var), 0))                                                                     \
            (var) = iot_next_symbol(name);                                                                   \
    } while (0)

/* ---- phases: one file from open to close ---- */

typedef enum { IOT_KIND_HDF5, IOT_KIND_MPIIO, IOT_KIND_POSIX } iot_phase_kind;

typedef struct {
    char layer[8];
    char name[64];
    char dataset[128];
    char requested[160];
    char effective[160];
    iot_status status;
    char reason[320];
} iot_check;

typedef struct iot_phase {
    int id;
    iot_phase_kind kind;
    char *path;     /* normalized absolute path */
    int occurrence; /* this rank's n-th phase on the same path */
    int created;
    int open;
    char driver[16];       /* HDF5 file driver: mpio, sec2, ... */
    char file_system[16];  /* from statfs */
    char mpiio_driver[16]; /* ROMIO's ADIO driver: ufs, nfs, lustre, ... */
    uint64_t t_start, t_end;
    int64_t handle; /* HDF5 file id or MPI_File */
    _Atomic int open_fds;

    /* POSIX level, on every fd of this file */
    _Atomic uint64_t bytes_written, bytes_read, writes, reads;
    _Atomic uint64_t write_ticks, read_ticks, sync_ticks, meta_ticks;
    /* MPI-IO data calls: the application's bytes for MPI-IO programs */
    _Atomic uint64_t mpi_bytes_written, mpi_bytes_read, mpi_writes, mpi_reads, mpi_write_ticks, mpi_read_ticks;
    /* HDF5 dataset calls: the application's bytes for HDF5 programs */
    _Atomic uint64_t h5_writes, h5_reads, h5_write_ticks, h5_read_ticks, h5_bytes_written, h5_bytes_read;
    _Atomic int time_sampled; /* some times above are estimated from a sample */

    /* verification, guarded by the registry lock */
    iot_check *checks;
    size_t nchecks, capchecks;
    char *mpi_hints_json; /* every hint MPI_File_get_info returned */

    struct iot_smart_phase *smart; /* smart mode's state of this phase, NULL when off */

    /* HDF5 transfer-mode machinery */
    int64_t xfer_dxpl;     /* our transfer list replacing H5P_DEFAULT, or -1 */
    int xfer_checked;
} iot_phase;

/* Starts a phase for a file (path as the application gave it). */
iot_phase *iot_phase_begin(iot_phase_kind kind, const char *path, int created);
void iot_phase_end(iot_phase *ph);
/* Drops a phase whose open failed. */
void iot_phase_abort(iot_phase *ph);
/* The open HDF5 or MPI-IO phase on this normalized path, if any. */
iot_phase *iot_phase_find_open(const char *normpath);
iot_phase *iot_phase_find_handle(iot_phase_kind kind, int64_t handle);
/* Adds or replaces (same layer, name and dataset) a verification entry. */
void iot_phase_check(iot_phase *ph, const char *layer, const char *name, const char *dataset,
                     const char *requested, const char *effective, iot_status status, const char *reason);
void iot_phase_set_hints(iot_phase *ph, char *json);

/* Snapshot of every phase (caller frees the array, not the phases). */
iot_phase **iot_phases(size_t *n);

/* Lexical normalization to an absolute path; strips ROMIO prefixes ("ufs:"). */
void iot_normalize_path(const char *path, char *out, size_t outlen);
/* File system of the directory that holds path ("ext4", "lustre", ...). */
const char *iot_file_system_of(const char *path);

/* ---- file descriptors -> phase (the POSIX hot path) ---- */

#define IOT_FD_TABLE 65536
extern iot_phase *_Atomic iot_fd_phase[IOT_FD_TABLE];

static inline iot_phase *iot_phase_of_fd(int fd)
{
    if ((unsigned)fd >= IOT_FD_TABLE)
        return NULL;
    return atomic_load_explicit(&iot_fd_phase[fd], memory_order_relaxed);
}

/* ---- process state ---- */

typedef struct {
    int disabled;            /* IOTUNER_DISABLE: pure pass-through */
    int verbose;
    iot_settings *settings;  /* NULL when none or rejected */
    char *settings_path;
    char *settings_error;    /* why the settings were rejected */
    char *report_path;
    int warned;

    int mpi_initialized;     /* we saw MPI_Init succeed */
    int mpi_finalized;
    int rank, nprocs, nnodes;
    int used_hdf5, used_mpiio;
    char mpi_library[256];
    char hdf5_library[64];
    uint64_t t_init;
    char **warnings;
    size_t nwarnings;
} iot_state;

extern iot_state iot_g;

/* Per-thread: inside our own code (no tracking), and the HDF5 file phase
 * whose H5Fcreate/H5Fopen is running (its MPI_File_open belongs to it). */
extern IOT_TLS int iot_internal;
extern IOT_TLS iot_phase *iot_h5_opening;

static inline int iot_active(void)
{
    return !iot_g.disabled && !iot_internal;
}

/* Settings that apply to a phase's file (and dataset) in one layer: what
 * smart mode decided for the phase, overridden knob by knob by the user's
 * settings document. */
size_t iot_resolve(const iot_phase *ph, const char *dataset, iot_layer layer, const iot_setting **out, size_t max);

/* Prints the one settings warning (rank 0, or a serial process). */
void iot_warn_settings_once(void);
/* Adds a warning to the run report (and prints it with IOTUNER_VERBOSE). */
void iot_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- modules ---- */

/* MPI (mpi.c): communicator of the run, collectives at finalize. */
int iot_mpi_gather_text(const char *mine, char ***all, int *count); /* rank 0 receives */
/* Lustre (lustre.c): prepare the layout of a file about to be created.
 * is_root: this process creates it; the caller synchronizes others. */
void iot_lustre_prepare(iot_phase *ph, const char *path, int truncating, int is_root);
int iot_lustre_wanted(const iot_phase *ph);
/* Report (report.c) */
char *iot_phase_to_json(const iot_phase *ph);
void iot_report_write(void);
/* Smart mode (smart.c): SmartIO's workflow with a feedback loop. */
extern int iot_smart_on;
void iot_smart_init(void);
/* A file phase starts with this call (H5Fcreate, H5Fopen, or MPI_File_open
 * of an MPI-IO program). comm: the ranks that open the file, duplicated for
 * smart mode (it frees it), or MPI_COMM_NULL for one process. Collective on
 * comm: every rank of it must call this when smart mode is on. */
void iot_smart_phase_begin(iot_phase *ph, const char *func, const int64_t *args, int nargs, MPI_Comm comm);
/* Another HDF5 or MPI-IO call, when entered (signature conventions: iotuner/smart.h). */
void iot_smart_call(iot_phase *ph, const char *func, const int64_t *args, int nargs, int offset_index);
/* An MPI-IO data call: its bytes, and its offset in the file in bytes when
 * known (explicit, or the individual file pointer's), which is part of the
 * call's signature for the _at calls only (iotuner/smart.h). */
void iot_smart_data(iot_phase *ph, const char *func, int64_t bytes, int64_t offset, int offset_known,
                    int offset_in_signature, int is_write);
/* 1 while the phase is the learned one (its data calls' offsets are kept). */
int iot_smart_learning(const iot_phase *ph);
/* After the phase's file is closed: collective on the ranks that share the file. */
void iot_smart_phase_end(iot_phase *ph);
/* The phase's open failed: forget it. */
void iot_smart_phase_drop(iot_phase *ph);
/* Settings smart mode decided for this phase, NULL for none. */
const iot_settings *iot_smart_settings(const iot_phase *ph);
char *iot_smart_rank_json(void);
void iot_smart_merge_json(iot_buf *b, const iot_json *const *ranks, int n);

/* HDF5 (hdf5.c) */
const char *iot_hdf5_version(void);

#endif
