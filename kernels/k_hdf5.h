/* The kernels' HDF5 format (k_hdf5.c): what a kernel's own HDF5 I/O uses (FLASH's header). */
#ifndef IOTUNER_KERNELS_K_HDF5_H
#define IOTUNER_KERNELS_K_HDF5_H

#include <hdf5.h>

#include "common.h"

#ifndef H5_HAVE_PARALLEL
#error "the iotuner kernels need a parallel (MPI-IO) HDF5"
#endif

/* HDF5 calls return a negative value on error: abort with the call's text. */
#define KH(call) k_h5check((long)(call), #call, __FILE__, __LINE__)
long k_h5check(long ret, const char *what, const char *file, int line);

/* Where the current step's datasets go: its group /Step#N, or the file. */
hid_t k_hdf5_location(const kctx *k);

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
