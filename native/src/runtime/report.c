/* The run report: every rank describes its phases as JSON, rank 0 gathers
 * them, merges the records of the same phase and writes one document. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rt.h"

static const char *kind_name(iot_phase_kind k)
{
    return k == IOT_KIND_HDF5 ? "hdf5" : k == IOT_KIND_MPIIO ? "mpiio" : "posix";
}

char *iot_phase_to_json(const iot_phase *ph)
{
    iot_buf b;
    iot_buf_init(&b);
    uint64_t end = ph->open ? iot_ticks() : ph->t_end;
#define SECONDS(field) iot_ticks_to_seconds(atomic_load(&ph->field))
#define COUNT(field) (int64_t)atomic_load(&ph->field)
    iot_jw_begin_object(&b, NULL);
    iot_jw_string(&b, "kind", kind_name(ph->kind));
    iot_jw_string(&b, "file", ph->path);
    iot_jw_int(&b, "occurrence", ph->occurrence);
    iot_jw_bool(&b, "created", ph->created);
    iot_jw_bool(&b, "open_at_exit", ph->open);
    iot_jw_string(&b, "driver", ph->driver[0] ? ph->driver : NULL);
    iot_jw_string(&b, "file_system", ph->file_system);
    iot_jw_string(&b, "mpiio_driver", ph->mpiio_driver[0] ? ph->mpiio_driver : NULL);
    iot_jw_double(&b, "wall_time_s", iot_ticks_to_seconds(end - ph->t_start));
    iot_jw_bool(&b, "time_sampled", atomic_load(&ph->time_sampled));
    /* per level: bytes written, read, calls written, read, time writing, reading */
    iot_jw_begin_array(&b, "posix");
    iot_jw_int(&b, NULL, COUNT(bytes_written));
    iot_jw_int(&b, NULL, COUNT(bytes_read));
    iot_jw_int(&b, NULL, COUNT(writes));
    iot_jw_int(&b, NULL, COUNT(reads));
    iot_jw_double(&b, NULL, SECONDS(write_ticks));
    iot_jw_double(&b, NULL, SECONDS(read_ticks));
    iot_jw_double(&b, NULL, SECONDS(sync_ticks));
    iot_jw_double(&b, NULL, SECONDS(meta_ticks));
    iot_jw_end_array(&b);
    iot_jw_begin_array(&b, "mpiio");
    iot_jw_int(&b, NULL, COUNT(mpi_bytes_written));
    iot_jw_int(&b, NULL, COUNT(mpi_bytes_read));
    iot_jw_int(&b, NULL, COUNT(mpi_writes));
    iot_jw_int(&b, NULL, COUNT(mpi_reads));
    iot_jw_double(&b, NULL, SECONDS(mpi_write_ticks));
    iot_jw_double(&b, NULL, SECONDS(mpi_read_ticks));
    iot_jw_end_array(&b);
    iot_jw_begin_array(&b, "hdf5");
    iot_jw_int(&b, NULL, COUNT(h5_bytes_written));
    iot_jw_int(&b, NULL, COUNT(h5_bytes_read));
    iot_jw_int(&b, NULL, COUNT(h5_writes));
    iot_jw_int(&b, NULL, COUNT(h5_reads));
    iot_jw_double(&b, NULL, SECONDS(h5_write_ticks));
    iot_jw_double(&b, NULL, SECONDS(h5_read_ticks));
    iot_jw_end_array(&b);
#undef SECONDS
#undef COUNT
    iot_jw_begin_array(&b, "settings");
    for (size_t i = 0; i < ph->nchecks; i++) {
        const iot_check *c = &ph->checks[i];
        iot_jw_begin_object(&b, NULL);
        iot_jw_string(&b, "layer", c->layer);
        iot_jw_string(&b, "knob", c->name);
        if (c->dataset[0])
            iot_jw_string(&b, "dataset", c->dataset);
        iot_jw_string(&b, "requested", c->requested);
        iot_jw_string(&b, "effective", c->effective[0] ? c->effective : NULL);
        iot_jw_string(&b, "status", iot_status_name(c->status));
        iot_jw_string(&b, "reason", c->reason[0] ? c->reason : NULL);
        iot_jw_end_object(&b);
    }
    iot_jw_end_array(&b);
    if (ph->mpi_hints_json) {
        iot_json *h = iot_json_parse(ph->mpi_hints_json, strlen(ph->mpi_hints_json), NULL, 0);
        iot_jw_value(&b, "mpi_hints", h);
        iot_json_free(h);
    }
    iot_jw_end_object(&b);
    return iot_buf_take(&b);
}

