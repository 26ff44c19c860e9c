/* Every event a module can hear, on each rank: a collective HDF5 file
 * (created, a dataset written, closed), a collective MPI-IO file (written at
 * explicit offsets, collectively, closed), and one failed open of each layer
 * (a file that does not exist), whose phases are dropped. Each rank writes
 * BLOCK bytes (argv[2]) to each file; files in the directory argv[1]. */
#include <hdf5.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    if (argc < 3) {
        fprintf(stderr, "usage: %s DIR BLOCK\n", argv[0]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long block = atol(argv[2]);
    char *buf = malloc((size_t)block), path[4096];
    memset(buf, 'a' + rank, (size_t)block);

    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL);
    snprintf(path, sizeof path, "%s/events.h5", argv[1]);
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    hsize_t dims = (hsize_t)block * (hsize_t)size, count = (hsize_t)block, start = (hsize_t)block * (hsize_t)rank;
    hid_t fspace = H5Screate_simple(1, &dims, NULL), mspace = H5Screate_simple(1, &count, NULL);
    hid_t d = H5Dcreate(f, "data", H5T_NATIVE_CHAR, fspace, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5Sselect_hyperslab(fspace, H5S_SELECT_SET, &start, NULL, &count, NULL);
    hid_t dxpl = H5Pcreate(H5P_DATASET_XFER);
    H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE);
    if (H5Dwrite(d, H5T_NATIVE_CHAR, mspace, fspace, dxpl, buf) < 0)
        MPI_Abort(MPI_COMM_WORLD, 1);
    H5Pclose(dxpl);
    H5Dclose(d);
    H5Sclose(mspace);
    H5Sclose(fspace);
    H5Fclose(f);

    snprintf(path, sizeof path, "%s/missing.h5", argv[1]);
    H5E_BEGIN_TRY
    {
        if (H5Fopen(path, H5F_ACC_RDONLY, fapl) >= 0)
            MPI_Abort(MPI_COMM_WORLD, 1);
    }
    H5E_END_TRY;
    H5Pclose(fapl);

    MPI_File fh;
    snprintf(path, sizeof path, "%s/events.bin", argv[1]);
    if (MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh) != MPI_SUCCESS)
        MPI_Abort(MPI_COMM_WORLD, 1);
    MPI_File_write_at_all(fh, (MPI_Offset)rank * block, buf, (int)block, MPI_BYTE, MPI_STATUS_IGNORE);
    MPI_File_close(&fh);
    snprintf(path, sizeof path, "%s/missing.bin", argv[1]);
    if (MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh) == MPI_SUCCESS)
        MPI_Abort(MPI_COMM_WORLD, 1);

    free(buf);
    if (rank == 0)
        printf("module_events: ok\n");
    MPI_Finalize();
    return 0;
}
