/* MPI helpers every part of the runtime uses: the run's own communicator,
 * the groups that key collective phases, nodes, gathering bytes. All through
 * the PMPI table (pmpi.h): the library links no MPI. */
#ifndef IOTUNER_COMM_H
#define IOTUNER_COMM_H

#include <stddef.h>
#include <stdint.h>

#include <mpi.h>

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
/* A layer's first call when MPI_Init went around us (Fortran's): the process state learns its rank. */
void iot_mpi_note_rank(void);
/* Gathers every rank's bytes to rank 0 of comm (collective): *all (rank 0 only, to free) and *total. */
int iot_gather_bytes(MPI_Comm comm, const char *mine, size_t len, char **all, size_t *total);

#endif
