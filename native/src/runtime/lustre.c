/* Lustre module: layouts, set before a file is created (it subscribes to the
 * file open event), with `lfs setstripe` (any layout, including PFL) or
 * liblustreapi (plain striping) when lfs is absent. Not run on real Lustre
 * here: tested against a recording stand-in lfs. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "module.h"
#include "paths.h"
#include "phases.h"
#include "pmpi.h"

extern char **environ;

static int find_lfs(char *out, size_t outlen)
{
    const char *forced = getenv("IOTUNER_LFS");
    if (forced && *forced) {
        snprintf(out, outlen, "%s", forced);
        return access(out, X_OK) == 0;
    }
    const char *path = getenv("PATH");
    if (!path)
        return 0;
    char dirs[4096];
    snprintf(dirs, sizeof dirs, "%s", path);
    char *save = NULL;
    for (char *d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
        snprintf(out, outlen, "%s/lfs", d);
        if (access(out, X_OK) == 0)
            return 1;
    }
    return 0;
}

/* Runs lfs without our preload; captures the first line of its output. */
static int run_lfs(const char *lfs, char *const argv[], char *line, size_t linelen)
{
    int pipefd[2];
    if (pipe(pipefd) != 0)
        return -1;
    size_t nenv = 0;
    while (environ[nenv])
        nenv++;
    char **env = calloc(nenv + 1, sizeof *env);
    if (!env) {
        close(pipefd[0]);
        close(pipefd[1]);
        return -1;
    }
    size_t k = 0;
    for (size_t i = 0; i < nenv; i++)
        if (strncmp(environ[i], "LD_PRELOAD=", 11) != 0)
            env[k++] = environ[i];
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, pipefd[1], 1);
    posix_spawn_file_actions_adddup2(&fa, pipefd[1], 2);
    posix_spawn_file_actions_addclose(&fa, pipefd[0]);
    pid_t pid;
    int rc = posix_spawn(&pid, lfs, &fa, NULL, argv, env);
    posix_spawn_file_actions_destroy(&fa);
    free(env);
    close(pipefd[1]);
    size_t got = 0;
    char buf[512];
    ssize_t r;
    while ((r = read(pipefd[0], buf, sizeof buf)) > 0)
        for (ssize_t i = 0; i < r; i++)
            if (got + 1 < linelen)
                line[got++] = buf[i];
    line[got] = 0;
    char *nl = strchr(line, '\n');
    if (nl)
        *nl = 0;
    close(pipefd[0]);
    if (rc != 0)
        return -1;
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* The value lfs getstripe prints for one option ("4", or "lmm_stripe_count: 4"). */
static int getstripe(const char *lfs, const char *opt, const char *path, long long *value)
{
    char line[256];
    char *argv[] = {(char *)lfs, "getstripe", (char *)opt, (char *)path, NULL};
    if (run_lfs(lfs, argv, line, sizeof line) != 0)
        return -1;
    const char *p = strrchr(line, ':');
    p = p ? p + 1 : line;
    char *end;
    *value = strtoll(p, &end, 10);
    return end != p ? 0 : -1;
}

typedef int (*llapi_file_create_fn)(const char *, unsigned long long, int, int, int);
static void *lustreapi; /* liblustreapi, when lfs is absent */

static void record_all(iot_phase *ph, const iot_setting **s, size_t n, iot_status st, const char *why)
{
    for (size_t i = 0; i < n; i++)
        iot_phase_check(ph, "lustre", s[i]->name, NULL, s[i]->text, NULL, st, why);
}

