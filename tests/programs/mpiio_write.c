/* A pure MPI-IO program (no HDF5): every rank writes COUNT blocks of BLOCK
 * bytes to a shared file, contiguous per rank, with an independent or a
 * collective call at an explicit offset, or through its individual file
 * pointer (pointer: a view at its block, then MPI_File_write). Byte values
 * are a function of the offset. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    if (argc < 5) {
        fprintf(stderr, "usage: %s FILE BLOCK COUNT independent|collective|pointer\n", argv[0]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long block = atol(argv[2]), count = atol(argv[3]);
    int coll = !strcmp(argv[4], "collective"), pointer = !strcmp(argv[4], "pointer");
    char *buf = malloc((size_t)block);
    MPI_File fh;
    if (MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh) != MPI_SUCCESS)
        MPI_Abort(MPI_COMM_WORLD, 1);
    if (pointer)
        MPI_File_set_view(fh, (MPI_Offset)rank * count * block, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);
    for (long i = 0; i < count; i++) {
        MPI_Offset off = ((MPI_Offset)rank * count + i) * block;
        for (long j = 0; j < block; j++)
            buf[j] = (char)((off + j) % 251);
        if (pointer)
            MPI_File_write(fh, buf, (int)block, MPI_BYTE, MPI_STATUS_IGNORE);
        else if (coll)
            MPI_File_write_at_all(fh, off, buf, (int)block, MPI_BYTE, MPI_STATUS_IGNORE);
        else
            MPI_File_write_at(fh, off, buf, (int)block, MPI_BYTE, MPI_STATUS_IGNORE);
    }
    MPI_File_close(&fh);
    free(buf);
    if (rank == 0)
        printf("mpiio_write: ok\n");
    MPI_Finalize();
    return 0;
}
