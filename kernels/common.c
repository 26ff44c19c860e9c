/* Shared driver of the iotuner I/O kernels: see common.h. */
#define _POSIX_C_SOURCE 200809L

#include "common.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#define COMMON_OPTS "ho:t:Fm:rRy"
#define VERIFY_PIECE 65536 /* elements regenerated at a time when verifying */

static const char *g_name = "kernel";
static int g_rank = 0;

/* ---------------------------------------------------------------- errors */

void k_fatal(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "%s: rank %d: fatal: ", g_name, g_rank);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    fflush(stderr);
    /* One rank failing must not leave the others blocked in a collective. */
    MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1);
}

int64_t k_h5check(int64_t ret, const char *what, const char *file, int line)
{
    if (ret < 0)
        k_fatal("HDF5 call failed: %s (%s:%d)", what, file, line);
    return ret;
}

void *k_malloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        k_fatal("out of memory allocating %zu bytes", n);
    return p;
}

static int owns(const kctx *k, int opt)
{
    return k->own_opts && strchr(k->own_opts, opt);
}

static void usage(const kctx *k, FILE *out)
{
    const char *stem = k->stem ? k->stem : k->name;
    fprintf(out,
            "usage: %s [options]\n"
            "common options:\n"
            "  -o DIR     output directory, created if missing (default .)\n",
            k->name);
    if (!owns(k, 't'))
        fprintf(out, "  -t N       number of timesteps (default 1)\n");
    if (!owns(k, 'F')) {
        if (k->always_file_per_step || !k->step_groups)
            fprintf(out, "  -F         no-op: always one file per timestep, %s_NNNN.h5\n", stem);
        else
            fprintf(out,
                    "  -F         one file per timestep, %s_NNNN.h5 (default: one file %s.h5,\n"
                    "             a group /Step#N per step)\n",
                    stem, stem);
    }
    fprintf(out,
            "  -m MODE    HDF5 transfer mode of the raw data: collective | independent\n"
            "             (default collective)\n"
            "  -r         after writing, reopen the files, read everything back and verify\n"
            "  -R         read and verify existing files only (no write phase)\n"
            "  -y         H5Fflush(H5F_SCOPE_GLOBAL) before each H5Fclose (timed)\n"
            "  -h         this help\n"
            "%s options:\n%s"
            "sizes take binary suffixes K, M, G, T (or KiB, MiB, GiB, TiB).\n",
            k->name, k->usage ? k->usage : "");
}

void k_usage_error(kctx *k, const char *fmt, ...)
{
    /* Every rank parses the same arguments, so every rank gets here. */
    if (k->rank == 0) {
        va_list ap;
        fprintf(stderr, "%s: error: ", k->name);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fprintf(stderr, " (try -h)\n");
    }
    MPI_Finalize();
    exit(2);
}

/* ---------------------------------------------------------------- parsing */

uint64_t k_parse_size(kctx *k, int opt, const char *arg)
{
    char *end;
    errno = 0;
    if (!arg || !*arg || *arg == '-' || *arg == '+')
        k_usage_error(k, "-%c: expected a size, got '%s'", opt, arg ? arg : "");
    unsigned long long v = strtoull(arg, &end, 10);
    if (errno || end == arg)
        k_usage_error(k, "-%c: expected a size, got '%s'", opt, arg);
    int shift = 0;
    if (*end) {
        switch (*end) {
        case 'k': case 'K': shift = 10; break;
        case 'm': case 'M': shift = 20; break;
        case 'g': case 'G': shift = 30; break;
        case 't': case 'T': shift = 40; break;
        default:
            k_usage_error(k, "-%c: bad size suffix in '%s' (use K, M, G, T)", opt, arg);
        }
        end++;
        /* "KiB" is fine; "KB" is refused as it reads as decimal. */
        if (*end && strcasecmp(end, "iB") != 0)
            k_usage_error(k, "-%c: bad size suffix in '%s' (use K, M, G, T or KiB, MiB, ...)",
                          opt, arg);
    }
    if (shift && v > (UINT64_MAX >> shift))
        k_usage_error(k, "-%c: size '%s' too large", opt, arg);
    return (uint64_t)v << shift;
}

