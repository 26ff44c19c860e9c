/* The pattern of an IOR-like benchmark's HDF5 backend, run with several
 * iterations: each iteration writes one shared file collectively (its
 * dataset created with the 1.6 name H5Dcreate1), reads it back collectively
 * (opened with H5Dopen1), and then rank 0 alone opens the file with
 * MPI_COMM_SELF to check its size, as such benchmarks do between
 * iterations. The program times its own phases as a benchmark does (from a
 * barrier before the open to the last rank's close) and prints them.
 *
 *   ior_check DIR ITERATIONS MIB_PER_RANK
 * prints: ior_check: iterations=N bytes_written=B bytes_read=B write_s=S read_s=S write_mib_s=W read_mib_s=R */
#include <hdf5.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, nprocs;

static hid_t fapl_on(MPI_Comm comm)
{
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_fapl_mpio(fapl, comm, MPI_INFO_NULL);
    return fapl;
}

static void die(const char *what)
{
    fprintf(stderr, "ior_check: %s failed on rank %d\n", what, rank);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

/* The time of a phase as a benchmark measures it: from the barrier before it to the slowest rank's end. */
static double phase_time(double t0)
{
    double mine = MPI_Wtime() - t0, slowest = 0;
    MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return slowest;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (argc < 4) {
        if (rank == 0)
            fprintf(stderr, "usage: ior_check DIR ITERATIONS MIB_PER_RANK\n");
        MPI_Finalize();
        return 2;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/ior_check.h5", argv[1]);
    int iterations = atoi(argv[2]);
    hsize_t per_rank = (hsize_t)atoi(argv[3]) << 20, xfer = 1 << 20; /* 1 MiB transfers, as IOR's -t 1m */
    hsize_t total = per_rank * (hsize_t)nprocs;
    unsigned char *buf = malloc(xfer), *back = malloc(xfer);
    double write_s = 0, read_s = 0;
    uint64_t written = 0, read = 0;
    for (int it = 0; it < iterations; it++) {
        /* collective write */
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        hid_t fapl = fapl_on(MPI_COMM_WORLD);
        hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
        H5Pclose(fapl);
        if (f < 0)
            die("H5Fcreate");
        hid_t fspace = H5Screate_simple(1, &total, NULL), mspace = H5Screate_simple(1, &xfer, NULL);
        hid_t d = H5Dcreate1(f, "data", H5T_NATIVE_UCHAR, fspace, H5P_DEFAULT);
        if (d < 0)
            die("H5Dcreate1");
        for (hsize_t off = 0; off < per_rank; off += xfer) {
            hsize_t start = (hsize_t)rank * per_rank + off;
            for (hsize_t i = 0; i < xfer; i++)
                buf[i] = (unsigned char)((start + i) * 7 + (hsize_t)it);
            H5Sselect_hyperslab(fspace, H5S_SELECT_SET, &start, NULL, &xfer, NULL);
            if (H5Dwrite(d, H5T_NATIVE_UCHAR, mspace, fspace, H5P_DEFAULT, buf) < 0)
                die("H5Dwrite");
            written += xfer;
        }
        H5Dclose(d);
        H5Sclose(fspace);
        H5Fclose(f);
        write_s += phase_time(t0);

        /* collective read, the dataset opened with the 1.6 name */
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        fapl = fapl_on(MPI_COMM_WORLD);
        f = H5Fopen(path, H5F_ACC_RDONLY, fapl);
        H5Pclose(fapl);
        if (f < 0)
            die("H5Fopen");
        d = H5Dopen1(f, "data");
        if (d < 0)
            die("H5Dopen1");
        fspace = H5Dget_space(d);
        for (hsize_t off = 0; off < per_rank; off += xfer) {
            hsize_t start = (hsize_t)rank * per_rank + off;
            H5Sselect_hyperslab(fspace, H5S_SELECT_SET, &start, NULL, &xfer, NULL);
            if (H5Dread(d, H5T_NATIVE_UCHAR, mspace, fspace, H5P_DEFAULT, back) < 0)
                die("H5Dread");
            for (hsize_t i = 0; i < xfer; i++)
                if (back[i] != (unsigned char)((start + i) * 7 + (hsize_t)it))
                    die("verification");
            read += xfer;
        }
        H5Dclose(d);
        H5Sclose(fspace);
        H5Sclose(mspace);
        H5Fclose(f);
        read_s += phase_time(t0);

        /* between iterations: rank 0 alone checks the file's size */
        if (rank == 0) {
            fapl = fapl_on(MPI_COMM_SELF);
            f = H5Fopen(path, H5F_ACC_RDONLY, fapl);
            H5Pclose(fapl);
            if (f < 0)
                die("the size check's H5Fopen");
            d = H5Dopen1(f, "data");
            hid_t s = H5Dget_space(d);
            hsize_t dims;
            H5Sget_simple_extent_dims(s, &dims, NULL);
            if (dims != total)
                die("the size check");
            H5Sclose(s);
            H5Dclose(d);
            H5Fclose(f);
        }
    }
    uint64_t all_written = 0, all_read = 0;
    MPI_Reduce(&written, &all_written, 1, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&read, &all_read, 1, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("ior_check: iterations=%d bytes_written=%llu bytes_read=%llu write_s=%.6f read_s=%.6f "
               "write_mib_s=%.3f read_mib_s=%.3f\n",
               iterations, (unsigned long long)all_written, (unsigned long long)all_read, write_s, read_s,
               (double)all_written / 1048576.0 / write_s, (double)all_read / 1048576.0 / read_s);
    free(buf);
    free(back);
    MPI_Finalize();
    return 0;
}
