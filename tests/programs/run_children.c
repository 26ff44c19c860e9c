/* An MPI program whose ranks run other programs that do I/O: each rank writes 1 MiB to a file of its own, then
 * runs this same executable as a plain program ("write FILE BYTES": no MPI_Init, though it links MPI) through
 * HOW: system, popen, spawn (posix_spawn) or exec (fork, then execv). Each run program writes 512 KiB.
 *   run_children HOW DIR        run_children write FILE BYTES */
#include <fcntl.h>
#include <mpi.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define MIB (1 << 20)

extern char **environ;

static int write_file(const char *path, size_t n)
{
    static char buf[MIB];
    memset(buf, 'x', sizeof buf);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        return 1;
    while (n > 0) {
        ssize_t w = write(fd, buf, n < sizeof buf ? n : sizeof buf);
        if (w <= 0)
            return 1;
        n -= (size_t)w;
    }
    return close(fd) != 0;
}

static int run(const char *how, char *self, char *path)
{
    char *argv[] = {self, "write", path, "524288", NULL};
    char line[8192];
    snprintf(line, sizeof line, "'%s' write '%s' 524288", self, path);
    if (!strcmp(how, "system"))
        return system(line) != 0;
    if (!strcmp(how, "popen")) {
        FILE *p = popen(line, "r");
        return !p || pclose(p) != 0;
    }
    pid_t pid;
    int status;
    if (!strcmp(how, "spawn")) {
        if (posix_spawn(&pid, self, NULL, NULL, argv, environ) != 0)
            return 1;
    } else {
        pid = fork();
        if (pid == 0) {
            execv(self, argv);
            _exit(127);
        }
    }
    return pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0;
}

int main(int argc, char **argv)
{
    if (argc == 4 && !strcmp(argv[1], "write"))
        return write_file(argv[2], (size_t)atol(argv[3]));
    if (argc != 3) {
        fprintf(stderr, "usage: run_children system|popen|spawn|exec DIR\n");
        return 2;
    }
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    char own[4096], child[4096], self[4096];
    snprintf(own, sizeof own, "%s/rank%d.dat", argv[2], rank);
    snprintf(child, sizeof child, "%s/child%d.dat", argv[2], rank);
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    int failed = n <= 0 || write_file(own, MIB);
    if (!failed) {
        self[n] = 0;
        failed = run(argv[1], self, child);
    }
    if (failed)
        fprintf(stderr, "run_children: rank %d failed\n", rank);
    MPI_Finalize();
    return failed;
}