long k_parse_long(kctx *k, int opt, const char *arg, long min, long max)
{
    char *end;
    errno = 0;
    long v = strtol(arg, &end, 10);
    if (errno || end == arg || *end)
        k_usage_error(k, "-%c: expected an integer, got '%s'", opt, arg);
    if (v < min || v > max)
        k_usage_error(k, "-%c: %ld is out of range [%ld, %ld]", opt, v, min, max);
    return v;
}

void k_parse_list(kctx *k, int opt, const char *arg, int n, uint64_t *out)
{
    char tmp[256];
    if (strlen(arg) >= sizeof tmp)
        k_usage_error(k, "-%c: argument too long", opt);
    strcpy(tmp, arg);
    char *save = NULL, *tok = strtok_r(tmp, ",", &save);
    int i = 0;
    for (; tok && i < n; i++, tok = strtok_r(NULL, ",", &save)) {
        out[i] = k_parse_size(k, opt, tok);
        if (out[i] == 0)
            k_usage_error(k, "-%c: values must be positive in '%s'", opt, arg);
    }
    if (i != n || tok)
        k_usage_error(k, "-%c: expected %d comma-separated values, got '%s'", opt, n, arg);
}

void k_init(kctx *k, int *argc, char ***argv)
{
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &k->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &k->nprocs);
    g_name = k->name;
    g_rank = k->rank;

    k->outdir = ".";
    k->steps = 1;
    k->collective = 1;

    char optstring[128];
    snprintf(optstring, sizeof optstring, ":%s%s", COMMON_OPTS, k->opts ? k->opts : "");
    int c;
    opterr = 0;
    while ((c = getopt(*argc, *argv, optstring)) != -1) {
        if (c != ':' && c != '?' && owns(k, c)) {
            k->on_opt(k, c, optarg);
            continue;
        }
        switch (c) {
        case 'h':
            if (k->rank == 0)
                usage(k, stdout);
            MPI_Finalize();
            exit(0);
        case 'o':
            if (!*optarg)
                k_usage_error(k, "-o: empty directory name");
            k->outdir = optarg;
            break;
        case 't': k->steps = (int)k_parse_long(k, c, optarg, 1, 1000000); break;
        case 'F': k->file_per_step = 1; break;
        case 'm':
            if (strcmp(optarg, "collective") == 0)
                k->collective = 1;
            else if (strcmp(optarg, "independent") == 0)
                k->collective = 0;
            else
                k_usage_error(k, "-m: expected collective or independent, got '%s'", optarg);
            break;
        case 'r': k->read_back = 1; break;
        case 'R': k->read_back = 1; k->read_only = 1; break;
        case 'y': k->flush = 1; break;
        case ':': k_usage_error(k, "option -%c needs a value", optopt);
        case '?': k_usage_error(k, "unknown option -%c", optopt);
        default:
            k->on_opt(k, c, optarg);
        }
    }
    if (optind < *argc)
        k_usage_error(k, "unexpected argument '%s'", (*argv)[optind]);
    if (k->always_file_per_step || !k->step_groups)
        k->file_per_step = 1; /* without step groups, steps cannot share a file */

    k->fapl = KH(H5Pcreate(H5P_FILE_ACCESS));
    KH(H5Pset_fapl_mpio(k->fapl, k->file_per_process ? MPI_COMM_SELF : MPI_COMM_WORLD, MPI_INFO_NULL));
    k->dxpl = KH(H5Pcreate(H5P_DATASET_XFER));
    KH(H5Pset_dxpl_mpio(k->dxpl, k->collective ? H5FD_MPIO_COLLECTIVE : H5FD_MPIO_INDEPENDENT));
    /* Every element gets written, so skip the fill-value write at allocation. */
    k->dcpl = KH(H5Pcreate(H5P_DATASET_CREATE));
    KH(H5Pset_fill_time(k->dcpl, H5D_FILL_TIME_NEVER));
    k->lcpl = KH(H5Pcreate(H5P_LINK_CREATE));
    KH(H5Pset_create_intermediate_group(k->lcpl, 1));
}

/* ---------------------------------------------------------------- dataset table */

kvar *k_add_var(kctx *k, const char *path, ktype type, int ndims, const hsize_t *dims,
                double lo, double span)
{
    if (ndims < 1 || ndims > K_MAXDIM)
        k_fatal("dataset %s: %d dimensions unsupported", path, ndims);
    if (k->nvars == k->capvars) {
        k->capvars = k->capvars ? 2 * k->capvars : 16;
        kvar *nv = realloc(k->vars, (size_t)k->capvars * sizeof *nv);
        if (!nv)
            k_fatal("out of memory");
        k->vars = nv;
    }
    kvar *v = &k->vars[k->nvars];
    memset(v, 0, sizeof *v);
    v->path = strdup(path);
    if (!v->path)
        k_fatal("out of memory");
    v->type = type;
    v->ndims = ndims;
    memcpy(v->dims, dims, (size_t)ndims * sizeof *dims);
    v->lo = lo;
    v->span = span;
    v->id = k->nvars++;
    return v;
}

