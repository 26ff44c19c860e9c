/* H5IOR: the access pattern of IOR's HDF5 backend (one H5Dwrite per
 * transfer), with IOR's option letters.
 *
 * Every rank writes -b bytes per segment in -b/-t transfers of -t bytes into
 * a 1-D uint8 dataset /Step#N/data (one per segment; one element = one byte,
 * so offsets and sizes are in bytes). Shared file: the dataset has b * nprocs
 * elements; contiguous: rank r owns [r*b, (r+1)*b) and writes it in order;
 * strided: transfer i of rank r goes to offset (i*nprocs + r)*t, interleaving
 * the ranks. The bytes depend only on their offset, so both layouts produce
 * the same file. -F: each rank writes its b bytes to a file of its own. */
#include "common.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static uint64_t block = 16u << 20, xfer = 1u << 20;
static int strided, steps_letter;

static void on_opt(kctx *k, int c, const char *arg)
{
    if (c == 'b')
        block = k_parse_size(k, c, arg);
    else if (c == 't' || c == 'x') /* -x: this kernel's letter before it took IOR's */
        xfer = k_parse_size(k, c, arg);
    else if (c == 's' || c == 'i') { /* both set the step count: segments share a file, iterations do not */
        if (steps_letter && steps_letter != c)
            k_usage_error(k, "-s and -i cannot be combined: each sets the number of steps");
        steps_letter = c;
        k->steps = (int)k_parse_long(k, c, arg, 1, 1000000);
        k->file_per_step = c == 'i';
    } else if (c == 'c')
        k->collective = 1;
    else if (c == 'F')
        k->file_per_process = 1;
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
        .opts = "b:x:p:s:i:c",
        .own_opts = "tF",
        .usage = "  -b SIZE    block: bytes per rank per segment (default 16M), as IOR's -b\n"
                 "  -t SIZE    transfer size, one H5Dwrite each (default 1M), as IOR's -t (-x: the same)\n"
                 "  -s N       segments, as IOR's -s: N datasets /Step#N in one file (default 1)\n"
                 "  -i N       iterations, as IOR's -i: N files h5ior_NNNN.h5, each created, written and\n"
                 "             closed in turn (IOR rewrites one file); not with -s\n"
                 "  -F         file per process, as IOR's -F: each rank its own file h5ior.RRRRRRRR.h5,\n"
                 "             opened on MPI_COMM_SELF (default: one shared file)\n"
                 "  -c         collective transfers, as IOR's -c (the default here; -m independent for IOR's)\n"
                 "  -p LAYOUT  contiguous | strided (default contiguous; strided needs a shared file)\n",
        .on_opt = on_opt,
        .step_groups = 1,
    };
    k_init(&k, &argc, &argv);
    if (xfer == 0 || block == 0 || block % xfer != 0)
        k_usage_error(&k, "-b must be a positive multiple of -t (b=%" PRIu64 ", t=%" PRIu64 ")",
                      block, xfer);
    if (block / xfer > (1u << 24))
        k_usage_error(&k, "too many transfers per rank (b/t > 16M)");

    if (strided && k.file_per_process)
        k_usage_error(&k, "-p strided interleaves the ranks in one file: not with -F");

    /* With -F a rank's file holds its block alone: it is rank 0 of a one-process layout. */
    uint64_t ntransfers = block / xfer;
    uint64_t np = k.file_per_process ? 1 : (uint64_t)k.nprocs, r = k.file_per_process ? 0 : (uint64_t)k.rank;
    uint64_t dims = block * np, count = xfer;
    kvar *v = k_add_var(&k, "data", KT_U8, 1, &dims, 0, 0);
    for (uint64_t i = 0; i < ntransfers; i++) {
        uint64_t start = strided ? (i * np + r) * xfer : r * block + i * xfer;
        k_var_box(&k, v, &start, &count);
    }
    snprintf(k.desc, sizeof k.desc,
             "block=%" PRIu64 " transfer=%" PRIu64 " layout=%s transfers_per_rank=%" PRIu64, block,
             xfer, k.file_per_process ? "file-per-process" : strided ? "strided" : "contiguous", ntransfers);
    return k_run(&k);
}
