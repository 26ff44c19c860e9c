/* The access patterns of the two-phase I/O tests: every rank writes (then
 * reads back and checks) COUNT blocks of BLOCK bytes of a shared file with
 * collective calls, either
 *   contiguous: its COUNT blocks as one region, one MPI_File_write_at_all per
 *               CALLS blocks (CALLS = COUNT: one call), or
 *   strided:    block i of rank r at (i * ranks + r) * BLOCK, through a view
 *               (a vector filetype) and MPI_File_write_all of CALLS blocks;
 *   sparse:     as strided, with a hole of one BLOCK after every row of blocks
 *               (block i of rank r at (i * (ranks + 1) + r) * BLOCK).
 * Byte values are a function of the offset, so a read checks what landed; with "nocheck" (after CALLS) the
 * buffer is filled once before the phases and reads are not checked, so the phases hold the MPI-IO calls
 * alone (bench/simulate.py times them on many ranks sharing two cores). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char value(MPI_Offset off) { return (char)((off * 7 + 3) % 251); }

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    if (argc < 6) {
        fprintf(stderr, "usage: %s FILE BLOCK COUNT contiguous|strided|sparse write|read|both [CALLS [nocheck]]\n",
                argv[0]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long block = atol(argv[2]), count = atol(argv[3]);
    int sparse = !strcmp(argv[4], "sparse"), strided = sparse || !strcmp(argv[4], "strided");
    long slots = size + sparse; /* blocks per row of the file */
    int do_write = strcmp(argv[5], "read") != 0, do_read = strcmp(argv[5], "write") != 0;
    long per_call = argc > 6 ? atol(argv[6]) : count;
    int check = !(argc > 7 && !strcmp(argv[7], "nocheck"));
    if (block <= 0 || count <= 0 || per_call <= 0 || count % per_call) {
        fprintf(stderr, "two_phase: CALLS must divide COUNT\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    char *buf = malloc((size_t)(block * per_call));
    if (!check)
        memset(buf, 7, (size_t)(block * per_call));
    MPI_Datatype filetype = MPI_BYTE;
    if (strided) {
        MPI_Type_vector((int)count, (int)block, (int)(block * slots), MPI_BYTE, &filetype);
        MPI_Type_commit(&filetype);
    }
    int bad = 0;
    for (int pass = 0; pass < 2; pass++) {
        int writing = pass == 0;
        if ((writing && !do_write) || (!writing && !do_read))
            continue;
        MPI_File fh;
        int amode = writing ? MPI_MODE_CREATE | MPI_MODE_WRONLY : MPI_MODE_RDONLY;
        if (MPI_File_open(MPI_COMM_WORLD, argv[1], amode, MPI_INFO_NULL, &fh) != MPI_SUCCESS)
            MPI_Abort(MPI_COMM_WORLD, 1);
        if (strided)
            MPI_File_set_view(fh, (MPI_Offset)rank * block, MPI_BYTE, filetype, "native", MPI_INFO_NULL);
        for (long c = 0; c < count / per_call; c++) {
            for (long k = 0; check && writing && k < per_call; k++) {
                long i = c * per_call + k;
                MPI_Offset at = strided ? ((MPI_Offset)i * slots + rank) * block
                                        : ((MPI_Offset)rank * count + i) * block;
                for (long j = 0; j < block; j++)
                    buf[k * block + j] = value(at + j);
            }
            MPI_Offset off = strided ? 0 : ((MPI_Offset)rank * count + c * per_call) * block;
            int n = (int)(block * per_call);
            if (strided && writing)
                MPI_File_write_all(fh, buf, n, MPI_BYTE, MPI_STATUS_IGNORE);
            else if (strided)
                MPI_File_read_all(fh, buf, n, MPI_BYTE, MPI_STATUS_IGNORE);
            else if (writing)
                MPI_File_write_at_all(fh, off, buf, n, MPI_BYTE, MPI_STATUS_IGNORE);
            else
                MPI_File_read_at_all(fh, off, buf, n, MPI_BYTE, MPI_STATUS_IGNORE);
            for (long k = 0; check && !writing && k < per_call; k++) {
                long i = c * per_call + k;
                MPI_Offset at = strided ? ((MPI_Offset)i * slots + rank) * block
                                        : ((MPI_Offset)rank * count + i) * block;
                for (long j = 0; j < block; j++)
                    bad += buf[k * block + j] != value(at + j);
            }
        }
        MPI_File_close(&fh);
    }
    int all_bad = 0;
    MPI_Allreduce(&bad, &all_bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (strided)
        MPI_Type_free(&filetype);
    free(buf);
    if (rank == 0)
        printf("two_phase: %s\n", all_bad ? "BAD DATA" : "ok");
    MPI_Finalize();
    return all_bad != 0;
}
