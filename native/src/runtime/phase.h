/* One phase: a file from open to close, as every part of the runtime sees it
 * (the registry of phases is phases.c), and its lock-free counters. */
#ifndef IOTUNER_PHASE_H
#define IOTUNER_PHASE_H

#include <stdatomic.h>
#include <stdint.h>

#include <mpi.h>

#include "iotuner/core.h"
#include "iotuner/record.h"
#include "state.h"

typedef struct {
    char layer[8];
    char name[64];
    char dataset[128];
    char requested[160];
    char effective[160];
    iot_status status;
    char reason[320];
} iot_check;

/* Modules' state of a phase: one slot each for the modules that keep some (iot_module.slot). */
#define IOT_PHASE_SLOTS 8

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
    char *datasets_json;  /* HDF5: the datasets this rank wrote, their shapes and first selections (a JSON array) */
    int ndatasets;
    struct iot_app_setting *app; /* what the application itself asked for, before iotuner */
    size_t napp;

    int xfer_checked;              /* HDF5: the transfer mode was read back */
    int folded;                    /* POSIX: the files of one name past IOT_FOLD_AFTER, one phase */
    _Atomic uint32_t files;        /* files opened into it (a folded phase: many) */
    int retried;                   /* the open was retried without iotuner's settings */

    /* the modules' view (module.h) */
    int announced;                    /* the modules heard of its begin: they hear of its end */
    MPI_Comm comm;                    /* the file's ranks, made when a module first asks (iot_phase_comm) */
    MPI_Comm (*comm_source)(void *);  /* how to make it, while the layer opens the file */
    void *comm_arg;
    _Atomic(void *) state[IOT_PHASE_SLOTS];

    struct iot_phase *next_path; /* hash chain of the open phases by path */
} iot_phase;

static inline void *iot_phase_state(const iot_phase *ph, int slot)
{
    return atomic_load_explicit(&ph->state[slot], memory_order_acquire);
}

/* value replaces the state only while it is expected; returns the state after */
static inline void *iot_phase_swap_state(iot_phase *ph, int slot, void *expected, void *value)
{
    return atomic_compare_exchange_strong(&ph->state[slot], &expected, value) ? value : expected;
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

#endif
