/* The call pattern of IOR's HDF5 backend (-a HDF5 -w -r -i N): per iteration,
 * a write phase of one shared file (H5Fcreate, the dataset created with the
 * 1.6 name H5Dcreate1, one H5Dwrite per transfer, the file dataspace fetched
 * again for every transfer), IOR's size check of the file through MPI-IO
 * (MPI_File_open on all ranks, MPI_File_get_size, MPI_File_close), a read
 * phase (H5Fopen, H5Dopen1, one H5Dread per transfer, verified) and the size
 * check again. So one name is opened four times per iteration, by two
 * layers.
 *
 *   ior_hdf5 DIR ITERATIONS MIB_PER_RANK [collective|independent]
 * prints: ior_hdf5: iterations=N bytes_written=B bytes_read=B */
#include <hdf5.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, nprocs;

static void die(const char *what)
{
    fprintf(stderr, "ior_hdf5: %s failed on rank %d\n", what, rank);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static long long size_check(const char *path)
{
    MPI_File fh;
    MPI_Offset size = 0;
    if (MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh) != MPI_SUCCESS)
        die("the size check's MPI_File_open");
    MPI_File_get_size(fh, &size);
    MPI_File_close(&fh);
    return (long long)size;
}

static hid_t file_access(void)
{
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL);
    H5Pset_alignment(fapl, 1, 1); /* IOR's default -J 1 */
    return fapl;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (argc < 4) {
        if (rank == 0)
            fprintf(stderr, "usage: ior_hdf5 DIR ITERATIONS MIB_PER_RANK [collective|independent]\n");
        MPI_Finalize();
        return 2;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/ior_hdf5.h5", argv[1]);
    int iterations = atoi(argv[2]);
    int collective = argc > 4 && !strcmp(argv[4], "collective");
    hsize_t xfer = (1 << 20) / sizeof(long long); /* elements of a 1 MiB transfer, as IOR's -t 1m */
    hsize_t per_rank = ((hsize_t)atoi(argv[3]) << 20) / sizeof(long long), total = per_rank * (hsize_t)nprocs;
    long long *buf = malloc(xfer * sizeof *buf), *back = malloc(xfer * sizeof *back);
    uint64_t written = 0, read = 0;
    hid_t dxpl = H5Pcreate(H5P_DATASET_XFER);
    H5Pset_dxpl_mpio(dxpl, collective ? H5FD_MPIO_COLLECTIVE : H5FD_MPIO_INDEPENDENT);
    for (int it = 0; it < iterations; it++) {
        hid_t fapl = file_access();
        hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
        H5Pclose(fapl);
        if (f < 0)
            die("H5Fcreate");
        hid_t space = H5Screate_simple(1, &total, NULL), mspace = H5Screate_simple(1, &xfer, NULL);
        hid_t d = H5Dcreate1(f, "Dataset-0000.0000", H5T_NATIVE_LLONG, space, H5P_DEFAULT);
        if (d < 0)
            die("H5Dcreate1");
        for (hsize_t off = 0; off < per_rank; off += xfer) {
            hsize_t start = (hsize_t)rank * per_rank + off;
            for (hsize_t i = 0; i < xfer; i++)
                buf[i] = (long long)((start + i) * 7 + (hsize_t)it);
            hid_t fspace = H5Dget_space(d);
            H5Sselect_hyperslab(fspace, H5S_SELECT_SET, &start, NULL, &xfer, NULL);
            if (H5Dwrite(d, H5T_NATIVE_LLONG, mspace, fspace, dxpl, buf) < 0)
                die("H5Dwrite");
            H5Sclose(fspace);
            written += xfer * sizeof *buf;
        }
        H5Dclose(d);
        H5Sclose(space);
        H5Fclose(f);
        if (size_check(path) <= 0)
            die("the size check after writing");

        fapl = file_access();
        f = H5Fopen(path, H5F_ACC_RDONLY, fapl);
        H5Pclose(fapl);
        if (f < 0)
            die("H5Fopen");
        d = H5Dopen1(f, "Dataset-0000.0000");
        if (d < 0)
            die("H5Dopen1");
        for (hsize_t off = 0; off < per_rank; off += xfer) {
            hsize_t start = (hsize_t)rank * per_rank + off;
            hid_t fspace = H5Dget_space(d);
            H5Sselect_hyperslab(fspace, H5S_SELECT_SET, &start, NULL, &xfer, NULL);
            if (H5Dread(d, H5T_NATIVE_LLONG, mspace, fspace, dxpl, back) < 0)
                die("H5Dread");
            H5Sclose(fspace);
            for (hsize_t i = 0; i < xfer; i++)
                if (back[i] != (long long)((start + i) * 7 + (hsize_t)it))
                    die("verification");
            read += xfer * sizeof *back;
        }
        H5Dclose(d);
        H5Sclose(mspace);
        H5Fclose(f);
        if (size_check(path) <= 0)
            die("the size check after reading");
    }
    H5Pclose(dxpl);
    uint64_t all_written = 0, all_read = 0;
    MPI_Reduce(&written, &all_written, 1, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&read, &all_read, 1, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("ior_hdf5: iterations=%d bytes_written=%llu bytes_read=%llu\n", iterations,
               (unsigned long long)all_written, (unsigned long long)all_read);
    free(buf);
    free(back);
    MPI_Finalize();
    return 0;
}
