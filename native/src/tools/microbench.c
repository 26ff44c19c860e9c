/* iotuner-microbench: the application-independent micro-benchmarks of
 * `iotuner calibrate` (the hybrid model's elementary operations, Isaila et al.
 * Cluster'15 section V-C). Run with mpiexec; rank 0 prints one JSON object per
 * measurement: {"op", "nprocs", "bytes", "writers", "first", "sync", "seconds"}.
 *
 *   allgather / alltoall / allreduce / bcast   a collective of `bytes` per rank on the first nprocs ranks
 *   p2p      each rank of a pair posts MPI_Irecv + MPI_Isend of `bytes` and waits (one exchange round)
 *   pwrite   `writers` ranks each pwrite `bytes` to their own region of one shared file: first = a new file
 *            (the blocks are allocated), else overwriting; sync = followed by fdatasync
 *   pread    `writers` ranks each pread `bytes` of a file in the page cache: first = the first read of a region
 *            just written to a new file (a phase reading an earlier phase's data: here about twice the time of
 *            reading the same region again), else a region read before
 *   copy_cold   a memcpy of `bytes` (an aggregator's own data into its collective buffer) after each rank
 *            touched FLUSH_BYTES of other memory: a phase's data streams from memory, while the same buffer
 *            copied again sits in the core's caches
 *
 * --ops (a comma list of collectives, p2p, storage; default all) measures only those groups.
 *
 * Each value is the median of `reps` timings of the slowest rank. Ranks with nothing to measure (outside the
 * communicator being measured, or not among the writers) wait without spinning: MPICH busy-polls in blocking
 * calls, so on a machine with more ranks than cores a spinning bystander would slow the ranks measured. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int rank, size, reps = 7;
static long max_bytes = 16L << 20;
static int run_collectives = 1, run_p2p = 1, run_storage = 1; /* --ops: which groups to measure */
/* what a cold operation's rank touches first: 16 times a core's L2 here, and more than this VM's share of the
 * L3 holds in practice (1 MiB reads after it took 2x the time of 1 MiB reads within an 8 MiB stream) */
#define FLUSH_BYTES (64L << 20)

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* completes a request, sleeping between tests instead of spinning */
static void polite_wait(MPI_Request *req)
{
    int done = 0;
    struct timespec nap = {0, 200000};
    for (MPI_Test(req, &done, MPI_STATUS_IGNORE); !done; MPI_Test(req, &done, MPI_STATUS_IGNORE))
        nanosleep(&nap, NULL);
}

/* the slowest rank's time of one repetition (after the timing: the wait is not measured) */
static double slowest(double t, MPI_Comm comm)
{
    double m = 0;
    MPI_Request req;
    MPI_Iallreduce(&t, &m, 1, MPI_DOUBLE, MPI_MAX, comm, &req);
    polite_wait(&req);
    return m;
}

static void emit(const char *op, int nprocs, long bytes, int writers, int first, int sync, double s)
{
    if (rank == 0)
        printf("{\"op\": \"%s\", \"nprocs\": %d, \"bytes\": %ld, \"writers\": %d, \"first\": %d, \"sync\": %d, "
               "\"seconds\": %.9g}\n", op, nprocs, bytes, writers, first, sync, s);
}

static void collectives(MPI_Comm comm, int n, char *a, char *b)
{
    double t[64];
    const char *names[] = {"allgather", "alltoall", "allreduce", "bcast"};
    for (int op = 0; op < 4; op++)
        for (long bytes = 4; bytes <= (op == 0 || op == 1 ? 65536 : 1 << 20) && bytes <= max_bytes; bytes *= 2) {
            int count = (int)bytes;
            for (int r = -1; r < reps; r++) {
                MPI_Barrier(comm);
                double t0 = MPI_Wtime();
                if (op == 0)
                    MPI_Allgather(a, count, MPI_BYTE, b, count, MPI_BYTE, comm);
                else if (op == 1)
                    MPI_Alltoall(a, count, MPI_BYTE, b, count, MPI_BYTE, comm);
                else if (op == 2)
                    MPI_Allreduce(a, b, count / 4, MPI_INT, MPI_MAX, comm);
                else
                    MPI_Bcast(a, count, MPI_BYTE, 0, comm);
                double s = slowest(MPI_Wtime() - t0, comm);
                if (r >= 0)
                    t[r] = s;
            }
            emit(names[op], n, bytes, 0, 0, 0, median(t, reps));
        }
}

static void p2p(MPI_Comm comm, int n, char *a, char *b)
{
    double t[64];
    int me;
    MPI_Comm_rank(comm, &me);
    int peer = n == 1 ? 0 : me ^ 1;
    int active = peer < n;
    for (long bytes = 1; bytes <= max_bytes; bytes *= 2) {
        for (int r = -1; r < reps; r++) {
            MPI_Barrier(comm);
            double t0 = MPI_Wtime();
            if (active) {
                MPI_Request q[2];
                MPI_Status st[2]; /* not MPI_STATUSES_IGNORE: GCC 12 reads that constant as a 0-byte region */
                MPI_Irecv(b, (int)bytes, MPI_BYTE, peer, 7, comm, &q[0]);
                MPI_Isend(a, (int)bytes, MPI_BYTE, peer, 7, comm, &q[1]);
                MPI_Waitall(2, q, st);
            }
            double s = slowest(MPI_Wtime() - t0, comm);
            if (r >= 0)
                t[r] = s;
        }
        emit("p2p", n, bytes, 0, 0, 0, median(t, reps));
    }
}

