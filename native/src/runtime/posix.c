/* POSIX module: bytes and time per file. Every wrapper calls the real
 * function; the fast path for untracked descriptors is one table load. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#include "iotuner/calls.h"
#include "iotuner/ops.h"
#include "fds.h"
#include "module.h"
#include "paths.h"

IOT_POSIX_CALLS(IOT_DECLARE)

static inline void track_open(int fd, const char *path, int flags, uint64_t t0)
{
    (void)iot_fd_opened(fd, path, flags, t0);
}

/* ---- open ---- */

#define OPEN_MODE(flags, mode)                                                                               \
    do {                                                                                                     \
        if ((flags) & (O_CREAT | O_TMPFILE)) {                                                               \
            va_list ap;                                                                                      \
            va_start(ap, flags);                                                                             \
            mode = va_arg(ap, mode_t);                                                                       \
            va_end(ap);                                                                                      \
        }                                                                                                    \
    } while (0)

/* open, open64: name is the real function's */
#define OPEN_WRAPPER(name)                                                                                   \
    IOT_EXPORT int name(const char *path, int flags, ...)                                                    \
    {                                                                                                        \
        static int (*real)(const char *, int, ...);                                                          \
        IOT_REAL(real, #name);                                                                               \
        mode_t mode = 0;                                                                                     \
        OPEN_MODE(flags, mode);                                                                              \
        uint64_t t0 = iot_ticks();                                                                           \
        int fd = real(path, flags, mode);                                                                    \
        track_open(fd, path, flags, t0);                                                                     \
        return fd;                                                                                           \
    }

/* openat, openat64: relative to a directory other than the working one, the path is not known */
#define OPENAT_WRAPPER(name)                                                                                 \
    IOT_EXPORT int name(int dirfd, const char *path, int flags, ...)                                         \
    {                                                                                                        \
        static int (*real)(int, const char *, int, ...);                                                     \
        IOT_REAL(real, #name);                                                                               \
        mode_t mode = 0;                                                                                     \
        OPEN_MODE(flags, mode);                                                                              \
        uint64_t t0 = iot_ticks();                                                                           \
        int fd = real(dirfd, path, flags, mode);                                                             \
        if (fd >= 0 && (dirfd == AT_FDCWD || path[0] == '/')) /* a valid path when the open succeeded */      \
            track_open(fd, path, flags, t0);                                                                 \
        return fd;                                                                                           \
    }

/* __open_2, __open64_2 (what _FORTIFY_SOURCE builds call when the flags are not constant), creat, creat64 */
#define OPEN2_WRAPPER(name, type2, flags_of)                                                                 \
    IOT_EXPORT int name(const char *path, type2 arg)                                                         \
    {                                                                                                        \
        static int (*real)(const char *, type2);                                                             \
        IOT_REAL(real, #name);                                                                               \
        uint64_t t0 = iot_ticks();                                                                           \
        int fd = real(path, arg);                                                                            \
        track_open(fd, path, flags_of, t0);                                                                  \
        return fd;                                                                                           \
    }

OPEN_WRAPPER(open)
OPEN_WRAPPER(open64)
OPENAT_WRAPPER(openat)
OPENAT_WRAPPER(openat64)
OPEN2_WRAPPER(__open_2, int, arg)
OPEN2_WRAPPER(__open64_2, int, arg)
OPEN2_WRAPPER(creat, mode_t, O_CREAT | O_TRUNC)
OPEN2_WRAPPER(creat64, mode_t, O_CREAT | O_TRUNC)

IOT_EXPORT int close(int fd)
{
    static int (*real)(int);
    IOT_REAL(real, "close");
    iot_phase *ph = iot_fd_forget(fd);
    if (!ph)
        return real(fd);
    uint64_t t0 = iot_ticks();
    int rc = real(fd);
    iot_fd_closed(ph, iot_ticks() - t0);
    return rc;
}

/* ---- duplicates: the new descriptor counts into the old one's phase (dd of=FILE reopens onto descriptor 1) */

IOT_EXPORT int dup(int fd)
{
    static int (*real)(int);
    IOT_REAL(real, "dup");
    int rc = real(fd);
    if (rc >= 0)
        iot_fd_duplicated(fd, rc);
    return rc;
}

IOT_EXPORT int dup2(int fd, int fd2)
{
    static int (*real)(int, int);
    IOT_REAL(real, "dup2");
    int rc = real(fd, fd2);
    if (rc >= 0)
        iot_fd_duplicated(fd, rc);
    return rc;
}

IOT_EXPORT int dup3(int fd, int fd2, int flags)
{
    static int (*real)(int, int, int);
    IOT_REAL(real, "dup3");
    int rc = real(fd, fd2, flags);
    if (rc >= 0)
        iot_fd_duplicated(fd, rc);
    return rc;
}

/* fcntl's third argument is an int, a pointer or nothing: passed on as a pointer-sized word, as the C library
 * itself reads it */
#define FCNTL_WRAPPER(name)                                                                                  \
    IOT_EXPORT int name(int fd, int cmd, ...)                                                                \
    {                                                                                                        \
        static int (*real)(int, int, ...);                                                                   \
        IOT_REAL(real, #name);                                                                               \
        va_list ap;                                                                                          \
        va_start(ap, cmd);                                                                                   \
        void *arg = va_arg(ap, void *);                                                                      \
        va_end(ap);                                                                                          \
        int rc = real(fd, cmd, arg);                                                                         \
        if (rc >= 0 && (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC))                                           \
            iot_fd_duplicated(fd, rc);                                                                       \
        return rc;                                                                                           \
    }

FCNTL_WRAPPER(fcntl)
FCNTL_WRAPPER(fcntl64)

/* The working directory is cached for relative paths: these forget it. */
IOT_EXPORT int chdir(const char *path)
{
    static int (*real)(const char *);
    IOT_REAL(real, "chdir");
    int rc = real(path);
    iot_cwd_changed();
    return rc;
}

IOT_EXPORT int fchdir(int fd)
{
    static int (*real)(int);
    IOT_REAL(real, "fchdir");
    int rc = real(fd);
    iot_cwd_changed();
    return rc;
}

/* ---- data ---- */

/* One wrapper per data call: it counts the call and its bytes, and times it only when iot_level_begin says so
 * (a phase's first calls, large ones, a sample of the rest). The timed path is out of line, so the common
 * path keeps fewer registers live. */
#define IOT_UNPAREN(...) __VA_ARGS__
#define POSIX_DATA(name, is_write, note, bytes, params, args)                                                 \
    static __attribute__((noinline)) ssize_t name##_timed(iot_phase *ph, unsigned weight,                     \
                                                          ssize_t (*real) params, IOT_UNPAREN params)        \
    {                                                                                                        \
        uint64_t t0 = iot_ticks();                                                                           \
        ssize_t r = real args;                                                                               \
        iot_level_end(ph, IOT_LEVEL_POSIX, r > 0 ? (uint64_t)r : 0, iot_ticks() - t0, weight, is_write);    \
        return r;                                                                                            \
    }                                                                                                        \
    IOT_EXPORT ssize_t name params                                                                           \
    {                                                                                                        \
        static ssize_t (*real) params;                                                                       \
        IOT_REAL(real, #name);                                                                               \
        note;                                                                                                \
        iot_phase *ph = iot_phase_of_fd(fd);                                                                 \
        if (!ph)                                                                                             \
            return real args;                                                                                \
        unsigned weight = iot_level_begin(ph, IOT_LEVEL_POSIX, (bytes), is_write);                           \
        if (__builtin_expect(weight != 0, 0))                                                                \
            return name##_timed(ph, weight, real, IOT_UNPAREN args);                                         \
        ssize_t r = real args;                                                                               \
        iot_level_end(ph, IOT_LEVEL_POSIX, r > 0 ? (uint64_t)r : 0, 0, 0, is_write);                         \
        return r;                                                                                            \
    }

POSIX_DATA(write, 1, IOT_OP_NOTE(IOT_OP_WRITE, n), n, (int fd, const void *buf, size_t n), (fd, buf, n))
POSIX_DATA(read, 0, IOT_OP_NOTE(IOT_OP_READ, n), n, (int fd, void *buf, size_t n), (fd, buf, n))
POSIX_DATA(pwrite, 1, IOT_OP_NOTE(IOT_OP_PWRITE, n), n, (int fd, const void *buf, size_t n, off_t off),
           (fd, buf, n, off))
POSIX_DATA(pread, 0, IOT_OP_NOTE(IOT_OP_PREAD, n), n, (int fd, void *buf, size_t n, off_t off), (fd, buf, n, off))
POSIX_DATA(pwrite64, 1, IOT_OP_NOTE(IOT_OP_PWRITE, n), n, (int fd, const void *buf, size_t n, off64_t off),
           (fd, buf, n, off))
POSIX_DATA(pread64, 0, IOT_OP_NOTE(IOT_OP_PREAD, n), n, (int fd, void *buf, size_t n, off64_t off),
           (fd, buf, n, off))
/* vectored calls: their size is the vector's (small ones are timed on a sample, as the others: a clock read
 * costs 150-300 ns in a VM, and OMPIO writes noncontiguous data in many small pwritev calls) */
static inline size_t iov_bytes(const struct iovec *iov, int cnt)
{
    size_t n = 0;
    for (int i = 0; iov && i < cnt; i++)
        n += iov[i].iov_len;
    return n;
}

POSIX_DATA(writev, 1, (void)0, iov_bytes(iov, cnt), (int fd, const struct iovec *iov, int cnt), (fd, iov, cnt))
POSIX_DATA(readv, 0, (void)0, iov_bytes(iov, cnt), (int fd, const struct iovec *iov, int cnt), (fd, iov, cnt))
/* at an offset: Open MPI's OMPIO writes and reads this way */
POSIX_DATA(pwritev, 1, (void)0, iov_bytes(iov, cnt), (int fd, const struct iovec *iov, int cnt, off_t off),
           (fd, iov, cnt, off))
POSIX_DATA(preadv, 0, (void)0, iov_bytes(iov, cnt), (int fd, const struct iovec *iov, int cnt, off_t off),
           (fd, iov, cnt, off))
POSIX_DATA(pwritev64, 1, (void)0, iov_bytes(iov, cnt), (int fd, const struct iovec *iov, int cnt, off64_t off),
           (fd, iov, cnt, off))
POSIX_DATA(preadv64, 0, (void)0, iov_bytes(iov, cnt), (int fd, const struct iovec *iov, int cnt, off64_t off),
           (fd, iov, cnt, off))

static int timed_sync(int fd, int (*real)(int))
{
    iot_phase *ph = iot_phase_of_fd(fd);
    if (!ph)
        return real(fd);
    uint64_t t0 = iot_ticks();
    int rc = real(fd);
    atomic_fetch_add_explicit(&ph->sync_ticks, iot_ticks() - t0, memory_order_relaxed);
    return rc;
}

IOT_EXPORT int fsync(int fd)
{
    static int (*real)(int);
    IOT_REAL(real, "fsync");
    return timed_sync(fd, real);
}

IOT_EXPORT int fdatasync(int fd)
{
    static int (*real)(int);
    IOT_REAL(real, "fdatasync");
    return timed_sync(fd, real);
}

/* ---- the module ---- */

static int posix_init(void)
{
    iot_path_ignore(getenv("ROMIO_HINTS")); /* ROMIO reads it at every MPI_File_open: not the application's I/O */
    return 1;
}

static void posix_record(const iot_phase *ph, iot_record *r)
{
    iot_level_record(ph, IOT_LEVEL_POSIX, &r->level[IOT_LEVEL_POSIX]);
    r->sync_time = iot_ticks_to_seconds(atomic_load(&ph->sync_ticks));
    r->meta_time = iot_ticks_to_seconds(atomic_load(&ph->meta_ticks));
    const iot_level_stats *s = &r->level[IOT_LEVEL_POSIX];
    double t = s->write_time + s->read_time + r->sync_time + r->meta_time;
    r->io_max += t; /* one rank's: the STDIO module adds its level's */
    r->io_sum += t;
}

static void posix_report(const iot_report_ctx *ctx)
{
    iotuner_report_version(ctx, IOT_SECTION_POSIX_VERSION); /* its section: phases[].posix */
}

static const iot_module posix_module = {.name = "posix", .init = posix_init, .record = posix_record, .report = posix_report};
IOT_MODULE(posix_module)
