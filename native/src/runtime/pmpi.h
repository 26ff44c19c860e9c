/* PMPI entry points, resolved at run time so libiotuner.so does not link MPI.
 * Types and constants come from the mpi.h it was compiled against (MPICH ABI). */
#ifndef IOTUNER_PMPI_H
#define IOTUNER_PMPI_H

#include <mpi.h>

/* X(ret, name, params): iot_pmpi.name is PMPI_name */
#define IOT_PMPI_FUNCTIONS(X)                                                                                  \
    X(int, Init, (int *, char ***))                                                                            \
    X(int, Init_thread, (int *, char ***, int, int *))                                                         \
    X(int, Finalize, (void))                                                                                   \
    X(int, Initialized, (int *))                                                                               \
    X(int, Finalized, (int *))                                                                                 \
    X(int, Comm_dup, (MPI_Comm, MPI_Comm *))                                                                   \
    X(int, Comm_free, (MPI_Comm *))                                                                            \
    X(int, Comm_rank, (MPI_Comm, int *))                                                                       \
    X(int, Comm_size, (MPI_Comm, int *))                                                                       \
    X(int, Comm_get_parent, (MPI_Comm *))                                                                      \
    X(int, Comm_split_type, (MPI_Comm, int, int, MPI_Info, MPI_Comm *))                                        \
    X(int, Comm_group, (MPI_Comm, MPI_Group *))                                                                \
    X(int, Group_translate_ranks, (MPI_Group, int, const int *, MPI_Group, int *))                             \
    X(int, Group_free, (MPI_Group *))                                                                          \
    X(int, Comm_create_keyval, (MPI_Comm_copy_attr_function *, MPI_Comm_delete_attr_function *, int *, void *)) \
    X(int, Comm_set_attr, (MPI_Comm, int, void *))                                                             \
    X(int, Comm_get_attr, (MPI_Comm, int, void *, int *))                                                      \
    X(int, Allreduce, (const void *, void *, int, MPI_Datatype, MPI_Op, MPI_Comm))                             \
    X(int, Reduce, (const void *, void *, int, MPI_Datatype, MPI_Op, int, MPI_Comm))                           \
    X(int, Bcast, (void *, int, MPI_Datatype, int, MPI_Comm))                                                  \
    X(int, Gather, (const void *, int, MPI_Datatype, void *, int, MPI_Datatype, int, MPI_Comm))                \
    X(int, Gatherv, (const void *, int, MPI_Datatype, void *, const int *, const int *, MPI_Datatype, int, MPI_Comm)) \
    X(int, Barrier, (MPI_Comm))                                                                                \
    X(int, Type_contiguous, (int, MPI_Datatype, MPI_Datatype *))                                               \
    X(int, Type_commit, (MPI_Datatype *))                                                                      \
    X(int, Type_free, (MPI_Datatype *))                                                                        \
    X(int, Op_create, (MPI_User_function *, int, MPI_Op *))                                                    \
    X(int, Op_free, (MPI_Op *))                                                                                \
    X(int, Info_create, (MPI_Info *))                                                                          \
    X(int, Info_dup, (MPI_Info, MPI_Info *))                                                                   \
    X(int, Info_set, (MPI_Info, const char *, const char *))                                                   \
    X(int, Info_get, (MPI_Info, const char *, int, char *, int *))                                             \
    X(int, Info_get_nkeys, (MPI_Info, int *))                                                                  \
    X(int, Info_get_nthkey, (MPI_Info, int, char *))                                                           \
    X(int, Info_free, (MPI_Info *))                                                                            \
    X(int, File_open, (MPI_Comm, const char *, int, MPI_Info, MPI_File *))                                     \
    X(int, File_close, (MPI_File *))                                                                           \
    X(int, File_get_info, (MPI_File, MPI_Info *))                                                              \
    X(int, File_get_position, (MPI_File, MPI_Offset *))                                                        \
    X(int, File_get_errhandler, (MPI_File, MPI_Errhandler *))                                                  \
    X(int, File_set_errhandler, (MPI_File, MPI_Errhandler))                                                    \
    X(int, Errhandler_free, (MPI_Errhandler *))                                                                \
    X(int, Error_string, (int, char *, int *))                                                                 \
    X(int, Get_library_version, (char *, int *))                                                               \
    X(int, Type_size, (MPI_Datatype, int *))                                                                   \
    X(int, Type_get_true_extent, (MPI_Datatype, MPI_Aint *, MPI_Aint *))                                     \
    X(int, Type_get_extent, (MPI_Datatype, MPI_Aint *, MPI_Aint *))                                          \
    X(int, Type_get_envelope, (MPI_Datatype, int *, int *, int *, int *))                                    \
    X(int, Type_get_contents, (MPI_Datatype, int, int, int, int *, MPI_Aint *, MPI_Datatype *))

typedef struct {
#define IOT_PMPI_FIELD(ret, name, params) ret(*name) params;
    IOT_PMPI_FUNCTIONS(IOT_PMPI_FIELD)
#undef IOT_PMPI_FIELD
} iot_pmpi_t;

extern iot_pmpi_t iot_pmpi;
/* Resolves the table once; returns 0 when MPI is not in the process. */
int iot_pmpi_resolve(void);

#endif
