/* Shared driver of the iotuner I/O kernels.
 *
 * A kernel describes its variables (name, type, global dims, and the boxes of
 * the global index space this rank writes, one transfer per box); the driver
 * parses the common options, generates deterministic data, runs the timed
 * write phase (and the read + verify phase with -r), and prints the summary
 * lines that iotuner parses. The file format is a backend (IOR's aiori.h
 * idea, chosen at link time): HDF5 (k_hdf5.c), PnetCDF (k_pnetcdf.c),
 * parallel netCDF-4 (k_netcdf4.c). */
#ifndef IOTUNER_KERNELS_COMMON_H
#define IOTUNER_KERNELS_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include <mpi.h>

#define K_MAXDIM 4

/* Element types. File types are little-endian, memory types native, so no
 * type conversion happens (which would silently break collective I/O). */
typedef enum { KT_U8, KT_I32, KT_I64, KT_F32, KT_F64 } ktype;

/* A rectangular piece of a variable's global index space. */
typedef struct {
    uint64_t start[K_MAXDIM];
    uint64_t count[K_MAXDIM];
} kbox;

/* One variable per step. Its values are a pure function of (id, global
 * element index, step): h = hash; floats lo + span*u with u in [0,1) from h;
 * integers lo + h % span (span > 0) or a non-negative h (span == 0); uint8
 * the bytes of h. */
typedef struct {
    char *path;               /* relative to the step location; may contain '/' */
    ktype type;
    int ndims;
    uint64_t dims[K_MAXDIM];
    const char *dim_names[K_MAXDIM]; /* netCDF's shared dimensions ("ncol"); NULL: named by their length */
    double lo, span;
    int id;                   /* variable id fed to the data function */
    int nboxes, cap;
    kbox *boxes;              /* this rank's transfers, in order */
    size_t nelem;             /* sum of the boxes' elements */
    void *buf;                /* the boxes' data (local arrays, halos included), concatenated */
    size_t bufsize;           /* bytes of buf */
} kvar;

struct kctx;

/* A file format is one file that defines the k_format_* functions below (HDF5: k_hdf5.c, PnetCDF:
 * k_pnetcdf.c, parallel netCDF-4: k_netcdf4.c); a kernel is linked with one. The driver calls them in this
 * order for each file of a phase: open, then per step step_begin, write_var or read_var per variable,
 * step_end; then close. Plain functions, not a table of pointers: `iotuner kernel` follows the calls. */
typedef struct {
    const char *name;       /* "HDF5", in the help */
    const char *suffix;     /* of the file names: ".h5" */
    const char *flush_call; /* what -y calls before each close, in the help */
    const char *mode_help;  /* what -m sets, in the help */
} kformat;

extern const kformat k_format;
void k_format_init(struct kctx *k); /* after the options */
void k_format_finish(struct kctx *k);
void k_format_open(struct kctx *k, const char *path, int write); /* k_fatal when it cannot */
void k_format_step_begin(struct kctx *k, int step, int write);
void k_format_write_var(struct kctx *k, kvar *v, int step);
void k_format_read_var(struct kctx *k, kvar *v, int step);
void k_format_step_end(struct kctx *k, int step, int write);
void k_format_close(struct kctx *k, int write); /* flushes first with -y */

/* Kernel-specific option handler; calls k_usage_error on a bad value. */
typedef void (*k_opt_fn)(struct kctx *k, int opt, const char *arg);
/* Extra per-step I/O beyond the kvar table (FLASH's header), run after step_begin, before the table. The
 * read hook also verifies and returns the number of wrong values. Format-specific (k_hdf5.h). */
typedef void (*k_extra_write_fn)(struct kctx *k, int step);
typedef long (*k_extra_read_fn)(struct kctx *k, int step);

typedef struct kctx {
    /* set by the kernel before k_init */
    const char *name;         /* "vpicio": summary prefix */
    const char *stem;         /* file name stem; NULL = name */
    const char *opts;         /* kernel's getopt letters, e.g. "n:" */
    const char *own_opts;     /* common letters the kernel takes over, with the same arity (h5ior: IOR's "tF") */
    const char *usage;        /* kernel's option help lines */
    k_opt_fn on_opt;
    int always_file_per_step; /* flashio: one checkpoint file per step */
    int step_groups;          /* steps share a file (HDF5: a group /Step#<s> each; netCDF: a record each) */
    int mem_shaped;           /* memory dataspace shaped as the box (an N-D local array), not 1-D */
    uint64_t halo;            /* with mem_shaped: ghost cells on each side of every dimension of
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
    int nvars, capvars;
    kvar *vars;
    uint64_t bytes;           /* this rank's raw bytes in the current phase */
    void *format_state;       /* the format's own */
} kctx;

/* MPI_Init, option parsing, the format's init. Exits (after MPI_Finalize) on
 * -h or a bad option. */
void k_init(kctx *k, int *argc, char ***argv);
/* Runs the write phase, and the read phase with -r; MPI_Finalize; returns the
 * process exit status. */
int k_run(kctx *k);

/* Variable table. path is copied. */
kvar *k_add_var(kctx *k, const char *path, ktype type, int ndims, const uint64_t *dims,
                double lo, double span);
/* Appends a transfer; count may be all-zero for a rank with nothing to write. */
void k_var_box(kctx *k, kvar *v, const uint64_t *start, const uint64_t *count);

/* Splits n items into nprocs contiguous ranges, the last rank taking the
 * remainder. */
void k_split(uint64_t n, int rank, int nprocs, uint64_t *first, uint64_t *count);

/* For the formats: an element's bytes, a box's elements, and its bytes in the variable's buffer (its halo
 * included). */
size_t k_type_size(ktype t);
uint64_t k_box_nelem(const kvar *v, const kbox *b);
size_t k_box_mem_bytes(const kctx *k, const kvar *v, const kbox *b);
/* The name of a variable's dimension d in a netCDF file: its dim_names[d], else "dim<length>". */
void k_dim_name(const kvar *v, int d, char *out, size_t len);

/* Option value parsers; call k_usage_error on bad input. */
uint64_t k_parse_size(kctx *k, int opt, const char *arg);   /* 16M, 1G, 4KiB, 123 */
long k_parse_long(kctx *k, int opt, const char *arg, long min, long max);
void k_parse_list(kctx *k, int opt, const char *arg, int n, uint64_t *out); /* "64,32,32" */
void k_usage_error(kctx *k, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));
/* Prints on stderr with the rank and aborts the whole job. */
void k_fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
void *k_malloc(size_t n);

#endif
