/* The report's phases from every rank's records (iotuner/record.h). */
#include "iotuner/record.h"

#include <stdlib.h>
#include <string.h>

#define FNV_OFFSET 0xcbf29ce484222325ull
#define FNV_PRIME 0x100000001b3ull

/* A layer's files (kinds) and its calls (levels) have the layer's name. */
static const char *const kind_names[IOT_KINDS] = {
    [IOT_KIND_HDF5] = "hdf5", [IOT_KIND_MPIIO] = "mpiio", [IOT_KIND_POSIX] = "posix", [IOT_KIND_PNETCDF] = "pnetcdf"};
static const char *const level_names[IOT_LEVELS] = {
    [IOT_LEVEL_POSIX] = "posix", [IOT_LEVEL_MPIIO] = "mpiio", [IOT_LEVEL_HDF5] = "hdf5", [IOT_LEVEL_PNETCDF] = "pnetcdf",
    [IOT_LEVEL_STDIO] = "stdio"};
static const iot_level data_levels[IOT_KINDS] = {[IOT_KIND_HDF5] = IOT_LEVEL_HDF5, [IOT_KIND_MPIIO] = IOT_LEVEL_MPIIO,
                                                 [IOT_KIND_POSIX] = IOT_LEVEL_POSIX,
                                                 [IOT_KIND_PNETCDF] = IOT_LEVEL_PNETCDF};

const char *iot_kind_name(iot_phase_kind k)
{
    return (unsigned)k < IOT_KINDS ? kind_names[k] : "posix";
}

const char *iot_level_name(iot_level l)
{
    return (unsigned)l < IOT_LEVELS ? level_names[l] : "posix";
}

uint64_t iot_group_hash(const int *world_ranks, int n)
{
    uint64_t h = FNV_OFFSET;
    for (int i = 0; i < n; i++) {
        uint32_t r = (uint32_t)world_ranks[i];
        for (int b = 0; b < 4; b++) {
            h ^= (r >> (8 * b)) & 0xff;
            h *= FNV_PRIME;
        }
    }
    return h ? h : 1; /* 0 means "one process alone" */
}

void iot_record_init(iot_record *r, const iot_phase_key *key, uint64_t identity, int rank, int group_size)
{
    memset(r, 0, sizeof *r);
    r->key = *key;
    r->identity = identity;
    r->rank = rank;
    r->ranks = 1;
    r->files = 1;
    r->group_size = group_size > 0 ? group_size : 1;
}

static double maxd(double a, double b)
{
    return a > b ? a : b;
}

void iot_record_combine(const iot_record *in, iot_record *io)
{
    io->rank = in->rank < io->rank ? in->rank : io->rank;
    io->ranks += in->ranks;
    io->flags |= in->flags;
    io->t_open = in->t_open < io->t_open ? in->t_open : io->t_open;
    io->t_close = maxd(in->t_close, io->t_close);
    io->sync_time = maxd(in->sync_time, io->sync_time);
    io->meta_time = maxd(in->meta_time, io->meta_time);
    io->io_max = maxd(in->io_max, io->io_max);
    io->io_sum += in->io_sum;
    for (int l = 0; l < IOT_LEVELS; l++) {
        const iot_level_stats *a = &in->level[l];
        iot_level_stats *b = &io->level[l];
        b->bytes_written += a->bytes_written;
        b->bytes_read += a->bytes_read;
        b->writes += a->writes;
        b->reads += a->reads;
        b->write_time = maxd(a->write_time, b->write_time);
        b->read_time = maxd(a->read_time, b->read_time);
    }
}

/* ---- descriptions on the wire: key, rank, then the NUL-terminated strings ("\1" for NULL) ---- */

#define DESC_FIELDS 9

static const char **desc_field(iot_phase_desc *d, int i)
{
    const char **f[DESC_FIELDS] = {&d->file,          &d->identity,   &d->driver,     &d->file_system,
                                   &d->mpiio_driver,  &d->settings_json, &d->hints_json, &d->app_json,
                                   &d->datasets_json};
    return f[i];
}

