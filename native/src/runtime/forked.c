/* A rank's child processes. A forked child's memory is a copy: what it counts in its phases dies with it (and
 * with _exit, no destructor even runs). So the rank maps one shared page holding a pseudo-phase (at MPI_Init,
 * or at its first fork): in each child (and its own children) every tracked descriptor, and every file opened
 * later, counts into it with the same lock-free atomics as any phase (nothing more on the data path). At the
 * report, the ranks' totals are summed and rank 0 says how much I/O happened outside the phases.
 *
 * The page is a memfd left open across exec, at a high descriptor: a program the rank runs (system(), popen(),
 * posix_spawn, or fork and exec) finds it when iotuner starts in that program, and counts into it too. It is
 * taken only from a rank with no launcher between (a rank of a nested mpiexec is a rank, not a child), and
 * given up when the program calls MPI_Init itself. A serial program's page stays private to its forked
 * children: a launcher's wrapper script must not take its ranks for children. */
#include "forked.h"

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "iotuner/rawio.h"
#include "phases.h"
#include "pmpi.h"
#include "state.h"

#define PAGE_NAME "iotuner-children"
#define PAGE_MAGIC 0x696f74756e657231ull /* "iotuner1" */
#define HEADER 64                        /* the phase starts a cache line in */
#define FD_SLOTS 16                      /* where a child looks for the page, from fd_base() */

typedef struct {
    uint64_t magic;
    uint32_t phase_size; /* another build's layout is not taken */
    int32_t creator;     /* the pid whose children count here */
    _Atomic int32_t rank; /* the creator reached MPI_Init: programs it runs may take the page */
} page_header;

static page_header *header;
static iot_phase *shared;
static int page_fd = -1;
static int child;

iot_phase *iot_forked_phase(void)
{
    return child ? shared : NULL;
}

int iot_forked_child(void)
{
    return child;
}

/* High and fixed, so that a program started from the rank finds it without being told (its environment
 * may be replaced) and the application's low descriptors stay as they were. */
static int fd_base(void)
{
    struct rlimit rl;
    int top = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 1024 ? (int)rl.rlim_cur : 1024;
    return top > 2 * FD_SLOTS + 3 ? top - 2 * FD_SLOTS : 3;
}

static void map_page(void)
{
    size_t size = HEADER + sizeof(iot_phase);
    void *page = MAP_FAILED;
    int fd = memfd_create(PAGE_NAME, 0); /* no MFD_CLOEXEC: exec'd programs keep it */
    if (fd >= 0) {
        int high = fcntl(fd, F_DUPFD, fd_base());
        iot_raw_close(fd);
        fd = high;
    }
    if (fd >= 0 && ftruncate(fd, (off_t)size) == 0)
        page = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (page == MAP_FAILED) { /* no memfd here: forked children still count, exec'd programs do not */
        if (fd >= 0)
            iot_raw_close(fd);
        fd = -1;
        page = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (page == MAP_FAILED) /* the children go uncounted, as before */
            return;
    }
    page_fd = fd;
    header = page; /* zeroed: every counter at 0 */
    header->magic = PAGE_MAGIC;
    header->phase_size = (uint32_t)sizeof(iot_phase);
    header->creator = (int32_t)getpid();
    shared = (iot_phase *)((char *)page + HEADER);
    shared->kind = IOT_KIND_POSIX;
    atomic_store(&shared->open_fds, 1 << 30); /* never closes: it is no phase */
}

static pthread_mutex_t mapping = PTHREAD_MUTEX_INITIALIZER; /* two threads forking at once share one page */

static void ensure_page(void)
{
    pthread_mutex_lock(&mapping);
    if (!header)
        map_page();
    pthread_mutex_unlock(&mapping);
}

static void before_fork(void)
{
    if (!iot_g.disabled && !child)
        ensure_page();
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

/* /proc/PID/stat's parent; -1 when it cannot be read. */
static pid_t parent_of(pid_t pid)
{
    char path[64], text[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    int fd = iot_raw_open(path, O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    ssize_t n = iot_raw_read(fd, text, sizeof text - 1);
    iot_raw_close(fd);
    if (n <= 0)
        return -1;
    text[n] = 0;
    const char *end = strrchr(text, ')'); /* the command name may hold spaces and parentheses */
    int ppid;
    return end && sscanf(end + 1, " %*c %d", &ppid) == 1 ? (pid_t)ppid : -1;
}

/* The creator is an ancestor of this process, with no launcher on the way (at most 64 generations). */
static int descends_from(pid_t creator)
{
    pid_t pid = getppid();
    for (int depth = 0; depth < 64 && pid > 1; depth++) {
        if (pid == creator)
            return 1;
        if (iot_is_launcher(pid))
            return 0;
        pid = parent_of(pid);
    }
    return 0;
}

/* In a new program: a rank's page inherited across exec, taken when this program runs for that rank. */
static void adopt_inherited_page(void)
{
    int base = fd_base();
    for (int fd = base; fd < base + FD_SLOTS; fd++) {
        char link[64], target[128];
        snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
        ssize_t n = readlink(link, target, sizeof target - 1);
        if (n <= 0)
            continue;
        target[n] = 0;
        if (strncmp(target, "/memfd:" PAGE_NAME, strlen("/memfd:" PAGE_NAME)) != 0)
            continue;
        void *page = mmap(NULL, HEADER + sizeof(iot_phase), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        page_header *h = page;
        if (page != MAP_FAILED && h->magic == PAGE_MAGIC && h->phase_size == sizeof(iot_phase) &&
            atomic_load(&h->rank) && descends_from(h->creator)) {
            header = h;
            shared = (iot_phase *)((char *)page + HEADER);
            page_fd = fd;
            child = 1;
            return;
        }
        if (page != MAP_FAILED)
            munmap(page, HEADER + sizeof(iot_phase));
        iot_raw_close(fd); /* not for this process: its own children must not find it either */
        return;
    }
}

void iot_forked_rank_started(void)
{
    if (iot_g.disabled)
        return;
    if (child) { /* a program run by a rank that starts MPI itself: a rank of its own */
        child = 0;
        munmap(header, HEADER + sizeof(iot_phase));
        if (page_fd >= 0)
            iot_raw_close(page_fd);
        header = NULL;
        shared = NULL;
        page_fd = -1;
    }
    ensure_page();
    if (header)
        atomic_store(&header->rank, 1);
}

__attribute__((constructor(103))) static void forked_start(void)
{
    pthread_atfork(before_fork, NULL, in_child);
    if (!iot_g.disabled) {
        iot_internal++;
        adopt_inherited_page();
        iot_internal--;
    }
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
                  "child processes of the job (forked, or programs its ranks ran) wrote %s and read %s that no "
                  "phase of this report holds (iotuner measures each process of the job per file, and its "
                  "children only as this total)",
                  w, r);
}
