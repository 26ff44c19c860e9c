/* The kernels' parallel netCDF-4 format: one netCDF-4 (HDF5) file opened with nc_create_par / nc_open_par,
 * variables with a leading dimension "time", a step per record; each box one blocking nc_put_vara
 * (reads nc_get_vara), every variable in the access mode of -m (nc_var_par_access). Underneath, netCDF
 * calls HDF5: iotuner's HDF5 module measures these files. "time" has the file's steps as its fixed length:
 * netCDF-4 cannot extend a variable in independent mode. */
#define _POSIX_C_SOURCE 200809L

#include "common.h"

#include <netcdf.h>
#include <netcdf_par.h>
#include <stdlib.h>

#define KNC(call) check((call), #call)

static struct {
    int ncid;
    int *varids;
} nc4 = {.ncid = -1};

static void check(int err, const char *what)
{
    if (err != NC_NOERR)
        k_fatal("netCDF call failed: %s: %s", what, nc_strerror(err));
}

void k_format_init(kctx *k)
{
    if (k->halo)
        k_fatal("a halo needs HDF5's memory selections: this kernel is built for netCDF-4");
}

void k_format_finish(kctx *k)
{
    (void)k;
    free(nc4.varids);
}

static nc_type file_type(ktype t)
{
    switch (t) {
    case KT_U8: return NC_UBYTE;
    case KT_I32: return NC_INT;
    case KT_I64: return NC_INT64;
    case KT_F32: return NC_FLOAT;
    default: return NC_DOUBLE;
    }
}

/* A variable's dimension ids, time first; a dimension is shared by name (its length must agree). */
static void define_dims(const kvar *v, int time, int *ids)
{
    ids[0] = time;
    for (int d = 0; d < v->ndims; d++) {
        char name[64];
        size_t len;
        k_dim_name(v, d, name, sizeof name);
        if (nc_inq_dimid(nc4.ncid, name, &ids[d + 1]) != NC_NOERR) {
            KNC(nc_def_dim(nc4.ncid, name, (size_t)v->dims[d], &ids[d + 1]));
            continue;
        }
        KNC(nc_inq_dimlen(nc4.ncid, ids[d + 1], &len));
        if (len != v->dims[d])
            k_fatal("dimension %s: %s needs %llu, another variable %zu", name, v->path,
                    (unsigned long long)v->dims[d], len);
    }
}

void k_format_open(kctx *k, const char *path, int write)
{
    MPI_Comm comm = k->file_per_process ? MPI_COMM_SELF : MPI_COMM_WORLD;
    nc4.varids = realloc(nc4.varids, (size_t)(k->nvars ? k->nvars : 1) * sizeof *nc4.varids);
    if (!nc4.varids)
        k_fatal("out of memory");
    int err = write ? nc_create_par(path, NC_NETCDF4 | NC_CLOBBER, comm, MPI_INFO_NULL, &nc4.ncid)
                    : nc_open_par(path, NC_NOWRITE, comm, MPI_INFO_NULL, &nc4.ncid);
    if (err != NC_NOERR)
        k_fatal("cannot %s %s: %s", write ? "create" : "open", path, nc_strerror(err));
    int time = -1, ids[K_MAXDIM + 1];
    if (write)
        KNC(nc_def_dim(nc4.ncid, "time", k->file_per_step ? 1 : (size_t)k->steps, &time));
    for (int i = 0; i < k->nvars; i++) {
        kvar *v = &k->vars[i];
        if (write) {
            define_dims(v, time, ids);
            KNC(nc_def_var(nc4.ncid, v->path, file_type(v->type), v->ndims + 1, ids, &nc4.varids[i]));
        } else if (nc_inq_varid(nc4.ncid, v->path, &nc4.varids[i]) != NC_NOERR) {
            k_fatal("no variable %s in %s (written with other options?)", v->path, path);
        }
        KNC(nc_var_par_access(nc4.ncid, nc4.varids[i], k->collective ? NC_COLLECTIVE : NC_INDEPENDENT));
    }
    if (write)
        KNC(nc_enddef(nc4.ncid));
}

/* One call per box, empty ones included (collective access needs every rank), at the step's record. */
static void transfer(kctx *k, kvar *v, int step, int write)
{
    int varid = nc4.varids[v - k->vars];
    size_t rec = k->file_per_step ? 0 : (size_t)step;
    char *p = v->buf;
    for (int i = 0; i < v->nboxes; i++) {
        const kbox *b = &v->boxes[i];
        uint64_t n = k_box_nelem(v, b);
        size_t start[K_MAXDIM + 1] = {rec}, count[K_MAXDIM + 1] = {n ? 1 : 0};
        for (int d = 0; d < v->ndims; d++) {
            start[d + 1] = n ? (size_t)b->start[d] : 0;
            count[d + 1] = (size_t)b->count[d];
        }
        /* the variable's own type in memory: no conversion */
        KNC(write ? nc_put_vara(nc4.ncid, varid, start, count, p) : nc_get_vara(nc4.ncid, varid, start, count, p));
        k->bytes += n * k_type_size(v->type);
        p += k_box_mem_bytes(k, v, b);
    }
}

void k_format_step_begin(kctx *k, int step, int write)
{
    (void)k, (void)step, (void)write;
}

void k_format_write_var(kctx *k, kvar *v, int step)
{
    transfer(k, v, step, 1);
}

void k_format_read_var(kctx *k, kvar *v, int step)
{
    transfer(k, v, step, 0);
}

void k_format_step_end(kctx *k, int step, int write)
{
    (void)k, (void)step, (void)write;
}

void k_format_close(kctx *k, int write)
{
    if (write && k->flush)
        KNC(nc_sync(nc4.ncid));
    KNC(nc_close(nc4.ncid));
    nc4.ncid = -1;
}

const kformat k_format = {
    .name = "netCDF-4",
    .suffix = ".nc",
    .flush_call = "nc_sync",
    .mode_help = "netCDF-4 parallel access (nc_var_par_access)",
};