static hsize_t box_nelem(const kvar *v, const kbox *b)
{
    hsize_t n = 1;
    for (int d = 0; d < v->ndims; d++)
        n *= b->count[d];
    return n;
}

void k_var_box(kctx *k, kvar *v, const hsize_t *start, const hsize_t *count)
{
    (void)k;
    for (int d = 0; d < v->ndims; d++)
        if (count[d] && start[d] + count[d] > v->dims[d])
            k_fatal("dataset %s: box outside the dataset in dimension %d", v->path, d);
    if (v->nboxes == v->cap) {
        v->cap = v->cap ? 2 * v->cap : 4;
        kbox *nb = realloc(v->boxes, (size_t)v->cap * sizeof *nb);
        if (!nb)
            k_fatal("out of memory");
        v->boxes = nb;
    }
    kbox *b = &v->boxes[v->nboxes++];
    memset(b, 0, sizeof *b);
    memcpy(b->start, start, (size_t)v->ndims * sizeof *start);
    memcpy(b->count, count, (size_t)v->ndims * sizeof *count);
    v->nelem += box_nelem(v, b);
}

void k_split(uint64_t n, int rank, int nprocs, uint64_t *first, uint64_t *count)
{
    uint64_t per = n / (uint64_t)nprocs;
    *first = per * (uint64_t)rank;
    *count = rank == nprocs - 1 ? n - *first : per;
}

/* ---------------------------------------------------------------- data */

static size_t type_size(ktype t)
{
    switch (t) {
    case KT_U8: return 1;
    case KT_I32: case KT_F32: return 4;
    default: return 8;
    }
}

static hid_t file_type(ktype t)
{
    switch (t) {
    case KT_U8: return H5T_STD_U8LE;
    case KT_I32: return H5T_STD_I32LE;
    case KT_I64: return H5T_STD_I64LE;
    case KT_F32: return H5T_IEEE_F32LE;
    default: return H5T_IEEE_F64LE;
    }
}

static hid_t mem_type(ktype t)
{
    switch (t) {
    case KT_U8: return H5T_NATIVE_UINT8;
    case KT_I32: return H5T_NATIVE_INT32;
    case KT_I64: return H5T_NATIVE_INT64;
    case KT_F32: return H5T_NATIVE_FLOAT;
    default: return H5T_NATIVE_DOUBLE;
    }
}

/* splitmix64's finaliser: cheap, and good enough that neighbouring indices
 * give unrelated values (no accidental compressibility). */
static inline uint64_t mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

static inline uint64_t seed_of(int id, int step)
{
    return mix64(((uint64_t)(uint32_t)id << 32) | (uint32_t)step);
}

/* n consecutive elements from global index gidx. */
static void fill_run(ktype t, uint64_t seed, uint64_t gidx, size_t n, double lo, double span,
                     void *out)
{
    size_t i;
    switch (t) {
    case KT_U8: {
        uint8_t *o = out;
        /* Bytes come 8 per hash, picked by the index, so the value of a byte
         * does not depend on where a run starts. */
        for (i = 0; i < n;) {
            uint64_t g = gidx + i, h = mix64((g >> 3) ^ seed);
            for (unsigned b = (unsigned)(g & 7); b < 8 && i < n; b++, i++)
                o[i] = (uint8_t)(h >> (8 * b));
        }
        break;
    }
    case KT_I32: {
        int32_t *o = out;
        for (i = 0; i < n; i++) {
            uint64_t h = mix64((gidx + i) ^ seed);
            o[i] = span > 0 ? (int32_t)((int64_t)lo + (int64_t)(h % (uint64_t)span))
                            : (int32_t)(h >> 33);
        }
        break;
    }
    case KT_I64: {
        int64_t *o = out;
        for (i = 0; i < n; i++) {
            uint64_t h = mix64((gidx + i) ^ seed);
            o[i] = span > 0 ? (int64_t)lo + (int64_t)(h % (uint64_t)span) : (int64_t)(h >> 1);
        }
        break;
    }
    case KT_F32: {
        float *o = out;
        for (i = 0; i < n; i++) {
            uint64_t h = mix64((gidx + i) ^ seed);
            o[i] = (float)(lo + span * ((double)(h >> 40) * 0x1p-24));
        }
        break;
    }
    case KT_F64: {
        double *o = out;
        for (i = 0; i < n; i++) {
            uint64_t h = mix64((gidx + i) ^ seed);
            o[i] = lo + span * ((double)(h >> 11) * 0x1p-53);
        }
        break;
    }
    }
}

