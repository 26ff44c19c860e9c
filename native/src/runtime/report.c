/* The run report. Every rank turns its phases into fixed-size records
 * (iotuner/record.h). The records of phases all ranks share are reduced to
 * rank 0 with an MPI_Op (as Darshan reduces shared file records); the others
 * are gathered as they are, with the text describing each phase (its file,
 * settings read back, hints) from one rank. Rank 0 merges them (the core's
 * iot_merge), lets each module add its section, and writes one document. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "iotuner/rawio.h"
#include "iotuner/signature.h"
#include "absent.h"
#include "comm.h"
#include "forked.h"
#include "module.h"
#include "phases.h"
#include "pmpi.h"
#include "report.h"
#include "mca.h"

/* The report context's phase_id: a rank's phase, by its key, in the merged phases. */
/* The sections' own versions, as the modules' report hooks declare them while the report is built. */
static struct {
    const char *module;
    int version;
} sections[IOT_MAX_MODULES];
static size_t nsections;
static const char *reporting; /* the module whose report hook runs */

IOT_EXPORT void iotuner_report_version(const iot_report_ctx *ctx, int version)
{
    if (!ctx || !ctx->root || !reporting || version < 1)
        return;
    size_t i = 0;
    while (i < nsections && strcmp(sections[i].module, reporting))
        i++;
    if (i < IOT_MAX_MODULES) {
        sections[i].module = reporting;
        sections[i].version = version;
        nsections += i == nsections;
    }
}

static int merged_phase_id(const iot_report_ctx *ctx, const iot_phase_key *key, int rank)
{
    return ctx->merged ? iot_merge_find(ctx->merged, key, rank) : -1;
}

static int moved_bytes(const iot_phase *ph)
{
    for (int l = 0; l < IOT_LEVELS; l++)
        if (atomic_load(&ph->level[l].bytes_written) || atomic_load(&ph->level[l].bytes_read))
            return 1;
    return 0;
}

/* Phases in the report: every HDF5 and MPI-IO phase; a POSIX file only if bytes moved. */
static int reported(const iot_phase *ph)
{
    return ph->kind != IOT_KIND_POSIX || moved_bytes(ph);
}

static void phase_record(const iot_phase *ph, iot_record *r)
{
    iot_record_init(r, &ph->key, ph->identity, iot_g.rank, ph->group_size);
    r->flags = (ph->created ? IOT_REC_CREATED : 0) | (ph->open ? IOT_REC_OPEN_AT_EXIT : 0) |
               (atomic_load(&ph->time_sampled) ? IOT_REC_TIME_SAMPLED : 0) | (ph->folded ? IOT_REC_FOLDED : 0);
    r->files = atomic_load(&ph->files);
    r->step = ph->folded ? IOT_STEP_FOLDED : ph->step;
    r->t_open = iot_clock_of(ph->t_start);
    r->t_close = iot_clock_of(ph->open ? iot_ticks() : ph->t_end);
    size_t n;
    const iot_module *const *mods = iot_modules(&n);
    for (size_t i = 0; i < n; i++)
        if (mods[i]->record)
            mods[i]->record(ph, r);
}

/* One rank describes each phase: the first rank of the opening communicator, or the rank alone. */
static void describe(iot_phase *ph, iot_buf *out)
{
    char identity[PATH_MAX];
    iot_identity(ph->path, identity, sizeof identity);
    char *settings = iot_phase_checks_json(ph, 0), *app = iot_phase_app_json(ph);
    iot_phase_desc d = {ph->path, identity, ph->driver[0] ? ph->driver : NULL, ph->file_system,
                        ph->mpiio_driver[0] ? ph->mpiio_driver : NULL, settings, ph->mpi_hints_json, app,
                        ph->datasets_json};
    iot_desc_pack(out, &ph->key, iot_g.rank, &d);
    free(settings);
    free(app);
}

/* ---- the parts that do not depend on phases ---- */

