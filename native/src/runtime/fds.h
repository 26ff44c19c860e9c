/* Descriptors -> phases: an open descriptor counts into its file's phase until closed. The POSIX and STDIO
 * modules share it (an fopen is an open of its file, an fclose a close), and so do the duplicates of a
 * descriptor (dup, dup2, dup3, fcntl F_DUPFD): the phase stays open until the last of them closes. */
#ifndef IOTUNER_FDS_H
#define IOTUNER_FDS_H

#include <stdint.h>

#include "phases.h"

/* fd was just opened on path (open's flags; t0: the ticks before the open): the file's phase, begun or joined,
 * or NULL (an ignored path, a device, past the quota, the runtime inactive). errno is kept. */
iot_phase *iot_fd_opened(int fd, const char *path, int flags, uint64_t t0);

/* fd is being closed: no longer counted. Its phase, or NULL when fd was not tracked. Before the real close, so
 * that a descriptor number reused by another thread's open is never forgotten by this one's close. */
static inline iot_phase *iot_fd_forget(int fd)
{
    if ((unsigned)fd >= IOT_FD_TABLE)
        return NULL;
    if (!atomic_load_explicit(&iot_fd_phase[fd], memory_order_relaxed))
        return NULL;
    return atomic_exchange_explicit(&iot_fd_phase[fd], NULL, memory_order_acq_rel);
}

/* A descriptor of ph closed (dt: the close's ticks, counted as metadata time): the last one ends a POSIX
 * phase. errno is kept. */
void iot_fd_closed(iot_phase *ph, uint64_t dt);

/* newfd was made a duplicate of oldfd (dup, dup2, dup3, F_DUPFD): it counts into oldfd's phase; what newfd
 * was before (dup2 onto an open descriptor closes it) is closed. errno is kept. */
void iot_fd_duplicated(int oldfd, int newfd);

#endif
