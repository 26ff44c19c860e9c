/* iotuner's own file I/O (the settings document, rules tables, the run report and its temporary file) as raw
 * system calls: no library function that an interposing tool wraps (Darshan and other preloaded tools, or
 * iotuner's own POSIX wrappers), so the application's logs never show iotuner's files. Linux only; each
 * returns what the system call does (-1 with errno on failure). */
#ifndef IOTUNER_RAWIO_H
#define IOTUNER_RAWIO_H

#include <fcntl.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

static inline int iot_raw_open(const char *path, int flags, mode_t mode)
{
    return (int)syscall(SYS_openat, AT_FDCWD, path, flags, mode);
}

static inline ssize_t iot_raw_read(int fd, void *buf, size_t len)
{
    return (ssize_t)syscall(SYS_read, fd, buf, len);
}

static inline ssize_t iot_raw_write(int fd, const void *buf, size_t len)
{
    return (ssize_t)syscall(SYS_write, fd, buf, len);
}

static inline ssize_t iot_raw_pwrite(int fd, const void *buf, size_t len, off_t offset)
{
    return (ssize_t)syscall(SYS_pwrite64, fd, buf, len, offset);
}

static inline int iot_raw_close(int fd)
{
    return (int)syscall(SYS_close, fd);
}

#ifndef AT_EMPTY_PATH
#define AT_EMPTY_PATH 0x1000 /* Linux's, declared by fcntl.h only with _GNU_SOURCE */
#endif

/* the kernel's struct stat is glibc's on the 64-bit Linux targets (x86_64, aarch64, ppc64le) */
static inline int iot_raw_fstat(int fd, struct stat *st)
{
    return (int)syscall(SYS_newfstatat, fd, "", st, AT_EMPTY_PATH);
}

static inline int iot_raw_stat(const char *path, struct stat *st)
{
    return (int)syscall(SYS_newfstatat, AT_FDCWD, path, st, 0);
}

static inline int iot_raw_lstat(const char *path, struct stat *st)
{
    return (int)syscall(SYS_newfstatat, AT_FDCWD, path, st, AT_SYMLINK_NOFOLLOW);
}

static inline int iot_raw_rename(const char *from, const char *to)
{
#ifdef SYS_renameat
    return (int)syscall(SYS_renameat, AT_FDCWD, from, AT_FDCWD, to);
#else
    return (int)syscall(SYS_renameat2, AT_FDCWD, from, AT_FDCWD, to, 0);
#endif
}

static inline int iot_raw_link(const char *from, const char *to)
{
    return (int)syscall(SYS_linkat, AT_FDCWD, from, AT_FDCWD, to, 0);
}

static inline int iot_raw_unlink(const char *path)
{
    return (int)syscall(SYS_unlinkat, AT_FDCWD, path, 0);
}

#endif
