/* Internal interface of the runtime library (libiotuner.so).
 *
 * The library is LD_PRELOADed into unmodified applications. It links neither
 * MPI nor HDF5: every call into them goes through dlsym, so the library also
 * loads harmlessly into mpiexec, shells and serial programs, and never drags
 * a second HDF5 into a process.
 *
 * Structure (as Darshan's runtime): lifecycle.c owns start-up and shutdown;
 * the modules (posix.c, mpiio.c, hdf5.c, lustre.c, smart.c) register with it
 * (module.h); phases.c keeps the phases; report.c turns them into the run
 * report; mpi.c holds the PMPI table and forwards MPI_Init / MPI_Finalize. */
#ifndef IOTUNER_RT_H
#define IOTUNER_RT_H

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>
#include <x86intrin.h>

#include <mpi.h> /* MPI_Comm in the module interfaces */

#include "iotuner/core.h"
#include "iotuner/record.h"
#include "iotuner/ops.h"

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
/* Draws the next gap (lifecycle.c). */
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

/* ---- wrappers: declared from the tables in iotuner/calls.h ---- */

#define IOT_DECLARE(ret, name, params, ...) IOT_EXPORT ret name params;
/* The MPI wrappers take the handles of the MPI the library was built for: each is iot_wrap_NAME, with the
 * prototype of mpi.h's NAME, and the exported NAME is a trampoline to it (abi.c). */
#define IOT_DECLARE_MPI(ret, name, ...) __typeof__(name) iot_wrap_##name;
#define IOT_DECLARE_MPI_DATA(name, ...) __typeof__(name) iot_wrap_##name;
/* 1 when this process uses an MPI of another ABI than the library's (abi.c): then the library is disabled,
 * and the exported MPI functions jump straight to that MPI's own. */
int iot_mpi_foreign_abi(void);

/* ---- real symbols ---- */

/* Resolves the next definition of a symbol we interpose (cached by the caller). */
void *iot_next_symbol(const char *name);
#define IOT_REAL(var, name)                                                                                   \
    do {                                                                                                     \
        if (__builtin_expect(!(var), 0))                                                                     \
            (var) = iot_next_symbol(name);                                                                   \
    } while (0)

/* ---- phases: one file from open to close (phases.c) ---- */

typedef struct {
    char layer[8];
    char name[64];
    char dataset[128];
    char requested[160];
    char effective[160];
    iot_status status;
    char reason[320];
} iot_check;

/* One level's counters (iotuner/record.h's iot_level_stats, in ticks, updated lock-free). */
typedef struct {
    _Atomic uint64_t bytes_written, bytes_read, writes, reads, write_ticks, read_ticks;
} iot_level_counters;

typedef struct iot_phase {
    iot_phase_key key;
    uint64_t identity; /* iot_identity hash of the path */
    uint32_t step;     /* earlier opens of this kind and identity in this process (the record's step) */
    int id;            /* creation order in this process */
    iot_phase_kind kind;
    char *path;        /* normalized absolute path */
    int created;
    int open;
    int group_size, group_rank; /* the opening communicator: its size and this rank in it (1, 0: alone) */
    char driver[16];            /* HDF5 file driver: mpio, sec2, ... */
    char file_system[16];       /* from statfs */
    char mpiio_driver[16];      /* ROMIO's ADIO driver: ufs, nfs, lustre, ... */
    uint64_t t_start, t_end;
    int64_t handle;  /* HDF5 file id or MPI_File */
    int handles;     /* open identifiers of the file (H5Freopen adds one) */
    _Atomic int open_fds;

    iot_level_counters level[IOT_LEVELS];
    _Atomic uint64_t sync_ticks, meta_ticks; /* POSIX fsync, open/close */
    _Atomic int time_sampled;                /* some times above are estimated from a sample */

    /* verification, guarded by the registry lock */
    iot_check *checks;
    size_t nchecks, capchecks;
    char *mpi_hints_json; /* every hint MPI_File_get_info returned */
    struct iot_app_setting *app; /* what the application itself asked for, before iotuner */
    size_t napp;

    struct iot_smart_phase *smart; /* smart mode's state of this phase, NULL when off */
    int xfer_checked;              /* HDF5: the transfer mode was read back */
    int folded;                    /* POSIX: the files of one name past IOT_FOLD_AFTER, one phase */
    _Atomic uint32_t files;        /* files opened into it (a folded phase: many) */
    int retried;                   /* the open was retried without iotuner's settings */
    _Atomic(struct iot_access *) access; /* MPI-IO: the collective calls' pattern (access.c), NULL until one */

    struct iot_phase *next_path, *next_handle; /* hash chains of the open phases */
} iot_phase;

