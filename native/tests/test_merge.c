/* The report merge: ranks whose phase histories differ (a side check on one
 * rank between collective phases), file-per-process steps, a lagging rank. */
#include "check.h"
#include "iotuner/record.h"

#include <stdlib.h>

#define SHARED_PATH 0x5a5a5a5a5a5a5aull
#define WORLD 0x77777777ull

static iot_record rec(uint64_t group, uint64_t path, uint32_t seq, iot_phase_kind kind, uint64_t identity, int rank,
                      double t0, double t1, uint64_t written, uint64_t read)
{
    iot_phase_key k = {group, path, seq, kind};
    iot_record r;
    iot_record_init(&r, &k, identity, rank, group ? 2 : 1);
    if (!group)
        r.step = seq; /* independent: the seq given stands for the k-th open of the identity on the rank */
    r.t_open = t0;
    r.t_close = t1;
    r.level[IOT_LEVEL_HDF5].bytes_written = written;
    r.level[IOT_LEVEL_HDF5].writes = written ? 4 : 0;
    r.level[IOT_LEVEL_HDF5].bytes_read = read;
    r.level[IOT_LEVEL_HDF5].reads = read ? 4 : 0;
    r.level[IOT_LEVEL_HDF5].write_time = (t1 - t0) / 2;
    r.level[IOT_LEVEL_POSIX].bytes_written = written + 100; /* plus metadata */
    r.io_sum = r.io_max = t1 - t0;
    return r;
}

/* The IOR-like pattern: per iteration a collective write and a collective read of one shared file, and
 * between them rank 0 alone opening it (an independent phase that moves no data). */
