/* BAND-IO: a 2-D field decomposed by columns, written in slabs of rows.
 *
 * Each rank owns a band of -c columns of every [rows, columns * nprocs]
 * float64 dataset (a station, cell or particle range of a time series, or a
 * grid split in its fastest dimension) and writes it -s rows per H5Dwrite.
 * In the file's row-major order a rank's band is -c * 8-byte pieces, one per
 * row, interleaved with the other ranks' pieces: a noncontiguous pattern in
 * which ROMIO's collective buffering, data sieving and their buffers, and
 * HDF5 chunking decide how the pieces reach the file. The memory dataspace
 * has the slab's shape, as an application's 2-D local array would. */
#include "common.h"

#include <inttypes.h>
#include <stdio.h>

static uint64_t rows = 1024, cols = 1024, slab = 0;
static long nvars = 1;

static void on_opt(kctx *k, int c, const char *arg)
{
    if (c == 'n')
        rows = k_parse_size(k, c, arg);
    else if (c == 'c')
        cols = k_parse_size(k, c, arg);
    else if (c == 's')
        slab = k_parse_size(k, c, arg);
    else if (c == 'v')
        nvars = k_parse_long(k, c, arg, 1, 1000);
    else if (c == 'g')
        k->halo = (uint64_t)k_parse_long(k, c, arg, 0, 1024);
}

int main(int argc, char **argv)
{
    kctx k = {
        .name = "bandio",
        .opts = "n:c:s:v:g:",
        .usage = "  -n ROWS    rows of every dataset (default 1024)\n"
                 "  -c COLS    columns per rank, the band (default 1024)\n"
                 "  -s ROWS    rows per H5Dwrite, must divide -n (default: all, one call)\n"
                 "  -v K       datasets, float64 [ROWS, COLS * ranks] each (default 1)\n"
                 "  -g G       ghost cells on each side of the local array in memory, not\n"
                 "             written (default 0: the slab is contiguous in memory)\n",
        .on_opt = on_opt,
        .step_groups = 1,
        .mem_shaped = 1,
    };
    k_init(&k, &argc, &argv);
    if (slab == 0)
        slab = rows;
    if (rows == 0 || cols == 0 || rows % slab != 0)
        k_usage_error(&k, "-n and -c must be positive and -s must divide -n (n=%" PRIu64 ", s=%" PRIu64 ")",
                      rows, slab);

    uint64_t dims[2] = {rows, cols * (uint64_t)k.nprocs};
    uint64_t count[2] = {slab, cols};
    for (long i = 0; i < nvars; i++) {
        char name[32];
        snprintf(name, sizeof name, "field%ld", i);
        kvar *v = k_add_var(&k, name, KT_F64, 2, dims, -1, 2);
        for (uint64_t r0 = 0; r0 < rows; r0 += slab) {
            uint64_t start[2] = {r0, cols * (uint64_t)k.rank};
            k_var_box(&k, v, start, count);
        }
    }
    snprintf(k.desc, sizeof k.desc,
             "rows=%" PRIu64 " columns_per_rank=%" PRIu64 " slab=%" PRIu64 " piece=%" PRIu64
             " datasets=%ld calls_per_dataset=%" PRIu64 " ghost=%" PRIu64,
             rows, cols, slab, cols * 8, nvars, rows / slab, (uint64_t)k.halo);
    return k_run(&k);
}
