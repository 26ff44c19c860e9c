#include <stdio.h>

#include "solver.h"

static int write_attribute(hid_t file, const char *name, hid_t type, const void *value)
{
    hid_t space = H5Screate(H5S_SCALAR);
    hid_t attr = H5Acreate2(file, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
    herr_t err = H5Awrite(attr, type, value);
    H5Aclose(attr);
    H5Sclose(space);
    return err < 0 ? -1 : 0;
}

/* Each field is (rows + 2) x nx with halo rows; this rank writes its rows of the ny x nx dataset. */
int write_output(const char *path, const grid *g, double *const fields[], const char *const names[], int nfields,
                 int step, double time, MPI_Comm comm)
{
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_fapl_mpio(fapl, comm, MPI_INFO_NULL);
    hid_t file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    H5Pclose(fapl);
    if (file < 0)
        return -1;
    hid_t dxpl = H5Pcreate(H5P_DATASET_XFER);
    H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE);
    hsize_t dims[2] = {(hsize_t)g->ny, (hsize_t)g->nx};
    hsize_t start[2] = {(hsize_t)g->row0, 0}, count[2] = {(hsize_t)g->rows, (hsize_t)g->nx};
    hsize_t local[2] = {(hsize_t)g->rows + 2, (hsize_t)g->nx}, interior[2] = {1, 0};
    hid_t types[8];
    int err = 0;
    for (int f = 0; f < nfields; f++) {
        types[f] = H5Tcopy(H5T_NATIVE_DOUBLE);
        H5Tset_order(types[f], H5T_ORDER_LE);
        hid_t fspace = H5Screate_simple(2, dims, NULL);
        hid_t mspace = H5Screate_simple(2, local, NULL);
        H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, NULL, count, NULL);
        H5Sselect_hyperslab(mspace, H5S_SELECT_SET, interior, NULL, count, NULL);
        hid_t dset = H5Dcreate2(file, names[f], types[f], fspace, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        if (H5Dwrite(dset, H5T_NATIVE_DOUBLE, mspace, fspace, dxpl, fields[f]) < 0)
            err = -1;
        H5Dclose(dset);
        H5Sclose(mspace);
        H5Sclose(fspace);
    }
    err |= write_attribute(file, "step", H5T_NATIVE_INT, &step);
    err |= write_attribute(file, "time", H5T_NATIVE_DOUBLE, &time);
    for (int f = 0; f < nfields; f++)
        H5Tclose(types[f]);
    H5Pclose(dxpl);
    H5Fclose(file);
    if (err)
        fprintf(stderr, "kernel_solver: writing %s failed\n", path);
    return err;
}
