/* MPI-IO module: hints on every MPI_File_open (pure MPI-IO programs and
 * HDF5's own opens), read back and explained, and never at the cost of the
 * open (a refused open is retried with the application's own hints); the
 * application's bytes of every data call (IOT_MPI_DATA_CALLS). A layer: it
 * begins and ends the phases of the files a program opens with MPI-IO, and
 * tells the modules of their calls and data calls (module.h's events). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iotuner/calls.h"
#include "iotuner/handles.h"
#include "iotuner/signature.h"
#include "abi.h"
#include "comm.h"
#include "mca.h"
#include "module.h"
#include "phases.h"
#include "pmpi.h"
#include "view.h"

/* ---- open files -> phase: the shared handle table ---- */

/* An open file, its phase, and its view: explicit offsets count in etypes
 * from where the view's filetype begins (HDF5's collective writes put the
 * dataset's address in the displacement, the selection's place in the
 * filetype, and write at offset 0). */
typedef struct open_file {
    MPI_File fh;
    iot_phase *ph;
    int64_t disp, etype_size;
    iot_view *view; /* flattened for the access pattern; NULL: the default view */
} open_file;

static iot_handles files = IOT_HANDLES_INIT;
/* a copy of the last file this thread used: repeated calls skip the lock while no file closed or changed its
 * view anywhere (the table's generation) */
static IOT_TLS open_file cached_file;
static IOT_TLS uint64_t cached_generation;
/* a file's views kept: the current one and the last replaced ones, which a data call in another thread may
 * still be reading (HDF5 sets a view for every collective H5Dwrite: keeping all would grow without bound) */
#define VIEWS_KEPT 4

static void file_put(MPI_File fh, iot_phase *ph)
{
    open_file *f = malloc(sizeof *f);
    if (!f)
        return;
    *f = (open_file){fh, ph, 0, 1, NULL};
    if (iot_handles_put(&files, IOT_HANDLE_PTR(fh), f))
        free(f); /* no room: the file goes untracked */
}

typedef struct {
    int64_t disp, etype_size;
    iot_view *view; /* taken by the file: NULL after */
} new_view;

static void replace_view(void *record, void *arg)
{
    open_file *f = record;
    new_view *v = arg;
    f->disp = v->disp;
    f->etype_size = v->etype_size > 0 ? v->etype_size : 1;
    if (v->view && !iot_view_same(v->view, f->view)) {
        v->view->older = f->view;
        f->view = v->view;
        v->view = NULL;
        iot_view *last = f->view;
        for (int k = 1; k < VIEWS_KEPT && last->older; k++)
            last = last->older;
        iot_view_free(last->older);
        last->older = NULL;
    }
}

static void file_set_view(MPI_File fh, int64_t disp, int64_t etype_size, iot_view *view)
{
    new_view v = {disp, etype_size, view};
    iot_handles_update(&files, IOT_HANDLE_PTR(fh), replace_view, &v);
    iot_view_free(v.view);
}

static void file_drop(MPI_File fh)
{
    open_file *f = iot_handles_take(&files, IOT_HANDLE_PTR(fh));
    if (f) {
        iot_view_free(f->view);
        free(f);
    }
}

static inline const open_file *file_of(MPI_File fh)
{
    uint64_t gen = iot_handles_generation(&files);
    if (fh == cached_file.fh && fh != MPI_FILE_NULL && cached_generation == gen)
        return &cached_file;
    cached_generation = gen;
    if (iot_handles_read(&files, IOT_HANDLE_PTR(fh), &cached_file, sizeof cached_file))
        return &cached_file;
    cached_file.fh = MPI_FILE_NULL;
    return NULL;
}

static inline iot_phase *file_phase(MPI_File fh)
{
    const open_file *f = file_of(fh);
    return f ? f->ph : NULL;
}

/* ---- hints ---- */

