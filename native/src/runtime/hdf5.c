/* HDF5 module: file-access knobs at H5Fcreate/H5Fopen, chunking at
 * H5Dcreate, transfer mode at H5Dwrite/H5Dread; each read back after use,
 * and a knob that never got its chance reported as not applicable. Covers
 * HDF5 1.8-1.10's calls (the 1.6 names H5Dcreate1 and H5Dopen1 included)
 * and 1.12-1.14's asynchronous and multi-dataset calls, resolved at run time
 * (iotuner/calls.h). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <hdf5.h>

#include "iotuner/calls.h"
#include "iotuner/signature.h"
#include "comm.h"
#include "module.h"
#include "phases.h"
#include "pmpi.h"

IOT_HDF5_CALLS(IOT_DECLARE)
IOT_HDF5_LATER_CALLS(IOT_DECLARE)

/* H5F_ACC_* macros call into HDF5 (H5check); these are their values. */
#define ACC_TRUNC 0x0002u

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
    X(herr_t, Sclose, (hid_t), "H5Sclose", 1)                                                                  \
    X(hid_t, Dget_space, (hid_t), "H5Dget_space", 1)                                                           \
    X(size_t, Tget_size, (hid_t), "H5Tget_size", 1)                                                            \
    X(herr_t, Eget_auto2, (hid_t, H5E_auto2_t *, void **), "H5Eget_auto2", 1)                                  \
    X(herr_t, Eset_auto2, (hid_t, H5E_auto2_t, void *), "H5Eset_auto2", 1)                                     \
    X(hid_t, Iget_file_id, (hid_t), "H5Iget_file_id", 1)                                                       \
    X(ssize_t, Iget_name, (hid_t, char *, size_t), "H5Iget_name", 1)                                           \
    X(int, Idec_ref, (hid_t), "H5Idec_ref", 1)                                                                 \
    X(hid_t, FD_mpio_init, (void), "H5FD_mpio_init", 0)                                                        \
    X(hid_t, FD_sec2_init, (void), "H5FD_sec2_init", 0)

static struct {
#define H5_FIELD(ret, field, params, symbol, required) ret(*field) params;
    H5_FUNCTIONS(H5_FIELD)
#undef H5_FIELD
    hid_t *cls_file_access, *cls_dataset_create, *cls_dataset_xfer;
} H;

static pthread_once_t h5_once = PTHREAD_ONCE_INIT;
static int h5_ok;

static void h5_resolve_once(void)
{
    h5_ok = 1;
    /* the serial-only and parallel-only entries may be missing; the core set may not */
#define H5_RESOLVE(ret, field, params, symbol, required)                                                      \
    H.field = (ret(*) params)dlsym(RTLD_DEFAULT, symbol);                                                    \
    if ((required) && !H.field)                                                                              \
        h5_ok = 0;
    H5_FUNCTIONS(H5_RESOLVE)
#undef H5_RESOLVE
    H.cls_file_access = dlsym(RTLD_DEFAULT, "H5P_CLS_FILE_ACCESS_ID_g");
    H.cls_dataset_create = dlsym(RTLD_DEFAULT, "H5P_CLS_DATASET_CREATE_ID_g");
    H.cls_dataset_xfer = dlsym(RTLD_DEFAULT, "H5P_CLS_DATASET_XFER_ID_g");
    h5_ok = h5_ok && H.cls_file_access && H.cls_dataset_create && H.cls_dataset_xfer;
    if (h5_ok) {
        H.open();
        unsigned maj = 0, min = 0, rel = 0;
        char version[64];
        if (H.get_libversion && H.get_libversion(&maj, &min, &rel) >= 0) {
            snprintf(version, sizeof version, "%u.%u.%u%s", maj, min, rel, H.FD_mpio_init ? " (parallel)" : "");
            iot_state_library(IOT_KIND_HDF5, version);
        }
    }
}

static int h5_resolve(void)
{
    pthread_once(&h5_once, h5_resolve_once);
    return h5_ok;
}

/* HDF5 prints its error stack by default; our own property calls stay quiet. */
typedef struct {
    H5E_auto2_t func;
    void *data;
} quiet_t;

static quiet_t quiet_begin(void)
{
    quiet_t q = {NULL, NULL};
    H.Eget_auto2(H5E_DEFAULT, &q.func, &q.data);
    H.Eset_auto2(H5E_DEFAULT, NULL, NULL);
    return q;
}

static void quiet_end(quiet_t q)
{
    H.Eset_auto2(H5E_DEFAULT, q.func, q.data);
}

/* ---- file-access appliers: one per knob (IOR's aiori style: a table, indexed by the knob's id) ---- */

typedef struct {
    int (*apply)(hid_t fapl, const iot_setting *s);
    int (*readback)(hid_t fapl, char *out, size_t outlen);
} fapl_applier;

static int set_alignment(hid_t p, const iot_setting *s)
{
    return H.Pset_alignment ? H.Pset_alignment(p, (hsize_t)s->ints[0], (hsize_t)s->ints[1]) : -1;
}
static int get_alignment(hid_t p, char *o, size_t n)
{
    hsize_t t, a;
    if (!H.Pget_alignment || H.Pget_alignment(p, &t, &a) < 0)
        return -1;
    snprintf(o, n, "%llu,%llu", (unsigned long long)t, (unsigned long long)a);
    return 0;
}
static int set_meta_block(hid_t p, const iot_setting *s)
{
    return H.Pset_meta_block_size ? H.Pset_meta_block_size(p, (hsize_t)s->ints[0]) : -1;
}
static int get_meta_block(hid_t p, char *o, size_t n)
{
    hsize_t v;
    if (!H.Pget_meta_block_size || H.Pget_meta_block_size(p, &v) < 0)
        return -1;
    snprintf(o, n, "%llu", (unsigned long long)v);
    return 0;
}
static int set_sieve(hid_t p, const iot_setting *s)
{
    return H.Pset_sieve_buf_size ? H.Pset_sieve_buf_size(p, (size_t)s->ints[0]) : -1;
}
static int get_sieve(hid_t p, char *o, size_t n)
{
    size_t v;
    if (!H.Pget_sieve_buf_size || H.Pget_sieve_buf_size(p, &v) < 0)
        return -1;
    snprintf(o, n, "%zu", v);
    return 0;
}
static int set_small_data(hid_t p, const iot_setting *s)
{
    return H.Pset_small_data_block_size ? H.Pset_small_data_block_size(p, (hsize_t)s->ints[0]) : -1;
}
static int get_small_data(hid_t p, char *o, size_t n)
{
    hsize_t v;
    if (!H.Pget_small_data_block_size || H.Pget_small_data_block_size(p, &v) < 0)
        return -1;
    snprintf(o, n, "%llu", (unsigned long long)v);
    return 0;
}
static int set_mdc_initial(hid_t p, const iot_setting *s)
{
    H5AC_cache_config_t c;
    memset(&c, 0, sizeof c);
    c.version = H5AC__CURR_CACHE_CONFIG_VERSION;
    if (!H.Pget_mdc_config || !H.Pset_mdc_config || H.Pget_mdc_config(p, &c) < 0)
        return -1;
    size_t v = (size_t)s->ints[0];
    c.set_initial_size = 1;
    c.initial_size = v;
    if (c.max_size < v) /* keep min <= initial <= max, as HDF5 demands */
        c.max_size = v;
    if (c.min_size > v)
        c.min_size = v;
    return H.Pset_mdc_config(p, &c);
}
static int get_mdc_initial(hid_t p, char *o, size_t n)
{
    H5AC_cache_config_t c;
    memset(&c, 0, sizeof c);
    c.version = H5AC__CURR_CACHE_CONFIG_VERSION;
    if (!H.Pget_mdc_config || H.Pget_mdc_config(p, &c) < 0)
        return -1;
    snprintf(o, n, "%zu", c.initial_size);
    return 0;
}

/* the chunk cache is one call with three values: change one, keep the others */
enum { CC_NSLOTS, CC_NBYTES, CC_W0 };
static int set_chunk_cache(hid_t p, const iot_setting *s, int which)
{
    int mdc;
    size_t slots, bytes;
    double w0;
    if (!H.Pget_cache || !H.Pset_cache || H.Pget_cache(p, &mdc, &slots, &bytes, &w0) < 0)
        return -1;
    if (which == CC_NSLOTS)
        slots = (size_t)s->ints[0];
    else if (which == CC_NBYTES)
        bytes = (size_t)s->ints[0];
    else
        w0 = s->real;
    return H.Pset_cache(p, mdc, slots, bytes, w0);
}
static int get_chunk_cache(hid_t p, char *o, size_t n, int which)
{
    int mdc;
    size_t slots, bytes;
    double w0;
    if (!H.Pget_cache || H.Pget_cache(p, &mdc, &slots, &bytes, &w0) < 0)
        return -1;
    if (which == CC_NSLOTS)
        snprintf(o, n, "%zu", slots);
    else if (which == CC_NBYTES)
        snprintf(o, n, "%zu", bytes);
    else
        snprintf(o, n, "%.9g", w0);
    return 0;
}
static int set_cc_nslots(hid_t p, const iot_setting *s) { return set_chunk_cache(p, s, CC_NSLOTS); }
static int set_cc_nbytes(hid_t p, const iot_setting *s) { return set_chunk_cache(p, s, CC_NBYTES); }
static int set_cc_w0(hid_t p, const iot_setting *s) { return set_chunk_cache(p, s, CC_W0); }
static int get_cc_nslots(hid_t p, char *o, size_t n) { return get_chunk_cache(p, o, n, CC_NSLOTS); }
static int get_cc_nbytes(hid_t p, char *o, size_t n) { return get_chunk_cache(p, o, n, CC_NBYTES); }
static int get_cc_w0(hid_t p, char *o, size_t n) { return get_chunk_cache(p, o, n, CC_W0); }