static void ior_like(int reversed)
{
    enum { N = 4, MB = 1 << 20 };
    iot_record r[2][3 * N];
    int n[2] = {0, 0};
    for (int i = 0; i < N; i++) {
        double t = 10.0 * i;
        for (int rank = 0; rank < 2; rank++) {
            /* the ranks' clocks differ by a little; rank 1 writes 2 MiB, rank 0 1 MiB */
            double skew = rank * 0.001;
            r[rank][n[rank]++] = rec(WORLD, SHARED_PATH, 2 * i, IOT_KIND_HDF5, 7, rank, t + skew, t + 1 + skew,
                                     (uint64_t)(rank + 1) * MB, 0);
            r[rank][n[rank]++] = rec(WORLD, SHARED_PATH, 2 * i + 1, IOT_KIND_HDF5, 7, rank, t + 2 + skew,
                                     t + 3 + skew, 0, (uint64_t)(rank + 1) * MB);
        }
        /* rank 0's check: its own open of the same file, between the iterations */
        r[0][n[0]++] = rec(0, SHARED_PATH, 1000 + i, IOT_KIND_HDF5, 7, 0, t + 5, t + 5.1, 0, 0);
    }
    iot_merge *m = iot_merge_new();
    for (int k = 0; k < 2; k++) {
        int rank = reversed ? 1 - k : k;
        for (int j = 0; j < n[rank]; j++)
            CHECK(iot_merge_add(m, &r[rank][reversed ? n[rank] - 1 - j : j]) == 0);
    }
    iot_phase_desc d = {"/run/ior.h5", "/run/ior.h5", "mpio", "ext4", "ufs", "[]", NULL, NULL, NULL};
    for (int i = 0; i < N; i++) {
        iot_phase_key w = {WORLD, SHARED_PATH, 2 * i, IOT_KIND_HDF5}, c = {0, SHARED_PATH, 1000 + i, IOT_KIND_HDF5};
        CHECK(iot_merge_describe(m, &w, 0, &d) == 0);
        CHECK(iot_merge_describe(m, &c, 0, &d) == 0);
    }
    CHECK(iot_merge_finish(m) == 3 * N);
    int writes = 0, reads = 0, checks = 0;
    uint64_t written = 0, read = 0;
    for (size_t i = 0; i < iot_merge_count(m); i++) {
        const iot_record *p = iot_merge_phase(m, i);
        const iot_level_stats *h = &p->level[IOT_LEVEL_HDF5];
        written += h->bytes_written;
        read += h->bytes_read;
        if (h->bytes_written) {
            writes++;
            CHECK(p->ranks == 2 && h->bytes_written == 3 * MB && h->bytes_read == 0);
            CHECK(p->t_close - p->t_open > 1.0005 && p->t_close - p->t_open < 1.0015); /* first open to last close */
        } else if (h->bytes_read) {
            reads++;
            CHECK(p->ranks == 2 && h->bytes_read == 3 * MB);
        } else {
            checks++;
            CHECK(p->ranks == 1 && p->rank == 0 && p->key.group == 0);
        }
        CHECK(iot_merge_files(m, i) == 1);
    }
    CHECK(writes == N && reads == N && checks == N);
    CHECK(written == (uint64_t)N * 3 * MB && read == (uint64_t)N * 3 * MB); /* every byte once */
    /* phases in order of their first open: write, read, check of iteration 0 first */
    CHECK(iot_merge_phase(m, 0)->level[IOT_LEVEL_HDF5].bytes_written == 3 * MB);
    CHECK(iot_merge_phase(m, 1)->level[IOT_LEVEL_HDF5].bytes_read == 3 * MB);
    CHECK(iot_merge_phase(m, 2)->key.group == 0);
    /* a rank's record is found in its phase; a collective key finds the same phase from every rank */
    iot_phase_key r1 = {WORLD, SHARED_PATH, 3, IOT_KIND_HDF5};
    CHECK(iot_merge_find(m, &r1, 0) == 4 && iot_merge_find(m, &r1, 1) == 4);
    iot_phase_key c2 = {0, SHARED_PATH, 1002, IOT_KIND_HDF5};
    CHECK(iot_merge_find(m, &c2, 0) == 8 && iot_merge_find(m, &c2, 1) == -1);

    iot_buf b;
    iot_buf_init(&b);
    iot_totals t;
    iot_jw_begin_object(&b, NULL);
    iot_merge_write(m, &b, &t);
    iot_jw_end_object(&b);
    char *text = iot_buf_take(&b);
    char err[256];
    iot_json *doc = iot_json_parse(text, strlen(text), err, sizeof err);
    CHECK(doc != NULL);
    const iot_json *phases = iot_json_get(doc, "phases"), *tot = iot_json_get(doc, "totals");
    CHECK(phases && phases->count == 3 * N);
    CHECK(tot && iot_json_get(tot, "bytes_written")->integer == N * 3 * MB);
    CHECK(t.bytes_read == N * 3 * MB && t.phases == 3 * N);
    const iot_json *p0 = phases->items[0], *p2 = phases->items[2];
    CHECK_STR(iot_json_get(p0, "scope")->string, "collective");
    CHECK_STR(iot_json_get(p2, "scope")->string, "independent");
    CHECK(iot_json_get(p0, "ranks")->integer == 2 && iot_json_get(p2, "ranks")->integer == 1);
    CHECK_STR(iot_json_get(p0, "file")->string, "/run/ior.h5");
    CHECK_STR(iot_json_get(p0, "grouped_by")->string, "communicator");
    CHECK_STR(iot_json_get(p2, "grouped_by")->string, "rank");
    CHECK(iot_json_get(phases->items[3], "step")->integer == 2); /* the third collective open of the file */
    /* the n-th phase of the file, over all phases of it */
    CHECK(iot_json_get(phases->items[3], "occurrence")->integer == 3);
    iot_json_free(doc);
    free(text);
    iot_merge_free(m);
}

/* Two ranks, each writing its own file per step: one phase per step, timed from the first open to the
 * last close, whatever the timing:
 *  - in time: the ranks' files of a step open together;
 *  - lag: rank 1 is still in step s when rank 0 starts step s+1 (a rank's files never glue steps together);
 *  - late: rank 1 opens step s's file after rank 0 closed it, even after rank 0 opened step s+1's: the old
 *    rule (files open at overlapping times) made two one-rank phases of each step here.
 * The records arrive in any order. */