static int moved_bytes(const iot_phase *ph)
{
    return atomic_load(&ph->bytes_written) || atomic_load(&ph->bytes_read) || atomic_load(&ph->mpi_bytes_written) ||
           atomic_load(&ph->mpi_bytes_read) || atomic_load(&ph->h5_bytes_written) || atomic_load(&ph->h5_bytes_read);
}

/* This rank's record: {"phases": [the phases that did something], "smart": {...} or null}. */
static char *rank_json(void)
{
    size_t n;
    iot_phase **all = iot_phases(&n);
    iot_buf b;
    iot_buf_init(&b);
    iot_buf_puts(&b, "{\"phases\":[");
    int first = 1;
    for (size_t i = 0; all && i < n; i++) {
        iot_phase *ph = all[i];
        if (ph->kind == IOT_KIND_POSIX && !moved_bytes(ph))
            continue;
        char *j = iot_phase_to_json(ph);
        if (j) {
            if (!first)
                iot_buf_puts(&b, ",");
            first = 0;
            iot_buf_puts(&b, j);
            free(j);
        }
    }
    iot_buf_puts(&b, "],\"smart\":");
    char *smart = iot_smart_rank_json();
    iot_buf_puts(&b, smart ? smart : "null");
    free(smart);
    iot_buf_puts(&b, "}");
    free(all);
    return iot_buf_take(&b);
}

/* ---- merging across ranks ---- */

enum { LEVEL_POSIX, LEVEL_MPIIO, LEVEL_HDF5, LEVELS };
static const char *level_names[LEVELS] = {"posix", "mpiio", "hdf5"};

typedef struct {
    int64_t bytes_written, bytes_read, writes, reads; /* summed over ranks */
    double write_time, read_time;                     /* slowest rank */
} level_stats;

typedef struct {
    const iot_json *first; /* record of the lowest rank: names, settings, hints */
    int ranks;
    double wall, sync_time, meta_time, io_max, io_sum;
    level_stats level[LEVELS];
    int open_at_exit, time_sampled;
} merged;

static double num(const iot_json *v)
{
    return v && v->type == IOT_JSON_NUMBER ? v->number : 0;
}

static int64_t inum(const iot_json *v)
{
    return v && v->type == IOT_JSON_NUMBER ? (v->is_integer ? v->integer : (int64_t)v->number) : 0;
}

static const iot_json *item(const iot_json *arr, size_t i)
{
    return arr && arr->type == IOT_JSON_ARRAY && i < arr->count ? arr->items[i] : NULL;
}

static const char *str(const iot_json *o, const char *k)
{
    const iot_json *v = iot_json_get(o, k);
    return v && v->type == IOT_JSON_STRING ? v->string : "";
}

static int flag(const iot_json *o, const char *k)
{
    const iot_json *v = iot_json_get(o, k);
    return v && v->type == IOT_JSON_BOOL && v->boolean;
}

static double maxd(double a, double b) { return a > b ? a : b; }

static void accumulate(merged *m, const iot_json *p)
{
    if (!m->first)
        m->first = p;
    m->ranks++;
    m->wall = maxd(m->wall, num(iot_json_get(p, "wall_time_s")));
    for (int l = 0; l < LEVELS; l++) {
        const iot_json *a = iot_json_get(p, level_names[l]);
        level_stats *s = &m->level[l];
        s->bytes_written += inum(item(a, 0));
        s->bytes_read += inum(item(a, 1));
        s->writes += inum(item(a, 2));
        s->reads += inum(item(a, 3));
        s->write_time = maxd(s->write_time, num(item(a, 4)));
        s->read_time = maxd(s->read_time, num(item(a, 5)));
    }
    const iot_json *posix = iot_json_get(p, "posix");
    m->sync_time = maxd(m->sync_time, num(item(posix, 6)));
    m->meta_time = maxd(m->meta_time, num(item(posix, 7)));
    double io = num(item(posix, 4)) + num(item(posix, 5)) + num(item(posix, 6)) + num(item(posix, 7));
    m->io_max = maxd(m->io_max, io);
    m->io_sum += io;
    m->open_at_exit |= flag(p, "open_at_exit");
    m->time_sampled |= flag(p, "time_sampled");
}

