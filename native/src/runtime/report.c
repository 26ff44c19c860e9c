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
    iot_jw_int(&b, "bytes_written", (int64_t)atomic_load(&ph->bytes_written));
    iot_jw_int(&b, "bytes_read", (int64_t)atomic_load(&ph->bytes_read));
    iot_jw_int(&b, "write_calls", (int64_t)atomic_load(&ph->writes));
    iot_jw_int(&b, "read_calls", (int64_t)atomic_load(&ph->reads));
    iot_jw_double(&b, "write_time_s", iot_ticks_to_seconds(atomic_load(&ph->write_ticks)));
    iot_jw_double(&b, "read_time_s", iot_ticks_to_seconds(atomic_load(&ph->read_ticks)));
    iot_jw_double(&b, "sync_time_s", iot_ticks_to_seconds(atomic_load(&ph->sync_ticks)));
    iot_jw_double(&b, "meta_time_s", iot_ticks_to_seconds(atomic_load(&ph->meta_ticks)));
    iot_jw_int(&b, "h5_writes", (int64_t)atomic_load(&ph->h5_writes));
    iot_jw_int(&b, "h5_reads", (int64_t)atomic_load(&ph->h5_reads));
    iot_jw_double(&b, "h5_write_time_s", iot_ticks_to_seconds(atomic_load(&ph->h5_write_ticks)));
    iot_jw_double(&b, "h5_read_time_s", iot_ticks_to_seconds(atomic_load(&ph->h5_read_ticks)));
    iot_jw_bool(&b, "time_sampled", atomic_load(&ph->time_sampled));
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

/* This rank's phases that did something. */
static char *rank_json(void)
{
    size_t n;
    iot_phase **all = iot_phases(&n);
    iot_buf b;
    iot_buf_init(&b);
    iot_jw_begin_array(&b, NULL);
    for (size_t i = 0; all && i < n; i++) {
        iot_phase *ph = all[i];
        if (ph->kind == IOT_KIND_POSIX && !atomic_load(&ph->bytes_written) && !atomic_load(&ph->bytes_read))
            continue;
        char *j = iot_phase_to_json(ph);
        if (j) {
            if (b.len > 1)
                iot_buf_puts(&b, ",");
            iot_buf_puts(&b, j);
            free(j);
        }
    }
    iot_buf_puts(&b, "]");
    free(all);
    return iot_buf_take(&b);
}

/* ---- merging across ranks ---- */

typedef struct {
    const iot_json *first; /* record of the lowest rank: names, settings, hints */
    int ranks;
    double wall, write_time, read_time, sync_time, meta_time, io_max, io_sum, h5w_time, h5r_time;
    int64_t bw, br, wc, rc, h5w, h5r;
    int open_at_exit;
    int time_sampled;
} merged;

static double num(const iot_json *o, const char *k)
{
    const iot_json *v = iot_json_get(o, k);
    return v && v->type == IOT_JSON_NUMBER ? v->number : 0;
}

static int64_t inum(const iot_json *o, const char *k)
{
    const iot_json *v = iot_json_get(o, k);
    return v && v->type == IOT_JSON_NUMBER ? (v->is_integer ? v->integer : (int64_t)v->number) : 0;
}

static const char *str(const iot_json *o, const char *k)
{
    const iot_json *v = iot_json_get(o, k);
    return v && v->type == IOT_JSON_STRING ? v->string : "";
}

static double maxd(double a, double b) { return a > b ? a : b; }

static void accumulate(merged *m, const iot_json *p)
{
    if (!m->first)
        m->first = p;
    m->ranks++;
    m->wall = maxd(m->wall, num(p, "wall_time_s"));
    m->write_time = maxd(m->write_time, num(p, "write_time_s"));
    m->read_time = maxd(m->read_time, num(p, "read_time_s"));
    m->sync_time = maxd(m->sync_time, num(p, "sync_time_s"));
    m->meta_time = maxd(m->meta_time, num(p, "meta_time_s"));
    double io = num(p, "write_time_s") + num(p, "read_time_s") + num(p, "sync_time_s") + num(p, "meta_time_s");
    m->io_max = maxd(m->io_max, io);
    m->io_sum += io;
    m->h5w_time = maxd(m->h5w_time, num(p, "h5_write_time_s"));
    m->h5r_time = maxd(m->h5r_time, num(p, "h5_read_time_s"));
    m->bw += inum(p, "bytes_written");
    m->br += inum(p, "bytes_read");
    m->wc += inum(p, "write_calls");
    m->rc += inum(p, "read_calls");
    m->h5w += inum(p, "h5_writes");
    m->h5r += inum(p, "h5_reads");
    const iot_json *o = iot_json_get(p, "open_at_exit");
    m->open_at_exit |= o && o->type == IOT_JSON_BOOL && o->boolean;
    const iot_json *ts = iot_json_get(p, "time_sampled");
    m->time_sampled |= ts && ts->type == IOT_JSON_BOOL && ts->boolean;
}

