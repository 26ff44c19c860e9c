/* HDF5 module, its wrappers: H5Fcreate/H5Fopen open a file phase and get
 * its file-access knobs, H5Dcreate its chunking, H5Dwrite/H5Dread its
 * transfer mode (hdf5_apply.c sets each and reads it back); the modules hear
 * of the calls smart mode models, and a knob that never got its chance is
 * reported as not applicable. Covers HDF5 1.8-1.10's calls (the 1.6 names
 * H5Dcreate1 and H5Dopen1 included) and 1.12-1.14's asynchronous and
 * multi-dataset calls, resolved at run time (iotuner/calls.h). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <hdf5.h>

#include "iotuner/calls.h"
#include "iotuner/handles.h"
#include "iotuner/signature.h"
#include "comm.h"
#include "hdf5_apply.h"
#include "module.h"
#include "phases.h"
#include "pmpi.h"

IOT_HDF5_CALLS(IOT_DECLARE)
/* HDF5 1.13+ declares the asynchronous calls itself, each name also a macro that passes the caller's file,
 * function and line: here the names are the functions (the same prototypes as calls.h's, declared below). */
#if H5_VERSION_GE(1, 13, 0)
#undef H5Fcreate_async
#undef H5Fopen_async
#undef H5Fclose_async
#undef H5Dcreate_async
#undef H5Dopen_async
#undef H5Dclose_async
#undef H5Dwrite_async
#undef H5Dread_async
#undef H5Dwrite_multi_async
#undef H5Dread_multi_async
#endif
IOT_HDF5_LATER_CALLS(IOT_DECLARE)

/* H5F_ACC_* macros call into HDF5 (H5check); these are their values. */
#define ACC_TRUNC 0x0002u

/* ---- datasets: id -> phase and transfer mode (the shared handle table) ---- */

typedef struct dset_rec {
    iot_phase *ph;
    int xfer; /* requested H5FD_mpio_xfer_t + 1, 0 = leave alone */
    int per_dataset;        /* xfer comes from a group with a dataset pattern: read back for this dataset */
    _Atomic int unverified; /* xfer not read back yet: the dataset's first transfer claims that */
    _Atomic int described;  /* its first write described it (phases[].datasets) */
} dset_rec;

static iot_handles dsets = IOT_HANDLES_INIT;
/* the last dataset this thread used: repeated small writes skip the lock */
static IOT_TLS iot_handle_cache dset_cache;

static void dset_put(hid_t id, iot_phase *ph, int xfer, int per_dataset)
{
    dset_rec *r = malloc(sizeof *r);
    if (!r)
        return;
    r->ph = ph;
    r->xfer = xfer;
    r->per_dataset = per_dataset;
    atomic_init(&r->unverified, xfer != 0);
    atomic_init(&r->described, 0);
    if (iot_handles_put(&dsets, IOT_HANDLE_INT(id), r))
        free(r); /* no room: the dataset goes untracked */
}

/* 1: this thread's last dataset; 2: found in the table (this thread's first call on it); 3: found, and this call
 * reads back the requested transfer mode (the dataset's first transfer on any thread; 4: a mode requested for
 * this dataset); 0: not tracked. */
static inline int dset_get(hid_t id, iot_phase **ph, int *xfer)
{
    int cached;
    dset_rec *r = iot_handles_find_cached(&dsets, &dset_cache, IOT_HANDLE_INT(id), &cached);
    if (!r)
        return 0;
    *ph = r->ph;
    *xfer = r->xfer;
    if (cached)
        return 1;
    if (atomic_load_explicit(&r->unverified, memory_order_relaxed) && atomic_exchange(&r->unverified, 0))
        return 3 + r->per_dataset;
    return 2;
}

static void dset_drop(hid_t id)
{
    free(iot_handles_take(&dsets, IOT_HANDLE_INT(id)));
}

/* File ids made by H5Freopen: more identifiers of an open phase (id -> the phase). */
static iot_handles aliases = IOT_HANDLES_INIT;

