#include "check.h"
#include "iotuner/insights.h"
#include <stdint.h>
#include <stdlib.h>

#define KiB 1024LL
#define MiB (1024LL * 1024)

/* Deterministic generator (the tests must not depend on rand()). */
static uint32_t next_rand(uint64_t *s)
{
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return (uint32_t)(*s >> 33);
}

static void test_locality(void)
{
    iot_locality_tracker t;

    /* nothing, then the first access */
    iot_locality_init(&t);
    CHECK(iot_locality_classify(&t) == IOT_LOC_UNKNOWN);
    iot_locality_add(&t, 5 * MiB, 0); /* empty: ignored */
    iot_locality_add(&t, -1, 10);     /* bad offset: ignored */
    CHECK(iot_locality_classify(&t) == IOT_LOC_UNKNOWN && t.extent == -1);
    iot_locality_add(&t, 7 * MiB, MiB); /* starts anywhere: not an exception */
    CHECK(iot_locality_classify(&t) == IOT_LOC_SEQUENTIAL);
    CHECK(t.extent == 8 * MiB);

    /* sequential: each access where the previous ended */
    iot_locality_init(&t);
    for (int i = 0; i < 100; i++)
        iot_locality_add(&t, 3 * MiB + i * MiB, MiB);
    CHECK(iot_locality_classify(&t) == IOT_LOC_SEQUENTIAL);
    CHECK(t.sequential_bytes == 99 * (uint64_t)MiB);
    CHECK(t.extent == 103 * MiB);

    /* strided: constant positive gap (rank 1 of 4 writing 1M blocks) */
    iot_locality_init(&t);
    for (int i = 0; i < 50; i++)
        iot_locality_add(&t, (4 * i + 1) * MiB, MiB);
    CHECK(iot_locality_classify(&t) == IOT_LOC_STRIDED);
    CHECK(t.strided_bytes == 49 * (uint64_t)MiB); /* the first gap is credited once the second confirms it */

    /* two accesses with a gap: one gap is no stride yet */
    iot_locality_init(&t);
    iot_locality_add(&t, 0, MiB);
    iot_locality_add(&t, 5 * MiB, MiB);
    CHECK(iot_locality_classify(&t) == IOT_LOC_RANDOM);

    /* IOR with segments: runs of 4 sequential transfers, then a constant jump */
    iot_locality_init(&t);
    for (int seg = 0; seg < 8; seg++)
        for (int k = 0; k < 4; k++)
            iot_locality_add(&t, seg * 16 * MiB + 4 * MiB + k * MiB, MiB);
    CHECK(iot_locality_classify(&t) == IOT_LOC_STRIDED);

    /* backwards with a constant step is not a stride */
    iot_locality_init(&t);
    for (int i = 20; i >= 0; i--)
        iot_locality_add(&t, i * 2 * MiB, MiB);
    CHECK(iot_locality_classify(&t) == IOT_LOC_RANDOM);

    /* random */
    uint64_t seed = 42;
    iot_locality_init(&t);
    for (int i = 0; i < 200; i++)
        iot_locality_add(&t, (int64_t)(next_rand(&seed) % 4096) * 64 * KiB, 64 * KiB);
    CHECK(iot_locality_classify(&t) == IOT_LOC_RANDOM);

    /* mostly sequential with a few exceptions: HDF5 metadata written between
     * raw-data writes, after which the data stream resumes */
    iot_locality_init(&t);
    for (int i = 0; i < 100; i++) {
        iot_locality_add(&t, 2 * KiB + i * MiB, MiB);
        if (i % 30 == 7)
            iot_locality_add(&t, 512 * MiB + i * 4 * KiB, 4 * KiB);
    }
    CHECK(iot_locality_classify(&t) == IOT_LOC_SEQUENTIAL);
    CHECK(t.extent == 512 * MiB + 97 * 4 * KiB + 4 * KiB);

    /* a few exceptions of full size are still few (3 of 102 transitions) */
    iot_locality_init(&t);
    for (int i = 0; i < 100; i++) {
        iot_locality_add(&t, i * MiB, MiB);
        if (i % 30 == 20)
            iot_locality_add(&t, 900 * MiB + i * MiB, MiB);
    }
    CHECK(iot_locality_classify(&t) == IOT_LOC_SEQUENTIAL);

    /* many exceptions: 1 in 4 transfers goes somewhere else */
    seed = 7;
    iot_locality_init(&t);
    for (int i = 0; i < 100; i++) {
        iot_locality_add(&t, i * MiB, MiB);
        if (i % 4 == 0)
            iot_locality_add(&t, (int64_t)(1000 + next_rand(&seed) % 1000) * MiB, MiB);
    }
    CHECK(iot_locality_classify(&t) == IOT_LOC_RANDOM);

    /* a new stream elsewhere is followed */
    iot_locality_init(&t);
    for (int i = 0; i < 50; i++)
        iot_locality_add(&t, i * MiB, MiB);
    for (int i = 0; i < 50; i++)
        iot_locality_add(&t, 4096 * MiB + i * MiB, MiB);
    CHECK(iot_locality_classify(&t) == IOT_LOC_SEQUENTIAL);
}

