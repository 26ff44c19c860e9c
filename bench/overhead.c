/* Hot-path load for the overhead benchmark: many small POSIX writes, then
 * many small H5Dwrite calls. Prints the time of each part, measured inside
 * the program, so process start-up does not dilute the comparison. */
#include <fcntl.h>
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "now.h"

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: %s DIR POSIX_WRITES H5_WRITES [BYTES_PER_WRITE]\n", argv[0]);
        return 2;
    }
    const char *dir = argv[1];
    long nposix = atol(argv[2]), nh5 = atol(argv[3]);
    size_t size = argc > 4 ? (size_t)atol(argv[4]) : 64;
    char path[4096];
    char *buf = calloc(1, size > 4096 ? size : 4096);

    snprintf(path, sizeof path, "%s/overhead_posix.dat", dir);
    int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
    if (fd < 0) {
        perror(path);
        return 1;
    }
    double t0 = now();
    for (long i = 0; i < nposix; i++)
        if (write(fd, buf, size) != (ssize_t)size) {
            perror("write");
            return 1;
        }
    double posix = now() - t0;
    close(fd);

    snprintf(path, sizeof path, "%s/overhead.h5", dir);
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hsize_t per = size / sizeof(double) ? size / sizeof(double) : 1, total = per * (hsize_t)nh5;
    hid_t space = H5Screate_simple(1, &total, NULL), mem = H5Screate_simple(1, &per, NULL);
    hid_t d = H5Dcreate2(f, "values", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (f < 0 || d < 0)
        return 1;
    t0 = now();
    for (long i = 0; i < nh5; i++) {
        hsize_t start = per * (hsize_t)i;
        H5Sselect_hyperslab(space, H5S_SELECT_SET, &start, NULL, &per, NULL);
        if (H5Dwrite(d, H5T_NATIVE_DOUBLE, mem, space, H5P_DEFAULT, buf) < 0)
            return 1;
    }
    double h5 = now() - t0;
    H5Dclose(d);
    H5Sclose(mem);
    H5Sclose(space);
    H5Fclose(f);
    printf("posix_writes=%ld posix_s=%.6f h5_writes=%ld h5_s=%.6f bytes_per_write=%zu\n", nposix, posix, nh5, h5,
           size);
    free(buf);
    return 0;
}
