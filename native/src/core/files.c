/* Reading the small files iotuner is given (settings, rules tables, version
 * files) without ever hurting the process: regular files only, bounded in
 * size, opened without blocking (a FIFO named as the settings file must not
 * hang every rank in MPI_Init); with raw system calls, so that no tool
 * interposing on the application's I/O (Darshan) records them. */
#include "iotuner/core.h"
#include "iotuner/rawio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

char *iot_read_regular_file(const char *path, const char *what, size_t max, size_t *len, char *err, size_t errlen)
{
    int fd = iot_raw_open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY, 0);
    if (fd < 0) {
        snprintf(err, errlen, "cannot read %s '%s': %s", what, path, strerror(errno));
        return NULL;
    }
    struct stat st;
    char *text = NULL;
    if (errlen)
        err[0] = 0;
    if (iot_raw_fstat(fd, &st) != 0) {
        snprintf(err, errlen, "cannot read %s '%s': %s", what, path, strerror(errno));
    } else if (!S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "%s '%s' is not a regular file (%s)", what, path,
                 S_ISFIFO(st.st_mode) ? "a FIFO" : S_ISDIR(st.st_mode) ? "a directory" : "a device or socket");
    } else {
        /* until the end of the file, and at most max + 1 bytes (a file larger than max is refused): st_size
         * does not say, pseudo-files (/proc, /sys) report 0 or a page whatever they hold */
        size_t cap = (size_t)st.st_size < max ? (size_t)st.st_size + 2 : max + 2, got = 0;
        if (cap < 64)
            cap = 64;
        text = malloc(cap);
        while (text) {
            if (got + 1 == cap) { /* full: room for one byte past the bound tells a file that is too large */
                if (got > max)
                    break;
                size_t want = cap * 2 < max + 2 ? cap * 2 : max + 2;
                char *t = realloc(text, want);
                if (!t) {
                    snprintf(err, errlen, "out of memory reading %s '%s'", what, path);
                    free(text);
                    text = NULL;
                    break;
                }
                text = t;
                cap = want;
            }
            ssize_t r = iot_raw_read(fd, text + got, cap - got - 1);
            if (r < 0 && errno == EINTR)
                continue;
            if (r < 0) {
                snprintf(err, errlen, "cannot read %s '%s': %s", what, path, strerror(errno));
                free(text);
                text = NULL;
                break;
            }
            if (r == 0)
                break;
            got += (size_t)r;
        }
        if (text) {
            if (got > max) {
                snprintf(err, errlen, "%s '%s' is larger than %zu bytes", what, path, max);
                free(text);
                text = NULL;
            } else {
                text[got] = 0;
                if (len)
                    *len = got;
            }
        } else if (!err[0]) {
            snprintf(err, errlen, "out of memory reading %s '%s'", what, path);
        }
    }
    iot_raw_close(fd);
    return text;
}
