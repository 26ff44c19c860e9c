/* PnetCDF module: ncmpi_create / ncmpi_open begin a file phase of PnetCDF's
 * own kind, with the PnetCDF hints added to the MPI_Info (read back with
 * ncmpi_inq_file_info once the file is defined; never at the cost of the open:
 * refused, it opens again with the application's own); the MPI-IO files
 * PnetCDF opens for it (at the open, and the independent one
 * ncmpi_begin_indep_data opens later) join that phase. Every put / get
 * (iotuner/calls.h's generated rows) counts the application's bytes at the
 * PnetCDF level: blocking calls are timed, nonblocking ones (iput, iget, bput)
 * are counted when posted and timed at ncmpi_wait / ncmpi_wait_all. The
 * modules hear of the calls smart mode models (iotuner/signature.h). PnetCDF's
 * own queries are looked up at run time: the library links no PnetCDF, and a
 * process without it never reaches this file. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iotuner/calls.h"
#include "iotuner/handles.h"
#include "iotuner/signature.h"
#include "abi.h"
#include "comm.h"
#include "module.h"
#include "phases.h"
#include "pmpi.h"

IOT_PNETCDF_CALLS(IOT_DECLARE)

/* pnetcdf.h's values: the library does not include it (its MPI is another build's) */
#define NC_NOERR 0
#define NC_REQ_NULL (-1)
#define NC_REQ_ALL (-1)
#define NC_GET_REQ_ALL (-2)
#define NC_PUT_REQ_ALL (-3)
#define NC_NOCLOBBER 0x0004

/* Our exports are found by a program that looks PnetCDF up with dlsym in a process without it: such a call
 * fails as a feature PnetCDF was built without would (NC_ENOTBUILT), with one warning, and never aborts. */
#define NC_ENOTBUILT (-128)
#define PNC_REAL(var, name)                                                                                    \
    IOT_REAL(var, name);                                                                                       \
    if (__builtin_expect(!(var), 0))                                                                           \
        return missing(name);

static int missing(const char *name)
{
    static int warned;
    iot_warn_once(&warned, "%s was called, but no PnetCDF is loaded in this process", name);
    return NC_ENOTBUILT;
}

/* ---- PnetCDF's queries we call (not interpose), resolved at the first open ---- */

/* X(ret, field, params, symbol) */
#define PNC_FUNCTIONS(X)                                                                                       \
    X(int, inq_file_info, (int, MPI_Info *), "ncmpi_inq_file_info")                                            \
    X(int, inq_vartype, (int, int, int *), "ncmpi_inq_vartype")                                                \
    X(int, inq_varndims, (int, int, int *), "ncmpi_inq_varndims")                                              \
    X(int, inq_vardimid, (int, int, int *), "ncmpi_inq_vardimid")                                              \
    X(int, inq_dimlen, (int, int, MPI_Offset *), "ncmpi_inq_dimlen")                                           \
    X(const char *, inq_libvers, (void), "ncmpi_inq_libvers")                                                  \
    X(const char *, strerror, (int), "ncmpi_strerror")

static struct {
#define PNC_FIELD(ret, field, params, symbol) ret(*field) params;
    PNC_FUNCTIONS(PNC_FIELD)
#undef PNC_FIELD
} pnc;
static pthread_once_t pnc_once = PTHREAD_ONCE_INIT;
static int pnc_ok;

static void pnc_resolve_once(void)
{
    pnc_ok = 1;
#define PNC_RESOLVE(ret, field, params, symbol)                                                               \
    *(void **)&pnc.field = dlsym(RTLD_DEFAULT, symbol);                                                        \
    pnc_ok = pnc_ok && pnc.field;
    PNC_FUNCTIONS(PNC_RESOLVE)
#undef PNC_RESOLVE
    if (pnc_ok) {
        char version[128];
        snprintf(version, sizeof version, "%s", pnc.inq_libvers());
        version[strcspn(version, " ")] = 0; /* "1.12.3 of March 29, 2022" */
        iot_state_library(IOT_KIND_PNETCDF, version);
    }
}

static int pnc_resolve(void)
{
    pthread_once(&pnc_once, pnc_resolve_once);
    return pnc_ok;
}