static void test_identity(void)
{
    char id[64], id2[64];
    uint64_t h1 = iot_identity("/run/chk_0001.h5", id, sizeof id);
    CHECK_STR(id, "/run/chk_#.h5");
    uint64_t h2 = iot_identity("/run/chk_0002.h5", id2, sizeof id2);
    CHECK_STR(id2, "/run/chk_#.h5");
    CHECK(h1 == h2);
    CHECK((int64_t)h1 >= 0);
    CHECK(iot_identity("/run/plt_0001.h5", NULL, 0) != h1);
    iot_identity("/run2/data/plt.0003", id, sizeof id);
    CHECK_STR(id, "/run#/data/plt.#"); /* an all-digit extension is a step number */
    /* directories numbered by step: one recurring phase */
    uint64_t d1 = iot_identity("/out/plt00100/data.h5", id, sizeof id);
    CHECK_STR(id, "/out/plt#/data.h5");
    CHECK(iot_identity("/out/plt00200/data.h5", NULL, 0) == d1);
    iot_identity("sedov_hdf5_chk_0012", id, sizeof id);
    CHECK_STR(id, "sedov_hdf#_chk_#");
    iot_identity("/x/out_3.5.nc4", id, sizeof id);
    CHECK_STR(id, "/x/out_#.#.nc4");
    iot_identity("/x/a12b345.hdf5", id, sizeof id);
    CHECK_STR(id, "/x/a12b#.hdf5"); /* digits inside a word are part of the name */
    iot_identity("/run/h5ior_0003.h5", id, sizeof id);
    CHECK_STR(id, "/run/h5ior_#.h5");
    /* checkpoints named by simulation time in scientific notation: one identity whatever the exponent's sign */
    uint64_t e1 = iot_identity("/run/x.0.000E+00.nc", id, sizeof id);
    CHECK_STR(id, "/run/x.#.nc");
    CHECK(iot_identity("/run/x.1.000E-06.nc", NULL, 0) == e1);
    CHECK(iot_identity("/run/x.2.5e+01.nc", NULL, 0) == e1);
    iot_identity("/run/chk_5E-03_0002.h5", id, sizeof id);
    CHECK_STR(id, "/run/chk_#_#.h5");
    iot_identity("/run/run1e5.h5", id, sizeof id); /* no sign, no fraction: a name, as before */
    CHECK_STR(id, "/run/run1e#.h5");
    iot_identity("/run/a_1.5Ex.h5", id, sizeof id); /* a word follows: not an exponent */
    CHECK_STR(id, "/run/a_#.#Ex.h5");
    iot_identity("/run/step12.h5", id, sizeof id);
    CHECK_STR(id, "/run/step#.h5");
    /* objects: every component, groups named by step included */
    uint64_t o1 = iot_identity("/Step#12/x", id, sizeof id);
    CHECK_STR(id, "/Step##/x");
    CHECK(iot_identity("/Step#3/x", NULL, 0) == o1);
    CHECK(iot_identity("/Step#3/y", NULL, 0) != o1);
    iot_identity("/run_7/h5part/dens", id, sizeof id);
    CHECK_STR(id, "/run_#/h5part/dens");
    /* truncated text, same hash */
    char small[6];
    CHECK(iot_identity("/run/chk_0001.h5", small, sizeof small) == h1);
    CHECK_STR(small, "/run/");
    /* exact paths tell files per process apart */
    CHECK(iot_path_hash("/run/out_r0001.h5") != iot_path_hash("/run/out_r0002.h5"));
    CHECK(iot_path_hash("/run/out.h5") == iot_path_hash("/run/out.h5"));
    CHECK((int64_t)iot_path_hash("/run/out.h5") >= 0);
}

