/* A file-per-process checkpoint: per step, every rank writes its own file
 * (ckpt_<step>_<rank>.dat) with POSIX calls, the ranks at the same time. The
 * program times each step as a checkpoint benchmark does (from a barrier to
 * the slowest rank's close) and prints the aggregate.
 *
 * With LAG_MS, the last rank sleeps that long before each step's open: its
 * file opens after the other ranks closed theirs (a rank late on a busy
 * machine, made certain).
 *
 *   fpp_steps DIR STEPS MIB_PER_RANK [LAG_MS]
 * prints: fpp_steps: steps=S bytes=B time_s=T mib_s=W */
#include <fcntl.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int rank, nprocs;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (argc < 4) {
        if (rank == 0)
            fprintf(stderr, "usage: fpp_steps DIR STEPS MIB_PER_RANK [LAG_MS]\n");
        MPI_Finalize();
        return 2;
    }
    int steps = atoi(argv[2]);
    int lag_ms = argc > 4 && rank == nprocs - 1 ? atoi(argv[4]) : 0;
    size_t chunk = 1 << 20, per_rank = (size_t)atoi(argv[3]) << 20;
    char *buf = malloc(chunk);
    memset(buf, rank + 1, chunk); /* touched before the timing: no first-touch in the phase */
    double total_s = 0;
    uint64_t bytes = 0;
    for (int s = 0; s < steps; s++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/ckpt_%04d_%04d.dat", argv[1], s, rank);
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        if (lag_ms > 0)
            usleep((useconds_t)lag_ms * 1000);
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0) {
            perror(path);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        for (size_t done = 0; done < per_rank; done += chunk)
            if (write(fd, buf, chunk) != (ssize_t)chunk) {
                perror("write");
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
        fsync(fd);
        close(fd);
        double mine = MPI_Wtime() - t0, slowest;
        MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        total_s += slowest;
        bytes += per_rank * (uint64_t)nprocs;
    }
    if (rank == 0)
        printf("fpp_steps: steps=%d bytes=%llu time_s=%.6f mib_s=%.3f\n", steps, (unsigned long long)bytes, total_s,
               (double)bytes / 1048576.0 / total_s);
    free(buf);
    MPI_Finalize();
    return 0;
}