static int set_coll_reads(hid_t p, const iot_setting *s)
{
    return H.Pset_all_coll_metadata_ops ? H.Pset_all_coll_metadata_ops(p, (hbool_t)s->ints[0]) : -1;
}
static int get_coll_reads(hid_t p, char *o, size_t n)
{
    hbool_t v;
    if (!H.Pget_all_coll_metadata_ops || H.Pget_all_coll_metadata_ops(p, &v) < 0)
        return -1;
    snprintf(o, n, "%s", v ? "true" : "false");
    return 0;
}
static int set_coll_writes(hid_t p, const iot_setting *s)
{
    return H.Pset_coll_metadata_write ? H.Pset_coll_metadata_write(p, (hbool_t)s->ints[0]) : -1;
}
static int get_coll_writes(hid_t p, char *o, size_t n)
{
    hbool_t v;
    if (!H.Pget_coll_metadata_write || H.Pget_coll_metadata_write(p, &v) < 0)
        return -1;
    snprintf(o, n, "%s", v ? "true" : "false");
    return 0;
}

static const fapl_applier fapl_appliers[IOT_KNOBS] = {
    [IOT_KNOB_ALIGNMENT] = {set_alignment, get_alignment},
    [IOT_KNOB_META_BLOCK_SIZE] = {set_meta_block, get_meta_block},
    [IOT_KNOB_SIEVE_BUF_SIZE] = {set_sieve, get_sieve},
    [IOT_KNOB_SMALL_DATA_BLOCK_SIZE] = {set_small_data, get_small_data},
    [IOT_KNOB_MDC_INITIAL_SIZE] = {set_mdc_initial, get_mdc_initial},
    [IOT_KNOB_CHUNK_CACHE_NSLOTS] = {set_cc_nslots, get_cc_nslots},
    [IOT_KNOB_CHUNK_CACHE_NBYTES] = {set_cc_nbytes, get_cc_nbytes},
    [IOT_KNOB_CHUNK_CACHE_W0] = {set_cc_w0, get_cc_w0},
    [IOT_KNOB_COLL_METADATA_READS] = {set_coll_reads, get_coll_reads},
    [IOT_KNOB_COLL_METADATA_WRITES] = {set_coll_writes, get_coll_writes},
};

/* Knobs this runtime can apply, as "layer.name" (compared with the catalogue by a test): the HDF5 file-access
 * appliers, the knobs applied at other points (chunking, transfer, Lustre layouts), and every MPI-IO hint. */
IOT_EXPORT const char *iotuner_runtime_knobs(void)
{
    static char list[2048];
    if (!list[0]) {
        size_t pos = (size_t)snprintf(list, sizeof list, "mpiio.*");
        for (int k = 0; k < IOT_KNOBS; k++) {
            const iot_knob *kn = &iot_catalogue[k];
            int applied = kn->apply == IOT_APPLY_FILE_ACCESS ? fapl_appliers[k].apply != NULL
                                                              : kn->layer != IOT_LAYER_MPIIO;
            if (applied && pos < sizeof list)
                pos += (size_t)snprintf(list + pos, sizeof list - pos, ",%s.%s", iot_layer_name(kn->layer), kn->name);
        }
    }
    return list;
}

/* ---- datasets: id -> phase and transfer mode ---- */

typedef struct dset_rec {
    hid_t id;
    iot_phase *ph;
    int xfer; /* requested H5FD_mpio_xfer_t + 1, 0 = leave alone */
    struct dset_rec *next;
} dset_rec;

#define DSET_BUCKETS 1024
static dset_rec *dset_table[DSET_BUCKETS];
static pthread_mutex_t dset_lock = PTHREAD_MUTEX_INITIALIZER;
static hid_t xfer_plists[2] = {-1, -1}; /* ours, replacing H5P_DEFAULT: independent, collective */

static unsigned id_bucket(hid_t id)
{
    return (unsigned)(((uint64_t)id * 0x9E3779B97F4A7C15ull) >> 54) % DSET_BUCKETS;
}

static void dset_put(hid_t id, iot_phase *ph, int xfer)
{
    dset_rec *r = malloc(sizeof *r);
    if (!r)
        return;
    r->id = id;
    r->ph = ph;
    r->xfer = xfer;
    unsigned b = id_bucket(id);
    pthread_mutex_lock(&dset_lock);
    r->next = dset_table[b];
    dset_table[b] = r;
    pthread_mutex_unlock(&dset_lock);
}

/* The last dataset this thread used: repeated small writes skip the lock.
 * HDF5 never reuses an id, so a closed dataset's entry cannot match again. */
static IOT_TLS hid_t cached_id = -1;
static IOT_TLS iot_phase *cached_ph;
static IOT_TLS int cached_xfer;

/* 1: this thread's last dataset; 2: found in the table (this thread's first call on it); 0: not tracked. */
static inline int dset_get(hid_t id, iot_phase **ph, int *xfer)
{
    if (id == cached_id) {
        *ph = cached_ph;
        *xfer = cached_xfer;
        return 1;
    }
    unsigned b = id_bucket(id);
    int found = 0;
    pthread_mutex_lock(&dset_lock);
    for (dset_rec *r = dset_table[b]; r; r = r->next)
        if (r->id == id) {
            *ph = r->ph;
            *xfer = r->xfer;
            found = 1;
            break;
        }
    pthread_mutex_unlock(&dset_lock);
    if (found) {
        cached_id = id;
        cached_ph = *ph;
        cached_xfer = *xfer;
    }
    return found ? 2 : 0;
}

static void dset_drop(hid_t id)
{
    if (id == cached_id)
        cached_id = -1;
    unsigned b = id_bucket(id);
    pthread_mutex_lock(&dset_lock);
    for (dset_rec **p = &dset_table[b]; *p; p = &(*p)->next)
        if ((*p)->id == id) {
            dset_rec *r = *p;
            *p = r->next;
            free(r);
            break;
        }
    pthread_mutex_unlock(&dset_lock);
}

/* File ids made by H5Freopen: more identifiers of an open phase. */
typedef struct alias {
    hid_t id;
    iot_phase *ph;
    struct alias *next;
} alias;
static alias *aliases;

static iot_phase *phase_of_file(hid_t fid, int drop)
{
    iot_phase *ph = iot_phase_find_handle(IOT_KIND_HDF5, fid);
    pthread_mutex_lock(&dset_lock);
    for (alias **p = &aliases; *p && !ph; p = &(*p)->next)
        if ((*p)->id == fid) {
            alias *a = *p;
            ph = a->ph;
            if (drop) {
                *p = a->next;
                free(a);
            }
            break;
        }
    pthread_mutex_unlock(&dset_lock);
    return ph;
}

/* The file phase an object belongs to. */
static iot_phase *phase_of_object(hid_t obj)
{
    hid_t fid = H.Iget_file_id(obj);
    if (fid < 0)
        return NULL;
    iot_phase *ph = phase_of_file(fid, 0);
    H.Idec_ref(fid);
    return ph;
}

static int is_mpio(const iot_phase *ph)
{
    return ph && !strcmp(ph->driver, "mpio");
}

static int requested_xfer(iot_phase *ph, const char *dataset)
{
    if (!ph)
        return 0;
    const iot_setting *s[64];
    size_t n = iot_resolve(ph, dataset, IOT_LAYER_HDF5, s, 64);
    const iot_setting *t = iot_setting_of(s, n, IOT_KNOB_TRANSFER_MODE);
    if (!t)
        return 0;
    if (!is_mpio(ph)) {
        char why[160];
        snprintf(why, sizeof why, "the file uses HDF5's %s driver: there is no collective transfer", ph->driver);
        iot_phase_check(ph, "hdf5", t->name, NULL, t->text, NULL, IOT_STATUS_NOT_APPLICABLE, why);
        return 0;
    }
    return (!strcmp(t->text, "collective") ? H5FD_MPIO_COLLECTIVE : H5FD_MPIO_INDEPENDENT) + 1;
}

/* ---- files ---- */

