/* A parallel HDF5 program with an extendible, chunked dataset: settings that
 * ask for chunks too large for HDF5 make H5Dcreate fail, and iotuner must
 * fall back to the program's own layout with the data intact. */
#include <hdf5.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL);
    hid_t f = H5Fcreate(argv[1], H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    hsize_t n = 4096, dims = n * size, maxdims = H5S_UNLIMITED, chunk = 1024, start = n * rank;
    hid_t space = H5Screate_simple(1, &dims, &maxdims), mem = H5Screate_simple(1, &n, NULL);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, 1, &chunk);
    hid_t d = H5Dcreate2(f, "values", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    if (d < 0) {
        fprintf(stderr, "chunk_fallback: H5Dcreate2 failed\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    double *buf = malloc(n * sizeof *buf);
    for (hsize_t i = 0; i < n; i++)
        buf[i] = (double)(start + i) * 0.5;
    H5Sselect_hyperslab(space, H5S_SELECT_SET, &start, NULL, &n, NULL);
    if (H5Dwrite(d, H5T_NATIVE_DOUBLE, mem, space, H5P_DEFAULT, buf) < 0)
        MPI_Abort(MPI_COMM_WORLD, 1);
    H5Dclose(d);
    H5Fclose(f);
    free(buf);
    if (rank == 0)
        printf("chunk_fallback: ok\n");
    MPI_Finalize();
    return 0;
}