static void test_classify(void)
{
    iot_call_info c;
    CHECK(iot_call_classify("MPI_File_write_at_all", &c) == IOT_CALL_MPI_DATA);
    CHECK(c.write == 1 && c.collective == 1 && c.offset_index == 1 && c.nargs == 2);
    CHECK(iot_call_classify("MPI_File_iread", &c) == IOT_CALL_MPI_DATA);
    CHECK(c.write == 0 && c.collective == 0 && c.offset_index == -1 && c.nargs == 1);
    CHECK(iot_call_classify("MPI_File_iwrite_at_all", &c) == IOT_CALL_MPI_DATA && c.collective && c.offset_index == 1);
    CHECK(iot_call_classify("MPI_File_read_all", &c) == IOT_CALL_MPI_DATA && c.collective && !c.write);
    CHECK(iot_call_classify("MPI_File_write_ordered", &c) == IOT_CALL_MPI_DATA && !c.collective);
    CHECK(iot_call_classify("MPI_File_write_at_all_begin", &c) == IOT_CALL_MPI_DATA && c.collective);
    CHECK(iot_call_classify("MPI_File_write_at_all_end", &c) == IOT_CALL_OTHER);
    CHECK(iot_call_classify("MPI_File_open", &c) == IOT_CALL_MPI_OPEN && c.nargs == 3);
    CHECK(iot_call_classify("H5Dwrite", &c) == IOT_CALL_H5_DATA && c.write && c.nargs == 1);
    CHECK(iot_call_classify("H5Dread", &c) == IOT_CALL_H5_DATA && !c.write);
    CHECK(iot_call_classify("H5Fcreate", &c) == IOT_CALL_FILE_OPEN && c.nargs == 2);
    CHECK(iot_call_classify("ncmpi_create", &c) == IOT_CALL_FILE_OPEN && c.nargs == 2);
    CHECK(iot_call_classify("ncmpi_iput", &c) == IOT_CALL_H5_DATA && c.write && c.nargs == 1);
    CHECK(iot_call_classify("ncmpi_get", &c) == IOT_CALL_H5_DATA && !c.write);
    CHECK(iot_call_classify("ncmpi_wait", &c) == IOT_CALL_LIB_WAIT && c.nargs == 0);
    CHECK(iot_call_classify("ncmpi_enddef", &c) == IOT_CALL_OTHER);
    CHECK(iot_call_classify("pwrite", &c) == IOT_CALL_OTHER);
    CHECK(iot_call_classify(NULL, NULL) == IOT_CALL_OTHER);
}

/* ---- call sequences ---- */

typedef struct {
    iot_sigtab *t;
    int *seq;
    size_t n, cap;
} calls;

static void call(calls *c, const char *func, int nargs, int64_t a0, int64_t a1, int64_t a2)
{
    int64_t args[3] = {a0, a1, a2};
    iot_call_info info;
    iot_call_classify(func, &info);
    int id = iot_sig_intern(c->t, func, args, nargs, info.offset_index);
    if (c->n == c->cap) {
        c->cap = c->cap ? c->cap * 2 : 256;
        c->seq = realloc(c->seq, c->cap * sizeof *c->seq);
    }
    c->seq[c->n++] = id;
}

static void calls_init(calls *c)
{
    memset(c, 0, sizeof *c);
    c->t = iot_sigtab_new();
}

static void calls_free(calls *c)
{
    iot_sigtab_free(c->t);
    free(c->seq);
}

/* IOR with HDF5: one shared file, 64 collective 1 MiB writes, then HDF5's
 * metadata (small independent writes at close). */
static void ior_phase(calls *c, int step, int64_t *file_hash)
{
    char name[64];
    snprintf(name, sizeof name, "/scratch/ior/test_%04d.h5", step);
    int64_t fh = (int64_t)iot_identity(name, NULL, 0);
    int64_t dh = (int64_t)iot_identity("/data", NULL, 0);
    *file_hash = fh;
    call(c, "H5Fcreate", 2, fh, 2, 0);
    call(c, "MPI_File_open", 3, fh, 37, 4);
    call(c, "H5Dcreate", 3, dh, 8, 1);
    for (int i = 0; i < 64; i++) {
        call(c, "H5Dwrite", 1, MiB, 0, 0);
        call(c, "MPI_File_write_at_all", 2, MiB, 2048 + i * 4 * MiB, 0);
    }
    call(c, "H5Dclose", 0, 0, 0, 0);
    call(c, "H5Fclose", 0, 0, 0, 0);
    call(c, "MPI_File_write_at", 2, 512, 0, 0);
    call(c, "MPI_File_write_at", 2, 1200, 800, 0);
    call(c, "MPI_File_close", 0, 0, 0, 0);
}

