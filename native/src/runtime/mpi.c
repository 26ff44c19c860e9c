/* MPI interposition: start-up and shutdown of the run (the report is
 * gathered with PMPI collectives inside MPI_Finalize). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pmpi.h"
#include "rt.h"

iot_pmpi_t iot_pmpi;
static pthread_once_t pmpi_once = PTHREAD_ONCE_INIT;
static int pmpi_ok;
static MPI_Comm run_comm = MPI_COMM_NULL;

#define SYM(field, name) iot_pmpi.field = (__typeof__(iot_pmpi.field))dlsym(RTLD_DEFAULT, name)

static void resolve(void)
{
    SYM(Init, "PMPI_Init");
    SYM(Init_thread, "PMPI_Init_thread");
    SYM(Finalize, "PMPI_Finalize");
    SYM(Initialized, "PMPI_Initialized");
    SYM(Finalized, "PMPI_Finalized");
    SYM(Comm_dup, "PMPI_Comm_dup");
    SYM(Comm_free, "PMPI_Comm_free");
    SYM(Comm_rank, "PMPI_Comm_rank");
    SYM(Comm_size, "PMPI_Comm_size");
    SYM(Comm_split_type, "PMPI_Comm_split_type");
    SYM(Allreduce, "PMPI_Allreduce");
    SYM(Gather, "PMPI_Gather");
    SYM(Gatherv, "PMPI_Gatherv");
    SYM(Barrier, "PMPI_Barrier");
    SYM(Info_create, "PMPI_Info_create");
    SYM(Info_dup, "PMPI_Info_dup");
    SYM(Info_set, "PMPI_Info_set");
    SYM(Info_get, "PMPI_Info_get");
    SYM(Info_get_nkeys, "PMPI_Info_get_nkeys");
    SYM(Info_get_nthkey, "PMPI_Info_get_nthkey");
    SYM(Info_free, "PMPI_Info_free");
    SYM(File_open, "PMPI_File_open");
    SYM(File_close, "PMPI_File_close");
    SYM(File_get_info, "PMPI_File_get_info");
    SYM(File_get_position, "PMPI_File_get_position");
    SYM(Get_library_version, "PMPI_Get_library_version");
    SYM(Type_size, "PMPI_Type_size");
    SYM(Type_get_true_extent, "PMPI_Type_get_true_extent");
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

/* After MPI_Init: our own communicator, rank, node count, then the one warning. */
static void started(void)
{
    if (iot_g.disabled || !iot_pmpi_resolve())
        return;
    iot_internal++;
    iot_pmpi.Comm_dup(MPI_COMM_WORLD, &run_comm);
    iot_pmpi.Comm_rank(run_comm, &iot_g.rank);
    iot_pmpi.Comm_size(run_comm, &iot_g.nprocs);
    iot_g.nnodes = iot_mpi_count_nodes(run_comm);
    int len = 0;
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    if (iot_pmpi.Get_library_version(version, &len) == MPI_SUCCESS) {
        char *nl = strchr(version, '\n');
        if (nl)
            *nl = 0;
        snprintf(iot_g.mpi_library, sizeof iot_g.mpi_library, "%.255s", version);
    }
    iot_g.mpi_initialized = 1;
    iot_warn_settings_once();
    iot_internal--;
}

IOT_EXPORT int MPI_Init(int *argc, char ***argv)
{
    if (!iot_pmpi_resolve() && !iot_pmpi.Init)
        return MPI_ERR_INTERN; /* not an MPI process: cannot happen through the linker */
    int rc = iot_pmpi.Init(argc, argv);
    if (rc == MPI_SUCCESS)
        started();
    return rc;
}

IOT_EXPORT int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    if (!iot_pmpi_resolve() && !iot_pmpi.Init_thread)
        return MPI_ERR_INTERN;
    int rc = iot_pmpi.Init_thread(argc, argv, required, provided);
    if (rc == MPI_SUCCESS)
        started();
    return rc;
}

int iot_mpi_gather_text(const char *mine, char ***all, int *count)
{
    int len = (int)strlen(mine) + 1;
    int *lens = NULL, *displs = NULL;
    char *buf = NULL;
    *all = NULL;
    *count = 0;
    if (iot_g.rank == 0) {
        lens = calloc((size_t)iot_g.nprocs, sizeof *lens);
        displs = calloc((size_t)iot_g.nprocs, sizeof *displs);
    }
    iot_pmpi.Gather(&len, 1, MPI_INT, lens, 1, MPI_INT, 0, run_comm);
    long long total = 0;
    if (iot_g.rank == 0 && lens && displs) {
        for (int i = 0; i < iot_g.nprocs; i++) {
            displs[i] = (int)total;
            total += lens[i];
        }
        if (total < INT_MAX)
            buf = malloc((size_t)total);
    }
    /* every rank joins the collective even if rank 0 could not allocate */
    iot_pmpi.Gatherv(mine, len, MPI_CHAR, buf, lens, displs, MPI_CHAR, 0, run_comm);
    if (iot_g.rank == 0 && buf) {
        *all = calloc((size_t)iot_g.nprocs, sizeof **all);
        if (*all) {
            for (int i = 0; i < iot_g.nprocs; i++)
                (*all)[i] = strdup(buf + displs[i]);
            *count = iot_g.nprocs;
        }
    }
    free(buf);
    free(lens);
    free(displs);
    return *count;
}

IOT_EXPORT int MPI_Finalize(void)
{
    iot_pmpi_resolve();
    if (iot_g.mpi_initialized && !iot_g.mpi_finalized) {
        iot_g.mpi_finalized = 1;
        iot_internal++;
        if (iot_g.report_path)
            iot_report_write(); /* collective on run_comm */
        iot_pmpi.Comm_free(&run_comm);
        iot_internal--;
    }
    return iot_pmpi.Finalize();
}