static const char *driver_from_info(const char *fstype, char *out, size_t outlen)
{
    /* ROMIO reports e.g. "UFS: Generic ROMIO driver for all UNIX-like file systems" */
    size_t n = 0;
    while (fstype[n] && fstype[n] != ':' && n + 1 < outlen) {
        char c = fstype[n];
        out[n++] = (char)(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    }
    out[n] = 0;
    return out;
}

/* Reads the hints back from the opened file and explains every difference. */
static void verify_hints(iot_phase *ph, MPI_Comm comm, MPI_File fh, const iot_setting **req, size_t n)
{
    MPI_Info eff;
    if (iot_pmpi.File_get_info(fh, &eff) != MPI_SUCCESS)
        return;
    int nkeys = 0;
    iot_pmpi.Info_get_nkeys(eff, &nkeys);
    iot_buf b;
    iot_buf_init(&b);
    iot_jw_begin_object(&b, NULL);
    for (int i = 0; i < nkeys; i++) {
        char key[MPI_MAX_INFO_KEY + 1], val[MPI_MAX_INFO_VAL + 1];
        if (iot_pmpi.Info_get_nthkey(eff, i, key) != MPI_SUCCESS)
            continue;
        if (iot_info_value(eff, key, val, sizeof val))
            iot_jw_string(&b, key, val);
    }
    iot_jw_end_object(&b);
    iot_phase_set_hints(ph, iot_buf_take(&b));

    char fstype[256], cb_list[256];
#if defined(OPEN_MPI)
    /* Open MPI hands back the info it was given, whatever its io component made of it: the component says */
    const char *component = iot_mca_io_component();
    int ompio = component && !strcmp(component, "ompio");
    /* Open MPI 5.0's romio341 copies MPI_File_open's info into a local it then drops (io_romio341_file_open.c),
     * so ROMIO opens with none of it; MPI_File_get_info asks ROMIO, which reads back its defaults */
    int romio_without_open_info = component && !strcmp(component, "romio341");
#endif
    if (iot_info_value(eff, "romio_filesystem_type", fstype, sizeof fstype))
        driver_from_info(fstype, ph->mpiio_driver, sizeof ph->mpiio_driver);
    else
        snprintf(ph->mpiio_driver, sizeof ph->mpiio_driver, "%s", ph->file_system);
    int have_list = iot_info_value(eff, "cb_config_list", cb_list, sizeof cb_list);
    int nprocs = 1, nnodes = -1;
    iot_pmpi.Comm_size(comm, &nprocs);
    for (size_t i = 0; i < n; i++) {
        char val[MPI_MAX_INFO_VAL + 1], why[512];
        int found = iot_info_value(eff, req[i]->name, val, sizeof val);
        /* every rank sees the same hints, so this collective is taken by all or none */
        if (req[i]->knob >= 0 && iot_catalogue[req[i]->knob].capped_by_nodes && found && strcmp(val, req[i]->text) &&
            nnodes < 0)
            nnodes = iot_mpi_count_nodes(comm);
        iot_status st = iot_explain_hint(req[i]->name, req[i]->text, found ? val : NULL, ph->mpiio_driver,
                                         nnodes > 0 ? nnodes : iot_g.nnodes, nprocs, have_list ? cb_list : NULL,
                                         why, sizeof why);
#if defined(OPEN_MPI)
        if (ompio)
            st = iot_explain_ompio_hint(req[i]->name, ph->mpiio_driver, why, sizeof why);
        else if (romio_without_open_info && st != IOT_STATUS_APPLIED) {
            st = IOT_STATUS_DROPPED;
            snprintf(why, sizeof why,
                     "not passed on by Open MPI 5's %s, which opens the file with an empty info: ROMIO keeps its "
                     "own value (use OMPIO, Open MPI's default io component)",
                     component);
        }
#endif
        iot_phase_check(ph, "mpiio", req[i]->name, NULL, req[i]->text, found ? val : NULL, st, why);
    }
    iot_pmpi.Info_free(&eff);
}

/* OMPIO's knobs are MCA parameters Open MPI read at MPI_Init from the environment (`iotuner run` sets
 * OMPI_MCA_<mca>): read back through MPI_T for each phase they apply to. */
static void verify_ompio(iot_phase *ph)
{
    const iot_setting *s[16];
    size_t n = iot_resolve(ph, NULL, IOT_LAYER_OMPIO, s, 16);
    for (size_t i = 0; i < n; i++) {
        const char *mca = s[i]->knob >= 0 ? iot_catalogue[s[i]->knob].mca : NULL;
        char val[256] = "", why[256] = "";
        iot_status st = IOT_STATUS_NOT_APPLICABLE;
#if defined(OPEN_MPI)
        const char *component = iot_mca_io_component();
        if (component && strcmp(component, "ompio") != 0) {
            snprintf(why, sizeof why, "files are opened by Open MPI's %s, not OMPIO", component);
        } else if (!mca || !iot_mca_read(mca, val, sizeof val)) {
            snprintf(why, sizeof why, "this Open MPI has no MCA parameter %s", mca ? mca : s[i]->name);
            st = IOT_STATUS_DROPPED;
        } else if (!strcmp(val, s[i]->text)) {
            st = IOT_STATUS_APPLIED;
        } else {
            snprintf(why, sizeof why, "Open MPI reports %s=%.64s: set OMPI_MCA_%s in the job's environment before "
                     "MPI_Init (iotuner run does)", mca, val, mca);
            st = IOT_STATUS_CHANGED;
        }
#else
        (void)mca;
        snprintf(why, sizeof why, "an Open MPI (OMPIO) parameter; this job's MPI-IO is ROMIO");
#endif
        iot_phase_check(ph, "ompio", s[i]->name, NULL, s[i]->text, val[0] ? val : NULL, st, why);
    }
}

/* The hints the application itself gave (HDF5's, for an HDF5 file: the file-access list's info). */
static void record_application_info(iot_phase *ph, MPI_Info info)
{
    int nkeys = 0;
    if (info == MPI_INFO_NULL || iot_pmpi.Info_get_nkeys(info, &nkeys) != MPI_SUCCESS)
        return;
    for (int i = 0; i < nkeys; i++) {
        char key[MPI_MAX_INFO_KEY + 1], val[MPI_MAX_INFO_VAL + 1];
        /* PnetCDF passes its own hints (nc_*, pnetcdf_*) on in the info: not the MPI library's */
        if (iot_pmpi.Info_get_nthkey(info, i, key) == MPI_SUCCESS && strncmp(key, "nc_", 3) &&
            strncmp(key, "pnetcdf_", 8) && iot_info_value(info, key, val, sizeof val))
            iot_phase_app_setting(ph, IOT_LAYER_MPIIO, key, val);
    }
}

static int warned_refused;

typedef int (*file_open_fn)(MPI_Comm, const char *, int, MPI_Info, MPI_File *);

/* Opens with iotuner's hints; if the MPI library refuses them, every rank of comm opens again with the
 * application's own info. Our attempt never aborts the job: the application's file error handler (it may
 * be fatal) is put back only for the application's own open. */
static int open_with_hints(file_open_fn real, iot_phase *ph, MPI_Comm comm, const char *filename, int amode,
                           MPI_Info info, MPI_Info mine, MPI_File *fh, const iot_setting **hints, size_t n)
{
    MPI_Errhandler app = MPI_ERRHANDLER_NULL;
    int have = iot_pmpi.File_get_errhandler(MPI_FILE_NULL, &app) == MPI_SUCCESS;
    if (have)
        iot_pmpi.File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
    int rc = real(comm, filename, amode, mine, fh);
    if (have) {
        iot_pmpi.File_set_errhandler(MPI_FILE_NULL, app);
        iot_pmpi.Errhandler_free(&app);
    }
    /* ROMIO fails an open on all ranks or none; agreeing first keeps a partial failure from hanging */
    int ok = rc == MPI_SUCCESS, all_ok = ok, any_ok = ok;
    iot_pmpi.Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, comm);
    iot_pmpi.Allreduce(&ok, &any_ok, 1, MPI_INT, MPI_MAX, comm);
    if (all_ok || any_ok)
        return rc;
    char text[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    iot_pmpi.Error_string(rc, text, &len);
    /* MPICH: "Other I/O error , error stack:\nADIO_OPEN(219): cb_config_list: No aggregators match": the cause */
    char *err = text, *line;
    for (char *save = NULL, *p = strtok_r(text, "\n", &save); p; p = strtok_r(NULL, "\n", &save))
        if (*(line = p + strspn(p, " \t")))
            err = line;
    rc = real(comm, filename, amode, info, fh); /* the application's own open: its errors are its own */
    char why[400];
    snprintf(why, sizeof why, "the MPI library refused to open the file with iotuner's hints (%.200s); opened "
             "with the application's own", err);
    for (size_t i = 0; i < n; i++)
        iot_phase_check(ph, "mpiio", hints[i]->name, NULL, hints[i]->text, NULL, IOT_STATUS_FAILED, why);
    ph->retried = 1;
    iot_warn_once(&warned_refused, "MPI_File_open of %s failed with iotuner's hints (%.200s); opened with the "
                  "application's own (so is any file the MPI library refuses; the report lists them)", ph->path, err);
    return rc;
}

static int file_open(file_open_fn real, MPI_Comm comm, const char *filename, int amode, MPI_Info info,
                     MPI_File *fh)
{
    if (!iot_active() || !iot_pmpi_resolve())
        return real(comm, filename, amode, info, fh);
    iot_mpi_note_rank(); /* MPI_Init may have gone around us (Fortran's) */
    iot_warn_settings_once();

    iot_phase *ph = iot_phase_opening(); /* HDF5's and PnetCDF's own opens belong to their file phase */
    int own = (ph == NULL);
    if (own) {
        ph = iot_phase_begin(IOT_KIND_MPIIO, filename, (amode & MPI_MODE_CREATE) != 0);
        iot_state_used(IOT_KIND_MPIIO);
    }
    if (!ph)
        return real(comm, filename, amode, info, fh);
    uint64_t group;
    int size, crank;
    iot_comm_group(comm, &group, &size, &crank);
    iot_phase_set_group(ph, group, size, crank); /* a no-op when HDF5's phase is keyed already */
    int64_t sig[3] = {0, amode, size};
    iot_call opening = {IOT_SIG_MPI_FILE_OPEN, sig, 3, -1};
    if (iot_wanted(IOT_EVENT_PHASE_BEGIN) || iot_wanted(IOT_EVENT_CALL))
        sig[0] = (int64_t)iot_identity(ph->path, NULL, 0);
    iot_opened_on on = {comm, size};

    const iot_setting *hints[128];
    iot_internal++;
    if (own) /* the modules hear of the phase first: a settings source decides for it now */
        iot_phase_announce(ph, &opening, iot_comm_duplicate, &on);
    else if (iot_wanted(IOT_EVENT_CALL))
        iot_emit_call(ph, &opening);
    record_application_info(ph, info);
    size_t n = iot_resolve(ph, NULL, IOT_LAYER_MPIIO, hints, 128);
    MPI_Info mine;
    n = iot_info_with(info, hints, n, &mine);
    if (own)
        iot_phase_file_open(ph, (amode & MPI_MODE_CREATE) != 0, 0);
    iot_internal--;
    int rc = n ? open_with_hints(real, ph, comm, filename, amode, info, mine, fh, hints, n)
               : real(comm, filename, amode, info, fh);
    if (rc == MPI_SUCCESS) {
        if (own)
            iot_phase_set_handle(ph, (int64_t)(intptr_t)*fh);
        file_put(*fh, ph);
        /* a run that only measures reads the hints back too: the site's and ROMIO's; once per phase (PnetCDF
         * opens a second handle on MPI_COMM_SELF for independent data mode) */
        if (!ph->retried && (own || !ph->mpi_hints_json)) {
            iot_internal++;
            verify_hints(ph, comm, *fh, hints, n);
            verify_ompio(ph);
            iot_internal--;
        }
    } else if (own) {
        iot_phase_abort(ph);
    }
    if (mine != MPI_INFO_NULL)
        iot_pmpi.Info_free(&mine);
    return rc;
}

/* Each MPI-IO wrapper under both names (abi.h): the outermost of nested ones measures (iot_mpi_depth). */
#define OUTERMOST(real, args, measured)                                                                        \
    do {                                                                                                       \
        if (iot_mpi_depth)                                                                                     \
            return real args;                                                                                  \
        iot_mpi_depth++;                                                                                       \
        int rc_ = measured;                                                                                    \
        iot_mpi_depth--;                                                                                       \
        return rc_;                                                                                            \
    } while (0)

#define FILE_OPEN_WRAPPER(wrapper, realname)                                                                   \
    int wrapper(MPI_Comm comm, const char *filename, int amode, MPI_Info info, MPI_File *fh)                  \
    {                                                                                                          \
        static file_open_fn real;                                                                              \
        IOT_REAL(real, realname);                                                                              \
        OUTERMOST(real, (comm, filename, amode, info, fh), file_open(real, comm, filename, amode, info, fh));  \
    }
FILE_OPEN_WRAPPER(iot_wrap_MPI_File_open, "MPI_File_open")
FILE_OPEN_WRAPPER(iot_wrap_PMPI_File_open, "PMPI_File_open")

typedef int (*file_close_fn)(MPI_File *);

static int file_close(file_close_fn real, MPI_File *fh)
{
    iot_phase *ph = NULL;
    if (fh) {
        if (iot_wanted(IOT_EVENT_CALL) && iot_active())
            iot_event_call(file_phase(*fh), IOT_SIG_MPI_FILE_CLOSE, NULL, 0);
        file_drop(*fh);
        if (iot_active())
            ph = iot_phase_find_handle(IOT_KIND_MPIIO, (int64_t)(intptr_t)*fh);
    }
    int rc = real(fh);
    if (ph)
        iot_phase_end(ph);
    return rc;
}

#define FILE_CLOSE_WRAPPER(wrapper, realname)                                                                  \
    int wrapper(MPI_File *fh)                                                                                  \
    {                                                                                                          \
        static file_close_fn real;                                                                             \
        IOT_REAL(real, realname);                                                                              \
        OUTERMOST(real, (fh), file_close(real, fh));                                                           \
    }
FILE_CLOSE_WRAPPER(iot_wrap_MPI_File_close, "MPI_File_close")
FILE_CLOSE_WRAPPER(iot_wrap_PMPI_File_close, "PMPI_File_close")

/* ---- data calls: the application's bytes ---- */

static inline uint64_t data_bytes(int count, MPI_Datatype type)
{
    int size = 0;
    if (count <= 0 || iot_pmpi.Type_size(type, &size) != MPI_SUCCESS || size <= 0)
        return 0;
    return (uint64_t)count * (uint64_t)size;
}

/* Where a data call accesses the file, in etypes of the view: the explicit
 * offset of the _at calls, the individual file pointer of the others (a local
 * query, made only when a module asks: iot_data_offset), unknown for the
 * shared pointer. */
enum { AT_OFFSET, AT_POINTER, AT_SHARED };
#define OFFSET_ARG_OFFSET offset
#define OFFSET_ARG_POINTER 0
#define OFFSET_ARG_SHARED 0

typedef struct {
    MPI_File fh;
    int where, asked, known;
    MPI_Offset offset;
} data_place;

static int data_offset(iot_data *d, int64_t *out)
{
    data_place *p = d->layer;
    if (!p->asked) { /* once per call, whoever asks */
        p->asked = 1;
        p->known = p->where == AT_OFFSET ||
                   (p->where == AT_POINTER && iot_pmpi.File_get_position(p->fh, &p->offset) == MPI_SUCCESS);
    }
    *out = (int64_t)p->offset;
    return p->known;
}

/* Blocking calls are timed; nonblocking ones count their bytes when started.
 * The modules hear of the call when it is entered (a data event), before the
 * MPI library's own calls it makes. */
#define DATA_CALL_AS(wrapper, realname, name, is_write, collective, where, timed, params, args)             \
    int wrapper params                                                                                       \
    {                                                                                                        \
        static int(*real) params;                                                                            \
        IOT_REAL(real, realname);                                                                            \
        const open_file *f = iot_mpi_depth ? NULL : file_of(fh);                                             \
        if (!f)                                                                                              \
            return real args;                                                                                \
        iot_mpi_depth++;                                                                                     \
        iot_phase *ph = f->ph;                                                                               \
        uint64_t bytes = data_bytes(count, datatype);                                                        \
        unsigned w = iot_level_begin(ph, IOT_LEVEL_MPIIO, bytes, is_write);                                  \
        if (iot_wanted(IOT_EVENT_DATA)) {                                                                    \
            data_place place = {fh, AT_##where, 0, 0, OFFSET_ARG_##where};                                   \
            iot_data d = {#name, bytes, is_write, collective, AT_##where == AT_OFFSET, f->view, f->disp,     \
                          f->etype_size, data_offset, &place};                                               \
            iot_emit_data(ph, &d);                                                                           \
        }                                                                                                    \
        w = (timed) ? w : 0;                                                                                 \
        uint64_t t0 = w ? iot_ticks() : 0;                                                                   \
        if (iot_g.count_ops)                                                                                 \
            iot_op_phase = ph;                                                                               \
        int rc = real args;                                                                                  \
        iot_op_phase = NULL;                                                                                 \
        iot_level_end(ph, IOT_LEVEL_MPIIO, rc == MPI_SUCCESS ? bytes : 0, w ? iot_ticks() - t0 : 0, w, is_write); \
        iot_mpi_depth--;                                                                                     \
        return rc;                                                                                           \
    }
/* the MPI_ name's data event keeps its name under both entries */
#define DATA_CALL(name, ...) DATA_CALL_AS(iot_wrap_##name, #name, name, __VA_ARGS__)
#define PDATA_CALL(name, ...) DATA_CALL_AS(iot_wrap_P##name, "P" #name, name, __VA_ARGS__)

IOT_MPI_DATA_CALLS(DATA_CALL)
IOT_MPI_DATA_CALLS(PDATA_CALL)

typedef int (*set_view_fn)(MPI_File, MPI_Offset, MPI_Datatype, MPI_Datatype, const char *, MPI_Info);

static int set_view(set_view_fn real, MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
                    const char *datarep, MPI_Info info)
{
    int rc = real(fh, disp, etype, filetype, datarep, info);
    if (rc == MPI_SUCCESS && file_of(fh)) {
        int size = 1;
        MPI_Aint lb = 0, extent = 0;
        iot_pmpi.Type_size(etype, &size);
        if (iot_pmpi.Type_get_true_extent(filetype, &lb, &extent) != MPI_SUCCESS)
            lb = 0;
        iot_internal++;
        iot_view *view = iot_view_new((int64_t)disp, etype, filetype);
        iot_internal--;
        file_set_view(fh, (int64_t)disp + (int64_t)lb, size, view);
    }
    return rc;
}

#define SET_VIEW_WRAPPER(wrapper, realname)                                                                    \
    int wrapper(MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype, const char *datarep,  \
                MPI_Info info)                                                                                 \
    {                                                                                                          \
        static set_view_fn real;                                                                               \
        IOT_REAL(real, realname);                                                                              \
        OUTERMOST(real, (fh, disp, etype, filetype, datarep, info),                                           \
                  set_view(real, fh, disp, etype, filetype, datarep, info));                                   \
    }
SET_VIEW_WRAPPER(iot_wrap_MPI_File_set_view, "MPI_File_set_view")
SET_VIEW_WRAPPER(iot_wrap_PMPI_File_set_view, "PMPI_File_set_view")

/* ---- the module ---- */

static void mpiio_record(const iot_phase *ph, iot_record *r)
{
    iot_level_record(ph, IOT_LEVEL_MPIIO, &r->level[IOT_LEVEL_MPIIO]);
}

static void mpiio_report(const iot_report_ctx *ctx)
{
    iotuner_report_version(ctx, IOT_SECTION_MPIIO_VERSION); /* its section: phases[].mpiio */
}

static const iot_module mpiio_module = {.name = "mpiio", .record = mpiio_record, .report = mpiio_report};
IOT_MODULE(mpiio_module)