static void test_extract_ior(void)
{
    calls c;
    calls_init(&c);
    int64_t fh;
    ior_phase(&c, 0, &fh);
    iot_insights in;
    iot_insights_from_calls(c.t, c.seq, c.n, &in);
    CHECK(in.write_xfer == IOT_XFER_COLLECTIVE); /* the metadata writes after H5Fclose are not raw data */
    CHECK(in.read_xfer == IOT_XFER_NONE);
    CHECK(iot_insights_xfer(&in) == IOT_XFER_COLLECTIVE);
    CHECK(in.transfer_size == MiB && in.max_transfer_size == MiB);
    CHECK(in.bytes_written == 64 * MiB && in.bytes_read == 0);
    CHECK(in.write_calls == 64 && in.read_calls == 0);
    CHECK(in.files == IOT_FILES_SHARED);
    CHECK(in.identity_hash == fh);
    CHECK(in.write_locality == IOT_LOC_UNKNOWN && in.file_size == -1); /* offsets are not in the calls */
    CHECK(in.same_calls == -1 && in.processes == 1);

    /* SmartIO's way: learn three steps, predict the rest of the phase from H5Fcreate */
    ior_phase(&c, 1, &fh);
    ior_phase(&c, 2, &fh);
    iot_grammar *g = iot_grammar_new();
    for (size_t i = 0; i < c.n; i++)
        iot_grammar_append(g, c.seq[i]);
    int pred[1024];
    size_t np = iot_grammar_predict_phase(g, c.seq[0], pred, 1024);
    CHECK(np > 128);
    iot_insights p;
    iot_insights_from_calls(c.t, pred, np, &p);
    CHECK(p.write_xfer == IOT_XFER_COLLECTIVE);
    CHECK(p.transfer_size == MiB);
    CHECK(p.files == IOT_FILES_SHARED);
    CHECK(p.identity_hash == fh); /* from MPI_File_open: the trigger H5Fcreate is not in the prediction */
    iot_grammar_free(g);

    /* the runtime adds what the calls do not hold */
    iot_locality_tracker w;
    iot_locality_init(&w);
    for (int i = 0; i < 64; i++)
        iot_locality_add(&w, 2048 + i * MiB, MiB);
    iot_insights_set_locality(&in, &w, NULL);
    CHECK(in.write_locality == IOT_LOC_SEQUENTIAL && in.read_locality == IOT_LOC_UNKNOWN);
    CHECK(iot_insights_locality(&in) == IOT_LOC_SEQUENTIAL);
    CHECK(in.file_size == 2048 + 64 * MiB);
    calls_free(&c);
}

static void test_extract_flash(void)
{
    /* Flash-X checkpoint: many datasets of various small sizes; the mesh
     * data collective, scalars and runtime parameters independent. */
    static const int64_t sizes[] = {8, 80, 4 * KiB, 32 * KiB, 256 * KiB, 256 * KiB, 256 * KiB, 512 * KiB,
                                    256 * KiB, 256 * KiB, 1 * MiB, 96, 256 * KiB, 256 * KiB, 24 * KiB};
    calls c;
    calls_init(&c);
    int64_t fh = (int64_t)iot_identity("/run/sedov_hdf5_chk_0000", NULL, 0);
    call(&c, "H5Fcreate", 2, fh, 2, 0);
    call(&c, "MPI_File_open", 3, fh, 37, 448);
    for (int rep = 0; rep < 3; rep++)
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
            call(&c, "H5Dcreate", 3, 1000 + (int64_t)i, 8, 3);
            call(&c, "H5Dwrite", 1, sizes[i], 0, 0);
            if (sizes[i] < KiB)
                call(&c, "MPI_File_write_at", 2, sizes[i], 0, 0);
            else
                call(&c, "MPI_File_write_at_all", 2, sizes[i], 0, 0);
            call(&c, "H5Dclose", 0, 0, 0, 0);
        }
    call(&c, "H5Fclose", 0, 0, 0, 0);
    call(&c, "MPI_File_close", 0, 0, 0, 0);
    iot_insights in;
    iot_insights_from_calls(c.t, c.seq, c.n, &in);
    CHECK(in.write_xfer == IOT_XFER_MIXED);
    CHECK(in.transfer_size == 256 * KiB); /* median of the 45 writes */
    CHECK(in.max_transfer_size == MiB);
    CHECK(in.transfer_size <= MiB);
    CHECK(in.write_calls == 45);
    CHECK(in.files == IOT_FILES_SHARED);
    calls_free(&c);
}

