/* The registry of modules (module.h) and what goes through it: the events a
 * layer sends, handed to the modules that subscribe, and the settings that
 * apply to a phase, asked of the settings sources. */
#include <string.h>

#include "iotuner/ops.h"
#include "module.h"

static const iot_module *registered[IOT_MAX_MODULES];
static size_t nregistered;
static int started; /* the library started: a module registered later starts at once */
static int slots;   /* phase-state slots given out */

/* The modules of this run and, per event, the hooks of those that subscribe, fixed at start (and when a
 * module registers later, before main). */
static const iot_module *active[IOT_MAX_MODULES];
static size_t nactive;
int iot_listeners[IOT_EVENTS];
static struct {
    void (*phase_begin[IOT_MAX_MODULES])(iot_phase *, const iot_call *);
    void (*file_open[IOT_MAX_MODULES])(iot_phase *, int, int);
    void (*call[IOT_MAX_MODULES])(iot_phase *, const iot_call *);
    void (*data[IOT_MAX_MODULES])(iot_phase *, iot_data *);
    void (*operation[IOT_MAX_MODULES])(iot_phase *, int, int64_t);
    void (*phase_end[IOT_MAX_MODULES])(iot_phase *);
    void (*phase_dropped[IOT_MAX_MODULES])(iot_phase *);
} hooks;

#define SUBSCRIBE(event, member)                                                                              \
    if (m->member)                                                                                           \
        hooks.member[iot_listeners[event]++] = m->member;

static void subscribe(const iot_module *m)
{
    SUBSCRIBE(IOT_EVENT_PHASE_BEGIN, phase_begin)
    SUBSCRIBE(IOT_EVENT_FILE_OPEN, file_open)
    SUBSCRIBE(IOT_EVENT_CALL, call)
    SUBSCRIBE(IOT_EVENT_DATA, data)
    SUBSCRIBE(IOT_EVENT_OPERATION, operation)
    SUBSCRIBE(IOT_EVENT_PHASE_END, phase_end)
    SUBSCRIBE(IOT_EVENT_PHASE_DROPPED, phase_dropped)
}

static void start(const iot_module *m)
{
    iot_internal++;
    int on = m->init ? m->init() : 1;
    iot_internal--;
    if (!on)
        return;
    active[nactive++] = m;
    subscribe(m);
}

IOT_EXPORT int iotuner_module_register(const iot_module *m)
{
    if (!m || nregistered == IOT_MAX_MODULES || (m->slot && slots == IOT_PHASE_SLOTS)) {
        iot_warn("module %s not registered: the library has room for %d modules, %d of them with phase state",
                 m && m->name ? m->name : "(unnamed)", IOT_MAX_MODULES, IOT_PHASE_SLOTS);
        return -1;
    }
    if (m->slot)
        *m->slot = slots++;
    registered[nregistered++] = m;
    if (started)
        start(m);
    return 0;
}

void iot_modules_start(void)
{
    started = 1;
    for (size_t i = 0; i < nregistered; i++)
        start(registered[i]);
}

const iot_module *const *iot_modules(size_t *n)
{
    *n = nactive;
    return active;
}

/* After it no module is called again (a serial program's exit may still make calls). */
void iot_modules_cleanup(void)
{
    size_t n = nactive;
    nactive = 0;
    memset(iot_listeners, 0, sizeof iot_listeners);
    for (size_t i = n; i-- > 0;)
        if (active[i]->cleanup)
            active[i]->cleanup();
}

/* ---- events ---- */

/* A hook runs as the library's own code: what it does is not the application's I/O. */
#define DISPATCH(event, member, ...)                                                                          \
    do {                                                                                                     \
        iot_internal++;                                                                                      \
        for (int i = 0; i < iot_listeners[event]; i++)                                                       \
            hooks.member[i](__VA_ARGS__);                                                                    \
        iot_internal--;                                                                                      \
    } while (0)