static const char *driver_name(hid_t fapl)
{
    hid_t probe = fapl == H5P_DEFAULT ? H.Pcreate(*H.cls_file_access) : fapl;
    hid_t drv = probe >= 0 ? H.Pget_driver(probe) : -1;
    if (fapl == H5P_DEFAULT && probe >= 0)
        H.Pclose(probe);
    if (drv < 0)
        return "unknown";
    if (H.FD_mpio_init && drv == H.FD_mpio_init())
        return "mpio";
    if (H.FD_sec2_init && drv == H.FD_sec2_init())
        return "sec2";
    return "other";
}

static void not_applicable_layer(iot_phase *ph, iot_layer layer, const char *why)
{
    const iot_setting *s[128];
    size_t n = iot_resolve(ph, NULL, layer, s, 128);
    for (size_t i = 0; i < n; i++)
        iot_phase_check(ph, iot_layer_name(layer), s[i]->name, NULL, s[i]->text, NULL, IOT_STATUS_NOT_APPLICABLE,
                        why);
}

/* The ranks that open the file (H5Fcreate / H5Fopen are collective on
 * them), as the duplicate H5Pget_fapl_mpio returns; MPI_COMM_NULL when the
 * file is not opened through MPI-IO. */
static MPI_Comm file_comm(iot_phase *ph, hid_t fapl)
{
    MPI_Comm comm = MPI_COMM_NULL;
    MPI_Info info = MPI_INFO_NULL;
    if (!is_mpio(ph) || !H.Pget_fapl_mpio || !iot_pmpi_resolve() || H.Pget_fapl_mpio(fapl, &comm, &info) < 0)
        return MPI_COMM_NULL;
    if (info != MPI_INFO_NULL)
        iot_pmpi.Info_free(&info);
    return comm;
}

/* The ranks that open the file, as the modules may ask for them (iot_phase_comm). */
typedef struct {
    iot_phase *ph;
    hid_t fapl;
} file_access;

static MPI_Comm ranks_of_file(void *arg)
{
    const file_access *a = arg;
    return file_comm(a->ph, a->fapl);
}

/* Requested file-access knobs set on a copy of the application's list (*mine), the ones set into applied. */
static size_t apply_fapl(iot_phase *ph, hid_t fapl, hid_t *mine, const iot_setting **applied)
{
    char why_not_mpio[160];
    snprintf(why_not_mpio, sizeof why_not_mpio, "the file uses HDF5's %s driver, not MPI-IO", ph->driver);
    const iot_setting *s[64];
    size_t n = iot_resolve(ph, NULL, IOT_LAYER_HDF5, s, 64), napplied = 0;
    *mine = -1;
    for (size_t i = 0; i < n; i++) {
        const iot_knob *k = &iot_catalogue[s[i]->knob];
        if (k->apply != IOT_APPLY_FILE_ACCESS)
            continue; /* dataset-level: at H5Dcreate / H5Dwrite */
        if (k->parallel_only && !is_mpio(ph)) {
            iot_phase_check(ph, "hdf5", s[i]->name, NULL, s[i]->text, NULL, IOT_STATUS_NOT_APPLICABLE, why_not_mpio);
            continue;
        }
        const fapl_applier *a = &fapl_appliers[s[i]->knob];
        if (*mine < 0)
            *mine = fapl == H5P_DEFAULT ? H.Pcreate(*H.cls_file_access) : H.Pcopy(fapl);
        if (!a->apply || *mine < 0 || a->apply(*mine, s[i]) < 0) {
            iot_phase_check(ph, "hdf5", s[i]->name, NULL, s[i]->text, NULL, IOT_STATUS_FAILED,
                            a->apply ? "HDF5 refused the value" : "this HDF5 lacks the call to set it");
            continue;
        }
        applied[napplied++] = s[i];
    }
    if (!is_mpio(ph))
        not_applicable_layer(ph, IOT_LAYER_MPIIO, why_not_mpio);
    return napplied;
}

static void verify_fapl(iot_phase *ph, hid_t fid, const iot_setting **applied, size_t napplied)
{
    hid_t acc = H.Fget_access_plist(fid);
    for (size_t i = 0; i < napplied; i++) {
        char eff[160] = "";
        const fapl_applier *a = &fapl_appliers[applied[i]->knob];
        int got = acc >= 0 && a->readback && a->readback(acc, eff, sizeof eff) == 0;
        int same = got && !strcmp(eff, applied[i]->text);
        char why[200] = "";
        if (!got)
            snprintf(why, sizeof why, "set; not read back: this HDF5 cannot report it on the open file");
        else if (!same)
            snprintf(why, sizeof why, "HDF5 reports %s on the open file", eff);
        iot_phase_check(ph, "hdf5", applied[i]->name, NULL, applied[i]->text, got ? eff : NULL,
                        same || !got ? IOT_STATUS_APPLIED : IOT_STATUS_CHANGED, why);
    }
    if (acc >= 0)
        H.Pclose(acc);
}

/* What the application itself asked for, before iotuner changed anything: its file-access list's value of
 * every knob this runtime applies there (a user comparing with "the library's default" needs it). */
static void record_application_fapl(iot_phase *ph, hid_t fapl)
{
    hid_t probe = fapl == H5P_DEFAULT ? H.Pcreate(*H.cls_file_access) : fapl;
    if (probe < 0)
        return;
    for (int k = 0; k < IOT_KNOBS; k++) {
        char v[160];
        if (fapl_appliers[k].readback && fapl_appliers[k].readback(probe, v, sizeof v) == 0)
            iot_phase_app_setting(ph, IOT_LAYER_HDF5, iot_catalogue[k].name, v);
    }
    if (fapl == H5P_DEFAULT)
        H.Pclose(probe);
}

typedef hid_t (*fcreate_fn)(const char *, unsigned, hid_t, hid_t);
typedef hid_t (*fopen_fn)(const char *, unsigned, hid_t);
/* The call that opens the file: H5Fcreate / H5Fopen or their asynchronous forms. */
typedef struct {
    fcreate_fn create;
    fopen_fn open;
    hid_t (*create_async)(const char *, const char *, unsigned, const char *, unsigned, hid_t, hid_t, hid_t);
    hid_t (*open_async)(const char *, const char *, unsigned, const char *, unsigned, hid_t, hid_t);
    const char *app_file, *app_func;
    unsigned app_line;
    hid_t es;
} file_call;

static hid_t call_file(const file_call *c, const char *name, unsigned flags, hid_t fcpl, hid_t fapl)
{
    if (c->create)
        return c->create(name, flags, fcpl, fapl);
    if (c->open)
        return c->open(name, flags, fapl);
    if (c->create_async)
        return c->create_async(c->app_file, c->app_func, c->app_line, name, flags, fcpl, fapl, c->es);
    return c->open_async(c->app_file, c->app_func, c->app_line, name, flags, fapl, c->es);
}

static hid_t file_phase(const file_call *c, const char *name, unsigned flags, hid_t fcpl, hid_t fapl)
{
    int create = c->create || c->create_async;
    if (!h5_resolve() || !name)
        return call_file(c, name, flags, fcpl, fapl);
    iot_state_used(IOT_KIND_HDF5);
    iot_mpi_note_rank(); /* MPI_Init may have gone around us (Fortran's) */
    iot_warn_settings_once();
    iot_phase *ph = iot_phase_begin(IOT_KIND_HDF5, name, create);
    if (!ph)
        return call_file(c, name, flags, fcpl, fapl);

    iot_internal++;
    quiet_t q = quiet_begin();
    snprintf(ph->driver, sizeof ph->driver, "%s", driver_name(fapl));
    record_application_fapl(ph, fapl);
    /* the modules hear of the phase before its settings are resolved: a settings source decides for it now */
    int64_t sig[2] = {iot_wanted(IOT_EVENT_PHASE_BEGIN) ? (int64_t)iot_identity(ph->path, NULL, 0) : 0, (int64_t)flags};
    iot_call opening = {create ? IOT_SIG_H5FCREATE : IOT_SIG_H5FOPEN, sig, 2, -1};
    file_access access = {ph, fapl};
    iot_phase_announce(ph, &opening, ranks_of_file, &access);
    hid_t mine;
    const iot_setting *applied[64];
    size_t napplied = apply_fapl(ph, fapl, &mine, applied);
    iot_phase_file_open(ph, create, (flags & ACC_TRUNC) != 0);
    quiet_end(q);
    iot_internal--;

    /* an attempt with our properties stays silent: only the application's own call may print errors */
    quiet_t attempt = {NULL, NULL};
    if (mine >= 0)
        attempt = quiet_begin();
    iot_phase_set_opening(ph);
    hid_t fid = call_file(c, name, flags, fcpl, mine >= 0 ? mine : fapl);
    iot_phase_set_opening(NULL);
    if (mine >= 0)
        quiet_end(attempt);

    iot_internal++;
    q = quiet_begin();
    if (fid < 0 && mine >= 0) {
        /* our properties must never cost the application its file */
        quiet_end(q);
        iot_internal--; /* the retry's I/O is the application's: track it */
        iot_phase_set_opening(ph);
        fid = call_file(c, name, flags, fcpl, fapl);
        iot_phase_set_opening(NULL);
        iot_internal++;
        q = quiet_begin();
        for (size_t i = 0; i < napplied; i++)
            iot_phase_check(ph, "hdf5", applied[i]->name, NULL, applied[i]->text, NULL, IOT_STATUS_FAILED,
                            "the file could not be opened with these settings; opened with the application's own");
        if (fid >= 0) {
            static int warned;
            ph->retried = 1;
            iot_warn_once(&warned, "%s failed with the requested HDF5 settings on %s; opened with the "
                          "application's own", create ? "H5Fcreate" : "H5Fopen", ph->path);
        }
    } else if (fid >= 0 && napplied) {
        verify_fapl(ph, fid, applied, napplied);
    }
    if (mine >= 0)
        H.Pclose(mine);
    quiet_end(q);
    iot_internal--;

    if (fid < 0) {
        iot_phase_abort(ph);
    } else {
        iot_phase_set_handle(ph, fid);
    }
    return fid;
}

