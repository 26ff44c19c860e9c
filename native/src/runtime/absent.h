/* The requested knobs without a row in any phase (absent.c). */
#ifndef IOTUNER_ABSENT_H
#define IOTUNER_ABSENT_H

#include <mpi.h>
#include <stddef.h>

#include "phase.h"

/* Collective on comm (MPI_COMM_NULL: a serial process): every rank passes its reported phases. Rank 0 gets
 * the rows as a JSON array (caller frees); the other ranks NULL. */
char *iot_absent_rows_json(MPI_Comm comm, iot_phase *const *phases, size_t nphases);

#endif