void iot_desc_pack(iot_buf *b, const iot_phase_key *key, int rank, const iot_phase_desc *d)
{
    int32_t r = rank;
    iot_buf_append(b, (const char *)key, sizeof *key);
    iot_buf_append(b, (const char *)&r, sizeof r);
    iot_phase_desc copy = *d;
    for (int i = 0; i < DESC_FIELDS; i++) {
        const char *s = *desc_field(&copy, i);
        iot_buf_append(b, s ? s : "\1", strlen(s ? s : "\1") + 1);
    }
}

size_t iot_desc_unpack(const char *data, size_t len, iot_phase_key *key, int *rank, iot_phase_desc *d)
{
    size_t head = sizeof *key + sizeof(int32_t), pos = head;
    if (len < head)
        return 0;
    memcpy(key, data, sizeof *key);
    int32_t r;
    memcpy(&r, data + sizeof *key, sizeof r);
    *rank = r;
    for (int i = 0; i < DESC_FIELDS; i++) {
        const char *s = data + pos, *end = memchr(s, 0, len - pos);
        if (!end)
            return 0;
        *desc_field(d, i) = strcmp(s, "\1") ? s : NULL;
        pos += (size_t)(end - s) + 1;
    }
    return pos;
}

/* ---- the merge ---- */

typedef struct {
    iot_record rec;
    int origin;       /* an independent record: its rank; a collective one: -1 (one entry for all ranks) */
    int phase;        /* index into phases after finish */
    int desc_rank;    /* rank the description came from, -1 none */
    iot_phase_desc desc;
} entry;

typedef struct {
    iot_record rec;
    int leader; /* entry whose description stands for the phase */
    int files;
} phase;

struct iot_merge {
    entry *e;
    size_t n, cap;
    int32_t *slots; /* open addressing: entry index + 1, 0 empty */
    size_t nslots;
    phase *p;
    size_t np;
};

static uint64_t mix(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return h;
}

/* Collective records match across ranks by key; an independent one is its rank's own. */
static int origin_of(const iot_phase_key *key, int rank)
{
    return key->group ? -1 : rank;
}

static uint64_t slot_hash(const iot_phase_key *k, int origin)
{
    return mix(k->group ^ mix(k->path ^ ((uint64_t)k->seq << 32 | k->kind)) ^ (uint64_t)(uint32_t)origin << 17);
}

static int same(const entry *e, const iot_phase_key *k, int origin)
{
    return e->origin == origin && e->rec.key.group == k->group && e->rec.key.path == k->path &&
           e->rec.key.seq == k->seq && e->rec.key.kind == k->kind;
}

static long lookup(const iot_merge *m, const iot_phase_key *k, int origin)
{
    if (!m->nslots)
        return -1;
    for (size_t i = slot_hash(k, origin) & (m->nslots - 1);; i = (i + 1) & (m->nslots - 1)) {
        int32_t s = m->slots[i];
        if (!s)
            return -1;
        if (same(&m->e[s - 1], k, origin))
            return s - 1;
    }
}

static int rehash(iot_merge *m, size_t nslots)
{
    int32_t *slots = calloc(nslots, sizeof *slots);
    if (!slots)
        return -1;
    for (size_t j = 0; j < m->n; j++) {
        size_t i = slot_hash(&m->e[j].rec.key, m->e[j].origin) & (nslots - 1);
        while (slots[i])
            i = (i + 1) & (nslots - 1);
        slots[i] = (int32_t)j + 1;
    }
    free(m->slots);
    m->slots = slots;
    m->nslots = nslots;
    return 0;
}

iot_merge *iot_merge_new(void)
{
    return calloc(1, sizeof(iot_merge));
}

static void free_desc(iot_phase_desc *d)
{
    for (int i = 0; i < DESC_FIELDS; i++)
        free((char *)*desc_field(d, i));
    memset(d, 0, sizeof *d);
}

void iot_merge_free(iot_merge *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->n; i++)
        free_desc(&m->e[i].desc);
    free(m->e);
    free(m->slots);
    free(m->p);
    free(m);
}