/* Starts a phase for a file (path as the application gave it): an
 * independent one (this rank's own) until iot_phase_set_group says who
 * opened it with it. NULL past the phase quota (IOT_MAX_PHASES). */
iot_phase *iot_phase_begin(iot_phase_kind kind, const char *path, int created);
iot_phase *iot_phase_begin_normalized(iot_phase_kind kind, const char *normpath, int created);
/* The phase was opened collectively by a communicator of size ranks whose
 * group hashes to group (0, size 1: alone); this rank is rank in it. Keys the
 * phase by what those ranks agree on (iotuner/record.h). Once per phase. */
void iot_phase_set_group(iot_phase *ph, uint64_t group, int size, int rank);
void iot_phase_set_handle(iot_phase *ph, int64_t handle);
void iot_phase_end(iot_phase *ph);
/* Drops a phase whose open failed (or a POSIX file opened and closed without I/O). */
void iot_phase_abort(iot_phase *ph);
/* The open HDF5 or MPI-IO phase on this normalized path, if any. O(1). */
iot_phase *iot_phase_find_open(const char *normpath);
/* The open phase of this kind with this handle, if any. O(1). */
iot_phase *iot_phase_find_handle(iot_phase_kind kind, int64_t handle);
/* Adds or replaces (same layer, name and dataset) a verification entry. */
void iot_phase_check(iot_phase *ph, const char *layer, const char *name, const char *dataset,
                     const char *requested, const char *effective, iot_status status, const char *reason);
/* 1 when the phase has an entry for this knob (any dataset). */
int iot_phase_has_check(iot_phase *ph, const char *layer, const char *name);
void iot_phase_set_hints(iot_phase *ph, char *json);
/* The application's own value of a knob (its property lists, its MPI_Info), as it opened the file; an
 * HDF5 property at the library's default is left out. */
void iot_phase_app_setting(iot_phase *ph, iot_layer layer, const char *knob, const char *value);
/* Those values as a JSON object {"layer.knob": "value"} (caller frees). */
char *iot_phase_app_json(iot_phase *ph);
/* The verification list as a JSON array (caller frees); with_layer: "knob": "layer.name". */
char *iot_phase_checks_json(iot_phase *ph, int smart_form);

/* Snapshot of every live phase (caller frees the array, not the phases). */
iot_phase **iot_phases(size_t *n);
/* The phase quota: phases past it are not recorded (their bytes go untracked). */
#define IOT_MAX_PHASES 65536
/* A POSIX file of a name (iot_identity: numbers folded) this rank already opened this many times joins one
 * phase of the later ones: a program writing thousands of small files one after another gets a bounded
 * report, and the folded phase's bandwidth is that of the whole sequence. */
#define IOT_FOLD_AFTER 256
/* The POSIX phase of a regular file being opened: its own, or its name's folded one. */
iot_phase *iot_phase_begin_posix(const char *normpath, int created);
/* A POSIX phase's last descriptor was closed. */
void iot_phase_posix_closed(iot_phase *ph);

