/* MPI_Init, MPI_Init_thread and MPI_Finalize, under both their names (MPI_x
 * and PMPI_x): they forward the start and end of the run to the lifecycle
 * (lifecycle.c). MPI_Comm_spawn and MPI_Comm_spawn_multiple count the
 * processes a rank starts: their I/O is in a report of their own. What the MPI library does inside them (a launcher's
 * topology file read in MPI_Init) is its own I/O, not the application's. */
#include "iotuner/calls.h"
#include "abi.h"
#include "lifecycle.h"
#include "pmpi.h"
#include "state.h"

/* After MPI_Init: our own communicator, rank, nodes, clocks. */
static void started(void)
{
    if (iot_g.disabled || !iot_pmpi_resolve())
        return;
    iot_internal++;
    iot_lifecycle_mpi_started();
    iot_internal--;
}

typedef int (*init_fn)(int *, char ***);
typedef int (*init_thread_fn)(int *, char ***, int, int *);
typedef int (*finalize_fn)(void);

/* real: the next MPI_Init or PMPI_Init (another ABI's, when the library stepped aside: an MPI loaded after it) */
static int init(init_fn real, int *argc, char ***argv)
{
    if (!real)
        return MPI_ERR_INTERN; /* not an MPI process: cannot happen through the linker */
    if (iot_mpi_depth || iot_mpi_foreign_abi())
        return real(argc, argv);
    iot_mpi_depth++;
    iot_internal++;
    int rc = real(argc, argv);
    iot_internal--;
    if (rc == MPI_SUCCESS)
        started();
    iot_mpi_depth--;
    return rc;
}

static int init_thread(init_thread_fn real, int *argc, char ***argv, int required, int *provided)
{
    if (!real)
        return MPI_ERR_INTERN;
    if (iot_mpi_depth || iot_mpi_foreign_abi())
        return real(argc, argv, required, provided);
    iot_mpi_depth++;
    iot_internal++;
    int rc = real(argc, argv, required, provided);
    iot_internal--;
    if (rc == MPI_SUCCESS)
        started();
    iot_mpi_depth--;
    return rc;
}

static int finalize(finalize_fn real)
{
    if (iot_mpi_depth)
        return real();
    iot_mpi_depth++;
    iot_pmpi_resolve();
    if (iot_g.mpi_initialized && !iot_g.mpi_finalized) {
        iot_internal++;
        iot_lifecycle_mpi_finishing(); /* the report: collective on the run's communicator */
        iot_internal--;
    }
    iot_internal++;
    int rc = real();
    iot_internal--;
    iot_mpi_depth--;
    return rc;
}

/* The exported name's wrapper calls the real function of the same name. */
#define REAL_OF(var, type, name)                                                                               \
    static type var;                                                                                           \
    IOT_REAL(var, name)

int iot_wrap_MPI_Init(int *argc, char ***argv)
{
    REAL_OF(real, init_fn, "MPI_Init");
    return init(real, argc, argv);
}

int iot_wrap_PMPI_Init(int *argc, char ***argv)
{
    REAL_OF(real, init_fn, "PMPI_Init");
    return init(real, argc, argv);
}

int iot_wrap_MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    REAL_OF(real, init_thread_fn, "MPI_Init_thread");
    return init_thread(real, argc, argv, required, provided);
}

int iot_wrap_PMPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    REAL_OF(real, init_thread_fn, "PMPI_Init_thread");
    return init_thread(real, argc, argv, required, provided);
}

int iot_wrap_MPI_Finalize(void)
{
    REAL_OF(real, finalize_fn, "MPI_Finalize");
    return finalize(real);
}

int iot_wrap_PMPI_Finalize(void)
{
    REAL_OF(real, finalize_fn, "PMPI_Finalize");
    return finalize(real);
}

/* The processes a spawn call started, counted once: at its root, where maxprocs is significant. Their group
 * writes its own report. */
static void count_spawned(int rc, int root, MPI_Comm comm, int count, const int maxprocs[])
{
    int rank;
    if (iot_mpi_depth || rc != MPI_SUCCESS || !iot_g.mpi_initialized || iot_g.disabled ||
        iot_pmpi.Comm_rank(comm, &rank) != MPI_SUCCESS || rank != root)
        return;
    for (int i = 0; i < count; i++)
        iot_g.spawned += maxprocs[i];
}

typedef int (*spawn_fn)(const char *, char *[], int, MPI_Info, int, MPI_Comm, MPI_Comm *, int[]);
typedef int (*spawn_multiple_fn)(int, char *[], char **[], const int[], const MPI_Info[], int, MPI_Comm, MPI_Comm *,
                                 int[]);

static int spawn(spawn_fn real, const char *command, char *argv[], int maxprocs, MPI_Info info, int root,
                 MPI_Comm comm, MPI_Comm *intercomm, int errcodes[])
{
    if (!real)
        return MPI_ERR_INTERN;
    iot_mpi_depth++;
    int rc = real(command, argv, maxprocs, info, root, comm, intercomm, errcodes);
    iot_mpi_depth--;
    count_spawned(rc, root, comm, 1, &maxprocs);
    return rc;
}

static int spawn_multiple(spawn_multiple_fn real, int count, char *commands[], char **argvs[], const int maxprocs[],
                          const MPI_Info infos[], int root, MPI_Comm comm, MPI_Comm *intercomm, int errcodes[])
{
    if (!real)
        return MPI_ERR_INTERN;
    iot_mpi_depth++;
    int rc = real(count, commands, argvs, maxprocs, infos, root, comm, intercomm, errcodes);
    iot_mpi_depth--;
    count_spawned(rc, root, comm, count, maxprocs);
    return rc;
}

int iot_wrap_MPI_Comm_spawn(const char *command, char *argv[], int maxprocs, MPI_Info info, int root, MPI_Comm comm,
                            MPI_Comm *intercomm, int errcodes[])
{
    REAL_OF(real, spawn_fn, "MPI_Comm_spawn");
    return spawn(real, command, argv, maxprocs, info, root, comm, intercomm, errcodes);
}

int iot_wrap_PMPI_Comm_spawn(const char *command, char *argv[], int maxprocs, MPI_Info info, int root, MPI_Comm comm,
                             MPI_Comm *intercomm, int errcodes[])
{
    REAL_OF(real, spawn_fn, "PMPI_Comm_spawn");
    return spawn(real, command, argv, maxprocs, info, root, comm, intercomm, errcodes);
}

int iot_wrap_MPI_Comm_spawn_multiple(int count, char *commands[], char **argvs[], const int maxprocs[],
                                     const MPI_Info infos[], int root, MPI_Comm comm, MPI_Comm *intercomm,
                                     int errcodes[])
{
    REAL_OF(real, spawn_multiple_fn, "MPI_Comm_spawn_multiple");
    return spawn_multiple(real, count, commands, argvs, maxprocs, infos, root, comm, intercomm, errcodes);
}

int iot_wrap_PMPI_Comm_spawn_multiple(int count, char *commands[], char **argvs[], const int maxprocs[],
                                      const MPI_Info infos[], int root, MPI_Comm comm, MPI_Comm *intercomm,
                                      int errcodes[])
{
    REAL_OF(real, spawn_multiple_fn, "PMPI_Comm_spawn_multiple");
    return spawn_multiple(real, count, commands, argvs, maxprocs, infos, root, comm, intercomm, errcodes);
}