/* The scheduler's job id: Slurm, PBS, LSF, Flux, Cobalt (NULL outside a job). */
static const char *job_id(const char **scheduler)
{
    static const char *const vars[][2] = {{"SLURM_JOB_ID", "slurm"}, {"PBS_JOBID", "pbs"}, {"LSB_JOBID", "lsf"},
                                          {"FLUX_JOB_ID", "flux"}, {"COBALT_JOBID", "cobalt"}};
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) {
        const char *v = getenv(vars[i][0]);
        if (v && *v) {
            *scheduler = vars[i][1];
            return v;
        }
    }
    *scheduler = NULL;
    return NULL;
}

/* From the environment, as Darshan does by default: no NSS lookup (LDAP, sssd) in a finishing job. */
static void user_name(char *out, size_t n)
{
    const char *env = getenv("USER");
    if (!env || !*env)
        env = getenv("LOGNAME");
    if (env && *env)
        snprintf(out, n, "%s", env);
    else
        snprintf(out, n, "%u", (unsigned)getuid());
}

static void executable(char *out, size_t n)
{
    ssize_t len = readlink("/proc/self/exe", out, n - 1);
    out[len > 0 ? len : 0] = 0;
}

static void write_job(iot_buf *b)
{
    char user[256], exe[PATH_MAX];
    user_name(user, sizeof user);
    executable(exe, sizeof exe);
    const char *scheduler, *id = job_id(&scheduler);
    iot_jw_string(b, "user", user);
    iot_jw_string(b, "executable", exe[0] ? exe : NULL);
    iot_jw_string(b, "scheduler", scheduler);
    iot_jw_string(b, "job_id", id);
    const char *step = getenv("SLURM_STEP_ID");
    iot_jw_string(b, "job_step", scheduler && !strcmp(scheduler, "slurm") && step && *step ? step : NULL);
    /* hints the MPI library reads by itself, beside iotuner's settings */
    iot_jw_begin_object(b, "hint_sources");
    static const char *const hint_vars[] = {"ROMIO_HINTS", "MPICH_MPIIO_HINTS", "MPICH_MPIIO_HINTS_DISPLAY",
                                            "OMPI_MCA_io", "HDF5_PLUGIN_PATH", "HDF5_VOL_CONNECTOR", "PNETCDF_HINTS"};
    for (size_t i = 0; i < sizeof hint_vars / sizeof *hint_vars; i++) {
        const char *v = getenv(hint_vars[i]);
        if (v && *v)
            iot_jw_string(b, hint_vars[i], v);
    }
    iot_jw_end_object(b);
}

static void write_run(iot_buf *b)
{
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    char cwd[PATH_MAX] = "";
    if (!getcwd(cwd, sizeof cwd))
        cwd[0] = 0;
    iot_jw_begin_object(b, "run");
    iot_jw_bool(b, "mpi", iot_g.mpi_initialized);
    iot_jw_int(b, "ranks", iot_g.nprocs);
    iot_jw_int(b, "nodes", iot_g.nnodes);
    iot_jw_string(b, "host", host);
    iot_jw_string(b, "cwd", cwd);
    write_job(b);
    iot_jw_begin_array(b, "command");
    char err[64];
    size_t len = 0;
    char *cmdline = iot_read_regular_file("/proc/self/cmdline", "command line", 1 << 20, &len, err, sizeof err);
    for (size_t pos = 0; cmdline && pos < len; pos += strlen(cmdline + pos) + 1)
        iot_jw_string(b, NULL, cmdline + pos);
    free(cmdline);
    iot_jw_end_array(b);
    const char *mpi = iot_g.library[IOT_KIND_MPIIO], *hdf5 = iot_g.library[IOT_KIND_HDF5];
    const char *pnetcdf = iot_g.library[IOT_KIND_PNETCDF];
    iot_jw_string(b, "mpi_library", mpi[0] ? mpi : NULL);
    iot_jw_string(b, "hdf5_library", hdf5[0] ? hdf5 : NULL);
    iot_jw_string(b, "pnetcdf_library", pnetcdf[0] ? pnetcdf : NULL);
#if defined(OPEN_MPI)
    iot_jw_string(b, "mpi_io_component", iot_mca_io_component()); /* ompio or romio321, from its MCA parameters */
#else
    iot_jw_string(b, "mpi_io_component", mpi[0] ? "romio" : NULL);
#endif
    iot_jw_string(b, "timer", iot_use_tsc ? "tsc" : "clock_gettime");
    iot_jw_double(b, "wall_time_s", iot_ticks_to_seconds(iot_ticks() - iot_g.t_init));
    /* the id `iotuner run` gave this job: it accepts only the report that carries it (another job may have
     * written the same path) */
    const char *run_id = getenv("IOTUNER_RUN_ID");
    iot_jw_string(b, "run_id", run_id && *run_id ? run_id : NULL);
    iot_jw_end_object(b);
}

