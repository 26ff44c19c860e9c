/* PMPI entry points, resolved at run time so libiotuner.so does not link MPI.
 * Types and constants come from the mpi.h it was compiled against (MPICH ABI). */
#ifndef IOTUNER_PMPI_H
#define IOTUNER_PMPI_H

#include <mpi.h>

typedef struct {
    int (*Init)(int *, char ***);
    int (*Init_thread)(int *, char ***, int, int *);
    int (*Finalize)(void);
    int (*Initialized)(int *);
    int (*Finalized)(int *);
    int (*Comm_dup)(MPI_Comm, MPI_Comm *);
    int (*Comm_free)(MPI_Comm *);
    int (*Comm_rank)(MPI_Comm, int *);
    int (*Comm_size)(MPI_Comm, int *);
    int (*Comm_split_type)(MPI_Comm, int, int, MPI_Info, MPI_Comm *);
    int (*Allreduce)(const void *, void *, int, MPI_Datatype, MPI_Op, MPI_Comm);
    int (*Gather)(const void *, int, MPI_Datatype, void *, int, MPI_Datatype, int, MPI_Comm);
    int (*Gatherv)(const void *, int, MPI_Datatype, void *, const int *, const int *, MPI_Datatype, int, MPI_Comm);
    int (*Barrier)(MPI_Comm);
    int (*Info_create)(MPI_Info *);
    int (*Info_dup)(MPI_Info, MPI_Info *);
    int (*Info_set)(MPI_Info, const char *, const char *);
    int (*Info_get)(MPI_Info, const char *, int, char *, int *);
    int (*Info_get_nkeys)(MPI_Info, int *);
    int (*Info_get_nthkey)(MPI_Info, int, char *);
    int (*Info_free)(MPI_Info *);
    int (*File_open)(MPI_Comm, const char *, int, MPI_Info, MPI_File *);
    int (*File_close)(MPI_File *);
    int (*File_get_info)(MPI_File, MPI_Info *);
    int (*File_get_position)(MPI_File, MPI_Offset *);
    int (*Get_library_version)(char *, int *);
    int (*Type_size)(MPI_Datatype, int *);
    int (*Type_get_true_extent)(MPI_Datatype, MPI_Aint *, MPI_Aint *);
} iot_pmpi_t;

extern iot_pmpi_t iot_pmpi;
/* Resolves the table once; returns 0 when MPI is not in the process. */
int iot_pmpi_resolve(void);
/* Nodes spanned by a communicator (collective on comm). */
int iot_mpi_count_nodes(MPI_Comm comm);
/* Rank in the process's world without collectives; 0 before MPI_Init. */
int iot_mpi_world_rank(void);

#endif
