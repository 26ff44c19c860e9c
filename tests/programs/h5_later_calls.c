/* Writes two datasets and reads them back through one family of HDF5 calls, so that the same phases can be
 * compared across families: `plain` (H5Fcreate, H5Dwrite, H5Dread), `multi` (H5Dwrite_multi / H5Dread_multi,
 * HDF5 1.14) or `async` (H5Fcreate_async, H5Dcreate_async, H5Dwrite_async, ... waited on with H5ESwait,
 * HDF5 1.13+). Each rank writes its own rows of both datasets with the default transfer list.
 * Usage: h5_later_calls MODE FILE. Exit 77 when this HDF5 lacks MODE's calls; prints rows=N on success. */
#include <hdf5.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROWS 256 /* per rank */
#define COLS 1024

#if H5_VERSION_GE(1, 14, 0)
#define HAVE_MULTI 1
#endif
#if H5_VERSION_GE(1, 13, 0)
#define HAVE_ASYNC 1
#endif

static int fail(const char *what)
{
    fprintf(stderr, "h5_later_calls: %s failed\n", what);
    MPI_Abort(MPI_COMM_WORLD, 1);
    return 1;
}

#ifdef HAVE_ASYNC
static void wait_es(hid_t es)
{
    size_t left = 0;
    hbool_t failed = 0;
    if (H5ESwait(es, H5ES_WAIT_FOREVER, &left, &failed) < 0 || failed)
        fail("H5ESwait");
}
#endif

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    if (argc < 3) {
        fprintf(stderr, "usage: %s plain|multi|async FILE\n", argv[0]);
        return 2;
    }
    const char *mode = argv[1], *path = argv[2];
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
#ifndef HAVE_MULTI
    if (!strcmp(mode, "multi"))
        return MPI_Finalize(), 77;
#endif
#ifndef HAVE_ASYNC
    if (!strcmp(mode, "async"))
        return MPI_Finalize(), 77;
#endif
    static int a[ROWS][COLS], b[ROWS][COLS], a2[ROWS][COLS], b2[ROWS][COLS];
    for (int i = 0; i < ROWS; i++)
        for (int j = 0; j < COLS; j++) {
            a[i][j] = (rank * ROWS + i) * COLS + j;
            b[i][j] = -a[i][j];
        }
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL);
    hsize_t dims[2] = {(hsize_t)size * ROWS, COLS}, start[2] = {(hsize_t)rank * ROWS, 0}, count[2] = {ROWS, COLS};
    hid_t fspace = H5Screate_simple(2, dims, NULL), mspace = H5Screate_simple(2, count, NULL);
    H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, NULL, count, NULL);
    hid_t f, d[2];
    const char *names[2] = {"a", "b"};

    /* write */
    if (!strcmp(mode, "async")) {
#ifdef HAVE_ASYNC
        hid_t es = H5EScreate();
        f = H5Fcreate_async(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl, es);
        for (int k = 0; k < 2; k++)
            d[k] = H5Dcreate_async(f, names[k], H5T_NATIVE_INT, fspace, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT, es);
        if (H5Dwrite_async(d[0], H5T_NATIVE_INT, mspace, fspace, H5P_DEFAULT, a, es) < 0 ||
            H5Dwrite_async(d[1], H5T_NATIVE_INT, mspace, fspace, H5P_DEFAULT, b, es) < 0)
            fail("H5Dwrite_async");
        for (int k = 0; k < 2; k++)
            H5Dclose_async(d[k], es);
        H5Fclose_async(f, es);
        wait_es(es);
        f = H5Fopen_async(path, H5F_ACC_RDONLY, fapl, es);
        for (int k = 0; k < 2; k++)
            d[k] = H5Dopen_async(f, names[k], H5P_DEFAULT, es);
        if (H5Dread_async(d[0], H5T_NATIVE_INT, mspace, fspace, H5P_DEFAULT, a2, es) < 0 ||
            H5Dread_async(d[1], H5T_NATIVE_INT, mspace, fspace, H5P_DEFAULT, b2, es) < 0)
            fail("H5Dread_async");
        for (int k = 0; k < 2; k++)
            H5Dclose_async(d[k], es);
        H5Fclose_async(f, es);
        wait_es(es);
        H5ESclose(es);
#endif
    } else {
        f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
        for (int k = 0; k < 2; k++)
            d[k] = H5Dcreate2(f, names[k], H5T_NATIVE_INT, fspace, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        if (!strcmp(mode, "multi")) {
#ifdef HAVE_MULTI
            hid_t mts[2] = {H5T_NATIVE_INT, H5T_NATIVE_INT}, mss[2] = {mspace, mspace}, fss[2] = {fspace, fspace};
            const void *bufs[2] = {a, b};
            if (H5Dwrite_multi(2, d, mts, mss, fss, H5P_DEFAULT, bufs) < 0)
                fail("H5Dwrite_multi");
#endif
        } else if (H5Dwrite(d[0], H5T_NATIVE_INT, mspace, fspace, H5P_DEFAULT, a) < 0 ||
                   H5Dwrite(d[1], H5T_NATIVE_INT, mspace, fspace, H5P_DEFAULT, b) < 0) {
            fail("H5Dwrite");
        }
        for (int k = 0; k < 2; k++)
            H5Dclose(d[k]);
        H5Fclose(f);
        f = H5Fopen(path, H5F_ACC_RDONLY, fapl);
        for (int k = 0; k < 2; k++)
            d[k] = H5Dopen2(f, names[k], H5P_DEFAULT);
        if (!strcmp(mode, "multi")) {
#ifdef HAVE_MULTI
            hid_t mts[2] = {H5T_NATIVE_INT, H5T_NATIVE_INT}, mss[2] = {mspace, mspace}, fss[2] = {fspace, fspace};
            void *bufs[2] = {a2, b2};
            if (H5Dread_multi(2, d, mts, mss, fss, H5P_DEFAULT, bufs) < 0)
                fail("H5Dread_multi");
#endif
        } else if (H5Dread(d[0], H5T_NATIVE_INT, mspace, fspace, H5P_DEFAULT, a2) < 0 ||
                   H5Dread(d[1], H5T_NATIVE_INT, mspace, fspace, H5P_DEFAULT, b2) < 0) {
            fail("H5Dread");
        }
        for (int k = 0; k < 2; k++)
            H5Dclose(d[k]);
        H5Fclose(f);
    }
    if (memcmp(a, a2, sizeof a) || memcmp(b, b2, sizeof b))
        fail("reading back what was written");
    H5Sclose(fspace);
    H5Sclose(mspace);
    H5Pclose(fapl);
    if (rank == 0)
        printf("h5_later_calls: rows=%d\n", size * ROWS);
    MPI_Finalize();
    return 0;
}
