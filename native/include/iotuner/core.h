/* iotuner core: the logic shared by the runtime library (libiotuner.so) and
 * the Python tools (through libiotuner_core.so and ctypes). Pure C11, no MPI,
 * no HDF5. */
#ifndef IOTUNER_CORE_H
#define IOTUNER_CORE_H

#include <stddef.h>
#include <stdint.h>

#include "iotuner/json.h"

#ifdef __cplusplus
extern "C" {
#endif

#define IOT_SETTINGS_VERSION 1
#define IOT_REPORT_VERSION 2
#define IOT_MAX_DIMS 32

/* ---- units ---- */

/* Parses a byte size: a non-negative integer, or a string "<integer>[unit]"
 * with unit K, M, G, T (binary, as lfs reads them) or KiB, MiB, GiB, TiB.
 * Decimal-looking units (KB, MB, GB) are refused as ambiguous: the SmartIO
 * prototype's "16 MB" alignment was 1,600,000 bytes. */
int iot_parse_size(const char *text, int64_t *out, char *err, size_t errlen);
/* Writes a size as the shortest exact binary form ("4M", "1536K", "1000"). */
void iot_format_size(int64_t bytes, char *out, size_t outlen);

/* ---- knob catalogue ---- */

typedef enum {
    IOT_LAYER_HDF5,
    IOT_LAYER_MPIIO,
    IOT_LAYER_LUSTRE,
    IOT_LAYER_OMPIO,
    IOT_LAYER_PNETCDF,
    IOT_LAYER_COUNT
} iot_layer;

typedef enum {
    IOT_TYPE_SIZE,      /* bytes */
    IOT_TYPE_INT,
    IOT_TYPE_BOOL,
    IOT_TYPE_ENUM,      /* one of choices, "a|b|c" */
    IOT_TYPE_STRING,
    IOT_TYPE_FLOAT,
    IOT_TYPE_SIZE_PAIR, /* [size, size] */
    IOT_TYPE_DIMS,      /* [n1, n2, ...] positive */
    IOT_TYPE_LAYOUT     /* Lustre (PFL) layout, lfs setstripe syntax */
} iot_type;

/* Where the runtime applies a knob. */
typedef enum {
    IOT_APPLY_FILE_ACCESS,    /* HDF5 file-access property list, at H5Fcreate / H5Fopen */
    IOT_APPLY_DATASET_CREATE, /* HDF5 dataset-creation property list, at H5Dcreate */
    IOT_APPLY_TRANSFER,       /* HDF5 transfer property list, at H5Dwrite / H5Dread */
    IOT_APPLY_MPI_HINT,       /* MPI_Info hint, at MPI_File_open */
    IOT_APPLY_FILE_LAYOUT,    /* file-system layout, before the file is created */
    IOT_APPLY_MCA,            /* Open MPI MCA parameter: the job's environment, before MPI_Init */
    IOT_APPLY_PNETCDF_HINT    /* PnetCDF hint: the MPI_Info of ncmpi_create / ncmpi_open */
} iot_apply_point;

/* Every catalogued knob; the catalogue is indexed by these, and the runtime
 * refers to a knob by its id, never by its name. */
typedef enum {
    IOT_KNOB_ALIGNMENT,
    IOT_KNOB_META_BLOCK_SIZE,
    IOT_KNOB_SIEVE_BUF_SIZE,
    IOT_KNOB_SMALL_DATA_BLOCK_SIZE,
    IOT_KNOB_MDC_INITIAL_SIZE,
    IOT_KNOB_CHUNK_CACHE_NSLOTS,
    IOT_KNOB_CHUNK_CACHE_NBYTES,
    IOT_KNOB_CHUNK_CACHE_W0,
    IOT_KNOB_COLL_METADATA_READS,
    IOT_KNOB_COLL_METADATA_WRITES,
    IOT_KNOB_TRANSFER_MODE,
    IOT_KNOB_CHUNK_DIMS,
    IOT_KNOB_CHUNK_BYTES,
    IOT_KNOB_CB_NODES,
    IOT_KNOB_CB_BUFFER_SIZE,
    IOT_KNOB_CB_CONFIG_LIST,
    IOT_KNOB_ROMIO_CB_WRITE,
    IOT_KNOB_ROMIO_CB_READ,
    IOT_KNOB_ROMIO_DS_WRITE,
    IOT_KNOB_ROMIO_DS_READ,
    IOT_KNOB_IND_WR_BUFFER_SIZE,
    IOT_KNOB_IND_RD_BUFFER_SIZE,
    IOT_KNOB_ROMIO_NO_INDEP_RW,
    IOT_KNOB_STRIPING_FACTOR,
    IOT_KNOB_STRIPING_UNIT,
    IOT_KNOB_STRIPE_COUNT,
    IOT_KNOB_STRIPE_SIZE,
    IOT_KNOB_LAYOUT,
    IOT_KNOB_OMPIO_FCOLL,
    IOT_KNOB_OMPIO_NUM_AGGREGATORS,
    IOT_KNOB_OMPIO_BYTES_PER_AGG,
    IOT_KNOB_OMPIO_CYCLE_BUFFER_SIZE,
    IOT_KNOB_NC_VAR_ALIGN_SIZE,
    IOT_KNOB_NC_HEADER_ALIGN_SIZE,
    IOT_KNOB_NC_RECORD_ALIGN_SIZE,
    IOT_KNOB_NC_IN_PLACE_SWAP,
    IOT_KNOB_NC_IBUF_SIZE,
    IOT_KNOBS
} iot_knob_id;

/* Lustre knobs that replace each other: a layout, or plain striping. */
typedef enum { IOT_LUSTRE_NONE, IOT_LUSTRE_STRIPING, IOT_LUSTRE_LAYOUT } iot_lustre_part;

typedef struct {
    const char *name;
    iot_layer layer;
    iot_type type;
    iot_apply_point apply;
    const char *choices;       /* ENUM: "a|b|c" */
    double min, max;           /* INT, SIZE, FLOAT bounds (SIZE_PAIR: of the second); max 0: no upper bound */
    const char *why_min, *why_max; /* the library limit behind a bound, for the message (NULL: none said) */
    int64_t multiple_of;       /* SIZE: value must be a multiple (0: any) */
    const char *default_value; /* library default as canonical text, NULL if none */
    int parallel_only;         /* only meaningful with MPI-IO / parallel HDF5 */
    /* Another knob this one needs, as "layer.knob=template". The tuner sets it
     * when a trial sets this knob and leaves the other unset; {value} is this
     * knob's value, {per_node} is ceil(value / nodes). */
    const char *requires;
    const char *honoured_by;
    const char *description;
    /* behaviour beyond the type */
    int (*validate)(const char *text); /* STRING: the value's syntax (1 valid) */
    const char *syntax;                /* what validate accepts, for the message */
    int capped_by_nodes;               /* MPI-IO: the library caps it by the node count (its read-back needs it) */
    int striping_hint;                 /* MPI-IO: only ROMIO's Lustre and GPFS drivers honour it */
    iot_lustre_part lustre_part;       /* Lustre: layout and plain striping replace each other */
    const char *mca;                   /* OMPIO: the Open MPI MCA parameter (OMPI_MCA_<mca> before MPI_Init) */
    int file_layout;                   /* PnetCDF: fixes where the variables lie: applies when a file is defined */
} iot_knob;

extern const iot_knob iot_catalogue[IOT_KNOBS];
extern const size_t iot_catalogue_size;

const char *iot_layer_name(iot_layer layer);
int iot_layer_from_name(const char *name); /* -1 if unknown */
const char *iot_type_name(iot_type type);
const char *iot_apply_point_name(iot_apply_point p);
/* Index of a knob in the catalogue, or -1. */
int iot_knob_find(iot_layer layer, const char *name);
/* Nearest catalogued name in any layer within a small edit distance
 * ("layer.name" into out), for "did you mean" messages; 0 if none. */
int iot_knob_suggest(const char *name, char *out, size_t outlen);
/* The catalogue as a JSON document (caller frees). */
char *iot_catalogue_json(void);

/* ---- Lustre layouts ---- */

typedef struct {
    int64_t end;          /* component end in bytes, -1 = end of file */
    int64_t stripe_count; /* -1 = all OSTs, 0 = file-system default */
    int64_t stripe_size;  /* 0 = file-system default */
} iot_layout_component;

typedef struct {
    int ncomponents;
    int composite; /* written with -E: a progressive (PFL) layout */
    iot_layout_component c[16];
} iot_layout;

/* Parses "-E 256M -c 1 -E 4G -c 4 -E -1 -c -1" or "-c 4 -S 1M". */
int iot_layout_parse(const char *text, iot_layout *out, char *err, size_t errlen);
/* Canonical text, in lfs setstripe syntax. */
void iot_layout_format(const iot_layout *l, char *out, size_t outlen);
/* Whether a Lustre client of this version has progressive file layouts
 * (PFL, since 2.10), from the text of /sys/fs/lustre/version (or /proc's):
 * "2.15.3", "lustre: 2.12.8_ddn20". 1 yes, 0 no, -1 no version found. */
int iot_lustre_has_pfl(const char *version_text);

/* ---- chunking (hdf5.chunk_bytes) ---- */

#define IOT_DIM_UNLIMITED UINT64_MAX        /* a maximum extent without bound (H5S_UNLIMITED) */
#define IOT_CHUNK_MAX_BYTES 4294967295ull   /* HDF5 refuses chunks of 4 GiB or more */

/* Chunk dimensions of about `bytes` for a dataset with current extents dims,
 * maximum extents maxdims (IOT_DIM_UNLIMITED; NULL: fixed) and elem_size-byte
 * elements. Start from the current extents (at least 1); shrink the
 * slowest-varying dimensions first, so a chunk is whole rows of the faster
 * ones; or, when the dataset is smaller, grow its extendible dimensions
 * (slowest first, up to their maximum); never below one element nor at or
 * above 4 GiB. Fills chunk[rank] and returns the chunk's size in bytes, with
 * why it differs from `bytes` in why (empty when equal); -1 and why when the
 * dataset cannot be chunked (scalar, null, empty fixed extent). */
int64_t iot_chunk_for_bytes(int rank, const uint64_t *dims, const uint64_t *maxdims, uint64_t elem_size,
                            int64_t bytes, uint64_t *chunk, char *why, size_t whylen);
/* Chunks under IOT_CHUNK_SMALL_BYTES are legal but ruinous in numbers: HDF5 spends tens of microseconds on
 * each chunk (its index, its own I/O), so a 1-byte chunk stalls a job for minutes. A dataset may have at
 * most IOT_CHUNK_SMALL_MAX of them; past that the runtime leaves the dataset to the application. */
#define IOT_CHUNK_SMALL_BYTES 4096u
#define IOT_CHUNK_SMALL_MAX 1024u
/* How many chunks a dataset will have: its maximum extents where they are finite, its current ones (at least
 * 1) where they are unlimited. Saturates at UINT64_MAX. */
uint64_t iot_chunk_count(int rank, const uint64_t *dims, const uint64_t *maxdims, const uint64_t *chunk);
/* 1 (and why) when this chunking is ruinous for this dataset: chunks under IOT_CHUNK_SMALL_BYTES, more than
 * IOT_CHUNK_SMALL_MAX of them. */
int iot_chunk_ruinous(int rank, const uint64_t *dims, const uint64_t *maxdims, const uint64_t *chunk,
                      uint64_t elem_size, char *why, size_t whylen);
/* "bytes (d1,d2,...)", as the report gives an effective chunk_bytes. */
void iot_chunk_text(int rank, const uint64_t *chunk, uint64_t elem_size, char *out, size_t outlen);

/* ---- settings documents ---- */

typedef struct {
    int knob;           /* iot_knob_id; -1 for an MPI-IO hint not in the catalogue */
    iot_layer layer;
    char *name;
    char *text;         /* canonical value text (also the MPI_Info value for hints) */
    int64_t ints[IOT_MAX_DIMS];
    int nints;          /* SIZE/INT/BOOL: 1; SIZE_PAIR: 2; DIMS: rank */
    double real;        /* FLOAT */
    int line;           /* where it was written, for messages */
} iot_setting;

typedef struct {
    char *file_glob;    /* NULL: every file */
    char *dataset_glob; /* NULL: every dataset; only dataset-level knobs allowed otherwise */
    iot_setting *items;
    size_t count;
} iot_group;

typedef struct {
    int version;
    char *description; /* free text, may be NULL */
    char *meta;        /* "meta" object as JSON text (who made it: a study, a trial), may be NULL */
    iot_group *groups;
    size_t ngroups;
} iot_settings;

/* Parses and validates a settings document. On any problem returns NULL
 * and writes one message naming it (where, what, a suggestion). */
iot_settings *iot_settings_parse(const char *text, size_t len, char *err, size_t errlen);
void iot_settings_free(iot_settings *s);
/* Warnings about a valid document: values that are legal but ruinous (a 1-byte chunk, a 4 KiB
 * collective buffer), each a line naming the knob and the estimated cost, into out. Returns how many. */
size_t iot_settings_warnings(const iot_settings *s, char *out, size_t outlen);
/* Settings that apply to file `path` (and, when dataset is not NULL, to that
 * dataset), later groups overriding earlier ones. Fills out[] (pointers into
 * s) and returns how many; layer < 0 means every layer. */
size_t iot_settings_resolve(const iot_settings *s, const char *path, const char *dataset, int layer,
                            const iot_setting **out, size_t max);
/* Does this group apply to file `path` (and dataset, when not NULL: a group with a dataset pattern applies
 * to datasets only)? */
int iot_group_matches(const iot_group *g, const char *path, const char *dataset);
/* Does a file-name glob match this path? (basename unless the glob has a '/') */
int iot_glob_match_file(const char *glob, const char *path);
/* Normalized document as JSON (caller frees). */
char *iot_settings_to_json(const iot_settings *s);

/* ---- verification ---- */

typedef enum {
    IOT_STATUS_APPLIED,        /* effective equals requested */
    IOT_STATUS_CHANGED,        /* taken, but the library reports another value */
    IOT_STATUS_DROPPED,        /* not in effect */
    IOT_STATUS_NOT_APPLICABLE, /* cannot apply to this file (driver, file system) */
    IOT_STATUS_FAILED,         /* the library refused it */
    /* a knob no phase of the job has a row for (iot_explain_absent) */
    IOT_STATUS_NOT_USED,       /* the job opened no file of its layer, or none its pattern matched */
    IOT_STATUS_CANNOT_APPLY    /* its library is linked statically into the program: iotuner sees none of its calls */
} iot_status;

const char *iot_status_name(iot_status s);

/* What a job did with the layers, for the knobs no phase has a row for. */
typedef struct {
    int used_hdf5, used_pnetcdf, used_mpiio; /* the job opened files through that layer */
    int static_hdf5, static_pnetcdf;         /* linked into the program without iotuner's link flags */
    const char *program;                     /* the executable's name */
    const char *patterns;                    /* the file / dataset patterns of every group naming the knob, as
                                                "'a*.h5', datasets 'x'"; NULL when a group names it for every file */
} iot_job_use;
/* Why a requested knob of this layer has no row in any phase: not_used or cannot_apply, with the reason. */
iot_status iot_explain_absent(iot_layer layer, const iot_job_use *use, char *reason, size_t reasonlen);

/* What ROMIO (or another MPI-IO) made of a requested hint. effective is
 * NULL when MPI_File_get_info does not return the key. fs_driver is the
 * MPI-IO driver or file-system name ("ufs", "lustre", ...); nnodes the node
 * count of the communicator; cb_config_list the effective list (or NULL).
 * Writes a plain-language reason (empty when applied). */
iot_status iot_explain_hint(const char *name, const char *requested, const char *effective,
                            const char *fs_driver, int nnodes, int nprocs, const char *cb_config_list,
                            char *reason, size_t reasonlen);

/* What Open MPI's OMPIO makes of a ROMIO hint. Its MPI_File_get_info hands back every key given, so the
 * read-back cannot tell; OMPIO takes cb_nodes (its aggregator count), cb_buffer_size (its bytes per
 * aggregator) and collective_buffering, and striping hints with its Lustre fs component only. Returns the
 * status with its reason (empty when applied). */
iot_status iot_explain_ompio_hint(const char *name, const char *fs_driver, char *reason, size_t reasonlen);

/* File-system name for a statfs f_type magic ("ext4", "lustre", ...). */
const char *iot_fs_name(int64_t magic);
/* Is this a parallel file system whose striping iotuner can set? */
int iot_fs_is_lustre(const char *fs_name);

/* ---- files ---- */

/* Reads a whole file of at most max bytes: a regular file only (a FIFO, a
 * directory or a device is refused, never waited on), opened with
 * O_NONBLOCK. Returns the NUL-terminated text (caller frees) and its length,
 * or NULL with the reason in err, naming the file as what it is ("settings
 * file 'PATH' is not a regular file (a FIFO)"). */
char *iot_read_regular_file(const char *path, const char *what, size_t max, size_t *len, char *err, size_t errlen);

/* ---- for ctypes callers ---- */

const char *iot_version(void);
/* Validates a settings document; returns the normalized JSON, or NULL with
 * the message in err. Caller frees with iot_free. */
char *iot_settings_check(const char *text, char *err, size_t errlen);
/* Validates a settings document; returns its warnings (iot_settings_warnings), one a line, "" when none,
 * or NULL with the error in err. Caller frees with iot_free. */
char *iot_settings_check_warnings(const char *text, char *err, size_t errlen);
void iot_free(void *p);

#ifdef __cplusplus
}
#endif
#endif