IOT_EXPORT hid_t H5Fcreate(const char *name, unsigned flags, hid_t fcpl, hid_t fapl)
{
    static fcreate_fn real;
    IOT_REAL(real, "H5Fcreate");
    if (!iot_active())
        return real(name, flags, fcpl, fapl);
    file_call c = {.create = real};
    return file_phase(&c, name, flags, fcpl, fapl);
}

IOT_EXPORT hid_t H5Fopen(const char *name, unsigned flags, hid_t fapl)
{
    static fopen_fn real;
    IOT_REAL(real, "H5Fopen");
    if (!iot_active())
        return real(name, flags, fapl);
    file_call c = {.open = real};
    return file_phase(&c, name, flags, H5P_DEFAULT, fapl);
}

/* One more identifier of an open file: the phase lasts until the last one is closed. */
IOT_EXPORT hid_t H5Freopen(hid_t fid)
{
    static hid_t (*real)(hid_t);
    IOT_REAL(real, "H5Freopen");
    hid_t nid = real(fid);
    iot_phase *ph = nid >= 0 && iot_active() ? phase_of_file(fid, 0) : NULL;
    alias *a = ph ? malloc(sizeof *a) : NULL;
    if (a) {
        a->id = nid;
        a->ph = ph;
        pthread_mutex_lock(&dset_lock);
        a->next = aliases;
        aliases = a;
        ph->handles++;
        pthread_mutex_unlock(&dset_lock);
    }
    return nid;
}

/* Dataset-level knobs requested for the file that no dataset call gave a chance: not applicable, with why. */
static void unused_knobs(iot_phase *ph)
{
    const iot_setting *s[64];
    size_t n = iot_resolve(ph, NULL, IOT_LAYER_HDF5, s, 64);
    for (size_t i = 0; i < n; i++) {
        const iot_knob *k = &iot_catalogue[s[i]->knob];
        if (k->apply == IOT_APPLY_FILE_ACCESS || iot_phase_has_check(ph, "hdf5", s[i]->name))
            continue;
        const char *why = k->apply == IOT_APPLY_TRANSFER
                              ? "the phase made no H5Dwrite / H5Dread"
                              : "the phase created no dataset";
        iot_phase_check(ph, "hdf5", s[i]->name, NULL, s[i]->text, NULL, IOT_STATUS_NOT_APPLICABLE, why);
    }
}

/* Before the file's last identifier closes: 1 when this close ends the phase. */
static iot_phase *closing(hid_t fid)
{
    iot_phase *ph = iot_active() ? phase_of_file(fid, 1) : NULL;
    if (!ph)
        return NULL;
    if (--ph->handles > 0)
        return NULL;
    iot_event_call(ph, IOT_SIG_H5FCLOSE, NULL, 0);
    iot_internal++;
    unused_knobs(ph);
    iot_internal--;
    return ph;
}

static void closed(iot_phase *ph)
{
    if (!ph)
        return;
    iot_phase_end(ph);
}

IOT_EXPORT herr_t H5Fclose(hid_t fid)
{
    static herr_t (*real)(hid_t);
    IOT_REAL(real, "H5Fclose");
    iot_phase *ph = closing(fid);
    herr_t rc = real(fid);
    closed(ph);
    return rc;
}

/* ---- datasets ---- */

static void object_name(hid_t loc, const char *name, char *out, size_t outlen)
{
    if (name && name[0] == '/') {
        snprintf(out, outlen, "%s", name);
        return;
    }
    char base[512] = "";
    if (H.Iget_name(loc, base, sizeof base) < 0)
        base[0] = 0;
    size_t n = strlen(base);
    snprintf(out, outlen, "%s%s%s", base, n && base[n - 1] == '/' ? "" : "/", name ? name : "(anonymous)");
}

static void dims_text(const hsize_t *d, int rank, char *out, size_t outlen)
{
    size_t pos = 0;
    out[0] = 0;
    for (int i = 0; i < rank && pos < outlen; i++)
        pos += (size_t)snprintf(out + pos, outlen - pos, "%s%llu", i ? "," : "", (unsigned long long)d[i]);
}

/* A dataset-creation list with the requested chunking (chunk_dims, or
 * chunk_bytes through the core's rule), or -1 and why. For chunk_bytes, why
 * also says why the chunk differs from the request. */
static hid_t chunked_dcpl(hid_t dcpl, hid_t space, const iot_setting *chunk, size_t elem, hsize_t *dims_out,
                          int *rank_out, int *refused, char *why, size_t whylen)
{
    hsize_t dims[H5S_MAX_RANK], maxdims[H5S_MAX_RANK];
    uint64_t d[H5S_MAX_RANK], m[H5S_MAX_RANK], c[H5S_MAX_RANK];
    why[0] = 0;
    *refused = 0;
    int rank = H.Sget_simple_extent_dims(space, dims, maxdims);
    if (rank <= 0) {
        snprintf(why, whylen, "the dataset is scalar or null: nothing to chunk");
        return -1;
    }
    /* H5Pset_chunk would replace a virtual dataset's mappings: its data would be lost */
    if (dcpl != H5P_DEFAULT && H.Pget_layout(dcpl) == H5D_VIRTUAL) {
        snprintf(why, whylen, "a virtual dataset has no chunks of its own");
        return -1;
    }
    for (int i = 0; i < rank; i++) {
        d[i] = dims[i];
        m[i] = maxdims[i] == H5S_UNLIMITED ? IOT_DIM_UNLIMITED : maxdims[i];
    }
    if (chunk->knob == IOT_KNOB_CHUNK_BYTES) {
        if (iot_chunk_for_bytes(rank, d, m, elem, chunk->ints[0], c, why, whylen) < 0)
            return -1;
        for (int i = 0; i < rank; i++)
            dims_out[i] = c[i];
    } else {
        if (rank != chunk->nints) {
            snprintf(why, whylen, "the dataset has rank %d, the chunk dimensions rank %d", rank, chunk->nints);
            return -1;
        }
        for (int i = 0; i < rank; i++) {
            hsize_t c = (hsize_t)chunk->ints[i];
            if (maxdims[i] != H5S_UNLIMITED && c > dims[i]) /* fixed extents bound the chunk */
                c = dims[i] ? dims[i] : 1;
            dims_out[i] = c;
        }
    }
    *rank_out = rank;
    for (int i = 0; i < rank; i++)
        c[i] = dims_out[i];
    char note[200];
    if (iot_chunk_ruinous(rank, d, m, c, elem, note, sizeof note)) { /* legal, but it would stall the job */
        snprintf(why, whylen, "refused by iotuner: %s; created with the application's own layout", note);
        *refused = 1;
        return -1;
    }
    hid_t mine = dcpl == H5P_DEFAULT ? H.Pcreate(*H.cls_dataset_create) : H.Pcopy(dcpl);
    if (mine >= 0 && H.Pset_chunk(mine, rank, dims_out) < 0) {
        H.Pclose(mine);
        mine = -1;
    }
    if (mine < 0)
        snprintf(why, whylen, "HDF5 refused the chunk dimensions");
    return mine;
}

/* Reads the chunking back from the new dataset. note: why chunk_bytes' rule
 * made a chunk of another size (from chunked_dcpl). */
