/* Smart mode's entry points (smart.c), called by the layers. */
#ifndef IOTUNER_SMART_RT_H
#define IOTUNER_SMART_RT_H

#include <mpi.h>

#include "phase.h"

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