static double mib_s(int64_t bytes, double seconds)
{
    return seconds > 0 ? (double)bytes / (1024.0 * 1024.0) / seconds : 0;
}

/* The application's data is counted at the highest level it used: HDF5
 * dataset calls, else MPI-IO calls, else POSIX. Lower levels can move more
 * (collective buffering rewrites holes) or less (metadata) than the data. */
static int data_level(const merged *m)
{
    const level_stats *h = &m->level[LEVEL_HDF5], *mp = &m->level[LEVEL_MPIIO];
    if (h->writes || h->reads)
        return LEVEL_HDF5;
    if (mp->writes || mp->reads)
        return LEVEL_MPIIO;
    return LEVEL_POSIX;
}

static void write_level(iot_buf *b, const char *key, const level_stats *s, int with_calls)
{
    iot_jw_begin_object(b, key);
    iot_jw_int(b, "bytes_written", s->bytes_written);
    iot_jw_int(b, "bytes_read", s->bytes_read);
    iot_jw_int(b, with_calls ? "write_calls" : "dataset_writes", s->writes);
    iot_jw_int(b, with_calls ? "read_calls" : "dataset_reads", s->reads);
    iot_jw_double(b, "write_time_s", s->write_time);
    iot_jw_double(b, "read_time_s", s->read_time);
}

static void write_phase(iot_buf *b, int id, const merged *m, double *wtime, double *rtime, int64_t *bw,
                        int64_t *br, int64_t *pw, int64_t *pr)
{
    const iot_json *p = m->first;
    int lvl = data_level(m);
    const level_stats *data = &m->level[lvl], *posix = &m->level[LEVEL_POSIX];
    /* a phase's wall time is split between writing and reading by bytes */
    double total = (double)(data->bytes_written + data->bytes_read);
    double wt = total > 0 ? m->wall * (double)data->bytes_written / total : 0;
    double rt = total > 0 ? m->wall * (double)data->bytes_read / total : 0;
    *wtime += wt;
    *rtime += rt;
    *bw += data->bytes_written;
    *br += data->bytes_read;
    *pw += posix->bytes_written;
    *pr += posix->bytes_read;
    iot_jw_begin_object(b, NULL);
    iot_jw_int(b, "id", id);
    iot_jw_string(b, "kind", str(p, "kind"));
    iot_jw_string(b, "file", str(p, "file"));
    iot_jw_int(b, "occurrence", inum(iot_json_get(p, "occurrence")));
    iot_jw_value(b, "created", iot_json_get(p, "created"));
    iot_jw_bool(b, "open_at_exit", m->open_at_exit);
    iot_jw_value(b, "driver", iot_json_get(p, "driver"));
    iot_jw_value(b, "file_system", iot_json_get(p, "file_system"));
    iot_jw_value(b, "mpiio_driver", iot_json_get(p, "mpiio_driver"));
    iot_jw_int(b, "ranks", m->ranks);
    iot_jw_string(b, "data_level", level_names[lvl]);
    iot_jw_int(b, "bytes_written", data->bytes_written);
    iot_jw_int(b, "bytes_read", data->bytes_read);
    iot_jw_double(b, "wall_time_s", m->wall);
    iot_jw_double(b, "bandwidth_mib_s", mib_s(data->bytes_written + data->bytes_read, m->wall));
    iot_jw_double(b, "write_bandwidth_mib_s", mib_s(data->bytes_written, wt));
    iot_jw_double(b, "read_bandwidth_mib_s", mib_s(data->bytes_read, rt));
    if (data->bytes_written > 0)
        iot_jw_double(b, "write_amplification", (double)posix->bytes_written / (double)data->bytes_written);
    else
        iot_jw_null(b, "write_amplification");
    iot_jw_double(b, "io_time_s", m->io_max);
    iot_jw_double(b, "io_time_sum_s", m->io_sum);
    iot_jw_bool(b, "time_sampled", m->time_sampled);
    write_level(b, "posix", posix, 1);
    iot_jw_double(b, "sync_time_s", m->sync_time);
    iot_jw_double(b, "meta_time_s", m->meta_time);
    iot_jw_end_object(b);
    write_level(b, "mpiio", &m->level[LEVEL_MPIIO], 1);
    iot_jw_end_object(b);
    write_level(b, "hdf5", &m->level[LEVEL_HDF5], 0);
    iot_jw_end_object(b);
    iot_jw_value(b, "settings", iot_json_get(p, "settings"));
    const iot_json *hints = iot_json_get(p, "mpi_hints");
    if (hints)
        iot_jw_value(b, "mpi_hints", hints);
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
    iot_jw_begin_array(b, "command");
    FILE *f = fopen("/proc/self/cmdline", "rb");
    if (f) {
        char arg[4096];
        size_t n = 0;
        int c;
        while ((c = fgetc(f)) != EOF) {
            if (c == 0 || n + 1 == sizeof arg) {
                arg[n] = 0;
                iot_jw_string(b, NULL, arg);
                n = 0;
            } else {
                arg[n++] = (char)c;
            }
        }
        fclose(f);
    }
    iot_jw_end_array(b);
    iot_jw_string(b, "mpi_library", iot_g.mpi_library[0] ? iot_g.mpi_library : NULL);
    iot_jw_string(b, "hdf5_library", iot_g.hdf5_library[0] ? iot_g.hdf5_library : NULL);
    iot_jw_string(b, "timer", iot_use_tsc ? "tsc" : "clock_gettime");
    iot_jw_double(b, "wall_time_s", iot_ticks_to_seconds(iot_ticks() - iot_g.t_init));
    iot_jw_end_object(b);
}