/* E3SM through PnetCDF: the header written at enddef, a history frame's fields posted (iput), one wait, which
 * makes the collective writes, and the record count rewritten at close: only the wait's writes are raw data. */
static void test_extract_pnetcdf(void)
{
    calls c;
    calls_init(&c);
    int64_t fh = (int64_t)iot_identity("/run/e3sm.h0.0001-01.nc", NULL, 0);
    call(&c, "ncmpi_create", 2, fh, 0x21, 0);
    call(&c, "MPI_File_open", 3, fh, 9, 2);
    call(&c, "ncmpi_enddef", 0, 0, 0, 0);
    call(&c, "MPI_File_write_at", 2, 2 * KiB, 0, 0);
    for (int i = 0; i < 24; i++)
        call(&c, "ncmpi_iput", 1, 64 * KiB, 0, 0);
    call(&c, "ncmpi_wait", 0, 0, 0, 0);
    call(&c, "MPI_File_write_at_all", 2, 24 * 64 * KiB, 4 * KiB, 0);
    call(&c, "ncmpi_close", 0, 0, 0, 0);
    call(&c, "MPI_File_write_at", 2, 8, 4, 0);
    call(&c, "MPI_File_close", 0, 0, 0, 0);
    iot_insights in;
    iot_insights_from_calls(c.t, c.seq, c.n, &in);
    CHECK(in.write_xfer == IOT_XFER_COLLECTIVE); /* the header writes are not the fields' */
    CHECK(in.write_calls == 24 && in.read_calls == 0);
    CHECK(in.bytes_written == 24 * 64 * KiB && in.transfer_size == 24 * 64 * KiB);
    CHECK(in.files == IOT_FILES_SHARED && in.identity_hash == fh);
    calls_free(&c);
}

static void test_extract_other(void)
{
    iot_insights in;
    calls c;

    /* pure MPI-IO, a file per process (MPI_COMM_SELF) */
    calls_init(&c);
    call(&c, "MPI_File_open", 3, 77, 37, 1);
    for (int i = 0; i < 10; i++)
        call(&c, "MPI_File_write", 1, 4 * MiB, 0, 0);
    call(&c, "MPI_File_read_at_all", 2, 2 * MiB, 0, 0);
    call(&c, "MPI_File_close", 0, 0, 0, 0);
    iot_insights_from_calls(c.t, c.seq, c.n, &in);
    CHECK(in.write_xfer == IOT_XFER_INDEPENDENT && in.read_xfer == IOT_XFER_COLLECTIVE);
    CHECK(iot_insights_xfer(&in) == IOT_XFER_MIXED);
    CHECK(in.transfer_size == 4 * MiB && in.max_transfer_size == 4 * MiB);
    CHECK(in.bytes_written == 40 * MiB && in.bytes_read == 2 * MiB);
    CHECK(in.write_calls == 10 && in.read_calls == 1);
    CHECK(in.files == IOT_FILES_PER_PROCESS);
    CHECK(in.identity_hash == 77);
    calls_free(&c);

    /* serial HDF5: no MPI-IO below, so independent, sizes from H5Dwrite */
    calls_init(&c);
    call(&c, "H5Fcreate", 2, 5, 2, 0);
    for (int i = 0; i < 3; i++)
        call(&c, "H5Dwrite", 1, 100, 0, 0);
    call(&c, "H5Dread", 1, 300, 0, 0);
    call(&c, "H5Fclose", 0, 0, 0, 0);
    iot_insights_from_calls(c.t, c.seq, c.n, &in);
    CHECK(in.write_xfer == IOT_XFER_INDEPENDENT && in.read_xfer == IOT_XFER_INDEPENDENT);
    CHECK(in.transfer_size == 100 && in.max_transfer_size == 300);
    CHECK(in.bytes_written == 300 && in.bytes_read == 300);
    CHECK(in.files == IOT_FILES_UNKNOWN && in.identity_hash == 5);

    /* unknown ids are skipped; nothing at all is all unknown */
    int junk[] = {999, -3};
    iot_insights_from_calls(c.t, junk, 2, &in);
    CHECK(in.write_xfer == IOT_XFER_NONE && in.transfer_size == -1 && in.files == IOT_FILES_UNKNOWN);
    iot_insights_from_calls(c.t, NULL, 0, &in);
    CHECK(in.transfer_size == -1);
    calls_free(&c);

    /* collective reads under H5Dread */
    calls_init(&c);
    call(&c, "H5Fopen", 2, 9, 0, 0);
    call(&c, "MPI_File_open", 3, 9, 2, 16);
    call(&c, "MPI_File_read_at", 2, 96, 0, 0); /* metadata read before any H5Dread */
    for (int i = 0; i < 4; i++) {
        call(&c, "H5Dread", 1, 8 * MiB, 0, 0);
        call(&c, "MPI_File_read_at_all", 2, 8 * MiB, 0, 0);
    }
    iot_insights_from_calls(c.t, c.seq, c.n, &in);
    CHECK(in.read_xfer == IOT_XFER_COLLECTIVE && in.write_xfer == IOT_XFER_NONE);
    CHECK(in.transfer_size == 8 * MiB && in.bytes_read == 32 * MiB && in.read_calls == 4);
    calls_free(&c);
}

