/* The HDF5 appliers (hdf5_apply.h): each knob set on HDF5's property lists
 * and read back after use: file access at a file's opening (one applier per
 * knob: a table indexed by the knob's id, as IOR's aiori), chunking at a
 * dataset's creation, the transfer mode at a transfer. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hdf5_apply.h"
#include "module.h"
#include "phases.h"

iot_h5_calls iot_h5; /* the HDF5 entry points we call (hdf5_apply.h) */

static pthread_once_t h5_once = PTHREAD_ONCE_INIT;
static int h5_ok;

static void h5_resolve_once(void)
{
    h5_ok = 1;
    /* the serial-only and parallel-only entries may be missing; the core set may not */
#define H5_RESOLVE(ret, field, params, symbol, required)                                                      \
    iot_h5.field = (ret(*) params)iot_any_symbol(symbol);                                                         \
    if ((required) && !iot_h5.field)                                                                              \
        h5_ok = 0;
    H5_FUNCTIONS(H5_RESOLVE)
#undef H5_RESOLVE
    iot_h5.cls_file_access = iot_any_symbol("H5P_CLS_FILE_ACCESS_ID_g");
    iot_h5.cls_dataset_create = iot_any_symbol("H5P_CLS_DATASET_CREATE_ID_g");
    iot_h5.cls_dataset_xfer = iot_any_symbol("H5P_CLS_DATASET_XFER_ID_g");
    h5_ok = h5_ok && iot_h5.cls_file_access && iot_h5.cls_dataset_create && iot_h5.cls_dataset_xfer;
    if (h5_ok) {
        iot_h5.open();
        unsigned maj = 0, min = 0, rel = 0;
        char version[64];
        if (iot_h5.get_libversion && iot_h5.get_libversion(&maj, &min, &rel) >= 0) {
            snprintf(version, sizeof version, "%u.%u.%u%s", maj, min, rel, iot_h5.FD_mpio_init ? " (parallel)" : "");
            iot_state_library(IOT_KIND_HDF5, version);
        }
    }
}

int iot_h5_resolve(void)
{
    pthread_once(&h5_once, h5_resolve_once);
    return h5_ok;
}

/* ---- file-access appliers: one per knob (IOR's aiori style: a table, indexed by the knob's id) ---- */

typedef struct {
    int (*apply)(hid_t fapl, const iot_setting *s);
    int (*readback)(hid_t fapl, char *out, size_t outlen);
} fapl_applier;

