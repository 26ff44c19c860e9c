/* libiotuner_ops.so: preloaded with libiotuner.so in counting mode only
 * (IOTUNER_COUNT_OPS=1, `iotuner run --count-ops`). ROMIO inside MPICH calls
 * PMPI_* directly, so the communication it does inside a collective MPI-IO
 * call is only visible by interposing those entry points; this is kept out of
 * libiotuner.so so that a normal run never sits between an application's
 * PMPI tool and MPI. Every wrapper calls the real function on every path. */
#include <dlfcn.h>
#include <mpi.h>

#include "iotuner/ops.h"

static int (*active)(void);
static void (*note)(int, long long);
static int (*type_size)(MPI_Datatype, int *);

__attribute__((constructor)) static void ops_init(void)
{
    active = (int (*)(void))dlsym(RTLD_DEFAULT, "iotuner_op_active");
    note = (void (*)(int, long long))dlsym(RTLD_DEFAULT, "iotuner_op_note");
}

static void count(int op, long long n, MPI_Datatype type)
{
    if (!active || !note || !active())
        return;
    if (!type_size)
        type_size = (int (*)(MPI_Datatype, int *))dlsym(RTLD_NEXT, "PMPI_Type_size");
    int size = 0;
    if (type != MPI_DATATYPE_NULL && type_size && type_size(type, &size) != MPI_SUCCESS)
        size = 0;
    note(op, type == MPI_DATATYPE_NULL ? n : n * size);
}

#define REAL(name, params)                                                                                     \
    static int(*real) params;                                                                                  \
    if (!real)                                                                                                 \
        real = (int(*) params)dlsym(RTLD_NEXT, #name);

int PMPI_Allgather(const void *sb, int sc, MPI_Datatype st, void *rb, int rc, MPI_Datatype rt, MPI_Comm c)
{
    REAL(PMPI_Allgather, (const void *, int, MPI_Datatype, void *, int, MPI_Datatype, MPI_Comm))
    count(IOT_OP_ALLGATHER, sc, st);
    return real(sb, sc, st, rb, rc, rt, c);
}

int PMPI_Allgatherv(const void *sb, int sc, MPI_Datatype st, void *rb, const int *rc, const int *d, MPI_Datatype rt,
                    MPI_Comm c)
{
    REAL(PMPI_Allgatherv, (const void *, int, MPI_Datatype, void *, const int *, const int *, MPI_Datatype, MPI_Comm))
    count(IOT_OP_ALLGATHERV, sc, st);
    return real(sb, sc, st, rb, rc, d, rt, c);
}

int PMPI_Alltoall(const void *sb, int sc, MPI_Datatype st, void *rb, int rc, MPI_Datatype rt, MPI_Comm c)
{
    REAL(PMPI_Alltoall, (const void *, int, MPI_Datatype, void *, int, MPI_Datatype, MPI_Comm))
    count(IOT_OP_ALLTOALL, sc, st);
    return real(sb, sc, st, rb, rc, rt, c);
}

int PMPI_Alltoallv(const void *sb, const int *sc, const int *sd, MPI_Datatype st, void *rb, const int *rc,
                   const int *rd, MPI_Datatype rt, MPI_Comm c)
{
    REAL(PMPI_Alltoallv, (const void *, const int *, const int *, MPI_Datatype, void *, const int *, const int *,
                          MPI_Datatype, MPI_Comm))
    count(IOT_OP_ALLTOALLV, 0, MPI_DATATYPE_NULL);
    return real(sb, sc, sd, st, rb, rc, rd, rt, c);
}

int PMPI_Allreduce(const void *sb, void *rb, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c)
{
    REAL(PMPI_Allreduce, (const void *, void *, int, MPI_Datatype, MPI_Op, MPI_Comm))
    count(IOT_OP_ALLREDUCE, n, t);
    return real(sb, rb, n, t, op, c);
}

int PMPI_Reduce(const void *sb, void *rb, int n, MPI_Datatype t, MPI_Op op, int root, MPI_Comm c)
{
    REAL(PMPI_Reduce, (const void *, void *, int, MPI_Datatype, MPI_Op, int, MPI_Comm))
    count(IOT_OP_REDUCE, n, t);
    return real(sb, rb, n, t, op, root, c);
}

int PMPI_Bcast(void *b, int n, MPI_Datatype t, int root, MPI_Comm c)
{
    REAL(PMPI_Bcast, (void *, int, MPI_Datatype, int, MPI_Comm))
    count(IOT_OP_BCAST, n, t);
    return real(b, n, t, root, c);
}

int PMPI_Gather(const void *sb, int sc, MPI_Datatype st, void *rb, int rc, MPI_Datatype rt, int root, MPI_Comm c)
{
    REAL(PMPI_Gather, (const void *, int, MPI_Datatype, void *, int, MPI_Datatype, int, MPI_Comm))
    count(IOT_OP_GATHER, sc, st);
    return real(sb, sc, st, rb, rc, rt, root, c);
}

int PMPI_Barrier(MPI_Comm c)
{
    REAL(PMPI_Barrier, (MPI_Comm))
    count(IOT_OP_BARRIER, 0, MPI_DATATYPE_NULL);
    return real(c);
}

int PMPI_Isend(const void *b, int n, MPI_Datatype t, int dest, int tag, MPI_Comm c, MPI_Request *r)
{
    REAL(PMPI_Isend, (const void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *))
    count(IOT_OP_ISEND, n, t);
    return real(b, n, t, dest, tag, c, r);
}

int PMPI_Irecv(void *b, int n, MPI_Datatype t, int src, int tag, MPI_Comm c, MPI_Request *r)
{
    REAL(PMPI_Irecv, (void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *))
    count(IOT_OP_IRECV, n, t);
    return real(b, n, t, src, tag, c, r);
}

int PMPI_Send(const void *b, int n, MPI_Datatype t, int dest, int tag, MPI_Comm c)
{
    REAL(PMPI_Send, (const void *, int, MPI_Datatype, int, int, MPI_Comm))
    count(IOT_OP_SEND, n, t);
    return real(b, n, t, dest, tag, c);
}

int PMPI_Recv(void *b, int n, MPI_Datatype t, int src, int tag, MPI_Comm c, MPI_Status *s)
{
    REAL(PMPI_Recv, (void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Status *))
    count(IOT_OP_RECV, n, t);
    return real(b, n, t, src, tag, c, s);
}

int PMPI_Waitall(int n, MPI_Request *r, MPI_Status *s)
{
    REAL(PMPI_Waitall, (int, MPI_Request *, MPI_Status *))
    count(IOT_OP_WAITALL, n, MPI_DATATYPE_NULL);
    return real(n, r, s);
}
