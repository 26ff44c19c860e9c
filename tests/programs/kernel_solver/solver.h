/* kernel_solver: an MPI + parallel HDF5 heat-equation solver for `iotuner kernel`.
 *
 *   kernel_solver PARAMS DIR
 *
 * PARAMS is a text file "NX NY SWEEPS OUTPUTS". The NY x NX grid is split by
 * rows over the ranks (offsets from an MPI_Exscan). Between outputs the ranks
 * run SWEEPS Jacobi sweeps of the 5-point stencil with halo exchanges: the
 * solver takes most of the run time, and its field is what is written. Each
 * output writes DIR/field_NNNN.h5 with the temperature and its gradient, plus
 * the step and time as attributes. Rank 0 logs the residual. */
#ifndef KERNEL_SOLVER_H
#define KERNEL_SOLVER_H

#include <hdf5.h>
#include <mpi.h>

/* This rank's part of the grid: rows [row0, row0 + rows) of ny, with a halo row above and below. */
typedef struct {
    long nx, ny, rows, row0;
    int up, down; /* neighbour ranks, MPI_PROC_NULL at the edges */
} grid;

/* jacobi.c */
void initial_field(double *u, const grid *g);
void exchange_halos(double *u, const grid *g, MPI_Comm comm);
double jacobi_sweep(const double *u, double *unew, const grid *g);
void gradient(const double *u, double *flux, const grid *g);

/* output.c */
int write_output(const char *path, const grid *g, double *const fields[], const char *const names[], int nfields,
                 int step, double time, MPI_Comm comm);

#endif
