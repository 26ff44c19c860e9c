/* The HDF5 appliers (hdf5_apply.c): what iotuner sets on HDF5's property
 * lists (file access at a file's opening, chunking at a dataset's creation,
 * the transfer mode at a transfer) and reads back after use, through the
 * HDF5 calls it makes itself (iot_h5, resolved at run time: the library
 * links no HDF5). The wrappers (hdf5.c) say when. */
#ifndef IOTUNER_HDF5_APPLY_H
#define IOTUNER_HDF5_APPLY_H

#include <string.h>

#include <hdf5.h>

#include "iotuner/core.h"
#include "phase.h"

/* ---- HDF5 entry points we call (not interpose), resolved at first use ---- */

/* X(ret, field, params, symbol, required) */
#define H5_FUNCTIONS(X)                                                                                        \
    X(herr_t, open, (void), "H5open", 1)                                                                       \
    X(herr_t, get_libversion, (unsigned *, unsigned *, unsigned *), "H5get_libversion", 0)                     \
    X(hid_t, Pcreate, (hid_t), "H5Pcreate", 1)                                                                 \
    X(hid_t, Pcopy, (hid_t), "H5Pcopy", 1)                                                                     \
    X(herr_t, Pclose, (hid_t), "H5Pclose", 1)                                                                  \
    X(hid_t, Pget_driver, (hid_t), "H5Pget_driver", 1)                                                         \
    X(herr_t, Pset_alignment, (hid_t, hsize_t, hsize_t), "H5Pset_alignment", 0)                                \
    X(herr_t, Pget_alignment, (hid_t, hsize_t *, hsize_t *), "H5Pget_alignment", 0)                            \
    X(herr_t, Pset_meta_block_size, (hid_t, hsize_t), "H5Pset_meta_block_size", 0)                             \
    X(herr_t, Pget_meta_block_size, (hid_t, hsize_t *), "H5Pget_meta_block_size", 0)                           \
    X(herr_t, Pset_sieve_buf_size, (hid_t, size_t), "H5Pset_sieve_buf_size", 0)                                \
    X(herr_t, Pget_sieve_buf_size, (hid_t, size_t *), "H5Pget_sieve_buf_size", 0)                              \
    X(herr_t, Pset_small_data_block_size, (hid_t, hsize_t), "H5Pset_small_data_block_size", 0)                 \
    X(herr_t, Pget_small_data_block_size, (hid_t, hsize_t *), "H5Pget_small_data_block_size", 0)               \
    X(herr_t, Pset_mdc_config, (hid_t, H5AC_cache_config_t *), "H5Pset_mdc_config", 0)                         \
    X(herr_t, Pget_mdc_config, (hid_t, H5AC_cache_config_t *), "H5Pget_mdc_config", 0)                         \
    X(herr_t, Pset_cache, (hid_t, int, size_t, size_t, double), "H5Pset_cache", 0)                             \
    X(herr_t, Pget_cache, (hid_t, int *, size_t *, size_t *, double *), "H5Pget_cache", 0)                     \
    X(herr_t, Pset_all_coll_metadata_ops, (hid_t, hbool_t), "H5Pset_all_coll_metadata_ops", 0)                 \
    X(herr_t, Pget_all_coll_metadata_ops, (hid_t, hbool_t *), "H5Pget_all_coll_metadata_ops", 0)               \
    X(herr_t, Pset_coll_metadata_write, (hid_t, hbool_t), "H5Pset_coll_metadata_write", 0)                     \
    X(herr_t, Pget_coll_metadata_write, (hid_t, hbool_t *), "H5Pget_coll_metadata_write", 0)                   \
    X(herr_t, Pset_dxpl_mpio, (hid_t, H5FD_mpio_xfer_t), "H5Pset_dxpl_mpio", 0)                                \
    X(herr_t, Pget_dxpl_mpio, (hid_t, H5FD_mpio_xfer_t *), "H5Pget_dxpl_mpio", 0)                              \
    X(herr_t, Pget_mpio_actual_io_mode, (hid_t, H5D_mpio_actual_io_mode_t *), "H5Pget_mpio_actual_io_mode", 0) \
    X(herr_t, Pget_mpio_no_collective_cause, (hid_t, uint32_t *, uint32_t *), "H5Pget_mpio_no_collective_cause", 0) \
    X(herr_t, Pget_fapl_mpio, (hid_t, MPI_Comm *, MPI_Info *), "H5Pget_fapl_mpio", 0)                          \
    X(herr_t, Pset_chunk, (hid_t, int, const hsize_t *), "H5Pset_chunk", 1)                                    \
    X(int, Pget_chunk, (hid_t, int, hsize_t *), "H5Pget_chunk", 1)                                             \
    X(H5D_layout_t, Pget_layout, (hid_t), "H5Pget_layout", 1)                                                  \
    X(hid_t, Fget_access_plist, (hid_t), "H5Fget_access_plist", 1)                                             \
    X(hid_t, Dget_create_plist, (hid_t), "H5Dget_create_plist", 1)                                             \
    X(herr_t, Dget_chunk_storage_size, (hid_t, const hsize_t *, hsize_t *), "H5Dget_chunk_storage_size", 0)    \
    X(int, Sget_simple_extent_dims, (hid_t, hsize_t *, hsize_t *), "H5Sget_simple_extent_dims", 1)             \
    X(hssize_t, Sget_select_npoints, (hid_t), "H5Sget_select_npoints", 1)                                      \
    X(herr_t, Sget_select_bounds, (hid_t, hsize_t *, hsize_t *), "H5Sget_select_bounds", 0)                    \
    X(hid_t, Dget_type, (hid_t), "H5Dget_type", 0)                                                             \
    X(herr_t, Tclose, (hid_t), "H5Tclose", 0)                                                                  \
    X(herr_t, Sclose, (hid_t), "H5Sclose", 1)                                                                  \
    X(hid_t, Dget_space, (hid_t), "H5Dget_space", 1)                                                           \
    X(size_t, Tget_size, (hid_t), "H5Tget_size", 1)                                                            \
    X(herr_t, Eget_auto2, (hid_t, H5E_auto2_t *, void **), "H5Eget_auto2", 1)                                  \
    X(herr_t, Eset_auto2, (hid_t, H5E_auto2_t, void *), "H5Eset_auto2", 1)                                     \
    X(hid_t, Iget_file_id, (hid_t), "H5Iget_file_id", 1)                                                       \
    X(ssize_t, Iget_name, (hid_t, char *, size_t), "H5Iget_name", 1)                                           \
    X(int, Idec_ref, (hid_t), "H5Idec_ref", 1)                                                                 \
    X(H5I_type_t, Iget_type, (hid_t), "H5Iget_type", 1)                                                        \
    X(htri_t, Iis_valid, (hid_t), "H5Iis_valid", 1)                                                            \
    X(hid_t, FD_mpio_init, (void), "H5FD_mpio_init", 0)                                                        \
    X(hid_t, FD_sec2_init, (void), "H5FD_sec2_init", 0)

