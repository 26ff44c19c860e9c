/* The module interface inside the library: the public one (iotuner/module.h),
 * how the library's own modules register (IOT_MODULE), and the events the
 * layers send (phases.c sends a phase's begin, file open, end and drop; the
 * layers its calls and data calls). Modules never call each other. */
#ifndef IOTUNER_MODULE_RT_H
#define IOTUNER_MODULE_RT_H

#include "iotuner/module.h"
#include "phase.h"

#define IOT_MAX_MODULES 16

/* Registers one of the library's modules before its start-up runs. */
#define IOT_MODULE(var)                                                                                       \
    __attribute__((constructor(101))) static void register_##var(void)                                        \
    {                                                                                                        \
        iotuner_module_register(&var);                                                                       \
    }

/* At start-up (lifecycle.c): each registered module's init, then who hears which event. */
void iot_modules_start(void);
/* The modules taking part in this run (their init said so), in registration order. */
const iot_module *const *iot_modules(size_t *n);
/* At the end: their cleanup, in reverse order. */
void iot_modules_cleanup(void);

/* ---- events ---- */

typedef enum {
    IOT_EVENT_PHASE_BEGIN,
    IOT_EVENT_FILE_OPEN,
    IOT_EVENT_CALL,
    IOT_EVENT_DATA,
    IOT_EVENT_OPERATION,
    IOT_EVENT_PHASE_END,
    IOT_EVENT_PHASE_DROPPED,
    IOT_EVENTS
} iot_event;

/* How many modules of this run subscribe to each event (fixed at start): a layer builds an event only when
 * someone listens, so an event nobody wants costs one load and a branch. */
extern int iot_listeners[IOT_EVENTS];

static inline int iot_wanted(iot_event e)
{
    return __builtin_expect(iot_listeners[e] != 0, 0);
}

void iot_emit_phase_begin(iot_phase *ph, const iot_call *opening);
void iot_emit_file_open(iot_phase *ph, int create, int truncate);
void iot_emit_call(iot_phase *ph, const iot_call *c);
void iot_emit_data(iot_phase *ph, iot_data *d);
void iot_emit_phase_end(iot_phase *ph);
void iot_emit_phase_dropped(iot_phase *ph);

/* A call of a phase whose arguments cost nothing to gather, when someone listens. */
static inline void iot_event_call(iot_phase *ph, const char *name, const int64_t *args, int nargs)
{
    if (iot_wanted(IOT_EVENT_CALL) && ph) {
        iot_call c = {name, args, nargs, -1};
        iot_emit_call(ph, &c);
    }
}

/* Counting mode (IOTUNER_COUNT_OPS): while this thread is inside an MPI-IO data call, its phase (set by the
 * MPI-IO layer); NULL otherwise, and always when the mode is off. Operations made meanwhile (a POSIX write,
 * ROMIO's MPI calls through libiotuner_ops.so) are events of that phase. */
extern IOT_TLS iot_phase *iot_op_phase;
void iot_emit_operation(int op, long long bytes);
#define IOT_OP_NOTE(op, bytes)                                                                                 \
    do {                                                                                                       \
        if (__builtin_expect(iot_op_phase != NULL, 0))                                                         \
            iot_emit_operation(op, (long long)(bytes));                                                        \
    } while (0)

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
