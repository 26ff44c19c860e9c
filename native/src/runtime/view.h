/* File views, flattened (view.c): what the MPI-IO layer knows of a file's
 * view, for the modules that follow its data calls in the file (iot_data). */
#ifndef IOTUNER_VIEW_H
#define IOTUNER_VIEW_H

#include <stdint.h>

#include <mpi.h>

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

#endif
