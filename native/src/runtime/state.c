/* Process state: settings, phase registry, timers, warnings. */
#include "rt.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <unistd.h>

iot_state iot_g;
int iot_use_tsc;
IOT_TLS int iot_internal;
IOT_TLS uint32_t iot_rng;
IOT_TLS iot_phase *iot_h5_opening;
iot_phase *_Atomic iot_fd_phase[IOT_FD_TABLE];

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static iot_phase **registry;
static size_t nphases, capphases;

/* Phases past this many are not recorded (their POSIX I/O goes untracked),
 * so a program opening millions of files cannot grow our memory unboundedly. */
#define MAX_PHASES 100000

/* ---- timers ---- */

static uint64_t calib_ticks0;
static struct timespec calib_ts0;

static int kernel_trusts_tsc(void)
{
    FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
    char buf[32] = "";
    if (!f)
        return 0;
    if (!fgets(buf, sizeof buf, f))
        buf[0] = 0;
    fclose(f);
    return !strncmp(buf, "tsc", 3);
}

double iot_ticks_to_seconds(uint64_t ticks)
{
    if (!iot_use_tsc)
        return ticks * 1e-9;
    /* TSC rate from the span since start-up: exact enough for any run */
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    uint64_t t = __rdtsc();
    double ns = (double)(now.tv_sec - calib_ts0.tv_sec) * 1e9 + (double)(now.tv_nsec - calib_ts0.tv_nsec);
    double dt = (double)(t - calib_ticks0);
    if (ns < 1e6 || dt <= 0) { /* under 1 ms since start: measure the rate now */
        struct timespec a, b;
        uint64_t t0 = __rdtsc();
        clock_gettime(CLOCK_MONOTONIC, &a);
        do
            clock_gettime(CLOCK_MONOTONIC, &b);
        while ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < 2000000L);
        dt = (double)(__rdtsc() - t0);
        ns = (double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec);
    }
    return ticks * (ns / dt) * 1e-9;
}

void *iot_next_symbol(const char *name)
{
    void *p = dlsym(RTLD_NEXT, name);
    return p ? p : dlsym(RTLD_DEFAULT, name);
}

/* ---- settings ---- */

static char *read_file(const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "cannot read settings file '%s': %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = 4096, len = 0;
    char *text = malloc(cap);
    while (text) {
        size_t got = fread(text + len, 1, cap - len - 1, f);
        len += got;
        if (got == 0)
            break;
        if (len + 1 == cap) {
            if (cap >= (16u << 20)) {
                snprintf(err, errlen, "settings file '%s' is larger than 16 MiB", path);
                free(text);
                text = NULL;
                break;
            }
            char *t = realloc(text, cap * 2);
            if (!t) {
                free(text);
                text = NULL;
                break;
            }
            text = t;
            cap *= 2;
        }
    }
    if (text && ferror(f)) {
        snprintf(err, errlen, "cannot read settings file '%s': %s", path, strerror(errno));
        free(text);
        text = NULL;
    } else if (text) {
        text[len] = 0;
    } else if (!err[0]) {
        snprintf(err, errlen, "out of memory reading '%s'", path);
    }
    fclose(f);
    return text;
}

static void load_settings(void)
{
    const char *path = getenv("IOTUNER_CONFIG");
    if (!path || !*path)
        return;
    iot_g.settings_path = strdup(path);
    char err[600] = "";
    char *text = read_file(path, err, sizeof err);
    if (text) {
        char why[512];
        iot_g.settings = iot_settings_parse(text, strlen(text), why, sizeof why);
        if (!iot_g.settings)
            snprintf(err, sizeof err, "settings file '%s' rejected: %s", path, why);
        free(text);
    }
    if (err[0])
        iot_g.settings_error = strdup(err);
}