static iot_phase *phase_of_file(hid_t fid, int drop)
{
    iot_phase *ph = iot_phase_find_handle(IOT_KIND_HDF5, fid);
    if (!ph)
        ph = drop ? iot_handles_take(&aliases, IOT_HANDLE_INT(fid)) : iot_handles_find(&aliases, IOT_HANDLE_INT(fid));
    return ph;
}

/* The file phase an object belongs to. */
static iot_phase *phase_of_object(hid_t obj)
{
    hid_t fid = iot_h5.Iget_file_id(obj);
    if (fid < 0)
        return NULL;
    iot_phase *ph = phase_of_file(fid, 0);
    iot_h5.Idec_ref(fid);
    return ph;
}

/* per_dataset: the mode comes from a group with a dataset pattern (not the file's own setting) */
static int requested_xfer(iot_phase *ph, const char *dataset, int *per_dataset)
{
    *per_dataset = 0;
    if (!ph)
        return 0;
    const iot_setting *s[64], *f[64];
    size_t n = iot_resolve(ph, dataset, IOT_LAYER_HDF5, s, 64);
    const iot_setting *t = iot_setting_of(s, n, IOT_KNOB_TRANSFER_MODE);
    if (!t)
        return 0;
    size_t nf = iot_resolve(ph, NULL, IOT_LAYER_HDF5, f, 64);
    *per_dataset = iot_setting_of(f, nf, IOT_KNOB_TRANSFER_MODE) != t;
    if (!iot_h5_is_mpio(ph)) {
        char why[160];
        snprintf(why, sizeof why, "the file uses HDF5's %s driver: there is no collective transfer", ph->driver);
        iot_phase_check(ph, "hdf5", t->name, *per_dataset ? dataset : NULL, t->text, NULL, IOT_STATUS_NOT_APPLICABLE,
                        why);
        return 0;
    }
    return (!strcmp(t->text, "collective") ? H5FD_MPIO_COLLECTIVE : H5FD_MPIO_INDEPENDENT) + 1;
}

/* ---- files ---- */

/* The ranks that open the file (H5Fcreate / H5Fopen are collective on
 * them), as the duplicate H5Pget_fapl_mpio returns; MPI_COMM_NULL when the
 * file is not opened through MPI-IO. */
