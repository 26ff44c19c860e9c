/* MPI interposition: start-up and shutdown of the run, and MPI-IO hints on
 * every MPI_File_open (for pure MPI-IO programs and for HDF5's own opens). */
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
    SYM(Get_library_version, "PMPI_Get_library_version");
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

/* ---- MPI-IO ---- */

static const char *driver_from_info(const char *fstype, char *out, size_t outlen)
{
    /* ROMIO reports e.g. "UFS: Generic ROMIO driver for all UNIX-like file systems" */
    size_t n = 0;
    while (fstype[n] && fstype[n] != ':' && n + 1 < outlen) {
        char c = fstype[n];
        out[n++] = (char)(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    }
    out[n] = 0;
    return out;
}

static int info_value(MPI_Info info, const char *key, char *out, int outlen)
{
    int flag = 0;
    iot_pmpi.Info_get(info, key, outlen - 1, out, &flag);
    return flag;
}

/* Reads the hints back from the opened file and explains every difference. */
static void verify_hints(iot_phase *ph, MPI_Comm comm, MPI_File fh, const iot_setting **req, size_t n)
{
    MPI_Info eff;
    if (iot_pmpi.File_get_info(fh, &eff) != MPI_SUCCESS)
        return;
    int nkeys = 0;
    iot_pmpi.Info_get_nkeys(eff, &nkeys);
    iot_buf b;
    iot_buf_init(&b);
    iot_jw_begin_object(&b, NULL);
    for (int i = 0; i < nkeys; i++) {
        char key[MPI_MAX_INFO_KEY + 1], val[MPI_MAX_INFO_VAL + 1];
        if (iot_pmpi.Info_get_nthkey(eff, i, key) != MPI_SUCCESS)
            continue;
        if (info_value(eff, key, val, sizeof val))
            iot_jw_string(&b, key, val);
    }
    iot_jw_end_object(&b);
    iot_phase_set_hints(ph, iot_buf_take(&b));

    char fstype[256], cb_list[256];
    if (info_value(eff, "romio_filesystem_type", fstype, sizeof fstype))
        driver_from_info(fstype, ph->mpiio_driver, sizeof ph->mpiio_driver);
    else
        snprintf(ph->mpiio_driver, sizeof ph->mpiio_driver, "%s", ph->file_system);
    int have_list = info_value(eff, "cb_config_list", cb_list, sizeof cb_list);
    int nprocs = 1, nnodes = -1;
    iot_pmpi.Comm_size(comm, &nprocs);
    for (size_t i = 0; i < n; i++) {
        char val[MPI_MAX_INFO_VAL + 1], why[512];
        int found = info_value(eff, req[i]->name, val, sizeof val);
        /* every rank sees the same hints, so this collective is taken by all or none */
        if (!strcmp(req[i]->name, "cb_nodes") && found && strcmp(val, req[i]->text) && nnodes < 0)
            nnodes = iot_mpi_count_nodes(comm);
        iot_status st = iot_explain_hint(req[i]->name, req[i]->text, found ? val : NULL, ph->mpiio_driver,
                                         nnodes > 0 ? nnodes : iot_g.nnodes, nprocs, have_list ? cb_list : NULL,
                                         why, sizeof why);
        iot_phase_check(ph, "mpiio", req[i]->name, NULL, req[i]->text, found ? val : NULL, st, why);
    }
    iot_pmpi.Info_free(&eff);
}

IOT_EXPORT int MPI_File_open(MPI_Comm comm, const char *filename, int amode, MPI_Info info, MPI_File *fh)
{
    static int (*real)(MPI_Comm, const char *, int, MPI_Info, MPI_File *);
    IOT_REAL(real, "MPI_File_open");
    if (!iot_active() || !iot_pmpi_resolve())
        return real(comm, filename, amode, info, fh);
    if (!iot_g.mpi_initialized)
        iot_g.rank = iot_mpi_world_rank(); /* MPI_Init went around us (e.g. Fortran) */
    iot_warn_settings_once();

    iot_phase *ph = iot_h5_opening; /* HDF5's own open belongs to its file phase */
    int own = (ph == NULL);
    if (own) {
        ph = iot_phase_begin(IOT_KIND_MPIIO, filename, (amode & MPI_MODE_CREATE) != 0);
        iot_g.used_mpiio = 1;
    }
    if (!ph)
        return real(comm, filename, amode, info, fh);

    const iot_setting *hints[128];
    size_t n = iot_resolve(ph->path, NULL, IOT_LAYER_MPIIO, hints, 128);
    MPI_Info use = info, mine = MPI_INFO_NULL;
    if (n) {
        iot_internal++;
        int rc = info != MPI_INFO_NULL ? iot_pmpi.Info_dup(info, &mine) : iot_pmpi.Info_create(&mine);
        if (rc == MPI_SUCCESS) {
            for (size_t i = 0; i < n; i++)
                iot_pmpi.Info_set(mine, hints[i]->name, hints[i]->text);
            use = mine;
        } else {
            mine = MPI_INFO_NULL;
            n = 0;
        }
        iot_internal--;
    }
    if (own && (amode & MPI_MODE_CREATE) && iot_lustre_wanted(ph->path)) {
        int r = 0;
        iot_pmpi.Comm_rank(comm, &r);
        iot_lustre_prepare(ph, ph->path, 0, r == 0);
        iot_pmpi.Barrier(comm); /* nobody opens before the layout exists */
    }
    int rc = real(comm, filename, amode, use, fh);
    if (rc == MPI_SUCCESS) {
        if (own)
            ph->handle = (int64_t)(intptr_t)*fh;
        iot_internal++;
        verify_hints(ph, comm, *fh, hints, n);
        iot_internal--;
    } else if (own) {
        iot_phase_abort(ph);
    }
    if (mine != MPI_INFO_NULL)
        iot_pmpi.Info_free(&mine);
    return rc;
}

IOT_EXPORT int MPI_File_close(MPI_File *fh)
{
    static int (*real)(MPI_File *);
    IOT_REAL(real, "MPI_File_close");
    iot_phase *ph = NULL;
    if (iot_active() && fh)
        ph = iot_phase_find_handle(IOT_KIND_MPIIO, (int64_t)(intptr_t)*fh);
    int rc = real(fh);
    if (ph)
        iot_phase_end(ph);
    return rc;
}
