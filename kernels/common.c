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
    const char *stem = k->stem ? k->stem : k->name, *sfx = k_format.suffix;
    fprintf(out,
            "usage: %s [options]\n"
            "common options:\n"
            "  -o DIR     output directory, created if missing (default .)\n",
            k->name);
    if (!owns(k, 't'))
        fprintf(out, "  -t N       number of timesteps (default 1)\n");
    if (!owns(k, 'F')) {
        if (k->always_file_per_step || !k->step_groups)
            fprintf(out, "  -F         no-op: always one file per timestep, %s_NNNN%s\n", stem, sfx);
        else
            fprintf(out,
                    "  -F         one file per timestep, %s_NNNN%s (default: one file %s%s,\n"
                    "             the steps in it)\n",
                    stem, sfx, stem, sfx);
    }
    fprintf(out,
            "  -m MODE    %s of the raw data: collective | independent\n"
            "             (default collective)\n"
            "  -r         after writing, reopen the files, read everything back and verify\n"
            "  -R         read and verify existing files only (no write phase)\n"
            "  -y         %s before each close (timed)\n"
            "  -h         this help\n"
            "%s options:\n%s"
            "sizes take binary suffixes K, M, G, T (or KiB, MiB, GiB, TiB).\n",
            k_format.mode_help, k_format.flush_call, k->name, k->usage ? k->usage : "");
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

    k_format_init(k);
}

/* ---------------------------------------------------------------- dataset table */

kvar *k_add_var(kctx *k, const char *path, ktype type, int ndims, const uint64_t *dims,
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

uint64_t k_box_nelem(const kvar *v, const kbox *b)
{
    uint64_t n = 1;
    for (int d = 0; d < v->ndims; d++)
        n *= b->count[d];
    return n;
}

void k_var_box(kctx *k, kvar *v, const uint64_t *start, const uint64_t *count)
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
    v->nelem += k_box_nelem(v, b);
}

void k_dim_name(const kvar *v, int d, char *out, size_t len)
{
    if (v->dim_names[d])
        snprintf(out, len, "%s", v->dim_names[d]);
    else
        snprintf(out, len, "dim%llu", (unsigned long long)v->dims[d]);
}

void k_split(uint64_t n, int rank, int nprocs, uint64_t *first, uint64_t *count)
{
    uint64_t per = n / (uint64_t)nprocs;
    *first = per * (uint64_t)rank;
    *count = rank == nprocs - 1 ? n - *first : per;
}

/* ---------------------------------------------------------------- data */

size_t k_type_size(ktype t)
{
    switch (t) {
    case KT_U8: return 1;
    case KT_I32: case KT_F32: return 4;
    default: return 8;
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
    uint64_t run;          /* elements per run */
    uint64_t halo;         /* ghost cells around the box in memory */
    uint64_t stride[K_MAXDIM];  /* of the dataset */
    uint64_t mstride[K_MAXDIM]; /* of the box's memory, halo included */
    uint64_t idx[K_MAXDIM];
    int done;
} boxwalk;

/* Elements a box takes in memory: its own, plus the halo around it. */
static uint64_t box_melem(const kctx *k, const kvar *v, const kbox *b)
{
    uint64_t n = k_box_nelem(v, b);
    if (n == 0 || k->halo == 0)
        return n;
    n = 1;
    for (int d = 0; d < v->ndims; d++)
        n *= b->count[d] + 2 * k->halo;
    return n;
}

size_t k_box_mem_bytes(const kctx *k, const kvar *v, const kbox *b)
{
    return (size_t)box_melem(k, v, b) * k_type_size(v->type);
}

static void walk_init(boxwalk *w, const kvar *v, const kbox *b, uint64_t halo)
{
    memset(w, 0, sizeof *w);
    w->v = v;
    w->b = b;
    w->halo = halo;
    uint64_t s = 1, m = 1;
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
    w->done = k_box_nelem(v, b) == 0;
}

/* Global index of the current run's first element, and its element offset in
 * the box's memory; returns 0 when done. */
static int walk_next(boxwalk *w, uint64_t *gidx, uint64_t *moff)
{
    if (w->done)
        return 0;
    uint64_t g = 0, m = 0;
    for (int d = 0; d < w->v->ndims; d++) {
        uint64_t i = d < w->outer ? w->idx[d] : 0;
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
    size_t es = k_type_size(v->type);
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
    size_t es = k_type_size(v->type);
    char *expect = k_malloc(VERIFY_PIECE * es);
    const char *box = v->buf;
    long bad = 0;
    for (int i = 0; i < v->nboxes; i++) {
        boxwalk w;
        uint64_t g, m;
        walk_init(&w, v, &v->boxes[i], k->halo);
        while (walk_next(&w, &g, &m)) {
            const char *p = box + m * es;
            for (uint64_t off = 0; off < w.run; off += VERIFY_PIECE) {
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
    int n = k->file_per_step ? snprintf(out, len, "%s/%s_%04d%s%s", k->outdir, stem, step, rank, k_format.suffix)
                             : snprintf(out, len, "%s/%s%s%s", k->outdir, stem, rank, k_format.suffix);
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
 * create to last close". Returns this rank's wrong-value count. */
static long phase(kctx *k, int write)
{
    char path[PATH_MAX], loc_name[32] = "/";
    int open = 0;
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
        if (!open) {
            file_name(k, s, path, sizeof path);
            k_format_open(k, path, write);
            open = 1;
            nfiles++;
        }
        if (k->step_groups)
            snprintf(loc_name, sizeof loc_name, "/Step#%d/", s);
        k_format_step_begin(k, s, write);
        /* Extras first: FLASH writes its header before the block data. */
        if (write && k->extra_write)
            k->extra_write(k, s);
        if (!write && k->extra_read)
            bad += k->extra_read(k, s);
        for (int i = 0; i < k->nvars; i++) {
            if (write)
                k_format_write_var(k, &k->vars[i], s);
            else
                k_format_read_var(k, &k->vars[i], s);
        }
        k_format_step_end(k, s, write);
        if (k->file_per_step || s == k->steps - 1) {
            k_format_close(k, write);
            open = 0;
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
    /* Collective transfers need the same number of calls per rank. */
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
            v->bufsize += k_box_mem_bytes(k, v, &v->boxes[j]);
        v->buf = k_malloc(v->bufsize);
        mine += v->nelem * k_type_size(v->type);
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
    k_format_finish(k);
    MPI_Finalize();
    return status;
}
