#include <math.h>

#include "app.h"

/* Ranks own different numbers of cells, so offsets need communication. */
long cells_of_rank(int rank, long base)
{
    return base + 1000L * (rank % 4);
}

/* The field that is written: cheap, and it must stay in the kernel. */
void field_values(double *out, long n, long first, int step)
{
    for (long i = 0; i < n; i++)
        out[i] = sin(1e-3 * (double)(first + i)) + 0.5 * step;
}

/* An expensive diagnostic whose result is only logged. */
double diagnostic(const double *work, long n, int sweeps)
{
    double acc = 0.0;
    for (int s = 0; s < sweeps; s++) {
        for (long i = 0; i < n; i++)
            acc += exp(-fabs(work[i])) * cos(work[i] + s);
        acc *= 0.5;
    }
    return acc;
}

/* A smoothing pass whose results feed only the diagnostic. */
void relax(double *work, double *scratch, long n)
{
    for (long i = 1; i + 1 < n; i++)
        scratch[i] = 0.25 * work[i - 1] + 0.5 * work[i] + 0.25 * work[i + 1];
    for (long i = 1; i + 1 < n; i++)
        work[i] = scratch[i];
}
