#include <hdf5.h>
#include <mpi.h>
#include <stdio.h>

#include "writers.h"

int write_hdf5(const char *dir, const double *data, long n, long offset, long total)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/out.h5", dir);
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL);
    hid_t file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    hsize_t dims = (hsize_t)total, start = (hsize_t)offset, count = (hsize_t)n;
    hid_t fspace = H5Screate_simple(1, &dims, NULL);
    hid_t mspace = H5Screate_simple(1, &count, NULL);
    hid_t dset = H5Dcreate2(file, "data", H5T_NATIVE_DOUBLE, fspace, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5Sselect_hyperslab(fspace, H5S_SELECT_SET, &start, NULL, &count, NULL);
    herr_t err = H5Dwrite(dset, H5T_NATIVE_DOUBLE, mspace, fspace, H5P_DEFAULT, data);
    H5Dclose(dset);
    H5Sclose(mspace);
    H5Sclose(fspace);
    H5Fclose(file);
    H5Pclose(fapl);
    return err < 0 ? -1 : 0;
}

int write_mpiio(const char *dir, const double *data, long n, long offset, long total)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/out.dat", dir);
    MPI_File fh;
    if (MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh) != MPI_SUCCESS)
        return -1;
    MPI_Status status;
    MPI_File_write_at_all(fh, (MPI_Offset)offset * (MPI_Offset)sizeof(double), data, (int)n, MPI_DOUBLE, &status);
    MPI_File_close(&fh);
    (void)total;
    return 0;
}
