/* Phase records and the report's merge of them: pure logic, no MPI.
 *
 * Every rank describes each of its phases with a fixed-size iot_record. The
 * runtime reduces the records of phases that all ranks share with an MPI_Op
 * over iot_record_combine (as Darshan reduces its shared file records) and
 * gathers the others; rank 0 (or a serial process) merges them here into the
 * report's phases.
 *
 * Which records are one phase:
 *  - a collective open (MPI_File_open on a communicator of several ranks, or
 *    H5Fcreate / H5Fopen with the MPI-IO driver) is keyed by what its ranks
 *    agree on without talking: the communicator's group (a hash of its ranks
 *    in MPI_COMM_WORLD), the file, and the number of earlier collective opens
 *    of that file on that group. Collective calls on a communicator happen in
 *    the same order on all its ranks, so the key is the same on all of them;
 *  - an independent open (one process: MPI_COMM_SELF, POSIX, HDF5 without
 *    MPI-IO) is its rank's own, never matched by key. Independent records of
 *    one kind, one identity (the file name with its numbers folded,
 *    iot_identity) and one step (the k-th open of that kind and identity on
 *    each rank) are one file-per-process phase, timed from the first open to
 *    the last close. The ranks agree on the step without talking, whenever
 *    they open the files of a name in the same order; time plays no part, so
 *    a late rank's file joins its step's phase on a busy machine too.
 * Every record goes into exactly one phase, so totals count every byte once. */
#ifndef IOTUNER_RECORD_H
#define IOTUNER_RECORD_H

#include <stddef.h>
#include <stdint.h>

#include "iotuner/json.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { IOT_KIND_HDF5, IOT_KIND_MPIIO, IOT_KIND_POSIX, IOT_KIND_PNETCDF, IOT_KINDS } iot_phase_kind;
/* IOT_LEVEL_STDIO: the C library's buffered calls (fwrite, fprintf, fread, ...) on a POSIX file. The C library
 * reaches its own write and read through internal calls no wrapper sees, so a byte moved through stdio is counted
 * once, at this level, and the POSIX level holds only the program's own system calls. */
typedef enum { IOT_LEVEL_POSIX, IOT_LEVEL_MPIIO, IOT_LEVEL_HDF5, IOT_LEVEL_PNETCDF, IOT_LEVEL_STDIO, IOT_LEVELS } iot_level;

/* The versions of a phase's level sections (phases[].posix, .mpiio, .hdf5, .pnetcdf: each level's counters,
 * which its module records and the merge writes); the level's module declares it (iotuner_report_version). */
#define IOT_SECTION_POSIX_VERSION 1
#define IOT_SECTION_MPIIO_VERSION 1
#define IOT_SECTION_HDF5_VERSION 1
#define IOT_SECTION_PNETCDF_VERSION 1
#define IOT_SECTION_STDIO_VERSION 1

const char *iot_kind_name(iot_phase_kind k);   /* "hdf5", "mpiio", "posix", "pnetcdf" */
const char *iot_level_name(iot_level l);       /* "posix", "mpiio", "hdf5", "pnetcdf", "stdio" */
/* The level at which a phase of this kind counts the application's data: its H5Dwrite / H5Dread for an
 * HDF5 file (HDF5's metadata and MPI-IO's rewriting of holes are not the application's), its ncmpi_put / get
 * calls for a PnetCDF one (the header is PnetCDF's), its MPI_File_write / read for an MPI-IO one, POSIX calls
 * otherwise. */
iot_level iot_data_level(iot_phase_kind kind);

typedef struct {
    uint64_t group; /* hash of the opening communicator's group; 0: one process alone (independent) */
    uint64_t path;  /* iot_path_hash of the normalized path */
    uint32_t seq;   /* collective: earlier opens of path on group; independent: unique on its rank */
    uint32_t kind;  /* iot_phase_kind */
} iot_phase_key;

/* The hash of a group of world ranks, as the runtime computes it for a
 * communicator (never 0). */
uint64_t iot_group_hash(const int *world_ranks, int n);

enum {
    IOT_REC_CREATED = 1u,
    IOT_REC_OPEN_AT_EXIT = 2u,
    IOT_REC_TIME_SAMPLED = 4u,
    IOT_REC_FOLDED = 8u, /* one rank's many files of one identity, one after another, as one record */
};

/* The step of a folded record: after every numbered step, the same on every rank that folded. */
#define IOT_STEP_FOLDED UINT32_MAX

typedef struct {
    uint64_t bytes_written, bytes_read, writes, reads; /* summed over ranks */
    double write_time, read_time;                      /* seconds inside the calls: the slowest rank */
} iot_level_stats;

