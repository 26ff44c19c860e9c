/* The phases of this process (phases.h): a registry with O(1) lookups (a
 * hash table by path, the shared handle table by handle, the fd table for
 * POSIX calls), bounded by a quota. */
#include "phases.h"

#include <errno.h>
#include <stddef.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "iotuner/handles.h"
#include "iotuner/signature.h" /* iot_identity, iot_path_hash */
#include "comm.h"
#include "module.h"
#include "paths.h"
#include "pmpi.h"

iot_phase *_Atomic iot_fd_phase[IOT_FD_TABLE];
static IOT_TLS iot_phase *opening;

iot_phase *iot_phase_opening(void)
{
    return opening;
}

void iot_phase_set_opening(iot_phase *ph)
{
    opening = ph;
}

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;

/* Live phases in creation order; aborted ones leave a hole until the next compaction. */
static iot_phase **registry;
static size_t nslots, capslots, nlive;
static int next_id;
static int warned_quota;

#define OPEN_BUCKETS 1024 /* open HDF5 / MPI-IO phases: a handful at a time */
static iot_phase *by_path[OPEN_BUCKETS];
/* open phases by their layer's handle, one table per kind (an HDF5 file id and an MPI_File may be equal) */
static iot_handles by_handle[IOT_KINDS] = {[0 ... IOT_KINDS - 1] = IOT_HANDLES_INIT};
static _Atomic int open_layer_phases; /* open HDF5 and MPI-IO phases */

static inline size_t bucket(uint64_t h)
{
    return (size_t)((h * 0x9E3779B97F4A7C15ull) >> 54) & (OPEN_BUCKETS - 1);
}

/* ---- counters by a 64-bit key: collective opens per (group, path) (the key's sequence number), opens per
 * (kind, identity) (the record's step), and POSIX phases per name (with the name's folded phase) ---- */

typedef struct {
    uint64_t key; /* 0: empty */
    uint32_t count;
    iot_phase *folded;
} counter;

typedef struct {
    counter *slots;
    size_t n, cap; /* open addressing, cap a power of two, bounded: the phases are */
} counters;

static counters opens, steps, names;

/* The counter of key (not 0), or NULL when the table cannot grow. Under the lock. */
static counter *counter_of(counters *t, uint64_t key)
{
    if ((t->n + 1) * 2 > t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 256;
        counter *slots = cap <= 4 * (size_t)IOT_MAX_PHASES ? calloc(cap, sizeof *slots) : NULL;
        if (!slots)
            return NULL;
        for (size_t i = 0; i < t->cap; i++)
            if (t->slots[i].key) {
                size_t j = bucket(t->slots[i].key) & (cap - 1);
                while (slots[j].key)
                    j = (j + 1) & (cap - 1);
                slots[j] = t->slots[i];
            }
        free(t->slots);
        t->slots = slots;
        t->cap = cap;
    }
    size_t j = bucket(key) & (t->cap - 1);
    while (t->slots[j].key && t->slots[j].key != key)
        j = (j + 1) & (t->cap - 1);
    if (!t->slots[j].key) {
        t->slots[j].key = key;
        t->n++;
    }
    return &t->slots[j];
}

static uint64_t name_key(uint64_t identity)
{
    return identity ? identity : 1;
}

static uint64_t step_key(iot_phase_kind kind, uint64_t identity)
{
    return (identity * 0x9E3779B97F4A7C15ull ^ ((uint64_t)kind + 1) << 59) | 1;
}

/* ---- the registry ---- */

void iot_level_record(const iot_phase *ph, iot_level l, iot_level_stats *s)
{
    const iot_level_counters *c = &ph->level[l];
    s->bytes_written = atomic_load(&c->bytes_written);
    s->bytes_read = atomic_load(&c->bytes_read);
    s->writes = atomic_load(&c->writes);
    s->reads = atomic_load(&c->reads);
    s->write_time = iot_ticks_to_seconds(atomic_load(&c->write_ticks));
    s->read_time = iot_ticks_to_seconds(atomic_load(&c->read_ticks));
}

