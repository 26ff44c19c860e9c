/* MPI helpers (comm.h): the run's communicator, groups, nodes, gathers. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm.h"
#include "pmpi.h"
#include "state.h"

static MPI_Comm run_comm = MPI_COMM_NULL;
static int group_keyval = MPI_KEYVAL_INVALID;

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

void iot_mpi_note_rank(void)
{
    int init = 0;
    if (!iot_g.mpi_initialized && !iot_g.mpi_unseen && iot_pmpi_resolve() &&
        iot_pmpi.Initialized(&init) == MPI_SUCCESS && init)
        iot_state_mpi_unseen(iot_mpi_world_rank());
}

int iot_mpi_ran(void)
{
    int init = 0, fin = 0;
    if (!iot_pmpi_resolve())
        return 0;
    iot_pmpi.Initialized(&init);
    iot_pmpi.Finalized(&fin);
    return init || fin;
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

MPI_Comm iot_mpi_run_begin(void)
{
    iot_pmpi.Comm_dup(MPI_COMM_WORLD, &run_comm);
    if (iot_pmpi.Comm_create_keyval(copy_group, delete_group, &group_keyval, NULL) != MPI_SUCCESS) {
        group_keyval = MPI_KEYVAL_INVALID;
    } else { /* the world's hash up front: its duplicates inherit it */
        uint64_t g;
        int size, rank;
        iot_comm_group(MPI_COMM_WORLD, &g, &size, &rank);
    }
    return run_comm;
}

void iot_mpi_run_end(void)
{
    if (run_comm != MPI_COMM_NULL)
        iot_pmpi.Comm_free(&run_comm);
}

/* On one node the clock is shared (0). Across nodes: the clocks read as the ranks leave a barrier, rank 0's
 * sent to all (error: the barrier's skew, microseconds). */
double iot_mpi_clock_offset(MPI_Comm comm, int nnodes)
{
    if (nnodes <= 1)
        return 0;
    double mine = 0, root = 0;
    for (int round = 0; round < 2; round++) { /* the second, warm */
        iot_pmpi.Barrier(comm);
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        mine = root = (double)ts.tv_sec + ts.tv_nsec * 1e-9;
        iot_pmpi.Bcast(&root, 1, MPI_DOUBLE, 0, comm);
    }
    return mine - root;
}

void iot_mpi_library(char *out, size_t outlen)
{
    int len = 0;
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    out[0] = 0;
    if (iot_pmpi.Get_library_version(version, &len) == MPI_SUCCESS) {
        char *nl = strchr(version, '\n');
        if (nl)
            *nl = 0;
        snprintf(out, outlen, "%s", version);
    }
}

int iot_gather_bytes(MPI_Comm comm, const char *mine, size_t len, char **all, size_t *total)
{
    int n = 1, me = (int)len, rank = 0, *lens = NULL, *displs = NULL;
    iot_pmpi.Comm_size(comm, &n);
    iot_pmpi.Comm_rank(comm, &rank);
    *all = NULL;
    *total = 0;
    if (rank == 0) {
        lens = calloc((size_t)n, sizeof *lens);
        displs = calloc((size_t)n, sizeof *displs);
    }
    iot_pmpi.Gather(&me, 1, MPI_INT, lens, 1, MPI_INT, 0, comm);
    long long sum = 0;
    if (lens && displs) {
        for (int i = 0; i < n; i++) {
            displs[i] = (int)sum;
            sum += lens[i];
        }
        if (sum < INT_MAX)
            *all = malloc(sum ? (size_t)sum : 1);
    }
    /* every rank joins the collective even if rank 0 could not allocate */
    iot_pmpi.Gatherv(mine, me, MPI_BYTE, *all, lens, displs, MPI_BYTE, 0, comm);
    *total = *all ? (size_t)sum : 0;
    free(lens);
    free(displs);
    return *all != NULL;
}

MPI_Comm iot_comm_duplicate(void *opened_on)
{
    const iot_opened_on *on = opened_on;
    MPI_Comm dup = MPI_COMM_NULL;
    if (on->size > 1 && iot_pmpi.Comm_dup(on->comm, &dup) != MPI_SUCCESS)
        dup = MPI_COMM_NULL;
    return dup;
}

int iot_info_value(MPI_Info info, const char *key, char *out, int outlen)
{
    int flag = 0;
    return info != MPI_INFO_NULL && iot_pmpi.Info_get(info, key, outlen - 1, out, &flag) == MPI_SUCCESS && flag;
}

size_t iot_info_with(MPI_Info info, const iot_setting *const *settings, size_t n, MPI_Info *mine)
{
    *mine = MPI_INFO_NULL;
    if (!n)
        return 0;
    if ((info != MPI_INFO_NULL ? iot_pmpi.Info_dup(info, mine) : iot_pmpi.Info_create(mine)) != MPI_SUCCESS) {
        *mine = MPI_INFO_NULL;
        return 0;
    }
    for (size_t i = 0; i < n; i++)
        iot_pmpi.Info_set(*mine, settings[i]->name, settings[i]->text);
    return n;
}
