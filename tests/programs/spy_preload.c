/* An interposing tool, as Darshan is one: preloaded beside iotuner, it logs the path of every open, openat,
 * rename and link that reaches it (through the C library's names) to $SPY_LOG, one line each. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static void note(const char *what, const char *path)
{
    const char *log = getenv("SPY_LOG");
    if (!log || !path)
        return;
    char line[4200];
    int n = snprintf(line, sizeof line, "%s %s\n", what, path);
    int fd = (int)syscall(SYS_openat, AT_FDCWD, log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd >= 0) {
        long w = syscall(SYS_write, fd, line, n > 0 && n < (int)sizeof line ? (size_t)n : 0);
        (void)w;
        syscall(SYS_close, fd);
    }
}

#define OPEN_LIKE(name, ...)                                                                                      \
    int name(__VA_ARGS__, int flags, ...)                                                                         \
    {                                                                                                             \
        va_list ap;                                                                                               \
        va_start(ap, flags);                                                                                      \
        mode_t mode = (flags & (O_CREAT | O_TMPFILE)) ? va_arg(ap, mode_t) : 0;                                  \
        va_end(ap);                                                                                               \
        note(#name, path);                                                                                        \

OPEN_LIKE(open, const char *path)
    int (*real)(const char *, int, ...) = (int (*)(const char *, int, ...))dlsym(RTLD_NEXT, "open");
    return real(path, flags, mode);
}
OPEN_LIKE(open64, const char *path)
    int (*real)(const char *, int, ...) = (int (*)(const char *, int, ...))dlsym(RTLD_NEXT, "open64");
    return real(path, flags, mode);
}
OPEN_LIKE(openat, int dir, const char *path)
    int (*real)(int, const char *, int, ...) = (int (*)(int, const char *, int, ...))dlsym(RTLD_NEXT, "openat");
    return real(dir, path, flags, mode);
}
OPEN_LIKE(openat64, int dir, const char *path)
    int (*real)(int, const char *, int, ...) = (int (*)(int, const char *, int, ...))dlsym(RTLD_NEXT, "openat64");
    return real(dir, path, flags, mode);
}

int rename(const char *from, const char *to)
{
    note("rename", to);
    int (*real)(const char *, const char *) = (int (*)(const char *, const char *))dlsym(RTLD_NEXT, "rename");
    return real(from, to);
}

int link(const char *from, const char *to)
{
    note("link", to);
    int (*real)(const char *, const char *) = (int (*)(const char *, const char *))dlsym(RTLD_NEXT, "link");
    return real(from, to);
}