struct iot_app_setting {
    char knob[72];
    char value[160];
};

static void free_phase(iot_phase *ph)
{
    free(ph->path);
    free(ph->checks);
    free(ph->mpi_hints_json);
    free(ph->datasets_json);
    free(ph->app);
    free(ph);
}

/* Drops the holes aborted phases left, once they are half of the slots. Under the lock. */
static void compact(void)
{
    if (nslots < 64 || nlive * 2 > nslots)
        return;
    size_t k = 0;
    for (size_t i = 0; i < nslots; i++)
        if (registry[i])
            registry[k++] = registry[i];
    nslots = k;
}

iot_phase *iot_phase_begin(iot_phase_kind kind, const char *path, int created)
{
    char norm[PATH_MAX];
    iot_normalize_path(path, norm, sizeof norm);
    return iot_phase_begin_normalized(kind, norm, created);
}

static iot_phase *begin(iot_phase_kind kind, const char *norm, uint64_t identity, int created)
{
    if (iot_path_excluded(norm))
        return NULL; /* the call goes to the library untouched */
    iot_phase *ph = calloc(1, sizeof *ph);
    if (!ph || !(ph->path = strdup(norm))) {
        free(ph);
        return NULL;
    }
    ph->kind = kind;
    ph->created = created;
    ph->open = 1;
    ph->handle = -1;
    ph->comm = MPI_COMM_NULL;
    ph->group_size = 1;
    ph->files = 1;
    ph->identity = identity;
    ph->key.path = iot_path_hash(norm);
    ph->key.kind = (uint32_t)kind;
    snprintf(ph->file_system, sizeof ph->file_system, "%s", iot_file_system_of(norm));
    pthread_mutex_lock(&registry_lock);
    if (nlive >= IOT_MAX_PHASES) {
        pthread_mutex_unlock(&registry_lock);
        free_phase(ph);
        if (!warned_quota++)
            iot_warn("more than %d files were opened: the later ones are not measured", IOT_MAX_PHASES);
        return NULL;
    }
    if (nslots == capslots) {
        compact();
        if (nslots == capslots) {
            size_t cap = capslots ? capslots * 2 : 256;
            iot_phase **r = realloc(registry, cap * sizeof *r);
            if (!r) {
                pthread_mutex_unlock(&registry_lock);
                free_phase(ph);
                return NULL;
            }
            registry = r;
            capslots = cap;
        }
    }
    ph->id = next_id++;
    ph->key.seq = (uint32_t)ph->id; /* independent: unique on this rank */
    /* every open counts, also one that moves no data or turns out collective: the k-th open of a name is
     * the k-th on every rank that opens the files of that name in the same order */
    counter *step = counter_of(&steps, step_key(kind, identity));
    ph->step = step ? step->count++ : UINT32_MAX - 1;
    registry[nslots++] = ph;
    nlive++;
    if (kind != IOT_KIND_POSIX) {
        size_t b = bucket(ph->key.path);
        ph->next_path = by_path[b];
        by_path[b] = ph;
        atomic_fetch_add(&open_layer_phases, 1);
    }
    pthread_mutex_unlock(&registry_lock);
    ph->t_start = iot_ticks();
    return ph;
}

iot_phase *iot_phase_begin_normalized(iot_phase_kind kind, const char *norm, int created)
{
    return begin(kind, norm, iot_identity(norm, NULL, 0), created);
}

