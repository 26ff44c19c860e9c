/* The I/O of a rank's child processes (forked, and the programs they or the rank run): counted for the rank in
 * one page they share, in no phase; the report says how much it was. */
#ifndef IOTUNER_FORKED_H
#define IOTUNER_FORKED_H

#include <mpi.h>

#include "phase.h"

/* In a child process: the one pseudo-phase every file it opens counts into. NULL in the rank itself. */
iot_phase *iot_forked_phase(void);
/* This process is a child process of the job's process: it never writes the report (its parent does). */
int iot_forked_child(void);
/* At MPI_Init: this process is a rank; the programs it runs count into its page (a program that a rank ran and
 * that starts MPI itself stops counting for that rank). */
void iot_forked_rank_started(void);
/* Collective on comm (MPI_COMM_NULL: this process alone): rank 0 warns how much its ranks' children wrote and
 * read, when they did. */
void iot_forked_note(MPI_Comm comm);

#endif
