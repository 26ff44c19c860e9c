/* A PnetCDF program for the runtime's PnetCDF module (tests/test_pnetcdf.py).
 *
 * pnetcdf_rw FILE [indep] [hints]: every rank writes N doubles of "a" (a blocking collective
 * ncmpi_put_vara_double_all), N ints of "b" (two nonblocking ncmpi_iput_vara_int and one ncmpi_wait_all),
 * N floats of "c" (the flexible API: ncmpi_put_vara_all with bufcount N and MPI_FLOAT) and a short record of
 * "d" (ncmpi_iput_vara_float, its own request array waited with ncmpi_wait_all); with "indep", "e" too in
 * independent data mode (ncmpi_begin_indep_data opens PnetCDF's second MPI file handle, ncmpi_put_vara_short);
 * with "hints", ncmpi_create gets the application's own nc_var_align_size=512. Then reopens the file and reads
 * everything back the same ways (blocking, ncmpi_iget_vara_int + ncmpi_wait_all, the flexible
 * ncmpi_get_vara_all), checks every value, and prints the bytes each rank moved and the nc_var_align_size
 * ncmpi_inq_file_info reports for the new file after enddef, where the hint acts (a file opened for reading
 * reports the hint it was given in PnetCDF 1.12, 0 in 1.14). */
#include <mpi.h>
#include <pnetcdf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 1000
#define CHECK(call)                                                                                          \
    do {                                                                                                     \
        int err_ = (call);                                                                                   \
        if (err_ != NC_NOERR) {                                                                              \
            fprintf(stderr, "pnetcdf_rw: %s: %s\n", #call, ncmpi_strerror(err_));                            \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                                    \
        }                                                                                                    \
    } while (0)

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, nprocs;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (argc < 2) {
        fprintf(stderr, "usage: pnetcdf_rw FILE [indep] [hints]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int indep = 0, hints = 0;
    for (int i = 2; i < argc; i++) {
        indep |= !strcmp(argv[i], "indep");
        hints |= !strcmp(argv[i], "hints");
    }
    MPI_Info info = MPI_INFO_NULL;
    if (hints) {
        MPI_Info_create(&info);
        MPI_Info_set(info, "nc_var_align_size", "512");
    }

    static double a[N], ra[N];
    static int b[N], rb[N];
    static float c[N], rc[N], d[4], rd[4];
    static short e[N], re[N];
    for (int i = 0; i < N; i++) {
        a[i] = rank * 1e6 + i;
        b[i] = rank * 100000 + i;
        c[i] = (float)(rank + i * 0.5);
        e[i] = (short)(rank * 1000 + i % 1000);
    }
    for (int i = 0; i < 4; i++)
        d[i] = (float)(rank * 10 + i);

    int ncid, dim, rdim, vars[5];
    CHECK(ncmpi_create(MPI_COMM_WORLD, argv[1], NC_CLOBBER | NC_64BIT_DATA, info, &ncid));
    CHECK(ncmpi_def_dim(ncid, "x", (MPI_Offset)N * nprocs, &dim));
    CHECK(ncmpi_def_dim(ncid, "r", (MPI_Offset)4 * nprocs, &rdim));
    CHECK(ncmpi_def_var(ncid, "a", NC_DOUBLE, 1, &dim, &vars[0]));
    CHECK(ncmpi_def_var(ncid, "b", NC_INT, 1, &dim, &vars[1]));
    CHECK(ncmpi_def_var(ncid, "c", NC_FLOAT, 1, &dim, &vars[2]));
    CHECK(ncmpi_def_var(ncid, "d", NC_FLOAT, 1, &rdim, &vars[3]));
    CHECK(ncmpi_def_var(ncid, "e", NC_SHORT, 1, &dim, &vars[4]));
    CHECK(ncmpi_enddef(ncid));
    MPI_Info used;
    char align[MPI_MAX_INFO_VAL + 1] = "";
    int flag = 0;
    CHECK(ncmpi_inq_file_info(ncid, &used));
    MPI_Info_get(used, "nc_var_align_size", MPI_MAX_INFO_VAL, align, &flag);
    MPI_Info_free(&used);

    MPI_Offset start = (MPI_Offset)rank * N, count = N, half = N / 2, second = start + N / 2;
    MPI_Offset rstart = (MPI_Offset)rank * 4, rcount = 4;
    CHECK(ncmpi_put_vara_double_all(ncid, vars[0], &start, &count, a));
    int req[3], st[3];
    CHECK(ncmpi_iput_vara_int(ncid, vars[1], &start, &half, b, &req[0]));
    CHECK(ncmpi_iput_vara_int(ncid, vars[1], &second, &half, b + N / 2, &req[1]));
    CHECK(ncmpi_wait_all(ncid, 2, req, st));
    CHECK(ncmpi_put_vara_all(ncid, vars[2], &start, &count, c, N, MPI_FLOAT));
    CHECK(ncmpi_iput_vara_float(ncid, vars[3], &rstart, &rcount, d, &req[2]));
    CHECK(ncmpi_wait_all(ncid, 1, &req[2], st));
    if (indep) {
        CHECK(ncmpi_begin_indep_data(ncid));
        CHECK(ncmpi_put_vara_short(ncid, vars[4], &start, &count, e));
        CHECK(ncmpi_end_indep_data(ncid));
    }
    CHECK(ncmpi_close(ncid));

    CHECK(ncmpi_open(MPI_COMM_WORLD, argv[1], NC_NOWRITE, info, &ncid));
    CHECK(ncmpi_get_vara_double_all(ncid, vars[0], &start, &count, ra));
    CHECK(ncmpi_iget_vara_int(ncid, vars[1], &start, &count, rb, &req[0]));
    CHECK(ncmpi_wait_all(ncid, NC_REQ_ALL, NULL, NULL));
    CHECK(ncmpi_get_vara_all(ncid, vars[2], &start, &count, rc, N, MPI_FLOAT));
    CHECK(ncmpi_get_vara_float_all(ncid, vars[3], &rstart, &rcount, rd));
    if (indep) {
        CHECK(ncmpi_begin_indep_data(ncid));
        CHECK(ncmpi_get_vara_short(ncid, vars[4], &start, &count, re));
        CHECK(ncmpi_end_indep_data(ncid));
    }
    CHECK(ncmpi_close(ncid));

    int bad = 0;
    for (int i = 0; i < N; i++)
        bad += ra[i] != a[i] || rb[i] != b[i] || rc[i] != c[i] || (indep && re[i] != e[i]);
    for (int i = 0; i < 4; i++)
        bad += rd[i] != d[i];
    int all = 0;
    MPI_Allreduce(&bad, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    long written = N * 8L + N * 4L + N * 4L + 4 * 4L + (indep ? N * 2L : 0), read = written;
    if (rank == 0)
        printf("pnetcdf_rw: %s written=%ld read=%ld per rank nc_var_align_size=%s\n", all ? "FAILED" : "ok",
               written, read, align);
    if (info != MPI_INFO_NULL)
        MPI_Info_free(&info);
    MPI_Finalize();
    return all != 0;
}
