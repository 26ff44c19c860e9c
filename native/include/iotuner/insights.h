/* SmartIO runtime tuning (Bin Ather et al., SC Workshops '25), section 3.2:
 * the insights extracted from a phase's (predicted) I/O calls, the locality
 * of its accesses, and their merge across ranks. Pure C11, no MPI, no HDF5:
 * the runtime does the MPI reductions, Python reads insights through ctypes. */
#ifndef IOTUNER_INSIGHTS_H
#define IOTUNER_INSIGHTS_H

#include <stddef.h>
#include <stdint.h>

#include "iotuner/grammar.h"
#include "iotuner/json.h"
#include "iotuner/signature.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Insights (SmartIO Table 1, adapted) */

/* Ordered from best to worst, so that MAX across ranks is the worst. */
typedef enum { IOT_LOC_UNKNOWN, IOT_LOC_SEQUENTIAL, IOT_LOC_STRIDED, IOT_LOC_RANDOM } iot_locality;
typedef enum { IOT_XFER_NONE, IOT_XFER_INDEPENDENT, IOT_XFER_COLLECTIVE, IOT_XFER_MIXED } iot_xfer;
typedef enum { IOT_FILES_UNKNOWN, IOT_FILES_SHARED, IOT_FILES_PER_PROCESS } iot_files;

const char *iot_locality_name(iot_locality l); /* "unknown", "sequential", "strided", "random" */
const char *iot_xfer_name(iot_xfer x);         /* "none", "independent", "collective", "mixed" */
const char *iot_files_name(iot_files f);       /* "unknown", "shared", "per_process" */
int iot_locality_from_name(const char *s);     /* -1 if unknown name */
int iot_xfer_from_name(const char *s);
int iot_files_from_name(const char *s);

/* Spatial locality of one rank's data calls in one direction, O(1) memory.
 * Each access after the first is a transition, weighed by its bytes:
 *  - sequential: it starts where the previous access ended, or where the
 *    main stream ended before an excursion (HDF5 writes its metadata between
 *    raw-data writes; the data stream then resumes);
 *  - strided: it starts a constant, positive gap after the previous access
 *    ended (the same gap as the last non-zero gap; the first transition of a
 *    run of equal gaps is credited once the second confirms it);
 *  - anything else is an exception.
 * Classification (IOT_LOCALITY_PERCENT = 90): SEQUENTIAL when sequential
 * bytes are at least 90% of the transitions' bytes (so a few small
 * exceptions, like HDF5 metadata, do not change the class), STRIDED when
 * sequential plus strided bytes are, RANDOM otherwise. One access is
 * SEQUENTIAL (nothing moved), none is UNKNOWN. Accesses of 0 bytes or at a
 * negative offset are ignored. */
#define IOT_LOCALITY_PERCENT 90

typedef struct {
    int64_t next;            /* end of the previous access */
    int64_t stream_end;      /* end of the main sequential stream */
    int64_t last_gap;        /* last non-zero gap, 0 none */
    uint64_t last_gap_bytes; /* bytes of that transition while not yet credited as strided */
    uint64_t accesses;
    uint64_t bytes;          /* bytes of the transitions (all accesses but the first) */
    uint64_t sequential_bytes, strided_bytes;
    int64_t extent;          /* highest offset + size seen, -1 none */
} iot_locality_tracker;

void iot_locality_init(iot_locality_tracker *t);
void iot_locality_add(iot_locality_tracker *t, int64_t offset, int64_t size);
iot_locality iot_locality_classify(const iot_locality_tracker *t);
/* For ctypes (offline analysis, e.g. a Darshan DXT trace): the class of n
 * accesses (offsets[i], sizes[i]) in the order they were made, as the
 * tracker above gives it; *extent (may be NULL) gets their highest end, -1
 * none. */
iot_locality iot_locality_of_accesses(const int64_t *offsets, const int64_t *sizes, size_t n, int64_t *extent);

typedef struct {
    iot_xfer write_xfer, read_xfer;      /* from MPI-IO function names: *_all collective, others independent */
    int64_t transfer_size;               /* typical bytes per data call (median), -1 unknown */
    int64_t max_transfer_size;           /* -1 unknown */
    iot_locality write_locality, read_locality;
    iot_files files;                     /* shared file or file per process */
    int64_t bytes_written, bytes_read;   /* read/write mix */
    int64_t write_calls, read_calls;     /* data calls: H5Dwrite/H5Dread when the phase uses HDF5, else MPI-IO */
    int64_t file_size;                   /* expected size: highest byte touched, -1 unknown */
    int same_calls;                      /* 1 every rank makes the same number of data calls, 0 no, -1 unknown */
    int64_t processes;                   /* ranks merged into these insights (1 for one rank) */
    char file_system[16];                /* "lustre", "ext4", "tmpfs", ..., "" unknown */
    char identity[256];                  /* phase identity (file name, see iot_identity) */
    int64_t identity_hash;               /* its hash (the name_hash of the calls), -1 unknown */
    int64_t path_hash;                   /* iot_path_hash of the exact path, -1 unknown (set by the runtime) */
    int lustre_pfl;                      /* 1 if progressive layouts are available (Lustre >= 2.10), 0 no, -1 unknown */
    char library[8];                     /* the file's library: "hdf5", "pnetcdf", "mpiio" (MPI-IO alone), "" unknown */
} iot_insights;

