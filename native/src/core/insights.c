/* SmartIO insights (section 3.2, Table 1): what a phase's calls say about its
 * I/O, one rank at a time, then merged across ranks by MAX and SUM
 * reductions the runtime performs. */
#include "iotuner/insights.h"
#include "iotuner/core.h"
#include "iotuner/signature.h"
#include "iotuner/calls.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- call signatures ---- */

/* the calls the runtime intercepts, from its tables */
static const struct {
    const char *name;
    int write, collective, offset_index;
} mpi_data_calls[] = {
#define DATA_ROW(name, write, collective, where, timed, params, args) {#name, write, collective, IOT_OFFSET_INDEX_##where},
    IOT_MPI_DATA_CALLS(DATA_ROW)
#undef DATA_ROW
};

static const struct {
    const char *name;
    iot_call_kind kind;
    int write, nargs;
} h5_calls[] = {
#define SIG_ROW(sig, kind, write, nargs) {sig, kind, write, nargs},
    IOT_SIGNATURES(SIG_ROW)
#undef SIG_ROW
};

iot_call_kind iot_call_classify(const char *func, iot_call_info *out)
{
    iot_call_info info = {IOT_CALL_OTHER, 0, 0, 0, -1};
    if (func) {
        for (size_t i = 0; i < sizeof h5_calls / sizeof h5_calls[0]; i++)
            if (!strcmp(func, h5_calls[i].name)) {
                info.kind = h5_calls[i].kind;
                info.write = h5_calls[i].write;
                info.nargs = h5_calls[i].nargs;
            }
        if (info.kind == IOT_CALL_OTHER && !strncmp(func, "MPI_File_", 9))
            for (size_t i = 0; i < sizeof mpi_data_calls / sizeof mpi_data_calls[0]; i++)
                if (!strcmp(func, mpi_data_calls[i].name)) {
                    info.kind = IOT_CALL_MPI_DATA;
                    info.write = mpi_data_calls[i].write;
                    info.collective = mpi_data_calls[i].collective;
                    info.offset_index = mpi_data_calls[i].offset_index;
                    info.nargs = info.offset_index >= 0 ? 2 : 1;
                }
    }
    if (out)
        *out = info;
    return info.kind;
}

/* ---- identities ---- */

#define FNV_OFFSET 0xcbf29ce484222325ULL
#define FNV_PRIME 0x100000001b3ULL
#define HASH63(h) ((h) & 0x7fffffffffffffffULL)

typedef struct {
    uint64_t h;
    char *out;
    size_t outlen, at;
} emitter;

static inline void emit(emitter *e, char c)
{
    e->h = (e->h ^ (unsigned char)c) * FNV_PRIME;
    if (e->at + 1 < e->outlen)
        e->out[e->at++] = c;
}

/* ASCII classes without the locale (every file the runtime opens goes through here) */
static inline int digit(char c)
{
    return c >= '0' && c <= '9';
}