static MPI_Comm file_comm(iot_phase *ph, hid_t fapl)
{
    MPI_Comm comm = MPI_COMM_NULL;
    MPI_Info info = MPI_INFO_NULL;
    if (!iot_h5_is_mpio(ph) || !iot_h5.Pget_fapl_mpio || !iot_pmpi_resolve() || iot_h5.Pget_fapl_mpio(fapl, &comm, &info) < 0)
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
    if (!iot_h5_resolve() || !name)
        return call_file(c, name, flags, fcpl, fapl);
    iot_state_used(IOT_KIND_HDF5);
    iot_mpi_note_rank(); /* MPI_Init may have gone around us (Fortran's) */
    iot_warn_settings_once();
    iot_phase *ph = iot_phase_begin(IOT_KIND_HDF5, name, create);
    if (!ph)
        return call_file(c, name, flags, fcpl, fapl);

    iot_internal++;
    iot_h5_quiet q = iot_h5_quiet_begin();
    snprintf(ph->driver, sizeof ph->driver, "%s", iot_h5_driver_name(fapl));
    iot_h5_record_application_fapl(ph, fapl);
    /* the modules hear of the phase before its settings are resolved: a settings source decides for it now */
    int64_t sig[2] = {iot_wanted(IOT_EVENT_PHASE_BEGIN) ? (int64_t)iot_identity(ph->path, NULL, 0) : 0, (int64_t)flags};
    iot_call opening = {create ? IOT_SIG_H5FCREATE : IOT_SIG_H5FOPEN, sig, 2, -1};
    file_access access = {ph, fapl};
    iot_phase_announce(ph, &opening, ranks_of_file, &access);
    hid_t mine;
    const iot_setting *applied[64];
    size_t napplied = iot_h5_apply_fapl(ph, fapl, &mine, applied);
    iot_phase_file_open(ph, create, (flags & ACC_TRUNC) != 0);
    iot_h5_quiet_end(q);
    iot_internal--;

    /* an attempt with our properties stays silent: only the application's own call may print errors */
    iot_h5_quiet attempt = {NULL, NULL};
    if (mine >= 0)
        attempt = iot_h5_quiet_begin();
    iot_phase_set_opening(ph);
    hid_t fid = call_file(c, name, flags, fcpl, mine >= 0 ? mine : fapl);
    iot_phase_set_opening(NULL);
    if (mine >= 0)
        iot_h5_quiet_end(attempt);

    iot_internal++;
    q = iot_h5_quiet_begin();
    if (fid < 0 && mine >= 0) {
        /* our properties must never cost the application its file */
        iot_h5_quiet_end(q);
        iot_internal--; /* the retry's I/O is the application's: track it */
        iot_phase_set_opening(ph);
        fid = call_file(c, name, flags, fcpl, fapl);
        iot_phase_set_opening(NULL);
        iot_internal++;
        q = iot_h5_quiet_begin();
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
        iot_h5_verify_fapl(ph, fid, applied, napplied);
    }
    if (mine >= 0)
        iot_h5.Pclose(mine);
    iot_h5_quiet_end(q);
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
    if (ph && iot_handles_put(&aliases, IOT_HANDLE_INT(nid), ph) == 0)
        ph->handles++;
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
    if (iot_h5.Iget_name(loc, base, sizeof base) < 0)
        base[0] = 0;
    size_t n = strlen(base);
    snprintf(out, outlen, "%s%s%s", base, n && base[n - 1] == '/' ? "" : "/", name ? name : "(anonymous)");
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
    if (!iot_h5_resolve())
        return call_dcreate(c, loc, name, type, space, lcpl, dcpl, dapl);
    iot_internal++;
    iot_h5_quiet q = iot_h5_quiet_begin();
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
        int64_t sig[3] = {(int64_t)iot_identity(dname, NULL, 0), (int64_t)iot_h5.Tget_size(type),
                          iot_h5.Sget_simple_extent_dims(space, dims, NULL)};
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
            elem = iot_h5.Tget_size(type);
            int refused;
            mine = iot_h5_chunked_dcpl(dcpl, space, chunk, elem, want, &rank, &refused, why, sizeof why);
            if (mine < 0)
                iot_phase_check(ph, "hdf5", chunk->name, dname, chunk->text, NULL,
                                refused ? IOT_STATUS_FAILED : IOT_STATUS_NOT_APPLICABLE, why);
            if (refused)
                iot_warn_once(&warned_ruinous_chunks, "hdf5.%s %s not applied to dataset %.200s: %s (and so "
                              "for any such dataset; the report lists them)", chunk->name, chunk->text, dname,
                              why + strlen("refused by iotuner: "));
        }
    }
    iot_h5_quiet_end(q);
    iot_internal--;

    iot_h5_quiet attempt = {NULL, NULL};
    if (mine >= 0)
        attempt = iot_h5_quiet_begin();
    hid_t did = call_dcreate(c, loc, name, type, space, lcpl, mine >= 0 ? mine : dcpl, dapl);
    if (mine >= 0)
        iot_h5_quiet_end(attempt);

    iot_internal++;
    q = iot_h5_quiet_begin();
    if (did < 0 && mine >= 0) {
        iot_h5_quiet_end(q); /* the application's own call keeps its error reporting */
        iot_internal--;
        did = call_dcreate(c, loc, name, type, space, lcpl, dcpl, dapl); /* never lose the dataset over our chunking */
        iot_internal++;
        q = iot_h5_quiet_begin();
        iot_phase_check(ph, "hdf5", chunk->name, dname, chunk->text, NULL, IOT_STATUS_FAILED,
                        "dataset creation failed with this chunking; created with the application's own layout");
    } else if (did >= 0 && mine >= 0) {
        iot_h5_verify_chunking(ph, did, dname, chunk, want, rank, elem, why);
    }
    if (mine >= 0)
        iot_h5.Pclose(mine);
    if (did >= 0 && ph) {
        int per_dataset, xfer = requested_xfer(ph, dname, &per_dataset);
        dset_put(did, ph, xfer, per_dataset);
    }
    iot_h5_quiet_end(q);
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
    if (!iot_wanted(IOT_EVENT_CALL) || !iot_active() || !name || !iot_h5_resolve())
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
    if (did < 0 || !iot_active() || !name || !iot_h5_resolve())
        return did;
    iot_internal++;
    iot_phase *ph = phase_of_object(did);
    if (ph) {
        char dname[1024];
        object_name(loc, name, dname, sizeof dname);
        int per_dataset, xfer = requested_xfer(ph, dname, &per_dataset);
        dset_put(did, ph, xfer, per_dataset);
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

/* H5Oopen opens any object by name: a dataset opened so (netCDF-4 opens its variables this way) is one like
 * H5Dopen's. */
IOT_EXPORT hid_t H5Oopen(hid_t loc, const char *name, hid_t lapl)
{
    static hid_t (*real)(hid_t, const char *, hid_t);
    IOT_REAL(real, "H5Oopen");
    hid_t id = real(loc, name, lapl);
    if (id >= 0 && iot_active() && iot_h5_resolve() && iot_h5.Iget_type(id) == H5I_DATASET) {
        dataset_opening(loc, name);
        dataset_opened(id, loc, name);
    }
    return id;
}

static void dataset_closing(hid_t did)
{
    if (iot_wanted(IOT_EVENT_CALL) && iot_active()) {
        iot_phase *ph = NULL;
        int xfer;
        if (dset_get(did, &ph, &xfer))
            iot_event_call(ph, IOT_SIG_H5DCLOSE, NULL, 0);
    }
}

/* A close takes one reference: an identifier the application holds more of (netCDF-4 keeps its variables'
 * with H5Iinc_ref and closes H5Oopen's) stays valid, and stays in the table. */
static herr_t dataset_closed(hid_t did, herr_t rc)
{
    iot_phase *ph;
    int xfer;
    if (dset_get(did, &ph, &xfer) && iot_h5.Iis_valid(did) <= 0) /* in the table: HDF5 is resolved */
        dset_drop(did);
    return rc;
}

IOT_EXPORT herr_t H5Dclose(hid_t did)
{
    static herr_t (*real)(hid_t);
    IOT_REAL(real, "H5Dclose");
    dataset_closing(did);
    return dataset_closed(did, real(did));
}

IOT_EXPORT herr_t H5Oclose(hid_t oid)
{
    static herr_t (*real)(hid_t);
    IOT_REAL(real, "H5Oclose");
    dataset_closing(oid); /* a dataset H5Oopen opened; anything else is not in the table */
    return dataset_closed(oid, real(oid));
}

/* ---- transfers ---- */

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
    hssize_t n = iot_h5.Sget_select_npoints(space);
    cached_space = space;
    cached_space_gen = gen;
    cached_npoints = n;
    return n;
}

