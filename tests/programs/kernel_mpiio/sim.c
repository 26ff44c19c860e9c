#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "particles.h"

struct params {
    int steps, every, work;
    long n;
};

static void init(particles *p, int rank)
{
    for (long i = 0; i < p->n; i++) {
        p->pos[i] = (double)((i * 131 + rank * 17) % 997);
        p->vel[i] = 0.0;
    }
}

/* Moves the particles: the data that is dumped, so the kernel keeps this. */
static void push(particles *p, double dt)
{
    double *x = p->pos;
    double *v = p->vel;
    for (long i = 0; i < p->n; i++) {
        v[i] += dt * sin(x[i]);
        x[i] += dt * v[i];
    }
}

/* An expensive pairwise energy over a window of neighbours: only logged. */
static double interactions(const particles *p, int work)
{
    double e = 0.0;
    for (long i = 0; i < p->n; i++)
        for (int j = 1; j <= work; j++) {
            double d = p->pos[i] - p->pos[(i + j) % p->n];
            e += 1.0 / (1.0 + d * d);
        }
    return e;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const char *dir = argc > 1 ? argv[1] : ".";
    struct params prm = {12, 3, 200, 20000};
    if (rank == 0) {
        if (argc > 2)
            prm.steps = atoi(argv[2]);
        if (argc > 3)
            prm.every = atoi(argv[3]);
        if (argc > 4)
            prm.n = atol(argv[4]);
        if (argc > 5)
            prm.work = atoi(argv[5]);
    }
    MPI_Bcast(&prm, (int)sizeof prm, MPI_BYTE, 0, MPI_COMM_WORLD);

    particles p;
    p.n = prm.n + (rank * 37) % 500;
    p.pos = malloc((size_t)p.n * sizeof(double));
    p.vel = malloc((size_t)p.n * sizeof(double));
    init(&p, rank);
    long before = 0, total = 0;
    MPI_Exscan(&p.n, &before, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&p.n, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);

    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "romio_no_indep_rw", "false");

    char path[4096];
    snprintf(path, sizeof path, "%s/sim.log", dir);
    FILE *log = rank == 0 ? fopen(path, "w") : NULL;
    double *energy = malloc((size_t)prm.steps * sizeof *energy);
    for (int step = 0; step < prm.steps; step++) {
        push(&p, 0.01);
        energy[step] = interactions(&p, prm.work);
        if (step % prm.every == 0) {
            snprintf(path, sizeof path, "%s/dump_%03d.dat", dir, step);
            if (dump(path, &p, before, total, info) != 0 && log)
                fprintf(log, "step %d: dump failed\n", step);
        }
        if (log)
            fprintf(log, "step %d energy %.6e\n", step, energy[step]);
    }

    snprintf(path, sizeof path, "%s/final.dat", dir);
    dump(path, &p, before, total, info);
    double check = read_back(path, p.n, before, 4096);
    if (log) {
        fprintf(log, "checksum %.6e\n", check);
        fclose(log);
    }
    MPI_Info_free(&info);
    free(energy);
    free(p.vel);
    free(p.pos);
    MPI_Finalize();
    return 0;
}