/* Bytes of an element of a netCDF external type (NC_BYTE .. NC_UINT64); 0 unknown. */
static int external_size(int xtype)
{
    static const int sizes[] = {0, 1, 1, 2, 4, 4, 8, 1, 2, 4, 8, 8};
    return xtype > 0 && xtype < (int)(sizeof sizes / sizeof *sizes) ? sizes[xtype] : 0;
}

/* ---- open files: ncid -> its phase, variables and pending requests (the shared handle table) ---- */

typedef struct {
    int ndims; /* -1: not looked up yet */
    int size;  /* bytes of its external type */
} var_info;

/* A pending nonblocking request: its bytes, to time at the wait that completes it. */
typedef struct {
    int id; /* -1 empty, -2 removed */
    int write;
    uint64_t bytes;
} request;

typedef struct pnc_file {
    int ncid;
    iot_phase *ph;
    int created;
    int defined;  /* the file left define mode: its layout is fixed */
    int verified; /* its hints were read back */
    pthread_mutex_t lock;
    var_info *vars;
    int nvars;
    request *reqs; /* open addressing by id, a power of two */
    size_t nslots, nused;
    uint64_t pending[2]; /* bytes of the pending requests: read, write */
} pnc_file;

static iot_handles files = IOT_HANDLES_INIT;
/* this thread's last file; a close anywhere makes every thread look again */
static IOT_TLS iot_handle_cache file_cache;

static pnc_file *file_put(int ncid, iot_phase *ph, int created)
{
    pnc_file *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    f->ncid = ncid;
    f->ph = ph;
    f->created = created;
    pthread_mutex_init(&f->lock, NULL);
    if (iot_handles_put(&files, IOT_HANDLE_INT(ncid), f) == 0)
        return f;
    pthread_mutex_destroy(&f->lock); /* no room: the file goes untracked */
    free(f);
    return NULL;
}

static inline pnc_file *file_of(int ncid)
{
    return iot_handles_find_cached(&files, &file_cache, IOT_HANDLE_INT(ncid), NULL);
}

static void file_drop(pnc_file *f)
{
    iot_handles_remove(&files, IOT_HANDLE_INT(f->ncid), f); /* not a file that reused the ncid since */
    pthread_mutex_destroy(&f->lock);
    free(f->vars);
    free(f->reqs);
    free(f);
}

/* A variable's rank and element size, looked up once (a variable's type and dimensions never change). */
static var_info variable(pnc_file *f, int varid)
{
    var_info v = {-1, 0};
    if (varid < 0)
        return v;
    pthread_mutex_lock(&f->lock);
    if (varid >= f->nvars) {
        int n = varid + 16;
        var_info *grown = realloc(f->vars, (size_t)n * sizeof *grown);
        if (grown) {
            for (int i = f->nvars; i < n; i++)
                grown[i] = (var_info){-1, 0};
            f->vars = grown;
            f->nvars = n;
        }
    }
    if (varid < f->nvars && f->vars[varid].ndims < 0) {
        int ndims = 0, xtype = 0;
        iot_internal++;
        if (pnc.inq_varndims(f->ncid, varid, &ndims) == NC_NOERR && pnc.inq_vartype(f->ncid, varid, &xtype) == NC_NOERR)
            f->vars[varid] = (var_info){ndims, external_size(xtype)};
        iot_internal--;
    }
    if (varid < f->nvars)
        v = f->vars[varid];
    pthread_mutex_unlock(&f->lock);
    return v;
}

/* ---- pending requests ---- */

/* PnetCDF numbers a file's puts 0, 2, 4, ... and its gets 1, 3, 5, ...: mixed, so that they spread over the
 * table (taken as they are, half the slots would take them all, in one cluster). */
static inline size_t request_slot(int id, size_t nslots)
{
    return (size_t)(((uint64_t)(uint32_t)id * 0x9E3779B97F4A7C15ull) >> 32) & (nslots - 1);
}

