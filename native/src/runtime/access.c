/* Access-pattern module: what each rank's collective MPI-IO calls touch in
 * the file, summarized per phase and direction in a fixed size (extent,
 * request count and sizes, whether calls and requests follow one stride),
 * and the report's "access" section. A request is a contiguous piece of the
 * file after the view is applied, as ROMIO's flattening sees it. */
#include <stdlib.h>
#include <string.h>

#include "iotuner/ops.h"
#include "comm.h"
#include "module.h"
#include "phases.h"
#include "pmpi.h"
#include "view.h"

#define ACCESS_SECTION_VERSION 1 /* the report's "access" section (iotuner_report_version) */
#define VARIES (-1)
#define UNSET INT64_MIN
#define WALK_CAP (1 << 20) /* requests walked per call; more: bytes only (ROMIO itself walks them all) */

typedef struct {
    int64_t calls, bytes, requests, first, end, req_min, req_max;
    int64_t call_bytes, call_requests, call_step, req_stride; /* one value for every call, or VARIES */
    int64_t last_call_first, unflattened;
} acc_dir;

/* counting mode: calls of one operation with one size */
typedef struct {
    int32_t op, pad;
    int64_t bytes, calls;
} op_count;

#define OP_SLOTS 128 /* distinct (operation, size) pairs per phase; more are counted as dropped */

typedef struct iot_access {
    pthread_mutex_t lock;
    acc_dir dir[2]; /* read, write */
    int64_t view_size, view_extent, view_pieces; /* the last view a collective call used */
    int nops;
    int64_t ops_dropped;
    op_count ops[OP_SLOTS];
} iot_access;

static int slot; /* this module's state of a phase: its iot_access, NULL until a collective call */

static void dir_init(acc_dir *d)
{
    memset(d, 0, sizeof *d);
    d->first = INT64_MAX;
    d->req_min = INT64_MAX;
    d->call_bytes = d->call_requests = d->call_step = d->req_stride = UNSET;
}

/* ---- one call's requests ---- */

typedef struct {
    int64_t n, first, end, min, max, stride, prev;
    int64_t cur_off, cur_len; /* the request being extended by adjacent pieces */
} call_walk;

static void walk_flush(call_walk *w)
{
    if (w->cur_len <= 0)
        return;
    int64_t s = w->cur_off, l = w->cur_len;
    w->n++;
    if (s < w->first)
        w->first = s;
    if (s + l > w->end)
        w->end = s + l;
    if (l < w->min)
        w->min = l;
    if (l > w->max)
        w->max = l;
    if (w->n == 2)
        w->stride = s - w->prev;
    else if (w->n > 2 && s - w->prev != w->stride)
        w->stride = VARIES;
    w->prev = s;
    w->cur_len = 0;
}

static void walk_add(call_walk *w, int64_t off, int64_t len)
{
    if (w->cur_len > 0 && w->cur_off + w->cur_len == off) {
        w->cur_len += len;
        return;
    }
    walk_flush(w);
    w->cur_off = off;
    w->cur_len = len;
}

/* The requests of bytes from logical byte pos of the view; 0 when past WALK_CAP or the view is unknown. */
static int walk_view(const iot_view *v, int64_t pos, int64_t bytes, call_walk *w)
{
    if (!v || (v->npieces == 1 && v->off[0] == 0 && v->len[0] == v->extent)) {
        walk_add(w, (v ? v->disp : 0) + pos, bytes);
        return 1;
    }
    if (v->npieces <= 0 || v->size <= 0)
        return 0;
    int64_t tile = pos / v->size, skip = pos % v->size;
    int i = 0;
    while (skip >= v->len[i]) {
        skip -= v->len[i];
        i++;
    }
    for (int64_t left = bytes, steps = 0; left > 0; steps++) {
        if (steps > WALK_CAP)
            return 0;
        int64_t take = v->len[i] - skip < left ? v->len[i] - skip : left;
        walk_add(w, v->disp + tile * v->extent + v->off[i] + skip, take);
        left -= take;
        skip = 0;
        if (++i == v->npieces) {
            i = 0;
            tile++;
        }
    }
    return 1;
}

static void fold_value(int64_t *slot, int64_t value)
{
    if (*slot == UNSET)
        *slot = value;
    else if (*slot != value)
        *slot = VARIES;
}

static iot_access *access_of(iot_phase *ph)
{
    iot_access *a = iot_phase_state(ph, slot);
    if (a)
        return a;
    iot_access *fresh = calloc(1, sizeof *fresh);
    if (!fresh)
        return NULL;
    pthread_mutex_init(&fresh->lock, NULL);
    dir_init(&fresh->dir[0]);
    dir_init(&fresh->dir[1]);
    a = iot_phase_swap_state(ph, slot, NULL, fresh); /* another thread's, if it came first */
    if (a != fresh)
        free(fresh);
    return a;
}

