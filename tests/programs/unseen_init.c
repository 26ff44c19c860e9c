/* An MPI job whose MPI_Init and MPI_Finalize go around an interposing library: it calls them through the MPI
 * library's own handle (as a program whose MPI is linked statically, or an entry point no tool wraps, would).
 * Everything else is ordinary: every rank writes BYTES bytes of its own block of FILE through MPI-IO.
 * Usage: unseen_init LIBMPI FILE BYTES */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: %s LIBMPI FILE BYTES\n", argv[0]);
        return 2;
    }
    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_NOLOAD);
    int (*init)(int *, char ***) = lib ? (int (*)(int *, char ***))dlsym(lib, "PMPI_Init") : NULL;
    int (*finalize)(void) = lib ? (int (*)(void))dlsym(lib, "PMPI_Finalize") : NULL;
    if (!init || !finalize) {
        fprintf(stderr, "unseen_init: %s is not this program's MPI library\n", argv[1]);
        return 2;
    }
    int bytes = atoi(argv[3]), rank;
    char *buf = calloc((size_t)bytes, 1);
    MPI_File fh;
    if (!buf || init(&argc, &argv) != MPI_SUCCESS)
        return 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (MPI_File_open(MPI_COMM_WORLD, argv[2], MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh) != MPI_SUCCESS ||
        MPI_File_write_at_all(fh, (MPI_Offset)rank * bytes, buf, bytes, MPI_BYTE, MPI_STATUS_IGNORE) != MPI_SUCCESS ||
        MPI_File_close(&fh) != MPI_SUCCESS) {
        fprintf(stderr, "unseen_init: MPI-IO failed\n");
        return 1;
    }
    free(buf);
    if (finalize() != MPI_SUCCESS)
        return 1;
    if (rank == 0)
        printf("unseen_init: ok\n");
    return 0;
}
