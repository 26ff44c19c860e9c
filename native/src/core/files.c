/* Reading the small files iotuner is given (settings, rules tables, version
 * files) without ever hurting the process: regular files only, bounded in
 * size, opened without blocking (a FIFO named as the settings file must not
 * hang every rank in MPI_Init). */
#include "iotuner/core.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

char *iot_read_regular_file(const char *path, size_t max, size_t *len, char *err, size_t errlen)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        snprintf(err, errlen, "cannot read '%s': %s", path, strerror(errno));
        return NULL;
    }
    struct stat st;
    char *text = NULL;
    if (fstat(fd, &st) != 0) {
        snprintf(err, errlen, "cannot read '%s': %s", path, strerror(errno));
    } else if (!S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "'%s' is not a regular file (%s)", path,
                 S_ISFIFO(st.st_mode) ? "a FIFO" : S_ISDIR(st.st_mode) ? "a directory" : "a device or socket");
    } else if ((uint64_t)st.st_size > max) {
        snprintf(err, errlen, "'%s' is larger than %zu bytes", path, max);
    } else if (!(text = malloc((size_t)st.st_size + 1))) {
        snprintf(err, errlen, "out of memory reading '%s'", path);
    } else {
        size_t got = 0;
        while (got < (size_t)st.st_size) { /* the file may shrink while read: stop at its end */
            ssize_t r = read(fd, text + got, (size_t)st.st_size - got);
            if (r < 0 && errno == EINTR)
                continue;
            if (r < 0) {
                snprintf(err, errlen, "cannot read '%s': %s", path, strerror(errno));
                free(text);
                text = NULL;
                break;
            }
            if (r == 0)
                break;
            got += (size_t)r;
        }
        if (text) {
            text[got] = 0;
            if (len)
                *len = got;
        }
    }
    close(fd);
    return text;
}