static void storage(const char *dir, char *a, char *b)
{
    double t[64];
    char path[4096];
    char *flush = malloc((size_t)FLUSH_BYTES);
    if (!flush)
        MPI_Abort(MPI_COMM_WORLD, 1);
    snprintf(path, sizeof path, "%s/iotuner-microbench.%d", dir, (int)getpid());
    MPI_Bcast(path, sizeof path, MPI_CHAR, 0, MPI_COMM_WORLD);
    for (int writers = 1; writers <= size; writers++) {
        int writing = rank < writers;
        for (long bytes = 4096; bytes <= max_bytes; bytes *= 2)
            for (int variant = 0; variant < 6; variant++) { /* writes: first, steady, +sync; reads; first reads;
                                                              cold copies */
                int wfirst = variant == 0, rfirst = variant == 4, sync = variant == 2, copying = variant == 5;
                int reading = variant == 3 || rfirst, fresh = wfirst || rfirst; /* a new file each repetition */
                int n = bytes >= (4L << 20) ? (reps < 3 ? reps : 3) : reps;
                for (int r = -1; r < n; r++) {
                    if (fresh && rank == 0)
                        unlink(path);
                    MPI_Barrier(MPI_COMM_WORLD);
                    int fd = open(path, O_RDWR | O_CREAT, 0600);
                    off_t at = (off_t)rank * bytes;
                    if (!wfirst && (r == -1 || rfirst) && writing && pwrite(fd, a, (size_t)bytes, at) < 0)
                        perror("iotuner-microbench: pwrite");
                    if (copying && writing)
                        memset(flush, r & 0x7f, (size_t)FLUSH_BYTES);
                    MPI_Barrier(MPI_COMM_WORLD);
                    double t0 = MPI_Wtime();
                    if (writing && copying) {
                        memcpy(b, a, (size_t)bytes);
                    } else if (writing) {
                        ssize_t rc = reading ? pread(fd, a, (size_t)bytes, at) : pwrite(fd, a, (size_t)bytes, at);
                        if (rc < 0)
                            perror("iotuner-microbench: I/O");
                        if (sync)
                            fdatasync(fd);
                    }
                    double s = slowest(MPI_Wtime() - t0, MPI_COMM_WORLD);
                    close(fd);
                    if (r >= 0)
                        t[r] = s;
                }
                emit(copying ? "copy_cold" : reading ? "pread" : "pwrite", size, bytes, writers, fresh, sync,
                     median(t, n));
            }
    }
    if (rank == 0)
        unlink(path);
    free(flush);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *dir = ".";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--dir") && i + 1 < argc)
            dir = argv[++i];
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--max-bytes") && i + 1 < argc)
            max_bytes = atol(argv[++i]);
        else if (!strcmp(argv[i], "--ops") && i + 1 < argc) {
            const char *ops = argv[++i];
            run_collectives = strstr(ops, "collectives") != NULL;
            run_p2p = strstr(ops, "p2p") != NULL;
            run_storage = strstr(ops, "storage") != NULL;
            if (!run_collectives && !run_p2p && !run_storage) {
                if (rank == 0)
                    fprintf(stderr, "iotuner-microbench: --ops %s names no group (collectives, p2p, storage)\n", ops);
                MPI_Finalize();
                return 2;
            }
        } else {
            if (rank == 0)
                fprintf(stderr, "usage: mpiexec -n P %s [--dir DIR] [--reps N] [--max-bytes B] "
                                "[--ops collectives,p2p,storage]\n", argv[0]);
            MPI_Finalize();
            return 2;
        }
    }
    if (reps < 1 || reps > 64)
        reps = 7;
    char *a = malloc((size_t)max_bytes * (size_t)(size > 1 ? size : 1) + 65536 * (size_t)size);
    char *b = malloc((size_t)max_bytes * (size_t)(size > 1 ? size : 1) + 65536 * (size_t)size);
    if (!a || !b)
        MPI_Abort(MPI_COMM_WORLD, 1);
    memset(a, 1, (size_t)max_bytes);
    for (int n = 1; n <= size; n++) { /* the first n ranks: the collectives' and pairs' rank counts */
        MPI_Comm comm;
        MPI_Comm_split(MPI_COMM_WORLD, rank < n ? 0 : MPI_UNDEFINED, rank, &comm);
        if (comm != MPI_COMM_NULL) {
            if (run_collectives)
                collectives(comm, n, a, b);
            if (run_p2p)
                p2p(comm, n, a, b);
            MPI_Comm_free(&comm);
        }
        MPI_Request req;
        MPI_Ibarrier(MPI_COMM_WORLD, &req);
        polite_wait(&req);
    }
    if (run_storage)
        storage(dir, a, b);
    free(a);
    free(b);
    MPI_Finalize();
    return 0;
}
