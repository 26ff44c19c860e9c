/* The kernels' HDF5 format: every file through the MPI-IO driver (H5Pset_fapl_mpio), a
 * dataset per variable and step (in the step's group /Step#N), one H5Dwrite / H5Dread per box
 * with the transfer mode of -m. */
#define _POSIX_C_SOURCE 200809L

#include "k_hdf5.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct {
    hid_t fapl, dxpl, dcpl, lcpl;
    hid_t file, loc;
    int io_mode_reported; /* collective fallback already reported */
} h5 = {.file = -1, .loc = -1};

long k_h5check(long ret, const char *what, const char *file, int line)
{
    if (ret < 0)
        k_fatal("HDF5 call failed: %s (%s:%d)", what, file, line);
    return ret;
}

hid_t k_hdf5_location(const kctx *k)
{
    (void)k;
    return h5.loc;
}

void k_format_init(kctx *k)
{
    h5.fapl = KH(H5Pcreate(H5P_FILE_ACCESS));
    KH(H5Pset_fapl_mpio(h5.fapl, k->file_per_process ? MPI_COMM_SELF : MPI_COMM_WORLD, MPI_INFO_NULL));
    h5.dxpl = KH(H5Pcreate(H5P_DATASET_XFER));
    KH(H5Pset_dxpl_mpio(h5.dxpl, k->collective ? H5FD_MPIO_COLLECTIVE : H5FD_MPIO_INDEPENDENT));
    /* Every element gets written, so skip the fill-value write at allocation. */
    h5.dcpl = KH(H5Pcreate(H5P_DATASET_CREATE));
    KH(H5Pset_fill_time(h5.dcpl, H5D_FILL_TIME_NEVER));
    h5.lcpl = KH(H5Pcreate(H5P_LINK_CREATE));
    KH(H5Pset_create_intermediate_group(h5.lcpl, 1));
}

void k_format_finish(kctx *k)
{
    (void)k;
    H5Pclose(h5.fapl);
    H5Pclose(h5.dxpl);
    H5Pclose(h5.dcpl);
    H5Pclose(h5.lcpl);
}

static hid_t file_type(ktype t)
{
    switch (t) {
    case KT_U8: return H5T_STD_U8LE;
    case KT_I32: return H5T_STD_I32LE;
    case KT_I64: return H5T_STD_I64LE;
    case KT_F32: return H5T_IEEE_F32LE;
    default: return H5T_IEEE_F64LE;
    }
}

static hid_t mem_type(ktype t)
{
    switch (t) {
    case KT_U8: return H5T_NATIVE_UINT8;
    case KT_I32: return H5T_NATIVE_INT32;
    case KT_I64: return H5T_NATIVE_INT64;
    case KT_F32: return H5T_NATIVE_FLOAT;
    default: return H5T_NATIVE_DOUBLE;
    }
}

static void dims_of(int n, const uint64_t *in, hsize_t *out)
{
    for (int d = 0; d < n; d++)
        out[d] = (hsize_t)in[d];
}

/* ---------------------------------------------------------------- transfers */

static void check_io_mode(kctx *k)
{
    /* HDF5 silently falls back to independent I/O in some cases (1.10: any
     * type conversion); say so once, as it changes what is being tuned. */
    if (!k->collective || h5.io_mode_reported)
        return;
    H5D_mpio_actual_io_mode_t mode;
    uint32_t local_cause, global_cause;
    KH(H5Pget_mpio_actual_io_mode(h5.dxpl, &mode));
    if (mode == H5D_MPIO_NO_COLLECTIVE) {
        h5.io_mode_reported = 1;
        KH(H5Pget_mpio_no_collective_cause(h5.dxpl, &local_cause, &global_cause));
        if (k->rank == 0)
            fprintf(stderr,
                    "%s note: collective transfer requested but HDF5 did independent I/O "
                    "(no-collective cause 0x%x)\n",
                    k->name, (unsigned)global_cause);
    }
}

/* One H5Dwrite / H5Dread of box b; an empty box selects nothing but still
 * takes part, as collective transfers need every rank. */
