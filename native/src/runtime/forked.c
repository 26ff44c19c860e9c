/* A rank's forked children. A child's memory is a copy: what it counts in its phases dies with it (and with
 * _exit, no destructor even runs). So at the first fork the rank maps one shared, anonymous page holding a
 * pseudo-phase; in each child (and its own children) every tracked descriptor, and every file opened later,
 * counts into it with the same lock-free atomics as any phase (nothing more on the data path). At the report,
 * the ranks' totals are summed and rank 0 says how much I/O happened outside the phases. A child that execs
 * another program leaves this image: that program's I/O is not counted. */
#include "forked.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>

#include "phases.h"
#include "pmpi.h"
#include "state.h"

static iot_phase *shared; /* MAP_SHARED: inherited by every child, grandchildren included */
static int child;

iot_phase *iot_forked_phase(void)
{
    return child ? shared : NULL;
}

int iot_forked_child(void)
{
    return child;
}

static void map_page(void)
{
    void *page = mmap(NULL, sizeof(iot_phase), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED) /* the children go uncounted, as before */
        return;
    shared = page; /* zeroed: every counter at 0 */
    shared->kind = IOT_KIND_POSIX;
    atomic_store(&shared->open_fds, 1 << 30); /* never closes: it is no phase */
}

static void before_fork(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT; /* two threads forking at once share one page */
    if (!iot_g.disabled)
        pthread_once(&once, map_page);
}

static void in_child(void)
{
    if (!shared)
        return;
    child = 1;
    for (int fd = 0; fd < IOT_FD_TABLE; fd++) /* descriptors inherited from the rank: the child's writes count here */
        if (atomic_load_explicit(&iot_fd_phase[fd], memory_order_relaxed))
            atomic_store_explicit(&iot_fd_phase[fd], shared, memory_order_relaxed);
}

__attribute__((constructor(103))) static void forked_start(void)
{
    pthread_atfork(before_fork, NULL, in_child);
}

static void size_text(uint64_t bytes, char *out, size_t n)
{
    if (bytes >= 1u << 20)
        snprintf(out, n, "%.1f MiB", (double)bytes / (1u << 20));
    else
        snprintf(out, n, "%llu bytes", (unsigned long long)bytes);
}

void iot_forked_note(MPI_Comm comm)
{
    static int warned;
    uint64_t io[2] = {0, 0};
    if (shared) {
        io[0] = atomic_load(&shared->level[IOT_LEVEL_POSIX].bytes_written);
        io[1] = atomic_load(&shared->level[IOT_LEVEL_POSIX].bytes_read);
    }
    if (comm != MPI_COMM_NULL)
        iot_pmpi.Allreduce(MPI_IN_PLACE, io, 2, MPI_UINT64_T, MPI_SUM, comm);
    if (iot_g.rank != 0 || (!io[0] && !io[1]))
        return;
    char w[32], r[32];
    size_text(io[0], w, sizeof w);
    size_text(io[1], r, sizeof r);
    iot_warn_once(&warned,
                  "forked child processes of the job wrote %s and read %s that no phase of this report holds "
                  "(iotuner measures each process of the job per file, and its forked children only as this total)",
                  w, r);
}
