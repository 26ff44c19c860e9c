/* FLASH-IO: the checkpoint of the FLASH adaptive-mesh code, HDF5 parallel
 * layout (after the FLASH I/O benchmark; one file per checkpoint).
 *
 * Weak scaling: every rank owns B blocks of NXB^3 zones. A checkpoint holds
 * a small header written by rank 0 (unknown names, real and integer scalars,
 * two attributes), the per-block tree metadata (refine level, node type, gid,
 * coordinates, block size, bounding box), then one float64 dataset
 * [nblocks, NXB, NXB, NXB] per unknown; rank r owns blocks [r*B, (r+1)*B).
 * Many small datasets next to a few big ones: the metadata-heavy pattern. */
#include "k_hdf5.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NAME_LEN 80 /* FLASH's fixed-length scalar names */

static uint64_t blocks = 32;
static long nxb = 8, nunk = 24;
static char (*unk_names)[4];

typedef struct {
    char name[NAME_LEN];
    double value;
} real_scalar;

typedef struct {
    char name[NAME_LEN];
    int32_t value;
} int_scalar;

enum { NREAL = 4, NINT = 6 };

static void on_opt(kctx *k, int c, const char *arg)
{
    if (c == 'b')
        blocks = k_parse_size(k, c, arg);
    else if (c == 'z')
        nxb = k_parse_long(k, c, arg, 1, 1024);
    else if (c == 'u')
        nunk = k_parse_long(k, c, arg, 1, 999);
}

/* The header of checkpoint `step`, a function of the options only. */
static void header(const kctx *k, int step, real_scalar *rs, int_scalar *is)
{
    static const char *rnames[NREAL] = {"time", "dt", "dtold", "redshift"};
    static const char *inames[NINT] = {"nstep", "nbegin", "globalnumblocks",
                                       "nxb", "nyb", "nzb"};
    const double dt = 1e-4;
    double rv[NREAL] = {dt * 100 * (step + 1), dt, dt, 0};
    int32_t iv[NINT] = {100 * (step + 1), 1, (int32_t)(blocks * (uint64_t)k->nprocs),
                        (int32_t)nxb, (int32_t)nxb, (int32_t)nxb};
    memset(rs, 0, NREAL * sizeof *rs); /* names are NUL-padded: deterministic bytes */
    memset(is, 0, NINT * sizeof *is);
    for (int i = 0; i < NREAL; i++) {
        snprintf(rs[i].name, NAME_LEN, "%s", rnames[i]);
        rs[i].value = rv[i];
    }
    for (int i = 0; i < NINT; i++) {
        snprintf(is[i].name, NAME_LEN, "%s", inames[i]);
        is[i].value = iv[i];
    }
}

/* File type = memory type (padding included), so no conversion happens. */
static void scalar_types(hid_t *rtype, hid_t *itype, hid_t *strtype)
{
    hid_t name = KH(H5Tcopy(H5T_C_S1));
    KH(H5Tset_size(name, NAME_LEN));
    *rtype = KH(H5Tcreate(H5T_COMPOUND, sizeof(real_scalar)));
    KH(H5Tinsert(*rtype, "name", offsetof(real_scalar, name), name));
    KH(H5Tinsert(*rtype, "value", offsetof(real_scalar, value), H5T_NATIVE_DOUBLE));
    *itype = KH(H5Tcreate(H5T_COMPOUND, sizeof(int_scalar)));
    KH(H5Tinsert(*itype, "name", offsetof(int_scalar, name), name));
    KH(H5Tinsert(*itype, "value", offsetof(int_scalar, value), H5T_NATIVE_INT32));
    KH(H5Tclose(name));
    /* 4-character unknown names fill the string: pad, do not terminate. */
    *strtype = KH(H5Tcopy(H5T_C_S1));
    KH(H5Tset_size(*strtype, 4));
    KH(H5Tset_strpad(*strtype, H5T_STR_NULLPAD));
}

static void close_types(hid_t a, hid_t b, hid_t c)
{
    KH(H5Tclose(a));
    KH(H5Tclose(b));
    KH(H5Tclose(c));
}

static void write_header(kctx *k, int step)
{
    hid_t loc = k_hdf5_location(k);
    real_scalar rs[NREAL];
    int_scalar is[NINT];
    hid_t rtype, itype, strtype;
    header(k, step, rs, is);
    scalar_types(&rtype, &itype, &strtype);
    int32_t version = 9, chk = step;
    /* Attribute writes are collective in parallel HDF5: every rank passes
     * the same value. */
    k_attr_write(loc, "file format version", H5T_STD_I32LE, H5T_NATIVE_INT32, &version);
    k_attr_write(loc, "checkpoint number", H5T_STD_I32LE, H5T_NATIVE_INT32, &chk);
    hsize_t ndims[2] = {(hsize_t)nunk, 1}, rdim = NREAL, idim = NINT;
    k_write_rank0(k, loc, "unknown names", strtype, strtype, 2, ndims, unk_names);
    k_write_rank0(k, loc, "real scalars", rtype, rtype, 1, &rdim, rs);
    k_write_rank0(k, loc, "integer scalars", itype, itype, 1, &idim, is);
    close_types(rtype, itype, strtype);
}

static long mismatch(const kctx *k, const char *what, int *reported)
{
    if (!(*reported)++)
        fprintf(stderr, "%s verify: rank %d: first wrong element: %s\n", k->name, k->rank, what);
    return 1;
}

