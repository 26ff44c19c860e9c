/* Stands for an MPI library that reads a file of its own inside MPI_Init (MPICH 4.2 reads its launcher's
 * topology file, /tmp/hydra_hwloc_xmlfile_*, there): preloaded after libiotuner.so, so it is the "real"
 * MPI_Init / PMPI_Init the runtime calls. Reads the file INIT_IO_FILE names, then calls the MPI library's. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static void read_own_file(void)
{
    const char *path = getenv("INIT_IO_FILE");
    int fd = path ? open(path, O_RDONLY) : -1;
    if (fd < 0)
        return;
    char buf[4096], line[64];
    ssize_t n, total = 0;
    while ((n = read(fd, buf, sizeof buf)) > 0)
        total += n;
    close(fd);
    int len = snprintf(line, sizeof line, "init_io_shim: read %zd bytes\n", total);
    if (write(2, line, (size_t)len) < 0) /* the test sees the shim ran */
        return;
}

typedef int (*init_fn)(int *, char ***);

int PMPI_Init(int *argc, char ***argv)
{
    read_own_file();
    return ((init_fn)dlsym(RTLD_NEXT, "PMPI_Init"))(argc, argv);
}

int MPI_Init(int *argc, char ***argv)
{
    read_own_file();
    return ((init_fn)dlsym(RTLD_NEXT, "PMPI_Init"))(argc, argv);
}