/* Walks a box as runs of consecutive global indices (trailing dimensions the
 * box covers entirely merge into one run). */
typedef struct {
    const kvar *v;
    const kbox *b;
    int outer;            /* dimensions iterated by the odometer: [0, outer) */
    hsize_t run;          /* elements per run */
    hsize_t halo;         /* ghost cells around the box in memory */
    hsize_t stride[K_MAXDIM];  /* of the dataset */
    hsize_t mstride[K_MAXDIM]; /* of the box's memory, halo included */
    hsize_t idx[K_MAXDIM];
    int done;
} boxwalk;

/* Elements a box takes in memory: its own, plus the halo around it. */
static hsize_t box_melem(const kctx *k, const kvar *v, const kbox *b)
{
    hsize_t n = box_nelem(v, b);
    if (n == 0 || k->halo == 0)
        return n;
    n = 1;
    for (int d = 0; d < v->ndims; d++)
        n *= b->count[d] + 2 * k->halo;
    return n;
}

static void walk_init(boxwalk *w, const kvar *v, const kbox *b, hsize_t halo)
{
    memset(w, 0, sizeof *w);
    w->v = v;
    w->b = b;
    w->halo = halo;
    hsize_t s = 1, m = 1;
    for (int d = v->ndims - 1; d >= 0; d--) {
        w->stride[d] = s;
        w->mstride[d] = m;
        s *= v->dims[d];
        m *= b->count[d] + 2 * halo;
    }
    w->outer = v->ndims - 1;
    w->run = b->count[v->ndims - 1];
    /* With a halo no two rows are adjacent in memory: runs stay one row long. */
    while (!halo && w->outer > 0 && b->count[w->outer] == v->dims[w->outer]) {
        w->outer--;
        w->run *= b->count[w->outer];
    }
    w->done = box_nelem(v, b) == 0;
}

/* Global index of the current run's first element, and its element offset in
 * the box's memory; returns 0 when done. */
static int walk_next(boxwalk *w, uint64_t *gidx, uint64_t *moff)
{
    if (w->done)
        return 0;
    uint64_t g = 0, m = 0;
    for (int d = 0; d < w->v->ndims; d++) {
        hsize_t i = d < w->outer ? w->idx[d] : 0;
        g += (w->b->start[d] + i) * w->stride[d];
        m += (i + w->halo) * w->mstride[d];
    }
    *gidx = g;
    *moff = m;
    int d = w->outer - 1;
    for (; d >= 0; d--) {
        if (++w->idx[d] < w->b->count[d])
            break;
        w->idx[d] = 0;
    }
    if (d < 0)
        w->done = 1;
    return 1;
}

static void fill_var(const kctx *k, kvar *v, int step)
{
    uint64_t seed = seed_of(v->id, step);
    size_t es = type_size(v->type);
    char *p = v->buf;
    for (int i = 0; i < v->nboxes; i++) {
        boxwalk w;
        uint64_t g, m;
        walk_init(&w, v, &v->boxes[i], k->halo);
        while (walk_next(&w, &g, &m))
            fill_run(v->type, seed, g, w.run, v->lo, v->span, p + m * es);
        p += box_melem(k, v, &v->boxes[i]) * es;
    }
}

static void format_value(ktype t, const void *p, char *out, size_t len)
{
    switch (t) {
    case KT_U8: snprintf(out, len, "%u", *(const uint8_t *)p); break;
    case KT_I32: snprintf(out, len, "%" PRId32, *(const int32_t *)p); break;
    case KT_I64: snprintf(out, len, "%" PRId64, *(const int64_t *)p); break;
    case KT_F32: snprintf(out, len, "%.9g", *(const float *)p); break;
    case KT_F64: snprintf(out, len, "%.17g", *(const double *)p); break;
    }
}