iot_phase *iot_phase_begin_posix(const char *norm, int created)
{
    uint64_t h = iot_identity(norm, NULL, 0);
    pthread_mutex_lock(&registry_lock);
    counter *n = counter_of(&names, name_key(h));
    iot_phase *folded = n && n->count >= IOT_FOLD_AFTER ? n->folded : NULL;
    int fold = n && n->count >= IOT_FOLD_AFTER;
    if (n && !fold)
        n->count++;
    if (folded) {
        atomic_fetch_add(&folded->files, 1);
        if (!folded->open) /* the sequence goes on: its time runs from the first open to the last close */
            folded->open = 1;
    }
    pthread_mutex_unlock(&registry_lock);
    if (folded)
        return folded;
    if (!fold)
        return begin(IOT_KIND_POSIX, norm, h, created);
    /* the first file past the bound: the name's folded phase, named by the pattern */
    char identity[PATH_MAX];
    iot_identity(norm, identity, sizeof identity);
    iot_phase *ph = begin(IOT_KIND_POSIX, identity, h, created);
    if (!ph)
        return NULL;
    ph->folded = 1;
    snprintf(ph->file_system, sizeof ph->file_system, "%s", iot_file_system_of(norm));
    pthread_mutex_lock(&registry_lock);
    n = counter_of(&names, name_key(h));
    if (n && !n->folded) {
        n->folded = ph;
    } else if (n) { /* another thread made it meanwhile */
        iot_phase *other = n->folded;
        atomic_fetch_add(&other->files, 1);
        other->open = 1;
        pthread_mutex_unlock(&registry_lock);
        iot_phase_abort(ph);
        return other;
    }
    pthread_mutex_unlock(&registry_lock);
    return ph;
}

void iot_phase_posix_closed(iot_phase *ph)
{
    const iot_level_counters *c = &ph->level[IOT_LEVEL_POSIX], *s = &ph->level[IOT_LEVEL_STDIO];
    if (ph->folded) {
        ph->t_end = iot_ticks();
        ph->open = 0;
    } else if (atomic_load(&c->bytes_written) == 0 && atomic_load(&c->bytes_read) == 0 &&
               atomic_load(&s->bytes_written) == 0 && atomic_load(&s->bytes_read) == 0) {
        pthread_mutex_lock(&registry_lock); /* a file opened and closed without I/O is not a phase: not counted */
        counter *n = counter_of(&names, name_key(ph->identity));
        if (n && n->count)
            n->count--;
        pthread_mutex_unlock(&registry_lock);
        iot_phase_abort(ph);
    } else {
        iot_phase_end(ph);
    }
}

void iot_phase_set_group(iot_phase *ph, uint64_t group, int size, int rank)
{
    if (!ph || ph->key.group || !group || size < 2)
        return;
    pthread_mutex_lock(&registry_lock);
    counter *c = counter_of(&opens, (group ^ (ph->key.path * 0x9E3779B97F4A7C15ull)) | 1);
    uint32_t seq = c ? c->count++ : UINT32_MAX;
    if (seq != UINT32_MAX) {
        ph->key.group = group;
        ph->key.seq = seq;
        ph->group_size = size;
        ph->group_rank = rank;
    }
    pthread_mutex_unlock(&registry_lock);
}

static void unlink_chain(iot_phase **head, iot_phase *ph, size_t next_offset)
{
    for (iot_phase **p = head; *p; p = (iot_phase **)((char *)*p + next_offset))
        if (*p == ph) {
            *p = *(iot_phase **)((char *)ph + next_offset);
            return;
        }
}

/* Forgets an open phase's lookups. Under the lock. */
static void unlink_open(iot_phase *ph)
{
    if (ph->kind != IOT_KIND_POSIX) {
        unlink_chain(&by_path[bucket(ph->key.path)], ph, offsetof(iot_phase, next_path));
        atomic_fetch_sub(&open_layer_phases, 1);
    }
    if (ph->handle != -1)
        iot_handles_remove(&by_handle[ph->kind], IOT_HANDLE_INT(ph->handle), ph);
}

void iot_phase_set_handle(iot_phase *ph, int64_t handle)
{
    ph->comm_source = NULL; /* the file is open: what the layer gave for the open is gone */
    pthread_mutex_lock(&registry_lock);
    if (ph->handle != -1)
        iot_handles_remove(&by_handle[ph->kind], IOT_HANDLE_INT(ph->handle), ph);
    ph->handle = handle;
    iot_handles_put(&by_handle[ph->kind], IOT_HANDLE_INT(handle), ph); /* no room: the layer finds no phase */
    ph->handles++;
    pthread_mutex_unlock(&registry_lock);
}