size_t iot_resolve(const iot_phase *ph, const char *dataset, iot_layer layer, const iot_setting **out, size_t max)
{
    const iot_settings *smart = iot_smart_settings(ph);
    size_t n = smart ? iot_settings_resolve(smart, ph->path, dataset, (int)layer, out, max) : 0;
    if (!iot_g.settings)
        return n;
    const iot_setting *user[128];
    size_t m = iot_settings_resolve(iot_g.settings, ph->path, dataset, (int)layer, user, 128);
    for (size_t i = 0; i < m; i++) { /* the user's document wins over smart mode, knob by knob */
        size_t k = 0;
        while (k < n && !(out[k]->layer == user[i]->layer && !strcmp(out[k]->name, user[i]->name)))
            k++;
        if (k < n)
            out[k] = user[i];
        else if (n < max)
            out[n++] = user[i];
    }
    return n;
}

/* Launchers and proxies also get the preload; they must stay silent. */
static int is_launcher_process(void)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return 0;
    exe[n] = 0;
    const char *base = strrchr(exe, '/');
    base = base ? base + 1 : exe;
    static const char *names[] = {"mpiexec", "mpirun", "hydra_", "srun", "slurmstepd", "orterun", "prterun", "prted", "orted"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strncmp(base, names[i], strlen(names[i])))
            return 1;
    return 0;
}

void iot_warn_settings_once(void)
{
    if (iot_g.warned || !iot_g.settings_error)
        return;
    iot_g.warned = 1;
    if (iot_g.rank == 0)
        fprintf(stderr, "iotuner: warning: %s; running with the application's own settings\n", iot_g.settings_error);
}

void iot_warn(const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&registry_lock);
    if (iot_g.nwarnings < 64) {
        char **w = realloc(iot_g.warnings, (iot_g.nwarnings + 1) * sizeof *w);
        if (w) {
            iot_g.warnings = w;
            w[iot_g.nwarnings] = strdup(msg);
            if (w[iot_g.nwarnings])
                iot_g.nwarnings++;
        }
    }
    pthread_mutex_unlock(&registry_lock);
    if (iot_g.verbose)
        fprintf(stderr, "iotuner: %s\n", msg);
}

__attribute__((constructor)) static void iot_init(void)
{
    iot_internal++;
    const char *dis = getenv("IOTUNER_DISABLE");
    iot_g.disabled = dis && *dis && strcmp(dis, "0") != 0;
    const char *verbose = getenv("IOTUNER_VERBOSE");
    iot_g.verbose = verbose && *verbose && strcmp(verbose, "0") != 0;
    iot_g.nprocs = 1;
    iot_g.nnodes = 1;
    if (is_launcher_process())
        iot_g.disabled = 1;
    iot_use_tsc = kernel_trusts_tsc() && !getenv("IOTUNER_NO_TSC");
    clock_gettime(CLOCK_MONOTONIC, &calib_ts0);
    calib_ticks0 = __rdtsc();
    iot_g.t_init = iot_ticks();
    if (!iot_g.disabled) {
        load_settings();
        iot_smart_init();
        const char *rp = getenv("IOTUNER_REPORT");
        if (rp && *rp)
            iot_g.report_path = strdup(rp);
    }
    iot_internal--;
}

/* Serial programs (no MPI_Init) report at exit, if they used HDF5 or MPI-IO. */
__attribute__((destructor)) static void iot_fini(void)
{
    if (iot_g.disabled || iot_g.mpi_initialized)
        return;
    if (!iot_g.used_hdf5 && !iot_g.used_mpiio)
        return;
    iot_internal++;
    iot_warn_settings_once();
    iot_report_write();
    iot_internal--;
}

/* ---- paths ---- */

