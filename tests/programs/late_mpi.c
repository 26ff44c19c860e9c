/* A program that loads Open MPI itself, after start-up (dlopen, as Python's mpi4py does), then writes 256 ints
 * through MPI-IO. It calls the MPI functions the process's global scope finds first, as a program linked against
 * the MPI would. Built without mpi.h: Open MPI's handles are the addresses of its predefined objects. */
#include <dlfcn.h>
#include <stdio.h>

#define MODE_CREATE_WRONLY (1 | 4) /* Open MPI's MPI_MODE_CREATE | MPI_MODE_WRONLY */

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s LIBMPI FILE\n", argv[0]);
        return 2;
    }
    if (!dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL)) {
        fprintf(stderr, "late_mpi: %s\n", dlerror());
        return 2;
    }
    int (*init)(int *, char ***) = (int (*)(int *, char ***))dlsym(RTLD_DEFAULT, "MPI_Init");
    int (*open)(void *, const char *, int, void *, void **) =
        (int (*)(void *, const char *, int, void *, void **))dlsym(RTLD_DEFAULT, "MPI_File_open");
    int (*write_at_all)(void *, long long, const void *, int, void *, void *) =
        (int (*)(void *, long long, const void *, int, void *, void *))dlsym(RTLD_DEFAULT, "MPI_File_write_at_all");
    int (*close)(void **) = (int (*)(void **))dlsym(RTLD_DEFAULT, "MPI_File_close");
    int (*finalize)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "MPI_Finalize");
    void *world = dlsym(RTLD_DEFAULT, "ompi_mpi_comm_world"), *info_null = dlsym(RTLD_DEFAULT, "ompi_mpi_info_null");
    void *mpi_int = dlsym(RTLD_DEFAULT, "ompi_mpi_int");
    if (!init || !open || !write_at_all || !close || !finalize || !world || !info_null || !mpi_int) {
        fprintf(stderr, "late_mpi: %s is not Open MPI\n", argv[1]);
        return 2;
    }
    int data[256];
    for (int i = 0; i < 256; i++)
        data[i] = i;
    void *fh = NULL;
    if (init(&argc, &argv) != 0 || open(world, argv[2], MODE_CREATE_WRONLY, info_null, &fh) != 0 ||
        write_at_all(fh, 0, data, 256, mpi_int, NULL) != 0 || close(&fh) != 0 || finalize() != 0) {
        fprintf(stderr, "late_mpi: an MPI call failed\n");
        return 1;
    }
    printf("late_mpi: ok\n");
    return 0;
}