/* A data call: the collective ones' requests (a local position query for the individual file pointer). */
static void access_data(iot_phase *ph, iot_data *call)
{
    iot_access *a;
    int64_t offset;
    if (!call->collective || !call->bytes || !iot_data_offset(call, &offset) || !(a = access_of(ph)))
        return;
    const iot_view *v = call->view;
    uint64_t bytes = call->bytes;
    int is_write = call->is_write;
    call_walk w = {0, INT64_MAX, 0, INT64_MAX, 0, 0, 0, 0, 0};
    int known = walk_view(v, offset * (v ? v->etype : 1), (int64_t)bytes, &w);
    walk_flush(&w);
    pthread_mutex_lock(&a->lock);
    acc_dir *d = &a->dir[is_write ? 1 : 0];
    d->calls++;
    d->bytes += (int64_t)bytes;
    if (v) {
        a->view_size = v->size;
        a->view_extent = v->extent;
        a->view_pieces = v->npieces;
    }
    if (!known) {
        d->unflattened++;
    } else {
        d->requests += w.n;
        d->first = w.first < d->first ? w.first : d->first;
        d->end = w.end > d->end ? w.end : d->end;
        d->req_min = w.min < d->req_min ? w.min : d->req_min;
        d->req_max = w.max > d->req_max ? w.max : d->req_max;
        fold_value(&d->call_requests, w.n);
        fold_value(&d->req_stride, w.n > 1 ? w.stride : 0);
        if (d->calls - d->unflattened > 1)
            fold_value(&d->call_step, w.first - d->last_call_first);
        d->last_call_first = w.first;
    }
    fold_value(&d->call_bytes, (int64_t)bytes);
    pthread_mutex_unlock(&a->lock);
}

/* ---- counting mode ---- */

static void access_operation(iot_phase *ph, int op, int64_t bytes)
{
    iot_access *a = access_of(ph);
    if (!a)
        return;
    pthread_mutex_lock(&a->lock);
    int i = 0;
    while (i < a->nops && !(a->ops[i].op == op && a->ops[i].bytes == bytes))
        i++;
    if (i < a->nops)
        a->ops[i].calls++;
    else if (i < OP_SLOTS)
        a->ops[a->nops++] = (op_count){op, 0, bytes, 1};
    else
        a->ops_dropped++;
    pthread_mutex_unlock(&a->lock);
}

#define OP_NAME(id, name) #name,
static const char *const op_names[IOT_NOPS] = {IOT_OPS(OP_NAME)};

/* ---- the report's "access" section ---- */

typedef struct {
    iot_phase_key key;
    int32_t rank, pad;
    acc_dir dir[2];
    int64_t view_size, view_extent, view_pieces;
    int64_t nops, ops_dropped; /* nops op_count records follow the entry */
} acc_entry;

#define LISTED_RANKS 256 /* per phase; the others are counted, not listed */

static void write_value(iot_buf *b, const char *name, int64_t v)
{
    if (v == VARIES || v == UNSET)
        iot_jw_null(b, name);
    else
        iot_jw_int(b, name, v);
}

static void write_dir(iot_buf *b, const char *name, const acc_dir *d)
{
    if (!d->calls)
        return;
    iot_jw_begin_object(b, name);
    iot_jw_int(b, "calls", d->calls);
    iot_jw_int(b, "bytes", d->bytes);
    int known = d->calls > d->unflattened;
    iot_jw_int(b, "unflattened_calls", d->unflattened);
    iot_jw_int(b, "requests", d->requests);
    write_value(b, "offset", known ? d->first : UNSET);
    write_value(b, "end", known ? d->end : UNSET);
    write_value(b, "request_min", known ? d->req_min : UNSET);
    write_value(b, "request_max", known ? d->req_max : UNSET);
    write_value(b, "call_bytes", d->call_bytes);
    write_value(b, "call_requests", d->call_requests);
    write_value(b, "call_step", d->call_step == UNSET && known ? 0 : d->call_step);
    write_value(b, "request_stride", d->req_stride);
    iot_jw_bool(b, "contiguous", known && d->call_requests == 1);
    iot_jw_end_object(b);
}

/* one rank's entry of a phase, with its operations, as rank 0 unpacked it */
typedef struct {
    acc_entry e;
    op_count *ops;
    int phase;
} unpacked;

static int by_phase(const void *x, const void *y)
{
    const unpacked *a = x, *b = y;
    if (a->phase != b->phase)
        return a->phase < b->phase ? -1 : 1;
    return a->e.rank - b->e.rank;
}

static int op_order(const void *x, const void *y)
{
    const op_count *a = x, *b = y;
    if (a->op != b->op)
        return a->op - b->op;
    return a->bytes < b->bytes ? -1 : a->bytes > b->bytes;
}