/* without_phase: the requested knobs no phase has a row for (absent.c) */
static void write_settings(iot_buf *b, const char *without_phase)
{
    iot_jw_begin_object(b, "settings");
    iot_jw_string(b, "path", iot_g.settings_path);
    const char *status = !iot_g.settings_path ? "none" : iot_g.settings ? "loaded" : "rejected";
    iot_jw_string(b, "status", status);
    iot_jw_string(b, "message", iot_g.settings_error);
    if (iot_g.settings) {
        char *doc = iot_settings_to_json(iot_g.settings);
        iot_jw_raw(b, "document", doc);
        free(doc);
    }
    if (without_phase)
        iot_jw_raw(b, "without_phase", without_phase);
    iot_jw_end_object(b);
}

/* Every rank's warnings, each once: first those this process (rank 0) printed on stderr, and how many they
 * are (warnings_printed), so that `iotuner run` does not print them again. */
static void write_warnings(iot_buf *b, char *const *all, size_t n)
{
    const char *first[IOT_MAX_WARNINGS + 1];
    size_t nfirst = 0;
    if (iot_g.settings_error && iot_g.warned)
        first[nfirst++] = iot_g.settings_error;
    for (size_t i = 0; i < iot_g.nwarnings; i++)
        if (iot_g.warning_printed[i] && !(iot_g.settings_error && !strcmp(iot_g.warnings[i], iot_g.settings_error)))
            first[nfirst++] = iot_g.warnings[i];
    iot_jw_begin_array(b, "warnings");
    for (size_t i = 0; i < nfirst; i++)
        iot_jw_string(b, NULL, first[i]);
    if (iot_g.settings_error && !iot_g.warned)
        iot_jw_string(b, NULL, iot_g.settings_error);
    for (size_t i = 0; i < n; i++) {
        int seen = iot_g.settings_error && !strcmp(all[i], iot_g.settings_error);
        for (size_t j = 0; j < nfirst && !seen; j++)
            seen = !strcmp(all[i], first[j]);
        for (size_t j = 0; j < i && !seen; j++)
            seen = !strcmp(all[i], all[j]);
        if (!seen)
            iot_jw_string(b, NULL, all[i]);
    }
    iot_jw_end_array(b);
    iot_jw_int(b, "warnings_printed", (int64_t)nfirst);
}

/* The dataset patterns of the user's document that matched no dataset on any rank: their settings applied
 * nowhere, which would otherwise pass without a word. Collective on comm (every rank calls it once). */
static void warn_unmatched_patterns(MPI_Comm comm)
{
    static int warned;
    uint64_t hits = iot_settings_pattern_hits();
    if (comm != MPI_COMM_NULL)
        iot_pmpi.Allreduce(MPI_IN_PLACE, &hits, 1, MPI_UINT64_T, MPI_BOR, comm);
    const iot_settings *s = iot_g.settings;
    char list[400] = "";
    size_t pos = 0, unmatched = 0;
    for (size_t i = 0; s && i < s->ngroups && i < 64; i++) {
        const iot_group *g = &s->groups[i];
        if (!g->dataset_glob || (hits >> i & 1))
            continue;
        unmatched++;
        if (pos < sizeof list)
            pos += (size_t)snprintf(list + pos, sizeof list - pos, "%s'%s'%s%s%s", pos ? ", " : "",
                                    g->dataset_glob, g->file_glob ? " (files '" : "", g->file_glob ? g->file_glob : "",
                                    g->file_glob ? "')" : "");
    }
    if (unmatched)
        iot_warn_once(&warned, "the dataset pattern%s %s matched no dataset: %s settings were applied nowhere",
                      unmatched > 1 ? "s" : "", list, unmatched > 1 ? "their" : "its");
}

