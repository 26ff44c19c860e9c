/* The lifecycle core: start-up (the library's constructor), the start and
 * end of an MPI run (forwarded by mpi.c), shutdown (the destructor). It owns
 * the process state (state.h) and drives the registered modules (module.h). */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "iotuner/rawio.h"
#include "abi.h"
#include "comm.h"
#include "forked.h"
#include "lifecycle.h"
#include "module.h"
#include "paths.h"
#include "pmpi.h"
#include "report.h"

/* ---- settings ---- */

#define MAX_SETTINGS_FILE (16u << 20)

static void load_settings(void)
{
    const char *path = getenv("IOTUNER_CONFIG");
    if (!path || !*path)
        return;
    iot_g.settings_path = strdup(path);
    iot_path_ignore(path); /* reading it is not the application's I/O */
    char err[600] = "", why[512];
    size_t len = 0;
    char *text = iot_read_regular_file(path, "settings file", MAX_SETTINGS_FILE, &len, why, sizeof why);
    if (!text) {
        snprintf(err, sizeof err, "%s", why);
    } else {
        iot_g.settings = iot_settings_parse(text, len, why, sizeof why);
        if (!iot_g.settings) {
            char *more = strchr(why, '\n'); /* one warning line: the first error, and where to see the rest */
            if (more)
                *more = 0;
            snprintf(err, sizeof err, "settings file '%s' rejected: %s%s", path, why,
                     more ? " (and more: 'iotuner check' lists every error)" : "");
        }
        free(text);
    }
    if (err[0])
        iot_g.settings_error = strdup(err);
}

/* ---- start and end ---- */

static int flag_env(const char *name)
{
    const char *v = getenv(name);
    return v && *v && strcmp(v, "0") != 0;
}

/* After the modules registered (priority 101), before the application's main. */
__attribute__((constructor(102))) static void iot_start(void)
{
    iot_internal++;
    iot_g.disabled = flag_env("IOTUNER_DISABLE") || iot_is_launcher(0) || iot_mpi_foreign_abi();
    iot_g.verbose = flag_env("IOTUNER_VERBOSE");
    iot_g.count_ops = flag_env("IOTUNER_COUNT_OPS");
    iot_g.settings_warned_before = flag_env("IOTUNER_SETTINGS_WARNED");
    iot_g.nprocs = 1;
    iot_g.nnodes = 1;
    iot_clock_start();
    if (!iot_g.disabled) {
        iot_paths_init();
        load_settings();
        iot_g.start_time = time(NULL);
        const char *rp = getenv("IOTUNER_REPORT"), *lp = getenv("IOTUNER_LOGPATH");
        if (rp && *rp)
            iot_g.report_path = strdup(rp);
        else if (lp && *lp)
            iot_g.log_dir = strdup(lp);
        iot_modules_start();
    }
    iot_internal--;
}

/* IOTUNER_FINALIZE_FILE (made by `iotuner run`, `smart` and `tune`): each rank marks its byte, at its rank's
 * offset, 'S' after MPI_Init and 'F' when it reaches MPI_Finalize, so that a job whose launcher says 0 although
 * its ranks exited or were killed before MPI_Finalize is not taken for a success. Raw system calls on a file
 * that must exist already: a path no rank can reach (another node's /tmp) costs one failed open. */
static char *finalize_file;

static void mark_rank(int rank, char mark)
{
    if (!finalize_file || rank < 0)
        return;
    int fd = iot_raw_open(finalize_file, O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0);
    if (fd < 0)
        return;
    if (iot_raw_pwrite(fd, &mark, 1, (off_t)rank) != 1 && iot_g.verbose)
        fprintf(stderr, "iotuner: rank %d cannot mark %s\n", rank, finalize_file);
    iot_raw_close(fd);
}

/* A group MPI_Comm_spawn started: its world's ranks are not the job's, so it marks nothing (its rank 0 would
 * mark over the job's) and reports beside the job's report (NAME.spawned-PID.json), never over it. */
