/* The module interface of libiotuner.so, as Darshan's modules register with
 * darshan-core.
 *
 * Each interception layer (POSIX, MPI-IO, HDF5) and each service (Lustre
 * layouts, smart mode, the access pattern) is a module: one iot_module with
 * the hooks it wants, every other member NULL. Modules never call each
 * other: the layers report what happens to a file phase (one file from open
 * to close) as events, and the library hands each event to the modules that
 * subscribe to it. A module outside the library registers the same way, from
 * the constructor of a library preloaded after libiotuner.so
 * (iotuner_module_register); it builds against this header, the library's C
 * API (pkg-config iotuner: <iotuner/core.h>, <iotuner/json.h> and
 * -liotuner_core for the JSON writer) and MPI.
 *
 * Events are of the HDF5 and MPI-IO layers' phases (POSIX files are measured,
 * not reported as events), and come in this order for a phase:
 *   phase_begin  (its opening call; collective on the file's ranks)
 *   file_open    (collective on the file's ranks)
 *   call, data, operation ... (any number, from any thread)
 *   phase_end    (collective on the file's ranks), or phase_dropped (its open failed)
 * A hook runs inside the application's call: it must be quick and call
 * neither the application's I/O nor MPI outside the collective events. */
#ifndef IOTUNER_MODULE_H
#define IOTUNER_MODULE_H

#include <stdint.h>

#include <mpi.h>

#include "iotuner/core.h"
#include "iotuner/json.h"
#include "iotuner/record.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A file phase: opaque outside the library (iotuner_phase_* read it). */
typedef struct iot_phase iot_phase;

/* A call as modules see it: its signature in smart mode's grammar (iotuner/signature.h), that is the
 * function's name, shared by its versions ("H5Dopen" for H5Dopen1 and H5Dopen2), and its arguments. */
typedef struct {
    const char *name;
    const int64_t *args;
    int nargs;
    int offset_index; /* the argument that is a file offset (not part of the call's identity), -1 none */
} iot_call;

/* A data call at the MPI-IO level (MPI_File_write_at_all, ...; also the ones HDF5 makes). */
typedef struct iot_data {
    const char *name;             /* the MPI function */
    uint64_t bytes;               /* the application's bytes */
    int is_write;
    int collective;               /* the *_all calls and their split _begin */
    int explicit_offset;          /* the _at calls: the offset is an argument, part of the signature */
    const struct iot_view *view;  /* the file's view, flattened (the library's); NULL: the default view */
    int64_t disp, etype_size;     /* where the view's data begins, in bytes, and its etype's size */
    /* The call's offset, in etypes of the view (bytes: disp + offset * etype_size): 1 and *offset, or 0 when
     * unknown (the shared file pointer). It may cost a query (the individual file pointer): ask only when
     * needed; use iot_data_offset. */
    int (*offset_of)(struct iot_data *d, int64_t *offset);
    void *layer; /* the layer's own, for offset_of */
} iot_data;

static inline int iot_data_offset(iot_data *d, int64_t *offset)
{
    return d->offset_of(d, offset);
}

/* While the run report is built: what a module's report hook may use. */
typedef struct iot_report_ctx {
    MPI_Comm comm; /* the run's communicator: the hook is collective on it; MPI_COMM_NULL: a serial process */
    int rank;      /* this process's rank in comm (0: a serial process) */
    int root;      /* this process writes the report */
    iot_buf *out;  /* the report's top-level object, open (root only): add one member, the module's section */
    /* root only: the report's phase that a rank's phase (by its key) went into, or -1 */
    int (*phase_id)(const struct iot_report_ctx *ctx, const iot_phase_key *key, int rank);
    const iot_merge *merged; /* for phase_id */
} iot_report_ctx;

/* From a module's report hook: the version of the module's section of the run report, its own apart from the
 * report's (a module changes its section's format without the report's version moving). The report lists it
 * under "sections", by the module's name; a section listed nowhere reads as version 1. */
void iotuner_report_version(const iot_report_ctx *ctx, int version);

typedef struct iot_module {
    const char *name;
    /* At start-up, in the library's constructor (never MPI nor HDF5: the library also loads into mpiexec).
     * Returns 0 when the module sits this run out: then none of its other members is called. */
    int (*init)(void);
    /* Where the library writes this module's slot of a phase's state (iotuner_phase_state); NULL: none. */
    int *slot;

    /* ---- events of a phase, in this order ---- */
    /* The phase's opening call (H5Fcreate, H5Fopen, MPI_File_open), before its settings are resolved. */
    void (*phase_begin)(iot_phase *ph, const iot_call *opening);
    /* After the settings are resolved, before the layer opens (create: creates) the file; truncate: the
     * open truncates an existing file. */
    void (*file_open)(iot_phase *ph, int create, int truncate);
    /* Another call of the phase, when entered (iotuner/signature.h says which, with which arguments). */
    void (*call)(iot_phase *ph, const iot_call *c);
    /* A data call at the MPI-IO level, when entered. */
    void (*data)(iot_phase *ph, iot_data *d);
    /* Counting mode (IOTUNER_COUNT_OPS): an operation made inside a data call (iotuner/ops.h's ids). */
    void (*operation)(iot_phase *ph, int op, int64_t bytes);
    /* The phase's file was closed. */
    void (*phase_end)(iot_phase *ph);
    /* The phase's open failed: the phase is forgotten after this. */
    void (*phase_dropped)(iot_phase *ph);

    /* ---- what the library asks ---- */
    /* A settings source: what the module decided for this phase (NULL: nothing). The user's settings
     * document overrides it knob by knob. */
    const iot_settings *(*settings)(const iot_phase *ph);
    /* Its part of this rank's fixed-size record of a phase (its level's counters). */
    void (*record)(const iot_phase *ph, iot_record *r);
    /* Its section of the run report: collective on ctx->comm (reduce what it keeps across ranks), then the
     * root writes it into ctx->out. */
    void (*report)(const iot_report_ctx *ctx);
    /* At the end of the run (after the report), or at exit. */
    void (*cleanup)(void);
} iot_module;

/* Registers a module (m must outlive the process). Before the library starts, or after (a library preloaded
 * after it): then its init runs at once. Returns 0, or -1 when the library has no room for it. */
int iotuner_module_register(const iot_module *m);

/* What a module reads of a phase. */
const char *iotuner_phase_path(const iot_phase *ph); /* normalized, absolute */
iot_phase_kind iotuner_phase_kind(const iot_phase *ph);
const iot_phase_key *iotuner_phase_key(const iot_phase *ph);
/* A module's state of a phase (its slot), NULL until set. Setting compares and swaps: value replaces the
 * state only while it is expected, and the state after is returned (the data calls of a phase may come from
 * several threads at once). */
void *iotuner_phase_state(const iot_phase *ph, int slot);
void *iotuner_phase_swap_state(iot_phase *ph, int slot, void *expected, void *value);

#ifdef __cplusplus
}
#endif
#endif
