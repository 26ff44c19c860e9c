/* kernel_fnptr: output through a table of function pointers, which the I/O
 * extractor of `iotuner kernel` refuses (its fall-back case).
 *
 *   kernel_fnptr DIR [FORMAT]     FORMAT 0: HDF5 (default), 1: MPI-IO
 *
 * Which writer runs is chosen at run time by indexing a table, so no call
 * names the writer: finding the calls that reach it would need a points-to
 * analysis of function pointers, which the extractor does not do. */
#ifndef KERNEL_FNPTR_H
#define KERNEL_FNPTR_H

typedef int (*writer_fn)(const char *dir, const double *data, long n, long offset, long total);

int write_hdf5(const char *dir, const double *data, long n, long offset, long total);
int write_mpiio(const char *dir, const double *data, long n, long offset, long total);

#endif
