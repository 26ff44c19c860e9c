/* MPI-IO interposition: hints on every MPI_File_open (for pure MPI-IO
 * programs and for HDF5's own opens), read back and explained; and the
 * application's data bytes of every MPI_File_write / read call. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iotuner/smart.h"
#include "pmpi.h"
#include "rt.h"

/* ---- open files -> phase ---- */

#define MAX_OPEN_FILES 4096

/* An open file, its phase, and its view: explicit offsets count in etypes
 * from where the view's filetype begins (HDF5's collective writes put the
 * dataset's address in the displacement, the selection's place in the
 * filetype, and write at offset 0). */
typedef struct {
    MPI_File fh;
    iot_phase *ph;
    int64_t disp, etype_size;
} open_file;

static open_file open_files[MAX_OPEN_FILES];
static int n_open_files;
static pthread_mutex_t files_lock = PTHREAD_MUTEX_INITIALIZER;
/* the last file this thread used: repeated calls skip the lock */
static IOT_TLS open_file cached_file;

static void file_put(MPI_File fh, iot_phase *ph)
{
    pthread_mutex_lock(&files_lock);
    if (n_open_files < MAX_OPEN_FILES)
        open_files[n_open_files++] = (open_file){fh, ph, 0, 1};
    pthread_mutex_unlock(&files_lock);
}

static void file_set_view(MPI_File fh, int64_t disp, int64_t etype_size)
{
    if (cached_file.fh == fh)
        cached_file.fh = MPI_FILE_NULL;
    pthread_mutex_lock(&files_lock);
    for (int i = 0; i < n_open_files; i++)
        if (open_files[i].fh == fh) {
            open_files[i].disp = disp;
            open_files[i].etype_size = etype_size > 0 ? etype_size : 1;
        }
    pthread_mutex_unlock(&files_lock);
}

static void file_drop(MPI_File fh)
{
    if (cached_file.fh == fh)
        cached_file.fh = MPI_FILE_NULL;
    pthread_mutex_lock(&files_lock);
    for (int i = 0; i < n_open_files; i++)
        if (open_files[i].fh == fh) {
            open_files[i] = open_files[--n_open_files];
            break;
        }
    pthread_mutex_unlock(&files_lock);
}

static inline const open_file *file_of(MPI_File fh)
{
    if (fh == cached_file.fh && fh != MPI_FILE_NULL)
        return &cached_file;
    int found = 0;
    pthread_mutex_lock(&files_lock);
    for (int i = 0; i < n_open_files; i++)
        if (open_files[i].fh == fh) {
            cached_file = open_files[i];
            found = 1;
            break;
        }
    pthread_mutex_unlock(&files_lock);
    return found ? &cached_file : NULL;
}

static inline iot_phase *file_phase(MPI_File fh)
{
    const open_file *f = file_of(fh);
    return f ? f->ph : NULL;
}

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

static int info_value(MPI_Info info, const char *key, char *out, int outlen)
{
    int flag = 0;
    iot_pmpi.Info_get(info, key, outlen - 1, out, &flag);
    return flag;
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
        if (info_value(eff, key, val, sizeof val))
            iot_jw_string(&b, key, val);
    }
    iot_jw_end_object(&b);
    iot_phase_set_hints(ph, iot_buf_take(&b));

    char fstype[256], cb_list[256];
    if (info_value(eff, "romio_filesystem_type", fstype, sizeof fstype))
        driver_from_info(fstype, ph->mpiio_driver, sizeof ph->mpiio_driver);
    else
        snprintf(ph->mpiio_driver, sizeof ph->mpiio_driver, "%s", ph->file_system);
    int have_list = info_value(eff, "cb_config_list", cb_list, sizeof cb_list);
    int nprocs = 1, nnodes = -1;
    iot_pmpi.Comm_size(comm, &nprocs);
    for (size_t i = 0; i < n; i++) {
        char val[MPI_MAX_INFO_VAL + 1], why[512];
        int found = info_value(eff, req[i]->name, val, sizeof val);
        /* every rank sees the same hints, so this collective is taken by all or none */
        if (!strcmp(req[i]->name, "cb_nodes") && found && strcmp(val, req[i]->text) && nnodes < 0)
            nnodes = iot_mpi_count_nodes(comm);
        iot_status st = iot_explain_hint(req[i]->name, req[i]->text, found ? val : NULL, ph->mpiio_driver,
                                         nnodes > 0 ? nnodes : iot_g.nnodes, nprocs, have_list ? cb_list : NULL,
                                         why, sizeof why);
        iot_phase_check(ph, "mpiio", req[i]->name, NULL, req[i]->text, found ? val : NULL, st, why);
    }
    iot_pmpi.Info_free(&eff);
}