static double mib_s(int64_t bytes, double seconds)
{
    return seconds > 0 ? (double)bytes / (1024.0 * 1024.0) / seconds : 0;
}

static void write_phase(iot_buf *b, int id, const merged *m, double *wtime, double *rtime)
{
    const iot_json *p = m->first;
    /* a phase's wall time is split between writing and reading by bytes */
    double total = (double)(m->bw + m->br);
    double wt = total > 0 ? m->wall * (double)m->bw / total : 0, rt = total > 0 ? m->wall * (double)m->br / total : 0;
    *wtime += wt;
    *rtime += rt;
    iot_jw_begin_object(b, NULL);
    iot_jw_int(b, "id", id);
    iot_jw_string(b, "kind", str(p, "kind"));
    iot_jw_string(b, "file", str(p, "file"));
    iot_jw_int(b, "occurrence", inum(p, "occurrence"));
    iot_jw_value(b, "created", iot_json_get(p, "created"));
    iot_jw_bool(b, "open_at_exit", m->open_at_exit);
    iot_jw_value(b, "driver", iot_json_get(p, "driver"));
    iot_jw_value(b, "file_system", iot_json_get(p, "file_system"));
    iot_jw_value(b, "mpiio_driver", iot_json_get(p, "mpiio_driver"));
    iot_jw_int(b, "ranks", m->ranks);
    iot_jw_int(b, "bytes_written", m->bw);
    iot_jw_int(b, "bytes_read", m->br);
    iot_jw_int(b, "write_calls", m->wc);
    iot_jw_int(b, "read_calls", m->rc);
    iot_jw_double(b, "wall_time_s", m->wall);
    iot_jw_double(b, "io_time_s", m->io_max);
    iot_jw_double(b, "io_time_sum_s", m->io_sum);
    iot_jw_double(b, "write_time_s", m->write_time);
    iot_jw_double(b, "read_time_s", m->read_time);
    iot_jw_double(b, "sync_time_s", m->sync_time);
    iot_jw_double(b, "meta_time_s", m->meta_time);
    iot_jw_bool(b, "time_sampled", m->time_sampled);
    iot_jw_double(b, "bandwidth_mib_s", mib_s(m->bw + m->br, m->wall));
    iot_jw_double(b, "write_bandwidth_mib_s", mib_s(m->bw, wt));
    iot_jw_double(b, "read_bandwidth_mib_s", mib_s(m->br, rt));
    iot_jw_begin_object(b, "hdf5");
    iot_jw_int(b, "dataset_writes", m->h5w);
    iot_jw_int(b, "dataset_reads", m->h5r);
    iot_jw_double(b, "write_time_s", m->h5w_time);
    iot_jw_double(b, "read_time_s", m->h5r_time);
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
        if (!parsed[r] || parsed[r]->type != IOT_JSON_ARRAY)
            continue;
        for (size_t i = 0; i < parsed[r]->count; i++) {
            const iot_json *p = parsed[r]->items[i];
            char key[PATH_MAX + 64];
            snprintf(key, sizeof key, "%s|%lld|%s", str(p, "kind"), (long long)inum(p, "occurrence"), str(p, "file"));
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
    int64_t bw = 0, br = 0;
    iot_jw_begin_array(&b, "phases");
    for (size_t k = 0; k < nm; k++) {
        write_phase(&b, (int)k, &m[k], &wtime, &rtime);
        bw += m[k].bw;
        br += m[k].br;
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
    iot_jw_end_object(&b);
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
        mine = strdup("[]");
    char **all = NULL;
    int n = 0;
    if (iot_g.mpi_initialized) {
        iot_mpi_gather_text(mine ? mine : "[]", &all, &n);
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