/* Sets the layout s[0..n) of the phase's file, about to be created (is_root: by this process). */
static void prepare(iot_phase *ph, const iot_setting **s, size_t n, int truncating, int is_root)
{
    const char *path = ph->path;
    const char *fs = iot_file_system_of(path);
    if (!iot_fs_is_lustre(fs)) {
        char why[160];
        snprintf(why, sizeof why, "the file system is %s, not Lustre: there is no layout to set", fs);
        record_all(ph, s, n, IOT_STATUS_NOT_APPLICABLE, why);
        return;
    }
    if (!is_root)
        return; /* rank 0 of the file's communicator creates it; its report speaks for all */
    struct stat st;
    if (stat(path, &st) == 0) {
        if (!truncating) {
            record_all(ph, s, n, IOT_STATUS_DROPPED,
                       "the file exists and is not being truncated; Lustre sets a layout only at creation");
            return;
        }
        unlink(path); /* truncation would drop the contents anyway; recreate with the layout */
    }
    const iot_setting *layout = iot_setting_of(s, n, IOT_KNOB_LAYOUT), *count = iot_setting_of(s, n, IOT_KNOB_STRIPE_COUNT),
                      *size = iot_setting_of(s, n, IOT_KNOB_STRIPE_SIZE);
    char lfs[PATH_MAX];
    if (!find_lfs(lfs, sizeof lfs)) {
        if (!lustreapi)
            lustreapi = dlopen("liblustreapi.so.1", RTLD_NOW | RTLD_LOCAL);
        if (!lustreapi)
            lustreapi = dlopen("liblustreapi.so", RTLD_NOW | RTLD_LOCAL);
        llapi_file_create_fn create = lustreapi ? (llapi_file_create_fn)dlsym(lustreapi, "llapi_file_create") : NULL;
        if (!create || layout) {
            record_all(ph, s, n, IOT_STATUS_FAILED,
                       layout ? "lfs was not found (a progressive layout needs lfs setstripe)"
                              : "neither lfs nor liblustreapi was found");
            return;
        }
        int rc = create(path, size ? (unsigned long long)size->ints[0] : 0, -1, count ? (int)count->ints[0] : 0, 0);
        record_all(ph, s, n, rc == 0 ? IOT_STATUS_APPLIED : IOT_STATUS_FAILED,
                   rc == 0 ? "set with llapi_file_create; not read back" : "llapi_file_create failed");
        return;
    }

    /* lfs setstripe [layout tokens] path */
    char tokens[512];
    char *argv[48];
    int argc = 0;
    argv[argc++] = lfs;
    argv[argc++] = "setstripe";
    if (layout) {
        snprintf(tokens, sizeof tokens, "%s", layout->text);
        char *save = NULL;
        for (char *t = strtok_r(tokens, " ", &save); t && argc < 44; t = strtok_r(NULL, " ", &save))
            argv[argc++] = t;
    } else {
        char *p = tokens;
        if (count) {
            argv[argc++] = "-c";
            argv[argc++] = p;
            p += sprintf(p, "%lld", (long long)count->ints[0]) + 1;
        }
        if (size) {
            argv[argc++] = "-S";
            argv[argc++] = p;
            sprintf(p, "%lld", (long long)size->ints[0]);
        }
    }
    argv[argc++] = (char *)path;
    argv[argc] = NULL;
    char out[256];
    int rc = run_lfs(lfs, argv, out, sizeof out);
    if (rc != 0) {
        char why[320];
        snprintf(why, sizeof why, "lfs setstripe failed (exit %d): %s", rc, out);
        record_all(ph, s, n, IOT_STATUS_FAILED, why);
        return;
    }
    /* read the layout back from the new file */
    long long v;
    if (layout) {
        iot_layout want;
        char err[64];
        iot_layout_parse(layout->text, &want, err, sizeof err);
        char eff[64] = "", why[160] = "";
        int ok = getstripe(lfs, "--component-count", path, &v) == 0;
        if (ok)
            snprintf(eff, sizeof eff, "%lld component(s)", v);
        int same = ok && v == (want.composite ? want.ncomponents : 1);
        if (!ok)
            snprintf(why, sizeof why, "lfs getstripe failed");
        else if (!same)
            snprintf(why, sizeof why, "the file has %lld component(s), %d requested", v, want.ncomponents);
        iot_phase_check(ph, "lustre", "layout", NULL, layout->text, ok ? eff : NULL,
                        same ? IOT_STATUS_APPLIED : IOT_STATUS_CHANGED, why);
        return;
    }
    const iot_setting *plain[2] = {count, size};
    const char *opts[2] = {"--stripe-count", "--stripe-size"};
    for (int i = 0; i < 2; i++) {
        if (!plain[i])
            continue;
        char eff[32] = "", why[160] = "";
        int ok = getstripe(lfs, opts[i], path, &v) == 0;
        if (ok)
            snprintf(eff, sizeof eff, "%lld", v);
        int same = ok && (v == plain[i]->ints[0] || (i == 0 && plain[i]->ints[0] <= 0));
        if (!ok)
            snprintf(why, sizeof why, "lfs getstripe failed");
        else if (!same)
            snprintf(why, sizeof why, "Lustre reports %s", eff);
        iot_phase_check(ph, "lustre", plain[i]->name, NULL, plain[i]->text, ok ? eff : NULL,
                        same ? IOT_STATUS_APPLIED : IOT_STATUS_CHANGED, why);
    }
}

/* ---- the module ---- */

/* Collective on the file's ranks: its first rank sets the layout, and nobody opens before it exists. */
static void lustre_file_open(iot_phase *ph, int create, int truncate)
{
    const iot_setting *s[4];
    size_t n = iot_resolve(ph, NULL, IOT_LAYER_LUSTRE, s, 4);
    if (!n)
        return;
    if (!create) {
        record_all(ph, s, n, IOT_STATUS_NOT_APPLICABLE, "a Lustre layout is set only when a file is created");
        return;
    }
    MPI_Comm comm = iot_phase_comm(ph);
    int rank = 0;
    if (comm != MPI_COMM_NULL)
        iot_pmpi.Comm_rank(comm, &rank);
    prepare(ph, s, n, truncate, rank == 0);
    if (comm != MPI_COMM_NULL)
        iot_pmpi.Barrier(comm);
}

static void lustre_cleanup(void)
{
    if (lustreapi)
        dlclose(lustreapi);
    lustreapi = NULL;
}

static const iot_module lustre_module = {.name = "lustre", .file_open = lustre_file_open, .cleanup = lustre_cleanup};
IOT_MODULE(lustre_module)