/* ---- merge ---- */

static void reduce(const iot_insights *ranks, int n, iot_insights *out, const iot_insights *local)
{
    int64_t maxv[IOT_INSIGHTS_NMAX], sumv[IOT_INSIGHTS_NSUM], m[IOT_INSIGHTS_NMAX], s[IOT_INSIGHTS_NSUM];
    for (int r = 0; r < n; r++) {
        iot_insights_pack(&ranks[r], m, s);
        for (int i = 0; i < IOT_INSIGHTS_NMAX; i++)
            maxv[i] = r == 0 || m[i] > maxv[i] ? m[i] : maxv[i]; /* MPI_MAX */
        for (int i = 0; i < IOT_INSIGHTS_NSUM; i++)
            sumv[i] = (r ? sumv[i] : 0) + s[i]; /* MPI_SUM */
    }
    iot_insights_unpack(maxv, sumv, local, out);
}

static void test_merge(void)
{
    iot_insights r[3], m;
    int64_t h = (int64_t)iot_path_hash("/scratch/ior/test.h5");
    for (int i = 0; i < 3; i++) {
        iot_insights_init(&r[i]);
        r[i].files = IOT_FILES_SHARED;
        r[i].path_hash = h;
        snprintf(r[i].file_system, sizeof r[i].file_system, "lustre");
        r[i].write_calls = 5;
    }
    snprintf(r[0].identity, sizeof r[0].identity, "/scratch/ior/test.h5");
    r[0].write_xfer = IOT_XFER_INDEPENDENT;
    r[0].write_locality = IOT_LOC_SEQUENTIAL;
    r[0].transfer_size = MiB;
    r[0].max_transfer_size = 2 * MiB;
    r[0].bytes_written = 10;
    r[0].file_size = 100;
    r[0].lustre_pfl = 1;
    r[1].write_xfer = IOT_XFER_COLLECTIVE;
    r[1].write_locality = IOT_LOC_RANDOM;
    r[1].transfer_size = 4 * MiB;
    r[1].max_transfer_size = 4 * MiB;
    r[1].bytes_written = 20;
    r[1].file_size = 300;
    r[1].read_xfer = IOT_XFER_COLLECTIVE;
    r[1].read_locality = IOT_LOC_STRIDED;
    r[1].bytes_read = 7;
    r[1].file_system[0] = 0; /* a rank that could not tell */
    reduce(r, 2, &m, &r[0]);
    CHECK(m.write_xfer == IOT_XFER_MIXED);
    CHECK(m.read_xfer == IOT_XFER_COLLECTIVE);
    CHECK(m.write_locality == IOT_LOC_RANDOM);
    CHECK(m.read_locality == IOT_LOC_STRIDED);
    CHECK(m.transfer_size == 4 * MiB && m.max_transfer_size == 4 * MiB);
    CHECK(m.bytes_written == 30 && m.bytes_read == 7);
    CHECK(m.write_calls == 10 && m.same_calls == 1);
    CHECK(m.processes == 2);
    CHECK(m.files == IOT_FILES_SHARED && m.path_hash == h);
    CHECK(m.file_size == 300);
    CHECK_STR(m.file_system, "lustre");
    CHECK(m.lustre_pfl == 1);
    CHECK_STR(m.identity, "/scratch/ior/test.h5");

    /* sequential + sequential stays sequential; a rank without I/O changes nothing but the counts */
    r[1].write_locality = IOT_LOC_SEQUENTIAL;
    r[1].read_locality = IOT_LOC_UNKNOWN;
    iot_insights idle;
    iot_insights_init(&idle);
    r[2] = idle;
    reduce(r, 3, &m, NULL);
    CHECK(m.write_locality == IOT_LOC_SEQUENTIAL && m.read_locality == IOT_LOC_UNKNOWN);
    CHECK(m.files == IOT_FILES_SHARED);
    CHECK(m.same_calls == 0); /* the idle rank makes no data calls */
    CHECK(m.processes == 3);
    CHECK(m.identity[0] == 0);

    /* file per process: distinct paths, each opened on one process */
    for (int i = 0; i < 3; i++) {
        char p[64];
        iot_insights_init(&r[i]);
        snprintf(p, sizeof p, "/run/out_r%04d.h5", i);
        r[i].path_hash = (int64_t)iot_path_hash(p);
        r[i].files = IOT_FILES_PER_PROCESS;
        r[i].write_xfer = IOT_XFER_INDEPENDENT;
        r[i].bytes_written = 100;
        r[i].write_calls = 3;
    }
    reduce(r, 3, &m, NULL);
    CHECK(m.files == IOT_FILES_PER_PROCESS && m.path_hash == -1);
    CHECK(m.same_calls == 1 && m.bytes_written == 300);
    CHECK(m.file_size == -1); /* no estimate from bytes for separate files */
    CHECK(m.lustre_pfl == -1 && m.file_system[0] == 0);

    /* the same with POSIX-driver HDF5 (no MPI_File_open): paths alone decide */
    for (int i = 0; i < 3; i++)
        r[i].files = IOT_FILES_UNKNOWN;
    reduce(r, 3, &m, NULL);
    CHECK(m.files == IOT_FILES_PER_PROCESS);

    /* one writer among idle ranks: its file is its own */
    iot_insights lone[3] = {r[0], idle, idle};
    lone[0].files = IOT_FILES_UNKNOWN;
    reduce(lone, 3, &m, NULL);
    CHECK(m.files == IOT_FILES_PER_PROCESS && m.same_calls == 0 && m.processes == 3);

    /* subfiling: distinct files, each opened by a group of ranks */
    for (int i = 0; i < 3; i++)
        r[i].files = IOT_FILES_SHARED;
    reduce(r, 3, &m, NULL);
    CHECK(m.files == IOT_FILES_SHARED);

    /* a shared file without offsets: its size is what the ranks wrote */
    for (int i = 0; i < 3; i++)
        r[i].path_hash = h;
    reduce(r, 3, &m, NULL);
    CHECK(m.files == IOT_FILES_SHARED && m.file_size == 300);

    /* nobody knows anything */
    iot_insights none[2];
    iot_insights_init(&none[0]);
    iot_insights_init(&none[1]);
    reduce(none, 2, &m, NULL);
    CHECK(m.files == IOT_FILES_UNKNOWN && m.write_xfer == IOT_XFER_NONE && m.transfer_size == -1);
    CHECK(m.write_locality == IOT_LOC_UNKNOWN && m.lustre_pfl == -1 && m.file_size == -1);
    CHECK(m.processes == 2 && m.same_calls == 1);
}

