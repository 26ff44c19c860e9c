/* A file view made by MPI_Type_create_subarray, as many MPI-IO codes make theirs: a 2-D array of doubles,
 * ROWS x (ranks x COLS), each rank owning a band of COLS columns, written with one MPI_File_write_all and
 * read back (and checked) with one MPI_File_read_all. ORDER c or fortran builds the same layout in either
 * order (fortran: the dimensions reversed). With VIEWS, the view is first set VIEWS times, each followed by a
 * byte view as HDF5 does around every collective H5Dwrite, and rank 0 prints how much its memory grew. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long rss_kib(void)
{
    char line[256];
    long kib = 0;
    FILE *f = fopen("/proc/self/status", "r");
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "VmRSS:", 6))
            kib = atol(line + 6);
    if (f)
        fclose(f);
    return kib;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    if (argc < 5) {
        fprintf(stderr, "usage: %s FILE ROWS COLS c|fortran [VIEWS]\n", argv[0]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int rows = atoi(argv[2]), cols = atoi(argv[3]), fortran = !strcmp(argv[4], "fortran");
    int c_sizes[2] = {rows, size * cols}, c_sub[2] = {rows, cols}, c_start[2] = {0, rank * cols};
    int f_sizes[2] = {size * cols, rows}, f_sub[2] = {cols, rows}, f_start[2] = {rank * cols, 0};
    MPI_Datatype band;
    MPI_Type_create_subarray(2, fortran ? f_sizes : c_sizes, fortran ? f_sub : c_sub, fortran ? f_start : c_start,
                             fortran ? MPI_ORDER_FORTRAN : MPI_ORDER_C, MPI_DOUBLE, &band);
    MPI_Type_commit(&band);
    size_t n = (size_t)rows * (size_t)cols;
    double *buf = malloc(n * sizeof *buf), *back = malloc(n * sizeof *back);
    for (size_t i = 0; i < n; i++) /* element (row, col) of the global array holds row * width + col */
        buf[i] = (double)((i / cols) * (size_t)size * cols + (size_t)rank * cols + i % cols);
    MPI_File fh;
    if (MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh) != MPI_SUCCESS)
        MPI_Abort(MPI_COMM_WORLD, 1);
    int views = argc > 5 ? atoi(argv[5]) : 0;
    long before = rss_kib();
    for (int i = 0; i < views; i++) {
        MPI_File_set_view(fh, 0, MPI_DOUBLE, band, "native", MPI_INFO_NULL);
        MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);
    }
    if (views && rank == 0)
        printf("subarray_view: %d views, memory grew %ld KiB\n", 2 * views, rss_kib() - before);
    MPI_File_set_view(fh, 0, MPI_DOUBLE, band, "native", MPI_INFO_NULL);
    MPI_File_write_all(fh, buf, (int)n, MPI_DOUBLE, MPI_STATUS_IGNORE);
    MPI_File_seek(fh, 0, MPI_SEEK_SET);
    MPI_File_read_all(fh, back, (int)n, MPI_DOUBLE, MPI_STATUS_IGNORE);
    MPI_File_close(&fh);
    int bad = memcmp(buf, back, n * sizeof *buf) != 0, any = 0;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0)
        printf(any ? "subarray_view: MISMATCH\n" : "subarray_view: ok\n");
    MPI_Type_free(&band);
    free(buf);
    free(back);
    MPI_Finalize();
    return any;
}
