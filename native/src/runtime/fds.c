/* Descriptors -> phases (fds.h): the opens and closes that the POSIX and STDIO modules share. */
#include "fds.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>

#include "forked.h"
#include "paths.h"

iot_phase *iot_fd_opened(int fd, const char *path, int flags, uint64_t t0)
{
    uint64_t t1 = iot_ticks();
    if (fd < 0 || fd >= IOT_FD_TABLE || !path || !iot_active())
        return NULL;
    int saved = errno;
    iot_internal++;
    char norm[PATH_MAX];
    iot_normalize_path(path, norm, sizeof norm);
    iot_phase *ph = NULL;
    if (!iot_path_ignored(norm))
        ph = iot_forked_phase(); /* a forked child: its files count for its rank, in no phase */
    if (!ph && !iot_path_ignored(norm)) {
        ph = iot_phase_find_open(norm); /* an HDF5 or MPI-IO file being opened */
        /* only regular files are phases; an open that may create the file makes one (devices and FIFOs are
         * not made by open), which spares a program creating many files a system call per file */
        struct stat st;
        if (!ph && ((flags & O_CREAT) || (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))))
            ph = iot_phase_begin_posix(norm, (flags & (O_CREAT | O_TRUNC)) != 0);
    }
    if (ph) {
        atomic_fetch_add_explicit(&ph->open_fds, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&ph->meta_ticks, t1 - t0, memory_order_relaxed);
        iot_phase *was = atomic_exchange_explicit(&iot_fd_phase[fd], ph, memory_order_acq_rel);
        if (was) /* a descriptor closed where no wrapper saw it (close_range, a library's internal close) */
            iot_fd_closed(was, 0);
    }
    iot_internal--;
    errno = saved;
    return ph;
}

void iot_fd_closed(iot_phase *ph, uint64_t dt)
{
    atomic_fetch_add_explicit(&ph->meta_ticks, dt, memory_order_relaxed);
    if (atomic_fetch_sub_explicit(&ph->open_fds, 1, memory_order_acq_rel) == 1 && ph->kind == IOT_KIND_POSIX) {
        int saved = errno;
        iot_phase_posix_closed(ph);
        errno = saved;
    }
}

void iot_fd_duplicated(int oldfd, int newfd)
{
    if ((unsigned)newfd >= IOT_FD_TABLE || newfd == oldfd)
        return;
    iot_phase *ph = iot_phase_of_fd(oldfd);
    if (!ph && !iot_phase_of_fd(newfd))
        return; /* the common case: neither is a tracked file */
    if (ph)
        atomic_fetch_add_explicit(&ph->open_fds, 1, memory_order_relaxed);
    iot_phase *was = atomic_exchange_explicit(&iot_fd_phase[newfd], ph, memory_order_acq_rel);
    if (was)
        iot_fd_closed(was, 0);
}
