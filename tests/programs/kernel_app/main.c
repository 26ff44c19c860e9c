#include <stdio.h>
#include <stdlib.h>

#include "app.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, nprocs;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    const char *dir = argc > 1 ? argv[1] : ".";
    int steps = argc > 2 ? atoi(argv[2]) : 8;
    long base = argc > 3 ? atol(argv[3]) : 65536;
    int sweeps = argc > 4 ? atoi(argv[4]) : 100;

    long n = cells_of_rank(rank, base);
    long offset = 0, total = 0;
    MPI_Exscan(&n, &offset, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&n, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("kernel_app: %d ranks, %ld cells, %d steps\n", nprocs, total, steps);

    double *field = malloc((size_t)n * sizeof *field);
    double *work = malloc((size_t)n * sizeof *work);
    double *scratch = malloc((size_t)n * sizeof *scratch);
    for (long i = 0; i < n; i++)
        work[i] = (double)((i * 7919 + rank) % 1000) / 1000.0;

    /* Compute whose results are never written: only the log sees them. */
    double warmup = 0.0;
    for (int k = 0; k < 4; k++)
        warmup += diagnostic(work, n, sweeps / 4 + 1);

    double energy = 0.0;
    char path[4096];
    for (int step = 0; step < steps; step++) {
        relax(work, scratch, n);
        energy += diagnostic(work, n, sweeps);
        field_values(field, n, offset, step);
        snprintf(path, sizeof path, "%s/step_%04d.h5", dir, step);
        output out;
        if (output_open(&out, path, MPI_COMM_WORLD) != 0)
            MPI_Abort(MPI_COMM_WORLD, 1);
        output_write(&out, "field", field, n, offset, total);
        output_close(&out);
        double global = 0.0;
        MPI_Reduce(&energy, &global, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
        if (rank == 0)
            printf("step %d energy %.6e\n", step, global);
    }

    /* The checkpoint goes through the same functions as the steps. */
    snprintf(path, sizeof path, "%s/checkpoint.h5", dir);
    output ck;
    output_open(&ck, path, MPI_COMM_WORLD);
    output_write(&ck, "field", field, n, offset, total);
    for (long i = 0; i < n; i++)
        scratch[i] = field[i] * field[i];
    output_write(&ck, "field_squared", scratch, n, offset, total);
    output_close(&ck);

    long *counts = rank == 0 ? malloc((size_t)nprocs * sizeof *counts) : NULL;
    MPI_Gather(&n, 1, MPI_LONG, counts, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    if (rank == 0 && write_index(dir, counts, nprocs) != 0)
        fprintf(stderr, "kernel_app: cannot write the index\n");
    if (rank == 0)
        printf("kernel_app: done, warmup %.3e, energy %.6e\n", warmup, energy);
    free(counts);
    free(scratch);
    free(work);
    free(field);
    MPI_Finalize();
    return 0;
}