void iot_normalize_path(const char *path, char *out, size_t outlen)
{
    char tmp[PATH_MAX * 2];
    const char *colon = strchr(path, ':');
    /* ROMIO accepts "ufs:/path", "nfs:...", "testfs:..." prefixes */
    if (colon && colon - path >= 2 && colon - path <= 8 && !memchr(path, '/', (size_t)(colon - path)))
        path = colon + 1;
    if (path[0] == '/') {
        snprintf(tmp, sizeof tmp, "%s", path);
    } else {
        char cwd[PATH_MAX];
        if (!getcwd(cwd, sizeof cwd))
            snprintf(cwd, sizeof cwd, ".");
        snprintf(tmp, sizeof tmp, "%s/%s", cwd, path);
    }
    /* collapse //, /./ and /../ lexically (no symlink resolution: the file may not exist yet) */
    size_t o = 0;
    char *save = NULL;
    out[0] = 0;
    size_t marks[PATH_MAX / 2];
    size_t depth = 0;
    for (char *seg = strtok_r(tmp, "/", &save); seg; seg = strtok_r(NULL, "/", &save)) {
        if (!strcmp(seg, "."))
            continue;
        if (!strcmp(seg, "..")) {
            if (depth)
                o = marks[--depth];
            continue;
        }
        if (depth < sizeof marks / sizeof marks[0])
            marks[depth++] = o;
        size_t n = strlen(seg);
        if (o + n + 2 >= outlen)
            break;
        out[o++] = '/';
        memcpy(out + o, seg, n);
        o += n;
    }
    if (o == 0 && outlen > 1)
        out[o++] = '/';
    out[o] = 0;
}

const char *iot_file_system_of(const char *path)
{
    const char *forced = getenv("IOTUNER_TEST_FSTYPE"); /* tests only: pretend to be on this file system */
    if (forced && *forced)
        return forced;
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash && slash != dir)
        *slash = 0;
    else if (slash)
        slash[1] = 0;
    struct statfs sf;
    if (statfs(dir, &sf) != 0)
        return "unknown";
    return iot_fs_name((int64_t)(unsigned long)sf.f_type);
}

/* ---- phase registry ---- */

iot_phase *iot_phase_begin(iot_phase_kind kind, const char *path, int created)
{
    char norm[PATH_MAX];
    iot_normalize_path(path, norm, sizeof norm);
    iot_phase *ph = calloc(1, sizeof *ph);
    if (!ph)
        return NULL;
    ph->path = strdup(norm);
    if (!ph->path) {
        free(ph);
        return NULL;
    }
    ph->kind = kind;
    ph->created = created;
    ph->open = 1;
    ph->handle = -1;
    ph->xfer_dxpl = -1;
    snprintf(ph->file_system, sizeof ph->file_system, "%s", iot_file_system_of(norm));
    pthread_mutex_lock(&registry_lock);
    if (nphases >= MAX_PHASES) {
        pthread_mutex_unlock(&registry_lock);
        free(ph->path);
        free(ph);
        return NULL;
    }
    if (nphases == capphases) {
        size_t cap = capphases ? capphases * 2 : 64;
        iot_phase **r = realloc(registry, cap * sizeof *r);
        if (!r) {
            pthread_mutex_unlock(&registry_lock);
            free(ph->path);
            free(ph);
            return NULL;
        }
        registry = r;
        capphases = cap;
    }
    for (size_t i = 0; i < nphases; i++)
        if (!strcmp(registry[i]->path, ph->path))
            ph->occurrence++;
    ph->id = (int)nphases;
    registry[nphases++] = ph;
    pthread_mutex_unlock(&registry_lock);
    ph->t_start = iot_ticks();
    return ph;
}

void iot_phase_end(iot_phase *ph)
{
    if (!ph)
        return;
    ph->t_end = iot_ticks();
    ph->open = 0;
}

static void free_phase(iot_phase *ph)
{
    free(ph->path);
    free(ph->checks);
    free(ph->mpi_hints_json);
    free(ph);
}