static void request_put(pnc_file *f, int id, int write, uint64_t bytes)
{
    pthread_mutex_lock(&f->lock);
    f->pending[write] += bytes;
    if ((f->nused + 1) * 2 > f->nslots) { /* grow (removed slots go) */
        size_t n = f->nslots ? f->nslots * 2 : 256;
        request *slots = malloc(n * sizeof *slots);
        if (slots) {
            for (size_t i = 0; i < n; i++)
                slots[i].id = -1;
            size_t used = 0;
            for (size_t i = 0; i < f->nslots; i++)
                if (f->reqs[i].id >= 0) {
                    size_t j = request_slot(f->reqs[i].id, n);
                    while (slots[j].id >= 0)
                        j = (j + 1) & (n - 1);
                    slots[j] = f->reqs[i];
                    used++;
                }
            free(f->reqs);
            f->reqs = slots;
            f->nslots = n;
            f->nused = used;
        }
    }
    if ((f->nused + 1) * 2 <= f->nslots) {
        size_t j = request_slot(id, f->nslots);
        while (f->reqs[j].id >= 0)
            j = (j + 1) & (f->nslots - 1);
        f->reqs[j] = (request){id, write, bytes};
        f->nused++;
    }
    pthread_mutex_unlock(&f->lock);
}

/* The bytes of the requests a wait completes (bytes[0] read, bytes[1] written), taken off the pending ones:
 * count request ids, or every request (NC_REQ_ALL), or every put or get (NC_PUT_REQ_ALL, NC_GET_REQ_ALL). */
static void requests_take(pnc_file *f, int count, const int *ids, uint64_t bytes[2])
{
    bytes[0] = bytes[1] = 0;
    pthread_mutex_lock(&f->lock);
    for (size_t j = 0; j < f->nslots && count < 0; j++) {
        request *r = &f->reqs[j];
        if (r->id >= 0 && (count == NC_REQ_ALL || r->write == (count == NC_PUT_REQ_ALL))) {
            bytes[r->write] += r->bytes;
            r->id = -2;
        }
    }
    for (int i = 0; ids && f->nslots && i < count; i++) {
        if (ids[i] < 0)
            continue;
        for (size_t j = request_slot(ids[i], f->nslots); f->reqs[j].id != -1; j = (j + 1) & (f->nslots - 1))
            if (f->reqs[j].id == ids[i]) {
                bytes[f->reqs[j].write] += f->reqs[j].bytes;
                f->reqs[j].id = -2;
                break;
            }
    }
    for (int w = 0; w < 2; w++)
        f->pending[w] -= bytes[w] < f->pending[w] ? bytes[w] : f->pending[w];
    pthread_mutex_unlock(&f->lock);
}

/* ---- hints ---- */

/* The value PNETCDF_HINTS ("key=value;key=value") gives a hint, which PnetCDF prefers to the MPI_Info's. */
static int env_hint(const char *key, char *out, size_t outlen)
{
    const char *env = getenv("PNETCDF_HINTS");
    size_t klen = strlen(key);
    for (const char *p = env; p && *p; p = strchr(p, ';') ? strchr(p, ';') + 1 : NULL) {
        p += strspn(p, " ");
        if (!strncmp(p, key, klen) && p[klen] == '=') {
            size_t n = strcspn(p + klen + 1, ";");
            snprintf(out, outlen, "%.*s", (int)n, p + klen + 1);
            return 1;
        }
    }
    return 0;
}

/* The application's own values of the catalogued hints: its MPI_Info, overridden by PNETCDF_HINTS. */
static void record_application_hints(iot_phase *ph, MPI_Info info)
{
    for (int k = 0; k < IOT_KNOBS; k++) {
        const iot_knob *kn = &iot_catalogue[k];
        char val[MPI_MAX_INFO_VAL + 1];
        if (kn->layer == IOT_LAYER_PNETCDF &&
            (env_hint(kn->name, val, sizeof val) || iot_info_value(info, kn->name, val, sizeof val)))
            iot_phase_app_setting(ph, IOT_LAYER_PNETCDF, kn->name, val);
    }
}

/* A hint's value as PnetCDF reports it is the requested one (sizes as numbers: "4096" is 4K). */
static int same_value(const iot_setting *s, const char *reported)
{
    int64_t n;
    char err[64];
    if (s->knob >= 0 && iot_catalogue[s->knob].type == IOT_TYPE_SIZE)
        return iot_parse_size(reported, &n, err, sizeof err) == 0 && n == s->ints[0];
    return !strcmp(reported, s->text);
}

/* Reads the requested hints back (ncmpi_inq_file_info): the layout ones once the file is defined (before,
 * PnetCDF reports what it was asked; after ncmpi_enddef, the alignment it used). */
