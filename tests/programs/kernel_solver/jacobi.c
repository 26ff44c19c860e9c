#include <math.h>

#include "solver.h"

#define AT(u, g, r, c) ((u)[(r) * (g)->nx + (c)])

/* A hot spot in the middle of the plate, cold edges. */
void initial_field(double *u, const grid *g)
{
    for (long r = 0; r < g->rows + 2; r++) {
        long y = g->row0 + r - 1;
        for (long c = 0; c < g->nx; c++) {
            double dx = (double)c / (double)g->nx - 0.5, dy = (double)y / (double)g->ny - 0.5;
            AT(u, g, r, c) = exp(-40.0 * (dx * dx + dy * dy));
        }
    }
}

void exchange_halos(double *u, const grid *g, MPI_Comm comm)
{
    MPI_Sendrecv(&AT(u, g, 1, 0), (int)g->nx, MPI_DOUBLE, g->up, 0, &AT(u, g, g->rows + 1, 0), (int)g->nx,
                 MPI_DOUBLE, g->down, 0, comm, MPI_STATUS_IGNORE);
    MPI_Sendrecv(&AT(u, g, g->rows, 0), (int)g->nx, MPI_DOUBLE, g->down, 1, &AT(u, g, 0, 0), (int)g->nx, MPI_DOUBLE,
                 g->up, 1, comm, MPI_STATUS_IGNORE);
}

/* One sweep of the 5-point stencil; the plate's edges stay fixed. Returns the local squared change. */
double jacobi_sweep(const double *u, double *unew, const grid *g)
{
    double change = 0.0;
    for (long r = 1; r <= g->rows; r++) {
        long y = g->row0 + r - 1;
        for (long c = 0; c < g->nx; c++) {
            if (y == 0 || y == g->ny - 1 || c == 0 || c == g->nx - 1) {
                AT(unew, g, r, c) = AT(u, g, r, c);
                continue;
            }
            double v = 0.25 * (AT(u, g, r - 1, c) + AT(u, g, r + 1, c) + AT(u, g, r, c - 1) + AT(u, g, r, c + 1));
            change += (v - AT(u, g, r, c)) * (v - AT(u, g, r, c));
            AT(unew, g, r, c) = v;
        }
    }
    return change;
}

/* The heat flux magnitude, by central differences (one-sided at the edges). */
void gradient(const double *u, double *flux, const grid *g)
{
    for (long r = 1; r <= g->rows; r++) {
        for (long c = 0; c < g->nx; c++) {
            long l = c > 0 ? c - 1 : c, h = c + 1 < g->nx ? c + 1 : c;
            double gx = (AT(u, g, r, h) - AT(u, g, r, l)) / (double)(h - l);
            double gy = 0.5 * (AT(u, g, r + 1, c) - AT(u, g, r - 1, c));
            AT(flux, g, r, c) = sqrt(gx * gx + gy * gy);
        }
    }
}
