/* STDIO module: the C library's streams on files (fopen, fwrite, fprintf, fread, fgets, ...), counted at their
 * own level. The C library reaches open, write and close through internal calls that the POSIX wrappers never
 * see, so a stream's bytes are counted here once. A stream counts into the phase of its descriptor (fds.h):
 * fopen tracks it as open() does, fdopen's is tracked already, and stdin, stdout and stderr are tracked only
 * when they were made a file's (freopen, dup2 onto a tracked descriptor). */
/* our own definitions of the header's inline and fortified calls: the header must not define them first */
#undef _FORTIFY_SOURCE
#define __NO_INLINE__ 1
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>

#include "iotuner/calls.h"
#include "fds.h"
#include "forked.h"
#include "module.h"

IOT_STDIO_CALLS(IOT_DECLARE) /* fscanf and vfscanf: declared as the header redirects them, defined below */

/* The descriptor behind a stream, without its lock: -1 for a stream on memory (fmemopen, open_memstream). */
static inline int stream_fd(FILE *f)
{
#ifdef __GLIBC__
    return f ? f->_fileno : -1;
#else
    return f ? fileno_unlocked(f) : -1;
#endif
}

/* One call on a tracked stream: counted at entry (iot_level_begin), its bytes and time at exit. */
typedef struct {
    iot_phase *ph;
    iot_level level;
    unsigned weight;
    uint64_t t0;
} stdio_call;

static inline int stdio_begin(stdio_call *c, FILE *f, size_t bytes, int is_write)
{
    c->ph = iot_phase_of_fd(stream_fd(f));
    if (__builtin_expect(!c->ph, 1))
        return 0;
    /* a forked child's streams count for its rank in the shared page, which reads the POSIX level */
    c->level = c->ph == iot_forked_phase() ? IOT_LEVEL_POSIX : IOT_LEVEL_STDIO;
    c->weight = iot_level_begin(c->ph, c->level, bytes, is_write);
    c->t0 = c->weight ? iot_ticks() : 0;
    return 1;
}

static inline void stdio_end(const stdio_call *c, uint64_t bytes, int is_write)
{
    iot_level_end(c->ph, c->level, bytes, c->weight ? iot_ticks() - c->t0 : 0, c->weight, is_write);
}

/* open's flags of a mode: what may create or truncate the file (the phase's "created") */
static int mode_flags(const char *mode)
{
    int flags = 0;
    if (mode && mode[0] == 'w')
        flags = O_CREAT | O_TRUNC;
    else if (mode && mode[0] == 'a')
        flags = O_CREAT | O_APPEND;
    return flags;
}

/* ---- opens and closes: a stream's descriptor, tracked as open() and close() track it ---- */