enum { IN_TIME, LAG, LATE };
static void file_per_process(int timing, int reversed)
{
    iot_merge *m = iot_merge_new();
    enum { STEPS = 3 };
    for (int k = 0; k < 2 * STEPS; k++) {
        int s = (reversed ? 2 * STEPS - 1 - k : k) / 2, rank = k % 2;
        double t0 = 10.0 * s + (rank ? (timing == LATE ? 12.0 : 0.2) : 0);
        double t1 = t0 + 1.0 + (rank && timing == LAG ? 9.5 : 0);
        uint64_t path = 1000 + 10 * (uint64_t)s + (uint64_t)rank; /* ckpt_<step>_<rank>.dat */
        iot_record r = rec(0, path, (uint32_t)s, IOT_KIND_POSIX, 42, rank, t0, t1, 0, 0);
        r.level[IOT_LEVEL_POSIX].bytes_written = 48 << 20;
        r.level[IOT_LEVEL_POSIX].writes = 48;
        CHECK(iot_merge_add(m, &r) == 0);
        iot_phase_key key = r.key;
        char file[64];
        snprintf(file, sizeof file, "/run/ckpt_%d_%d.dat", s, rank);
        iot_phase_desc d = {file, "/run/ckpt_#_#.dat", NULL, "ext4", NULL, NULL, NULL, NULL, NULL};
        CHECK(iot_merge_describe(m, &key, rank, &d) == 0);
    }
    /* an unrelated file of another identity, open at the same time */
    iot_record other = rec(0, 5, 0, IOT_KIND_POSIX, 43, 1, 0.1, 0.5, 0, 0);
    other.level[IOT_LEVEL_POSIX].bytes_read = 10;
    CHECK(iot_merge_add(m, &other) == 0);
    CHECK(iot_merge_finish(m) == STEPS + 1);
    int steps = 0;
    double want = timing == LAG ? 10.7 : timing == LATE ? 13.0 : 1.2;
    for (size_t i = 0; i < iot_merge_count(m); i++) {
        const iot_record *p = iot_merge_phase(m, i);
        if (p->identity != 42) {
            CHECK_STR(iot_merge_grouped_by(m, i), "rank");
            continue;
        }
        CHECK(p->step == (uint32_t)steps); /* in order of first open: step by step */
        steps++;
        CHECK(p->ranks == 2 && iot_merge_files(m, i) == 2);
        CHECK_STR(iot_merge_grouped_by(m, i), "step");
        CHECK(p->level[IOT_LEVEL_POSIX].bytes_written == 96 << 20); /* every byte once */
        CHECK(p->t_close - p->t_open > want - 1e-9 && p->t_close - p->t_open < want + 1e-9);
        const iot_phase_desc *d = iot_merge_desc(m, i);
        CHECK(d && d->file && strstr(d->file, "_0.dat")); /* rank 0 describes it */
    }
    CHECK(steps == STEPS);
    iot_merge_free(m);
}

/* Eight ranks, where rank 5 skipped the last step and rank 7's files of the first two steps opened while
 * the others were in the next step: a step's phase has the ranks that opened its file, each once. */
static void steps_at_eight_ranks(void)
{
    iot_merge *m = iot_merge_new();
    enum { RANKS = 8, STEPS = 3 };
    for (int rank = RANKS - 1; rank >= 0; rank--)
        for (int s = 0; s < STEPS; s++) {
            if (rank == 5 && s == STEPS - 1)
                continue;
            double t0 = 10.0 * s + 0.01 * rank + (rank == 7 && s < 2 ? 10.5 : 0);
            iot_record r = rec(0, 2000 + 100 * (uint64_t)s + (uint64_t)rank, (uint32_t)s, IOT_KIND_HDF5, 77, rank,
                               t0, t0 + 1, 1 << 20, 0);
            CHECK(iot_merge_add(m, &r) == 0);
        }
    CHECK(iot_merge_finish(m) == STEPS);
    for (size_t i = 0; i < STEPS; i++) {
        const iot_record *p = iot_merge_phase(m, i);
        int ranks = i == STEPS - 1 ? RANKS - 1 : RANKS;
        CHECK(p->step == i && p->ranks == ranks && p->rank == 0 && iot_merge_files(m, i) == ranks);
        CHECK(p->level[IOT_LEVEL_HDF5].bytes_written == (uint64_t)ranks << 20);
    }
    iot_merge_free(m);
}