static int set_alignment(hid_t p, const iot_setting *s)
{
    return iot_h5.Pset_alignment ? iot_h5.Pset_alignment(p, (hsize_t)s->ints[0], (hsize_t)s->ints[1]) : -1;
}
static int get_alignment(hid_t p, char *o, size_t n)
{
    hsize_t t, a;
    if (!iot_h5.Pget_alignment || iot_h5.Pget_alignment(p, &t, &a) < 0)
        return -1;
    snprintf(o, n, "%llu,%llu", (unsigned long long)t, (unsigned long long)a);
    return 0;
}
static int set_meta_block(hid_t p, const iot_setting *s)
{
    return iot_h5.Pset_meta_block_size ? iot_h5.Pset_meta_block_size(p, (hsize_t)s->ints[0]) : -1;
}
static int get_meta_block(hid_t p, char *o, size_t n)
{
    hsize_t v;
    if (!iot_h5.Pget_meta_block_size || iot_h5.Pget_meta_block_size(p, &v) < 0)
        return -1;
    snprintf(o, n, "%llu", (unsigned long long)v);
    return 0;
}
static int set_sieve(hid_t p, const iot_setting *s)
{
    return iot_h5.Pset_sieve_buf_size ? iot_h5.Pset_sieve_buf_size(p, (size_t)s->ints[0]) : -1;
}
static int get_sieve(hid_t p, char *o, size_t n)
{
    size_t v;
    if (!iot_h5.Pget_sieve_buf_size || iot_h5.Pget_sieve_buf_size(p, &v) < 0)
        return -1;
    snprintf(o, n, "%zu", v);
    return 0;
}
static int set_small_data(hid_t p, const iot_setting *s)
{
    return iot_h5.Pset_small_data_block_size ? iot_h5.Pset_small_data_block_size(p, (hsize_t)s->ints[0]) : -1;
}
static int get_small_data(hid_t p, char *o, size_t n)
{
    hsize_t v;
    if (!iot_h5.Pget_small_data_block_size || iot_h5.Pget_small_data_block_size(p, &v) < 0)
        return -1;
    snprintf(o, n, "%llu", (unsigned long long)v);
    return 0;
}
static int set_mdc_initial(hid_t p, const iot_setting *s)
{
    H5AC_cache_config_t c;
    memset(&c, 0, sizeof c);
    c.version = H5AC__CURR_CACHE_CONFIG_VERSION;
    if (!iot_h5.Pget_mdc_config || !iot_h5.Pset_mdc_config || iot_h5.Pget_mdc_config(p, &c) < 0)
        return -1;
    size_t v = (size_t)s->ints[0];
    c.set_initial_size = 1;
    c.initial_size = v;
    if (c.max_size < v) /* keep min <= initial <= max, as HDF5 demands */
        c.max_size = v;
    if (c.min_size > v)
        c.min_size = v;
    return iot_h5.Pset_mdc_config(p, &c);
}
static int get_mdc_initial(hid_t p, char *o, size_t n)
{
    H5AC_cache_config_t c;
    memset(&c, 0, sizeof c);
    c.version = H5AC__CURR_CACHE_CONFIG_VERSION;
    if (!iot_h5.Pget_mdc_config || iot_h5.Pget_mdc_config(p, &c) < 0)
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
    if (!iot_h5.Pget_cache || !iot_h5.Pset_cache || iot_h5.Pget_cache(p, &mdc, &slots, &bytes, &w0) < 0)
        return -1;
    if (which == CC_NSLOTS)
        slots = (size_t)s->ints[0];
    else if (which == CC_NBYTES)
        bytes = (size_t)s->ints[0];
    else
        w0 = s->real;
    return iot_h5.Pset_cache(p, mdc, slots, bytes, w0);
}
static int get_chunk_cache(hid_t p, char *o, size_t n, int which)
{
    int mdc;
    size_t slots, bytes;
    double w0;
    if (!iot_h5.Pget_cache || iot_h5.Pget_cache(p, &mdc, &slots, &bytes, &w0) < 0)
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
    return iot_h5.Pset_all_coll_metadata_ops ? iot_h5.Pset_all_coll_metadata_ops(p, (hbool_t)s->ints[0]) : -1;
}
static int get_coll_reads(hid_t p, char *o, size_t n)
{
    hbool_t v;
    if (!iot_h5.Pget_all_coll_metadata_ops || iot_h5.Pget_all_coll_metadata_ops(p, &v) < 0)
        return -1;
    snprintf(o, n, "%s", v ? "true" : "false");
    return 0;
}
static int set_coll_writes(hid_t p, const iot_setting *s)
{
    return iot_h5.Pset_coll_metadata_write ? iot_h5.Pset_coll_metadata_write(p, (hbool_t)s->ints[0]) : -1;
}
static int get_coll_writes(hid_t p, char *o, size_t n)
{
    hbool_t v;
    if (!iot_h5.Pget_coll_metadata_write || iot_h5.Pget_coll_metadata_write(p, &v) < 0)
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
                          : kn->layer == IOT_LAYER_OMPIO ? kn->mca != NULL /* mpiio.c reads its parameter back */
                                                              : kn->layer != IOT_LAYER_MPIIO;
            if (applied && pos < sizeof list)
                pos += (size_t)snprintf(list + pos, sizeof list - pos, ",%s.%s", iot_layer_name(kn->layer), kn->name);
        }
    }
    return list;
}

/* ---- files ---- */