IOT_EXPORT int MPI_File_open(MPI_Comm comm, const char *filename, int amode, MPI_Info info, MPI_File *fh)
{
    static int (*real)(MPI_Comm, const char *, int, MPI_Info, MPI_File *);
    IOT_REAL(real, "MPI_File_open");
    if (!iot_active() || !iot_pmpi_resolve())
        return real(comm, filename, amode, info, fh);
    if (!iot_g.mpi_initialized)
        iot_g.rank = iot_mpi_world_rank(); /* MPI_Init went around us (e.g. Fortran) */
    iot_warn_settings_once();

    iot_phase *ph = iot_h5_opening; /* HDF5's own open belongs to its file phase */
    int own = (ph == NULL);
    if (own) {
        ph = iot_phase_begin(IOT_KIND_MPIIO, filename, (amode & MPI_MODE_CREATE) != 0);
        iot_g.used_mpiio = 1;
    }
    if (!ph)
        return real(comm, filename, amode, info, fh);
    if (iot_smart_on) {
        int size = 1;
        iot_pmpi.Comm_size(comm, &size);
        int64_t sig[3] = {(int64_t)iot_identity(ph->path, NULL, 0), amode, size};
        MPI_Comm ours = MPI_COMM_NULL;
        if (own && size > 1 && iot_pmpi.Comm_dup(comm, &ours) != MPI_SUCCESS) /* collective, as the open is */
            ours = MPI_COMM_NULL;
        if (own)
            iot_smart_phase_begin(ph, IOT_SIG_MPI_FILE_OPEN, sig, 3, ours);
        else
            iot_smart_call(ph, IOT_SIG_MPI_FILE_OPEN, sig, 3, -1);
    }

    const iot_setting *hints[128];
    size_t n = iot_resolve(ph, NULL, IOT_LAYER_MPIIO, hints, 128);
    MPI_Info use = info, mine = MPI_INFO_NULL;
    if (n) {
        iot_internal++;
        int rc = info != MPI_INFO_NULL ? iot_pmpi.Info_dup(info, &mine) : iot_pmpi.Info_create(&mine);
        if (rc == MPI_SUCCESS) {
            for (size_t i = 0; i < n; i++)
                iot_pmpi.Info_set(mine, hints[i]->name, hints[i]->text);
            use = mine;
        } else {
            mine = MPI_INFO_NULL;
            n = 0;
        }
        iot_internal--;
    }
    if (own && (amode & MPI_MODE_CREATE) && iot_lustre_wanted(ph)) {
        int r = 0;
        iot_pmpi.Comm_rank(comm, &r);
        iot_lustre_prepare(ph, ph->path, 0, r == 0);
        iot_pmpi.Barrier(comm); /* nobody opens before the layout exists */
    }
    int rc = real(comm, filename, amode, use, fh);
    if (rc == MPI_SUCCESS) {
        if (own)
            ph->handle = (int64_t)(intptr_t)*fh;
        file_put(*fh, ph);
        iot_internal++;
        verify_hints(ph, comm, *fh, hints, n);
        iot_internal--;
    } else if (own) {
        iot_smart_phase_drop(ph);
        iot_phase_abort(ph);
    }
    if (mine != MPI_INFO_NULL)
        iot_pmpi.Info_free(&mine);
    return rc;
}

