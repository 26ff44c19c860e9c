/* SmartIO runtime tuning (Bin Ather et al., SC Workshops '25), sections 3.2
 * and 3.3: the insights extracted from a phase's (predicted) I/O calls, their
 * merge across ranks, and the rules that map insights to settings. Pure C11,
 * no MPI, no HDF5: the runtime does the MPI reductions, Python calls
 * iot_rules_explain through ctypes. */
#ifndef IOTUNER_SMART_H
#define IOTUNER_SMART_H

#include <stddef.h>
#include <stdint.h>

#include "iotuner/core.h"
#include "iotuner/grammar.h"
#include "iotuner/json.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ==== Call signatures: the contract between the runtime and the extraction ====
 *
 * The runtime interns every intercepted HDF5 and MPI-IO call into the
 * iot_sigtab (grammar.h) under the exact function name below, with these
 * int64 arguments, when the call is ENTERED (so the MPI-IO calls an H5Dwrite
 * makes follow it in the sequence; that is how raw-data MPI-IO calls are told
 * from HDF5's metadata I/O). POSIX calls are not in the grammar.
 *
 *   "H5Fcreate", "H5Fopen"   [name_hash, flags]         offset_index -1
 *   "H5Fclose"               []
 *   "H5Dcreate"              [name_hash, type_size, ndims]
 *   "H5Dopen"                [name_hash]
 *   "H5Dclose"               []
 *   "H5Dwrite", "H5Dread"    [bytes]                    the application's bytes of the call
 *   "MPI_File_open"          [name_hash, amode, comm_size]
 *   "MPI_File_close"         []
 *   MPI-IO data calls, named as the MPI function:
 *     ..._at, ..._at_all, ..._at_all_begin  [bytes, offset]   offset_index 1 (bytes)
 *     all others                            [bytes]           offset_index -1
 *
 * name_hash is iot_identity() of the file name (of the dataset name for
 * H5Dcreate / H5Dopen), so the files and datasets of
 * successive steps share terminals.
 * The MPI-IO data calls are the rows of IOT_MPI_DATA_CALLS (iotuner/calls.h):
 * MPI_File_{,i}{write,read}{,_at,_all,_at_all,_shared},
 * MPI_File_{write,read}_ordered, and the split collectives
 * MPI_File_{write,read}{_all,_at_all,_ordered}_begin (their _end calls carry
 * no data and are not data calls). */

#define IOT_SIG_H5FCREATE "H5Fcreate"
#define IOT_SIG_H5FOPEN "H5Fopen"
#define IOT_SIG_H5FCLOSE "H5Fclose"
#define IOT_SIG_H5DCREATE "H5Dcreate"
#define IOT_SIG_H5DOPEN "H5Dopen"
#define IOT_SIG_H5DCLOSE "H5Dclose"
#define IOT_SIG_H5DWRITE "H5Dwrite"
#define IOT_SIG_H5DREAD "H5Dread"
#define IOT_SIG_MPI_FILE_OPEN "MPI_File_open"
#define IOT_SIG_MPI_FILE_CLOSE "MPI_File_close"
/* The signatures: X(signature, kind, write, nargs); kinds are iot_call_kind. */
#define IOT_SIGNATURES(X)                                                                                      \
    X(IOT_SIG_H5FCREATE, IOT_CALL_FILE_OPEN, 0, 2)                                                             \
    X(IOT_SIG_H5FOPEN, IOT_CALL_FILE_OPEN, 0, 2)                                                               \
    X(IOT_SIG_H5FCLOSE, IOT_CALL_FILE_CLOSE, 0, 0)                                                             \
    X(IOT_SIG_H5DCREATE, IOT_CALL_DSET_OPEN, 0, 3)                                                             \
    X(IOT_SIG_H5DOPEN, IOT_CALL_DSET_OPEN, 0, 1)                                                               \
    X(IOT_SIG_H5DCLOSE, IOT_CALL_DSET_CLOSE, 0, 0)                                                             \
    X(IOT_SIG_H5DWRITE, IOT_CALL_H5_DATA, 1, 1)                                                                \
    X(IOT_SIG_H5DREAD, IOT_CALL_H5_DATA, 0, 1)                                                                 \
    X(IOT_SIG_MPI_FILE_OPEN, IOT_CALL_MPI_OPEN, 0, 3)                                                          \
    X(IOT_SIG_MPI_FILE_CLOSE, IOT_CALL_MPI_CLOSE, 0, 0)
#define IOT_SIG_NONE NULL /* an intercepted call outside the grammar (iotuner/calls.h) */
/* Argument positions. */
#define IOT_ARG_NAME_HASH 0 /* H5Fcreate, H5Fopen, H5Dcreate, H5Dopen, MPI_File_open */
#define IOT_ARG_FLAGS 1     /* H5Fcreate, H5Fopen */
#define IOT_ARG_TYPE_SIZE 1 /* H5Dcreate */
#define IOT_ARG_NDIMS 2     /* H5Dcreate */
#define IOT_ARG_AMODE 1     /* MPI_File_open */
#define IOT_ARG_COMM_SIZE 2 /* MPI_File_open */
#define IOT_ARG_BYTES 0     /* H5Dwrite, H5Dread, MPI-IO data calls */
#define IOT_ARG_OFFSET 1    /* MPI-IO _at data calls */

typedef enum {
    IOT_CALL_OTHER,      /* not part of the contract */
    IOT_CALL_FILE_OPEN,  /* H5Fcreate, H5Fopen */
    IOT_CALL_FILE_CLOSE, /* H5Fclose */
    IOT_CALL_DSET_OPEN,  /* H5Dcreate, H5Dopen */
    IOT_CALL_DSET_CLOSE, /* H5Dclose */
    IOT_CALL_H5_DATA,    /* H5Dwrite, H5Dread */
    IOT_CALL_MPI_OPEN,   /* MPI_File_open */
    IOT_CALL_MPI_CLOSE,  /* MPI_File_close */
    IOT_CALL_MPI_DATA    /* MPI-IO reads and writes */
} iot_call_kind;

typedef struct {
    iot_call_kind kind;
    int write;        /* data calls: 1 write, 0 read */
    int collective;   /* MPI_DATA: the *_all calls (and their split _begin). *_ordered is collective in
                       * MPI's sense, but ROMIO does it as a scan plus independent I/O, with no
                       * collective buffering, so it counts as independent here */
    int nargs;        /* arguments the signature has */
    int offset_index; /* as given to iot_sig_intern: 1 for the _at MPI-IO calls, else -1 */
} iot_call_info;

/* Classifies a function name of the contract (anything else: IOT_CALL_OTHER,
 * nargs 0, offset_index -1). Returns out->kind. */
iot_call_kind iot_call_classify(const char *func, iot_call_info *out);

/* Identity of a file (a phase) or of an object in a file (a dataset's
 * path): every maximal run of digits in every path component replaced by
 * '#', except in extensions (dot-separated parts after the first that begin
 * with a letter: ".h5", ".hdf5", ".nc4") and inside a word (the "5" of
 * "h5ior"). Steps number files, their directories and their groups alike:
 * "/run/chk_0001.h5" -> "/run/chk_#.h5", "/out/plt00100/data.h5" ->
 * "/out/plt#/data.h5", "plt.0003" -> "plt.#", "/Step#12/x" -> "/Step##/x".
 * Writes it into out (truncated to outlen; out may be NULL) and returns a
 * 63-bit FNV-1a hash of the whole identity (non-negative as int64). */
uint64_t iot_identity(const char *path, char *out, size_t outlen);
/* 63-bit FNV-1a hash of the exact path (no normalization): what ranks
 * compare to tell one shared file from a file per process. */
uint64_t iot_path_hash(const char *path);

/* ==== Insights (SmartIO Table 1, adapted) ==== */

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
 *  - raw-data MPI-IO calls are those between an H5Dwrite/H5Dread and the
 *    next HDF5 call; the others (HDF5 metadata I/O) are left out. A phase
 *    without H5Dwrite/H5Dread is a pure MPI-IO one: all its MPI-IO data
 *    calls count;
 *  - write_xfer / read_xfer: from the raw-data MPI-IO calls; HDF5 data calls
 *    with no MPI-IO below are independent (only MPI-IO makes them collective);
 *  - transfer_size (median over calls), max_transfer_size, bytes_*: from the
 *    raw-data MPI-IO calls when there are any, else from H5Dwrite/H5Dread;
 *  - write_calls / read_calls: H5Dwrite/H5Dread when the phase has any,
 *    else the MPI-IO data calls;
 *  - files: SHARED when a file was opened with MPI_File_open on more than
 *    one process, PER_PROCESS when every MPI_File_open was on one process;
 *  - identity_hash: name_hash of the first H5Fcreate/H5Fopen (else
 *    MPI_File_open).
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

/* ==== Rules (SmartIO Table 2) ====
 *
 * A rules table is a JSON document; the built-in one is embedded in rules.c
 * as text, so the runtime and Python read the same table:
 *   {"version": 1, "name": "...", "description": "...", "rules": [
 *     {"id": 1, "optimization": "...", "title": "...", "source": "[10, 17], SmartIO Table 2",
 *      "evaluated": false,
 *      "cases": [{"when": {...}, "set": {"hdf5.transfer_mode": "independent"}, "note": "..."}]}]}
 * Rules run in id order; the first case of a rule whose conditions all hold
 * fires it (its "set" may be empty: "keep the default"); later rules see the
 * settings earlier ones decided, and a later setting of the same knob (or a
 * lustre.layout against stripe_count/stripe_size) replaces the earlier one.
 * A condition on an insight that is unknown never holds.
 * Conditions ("when"):
 *   "files": "shared" | "per_process"
 *   "sequential": true | false            both directions together (iot_insights_locality)
 *   "transfer": "none" | "independent" | "collective" | "mixed", or a list of them
 *   "transfer_size", "file_size": {"below": S, "at_least": S, "at_most": S, "above": S}
 *                                         at most one lower and one upper bound; S bytes or "16M"
 *   "file_system": "lustre" or a list of names (case-insensitive)
 *   "pfl": true | false                   progressive layouts available
 *   "same_calls": true | false            every rank makes the same number of data calls
 *   "collective_buffering": true | false  collective buffering will be performed, given the
 *                                         decisions so far: a direction whose transfers are
 *                                         collective or mixed (after an hdf5.transfer_mode
 *                                         decision) and whose romio_cb_write / romio_cb_read
 *                                         was not decided "disable"
 *   "decided": {"layer.knob": value or null}  an earlier rule set that value (null: set nothing)
 * Settings ("set") are catalogued knobs as "layer.knob": value, validated
 * by the settings validator (iot_settings_parse). */

typedef struct iot_rules iot_rules;

#define IOT_RULES_MAX 64          /* rules in a table */
#define IOT_RULE_MAX_SETTINGS 32  /* distinct knobs in a result (more than the catalogue holds) */
#define IOT_RULE_VALUE_MAX 256    /* canonical value text, NUL included */

/* The built-in table (SmartIO's 10 rules), parsed once; NULL only if out of
 * memory. Owned by the library: iot_rules_free ignores it. */
iot_rules *iot_rules_builtin(void);
/* The built-in table's text. */
const char *iot_rules_builtin_json(void);
/* Parses a table (test-only tables, same format). NULL on a problem, with a
 * message naming the rule and case ("rule 4, case 0: ..."). */
iot_rules *iot_rules_parse(const char *json, char *err, size_t errlen);
void iot_rules_free(iot_rules *r);
/* The table, normalized (canonical values); caller frees. */
char *iot_rules_to_json(const iot_rules *r);
size_t iot_rules_count(const iot_rules *r);

typedef struct {
    int rule;        /* rule id */
    int case_index;  /* 0-based case of that rule */
    char reason[256];/* why, in a plain sentence built from the insights */
} iot_rule_fired;

typedef struct {
    char name[64];                  /* "layer.knob" */
    char value[IOT_RULE_VALUE_MAX]; /* canonical value text, as in iot_setting.text */
    int rule;                       /* id of the rule that set it */
    int knob;                       /* catalogue index */
} iot_rule_setting;

typedef struct {
    iot_rule_fired fired[IOT_RULES_MAX];
    int nfired;
    iot_rule_setting settings[IOT_RULE_MAX_SETTINGS]; /* in the order they were first decided */
    int nsettings;
} iot_rule_result;

/* Evaluates the rules; returns how many fired, or -1 on NULL arguments. */
int iot_rules_evaluate(const iot_rules *r, const iot_insights *in, iot_rule_result *out);
/* The value a result sets for "layer.knob", or NULL. */
const char *iot_rule_result_get(const iot_rule_result *res, const char *name);
/* {"fired": [{"rule", "case_index", "title" (with rules), "reason", "set": {...} (with rules)}],
 *  "settings": {"layer.knob": "canonical text", ...}}; rules may be NULL. */
void iot_rule_result_write_json(const iot_rule_result *res, const iot_rules *rules, iot_buf *b, const char *key);
/* The result as a settings document (core.h's format, one group; file_glob
 * and description may be NULL), for iot_settings_parse and the runtime's
 * appliers. Caller frees; NULL if out of memory. */
char *iot_rule_result_settings_json(const iot_rule_result *res, const char *file_glob, const char *description);

/* For ctypes: insights JSON in (and a table, NULL for the built-in one),
 * {"fired": [...], "settings": {...}, "document": {settings document}} out;
 * caller frees with iot_free. NULL with the message in err on bad input. */
char *iot_rules_explain(const char *insights_json, const char *rules_json_or_NULL, char *err, size_t errlen);

/* ==== Feedback (not in SmartIO: its future work) ====
 *
 * Decides, one finished phase at a time, which of the rules that set knobs
 * the next phase of an identity runs with. Each optimized phase's bandwidth
 * is compared with a reference, at first the learned phase's (the
 * application's own settings):
 *  1. slower than the reference by more than the margin twice in a row: the
 *     next phase is a probe with the default settings, to tell harm from a
 *     machine that slowed down;
 *  2. the probe no faster than the better of those two by the margin: the
 *     slowdown was the machine's (or the probe met a burst of it), the rules
 *     stay and the reference too, but the next probe waits for twice as many
 *     phases in a row below it (4, 8, up to 16): a harm is looked at again,
 *     and a lasting slowdown costs few probes;
 *  3. the probe faster: the rules did harm. With one rule applied, it is
 *     rolled back. With several, each is tried alone in the next phases and
 *     judged against the probe. One slower than it by the margin gets a
 *     second look, paired the same way: the default settings run again,
 *     then the rule alone, judged against that new measurement; slower
 *     again, it is rolled back. The others stay and run together again. A
 *     second confirmed harm rolls back every rule still applied (rules can
 *     hurt only together).
 * Rolled-back rules stay rolled back for the rest of the run. */
#define IOT_FEEDBACK_MAX_RULES 32 /* rules that set knobs (at most one per setting) */
#define IOT_FEEDBACK_MAX_PATIENCE 16 /* most phases in a row below the reference before a probe */

typedef enum {
    IOT_FB_NONE,        /* nothing to report */
    IOT_FB_SLOW,        /* one phase below the reference */
    IOT_FB_PROBE_NEXT,  /* two in a row: the next phase runs with the default settings */
    IOT_FB_KEPT,        /* the probe was no faster: the rules stay */
    IOT_FB_ISOLATE_NEXT,/* harm confirmed with several rules: the next phases try each alone */
    IOT_FB_RULE_KEPT,   /* a rule tried alone did no harm */
    IOT_FB_ROLLED_BACK  /* one or more rules rolled back (see rolled_back_now) */
} iot_feedback_action;

typedef enum {
    IOT_FB_RUN_RULES,    /* the applied rules (mask) */
    IOT_FB_RUN_PROBE,    /* the default settings, to judge the rules */
    IOT_FB_RUN_ISOLATED, /* one rule alone (mask has one bit) */
    IOT_FB_RUN_DEFAULT   /* every rule rolled back */
} iot_feedback_run;

typedef struct {
    double reference, margin;
    int nrules;
    int rules[IOT_FEEDBACK_MAX_RULES]; /* rule ids; bit i of a mask is rules[i] */
    uint32_t applied;                   /* rules still in force */
    uint32_t untried;                   /* rules still to try alone */
    uint32_t rolled_back_now;           /* rules the last observation rolled back */
    int isolated;                       /* index of the rule tried alone now, -1 none */
    int isolated_slow;                  /* it ran below the probe once: the next probe and try are its second look */
    int probing, harms, regressions;
    int patience;     /* phases in a row below the reference that make the next one a probe */
    double slow[2];   /* the last two phases below the reference */
    double probe;     /* the probe's bandwidth: what rules tried alone are judged against */
} iot_feedback;

/* learned_mib_s: the learned phase's bandwidth; rule_ids: the rules that set
 * knobs (at most IOT_FEEDBACK_MAX_RULES are tracked); an invalid margin
 * (not in (0, 1)) falls back to 0.25. */
void iot_feedback_init(iot_feedback *f, double learned_mib_s, double margin, const int *rule_ids, int nrules);
/* What the next phase runs, and with which rules (bit i = rules[i]). */
iot_feedback_run iot_feedback_next(const iot_feedback *f, uint32_t *mask);
/* The phase that ran as iot_feedback_next said has finished at mib_s. note
 * (may be NULL) says what was decided and why, with the numbers. */
iot_feedback_action iot_feedback_observe(iot_feedback *f, double mib_s, char *note, size_t notelen);
/* "1, 7": the ids of the rules in mask. */
void iot_feedback_rules_text(const iot_feedback *f, uint32_t mask, char *out, size_t outlen);

#ifdef __cplusplus
}
#endif
#endif
