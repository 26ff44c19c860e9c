/* VORPAL-IO: the field dump of the VORPAL plasma framework, as written
 * through H5Block (Behzad et al., Cluster'15 "I/O kernels").
 *
 * Weak scaling: a 3-D grid split over a 3-D process grid from
 * MPI_Dims_create; every rank owns an X x Y x Z block and writes it with one
 * 3-D hyperslab per field component (/Step#N/Block/E/<c>, float64). As in
 * H5Block, x varies fastest, so the file dims are [Z*Pz, Y*Py, X*Px]; the
 * largest process-grid dimension splits x, so every block is noncontiguous
 * in the file even with two ranks. */
#include "common.h"

#include <inttypes.h>
#include <stdio.h>

static uint64_t block[3] = {64, 32, 32};
static long ncomp = 3;

static void on_opt(kctx *k, int c, const char *arg)
{
    if (c == 'b')
        k_parse_list(k, c, arg, 3, block);
    else if (c == 'v')
        ncomp = k_parse_long(k, c, arg, 1, 1000);
}

int main(int argc, char **argv)
{
    kctx k = {
        .name = "vorpalio",
        .opts = "b:v:",
        .usage = "  -b X,Y,Z   block of grid points per rank, x fastest (default 64,32,32)\n"
                 "  -v K       field components, one float64 dataset each (default 3)\n",
        .on_opt = on_opt,
        .step_groups = 1,
    };
    k_init(&k, &argc, &argv);

    int p[3] = {0, 0, 0};
    MPI_Dims_create(k.nprocs, 3, p); /* p[0] >= p[1] >= p[2] */
    int cx = k.rank % p[0], cy = (k.rank / p[0]) % p[1], cz = k.rank / (p[0] * p[1]);
    uint64_t dims[3] = {block[2] * p[2], block[1] * p[1], block[0] * p[0]};
    uint64_t start[3] = {block[2] * cz, block[1] * cy, block[0] * cx};
    uint64_t count[3] = {block[2], block[1], block[0]};
    for (long c = 0; c < ncomp; c++) {
        char name[32];
        snprintf(name, sizeof name, "Block/E/%ld", c);
        kvar *v = k_add_var(&k, name, KT_F64, 3, dims, -1, 2);
        k_var_box(&k, v, start, count);
    }
    snprintf(k.desc, sizeof k.desc,
             "block=%" PRIu64 "x%" PRIu64 "x%" PRIu64 " procs=%dx%dx%d global=%" PRIu64
             "x%" PRIu64 "x%" PRIu64 " components=%ld",
             block[0], block[1], block[2], p[0], p[1], p[2], (uint64_t)dims[2],
             (uint64_t)dims[1], (uint64_t)dims[0], ncomp);
    return k_run(&k);
}
