/* File patterns that once broke smart mode (MPI + parallel HDF5).
 *
 *   smart_patterns DIR diverge     rank 0 alone writes stats_0000.h5 (its own
 *                                  file), then all ranks write stats_0001..3.h5
 *                                  together: the ranks' histories of the name
 *                                  differ, and so would their decisions
 *   smart_patterns DIR crowd       rank 0 alone creates 300 files of distinct
 *                                  names, then all ranks write shared_0..2.h5
 *   smart_patterns DIR concurrent  per step, a_N.h5 (collective 1 MiB writes)
 *                                  and b_N.h5 (independent 4 KiB writes) are
 *                                  open at once, their writes interleaved
 *   smart_patterns DIR alternate   ckpt_0000..0007.h5, one after another: the
 *                                  even ones written in 64 KiB transfers, the odd
 *                                  ones in 256 KiB (a full and a light step):
 *                                  never the calls of the phase just before
 *   smart_patterns DIR history     out_h0.h5 (2 MiB per rank), then out_h1.h5
 *                                  (40 KiB per rank, other transfers): one
 *                                  name, not one phase */
#include <hdf5.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, nprocs;

static hid_t create(const char *dir, const char *name, int shared)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (shared)
        H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL);
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    H5Pclose(fapl);
    if (f < 0)
        MPI_Abort(MPI_COMM_WORLD, 1);
    return f;
}

/* A 1-D byte dataset of `per_rank` bytes per rank, written in `xfer`-byte transfers. */
typedef struct {
    hid_t dset, fspace, mspace, dxpl;
    hsize_t per_rank, xfer, next;
    unsigned char *buf;
} stream;

static void stream_open(stream *s, hid_t f, int shared, hsize_t per_rank, hsize_t xfer, int collective)
{
    hsize_t total = per_rank * (shared ? (hsize_t)nprocs : 1);
    s->fspace = H5Screate_simple(1, &total, NULL);
    s->mspace = H5Screate_simple(1, &xfer, NULL);
    s->dset = H5Dcreate2(f, "data", H5T_NATIVE_UCHAR, s->fspace, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    s->dxpl = H5Pcreate(H5P_DATASET_XFER);
    if (shared)
        H5Pset_dxpl_mpio(s->dxpl, collective ? H5FD_MPIO_COLLECTIVE : H5FD_MPIO_INDEPENDENT);
    s->per_rank = per_rank;
    s->xfer = xfer;
    s->next = shared ? (hsize_t)rank * per_rank : 0;
    s->buf = calloc(1, xfer);
}

static int stream_write(stream *s)
{
    H5Sselect_hyperslab(s->fspace, H5S_SELECT_SET, &s->next, NULL, &s->xfer, NULL);
    s->next += s->xfer;
    return H5Dwrite(s->dset, H5T_NATIVE_UCHAR, s->mspace, s->fspace, s->dxpl, s->buf) < 0;
}

static void stream_close(stream *s)
{
    H5Dclose(s->dset);
    H5Sclose(s->fspace);
    H5Sclose(s->mspace);
    H5Pclose(s->dxpl);
    free(s->buf);
}

static int write_file(const char *dir, const char *name, int shared, hsize_t per_rank, hsize_t xfer)
{
    hid_t f = create(dir, name, shared);
    stream s;
    stream_open(&s, f, shared, per_rank, xfer, 1);
    int bad = 0;
    for (hsize_t i = 0; i < per_rank / xfer; i++)
        bad |= stream_write(&s);
    stream_close(&s);
    H5Fclose(f);
    return bad;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (argc < 3) {
        if (rank == 0)
            fprintf(stderr, "usage: %s DIR diverge|crowd|concurrent|alternate|history\n", argv[0]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const char *dir = argv[1], *mode = argv[2];
    char name[64];
    int bad = 0;
    if (!strcmp(mode, "diverge")) {
        if (rank == 0)
            bad |= write_file(dir, "stats_0000.h5", 0, 1 << 20, 1 << 16);
        for (int step = 1; step <= 3; step++) {
            snprintf(name, sizeof name, "stats_%04d.h5", step);
            bad |= write_file(dir, name, 1, 1 << 20, 1 << 16);
        }
    } else if (!strcmp(mode, "crowd")) {
        if (rank == 0)
            for (int i = 0; i < 300; i++) {
                snprintf(name, sizeof name, "solo_%c%c.h5", 'a' + i / 26 % 26, 'a' + i % 26);
                H5Fclose(create(dir, name, 0));
            }
        for (int step = 0; step < 3; step++) {
            snprintf(name, sizeof name, "shared_%d.h5", step);
            bad |= write_file(dir, name, 1, 1 << 20, 1 << 16);
        }
    } else if (!strcmp(mode, "concurrent")) {
        for (int step = 0; step < 3; step++) {
            snprintf(name, sizeof name, "a_%04d.h5", step);
            hid_t fa = create(dir, name, 1);
            snprintf(name, sizeof name, "b_%04d.h5", step);
            hid_t fb = create(dir, name, 1);
            stream a, b;
            stream_open(&a, fa, 1, 4 << 20, 1 << 20, 1);
            stream_open(&b, fb, 1, 64 << 10, 4 << 10, 0);
            for (int i = 0; i < 16; i++) { /* b's 16 writes, with a's 4 among them */
                if (i % 4 == 0)
                    bad |= stream_write(&a);
                bad |= stream_write(&b);
            }
            stream_close(&a);
            stream_close(&b);
            H5Fclose(fa);
            H5Fclose(fb);
        }
    } else if (!strcmp(mode, "alternate")) {
        for (int step = 0; step < 8; step++) {
            snprintf(name, sizeof name, "ckpt_%04d.h5", step);
            bad |= write_file(dir, name, 1, 1 << 20, step % 2 ? 256 << 10 : 64 << 10);
        }
    } else if (!strcmp(mode, "history")) {
        bad |= write_file(dir, "out_h0.h5", 1, 2 << 20, 256 << 10);
        bad |= write_file(dir, "out_h1.h5", 1, 40 << 10, 8 << 10);
    } else {
        if (rank == 0)
            fprintf(stderr, "unknown mode %s\n", mode);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Finalize();
    return bad;
}