static long read_header(kctx *k, int step)
{
    hid_t loc = k_hdf5_location(k);
    real_scalar rs[NREAL], want_rs[NREAL];
    int_scalar is[NINT], want_is[NINT];
    hid_t rtype, itype, strtype;
    char (*names)[4] = k_malloc((size_t)nunk * 4);
    long bad = 0;
    int reported = 0;
    header(k, step, want_rs, want_is);
    scalar_types(&rtype, &itype, &strtype);
    int32_t version, chk;
    k_attr_read(loc, "file format version", H5T_NATIVE_INT32, &version);
    k_attr_read(loc, "checkpoint number", H5T_NATIVE_INT32, &chk);
    if (version != 9)
        bad += mismatch(k, "attribute \"file format version\"", &reported);
    if (chk != step)
        bad += mismatch(k, "attribute \"checkpoint number\"", &reported);
    k_read_rank0(k, loc, "unknown names", strtype, (size_t)nunk * 4, names);
    k_read_rank0(k, loc, "real scalars", rtype, sizeof rs, rs);
    k_read_rank0(k, loc, "integer scalars", itype, sizeof is, is);
    if (k->rank == 0) { /* only rank 0 read the header datasets */
        char what[128];
        for (long i = 0; i < nunk; i++)
            if (memcmp(names[i], unk_names[i], 4) != 0) {
                snprintf(what, sizeof what, "dataset \"unknown names\" element %ld", i);
                bad += mismatch(k, what, &reported);
            }
        for (int i = 0; i < NREAL; i++)
            if (strncmp(rs[i].name, want_rs[i].name, NAME_LEN) != 0 ||
                memcmp(&rs[i].value, &want_rs[i].value, sizeof(double)) != 0) {
                snprintf(what, sizeof what, "dataset \"real scalars\" element %d", i);
                bad += mismatch(k, what, &reported);
            }
        for (int i = 0; i < NINT; i++)
            if (strncmp(is[i].name, want_is[i].name, NAME_LEN) != 0 ||
                is[i].value != want_is[i].value) {
                snprintf(what, sizeof what, "dataset \"integer scalars\" element %d", i);
                bad += mismatch(k, what, &reported);
            }
    }
    close_types(rtype, itype, strtype);
    free(names);
    return bad;
}

int main(int argc, char **argv)
{
    kctx k = {
        .name = "flashio",
        .stem = "flashio_chk",
        .opts = "b:z:u:",
        .usage = "  -b B       blocks per rank (default 32)\n"
                 "  -z NXB     zones per block edge, blocks are NXB^3 (default 8)\n"
                 "  -u U       unknowns, one float64 dataset each (default 24)\n",
        .on_opt = on_opt,
        .always_file_per_step = 1,
        .extra_write = write_header,
        .extra_read = read_header,
    };
    k_init(&k, &argc, &argv);
    if (blocks == 0 || blocks > (1u << 24))
        k_usage_error(&k, "-b: blocks per rank must be in [1, 2^24]");
    if (blocks * (uint64_t)k.nprocs > INT32_MAX)
        k_usage_error(&k, "-b: too many blocks in total for 32-bit block ids");

    /* FLASH's 4-character variable names, then numbered ones. */
    static const char *known[] = {"dens", "pres", "temp", "ener", "eint", "gamc", "game",
                                  "velx", "vely", "velz", "gpot", "magx", "magy", "magz",
                                  "divb", "magp", "pden", "flam", "enuc", "shok"};
    unk_names = k_malloc((size_t)nunk * 4);
    for (long i = 0; i < nunk; i++) {
        char tmp[24];
        if (i < (long)(sizeof known / sizeof known[0]))
            snprintf(tmp, sizeof tmp, "%s", known[i]);
        else
            snprintf(tmp, sizeof tmp, "u%03ld", i);
        memcpy(unk_names[i], tmp, 4);
    }

    uint64_t nb = blocks * (uint64_t)k.nprocs, b0 = blocks * (uint64_t)k.rank;
    /* The tree metadata: 1-D to 3-D, leading dimension the block. */
    struct {
        const char *name;
        ktype type;
        int ndims;
        uint64_t d1, d2;
        double lo, span;
    } meta[] = {
        {"refine level", KT_I32, 1, 0, 0, 1, 6},
        {"node type", KT_I32, 1, 0, 0, 1, 3},
        {"gid", KT_I32, 2, 15, 0, -1, (double)nb + 1},
        {"coordinates", KT_F64, 2, 3, 0, 0, 1},
        {"block size", KT_F64, 2, 3, 0, 0, 0.125},
        {"bounding box", KT_F64, 3, 3, 2, 0, 1},
    };
    for (size_t i = 0; i < sizeof meta / sizeof meta[0]; i++) {
        uint64_t dims[3] = {nb, meta[i].d1, meta[i].d2};
        uint64_t start[3] = {b0, 0, 0}, count[3] = {blocks, meta[i].d1, meta[i].d2};
        kvar *v = k_add_var(&k, meta[i].name, meta[i].type, meta[i].ndims, dims, meta[i].lo,
                            meta[i].span);
        k_var_box(&k, v, start, count);
    }
    uint64_t z = (uint64_t)nxb;
    uint64_t dims[4] = {nb, z, z, z}, start[4] = {b0, 0, 0, 0}, count[4] = {blocks, z, z, z};
    for (long i = 0; i < nunk; i++) {
        char name[8];
        snprintf(name, sizeof name, "%.4s", unk_names[i]);
        kvar *v = k_add_var(&k, name, KT_F64, 4, dims, 0, 1);
        k_var_box(&k, v, start, count);
    }
    snprintf(k.desc, sizeof k.desc,
             "blocks_per_rank=%" PRIu64 " nxb=%ld unknowns=%ld global_blocks=%" PRIu64, blocks,
             nxb, nunk, (uint64_t)nb);
    int status = k_run(&k);
    free(unk_names);
    return status;
}