static void xfer_box(kctx *k, hid_t ds, hid_t fs, const kvar *v, const kbox *b, void *p,
                     int write)
{
    static char dummy[8];
    hsize_t n = k_box_nelem(v, b);
    hid_t ms;
    if (n == 0) {
        hsize_t one = 1;
        KH(H5Sselect_none(fs));
        ms = KH(H5Screate_simple(1, &one, NULL));
        KH(H5Sselect_none(ms));
        p = dummy;
    } else {
        hsize_t start[K_MAXDIM], count[K_MAXDIM];
        dims_of(v->ndims, b->start, start);
        dims_of(v->ndims, b->count, count);
        KH(H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL));
        if (k->mem_shaped) {
            /* The local array, halo included; only its interior is transferred. A shaped
             * memory space also keeps HDF5 on its fast chunk-mapping path (same shape in
             * memory and file); a 1-D one makes it map chunked datasets element by element. */
            hsize_t mdims[K_MAXDIM], mstart[K_MAXDIM];
            for (int d = 0; d < v->ndims; d++) {
                mdims[d] = count[d] + 2 * k->halo;
                mstart[d] = k->halo;
            }
            ms = KH(H5Screate_simple(v->ndims, mdims, NULL));
            if (k->halo)
                KH(H5Sselect_hyperslab(ms, H5S_SELECT_SET, mstart, NULL, count, NULL));
        } else {
            ms = KH(H5Screate_simple(1, &n, NULL));
        }
    }
    if (write)
        KH(H5Dwrite(ds, mem_type(v->type), ms, fs, h5.dxpl, p));
    else
        KH(H5Dread(ds, mem_type(v->type), ms, fs, h5.dxpl, p));
    KH(H5Sclose(ms));
    check_io_mode(k);
    k->bytes += n * k_type_size(v->type);
}

void k_format_write_var(kctx *k, kvar *v, int step)
{
    (void)step;
    hsize_t dims[K_MAXDIM];
    dims_of(v->ndims, v->dims, dims);
    hid_t fs = KH(H5Screate_simple(v->ndims, dims, NULL));
    hid_t ds = KH(H5Dcreate2(h5.loc, v->path, file_type(v->type), fs, h5.lcpl, h5.dcpl, H5P_DEFAULT));
    char *p = v->buf;
    for (int i = 0; i < v->nboxes; i++) {
        xfer_box(k, ds, fs, v, &v->boxes[i], p, 1);
        p += k_box_mem_bytes(k, v, &v->boxes[i]);
    }
    KH(H5Dclose(ds));
    KH(H5Sclose(fs));
}

/* H5Lexists on each component, so a missing intermediate group is not an
 * error stack but a plain message. */
static void require_path(hid_t loc, const char *path)
{
    char buf[256];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf)
        k_fatal("path too long: %s", path);
    for (char *s = buf;; s++) {
        if (*s != '/' && *s != '\0')
            continue;
        char c = *s;
        *s = '\0';
        if (KH(H5Lexists(loc, buf, H5P_DEFAULT)) == 0)
            k_fatal("no object %s in the file (written with other options?)", buf);
        if (!c)
            break;
        *s = c;
    }
}

void k_format_read_var(kctx *k, kvar *v, int step)
{
    (void)step;
    require_path(h5.loc, v->path);
    hid_t ds = KH(H5Dopen2(h5.loc, v->path, H5P_DEFAULT));
    hid_t fs = KH(H5Dget_space(ds));
    hsize_t dims[K_MAXDIM];
    int nd = (int)KH(H5Sget_simple_extent_ndims(fs));
    if (nd != v->ndims)
        k_fatal("dataset %s has %d dimensions, expected %d (written with other options?)",
                v->path, nd, v->ndims);
    KH(H5Sget_simple_extent_dims(fs, dims, NULL));
    for (int d = 0; d < nd; d++)
        if (dims[d] != v->dims[d])
            k_fatal("dataset %s: dimension %d is %llu, expected %llu (written with other "
                    "options?)",
                    v->path, d, (unsigned long long)dims[d], (unsigned long long)v->dims[d]);
    char *p = v->buf;
    for (int i = 0; i < v->nboxes; i++) {
        xfer_box(k, ds, fs, v, &v->boxes[i], p, 0);
        p += k_box_mem_bytes(k, v, &v->boxes[i]);
    }
    KH(H5Dclose(ds));
    KH(H5Sclose(fs));
}

