/* File views, flattened (view.c): what the MPI-IO layer knows of a file's
 * view, for the modules that follow its data calls in the file (iot_data). */
#ifndef IOTUNER_VIEW_H
#define IOTUNER_VIEW_H

#include <stdint.h>

#include <mpi.h>

/* A file view, flattened once at MPI_File_set_view: the filetype's contiguous
 * pieces relative to the displacement (at most IOT_VIEW_PIECES; more, or a
 * type we cannot flatten: npieces 0 and only bytes are summarized). The
 * arrays hold exactly npieces: a file keeps its last few views (mpiio.c). */
typedef struct iot_view {
    int64_t disp, etype, size, extent;
    int npieces;
    int64_t *off, *len;
    struct iot_view *older; /* views replaced on this file (mpiio.c keeps a few: other threads may hold one) */
} iot_view;

#define IOT_VIEW_PIECES 65536

/* The view of filetype at disp (NULL: the default view, bytes from 0). */
iot_view *iot_view_new(int64_t disp, MPI_Datatype etype, MPI_Datatype filetype);
void iot_view_free(iot_view *v);
/* 1 when a and b place the same bytes in the same places */
int iot_view_same(const iot_view *a, const iot_view *b);

#endif
