/* kernel_app: a small MPI + parallel HDF5 "simulation" for `iotuner kernel`.
 *
 *   kernel_app DIR [STEPS [CELLS [SWEEPS]]]
 *
 * Each step spends most of its time in a diagnostic whose result is only
 * logged (the kernel drops it), computes a field that it writes (the kernel
 * keeps it), and writes DIR/step_NNNN.h5. Ranks own different numbers of
 * cells; their offsets come from an MPI_Exscan. At the end a checkpoint goes
 * through the same output functions, and rank 0 writes an index with POSIX
 * calls. stdout gets the log. */
#ifndef KERNEL_APP_H
#define KERNEL_APP_H

#include <hdf5.h>
#include <mpi.h>

/* An open output file and how it is written. */
typedef struct {
    hid_t file;
    hid_t dxpl;
    int datasets;
} output;

/* compute.c */
long cells_of_rank(int rank, long base);
void field_values(double *out, long n, long first, int step);
double diagnostic(const double *work, long n, int sweeps);
void relax(double *work, double *scratch, long n);

/* io.c */
int output_open(output *out, const char *path, MPI_Comm comm);
int output_write(output *out, const char *name, const double *data, long n, long offset, long total);
void output_close(output *out);
int write_index(const char *dir, const long *counts, int nprocs);

#endif