IOT_EXPORT int MPI_File_close(MPI_File *fh)
{
    static int (*real)(MPI_File *);
    IOT_REAL(real, "MPI_File_close");
    iot_phase *ph = NULL;
    if (fh) {
        if (iot_smart_on && iot_active())
            iot_smart_call(file_phase(*fh), IOT_SIG_MPI_FILE_CLOSE, NULL, 0, -1);
        file_drop(*fh);
        if (iot_active())
            ph = iot_phase_find_handle(IOT_KIND_MPIIO, (int64_t)(intptr_t)*fh);
    }
    int rc = real(fh);
    if (ph) {
        iot_phase_end(ph);
        iot_smart_phase_end(ph);
    }
    return rc;
}

/* ---- data calls: the application's bytes ---- */

static inline unsigned data_begin(iot_phase *ph, int count, MPI_Datatype type, int is_write, uint64_t *bytes)
{
    int size = 0;
    if (count > 0 && iot_pmpi.Type_size(type, &size) != MPI_SUCCESS)
        size = 0;
    *bytes = count > 0 && size > 0 ? (uint64_t)count * (uint64_t)size : 0;
    uint64_t index = atomic_fetch_add_explicit(is_write ? &ph->mpi_writes : &ph->mpi_reads, 1, memory_order_relaxed);
    unsigned w = iot_time_weight(index, *bytes);
    if (w > 1)
        atomic_store_explicit(&ph->time_sampled, 1, memory_order_relaxed);
    return w;
}

static inline void data_end(iot_phase *ph, int rc, uint64_t bytes, uint64_t dt, unsigned weight, int is_write)
{
    if (rc == MPI_SUCCESS)
        atomic_fetch_add_explicit(is_write ? &ph->mpi_bytes_written : &ph->mpi_bytes_read, bytes,
                                  memory_order_relaxed);
    if (weight)
        atomic_fetch_add_explicit(is_write ? &ph->mpi_write_ticks : &ph->mpi_read_ticks, dt * weight,
                                  memory_order_relaxed);
}

/* Where a data call accesses the file, for smart mode's locality: the
 * explicit offset of the _at calls, the individual file pointer of the
 * others (a local query, made only while the phase is learned: no other
 * phase keeps locality), unknown for the shared pointer. Offsets count
 * etypes from the view's displacement. */
enum { AT_OFFSET, AT_POINTER, AT_SHARED };

static inline int access_offset(MPI_File fh, const open_file *f, int where, MPI_Offset offset, int64_t *out)
{
    if (where == AT_POINTER &&
        (!iot_smart_learning(f->ph) || iot_pmpi.File_get_position(fh, &offset) != MPI_SUCCESS))
        return 0;
    *out = f->disp + (int64_t)offset * f->etype_size;
    return where != AT_SHARED;
}

/* Blocking calls are timed; nonblocking ones count their bytes when started.
 * Smart mode records the call when entered, with its bytes and offset. */