/* ---- JSON ---- */

static int same_insights(const iot_insights *a, const iot_insights *b)
{
    return a->write_xfer == b->write_xfer && a->read_xfer == b->read_xfer && a->transfer_size == b->transfer_size &&
           a->max_transfer_size == b->max_transfer_size && a->write_locality == b->write_locality &&
           a->read_locality == b->read_locality && a->files == b->files && a->bytes_written == b->bytes_written &&
           a->bytes_read == b->bytes_read && a->write_calls == b->write_calls && a->read_calls == b->read_calls &&
           a->file_size == b->file_size && a->same_calls == b->same_calls && a->processes == b->processes &&
           !strcmp(a->file_system, b->file_system) && !strcmp(a->identity, b->identity) &&
           a->identity_hash == b->identity_hash && a->path_hash == b->path_hash && a->lustre_pfl == b->lustre_pfl;
}

static void test_json(void)
{
    iot_insights in, back;
    iot_insights_init(&in);
    in.write_xfer = IOT_XFER_COLLECTIVE;
    in.transfer_size = 4 * MiB;
    in.max_transfer_size = 4 * MiB;
    in.write_locality = IOT_LOC_SEQUENTIAL;
    in.files = IOT_FILES_SHARED;
    in.bytes_written = 128 * MiB;
    in.write_calls = 32;
    in.file_size = 128 * MiB;
    in.same_calls = 1;
    in.processes = 256;
    snprintf(in.file_system, sizeof in.file_system, "lustre");
    snprintf(in.identity, sizeof in.identity, "/run/ior_#.h5");
    in.identity_hash = 12345;
    in.lustre_pfl = 1;
    iot_buf b;
    iot_buf_init(&b);
    iot_insights_write_json(&in, &b, NULL);
    char *text = iot_buf_take(&b);
    CHECK_CONTAINS(text, "\"write_transfer\":\"collective\"");
    CHECK_CONTAINS(text, "\"write_locality\":\"sequential\"");
    CHECK_CONTAINS(text, "\"files\":\"shared\"");
    CHECK_CONTAINS(text, "\"transfer_size\":4194304");
    CHECK_CONTAINS(text, "\"read_transfer\":\"none\"");
    CHECK_CONTAINS(text, "\"path_hash\":null");
    char err[512];
    CHECK(iot_insights_from_json(text, &back, err, sizeof err) == 0);
    CHECK(same_insights(&in, &back));
    free(text);

    /* hand-written: partial, sizes as text */
    CHECK(iot_insights_from_json("{\"write_transfer\": \"mixed\", \"transfer_size\": \"1M\", \"files\": \"shared\","
                                 " \"write_locality\": \"random\", \"file_system\": \"lustre\", \"lustre_pfl\": true}",
                                 &back, err, sizeof err) == 0);
    CHECK(back.write_xfer == IOT_XFER_MIXED && back.transfer_size == MiB && back.lustre_pfl == 1);
    CHECK(back.max_transfer_size == -1 && back.same_calls == -1 && back.processes == 1);

    /* errors name the member */
    CHECK(iot_insights_from_json("{\"transfer_szie\": 1}", &back, err, sizeof err) < 0);
    CHECK_CONTAINS(err, "insights.transfer_szie: unknown insight");
    CHECK(iot_insights_from_json("{\"write_transfer\": \"sometimes\"}", &back, err, sizeof err) < 0);
    CHECK_CONTAINS(err, "none|independent|collective|mixed");
    CHECK(iot_insights_from_json("{\"transfer_size\": \"4MB\"}", &back, err, sizeof err) < 0);
    CHECK_CONTAINS(err, "ambiguous");
    CHECK(iot_insights_from_json("{\"same_calls\": 1}", &back, err, sizeof err) < 0);
    CHECK_CONTAINS(err, "same_calls");
    CHECK(iot_insights_from_json("{\"processes\": 0}", &back, err, sizeof err) < 0);
    CHECK(iot_insights_from_json("[1]", &back, err, sizeof err) < 0);
    CHECK_CONTAINS(err, "expected an object");
    CHECK(iot_insights_from_json("{", &back, err, sizeof err) < 0);
    CHECK_CONTAINS(err, "not valid JSON");
}

