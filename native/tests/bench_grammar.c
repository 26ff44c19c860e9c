/* Benchmark of the call-signature table, the Sequitur grammar and the
 * prediction: ns per call and bytes held per appended terminal. Not a test
 * (timings vary by machine); run a Release build by hand:
 *   bench_grammar [terminals (default 10000000)] */
#include "iotuner/grammar.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static uint32_t next_rand(uint64_t *s)
{
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return (uint32_t)(*s >> 33);
}

typedef struct {
    iot_sigtab *t;
    int *calls;
    size_t n, max;
    int64_t offset;
    uint64_t seed;
    unsigned noise; /* per 1000 calls, an unrelated one comes along */
} gen;

static void call(gen *g, const char *func, int64_t a, int64_t b, int with_offset)
{
    if (g->n == g->max)
        return;
    int64_t args[3] = {a, b, g->offset};
    if (with_offset)
        g->offset += b;
    g->calls[g->n++] = iot_sig_intern(g->t, func, args, with_offset ? 3 : 2, with_offset ? 2 : -1);
    /* some calls come with an unrelated one (attribute reads, stats) */
    if (next_rand(&g->seed) % 1000 < g->noise && g->n < g->max) {
        int64_t x[2] = {next_rand(&g->seed) % 20, 0};
        g->calls[g->n++] = iot_sig_intern(g->t, "H5Aread", x, 2, -1);
    }
}

/* A FLASH-IO-like rank: a log line per step (POSIX), a checkpoint of 24
 * variables every 5 steps, a plot file of 4 every 10. */
static void realistic(gen *g)
{
    for (int step = 0; g->n < g->max; step++) {
        call(g, "write", 3, 80 + 8 * (step % 3), 1);
        if (step % 5)
            continue;
        int plot = step % 10 == 0, vars = plot ? 4 : 24;
        int64_t bytes = plot ? 1 << 18 : 1 << 20;
        call(g, "H5Fcreate", plot, 0, 0); /* the file name, normalized by the caller */
        call(g, "H5Pset_fapl_mpio", 0, 0, 0);
        call(g, "MPI_File_open", 0, 0, 0);
        for (int v = 0; v < vars; v++) {
            call(g, "H5Screate_simple", 3, 0, 0);
            call(g, "H5Dcreate", v, bytes, 0);
            call(g, "H5Dwrite", v, bytes, 0);
            call(g, "MPI_File_write_at_all", 5, bytes, 1);
            call(g, "H5Dclose", 0, 0, 0);
            call(g, "H5Sclose", 0, 0, 0);
        }
        call(g, "H5Awrite", 1, 64, 0);
        call(g, "H5Fclose", 0, 0, 0);
    }
}

static void random_calls(gen *g)
{
    while (g->n < g->max) {
        int64_t x = next_rand(&g->seed) % 64;
        call(g, "pwrite", x, 4096, 0);
    }
}

static long peak_rss_kib(void)
{
    struct rusage ru;
    return getrusage(RUSAGE_SELF, &ru) ? -1 : ru.ru_maxrss;
}

static int run(const char *name, void (*pattern)(gen *), size_t n, unsigned noise)
{
    gen g = {iot_sigtab_new(), malloc(n * sizeof(int)), 0, n, 0, 12345, noise};
    if (!g.t || !g.calls) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    double t0 = now();
    pattern(&g);
    double t1 = now();

    iot_grammar *gr = iot_grammar_new();
    if (!gr)
        return 1;
    /* The runtime's use: predict at each phase start (H5Fcreate), timed apart. */
    int create0 = iot_sig_find(g.t, "H5Fcreate", (int64_t[]){0, 0}, 2, -1);
    int create1 = iot_sig_find(g.t, "H5Fcreate", (int64_t[]){1, 0}, 2, -1);
    static int out[1 << 16];
    size_t predictions = 0, predicted = 0, repeated = 0, candidates = 0;
    double tpredict = 0, trepeat = 0;
    for (size_t i = 0; i < n; i++) {
        if (iot_grammar_append(gr, g.calls[i])) {
            fprintf(stderr, "append failed at %zu\n", i);
            return 1;
        }
        if (g.calls[i] == create0 || g.calls[i] == create1) {
            iot_prediction p;
            double a = now();
            predicted += iot_grammar_predict_phase(gr, g.calls[i], out, 1 << 16);
            double b = now();
            repeated += iot_grammar_predict_repeat(gr, g.calls[i], out, 1 << 16);
            double c = now();
            iot_grammar_predict_rule(gr, g.calls[i], &p);
            candidates += p.candidates;
            tpredict += b - a;
            trepeat += c - b;
            predictions++;
        }
    }
    double t2 = now() - tpredict - trepeat;

    size_t mem = iot_grammar_memory(gr);
    printf("%-10s %zu terminals, %zu signatures, %u/1000 unrelated calls\n", name, n, iot_sigtab_count(g.t), noise);
    printf("  signature generation+intern: %7.1f ns/call\n", 1e9 * (t1 - t0) / (double)n);
    printf("  grammar append:              %7.1f ns/terminal\n", 1e9 * (t2 - t1) / (double)n);
    printf("  grammar: %zu rules, %zu symbols; %zu bytes held = %.4f bytes/appended terminal\n",
           iot_grammar_rule_count(gr), iot_grammar_symbol_count(gr), mem, (double)mem / (double)n);
    if (predictions) {
        printf("  predict_phase at H5Fcreate:  %7.1f ns, %.1f calls predicted, %.1f candidate rules (mean of %zu)\n",
               1e9 * tpredict / (double)predictions, (double)predicted / (double)predictions,
               (double)candidates / (double)predictions, predictions);
        printf("  predict_repeat at H5Fcreate: %7.1f ns, %.1f calls predicted\n", 1e9 * trepeat / (double)predictions,
               (double)repeated / (double)predictions);
    }
    iot_grammar_free(gr);
    iot_sigtab_free(g.t);
    free(g.calls);
    return 0;
}

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 10000000;
    if (!n)
        n = 10000000;
    int rc = run("periodic", realistic, n, 0);
    rc |= run("noisy", realistic, n, 5);
    /* worst case: nothing repeats beyond chance, the grammar grows linearly */
    rc |= run("random-64", random_calls, n / 5, 0);
    printf("peak RSS %ld KiB (includes the %zu-terminal input arrays)\n", peak_rss_kib(), n);
    return rc;
}