static void spawned_group(void)
{
    iot_g.spawned_group = 1;
    free(finalize_file);
    finalize_file = NULL;
    if (!iot_g.report_path)
        return; /* a log directory: every report's name is its own already */
    size_t n = strlen(iot_g.report_path);
    size_t stem = n > 5 && !strcmp(iot_g.report_path + n - 5, ".json") ? n - 5 : n;
    char *path = malloc(stem + 64);
    if (!path)
        return;
    snprintf(path, stem + 64, "%.*s.spawned-%ld.json", (int)stem, iot_g.report_path, (long)getpid());
    free(iot_g.report_path);
    iot_g.report_path = path;
}

void iot_lifecycle_mpi_started(void)
{
    const char *marks = getenv("IOTUNER_FINALIZE_FILE");
    if (marks && *marks && !finalize_file)
        finalize_file = strdup(marks);
    MPI_Comm parent = MPI_COMM_NULL;
    if (iot_pmpi.Comm_get_parent(&parent) == MPI_SUCCESS && parent != MPI_COMM_NULL)
        spawned_group();
    int world_rank = -1; /* marked before our collectives: a launcher may kill the rank once another left */
    if (finalize_file && iot_pmpi.Comm_rank(MPI_COMM_WORLD, &world_rank) == MPI_SUCCESS)
        mark_rank(world_rank, 'S');
    iot_forked_rank_started();
    MPI_Comm run = iot_mpi_run_begin();
    iot_pmpi.Comm_rank(run, &iot_g.rank);
    iot_pmpi.Comm_size(run, &iot_g.nprocs);
    iot_g.nnodes = iot_mpi_count_nodes(run);
    iot_g.clock_offset = iot_mpi_clock_offset(run, iot_g.nnodes);
    iot_mpi_library(iot_g.library[IOT_KIND_MPIIO], sizeof iot_g.library[IOT_KIND_MPIIO]);
    iot_g.mpi_initialized = 1;
    if (iot_g.spawned_group) {
        char why[256];
        snprintf(why, sizeof why,
                 "this report holds only the %d process(es) that MPI_Comm_spawn started, a group of a job whose "
                 "own ranks report elsewhere",
                 iot_g.nprocs);
        iot_state_incomplete(why);
    }
    iot_warn_settings_once();
}

void iot_lifecycle_mpi_finishing(void)
{
    if (iot_g.mpi_finalized)
        return;
    iot_g.mpi_finalized = 1;
    mark_rank(iot_g.rank, 'F'); /* reached, whatever becomes of the report */
    iot_report_write(); /* collective on the run's communicator */
    iot_modules_cleanup();
    iot_mpi_run_end();
}

/* MPI ran, but its MPI_Init went around us (an entry point we do not interpose, a static MPI): no run, no
 * gathering, so this process's phases are its share of the job only. Said once (the job's rank 0), and the
 * report says it is incomplete rather than pass one rank's share for the job's totals. */
static void mpi_unseen(int ran)
{
    static int warned;
    if (!iot_g.mpi_unseen) /* never asked MPI: the launcher's rank */
        iot_state_rank(iot_launch_rank());
    int size = iot_launch_size();
    char share[96];
    if (size > 1)
        snprintf(share, sizeof share, "rank %d's share of a %d-rank job", iot_g.rank, size);
    else
        snprintf(share, sizeof share, "this process's share of the job");
    char why[400];
    snprintf(why, sizeof why, "%s: this report is incomplete, it holds only %s and no MPI settings",
             ran ? "MPI was initialized without iotuner seeing MPI_Init (an entry point it does not intercept, or "
                   "an MPI linked statically)"
                 : "the ranks of this job loaded MPI but never initialized it",
             share);
    iot_state_incomplete(why);
    iot_warn_once(&warned, "%s", why);
}

/* A process without our MPI_Init reports at exit: a serial program, or a share of an MPI job (mpi_unseen). */
__attribute__((destructor)) static void iot_stop(void)
{
    if (iot_g.disabled || iot_g.mpi_initialized)
        return;
    iot_internal++;
    iot_warn_settings_once();
    /* MPI loaded in one of several launched ranks, never initialized: each rank's report would race too */
    int ran = iot_g.mpi_unseen || iot_mpi_ran();
    if (!iot_forked_child() && (ran || (iot_launch_size() > 1 && iot_pmpi_resolve())))
        mpi_unseen(ran); /* a program a rank ran (h5ls linked with parallel HDF5) is no share of the job */
    iot_report_write();
    iot_modules_cleanup();
    iot_internal--;
}
