/* hdf5.chunk_bytes: chunk dimensions from a size in bytes. */
#include "check.h"
#include "iotuner/core.h"

#define U IOT_DIM_UNLIMITED

static char why[320];
static uint64_t c[IOT_MAX_DIMS];

static int64_t chunk(int rank, const uint64_t *dims, const uint64_t *maxdims, uint64_t elem, int64_t bytes)
{
    for (int i = 0; i < IOT_MAX_DIMS; i++)
        c[i] = 0;
    return iot_chunk_for_bytes(rank, dims, maxdims, elem, bytes, c, why, sizeof why);
}

static const char *text(int rank, uint64_t elem)
{
    static char out[200];
    iot_chunk_text(rank, c, elem, out, sizeof out);
    return out;
}

int main(void)
{
    /* 1-D larger than the chunk: exactly the request */
    uint64_t d1[] = {32768};
    CHECK(chunk(1, d1, NULL, 4, 65536) == 65536 && c[0] == 16384);
    CHECK_STR(why, "");
    CHECK_STR(text(1, 4), "65536 (16384)");

    /* 2-D: the slowest dimension shrinks to whole rows of the fastest */
    uint64_t d2[] = {26, 2562};
    CHECK(chunk(2, d2, d2, 8, 65536) == 61488 && c[0] == 3 && c[1] == 2562);
    CHECK_STR(why, "rounded down to whole rows of 20496 bytes");
    CHECK_STR(text(2, 8), "61488 (3,2562)");

    /* a row larger than the chunk: the next dimension is cut too */
    uint64_t d3[] = {26, 10242};
    CHECK(chunk(2, d3, NULL, 8, 65536) == 65536 && c[0] == 1 && c[1] == 8192);
    uint64_t d4[] = {4, 1000, 1000};
    CHECK(chunk(3, d4, NULL, 8, 65536) == 64000 && c[0] == 1 && c[1] == 8 && c[2] == 1000);
    CHECK_STR(why, "rounded down to whole rows of 8000 bytes");

    /* a fixed dataset smaller than the chunk: one chunk, the whole dataset */
    uint64_t d5[] = {2562};
    CHECK(chunk(1, d5, NULL, 8, 65536) == 20496 && c[0] == 2562);
    CHECK_CONTAINS(why, "whole dataset (20496 bytes)");
    uint64_t d6[] = {3, 5};
    CHECK(chunk(2, d6, NULL, 4, 1 << 20) == 60 && c[0] == 3 && c[1] == 5);

    /* nothing to chunk */
    CHECK(chunk(0, NULL, NULL, 8, 65536) == -1);
    CHECK_CONTAINS(why, "scalar or null");
    uint64_t zero[] = {0};
    CHECK(chunk(1, zero, zero, 8, 65536) == -1);
    CHECK_CONTAINS(why, "empty");
    uint64_t d7[] = {4};
    CHECK(chunk(1, d7, NULL, 8ull << 30, 65536) == -1); /* an 8 GiB element */
    CHECK_CONTAINS(why, "4 GiB");

    /* extendible: grows to the request (an appended dataset often starts empty) */
    uint64_t unl[] = {U};
    CHECK(chunk(1, zero, unl, 8, 65536) == 65536 && c[0] == 8192);
    uint64_t d8[] = {0, 100}, m8[] = {U, 100};
    CHECK(chunk(2, d8, m8, 4, 65536) == 65200 && c[0] == 163 && c[1] == 100);
    CHECK_STR(why, "rounded down to whole rows of 400 bytes");
    /* rows keep the current extent of an extendible faster dimension */
    uint64_t d9[] = {0, 4}, m9[] = {U, U};
    CHECK(chunk(2, d9, m9, 8, 65536) == 65536 && c[0] == 2048 && c[1] == 4);
    /* ... which grows only when the slower one reached its maximum */
    uint64_t d10[] = {1, 4}, m10[] = {2, U};
    CHECK(chunk(2, d10, m10, 8, 65536) == 65536 && c[0] == 2 && c[1] == 4096);
    /* bounded by the maximum extent */
    uint64_t d11[] = {10}, m11[] = {100};
    CHECK(chunk(1, d11, m11, 8, 65536) == 800 && c[0] == 100);
    CHECK_CONTAINS(why, "maximum extent (800 bytes)");
    /* an extendible dataset larger than the request shrinks like a fixed one */
    uint64_t d12[] = {100000}, m12[] = {U};
    CHECK(chunk(1, d12, m12, 8, 65536) == 65536 && c[0] == 8192);

    /* HDF5's limit: a chunk stays under 4 GiB */
    uint64_t d13[] = {65536, 65536};
    CHECK(chunk(2, d13, NULL, 1, 4ll << 30) == 65535ll * 65536 && c[0] == 65535 && c[1] == 65536);
    CHECK_CONTAINS(why, "capped below 4 GiB");
    CHECK(chunk(1, zero, unl, 8, 8ll << 30) == 4294967288ll && c[0] == 536870911);
    CHECK((uint64_t)chunk(1, zero, unl, 1, 1ll << 40) == IOT_CHUNK_MAX_BYTES);
    /* a dataset under the cap is whole, however much was asked */
    CHECK(chunk(1, d5, NULL, 8, 1ll << 40) == 20496);
    CHECK_CONTAINS(why, "whole dataset");

    /* elements larger than the request: one-element chunks */
    uint64_t d14[] = {10, 10};
    CHECK(chunk(2, d14, NULL, 100, 64) == 100 && c[0] == 1 && c[1] == 1);
    CHECK_CONTAINS(why, "one element (100 bytes)");
    /* sizes that do not divide the request */
    uint64_t d15[] = {1000000};
    CHECK(chunk(1, d15, NULL, 3, 65536) == 65535 && c[0] == 21845);
    CHECK_STR(why, "rounded down to whole elements of 3 bytes");

    /* extents whose product overflows 64 bits */
    uint64_t d16[] = {1ull << 40, 1ull << 40, 1ull << 40};
    CHECK(chunk(3, d16, NULL, 1, 1 << 20) == 1 << 20 && c[0] == 1 && c[1] == 1 && c[2] == 1u << 20);

    /* the knob: a dataset-level size, at most 4 GiB */
    const char *doc = "{\"version\": 1, \"groups\": [{\"dataset\": \"x\", \"hdf5\": {\"chunk_bytes\": \"4M\"}}]}";
    char err[300];
    iot_settings *s = iot_settings_parse(doc, strlen(doc), err, sizeof err);
    const iot_setting *r[8];
    CHECK(s && iot_settings_resolve(s, "/f.h5", "/x", -1, r, 8) == 1 && r[0]->ints[0] == 4 << 20);
    CHECK(s && iot_settings_resolve(s, "/f.h5", "/y", -1, r, 8) == 0);
    iot_settings_free(s);
    const char *big = "{\"version\": 1, \"hdf5\": {\"chunk_bytes\": \"5G\"}}";
    CHECK(iot_settings_parse(big, strlen(big), err, sizeof err) == NULL);
    CHECK_CONTAINS(err, "above the maximum");

    /* the guard: chunks under 4 KiB are refused past 1024 of them, counted on the final extents */
    uint64_t d17[] = {131072}, one[] = {1}, c17[] = {1024}, m17[] = {IOT_DIM_UNLIMITED};
    CHECK(iot_chunk_count(1, d17, NULL, one) == 131072);
    CHECK(iot_chunk_ruinous(1, d17, NULL, one, 4, why, sizeof why) == 1);
    CHECK_CONTAINS(why, "131072 chunks of 4 bytes");
    CHECK(iot_chunk_ruinous(1, d17, NULL, c17, 4, why, sizeof why) == 0); /* 4 KiB chunks: any number */
    uint64_t d18[] = {1024};
    CHECK(iot_chunk_ruinous(1, d18, NULL, one, 8, why, sizeof why) == 0); /* a small dataset: 1024 chunks */
    uint64_t d19[] = {0, 10}, m19[] = {5000, 10}, c19[] = {1, 10};
    CHECK(iot_chunk_count(2, d19, m19, c19) == 5000); /* the maximum extent, not the empty current one */
    CHECK(iot_chunk_ruinous(2, d19, m19, c19, 8, why, sizeof why) == 1);
    CHECK(iot_chunk_count(1, d17, m17, one) == 131072); /* unlimited: the current extent */
    uint64_t huge[] = {1ull << 40, 1ull << 40}, c20[] = {1, 1};
    CHECK(iot_chunk_count(2, huge, NULL, c20) == UINT64_MAX); /* saturates */
    CHECK_DONE();
}