static void write_settings(iot_buf *b)
{
    iot_jw_begin_object(b, "settings");
    iot_jw_string(b, "path", iot_g.settings_path);
    const char *status = !iot_g.settings_path ? "none" : iot_g.settings ? "loaded" : "rejected";
    iot_jw_string(b, "status", status);
    iot_jw_string(b, "message", iot_g.settings_error);
    if (iot_g.settings) {
        char *doc = iot_settings_to_json(iot_g.settings);
        iot_json *d = doc ? iot_json_parse(doc, strlen(doc), NULL, 0) : NULL;
        iot_jw_value(b, "document", d);
        iot_json_free(d);
        free(doc);
    }
    iot_jw_end_object(b);
}

static char *build_report(char **ranks, int nranks)
{
    iot_json **parsed = calloc((size_t)nranks, sizeof *parsed);
    size_t cap = 64, nm = 0;
    merged *m = calloc(cap, sizeof *m);
    char **keys = calloc(cap, sizeof *keys);
    if (!parsed || !m || !keys) {
        free(parsed);
        free(m);
        free(keys);
        return NULL;
    }
    for (int r = 0; r < nranks; r++) {
        parsed[r] = ranks[r] ? iot_json_parse(ranks[r], strlen(ranks[r]), NULL, 0) : NULL;
        const iot_json *phases = iot_json_get(parsed[r], "phases");
        if (!phases || phases->type != IOT_JSON_ARRAY)
            continue;
        for (size_t i = 0; i < phases->count; i++) {
            const iot_json *p = phases->items[i];
            char key[PATH_MAX + 64];
            snprintf(key, sizeof key, "%s|%lld|%s", str(p, "kind"), (long long)inum(iot_json_get(p, "occurrence")),
                     str(p, "file"));
            size_t k = 0;
            while (k < nm && strcmp(keys[k], key))
                k++;
            if (k == nm) {
                if (nm == cap) {
                    merged *mm = realloc(m, 2 * cap * sizeof *m);
                    char **kk = mm ? realloc(keys, 2 * cap * sizeof *keys) : NULL;
                    if (mm)
                        m = mm;
                    if (!kk)
                        continue;
                    keys = kk;
                    memset(m + cap, 0, cap * sizeof *m);
                    cap *= 2;
                }
                keys[nm] = strdup(key);
                if (!keys[nm])
                    continue;
                nm++;
            }
            accumulate(&m[k], p);
        }
    }

    iot_buf b;
    iot_buf_init(&b);
    iot_jw_begin_object(&b, NULL);
    iot_jw_int(&b, "version", IOT_REPORT_VERSION);
    iot_jw_string(&b, "kind", "iotuner-run-report");
    iot_jw_string(&b, "iotuner", iot_version());
    char when[32];
    time_t now = time(NULL);
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    iot_jw_string(&b, "created", when);
    write_run(&b);
    write_settings(&b);
    double wtime = 0, rtime = 0, io = 0;
    int64_t bw = 0, br = 0, pw = 0, pr = 0;
    iot_jw_begin_array(&b, "phases");
    for (size_t k = 0; k < nm; k++) {
        write_phase(&b, (int)k, &m[k], &wtime, &rtime, &bw, &br, &pw, &pr);
        io += m[k].io_max;
    }
    iot_jw_end_array(&b);
    iot_jw_begin_object(&b, "totals");
    iot_jw_int(&b, "phases", (int64_t)nm);
    iot_jw_int(&b, "bytes_written", bw);
    iot_jw_int(&b, "bytes_read", br);
    iot_jw_double(&b, "write_time_s", wtime);
    iot_jw_double(&b, "read_time_s", rtime);
    iot_jw_double(&b, "io_time_s", io);
    iot_jw_double(&b, "write_bandwidth_mib_s", mib_s(bw, wtime));
    iot_jw_double(&b, "read_bandwidth_mib_s", mib_s(br, rtime));
    iot_jw_int(&b, "posix_bytes_written", pw);
    iot_jw_int(&b, "posix_bytes_read", pr);
    iot_jw_end_object(&b);
    iot_smart_merge_json(&b, (const iot_json *const *)parsed, nranks);
    iot_jw_begin_array(&b, "warnings");
    if (iot_g.settings_error)
        iot_jw_string(&b, NULL, iot_g.settings_error);
    for (size_t i = 0; i < iot_g.nwarnings; i++)
        iot_jw_string(&b, NULL, iot_g.warnings[i]);
    iot_jw_end_array(&b);
    iot_jw_end_object(&b);

    for (int r = 0; r < nranks; r++)
        iot_json_free(parsed[r]);
    for (size_t k = 0; k < nm; k++)
        free(keys[k]);
    free(parsed);
    free(m);
    free(keys);
    return iot_buf_take(&b);
}

