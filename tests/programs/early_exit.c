/* An MPI program that ends without MPI_Finalize, as jobs do that MPICH's mpiexec reports with 0:
 *   early_exit all          every rank prints "bandwidth=1.0" and exits with 0 before MPI_Finalize
 *   early_exit one          rank 1 exits with 0 before MPI_Finalize, the others finish
 *   early_exit wait FILE    once every rank is in MPI, rank 0 creates FILE; then every rank waits to be killed
 *   early_exit finish       every rank reaches MPI_Finalize (the control) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const char *mode = argc > 1 ? argv[1] : "all";
    if (rank == 0) {
        printf("bandwidth=1.0\n");
        fflush(stdout);
    }
    if (!strcmp(mode, "all") || (!strcmp(mode, "one") && rank == 1))
        exit(0);
    if (!strcmp(mode, "wait") && argc > 2) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
            FILE *f = fopen(argv[2], "w");
            if (f)
                fclose(f);
        }
        for (int i = 0; i < 600; i++)
            sleep(1);
    }
    MPI_Finalize();
    return 0;
}