static uint64_t transfer_bytes(hid_t did, hid_t mem_type, hid_t mem_space, hid_t file_space)
{
    if (mem_type != cached_type) {
        cached_type_size = iot_h5.Tget_size(mem_type);
        cached_type = mem_type;
    }
    hid_t space = mem_space != H5S_ALL ? mem_space : file_space;
    hssize_t n;
    if (space != H5S_ALL) {
        n = selected_points(space);
    } else { /* H5S_ALL twice: the whole dataset */
        hid_t whole = iot_h5.Dget_space(did);
        n = whole >= 0 ? iot_h5.Sget_select_npoints(whole) : 0;
        if (whole >= 0)
            iot_h5.Sclose(whole);
    }
    return n > 0 ? (uint64_t)n * cached_type_size : 0;
}

/* One H5Dwrite / H5Dread (or count of them in one multi-dataset call): its
 * phase, the transfer list to pass, and its timing. */
typedef struct {
    iot_phase *ph;
    int xfer, temporary, is_write;
    int first; /* dset_get's answer - 1: 1 this thread's first call on the dataset (the phase's transfer mode may
                * still be unread), 2 the dataset's requested mode to read back, 3 the same, requested for it */
    hid_t app, use;
    uint64_t bytes;
    unsigned weight;
    uint64_t t0;
} transfer;