/* The array form (for offline traces) classifies as the tracker does. */
static void test_locality_of_accesses(void)
{
    int64_t off[40] = {0}, size[40] = {0}, extent = 0;
    CHECK(iot_locality_of_accesses(off, size, 0, &extent) == IOT_LOC_UNKNOWN && extent == -1);
    for (int i = 0; i < 40; i++) {
        off[i] = (4 * i + 1) * MiB; /* rank 1 of 4, 1M blocks */
        size[i] = MiB;
    }
    CHECK(iot_locality_of_accesses(off, size, 40, &extent) == IOT_LOC_STRIDED && extent == 158 * MiB);
    for (int i = 0; i < 40; i++)
        off[i] = i * MiB;
    CHECK(iot_locality_of_accesses(off, size, 40, NULL) == IOT_LOC_SEQUENTIAL);
    off[20] = 900 * MiB, off[10] = 700 * MiB, off[30] = 3 * MiB, off[5] = 77 * MiB, off[25] = 1;
    CHECK(iot_locality_of_accesses(off, size, 40, &extent) == IOT_LOC_RANDOM && extent == 901 * MiB);
}

int main(void)
{
    test_locality();
    test_locality_of_accesses();
    test_identity();
    test_classify();
    test_extract_ior();
    test_extract_flash();
    test_extract_pnetcdf();
    test_extract_other();
    test_merge();
    test_json();
    CHECK_DONE();
}