/* The temporary file next to the report, created by us alone: O_EXCL and O_NOFOLLOW, so a file or a
 * symbolic link planted at its name (in a shared directory) is never written through. Its name is
 * "<report>.tmp.<pid>", or ".iotuner-report.tmp.<pid>" in the same directory when the report's own name
 * leaves no room for the suffix (a legal name of up to NAME_MAX bytes). When that name is taken, mkstemp
 * picks a fresh one. */
static int create_temporary(const char *path, char *tmp, size_t tmplen)
{
    const char *slash = strrchr(path, '/');
    int dirlen = slash ? (int)(slash - path) + 1 : 0;
    char suffix[48];
    snprintf(suffix, sizeof suffix, ".tmp.%d.XXXXXX", (int)getpid());
    const char *base = strlen(path + dirlen) + strlen(suffix) <= NAME_MAX ? path + dirlen : ".iotuner-report";
    snprintf(tmp, tmplen, "%.*s%s.tmp.%d", dirlen, path, base, (int)getpid());
    int fd = iot_raw_open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd >= 0 || errno != EEXIST)
        return fd;
    snprintf(tmp, tmplen, "%.*s%s%s", dirlen, path, base, suffix);
    fd = mkostemp(tmp, O_CLOEXEC);
    if (fd >= 0) { /* mkstemp's 0600, widened as open's 0644 would be under the umask */
        mode_t mask = umask(0);
        umask(mask);
        fchmod(fd, 0644 & ~mask);
    }
    return fd;
}

/* Replaces the report at path (rank 0 of an MPI run), or creates it if there is none yet (a serial
 * process: a helper process of the job that exits before the application must not replace its report).
 * A report path that is a symbolic link is refused: the report never lands where a link points. */
static void write_file(const char *path, const char *text, size_t len, int replace)
{
    struct stat st;
    if (iot_raw_lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
        fprintf(stderr, "iotuner: warning: the run report path %s is a symbolic link; not written\n", path);
        return;
    }
    char tmp[PATH_MAX + 48];
    int fd = create_temporary(path, tmp, sizeof tmp);
    int ok = fd >= 0;
    for (size_t done = 0; ok && done < len;) {
        ssize_t w = iot_raw_write(fd, text + done, len - done);
        if (w < 0 && errno == EINTR)
            continue;
        ok = w > 0;
        done += w > 0 ? (size_t)w : 0;
    }
    ok = ok && iot_raw_write(fd, "\n", 1) == 1;
    if (fd >= 0)
        ok = iot_raw_close(fd) == 0 && ok;
    if (ok)
        ok = replace ? iot_raw_rename(tmp, path) == 0 : (iot_raw_link(tmp, path) == 0 || errno == EEXIST);
    if (!ok)
        fprintf(stderr, "iotuner: warning: cannot write the run report to %s (%s)\n", path, strerror(errno));
    if (fd >= 0) /* only the name we created */
        iot_raw_unlink(tmp);
}

/* Makes the missing directories of path below its first root_len characters (an existing directory), each
 * with the root's mode. A directory another job made meanwhile is fine. 0, or -1 with errno (the root is no
 * directory, or a directory cannot be made: a read-only file system). */
static int make_day_dirs(char *path, size_t root_len)
{
    struct stat root;
    char keep = path[root_len];
    path[root_len] = '\0';
    int have_root = iot_raw_stat(path, &root) == 0;
    if (have_root && !S_ISDIR(root.st_mode)) {
        have_root = 0;
        errno = ENOTDIR;
    }
    path[root_len] = keep;
    if (!have_root)
        return -1;
    for (char *c = path + root_len + 1;; c++) {
        if (*c != '/' && *c != '\0')
            continue;
        char end = *c;
        *c = '\0';
        int made = mkdir(path, 0700) == 0, failed = !made && errno != EEXIST;
        if (made)
            chmod(path, root.st_mode & 07777);
        *c = end;
        if (failed)
            return -1;
        if (!end)
            break;
    }
    return 0;
}

/* ---- across ranks ---- */

