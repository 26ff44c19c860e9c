/* Each rank does its I/O through the C library's streams, and through descriptors duplicated from a file's:
 *   data.R.dat   fopen "wb", 4 fwrite of 1 MiB, fclose; then fopen "rb", 4 fread of 1 MiB
 *   text.R.txt   fprintf of 100 lines, fputs, fputc, putc; then fgets to the end, fgetc, getline, fscanf
 *   mixed.R.dat  open + write 64 KiB, then fdopen of the descriptor + fwrite 64 KiB, fclose
 *   dup.R.dat    open; dup of it written 32 KiB; stdout put on it with dup2, printf 4 KiB; stdout put back
 *                (dup2 onto the tracked descriptor 1), then the first descriptor written 16 KiB and closed
 *   first.R.txt  fopen, fputs "first\n", then freopen onto
 *   second.R.txt fputs "second\n", fclose
 * Argument: the directory. Stdout and stderr are written too (they are not files of the job). */
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MiB (1 << 20)

static void die(const char *what)
{
    perror(what);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static FILE *open_stream(const char *dir, const char *name, int rank, const char *mode)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.%d.%s", dir, name, rank, strcmp(name, "text") ? "dat" : "txt");
    FILE *f = fopen(path, mode);
    if (!f)
        die(path);
    return f;
}

static int open_fd(const char *dir, const char *name, int rank)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.%d.dat", dir, name, rank);
    int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
    if (fd < 0)
        die(path);
    return fd;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc < 2)
        die("usage: stdio_io DIR");
    const char *dir = argv[1];
    char *buf = malloc(MiB);
    memset(buf, 'a' + rank, MiB);
    printf("rank %d writes to stdout\n", rank);
    fprintf(stderr, "rank %d writes to stderr\n", rank);
    fflush(stdout);

    FILE *f = open_stream(dir, "data", rank, "wb");
    for (int i = 0; i < 4; i++)
        if (fwrite(buf, 1, MiB, f) != MiB)
            die("fwrite");
    fclose(f);
    f = open_stream(dir, "data", rank, "rb");
    for (int i = 0; i < 4; i++)
        if (fread(buf, MiB, 1, f) != 1)
            die("fread");
    fclose(f);

    f = open_stream(dir, "text", rank, "w");
    for (int i = 0; i < 100; i++)
        fprintf(f, "line %d of rank %d\n", i, rank);
    fputs("a line by fputs\n", f);
    fputc('x', f);
    putc('\n', f);
    fprintf(f, "42 43\n");
    fclose(f);
    f = open_stream(dir, "text", rank, "r");
    char line[256];
    for (int i = 0; i < 101; i++)
        if (!fgets(line, sizeof line, f))
            die("fgets");
    if (fgetc(f) != 'x')
        die("fgetc");
    char *got = NULL;
    size_t cap = 0;
    if (getline(&got, &cap, f) != 1)
        die("getline");
    int a, b;
    if (fscanf(f, "%d %d", &a, &b) != 2 || a != 42)
        die("fscanf");
    free(got);
    fclose(f);

    int fd = open_fd(dir, "mixed", rank);
    if (write(fd, buf, 65536) != 65536)
        die("write");
    f = fdopen(fd, "w");
    if (!f || fwrite(buf, 1, 65536, f) != 65536)
        die("fdopen");
    fclose(f);

    fd = open_fd(dir, "dup", rank);
    int copy = dup(fd);
    if (write(copy, buf, 32768) != 32768)
        die("write dup");
    close(copy);
    int saved = dup(1);
    fflush(stdout);
    if (dup2(fd, 1) != 1)
        die("dup2");
    buf[4095] = 0;
    printf("%s", buf); /* 4095 bytes and a newline */
    putchar('\n');
    fflush(stdout);
    if (dup2(saved, 1) != 1) /* stdout back: the file's tracking of descriptor 1 ends */
        die("dup2 back");
    close(saved);
    printf("rank %d is back on stdout\n", rank);
    fflush(stdout);
    if (write(fd, buf, 16384) != 16384)
        die("write after");
    close(fd);

    f = open_stream(dir, "first", rank, "w");
    fputs("first\n", f);
    char second[4096];
    snprintf(second, sizeof second, "%s/second.%d.dat", dir, rank);
    f = freopen(second, "w", f);
    if (!f)
        die("freopen");
    fputs("second\n", f);
    fclose(f);

    free(buf);
    MPI_Finalize();
    return 0;
}