static void verify_chunking(iot_phase *ph, hid_t did, const char *dname, const iot_setting *chunk,
                            const hsize_t *want, int rank, size_t elem, const char *note)
{
    char eff[160] = "", asked[160], why[320] = "";
    hid_t cp = H.Dget_create_plist(did);
    hsize_t got[H5S_MAX_RANK];
    int ok = cp >= 0 && H.Pget_layout(cp) == H5D_CHUNKED && H.Pget_chunk(cp, rank, got) == rank;
    if (cp >= 0)
        H.Pclose(cp);
    dims_text(want, rank, asked, sizeof asked);
    iot_status st = IOT_STATUS_APPLIED;
    if (!ok) {
        st = IOT_STATUS_DROPPED;
        snprintf(why, sizeof why, "the dataset is not chunked after creation");
    } else if (chunk->knob == IOT_KNOB_CHUNK_BYTES) { /* effective: "bytes (dims)" */
        uint64_t g[H5S_MAX_RANK], bytes = elem;
        int same = 1;
        for (int i = 0; i < rank; i++) {
            g[i] = got[i];
            bytes *= got[i];
            same &= got[i] == want[i];
        }
        iot_chunk_text(rank, g, elem, eff, sizeof eff);
        if (!same) {
            char gd[160];
            dims_text(got, rank, gd, sizeof gd);
            st = IOT_STATUS_CHANGED;
            snprintf(why, sizeof why, "HDF5 reports chunk dimensions (%.120s), not (%.120s)", gd, asked);
        } else if ((int64_t)bytes != chunk->ints[0]) {
            st = IOT_STATUS_CHANGED;
            snprintf(why, sizeof why, "%s", note);
        }
    } else {
        dims_text(got, rank, eff, sizeof eff);
        if (strcmp(eff, chunk->text) != 0) {
            st = IOT_STATUS_CHANGED;
            snprintf(why, sizeof why, "clamped to the dataset's fixed extent (%s)", asked);
        }
    }
    iot_phase_check(ph, "hdf5", chunk->name, dname, chunk->text, ok ? eff : NULL, st, why);
}

static int warned_ruinous_chunks;

/* The call that creates a dataset, in any of its forms. */
typedef struct {
    hid_t (*v2)(hid_t, const char *, hid_t, hid_t, hid_t, hid_t, hid_t);
    hid_t (*v1)(hid_t, const char *, hid_t, hid_t, hid_t);
    hid_t (*anon)(hid_t, hid_t, hid_t, hid_t, hid_t);
    hid_t (*async)(const char *, const char *, unsigned, hid_t, const char *, hid_t, hid_t, hid_t, hid_t, hid_t, hid_t);
    const char *app_file, *app_func;
    unsigned app_line;
    hid_t es;
} dcreate_call;

static hid_t call_dcreate(const dcreate_call *c, hid_t loc, const char *name, hid_t type, hid_t space, hid_t lcpl,
                          hid_t dcpl, hid_t dapl)
{
    if (c->v2)
        return c->v2(loc, name, type, space, lcpl, dcpl, dapl);
    if (c->v1)
        return c->v1(loc, name, type, space, dcpl);
    if (c->anon)
        return c->anon(loc, type, space, dcpl, dapl);
    return c->async(c->app_file, c->app_func, c->app_line, loc, name, type, space, lcpl, dcpl, dapl, c->es);
}

static hid_t dataset_create(const dcreate_call *c, hid_t loc, const char *name, hid_t type, hid_t space, hid_t lcpl,
                            hid_t dcpl, hid_t dapl)
{
    if (!h5_resolve())
        return call_dcreate(c, loc, name, type, space, lcpl, dcpl, dapl);
    iot_internal++;
    quiet_t q = quiet_begin();
    iot_phase *ph = phase_of_object(loc);
    char dname[1024];
    object_name(loc, name, dname, sizeof dname);
    const iot_setting *chunk = NULL; /* chunk_dims, or else chunk_bytes */
    hid_t mine = -1;
    hsize_t want[H5S_MAX_RANK];
    int rank = 0;
    size_t elem = 0;
    char why[320] = "";
    if (ph && iot_wanted(IOT_EVENT_CALL)) {
        hsize_t dims[H5S_MAX_RANK];
        int64_t sig[3] = {(int64_t)iot_identity(dname, NULL, 0), (int64_t)H.Tget_size(type),
                          H.Sget_simple_extent_dims(space, dims, NULL)};
        iot_event_call(ph, IOT_SIG_H5DCREATE, sig, 3);
    }
    if (ph) {
        const iot_setting *s[64];
        size_t n = iot_resolve(ph, dname, IOT_LAYER_HDF5, s, 64);
        const iot_setting *dims = iot_setting_of(s, n, IOT_KNOB_CHUNK_DIMS);
        const iot_setting *bytes = iot_setting_of(s, n, IOT_KNOB_CHUNK_BYTES);
        if (dims && bytes)
            iot_phase_check(ph, "hdf5", bytes->name, dname, bytes->text, NULL, IOT_STATUS_NOT_APPLICABLE,
                            "chunk_dims given: it wins for this dataset");
        chunk = dims ? dims : bytes;
        if (chunk) {
            elem = H.Tget_size(type);
            int refused;
            mine = chunked_dcpl(dcpl, space, chunk, elem, want, &rank, &refused, why, sizeof why);
            if (mine < 0)
                iot_phase_check(ph, "hdf5", chunk->name, dname, chunk->text, NULL,
                                refused ? IOT_STATUS_FAILED : IOT_STATUS_NOT_APPLICABLE, why);
            if (refused)
                iot_warn_once(&warned_ruinous_chunks, "hdf5.%s %s not applied to dataset %.200s: %s (and so "
                              "for any such dataset; the report lists them)", chunk->name, chunk->text, dname,
                              why + strlen("refused by iotuner: "));
        }
    }
    quiet_end(q);
    iot_internal--;

    quiet_t attempt = {NULL, NULL};
    if (mine >= 0)
        attempt = quiet_begin();
    hid_t did = call_dcreate(c, loc, name, type, space, lcpl, mine >= 0 ? mine : dcpl, dapl);
    if (mine >= 0)
        quiet_end(attempt);

    iot_internal++;
    q = quiet_begin();
    if (did < 0 && mine >= 0) {
        quiet_end(q); /* the application's own call keeps its error reporting */
        iot_internal--;
        did = call_dcreate(c, loc, name, type, space, lcpl, dcpl, dapl); /* never lose the dataset over our chunking */
        iot_internal++;
        q = quiet_begin();
        iot_phase_check(ph, "hdf5", chunk->name, dname, chunk->text, NULL, IOT_STATUS_FAILED,
                        "dataset creation failed with this chunking; created with the application's own layout");
    } else if (did >= 0 && mine >= 0) {
        verify_chunking(ph, did, dname, chunk, want, rank, elem, why);
    }
    if (mine >= 0)
        H.Pclose(mine);
    if (did >= 0 && ph)
        dset_put(did, ph, requested_xfer(ph, dname));
    quiet_end(q);
    iot_internal--;
    return did;
}

IOT_EXPORT hid_t H5Dcreate2(hid_t loc, const char *name, hid_t type, hid_t space, hid_t lcpl, hid_t dcpl, hid_t dapl)
{
    static hid_t (*real)(hid_t, const char *, hid_t, hid_t, hid_t, hid_t, hid_t);
    IOT_REAL(real, "H5Dcreate2");
    if (!iot_active() || !name)
        return real(loc, name, type, space, lcpl, dcpl, dapl);
    dcreate_call c = {.v2 = real};
    return dataset_create(&c, loc, name, type, space, lcpl, dcpl, dapl);
}