static int by_key(const void *a, const void *b)
{
    const iot_phase_key *x = &((const iot_record *)a)->key, *y = &((const iot_record *)b)->key;
    if (x->path != y->path)
        return x->path < y->path ? -1 : 1;
    if (x->seq != y->seq)
        return x->seq < y->seq ? -1 : 1;
    return (int)x->kind - (int)y->kind;
}

static void combine_op(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)type;
    iot_record *a = in, *b = inout;
    for (int i = 0; i < *len; i++)
        iot_record_combine(&a[i], &b[i]);
}

/* Records of phases every rank has (collective on the whole world, in the same order everywhere, as MPI
 * orders collectives) are reduced with the MPI_Op; rank 0 adds them to m. Returns how many were reduced
 * (0 when the ranks' sets differ: then they travel with the others). */
static size_t reduce_shared(MPI_Comm comm, iot_record *shared, size_t n, iot_merge *m)
{
    uint64_t x = 0;
    for (size_t i = 0; i < n; i++)
        x ^= (shared[i].key.path * 0x9E3779B97F4A7C15ull) ^ ((uint64_t)shared[i].key.seq << 40 | shared[i].key.kind);
    iot_record *out = iot_g.rank == 0 && n ? malloc(n * sizeof *out) : NULL;
    uint64_t count = iot_g.rank == 0 && n && !out ? UINT64_MAX : n; /* rank 0 out of memory: no reduction */
    uint64_t mine[4] = {count, ~count, x, ~x}, all[4];
    if (iot_pmpi.Allreduce(mine, all, 4, MPI_UINT64_T, MPI_MAX, comm) != MPI_SUCCESS || all[0] != ~all[1] ||
        all[2] != ~all[3] || n == 0 || n > INT_MAX) {
        free(out);
        return 0;
    }
    MPI_Datatype type;
    MPI_Op op;
    iot_pmpi.Type_contiguous((int)sizeof(iot_record), MPI_BYTE, &type);
    iot_pmpi.Type_commit(&type);
    iot_pmpi.Op_create(combine_op, 1, &op);
    iot_pmpi.Reduce(shared, out, (int)n, type, op, 0, comm);
    for (size_t i = 0; out && i < n; i++)
        iot_merge_add(m, &out[i]);
    free(out);
    iot_pmpi.Op_free(&op);
    iot_pmpi.Type_free(&type);
    return n;
}

/* ---- the report ---- */

/* Collective: the processes the job started with MPI_Comm_spawn are not in this report (each group writes its
 * own, beside it): rank 0 says so, and that the report is not the whole job's. */
static void spawn_note(MPI_Comm comm)
{
    int procs = iot_g.spawned;
    if (comm != MPI_COMM_NULL)
        iot_pmpi.Allreduce(MPI_IN_PLACE, &procs, 1, MPI_INT, MPI_SUM, comm);
    if (iot_g.rank != 0 || procs <= 0)
        return;
    char why[512];
    snprintf(why, sizeof why,
             "the job started %d process(es) with MPI_Comm_spawn: their I/O is not in this report (each group of "
             "them writes its own report beside it, NAME.spawned-PID.json)",
             procs);
    iot_state_incomplete(why);
}