#define FOPEN_WRAPPER(name)                                                                                  \
    IOT_EXPORT FILE *name(const char *path, const char *mode)                                                \
    {                                                                                                        \
        static FILE *(*real)(const char *, const char *);                                                    \
        IOT_REAL(real, #name);                                                                               \
        uint64_t t0 = iot_ticks();                                                                           \
        FILE *f = real(path, mode);                                                                          \
        if (f)                                                                                               \
            (void)iot_fd_opened(stream_fd(f), path, mode_flags(mode), t0);                                   \
        return f;                                                                                            \
    }

/* a new path closes the stream's file and opens another; no path (a new mode) keeps the file and descriptor */
#define FREOPEN_WRAPPER(name)                                                                                \
    IOT_EXPORT FILE *name(const char *path, const char *mode, FILE *f)                                       \
    {                                                                                                        \
        static FILE *(*real)(const char *, const char *, FILE *);                                            \
        IOT_REAL(real, #name);                                                                               \
        iot_phase *was = path ? iot_fd_forget(stream_fd(f)) : NULL;                                          \
        uint64_t t0 = iot_ticks();                                                                           \
        FILE *r = real(path, mode, f);                                                                       \
        if (was)                                                                                             \
            iot_fd_closed(was, 0);                                                                           \
        if (r && path)                                                                                       \
            (void)iot_fd_opened(stream_fd(r), path, mode_flags(mode), t0);                                   \
        return r;                                                                                            \
    }

FOPEN_WRAPPER(fopen)
FOPEN_WRAPPER(fopen64)
FREOPEN_WRAPPER(freopen)
FREOPEN_WRAPPER(freopen64)

/* fclose writes out the buffer: its time is the close's (metadata), as close's is */
IOT_EXPORT int fclose(FILE *f)
{
    static int (*real)(FILE *);
    IOT_REAL(real, "fclose");
    iot_phase *ph = iot_fd_forget(stream_fd(f));
    if (!ph)
        return real(f);
    uint64_t t0 = iot_ticks();
    int rc = real(f);
    iot_fd_closed(ph, iot_ticks() - t0);
    return rc;
}

/* fflush writes the buffer out: its time is writing time, not a call (the bytes were counted by the calls
 * that filled the buffer). fflush(NULL) flushes every stream: not one file's. */
IOT_EXPORT int fflush(FILE *f)
{
    static int (*real)(FILE *);
    IOT_REAL(real, "fflush");
    iot_phase *ph = iot_phase_of_fd(stream_fd(f));
    if (!ph)
        return real(f);
    iot_level l = ph == iot_forked_phase() ? IOT_LEVEL_POSIX : IOT_LEVEL_STDIO;
    uint64_t t0 = iot_ticks();
    int rc = real(f);
    atomic_fetch_add_explicit(&ph->level[l].write_ticks, iot_ticks() - t0, memory_order_relaxed);
    return rc;
}

/* ---- data: a call's bytes are what it moved ---- */

/* fwrite, fread and their unlocked forms: items of size bytes */
#define ITEMS_WRAPPER(name, is_write, cv)                                                                   \
    IOT_EXPORT size_t name(cv void *buf, size_t size, size_t n, FILE *f)                                     \
    {                                                                                                        \
        static size_t (*real)(cv void *, size_t, size_t, FILE *);                                            \
        IOT_REAL(real, #name);                                                                               \
        stdio_call c;                                                                                        \
        if (!stdio_begin(&c, f, size * n, is_write))                                                         \
            return real(buf, size, n, f);                                                                    \
        size_t r = real(buf, size, n, f);                                                                    \
        stdio_end(&c, (uint64_t)r * size, is_write);                                                         \
        return r;                                                                                            \
    }

ITEMS_WRAPPER(fwrite, 1, const)
ITEMS_WRAPPER(fwrite_unlocked, 1, const)
ITEMS_WRAPPER(fread, 0, )
ITEMS_WRAPPER(fread_unlocked, 0, )

#define FREAD_CHK_WRAPPER(name)                                                                              \
    IOT_EXPORT size_t name(void *buf, size_t buflen, size_t size, size_t n, FILE *f)                         \
    {                                                                                                        \
        static size_t (*real)(void *, size_t, size_t, size_t, FILE *);                                       \
        IOT_REAL(real, #name);                                                                               \
        stdio_call c;                                                                                        \
        if (!stdio_begin(&c, f, size * n, 0))                                                                \
            return real(buf, buflen, size, n, f);                                                            \
        size_t r = real(buf, buflen, size, n, f);                                                            \
        stdio_end(&c, (uint64_t)r * size, 0);                                                                \
        return r;                                                                                            \
    }

FREAD_CHK_WRAPPER(__fread_chk)
FREAD_CHK_WRAPPER(__fread_unlocked_chk)

/* fputs, puts (its string and a newline, on stdout) */
#define PUTS_WRAPPER(name, params, args, stream, extra)                                                      \
    IOT_EXPORT int name params                                                                               \
    {                                                                                                        \
        static int (*real) params;                                                                           \
        IOT_REAL(real, #name);                                                                               \
        stdio_call c;                                                                                        \
        if (!stdio_begin(&c, stream, 0, 1))                                                                  \
            return real args;                                                                                \
        int r = real args;                                                                                   \
        stdio_end(&c, r >= 0 ? strlen(s) + (extra) : 0, 1);                                                  \
        return r;                                                                                            \
    }

PUTS_WRAPPER(fputs, (const char *s, FILE *f), (s, f), f, 0)
PUTS_WRAPPER(fputs_unlocked, (const char *s, FILE *f), (s, f), f, 0)
PUTS_WRAPPER(puts, (const char *s), (s), stdout, 1)

/* one character written */
#define PUTC_WRAPPER(name, params, args, stream)                                                             \
    IOT_EXPORT int name params                                                                               \
    {                                                                                                        \
        static int (*real) params;                                                                           \
        IOT_REAL(real, #name);                                                                               \
        stdio_call c;                                                                                        \
        if (!stdio_begin(&c, stream, 1, 1))                                                                  \
            return real args;                                                                                \
        int r = real args;                                                                                   \
        stdio_end(&c, r != EOF, 1);                                                                          \
        return r;                                                                                            \
    }

PUTC_WRAPPER(fputc, (int ch, FILE *f), (ch, f), f)
PUTC_WRAPPER(putc, (int ch, FILE *f), (ch, f), f)
PUTC_WRAPPER(putchar, (int ch), (ch), stdout)

/* one character read */
#define GETC_WRAPPER(name)                                                                                   \
    IOT_EXPORT int name(FILE *f)                                                                             \
    {                                                                                                        \
        static int (*real)(FILE *);                                                                          \
        IOT_REAL(real, #name);                                                                               \
        stdio_call c;                                                                                        \
        if (!stdio_begin(&c, f, 1, 0))                                                                       \
            return real(f);                                                                                  \
        int r = real(f);                                                                                     \
        stdio_end(&c, r != EOF, 0);                                                                          \
        return r;                                                                                            \
    }

GETC_WRAPPER(fgetc)
GETC_WRAPPER(getc)

/* a line read: the string's length */
#define FGETS_WRAPPER(name, params, args)                                                                    \
    IOT_EXPORT char *name params                                                                             \
    {                                                                                                        \
        static char *(*real) params;                                                                         \
        IOT_REAL(real, #name);                                                                               \
        stdio_call c;                                                                                        \
        if (!stdio_begin(&c, f, n > 0 ? (size_t)n : 0, 0))                                                   \
            return real args;                                                                                \
        char *r = real args;                                                                                 \
        stdio_end(&c, r ? strlen(r) : 0, 0);                                                                 \
        return r;                                                                                            \
    }

FGETS_WRAPPER(fgets, (char *s, int n, FILE *f), (s, n, f))
FGETS_WRAPPER(fgets_unlocked, (char *s, int n, FILE *f), (s, n, f))
FGETS_WRAPPER(__fgets_chk, (char *s, size_t size, int n, FILE *f), (s, size, n, f))
FGETS_WRAPPER(__fgets_unlocked_chk, (char *s, size_t size, int n, FILE *f), (s, size, n, f))

/* a line (or up to a delimiter) read: the bytes it returns */
#define GETDELIM_WRAPPER(name, params, args)                                                                 \
    IOT_EXPORT ssize_t name params                                                                           \
    {                                                                                                        \
        static ssize_t (*real) params;                                                                       \
        IOT_REAL(real, #name);                                                                               \
        stdio_call c;                                                                                        \
        if (!stdio_begin(&c, f, 0, 0))                                                                       \
            return real args;                                                                                \
        ssize_t r = real args;                                                                               \
        stdio_end(&c, r > 0 ? (uint64_t)r : 0, 0);                                                           \
        return r;                                                                                            \
    }

GETDELIM_WRAPPER(getline, (char **line, size_t *n, FILE *f), (line, n, f))
GETDELIM_WRAPPER(getdelim, (char **line, size_t *n, int delim, FILE *f), (line, n, delim, f))
GETDELIM_WRAPPER(__getdelim, (char **line, size_t *n, int delim, FILE *f), (line, n, delim, f))

/* ---- formatted: printf's return is the bytes written; scanf's bytes are how far the stream moved ---- */

/* the v-form that does the work (real, or real_chk with the _chk flag), on the stream (stdout for printf) */
static int printf_counted(FILE *f, int (*real)(FILE *, const char *, va_list), int (*real_chk)(FILE *, int,
                                                                                               const char *, va_list),
                          int flag, const char *fmt, va_list ap)
{
    stdio_call c;
    int counted = stdio_begin(&c, f, 0, 1);
    int r = real_chk ? real_chk(f, flag, fmt, ap) : real(f, fmt, ap);
    if (counted)
        stdio_end(&c, r > 0 ? (uint64_t)r : 0, 1);
    return r;
}

typedef int (*vfprintf_fn)(FILE *, const char *, va_list);
typedef int (*vfprintf_chk_fn)(FILE *, int, const char *, va_list);

IOT_EXPORT int vfprintf(FILE *f, const char *fmt, va_list ap)
{
    static vfprintf_fn real;
    IOT_REAL(real, "vfprintf");
    return printf_counted(f, real, NULL, 0, fmt, ap);
}

IOT_EXPORT int fprintf(FILE *f, const char *fmt, ...)
{
    static vfprintf_fn real;
    IOT_REAL(real, "vfprintf");
    va_list ap;
    va_start(ap, fmt);
    int r = printf_counted(f, real, NULL, 0, fmt, ap);
    va_end(ap);
    return r;
}

IOT_EXPORT int __vfprintf_chk(FILE *f, int flag, const char *fmt, va_list ap)
{
    static vfprintf_chk_fn real;
    IOT_REAL(real, "__vfprintf_chk");
    return printf_counted(f, NULL, real, flag, fmt, ap);
}

IOT_EXPORT int __fprintf_chk(FILE *f, int flag, const char *fmt, ...)
{
    static vfprintf_chk_fn real;
    IOT_REAL(real, "__vfprintf_chk");
    va_list ap;
    va_start(ap, fmt);
    int r = printf_counted(f, NULL, real, flag, fmt, ap);
    va_end(ap);
    return r;
}

/* printf and vprintf: stdout is counted only when it was made a tracked file's */
IOT_EXPORT int vprintf(const char *fmt, va_list ap)
{
    static vfprintf_fn real;
    IOT_REAL(real, "vfprintf");
    return printf_counted(stdout, real, NULL, 0, fmt, ap);
}

IOT_EXPORT int printf(const char *fmt, ...)
{
    static vfprintf_fn real;
    IOT_REAL(real, "vfprintf");
    va_list ap;
    va_start(ap, fmt);
    int r = printf_counted(stdout, real, NULL, 0, fmt, ap);
    va_end(ap);
    return r;
}

IOT_EXPORT int __vprintf_chk(int flag, const char *fmt, va_list ap)
{
    static vfprintf_chk_fn real;
    IOT_REAL(real, "__vfprintf_chk");
    return printf_counted(stdout, NULL, real, flag, fmt, ap);
}

IOT_EXPORT int __printf_chk(int flag, const char *fmt, ...)
{
    static vfprintf_chk_fn real;
    IOT_REAL(real, "__vfprintf_chk");
    va_list ap;
    va_start(ap, fmt);
    int r = printf_counted(stdout, NULL, real, flag, fmt, ap);
    va_end(ap);
    return r;
}

/* scanf does not say how many bytes it consumed: the stream's position before and after does (a phase is a
 * regular file, whose streams can tell it) */
static int scanf_counted(FILE *f, int (*real)(FILE *, const char *, va_list), const char *fmt, va_list ap)
{
    stdio_call c;
    if (!stdio_begin(&c, f, 0, 0))
        return real(f, fmt, ap);
    int saved = errno;
    off_t before = ftello(f);
    errno = saved;
    int r = real(f, fmt, ap);
    saved = errno;
    off_t after = before >= 0 ? ftello(f) : -1;
    errno = saved;
    stdio_end(&c, after > before ? (uint64_t)(after - before) : 0, 0);
    return r;
}

/* a C99 build's fscanf is __isoc99_fscanf (the header redirects it, here too): the plain names are an older
 * build's, defined under their own names by label */
int plain_vfscanf(FILE *f, const char *fmt, va_list ap) __asm__("vfscanf") IOT_EXPORT;
int plain_fscanf(FILE *f, const char *fmt, ...) __asm__("fscanf") IOT_EXPORT;

int plain_vfscanf(FILE *f, const char *fmt, va_list ap)
{
    static vfprintf_fn real;
    IOT_REAL(real, "vfscanf");
    return scanf_counted(f, real, fmt, ap);
}

int plain_fscanf(FILE *f, const char *fmt, ...)
{
    static vfprintf_fn real;
    IOT_REAL(real, "vfscanf");
    va_list ap;
    va_start(ap, fmt);
    int r = scanf_counted(f, real, fmt, ap);
    va_end(ap);
    return r;
}

IOT_EXPORT int __isoc99_vfscanf(FILE *f, const char *fmt, va_list ap)
{
    static vfprintf_fn real;
    IOT_REAL(real, "__isoc99_vfscanf");
    return scanf_counted(f, real, fmt, ap);
}

IOT_EXPORT int __isoc99_fscanf(FILE *f, const char *fmt, ...)
{
    static vfprintf_fn real;
    IOT_REAL(real, "__isoc99_vfscanf");
    va_list ap;
    va_start(ap, fmt);
    int r = scanf_counted(f, real, fmt, ap);
    va_end(ap);
    return r;
}

/* ---- the module ---- */

/* its level's counters; its calls' time is I/O time of the phase as the POSIX calls' is */
static void stdio_record(const iot_phase *ph, iot_record *r)
{
    iot_level_stats *s = &r->level[IOT_LEVEL_STDIO];
    iot_level_record(ph, IOT_LEVEL_STDIO, s);
    r->io_max += s->write_time + s->read_time;
    r->io_sum += s->write_time + s->read_time;
}

static void stdio_report(const iot_report_ctx *ctx)
{
    iotuner_report_version(ctx, IOT_SECTION_STDIO_VERSION); /* its section: phases[].stdio */
}

static const iot_module stdio_module = {.name = "stdio", .record = stdio_record, .report = stdio_report};
IOT_MODULE(stdio_module)
