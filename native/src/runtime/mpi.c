/* MPI: the PMPI table, the start and end of the run (forwarded to the
 * lifecycle), and the groups that key collective phases. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iotuner/calls.h"
#include "pmpi.h"
#include "rt.h"

IOT_MPI_CALLS(IOT_DECLARE_MPI)

iot_pmpi_t iot_pmpi;
static pthread_once_t pmpi_once = PTHREAD_ONCE_INIT;
static int pmpi_ok;
static MPI_Comm run_comm = MPI_COMM_NULL;
static int group_keyval = MPI_KEYVAL_INVALID;

static void resolve(void)
{
#define IOT_PMPI_RESOLVE(ret, name, params) iot_pmpi.name = (ret(*) params)dlsym(RTLD_DEFAULT, "PMPI_" #name);
    IOT_PMPI_FUNCTIONS(IOT_PMPI_RESOLVE)
#undef IOT_PMPI_RESOLVE
    void **p = (void **)&iot_pmpi;
    pmpi_ok = 1;
    for (size_t i = 0; i < sizeof iot_pmpi / sizeof(void *); i++)
        if (!p[i])
            pmpi_ok = 0;
}

int iot_pmpi_resolve(void)
{
    pthread_once(&pmpi_once, resolve);
    return pmpi_ok;
}

MPI_Comm iot_mpi_run_comm(void)
{
    return run_comm;
}

int iot_mpi_count_nodes(MPI_Comm comm)
{
    MPI_Comm shm;
    int shm_rank = 0, leaders = 1;
    if (iot_pmpi.Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shm) != MPI_SUCCESS)
        return 1;
    iot_pmpi.Comm_rank(shm, &shm_rank);
    int leader = (shm_rank == 0);
    iot_pmpi.Allreduce(&leader, &leaders, 1, MPI_INT, MPI_SUM, comm);
    iot_pmpi.Comm_free(&shm);
    return leaders;
}

int iot_mpi_world_rank(void)
{
    int init = 0, fin = 0, rank = 0;
    if (!iot_pmpi_resolve())
        return 0;
    iot_pmpi.Initialized(&init);
    iot_pmpi.Finalized(&fin);
    if (init && !fin)
        iot_pmpi.Comm_rank(MPI_COMM_WORLD, &rank);
    return rank;
}

/* ---- groups: the key of a collective phase ---- */

/* A duplicate has the same group: it keeps the hash (HDF5 duplicates the communicator at every open). */
static int copy_group(MPI_Comm old, int keyval, void *extra, void *in, void *out, int *flag)
{
    (void)old, (void)keyval, (void)extra;
    *(void **)out = in;
    *flag = 1;
    return MPI_SUCCESS;
}

static int delete_group(MPI_Comm comm, int keyval, void *value, void *extra)
{
    (void)comm, (void)keyval, (void)value, (void)extra;
    return MPI_SUCCESS;
}

/* The hash of comm's ranks in MPI_COMM_WORLD: computed by every rank alone, the same on all of them. */
static uint64_t hash_of(MPI_Comm comm, int size)
{
    MPI_Group group, world;
    int *ranks = malloc(2 * (size_t)size * sizeof *ranks);
    uint64_t h = 0;
    if (!ranks || iot_pmpi.Comm_group(comm, &group) != MPI_SUCCESS) {
        free(ranks);
        return 0;
    }
    if (iot_pmpi.Comm_group(MPI_COMM_WORLD, &world) == MPI_SUCCESS) {
        for (int i = 0; i < size; i++)
            ranks[i] = i;
        if (iot_pmpi.Group_translate_ranks(group, size, ranks, world, ranks + size) == MPI_SUCCESS)
            h = iot_group_hash(ranks + size, size);
        iot_pmpi.Group_free(&world);
    }
    iot_pmpi.Group_free(&group);
    free(ranks);
    return h;
}