static inline int letter(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* The end of a number in scientific notation starting at p (a simulation
 * time in a checkpoint's name: "1.000E-06", "0.000E+00", "5E+03"), or NULL:
 * digits, an optional fraction, e or E, and an exponent with a sign (or,
 * after a fraction, without one), not followed by a letter or digit. */
static const char *scientific_end(const char *p, const char *end)
{
    int fraction = 0;
    while (p < end && digit(*p))
        p++;
    if (p + 1 < end && *p == '.' && digit(p[1])) {
        fraction = 1;
        for (p++; p < end && digit(*p);)
            p++;
    }
    if (p >= end || (*p != 'e' && *p != 'E'))
        return NULL;
    p++;
    int sign = p < end && (*p == '+' || *p == '-');
    if (sign)
        p++;
    if (!(sign || fraction) || p >= end || !digit(*p))
        return NULL;
    while (p < end && digit(*p))
        p++;
    return p < end && (letter(*p) || digit(*p)) ? NULL : p;
}

/* One path component: digit runs (step and rank numbers) become '#', and so
 * does a number in scientific notation as a whole (its exponent's sign is no
 * other file: "x.0.000E+00.nc" and "x.1.000E-06.nc" are "x.#.nc"), except in
 * extensions (a part after a dot, not the first part, beginning with a
 * letter: "h5", "hdf5", "nc4") and inside a word (letters on both sides: the
 * "5" of "h5ior"). */
static void emit_component(emitter *e, const char *start, const char *end)
{
    int in_extension = 0;
    for (const char *p = start; p < end; p++) {
        const char *sci;
        if (*p == '.') {
            in_extension = p != start && p + 1 < end && letter(p[1]);
            emit(e, '.');
        } else if (digit(*p) && !in_extension && !(p > start && (letter(p[-1]) || digit(p[-1]))) &&
                   (sci = scientific_end(p, end)) != NULL) {
            emit(e, '#');
            p = sci - 1;
        } else if (digit(*p) && !in_extension) {
            const char *last = p;
            while (last + 1 < end && digit(last[1]))
                last++;
            int in_word = p > start && letter(p[-1]) && last + 1 < end && letter(last[1]);
            if (in_word)
                for (const char *d = p; d <= last; d++)
                    emit(e, *d);
            else
                emit(e, '#');
            p = last;
        } else {
            emit(e, *p);
        }
    }
}

uint64_t iot_identity(const char *path, char *out, size_t outlen)
{
    emitter e = {FNV_OFFSET, out, out ? outlen : 0, 0};
    if (out && outlen)
        out[0] = 0;
    if (!path)
        return HASH63(e.h);
    for (const char *p = path;;) {
        const char *next = strchr(p, '/');
        emit_component(&e, p, next ? next : p + strlen(p));
        if (!next)
            break;
        emit(&e, '/');
        p = next + 1;
    }
    if (out && outlen)
        out[e.at] = 0;
    return HASH63(e.h);
}


uint64_t iot_path_hash(const char *path)
{
    uint64_t h = FNV_OFFSET;
    for (const unsigned char *p = (const unsigned char *)(path ? path : ""); *p; p++)
        h = (h ^ *p) * FNV_PRIME;
    return HASH63(h);
}

/* ---- names ---- */

static const char *loc_names[] = {"unknown", "sequential", "strided", "random"};
static const char *xfer_names[] = {"none", "independent", "collective", "mixed"};
static const char *files_names[] = {"unknown", "shared", "per_process"};

const char *iot_locality_name(iot_locality l) { return (unsigned)l < 4 ? loc_names[l] : "?"; }
const char *iot_xfer_name(iot_xfer x) { return (unsigned)x < 4 ? xfer_names[x] : "?"; }
const char *iot_files_name(iot_files f) { return (unsigned)f < 3 ? files_names[f] : "?"; }

static int find_name(const char *const *names, int n, const char *s)
{
    for (int i = 0; s && i < n; i++)
        if (!strcmp(names[i], s))
            return i;
    return -1;
}

int iot_locality_from_name(const char *s) { return find_name(loc_names, 4, s); }
int iot_xfer_from_name(const char *s) { return find_name(xfer_names, 4, s); }
int iot_files_from_name(const char *s) { return find_name(files_names, 3, s); }

/* ---- locality ---- */

void iot_locality_init(iot_locality_tracker *t)
{
    memset(t, 0, sizeof *t);
    t->extent = -1;
}

void iot_locality_add(iot_locality_tracker *t, int64_t offset, int64_t size)
{
    if (size <= 0 || offset < 0 || offset > INT64_MAX - size)
        return;
    int64_t end = offset + size;
    if (end > t->extent)
        t->extent = end;
    if (t->accesses++ == 0) {
        t->next = t->stream_end = end;
        return;
    }
    t->bytes += (uint64_t)size;
    if (offset == t->next || offset == t->stream_end) {
        t->sequential_bytes += (uint64_t)size;
        t->stream_end = end;
    } else {
        int64_t gap = offset - t->next;
        if (gap > 0 && gap == t->last_gap) {
            /* the run of equal gaps is confirmed: credit its first transition too */
            t->strided_bytes += (uint64_t)size + t->last_gap_bytes;
            t->last_gap_bytes = 0;
        } else {
            t->last_gap_bytes = (uint64_t)size;
        }
        t->last_gap = gap;
    }
    t->next = end;
}

iot_locality iot_locality_classify(const iot_locality_tracker *t)
{
    if (t->accesses == 0)
        return IOT_LOC_UNKNOWN;
    if (t->accesses == 1)
        return IOT_LOC_SEQUENTIAL;
    /* x >= p% of bytes, without overflow for byte counts up to 2^64 / 100 */
    long double need = (long double)t->bytes * IOT_LOCALITY_PERCENT / 100.0L;
    if ((long double)t->sequential_bytes >= need)
        return IOT_LOC_SEQUENTIAL;
    if (t->strided_bytes > 0 && (long double)t->sequential_bytes + (long double)t->strided_bytes >= need)
        return IOT_LOC_STRIDED;
    return IOT_LOC_RANDOM;
}

iot_locality iot_locality_of_accesses(const int64_t *offsets, const int64_t *sizes, size_t n, int64_t *extent)
{
    iot_locality_tracker t;
    iot_locality_init(&t);
    for (size_t i = 0; offsets && sizes && i < n; i++)
        iot_locality_add(&t, offsets[i], sizes[i]);
    if (extent)
        *extent = t.extent;
    return iot_locality_classify(&t);
}

/* ---- insights ---- */

void iot_insights_init(iot_insights *in)
{
    memset(in, 0, sizeof *in);
    in->write_xfer = in->read_xfer = IOT_XFER_NONE;
    in->transfer_size = in->max_transfer_size = -1;
    in->write_locality = in->read_locality = IOT_LOC_UNKNOWN;
    in->files = IOT_FILES_UNKNOWN;
    in->file_size = -1;
    in->same_calls = -1;
    in->processes = 1;
    in->identity_hash = in->path_hash = -1;
    in->lustre_pfl = -1;
}

iot_xfer iot_insights_xfer(const iot_insights *in)
{
    if (in->write_xfer == IOT_XFER_NONE)
        return in->read_xfer;
    if (in->read_xfer == IOT_XFER_NONE || in->read_xfer == in->write_xfer)
        return in->write_xfer;
    return IOT_XFER_MIXED;
}

iot_locality iot_insights_locality(const iot_insights *in)
{
    return in->write_locality > in->read_locality ? in->write_locality : in->read_locality;
}

static iot_xfer xfer_of(int collective, int independent)
{
    return collective && independent ? IOT_XFER_MIXED
           : collective              ? IOT_XFER_COLLECTIVE
           : independent             ? IOT_XFER_INDEPENDENT
                                     : IOT_XFER_NONE;
}

typedef struct {
    int64_t bytes;
    uint64_t count;
} size_count;

static int by_bytes(const void *a, const void *b)
{
    int64_t x = ((const size_count *)a)->bytes, y = ((const size_count *)b)->bytes;
    return (x > y) - (x < y);
}

static int64_t add_sat(int64_t a, int64_t b)
{
    return a > INT64_MAX - b ? INT64_MAX : a + b;
}

static int64_t mul_sat(int64_t bytes, uint64_t count)
{
    if (bytes == 0 || count == 0)
        return 0;
    return count > (uint64_t)(INT64_MAX / bytes) ? INT64_MAX : bytes * (int64_t)count;
}

void iot_insights_from_calls(const iot_sigtab *t, const int *terminals, size_t n, iot_insights *out)
{
    iot_insights_init(out);
    size_t nt = iot_sigtab_count(t);
    if (!terminals || n == 0 || nt == 0)
        return;
    /* Occurrences per terminal: all of them, and (MPI-IO data calls) those
     * made inside an H5Dwrite/H5Dread. O(distinct terminals) memory. */
    uint64_t *all = calloc(nt, sizeof *all), *raw = calloc(nt, sizeof *raw);
    size_count *sizes = calloc(nt, sizeof *sizes);
    if (!all || !raw || !sizes)
        goto done;
    int in_h5_data = 0, opens = 0;
    int64_t max_comm = 0, h5_identity = -1, mpi_identity = -1;
    for (size_t i = 0; i < n; i++) {
        iot_sig s;
        iot_call_info c;
        if (iot_sigtab_get(t, terminals[i], &s) < 0)
            continue;
        int id = terminals[i];
        all[id]++;
        switch (iot_call_classify(s.func, &c)) {
        case IOT_CALL_H5_DATA:
        case IOT_CALL_LIB_WAIT: in_h5_data = 1; break;
        case IOT_CALL_MPI_DATA:
            if (in_h5_data)
                raw[id]++;
            break;
        case IOT_CALL_FILE_OPEN:
            if (h5_identity < 0 && s.nargs > IOT_ARG_NAME_HASH)
                h5_identity = s.args[IOT_ARG_NAME_HASH];
            if (!out->library[0])
                snprintf(out->library, sizeof out->library, "%s", strncmp(s.func, "ncmpi_", 6) ? "hdf5" : "pnetcdf");
            in_h5_data = 0;
            break;
        case IOT_CALL_MPI_OPEN:
            if (mpi_identity < 0 && s.nargs > IOT_ARG_NAME_HASH)
                mpi_identity = s.args[IOT_ARG_NAME_HASH];
            if (s.nargs > IOT_ARG_COMM_SIZE && s.args[IOT_ARG_COMM_SIZE] > 0) {
                opens++;
                if (s.args[IOT_ARG_COMM_SIZE] > max_comm)
                    max_comm = s.args[IOT_ARG_COMM_SIZE];
            }
            break;
        case IOT_CALL_OTHER:
            if (!strncmp(s.func, "H5", 2) || !strncmp(s.func, "ncmpi_", 6)) /* any other library call ends the data */
                in_h5_data = 0;
            break;
        default: in_h5_data = 0; break;
        }
    }
    out->identity_hash = h5_identity >= 0 ? h5_identity : mpi_identity;
    if (!out->library[0] && mpi_identity >= 0)
        snprintf(out->library, sizeof out->library, "mpiio");
    if (opens)
        out->files = max_comm > 1 ? IOT_FILES_SHARED : IOT_FILES_PER_PROCESS;

    /* Which level the sizes come from: raw-data MPI-IO if the HDF5 data calls
     * have any below them, else the HDF5 data calls; without HDF5 data
     * calls, every MPI-IO data call. */
    int have_h5 = 0, have_raw = 0;
    for (size_t id = 0; id < nt; id++) {
        iot_sig s;
        iot_call_info c;
        if (!all[id] || iot_sigtab_get(t, (int)id, &s) < 0)
            continue;
        iot_call_classify(s.func, &c);
        have_h5 |= c.kind == IOT_CALL_H5_DATA;
        have_raw |= raw[id] > 0;
    }
    int wc = 0, wi = 0, rc = 0, ri = 0;
    size_t nsizes = 0;
    uint64_t total = 0;
    for (size_t id = 0; id < nt; id++) {
        iot_sig s;
        iot_call_info c;
        if (!all[id] || iot_sigtab_get(t, (int)id, &s) < 0)
            continue;
        iot_call_classify(s.func, &c);
        uint64_t count;
        if (c.kind == IOT_CALL_H5_DATA && have_h5) { /* calls are counted at the HDF5 level */
            if (c.write)
                out->write_calls += (int64_t)all[id];
            else
                out->read_calls += (int64_t)all[id];
        }
        if (c.kind == IOT_CALL_MPI_DATA && !have_h5) {
            if (c.write)
                out->write_calls += (int64_t)all[id];
            else
                out->read_calls += (int64_t)all[id];
        }
        if (have_h5 && have_raw)
            count = c.kind == IOT_CALL_MPI_DATA ? raw[id] : 0;
        else if (have_h5)
            count = c.kind == IOT_CALL_H5_DATA ? all[id] : 0;
        else
            count = c.kind == IOT_CALL_MPI_DATA ? all[id] : 0;
        if (!count || s.nargs <= IOT_ARG_BYTES || s.args[IOT_ARG_BYTES] < 0)
            continue;
        int64_t bytes = s.args[IOT_ARG_BYTES];
        int collective = c.kind == IOT_CALL_MPI_DATA && c.collective;
        if (c.write) {
            out->bytes_written = add_sat(out->bytes_written, mul_sat(bytes, count));
            wc |= collective;
            wi |= !collective;
        } else {
            out->bytes_read = add_sat(out->bytes_read, mul_sat(bytes, count));
            rc |= collective;
            ri |= !collective;
        }
        if (bytes > out->max_transfer_size)
            out->max_transfer_size = bytes;
        sizes[nsizes++] = (size_count){bytes, count};
        total += count;
    }
    out->write_xfer = xfer_of(wc, wi);
    out->read_xfer = xfer_of(rc, ri);
    if (nsizes) { /* median over calls: the smallest size reaching half of them */
        qsort(sizes, nsizes, sizeof *sizes, by_bytes);
        uint64_t half = (total + 1) / 2, seen = 0;
        for (size_t i = 0; i < nsizes; i++) {
            seen += sizes[i].count;
            if (seen >= half) {
                out->transfer_size = sizes[i].bytes;
                break;
            }
        }
    }
done:
    free(all);
    free(raw);
    free(sizes);
}

void iot_insights_set_locality(iot_insights *in, const iot_locality_tracker *writes, const iot_locality_tracker *reads)
{
    if (writes) {
        in->write_locality = iot_locality_classify(writes);
        if (writes->extent > in->file_size)
            in->file_size = writes->extent;
    }
    if (reads) {
        in->read_locality = iot_locality_classify(reads);
        if (reads->extent > in->file_size)
            in->file_size = reads->extent;
    }
}

/* ---- merge across ranks ---- */

enum {
    M_WRITE_COLL, M_WRITE_IND, M_READ_COLL, M_READ_IND, M_WRITE_LOC, M_READ_LOC, M_TRANSFER, M_MAX_TRANSFER,
    M_FILE_SIZE, M_SHARED_OPEN, M_SINGLE_OPEN, M_PATH_MAX, M_PATH_NEGMIN, M_FS, M_PFL, M_WCALLS_MAX,
    M_WCALLS_NEGMIN, M_RCALLS_MAX, M_RCALLS_NEGMIN, M_COUNT
};
enum { S_BYTES_WRITTEN, S_BYTES_READ, S_WCALLS, S_RCALLS, S_PROCESSES, S_WITH_PATH, S_COUNT };
_Static_assert(M_COUNT == IOT_INSIGHTS_NMAX, "IOT_INSIGHTS_NMAX must match the MAX fields");
_Static_assert(S_COUNT == IOT_INSIGHTS_NSUM, "IOT_INSIGHTS_NSUM must match the SUM fields");

/* Codes for MAX: fixed order, 0 = unknown. */
static const char *fs_codes[] = {"ext4", "xfs", "btrfs", "tmpfs", "nfs", "lustre", "gpfs", "beegfs",
                                 "fuse", "overlay", "zfs", "squashfs", "cephfs", "panfs", "proc", "sysfs"};
#define NFS_CODES ((int)(sizeof fs_codes / sizeof fs_codes[0]))

static int fs_code(const char *name)
{
    for (int i = 0; i < NFS_CODES; i++)
        if (!strcasecmp(name, fs_codes[i]))
            return i + 1;
    return 0;
}

static int has_xfer(iot_xfer x, int collective)
{
    return x == IOT_XFER_MIXED || x == (collective ? IOT_XFER_COLLECTIVE : IOT_XFER_INDEPENDENT);
}

void iot_insights_pack(const iot_insights *in, int64_t max_part[IOT_INSIGHTS_NMAX], int64_t sum_part[IOT_INSIGHTS_NSUM])
{
    int has_path = in->path_hash >= 0;
    max_part[M_WRITE_COLL] = has_xfer(in->write_xfer, 1);
    max_part[M_WRITE_IND] = has_xfer(in->write_xfer, 0);
    max_part[M_READ_COLL] = has_xfer(in->read_xfer, 1);
    max_part[M_READ_IND] = has_xfer(in->read_xfer, 0);
    max_part[M_WRITE_LOC] = in->write_locality;
    max_part[M_READ_LOC] = in->read_locality;
    max_part[M_TRANSFER] = in->transfer_size;
    max_part[M_MAX_TRANSFER] = in->max_transfer_size;
    max_part[M_FILE_SIZE] = in->file_size;
    max_part[M_SHARED_OPEN] = in->files == IOT_FILES_SHARED;
    max_part[M_SINGLE_OPEN] = in->files == IOT_FILES_PER_PROCESS;
    max_part[M_PATH_MAX] = has_path ? in->path_hash : -1;
    max_part[M_PATH_NEGMIN] = has_path ? -in->path_hash : INT64_MIN;
    max_part[M_FS] = fs_code(in->file_system);
    max_part[M_PFL] = in->lustre_pfl < 0 ? 0 : in->lustre_pfl ? 2 : 1;
    max_part[M_WCALLS_MAX] = in->write_calls;
    max_part[M_WCALLS_NEGMIN] = -in->write_calls;
    max_part[M_RCALLS_MAX] = in->read_calls;
    max_part[M_RCALLS_NEGMIN] = -in->read_calls;
    sum_part[S_BYTES_WRITTEN] = in->bytes_written;
    sum_part[S_BYTES_READ] = in->bytes_read;
    sum_part[S_WCALLS] = in->write_calls;
    sum_part[S_RCALLS] = in->read_calls;
    sum_part[S_PROCESSES] = in->processes > 0 ? in->processes : 1;
    sum_part[S_WITH_PATH] = has_path;
}

static iot_locality clamp_loc(int64_t v)
{
    return v >= IOT_LOC_UNKNOWN && v <= IOT_LOC_RANDOM ? (iot_locality)v : IOT_LOC_RANDOM;
}

void iot_insights_unpack(const int64_t max_part[IOT_INSIGHTS_NMAX], const int64_t sum_part[IOT_INSIGHTS_NSUM],
                         const iot_insights *local, iot_insights *out)
{
    iot_insights m;
    iot_insights_init(&m);
    if (local) {
        memcpy(m.identity, local->identity, sizeof m.identity);
        m.identity_hash = local->identity_hash;
        memcpy(m.file_system, local->file_system, sizeof m.file_system);
        memcpy(m.library, local->library, sizeof m.library);
    }
    m.write_xfer = xfer_of((int)max_part[M_WRITE_COLL], (int)max_part[M_WRITE_IND]);
    m.read_xfer = xfer_of((int)max_part[M_READ_COLL], (int)max_part[M_READ_IND]);
    m.write_locality = clamp_loc(max_part[M_WRITE_LOC]);
    m.read_locality = clamp_loc(max_part[M_READ_LOC]);
    m.transfer_size = max_part[M_TRANSFER] >= 0 ? max_part[M_TRANSFER] : -1;
    m.max_transfer_size = max_part[M_MAX_TRANSFER] >= 0 ? max_part[M_MAX_TRANSFER] : -1;
    m.bytes_written = sum_part[S_BYTES_WRITTEN];
    m.bytes_read = sum_part[S_BYTES_READ];
    m.write_calls = sum_part[S_WCALLS];
    m.read_calls = sum_part[S_RCALLS];
    m.processes = sum_part[S_PROCESSES];
    m.same_calls = max_part[M_WCALLS_MAX] == -max_part[M_WCALLS_NEGMIN] &&
                   max_part[M_RCALLS_MAX] == -max_part[M_RCALLS_NEGMIN];

    int64_t with_path = sum_part[S_WITH_PATH];
    int one_path = with_path > 0 && max_part[M_PATH_MAX] == -max_part[M_PATH_NEGMIN];
    if (with_path >= 2 && one_path)
        m.files = IOT_FILES_SHARED;
    else if (max_part[M_SHARED_OPEN])
        m.files = IOT_FILES_SHARED; /* distinct files, each shared by a group of ranks */
    else if (with_path >= 1 || max_part[M_SINGLE_OPEN])
        m.files = IOT_FILES_PER_PROCESS;
    m.path_hash = one_path ? max_part[M_PATH_MAX] : -1;

    m.file_size = max_part[M_FILE_SIZE] >= 0 ? max_part[M_FILE_SIZE] : -1;
    if (m.file_size < 0 && m.files == IOT_FILES_SHARED && m.bytes_written > 0)
        m.file_size = m.bytes_written; /* no offsets seen: what the ranks wrote together */
    int64_t fs = max_part[M_FS];
    if (fs >= 1 && fs <= NFS_CODES)
        snprintf(m.file_system, sizeof m.file_system, "%s", fs_codes[fs - 1]);
    m.lustre_pfl = max_part[M_PFL] == 2 ? 1 : max_part[M_PFL] == 1 ? 0 : -1;
    *out = m;
}

/* ---- JSON ---- */

static void write_size(iot_buf *b, const char *key, int64_t v)
{
    if (v < 0)
        iot_jw_null(b, key);
    else
        iot_jw_int(b, key, v);
}

static void write_tristate(iot_buf *b, const char *key, int v)
{
    if (v < 0)
        iot_jw_null(b, key);
    else
        iot_jw_bool(b, key, v);
}

void iot_insights_write_json(const iot_insights *in, iot_buf *b, const char *key)
{
    iot_jw_begin_object(b, key);
    iot_jw_string(b, "write_transfer", iot_xfer_name(in->write_xfer));
    iot_jw_string(b, "read_transfer", iot_xfer_name(in->read_xfer));
    write_size(b, "transfer_size", in->transfer_size);
    write_size(b, "max_transfer_size", in->max_transfer_size);
    iot_jw_string(b, "write_locality", iot_locality_name(in->write_locality));
    iot_jw_string(b, "read_locality", iot_locality_name(in->read_locality));
    iot_jw_string(b, "files", iot_files_name(in->files));
    iot_jw_int(b, "bytes_written", in->bytes_written);
    iot_jw_int(b, "bytes_read", in->bytes_read);
    iot_jw_int(b, "write_calls", in->write_calls);
    iot_jw_int(b, "read_calls", in->read_calls);
    write_size(b, "file_size", in->file_size);
    write_tristate(b, "same_calls", in->same_calls);
    iot_jw_int(b, "processes", in->processes);
    iot_jw_string(b, "file_system", in->file_system[0] ? in->file_system : NULL);
    iot_jw_string(b, "identity", in->identity[0] ? in->identity : NULL);
    write_size(b, "identity_hash", in->identity_hash);
    write_size(b, "path_hash", in->path_hash);
    write_tristate(b, "lustre_pfl", in->lustre_pfl);
    iot_jw_string(b, "library", in->library[0] ? in->library : NULL);
    iot_jw_end_object(b);
}

static int jfail(char *err, size_t errlen, const char *key, const char *what)
{
    if (err && errlen)
        snprintf(err, errlen, "insights.%s: %s", key, what);
    return -1;
}

/* Bytes: null (unknown, -1), a non-negative integer, or a size string. */
static int get_size(const iot_json *v, const char *key, int64_t *out, char *err, size_t errlen)
{
    char e[200];
    if (v->type == IOT_JSON_NULL) {
        *out = -1;
        return 0;
    }
    if (v->type == IOT_JSON_NUMBER && v->is_integer && v->integer >= 0) {
        *out = v->integer;
        return 0;
    }
    if (v->type == IOT_JSON_STRING) {
        if (iot_parse_size(v->string, out, e, sizeof e) < 0)
            return jfail(err, errlen, key, e);
        return 0;
    }
    return jfail(err, errlen, key, "expected a number of bytes, a size like \"4M\", or null");
}

static int get_count(const iot_json *v, const char *key, int64_t *out, char *err, size_t errlen)
{
    if (v->type == IOT_JSON_NUMBER && v->is_integer && v->integer >= 0) {
        *out = v->integer;
        return 0;
    }
    return jfail(err, errlen, key, "expected a whole, non-negative number");
}

static int get_tristate(const iot_json *v, const char *key, int *out, char *err, size_t errlen)
{
    if (v->type == IOT_JSON_NULL)
        *out = -1;
    else if (v->type == IOT_JSON_BOOL)
        *out = v->boolean;
    else
        return jfail(err, errlen, key, "expected true, false or null (unknown)");
    return 0;
}

static int get_name(const iot_json *v, const char *key, int (*from)(const char *), const char *choices, int *out,
                    char *err, size_t errlen)
{
    char what[160];
    int x = v->type == IOT_JSON_STRING ? from(v->string) : -1;
    if (v->type == IOT_JSON_NULL)
        x = 0; /* null: the unknown / none value, which is 0 in each enum */
    if (x < 0) {
        snprintf(what, sizeof what, "expected one of %s", choices);
        return jfail(err, errlen, key, what);
    }
    *out = x;
    return 0;
}

static int get_text(const iot_json *v, const char *key, char *out, size_t outlen, char *err, size_t errlen)
{
    if (v->type == IOT_JSON_NULL) {
        out[0] = 0;
        return 0;
    }
    if (v->type != IOT_JSON_STRING)
        return jfail(err, errlen, key, "expected a string or null");
    if (strlen(v->string) >= outlen)
        return jfail(err, errlen, key, "too long");
    snprintf(out, outlen, "%s", v->string);
    return 0;
}

int iot_insights_from_json_value(const iot_json *v, iot_insights *out, char *err, size_t errlen)
{
    iot_insights in;
    iot_insights_init(&in);
    if (!v || v->type != IOT_JSON_OBJECT) {
        if (err && errlen)
            snprintf(err, errlen, "insights: expected an object");
        return -1;
    }
    for (size_t i = 0; i < v->count; i++) {
        const char *k = v->keys[i];
        const iot_json *x = v->items[i];
        int e, tmp = 0;
        if (!strcmp(k, "write_transfer") || !strcmp(k, "read_transfer")) {
            e = get_name(x, k, iot_xfer_from_name, "none|independent|collective|mixed", &tmp, err, errlen);
            *(k[0] == 'w' ? &in.write_xfer : &in.read_xfer) = (iot_xfer)tmp;
        } else if (!strcmp(k, "write_locality") || !strcmp(k, "read_locality")) {
            e = get_name(x, k, iot_locality_from_name, "unknown|sequential|strided|random", &tmp, err, errlen);
            *(k[0] == 'w' ? &in.write_locality : &in.read_locality) = (iot_locality)tmp;
        } else if (!strcmp(k, "files")) {
            e = get_name(x, k, iot_files_from_name, "unknown|shared|per_process", &tmp, err, errlen);
            in.files = (iot_files)tmp;
        } else if (!strcmp(k, "transfer_size")) {
            e = get_size(x, k, &in.transfer_size, err, errlen);
        } else if (!strcmp(k, "max_transfer_size")) {
            e = get_size(x, k, &in.max_transfer_size, err, errlen);
        } else if (!strcmp(k, "file_size")) {
            e = get_size(x, k, &in.file_size, err, errlen);
        } else if (!strcmp(k, "identity_hash")) {
            e = get_size(x, k, &in.identity_hash, err, errlen);
        } else if (!strcmp(k, "path_hash")) {
            e = get_size(x, k, &in.path_hash, err, errlen);
        } else if (!strcmp(k, "bytes_written")) {
            e = get_count(x, k, &in.bytes_written, err, errlen);
        } else if (!strcmp(k, "bytes_read")) {
            e = get_count(x, k, &in.bytes_read, err, errlen);
        } else if (!strcmp(k, "write_calls")) {
            e = get_count(x, k, &in.write_calls, err, errlen);
        } else if (!strcmp(k, "read_calls")) {
            e = get_count(x, k, &in.read_calls, err, errlen);
        } else if (!strcmp(k, "processes")) {
            e = get_count(x, k, &in.processes, err, errlen);
            if (!e && in.processes < 1)
                e = jfail(err, errlen, k, "must be at least 1");
        } else if (!strcmp(k, "same_calls")) {
            e = get_tristate(x, k, &in.same_calls, err, errlen);
        } else if (!strcmp(k, "lustre_pfl")) {
            e = get_tristate(x, k, &in.lustre_pfl, err, errlen);
        } else if (!strcmp(k, "file_system")) {
            e = get_text(x, k, in.file_system, sizeof in.file_system, err, errlen);
        } else if (!strcmp(k, "identity")) {
            e = get_text(x, k, in.identity, sizeof in.identity, err, errlen);
        } else if (!strcmp(k, "library")) {
            e = get_text(x, k, in.library, sizeof in.library, err, errlen);
            if (!e && in.library[0] && strcmp(in.library, "hdf5") && strcmp(in.library, "pnetcdf") &&
                strcmp(in.library, "mpiio"))
                e = jfail(err, errlen, k, "expected \"hdf5\", \"pnetcdf\", \"mpiio\" or null");
        } else {
            e = jfail(err, errlen, k,
                      "unknown insight (known: write_transfer, read_transfer, transfer_size, max_transfer_size, "
                      "write_locality, read_locality, files, bytes_written, bytes_read, write_calls, read_calls, "
                      "file_size, same_calls, processes, file_system, identity, identity_hash, path_hash, "
                      "lustre_pfl, library)");
        }
        if (e < 0)
            return -1;
    }
    *out = in;
    return 0;
}

int iot_insights_from_json(const char *json, iot_insights *out, char *err, size_t errlen)
{
    char jerr[256];
    if (!json) {
        if (err && errlen)
            snprintf(err, errlen, "insights: no text");
        return -1;
    }
    iot_json *v = iot_json_parse(json, strlen(json), jerr, sizeof jerr);
    if (!v) {
        if (err && errlen)
            snprintf(err, errlen, "insights: not valid JSON: %s", jerr);
        return -1;
    }
    int rc = iot_insights_from_json_value(v, out, err, errlen);
    iot_json_free(v);
    return rc;
}