/* Ranks that folded their files of one name (past the bound) make one folded phase; their numbered files
 * before it are phases step by step. */
static void folded_ranks_are_one_phase(void)
{
    iot_merge *m = iot_merge_new();
    for (int rank = 0; rank < 2; rank++) {
        iot_record r = rec(0, 3000 + (uint64_t)rank, 0, IOT_KIND_POSIX, 88, rank, rank * 3.0, rank * 3.0 + 1, 0, 0);
        r.level[IOT_LEVEL_POSIX].bytes_written = 100;
        CHECK(iot_merge_add(m, &r) == 0);
        iot_record f = rec(0, 4000, 1, IOT_KIND_POSIX, 88, rank, 5 + rank * 10.0, 6 + rank * 10.0, 0, 0);
        f.step = IOT_STEP_FOLDED;
        f.flags |= IOT_REC_FOLDED;
        f.files = 300;
        f.level[IOT_LEVEL_POSIX].bytes_written = 3000;
        CHECK(iot_merge_add(m, &f) == 0);
    }
    CHECK(iot_merge_finish(m) == 2);
    CHECK_STR(iot_merge_grouped_by(m, 0), "step");
    CHECK(iot_merge_phase(m, 0)->ranks == 2 && iot_merge_phase(m, 0)->level[IOT_LEVEL_POSIX].bytes_written == 200);
    CHECK_STR(iot_merge_grouped_by(m, 1), "folded");
    CHECK(iot_merge_phase(m, 1)->ranks == 2 && iot_merge_files(m, 1) == 600);
    CHECK(iot_merge_phase(m, 1)->level[IOT_LEVEL_POSIX].bytes_written == 6000);
    iot_merge_free(m);
}

/* The same rank opening files of one name one after another: separate phases, even when they overlap
 * (one rank, two files at once) or nothing else happens. */
static void sequential_files_stay_apart(void)
{
    iot_merge *m = iot_merge_new();
    for (int i = 0; i < 5; i++) {
        iot_record r = rec(0, 100 + (uint64_t)i, (uint32_t)i, IOT_KIND_POSIX, 9, 0, i, i + (i == 1 ? 1.5 : 0.9), 0, 0);
        CHECK(iot_merge_add(m, &r) == 0);
    }
    CHECK(iot_merge_finish(m) == 5);
    for (size_t i = 0; i < 5; i++)
        CHECK(iot_merge_phase(m, i)->ranks == 1);
    iot_merge_free(m);
}

static void combine_is_an_mpi_op(void)
{
    /* commutative and associative: the order of a reduction tree does not matter */
    iot_record a = rec(WORLD, 1, 0, IOT_KIND_MPIIO, 1, 3, 1.0, 2.0, 10, 0);
    iot_record b = rec(WORLD, 1, 0, IOT_KIND_MPIIO, 1, 1, 0.5, 1.5, 20, 5);
    iot_record c = rec(WORLD, 1, 0, IOT_KIND_MPIIO, 1, 2, 0.7, 3.0, 30, 0);
    c.flags = IOT_REC_TIME_SAMPLED;
    iot_record x = b, y = b;
    iot_record_combine(&a, &x);
    iot_record_combine(&c, &x); /* (b + a) + c */
    iot_record ca = a;
    iot_record_combine(&c, &ca);
    iot_record_combine(&ca, &y); /* b + (c + a) */
    CHECK(!memcmp(&x, &y, sizeof x));
    CHECK(x.ranks == 3 && x.rank == 1 && x.t_open == 0.5 && x.t_close == 3.0);
    CHECK(x.level[IOT_LEVEL_HDF5].bytes_written == 60 && x.level[IOT_LEVEL_HDF5].write_time == 1.15);
    CHECK(x.flags & IOT_REC_TIME_SAMPLED);
}

