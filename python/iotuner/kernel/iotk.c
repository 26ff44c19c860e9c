/* Support of an I/O kernel made by `iotuner kernel` (see iotk.h).
 *
 * Loop reduction: a reduced loop runs max(1, ceil(F * trips)) of its trips,
 * F = IOTK_FRACTION. Only the outermost reduced loop running at a time is cut;
 * a loop entered inside it runs whole, so factors never multiply. At exit the
 * counts go to $IOTUNER_KERNEL_STATS/loops.<pid>.json when that directory is
 * set: the validation scales the kernel's bytes by trips / run from them.
 *
 * $IOTUNER_KERNEL_LOOP_FRACTION overrides F at run time (the validation runs
 * the kernel whole with 1). iotk_open_path() also records each file opened
 * and the reduced loop running then, so each phase gets its own factor.
 *
 * Path switching: iotk_path() moves a path the kernel writes under
 * IOTK_PATH_PREFIX (or $IOTUNER_KERNEL_PATH_PREFIX), creating the directories
 * it needs. A path it only reads moves only when the kernel wrote that file
 * there: the application's inputs stay where they are. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "iotk.h"

#ifndef IOTK_FRACTION
#define IOTK_FRACTION 1.0
#endif
#ifndef IOTK_PATH_PREFIX
#define IOTK_PATH_PREFIX ""
#endif
#ifndef IOTK_NLOOPS
#define IOTK_NLOOPS 0
#endif

struct iotk_stats {
    long long entries, reduced_entries, trips, run;
};

static struct iotk_stats stats[IOTK_NLOOPS + 1];
static int active;      /* reduced loops running now */
static int active_id;   /* the outermost of them */
static int registered;
static double fraction = -1.0;

#define IOTK_MAX_OPENS 100000
struct iotk_open {
    char *path;
    int loop;
};
static struct iotk_open *opens;
static long nopens, opens_cap;

static void json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fprintf(f, "\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            fprintf(f, "\\u%04x", (unsigned char)*s);
        else
            fputc(*s, f);
    }
    fputc('"', f);
}

static void dump(void)
{
    const char *dir = getenv("IOTUNER_KERNEL_STATS");
    if (!dir || !*dir)
        return;
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/loops.%ld.json", dir, (long)getpid());
    FILE *f = fopen(path, "w");
    if (!f)
        return;
    fprintf(f, "{\"fraction\": %.17g, \"loops\": [", fraction);
    const char *sep = "";
    for (int i = 0; i <= IOTK_NLOOPS; i++) {
        if (!stats[i].entries)
            continue;
        fprintf(f, "%s{\"id\": %d, \"entries\": %lld, \"reduced_entries\": %lld, \"trips\": %lld, \"run\": %lld}", sep,
                i, stats[i].entries, stats[i].reduced_entries, stats[i].trips, stats[i].run);
        sep = ", ";
    }
    fprintf(f, "], \"opens\": [");
    for (long i = 0; i < nopens; i++) {
        fprintf(f, "%s[", i ? ", " : "");
        json_string(f, opens[i].path);
        fprintf(f, ", %d]", opens[i].loop);
    }
    fprintf(f, "]}\n");
    fclose(f);
}

static void start(void)
{
    if (registered)
        return;
    registered = 1;
    const char *env = getenv("IOTUNER_KERNEL_LOOP_FRACTION");
    char *end;
    double f = env ? strtod(env, &end) : -1.0;
    fraction = (env && end != env && f > 0.0 && f <= 1.0) ? f : IOTK_FRACTION;
    if (getenv("IOTUNER_KERNEL_STATS"))
        atexit(dump);
}

struct iotk_loop iotk_loop_enter(int id, long long trips)
{
    struct iotk_loop loop = {id, 0, trips, LLONG_MAX, 0};
    start();
    if (id >= 0 && id <= IOTK_NLOOPS)
        stats[id].entries++;
    if (trips > 0 && active == 0 && fraction < 1.0) {
        long long keep = (long long)(fraction * (double)trips);
        if ((double)keep < fraction * (double)trips)
            keep++; /* ceil */
        loop.limit = keep < 1 ? 1 : keep;
        loop.reduced = 1;
        active_id = id;
    }
    active += loop.reduced;
    return loop;
}