/* Everything unknown: no transfers, sizes -1, localities and files unknown,
 * counts 0, processes 1. */
void iot_insights_init(iot_insights *in);
/* Both directions together: NONE + x = x, x + x = x, otherwise MIXED. */
iot_xfer iot_insights_xfer(const iot_insights *in);
/* Both directions together: the worse of the two (unknown if both are). */
iot_locality iot_insights_locality(const iot_insights *in);

/* SmartIO 3.2: insights from a (predicted) call sequence of one rank.
 * Starts from iot_insights_init and fills only what calls tell:
 *  - raw-data MPI-IO calls are those between a library's data call
 *    (H5Dwrite/H5Dread, a PnetCDF put/get, or the ncmpi_wait of posted
 *    ones) and the library's next call; the others (HDF5's metadata, a
 *    netCDF header) are left out. A phase without library data calls is a
 *    pure MPI-IO one: all its MPI-IO data calls count;
 *  - write_xfer / read_xfer: from the raw-data MPI-IO calls; HDF5 data calls
 *    with no MPI-IO below are independent (only MPI-IO makes them collective);
 *  - transfer_size (median over calls), max_transfer_size, bytes_*: from the
 *    raw-data MPI-IO calls when there are any, else from H5Dwrite/H5Dread;
 *  - write_calls / read_calls: H5Dwrite/H5Dread when the phase has any,
 *    else the MPI-IO data calls;
 *  - files: SHARED when a file was opened with MPI_File_open on more than
 *    one process, PER_PROCESS when every MPI_File_open was on one process;
 *  - identity_hash: name_hash of the first H5Fcreate/H5Fopen (else
 *    MPI_File_open);
 *  - library: of the first H5Fcreate/H5Fopen ("hdf5") or ncmpi_create/
 *    ncmpi_open ("pnetcdf"), else "mpiio" when MPI_File_open was called.
 * Locality and file_size are not in the calls (the signature table drops
 * offsets so that repeating calls share a terminal): the runtime sets them
 * with iot_insights_set_locality from the trackers it fed with the calls it
 * observed. identity, path_hash, file_system and lustre_pfl are the
 * runtime's too. Unknown terminal ids are skipped. */
void iot_insights_from_calls(const iot_sigtab *t, const int *terminals, size_t n, iot_insights *out);
/* write_locality, read_locality and file_size (largest extent) from one
 * rank's trackers; either may be NULL. */
void iot_insights_set_locality(iot_insights *in, const iot_locality_tracker *writes, const iot_locality_tracker *reads);

/* Merge across ranks: every rank packs, the runtime reduces max_part with
 * MPI_MAX and sum_part with MPI_SUM (MPI_INT64_T, all ranks, including
 * those without I/O), and unpacks. The encoding makes MAX and SUM the merge:
 *  - transfer modes: one 0/1 field per (direction, collective|independent),
 *    so MAX is an OR and both present gives MIXED;
 *  - localities: ordered values, MAX is the worst (unknown is neutral);
 *  - transfer_size: the largest per-rank median; max_transfer_size and
 *    file_size: the largest;
 *  - same_calls: MAX of the call counts and of their negation (a MIN), equal
 *    on every rank or not;
 *  - files: the path hash (MAX of it and of its negation: all ranks equal or
 *    not), the number of ranks with a file (SUM), and whether any rank opened
 *    it on several processes. One path on every rank with a file: SHARED;
 *    else SHARED if any rank opened its file on several processes (files
 *    shared by groups), else PER_PROCESS (distinct files, or one writer);
 *    with no path known, what MPI_File_open said;
 *  - file_system: an index in a fixed list of names (MAX: one answer on all
 *    ranks; an unlisted name keeps the local one); lustre_pfl: MAX;
 *  - bytes, calls, processes: SUM.
 * Unpack writes the merged insights into out, taking identity and
 * identity_hash from local (may be NULL); out may be local. */
#define IOT_INSIGHTS_NMAX 19
#define IOT_INSIGHTS_NSUM 6
void iot_insights_pack(const iot_insights *in, int64_t max_part[IOT_INSIGHTS_NMAX], int64_t sum_part[IOT_INSIGHTS_NSUM]);
void iot_insights_unpack(const int64_t max_part[IOT_INSIGHTS_NMAX], const int64_t sum_part[IOT_INSIGHTS_NSUM],
                         const iot_insights *local, iot_insights *out);

/* {"write_transfer": "collective", "read_transfer": "none", "transfer_size": 1048576,
 *  "max_transfer_size": ..., "write_locality": "sequential", "read_locality": "unknown",
 *  "files": "shared", "bytes_written", "bytes_read", "write_calls", "read_calls",
 *  "file_size", "same_calls": true, "processes", "file_system": "lustre",
 *  "identity": "/run/chk_#.h5", "identity_hash", "path_hash", "lustre_pfl": true}
 * Unknown values are null ("unknown" for localities and files). */
void iot_insights_write_json(const iot_insights *in, iot_buf *b, const char *key);
/* Reads that object back (for `iotuner smart --explain`). Missing members
 * stay unknown; sizes may be strings ("4M"); an unknown member or a wrong
 * type is an error (0, or -1 with the message in err). */
int iot_insights_from_json(const char *json, iot_insights *out, char *err, size_t errlen);
int iot_insights_from_json_value(const iot_json *v, iot_insights *out, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
