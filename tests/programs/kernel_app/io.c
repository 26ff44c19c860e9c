#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "app.h"

int output_open(output *out, const char *path, MPI_Comm comm)
{
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_fapl_mpio(fapl, comm, MPI_INFO_NULL);
    out->file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    H5Pclose(fapl);
    out->dxpl = H5Pcreate(H5P_DATASET_XFER);
    H5Pset_dxpl_mpio(out->dxpl, H5FD_MPIO_COLLECTIVE);
    out->datasets = 0;
    return out->file < 0 ? -1 : 0;
}

/* One dataset of `total` doubles; this rank writes n of them at offset. */
int output_write(output *out, const char *name, const double *data, long n, long offset, long total)
{
    hsize_t dims = (hsize_t)total, start = (hsize_t)offset, count = (hsize_t)n;
    hid_t fspace = H5Screate_simple(1, &dims, NULL);
    hid_t mspace = H5Screate_simple(1, &count, NULL);
    hid_t dset = H5Dcreate2(out->file, name, H5T_NATIVE_DOUBLE, fspace, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5Sselect_hyperslab(fspace, H5S_SELECT_SET, &start, NULL, &count, NULL);
    herr_t err = H5Dwrite(dset, H5T_NATIVE_DOUBLE, mspace, fspace, out->dxpl, data);
    H5Dclose(dset);
    H5Sclose(mspace);
    H5Sclose(fspace);
    out->datasets++;
    if (err < 0) {
        fprintf(stderr, "kernel_app: writing %s failed\n", name);
        return -1;
    }
    return 0;
}

void output_close(output *out)
{
    H5Pclose(out->dxpl);
    H5Fclose(out->file);
}

/* The cell counts of all ranks, with a small header, through POSIX calls. */
int write_index(const char *dir, const long *counts, int nprocs)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/index.bin", dir);
    int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
    if (fd < 0)
        return -1;
    struct {
        int magic, nprocs;
    } header = {0x10c0, nprocs};
    ssize_t a = write(fd, &header, sizeof header);
    ssize_t b = write(fd, counts, (size_t)nprocs * sizeof *counts);
    close(fd);
    return (a < 0 || b < 0) ? -1 : 0;
}