static void write_file(const char *path, const char *text)
{
    char tmp[PATH_MAX + 32];
    snprintf(tmp, sizeof tmp, "%s.tmp.%d", path, (int)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f) {
        fprintf(stderr, "iotuner: warning: cannot write the run report to %s\n", path);
        return;
    }
    int ok = fputs(text, f) >= 0 && fputs("\n", f) >= 0;
    ok = (fclose(f) == 0) && ok;
    if (!ok || rename(tmp, path) != 0) {
        fprintf(stderr, "iotuner: warning: cannot write the run report to %s\n", path);
        unlink(tmp);
    }
}

void iot_report_write(void)
{
    if (!iot_g.report_path)
        return;
    char *mine = rank_json();
    if (!mine)
        mine = strdup("{\"phases\":[],\"smart\":null}");
    char **all = NULL;
    int n = 0;
    if (iot_g.mpi_initialized) {
        iot_mpi_gather_text(mine ? mine : "{\"phases\":[],\"smart\":null}", &all, &n);
    } else if (mine) {
        all = malloc(sizeof *all);
        if (all) {
            all[0] = mine;
            mine = NULL;
            n = 1;
        }
    }
    if (iot_g.rank == 0 && all) {
        char *report = build_report(all, n);
        if (report)
            write_file(iot_g.report_path, report);
        free(report);
    }
    for (int i = 0; i < n; i++)
        free(all[i]);
    free(all);
    free(mine);
}
