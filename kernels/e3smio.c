/* E3SM-IO: the history output of E3SM's atmosphere through SCORPIO (after the
 * E3SM I/O benchmark, its F case): many variables of one decomposed grid in
 * one file, a record per step.
 *
 * The grid has -c columns; the decomposition deals blocks of -d columns to
 * the ranks in turn (block j to rank j mod nprocs), as the cubed sphere's
 * elements are dealt, so a rank's columns are noncontiguous in the file. Per
 * step, -s surface fields [time, ncol] (float64: PS, TS, PRECT, ...) and -u
 * upper-air fields [time, lev, ncol] (float32: T, U, V, Q, ...), one transfer
 * per block and field. Built twice: e3smio through PnetCDF (k_pnetcdf.c: a
 * nonblocking ncmpi_iput_vara per block and field, one ncmpi_wait_all per
 * step, as SCORPIO does) and e3smio_nc4 through parallel netCDF-4
 * (k_netcdf4.c: HDF5 underneath). */
#include "common.h"

#include <inttypes.h>
#include <stdio.h>

#ifndef KERNEL_NAME /* the build names each format's program */
#define KERNEL_NAME "e3smio"
#endif

static uint64_t columns = 16384, block = 64;
static long levels = 32, surface = 16, upper = 8;

static void on_opt(kctx *k, int c, const char *arg)
{
    if (c == 'c')
        columns = k_parse_size(k, c, arg);
    else if (c == 'd')
        block = k_parse_size(k, c, arg);
    else if (c == 'l')
        levels = k_parse_long(k, c, arg, 1, 4096);
    else if (c == 's')
        surface = k_parse_long(k, c, arg, 0, 9999);
    else if (c == 'u')
        upper = k_parse_long(k, c, arg, 0, 9999);
}

/* E3SM's history names, then numbered ones; values in a plausible range (only their bytes matter). */
static const char *const surface_names[] = {"PS", "TS", "PRECT", "FLNT", "FSNT", "LHFLX", "SHFLX", "TREFHT",
                                            "TMQ", "CLDTOT", "FLDS", "FSDS", "PSL", "QFLX", "TAUX", "TAUY"};
static const char *const upper_names[] = {"T", "U", "V", "Q", "OMEGA", "Z3", "RELHUM", "CLOUD"};

static void name_of(const char *const *names, size_t known, const char *prefix, long i, char *out, size_t len)
{
    if ((size_t)i < known)
        snprintf(out, len, "%s", names[i]);
    else
        snprintf(out, len, "%s%03ld", prefix, i);
}

int main(int argc, char **argv)
{
    kctx k = {
        .name = KERNEL_NAME,
        .opts = "c:d:l:s:u:",
        .usage = "  -c N       grid columns (default 16384)\n"
                 "  -d N       columns per decomposition block, dealt to the ranks in turn (default 64)\n"
                 "  -l N       vertical levels (default 32)\n"
                 "  -s N       surface fields [time, ncol], float64 (default 16)\n"
                 "  -u N       upper-air fields [time, lev, ncol], float32 (default 8)\n",
        .on_opt = on_opt,
        .step_groups = 1,
    };
    k_init(&k, &argc, &argv);
    if (columns == 0 || block == 0 || block > columns)
        k_usage_error(&k, "-c and -d must be positive, with -d at most -c");
    if (surface + upper == 0)
        k_usage_error(&k, "-s and -u: at least one field");

    /* Every rank takes the same number of transfers (collective calls need it): a rank short of a block
     * takes part with an empty one. */
    uint64_t nblocks = (columns + block - 1) / block;
    uint64_t per_rank = (nblocks + (uint64_t)k.nprocs - 1) / (uint64_t)k.nprocs;
    for (long f = 0; f < surface + upper; f++) {
        int is_upper = f >= surface;
        char name[32];
        if (is_upper)
            name_of(upper_names, sizeof upper_names / sizeof *upper_names, "U3D", f - surface, name, sizeof name);
        else
            name_of(surface_names, sizeof surface_names / sizeof *surface_names, "S2D", f, name, sizeof name);
        uint64_t dims[2] = {(uint64_t)levels, columns};
        kvar *v = is_upper ? k_add_var(&k, name, KT_F32, 2, dims, 200, 100)
                           : k_add_var(&k, name, KT_F64, 1, &columns, 0, 1e5);
        v->dim_names[0] = is_upper ? "lev" : "ncol";
        v->dim_names[1] = "ncol";
        for (uint64_t i = 0; i < per_rank; i++) {
            uint64_t j = i * (uint64_t)k.nprocs + (uint64_t)k.rank, first = j * block;
            uint64_t n = j < nblocks ? (first + block <= columns ? block : columns - first) : 0;
            uint64_t start[2] = {0, first}, count[2] = {n ? (uint64_t)levels : 0, n};
            if (is_upper)
                k_var_box(&k, v, start, count);
            else
                k_var_box(&k, v, &start[1], &count[1]);
        }
    }
    snprintf(k.desc, sizeof k.desc,
             "columns=%" PRIu64 " block=%" PRIu64 " levels=%ld surface_fields=%ld upper_fields=%ld "
             "blocks_per_rank=%" PRIu64, columns, block, levels, surface, upper, per_rank);
    return k_run(&k);
}
