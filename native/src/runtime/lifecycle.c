/* The lifecycle core: start-up (the library's constructor), the start and
 * end of an MPI run (forwarded by mpi.c), shutdown (the destructor), and the
 * registry of modules (module.h) it drives. Also what every module shares:
 * the settings, their resolution for a phase, warnings, clocks. */
#include "module.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

iot_state iot_g;
int iot_use_tsc;
IOT_TLS int iot_internal;
IOT_TLS uint32_t iot_sample_gap;
static IOT_TLS uint32_t sample_rng;

uint32_t iot_sample_next_gap(void)
{
    uint32_t x = sample_rng;
    if (__builtin_expect(x == 0, 0))
        x = (uint32_t)__rdtsc() | 1u;
    x ^= x << 13; /* xorshift32 */
    x ^= x >> 17;
    x ^= x << 5;
    sample_rng = x;
    return 1 + x % (2 * IOT_SAMPLE_EVERY - 1);
}

IOT_TLS iot_phase *iot_h5_opening;

static pthread_mutex_t state_lock = PTHREAD_MUTEX_INITIALIZER;

/* ---- modules ---- */

static const iot_module *modules[IOT_MAX_MODULES];
static size_t nmodules;

void iot_module_register(const iot_module *m)
{
    if (nmodules < IOT_MAX_MODULES)
        modules[nmodules++] = m;
}

const iot_module *const *iot_modules(size_t *n)
{
    *n = nmodules;
    return modules;
}

/* ---- clocks ---- */

static uint64_t calib_ticks0;
static struct timespec calib_ts0;

static int kernel_trusts_tsc(void)
{
    char err[64];
    char *text = iot_read_regular_file("/sys/devices/system/clocksource/clocksource0/current_clocksource",
                                       "clock source", 64, NULL, err, sizeof err);
    int tsc = text && !strncmp(text, "tsc", 3);
    free(text);
    return tsc;
}

/* Nanoseconds per tick, from the span since start-up: exact enough for any run. */
static double ns_per_tick(void)
{
    if (!iot_use_tsc)
        return 1.0;
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
    return ns / dt;
}

double iot_ticks_to_seconds(uint64_t ticks)
{
    return iot_use_tsc ? ticks * ns_per_tick() * 1e-9 : ticks * 1e-9;
}

double iot_clock_of(uint64_t ticks)
{
    double mono = iot_use_tsc ? (double)calib_ts0.tv_sec + calib_ts0.tv_nsec * 1e-9 +
                                    ((double)ticks - (double)calib_ticks0) * ns_per_tick() * 1e-9
                              : ticks * 1e-9;
    return mono - iot_g.clock_offset;
}

void *iot_next_symbol(const char *name)
{
    void *p = dlsym(RTLD_NEXT, name);
    return p ? p : dlsym(RTLD_DEFAULT, name);
}

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

const iot_setting *iot_setting_of(const iot_setting *const *list, size_t n, iot_knob_id knob)
{
    for (size_t i = 0; i < n; i++)
        if (list[i]->knob == (int)knob)
            return list[i];
    return NULL;
}

static int same_knob(const iot_setting *a, const iot_setting *b)
{
    return a->layer == b->layer && (a->knob >= 0 ? a->knob == b->knob : b->knob < 0 && !strcmp(a->name, b->name));
}

/* Which groups (the first 64) of the user's document matched a dataset on this rank, by bit. */
static _Atomic uint64_t pattern_hits;

uint64_t iot_settings_pattern_hits(void)
{
    return atomic_load(&pattern_hits);
}

static void note_pattern_hits(const iot_settings *s, const char *path, const char *dataset)
{
    for (size_t g = 0; g < s->ngroups && g < 64; g++)
        if (s->groups[g].dataset_glob && !(atomic_load(&pattern_hits) >> g & 1) &&
            iot_group_matches(&s->groups[g], path, dataset))
            atomic_fetch_or(&pattern_hits, (uint64_t)1 << g);
}

/* Adds src's settings for the phase to out[0..n), replacing the same knobs. */
static size_t overlay(const iot_settings *src, const iot_phase *ph, const char *dataset, iot_layer layer,
                      const iot_setting **out, size_t n, size_t max)
{
    const iot_setting *got[128];
    size_t m = iot_settings_resolve(src, ph->path, dataset, (int)layer, got, 128);
    if (dataset && src == iot_g.settings)
        note_pattern_hits(src, ph->path, dataset);
    for (size_t i = 0; i < m; i++) {
        size_t k = 0;
        while (k < n && !same_knob(out[k], got[i]))
            k++;
        if (k < n)
            out[k] = got[i];
        else if (n < max)
            out[n++] = got[i];
    }
    return n;
}