/* The phase's communicator is the modules' until its end. */
static void forget_comm(iot_phase *ph)
{
    ph->comm_source = NULL;
    if (ph->comm != MPI_COMM_NULL)
        iot_pmpi.Comm_free(&ph->comm);
}

void iot_phase_end(iot_phase *ph)
{
    if (!ph)
        return;
    ph->t_end = iot_ticks();
    pthread_mutex_lock(&registry_lock);
    if (ph->open)
        unlink_open(ph);
    ph->open = 0;
    pthread_mutex_unlock(&registry_lock);
    if (ph->announced) {
        ph->announced = 0;
        iot_emit_phase_end(ph);
        forget_comm(ph);
    }
}

void iot_phase_abort(iot_phase *ph)
{
    if (!ph)
        return;
    if (ph->announced)
        iot_emit_phase_dropped(ph);
    forget_comm(ph);
    pthread_mutex_lock(&registry_lock);
    if (ph->open)
        unlink_open(ph);
    /* usually the newest phase: look from the end */
    for (size_t i = nslots; i-- > 0;)
        if (registry[i] == ph) {
            if (i == nslots - 1)
                nslots--;
            else
                registry[i] = NULL;
            nlive--;
            break;
        }
    pthread_mutex_unlock(&registry_lock);
    /* a POSIX fd may still point at it if a failed open left one behind */
    for (int fd = 0; atomic_load(&ph->open_fds) > 0 && fd < IOT_FD_TABLE; fd++)
        if (atomic_load_explicit(&iot_fd_phase[fd], memory_order_relaxed) == ph)
            atomic_store_explicit(&iot_fd_phase[fd], NULL, memory_order_relaxed);
    free_phase(ph);
}

/* ---- what the modules hear ---- */

void iot_phase_announce(iot_phase *ph, const iot_call *opening, MPI_Comm (*source)(void *), void *arg)
{
    ph->comm_source = source;
    ph->comm_arg = arg;
    ph->announced = 1;
    iot_emit_phase_begin(ph, opening);
}

void iot_phase_file_open(iot_phase *ph, int create, int truncate)
{
    if (ph->announced)
        iot_emit_file_open(ph, create, truncate);
}

MPI_Comm iot_phase_comm(iot_phase *ph)
{
    if (ph->comm == MPI_COMM_NULL && ph->comm_source) {
        ph->comm = ph->comm_source(ph->comm_arg);
        ph->comm_source = NULL; /* asked once: one process stays MPI_COMM_NULL */
        uint64_t group;
        int size, rank;
        iot_comm_group(ph->comm, &group, &size, &rank);
        iot_phase_set_group(ph, group, size, rank); /* keyed as the report will key it */
    }
    return ph->comm;
}

IOT_EXPORT const char *iotuner_phase_path(const iot_phase *ph)
{
    return ph->path;
}

IOT_EXPORT iot_phase_kind iotuner_phase_kind(const iot_phase *ph)
{
    return ph->kind;
}

IOT_EXPORT const iot_phase_key *iotuner_phase_key(const iot_phase *ph)
{
    return &ph->key;
}

IOT_EXPORT void *iotuner_phase_state(const iot_phase *ph, int slot)
{
    return (unsigned)slot < IOT_PHASE_SLOTS ? iot_phase_state(ph, slot) : NULL;
}

IOT_EXPORT void *iotuner_phase_swap_state(iot_phase *ph, int slot, void *expected, void *value)
{
    return (unsigned)slot < IOT_PHASE_SLOTS ? iot_phase_swap_state(ph, slot, expected, value) : NULL;
}

