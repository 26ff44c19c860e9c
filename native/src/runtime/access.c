/* Access-pattern module: what each rank's collective MPI-IO calls touch in
 * the file, summarized per phase and direction in a fixed size (extent,
 * request count and sizes, whether calls and requests follow one stride),
 * and the report's "access" section. A request is a contiguous piece of the
 * file after the view is applied, as ROMIO's flattening sees it. */
#include <stdlib.h>
#include <string.h>

#include "iotuner/ops.h"
#include "access.h"
#include "comm.h"
#include "module.h"
#include "phases.h"
#include "pmpi.h"

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

IOT_TLS iot_phase *iot_op_phase;

static void dir_init(acc_dir *d)
{
    memset(d, 0, sizeof *d);
    d->first = INT64_MAX;
    d->req_min = INT64_MAX;
    d->call_bytes = d->call_requests = d->call_step = d->req_stride = UNSET;
}

/* ---- flattening a filetype ---- */

typedef struct {
    int64_t *off, *len;
    int n, cap, failed;
} pieces;

static void add_piece(pieces *p, int64_t off, int64_t len)
{
    if (p->failed || len <= 0)
        return;
    if (p->n && p->off[p->n - 1] + p->len[p->n - 1] == off) {
        p->len[p->n - 1] += len;
        return;
    }
    if (p->n == p->cap) {
        p->failed = 1;
        return;
    }
    p->off[p->n] = off;
    p->len[p->n++] = len;
}

static int64_t extent_of(MPI_Datatype t)
{
    MPI_Aint lb = 0, ext = 0;
    iot_pmpi.Type_get_extent(t, &lb, &ext);
    return (int64_t)ext;
}

static void flatten(MPI_Datatype t, int64_t base, pieces *p, int depth);

/* count instances of old, stride bytes apart, from base: old is flattened once, and a dense old (one piece
 * as long as its extent, like MPI_BYTE) makes the run one piece, so a 1 MiB block of bytes costs one step */
static void replicate(MPI_Datatype old, int64_t count, int64_t stride, int64_t base, pieces *p, int depth)
{
    if (count <= 0 || p->failed)
        return;
    int64_t off[64], len[64];
    pieces sub = {off, len, 0, 64, 0};
    flatten(old, 0, &sub, depth + 1);
    int64_t ext = extent_of(old);
    if (sub.failed) { /* many pieces per element: one element at a time */
        for (int64_t i = 0; i < count && !p->failed; i++)
            flatten(old, base + i * stride, p, depth + 1);
        return;
    }
    if (sub.n == 1 && sub.off[0] == 0 && sub.len[0] == ext && stride == ext) {
        add_piece(p, base, count * ext);
        return;
    }
    for (int64_t i = 0; i < count && !p->failed; i++)
        for (int k = 0; k < sub.n && !p->failed; k++)
            add_piece(p, base + i * stride + sub.off[k], sub.len[k]);
}

/* count blocks of blen (or fixed_blen) elements of old, block i at disp[i] bytes */
static void blocks(MPI_Datatype old, int count, const int *blen, int fixed_blen, const int64_t *disp, int64_t base,
                   pieces *p, int depth)
{
    int64_t ext = extent_of(old);
    for (int i = 0; i < count && !p->failed; i++)
        replicate(old, blen ? blen[i] : fixed_blen, ext, base + disp[i], p, depth);
}

static void flatten(MPI_Datatype t, int64_t base, pieces *p, int depth)
{
    int ni, na, nd, comb;
    if (depth > 16 || iot_pmpi.Type_get_envelope(t, &ni, &na, &nd, &comb) != MPI_SUCCESS) {
        p->failed = 1;
        return;
    }
    if (comb == MPI_COMBINER_NAMED) {
        int size = 0;
        iot_pmpi.Type_size(t, &size);
        add_piece(p, base, size);
        return;
    }
    int *ints = malloc((size_t)(ni + 1) * sizeof *ints);
    MPI_Aint *aints = malloc((size_t)(na + 1) * sizeof *aints);
    MPI_Datatype *types = malloc((size_t)(nd + 1) * sizeof *types);
    int64_t *disp = NULL;
    if (!ints || !aints || !types ||
        iot_pmpi.Type_get_contents(t, ni, na, nd, ints, aints, types) != MPI_SUCCESS) {
        p->failed = 1;
        nd = 0;
        goto out;
    }
    switch (comb) {
    case MPI_COMBINER_DUP:
    case MPI_COMBINER_RESIZED: /* the extent changes, not where the data is */
        flatten(types[0], base, p, depth + 1);
        break;
    case MPI_COMBINER_CONTIGUOUS:
        replicate(types[0], ints[0], extent_of(types[0]), base, p, depth);
        break;
    case MPI_COMBINER_VECTOR:
    case MPI_COMBINER_HVECTOR: {
        int64_t stride = comb == MPI_COMBINER_VECTOR ? ints[2] * extent_of(types[0]) : (int64_t)aints[0];
        disp = malloc((size_t)(ints[0] + 1) * sizeof *disp);
        for (int i = 0; disp && i < ints[0]; i++)
            disp[i] = i * stride;
        if (disp)
            blocks(types[0], ints[0], NULL, ints[1], disp, base, p, depth);
        break;
    }
    case MPI_COMBINER_INDEXED:
    case MPI_COMBINER_HINDEXED:
    case MPI_COMBINER_INDEXED_BLOCK:
    case MPI_COMBINER_HINDEXED_BLOCK: {
        int n = ints[0], block = comb == MPI_COMBINER_INDEXED_BLOCK || comb == MPI_COMBINER_HINDEXED_BLOCK;
        int64_t ext = extent_of(types[0]);
        disp = malloc((size_t)(n + 1) * sizeof *disp);
        for (int i = 0; disp && i < n; i++)
            disp[i] = comb == MPI_COMBINER_INDEXED         ? (int64_t)ints[1 + n + i] * ext
                      : comb == MPI_COMBINER_INDEXED_BLOCK ? (int64_t)ints[2 + i] * ext
                                                           : (int64_t)aints[i];
        if (disp)
            blocks(types[0], n, block ? NULL : ints + 1, block ? ints[1] : 0, disp, base, p, depth);
        break;
    }
    case MPI_COMBINER_STRUCT:
        for (int i = 0; i < ints[0] && !p->failed; i++)
            replicate(types[i], ints[1 + i], extent_of(types[i]), base + (int64_t)aints[i], p, depth);
        break;
    default: /* subarray, darray, ...: bytes only */
        p->failed = 1;
    }
out:
    for (int i = 0; i < nd; i++) {
        int ti, ta, td, tc;
        if (iot_pmpi.Type_get_envelope(types[i], &ti, &ta, &td, &tc) == MPI_SUCCESS && tc != MPI_COMBINER_NAMED)
            iot_pmpi.Type_free(&types[i]);
    }
    free(disp);
    free(ints);
    free(aints);
    free(types);
}

