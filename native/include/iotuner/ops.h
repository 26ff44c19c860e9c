/* The elementary operations that the opt-in counting mode (IOTUNER_COUNT_OPS=1)
 * counts inside MPI-IO data calls: the MPI calls ROMIO makes (seen through
 * libiotuner_ops.so, which interposes their PMPI_ entry points) and the POSIX
 * reads and writes (libiotuner.so's own wrappers). X(ID, name). */
#ifndef IOTUNER_OPS_H
#define IOTUNER_OPS_H

#define IOT_OPS(X)                                                                                             \
    X(ALLGATHER, allgather)                                                                                    \
    X(ALLGATHERV, allgatherv)                                                                                  \
    X(ALLTOALL, alltoall)                                                                                      \
    X(ALLTOALLV, alltoallv)                                                                                    \
    X(ALLREDUCE, allreduce)                                                                                    \
    X(REDUCE, reduce)                                                                                          \
    X(BCAST, bcast)                                                                                            \
    X(GATHER, gather)                                                                                          \
    X(BARRIER, barrier)                                                                                        \
    X(ISEND, isend)                                                                                            \
    X(IRECV, irecv)                                                                                            \
    X(SEND, send)                                                                                              \
    X(RECV, recv)                                                                                              \
    X(WAITALL, waitall)                                                                                        \
    X(PWRITE, pwrite)                                                                                          \
    X(PREAD, pread)                                                                                            \
    X(WRITE, write)                                                                                            \
    X(READ, read)

#define IOT_OP_ENUM(id, name) IOT_OP_##id,
enum { IOT_OPS(IOT_OP_ENUM) IOT_NOPS };
#undef IOT_OP_ENUM

/* Exported by libiotuner.so, called by libiotuner_ops.so. */
/* 1 while this thread is inside an MPI-IO data call that counting mode watches. */
int iotuner_op_active(void);
/* One operation of bytes (for waitall: the number of requests). */
void iotuner_op_note(int op, long long bytes);

#endif