static void verify_hints(pnc_file *f)
{
    const iot_setting *s[16];
    size_t n = iot_resolve(f->ph, NULL, IOT_LAYER_PNETCDF, s, 16);
    MPI_Info used = MPI_INFO_NULL;
    if (!n || f->ph->retried || pnc.inq_file_info(f->ncid, &used) != NC_NOERR)
        return;
    f->verified = 1;
    for (size_t i = 0; i < n; i++) {
        const iot_knob *kn = s[i]->knob >= 0 ? &iot_catalogue[s[i]->knob] : NULL;
        char val[MPI_MAX_INFO_VAL + 1] = "", env[MPI_MAX_INFO_VAL + 1], why[320] = "";
        iot_status st = IOT_STATUS_APPLIED;
        int found = iot_info_value(used, s[i]->name, val, sizeof val);
        if (kn && kn->file_layout && !f->created && !f->defined) {
            st = IOT_STATUS_NOT_APPLICABLE;
            snprintf(why, sizeof why, "the file was opened, not created: its variables lie where they were written");
        } else if (!found) {
            st = IOT_STATUS_DROPPED;
            snprintf(why, sizeof why, "this PnetCDF (%s) does not report it", iot_g.library[IOT_KIND_PNETCDF]);
        } else if (!same_value(s[i], val)) {
            st = IOT_STATUS_CHANGED;
            if (env_hint(s[i]->name, env, sizeof env))
                snprintf(why, sizeof why, "PNETCDF_HINTS sets %s=%.160s, which PnetCDF prefers to the MPI_Info",
                         s[i]->name, env);
            else
                snprintf(why, sizeof why, "PnetCDF reports %.160s", val);
        }
        iot_phase_check(f->ph, "pnetcdf", s[i]->name, NULL, s[i]->text, found ? val : NULL, st, why);
    }
    iot_pmpi.Info_free(&used);
}

/* ---- files ---- */

typedef int (*file_fn)(MPI_Comm, const char *, int, MPI_Info, int *);

static int warned_refused;

/* Opens with iotuner's hints; refused on every rank, opens again with the application's own info (a
 * partial failure is the application's: ranks agree first, so nobody waits on a retry alone). */
static int open_with_hints(file_fn real, iot_phase *ph, MPI_Comm comm, const char *path, int mode, MPI_Info info,
                           MPI_Info mine, int *ncid, const iot_setting **hints, size_t n)
{
    iot_phase_set_opening(ph);
    int rc = real(comm, path, mode, mine, ncid);
    iot_phase_set_opening(NULL);
    int ok = rc == NC_NOERR, any_ok = ok;
    iot_pmpi.Allreduce(&ok, &any_ok, 1, MPI_INT, MPI_MAX, comm);
    if (any_ok)
        return rc;
    char why[320];
    snprintf(why, sizeof why, "PnetCDF refused to open the file with iotuner's hints (%.160s); opened with the "
             "application's own", pnc.strerror(rc));
    iot_phase_set_opening(ph); /* the retry's I/O is the application's: the phase's */
    rc = real(comm, path, mode, info, ncid);
    iot_phase_set_opening(NULL);
    for (size_t i = 0; i < n; i++)
        iot_phase_check(ph, "pnetcdf", hints[i]->name, NULL, hints[i]->text, NULL, IOT_STATUS_FAILED, why);
    ph->retried = 1;
    if (rc == NC_NOERR)
        iot_warn_once(&warned_refused, "%s of %s failed with iotuner's hints; opened with the application's own "
                      "(the report lists them)", ph->created ? "ncmpi_create" : "ncmpi_open", ph->path);
    return rc;
}