const char *iot_h5_driver_name(hid_t fapl)
{
    hid_t probe = fapl == H5P_DEFAULT ? iot_h5.Pcreate(*iot_h5.cls_file_access) : fapl;
    hid_t drv = probe >= 0 ? iot_h5.Pget_driver(probe) : -1;
    if (fapl == H5P_DEFAULT && probe >= 0)
        iot_h5.Pclose(probe);
    if (drv < 0)
        return "unknown";
    if (iot_h5.FD_mpio_init && drv == iot_h5.FD_mpio_init())
        return "mpio";
    if (iot_h5.FD_sec2_init && drv == iot_h5.FD_sec2_init())
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

/* What the application itself asked for, before iotuner changed anything: its file-access list's value of
 * every knob this runtime applies there (a user comparing with "the library's default" needs it). */
void iot_h5_record_application_fapl(iot_phase *ph, hid_t fapl)
{
    hid_t probe = fapl == H5P_DEFAULT ? iot_h5.Pcreate(*iot_h5.cls_file_access) : fapl;
    if (probe < 0)
        return;
    for (int k = 0; k < IOT_KNOBS; k++) {
        char v[160];
        if (fapl_appliers[k].readback && fapl_appliers[k].readback(probe, v, sizeof v) == 0)
            iot_phase_app_setting(ph, IOT_LAYER_HDF5, iot_catalogue[k].name, v);
    }
    if (fapl == H5P_DEFAULT)
        iot_h5.Pclose(probe);
}

/* Requested file-access knobs set on a copy of the application's list (*mine), the ones set into applied. */
size_t iot_h5_apply_fapl(iot_phase *ph, hid_t fapl, hid_t *mine, const iot_setting **applied)
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
        if (k->parallel_only && !iot_h5_is_mpio(ph)) {
            iot_phase_check(ph, "hdf5", s[i]->name, NULL, s[i]->text, NULL, IOT_STATUS_NOT_APPLICABLE, why_not_mpio);
            continue;
        }
        const fapl_applier *a = &fapl_appliers[s[i]->knob];
        if (*mine < 0)
            *mine = fapl == H5P_DEFAULT ? iot_h5.Pcreate(*iot_h5.cls_file_access) : iot_h5.Pcopy(fapl);
        if (!a->apply || *mine < 0 || a->apply(*mine, s[i]) < 0) {
            iot_phase_check(ph, "hdf5", s[i]->name, NULL, s[i]->text, NULL, IOT_STATUS_FAILED,
                            a->apply ? "HDF5 refused the value" : "this HDF5 lacks the call to set it");
            continue;
        }
        applied[napplied++] = s[i];
    }
    if (!iot_h5_is_mpio(ph))
        not_applicable_layer(ph, IOT_LAYER_MPIIO, why_not_mpio);
    return napplied;
}

void iot_h5_verify_fapl(iot_phase *ph, hid_t fid, const iot_setting **applied, size_t napplied)
{
    hid_t acc = iot_h5.Fget_access_plist(fid);
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
        iot_h5.Pclose(acc);
}