iot_view *iot_view_new(int64_t disp, MPI_Datatype etype, MPI_Datatype filetype)
{
    iot_view *v = calloc(1, sizeof *v);
    if (!v)
        return NULL;
    int esize = 1, fsize = 0;
    iot_pmpi.Type_size(etype, &esize);
    iot_pmpi.Type_size(filetype, &fsize);
    v->disp = disp;
    v->etype = esize > 0 ? esize : 1;
    v->size = fsize;
    v->extent = extent_of(filetype);
    pieces p = {malloc(IOT_VIEW_PIECES * sizeof(int64_t)), malloc(IOT_VIEW_PIECES * sizeof(int64_t)), 0,
                IOT_VIEW_PIECES, 0};
    if (p.off && p.len && fsize > 0)
        flatten(filetype, 0, &p, 0);
    if (!p.off || !p.len || p.failed || fsize <= 0) {
        free(p.off);
        free(p.len);
        p.off = p.len = NULL;
        p.n = 0;
    }
    v->off = p.off;
    v->len = p.len;
    v->npieces = p.n;
    return v;
}

void iot_view_free(iot_view *v)
{
    while (v) {
        iot_view *older = v->older;
        free(v->off);
        free(v->len);
        free(v);
        v = older;
    }
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
    iot_access *a = atomic_load(&ph->access);
    if (a)
        return a;
    iot_access *fresh = calloc(1, sizeof *fresh);
    if (!fresh)
        return NULL;
    pthread_mutex_init(&fresh->lock, NULL);
    dir_init(&fresh->dir[0]);
    dir_init(&fresh->dir[1]);
    iot_access *none = NULL;
    if (atomic_compare_exchange_strong(&ph->access, &none, fresh))
        return fresh;
    free(fresh);
    return none;
}

void iot_access_note(iot_phase *ph, const iot_view *v, int64_t offset, uint64_t bytes, int is_write)
{
    iot_access *a;
    if (!ph || !bytes || !(a = access_of(ph)))
        return;
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

void iot_op_note(int op, long long bytes)
{
    iot_access *a;
    iot_phase *ph = iot_op_phase;
    if (!ph || iot_internal || op < 0 || op >= IOT_NOPS || !(a = access_of(ph)))
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

IOT_EXPORT int iotuner_op_active(void)
{
    return iot_op_phase != NULL && !iot_internal;
}

IOT_EXPORT void iotuner_op_note(int op, long long bytes)
{
    iot_op_note(op, bytes);
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
static char *pack_entries(size_t *len)
{
    size_t nph;
    iot_phase **phases = iot_phases(&nph);
    iot_buf b;
    iot_buf_init(&b);
    for (size_t i = 0; phases && i < nph; i++) {
        iot_access *a = atomic_load(&phases[i]->access);
        if (!a)
            continue; /* on one process too: ROMIO's two-phase I/O still buffers in rounds there */
        acc_entry e;
        memset(&e, 0, sizeof e);
        e.key = phases[i]->key;
        e.rank = iot_g.rank;
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
    char *mine = pack_entries(&mine_len), *got = mine;
    len = mine_len;
    if (ctx->comm != MPI_COMM_NULL)
        iot_gather_bytes(ctx->comm, mine, mine_len, &got, &len);
    if (ctx->root && ctx->out) {
        unpacked *all = unpack_entries(ctx, got, len, &total);
        if (total) /* qsort wants a non-null array even when empty */
            qsort(all, total, sizeof *all, by_phase);
        iot_buf *b = ctx->out;
        if (total)
            iot_jw_begin_array(b, "access");
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

static const iot_module access_module = {.name = "access", .report = access_report};
IOT_MODULE(access_module)
