/* The phases of this process (phases.c): a registry with O(1) lookups (hash
 * table by path, the shared handle table by handle, the descriptor table for POSIX calls),
 * bounded by a quota; each phase's verification list and the application's
 * own values. */
#ifndef IOTUNER_PHASES_H
#define IOTUNER_PHASES_H

#include <mpi.h>

#include "iotuner/module.h"
#include "phase.h"

/* Starts a phase for a file (path as the application gave it): an
 * independent one (this rank's own) until iot_phase_set_group says who
 * opened it with it. NULL past the phase quota (IOT_MAX_PHASES). */
iot_phase *iot_phase_begin(iot_phase_kind kind, const char *path, int created);
iot_phase *iot_phase_begin_normalized(iot_phase_kind kind, const char *normpath, int created);
/* The phase was opened collectively by a communicator of size ranks whose
 * group hashes to group (0, size 1: alone); this rank is rank in it. Keys the
 * phase by what those ranks agree on (iotuner/record.h). Once per phase. */
void iot_phase_set_group(iot_phase *ph, uint64_t group, int size, int rank);
/* The phase's file is open, as handle (an HDF5 file id, an MPI_File). */
void iot_phase_set_handle(iot_phase *ph, int64_t handle);
/* The phase's file was closed: the modules hear of it (phase end; collective on the file's ranks). */
void iot_phase_end(iot_phase *ph);
/* Drops a phase whose open failed (the modules hear of it: phase dropped), or a POSIX file opened and closed
 * without I/O. */
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
/* The same, for one dataset's row only (NULL: the file's own row). */
int iot_phase_has_dataset_check(iot_phase *ph, const char *layer, const char *name, const char *dataset);
void iot_phase_set_hints(iot_phase *ph, char *json);
/* One dataset of an HDF5 phase (a JSON object): its name, shape, layout and this rank's first write selection.
 * The first IOT_PHASE_MAX_DATASETS a phase writes are kept. */
#define IOT_PHASE_MAX_DATASETS 16
void iot_phase_add_dataset(iot_phase *ph, const char *entry);
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

/* ---- what the modules hear of a phase (module.h's events): phases.c sends its begin, end and drop ---- */

/* The layer's opening call of a phase (H5Fcreate, MPI_File_open), before the phase's settings are resolved:
 * the modules hear of the phase (phase begin), and will hear of its end or drop. source (may be NULL) makes
 * the communicator of the ranks that open the file, called with arg when a module first asks for it; both
 * stay valid until the open ends (iot_phase_set_handle or iot_phase_abort). Collective on those ranks. */
void iot_phase_announce(iot_phase *ph, const iot_call *opening, MPI_Comm (*source)(void *), void *arg);
/* After the settings are resolved, before the layer opens the file (create: creates it; truncate: an
 * existing file is truncated): collective on the file's ranks. */
void iot_phase_file_open(iot_phase *ph, int create, int truncate);
/* The ranks that open the phase's file (MPI_COMM_NULL: one process), the phase's until its end. Made at the
 * first ask, which must come during the open (phase begin, file open), from every rank of the file: it is
 * collective on them. Also keys the phase by that group, as the report will (iot_phase_set_group). */
MPI_Comm iot_phase_comm(iot_phase *ph);

/* The phase whose opening call runs in this thread (an HDF5 file's H5Fcreate), or NULL: the opens a lower
 * layer sees meanwhile (HDF5's own MPI_File_open) belong to it. */
iot_phase *iot_phase_opening(void);
void iot_phase_set_opening(iot_phase *ph);

/* ---- file descriptors -> phase (the POSIX hot path) ---- */

#define IOT_FD_TABLE 65536
extern iot_phase *_Atomic iot_fd_phase[IOT_FD_TABLE];

static inline iot_phase *iot_phase_of_fd(int fd)
{
    if ((unsigned)fd >= IOT_FD_TABLE)
        return NULL;
    return atomic_load_explicit(&iot_fd_phase[fd], memory_order_relaxed);
}

/* One level's counters into a record's statistics. */
void iot_level_record(const iot_phase *ph, iot_level l, iot_level_stats *s);

#endif
