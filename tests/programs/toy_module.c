/* A module from outside the library, built only against the installed public
 * interface (<iotuner/module.h>, -liotuner_core) and preloaded after
 * libiotuner.so. It subscribes to every event, keeps per-phase state in its
 * slot, checks that each phase's events come in the documented order, and
 * adds a section "toy" to the run report: per rank (gathered in rank order),
 * how many of each event it heard, and each phase it saw end (its file, kind,
 * the bytes of its data events and the report's phase it went into). */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <iotuner/module.h>

enum { BEGIN, FILE_OPEN, CALL, DATA, OPERATION, END, DROPPED, NEVENTS };
static const char *const event_names[NEVENTS] = {"phase_begin", "file_open", "call", "data",
                                                 "operation", "phase_end", "phase_dropped"};
static _Atomic long heard[NEVENTS];
static _Atomic long out_of_order; /* an event of a phase without its begin, or after its end */

typedef struct {
    _Atomic int opened; /* file_open came */
    _Atomic long long bytes;
} toy_phase;

/* the phases that ended, to report */
#define MAX_ENDED 64
typedef struct {
    char path[240];
    int kind;
    long long bytes;
    iot_phase_key key;
} ended;
static ended seen[MAX_ENDED];
static int nseen;

static int slot;

static toy_phase *state(const iot_phase *ph)
{
    toy_phase *t = iotuner_phase_state(ph, slot);
    if (!t)
        out_of_order++;
    return t;
}

static void on_begin(iot_phase *ph, const iot_call *opening)
{
    heard[BEGIN]++;
    toy_phase *t = calloc(1, sizeof *t);
    if (!opening || !opening->name || iotuner_phase_swap_state(ph, slot, NULL, t) != t) {
        out_of_order++; /* a second begin of one phase */
        free(t);
    }
}

static void on_file_open(iot_phase *ph, int create, int truncate)
{
    (void)create, (void)truncate;
    heard[FILE_OPEN]++;
    toy_phase *t = state(ph);
    if (t)
        t->opened = 1;
}

static void on_call(iot_phase *ph, const iot_call *c)
{
    heard[CALL]++;
    toy_phase *t = state(ph);
    if (t && (!t->opened || !c->name))
        out_of_order++;
}

static void on_data(iot_phase *ph, iot_data *d)
{
    heard[DATA]++;
    toy_phase *t = state(ph);
    if (t && !t->opened)
        out_of_order++;
    if (t)
        t->bytes += (long long)d->bytes;
}

static void on_operation(iot_phase *ph, int op, int64_t bytes)
{
    (void)op, (void)bytes;
    heard[OPERATION]++;
    state(ph);
}

static void on_end(iot_phase *ph)
{
    heard[END]++;
    toy_phase *t = state(ph);
    if (!t)
        return;
    iotuner_phase_swap_state(ph, slot, t, NULL);
    if (nseen < MAX_ENDED) {
        ended *e = &seen[nseen++];
        strncpy(e->path, iotuner_phase_path(ph), sizeof e->path - 1);
        e->kind = iotuner_phase_kind(ph);
        e->bytes = t->bytes;
        e->key = *iotuner_phase_key(ph);
    }
    free(t);
}

static void on_dropped(iot_phase *ph)
{
    heard[DROPPED]++;
    toy_phase *t = state(ph);
    if (t)
        iotuner_phase_swap_state(ph, slot, t, NULL);
    free(t);
}

/* Collective on ctx->comm: every rank's counts and phases go to the root, which writes them. */
static void report(const iot_report_ctx *ctx)
{
    int size = 1;
    if (ctx->comm != MPI_COMM_NULL)
        PMPI_Comm_size(ctx->comm, &size);
    long mine[NEVENTS + 3];
    for (int e = 0; e < NEVENTS; e++)
        mine[e] = heard[e];
    mine[NEVENTS] = out_of_order;
    mine[NEVENTS + 1] = nseen;
    mine[NEVENTS + 2] = ctx->rank;
    long *counts = malloc(sizeof mine * (size_t)size);
    ended *phases = malloc(sizeof seen * (size_t)size);
    if (ctx->comm != MPI_COMM_NULL) {
        PMPI_Gather(mine, NEVENTS + 3, MPI_LONG, counts, NEVENTS + 3, MPI_LONG, 0, ctx->comm);
        PMPI_Gather(seen, (int)sizeof seen, MPI_BYTE, phases, (int)sizeof seen, MPI_BYTE, 0, ctx->comm);
    } else {
        memcpy(counts, mine, sizeof mine);
        memcpy(phases, seen, sizeof seen);
    }
    if (ctx->root) {
        iot_buf *b = ctx->out;
        iotuner_report_version(ctx, 3); /* the toy section's own format: the report lists it under "sections" */
        iot_jw_begin_object(b, "toy");
        iot_jw_begin_array(b, "ranks");
        for (int r = 0; r < size; r++) {
            const long *c = counts + (size_t)r * (NEVENTS + 3);
            iot_jw_begin_object(b, NULL);
            iot_jw_int(b, "rank", c[NEVENTS + 2]); /* as the rank knew itself */
            for (int e = 0; e < NEVENTS; e++)
                iot_jw_int(b, event_names[e], c[e]);
            iot_jw_int(b, "out_of_order", c[NEVENTS]);
            iot_jw_begin_array(b, "phases");
            for (long i = 0; i < c[NEVENTS + 1]; i++) {
                const ended *e = phases + (size_t)r * MAX_ENDED + i;
                iot_jw_begin_object(b, NULL);
                iot_jw_string(b, "file", e->path);
                iot_jw_string(b, "kind", e->kind == IOT_KIND_HDF5 ? "hdf5" : "mpiio");
                iot_jw_int(b, "bytes", e->bytes);
                iot_jw_int(b, "phase", ctx->phase_id(ctx, &e->key, r));
                iot_jw_end_object(b);
            }
            iot_jw_end_array(b);
            iot_jw_end_object(b);
        }
        iot_jw_end_array(b);
        iot_jw_end_object(b);
    }
    free(counts);
    free(phases);
}

static const iot_module toy = {
    .name = "toy",
    .slot = &slot,
    .phase_begin = on_begin,
    .file_open = on_file_open,
    .call = on_call,
    .data = on_data,
    .operation = on_operation,
    .phase_end = on_end,
    .phase_dropped = on_dropped,
    .report = report,
};

__attribute__((constructor)) static void toy_register(void)
{
    iotuner_module_register(&toy);
}
