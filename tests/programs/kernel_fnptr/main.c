#include <mpi.h>
#include <stdlib.h>

#include "writers.h"

static const writer_fn writers[] = {write_hdf5, write_mpiio};

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const char *dir = argc > 1 ? argv[1] : ".";
    int format = argc > 2 ? atoi(argv[2]) : 0;
    long n = 4096, offset = 0, total = 0;
    MPI_Exscan(&n, &offset, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&n, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    double *data = malloc((size_t)n * sizeof *data);
    for (long i = 0; i < n; i++)
        data[i] = (double)(offset + i);
    int err = writers[format & 1](dir, data, n, offset, total);
    free(data);
    MPI_Finalize();
    return err != 0;
}