typedef struct {
#define H5_FIELD(ret, field, params, symbol, required) ret(*field) params;
    H5_FUNCTIONS(H5_FIELD)
#undef H5_FIELD
    hid_t *cls_file_access, *cls_dataset_create, *cls_dataset_xfer;
} iot_h5_calls;
extern iot_h5_calls iot_h5;

/* Resolves iot_h5 once; 0: this process has no HDF5 we can use. */
int iot_h5_resolve(void);

/* HDF5 prints its error stack by default; our own property calls stay quiet. */
typedef struct {
    H5E_auto2_t func;
    void *data;
} iot_h5_quiet;

static inline iot_h5_quiet iot_h5_quiet_begin(void)
{
    iot_h5_quiet q = {NULL, NULL};
    iot_h5.Eget_auto2(H5E_DEFAULT, &q.func, &q.data);
    iot_h5.Eset_auto2(H5E_DEFAULT, NULL, NULL);
    return q;
}

static inline void iot_h5_quiet_end(iot_h5_quiet q)
{
    iot_h5.Eset_auto2(H5E_DEFAULT, q.func, q.data);
}

/* The phase's file goes through HDF5's MPI-IO driver. */
static inline int iot_h5_is_mpio(const iot_phase *ph)
{
    return ph && !strcmp(ph->driver, "mpio");
}

/* ---- files ---- */

/* The file driver a file-access list names: "mpio", "sec2", "other" or "unknown". */
const char *iot_h5_driver_name(hid_t fapl);
/* The application's own values (its file-access list's) of the knobs applied there, into the phase. */
void iot_h5_record_application_fapl(iot_phase *ph, hid_t fapl);
/* Requested file-access knobs set on a copy of the application's list (*mine, -1: none), the ones set into
 * applied; returns their count. */
size_t iot_h5_apply_fapl(iot_phase *ph, hid_t fapl, hid_t *mine, const iot_setting **applied);
/* Reads the applied knobs back from the open file. */
void iot_h5_verify_fapl(iot_phase *ph, hid_t fid, const iot_setting **applied, size_t napplied);

/* ---- datasets ---- */

/* A dataset-creation list with the requested chunking, or -1 and why (refused: iotuner's own guard). */
hid_t iot_h5_chunked_dcpl(hid_t dcpl, hid_t space, const iot_setting *chunk, size_t elem, hsize_t *dims_out,
                          int *rank_out, int *refused, char *why, size_t whylen);
/* Reads the chunking back from the new dataset. */
void iot_h5_verify_chunking(iot_phase *ph, hid_t did, const char *dname, const iot_setting *chunk,
                            const hsize_t *want, int rank, size_t elem, const char *note);

/* ---- transfers ---- */

/* A transfer list carrying the requested mode (xfer: H5FD_mpio_xfer_t + 1), or the application's own;
 * *temporary: the caller closes it after the transfer. */
hid_t iot_h5_transfer_plist(hid_t dxpl, int xfer, int *temporary);
/* After the phase's first transfer: what HDF5 did with the requested mode, and the application's own. */
void iot_h5_verify_transfer(iot_phase *ph, const char *dataset, hid_t app_dxpl, hid_t used, int xfer);

#endif