static void descriptions_travel(void)
{
    iot_buf b;
    iot_buf_init(&b);
    iot_phase_key k = {WORLD, 77, 3, IOT_KIND_HDF5};
    iot_phase_desc d = {"/a b/\xc3\xa9.h5", "/a b/#.h5", "mpio", "lustre", NULL, "[{\"knob\":\"x\"}]", "{}", NULL,
                        "[{\"name\":\"/x\"}]"};
    iot_desc_pack(&b, &k, 5, &d);
    iot_desc_pack(&b, &k, 2, &d);
    size_t len = b.len;
    char *data = iot_buf_take(&b);
    iot_phase_key k2;
    int rank;
    iot_phase_desc e;
    size_t used = iot_desc_unpack(data, len, &k2, &rank, &e);
    CHECK(used > 0 && used < len && rank == 5 && !memcmp(&k, &k2, sizeof k));
    CHECK_STR(e.file, d.file);
    CHECK(e.mpiio_driver == NULL);
    CHECK_STR(e.settings_json, d.settings_json);
    CHECK_STR(e.datasets_json, d.datasets_json);
    CHECK(iot_desc_unpack(data + used, len - used, &k2, &rank, &e) == len - used && rank == 2);
    CHECK(iot_desc_unpack(data, 10, &k2, &rank, &e) == 0); /* truncated */
    /* the lowest rank's description stands for a collective phase */
    iot_merge *m = iot_merge_new();
    iot_record r = rec(WORLD, 77, 3, IOT_KIND_HDF5, 1, 5, 0, 1, 1, 0);
    iot_merge_add(m, &r);
    iot_phase_desc hi = d, lo = d;
    hi.file = "from rank 5";
    lo.file = "from rank 2";
    iot_merge_describe(m, &k, 5, &hi);
    iot_merge_describe(m, &k, 2, &lo);
    iot_merge_describe(m, &k, 4, &hi);
    iot_merge_finish(m);
    CHECK_STR(iot_merge_desc(m, 0)->file, "from rank 2");
    iot_merge_free(m);
    free(data);
}

/* A PnetCDF file: its own kind, its data counted at the PnetCDF level (the header and the MPI-IO calls under it
 * are PnetCDF's), with the other levels beside it. */
static void pnetcdf_phase(void)
{
    iot_phase_key k = {WORLD, SHARED_PATH, 0, IOT_KIND_PNETCDF};
    iot_record r[2];
    for (int rank = 0; rank < 2; rank++) {
        iot_record_init(&r[rank], &k, 7, rank, 2);
        r[rank].t_open = 1, r[rank].t_close = 2;
        r[rank].level[IOT_LEVEL_PNETCDF].bytes_written = 1000;
        r[rank].level[IOT_LEVEL_PNETCDF].writes = 3;
        r[rank].level[IOT_LEVEL_MPIIO].bytes_written = 1000 + (rank ? 0 : 512); /* rank 0 wrote the header */
    }
    iot_merge *m = iot_merge_new();
    iot_merge_add(m, &r[0]);
    iot_merge_add(m, &r[1]);
    CHECK(iot_merge_finish(m) == 1);
    CHECK(iot_data_level(IOT_KIND_PNETCDF) == IOT_LEVEL_PNETCDF);
    CHECK_STR(iot_kind_name(IOT_KIND_PNETCDF), "pnetcdf");
    iot_buf b;
    iot_buf_init(&b);
    iot_totals t;
    iot_jw_begin_object(&b, NULL);
    iot_merge_write(m, &b, &t);
    iot_jw_end_object(&b);
    char *text = iot_buf_take(&b), err[256];
    iot_json *doc = iot_json_parse(text, strlen(text), err, sizeof err);
    const iot_json *p = doc ? iot_json_get(doc, "phases")->items[0] : NULL;
    CHECK(p && t.bytes_written == 2000);
    CHECK_STR(iot_json_get(p, "kind")->string, "pnetcdf");
    CHECK_STR(iot_json_get(p, "data_level")->string, "pnetcdf");
    CHECK(iot_json_get(iot_json_get(p, "pnetcdf"), "write_calls")->integer == 6);
    CHECK(iot_json_get(iot_json_get(p, "mpiio"), "bytes_written")->integer == 2512);
    iot_json_free(doc);
    free(text);
    iot_merge_free(m);
}

