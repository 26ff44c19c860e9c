/* The calls smart mode models, as the runtime reports them (SmartIO, section
 * 3.1): each intercepted HDF5 and MPI-IO call's signature (its name and
 * integer arguments), their classification, and the identity of a file or
 * dataset name that lets the files of successive steps share terminals. The
 * contract between the runtime, the grammar (iotuner/grammar.h) and the
 * insights (iotuner/insights.h). Pure C11. */
#ifndef IOTUNER_SIGNATURE_H
#define IOTUNER_SIGNATURE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Call signatures: the contract between the runtime and the extraction
 *
 * The runtime interns every intercepted HDF5, PnetCDF and MPI-IO call into the
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
 *   PnetCDF (every put / get call of iotuner/calls.h under one name per kind):
 *   "ncmpi_create", "ncmpi_open"  [name_hash, mode]
 *   "ncmpi_close", "ncmpi_enddef" []
 *   "ncmpi_put", "ncmpi_get"      [bytes]   blocking (independent or _all)
 *   "ncmpi_iput", "ncmpi_iget"    [bytes]   nonblocking, posted (bput is an iput): no I/O yet
 *   "ncmpi_wait"                  []        ncmpi_wait / wait_all: the posted requests' I/O, which
 *                                           the MPI-IO calls after it do (raw data, as after a put)
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
#define IOT_SIG_NCMPI_CREATE "ncmpi_create"
#define IOT_SIG_NCMPI_OPEN "ncmpi_open"
#define IOT_SIG_NCMPI_CLOSE "ncmpi_close"
#define IOT_SIG_NCMPI_ENDDEF "ncmpi_enddef" /* not in IOT_SIGNATURES: a PnetCDF call that is no data call */
#define IOT_SIG_NCMPI_PUT "ncmpi_put"
#define IOT_SIG_NCMPI_GET "ncmpi_get"
#define IOT_SIG_NCMPI_IPUT "ncmpi_iput"
#define IOT_SIG_NCMPI_IGET "ncmpi_iget"
#define IOT_SIG_NCMPI_WAIT "ncmpi_wait"
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
    X(IOT_SIG_MPI_FILE_CLOSE, IOT_CALL_MPI_CLOSE, 0, 0)                                                        \
    X(IOT_SIG_NCMPI_CREATE, IOT_CALL_FILE_OPEN, 0, 2)                                                          \
    X(IOT_SIG_NCMPI_OPEN, IOT_CALL_FILE_OPEN, 0, 2)                                                            \
    X(IOT_SIG_NCMPI_CLOSE, IOT_CALL_FILE_CLOSE, 0, 0)                                                          \
    X(IOT_SIG_NCMPI_PUT, IOT_CALL_H5_DATA, 1, 1)                                                               \
    X(IOT_SIG_NCMPI_GET, IOT_CALL_H5_DATA, 0, 1)                                                               \
    X(IOT_SIG_NCMPI_IPUT, IOT_CALL_H5_DATA, 1, 1)                                                              \
    X(IOT_SIG_NCMPI_IGET, IOT_CALL_H5_DATA, 0, 1)                                                              \
    X(IOT_SIG_NCMPI_WAIT, IOT_CALL_LIB_WAIT, 0, 0)
#define IOT_SIG_NONE NULL /* an intercepted call outside the grammar (iotuner/calls.h) */
/* Argument positions. */
#define IOT_ARG_NAME_HASH 0 /* H5Fcreate, H5Fopen, H5Dcreate, H5Dopen, MPI_File_open, ncmpi_create, ncmpi_open */
#define IOT_ARG_FLAGS 1     /* H5Fcreate, H5Fopen, ncmpi_create, ncmpi_open */
#define IOT_ARG_TYPE_SIZE 1 /* H5Dcreate */
#define IOT_ARG_NDIMS 2     /* H5Dcreate */
#define IOT_ARG_AMODE 1     /* MPI_File_open */
#define IOT_ARG_COMM_SIZE 2 /* MPI_File_open */
#define IOT_ARG_BYTES 0     /* H5Dwrite, H5Dread, MPI-IO data calls */
#define IOT_ARG_OFFSET 1    /* MPI-IO _at data calls */

typedef enum {
    IOT_CALL_OTHER,      /* not part of the contract */
    IOT_CALL_FILE_OPEN,  /* H5Fcreate, H5Fopen, ncmpi_create, ncmpi_open */
    IOT_CALL_FILE_CLOSE, /* H5Fclose, ncmpi_close */
    IOT_CALL_DSET_OPEN,  /* H5Dcreate, H5Dopen */
    IOT_CALL_DSET_CLOSE, /* H5Dclose */
    IOT_CALL_H5_DATA,    /* a library's data call: H5Dwrite, H5Dread, ncmpi_put, ncmpi_get, ncmpi_iput, ncmpi_iget */
    IOT_CALL_MPI_OPEN,   /* MPI_File_open */
    IOT_CALL_MPI_CLOSE,  /* MPI_File_close */
    IOT_CALL_MPI_DATA,   /* MPI-IO reads and writes */
    IOT_CALL_LIB_WAIT    /* ncmpi_wait: the library's posted data calls go to MPI-IO now */
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

#ifdef __cplusplus
}
#endif
#endif