int iot_merge_add(iot_merge *m, const iot_record *r)
{
    int origin = origin_of(&r->key, r->rank);
    long at = lookup(m, &r->key, origin);
    if (at >= 0) {
        iot_record_combine(r, &m->e[at].rec);
        return 0;
    }
    if (m->n == m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 64;
        entry *e = realloc(m->e, cap * sizeof *e);
        if (!e)
            return -1;
        m->e = e;
        m->cap = cap;
    }
    if ((m->n + 1) * 2 > m->nslots && rehash(m, m->nslots ? m->nslots * 2 : 128) < 0)
        return -1;
    entry *e = &m->e[m->n];
    memset(e, 0, sizeof *e);
    e->rec = *r;
    e->origin = origin;
    e->phase = -1;
    e->desc_rank = -1;
    size_t i = slot_hash(&r->key, origin) & (m->nslots - 1);
    while (m->slots[i])
        i = (i + 1) & (m->nslots - 1);
    m->slots[i] = (int32_t)++m->n;
    return 0;
}

int iot_merge_describe(iot_merge *m, const iot_phase_key *key, int rank, const iot_phase_desc *d)
{
    long at = lookup(m, key, origin_of(key, rank));
    if (at < 0)
        return -1;
    entry *e = &m->e[at];
    if (e->desc_rank >= 0 && e->desc_rank <= rank)
        return 0;
    free_desc(&e->desc);
    iot_phase_desc copy = *d;
    for (int i = 0; i < DESC_FIELDS; i++) {
        const char *s = *desc_field(&copy, i);
        *desc_field(&e->desc, i) = s ? strdup(s) : NULL;
    }
    e->desc_rank = rank;
    return 0;
}

/* Independent entries in order of (kind, identity, step, rank): the records of one step side by side. */
static const iot_merge *sort_m;
static int by_step(const void *a, const void *b)
{
    const iot_record *x = &sort_m->e[*(const int *)a].rec, *y = &sort_m->e[*(const int *)b].rec;
    if (x->key.kind != y->key.kind)
        return x->key.kind < y->key.kind ? -1 : 1;
    if (x->identity != y->identity)
        return x->identity < y->identity ? -1 : 1;
    if (x->step != y->step)
        return x->step < y->step ? -1 : 1;
    if (x->rank != y->rank)
        return x->rank - y->rank;
    return x->t_open < y->t_open ? -1 : x->t_open > y->t_open;
}