void iot_emit_phase_begin(iot_phase *ph, const iot_call *opening)
{
    DISPATCH(IOT_EVENT_PHASE_BEGIN, phase_begin, ph, opening);
}

void iot_emit_file_open(iot_phase *ph, int create, int truncate)
{
    DISPATCH(IOT_EVENT_FILE_OPEN, file_open, ph, create, truncate);
}

void iot_emit_call(iot_phase *ph, const iot_call *c)
{
    DISPATCH(IOT_EVENT_CALL, call, ph, c);
}

void iot_emit_data(iot_phase *ph, iot_data *d)
{
    DISPATCH(IOT_EVENT_DATA, data, ph, d);
}

void iot_emit_phase_end(iot_phase *ph)
{
    DISPATCH(IOT_EVENT_PHASE_END, phase_end, ph);
}

void iot_emit_phase_dropped(iot_phase *ph)
{
    DISPATCH(IOT_EVENT_PHASE_DROPPED, phase_dropped, ph);
}

IOT_TLS iot_phase *iot_op_phase;

void iot_emit_operation(int op, long long bytes)
{
    iot_phase *ph = iot_op_phase;
    if (!ph || iot_internal || op < 0 || op >= IOT_NOPS)
        return;
    DISPATCH(IOT_EVENT_OPERATION, operation, ph, op, (int64_t)bytes);
}

/* libiotuner_ops.so's questions (counting mode): is this thread inside a data call, and its operations. */
IOT_EXPORT int iotuner_op_active(void)
{
    return iot_op_phase != NULL && !iot_internal;
}

IOT_EXPORT void iotuner_op_note(int op, long long bytes)
{
    iot_emit_operation(op, bytes);
}

/* ---- settings ---- */

const iot_setting *iot_setting_of(const iot_setting *const *list, size_t n, iot_knob_id knob)
{
    for (size_t i = 0; i < n; i++)
        if (list[i]->knob == (int)knob)
            return list[i];
    return NULL;
}

static int same_knob(const iot_setting *a, const iot_setting *b)
{
    return a->layer == b->layer && (a->knob >= 0 ? a->knob == b->knob : b->knob < 0 && !strcmp(a->name, b->name));
}

/* Which groups (the first 64) of the user's document matched a dataset on this rank, by bit. */
static _Atomic uint64_t pattern_hits;

uint64_t iot_settings_pattern_hits(void)
{
    return atomic_load(&pattern_hits);
}

static void note_pattern_hits(const iot_settings *s, const char *path, const char *dataset)
{
    for (size_t g = 0; g < s->ngroups && g < 64; g++)
        if (s->groups[g].dataset_glob && !(atomic_load(&pattern_hits) >> g & 1) &&
            iot_group_matches(&s->groups[g], path, dataset))
            atomic_fetch_or(&pattern_hits, (uint64_t)1 << g);
}

/* Adds src's settings for the phase to out[0..n), replacing the same knobs. */
static size_t overlay(const iot_settings *src, const iot_phase *ph, const char *dataset, iot_layer layer,
                      const iot_setting **out, size_t n, size_t max)
{
    const iot_setting *got[128];
    size_t m = iot_settings_resolve(src, ph->path, dataset, (int)layer, got, 128);
    if (dataset && src == iot_g.settings)
        note_pattern_hits(src, ph->path, dataset);
    for (size_t i = 0; i < m; i++) {
        size_t k = 0;
        while (k < n && !same_knob(out[k], got[i]))
            k++;
        if (k < n)
            out[k] = got[i];
        else if (n < max)
            out[n++] = got[i];
    }
    return n;
}

size_t iot_resolve(const iot_phase *ph, const char *dataset, iot_layer layer, const iot_setting **out, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < nactive; i++) {
        const iot_settings *s = active[i]->settings ? active[i]->settings(ph) : NULL;
        if (s)
            n = overlay(s, ph, dataset, layer, out, n, max);
    }
    if (iot_g.settings) /* the user's document wins, knob by knob */
        n = overlay(iot_g.settings, ph, dataset, layer, out, n, max);
    return n;
}