void iotk_loop_leave(struct iotk_loop *loop)
{
    if (!loop->reduced)
        return;
    active--;
    if (loop->id < 0 || loop->id > IOTK_NLOOPS)
        return;
    long long ran = loop->done < loop->limit ? loop->done : loop->limit;
    stats[loop->id].reduced_entries++;
    stats[loop->id].trips += loop->trips;
    stats[loop->id].run += ran;
}

static void make_parents(char *path)
{
    for (char *p = strchr(path + 1, '/'); p; p = strchr(p + 1, '/')) {
        *p = '\0';
        if (mkdir(path, 0777) != 0 && errno != EEXIST) {
            *p = '/';
            return;
        }
        *p = '/';
    }
}

void *iotk_malloc(size_t size)
{
    void *p = malloc(size);
    return p ? memset(p, 0, size) : p; /* a write gives each page its own frame (not the zero page) */
}

void *iotk_calloc(size_t count, size_t size)
{
    void *p = calloc(count, size); /* checks count * size for overflow */
    return p ? memset(p, 0, count * size) : p;
}

int iotk_open_writes(int flags)
{
    return (flags & O_ACCMODE) != O_RDONLY || (flags & (O_CREAT | O_TRUNC)) != 0;
}

int iotk_fopen_writes(const char *mode)
{
    return mode && strpbrk(mode, "wa+") != NULL;
}

const char *iotk_open_path(const char *path, int writes)
{
    const char *out = iotk_path(path, writes);
    start();
    if (!out || !getenv("IOTUNER_KERNEL_STATS") || nopens >= IOTK_MAX_OPENS)
        return out;
    if (nopens == opens_cap) {
        long cap = opens_cap ? 2 * opens_cap : 64;
        struct iotk_open *grown = realloc(opens, (size_t)cap * sizeof *grown);
        if (!grown)
            return out;
        opens = grown;
        opens_cap = cap;
    }
    char *copy = NULL;
    if (out[0] != '/' && strchr(out, ':') == NULL) {
        char cwd[PATH_MAX];
        if (getcwd(cwd, sizeof cwd) && asprintf(&copy, "%s/%s", cwd, out) < 0)
            copy = NULL;
    } else {
        copy = strdup(out);
    }
    if (copy) {
        opens[nopens].path = copy;
        opens[nopens].loop = active ? active_id : 0;
        nopens++;
    }
    return out;
}

const char *iotk_path(const char *path, int writes)
{
    static __thread char ring[8][PATH_MAX];
    static __thread unsigned next;
    const char *prefix = getenv("IOTUNER_KERNEL_PATH_PREFIX");
    if (!prefix || !*prefix)
        prefix = IOTK_PATH_PREFIX;
    if (!path || !*prefix)
        return path;
    /* ROMIO file-system prefixes ("ufs:", "testfs:") stay in front */
    const char *fs_end = path;
    while ((*fs_end >= 'a' && *fs_end <= 'z') || (*fs_end >= '0' && *fs_end <= '9'))
        fs_end++;
    size_t fs_len = (*fs_end == ':' && fs_end > path + 1) ? (size_t)(fs_end - path) + 1 : 0;
    const char *rest = path + fs_len;
    size_t plen = strlen(prefix);
    while (plen > 1 && prefix[plen - 1] == '/')
        plen--;
    if (strncmp(rest, prefix, plen) == 0 && (rest[plen] == '/' || rest[plen] == '\0'))
        return path; /* already under the prefix */
    char cwd[PATH_MAX] = "";
    if (rest[0] != '/' && !getcwd(cwd, sizeof cwd))
        return path;
    char *out = ring[next++ % 8];
    int n = snprintf(out, PATH_MAX, "%.*s%.*s%s%s%s", (int)fs_len, path, (int)plen, prefix, cwd,
                     rest[0] == '/' ? "" : "/", rest);
    if (n < 0 || n >= PATH_MAX)
        return path;
    if (!writes)
        return access(out + fs_len, F_OK) == 0 ? out : path; /* written by the kernel, else an input */
    make_parents(out + fs_len);
    return out;
}
