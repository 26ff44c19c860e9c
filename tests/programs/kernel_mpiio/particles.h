/* kernel_mpiio: a particle "simulation" with MPI-IO dumps, for `iotuner kernel`.
 *
 *   kernel_mpiio DIR [STEPS [EVERY [PARTICLES [WORK]]]]
 *
 * Rank 0 reads the parameters and broadcasts them. Each step pushes the
 * particles (written later: the kernel keeps it) and computes an expensive
 * interaction energy that only goes to the log file (the kernel drops it).
 * Every EVERY steps, and once at the end, positions and velocities go to a
 * shared file with MPI_File_write_at_all at offsets from an MPI_Exscan; the
 * final file is read back in chunks and its checksum logged. */
#ifndef KERNEL_MPIIO_H
#define KERNEL_MPIIO_H

#include <mpi.h>

typedef struct {
    double *pos;
    double *vel;
    long n;
} particles;

int dump(const char *path, const particles *p, long before, long total, MPI_Info info);
double read_back(const char *path, long n, long before, long chunk);

#endif