static char *build(void)
{
    size_t nph;
    iot_phase **phases = iot_phases(&nph);
    iot_record *recs = malloc((nph ? nph : 1) * sizeof *recs);
    iot_buf descs;
    iot_buf_init(&descs);
    size_t nrec = 0;
    uint64_t world = 0;
    MPI_Comm comm = iot_g.mpi_initialized ? iot_mpi_run_comm() : MPI_COMM_NULL;
    if (comm != MPI_COMM_NULL) {
        int size, rank;
        iot_comm_group(MPI_COMM_WORLD, &world, &size, &rank);
    }
    size_t nreported = 0;
    for (size_t i = 0; phases && recs && i < nph; i++) {
        iot_phase *ph = phases[i];
        if (!reported(ph))
            continue;
        phases[nreported++] = ph;
        phase_record(ph, &recs[nrec++]);
        if (!ph->key.group || ph->group_rank == 0)
            describe(ph, &descs);
    }
    char *without_phase = iot_absent_rows_json(comm, phases, nreported); /* collective */
    free(phases);
    size_t desc_len = descs.len;
    char *desc_text = iot_buf_take(&descs);

    iot_merge *m = iot_g.rank == 0 ? iot_merge_new() : NULL;
    char *all_descs = desc_text, *all_recs = (char *)recs, *all_warn = NULL;
    size_t all_desc_len = desc_len, all_rec_len = nrec * sizeof *recs, all_warn_len = 0;
    warn_unmatched_patterns(comm);
    iot_forked_note(comm); /* collective */
    spawn_note(comm);      /* collective */
    iot_buf warn;
    iot_buf_init(&warn);
    for (size_t i = 0; i < iot_g.nwarnings; i++)
        iot_buf_append(&warn, iot_g.warnings[i], strlen(iot_g.warnings[i]) + 1);
    size_t warn_len = warn.len;
    char *warn_text = iot_buf_take(&warn);
    if (comm != MPI_COMM_NULL) {
        /* the world's collective phases first, in one order on every rank */
        size_t nshared = 0;
        for (size_t i = 0; i < nrec; i++)
            if (recs[i].key.group == world && recs[i].group_size == iot_g.nprocs) {
                iot_record t = recs[nshared];
                recs[nshared++] = recs[i];
                recs[i] = t;
            }
        qsort(recs, nshared, sizeof *recs, by_key);
        size_t reduced = reduce_shared(comm, recs, nshared, m);
        iot_gather_bytes(comm, (char *)(recs + reduced), (nrec - reduced) * sizeof *recs, &all_recs, &all_rec_len);
        iot_gather_bytes(comm, desc_text, desc_len, &all_descs, &all_desc_len);
        iot_gather_bytes(comm, warn_text, warn_len, &all_warn, &all_warn_len);
    } else {
        all_warn = warn_text;
        all_warn_len = warn_len;
        warn_text = NULL;
    }
    char *text = NULL;
    if (m) {
        for (size_t off = 0; all_recs && off + sizeof(iot_record) <= all_rec_len; off += sizeof(iot_record)) {
            iot_record r;
            memcpy(&r, all_recs + off, sizeof r);
            iot_merge_add(m, &r);
        }
        iot_phase_key key;
        int rank;
        iot_phase_desc d;
        for (size_t off = 0, used; all_descs && off < all_desc_len; off += used) {
            used = iot_desc_unpack(all_descs + off, all_desc_len - off, &key, &rank, &d);
            if (!used)
                break;
            iot_merge_describe(m, &key, rank, &d);
        }
        iot_merge_finish(m);
    }
    iot_buf b;
    iot_buf_init(&b);
    iot_totals totals;
    if (m) {
        iot_jw_begin_object(&b, NULL);
        iot_jw_int(&b, "version", IOT_REPORT_VERSION);
        iot_jw_string(&b, "kind", "iotuner-run-report");
        iot_jw_string(&b, "iotuner", iot_version());
        char when[32];
        time_t now = time(NULL);
        strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
        iot_jw_string(&b, "created", when);
        iot_jw_string(&b, "incomplete", iot_g.incomplete);
        write_run(&b);
        write_settings(&b, without_phase);
        iot_merge_write(m, &b, &totals);
    }
    /* the modules' sections: collective, so every rank takes part */
    iot_report_ctx ctx = {comm, iot_g.rank, m != NULL, m ? &b : NULL, merged_phase_id, m};
    size_t nmods;
    const iot_module *const *mods = iot_modules(&nmods);
    nsections = 0;
    for (size_t i = 0; i < nmods; i++)
        if (mods[i]->report) {
            reporting = mods[i]->name;
            mods[i]->report(&ctx);
            reporting = NULL;
        }
    if (m) {
        iot_jw_begin_object(&b, "sections"); /* each module's section, its version */
        for (size_t i = 0; i < nsections; i++)
            iot_jw_int(&b, sections[i].module, sections[i].version);
        iot_jw_end_object(&b);
        size_t nw = 0;
        char *w[IOT_MAX_MODULES * 64 + 64];
        for (size_t off = 0; all_warn && off < all_warn_len && nw < sizeof w / sizeof *w;
             off += strlen(all_warn + off) + 1)
            w[nw++] = all_warn + off;
        write_warnings(&b, w, nw);
        iot_jw_end_object(&b);
        text = iot_buf_take(&b);
    }
    iot_merge_free(m);
    if (all_recs != (char *)recs)
        free(all_recs);
    if (all_descs != desc_text)
        free(all_descs);
    free(all_warn);
    free(warn_text);
    free(desc_text);
    free(recs);
    free(without_phase);
    return text;
}