/* ---- datasets ---- */

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
hid_t iot_h5_chunked_dcpl(hid_t dcpl, hid_t space, const iot_setting *chunk, size_t elem, hsize_t *dims_out,
                          int *rank_out, int *refused, char *why, size_t whylen)
{
    hsize_t dims[H5S_MAX_RANK], maxdims[H5S_MAX_RANK];
    uint64_t d[H5S_MAX_RANK], m[H5S_MAX_RANK], c[H5S_MAX_RANK];
    why[0] = 0;
    *refused = 0;
    int rank = iot_h5.Sget_simple_extent_dims(space, dims, maxdims);
    if (rank <= 0) {
        snprintf(why, whylen, "the dataset is scalar or null: nothing to chunk");
        return -1;
    }
    /* H5Pset_chunk would replace a virtual dataset's mappings: its data would be lost */
    if (dcpl != H5P_DEFAULT && iot_h5.Pget_layout(dcpl) == H5D_VIRTUAL) {
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
    hid_t mine = dcpl == H5P_DEFAULT ? iot_h5.Pcreate(*iot_h5.cls_dataset_create) : iot_h5.Pcopy(dcpl);
    if (mine >= 0 && iot_h5.Pset_chunk(mine, rank, dims_out) < 0) {
        iot_h5.Pclose(mine);
        mine = -1;
    }
    if (mine < 0)
        snprintf(why, whylen, "HDF5 refused the chunk dimensions");
    return mine;
}

/* Reads the chunking back from the new dataset. note: why chunk_bytes' rule
 * made a chunk of another size (from chunked_dcpl). */
void iot_h5_verify_chunking(iot_phase *ph, hid_t did, const char *dname, const iot_setting *chunk,
                            const hsize_t *want, int rank, size_t elem, const char *note)
{
    char eff[160] = "", asked[160], why[320] = "";
    hid_t cp = iot_h5.Dget_create_plist(did);
    hsize_t got[H5S_MAX_RANK];
    int ok = cp >= 0 && iot_h5.Pget_layout(cp) == H5D_CHUNKED && iot_h5.Pget_chunk(cp, rank, got) == rank;
    if (cp >= 0)
        iot_h5.Pclose(cp);
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

/* ---- transfers ---- */

static hid_t xfer_plists[2] = {-1, -1}; /* ours, replacing H5P_DEFAULT: independent, collective */

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
hid_t iot_h5_transfer_plist(hid_t dxpl, int xfer, int *temporary)
{
    H5FD_mpio_xfer_t mode = (H5FD_mpio_xfer_t)(xfer - 1);
    *temporary = 0;
    if (!iot_h5.Pset_dxpl_mpio)
        return dxpl;
    if (dxpl == H5P_DEFAULT) {
        int slot = mode == H5FD_MPIO_COLLECTIVE;
        if (xfer_plists[slot] < 0) {
            hid_t p = iot_h5.Pcreate(*iot_h5.cls_dataset_xfer);
            if (p >= 0 && iot_h5.Pset_dxpl_mpio(p, mode) < 0) {
                iot_h5.Pclose(p);
                p = -1;
            }
            xfer_plists[slot] = p;
        }
        return xfer_plists[slot] >= 0 ? xfer_plists[slot] : dxpl;
    }
    H5FD_mpio_xfer_t cur;
    if (iot_h5.Pget_dxpl_mpio && iot_h5.Pget_dxpl_mpio(dxpl, &cur) >= 0 && cur == mode)
        return dxpl;
    hid_t p = iot_h5.Pcopy(dxpl); /* the application's list may carry other properties */
    if (p >= 0 && iot_h5.Pset_dxpl_mpio(p, mode) >= 0) {
        *temporary = 1;
        return p;
    }
    if (p >= 0)
        iot_h5.Pclose(p);
    return dxpl;
}

/* After the phase's first H5Dwrite / H5Dread: what HDF5 did with the requested mode, and the
 * application's own mode (from its transfer list), once per phase. */
void iot_h5_verify_transfer(iot_phase *ph, const char *dataset, hid_t app_dxpl, hid_t used, int xfer)
{
    if (!ph->xfer_checked) {
        ph->xfer_checked = 1;
        H5FD_mpio_xfer_t own = H5FD_MPIO_INDEPENDENT;
        if (app_dxpl != H5P_DEFAULT && iot_h5.Pget_dxpl_mpio)
            iot_h5.Pget_dxpl_mpio(app_dxpl, &own);
        if (iot_h5_is_mpio(ph))
            iot_phase_app_setting(ph, IOT_LAYER_HDF5, iot_catalogue[IOT_KNOB_TRANSFER_MODE].name, mode_name(own));
    }
    if (!xfer)
        return;
    const char *want = mode_name((H5FD_mpio_xfer_t)(xfer - 1));
    H5D_mpio_actual_io_mode_t m;
    if (!iot_h5.Pget_mpio_actual_io_mode || iot_h5.Pget_mpio_actual_io_mode(used, &m) < 0) {
        iot_phase_check(ph, "hdf5", "transfer_mode", dataset, want, NULL, IOT_STATUS_APPLIED,
                        "set; not read back: this HDF5 cannot report the mode it used (H5Pget_mpio_actual_io_mode)");
        return;
    }
    const char *eff = m == H5D_MPIO_NO_COLLECTIVE ? "independent" : "collective";
    char why[300] = "";
    iot_status st = IOT_STATUS_APPLIED;
    if (strcmp(want, eff) != 0) {
        uint32_t local = 0, global = 0;
        st = IOT_STATUS_CHANGED;
        if (iot_h5.Pget_mpio_no_collective_cause && iot_h5.Pget_mpio_no_collective_cause(used, &local, &global) >= 0) {
            char c[200];
            cause_text(global | local, c, sizeof c);
            snprintf(why, sizeof why, "HDF5 broke collective I/O: %s", c);
        } else {
            snprintf(why, sizeof why, "HDF5 performed %s I/O", eff);
        }
    }
    iot_phase_check(ph, "hdf5", "transfer_mode", dataset, want, eff, st, why);
}
