/* pnetcdf_late FILE: an Open MPI program that loads PnetCDF after MPI_Init (dlopen, as Python's PnetCDF binding
 * is imported after mpi4py) and creates a file through it: a library built for another MPI, preloaded, has
 * pointed its trampolines at the other MPI's functions before PnetCDF was there, and must find PnetCDF's own
 * at the first call, MPI handles untouched. */
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>

#ifndef PNETCDF_SONAME /* the test passes the installed one */
#define PNETCDF_SONAME "libpnetcdf.so.0d"
#endif

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    if (argc != 2 || !dlopen(PNETCDF_SONAME, RTLD_NOW | RTLD_GLOBAL)) {
        fprintf(stderr, "pnetcdf_late: usage: pnetcdf_late FILE (and " PNETCDF_SONAME "): %s\n", dlerror());
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int (*create)(MPI_Comm, const char *, int, MPI_Info, int *) =
        (int (*)(MPI_Comm, const char *, int, MPI_Info, int *))dlsym(RTLD_DEFAULT, "ncmpi_create");
    int (*close)(int) = (int (*)(int))dlsym(RTLD_DEFAULT, "ncmpi_close");
    int ncid, rc = create(MPI_COMM_WORLD, argv[1], 0, MPI_INFO_NULL, &ncid);
    if (rc == 0)
        rc = close(ncid);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0)
        printf("pnetcdf_late: %s\n", rc == 0 ? "ok" : "FAILED");
    MPI_Finalize();
    return rc != 0;
}