void iot_phase_abort(iot_phase *ph)
{
    if (!ph)
        return;
    pthread_mutex_lock(&registry_lock);
    for (size_t i = 0; i < nphases; i++) {
        if (registry[i] != ph)
            continue;
        memmove(&registry[i], &registry[i + 1], (nphases - i - 1) * sizeof *registry);
        nphases--;
        for (size_t j = i; j < nphases; j++) {
            registry[j]->id = (int)j;
            if (!strcmp(registry[j]->path, ph->path))
                registry[j]->occurrence--;
        }
        break;
    }
    pthread_mutex_unlock(&registry_lock);
    /* a POSIX fd may still point at it if the failed open left one behind */
    for (int fd = 0; atomic_load(&ph->open_fds) > 0 && fd < IOT_FD_TABLE; fd++)
        if (atomic_load_explicit(&iot_fd_phase[fd], memory_order_relaxed) == ph)
            atomic_store_explicit(&iot_fd_phase[fd], NULL, memory_order_relaxed);
    free_phase(ph);
}

iot_phase *iot_phase_find_open(const char *normpath)
{
    iot_phase *hit = NULL;
    pthread_mutex_lock(&registry_lock);
    for (size_t i = nphases; i-- > 0;) {
        iot_phase *ph = registry[i];
        if (ph->open && ph->kind != IOT_KIND_POSIX && !strcmp(ph->path, normpath)) {
            hit = ph;
            break;
        }
    }
    pthread_mutex_unlock(&registry_lock);
    return hit;
}

iot_phase *iot_phase_find_handle(iot_phase_kind kind, int64_t handle)
{
    iot_phase *hit = NULL;
    pthread_mutex_lock(&registry_lock);
    for (size_t i = nphases; i-- > 0;) {
        iot_phase *ph = registry[i];
        if (ph->open && ph->kind == kind && ph->handle == handle) {
            hit = ph;
            break;
        }
    }
    pthread_mutex_unlock(&registry_lock);
    return hit;
}

void iot_phase_check(iot_phase *ph, const char *layer, const char *name, const char *dataset,
                     const char *requested, const char *effective, iot_status status, const char *reason)
{
    if (!ph)
        return;
    pthread_mutex_lock(&registry_lock);
    iot_check *c = NULL;
    for (size_t i = 0; i < ph->nchecks; i++) {
        iot_check *k = &ph->checks[i];
        if (!strcmp(k->layer, layer) && !strcmp(k->name, name) && !strcmp(k->dataset, dataset ? dataset : "")) {
            c = k;
            break;
        }
    }
    if (!c && ph->nchecks < 512) {
        if (ph->nchecks == ph->capchecks) {
            size_t cap = ph->capchecks ? ph->capchecks * 2 : 16;
            iot_check *k = realloc(ph->checks, cap * sizeof *k);
            if (k) {
                ph->checks = k;
                ph->capchecks = cap;
            }
        }
        if (ph->nchecks < ph->capchecks)
            c = &ph->checks[ph->nchecks++];
    }
    if (c) {
        snprintf(c->layer, sizeof c->layer, "%s", layer);
        snprintf(c->name, sizeof c->name, "%s", name);
        snprintf(c->dataset, sizeof c->dataset, "%s", dataset ? dataset : "");
        snprintf(c->requested, sizeof c->requested, "%s", requested ? requested : "");
        snprintf(c->effective, sizeof c->effective, "%s", effective ? effective : "");
        c->status = status;
        snprintf(c->reason, sizeof c->reason, "%s", reason ? reason : "");
    }
    pthread_mutex_unlock(&registry_lock);
}

void iot_phase_set_hints(iot_phase *ph, char *json)
{
    pthread_mutex_lock(&registry_lock);
    free(ph->mpi_hints_json);
    ph->mpi_hints_json = json;
    pthread_mutex_unlock(&registry_lock);
}

iot_phase **iot_phases(size_t *n)
{
    pthread_mutex_lock(&registry_lock);
    iot_phase **copy = malloc((nphases ? nphases : 1) * sizeof *copy);
    *n = 0;
    if (copy) {
        memcpy(copy, registry, nphases * sizeof *copy);
        *n = nphases;
    }
    pthread_mutex_unlock(&registry_lock);
    return copy;
}
