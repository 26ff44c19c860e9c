/* Settings documents: parse, validate against the catalogue, resolve per file. */
#include "iotuner/core.h"

#include <ctype.h>
#include <fnmatch.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define ERRLEN 512

/* Every error of a document is collected, one per line, so a user fixes them in one pass. */
typedef struct {
    char *err;
    size_t errlen;
    int errors;
} ctx;

static int fail(ctx *c, const iot_json *at, const char *where, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int fail(ctx *c, const iot_json *at, const char *where, const char *fmt, ...)
{
    char what[ERRLEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    size_t used = c->errors ? strlen(c->err) : 0;
    if (c->errlen && used + 1 < c->errlen) {
        char *p = c->err + used;
        size_t room = c->errlen - used;
        const char *sep = c->errors ? "\n" : "";
        int n = at ? snprintf(p, room, "%sline %d: %s: %s", sep, at->line, where, what)
                   : snprintf(p, room, "%s%s: %s", sep, where, what);
        if (c->errors && (n < 0 || (size_t)n >= room))
            p[0] = 0; /* no room for this one: keep the earlier ones whole */
    }
    c->errors++;
    return -1;
}

static char *dupstr(const char *s)
{
    return s ? strdup(s) : NULL;
}

/* Integer from a JSON number or a string holding one. */
static int get_integer(const iot_json *v, int64_t *out)
{
    if (v->type == IOT_JSON_NUMBER && v->is_integer) {
        *out = v->integer;
        return 0;
    }
    if (v->type == IOT_JSON_STRING) {
        char *end;
        long long ll = strtoll(v->string, &end, 10);
        if (end != v->string && *end == 0) {
            *out = ll;
            return 0;
        }
    }
    return -1;
}

static int get_size(ctx *c, const iot_json *v, const char *where, int64_t *out)
{
    char err[256];
    if (v->type == IOT_JSON_NUMBER) {
        if (!v->is_integer || v->integer < 0)
            return fail(c, v, where, "a size must be a whole, non-negative number of bytes");
        *out = v->integer;
        return 0;
    }
    if (v->type == IOT_JSON_STRING) {
        if (iot_parse_size(v->string, out, err, sizeof err) < 0)
            return fail(c, v, where, "%s", err);
        return 0;
    }
    return fail(c, v, where, "expected a size (bytes, or a string like \"4M\"), got %s", iot_json_type_name(v->type));
}

/* A bound as the document would write it: sizes in binary units ("4G"), numbers as they are. */
static void bound_text(const iot_knob *k, double x, char *out, size_t outlen)
{
    if ((k->type == IOT_TYPE_SIZE || k->type == IOT_TYPE_SIZE_PAIR) && x >= 0 && x < 9.2e18)
        iot_format_size((int64_t)x, out, outlen);
    else
        snprintf(out, outlen, "%.15g", x);
}

static int check_bounds(ctx *c, const iot_json *v, const char *where, const iot_knob *k, double x)
{
    int below = x < k->min, above = k->max > 0 && x > k->max;
    if (!below && !above)
        return 0;
    char value[32], bound[32];
    const char *why = below ? k->why_min : k->why_max;
    bound_text(k, x, value, sizeof value);
    bound_text(k, below ? k->min : k->max, bound, sizeof bound);
    return fail(c, v, where, "%s is %s the %s %s%s%s%s", value, below ? "below" : "above",
                below ? "minimum" : "maximum", bound, why ? " (" : "", why ? why : "", why ? ")" : "");
}

static int choice_match(const char *choices, const char *value, char *canon, size_t canonlen)
{
    const char *p = choices;
    while (*p) {
        const char *bar = strchr(p, '|');
        size_t n = bar ? (size_t)(bar - p) : strlen(p);
        if (strlen(value) == n && !strncasecmp(p, value, n)) {
            snprintf(canon, canonlen, "%.*s", (int)n, p);
            return 1;
        }
        p += n + (bar ? 1 : 0);
    }
    return 0;
}

static int convert_value(ctx *c, const iot_knob *k, const iot_json *v, const char *where, iot_setting *out)
{
    char text[512];
    text[0] = 0;
    switch (k->type) {
    case IOT_TYPE_SIZE: {
        int64_t x;
        if (get_size(c, v, where, &x) < 0 || check_bounds(c, v, where, k, (double)x) < 0)
            return -1;
        if (k->multiple_of && x % k->multiple_of)
            return fail(c, v, where, "%lld is not a multiple of %lld", (long long)x, (long long)k->multiple_of);
        out->ints[0] = x;
        out->nints = 1;
        snprintf(text, sizeof text, "%lld", (long long)x);
        break;
    }
    case IOT_TYPE_INT: {
        int64_t x;
        if (get_integer(v, &x) < 0) {
            if (v->type == IOT_JSON_STRING)
                return fail(c, v, where, "expected a whole number, got \"%s\"", v->string);
            return fail(c, v, where, "expected a whole number, got %s", iot_json_type_name(v->type));
        }
        if (check_bounds(c, v, where, k, (double)x) < 0)
            return -1;
        out->ints[0] = x;
        out->nints = 1;
        snprintf(text, sizeof text, "%lld", (long long)x);
        break;
    }
    case IOT_TYPE_BOOL: {
        int b;
        if (v->type == IOT_JSON_BOOL)
            b = v->boolean;
        else if (v->type == IOT_JSON_STRING && (!strcasecmp(v->string, "true") || !strcasecmp(v->string, "false")))
            b = !strcasecmp(v->string, "true");
        else
            return fail(c, v, where, "expected true or false, got %s", iot_json_type_name(v->type));
        out->ints[0] = b;
        out->nints = 1;
        snprintf(text, sizeof text, "%s", b ? "true" : "false");
        break;
    }
    case IOT_TYPE_ENUM: {
        const char *s;
        if (v->type == IOT_JSON_STRING)
            s = v->string;
        else if (v->type == IOT_JSON_BOOL)
            s = v->boolean ? "true" : "false";
        else
            return fail(c, v, where, "expected one of %s, got %s", k->choices, iot_json_type_name(v->type));
        if (!choice_match(k->choices, s, text, sizeof text))
            return fail(c, v, where, "'%s' is not one of %s", s, k->choices);
        break;
    }
    case IOT_TYPE_STRING:
        if (v->type != IOT_JSON_STRING)
            return fail(c, v, where, "expected a string, got %s", iot_json_type_name(v->type));
        if (k->validate && !k->validate(v->string))
            return fail(c, v, where, "'%s' is not %s", v->string, k->syntax);
        snprintf(text, sizeof text, "%s", v->string);
        break;
    case IOT_TYPE_FLOAT: {
        double x;
        if (v->type == IOT_JSON_NUMBER)
            x = v->number;
        else
            return fail(c, v, where, "expected a number, got %s", iot_json_type_name(v->type));
        if (!isfinite(x) || check_bounds(c, v, where, k, x) < 0)
            return -1;
        out->real = x;
        snprintf(text, sizeof text, "%.9g", x);
        break;
    }
    case IOT_TYPE_SIZE_PAIR: {
        if (v->type != IOT_JSON_ARRAY || v->count != 2)
            return fail(c, v, where, "expected [threshold, alignment]");
        for (int i = 0; i < 2; i++)
            if (get_size(c, v->items[i], where, &out->ints[i]) < 0)
                return -1;
        if (out->ints[1] < 1)
            return fail(c, v, where, "alignment must be at least 1");
        if (check_bounds(c, v->items[1], where, k, (double)out->ints[1]) < 0)
            return -1;
        out->nints = 2;
        snprintf(text, sizeof text, "%lld,%lld", (long long)out->ints[0], (long long)out->ints[1]);
        break;
    }
    case IOT_TYPE_DIMS: {
        if (v->type != IOT_JSON_ARRAY || v->count == 0 || v->count > IOT_MAX_DIMS)
            return fail(c, v, where, "expected a list of 1 to %d dimensions", IOT_MAX_DIMS);
        size_t pos = 0;
        for (size_t i = 0; i < v->count; i++) {
            int64_t x;
            if (get_integer(v->items[i], &x) < 0 || x < 1)
                return fail(c, v, where, "dimension %zu must be a positive whole number", i + 1);
            out->ints[i] = x;
            pos += (size_t)snprintf(text + pos, sizeof text - pos, "%s%lld", i ? "," : "", (long long)x);
            if (pos >= sizeof text)
                return fail(c, v, where, "too long");
        }
        out->nints = (int)v->count;
        break;
    }
    case IOT_TYPE_LAYOUT: {
        iot_layout l;
        char err[256];
        if (v->type != IOT_JSON_STRING)
            return fail(c, v, where, "expected a layout string like \"-E 256M -c 1 -E -1 -c -1\"");
        if (iot_layout_parse(v->string, &l, err, sizeof err) < 0)
            return fail(c, v, where, "%s", err);
        iot_layout_format(&l, text, sizeof text);
        break;
    }
    }
    out->text = strdup(text);
    return out->text ? 0 : fail(c, v, where, "out of memory");
}

static int convert_hint(ctx *c, const char *name, const iot_json *v, const char *where, iot_setting *out)
{
    char text[512];
    if (strlen(name) > 255 || !*name)
        return fail(c, v, where, "an MPI-IO hint name must be 1 to 255 characters");
    for (const char *p = name; *p; p++)
        if (isspace((unsigned char)*p))
            return fail(c, v, where, "an MPI-IO hint name cannot contain spaces");
    if (v->type == IOT_JSON_STRING)
        snprintf(text, sizeof text, "%s", v->string);
    else if (v->type == IOT_JSON_NUMBER && v->is_integer)
        snprintf(text, sizeof text, "%lld", (long long)v->integer);
    else if (v->type == IOT_JSON_BOOL)
        snprintf(text, sizeof text, "%s", v->boolean ? "true" : "false");
    else
        return fail(c, v, where, "an MPI-IO hint value must be a string, a whole number or true/false");
    out->text = strdup(text);
    return out->text ? 0 : fail(c, v, where, "out of memory");
}

static int dataset_level(const iot_knob *k)
{
    return k->apply == IOT_APPLY_DATASET_CREATE || k->apply == IOT_APPLY_TRANSFER;
}

static int parse_layer(ctx *c, iot_group *g, int layer, const iot_json *obj, const char *gwhere)
{
    char where[300];
    if (obj->type != IOT_JSON_OBJECT) {
        snprintf(where, sizeof where, "%s.%s", gwhere, iot_layer_name((iot_layer)layer));
        return fail(c, obj, where, "expected an object of knobs, got %s", iot_json_type_name(obj->type));
    }
    for (size_t i = 0; i < obj->count; i++) {
        const char *name = obj->keys[i];
        const iot_json *v = obj->items[i];
        snprintf(where, sizeof where, "%s.%s.%s", gwhere, iot_layer_name((iot_layer)layer), name);
        iot_setting *s = &g->items[g->count];
        memset(s, 0, sizeof *s);
        s->layer = (iot_layer)layer;
        s->line = v->line;
        s->knob = iot_knob_find((iot_layer)layer, name);
        if (s->knob < 0 && layer != IOT_LAYER_MPIIO) {
            char hint[128];
            if (iot_knob_suggest(name, hint, sizeof hint))
                fail(c, v, where, "unknown %s knob (did you mean %s?)", iot_layer_name((iot_layer)layer), hint);
            else
                fail(c, v, where, "unknown %s knob; 'iotuner knobs' lists them", iot_layer_name((iot_layer)layer));
            continue;
        }
        if (s->knob >= 0) {
            const iot_knob *k = &iot_catalogue[s->knob];
            if (g->dataset_glob && !dataset_level(k)) {
                fail(c, v, where, "applies to a whole file, so it cannot be in a group with a 'dataset' pattern");
                continue;
            }
            if (convert_value(c, k, v, where, s) < 0) {
                free(s->text);
                continue;
            }
        } else if (convert_hint(c, name, v, where, s) < 0) {
            free(s->text);
            continue;
        }
        s->name = strdup(name);
        if (!s->name) {
            free(s->text);
            return fail(c, v, where, "out of memory");
        }
        g->count++;
    }
    return 0;
}

static iot_lustre_part lustre_part(const iot_setting *s)
{
    return s->knob >= 0 ? iot_catalogue[s->knob].lustre_part : IOT_LUSTRE_NONE;
}

static int has_part(const iot_group *g, iot_lustre_part part)
{
    for (size_t i = 0; i < g->count; i++)
        if (lustre_part(&g->items[i]) == part)
            return 1;
    return 0;
}

static int parse_group(ctx *c, iot_group *g, const iot_json *obj, const char *where, int implicit)
{
    if (obj->type != IOT_JSON_OBJECT)
        return fail(c, obj, where, "expected an object, got %s", iot_json_type_name(obj->type));
    int before = c->errors;
    size_t total = 0;
    for (size_t i = 0; i < obj->count; i++) {
        const char *key = obj->keys[i];
        const iot_json *v = obj->items[i];
        if (iot_layer_from_name(key) >= 0) {
            if (v->type == IOT_JSON_OBJECT)
                total += v->count;
            continue;
        }
        if (implicit)
            continue; /* top-level keys are checked by the caller */
        if (!strcmp(key, "file") || !strcmp(key, "dataset") || !strcmp(key, "description")) {
            if (v->type != IOT_JSON_STRING || !*v->string)
                fail(c, v, where, "'%s' must be a non-empty string", key);
            continue;
        }
        fail(c, v, where,
             "unknown key '%s' (a group has file, dataset, description, hdf5, mpiio, ompio, pnetcdf, lustre)", key);
    }
    if (!implicit) {
        const iot_json *f = iot_json_get(obj, "file"), *d = iot_json_get(obj, "dataset");
        g->file_glob = f && f->type == IOT_JSON_STRING ? dupstr(f->string) : NULL;
        g->dataset_glob = d && d->type == IOT_JSON_STRING ? dupstr(d->string) : NULL;
    }
    g->items = calloc(total ? total : 1, sizeof *g->items);
    if (!g->items)
        return fail(c, obj, where, "out of memory");
    for (int layer = 0; layer < IOT_LAYER_COUNT; layer++) {
        const iot_json *l = iot_json_get(obj, iot_layer_name((iot_layer)layer));
        if (l)
            parse_layer(c, g, layer, l, where);
    }
    if (has_part(g, IOT_LUSTRE_LAYOUT) && has_part(g, IOT_LUSTRE_STRIPING))
        fail(c, obj, where, "lustre.layout replaces stripe_count and stripe_size: give one or the other");
    return c->errors > before ? -1 : 0;
}

static void free_group(iot_group *g)
{
    for (size_t i = 0; i < g->count; i++) {
        free(g->items[i].name);
        free(g->items[i].text);
    }
    free(g->items);
    free(g->file_glob);
    free(g->dataset_glob);
}

void iot_settings_free(iot_settings *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->ngroups; i++)
        free_group(&s->groups[i]);
    free(s->groups);
    free(s->description);
    free(s->meta);
    free(s);
}

iot_settings *iot_settings_parse(const char *text, size_t len, char *err, size_t errlen)
{
    ctx c = {.err = err, .errlen = errlen};
    char jerr[256];
    iot_json *doc = iot_json_parse(text, len, jerr, sizeof jerr);
    if (!doc) {
        snprintf(err, errlen, "not valid JSON: %s", jerr);
        return NULL;
    }
    iot_settings *s = calloc(1, sizeof *s);
    if (!s) {
        iot_json_free(doc);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    int rc = 0;
    const iot_json *ver = iot_json_get(doc, "version");
    const iot_json *groups = iot_json_get(doc, "groups");
    int implicit = 0;
    if (doc->type != IOT_JSON_OBJECT) {
        rc = fail(&c, doc, "document", "expected an object with \"version\" and \"groups\"");
        goto done;
    }
    /* a missing or malformed version is reported with the rest; a newer one cannot be read at all */
    if (!ver)
        fail(&c, doc, "version", "missing: write \"version\": %d", IOT_SETTINGS_VERSION);
    else if (ver->type != IOT_JSON_NUMBER || !ver->is_integer || ver->integer < 1)
        fail(&c, ver, "version", "must be a positive whole number");
    else if (ver->integer > IOT_SETTINGS_VERSION) {
        rc = fail(&c, ver, "version", "%lld is newer than this iotuner reads (%d)", (long long)ver->integer,
                  IOT_SETTINGS_VERSION);
        goto done;
    }
    s->version = c.errors ? IOT_SETTINGS_VERSION : (int)ver->integer;
    for (size_t i = 0; i < doc->count; i++) {
        const char *key = doc->keys[i];
        const iot_json *v = doc->items[i];
        if (!strcmp(key, "version") || !strcmp(key, "groups"))
            continue;
        if (iot_layer_from_name(key) >= 0) {
            implicit = 1;
        } else if (!strcmp(key, "description")) {
            if (v->type != IOT_JSON_STRING) {
                fail(&c, v, "description", "must be a string");
                continue;
            }
            free(s->description);
            s->description = dupstr(v->string);
        } else if (!strcmp(key, "meta")) {
            if (v->type != IOT_JSON_OBJECT) {
                fail(&c, v, "meta", "must be an object");
                continue;
            }
            iot_buf b;
            iot_buf_init(&b);
            iot_jw_value(&b, NULL, v);
            s->meta = iot_buf_take(&b);
        } else {
            fail(&c, v, "document",
                 "unknown key '%s' (the document has version, description, meta, groups, hdf5, mpiio, ompio, pnetcdf, "
                 "lustre)", key);
        }
    }
    if (groups && groups->type != IOT_JSON_ARRAY) {
        fail(&c, groups, "groups", "expected an array of groups");
        groups = NULL;
    }
    size_t n = (size_t)implicit + (groups ? groups->count : 0);
    s->groups = calloc(n ? n : 1, sizeof *s->groups);
    if (!s->groups) {
        rc = fail(&c, doc, "document", "out of memory");
        goto done;
    }
    if (implicit) {
        parse_group(&c, &s->groups[0], doc, "document", 1);
        s->ngroups = 1;
    }
    for (size_t i = 0; groups && i < groups->count; i++) {
        char where[32];
        snprintf(where, sizeof where, "groups[%zu]", i);
        parse_group(&c, &s->groups[s->ngroups], groups->items[i], where, 0);
        s->ngroups++;
    }
    if (c.errors)
        rc = -1;
done:
    iot_json_free(doc);
    if (rc < 0) {
        iot_settings_free(s);
        return NULL;
    }
    return s;
}

/* ---- legal but ruinous ---- */

#define GIB_D 1073741824.0
#define KEEPS_OWN "a dataset that would have more than %u chunks under %u bytes keeps the application's own layout"

static size_t add_warning(char *out, size_t outlen, size_t n, const iot_setting *it, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

static size_t add_warning(char *out, size_t outlen, size_t n, const iot_setting *it, const char *fmt, ...)
{
    char what[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    size_t used = strlen(out);
    if (used + 1 < outlen)
        snprintf(out + used, outlen - used, "%sline %d: %s.%s: %s", used ? "\n" : "", it->line,
                 iot_layer_name(it->layer), it->name, what);
    return n + 1;
}

size_t iot_settings_warnings(const iot_settings *s, char *out, size_t outlen)
{
    size_t n = 0;
    if (outlen)
        out[0] = 0;
    for (size_t gi = 0; s && gi < s->ngroups; gi++) {
        for (size_t i = 0; i < s->groups[gi].count; i++) {
            const iot_setting *it = &s->groups[gi].items[i];
            if (it->knob == IOT_KNOB_CHUNK_BYTES && it->ints[0] < IOT_CHUNK_SMALL_BYTES) {
                n = add_warning(out, outlen, n, it,
                                "chunks of %lld byte(s): a 1 GiB dataset would have %.0f (at least one element "
                                "each), at tens of microseconds each in HDF5; " KEEPS_OWN,
                                (long long)it->ints[0], GIB_D / (double)it->ints[0], IOT_CHUNK_SMALL_MAX,
                                IOT_CHUNK_SMALL_BYTES);
            } else if (it->knob == IOT_KNOB_CHUNK_DIMS) {
                double elements = 1;
                for (int d = 0; d < it->nints; d++)
                    elements *= (double)it->ints[d];
                if (elements * 8 < IOT_CHUNK_SMALL_BYTES)
                    n = add_warning(out, outlen, n, it,
                                    "chunks of %.0f element(s): a 1 GiB dataset of 8-byte elements would have "
                                    "%.0f, at tens of microseconds each in HDF5; " KEEPS_OWN,
                                    elements, GIB_D / (elements * 8), IOT_CHUNK_SMALL_MAX, IOT_CHUNK_SMALL_BYTES);
            } else if (it->knob == IOT_KNOB_CB_BUFFER_SIZE && it->ints[0] < 65536) {
                n = add_warning(out, outlen, n, it,
                                "a collective buffer of %lld bytes: a 1 GiB collective write through one aggregator "
                                "takes %.0f rounds, each with its own exchange between the ranks",
                                (long long)it->ints[0], GIB_D / (double)it->ints[0]);
            } else if (it->knob == IOT_KNOB_OMPIO_BYTES_PER_AGG && it->ints[0] < 65536) {
                /* OMPIO's cycles, as ROMIO's rounds: measured 10x slower at 4096 on a 2-rank collective write */
                n = add_warning(out, outlen, n, it,
                                "a collective buffer of %lld bytes per aggregator: a 1 GiB collective write through "
                                "one aggregator takes %.0f cycles, each with its own exchange between the ranks",
                                (long long)it->ints[0], GIB_D / (double)it->ints[0]);
            }
        }
    }
    return n;
}

int iot_glob_match_file(const char *glob, const char *path)
{
    if (!glob)
        return 1;
    if (strchr(glob, '/'))
        return fnmatch(glob, path, 0) == 0;
    const char *base = strrchr(path, '/');
    return fnmatch(glob, base ? base + 1 : path, 0) == 0;
}

int iot_group_matches(const iot_group *g, const char *path, const char *dataset)
{
    if (g->file_glob && (!path || !iot_glob_match_file(g->file_glob, path)))
        return 0;
    if (!g->dataset_glob)
        return 1;
    if (!dataset)
        return 0;
    const char *base = strrchr(dataset, '/');
    return fnmatch(g->dataset_glob, dataset, 0) == 0 || fnmatch(g->dataset_glob, base ? base + 1 : dataset, 0) == 0;
}

static int same_knob(const iot_setting *a, const iot_setting *b)
{
    return a->layer == b->layer && !strcmp(a->name, b->name);
}

/* A Lustre layout and plain striping exclude each other: the later wins. */
static int lustre_conflict(const iot_setting *a, const iot_setting *b)
{
    iot_lustre_part pa = lustre_part(a), pb = lustre_part(b);
    return pa && pb && pa != pb;
}

size_t iot_settings_resolve(const iot_settings *s, const char *path, const char *dataset, int layer,
                            const iot_setting **out, size_t max)
{
    size_t n = 0;
    if (!s)
        return 0;
    for (size_t gi = 0; gi < s->ngroups; gi++) {
        const iot_group *g = &s->groups[gi];
        if (!iot_group_matches(g, path, dataset))
            continue;
        for (size_t i = 0; i < g->count; i++) {
            const iot_setting *it = &g->items[i];
            if (layer >= 0 && (int)it->layer != layer)
                continue;
            size_t k = 0;
            for (size_t j = 0; j < n; j++) /* drop what this item overrides */
                if (!same_knob(out[j], it) && !lustre_conflict(out[j], it))
                    out[k++] = out[j];
            n = k;
            if (n < max)
                out[n++] = it;
        }
    }
    return n;
}

static void write_setting(iot_buf *b, const iot_setting *it)
{
    if (it->knob < 0) {
        iot_jw_string(b, it->name, it->text);
        return;
    }
    const iot_knob *k = &iot_catalogue[it->knob];
    switch (k->type) {
    case IOT_TYPE_SIZE:
    case IOT_TYPE_INT: iot_jw_int(b, it->name, it->ints[0]); break;
    case IOT_TYPE_BOOL: iot_jw_bool(b, it->name, (int)it->ints[0]); break;
    case IOT_TYPE_FLOAT: iot_jw_double(b, it->name, it->real); break;
    case IOT_TYPE_SIZE_PAIR:
    case IOT_TYPE_DIMS:
        iot_jw_begin_array(b, it->name);
        for (int i = 0; i < it->nints; i++)
            iot_jw_int(b, NULL, it->ints[i]);
        iot_jw_end_array(b);
        break;
    default: iot_jw_string(b, it->name, it->text);
    }
}

char *iot_settings_to_json(const iot_settings *s)
{
    iot_buf b;
    iot_buf_init(&b);
    iot_jw_begin_object(&b, NULL);
    iot_jw_int(&b, "version", s->version);
    if (s->description)
        iot_jw_string(&b, "description", s->description);
    if (s->meta) {
        iot_json *m = iot_json_parse(s->meta, strlen(s->meta), NULL, 0);
        iot_jw_value(&b, "meta", m);
        iot_json_free(m);
    }
    iot_jw_begin_array(&b, "groups");
    for (size_t gi = 0; gi < s->ngroups; gi++) {
        const iot_group *g = &s->groups[gi];
        iot_jw_begin_object(&b, NULL);
        if (g->file_glob)
            iot_jw_string(&b, "file", g->file_glob);
        if (g->dataset_glob)
            iot_jw_string(&b, "dataset", g->dataset_glob);
        for (int layer = 0; layer < IOT_LAYER_COUNT; layer++) {
            int opened = 0;
            for (size_t i = 0; i < g->count; i++) {
                if ((int)g->items[i].layer != layer)
                    continue;
                if (!opened) {
                    iot_jw_begin_object(&b, iot_layer_name((iot_layer)layer));
                    opened = 1;
                }
                write_setting(&b, &g->items[i]);
            }
            if (opened)
                iot_jw_end_object(&b);
        }
        iot_jw_end_object(&b);
    }
    iot_jw_end_array(&b);
    iot_jw_end_object(&b);
    return iot_buf_take(&b);
}
