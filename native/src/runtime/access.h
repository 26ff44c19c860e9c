/* The access pattern of a phase's collective MPI-IO data calls: per rank and
 * direction, a fixed-size summary (extent, request count and sizes, their
 * regularity), whatever the number of calls. A model of ROMIO's two-phase
 * I/O derives file domains and rounds from it (python/iotuner/tune/hybrid). */
#ifndef IOTUNER_ACCESS_H
#define IOTUNER_ACCESS_H

#include <mpi.h>

#include "phase.h"

/* A file view, flattened once at MPI_File_set_view: the filetype's contiguous
 * pieces relative to the displacement (at most IOT_VIEW_PIECES; more, or a
 * type we cannot flatten: npieces 0 and only bytes are summarized). */
typedef struct iot_view {
    int64_t disp, etype, size, extent;
    int npieces;
    int64_t *off, *len;
    struct iot_view *older; /* views replaced on this file, freed at close (other threads may hold one) */
} iot_view;

#define IOT_VIEW_PIECES 4096

/* The view of filetype at disp (NULL: the default view, bytes from 0). */
iot_view *iot_view_new(int64_t disp, MPI_Datatype etype, MPI_Datatype filetype);
void iot_view_free(iot_view *v);

/* A collective data call of bytes at offset (in etypes of the view) on phase ph. */
void iot_access_note(iot_phase *ph, const iot_view *v, int64_t offset, uint64_t bytes, int is_write);

/* Counting mode (IOTUNER_COUNT_OPS=1, access.c): while this thread is inside an MPI-IO data call, the phase
 * whose operations are counted; NULL otherwise (always NULL when the mode is off). */
extern IOT_TLS struct iot_phase *iot_op_phase;
void iot_op_note(int op, long long bytes);
#define IOT_OP_NOTE(op, bytes)                                                                                 \
    do {                                                                                                       \
        if (__builtin_expect(iot_op_phase != NULL, 0))                                                         \
            iot_op_note(op, (long long)(bytes));                                                               \
    } while (0)
#endif
