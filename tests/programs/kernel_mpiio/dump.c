#include <stdlib.h>

#include "particles.h"

/* One section of a shared file: every rank's n doubles in rank order.
 * Returns where the next section starts. */
static MPI_Offset write_section(MPI_File fh, MPI_Offset base, const double *data, long n, long before, long total)
{
    MPI_Status status;
    MPI_File_write_at_all(fh, base + (MPI_Offset)before * (MPI_Offset)sizeof(double), data, (int)n, MPI_DOUBLE,
                          &status);
    return base + (MPI_Offset)total * (MPI_Offset)sizeof(double);
}

int dump(const char *path, const particles *p, long before, long total, MPI_Info info)
{
    MPI_File fh;
    if (MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, info, &fh) != MPI_SUCCESS)
        return -1;
    MPI_Offset next = 0;
    next = write_section(fh, next, p->pos, p->n, before, total);
    next = write_section(fh, next, p->vel, p->n, before, total);
    MPI_File_close(&fh);
    return 0;
}

/* Reads this rank's positions back in chunks; the checksum is only logged. */
double read_back(const char *path, long n, long before, long chunk)
{
    MPI_File fh;
    MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    double *buf = malloc((size_t)chunk * sizeof *buf);
    double sum = 0.0;
    long done = 0;
    while (done < n) {
        long count = n - done < chunk ? n - done : chunk;
        MPI_Status status;
        MPI_File_read_at(fh, (MPI_Offset)(before + done) * (MPI_Offset)sizeof(double), buf, (int)count, MPI_DOUBLE,
                         &status);
        for (long i = 0; i < count; i++)
            sum += buf[i];
        done += count;
    }
    MPI_File_close(&fh);
    free(buf);
    return sum;
}