#define DATA_CALL(name, is_write, timed, params, args, where, offset)                                        \
    IOT_EXPORT int name params                                                                               \
    {                                                                                                        \
        static int(*real) params;                                                                            \
        IOT_REAL(real, #name);                                                                               \
        const open_file *f = file_of(fh);                                                                    \
        if (!f)                                                                                              \
            return real args;                                                                                \
        iot_phase *ph = f->ph;                                                                               \
        uint64_t bytes;                                                                                      \
        unsigned w = data_begin(ph, count, datatype, is_write, &bytes);                                      \
        if (iot_smart_on) {                                                                                  \
            int64_t at = 0;                                                                                  \
            int known = access_offset(fh, f, where, offset, &at);                                            \
            iot_smart_data(ph, #name, (int64_t)bytes, at, known, where == AT_OFFSET, is_write);              \
        }                                                                                                    \
        w = (timed) ? w : 0;                                                                                 \
        uint64_t t0 = w ? iot_ticks() : 0;                                                                   \
        int rc = real args;                                                                                  \
        data_end(ph, rc, bytes, w ? iot_ticks() - t0 : 0, w, is_write);                                     \
        return rc;                                                                                           \
    }

#define WRITE_ARGS (MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
#define WRITE_AT_ARGS (MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
#define READ_ARGS (MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
#define READ_AT_ARGS (MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
#define IWRITE_ARGS (MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Request *request)
#define IWRITE_AT_ARGS (MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype, MPI_Request *request)
#define IREAD_ARGS (MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Request *request)
#define IREAD_AT_ARGS (MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype, MPI_Request *request)
#define CALL (fh, buf, count, datatype, status)
#define CALL_AT (fh, offset, buf, count, datatype, status)
#define ICALL (fh, buf, count, datatype, request)
#define ICALL_AT (fh, offset, buf, count, datatype, request)

DATA_CALL(MPI_File_write, 1, 1, WRITE_ARGS, CALL, AT_POINTER, 0)
DATA_CALL(MPI_File_write_all, 1, 1, WRITE_ARGS, CALL, AT_POINTER, 0)
DATA_CALL(MPI_File_write_at, 1, 1, WRITE_AT_ARGS, CALL_AT, AT_OFFSET, offset)
DATA_CALL(MPI_File_write_at_all, 1, 1, WRITE_AT_ARGS, CALL_AT, AT_OFFSET, offset)
DATA_CALL(MPI_File_write_shared, 1, 1, WRITE_ARGS, CALL, AT_SHARED, 0)
DATA_CALL(MPI_File_write_ordered, 1, 1, WRITE_ARGS, CALL, AT_SHARED, 0)
DATA_CALL(MPI_File_read, 0, 1, READ_ARGS, CALL, AT_POINTER, 0)
DATA_CALL(MPI_File_read_all, 0, 1, READ_ARGS, CALL, AT_POINTER, 0)
DATA_CALL(MPI_File_read_at, 0, 1, READ_AT_ARGS, CALL_AT, AT_OFFSET, offset)
DATA_CALL(MPI_File_read_at_all, 0, 1, READ_AT_ARGS, CALL_AT, AT_OFFSET, offset)
DATA_CALL(MPI_File_read_shared, 0, 1, READ_ARGS, CALL, AT_SHARED, 0)
DATA_CALL(MPI_File_read_ordered, 0, 1, READ_ARGS, CALL, AT_SHARED, 0)
DATA_CALL(MPI_File_iwrite, 1, 0, IWRITE_ARGS, ICALL, AT_POINTER, 0)
DATA_CALL(MPI_File_iwrite_all, 1, 0, IWRITE_ARGS, ICALL, AT_POINTER, 0)
DATA_CALL(MPI_File_iwrite_at, 1, 0, IWRITE_AT_ARGS, ICALL_AT, AT_OFFSET, offset)
DATA_CALL(MPI_File_iwrite_at_all, 1, 0, IWRITE_AT_ARGS, ICALL_AT, AT_OFFSET, offset)
DATA_CALL(MPI_File_iwrite_shared, 1, 0, IWRITE_ARGS, ICALL, AT_SHARED, 0)
DATA_CALL(MPI_File_iread, 0, 0, IREAD_ARGS, ICALL, AT_POINTER, 0)
DATA_CALL(MPI_File_iread_all, 0, 0, IREAD_ARGS, ICALL, AT_POINTER, 0)
DATA_CALL(MPI_File_iread_at, 0, 0, IREAD_AT_ARGS, ICALL_AT, AT_OFFSET, offset)
DATA_CALL(MPI_File_iread_at_all, 0, 0, IREAD_AT_ARGS, ICALL_AT, AT_OFFSET, offset)
DATA_CALL(MPI_File_iread_shared, 0, 0, IREAD_ARGS, ICALL, AT_SHARED, 0)

IOT_EXPORT int MPI_File_set_view(MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
                                 const char *datarep, MPI_Info info)
{
    static int (*real)(MPI_File, MPI_Offset, MPI_Datatype, MPI_Datatype, const char *, MPI_Info);
    IOT_REAL(real, "MPI_File_set_view");
    int rc = real(fh, disp, etype, filetype, datarep, info);
    if (rc == MPI_SUCCESS && file_of(fh)) {
        int size = 1;
        MPI_Aint lb = 0, extent = 0;
        iot_pmpi.Type_size(etype, &size);
        if (iot_pmpi.Type_get_true_extent(filetype, &lb, &extent) != MPI_SUCCESS)
            lb = 0;
        file_set_view(fh, (int64_t)disp + (int64_t)lb, size);
    }
    return rc;
}