/* A POSIX file written through stdio on one rank and through both stdio and write() on another: its data is
 * both levels added (the C library's own system calls are not seen, so nothing is counted twice); it is named
 * stdio when stdio alone moved it; the write amplification is not known. */
static iot_json *merged_posix(const iot_record *r, size_t n, iot_totals *t, char **text)
{
    iot_merge *m = iot_merge_new();
    for (size_t i = 0; i < n; i++)
        iot_merge_add(m, &r[i]);
    iot_merge_finish(m);
    iot_buf b;
    iot_buf_init(&b);
    iot_jw_begin_object(&b, NULL);
    iot_merge_write(m, &b, t);
    iot_jw_end_object(&b);
    *text = iot_buf_take(&b);
    char err[256];
    iot_merge_free(m);
    return iot_json_parse(*text, strlen(*text), err, sizeof err);
}

static void stdio_phase(void)
{
    iot_phase_key k0 = {0, SHARED_PATH, 0, IOT_KIND_POSIX}, k1 = {0, SHARED_PATH + 1, 0, IOT_KIND_POSIX};
    iot_record r[2];
    iot_record_init(&r[0], &k0, 9, 0, 1);
    iot_record_init(&r[1], &k1, 10, 1, 1); /* another name: not one file-per-process phase */
    for (int rank = 0; rank < 2; rank++) {
        r[rank].t_open = 1, r[rank].t_close = 2;
        r[rank].level[IOT_LEVEL_STDIO].bytes_written = 4096;
        r[rank].level[IOT_LEVEL_STDIO].writes = 4;
    }
    iot_level l;
    iot_level_stats s;
    iot_record_data(&r[0], &s, &l);
    CHECK(l == IOT_LEVEL_STDIO && s.bytes_written == 4096 && s.writes == 4);
    CHECK_STR(iot_level_name(IOT_LEVEL_STDIO), "stdio");
    r[1].level[IOT_LEVEL_POSIX].bytes_written = 100;
    r[1].level[IOT_LEVEL_POSIX].writes = 1;
    iot_record_data(&r[1], &s, &l);
    CHECK(l == IOT_LEVEL_POSIX && s.bytes_written == 4196 && s.writes == 5);
    iot_totals t;
    char *text;
    iot_json *doc = merged_posix(r, 2, &t, &text);
    CHECK(doc && t.bytes_written == 2 * 4096 + 100 && t.posix_bytes_written == 100);
    const iot_json *phases = doc ? iot_json_get(doc, "phases") : NULL;
    for (size_t i = 0; phases && i < 2; i++) {
        const iot_json *p = phases->items[i];
        int mixed = iot_json_get(p, "bytes_written")->integer == 4196;
        CHECK(mixed || iot_json_get(p, "bytes_written")->integer == 4096);
        CHECK_STR(iot_json_get(p, "data_level")->string, mixed ? "posix" : "stdio");
        CHECK(iot_json_get(iot_json_get(p, "stdio"), "write_calls")->integer == 4);
        CHECK(iot_json_get(p, "write_amplification")->type == IOT_JSON_NULL);
    }
    iot_json_free(doc);
    free(text);
    /* a MPI-IO file is untouched: its data level is its own */
    iot_phase_key km = {WORLD, SHARED_PATH, 0, IOT_KIND_MPIIO};
    iot_record_init(&r[0], &km, 7, 0, 2);
    r[0].level[IOT_LEVEL_MPIIO].bytes_written = 10;
    r[0].level[IOT_LEVEL_STDIO].bytes_written = 5;
    iot_record_data(&r[0], &s, &l);
    CHECK(l == IOT_LEVEL_MPIIO && s.bytes_written == 10);
}

int main(void)
{
    ior_like(0);
    ior_like(1);
    for (int timing = IN_TIME; timing <= LATE; timing++) {
        file_per_process(timing, 0);
        file_per_process(timing, 1);
    }
    steps_at_eight_ranks();
    folded_ranks_are_one_phase();
    sequential_files_stay_apart();
    combine_is_an_mpi_op();
    descriptions_travel();
    pnetcdf_phase();
    stdio_phase();
    CHECK_DONE();
}