void k_write_rank0(kctx *k, hid_t loc, const char *name, hid_t ftype, hid_t mtype, int ndims,
                   const hsize_t *dims, const void *buf)
{
    static const char dummy[8];
    hid_t fs = KH(H5Screate_simple(ndims, dims, NULL));
    hid_t ds = KH(H5Dcreate2(loc, name, ftype, fs, h5.lcpl, h5.dcpl, H5P_DEFAULT));
    hid_t ms = KH(H5Scopy(fs));
    if (k->rank != 0) {
        KH(H5Sselect_none(fs));
        KH(H5Sselect_none(ms));
        buf = dummy;
    } else {
        k->bytes += (uint64_t)KH(H5Sget_simple_extent_npoints(fs)) * H5Tget_size(mtype);
    }
    KH(H5Dwrite(ds, mtype, ms, fs, h5.dxpl, buf));
    check_io_mode(k);
    KH(H5Sclose(ms));
    KH(H5Dclose(ds));
    KH(H5Sclose(fs));
}

void k_read_rank0(kctx *k, hid_t loc, const char *name, hid_t mtype, size_t nbytes, void *buf)
{
    static char dummy[8];
    require_path(loc, name);
    hid_t ds = KH(H5Dopen2(loc, name, H5P_DEFAULT));
    hid_t fs = KH(H5Dget_space(ds));
    size_t need = (size_t)KH(H5Sget_simple_extent_npoints(fs)) * H5Tget_size(mtype);
    if (need != nbytes)
        k_fatal("dataset %s holds %zu bytes, expected %zu", name, need, nbytes);
    hid_t ms = KH(H5Scopy(fs));
    if (k->rank != 0) {
        KH(H5Sselect_none(fs));
        KH(H5Sselect_none(ms));
        buf = dummy;
    } else {
        k->bytes += nbytes;
    }
    KH(H5Dread(ds, mtype, ms, fs, h5.dxpl, buf));
    check_io_mode(k);
    KH(H5Sclose(ms));
    KH(H5Sclose(fs));
    KH(H5Dclose(ds));
}

void k_attr_write(hid_t loc, const char *name, hid_t ftype, hid_t mtype, const void *value)
{
    hid_t sp = KH(H5Screate(H5S_SCALAR));
    hid_t a = KH(H5Acreate2(loc, name, ftype, sp, H5P_DEFAULT, H5P_DEFAULT));
    KH(H5Awrite(a, mtype, value));
    KH(H5Aclose(a));
    KH(H5Sclose(sp));
}

void k_attr_read(hid_t loc, const char *name, hid_t mtype, void *value)
{
    hid_t a = KH(H5Aopen(loc, name, H5P_DEFAULT));
    KH(H5Aread(a, mtype, value));
    KH(H5Aclose(a));
}

/* ---------------------------------------------------------------- files */

void k_format_open(kctx *k, const char *path, int write)
{
    (void)k;
    h5.file = write ? H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, h5.fapl) : H5Fopen(path, H5F_ACC_RDONLY, h5.fapl);
    if (h5.file < 0)
        k_fatal("cannot %s %s", write ? "create" : "open", path);
}

void k_format_step_begin(kctx *k, int step, int write)
{
    h5.loc = h5.file;
    if (!k->step_groups)
        return;
    char g[32];
    snprintf(g, sizeof g, "Step#%d", step);
    if (!write && KH(H5Lexists(h5.file, g, H5P_DEFAULT)) == 0)
        k_fatal("no group /%s in the file (written with other options?)", g);
    h5.loc = write ? KH(H5Gcreate2(h5.file, g, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT))
                   : KH(H5Gopen2(h5.file, g, H5P_DEFAULT));
}

void k_format_step_end(kctx *k, int step, int write)
{
    (void)k, (void)step, (void)write;
    if (h5.loc != h5.file)
        KH(H5Gclose(h5.loc));
    h5.loc = -1;
}

void k_format_close(kctx *k, int write)
{
    if (write && k->flush)
        KH(H5Fflush(h5.file, H5F_SCOPE_GLOBAL));
    KH(H5Fclose(h5.file));
    h5.file = -1;
}

const kformat k_format = {
    .name = "HDF5",
    .suffix = ".h5",
    .flush_call = "H5Fflush(H5F_SCOPE_GLOBAL)",
    .mode_help = "HDF5 transfer mode",
};
