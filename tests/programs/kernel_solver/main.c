#include <stdio.h>
#include <stdlib.h>

#include "solver.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, nprocs;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (argc < 3) {
        if (rank == 0)
            fprintf(stderr, "usage: kernel_solver PARAMS DIR\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    long nx = 0, ny = 0;
    int sweeps = 0, outputs = 0;
    FILE *params = fopen(argv[1], "r");
    if (!params || fscanf(params, "%ld %ld %d %d", &nx, &ny, &sweeps, &outputs) != 4 || nx < 3 || ny < nprocs) {
        fprintf(stderr, "kernel_solver: cannot read NX NY SWEEPS OUTPUTS from %s\n", argv[1]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    fclose(params);

    grid g = {nx, ny, ny / nprocs + (rank < ny % nprocs ? 1 : 0), 0, rank - 1, rank + 1};
    MPI_Exscan(&g.rows, &g.row0, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        g.row0 = 0;
        g.up = MPI_PROC_NULL;
    }
    if (rank == nprocs - 1)
        g.down = MPI_PROC_NULL;

    size_t cells = (size_t)(g.rows + 2) * (size_t)nx;
    double *u = malloc(cells * sizeof *u);
    double *unew = malloc(cells * sizeof *unew);
    double *flux = calloc(cells, sizeof *flux);
    initial_field(u, &g);
    initial_field(unew, &g);

    const double dt = 0.25;
    char path[4096];
    const char *names[2] = {"temperature", "heat_flux"};
    for (int out = 0; out < outputs; out++) {
        double change = 0.0;
        for (int s = 0; s < sweeps; s++) {
            exchange_halos(u, &g, MPI_COMM_WORLD);
            change = jacobi_sweep(u, unew, &g);
            double *t = u;
            u = unew;
            unew = t;
        }
        double residual = 0.0;
        MPI_Allreduce(&change, &residual, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        exchange_halos(u, &g, MPI_COMM_WORLD);
        gradient(u, flux, &g);
        int step = (out + 1) * sweeps;
        double *fields[2] = {u, flux};
        snprintf(path, sizeof path, "%s/field_%04d.h5", argv[2], out);
        if (write_output(path, &g, fields, names, 2, step, step * dt, MPI_COMM_WORLD) != 0)
            MPI_Abort(MPI_COMM_WORLD, 1);
        if (rank == 0)
            printf("kernel_solver: step %d residual %.6e\n", step, residual);
    }
    free(flux);
    free(unew);
    free(u);
    MPI_Finalize();
    return 0;
}
