/* An MPI program whose ranks fork children that do I/O: each rank writes 1 MiB to its own file, and its child
 * writes 512 KiB through the rank's descriptor (inherited) and 512 KiB to a file of its own, then leaves with
 * _exit (no destructors) or exit ("exit" as the first argument). The job's files: 4 MiB in all, 2 of them the
 * children's.  fork_io [exit] DIR */
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define HALF (512 * 1024)

static void write_all(int fd, const char *buf, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, buf, n);
        if (w <= 0) {
            perror("fork_io: write");
            exit(1);
        }
        buf += w;
        n -= (size_t)w;
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int use_exit = argc > 2 && !strcmp(argv[1], "exit");
    const char *dir = argv[argc - 1];
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    static char buf[2 * HALF];
    memset(buf, 'a' + rank, sizeof buf);
    char path[4096];
    snprintf(path, sizeof path, "%s/rank%d.dat", dir, rank);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        perror("fork_io: open");
        return 1;
    }
    write_all(fd, buf, 2 * HALF);
    pid_t pid = fork();
    if (pid == 0) {
        write_all(fd, buf, HALF); /* the rank's descriptor */
        snprintf(path, sizeof path, "%s/child%d.dat", dir, rank);
        int own = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (own < 0)
            _exit(1);
        write_all(own, buf, HALF);
        close(own);
        close(fd);
        if (use_exit)
            exit(0);
        _exit(0);
    }
    int status = 1;
    if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "fork_io: the child failed\n");
        return 1;
    }
    close(fd);
    MPI_Finalize();
    return 0;
}
