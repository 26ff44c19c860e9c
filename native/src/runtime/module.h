/* What a module of the runtime gives the lifecycle core (as Darshan's modules
 * register with darshan-core). Each interception layer (POSIX, MPI-IO, HDF5)
 * and each service (Lustre layouts, smart mode, the access pattern) is one
 * module: one file, one iot_module, registered with IOT_MODULE. Every member
 * may be NULL. */
#ifndef IOTUNER_MODULE_H
#define IOTUNER_MODULE_H

#include <mpi.h>

#include "phase.h"

/* While the run report is built (report.c): what a module's report hook may use. */
typedef struct iot_report_ctx {
    MPI_Comm comm; /* the run's communicator: the hook is collective on it; MPI_COMM_NULL: a serial process */
    int root;      /* this process writes the report */
    iot_buf *out;  /* the report's top-level object, open (root only) */
    /* root only: the report's phase that a rank's phase (by its key) went into, or -1 */
    int (*phase_id)(const struct iot_report_ctx *ctx, const iot_phase_key *key, int rank);
    const iot_merge *merged; /* for phase_id */
} iot_report_ctx;

typedef struct iot_module {
    const char *name;
    /* At start-up, in the library's constructor: never MPI nor HDF5 (the library also loads into mpiexec). */
    void (*init)(void);
    /* A settings source: what the module decided for this phase (NULL: nothing). The user's settings
     * document overrides it knob by knob. */
    const iot_settings *(*settings)(const iot_phase *ph);
    /* Its part of this rank's fixed-size record of a phase (its level's counters). */
    void (*record)(const iot_phase *ph, iot_record *r);
    /* Its section of the run report: collective on ctx->comm (reduce what it keeps across ranks), then the
     * root writes it into ctx->out. */
    void (*report)(const iot_report_ctx *ctx);
    /* At the end of the run (after the report), or at exit. */
    void (*cleanup)(void);
} iot_module;

#define IOT_MAX_MODULES 16
void iot_module_register(const iot_module *m);
/* The registered modules, in registration order. */
const iot_module *const *iot_modules(size_t *n);

/* Registers a module before the library's own start-up runs. */
#define IOT_MODULE(var)                                                                                       \
    __attribute__((constructor(101))) static void register_##var(void)                                        \
    {                                                                                                        \
        iot_module_register(&var);                                                                           \
    }

/* ---- settings: what applies to a phase ---- */

/* Settings that apply to a phase's file (and dataset) in one layer: what the
 * modules that are settings sources decided (smart mode), overridden knob by
 * knob by the user's settings document. */
size_t iot_resolve(const iot_phase *ph, const char *dataset, iot_layer layer, const iot_setting **out, size_t max);
/* The groups of the user's document (the first 64, by bit) whose dataset pattern matched a dataset here. */
uint64_t iot_settings_pattern_hits(void);
/* The first of list[0..n) that is this knob, or NULL. */
const iot_setting *iot_setting_of(const iot_setting *const *list, size_t n, iot_knob_id knob);

#endif