typedef struct {
    iot_phase_key key;
    uint64_t identity;  /* iot_identity hash of the path: the files of one step of a file per process share it */
    int32_t rank;       /* lowest rank of the run in the record */
    int32_t ranks;      /* ranks in the record */
    int32_t group_size; /* ranks of the opening communicator (1: independent) */
    uint32_t flags;     /* IOT_REC_* of any rank */
    uint32_t files;     /* files behind one rank's record: 1, or more for a folded record (IOT_REC_FOLDED) */
    uint32_t step;      /* independent: earlier opens of this kind and identity on its rank (IOT_STEP_FOLDED for a
                         * folded record); collective: unused (the key's seq counts) */
    double t_open;      /* seconds on the run's common clock: the first open */
    double t_close;     /* the last close (the report's time for a phase still open at exit) */
    double sync_time, meta_time; /* POSIX fsync and open/close: the slowest rank */
    double io_max, io_sum;       /* time in POSIX I/O calls: the slowest rank, the sum over ranks */
    iot_level_stats level[IOT_LEVELS];
} iot_record;

/* One rank's record of a phase, not yet combined with others'. */
void iot_record_init(iot_record *r, const iot_phase_key *key, uint64_t identity, int rank, int group_size);
/* Adds in (other ranks of the same phase) into inout: sums, maxima and the
 * span of the opens and closes. Commutative and associative: the MPI_Op the
 * runtime reduces with. */
void iot_record_combine(const iot_record *in, iot_record *inout);

/* What describes a phase beyond numbers, from one rank (the leader: the
 * first rank of the communicator, or each rank for its independent phases).
 * settings_json is the verification list (a JSON array), hints_json the MPI
 * hints read back and app_json the application's own values of the knobs
 * (JSON objects), datasets_json the HDF5 datasets the leader wrote (a JSON
 * array), all as the runtime wrote them. */
typedef struct {
    const char *file, *identity, *driver, *file_system, *mpiio_driver, *settings_json, *hints_json, *app_json;
    const char *datasets_json;
} iot_phase_desc;

/* Appends a description, tagged with its record's key and rank, to b (the
 * runtime gathers these); iot_desc_unpack reads one back from data and
 * returns the bytes it used (0 on a malformed buffer). Strings point into
 * data. */
void iot_desc_pack(iot_buf *b, const iot_phase_key *key, int rank, const iot_phase_desc *d);
size_t iot_desc_unpack(const char *data, size_t len, iot_phase_key *key, int *rank, iot_phase_desc *d);

/* The application's data of a record: its data level's counters; a POSIX file's are its POSIX and STDIO levels
 * added (disjoint: the C library's own system calls are not seen). *level is the level named as the record's
 * data level: STDIO for a POSIX file that moved data through stdio calls only. */
void iot_record_data(const iot_record *r, iot_level_stats *out, iot_level *level);

typedef struct iot_merge iot_merge;

iot_merge *iot_merge_new(void);
void iot_merge_free(iot_merge *m);
/* A record from any rank, in any order: one rank's, or several ranks' already combined. */
int iot_merge_add(iot_merge *m, const iot_record *r);
/* The description of the record with this key (and, for an independent one, this rank). Kept when it is
 * the first for its phase or comes from a lower rank; copied. */
int iot_merge_describe(iot_merge *m, const iot_phase_key *key, int rank, const iot_phase_desc *d);
/* Forms the phases (see the top of this file), in order of their first open. Returns how many. */
size_t iot_merge_finish(iot_merge *m);
size_t iot_merge_count(const iot_merge *m);
const iot_record *iot_merge_phase(const iot_merge *m, size_t i);
/* Distinct files of phase i (more than 1: a file per process). */
int iot_merge_files(const iot_merge *m, size_t i);
/* How phase i's records were matched: "communicator" (a collective open: the group, the file, the count of
 * its opens), "step" (independent records of several ranks: kind, identity, step), "rank" (one rank's
 * independent record), "folded" (one rank's files of one name past the bound, or several ranks' such). */
const char *iot_merge_grouped_by(const iot_merge *m, size_t i);
const iot_phase_desc *iot_merge_desc(const iot_merge *m, size_t i);
/* The phase a rank's record went into, or -1. */
int iot_merge_find(const iot_merge *m, const iot_phase_key *key, int rank);

typedef struct {
    int64_t phases, bytes_written, bytes_read, posix_bytes_written, posix_bytes_read;
    double write_time, read_time, io_time;
} iot_totals;

/* Writes "phases": [...] and "totals": {...} into the object open in b (docs/report.md). */
void iot_merge_write(const iot_merge *m, iot_buf *b, iot_totals *totals);

#ifdef __cplusplus
}
#endif
#endif
