/* The registry of modules (module.h), and what is asked of them: which
 * settings apply to a phase. */
#include <string.h>

#include "module.h"

static const iot_module *modules[IOT_MAX_MODULES];
static size_t nmodules;

void iot_module_register(const iot_module *m)
{
    if (nmodules < IOT_MAX_MODULES)
        modules[nmodules++] = m;
}

const iot_module *const *iot_modules(size_t *n)
{
    *n = nmodules;
    return modules;
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
    for (size_t i = 0; i < nmodules; i++) {
        const iot_settings *s = modules[i]->settings ? modules[i]->settings(ph) : NULL;
        if (s)
            n = overlay(s, ph, dataset, layer, out, n, max);
    }
    if (iot_g.settings) /* the user's document wins, knob by knob */
        n = overlay(iot_g.settings, ph, dataset, layer, out, n, max);
    return n;
}