static int file_phase(file_fn real, int create, MPI_Comm comm, const char *path, int mode, MPI_Info info,
                      int *ncid)
{
    if (!iot_active() || !path || !ncid || !iot_pmpi_resolve() || !pnc_resolve())
        return real(comm, path, mode, info, ncid);
    iot_mpi_note_rank(); /* MPI_Init may have gone around us (Fortran's) */
    iot_warn_settings_once();
    iot_phase *ph = iot_phase_begin(IOT_KIND_PNETCDF, path, create);
    if (!ph)
        return real(comm, path, mode, info, ncid);
    iot_state_used(IOT_KIND_PNETCDF);
    uint64_t group;
    int size, crank;
    iot_comm_group(comm, &group, &size, &crank);
    iot_phase_set_group(ph, group, size, crank);
    int64_t sig[2] = {iot_wanted(IOT_EVENT_PHASE_BEGIN) || iot_wanted(IOT_EVENT_CALL)
                          ? (int64_t)iot_identity(ph->path, NULL, 0) : 0, mode};
    iot_call opening = {create ? IOT_SIG_NCMPI_CREATE : IOT_SIG_NCMPI_OPEN, sig, 2, -1};
    iot_opened_on on = {comm, size};

    const iot_setting *hints[16];
    MPI_Info mine;
    iot_internal++;
    iot_phase_announce(ph, &opening, iot_comm_duplicate, &on); /* a settings source decides for the phase now */
    record_application_hints(ph, info);
    size_t n = iot_info_with(info, hints, iot_resolve(ph, NULL, IOT_LAYER_PNETCDF, hints, 16), &mine);
    iot_phase_file_open(ph, create, create && !(mode & NC_NOCLOBBER));
    iot_internal--;

    int rc;
    if (n) {
        rc = open_with_hints(real, ph, comm, path, mode, info, mine, ncid, hints, n);
    } else {
        iot_phase_set_opening(ph); /* PnetCDF's MPI_File_open joins the phase */
        rc = real(comm, path, mode, info, ncid);
        iot_phase_set_opening(NULL);
    }
    if (mine != MPI_INFO_NULL)
        iot_pmpi.Info_free(&mine);
    if (rc != NC_NOERR) {
        iot_phase_abort(ph);
        return rc;
    }
    iot_phase_set_handle(ph, *ncid);
    pnc_file *f = file_put(*ncid, ph, create);
    if (f && !create) { /* an existing file: its hints are what they will be (its layout is the file's) */
        iot_internal++;
        verify_hints(f);
        iot_internal--;
    }
    return rc;
}

int iot_wrap_ncmpi_create(MPI_Comm comm, const char *path, int cmode, MPI_Info info, int *ncidp)
{
    static file_fn real;
    PNC_REAL(real, "ncmpi_create")
    return file_phase(real, 1, comm, path, cmode, info, ncidp);
}

int iot_wrap_ncmpi_open(MPI_Comm comm, const char *path, int omode, MPI_Info info, int *ncidp)
{
    static file_fn real;
    PNC_REAL(real, "ncmpi_open")
    return file_phase(real, 0, comm, path, omode, info, ncidp);
}

static inline pnc_file *tracked(int ncid)
{
    return iot_active() ? file_of(ncid) : NULL;
}

/* Leaving define mode fixes the variables' layout: the hints that decide it can be read back now. */
static int defined(pnc_file *f, int rc)
{
    if (f && rc == NC_NOERR) {
        iot_event_call(f->ph, IOT_SIG_NCMPI_ENDDEF, NULL, 0);
        f->defined = 1;
        iot_internal++;
        verify_hints(f);
        iot_internal--;
    }
    return rc;
}

IOT_EXPORT int ncmpi_enddef(int ncid)
{
    static int (*real)(int);
    PNC_REAL(real, "ncmpi_enddef")
    pnc_file *f = tracked(ncid);
    return defined(f, real(ncid));
}

IOT_EXPORT int ncmpi__enddef(int ncid, MPI_Offset h_minfree, MPI_Offset v_align, MPI_Offset v_minfree,
                             MPI_Offset r_align)
{
    static int (*real)(int, MPI_Offset, MPI_Offset, MPI_Offset, MPI_Offset);
    PNC_REAL(real, "ncmpi__enddef")
    pnc_file *f = tracked(ncid);
    return defined(f, real(ncid, h_minfree, v_align, v_minfree, r_align));
}

/* PnetCDF opens its independent MPI file handle here, once (on MPI_COMM_SELF): it joins the file's phase. */
IOT_EXPORT int ncmpi_begin_indep_data(int ncid)
{
    static int (*real)(int);
    PNC_REAL(real, "ncmpi_begin_indep_data")
    pnc_file *f = tracked(ncid);
    if (!f)
        return real(ncid);
    iot_phase_set_opening(f->ph);
    int rc = real(ncid);
    iot_phase_set_opening(NULL);
    return rc;
}

IOT_EXPORT int ncmpi_close(int ncid)
{
    static int (*real)(int);
    PNC_REAL(real, "ncmpi_close")
    pnc_file *f = tracked(ncid);
    if (!f)
        return real(ncid);
    iot_event_call(f->ph, IOT_SIG_NCMPI_CLOSE, NULL, 0);
    if (!f->verified) { /* closed in define mode, or nothing to read back: what PnetCDF holds now */
        iot_internal++;
        verify_hints(f);
        iot_internal--;
    }
    iot_phase *ph = f->ph;
    /* the close may write (the header, pending records): still the phase's */
    int rc = real(ncid);
    file_drop(f);
    iot_phase_end(ph);
    return rc;
}