/* Compares the read buffer with regenerated data; reports the first wrong
 * element of this rank. Returns the number of wrong elements. */
static long verify_var(kctx *k, const kvar *v, int step, const char *file, const char *loc)
{
    uint64_t seed = seed_of(v->id, step);
    size_t es = type_size(v->type);
    char *expect = k_malloc(VERIFY_PIECE * es);
    const char *box = v->buf;
    long bad = 0;
    for (int i = 0; i < v->nboxes; i++) {
        boxwalk w;
        uint64_t g, m;
        walk_init(&w, v, &v->boxes[i], k->halo);
        while (walk_next(&w, &g, &m)) {
            const char *p = box + m * es;
            for (hsize_t off = 0; off < w.run; off += VERIFY_PIECE) {
                size_t n = w.run - off < VERIFY_PIECE ? (size_t)(w.run - off) : VERIFY_PIECE;
                fill_run(v->type, seed, g + off, n, v->lo, v->span, expect);
                if (memcmp(expect, p, n * es) != 0) {
                    for (size_t j = 0; j < n; j++) {
                        if (memcmp(expect + j * es, p + j * es, es) == 0)
                            continue;
                        if (bad++ == 0) {
                            char coord[160] = "", ev[40], gv[40];
                            uint64_t e = g + off + j;
                            size_t len = 0;
                            for (int d = v->ndims - 1; d >= 0; d--) {
                                char one[24];
                                snprintf(one, sizeof one, "%s%" PRIu64, d ? "," : "",
                                         (uint64_t)(e % v->dims[d]));
                                e /= v->dims[d];
                                size_t ol = strlen(one);
                                memmove(coord + ol, coord, len + 1);
                                memcpy(coord, one, ol);
                                len += ol;
                            }
                            format_value(v->type, expect + j * es, ev, sizeof ev);
                            format_value(v->type, p + j * es, gv, sizeof gv);
                            fprintf(stderr,
                                    "%s verify: rank %d: first wrong element: file %s dataset "
                                    "%s%s element %" PRIu64 " [%s]: expected %s, got %s\n",
                                    k->name, k->rank, file, loc, v->path, (uint64_t)(g + off + j), coord, ev,
                                    gv);
                        }
                    }
                }
                p += n * es;
            }
        }
        box += box_melem(k, v, &v->boxes[i]) * es;
    }
    free(expect);
    return bad;
}

/* ---------------------------------------------------------------- transfers */

static void check_io_mode(kctx *k)
{
    /* HDF5 silently falls back to independent I/O in some cases (1.10: any
     * type conversion); say so once, as it changes what is being tuned. */
    if (!k->collective || k->io_mode_reported)
        return;
    H5D_mpio_actual_io_mode_t mode;
    uint32_t local_cause, global_cause;
    KH(H5Pget_mpio_actual_io_mode(k->dxpl, &mode));
    if (mode == H5D_MPIO_NO_COLLECTIVE) {
        k->io_mode_reported = 1;
        KH(H5Pget_mpio_no_collective_cause(k->dxpl, &local_cause, &global_cause));
        if (k->rank == 0)
            fprintf(stderr,
                    "%s note: collective transfer requested but HDF5 did independent I/O "
                    "(no-collective cause 0x%x)\n",
                    k->name, (unsigned)global_cause);
    }
}

/* One H5Dwrite / H5Dread of box b; an empty box selects nothing but still
 * takes part, as collective transfers need every rank. */
static void xfer_box(kctx *k, hid_t ds, hid_t fs, const kvar *v, const kbox *b, void *p,
                     int write)
{
    static char dummy[8];
    hsize_t n = box_nelem(v, b);
    hid_t ms;
    if (n == 0) {
        hsize_t one = 1;
        KH(H5Sselect_none(fs));
        ms = KH(H5Screate_simple(1, &one, NULL));
        KH(H5Sselect_none(ms));
        p = dummy;
    } else {
        KH(H5Sselect_hyperslab(fs, H5S_SELECT_SET, b->start, NULL, b->count, NULL));
        if (k->mem_shaped) {
            /* The local array, halo included; only its interior is transferred. A shaped
             * memory space also keeps HDF5 on its fast chunk-mapping path (same shape in
             * memory and file); a 1-D one makes it map chunked datasets element by element. */
            hsize_t mdims[K_MAXDIM], mstart[K_MAXDIM];
            for (int d = 0; d < v->ndims; d++) {
                mdims[d] = b->count[d] + 2 * k->halo;
                mstart[d] = k->halo;
            }
            ms = KH(H5Screate_simple(v->ndims, mdims, NULL));
            if (k->halo)
                KH(H5Sselect_hyperslab(ms, H5S_SELECT_SET, mstart, NULL, b->count, NULL));
        } else {
            ms = KH(H5Screate_simple(1, &n, NULL));
        }
    }
    if (write)
        KH(H5Dwrite(ds, mem_type(v->type), ms, fs, k->dxpl, p));
    else
        KH(H5Dread(ds, mem_type(v->type), ms, fs, k->dxpl, p));
    KH(H5Sclose(ms));
    check_io_mode(k);
    k->bytes += n * type_size(v->type);
}

