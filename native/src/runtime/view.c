/* File views, flattened once at MPI_File_set_view (view.h): the filetype's
 * contiguous pieces, from its MPI type constructors. */
#include <stdlib.h>

#include "pmpi.h"
#include "view.h"

typedef struct {
    int64_t *off, *len;
    int n, cap, failed;
    int grows; /* the view's own list: doubles up to IOT_VIEW_PIECES (a scratch list on the stack does not) */
} pieces;

static int grow(pieces *p)
{
    if (!p->grows || p->cap >= IOT_VIEW_PIECES)
        return 0;
    int cap = p->cap * 2 < IOT_VIEW_PIECES ? p->cap * 2 : IOT_VIEW_PIECES;
    int64_t *off = realloc(p->off, (size_t)cap * sizeof *off);
    if (off)
        p->off = off;
    int64_t *len = off ? realloc(p->len, (size_t)cap * sizeof *len) : NULL;
    if (!len)
        return 0;
    p->len = len;
    p->cap = cap;
    return 1;
}

static void add_piece(pieces *p, int64_t off, int64_t len)
{
    if (p->failed || len <= 0)
        return;
    if (p->n && p->off[p->n - 1] + p->len[p->n - 1] == off) {
        p->len[p->n - 1] += len;
        return;
    }
    if (p->n == p->cap && !grow(p)) {
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
    pieces sub = {off, len, 0, 64, 0, 0};
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

/* a subarray's elements: one run along its fastest dimension for every index of the others, in file order */
static void subarray(MPI_Datatype old, int nd, const int *sizes, const int *sub, const int *start, int fortran,
                     int64_t base, pieces *p, int depth)
{
    if (nd < 1 || nd > 32) {
        p->failed = 1;
        return;
    }
    int64_t stride[32], s = 1; /* in elements */
    int idx[32] = {0};
    for (int i = 0; i < nd; i++) {
        int d = fortran ? i : nd - 1 - i;
        if (sub[d] <= 0)
            return;
        stride[d] = s;
        s *= sizes[d];
    }
    int fast = fortran ? 0 : nd - 1;
    int64_t ext = extent_of(old);
    for (;;) {
        int64_t at = 0;
        for (int d = 0; d < nd; d++)
            at += (int64_t)(start[d] + idx[d]) * stride[d];
        replicate(old, sub[fast], ext, base + at * ext, p, depth);
        if (p->failed)
            return;
        int i = 1; /* the next index, the dimensions after the fastest first */
        for (; i < nd; i++) {
            int d = fortran ? i : nd - 1 - i;
            if (++idx[d] < sub[d])
                break;
            idx[d] = 0;
        }
        if (i >= nd)
            return;
    }
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
    case MPI_COMBINER_SUBARRAY: {
        int n = ints[0];
        subarray(types[0], n, ints + 1, ints + 1 + n, ints + 1 + 2 * n, ints[1 + 3 * n] == MPI_ORDER_FORTRAN, base,
                 p, depth);
        break;
    }
    default: /* darray, ...: bytes only */
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
    pieces p = {malloc(256 * sizeof(int64_t)), malloc(256 * sizeof(int64_t)), 0, 256, 0, 1};
    if (p.off && p.len && fsize > 0)
        flatten(filetype, 0, &p, 0);
    if (!p.off || !p.len || p.failed || fsize <= 0 || p.n == 0) {
        free(p.off);
        free(p.len);
        p.off = p.len = NULL;
        p.n = 0;
    } else if (p.n < p.cap) { /* kept while the file stays open: exactly its pieces */
        int64_t *off = realloc(p.off, (size_t)p.n * sizeof *off), *len = realloc(p.len, (size_t)p.n * sizeof *len);
        p.off = off ? off : p.off;
        p.len = len ? len : p.len;
    }
    v->off = p.off;
    v->len = p.len;
    v->npieces = p.n;
    return v;
}

int iot_view_same(const iot_view *a, const iot_view *b)
{
    if (!a || !b || a->disp != b->disp || a->etype != b->etype || a->size != b->size || a->extent != b->extent ||
        a->npieces != b->npieces)
        return 0;
    for (int i = 0; i < a->npieces; i++)
        if (a->off[i] != b->off[i] || a->len[i] != b->len[i])
            return 0;
    return 1;
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