/* Lexical normalization to an absolute path; strips ROMIO prefixes ("ufs:"). */
void iot_normalize_path(const char *path, char *out, size_t outlen);
/* File system of the directory that holds path ("ext4", "lustre", ...), cached per directory. */
const char *iot_file_system_of(const char *path);
/* Files that are never a phase: system directories, the settings file, ROMIO_HINTS (iot_path_ignore). */
int iot_path_ignored(const char *normpath);
void iot_path_ignore(const char *path);
/* Under a directory of IOTUNER_EXCLUDE_DIRS: not a phase, not tuned. */
int iot_path_excluded(const char *normpath);
/* The working directory changed (chdir wrappers). */
void iot_cwd_changed(void);
/* At start-up: what the path helpers read from the environment. */
void iot_paths_init(void);

/* ---- file descriptors -> phase (the POSIX hot path) ---- */

#define IOT_FD_TABLE 65536
extern iot_phase *_Atomic iot_fd_phase[IOT_FD_TABLE];

static inline iot_phase *iot_phase_of_fd(int fd)
{
    if ((unsigned)fd >= IOT_FD_TABLE)
        return NULL;
    return atomic_load_explicit(&iot_fd_phase[fd], memory_order_relaxed);
}

/* Counts one call of a level and decides whether to time it (iot_time_weight). */
static inline unsigned iot_level_begin(iot_phase *ph, iot_level l, size_t bytes, int is_write)
{
    iot_level_counters *c = &ph->level[l];
    uint64_t index = atomic_fetch_add_explicit(is_write ? &c->writes : &c->reads, 1, memory_order_relaxed);
    unsigned w = iot_time_weight(index, bytes);
    if (__builtin_expect(w > 1, 0) && !atomic_load_explicit(&ph->time_sampled, memory_order_relaxed))
        atomic_store_explicit(&ph->time_sampled, 1, memory_order_relaxed);
    return w;
}

static inline void iot_level_end(iot_phase *ph, iot_level l, uint64_t bytes, uint64_t dt, unsigned weight,
                                 int is_write)
{
    iot_level_counters *c = &ph->level[l];
    atomic_fetch_add_explicit(is_write ? &c->bytes_written : &c->bytes_read, bytes, memory_order_relaxed);
    if (weight)
        atomic_fetch_add_explicit(is_write ? &c->write_ticks : &c->read_ticks, dt * weight, memory_order_relaxed);
}

/* One level's counters into a record's statistics. */
void iot_level_record(const iot_phase *ph, iot_level l, iot_level_stats *s);

/* ---- process state (lifecycle.c) ---- */

#define IOT_MAX_WARNINGS 64 /* per process; later ones are dropped */