void iot_comm_group(MPI_Comm comm, uint64_t *group, int *size, int *rank)
{
    *group = 0;
    *size = 1;
    *rank = 0;
    if (comm == MPI_COMM_NULL || !iot_pmpi_resolve() || iot_pmpi.Comm_size(comm, size) != MPI_SUCCESS)
        return;
    iot_pmpi.Comm_rank(comm, rank);
    if (*size < 2)
        return; /* one process: its own phase */
    void *cached = NULL;
    int found = 0;
    if (group_keyval != MPI_KEYVAL_INVALID && iot_pmpi.Comm_get_attr(comm, group_keyval, &cached, &found) == MPI_SUCCESS &&
        found) {
        *group = (uint64_t)(uintptr_t)cached;
        return;
    }
    *group = hash_of(comm, *size);
    if (*group && group_keyval != MPI_KEYVAL_INVALID)
        iot_pmpi.Comm_set_attr(comm, group_keyval, (void *)(uintptr_t)*group);
}

/* ---- the run ---- */

/* Offset of this rank's monotonic clock from rank 0's, so that phases compare across ranks. On one node
 * the clock is shared (0). Across nodes: the clocks read as the ranks leave a barrier, rank 0's sent to
 * all (error: the barrier's skew, microseconds). */
static double clock_offset(void)
{
    if (iot_g.nnodes <= 1)
        return 0;
    double mine = 0, root = 0;
    for (int round = 0; round < 2; round++) { /* the second, warm */
        iot_pmpi.Barrier(run_comm);
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        mine = root = (double)ts.tv_sec + ts.tv_nsec * 1e-9;
        iot_pmpi.Bcast(&root, 1, MPI_DOUBLE, 0, run_comm);
    }
    return mine - root;
}

/* After MPI_Init: our own communicator, rank, nodes, clocks. */
static void started(void)
{
    if (iot_g.disabled || !iot_pmpi_resolve())
        return;
    iot_internal++;
    iot_pmpi.Comm_dup(MPI_COMM_WORLD, &run_comm);
    iot_pmpi.Comm_rank(run_comm, &iot_g.rank);
    iot_pmpi.Comm_size(run_comm, &iot_g.nprocs);
    iot_g.nnodes = iot_mpi_count_nodes(run_comm);
    iot_g.clock_offset = clock_offset();
    if (iot_pmpi.Comm_create_keyval(copy_group, delete_group, &group_keyval, NULL) != MPI_SUCCESS)
        group_keyval = MPI_KEYVAL_INVALID;
    else if (iot_g.nprocs > 1) { /* the world's hash up front: its duplicates inherit it */
        uint64_t g;
        int size, rank;
        iot_comm_group(MPI_COMM_WORLD, &g, &size, &rank);
    }
    int len = 0;
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    if (iot_pmpi.Get_library_version(version, &len) == MPI_SUCCESS) {
        char *nl = strchr(version, '\n');
        if (nl)
            *nl = 0;
        snprintf(iot_g.mpi_library, sizeof iot_g.mpi_library, "%.255s", version);
    }
    iot_lifecycle_mpi_started();
    iot_internal--;
}

int iot_wrap_MPI_Init(int *argc, char ***argv)
{
    if (iot_mpi_foreign_abi()) /* an MPI loaded after the library (dlopen): from now on, its own calls */
        return ((int (*)(int *, char ***))iot_next_symbol("MPI_Init"))(argc, argv);
    if (!iot_pmpi_resolve() && !iot_pmpi.Init)
        return MPI_ERR_INTERN; /* not an MPI process: cannot happen through the linker */
    int rc = iot_pmpi.Init(argc, argv);
    if (rc == MPI_SUCCESS)
        started();
    return rc;
}

int iot_wrap_MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    if (iot_mpi_foreign_abi())
        return ((int (*)(int *, char ***, int, int *))iot_next_symbol("MPI_Init_thread"))(argc, argv, required,
                                                                                          provided);
    if (!iot_pmpi_resolve() && !iot_pmpi.Init_thread)
        return MPI_ERR_INTERN;
    int rc = iot_pmpi.Init_thread(argc, argv, required, provided);
    if (rc == MPI_SUCCESS)
        started();
    return rc;
}

int iot_wrap_MPI_Finalize(void)
{
    iot_pmpi_resolve();
    if (iot_g.mpi_initialized && !iot_g.mpi_finalized) {
        iot_internal++;
        iot_lifecycle_mpi_finishing(); /* the report: collective on run_comm */
        iot_pmpi.Comm_free(&run_comm);
        iot_internal--;
    }
    return iot_pmpi.Finalize();
}
