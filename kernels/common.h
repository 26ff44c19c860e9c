/* Shared driver of the iotuner I/O kernels.
 *
 * A kernel describes its datasets (name, type, global dims, and the boxes of
 * the global index space this rank writes, one H5Dwrite per box); the driver
 * parses the common options, generates deterministic data, runs the timed
 * write phase (and the read + verify phase with -r), and prints the summary
 * lines that iotuner parses. */
#ifndef IOTUNER_KERNELS_COMMON_H
#define IOTUNER_KERNELS_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include <mpi.h>
#include <hdf5.h>

#ifndef H5_HAVE_PARALLEL
#error "the iotuner kernels need a parallel (MPI-IO) HDF5"
#endif

#define K_MAXDIM 4

/* Element types. File types are little-endian, memory types native, so no
 * type conversion happens (which would silently break collective I/O). */
typedef enum { KT_U8, KT_I32, KT_I64, KT_F32, KT_F64 } ktype;

/* A rectangular piece of a dataset's global index space. */
typedef struct {
    hsize_t start[K_MAXDIM];
    hsize_t count[K_MAXDIM];
} kbox;

/* One dataset per step. Its values are a pure function of (id, global
 * element index, step): h = hash; floats lo + span*u with u in [0,1) from h;
 * integers lo + h % span (span > 0) or a non-negative h (span == 0); uint8
 * the bytes of h. */
typedef struct {
    char *path;               /* relative to the step location; may contain '/' */
    ktype type;
    int ndims;
    hsize_t dims[K_MAXDIM];
    double lo, span;
    int id;                   /* variable id fed to the data function */
    int nboxes, cap;
    kbox *boxes;              /* this rank's transfers, in order */
    size_t nelem;             /* sum of the boxes' elements */
    void *buf;                /* the boxes' data (local arrays, halos included), concatenated */
    size_t bufsize;           /* bytes of buf */
} kvar;

struct kctx;

/* Kernel-specific option handler; calls k_usage_error on a bad value. */
typedef void (*k_opt_fn)(struct kctx *k, int opt, const char *arg);
/* Extra per-step I/O beyond the kvar table (FLASH's header), run before the
 * table. The read hook also verifies and returns the number of wrong values. */
typedef void (*k_extra_write_fn)(struct kctx *k, hid_t loc, int step);
typedef long (*k_extra_read_fn)(struct kctx *k, hid_t loc, int step);

typedef struct kctx {
    /* set by the kernel before k_init */
    const char *name;         /* "vpicio": summary prefix */
    const char *stem;         /* file name stem; NULL = name */
    const char *opts;         /* kernel's getopt letters, e.g. "n:" */
    const char *own_opts;     /* common letters the kernel takes over, with the same arity (h5ior: IOR's "tF") */
    const char *usage;        /* kernel's option help lines */
    k_opt_fn on_opt;
    int always_file_per_step; /* flashio: one checkpoint file per step */
    int step_groups;          /* put each step's datasets in /Step#<s> */
    int mem_shaped;           /* memory dataspace shaped as the box (an N-D local array), not 1-D */
    hsize_t halo;             /* with mem_shaped: ghost cells on each side of every dimension of
                               * the local array, not transferred (its rows are noncontiguous) */
    k_extra_write_fn extra_write;
    k_extra_read_fn extra_read;

    /* common options */
    const char *outdir;
    int steps;
    int file_per_step;
    int file_per_process;     /* each rank its own file on MPI_COMM_SELF, <stem>.RRRRRRRR.h5 (IOR's -F) */
    int collective;
    int read_back;            /* -r */
    int read_only;            /* -R: skip the write phase */
    int flush;                /* -y */

    int rank, nprocs;
    char desc[512];           /* kernel's part of the config line */

    /* driver state */
    hid_t fapl, dxpl, dcpl, lcpl;
    int nvars, capvars;
    kvar *vars;
    uint64_t bytes;           /* this rank's raw bytes in the current phase */
    int io_mode_reported;     /* collective fallback already reported */
} kctx;

/* MPI_Init, option parsing, property lists. Exits (after MPI_Finalize) on -h
 * or a bad option. */
void k_init(kctx *k, int *argc, char ***argv);
/* Runs the write phase, and the read phase with -r; MPI_Finalize; returns the
 * process exit status. */
int k_run(kctx *k);

/* Dataset table. path is copied. */
kvar *k_add_var(kctx *k, const char *path, ktype type, int ndims, const hsize_t *dims,
                double lo, double span);
/* Appends a transfer; count may be all-zero for a rank with nothing to write. */
void k_var_box(kctx *k, kvar *v, const hsize_t *start, const hsize_t *count);

/* Splits n items into nprocs contiguous ranges, the last rank taking the
 * remainder. */
void k_split(uint64_t n, int rank, int nprocs, uint64_t *first, uint64_t *count);

/* Option value parsers; call k_usage_error on bad input. */
uint64_t k_parse_size(kctx *k, int opt, const char *arg);   /* 16M, 1G, 4KiB, 123 */
long k_parse_long(kctx *k, int opt, const char *arg, long min, long max);
void k_parse_list(kctx *k, int opt, const char *arg, int n, uint64_t *out); /* "64,32,32" */
void k_usage_error(kctx *k, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));
/* Prints on stderr with the rank and aborts the whole job. */
void k_fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
void *k_malloc(size_t n);

/* HDF5 calls return a negative value on error: abort with the call's text. */
#define KH(call) k_h5check((long)(call), #call, __FILE__, __LINE__)
long k_h5check(long ret, const char *what, const char *file, int line);

/* Helpers for the extra hooks. Rank 0 writes / reads the whole (small)
 * dataset; the other ranks take part with an empty selection, since the
 * transfer may be collective. Bytes are accounted. */
void k_write_rank0(kctx *k, hid_t loc, const char *name, hid_t ftype, hid_t mtype, int ndims,
                   const hsize_t *dims, const void *buf);
void k_read_rank0(kctx *k, hid_t loc, const char *name, hid_t mtype, size_t nbytes, void *buf);
/* Scalar attributes: every rank passes the same value (HDF5 requires it). */
void k_attr_write(hid_t loc, const char *name, hid_t ftype, hid_t mtype, const void *value);
void k_attr_read(hid_t loc, const char *name, hid_t mtype, void *value);

#endif
