/* The lifecycle core (lifecycle.c): start-up and shutdown, and the start and
 * end of an MPI run, which mpi.c's MPI_Init / MPI_Finalize forward to it. */
#ifndef IOTUNER_LIFECYCLE_H
#define IOTUNER_LIFECYCLE_H

/* After PMPI_Init succeeded: iotuner's communicator, rank, nodes, clocks. */
void iot_lifecycle_mpi_started(void);
/* Before PMPI_Finalize: the report (collective on the run's communicator), then the modules' cleanup. */
void iot_lifecycle_mpi_finishing(void);

#endif