static void write_var(kctx *k, hid_t loc, kvar *v)
{
    hid_t fs = KH(H5Screate_simple(v->ndims, v->dims, NULL));
    hid_t ds = KH(H5Dcreate2(loc, v->path, file_type(v->type), fs, k->lcpl, k->dcpl, H5P_DEFAULT));
    char *p = v->buf;
    for (int i = 0; i < v->nboxes; i++) {
        xfer_box(k, ds, fs, v, &v->boxes[i], p, 1);
        p += box_melem(k, v, &v->boxes[i]) * type_size(v->type);
    }
    KH(H5Dclose(ds));
    KH(H5Sclose(fs));
}

/* H5Lexists on each component, so a missing intermediate group is not an
 * error stack but a plain message. */
static void require_path(hid_t loc, const char *path)
{
    char buf[256];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf)
        k_fatal("path too long: %s", path);
    for (char *s = buf;; s++) {
        if (*s != '/' && *s != '\0')
            continue;
        char c = *s;
        *s = '\0';
        if (KH(H5Lexists(loc, buf, H5P_DEFAULT)) == 0)
            k_fatal("no object %s in the file (written with other options?)", buf);
        if (!c)
            break;
        *s = c;
    }
}

static void read_var(kctx *k, hid_t loc, kvar *v)
{
    require_path(loc, v->path);
    hid_t ds = KH(H5Dopen2(loc, v->path, H5P_DEFAULT));
    hid_t fs = KH(H5Dget_space(ds));
    hsize_t dims[K_MAXDIM];
    int nd = (int)KH(H5Sget_simple_extent_ndims(fs));
    if (nd != v->ndims)
        k_fatal("dataset %s has %d dimensions, expected %d (written with other options?)",
                v->path, nd, v->ndims);
    KH(H5Sget_simple_extent_dims(fs, dims, NULL));
    for (int d = 0; d < nd; d++)
        if (dims[d] != v->dims[d])
            k_fatal("dataset %s: dimension %d is %llu, expected %llu (written with other "
                    "options?)",
                    v->path, d, (unsigned long long)dims[d], (unsigned long long)v->dims[d]);
    char *p = v->buf;
    for (int i = 0; i < v->nboxes; i++) {
        xfer_box(k, ds, fs, v, &v->boxes[i], p, 0);
        p += box_melem(k, v, &v->boxes[i]) * type_size(v->type);
    }
    KH(H5Dclose(ds));
    KH(H5Sclose(fs));
}

void k_write_rank0(kctx *k, hid_t loc, const char *name, hid_t ftype, hid_t mtype, int ndims,
                   const hsize_t *dims, const void *buf)
{
    static const char dummy[8];
    hid_t fs = KH(H5Screate_simple(ndims, dims, NULL));
    hid_t ds = KH(H5Dcreate2(loc, name, ftype, fs, k->lcpl, k->dcpl, H5P_DEFAULT));
    hid_t ms = KH(H5Scopy(fs));
    if (k->rank != 0) {
        KH(H5Sselect_none(fs));
        KH(H5Sselect_none(ms));
        buf = dummy;
    } else {
        k->bytes += (uint64_t)KH(H5Sget_simple_extent_npoints(fs)) * H5Tget_size(mtype);
    }
    KH(H5Dwrite(ds, mtype, ms, fs, k->dxpl, buf));
    check_io_mode(k);
    KH(H5Sclose(ms));
    KH(H5Dclose(ds));
    KH(H5Sclose(fs));
}