iot_phase *iot_phase_find_open(const char *normpath)
{
    if (!atomic_load_explicit(&open_layer_phases, memory_order_relaxed))
        return NULL; /* no HDF5 or MPI-IO file is open: a POSIX-only program skips the lookup */
    uint64_t h = iot_path_hash(normpath);
    iot_phase *hit = NULL;
    pthread_mutex_lock(&registry_lock);
    for (iot_phase *ph = by_path[bucket(h)]; ph; ph = ph->next_path)
        if (ph->key.path == h && !strcmp(ph->path, normpath) && (!hit || ph->id > hit->id))
            hit = ph; /* the newest: the one being opened */
    pthread_mutex_unlock(&registry_lock);
    return hit;
}

iot_phase *iot_phase_find_handle(iot_phase_kind kind, int64_t handle)
{
    return (unsigned)kind < IOT_KINDS ? iot_handles_find(&by_handle[kind], IOT_HANDLE_INT(handle)) : NULL;
}

void iot_phase_check(iot_phase *ph, const char *layer, const char *name, const char *dataset,
                     const char *requested, const char *effective, iot_status status, const char *reason)
{
    if (!ph)
        return;
    pthread_mutex_lock(&registry_lock);
    iot_check *c = NULL;
    for (size_t i = 0; i < ph->nchecks; i++) {
        iot_check *k = &ph->checks[i];
        if (!strcmp(k->layer, layer) && !strcmp(k->name, name) && !strcmp(k->dataset, dataset ? dataset : "")) {
            c = k;
            break;
        }
    }
    if (!c && ph->nchecks < 512) {
        if (ph->nchecks == ph->capchecks) {
            size_t cap = ph->capchecks ? ph->capchecks * 2 : 16;
            iot_check *k = realloc(ph->checks, cap * sizeof *k);
            if (k) {
                ph->checks = k;
                ph->capchecks = cap;
            }
        }
        if (ph->nchecks < ph->capchecks)
            c = &ph->checks[ph->nchecks++];
    }
    if (c) {
        snprintf(c->layer, sizeof c->layer, "%s", layer);
        snprintf(c->name, sizeof c->name, "%s", name);
        snprintf(c->dataset, sizeof c->dataset, "%s", dataset ? dataset : "");
        snprintf(c->requested, sizeof c->requested, "%s", requested ? requested : "");
        snprintf(c->effective, sizeof c->effective, "%s", effective ? effective : "");
        c->status = status;
        snprintf(c->reason, sizeof c->reason, "%s", reason ? reason : "");
    }
    pthread_mutex_unlock(&registry_lock);
}

int iot_phase_has_check(iot_phase *ph, const char *layer, const char *name)
{
    int found = 0;
    pthread_mutex_lock(&registry_lock);
    for (size_t i = 0; i < ph->nchecks && !found; i++)
        found = !strcmp(ph->checks[i].layer, layer) && !strcmp(ph->checks[i].name, name);
    pthread_mutex_unlock(&registry_lock);
    return found;
}

int iot_phase_has_dataset_check(iot_phase *ph, const char *layer, const char *name, const char *dataset)
{
    int found = 0;
    pthread_mutex_lock(&registry_lock);
    for (size_t i = 0; i < ph->nchecks && !found; i++)
        found = !strcmp(ph->checks[i].layer, layer) && !strcmp(ph->checks[i].name, name) &&
                !strcmp(ph->checks[i].dataset, dataset ? dataset : "");
    pthread_mutex_unlock(&registry_lock);
    return found;
}

void iot_phase_set_hints(iot_phase *ph, char *json)
{
    pthread_mutex_lock(&registry_lock);
    free(ph->mpi_hints_json);
    ph->mpi_hints_json = json;
    pthread_mutex_unlock(&registry_lock);
}

