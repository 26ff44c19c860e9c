/* A serial program that creates many small files (POSIX only), as a
 * pre-processing step or a file-per-object output does. It times its own
 * loop, so process start-up and the library's report at exit are left to the
 * caller's wall clock.
 *
 *   bench_many_files DIR FILES BYTES_PER_FILE
 * prints: files=N bytes=B loop_s=S */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "now.h"

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: %s DIR FILES BYTES_PER_FILE\n", argv[0]);
        return 2;
    }
    long files = atol(argv[2]);
    size_t size = (size_t)atol(argv[3]);
    char *buf = calloc(1, size ? size : 1);
    char path[4096];
    double t0 = now();
    for (long i = 0; i < files; i++) {
        snprintf(path, sizeof path, "%s/part_%06ld.dat", argv[1], i);
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0 || (size && write(fd, buf, size) != (ssize_t)size) || close(fd) != 0) {
            perror(path);
            return 1;
        }
    }
    printf("files=%ld bytes=%zu loop_s=%.6f\n", files, size * (size_t)files, now() - t0);
    free(buf);
    return 0;
}
