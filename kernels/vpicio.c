/* VPIC-IO: the particle dump of the VPIC plasma code, as written through
 * H5Part (Byna et al.; Behzad et al., Cluster'15 "I/O kernels").
 *
 * Weak scaling: every rank holds N particles of eight variables (x, y, z,
 * px, py, pz as float32; id1, id2 as int32). Each step writes eight 1-D
 * datasets of N * nprocs elements, one H5Dwrite per variable per rank, rank
 * r owning the contiguous range [r*N, (r+1)*N). */
#include "common.h"

#include <inttypes.h>
#include <stdio.h>

static uint64_t particles = 1u << 20;

static void on_opt(kctx *k, int c, const char *arg)
{
    if (c == 'n')
        particles = k_parse_size(k, c, arg);
}

int main(int argc, char **argv)
{
    kctx k = {
        .name = "vpicio",
        .opts = "n:",
        .usage = "  -n N       particles per rank (default 1M)\n",
        .on_opt = on_opt,
        .step_groups = 1,
    };
    k_init(&k, &argc, &argv);
    if (particles == 0 || particles > (1ull << 40))
        k_usage_error(&k, "-n: particles per rank must be in [1, 2^40]");

    /* H5Part's names; positions in a 100-unit box, momenta in [-1, 1). */
    static const struct {
        const char *name;
        ktype type;
        double lo, span;
    } vars[] = {
        {"x", KT_F32, 0, 100},  {"y", KT_F32, 0, 100},  {"z", KT_F32, 0, 100},
        {"px", KT_F32, -1, 2},  {"py", KT_F32, -1, 2},  {"pz", KT_F32, -1, 2},
        {"id1", KT_I32, 0, 0},  {"id2", KT_I32, 0, 0},
    };
    uint64_t dims = particles * (uint64_t)k.nprocs;
    uint64_t start = particles * (uint64_t)k.rank, count = particles;
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        kvar *v = k_add_var(&k, vars[i].name, vars[i].type, 1, &dims, vars[i].lo, vars[i].span);
        k_var_box(&k, v, &start, &count);
    }
    snprintf(k.desc, sizeof k.desc, "particles_per_rank=%" PRIu64 " variables=8", particles);
    return k_run(&k);
}
