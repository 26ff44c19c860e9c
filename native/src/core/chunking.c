/* Chunk dimensions from a chunk size in bytes (hdf5.chunk_bytes). The rule
 * is documented in docs/settings.md; the runtime applies it at H5Dcreate. */
#include "iotuner/core.h"

#include <stdio.h>

/* a * b, saturating: extents of huge datasets must not wrap around */
static uint64_t mul_sat(uint64_t a, uint64_t b)
{
    return a && b > UINT64_MAX / a ? UINT64_MAX : a * b;
}

static uint64_t product(const uint64_t *d, int from, int rank)
{
    uint64_t p = 1;
    for (int i = from; i < rank; i++)
        p = mul_sat(p, d[i]);
    return p;
}

int64_t iot_chunk_for_bytes(int rank, const uint64_t *dims, const uint64_t *maxdims, uint64_t elem_size,
                            int64_t bytes, uint64_t *chunk, char *why, size_t whylen)
{
    if (whylen)
        why[0] = 0;
    if (rank <= 0 || rank > IOT_MAX_DIMS) {
        snprintf(why, whylen, "the dataset is scalar or null: nothing to chunk");
        return -1;
    }
    if (elem_size == 0 || bytes <= 0) {
        snprintf(why, whylen, elem_size ? "the requested chunk size is not positive" : "the datatype has no size");
        return -1;
    }
    if (elem_size > IOT_CHUNK_MAX_BYTES) {
        snprintf(why, whylen, "one element (%llu bytes) exceeds HDF5's largest chunk (4 GiB - 1)",
                 (unsigned long long)elem_size);
        return -1;
    }
    uint64_t bound[IOT_MAX_DIMS];
    int extendible = 0;
    for (int i = 0; i < rank; i++) {
        bound[i] = maxdims ? maxdims[i] : dims[i];
        if (bound[i] == 0) {
            snprintf(why, whylen, "the dataset is empty (dimension %d has a fixed extent of 0): nothing to chunk", i);
            return -1;
        }
        chunk[i] = dims[i] ? dims[i] : 1; /* an extendible dimension may start at 0 */
        extendible |= bound[i] > chunk[i];
    }

    /* the chunk's element budget: the request, under HDF5's 4 GiB limit, at least one element */
    uint64_t want = (uint64_t)bytes;
    int capped = want > IOT_CHUNK_MAX_BYTES;
    if (capped)
        want = IOT_CHUNK_MAX_BYTES;
    uint64_t limit = want / elem_size;
    int one_element = limit == 0;
    if (one_element)
        limit = 1;

    /* Shrink the slowest-varying dimensions first, so that a chunk is whole
     * rows of the fastest-varying ones (contiguous in the file's row-major
     * order) for as long as a row fits. */
    uint64_t total = product(chunk, 0, rank);
    int cut = -1; /* the dimension cut to a whole number of rows below it */
    if (total > limit) {
        for (int i = 0; i < rank; i++) {
            uint64_t inner = product(chunk, i + 1, rank);
            if (inner <= limit) {
                chunk[i] = limit / inner;
                cut = i;
                break;
            }
            chunk[i] = 1;
        }
    } else if (total < limit && extendible) {
        /* Extendible dimensions grow towards the request, slowest-varying
         * first: their current extent (often 0) says nothing about the final
         * size, and one-element chunks would cripple appends. The next one
         * grows only once this one reached its maximum, so rows keep the
         * current extents of the faster dimensions. */
        for (int i = 0; i < rank && total < limit; i++) {
            if (bound[i] <= chunk[i])
                continue;
            uint64_t inner = total / chunk[i];
            uint64_t c = limit / inner;
            int at_bound = bound[i] != IOT_DIM_UNLIMITED && c >= bound[i];
            if (at_bound)
                c = bound[i];
            if (c > chunk[i]) {
                chunk[i] = c;
                total = inner * c;
                cut = i;
            }
            if (!at_bound)
                break;
        }
    }
    total = product(chunk, 0, rank);
    uint64_t got = total * elem_size; /* < 4 GiB by construction */
    if (got == (uint64_t)bytes)
        return (int64_t)got;

    /* why the chunk is not the requested size */
    int whole = 1; /* the chunk spans every dimension's largest extent */
    for (int i = 0; i < rank; i++)
        whole &= bound[i] != IOT_DIM_UNLIMITED && chunk[i] == bound[i];
    uint64_t row = product(chunk, cut < 0 ? rank : cut + 1, rank) * elem_size;
    if (one_element)
        snprintf(why, whylen, "one element (%llu bytes) is larger than the requested chunk: one-element chunks",
                 (unsigned long long)elem_size);
    else if (whole && !extendible)
        snprintf(why, whylen, "the whole dataset (%llu bytes) is smaller than the requested chunk: one chunk",
                 (unsigned long long)got);
    else if (whole)
        snprintf(why, whylen,
                 "the dataset's maximum extent (%llu bytes) is smaller than the requested chunk: one chunk",
                 (unsigned long long)got);
    else if (capped)
        snprintf(why, whylen, "capped below 4 GiB, HDF5's largest chunk, in whole rows of %llu bytes",
                 (unsigned long long)row);
    else if (row == elem_size)
        snprintf(why, whylen, "rounded down to whole elements of %llu bytes", (unsigned long long)row);
    else
        snprintf(why, whylen, "rounded down to whole rows of %llu bytes", (unsigned long long)row);
    return (int64_t)got;
}

uint64_t iot_chunk_count(int rank, const uint64_t *dims, const uint64_t *maxdims, const uint64_t *chunk)
{
    uint64_t n = 1;
    for (int i = 0; i < rank; i++) {
        uint64_t extent = maxdims && maxdims[i] != IOT_DIM_UNLIMITED ? maxdims[i] : dims[i];
        if (extent < 1)
            extent = 1;
        uint64_t c = chunk[i] ? chunk[i] : 1;
        n = mul_sat(n, extent / c + (extent % c != 0));
    }
    return n;
}

int iot_chunk_ruinous(int rank, const uint64_t *dims, const uint64_t *maxdims, const uint64_t *chunk,
                      uint64_t elem_size, char *why, size_t whylen)
{
    uint64_t bytes = mul_sat(product(chunk, 0, rank), elem_size ? elem_size : 1);
    uint64_t n = iot_chunk_count(rank, dims, maxdims, chunk);
    if (bytes >= IOT_CHUNK_SMALL_BYTES || n <= IOT_CHUNK_SMALL_MAX)
        return 0;
    snprintf(why, whylen,
             "%llu chunks of %llu bytes (more than %u chunks under %u bytes would stall the job)",
             (unsigned long long)n, (unsigned long long)bytes, IOT_CHUNK_SMALL_MAX, IOT_CHUNK_SMALL_BYTES);
    return 1;
}

void iot_chunk_text(int rank, const uint64_t *chunk, uint64_t elem_size, char *out, size_t outlen)
{
    size_t pos = 0;
    if (!outlen)
        return;
    out[0] = 0;
    pos += (size_t)snprintf(out, outlen, "%llu (", (unsigned long long)(product(chunk, 0, rank) * elem_size));
    for (int i = 0; i < rank && pos < outlen; i++)
        pos += (size_t)snprintf(out + pos, outlen - pos, "%s%llu", i ? "," : "", (unsigned long long)chunk[i]);
    if (pos < outlen)
        snprintf(out + pos, outlen - pos, ")");
}