/* This rank's entries: each collective phase's summary, then its operations. */
static char *pack_entries(int rank, size_t *len)
{
    size_t nph;
    iot_phase **phases = iot_phases(&nph);
    iot_buf b;
    iot_buf_init(&b);
    for (size_t i = 0; phases && i < nph; i++) {
        iot_access *a = iot_phase_state(phases[i], slot);
        if (!a)
            continue; /* on one process too: ROMIO's two-phase I/O still buffers in rounds there */
        acc_entry e;
        memset(&e, 0, sizeof e);
        e.key = phases[i]->key;
        e.rank = rank;
        pthread_mutex_lock(&a->lock);
        e.dir[0] = a->dir[0];
        e.dir[1] = a->dir[1];
        e.view_size = a->view_size;
        e.view_extent = a->view_extent;
        e.view_pieces = a->view_pieces;
        e.nops = a->nops;
        e.ops_dropped = a->ops_dropped;
        iot_buf_append(&b, (const char *)&e, sizeof e);
        iot_buf_append(&b, (const char *)a->ops, (size_t)a->nops * sizeof(op_count));
        pthread_mutex_unlock(&a->lock);
    }
    free(phases);
    *len = b.len;
    return iot_buf_take(&b);
}

static unpacked *unpack_entries(const iot_report_ctx *ctx, const char *data, size_t len, size_t *count)
{
    size_t n = 0, cap = 0;
    unpacked *all = NULL;
    for (size_t off = 0; data && off + sizeof(acc_entry) <= len;) {
        acc_entry e;
        memcpy(&e, data + off, sizeof e);
        off += sizeof e;
        size_t bytes = (size_t)e.nops * sizeof(op_count);
        if (e.nops < 0 || e.nops > OP_SLOTS || off + bytes > len)
            break;
        if (n == cap) {
            unpacked *more = realloc(all, (cap = cap ? 2 * cap : 16) * sizeof *all);
            if (!more)
                break;
            all = more;
        }
        all[n].e = e;
        all[n].ops = malloc(bytes ? bytes : 1);
        if (all[n].ops) {
            memcpy(all[n].ops, data + off, bytes);
            qsort(all[n].ops, (size_t)e.nops, sizeof(op_count), op_order);
        } else
            all[n].e.nops = 0;
        all[n].phase = ctx->phase_id(ctx, &e.key, e.rank);
        off += bytes;
        n++;
    }
    *count = n;
    return all;
}

static void write_rank(iot_buf *b, const unpacked *u)
{
    iot_jw_begin_object(b, NULL);
    iot_jw_int(b, "rank", u->e.rank);
    if (u->e.view_extent) {
        iot_jw_begin_object(b, "view");
        iot_jw_int(b, "filetype_size", u->e.view_size);
        iot_jw_int(b, "filetype_extent", u->e.view_extent);
        write_value(b, "filetype_requests", u->e.view_pieces ? u->e.view_pieces : UNSET);
        iot_jw_end_object(b);
    }
    write_dir(b, "write", &u->e.dir[1]);
    write_dir(b, "read", &u->e.dir[0]);
    if (iot_g.count_ops) {
        iot_jw_begin_array(b, "operations");
        for (int64_t k = 0; k < u->e.nops; k++) {
            iot_jw_begin_object(b, NULL);
            iot_jw_string(b, "op", op_names[u->ops[k].op]);
            iot_jw_int(b, "bytes", u->ops[k].bytes);
            iot_jw_int(b, "calls", u->ops[k].calls);
            iot_jw_end_object(b);
        }
        iot_jw_end_array(b);
        iot_jw_int(b, "operations_dropped", u->e.ops_dropped);
    }
    iot_jw_end_object(b);
}

static void access_report(const iot_report_ctx *ctx)
{
    size_t mine_len = 0, len = 0, total = 0;
    char *mine = pack_entries(ctx->rank, &mine_len), *got = mine;
    len = mine_len;
    if (ctx->comm != MPI_COMM_NULL)
        iot_gather_bytes(ctx->comm, mine, mine_len, &got, &len);
    if (ctx->root && ctx->out) {
        unpacked *all = unpack_entries(ctx, got, len, &total);
        if (total) /* qsort wants a non-null array even when empty */
            qsort(all, total, sizeof *all, by_phase);
        iot_buf *b = ctx->out;
        if (total) {
            iotuner_report_version(ctx, ACCESS_SECTION_VERSION);
            iot_jw_begin_array(b, "access");
        }
        for (size_t i = 0; i < total;) {
            size_t j = i;
            while (j < total && all[j].phase == all[i].phase)
                j++;
            if (all[i].phase >= 0) {
                iot_jw_begin_object(b, NULL);
                iot_jw_int(b, "phase", all[i].phase);
                iot_jw_int(b, "ranks_total", (int64_t)(j - i));
                iot_jw_begin_array(b, "ranks");
                for (size_t k = i; k < j && k < i + LISTED_RANKS; k++)
                    write_rank(b, &all[k]);
                iot_jw_end_array(b);
                iot_jw_end_object(b);
            }
            i = j;
        }
        if (total)
            iot_jw_end_array(b);
        for (size_t i = 0; i < total; i++)
            free(all[i].ops);
        free(all);
    }
    if (got != mine)
        free(got);
    free(mine);
}

/* A subscriber to the MPI-IO level's data calls and, in counting mode, to the operations inside them. */
static const iot_module access_module = {.name = "access",
                                         .slot = &slot,
                                         .data = access_data,
                                         .operation = access_operation,
                                         .report = access_report};
IOT_MODULE(access_module)
