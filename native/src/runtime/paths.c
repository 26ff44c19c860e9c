/* Paths: lexical normalization, the file system of a directory (cached),
 * and the files that are never phases (system directories, the settings
 * files, IOTUNER_EXCLUDE_DIRS). */
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "iotuner/core.h"
#include "iotuner/signature.h" /* iot_path_hash */
#include "paths.h"

static pthread_mutex_t path_lock = PTHREAD_MUTEX_INITIALIZER;
static char cwd_cache[PATH_MAX];
static int cwd_valid;

void iot_cwd_changed(void)
{
    pthread_mutex_lock(&path_lock);
    cwd_valid = 0;
    pthread_mutex_unlock(&path_lock);
}

/* An absolute path with nothing to collapse ("//", "/./", "/../", a trailing "/" or "/."). */
static int plain_absolute(const char *path, size_t *len)
{
    if (path[0] != '/')
        return 0;
    const char *p = path;
    for (; *p; p++)
        if (*p == '/' && (p[1] == '/' || p[1] == 0 || (p[1] == '.' && (p[2] == '/' || p[2] == 0 || p[2] == '.'))))
            return 0;
    *len = (size_t)(p - path);
    return 1;
}

void iot_normalize_path(const char *path, char *out, size_t outlen)
{
    size_t len;
    if (plain_absolute(path, &len) && len < outlen) { /* the common case: as it is */
        memcpy(out, path, len + 1);
        return;
    }
    char tmp[PATH_MAX * 2];
    const char *colon = strchr(path, ':');
    /* ROMIO accepts "ufs:/path", "nfs:...", "testfs:..." prefixes */
    if (colon && colon - path >= 2 && colon - path <= 8 && !memchr(path, '/', (size_t)(colon - path)))
        path = colon + 1;
    if (path[0] == '/') {
        snprintf(tmp, sizeof tmp, "%s", path);
    } else {
        /* the working directory, cached: chdir and fchdir are interposed and forget it */
        pthread_mutex_lock(&path_lock);
        if (!cwd_valid && getcwd(cwd_cache, sizeof cwd_cache))
            cwd_valid = 1;
        snprintf(tmp, sizeof tmp, "%s/%s", cwd_valid ? cwd_cache : ".", path);
        pthread_mutex_unlock(&path_lock);
    }
    /* collapse //, /./ and /../ lexically (no symlink resolution: the file may not exist yet) */
    size_t o = 0;
    char *save = NULL;
    out[0] = 0;
    size_t marks[PATH_MAX / 2];
    size_t depth = 0;
    for (char *seg = strtok_r(tmp, "/", &save); seg; seg = strtok_r(NULL, "/", &save)) {
        if (seg[0] == '.' && seg[1] == 0)
            continue;
        if (seg[0] == '.' && seg[1] == '.' && seg[2] == 0) {
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

/* statfs per directory, remembered: a program creating many files in one directory asks once */
#define FS_CACHE 256
static struct {
    uint64_t dir;
    const char *name; /* iot_fs_name's static strings */
} fs_cache[FS_CACHE];

static const char *forced_fs; /* tests only: IOTUNER_TEST_FSTYPE pretends to be on this file system */

/* IOTUNER_EXCLUDE_DIRS (as Darshan's DARSHAN_EXCLUDE_DIRS): comma-separated directories whose files are
 * neither measured nor tuned, e.g. a home directory read at start-up or a software tree. */
#define MAX_EXCLUDED 32
static char *excluded_dirs[MAX_EXCLUDED];
static size_t excluded_len[MAX_EXCLUDED];
static int nexcluded;

static void exclude_dirs_init(const char *list)
{
    while (list && *list && nexcluded < MAX_EXCLUDED) {
        const char *end = strchr(list, ',');
        size_t n = end ? (size_t)(end - list) : strlen(list);
        if (n > 0 && n < PATH_MAX - 1 && list[0] == '/') {
            char dir[PATH_MAX], norm[PATH_MAX];
            memcpy(dir, list, n);
            dir[n] = 0;
            iot_normalize_path(dir, norm, sizeof norm - 1);
            size_t len = strlen(norm);
            if (len > 1 && norm[len - 1] != '/') /* "/a/b" excludes "/a/b/x", not "/a/bc" */
                norm[len++] = '/', norm[len] = 0;
            if ((excluded_dirs[nexcluded] = strdup(norm)))
                excluded_len[nexcluded++] = len;
        }
        list = end ? end + 1 : NULL;
    }
}

int iot_path_excluded(const char *norm)
{
    for (int i = 0; i < nexcluded; i++)
        if (!strncmp(norm, excluded_dirs[i], excluded_len[i]))
            return 1;
    return 0;
}

void iot_paths_init(void)
{
    forced_fs = getenv("IOTUNER_TEST_FSTYPE");
    if (forced_fs && !*forced_fs)
        forced_fs = NULL;
    exclude_dirs_init(getenv("IOTUNER_EXCLUDE_DIRS"));
    /* Open MPI's session directory of the job (its shared file pointers, shared memory): the MPI's files */
    exclude_dirs_init(getenv("OMPI_MCA_orte_jobfam_session_dir"));
    exclude_dirs_init(getenv("PMIX_SERVER_TMPDIR"));
}

const char *iot_file_system_of(const char *path)
{
    if (forced_fs)
        return forced_fs;
    char dir[PATH_MAX];
    const char *slash = strrchr(path, '/');
    size_t n = slash ? (size_t)(slash - path) : strlen(path);
    if (n == 0 && slash)
        n = 1; /* "/" */
    if (n >= sizeof dir)
        n = sizeof dir - 1;
    memcpy(dir, path, n);
    dir[n] = 0;
    uint64_t h = iot_path_hash(dir) | 1;
    size_t i = (size_t)((h * 0x9E3779B97F4A7C15ull) >> 56) & (FS_CACHE - 1);
    pthread_mutex_lock(&path_lock);
    const char *name = fs_cache[i].dir == h ? fs_cache[i].name : NULL;
    pthread_mutex_unlock(&path_lock);
    if (name)
        return name;
    struct statfs sf;
    name = statfs(dir, &sf) == 0 ? iot_fs_name((int64_t)(unsigned long)sf.f_type) : "unknown";
    pthread_mutex_lock(&path_lock);
    fs_cache[i].dir = h;
    fs_cache[i].name = name;
    pthread_mutex_unlock(&path_lock);
    return name;
}

/* Files never measured: the system's (as Darshan leaves them out), and the
 * ones iotuner or ROMIO read for their settings. */
static const struct {
    const char *dir;
    size_t len;
} system_dirs[] = {
#define DIR(d) {d, sizeof d - 1}
    DIR("/proc/"), DIR("/sys/"), DIR("/dev/"),   DIR("/etc/"),   DIR("/usr/"),  DIR("/bin/"),
    DIR("/sbin/"), DIR("/lib/"), DIR("/lib32/"), DIR("/lib64/"), DIR("/boot/"), DIR("/run/"),
#undef DIR
};
#define MAX_IGNORED 4
static char *ignored_files[MAX_IGNORED];
static int nignored;

void iot_path_ignore(const char *path)
{
    char norm[PATH_MAX];
    if (!path || !*path || nignored == MAX_IGNORED)
        return;
    iot_normalize_path(path, norm, sizeof norm);
    ignored_files[nignored] = strdup(norm);
    if (ignored_files[nignored])
        nignored++;
}

int iot_path_ignored(const char *norm)
{
    for (size_t i = 0; i < sizeof system_dirs / sizeof *system_dirs; i++)
        if (norm[1] == system_dirs[i].dir[1] && !strncmp(norm, system_dirs[i].dir, system_dirs[i].len))
            return strncmp(norm, "/dev/shm/", 9) != 0; /* files in shared memory are real files */
    for (int i = 0; i < nignored; i++)
        if (!strcmp(norm, ignored_files[i]))
            return 1;
    /* MPICH 4.2's launcher writes the node's topology to $TMPDIR/hydra_hwloc_xmlfile_XXXXXX and every rank
     * reads it inside MPI_Init: the MPI's own file */
    const char *base = strrchr(norm, '/');
    if (base && !strncmp(base + 1, "hydra_hwloc_xmlfile_", 20))
        return 1;
    return iot_path_excluded(norm);
}