void iot_phase_add_dataset(iot_phase *ph, const char *entry)
{
    pthread_mutex_lock(&registry_lock);
    if (ph->ndatasets < IOT_PHASE_MAX_DATASETS) {
        size_t had = ph->datasets_json ? strlen(ph->datasets_json) - 1 : 1; /* without the closing ']' */
        char *grown = realloc(ph->datasets_json, had + strlen(entry) + 3);
        if (grown) {
            if (!ph->datasets_json)
                grown[0] = '[';
            snprintf(grown + had, strlen(entry) + 3, "%s%s]", ph->ndatasets ? "," : "", entry);
            ph->datasets_json = grown;
            ph->ndatasets++;
        }
    }
    pthread_mutex_unlock(&registry_lock);
}

void iot_phase_app_setting(iot_phase *ph, iot_layer layer, const char *knob, const char *value)
{
    /* a property list always has a value: only one the application changed from the library's default says
     * something (an MPI hint is the application's own whatever its value) */
    int k = iot_knob_find(layer, knob);
    if (layer == IOT_LAYER_HDF5 && k >= 0 && iot_catalogue[k].default_value &&
        !strcmp(iot_catalogue[k].default_value, value))
        return;
    char name[72];
    snprintf(name, sizeof name, "%s.%s", iot_layer_name(layer), knob);
    pthread_mutex_lock(&registry_lock);
    size_t i = 0;
    while (i < ph->napp && strcmp(ph->app[i].knob, name))
        i++;
    if (i == ph->napp && ph->napp < 64) {
        struct iot_app_setting *a = realloc(ph->app, (ph->napp + 1) * sizeof *a);
        if (a) {
            ph->app = a;
            snprintf(a[ph->napp++].knob, sizeof a->knob, "%s", name);
        }
    }
    if (i < ph->napp)
        snprintf(ph->app[i].value, sizeof ph->app[i].value, "%s", value);
    pthread_mutex_unlock(&registry_lock);
}

char *iot_phase_app_json(iot_phase *ph)
{
    iot_buf b;
    iot_buf_init(&b);
    iot_jw_begin_object(&b, NULL);
    pthread_mutex_lock(&registry_lock);
    for (size_t i = 0; i < ph->napp; i++)
        iot_jw_string(&b, ph->app[i].knob, ph->app[i].value);
    pthread_mutex_unlock(&registry_lock);
    iot_jw_end_object(&b);
    return iot_buf_take(&b);
}

char *iot_phase_checks_json(iot_phase *ph, int smart_form)
{
    iot_buf b;
    iot_buf_init(&b);
    iot_jw_begin_array(&b, NULL);
    pthread_mutex_lock(&registry_lock);
    for (size_t i = 0; i < ph->nchecks; i++) {
        const iot_check *c = &ph->checks[i];
        iot_jw_begin_object(&b, NULL);
        if (smart_form) { /* smart mode's log names knobs as "layer.knob" */
            char knob[80];
            snprintf(knob, sizeof knob, "%s.%s", c->layer, c->name);
            iot_jw_string(&b, "knob", knob);
        } else {
            iot_jw_string(&b, "layer", c->layer);
            iot_jw_string(&b, "knob", c->name);
        }
        if (c->dataset[0])
            iot_jw_string(&b, "dataset", c->dataset);
        iot_jw_string(&b, "requested", c->requested);
        iot_jw_string(&b, "effective", c->effective[0] ? c->effective : NULL);
        iot_jw_string(&b, "status", iot_status_name(c->status));
        if (!smart_form)
            iot_jw_string(&b, "reason", c->reason[0] ? c->reason : NULL);
        iot_jw_end_object(&b);
    }
    pthread_mutex_unlock(&registry_lock);
    iot_jw_end_array(&b);
    return iot_buf_take(&b);
}

iot_phase **iot_phases(size_t *n)
{
    pthread_mutex_lock(&registry_lock);
    iot_phase **copy = malloc((nlive ? nlive : 1) * sizeof *copy);
    *n = 0;
    if (copy)
        for (size_t i = 0; i < nslots; i++)
            if (registry[i])
                copy[(*n)++] = registry[i];
    pthread_mutex_unlock(&registry_lock);
    return copy;
}
