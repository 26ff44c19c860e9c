/* H5IOR: the access pattern of IOR's HDF5 backend (shared file, one
 * H5Dwrite per transfer).
 *
 * Every rank writes -b bytes per step in -b/-x transfers of -x bytes into a
 * 1-D uint8 dataset /Step#N/data of b * nprocs elements (one element = one
 * byte, so offsets and sizes are in bytes). contiguous: rank r owns
 * [r*b, (r+1)*b) and writes it in order; strided: transfer i of rank r goes
 * to offset (i*nprocs + r)*x, interleaving the ranks. The bytes depend only
 * on their offset, so both layouts produce the same file. */
#include "common.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static uint64_t block = 16u << 20, xfer = 1u << 20;
static int strided;

static void on_opt(kctx *k, int c, const char *arg)
{
    if (c == 'b')
        block = k_parse_size(k, c, arg);
    else if (c == 'x')
        xfer = k_parse_size(k, c, arg);
    else if (c == 's') /* IOR's segment count: here one /Step#N dataset per segment */
        k->steps = (int)k_parse_long(k, c, arg, 1, 1000000);
    else if (c == 'c') /* IOR's collective flag (collective is already the default here) */
        k->collective = 1;
    else if (c == 'p') {
        if (strcmp(arg, "contiguous") == 0)
            strided = 0;
        else if (strcmp(arg, "strided") == 0)
            strided = 1;
        else
            k_usage_error(k, "-p: expected contiguous or strided, got '%s'", arg);
    }
}

int main(int argc, char **argv)
{
    kctx k = {
        .name = "h5ior",
        .opts = "b:x:p:s:c",
        .usage = "  -b SIZE    bytes per rank per step (default 16M), as IOR's -b\n"
                 "  -x SIZE    transfer size, one H5Dwrite each (default 1M); IOR's -t, which is -t N\n"
                 "             (steps) here as in every iotuner kernel\n"
                 "  -s N       segments, as IOR's -s: the same as -t N\n"
                 "  -c         collective transfers, as IOR's -c (the default here; -m independent for IOR's)\n"
                 "  -p LAYOUT  contiguous | strided (default contiguous)\n",
        .on_opt = on_opt,
        .step_groups = 1,
    };
    k_init(&k, &argc, &argv);
    if (xfer == 0 || block == 0 || block % xfer != 0)
        k_usage_error(&k, "-b must be a positive multiple of -x (b=%" PRIu64 ", x=%" PRIu64 ")",
                      block, xfer);
    if (block / xfer > (1u << 24))
        k_usage_error(&k, "too many transfers per rank (b/x > 16M)");

    uint64_t ntransfers = block / xfer, np = (uint64_t)k.nprocs, r = (uint64_t)k.rank;
    hsize_t dims = block * np, count = xfer;
    kvar *v = k_add_var(&k, "data", KT_U8, 1, &dims, 0, 0);
    for (uint64_t i = 0; i < ntransfers; i++) {
        hsize_t start = strided ? (i * np + r) * xfer : r * block + i * xfer;
        k_var_box(&k, v, &start, &count);
    }
    snprintf(k.desc, sizeof k.desc,
             "block=%" PRIu64 " transfer=%" PRIu64 " layout=%s transfers_per_rank=%" PRIu64, block,
             xfer, strided ? "strided" : "contiguous", ntransfers);
    return k_run(&k);
}