/* ---- data calls ---- */

enum { OP_put, OP_get, OP_iput, OP_iget, OP_bput };

typedef struct {
    pnc_file *f;
    int varid, write, posted;
    var_info var;
    uint64_t bytes;
    unsigned weight;
    uint64_t t0;
} data_call;

/* A nested call (PnetCDF's Fortran and C++ bindings call the C API) is measured once, at the outer one. */
static IOT_TLS int in_data_call;

static inline int data_begin(data_call *c, int ncid, int varid, int op)
{
    if (in_data_call || !(c->f = tracked(ncid)))
        return 0;
    c->varid = varid;
    c->write = op == OP_put || op == OP_iput || op == OP_bput;
    c->posted = op == OP_iput || op == OP_iget || op == OP_bput;
    c->var = variable(c->f, varid);
    c->bytes = 0;
    in_data_call = 1;
    return 1;
}

/* Elements of the whole variable: its dimensions' lengths now (a record variable's records so far). */
static uint64_t whole_elements(const data_call *c)
{
    int dims[IOT_MAX_DIMS];
    uint64_t n = 1;
    if (c->var.ndims < 0 || c->var.ndims > IOT_MAX_DIMS)
        return 0;
    iot_internal++;
    if (pnc.inq_vardimid(c->f->ncid, c->varid, dims) != NC_NOERR)
        n = 0;
    for (int i = 0; n && i < c->var.ndims; i++) {
        MPI_Offset len = 0;
        n = pnc.inq_dimlen(c->f->ncid, dims[i], &len) == NC_NOERR && len > 0 ? n * (uint64_t)len : 0;
    }
    iot_internal--;
    return n;
}

static uint64_t box_elements(const data_call *c, const MPI_Offset *count)
{
    uint64_t n = 1;
    if (!count || c->var.ndims < 0)
        return 0;
    for (int i = 0; i < c->var.ndims; i++)
        n *= count[i] > 0 ? (uint64_t)count[i] : 0;
    return n;
}

/* varn: its boxes (without counts, one element each) */
static uint64_t list_elements(const data_call *c, int num, MPI_Offset *const *counts)
{
    uint64_t n = 0;
    for (int j = 0; j < num; j++)
        n += counts && counts[j] ? box_elements(c, counts[j]) : 1;
    return n;
}

/* The flexible API's buffer: bufcount MPI datatypes; bufcount -1: the request's elements of a predefined
 * type; MPI_DATATYPE_NULL: the variable's own type. */
static uint64_t flexible_bytes(const data_call *c, uint64_t elements, MPI_Offset bufcount, MPI_Datatype buftype)
{
    int size = 0;
    if (buftype == MPI_DATATYPE_NULL)
        return elements * (uint64_t)c->var.size;
    if (iot_pmpi.Type_size(buftype, &size) != MPI_SUCCESS || size <= 0)
        return 0;
    return (bufcount < 0 ? elements : (uint64_t)bufcount) * (uint64_t)size;
}

static inline void data_enter(data_call *c)
{
    if (iot_wanted(IOT_EVENT_CALL)) {
        int64_t sig[1] = {(int64_t)c->bytes};
        const char *name = c->posted ? (c->write ? IOT_SIG_NCMPI_IPUT : IOT_SIG_NCMPI_IGET)
                                     : (c->write ? IOT_SIG_NCMPI_PUT : IOT_SIG_NCMPI_GET);
        iot_event_call(c->f->ph, name, sig, 1);
    }
    c->weight = iot_level_begin(c->f->ph, IOT_LEVEL_PNETCDF, c->bytes, c->write);
    c->t0 = c->weight && !c->posted ? iot_ticks() : 0;
}

/* Blocking: bytes and time. Posted: bytes now, the time at the wait that completes the request. */
static inline void data_end(data_call *c, int rc, const int *req)
{
    in_data_call = 0;
    uint64_t bytes = rc == NC_NOERR ? c->bytes : 0;
    if (!c->posted) {
        iot_level_end(c->f->ph, IOT_LEVEL_PNETCDF, bytes, c->weight ? iot_ticks() - c->t0 : 0, c->weight, c->write);
        return;
    }
    iot_level_end(c->f->ph, IOT_LEVEL_PNETCDF, bytes, 0, 0, c->write);
    if (bytes && req && *req != NC_REQ_NULL)
        request_put(c->f, *req, c->write, bytes);
}

