/* GCRM-IO: the history output of the Global Cloud Resolving Model on its
 * geodesic (icosahedral) grid (Behzad et al., Cluster'15 "I/O kernels").
 *
 * Strong scaling: the grid of resolution R has 10*4^R + 2 cells and
 * 3*(cells-2) edges whatever the rank count; cells and edges are split into
 * contiguous ranges (the last rank takes the remainder). Per step: four
 * cell-centred fields [L, cells], one edge field [L, edges] and two surface
 * fields [cells], all float64. With levels outermost each rank writes L
 * separate pieces of a 3-D field. */
#include "common.h"

#include <inttypes.h>
#include <stdio.h>

static long resolution = 7, levels = 26;

static void on_opt(kctx *k, int c, const char *arg)
{
    if (c == 'g')
        resolution = k_parse_long(k, c, arg, 0, 14);
    else if (c == 'l')
        levels = k_parse_long(k, c, arg, 1, 100000);
}

int main(int argc, char **argv)
{
    kctx k = {
        .name = "gcrmio",
        .opts = "g:l:",
        .usage = "  -g R       grid resolution level: 10*4^R+2 cells (default 7: 163842)\n"
                 "  -l L       vertical levels (default 26)\n",
        .on_opt = on_opt,
        .step_groups = 1,
    };
    k_init(&k, &argc, &argv);

    uint64_t cells = 10 * (1ull << (2 * resolution)) + 2, edges = 3 * (cells - 2);
    uint64_t c0, nc, e0, ne;
    k_split(cells, k.rank, k.nprocs, &c0, &nc);
    k_split(edges, k.rank, k.nprocs, &e0, &ne);

    static const struct {
        const char *name;
        double lo, span;
    } cell3d[] = {{"pressure", 1e3, 1e5},
                  {"temperature", 180, 130},
                  {"specific_humidity", 0, 0.02},
                  {"geopotential", 0, 3e5}},
      surface[] = {{"surface_pressure", 5e4, 5.5e4}, {"precipitation", 0, 1e-3}};

    uint64_t cdims[2] = {(uint64_t)levels, cells}, cstart[2] = {0, c0}, ccount[2] = {levels, nc};
    uint64_t edims[2] = {(uint64_t)levels, edges}, estart[2] = {0, e0}, ecount[2] = {levels, ne};
    for (size_t i = 0; i < sizeof cell3d / sizeof cell3d[0]; i++) {
        kvar *v = k_add_var(&k, cell3d[i].name, KT_F64, 2, cdims, cell3d[i].lo, cell3d[i].span);
        k_var_box(&k, v, cstart, ccount);
    }
    kvar *v = k_add_var(&k, "normal_velocity", KT_F64, 2, edims, -50, 100);
    k_var_box(&k, v, estart, ecount);
    for (size_t i = 0; i < sizeof surface / sizeof surface[0]; i++) {
        v = k_add_var(&k, surface[i].name, KT_F64, 1, &cdims[1], surface[i].lo, surface[i].span);
        k_var_box(&k, v, &cstart[1], &ccount[1]);
    }
    snprintf(k.desc, sizeof k.desc,
             "resolution=%ld cells=%" PRIu64 " edges=%" PRIu64 " levels=%ld", resolution, cells,
             edges, levels);
    return k_run(&k);
}
