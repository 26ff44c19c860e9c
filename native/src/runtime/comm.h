/* MPI helpers every part of the runtime uses: the run's own communicator,
 * the groups that key collective phases, nodes, gathering bytes. All through
 * the PMPI table (pmpi.h): the library links no MPI. */
#ifndef IOTUNER_COMM_H
#define IOTUNER_COMM_H

#include <stddef.h>
#include <stdint.h>

#include <mpi.h>

#include "iotuner/core.h"

/* After MPI_Init: iotuner's own duplicate of MPI_COMM_WORLD, and the attribute that caches groups. Collective. */
MPI_Comm iot_mpi_run_begin(void);
/* iotuner's duplicate of MPI_COMM_WORLD (MPI_COMM_NULL outside an MPI run). */
MPI_Comm iot_mpi_run_comm(void);
/* Frees it, before MPI_Finalize. */
void iot_mpi_run_end(void);
/* Offset of this rank's monotonic clock from rank 0's (0 on one node). Collective on comm. */
double iot_mpi_clock_offset(MPI_Comm comm, int nnodes);
/* The MPI library's version, its first line. */
void iot_mpi_library(char *out, size_t outlen);

/* The group of a communicator as the phases' keys use it: its hash (0 for a
 * single process), size and this process's rank in it. Cached on the
 * communicator as an attribute. */
void iot_comm_group(MPI_Comm comm, uint64_t *group, int *size, int *rank);
/* Nodes spanned by a communicator (collective on comm). */
int iot_mpi_count_nodes(MPI_Comm comm);
/* Rank in the process's world without collectives; 0 before MPI_Init. */
int iot_mpi_world_rank(void);
/* A layer's call when MPI_Init went around us: the process state learns its rank, and that MPI runs. */
void iot_mpi_note_rank(void);
/* 1 when an MPI library is loaded and was initialized (whether or not through our MPI_Init); may be called
 * after MPI_Finalize. */
int iot_mpi_ran(void);
/* Gathers every rank's bytes to rank 0 of comm (collective): *all (rank 0 only, to free) and *total. */
int iot_gather_bytes(MPI_Comm comm, const char *mine, size_t len, char **all, size_t *total);

/* ---- what the layers that open files with an MPI_Info share (MPI-IO, PnetCDF) ---- */

/* The ranks that open a file: the communicator of the open and its size. */
typedef struct {
    MPI_Comm comm;
    int size;
} iot_opened_on;
/* A phase's communicator source (iot_phase_announce) for an iot_opened_on: a duplicate of its communicator,
 * collective as the open is; MPI_COMM_NULL for one process. */
MPI_Comm iot_comm_duplicate(void *opened_on);
/* An info's value of key into out (1), or 0 when it has none. */
int iot_info_value(MPI_Info info, const char *key, char *out, int outlen);
/* The application's info plus these settings as hints, in *mine (to free); 0 when none were added. */
size_t iot_info_with(MPI_Info info, const iot_setting *const *settings, size_t n, MPI_Info *mine);

#endif