/* What HDF5 did with the requested transfer mode: for the phase (its first transfer), or for a dataset whose
 * own pattern asked for it (its first transfer, the check naming it). */
static __attribute__((noinline)) void verify_transfer(const transfer *t, hid_t did)
{
    iot_internal++;
    char dname[1024];
    const char *dataset = NULL;
    int xfer = t->xfer;
    if (t->first == 3) {
        if (iot_h5.Iget_name(did, dname, sizeof dname) <= 0)
            snprintf(dname, sizeof dname, "(anonymous)");
        dataset = dname;
    } else if (xfer && iot_phase_has_dataset_check(t->ph, "hdf5", "transfer_mode", NULL)) {
        xfer = 0; /* the file's own request is read back once */
    }
    iot_h5_verify_transfer(t->ph, dataset, t->app, t->use, xfer);
    iot_internal--;
}

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
    t->first = found - 1;
    if (t->xfer) {
        int temporary;
        iot_internal++;
        t->use = iot_h5_transfer_plist(dxpl, t->xfer, &temporary);
        iot_internal--;
        t->temporary = temporary;
    }
    if (iot_wanted(IOT_EVENT_CALL)) { /* the modules hear of the call when entered, before the MPI-IO calls it makes */
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

static void describe_dataset(iot_phase *ph, hid_t did, hid_t file_space);

static inline __attribute__((always_inline)) void transfer_end(transfer *t, herr_t rc, size_t count,
                                                               const hid_t *dids, const hid_t *mts,
                                                               const hid_t *mss, const hid_t *fss)
{
    uint64_t dt = t->weight ? iot_ticks() - t->t0 : 0;
    /* the bytes, when the modules did not hear of the call (its listeners are fixed from start-up to the run's
     * end, after the report); HDF5's own queries: nothing of them is intercepted */
    if (rc >= 0 && !iot_wanted(IOT_EVENT_CALL))
        for (size_t i = 0; i < count; i++)
            t->bytes += transfer_bytes(dids[i], mts[i], mss[i], fss[i]);
    iot_level_end(t->ph, IOT_LEVEL_HDF5, rc >= 0 ? t->bytes : 0, dt, t->weight, t->is_write);
    /* once per phase, and once per dataset with a mode of its own; the rest skip the load */
    if (rc >= 0 && (t->first || t->xfer) && (!t->ph->xfer_checked || t->first > 1))
        verify_transfer(t, dids[0]);
    if (rc >= 0 && t->first && t->is_write) /* not this thread's last dataset: perhaps its first write */
        for (size_t i = 0; i < count; i++)
            describe_dataset(t->ph, dids[i], fss[i]);
    if (t->temporary)
        iot_h5.Pclose(t->use);
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
    if (rc >= 0 && iot_h5.Dget_chunk_storage_size && iot_h5.Dget_chunk_storage_size(did, offset, &size) < 0)
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
    return dataset_closed(did, real(app_file, app_func, app_line, did, es));
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

/* ---- datasets: what a layout advice needs (phases[].datasets): shape, layout, this rank's first write ---- */

static void write_dims(iot_buf *b, const char *key, int rank, const hsize_t *d)
{
    iot_jw_begin_array(b, key);
    for (int i = 0; i < rank; i++)
        iot_jw_int(b, NULL, (int64_t)d[i]);
    iot_jw_end_array(b);
}

/* The selection's bounding box, when the selection is exactly that box (else 0): the block a rank writes. */
static int selection_box(hid_t space, int rank, hsize_t *start, hsize_t *box)
{
    hsize_t end[H5S_MAX_RANK];
    hssize_t n = iot_h5.Sget_select_npoints(space);
    if (n <= 0 || iot_h5.Sget_select_bounds(space, start, end) < 0)
        return 0;
    uint64_t points = 1;
    for (int i = 0; i < rank; i++) {
        box[i] = end[i] - start[i] + 1;
        points *= box[i];
    }
    return points == (uint64_t)n;
}

static __attribute__((noinline)) void describe_dataset(iot_phase *ph, hid_t did, hid_t file_space)
{
    dset_rec *r = iot_handles_find(&dsets, IOT_HANDLE_INT(did));
    if (!r || atomic_load(&r->described) || atomic_exchange(&r->described, 1))
        return;
    if (!iot_h5.Sget_select_bounds || !iot_h5.Dget_type || !iot_h5.Tclose)
        return; /* an HDF5 without them: no datasets section */
    iot_internal++;
    iot_h5_quiet q = iot_h5_quiet_begin();
    hsize_t dims[H5S_MAX_RANK], chunk[H5S_MAX_RANK], start[H5S_MAX_RANK], box[H5S_MAX_RANK];
    hid_t space = iot_h5.Dget_space(did);
    int rank = space >= 0 ? iot_h5.Sget_simple_extent_dims(space, dims, NULL) : -1;
    if (rank > 0 && rank <= H5S_MAX_RANK) {
        char name[512];
        if (iot_h5.Iget_name(did, name, sizeof name) <= 0)
            snprintf(name, sizeof name, "(anonymous)");
        hid_t type = iot_h5.Dget_type(did), dcpl = iot_h5.Dget_create_plist(did);
        size_t elem = type >= 0 ? iot_h5.Tget_size(type) : 0;
        H5D_layout_t layout = dcpl >= 0 ? iot_h5.Pget_layout(dcpl) : H5D_LAYOUT_ERROR;
        int chunked = layout == H5D_CHUNKED && iot_h5.Pget_chunk(dcpl, rank, chunk) == rank;
        int boxed = selection_box(file_space == H5S_ALL ? space : file_space, rank, start, box);
        iot_buf b;
        iot_buf_init(&b);
        iot_jw_begin_object(&b, NULL);
        iot_jw_string(&b, "name", name);
        write_dims(&b, "dims", rank, dims);
        iot_jw_int(&b, "element_size", (int64_t)elem);
        iot_jw_string(&b, "layout", layout == H5D_CONTIGUOUS ? "contiguous" : layout == H5D_CHUNKED ? "chunked"
                                    : layout == H5D_COMPACT  ? "compact"
                                                             : "other");
        if (chunked)
            write_dims(&b, "chunk", rank, chunk);
        else
            iot_jw_null(&b, "chunk");
        if (boxed) {
            write_dims(&b, "first_write_start", rank, start);
            write_dims(&b, "first_write_block", rank, box);
        } else {
            iot_jw_null(&b, "first_write_block"); /* not one box: points, or several blocks */
        }
        iot_jw_end_object(&b);
        char *entry = iot_buf_take(&b);
        if (entry)
            iot_phase_add_dataset(ph, entry);
        free(entry);
        if (type >= 0)
            iot_h5.Tclose(type);
        if (dcpl >= 0)
            iot_h5.Pclose(dcpl);
    }
    if (space >= 0)
        iot_h5.Sclose(space);
    iot_h5_quiet_end(q);
    iot_internal--;
}

/* ---- the module ---- */

static void hdf5_record(const iot_phase *ph, iot_record *r)
{
    iot_level_record(ph, IOT_LEVEL_HDF5, &r->level[IOT_LEVEL_HDF5]);
}

static void hdf5_report(const iot_report_ctx *ctx)
{
    iotuner_report_version(ctx, IOT_SECTION_HDF5_VERSION); /* its section: phases[].hdf5 */
}

static const iot_module hdf5_module = {.name = "hdf5", .record = hdf5_record, .report = hdf5_report};
IOT_MODULE(hdf5_module)

/* A program with HDF5 linked in statically (h5pcc's default), linked with `iotuner link-flags`: ld's
 * --wrap=X makes its calls of X calls of __wrap_X, the same wrappers; their real X is the program's own,
 * which its link object hands over (iot_next_symbol). */
#define WRAP_ALIAS(ret, name, params, sig) IOT_EXPORT ret __wrap_##name params __attribute__((alias(#name)));
IOT_HDF5_CALLS(WRAP_ALIAS)