/* A serial process reports when it did I/O iotuner measures: HDF5, MPI-IO, or writing a file (a process
 * that only read files, like an interpreter loading its modules, leaves no report). */
static int serial_has_io(void)
{
    if (iot_g.used[IOT_KIND_HDF5] || iot_g.used[IOT_KIND_MPIIO] || iot_g.used[IOT_KIND_PNETCDF])
        return 1;
    size_t n;
    iot_phase **all = iot_phases(&n);
    int io = 0;
    for (size_t i = 0; all && i < n && !io; i++)
        io = atomic_load(&all[i]->level[IOT_LEVEL_POSIX].bytes_written) != 0 ||
             atomic_load(&all[i]->level[IOT_LEVEL_STDIO].bytes_written) != 0; /* fwrite's: a file written */
    free(all);
    return io;
}

/* IOTUNER_LOGPATH/YEAR/MONTH/DAY/USER_EXE_idJOB_YYYY-MM-DDTHHMMSS_PID.json, as Darshan files its logs (the
 * job's start day, local time, month and day unpadded: 2026/3/7): one tree for every job of a site or a user,
 * each report findable by day, user, program, job and time. Only the writing rank (rank 0, or the serial
 * process) names it. The day's directories are made when missing, with the mode of IOTUNER_LOGPATH itself,
 * so a site's shared log directory (mode 1777) gives shared day directories. */
static void log_name(char *out, size_t n)
{
    char user[128], exe[PATH_MAX], when[32];
    user_name(user, sizeof user);
    executable(exe, sizeof exe);
    const char *base = strrchr(exe, '/') ? strrchr(exe, '/') + 1 : exe[0] ? exe : "unknown";
    const char *scheduler, *id = job_id(&scheduler);
    struct tm tm;
    localtime_r(&iot_g.start_time, &tm);
    strftime(when, sizeof when, "%Y-%m-%dT%H%M%S", &tm);
    int dir = snprintf(out, n, "%s/%d/%d/%d", iot_g.log_dir, tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday);
    if (dir < 0 || (size_t)dir >= n) {
        fprintf(stderr, "iotuner: warning: IOTUNER_LOGPATH %s: the report's path would be too long; no run "
                "report written\n", iot_g.log_dir);
        out[0] = '\0';
        return;
    }
    if (make_day_dirs(out, strlen(iot_g.log_dir)) != 0) {
        fprintf(stderr, "iotuner: warning: IOTUNER_LOGPATH %s: cannot make the directory %s (%s); no run report "
                "written\n", iot_g.log_dir, out, strerror(errno));
        out[0] = '\0';
        return;
    }
    snprintf(out + dir, n - dir, "/%s_%s_id%s_%s_%ld.json", user, base, id ? id : "0", when, (long)getpid());
    for (char *c = out + dir + 1; *c; c++) /* a job id or a user with '/' stays one name */
        if (*c == '/')
            *c = '-';
}

void iot_report_write(void)
{
    if ((!iot_g.report_path && !iot_g.log_dir) || iot_forked_child()) /* a child's parent writes it */
        return;
    if (!iot_g.mpi_initialized && !iot_g.incomplete && !serial_has_io())
        return;
    /* a share of an MPI job that ran around us: rank 0's alone, so that no rank replaces another's */
    if (iot_g.incomplete && iot_g.rank != 0)
        return;
    char *text = build();
    if (text) {
        char logged[PATH_MAX + 512];
        const char *path = iot_g.report_path;
        if (!path) {
            log_name(logged, sizeof logged);
            path = logged;
        }
        /* rank 0 of a job replaces an old report; a serial process (or a rank that cannot tell) never does */
        int known_rank = iot_g.mpi_unseen || iot_launch_size() > 0;
        if (*path) /* else log_name said why not */
            write_file(path, text, strlen(text), iot_g.mpi_initialized || (iot_g.incomplete && known_rank));
    }
    free(text);
}
