/* The kernels' PnetCDF format: one CDF-5 file (NC_64BIT_DATA) whose variables have a leading record
 * dimension "time", a step per record; each box one nonblocking ncmpi_iput_vara_<type> (reads
 * ncmpi_iget_vara_<type>), and one ncmpi_wait_all per step (-m independent: ncmpi_wait in independent
 * data mode), as E3SM's SCORPIO posts a history frame's variables and waits once. */
#define _POSIX_C_SOURCE 200809L

#include "common.h"

#include <pnetcdf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KNC(call) check((call), #call)

static struct {
    int ncid;
    int *varids;
    int *reqs;
    int nreqs, capreqs;
} pnc = {.ncid = -1};

static void check(int err, const char *what)
{
    if (err != NC_NOERR)
        k_fatal("PnetCDF call failed: %s: %s", what, ncmpi_strerror(err));
}

void k_format_init(kctx *k)
{
    if (k->halo)
        k_fatal("a halo needs HDF5's memory selections: this kernel is built for PnetCDF");
}

void k_format_finish(kctx *k)
{
    (void)k;
    free(pnc.varids);
    free(pnc.reqs);
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
static void define_dims(kctx *k, const kvar *v, int time, int *ids)
{
    ids[0] = time;
    for (int d = 0; d < v->ndims; d++) {
        char name[64];
        k_dim_name(v, d, name, sizeof name);
        if (ncmpi_inq_dimid(pnc.ncid, name, &ids[d + 1]) == NC_NOERR) {
            MPI_Offset len;
            KNC(ncmpi_inq_dimlen(pnc.ncid, ids[d + 1], &len));
            if ((uint64_t)len != v->dims[d])
                k_fatal("dimension %s: %s needs %llu, another variable %lld", name, v->path,
                        (unsigned long long)v->dims[d], (long long)len);
        } else {
            KNC(ncmpi_def_dim(pnc.ncid, name, (MPI_Offset)v->dims[d], &ids[d + 1]));
        }
    }
    (void)k;
}

void k_format_open(kctx *k, const char *path, int write)
{
    MPI_Comm comm = k->file_per_process ? MPI_COMM_SELF : MPI_COMM_WORLD;
    pnc.varids = realloc(pnc.varids, (size_t)(k->nvars ? k->nvars : 1) * sizeof *pnc.varids);
    if (!pnc.varids)
        k_fatal("out of memory");
    int err = write ? ncmpi_create(comm, path, NC_CLOBBER | NC_64BIT_DATA, MPI_INFO_NULL, &pnc.ncid)
                    : ncmpi_open(comm, path, NC_NOWRITE, MPI_INFO_NULL, &pnc.ncid);
    if (err != NC_NOERR)
        k_fatal("cannot %s %s: %s", write ? "create" : "open", path, ncmpi_strerror(err));
    if (write) {
        int time, ids[K_MAXDIM + 1];
        KNC(ncmpi_def_dim(pnc.ncid, "time", NC_UNLIMITED, &time));
        for (int i = 0; i < k->nvars; i++) {
            kvar *v = &k->vars[i];
            define_dims(k, v, time, ids);
            KNC(ncmpi_def_var(pnc.ncid, v->path, file_type(v->type), v->ndims + 1, ids, &pnc.varids[i]));
        }
        KNC(ncmpi_enddef(pnc.ncid));
    } else {
        for (int i = 0; i < k->nvars; i++) {
            int nd;
            if (ncmpi_inq_varid(pnc.ncid, k->vars[i].path, &pnc.varids[i]) != NC_NOERR)
                k_fatal("no variable %s in %s (written with other options?)", k->vars[i].path, path);
            KNC(ncmpi_inq_varndims(pnc.ncid, pnc.varids[i], &nd));
            if (nd != k->vars[i].ndims + 1)
                k_fatal("variable %s has %d dimensions, expected %d (written with other options?)",
                        k->vars[i].path, nd, k->vars[i].ndims + 1);
        }
    }
    if (!k->collective)
        KNC(ncmpi_begin_indep_data(pnc.ncid));
}

void k_format_step_begin(kctx *k, int step, int write)
{
    (void)k, (void)step, (void)write;
    pnc.nreqs = 0;
}

static int *next_request(void)
{
    if (pnc.nreqs == pnc.capreqs) {
        pnc.capreqs = pnc.capreqs ? 2 * pnc.capreqs : 256;
        pnc.reqs = realloc(pnc.reqs, (size_t)pnc.capreqs * sizeof *pnc.reqs);
        if (!pnc.reqs)
            k_fatal("out of memory");
    }
    return &pnc.reqs[pnc.nreqs++];
}

/* Posts one request per nonempty box of variable v, at the step's record. */
static void post(kctx *k, kvar *v, int step, int write)
{
    int varid = pnc.varids[v - k->vars];
    MPI_Offset rec = k->file_per_step ? 0 : step;
    char *p = v->buf;
    for (int i = 0; i < v->nboxes; i++) {
        const kbox *b = &v->boxes[i];
        uint64_t n = k_box_nelem(v, b);
        if (n) {
            MPI_Offset start[K_MAXDIM + 1] = {rec}, count[K_MAXDIM + 1] = {1};
            for (int d = 0; d < v->ndims; d++) {
                start[d + 1] = (MPI_Offset)b->start[d];
                count[d + 1] = (MPI_Offset)b->count[d];
            }
            int *req = next_request(), id = pnc.ncid;
            switch (v->type) {
            case KT_U8:
                KNC(write ? ncmpi_iput_vara_uchar(id, varid, start, count, (unsigned char *)p, req)
                          : ncmpi_iget_vara_uchar(id, varid, start, count, (unsigned char *)p, req));
                break;
            case KT_I32:
                KNC(write ? ncmpi_iput_vara_int(id, varid, start, count, (int *)p, req)
                          : ncmpi_iget_vara_int(id, varid, start, count, (int *)p, req));
                break;
            case KT_I64:
                KNC(write ? ncmpi_iput_vara_longlong(id, varid, start, count, (long long *)p, req)
                          : ncmpi_iget_vara_longlong(id, varid, start, count, (long long *)p, req));
                break;
            case KT_F32:
                KNC(write ? ncmpi_iput_vara_float(id, varid, start, count, (float *)p, req)
                          : ncmpi_iget_vara_float(id, varid, start, count, (float *)p, req));
                break;
            case KT_F64:
                KNC(write ? ncmpi_iput_vara_double(id, varid, start, count, (double *)p, req)
                          : ncmpi_iget_vara_double(id, varid, start, count, (double *)p, req));
                break;
            }
            k->bytes += n * k_type_size(v->type);
        }
        p += k_box_mem_bytes(k, v, b);
    }
}

void k_format_write_var(kctx *k, kvar *v, int step)
{
    post(k, v, step, 1);
}

void k_format_read_var(kctx *k, kvar *v, int step)
{
    post(k, v, step, 0);
}

/* The step's requests complete together: one collective wait (independent mode: each rank's own). */
void k_format_step_end(kctx *k, int step, int write)
{
    (void)step, (void)write;
    int *status = k_malloc((size_t)(pnc.nreqs ? pnc.nreqs : 1) * sizeof *status);
    KNC(k->collective ? ncmpi_wait_all(pnc.ncid, pnc.nreqs, pnc.reqs, status)
                      : ncmpi_wait(pnc.ncid, pnc.nreqs, pnc.reqs, status));
    for (int i = 0; i < pnc.nreqs; i++)
        check(status[i], "a request of ncmpi_wait_all");
    free(status);
}

void k_format_close(kctx *k, int write)
{
    if (write && k->flush)
        KNC(ncmpi_sync(pnc.ncid));
    KNC(ncmpi_close(pnc.ncid));
    pnc.ncid = -1;
}

const kformat k_format = {
    .name = "PnetCDF",
    .suffix = ".nc",
    .flush_call = "ncmpi_sync",
    .mode_help = "collective (ncmpi_wait_all) or independent (ncmpi_wait in independent data mode) waits",
};
