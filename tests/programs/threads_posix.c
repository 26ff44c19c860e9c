/* Threads writing to shared files, for the runtime's counting under threads: file a.dat is opened by the main
 * thread and written by it and by T workers; file b.dat is opened by worker 0 and written by it, then by the
 * main thread. Every pwrite is B bytes at its own offset, so each file holds exactly its calls' bytes.
 * usage: threads_posix DIR T N B */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int fd_a, fd_b, nthreads;
static long n, bytes;
static char dir[4096];

static void write_n(int fd, long first)
{
    char *buf = malloc((size_t)bytes);
    memset(buf, 'x', (size_t)bytes);
    for (long i = 0; i < n; i++)
        if (pwrite(fd, buf, (size_t)bytes, (first + i) * bytes) != bytes) {
            perror("pwrite");
            exit(1);
        }
    free(buf);
}

static void *worker(void *arg)
{
    long t = (long)arg;
    if (t == 0) { /* a worker opens b.dat, and the main thread writes it later */
        char path[4200];
        snprintf(path, sizeof path, "%s/b.dat", dir);
        if ((fd_b = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644)) < 0) {
            perror(path);
            exit(1);
        }
        write_n(fd_b, 0);
    }
    write_n(fd_a, t * n);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: %s DIR T N B\n", argv[0]);
        return 2;
    }
    snprintf(dir, sizeof dir, "%s", argv[1]);
    nthreads = atoi(argv[2]);
    n = atol(argv[3]);
    bytes = atol(argv[4]);
    char path[4200];
    snprintf(path, sizeof path, "%s/a.dat", dir);
    if ((fd_a = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644)) < 0) {
        perror(path);
        return 1;
    }
    pthread_t *tid = calloc((size_t)nthreads, sizeof *tid);
    for (long t = 0; t < nthreads; t++)
        pthread_create(&tid[t], NULL, worker, (void *)t);
    write_n(fd_a, nthreads * n); /* concurrently with the workers */
    for (int t = 0; t < nthreads; t++)
        pthread_join(tid[t], NULL);
    write_n(fd_b, n); /* the main thread on worker 0's file */
    close(fd_a);
    close(fd_b);
    free(tid);
    printf("threads_posix: %d threads, %ld writes of %ld bytes each\n", nthreads, n, bytes);
    return 0;
}
