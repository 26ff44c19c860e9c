/* The process's state, clocks, sampling and warnings (state.h): a leaf. */
#include "state.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

iot_state iot_g;
int iot_use_tsc;
IOT_TLS int iot_internal;
IOT_TLS int iot_mpi_depth;
IOT_TLS uint32_t iot_sample_gap;
static IOT_TLS uint32_t sample_rng;

static pthread_mutex_t state_lock = PTHREAD_MUTEX_INITIALIZER;

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

/* The functions of a library linked statically into the program with `iotuner link-flags`: its link object
 * (native/src/link/link.c) hands them over from a constructor, before main. */
#define MAX_LINKED 128
typedef struct {
    const char *name;
    void *addr;
} linked_symbol;
static linked_symbol linked[MAX_LINKED];
static size_t nlinked;

IOT_EXPORT void iotuner_link_register(const char *const *names, void *const *addrs, size_t n)
{
    for (size_t i = 0; i < n && nlinked < MAX_LINKED; i++)
        if (addrs[i])
            linked[nlinked++] = (linked_symbol){names[i], addrs[i]};
}

void *iot_linked_symbol(const char *name)
{
    for (size_t i = 0; i < nlinked; i++)
        if (!strcmp(linked[i].name, name))
            return linked[i].addr;
    return NULL;
}

/* The program's own when it was linked in (iot_linked_symbol). RTLD_NEXT finds the definition after ours
 * when the library is preloaded; loaded later (dlopen), the process's first definition is the real one,
 * unless it is ours (the library exports PMPI_ names too). */
void *iot_next_symbol(const char *name)
{
    void *p = iot_linked_symbol(name);
    if (p)
        return p;
    p = dlsym(RTLD_NEXT, name);
    if (p)
        return p;
    p = dlsym(RTLD_DEFAULT, name);
    Dl_info mine, found;
    if (p && dladdr((void *)iot_next_symbol, &mine) && dladdr(p, &found) && found.dli_fbase == mine.dli_fbase)
        return NULL;
    return p;
}

void *iot_any_symbol(const char *name)
{
    void *p = iot_linked_symbol(name);
    return p ? p : dlsym(RTLD_DEFAULT, name);
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

void iot_clock_start(void)
{
    iot_use_tsc = kernel_trusts_tsc() && !getenv("IOTUNER_NO_TSC");
    clock_gettime(CLOCK_MONOTONIC, &calib_ts0);
    calib_ticks0 = __rdtsc();
    iot_g.t_init = iot_ticks();
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

/* ---- what the layers tell ---- */

void iot_state_disable(void)
{
    iot_g.disabled = 1;
}

void iot_state_used(iot_phase_kind kind)
{
    if ((unsigned)kind < IOT_KINDS)
        iot_g.used[kind] = 1;
}

void iot_state_library(iot_phase_kind kind, const char *version)
{
    if ((unsigned)kind < IOT_KINDS)
        snprintf(iot_g.library[kind], sizeof iot_g.library[kind], "%s", version);
}

void iot_state_rank(int rank)
{
    iot_g.rank = rank;
}

void iot_state_mpi_unseen(int rank)
{
    iot_g.rank = rank;
    iot_g.mpi_unseen = 1;
}

void iot_state_incomplete(const char *why)
{
    if (!iot_g.incomplete)
        iot_g.incomplete = strdup(why);
}

static int launch_env(const char *const *vars, size_t n, int none)
{
    for (size_t i = 0; i < n; i++) {
        const char *v = getenv(vars[i]);
        if (v && *v)
            return atoi(v);
    }
    return none;
}

/* Launchers and proxies also get the preload; they must stay silent. */
int iot_is_launcher(pid_t pid)
{
    char link[64], exe[PATH_MAX];
    if (pid)
        snprintf(link, sizeof link, "/proc/%d/exe", (int)pid);
    else
        snprintf(link, sizeof link, "/proc/self/exe");
    ssize_t n = readlink(link, exe, sizeof exe - 1);
    if (n <= 0)
        return 0;
    exe[n] = 0;
    const char *base = strrchr(exe, '/');
    base = base ? base + 1 : exe;
    static const char *names[] = {"mpiexec", "mpirun", "hydra_", "srun", "slurmstepd", "orterun", "prte", "orted"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strncmp(base, names[i], strlen(names[i])))
            return 1;
    return 0;
}

int iot_launch_rank(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"};
    return launch_env(vars, sizeof vars / sizeof *vars, 0);
}

int iot_launch_size(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS", "SLURM_NPROCS"};
    return launch_env(vars, sizeof vars / sizeof *vars, 0);
}

/* ---- warnings ---- */

void iot_warn_settings_once(void)
{
    if (iot_g.warned || !iot_g.settings_error)
        return;
    iot_g.warned = 1;
    /* `iotuner run` already printed why the document is rejected: one warning, not two */
    if (iot_g.rank == 0 && !iot_g.settings_warned_before)
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
