/* An MPI job that starts more processes with MPI_Comm_spawn: its 2 ranks write 1 MiB each to FILE, then spawn
 * one process (this executable) that writes 3 MiB to FILE.child through MPI-IO.  spawn_io FILE */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#define MIB (1 << 20)

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    if (argc != 2) {
        fprintf(stderr, "usage: spawn_io FILE\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Comm parent;
    MPI_Comm_get_parent(&parent);
    static char buf[3 * MIB];
    memset(buf, 's', sizeof buf);
    MPI_File fh;
    if (parent == MPI_COMM_NULL) {
        int rank;
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
        MPI_File_write_at_all(fh, (MPI_Offset)rank * MIB, buf, MIB, MPI_BYTE, MPI_STATUS_IGNORE);
        MPI_File_close(&fh);
        MPI_Comm child;
        char *args[] = {argv[1], NULL};
        MPI_Comm_spawn(argv[0], args, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &child, MPI_ERRCODES_IGNORE);
        MPI_Barrier(child); /* the child has written */
        MPI_Comm_disconnect(&child);
    } else {
        char path[4096];
        snprintf(path, sizeof path, "%s.child", argv[1]);
        MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
        MPI_File_write(fh, buf, 3 * MIB, MPI_BYTE, MPI_STATUS_IGNORE);
        MPI_File_close(&fh);
        MPI_Barrier(parent);
        MPI_Comm_disconnect(&parent);
    }
    MPI_Finalize();
    return 0;
}