IOT_EXPORT hid_t H5Dcreate1(hid_t loc, const char *name, hid_t type, hid_t space, hid_t dcpl)
{
    static hid_t (*real)(hid_t, const char *, hid_t, hid_t, hid_t);
    IOT_REAL(real, "H5Dcreate1");
    if (!iot_active() || !name)
        return real(loc, name, type, space, dcpl);
    dcreate_call c = {.v1 = real};
    return dataset_create(&c, loc, name, type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
}

IOT_EXPORT hid_t H5Dcreate_anon(hid_t loc, hid_t type, hid_t space, hid_t dcpl, hid_t dapl)
{
    static hid_t (*real)(hid_t, hid_t, hid_t, hid_t, hid_t);
    IOT_REAL(real, "H5Dcreate_anon");
    if (!iot_active())
        return real(loc, type, space, dcpl, dapl);
    dcreate_call c = {.anon = real};
    return dataset_create(&c, loc, NULL, type, space, H5P_DEFAULT, dcpl, dapl);
}

/* The modules hear of the open when it is entered; afterwards the dataset joins its file's phase. */
static void dataset_opening(hid_t loc, const char *name)
{
    if (!iot_wanted(IOT_EVENT_CALL) || !iot_active() || !name || !h5_resolve())
        return;
    iot_internal++;
    char dname[1024];
    object_name(loc, name, dname, sizeof dname);
    int64_t sig[1] = {(int64_t)iot_identity(dname, NULL, 0)};
    iot_event_call(phase_of_object(loc), IOT_SIG_H5DOPEN, sig, 1);
    iot_internal--;
}

static hid_t dataset_opened(hid_t did, hid_t loc, const char *name)
{
    if (did < 0 || !iot_active() || !name || !h5_resolve())
        return did;
    iot_internal++;
    iot_phase *ph = phase_of_object(did);
    if (ph) {
        char dname[1024];
        object_name(loc, name, dname, sizeof dname);
        dset_put(did, ph, requested_xfer(ph, dname));
    }
    iot_internal--;
    return did;
}

IOT_EXPORT hid_t H5Dopen2(hid_t loc, const char *name, hid_t dapl)
{
    static hid_t (*real)(hid_t, const char *, hid_t);
    IOT_REAL(real, "H5Dopen2");
    dataset_opening(loc, name);
    return dataset_opened(real(loc, name, dapl), loc, name);
}

/* HDF5 1.6's name, still used (compiled with H5_USE_16_API, or called by name) */
IOT_EXPORT hid_t H5Dopen1(hid_t loc, const char *name)
{
    static hid_t (*real)(hid_t, const char *);
    IOT_REAL(real, "H5Dopen1");
    dataset_opening(loc, name);
    return dataset_opened(real(loc, name), loc, name);
}

static void dataset_closing(hid_t did)
{
    if (iot_wanted(IOT_EVENT_CALL) && iot_active()) {
        iot_phase *ph = NULL;
        int xfer;
        if (dset_get(did, &ph, &xfer))
            iot_event_call(ph, IOT_SIG_H5DCLOSE, NULL, 0);
    }
    dset_drop(did);
}

IOT_EXPORT herr_t H5Dclose(hid_t did)
{
    static herr_t (*real)(hid_t);
    IOT_REAL(real, "H5Dclose");
    dataset_closing(did);
    return real(did);
}

/* ---- transfers ---- */

static void cause_text(uint32_t cause, char *out, size_t outlen)
{
    static const struct {
        uint32_t bit;
        const char *text;
    } causes[] = {
        {H5D_MPIO_SET_INDEPENDENT, "independent I/O was requested"},
        {H5D_MPIO_DATATYPE_CONVERSION, "a datatype conversion is needed"},
        {H5D_MPIO_DATA_TRANSFORMS, "a data transform is set"},
        {H5D_MPIO_MPI_OPT_TYPES_ENV_VAR_DISABLED, "HDF5_MPI_OPT_TYPES is off"},
        {H5D_MPIO_NOT_SIMPLE_OR_SCALAR_DATASPACES, "a dataspace is neither simple nor scalar"},
        {H5D_MPIO_NOT_CONTIGUOUS_OR_CHUNKED_DATASET, "the dataset is neither contiguous nor chunked"},
        {H5D_MPIO_PARALLEL_FILTERED_WRITES_DISABLED, "parallel writes to filtered datasets are disabled"},
    };
    size_t pos = 0;
    out[0] = 0;
    for (size_t i = 0; i < sizeof causes / sizeof causes[0]; i++)
        if ((cause & causes[i].bit) && pos < outlen)
            pos += (size_t)snprintf(out + pos, outlen - pos, "%s%s", pos ? "; " : "", causes[i].text);
    if (!out[0])
        snprintf(out, outlen, "HDF5 gave no cause");
}

static const char *mode_name(H5FD_mpio_xfer_t m)
{
    return m == H5FD_MPIO_COLLECTIVE ? "collective" : "independent";
}

/* Transfer list carrying the requested mode, or the application's own. */
static hid_t transfer_plist(hid_t dxpl, int xfer, int *temporary)
{
    H5FD_mpio_xfer_t mode = (H5FD_mpio_xfer_t)(xfer - 1);
    *temporary = 0;
    if (!H.Pset_dxpl_mpio)
        return dxpl;
    if (dxpl == H5P_DEFAULT) {
        int slot = mode == H5FD_MPIO_COLLECTIVE;
        if (xfer_plists[slot] < 0) {
            hid_t p = H.Pcreate(*H.cls_dataset_xfer);
            if (p >= 0 && H.Pset_dxpl_mpio(p, mode) < 0) {
                H.Pclose(p);
                p = -1;
            }
            xfer_plists[slot] = p;
        }
        return xfer_plists[slot] >= 0 ? xfer_plists[slot] : dxpl;
    }
    H5FD_mpio_xfer_t cur;
    if (H.Pget_dxpl_mpio && H.Pget_dxpl_mpio(dxpl, &cur) >= 0 && cur == mode)
        return dxpl;
    hid_t p = H.Pcopy(dxpl); /* the application's list may carry other properties */
    if (p >= 0 && H.Pset_dxpl_mpio(p, mode) >= 0) {
        *temporary = 1;
        return p;
    }
    if (p >= 0)
        H.Pclose(p);
    return dxpl;
}

/* After the phase's first H5Dwrite / H5Dread: what HDF5 did with the requested mode, and the
 * application's own mode (from its transfer list), once per phase. */
static void verify_transfer(iot_phase *ph, hid_t app_dxpl, hid_t used, int xfer)
{
    ph->xfer_checked = 1;
    H5FD_mpio_xfer_t own = H5FD_MPIO_INDEPENDENT;
    if (app_dxpl != H5P_DEFAULT && H.Pget_dxpl_mpio)
        H.Pget_dxpl_mpio(app_dxpl, &own);
    if (is_mpio(ph))
        iot_phase_app_setting(ph, IOT_LAYER_HDF5, iot_catalogue[IOT_KNOB_TRANSFER_MODE].name, mode_name(own));
    if (!xfer)
        return;
    const char *want = mode_name((H5FD_mpio_xfer_t)(xfer - 1));
    H5D_mpio_actual_io_mode_t m;
    if (!H.Pget_mpio_actual_io_mode || H.Pget_mpio_actual_io_mode(used, &m) < 0) {
        iot_phase_check(ph, "hdf5", "transfer_mode", NULL, want, NULL, IOT_STATUS_APPLIED,
                        "set; not read back: this HDF5 cannot report the mode it used (H5Pget_mpio_actual_io_mode)");
        return;
    }
    const char *eff = m == H5D_MPIO_NO_COLLECTIVE ? "independent" : "collective";
    char why[300] = "";
    iot_status st = IOT_STATUS_APPLIED;
    if (strcmp(want, eff) != 0) {
        uint32_t local = 0, global = 0;
        st = IOT_STATUS_CHANGED;
        if (H.Pget_mpio_no_collective_cause && H.Pget_mpio_no_collective_cause(used, &local, &global) >= 0) {
            char c[200];
            cause_text(global | local, c, sizeof c);
            snprintf(why, sizeof why, "HDF5 broke collective I/O: %s", c);
        } else {
            snprintf(why, sizeof why, "HDF5 performed %s I/O", eff);
        }
    }
    iot_phase_check(ph, "hdf5", "transfer_mode", NULL, want, eff, st, why);
}

/* Dataspace generations: H5Sget_select_npoints costs ~370 instructions (an
 * ID lookup), as much as a small cached H5Dwrite itself, so the point count
 * of a space is remembered until the space changes. Every call that changes
 * a selection or an extent bumps the space's generation (a hashed table:
 * collisions only cost a recount). Loops usually keep one memory space and
 * move the file selection: their memory space's count is reused. */
#define SPACE_GENS 1024
static _Atomic uint32_t space_gen[SPACE_GENS];

static inline _Atomic uint32_t *gen_of(hid_t space)
{
    return &space_gen[((uint64_t)space * 0x9E3779B97F4A7C15ull) >> 54];
}

static inline void space_changed(hid_t space)
{
    atomic_fetch_add_explicit(gen_of(space), 1, memory_order_relaxed);
}

#define SPACE_MUTATOR(name, params, args, space)                                                              \
    IOT_EXPORT herr_t name params                                                                            \
    {                                                                                                        \
        static herr_t(*real) params;                                                                         \
        IOT_REAL(real, #name);                                                                               \
        herr_t rc = real args;                                                                               \
        space_changed(space);                                                                                \
        return rc;                                                                                           \
    }

SPACE_MUTATOR(H5Sselect_hyperslab,
              (hid_t s, H5S_seloper_t op, const hsize_t start[], const hsize_t stride[], const hsize_t count[],
               const hsize_t block[]),
              (s, op, start, stride, count, block), s)
SPACE_MUTATOR(H5Sselect_elements, (hid_t s, H5S_seloper_t op, size_t n, const hsize_t *coord), (s, op, n, coord), s)
SPACE_MUTATOR(H5Sselect_all, (hid_t s), (s), s)
SPACE_MUTATOR(H5Sselect_none, (hid_t s), (s), s)
SPACE_MUTATOR(H5Sselect_copy, (hid_t dst, hid_t src), (dst, src), dst)
SPACE_MUTATOR(H5Sset_extent_simple, (hid_t s, int rank, const hsize_t dims[], const hsize_t max[]),
              (s, rank, dims, max), s)
SPACE_MUTATOR(H5Sset_extent_none, (hid_t s), (s), s)
SPACE_MUTATOR(H5Sextent_copy, (hid_t dst, hid_t src), (dst, src), dst)
SPACE_MUTATOR(H5Smodify_select, (hid_t s, H5S_seloper_t op, hid_t other), (s, op, other), s)
SPACE_MUTATOR(H5Sclose, (hid_t s), (s), s)

/* Bytes the application moves in one H5Dwrite / H5Dread: the selected
 * elements times the memory type's size. */
static IOT_TLS hid_t cached_type = -1;
static IOT_TLS size_t cached_type_size;
static IOT_TLS hid_t cached_space = -1;
static IOT_TLS uint32_t cached_space_gen;
static IOT_TLS hssize_t cached_npoints;

static hssize_t selected_points(hid_t space)
{
    uint32_t gen = atomic_load_explicit(gen_of(space), memory_order_relaxed);
    if (space == cached_space && gen == cached_space_gen)
        return cached_npoints;
    hssize_t n = H.Sget_select_npoints(space);
    cached_space = space;
    cached_space_gen = gen;
    cached_npoints = n;
    return n;
}

static uint64_t transfer_bytes(hid_t did, hid_t mem_type, hid_t mem_space, hid_t file_space)
{
    if (mem_type != cached_type) {
        cached_type_size = H.Tget_size(mem_type);
        cached_type = mem_type;
    }
    hid_t space = mem_space != H5S_ALL ? mem_space : file_space;
    hssize_t n;
    if (space != H5S_ALL) {
        n = selected_points(space);
    } else { /* H5S_ALL twice: the whole dataset */
        hid_t whole = H.Dget_space(did);
        n = whole >= 0 ? H.Sget_select_npoints(whole) : 0;
        if (whole >= 0)
            H.Sclose(whole);
    }
    return n > 0 ? (uint64_t)n * cached_type_size : 0;
}

/* One H5Dwrite / H5Dread (or count of them in one multi-dataset call): its
 * phase, the transfer list to pass, and its timing. */
typedef struct {
    iot_phase *ph;
    int xfer, temporary, is_write;
    int first; /* this thread's first call on the dataset: the phase's transfer mode may still be unread */
    int counted; /* its bytes were counted when entered, for the modules */
    hid_t app, use;
    uint64_t bytes;
    unsigned weight;
    uint64_t t0;
} transfer;

static inline __attribute__((always_inline)) int transfer_begin(transfer *t, int is_write, size_t count,
                                                                const hid_t *dids, const hid_t *mts,
                                                                const hid_t *mss, const hid_t *fss, hid_t dxpl)
{
    t->use = t->app = dxpl;
    t->is_write = is_write;
    t->temporary = 0;
    t->bytes = 0;
    int found = dset_get(dids[0], &t->ph, &t->xfer);
    if (!found)
        return 0;
    t->first = found == 2;
    if (t->xfer) {
        int temporary;
        iot_internal++;
        t->use = transfer_plist(dxpl, t->xfer, &temporary);
        iot_internal--;
        t->temporary = temporary;
    }
    t->counted = iot_wanted(IOT_EVENT_CALL);
    if (t->counted) { /* the modules hear of the call when entered, before the MPI-IO calls it makes */
        for (size_t i = 0; i < count; i++) {
            uint64_t b = transfer_bytes(dids[i], mts[i], mss[i], fss[i]);
            t->bytes += b;
            int64_t sig[1] = {(int64_t)b};
            iot_event_call(t->ph, is_write ? IOT_SIG_H5DWRITE : IOT_SIG_H5DREAD, sig, 1);
        }
    }
    t->weight = iot_level_begin(t->ph, IOT_LEVEL_HDF5, 0, is_write);
    if (count > 1)
        atomic_fetch_add_explicit(is_write ? &t->ph->level[IOT_LEVEL_HDF5].writes
                                           : &t->ph->level[IOT_LEVEL_HDF5].reads,
                                  count - 1, memory_order_relaxed);
    t->t0 = t->weight ? iot_ticks() : 0;
    return 1;
}

static inline __attribute__((always_inline)) void transfer_end(transfer *t, herr_t rc, size_t count,
                                                               const hid_t *dids, const hid_t *mts,
                                                               const hid_t *mss, const hid_t *fss)
{
    uint64_t dt = t->weight ? iot_ticks() - t->t0 : 0;
    if (rc >= 0 && !t->counted) /* HDF5's own queries: nothing of them is intercepted */
        for (size_t i = 0; i < count; i++)
            t->bytes += transfer_bytes(dids[i], mts[i], mss[i], fss[i]);
    iot_level_end(t->ph, IOT_LEVEL_HDF5, rc >= 0 ? t->bytes : 0, dt, t->weight, t->is_write);
    if (rc >= 0 && (t->first || t->xfer) && !t->ph->xfer_checked) { /* once per phase; the rest skip the load */
        iot_internal++;
        verify_transfer(t->ph, t->app, t->use, t->xfer);
        iot_internal--;
    }
    if (t->temporary)
        H.Pclose(t->use);
}

IOT_EXPORT herr_t H5Dwrite(hid_t did, hid_t mt, hid_t ms, hid_t fs, hid_t dxpl, const void *buf)
{
    static herr_t (*real)(hid_t, hid_t, hid_t, hid_t, hid_t, const void *);
    IOT_REAL(real, "H5Dwrite");
    transfer t;
    if (!iot_active() || !transfer_begin(&t, 1, 1, &did, &mt, &ms, &fs, dxpl))
        return real(did, mt, ms, fs, dxpl, buf);
    herr_t rc = real(did, mt, ms, fs, t.use, buf);
    transfer_end(&t, rc, 1, &did, &mt, &ms, &fs);
    return rc;
}

IOT_EXPORT herr_t H5Dread(hid_t did, hid_t mt, hid_t ms, hid_t fs, hid_t dxpl, void *buf)
{
    static herr_t (*real)(hid_t, hid_t, hid_t, hid_t, hid_t, void *);
    IOT_REAL(real, "H5Dread");
    transfer t;
    if (!iot_active() || !transfer_begin(&t, 0, 1, &did, &mt, &ms, &fs, dxpl))
        return real(did, mt, ms, fs, dxpl, buf);
    herr_t rc = real(did, mt, ms, fs, t.use, buf);
    transfer_end(&t, rc, 1, &did, &mt, &ms, &fs);
    return rc;
}

/* Direct chunk I/O bypasses HDF5's pipeline and its transfer mode: bytes and time only. */
static iot_phase *chunk_phase(hid_t did)
{
    iot_phase *ph = NULL;
    int xfer;
    return iot_active() && dset_get(did, &ph, &xfer) ? ph : NULL;
}

IOT_EXPORT herr_t H5Dwrite_chunk(hid_t did, hid_t dxpl, uint32_t filters, const hsize_t *offset, size_t size,
                                 const void *buf)
{
    static herr_t (*real)(hid_t, hid_t, uint32_t, const hsize_t *, size_t, const void *);
    IOT_REAL(real, "H5Dwrite_chunk");
    iot_phase *ph = chunk_phase(did);
    if (!ph)
        return real(did, dxpl, filters, offset, size, buf);
    int64_t sig[1] = {(int64_t)size};
    iot_event_call(ph, IOT_SIG_H5DWRITE, sig, 1);
    unsigned w = iot_level_begin(ph, IOT_LEVEL_HDF5, size, 1);
    uint64_t t0 = w ? iot_ticks() : 0;
    herr_t rc = real(did, dxpl, filters, offset, size, buf);
    iot_level_end(ph, IOT_LEVEL_HDF5, rc >= 0 ? size : 0, w ? iot_ticks() - t0 : 0, w, 1);
    return rc;
}

IOT_EXPORT herr_t H5Dread_chunk(hid_t did, hid_t dxpl, const hsize_t *offset, uint32_t *filters, void *buf)
{
    static herr_t (*real)(hid_t, hid_t, const hsize_t *, uint32_t *, void *);
    IOT_REAL(real, "H5Dread_chunk");
    iot_phase *ph = chunk_phase(did);
    if (!ph)
        return real(did, dxpl, offset, filters, buf);
    unsigned w = iot_level_begin(ph, IOT_LEVEL_HDF5, IOT_SMALL_CALL, 0);
    uint64_t t0 = w ? iot_ticks() : 0;
    herr_t rc = real(did, dxpl, offset, filters, buf);
    uint64_t dt = w ? iot_ticks() - t0 : 0;
    hsize_t size = 0;
    iot_internal++;
    if (rc >= 0 && H.Dget_chunk_storage_size && H.Dget_chunk_storage_size(did, offset, &size) < 0)
        size = 0;
    iot_internal--;
    int64_t sig[1] = {(int64_t)size};
    iot_event_call(ph, IOT_SIG_H5DREAD, sig, 1);
    iot_level_end(ph, IOT_LEVEL_HDF5, size, dt, w, 0);
    return rc;
}

/* ---- HDF5 1.12+ / 1.14: resolved when first called; absent from this HDF5, they fail as a missing call
 * would (an error return), never abort. ---- */

#define LATER(var, type, name)                                                                                \
    static __typeof__(type) var;                                                                             \
    IOT_REAL(var, name);                                                                                     \
    if (!var) {                                                                                              \
        static int warned;                                                                                   \
        iot_warn_once(&warned, "%s was called, but this HDF5 (%s) does not have it", name,                   \
                      iot_g.library[IOT_KIND_HDF5][0] ? iot_g.library[IOT_KIND_HDF5] : "unknown");                               \
        return -1;                                                                                           \
    }

IOT_EXPORT hid_t H5Fcreate_async(const char *app_file, const char *app_func, unsigned app_line, const char *name,
                                 unsigned flags, hid_t fcpl, hid_t fapl, hid_t es)
{
    LATER(real, hid_t (*)(const char *, const char *, unsigned, const char *, unsigned, hid_t, hid_t, hid_t),
          "H5Fcreate_async")
    if (!iot_active())
        return real(app_file, app_func, app_line, name, flags, fcpl, fapl, es);
    file_call c = {.create_async = real, .app_file = app_file, .app_func = app_func, .app_line = app_line, .es = es};
    return file_phase(&c, name, flags, fcpl, fapl);
}

IOT_EXPORT hid_t H5Fopen_async(const char *app_file, const char *app_func, unsigned app_line, const char *name,
                               unsigned flags, hid_t fapl, hid_t es)
{
    LATER(real, hid_t (*)(const char *, const char *, unsigned, const char *, unsigned, hid_t, hid_t),
          "H5Fopen_async")
    if (!iot_active())
        return real(app_file, app_func, app_line, name, flags, fapl, es);
    file_call c = {.open_async = real, .app_file = app_file, .app_func = app_func, .app_line = app_line, .es = es};
    return file_phase(&c, name, flags, H5P_DEFAULT, fapl);
}

IOT_EXPORT herr_t H5Fclose_async(const char *app_file, const char *app_func, unsigned app_line, hid_t fid, hid_t es)
{
    LATER(real, herr_t (*)(const char *, const char *, unsigned, hid_t, hid_t), "H5Fclose_async")
    iot_phase *ph = closing(fid);
    herr_t rc = real(app_file, app_func, app_line, fid, es);
    closed(ph);
    return rc;
}

IOT_EXPORT hid_t H5Dcreate_async(const char *app_file, const char *app_func, unsigned app_line, hid_t loc,
                                 const char *name, hid_t type, hid_t space, hid_t lcpl, hid_t dcpl, hid_t dapl, hid_t es)
{
    LATER(real,
          hid_t (*)(const char *, const char *, unsigned, hid_t, const char *, hid_t, hid_t, hid_t, hid_t, hid_t, hid_t),
          "H5Dcreate_async")
    if (!iot_active() || !name)
        return real(app_file, app_func, app_line, loc, name, type, space, lcpl, dcpl, dapl, es);
    dcreate_call c = {.async = real, .app_file = app_file, .app_func = app_func, .app_line = app_line, .es = es};
    return dataset_create(&c, loc, name, type, space, lcpl, dcpl, dapl);
}

IOT_EXPORT hid_t H5Dopen_async(const char *app_file, const char *app_func, unsigned app_line, hid_t loc,
                               const char *name, hid_t dapl, hid_t es)
{
    LATER(real, hid_t (*)(const char *, const char *, unsigned, hid_t, const char *, hid_t, hid_t), "H5Dopen_async")
    dataset_opening(loc, name);
    return dataset_opened(real(app_file, app_func, app_line, loc, name, dapl, es), loc, name);
}

IOT_EXPORT herr_t H5Dclose_async(const char *app_file, const char *app_func, unsigned app_line, hid_t did, hid_t es)
{
    LATER(real, herr_t (*)(const char *, const char *, unsigned, hid_t, hid_t), "H5Dclose_async")
    dataset_closing(did);
    return real(app_file, app_func, app_line, did, es);
}

IOT_EXPORT herr_t H5Dwrite_async(const char *app_file, const char *app_func, unsigned app_line, hid_t did, hid_t mt,
                                 hid_t ms, hid_t fs, hid_t dxpl, const void *buf, hid_t es)
{
    LATER(real, herr_t (*)(const char *, const char *, unsigned, hid_t, hid_t, hid_t, hid_t, hid_t, const void *, hid_t),
          "H5Dwrite_async")
    transfer t;
    if (!iot_active() || !transfer_begin(&t, 1, 1, &did, &mt, &ms, &fs, dxpl))
        return real(app_file, app_func, app_line, did, mt, ms, fs, dxpl, buf, es);
    herr_t rc = real(app_file, app_func, app_line, did, mt, ms, fs, t.use, buf, es);
    transfer_end(&t, rc, 1, &did, &mt, &ms, &fs);
    return rc;
}

IOT_EXPORT herr_t H5Dread_async(const char *app_file, const char *app_func, unsigned app_line, hid_t did, hid_t mt,
                                hid_t ms, hid_t fs, hid_t dxpl, void *buf, hid_t es)
{
    LATER(real, herr_t (*)(const char *, const char *, unsigned, hid_t, hid_t, hid_t, hid_t, hid_t, void *, hid_t),
          "H5Dread_async")
    transfer t;
    if (!iot_active() || !transfer_begin(&t, 0, 1, &did, &mt, &ms, &fs, dxpl))
        return real(app_file, app_func, app_line, did, mt, ms, fs, dxpl, buf, es);
    herr_t rc = real(app_file, app_func, app_line, did, mt, ms, fs, t.use, buf, es);
    transfer_end(&t, rc, 1, &did, &mt, &ms, &fs);
    return rc;
}

/* The datasets of one multi-dataset call are in one file: the first one's phase and transfer mode stand for
 * all of them. */
IOT_EXPORT herr_t H5Dwrite_multi(size_t count, hid_t dids[], hid_t mts[], hid_t mss[], hid_t fss[], hid_t dxpl,
                                 const void *bufs[])
{
    LATER(real, herr_t (*)(size_t, hid_t *, hid_t *, hid_t *, hid_t *, hid_t, const void **), "H5Dwrite_multi")
    transfer t;
    if (!count || !iot_active() || !transfer_begin(&t, 1, count, dids, mts, mss, fss, dxpl))
        return real(count, dids, mts, mss, fss, dxpl, bufs);
    herr_t rc = real(count, dids, mts, mss, fss, t.use, bufs);
    transfer_end(&t, rc, count, dids, mts, mss, fss);
    return rc;
}

IOT_EXPORT herr_t H5Dread_multi(size_t count, hid_t dids[], hid_t mts[], hid_t mss[], hid_t fss[], hid_t dxpl,
                                void *bufs[])
{
    LATER(real, herr_t (*)(size_t, hid_t *, hid_t *, hid_t *, hid_t *, hid_t, void **), "H5Dread_multi")
    transfer t;
    if (!count || !iot_active() || !transfer_begin(&t, 0, count, dids, mts, mss, fss, dxpl))
        return real(count, dids, mts, mss, fss, dxpl, bufs);
    herr_t rc = real(count, dids, mts, mss, fss, t.use, bufs);
    transfer_end(&t, rc, count, dids, mts, mss, fss);
    return rc;
}

IOT_EXPORT herr_t H5Dwrite_multi_async(const char *app_file, const char *app_func, unsigned app_line, size_t count,
                                       hid_t dids[], hid_t mts[], hid_t mss[], hid_t fss[], hid_t dxpl,
                                       const void *bufs[], hid_t es)
{
    LATER(real,
          herr_t (*)(const char *, const char *, unsigned, size_t, hid_t *, hid_t *, hid_t *, hid_t *, hid_t,
                     const void **, hid_t),
          "H5Dwrite_multi_async")
    transfer t;
    if (!count || !iot_active() || !transfer_begin(&t, 1, count, dids, mts, mss, fss, dxpl))
        return real(app_file, app_func, app_line, count, dids, mts, mss, fss, dxpl, bufs, es);
    herr_t rc = real(app_file, app_func, app_line, count, dids, mts, mss, fss, t.use, bufs, es);
    transfer_end(&t, rc, count, dids, mts, mss, fss);
    return rc;
}

IOT_EXPORT herr_t H5Dread_multi_async(const char *app_file, const char *app_func, unsigned app_line, size_t count,
                                      hid_t dids[], hid_t mts[], hid_t mss[], hid_t fss[], hid_t dxpl, void *bufs[],
                                      hid_t es)
{
    LATER(real,
          herr_t (*)(const char *, const char *, unsigned, size_t, hid_t *, hid_t *, hid_t *, hid_t *, hid_t, void **,
                     hid_t),
          "H5Dread_multi_async")
    transfer t;
    if (!count || !iot_active() || !transfer_begin(&t, 0, count, dids, mts, mss, fss, dxpl))
        return real(app_file, app_func, app_line, count, dids, mts, mss, fss, dxpl, bufs, es);
    herr_t rc = real(app_file, app_func, app_line, count, dids, mts, mss, fss, t.use, bufs, es);
    transfer_end(&t, rc, count, dids, mts, mss, fss);
    return rc;
}

/* ---- the module ---- */

static void hdf5_record(const iot_phase *ph, iot_record *r)
{
    iot_level_record(ph, IOT_LEVEL_HDF5, &r->level[IOT_LEVEL_HDF5]);
}

static const iot_module hdf5_module = {.name = "hdf5", .record = hdf5_record};
IOT_MODULE(hdf5_module)