void k_read_rank0(kctx *k, hid_t loc, const char *name, hid_t mtype, size_t nbytes, void *buf)
{
    static char dummy[8];
    require_path(loc, name);
    hid_t ds = KH(H5Dopen2(loc, name, H5P_DEFAULT));
    hid_t fs = KH(H5Dget_space(ds));
    size_t need = (size_t)KH(H5Sget_simple_extent_npoints(fs)) * H5Tget_size(mtype);
    if (need != nbytes)
        k_fatal("dataset %s holds %zu bytes, expected %zu", name, need, nbytes);
    hid_t ms = KH(H5Scopy(fs));
    if (k->rank != 0) {
        KH(H5Sselect_none(fs));
        KH(H5Sselect_none(ms));
        buf = dummy;
    } else {
        k->bytes += nbytes;
    }
    KH(H5Dread(ds, mtype, ms, fs, k->dxpl, buf));
    check_io_mode(k);
    KH(H5Sclose(ms));
    KH(H5Sclose(fs));
    KH(H5Dclose(ds));
}

void k_attr_write(hid_t loc, const char *name, hid_t ftype, hid_t mtype, const void *value)
{
    hid_t sp = KH(H5Screate(H5S_SCALAR));
    hid_t a = KH(H5Acreate2(loc, name, ftype, sp, H5P_DEFAULT, H5P_DEFAULT));
    KH(H5Awrite(a, mtype, value));
    KH(H5Aclose(a));
    KH(H5Sclose(sp));
}

void k_attr_read(hid_t loc, const char *name, hid_t mtype, void *value)
{
    hid_t a = KH(H5Aopen(loc, name, H5P_DEFAULT));
    KH(H5Aread(a, mtype, value));
    KH(H5Aclose(a));
}

/* ---------------------------------------------------------------- driver */