static int by_open(const void *a, const void *b)
{
    const phase *x = a, *y = b;
    if (x->rec.t_open != y->rec.t_open)
        return x->rec.t_open < y->rec.t_open ? -1 : 1;
    if (x->rec.key.path != y->rec.key.path)
        return x->rec.key.path < y->rec.key.path ? -1 : 1;
    if (x->rec.key.seq != y->rec.key.seq)
        return x->rec.key.seq < y->rec.key.seq ? -1 : 1;
    return x->rec.rank - y->rec.rank;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Starts phase np from entry j. */
static void open_phase(iot_merge *m, int j)
{
    phase *p = &m->p[m->np];
    p->rec = m->e[j].rec;
    p->leader = j;
    p->files = (int)p->rec.files;
    m->e[j].phase = (int)m->np++;
}

static void join_phase(iot_merge *m, int j)
{
    phase *p = &m->p[m->np - 1];
    iot_record_combine(&m->e[j].rec, &p->rec);
    m->e[j].phase = (int)m->np - 1;
    const entry *e = &m->e[j], *l = &m->e[p->leader];
    if (e->desc_rank >= 0 && (l->desc_rank < 0 || e->desc_rank < l->desc_rank))
        p->leader = j;
}

/* Distinct files of the independent entries idx[0..n) (paths: scratch of n); a folded record brings its own. */
static int count_files(const iot_merge *m, const int *idx, size_t n, uint64_t *paths)
{
    size_t np = 0;
    int files = 0;
    for (size_t q = 0; q < n; q++) {
        const iot_record *r = &m->e[idx[q]].rec;
        if (r->flags & IOT_REC_FOLDED)
            files += (int)r->files;
        else
            paths[np++] = r->key.path;
    }
    qsort(paths, np, sizeof *paths, cmp_u64);
    for (size_t q = 0; q < np; q++)
        files += q == 0 || paths[q] != paths[q - 1];
    return files;
}

/* File per process: the independent records of one kind, identity and step, one per rank, are one phase.
 * Nothing here depends on time: the same files give the same phases however the ranks were scheduled. */
static void cluster(iot_merge *m, int *indep, size_t ni)
{
    uint64_t *paths = malloc((ni ? ni : 1) * sizeof *paths);
    if (!paths) {
        for (size_t k = 0; k < ni; k++)
            open_phase(m, indep[k]);
        return;
    }
    sort_m = m;
    qsort(indep, ni, sizeof *indep, by_step);
    size_t start = 0; /* first record of the phase being formed */
    for (size_t k = 0; k < ni; k++) {
        const iot_record *r = &m->e[indep[k]].rec;
        const iot_record *prev = k > start ? &m->e[indep[k - 1]].rec : NULL;
        /* sorted by rank within a step: a rank's second record of one step (never made by the runtime) is
         * a phase of its own, so every phase has each rank at most once */
        if (prev && r->key.kind == prev->key.kind && r->identity == prev->identity && r->step == prev->step &&
            r->rank != prev->rank) {
            join_phase(m, indep[k]);
        } else {
            if (k > start)
                m->p[m->np - 1].files = count_files(m, indep + start, k - start, paths);
            start = k;
            open_phase(m, indep[k]);
        }
    }
    if (ni > start)
        m->p[m->np - 1].files = count_files(m, indep + start, ni - start, paths);
    free(paths);
}

size_t iot_merge_finish(iot_merge *m)
{
    free(m->p);
    m->np = 0;
    m->p = malloc((m->n ? m->n : 1) * sizeof *m->p);
    int *indep = malloc((m->n ? m->n : 1) * sizeof *indep);
    int *old_of = malloc((m->n ? m->n : 1) * sizeof *old_of);
    if (!m->p || !indep || !old_of) {
        free(indep);
        free(old_of);
        return 0;
    }
    size_t ni = 0;
    for (size_t j = 0; j < m->n; j++) {
        if (m->e[j].origin < 0)
            open_phase(m, (int)j);
        else
            indep[ni++] = (int)j;
    }
    cluster(m, indep, ni);
    /* in order of first open; the entries follow their phase to its place */
    qsort(m->p, m->np, sizeof *m->p, by_open);
    for (size_t i = 0; i < m->np; i++)
        old_of[m->e[m->p[i].leader].phase] = (int)i;
    for (size_t j = 0; j < m->n; j++)
        m->e[j].phase = old_of[m->e[j].phase];
    free(indep);
    free(old_of);
    return m->np;
}

size_t iot_merge_count(const iot_merge *m)
{
    return m->np;
}

const iot_record *iot_merge_phase(const iot_merge *m, size_t i)
{
    return i < m->np ? &m->p[i].rec : NULL;
}

int iot_merge_files(const iot_merge *m, size_t i)
{
    return i < m->np ? m->p[i].files : 0;
}

const char *iot_merge_grouped_by(const iot_merge *m, size_t i)
{
    if (i >= m->np)
        return NULL;
    const iot_record *r = &m->p[i].rec;
    if (r->key.group)
        return "communicator";
    if (r->flags & IOT_REC_FOLDED)
        return "folded";
    return r->ranks > 1 ? "step" : "rank";
}

const iot_phase_desc *iot_merge_desc(const iot_merge *m, size_t i)
{
    if (i >= m->np)
        return NULL;
    const entry *e = &m->e[m->p[i].leader];
    return e->desc_rank >= 0 ? &e->desc : NULL;
}

int iot_merge_find(const iot_merge *m, const iot_phase_key *key, int rank)
{
    long at = lookup(m, key, origin_of(key, rank));
    return at < 0 ? -1 : m->e[at].phase;
}

/* ---- the report's phases ---- */

static double mib_s(uint64_t bytes, double seconds)
{
    return seconds > 0 ? (double)bytes / (1024.0 * 1024.0) / seconds : 0;
}

iot_level iot_data_level(iot_phase_kind kind)
{
    return (unsigned)kind < IOT_KINDS ? data_levels[kind] : IOT_LEVEL_POSIX;
}

void iot_record_data(const iot_record *r, iot_level_stats *out, iot_level *level)
{
    iot_level l = iot_data_level((iot_phase_kind)r->key.kind);
    *out = r->level[l];
    *level = l;
    if (l != IOT_LEVEL_POSIX)
        return;
    const iot_level_stats *s = &r->level[IOT_LEVEL_STDIO];
    if (!(s->writes || s->reads))
        return;
    if (!(out->writes || out->reads))
        *level = IOT_LEVEL_STDIO;
    out->bytes_written += s->bytes_written;
    out->bytes_read += s->bytes_read;
    out->writes += s->writes;
    out->reads += s->reads;
    out->write_time += s->write_time;
    out->read_time += s->read_time;
}

static void write_level(iot_buf *b, iot_level l, const iot_level_stats *s)
{
    int calls = l != IOT_LEVEL_HDF5;
    iot_jw_begin_object(b, iot_level_name(l));
    iot_jw_int(b, "bytes_written", (int64_t)s->bytes_written);
    iot_jw_int(b, "bytes_read", (int64_t)s->bytes_read);
    iot_jw_int(b, calls ? "write_calls" : "dataset_writes", (int64_t)s->writes);
    iot_jw_int(b, calls ? "read_calls" : "dataset_reads", (int64_t)s->reads);
    iot_jw_double(b, "write_time_s", s->write_time);
    iot_jw_double(b, "read_time_s", s->read_time);
}

/* n-th phase of the same file (the leader's path) so far. */
static int occurrence(uint64_t *seen, int *counts, size_t nslots, uint64_t path)
{
    size_t i = mix(path) & (nslots - 1);
    while (seen[i] && seen[i] != path)
        i = (i + 1) & (nslots - 1);
    seen[i] = path;
    return counts[i]++;
}

void iot_merge_write(const iot_merge *m, iot_buf *b, iot_totals *t)
{
    memset(t, 0, sizeof *t);
    size_t nslots = 16;
    while (nslots < 2 * m->np + 2)
        nslots *= 2;
    uint64_t *seen = calloc(nslots, sizeof *seen);
    int *counts = calloc(nslots, sizeof *counts);
    iot_jw_begin_array(b, "phases");
    for (size_t i = 0; i < m->np; i++) {
        const iot_record *r = &m->p[i].rec;
        const iot_phase_desc *d = iot_merge_desc(m, i);
        iot_level lvl;
        iot_level_stats all;
        iot_record_data(r, &all, &lvl);
        const iot_level_stats *data = &all, *posix = &r->level[IOT_LEVEL_POSIX], *stdio = &r->level[IOT_LEVEL_STDIO];
        double wall = r->t_close > r->t_open ? r->t_close - r->t_open : 0;
        /* a phase's wall time is split between writing and reading by bytes */
        double total = (double)(data->bytes_written + data->bytes_read);
        double wt = total > 0 ? wall * (double)data->bytes_written / total : 0;
        double rt = total > 0 ? wall * (double)data->bytes_read / total : 0;
        t->write_time += wt;
        t->read_time += rt;
        t->io_time += r->io_max;
        t->bytes_written += (int64_t)data->bytes_written;
        t->bytes_read += (int64_t)data->bytes_read;
        t->posix_bytes_written += (int64_t)posix->bytes_written;
        t->posix_bytes_read += (int64_t)posix->bytes_read;
        t->phases++;
        iot_jw_begin_object(b, NULL);
        iot_jw_int(b, "id", (int64_t)i);
        iot_jw_string(b, "kind", iot_kind_name((iot_phase_kind)r->key.kind));
        iot_jw_string(b, "file", d && d->file ? d->file : "(unknown)");
        iot_jw_string(b, "identity", d && d->identity ? d->identity : NULL);
        iot_jw_string(b, "scope", r->key.group ? "collective" : "independent");
        iot_jw_int(b, "files", m->p[i].files);
        iot_jw_bool(b, "folded", r->flags & IOT_REC_FOLDED);
        iot_jw_int(b, "occurrence", seen && counts ? occurrence(seen, counts, nslots, r->key.path) : 0);
        iot_jw_string(b, "grouped_by", iot_merge_grouped_by(m, i));
        if (r->flags & IOT_REC_FOLDED)
            iot_jw_null(b, "step");
        else
            iot_jw_int(b, "step", r->key.group ? (int64_t)r->key.seq : (int64_t)r->step);
        iot_jw_bool(b, "created", r->flags & IOT_REC_CREATED);
        iot_jw_bool(b, "open_at_exit", r->flags & IOT_REC_OPEN_AT_EXIT);
        iot_jw_string(b, "driver", d ? d->driver : NULL);
        iot_jw_string(b, "file_system", d && d->file_system ? d->file_system : "unknown");
        iot_jw_string(b, "mpiio_driver", d ? d->mpiio_driver : NULL);
        iot_jw_int(b, "ranks", r->ranks);
        iot_jw_int(b, "group_size", r->group_size);
        iot_jw_string(b, "data_level", iot_level_name(lvl));
        iot_jw_int(b, "bytes_written", (int64_t)data->bytes_written);
        iot_jw_int(b, "bytes_read", (int64_t)data->bytes_read);
        iot_jw_double(b, "wall_time_s", wall);
        iot_jw_double(b, "bandwidth_mib_s", mib_s(data->bytes_written + data->bytes_read, wall));
        iot_jw_double(b, "write_bandwidth_mib_s", mib_s(data->bytes_written, wt));
        iot_jw_double(b, "read_bandwidth_mib_s", mib_s(data->bytes_read, rt));
        /* stdio's own system calls are not seen: what they wrote is not known */
        if (data->bytes_written > 0 && !stdio->bytes_written)
            iot_jw_double(b, "write_amplification", (double)posix->bytes_written / (double)data->bytes_written);
        else
            iot_jw_null(b, "write_amplification");
        iot_jw_double(b, "io_time_s", r->io_max);
        iot_jw_double(b, "io_time_sum_s", r->io_sum);
        iot_jw_bool(b, "time_sampled", r->flags & IOT_REC_TIME_SAMPLED);
        write_level(b, IOT_LEVEL_POSIX, posix);
        iot_jw_double(b, "sync_time_s", r->sync_time);
        iot_jw_double(b, "meta_time_s", r->meta_time);
        iot_jw_end_object(b);
        write_level(b, IOT_LEVEL_MPIIO, &r->level[IOT_LEVEL_MPIIO]);
        iot_jw_end_object(b);
        write_level(b, IOT_LEVEL_HDF5, &r->level[IOT_LEVEL_HDF5]);
        iot_jw_end_object(b);
        write_level(b, IOT_LEVEL_PNETCDF, &r->level[IOT_LEVEL_PNETCDF]);
        iot_jw_end_object(b);
        write_level(b, IOT_LEVEL_STDIO, stdio);
        iot_jw_end_object(b);
        iot_jw_raw(b, "settings", d && d->settings_json ? d->settings_json : "[]");
        if (d && d->hints_json)
            iot_jw_raw(b, "mpi_hints", d->hints_json);
        iot_jw_raw(b, "application_settings", d && d->app_json ? d->app_json : "{}");
        if (d && d->datasets_json)
            iot_jw_raw(b, "datasets", d->datasets_json);
        iot_jw_end_object(b);
    }
    iot_jw_end_array(b);
    free(seen);
    free(counts);
    iot_jw_begin_object(b, "totals");
    iot_jw_int(b, "phases", t->phases);
    iot_jw_int(b, "bytes_written", t->bytes_written);
    iot_jw_int(b, "bytes_read", t->bytes_read);
    iot_jw_double(b, "write_time_s", t->write_time);
    iot_jw_double(b, "read_time_s", t->read_time);
    iot_jw_double(b, "io_time_s", t->io_time);
    iot_jw_double(b, "write_bandwidth_mib_s", mib_s((uint64_t)t->bytes_written, t->write_time));
    iot_jw_double(b, "read_bandwidth_mib_s", mib_s((uint64_t)t->bytes_read, t->read_time));
    iot_jw_int(b, "posix_bytes_written", t->posix_bytes_written);
    iot_jw_int(b, "posix_bytes_read", t->posix_bytes_read);
    iot_jw_end_object(b);
}
