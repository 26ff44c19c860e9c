/* pnetcdf_cmp A B: the same variables (names, dimensions, values) in two netCDF files, whatever their layout
 * (an alignment moves the data, never changes it). Prints "same" or the first difference; exit 0 / 1. One
 * process (MPI_COMM_SELF). */
#include <mpi.h>
#include <pnetcdf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int check(int err, const char *what)
{
    if (err != NC_NOERR) {
        fprintf(stderr, "pnetcdf_cmp: %s: %s\n", what, ncmpi_strerror(err));
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return err;
}

/* The MPI datatype of a netCDF external type (NC_BYTE .. NC_UINT64), and its bytes. */
static MPI_Datatype mpi_type(nc_type t, MPI_Offset *size)
{
    static const MPI_Offset sizes[] = {0, 1, 1, 2, 4, 4, 8, 1, 2, 4, 8, 8};
    MPI_Datatype types[] = {MPI_DATATYPE_NULL, MPI_SIGNED_CHAR, MPI_CHAR,           MPI_SHORT,
                            MPI_INT,           MPI_FLOAT,       MPI_DOUBLE,         MPI_UNSIGNED_CHAR,
                            MPI_UNSIGNED_SHORT, MPI_UNSIGNED,   MPI_LONG_LONG_INT, MPI_UNSIGNED_LONG_LONG};
    int ok = t > 0 && t < (nc_type)(sizeof sizes / sizeof *sizes);
    *size = ok ? sizes[t] : 0;
    return ok ? types[t] : MPI_DATATYPE_NULL;
}

/* A variable's values in its own type, as bytes; *n their size. */
static void *values(int ncid, int varid, MPI_Offset *n)
{
    int ndims, dims[64]; /* PnetCDF's NC_MAX_VAR_DIMS is INT_MAX */
    nc_type type;
    MPI_Offset elems = 1, len;
    check(ncmpi_inq_varndims(ncid, varid, &ndims), "ncmpi_inq_varndims");
    if (ndims > 64) {
        fprintf(stderr, "pnetcdf_cmp: a variable of %d dimensions\n", ndims);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    check(ncmpi_inq_var(ncid, varid, NULL, &type, NULL, dims, NULL), "ncmpi_inq_var");
    for (int d = 0; d < ndims; d++) {
        check(ncmpi_inq_dimlen(ncid, dims[d], &len), "ncmpi_inq_dimlen");
        elems *= len;
    }
    MPI_Offset size;
    MPI_Datatype mtype = mpi_type(type, &size);
    *n = elems * size;
    void *buf = malloc(*n ? *n : 1);
    check(ncmpi_get_var_all(ncid, varid, buf, elems, mtype), "ncmpi_get_var_all");
    return buf;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    if (argc != 3) {
        fprintf(stderr, "usage: pnetcdf_cmp A B\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int a, b, nvars, nvars_b, differ = 0;
    check(ncmpi_open(MPI_COMM_SELF, argv[1], NC_NOWRITE, MPI_INFO_NULL, &a), argv[1]);
    check(ncmpi_open(MPI_COMM_SELF, argv[2], NC_NOWRITE, MPI_INFO_NULL, &b), argv[2]);
    check(ncmpi_inq_nvars(a, &nvars), "ncmpi_inq_nvars");
    check(ncmpi_inq_nvars(b, &nvars_b), "ncmpi_inq_nvars");
    if (nvars != nvars_b) {
        printf("pnetcdf_cmp: %d variables against %d\n", nvars, nvars_b);
        differ = 1;
    }
    for (int v = 0; v < nvars && !differ; v++) {
        char name[256 + 1]; /* NC_MAX_NAME */
        int w;
        check(ncmpi_inq_varname(a, v, name), "ncmpi_inq_varname");
        if (ncmpi_inq_varid(b, name, &w) != NC_NOERR) {
            printf("pnetcdf_cmp: no variable %s in %s\n", name, argv[2]);
            differ = 1;
            break;
        }
        MPI_Offset na, nb;
        void *va = values(a, v, &na), *vb = values(b, w, &nb);
        if (na != nb || memcmp(va, vb, (size_t)na)) {
            printf("pnetcdf_cmp: variable %s differs\n", name);
            differ = 1;
        }
        free(va);
        free(vb);
    }
    ncmpi_close(a);
    ncmpi_close(b);
    if (!differ)
        printf("pnetcdf_cmp: same\n");
    MPI_Finalize();
    return differ;
}