typedef struct {
    int disabled;            /* IOTUNER_DISABLE, or a launcher: pure pass-through */
    int verbose;
    iot_settings *settings;  /* NULL when none or rejected */
    char *settings_path;
    char *settings_error;    /* why the settings were rejected */
    char *report_path;       /* IOTUNER_REPORT */
    char *log_dir;           /* IOTUNER_LOGPATH, when there is no IOTUNER_REPORT */
    time_t start_time;
    int warned;

    int mpi_initialized;     /* we saw MPI_Init succeed */
    int mpi_finalized;
    int rank, nprocs, nnodes;
    int used_hdf5, used_mpiio;
    char mpi_library[256];
    char hdf5_library[64];
    uint64_t t_init;
    double clock_offset;     /* this rank's monotonic clock minus rank 0's, seconds */
    char **warnings;
    size_t nwarnings;
    unsigned char warning_printed[IOT_MAX_WARNINGS]; /* this process printed warnings[i] on stderr */
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

/* Settings that apply to a phase's file (and dataset) in one layer: what the
 * modules that are settings sources decided (smart mode), overridden knob by
 * knob by the user's settings document. */
size_t iot_resolve(const iot_phase *ph, const char *dataset, iot_layer layer, const iot_setting **out, size_t max);
/* The groups of the user's document (the first 64, by bit) whose dataset pattern matched a dataset here. */
uint64_t iot_settings_pattern_hits(void);
/* The first of list[0..n) that is this knob, or NULL. */
const iot_setting *iot_setting_of(const iot_setting *const *list, size_t n, iot_knob_id knob);

/* Prints the one settings warning (rank 0, or a serial process). */
void iot_warn_settings_once(void);
/* Adds a warning to the run report (and prints it with IOTUNER_VERBOSE). */
void iot_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A warning printed once per process on stderr (rank 0 only), and in the report. */
void iot_warn_once(int *flag, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Start and end of an MPI run (called by mpi.c around PMPI_Init / PMPI_Finalize). */
void iot_lifecycle_mpi_started(void);
void iot_lifecycle_mpi_finishing(void);

/* ---- MPI (mpi.c) ---- */

/* The group of a communicator as the phases' keys use it: its hash (0 for a
 * single process), size and this process's rank in it. Cached on the
 * communicator as an attribute. */
void iot_comm_group(MPI_Comm comm, uint64_t *group, int *size, int *rank);
/* Nodes spanned by a communicator (collective on comm). */
int iot_mpi_count_nodes(MPI_Comm comm);
/* Rank in the process's world without collectives; 0 before MPI_Init. */
int iot_mpi_world_rank(void);
/* iotuner's own duplicate of MPI_COMM_WORLD (MPI_COMM_NULL outside an MPI run). */
MPI_Comm iot_mpi_run_comm(void);

/* ---- report (report.c) ---- */

void iot_report_write(void);
/* While a report is being built: the report's phase that this rank's phase went into, or -1. */
int iot_report_phase_id(const iot_phase_key *key);

/* Counting mode (IOTUNER_COUNT_OPS=1, access.c): while this thread is inside an MPI-IO data call, the phase
 * whose operations are counted; NULL otherwise (always NULL when the mode is off). */
extern IOT_TLS struct iot_phase *iot_op_phase;
extern int iot_count_ops;
void iot_op_note(int op, long long bytes);
#define IOT_OP_NOTE(op, bytes)                                                                                 \
    do {                                                                                                       \
        if (__builtin_expect(iot_op_phase != NULL, 0))                                                         \
            iot_op_note(op, (long long)(bytes));                                                               \
    } while (0)
/* Gathers every rank's bytes to rank 0 of comm (collective): *all (rank 0 only, to free) and *total. */
int iot_gather_bytes(MPI_Comm comm, const char *mine, size_t len, char **all, size_t *total);

/* ---- modules that others call ---- */

/* Lustre (lustre.c): prepare the layout of a file about to be created.
 * is_root: this process creates it; the caller synchronizes others. */
void iot_lustre_prepare(iot_phase *ph, const char *path, int truncating, int is_root);
int iot_lustre_wanted(const iot_phase *ph);

/* Smart mode (smart.c): SmartIO's workflow with a feedback loop. */
extern int iot_smart_on;
/* A file phase starts with this call (H5Fcreate, H5Fopen, or MPI_File_open
 * of an MPI-IO program). comm: the ranks that open the file, duplicated for
 * smart mode (it frees it), or MPI_COMM_NULL for one process. Collective on
 * comm: every rank of it must call this when smart mode is on. */
void iot_smart_phase_begin(iot_phase *ph, const char *func, const int64_t *args, int nargs, MPI_Comm comm);
/* Another HDF5 or MPI-IO call, when entered (signature conventions: iotuner/signature.h). */
void iot_smart_call(iot_phase *ph, const char *func, const int64_t *args, int nargs, int offset_index);
/* An MPI-IO data call: its bytes, and its offset in the file in bytes when
 * known (explicit, or the individual file pointer's), which is part of the
 * call's signature for the _at calls only (iotuner/signature.h). */
void iot_smart_data(iot_phase *ph, const char *func, int64_t bytes, int64_t offset, int offset_known,
                    int offset_in_signature, int is_write);
/* 1 while the phase is the learned one (its data calls' offsets are kept). */
int iot_smart_learning(const iot_phase *ph);
/* After the phase's file is closed: collective on the ranks that share the file. */
void iot_smart_phase_end(iot_phase *ph);
/* The phase's open failed: forget it. */
void iot_smart_phase_drop(iot_phase *ph);

#endif