size_t iot_resolve(const iot_phase *ph, const char *dataset, iot_layer layer, const iot_setting **out, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < nmodules; i++) {
        const iot_settings *s = modules[i]->settings ? modules[i]->settings(ph) : NULL;
        if (s)
            n = overlay(s, ph, dataset, layer, out, n, max);
    }
    if (iot_g.settings) /* the user's document wins, knob by knob */
        n = overlay(iot_g.settings, ph, dataset, layer, out, n, max);
    return n;
}

/* ---- warnings ---- */

/* `iotuner run` already printed why the document is rejected (IOTUNER_SETTINGS_WARNED): one warning, not two */
static int settings_warned_before;

void iot_warn_settings_once(void)
{
    if (iot_g.warned || !iot_g.settings_error)
        return;
    iot_g.warned = 1;
    if (iot_g.rank == 0 && !settings_warned_before)
        fprintf(stderr, "iotuner: warning: %s; running with the application's own settings\n", iot_g.settings_error);
}

static void add_warning(const char *msg, int printed)
{
    pthread_mutex_lock(&state_lock);
    if (iot_g.nwarnings < IOT_MAX_WARNINGS) {
        char **w = realloc(iot_g.warnings, (iot_g.nwarnings + 1) * sizeof *w);
        if (w) {
            iot_g.warnings = w;
            w[iot_g.nwarnings] = strdup(msg);
            if (w[iot_g.nwarnings])
                iot_g.warning_printed[iot_g.nwarnings++] = (unsigned char)printed;
        }
    }
    pthread_mutex_unlock(&state_lock);
}

/* loud: printed on rank 0 whatever IOTUNER_VERBOSE says (the report then says it was, so `iotuner run` does
 * not print it twice) */
static void vwarn(int loud, const char *fmt, va_list ap)
{
    char msg[512];
    vsnprintf(msg, sizeof msg, fmt, ap);
    int printed = loud ? iot_g.rank == 0 : iot_g.verbose;
    add_warning(msg, printed);
    if (printed)
        fprintf(stderr, loud ? "iotuner: warning: %s\n" : "iotuner: %s\n", msg);
}

void iot_warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vwarn(0, fmt, ap);
    va_end(ap);
}

void iot_warn_once(int *flag, const char *fmt, ...)
{
    pthread_mutex_lock(&state_lock);
    int first = !*flag;
    *flag = 1;
    pthread_mutex_unlock(&state_lock);
    if (!first)
        return;
    va_list ap;
    va_start(ap, fmt);
    vwarn(1, fmt, ap);
    va_end(ap);
}

/* ---- start and end ---- */

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

static int flag_env(const char *name)
{
    const char *v = getenv(name);
    return v && *v && strcmp(v, "0") != 0;
}

/* After the modules registered (priority 101), before the application's main. */
__attribute__((constructor(102))) static void iot_start(void)
{
    iot_internal++;
    iot_g.disabled = flag_env("IOTUNER_DISABLE") || is_launcher_process() || iot_mpi_foreign_abi();
    iot_g.verbose = flag_env("IOTUNER_VERBOSE");
    settings_warned_before = flag_env("IOTUNER_SETTINGS_WARNED");
    iot_g.nprocs = 1;
    iot_g.nnodes = 1;
    iot_use_tsc = kernel_trusts_tsc() && !getenv("IOTUNER_NO_TSC");
    clock_gettime(CLOCK_MONOTONIC, &calib_ts0);
    calib_ticks0 = __rdtsc();
    iot_g.t_init = iot_ticks();
    if (!iot_g.disabled) {
        iot_paths_init();
        load_settings();
        iot_g.start_time = time(NULL);
        const char *rp = getenv("IOTUNER_REPORT"), *lp = getenv("IOTUNER_LOGPATH");
        if (rp && *rp)
            iot_g.report_path = strdup(rp);
        else if (lp && *lp)
            iot_g.log_dir = strdup(lp);
        for (size_t i = 0; i < nmodules; i++)
            if (modules[i]->init)
                modules[i]->init();
    }
    iot_internal--;
}

static void cleanup(void)
{
    for (size_t i = nmodules; i-- > 0;)
        if (modules[i]->cleanup)
            modules[i]->cleanup();
}

void iot_lifecycle_mpi_started(void)
{
    iot_g.mpi_initialized = 1;
    iot_warn_settings_once();
}

void iot_lifecycle_mpi_finishing(void)
{
    if (iot_g.mpi_finalized)
        return;
    iot_g.mpi_finalized = 1;
    iot_report_write(); /* collective on the run's communicator */
    cleanup();
}

/* A process without MPI_Init reports at exit: a serial program. */
__attribute__((destructor)) static void iot_stop(void)
{
    if (iot_g.disabled || iot_g.mpi_initialized)
        return;
    iot_internal++;
    iot_warn_settings_once();
    iot_report_write();
    cleanup();
    iot_internal--;
}