static void make_dirs(kctx *k)
{
    int err = 0;
    if (k->rank == 0) {
        char path[PATH_MAX];
        if (snprintf(path, sizeof path, "%s", k->outdir) >= (int)sizeof path) {
            err = ENAMETOOLONG;
        } else {
            for (char *s = path + 1;; s++) {
                if (*s != '/' && *s != '\0')
                    continue;
                char c = *s;
                *s = '\0';
                if (mkdir(path, 0777) != 0 && errno != EEXIST) {
                    err = errno;
                    break;
                }
                *s = c;
                if (!c)
                    break;
            }
            struct stat st;
            if (!err && (stat(path, &st) != 0 || !S_ISDIR(st.st_mode)))
                err = ENOTDIR;
        }
    }
    MPI_Bcast(&err, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (err) {
        if (k->rank == 0)
            fprintf(stderr, "%s: error: cannot create output directory %s: %s\n", k->name,
                    k->outdir, strerror(err));
        MPI_Finalize();
        exit(2);
    }
}

static void file_name(const kctx *k, int step, char *out, size_t len)
{
    const char *stem = k->stem ? k->stem : k->name;
    char rank[16] = "";
    if (k->file_per_process)
        snprintf(rank, sizeof rank, ".%08d", k->rank);
    int n = k->file_per_step ? snprintf(out, len, "%s/%s_%04d%s.h5", k->outdir, stem, step, rank)
                             : snprintf(out, len, "%s/%s%s.h5", k->outdir, stem, rank);
    if (n < 0 || (size_t)n >= len)
        k_fatal("output path too long");
}

static void summary(kctx *k, const char *dir, double t, int nfiles)
{
    double tmax;
    uint64_t total;
    MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&k->bytes, &total, 1, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    if (k->rank == 0) {
        printf("%s %s: ranks=%d files=%d bytes=%" PRIu64 " time=%.4f s bandwidth=%.2f MiB/s\n",
               k->name, dir, k->nprocs, nfiles, total, tmax,
               tmax > 0 ? (double)total / 1048576.0 / tmax : 0.0);
        fflush(stdout);
    }
}

/* One direction over all steps. The clock runs from a barrier to the step's
 * last close, step by step, so data generation and verification between the
 * I/O phases are not counted; with one step this is exactly "first
 * H5Fcreate to last H5Fclose". Returns this rank's wrong-value count. */
static long phase(kctx *k, int write)
{
    char path[PATH_MAX], loc_name[32] = "/";
    hid_t file = -1;
    double t = 0;
    int nfiles = 0;
    long bad = 0;
    k->bytes = 0;
    for (int s = 0; s < k->steps; s++) {
        for (int i = 0; i < k->nvars; i++) {
            kvar *v = &k->vars[i];
            if (write)
                fill_var(k, v, s);
            else /* so a read that delivers nothing cannot pass */
                memset(v->buf, 0xa5, v->bufsize);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        if (file < 0) {
            file_name(k, s, path, sizeof path);
            file = write ? H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, k->fapl)
                         : H5Fopen(path, H5F_ACC_RDONLY, k->fapl);
            if (file < 0)
                k_fatal("cannot %s %s", write ? "create" : "open", path);
            nfiles++;
        }
        hid_t loc = file;
        if (k->step_groups) {
            snprintf(loc_name, sizeof loc_name, "/Step#%d/", s);
            char g[32];
            snprintf(g, sizeof g, "Step#%d", s);
            if (!write && KH(H5Lexists(file, g, H5P_DEFAULT)) == 0)
                k_fatal("no group /%s in %s (written with other options?)", g, path);
            loc = write ? KH(H5Gcreate2(file, g, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT))
                        : KH(H5Gopen2(file, g, H5P_DEFAULT));
        }
        /* Extras first: FLASH writes its header before the block data. */
        if (write && k->extra_write)
            k->extra_write(k, loc, s);
        if (!write && k->extra_read)
            bad += k->extra_read(k, loc, s);
        for (int i = 0; i < k->nvars; i++) {
            if (write)
                write_var(k, loc, &k->vars[i]);
            else
                read_var(k, loc, &k->vars[i]);
        }
        if (loc != file)
            KH(H5Gclose(loc));
        if (k->file_per_step || s == k->steps - 1) {
            if (write && k->flush)
                KH(H5Fflush(file, H5F_SCOPE_GLOBAL));
            KH(H5Fclose(file));
            file = -1;
        }
        t += MPI_Wtime() - t0;
        if (!write)
            for (int i = 0; i < k->nvars; i++)
                bad += verify_var(k, &k->vars[i], s, path, loc_name);
    }
    summary(k, write ? "write" : "read", t, k->file_per_process ? nfiles * k->nprocs : nfiles);
    return bad;
}

int k_run(kctx *k)
{
    /* Collective transfers need the same number of H5Dwrite calls per rank. */
    for (int i = 0; i < k->nvars; i++) {
        int mn, mx, nb = k->vars[i].nboxes;
        MPI_Allreduce(&nb, &mn, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        MPI_Allreduce(&nb, &mx, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        if (mn != mx)
            k_fatal("dataset %s: ranks disagree on the number of transfers", k->vars[i].path);
    }
    uint64_t mine = 0, total;
    for (int i = 0; i < k->nvars; i++) {
        kvar *v = &k->vars[i];
        for (int j = 0; j < v->nboxes; j++)
            v->bufsize += box_melem(k, v, &v->boxes[j]) * type_size(v->type);
        v->buf = k_malloc(v->bufsize);
        mine += v->nelem * type_size(v->type);
    }
    MPI_Reduce(&mine, &total, 1, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    if (k->rank == 0) {
        printf("%s config: ranks=%d steps=%d files=%s mode=%s flush=%s read=%s "
               "bytes_per_step=%" PRIu64 " %s\n",
               k->name, k->nprocs, k->steps,
               k->file_per_process ? (k->file_per_step ? "per-process-and-step" : "per-process")
               : k->file_per_step  ? "per-step"
                                   : "single",
               k->collective ? "collective" : "independent", k->flush ? "yes" : "no",
               k->read_only ? "only" : k->read_back ? "yes" : "no", total, k->desc);
        fflush(stdout);
    }

    if (!k->read_only) {
        make_dirs(k);
        phase(k, 1);
    }
    int status = 0;
    if (k->read_back) {
        long bad = phase(k, 0), all;
        MPI_Allreduce(&bad, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
        if (k->rank == 0) {
            if (all)
                fprintf(stderr, "%s verify: FAILED, %ld wrong values\n", k->name, all);
            else
                printf("%s verify: ok\n", k->name);
            fflush(stdout);
        }
        status = all ? 1 : 0;
    }

    for (int i = 0; i < k->nvars; i++) {
        free(k->vars[i].buf);
        free(k->vars[i].boxes);
        free(k->vars[i].path);
    }
    free(k->vars);
    H5Pclose(k->fapl);
    H5Pclose(k->dxpl);
    H5Pclose(k->dcpl);
    H5Pclose(k->lcpl);
    MPI_Finalize();
    return status;
}
