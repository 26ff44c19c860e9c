/* POSIX interposition: bytes and time per file. Every wrapper calls the real
 * function; the fast path for untracked descriptors is one table load. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#include "rt.h"

/* Kernel pseudo-files are regular files too; device nodes are excluded by S_ISREG
 * (files on /dev/shm are real and tracked). */
static int ignored_path(const char *path)
{
    return !strncmp(path, "/proc/", 6) || !strncmp(path, "/sys/", 5);
}

static void track_open(int fd, const char *path, int flags, uint64_t t0)
{
    uint64_t t1 = iot_ticks();
    if (fd < 0 || fd >= IOT_FD_TABLE || !path || !iot_active())
        return;
    int saved = errno;
    iot_internal++;
    char norm[PATH_MAX];
    iot_normalize_path(path, norm, sizeof norm);
    iot_phase *ph = NULL;
    if (!ignored_path(norm)) {
        ph = iot_phase_find_open(norm); /* an HDF5 or MPI-IO file being opened */
        struct stat st;
        if (!ph && fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
            ph = iot_phase_begin(IOT_KIND_POSIX, norm, (flags & (O_CREAT | O_TRUNC)) != 0);
    }
    if (ph) {
        atomic_fetch_add_explicit(&ph->open_fds, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&ph->meta_ticks, t1 - t0, memory_order_relaxed);
        atomic_store_explicit(&iot_fd_phase[fd], ph, memory_order_release);
    }
    iot_internal--;
    errno = saved;
}

/* Counts one call and decides whether to time it (see iot_time_weight). */
static inline unsigned begin_call(iot_phase *ph, size_t bytes, int is_write)
{
    uint64_t index = atomic_fetch_add_explicit(is_write ? &ph->writes : &ph->reads, 1, memory_order_relaxed);
    unsigned w = iot_time_weight(index, bytes);
    if (w > 1)
        atomic_store_explicit(&ph->time_sampled, 1, memory_order_relaxed);
    return w;
}

static inline void end_call(iot_phase *ph, ssize_t r, uint64_t dt, unsigned weight, int is_write)
{
    if (r > 0)
        atomic_fetch_add_explicit(is_write ? &ph->bytes_written : &ph->bytes_read, (uint64_t)r,
                                  memory_order_relaxed);
    if (weight)
        atomic_fetch_add_explicit(is_write ? &ph->write_ticks : &ph->read_ticks, dt * weight, memory_order_relaxed);
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

IOT_EXPORT int open(const char *path, int flags, ...)
{
    static int (*real)(const char *, int, ...);
    IOT_REAL(real, "open");
    mode_t mode = 0;
    OPEN_MODE(flags, mode);
    uint64_t t0 = iot_ticks();
    int fd = real(path, flags, mode);
    track_open(fd, path, flags, t0);
    return fd;
}

IOT_EXPORT int open64(const char *path, int flags, ...)
{
    static int (*real)(const char *, int, ...);
    IOT_REAL(real, "open64");
    mode_t mode = 0;
    OPEN_MODE(flags, mode);
    uint64_t t0 = iot_ticks();
    int fd = real(path, flags, mode);
    track_open(fd, path, flags, t0);
    return fd;
}

/* _FORTIFY_SOURCE builds call these when the flags are not constant */
IOT_EXPORT int __open_2(const char *path, int flags)
{
    static int (*real)(const char *, int);
    IOT_REAL(real, "__open_2");
    uint64_t t0 = iot_ticks();
    int fd = real(path, flags);
    track_open(fd, path, flags, t0);
    return fd;
}

IOT_EXPORT int __open64_2(const char *path, int flags)
{
    static int (*real)(const char *, int);
    IOT_REAL(real, "__open64_2");
    uint64_t t0 = iot_ticks();
    int fd = real(path, flags);
    track_open(fd, path, flags, t0);
    return fd;
}

IOT_EXPORT int openat(int dirfd, const char *path, int flags, ...)
{
    static int (*real)(int, const char *, int, ...);
    IOT_REAL(real, "openat");
    mode_t mode = 0;
    OPEN_MODE(flags, mode);
    uint64_t t0 = iot_ticks();
    int fd = real(dirfd, path, flags, mode);
    if (dirfd == AT_FDCWD || path[0] == '/')
        track_open(fd, path, flags, t0);
    return fd;
}

IOT_EXPORT int openat64(int dirfd, const char *path, int flags, ...)
{
    static int (*real)(int, const char *, int, ...);
    IOT_REAL(real, "openat64");
    mode_t mode = 0;
    OPEN_MODE(flags, mode);
    uint64_t t0 = iot_ticks();
    int fd = real(dirfd, path, flags, mode);
    if (dirfd == AT_FDCWD || path[0] == '/')
        track_open(fd, path, flags, t0);
    return fd;
}

IOT_EXPORT int creat(const char *path, mode_t mode)
{
    static int (*real)(const char *, mode_t);
    IOT_REAL(real, "creat");
    uint64_t t0 = iot_ticks();
    int fd = real(path, mode);
    track_open(fd, path, O_CREAT | O_TRUNC, t0);
    return fd;
}

IOT_EXPORT int creat64(const char *path, mode_t mode)
{
    static int (*real)(const char *, mode_t);
    IOT_REAL(real, "creat64");
    uint64_t t0 = iot_ticks();
    int fd = real(path, mode);
    track_open(fd, path, O_CREAT | O_TRUNC, t0);
    return fd;
}

IOT_EXPORT int close(int fd)
{
    static int (*real)(int);
    IOT_REAL(real, "close");
    iot_phase *ph = NULL;
    if ((unsigned)fd < IOT_FD_TABLE)
        ph = atomic_exchange_explicit(&iot_fd_phase[fd], NULL, memory_order_acq_rel);
    if (!ph)
        return real(fd);
    uint64_t t0 = iot_ticks();
    int rc = real(fd);
    atomic_fetch_add_explicit(&ph->meta_ticks, iot_ticks() - t0, memory_order_relaxed);
    if (atomic_fetch_sub_explicit(&ph->open_fds, 1, memory_order_acq_rel) == 1 && ph->kind == IOT_KIND_POSIX) {
        int saved = errno;
        if (atomic_load(&ph->bytes_written) == 0 && atomic_load(&ph->bytes_read) == 0)
            iot_phase_abort(ph); /* a file opened and closed without I/O is not a phase */
        else
            iot_phase_end(ph);
        errno = saved;
    }
    return rc;
}

/* ---- data ---- */

#define TIMED(is_write, bytes, call)                                                                         \
    iot_phase *ph = iot_phase_of_fd(fd);                                                                     \
    if (!ph)                                                                                                 \
        return call;                                                                                         \
    unsigned weight = begin_call(ph, (bytes), is_write);                                                     \
    uint64_t t0 = weight ? iot_ticks() : 0;                                                                  \
    ssize_t r = call;                                                                                        \
    end_call(ph, r, weight ? iot_ticks() - t0 : 0, weight, is_write);                                        \
    return r

IOT_EXPORT ssize_t write(int fd, const void *buf, size_t n)
{
    static ssize_t (*real)(int, const void *, size_t);
    IOT_REAL(real, "write");
    TIMED(1, n, real(fd, buf, n));
}

IOT_EXPORT ssize_t read(int fd, void *buf, size_t n)
{
    static ssize_t (*real)(int, void *, size_t);
    IOT_REAL(real, "read");
    TIMED(0, n, real(fd, buf, n));
}

IOT_EXPORT ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
    static ssize_t (*real)(int, const void *, size_t, off_t);
    IOT_REAL(real, "pwrite");
    TIMED(1, n, real(fd, buf, n, off));
}

IOT_EXPORT ssize_t pread(int fd, void *buf, size_t n, off_t off)
{
    static ssize_t (*real)(int, void *, size_t, off_t);
    IOT_REAL(real, "pread");
    TIMED(0, n, real(fd, buf, n, off));
}

IOT_EXPORT ssize_t pwrite64(int fd, const void *buf, size_t n, off64_t off)
{
    static ssize_t (*real)(int, const void *, size_t, off64_t);
    IOT_REAL(real, "pwrite64");
    TIMED(1, n, real(fd, buf, n, off));
}

IOT_EXPORT ssize_t pread64(int fd, void *buf, size_t n, off64_t off)
{
    static ssize_t (*real)(int, void *, size_t, off64_t);
    IOT_REAL(real, "pread64");
    TIMED(0, n, real(fd, buf, n, off));
}

IOT_EXPORT ssize_t writev(int fd, const struct iovec *iov, int cnt)
{
    static ssize_t (*real)(int, const struct iovec *, int);
    IOT_REAL(real, "writev");
    TIMED(1, IOT_SMALL_CALL, real(fd, iov, cnt));
}

IOT_EXPORT ssize_t readv(int fd, const struct iovec *iov, int cnt)
{
    static ssize_t (*real)(int, const struct iovec *, int);
    IOT_REAL(real, "readv");
    TIMED(0, IOT_SMALL_CALL, real(fd, iov, cnt));
}

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