#define ELEMENTS_var whole_elements(&c)
#define ELEMENTS_var1 1
#define ELEMENTS_vara box_elements(&c, count)
#define ELEMENTS_vars box_elements(&c, count)
#define ELEMENTS_varm box_elements(&c, count)
#define ELEMENTS_varn list_elements(&c, num, counts)
/* typed: the elements in the file's type; flexible: the buffer's datatypes */
#define BYTES_TYPED(elements) (elements) * (uint64_t)c.var.size
#define BYTES_FLEX(elements) flexible_bytes(&c, (elements), bufcount, buftype)
#define REQUEST_put NULL
#define REQUEST_get NULL
#define REQUEST_iput req
#define REQUEST_iget req
#define REQUEST_bput req
/* typed calls are exported as themselves; flexible ones (an MPI_Datatype) are reached through trampolines */
#define WRAPPER_TYPED(ret, name) IOT_EXPORT ret name
#define WRAPPER_FLEX(ret, name) ret iot_wrap_##name

#define DATA_CALL(ret, name, params, args, op, shape, collective, buffer)                                      \
    WRAPPER_##buffer(ret, name) params                                                                         \
    {                                                                                                          \
        static ret(*real) params;                                                                              \
        PNC_REAL(real, #name)                                                                                  \
        data_call c;                                                                                           \
        if (!data_begin(&c, ncid, varid, OP_##op))                                                             \
            return real args;                                                                                  \
        c.bytes = BYTES_##buffer(ELEMENTS_##shape);                                                            \
        data_enter(&c);                                                                                        \
        ret rc = real args;                                                                                    \
        data_end(&c, rc, REQUEST_##op);                                                                        \
        return rc;                                                                                             \
    }

IOT_PNETCDF_DATA_CALLS(DATA_CALL, DATA_CALL)

/* The wait that completes requests: their I/O happens here, timed and split between writing and reading by
 * the bytes each direction had pending. */
static int wait_call(int (*real)(int, int, int *, int *), int ncid, int count, int *reqs, int *statuses)
{
    pnc_file *f = tracked(ncid);
    if (!f)
        return real(ncid, count, reqs, statuses);
    uint64_t bytes[2];
    requests_take(f, count, reqs, bytes); /* before the call: it resets completed ids to NC_REQ_NULL */
    iot_event_call(f->ph, IOT_SIG_NCMPI_WAIT, NULL, 0);
    uint64_t t0 = iot_ticks();
    int rc = real(ncid, count, reqs, statuses);
    uint64_t dt = iot_ticks() - t0, total = bytes[0] + bytes[1];
    for (int w = 0; w < 2 && total; w++)
        if (bytes[w])
            iot_level_end(f->ph, IOT_LEVEL_PNETCDF, 0, (uint64_t)((double)dt * (double)bytes[w] / (double)total),
                          1, w);
    return rc;
}

IOT_EXPORT int ncmpi_wait(int ncid, int count, int array_of_requests[], int array_of_statuses[])
{
    static int (*real)(int, int, int *, int *);
    PNC_REAL(real, "ncmpi_wait")
    return wait_call(real, ncid, count, array_of_requests, array_of_statuses);
}

IOT_EXPORT int ncmpi_wait_all(int ncid, int count, int array_of_requests[], int array_of_statuses[])
{
    static int (*real)(int, int, int *, int *);
    PNC_REAL(real, "ncmpi_wait_all")
    return wait_call(real, ncid, count, array_of_requests, array_of_statuses);
}

/* ---- the module ---- */

static void pnetcdf_record(const iot_phase *ph, iot_record *r)
{
    iot_level_record(ph, IOT_LEVEL_PNETCDF, &r->level[IOT_LEVEL_PNETCDF]);
}

static void pnetcdf_report(const iot_report_ctx *ctx)
{
    iotuner_report_version(ctx, IOT_SECTION_PNETCDF_VERSION); /* its section: phases[].pnetcdf */
}

static const iot_module pnetcdf_module = {.name = "pnetcdf", .record = pnetcdf_record, .report = pnetcdf_report};
IOT_MODULE(pnetcdf_module)
