/* SmartIO's rules engine (section 3.3, Table 2): a table of rules, as data,
 * mapping insights to settings. The built-in table is the JSON text below,
 * so the runtime and Python (through ctypes) evaluate the same rules, and a
 * test can swap in a table of its own in the same format. */
#include "iotuner/core.h"
#include "iotuner/rules.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Where the table interprets the paper:
 *  - rule 1 fires when the transfers it would switch are collective or
 *    mixed; an independent application has nothing to switch;
 *  - rule 2 switches independent transfers to collective only when every
 *    rank makes the same number of data calls (a collective H5Dwrite that
 *    some rank never makes hangs); a collective or mixed application keeps
 *    its transfers (Flash-X, Table 4: no transfer-mode change);
 *  - rules 4 and 5 take 1M and 8M inside the paper's 1-16MB (the values of
 *    Tables 3 and 4) and 16M at the bound of ">= 16MB";
 *  - rule 6's "when performing collective buffering" is judged after rules
 *    1-2 (IOR, Table 3: switched to independent, so no rule 6);
 *  - rule 10: progressive layouts exist since Lustre 2.10 (the paper says
 *    "> 2.10"); without them (or not knowing), the stripe count a file of
 *    the expected size gets from the same progressive layout: 1 up to 256M,
 *    4 up to 4G, all OSTs beyond (section 3.3.3's thresholds). */
static const char builtin_json[] =
    "{\n"
    "  \"version\": 1,\n"
    "  \"name\": \"smartio\",\n"
    "  \"description\": \"SmartIO's optimization rules (Bin Ather et al., SC Workshops '25, Table 2), with exact binary units: 1M is 1048576 bytes\",\n"
    "  \"rules\": [\n"
    "    {\"id\": 1, \"optimization\": \"HDF5 data transfer mode\",\n"
    "     \"title\": \"Use independent I/O for sequential reads/writes to a shared file\",\n"
    "     \"source\": \"[10, 17], SmartIO Table 2\", \"evaluated\": false,\n"
    "     \"cases\": [\n"
    "       {\"when\": {\"files\": \"shared\", \"sequential\": true, \"transfer\": [\"collective\", \"mixed\"]},\n"
    "        \"set\": {\"hdf5.transfer_mode\": \"independent\"}}\n"
    "     ]},\n"
    "    {\"id\": 2, \"optimization\": \"HDF5 data transfer mode\",\n"
    "     \"title\": \"Use collective I/O for random or non-sequential reads/writes to a shared file\",\n"
    "     \"source\": \"[10, 20, 29-31], SmartIO Table 2\", \"evaluated\": false,\n"
    "     \"cases\": [\n"
    "       {\"when\": {\"files\": \"shared\", \"sequential\": false, \"transfer\": [\"collective\", \"mixed\"]},\n"
    "        \"set\": {},\n"
    "        \"note\": \"collective transfers stay collective; independent ones are not forced collective (a collective transfer needs every rank)\"},\n"
    "       {\"when\": {\"files\": \"shared\", \"sequential\": false, \"transfer\": \"independent\", \"same_calls\": true},\n"
    "        \"set\": {\"hdf5.transfer_mode\": \"collective\"}},\n"
    "       {\"when\": {\"files\": \"shared\", \"sequential\": false, \"transfer\": \"independent\"},\n"
    "        \"set\": {},\n"
    "        \"note\": \"not switched: the ranks are not known to make the same number of data calls, and a collective transfer needs every rank\"}\n"
    "     ]},\n"
    "    {\"id\": 3, \"optimization\": \"HDF5 data transfer mode\",\n"
    "     \"title\": \"For file-per-process configurations, the data transfer mode should be left unchanged\",\n"
    "     \"source\": \"SmartIO Table 2 (evaluated in section 3.3.1)\", \"evaluated\": true,\n"
    "     \"cases\": [\n"
    "       {\"when\": {\"files\": \"per_process\"}, \"set\": {}}\n"
    "     ]},\n"
    "    {\"id\": 4, \"optimization\": \"HDF5 alignment\",\n"
    "     \"title\": \"Set alignment between 1-16MB if transfer size < 16MB, otherwise set it >= 16MB\",\n"
    "     \"source\": \"[39], SmartIO Table 2\", \"evaluated\": false,\n"
    "     \"cases\": [\n"
    "       {\"when\": {\"transfer_size\": {\"below\": \"16M\"}}, \"set\": {\"hdf5.alignment\": [0, \"1M\"]}},\n"
    "       {\"when\": {\"transfer_size\": {\"at_least\": \"16M\"}}, \"set\": {\"hdf5.alignment\": [0, \"16M\"]}}\n"
    "     ]},\n"
    "    {\"id\": 5, \"optimization\": \"HDF5 metadata cache\",\n"
    "     \"title\": \"Set metadata cache size between 1-16MB if transfer size < 16MB, otherwise set it >= 16MB\",\n"
    "     \"source\": \"[31], SmartIO Table 2\", \"evaluated\": false,\n"
    "     \"cases\": [\n"
    "       {\"when\": {\"transfer_size\": {\"below\": \"16M\"}}, \"set\": {\"hdf5.mdc_initial_size\": \"8M\"}},\n"
    "       {\"when\": {\"transfer_size\": {\"at_least\": \"16M\"}}, \"set\": {\"hdf5.mdc_initial_size\": \"16M\"}}\n"
    "     ]},\n"
    "    {\"id\": 6, \"optimization\": \"ROMIO collective buffering\",\n"
    "     \"title\": \"Use cb_config_list to increase aggregators per node when performing collective buffering\",\n"
    "     \"source\": \"SmartIO Table 2 (evaluated in section 3.3.2: 8 aggregators per node)\", \"evaluated\": true,\n"
    "     \"cases\": [\n"
    "       {\"when\": {\"collective_buffering\": true}, \"set\": {\"mpiio.cb_config_list\": \"*:8\"}}\n"
    "     ]},\n"
    "    {\"id\": 7, \"optimization\": \"ROMIO collective buffering\",\n"
    "     \"title\": \"Disable romio_cb_write for sequential accesses to a shared file, otherwise keep default\",\n"
    "     \"source\": \"[17], SmartIO Table 2 (evaluated in section 3.3.2)\", \"evaluated\": true,\n"
    "     \"cases\": [\n"
    "       {\"when\": {\"files\": \"shared\", \"sequential\": true}, \"set\": {\"mpiio.romio_cb_write\": \"disable\"}}\n"
    "     ]},\n"
    "    {\"id\": 8, \"optimization\": \"ROMIO data sieving\",\n"
    "     \"title\": \"Keep default values for the data sieving parameters\",\n"
    "     \"source\": \"[29], SmartIO Table 2 (evaluated in section 3.3.2)\", \"evaluated\": true,\n"
    "     \"cases\": [\n"
    "       {\"when\": {}, \"set\": {}}\n"
    "     ]},\n"
    "    {\"id\": 9, \"optimization\": \"Lustre stripe count\",\n"
    "     \"title\": \"For file-per-process configurations, set stripe count to 1\",\n"
    "     \"source\": \"[1, 16, 21, 23, 33], SmartIO Table 2\", \"evaluated\": false,\n"
    "     \"cases\": [\n"
    "       {\"when\": {\"files\": \"per_process\", \"file_system\": \"lustre\"}, \"set\": {\"lustre.stripe_count\": 1}}\n"
    "     ]},\n"
    "    {\"id\": 10, \"optimization\": \"Lustre stripe count\",\n"
    "     \"title\": \"For a shared file, set a progressive stripe layout if Lustre version > 2.10; otherwise, set stripe count according to file size\",\n"
    "     \"source\": \"[1, 16, 21, 23, 25, 26, 33], SmartIO Table 2 (evaluated in section 3.3.3)\", \"evaluated\": true,\n"
    "     \"cases\": [\n"
    "       {\"when\": {\"files\": \"shared\", \"file_system\": \"lustre\", \"pfl\": true},\n"
    "        \"set\": {\"lustre.layout\": \"-E 256M -c 1 -E 4G -c 4 -E -1 -c -1\"}},\n"
    "       {\"when\": {\"files\": \"shared\", \"file_system\": \"lustre\", \"file_size\": {\"at_most\": \"256M\"}},\n"
    "        \"set\": {\"lustre.stripe_count\": 1},\n"
    "        \"note\": \"no progressive layouts: the stripe count the progressive layout gives a file of this size (iotuner's choice)\"},\n"
    "       {\"when\": {\"files\": \"shared\", \"file_system\": \"lustre\", \"file_size\": {\"above\": \"256M\", \"at_most\": \"4G\"}},\n"
    "        \"set\": {\"lustre.stripe_count\": 4},\n"
    "        \"note\": \"no progressive layouts: the stripe count the progressive layout gives a file of this size (iotuner's choice)\"},\n"
    "       {\"when\": {\"files\": \"shared\", \"file_system\": \"lustre\", \"file_size\": {\"above\": \"4G\"}},\n"
    "        \"set\": {\"lustre.stripe_count\": -1},\n"
    "        \"note\": \"no progressive layouts: the stripe count the progressive layout gives a file of this size (iotuner's choice)\"}\n"
    "     ]}\n"
    "  ]\n"
    "}\n";

/* ---- the parsed table ---- */

typedef enum {
    C_FILES, C_SEQUENTIAL, C_TRANSFER, C_TRANSFER_SIZE, C_FILE_SIZE, C_FILE_SYSTEM, C_PFL, C_SAME_CALLS, C_CB,
    C_DECIDED, C_COUNT
} cond_kind;

static const char *cond_names[C_COUNT] = {"files", "sequential", "transfer", "transfer_size", "file_size",
                                          "file_system", "pfl", "same_calls", "collective_buffering", "decided"};
#define COND_LIST "files, sequential, transfer, transfer_size, file_size, file_system, pfl, same_calls, " \
                  "collective_buffering, decided"

enum { OP_BELOW, OP_AT_LEAST, OP_AT_MOST, OP_ABOVE, OP_COUNT };
static const char *op_names[OP_COUNT] = {"below", "at_least", "at_most", "above"};
static const char *op_words[OP_COUNT] = {"below", "at least", "at most", "above"};

#define MAX_FS_NAMES 4

typedef struct {
    char name[64];                  /* "layer.knob" */
    int knob;                       /* catalogue index */
    char value[IOT_RULE_VALUE_MAX]; /* canonical text */
} set_item;

typedef struct {
    cond_kind kind;
    int boolean;                    /* SEQUENTIAL, PFL, SAME_CALLS, CB */
    unsigned mask;                  /* FILES: bit per iot_files; TRANSFER: bit per iot_xfer */
    int nops, op[2];                /* TRANSFER_SIZE, FILE_SIZE: every bound holds */
    int64_t bound[2];
    int nfs;                        /* FILE_SYSTEM */
    char fs[MAX_FS_NAMES][16];
    set_item decided;               /* DECIDED: value[0] == 0 with is_null: nothing set */
    int is_null;
} cond;

typedef struct {
    cond *conds;
    int nconds;
    set_item *set;
    int nset;
    char *note;
} rule_case;

typedef struct {
    int id;
    char *optimization, *title, *source;
    int evaluated; /* -1 not given */
    rule_case *cases;
    int ncases;
} rule;

struct iot_rules {
    int builtin;
    char *name, *description;
    rule *rules;
    int nrules;
};

static void free_rule(rule *r)
{
    for (int c = 0; c < r->ncases; c++) {
        free(r->cases[c].conds);
        free(r->cases[c].set);
        free(r->cases[c].note);
    }
    free(r->cases);
    free(r->optimization);
    free(r->title);
    free(r->source);
}

static void rules_free_now(iot_rules *r)
{
    if (!r)
        return;
    for (int i = 0; i < r->nrules; i++)
        free_rule(&r->rules[i]);
    free(r->rules);
    free(r->name);
    free(r->description);
    free(r);
}

void iot_rules_free(iot_rules *r)
{
    if (r && !r->builtin)
        rules_free_now(r);
}

size_t iot_rules_count(const iot_rules *r)
{
    return r ? (size_t)r->nrules : 0;
}

/* ---- parsing ---- */

typedef struct {
    char *err;
    size_t errlen;
    char where[64]; /* "rule 4, case 1" */
} pctx;

static int pfail(pctx *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int pfail(pctx *p, const char *fmt, ...)
{
    char what[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (p->err && p->errlen)
        snprintf(p->err, p->errlen, "%s%s%s", p->where, p->where[0] ? ": " : "", what);
    return -1;
}

/* Checks one "layer.knob": value with the settings validator and keeps the
 * canonical text. value NULL checks the name only. */
static int parse_setting(pctx *p, const char *what, const char *name, const iot_json *value, set_item *out)
{
    char layer[16], knob[48], hint[128], err[512];
    const char *dot = strchr(name, '.');
    if (!dot || dot == name || !dot[1] || (size_t)(dot - name) >= sizeof layer || strlen(dot + 1) >= sizeof knob)
        return pfail(p, "%s '%s': write a knob as \"layer.knob\", e.g. \"hdf5.alignment\"", what, name);
    snprintf(layer, sizeof layer, "%.*s", (int)(dot - name), name);
    snprintf(knob, sizeof knob, "%s", dot + 1);
    int l = iot_layer_from_name(layer);
    if (l < 0)
        return pfail(p, "%s '%s': unknown layer '%s' (hdf5, mpiio, lustre)", what, name, layer);
    int k = iot_knob_find((iot_layer)l, knob);
    if (k < 0) { /* rules set catalogued knobs only: a typo must not become a pass-through MPI-IO hint */
        if (iot_knob_suggest(knob, hint, sizeof hint))
            return pfail(p, "%s '%s': unknown knob (did you mean %s?)", what, name, hint);
        return pfail(p, "%s '%s': unknown knob; 'iotuner knobs' lists them", what, name);
    }
    snprintf(out->name, sizeof out->name, "%s.%s", layer, knob);
    out->knob = k;
    out->value[0] = 0;
    if (!value)
        return 0;
    iot_buf b;
    iot_buf_init(&b);
    iot_jw_begin_object(&b, NULL);
    iot_jw_int(&b, "version", IOT_SETTINGS_VERSION);
    iot_jw_begin_object(&b, layer);
    iot_jw_value(&b, knob, value);
    iot_jw_end_object(&b);
    iot_jw_end_object(&b);
    char *doc = iot_buf_take(&b);
    if (!doc)
        return pfail(p, "out of memory");
    iot_settings *s = iot_settings_parse(doc, strlen(doc), err, sizeof err);
    free(doc);
    if (!s) {
        /* drop the validator's "line 1: document.layer.knob: " prefix: the name is ours */
        char prefix[128];
        snprintf(prefix, sizeof prefix, "document.%s.%s: ", layer, knob);
        const char *msg = strstr(err, prefix);
        return pfail(p, "%s %s: %s", what, name, msg ? msg + strlen(prefix) : err);
    }
    int rc = 0;
    const char *text = s->ngroups == 1 && s->groups[0].count == 1 ? s->groups[0].items[0].text : NULL;
    if (!text)
        rc = pfail(p, "%s %s: the settings validator did not keep it", what, name);
    else if (strlen(text) >= sizeof out->value)
        rc = pfail(p, "%s %s: value too long (at most %d characters)", what, name, IOT_RULE_VALUE_MAX - 1);
    else
        snprintf(out->value, sizeof out->value, "%s", text);
    iot_settings_free(s);
    return rc;
}

/* A string or a list of strings, each one of names[] (n of them); sets bits. */
static int parse_mask(pctx *p, const char *cname, const iot_json *v, const char *const *names, int n, unsigned *mask)
{
    const iot_json *const *items = v->type == IOT_JSON_ARRAY ? (const iot_json *const *)v->items : &v;
    size_t count = v->type == IOT_JSON_ARRAY ? v->count : 1;
    char choices[128] = "";
    for (int i = 0; i < n; i++)
        snprintf(choices + strlen(choices), sizeof choices - strlen(choices), "%s%s", i ? ", " : "", names[i]);
    if (count == 0)
        return pfail(p, "condition '%s': empty list", cname);
    *mask = 0;
    for (size_t i = 0; i < count; i++) {
        int hit = -1;
        if (items[i]->type == IOT_JSON_STRING)
            for (int j = 0; j < n; j++)
                if (!strcmp(items[i]->string, names[j]))
                    hit = j;
        if (hit < 0)
            return pfail(p, "condition '%s': expected %s (or a list of them)", cname, choices);
        *mask |= 1u << hit;
    }
    return 0;
}

static int parse_range(pctx *p, const char *cname, const iot_json *v, cond *c)
{
    char err[256];
    if (v->type != IOT_JSON_OBJECT || v->count == 0)
        return pfail(p, "condition '%s': expected an object like {\"below\": \"16M\"} (below, at_least, at_most, above)",
                     cname);
    int lower = 0, upper = 0;
    int64_t lo = 0, hi = INT64_MAX;
    for (size_t i = 0; i < v->count; i++) {
        int op = -1;
        for (int j = 0; j < OP_COUNT; j++)
            if (!strcmp(v->keys[i], op_names[j]))
                op = j;
        if (op < 0)
            return pfail(p, "condition '%s': unknown bound '%s' (below, at_least, at_most, above)", cname, v->keys[i]);
        int64_t x;
        const iot_json *b = v->items[i];
        if (b->type == IOT_JSON_NUMBER && b->is_integer && b->integer >= 0)
            x = b->integer;
        else if (b->type == IOT_JSON_STRING) {
            if (iot_parse_size(b->string, &x, err, sizeof err) < 0)
                return pfail(p, "condition '%s.%s': %s", cname, v->keys[i], err);
        } else
            return pfail(p, "condition '%s.%s': expected a size (bytes, or a string like \"16M\")", cname, v->keys[i]);
        int is_upper = op == OP_BELOW || op == OP_AT_MOST;
        if (is_upper ? upper++ : lower++)
            return pfail(p, "condition '%s': give at most one lower bound (at_least, above) and one upper bound "
                         "(below, at_most)", cname);
        if (op == OP_BELOW && x == 0)
            return pfail(p, "condition '%s': below 0 never holds", cname);
        if (op == OP_ABOVE && x == INT64_MAX)
            return pfail(p, "condition '%s': above %lld never holds", cname, (long long)x);
        switch (op) {
        case OP_BELOW: hi = x - 1; break;
        case OP_AT_MOST: hi = x; break;
        case OP_AT_LEAST: lo = x; break;
        case OP_ABOVE: lo = x + 1; break;
        }
        c->op[c->nops] = op;
        c->bound[c->nops++] = x;
    }
    if (lo > hi)
        return pfail(p, "condition '%s': the bounds exclude every size", cname);
    return 0;
}

static int parse_bool(pctx *p, const char *cname, const iot_json *v, int *out)
{
    if (v->type != IOT_JSON_BOOL)
        return pfail(p, "condition '%s': expected true or false", cname);
    *out = v->boolean;
    return 0;
}

static int parse_when(pctx *p, const iot_json *when, rule_case *rc)
{
    if (!when || when->type != IOT_JSON_OBJECT)
        return pfail(p, "'when' must be an object of conditions ({} always holds)");
    size_t n = 0;
    for (size_t i = 0; i < when->count; i++)
        n += !strcmp(when->keys[i], "decided") && when->items[i]->type == IOT_JSON_OBJECT ? when->items[i]->count : 1;
    rc->conds = calloc(n ? n : 1, sizeof *rc->conds);
    if (!rc->conds)
        return pfail(p, "out of memory");
    for (size_t i = 0; i < when->count; i++) {
        const char *k = when->keys[i];
        const iot_json *v = when->items[i];
        int kind = -1;
        for (int j = 0; j < C_COUNT; j++)
            if (!strcmp(k, cond_names[j]))
                kind = j;
        if (kind < 0)
            return pfail(p, "unknown condition '%s' (conditions: " COND_LIST ")", k);
        if (kind == C_DECIDED) {
            if (v->type != IOT_JSON_OBJECT || v->count == 0)
                return pfail(p, "condition 'decided': expected an object like {\"hdf5.transfer_mode\": \"independent\"}");
            for (size_t j = 0; j < v->count; j++) {
                cond *c = &rc->conds[rc->nconds++];
                c->kind = C_DECIDED;
                c->is_null = v->items[j]->type == IOT_JSON_NULL;
                if (parse_setting(p, "condition 'decided':", v->keys[j], c->is_null ? NULL : v->items[j],
                                  &c->decided) < 0)
                    return -1;
            }
            continue;
        }
        cond *c = &rc->conds[rc->nconds++];
        c->kind = (cond_kind)kind;
        int rc2 = 0;
        switch (c->kind) {
        case C_FILES: {
            static const char *const names[] = {"unknown", "shared", "per_process"};
            rc2 = parse_mask(p, k, v, names + 1, 2, &c->mask);
            c->mask <<= 1; /* bit per iot_files, "unknown" never holds */
            break;
        }
        case C_TRANSFER: {
            static const char *const names[] = {"none", "independent", "collective", "mixed"};
            rc2 = parse_mask(p, k, v, names, 4, &c->mask);
            break;
        }
        case C_TRANSFER_SIZE:
        case C_FILE_SIZE: rc2 = parse_range(p, k, v, c); break;
        case C_FILE_SYSTEM: {
            const iot_json *const *items = v->type == IOT_JSON_ARRAY ? (const iot_json *const *)v->items : &v;
            size_t count = v->type == IOT_JSON_ARRAY ? v->count : 1;
            if (count == 0 || count > MAX_FS_NAMES)
                return pfail(p, "condition 'file_system': give 1 to %d names", MAX_FS_NAMES);
            for (size_t j = 0; j < count; j++) {
                if (items[j]->type != IOT_JSON_STRING || !items[j]->string[0] ||
                    strlen(items[j]->string) >= sizeof c->fs[0])
                    return pfail(p, "condition 'file_system': expected a file-system name like \"lustre\" (or a "
                                 "list of them)");
                snprintf(c->fs[c->nfs++], sizeof c->fs[0], "%s", items[j]->string);
            }
            break;
        }
        case C_SEQUENTIAL:
        case C_PFL:
        case C_SAME_CALLS:
        case C_CB: rc2 = parse_bool(p, k, v, &c->boolean); break;
        default: break;
        }
        if (rc2 < 0)
            return -1;
    }
    return 0;
}

/* Which Lustre part a "layer.knob" name is (layout and striping replace each other), from the catalogue. */
static iot_lustre_part lustre_part_of(const char *name)
{
    if (strncmp(name, "lustre.", 7) != 0)
        return IOT_LUSTRE_NONE;
    int k = iot_knob_find(IOT_LAYER_LUSTRE, name + 7);
    return k >= 0 ? iot_catalogue[k].lustre_part : IOT_LUSTRE_NONE;
}

static int parse_case(pctx *p, const iot_json *v, rule_case *rc)
{
    if (v->type != IOT_JSON_OBJECT)
        return pfail(p, "expected an object with \"when\" and \"set\"");
    for (size_t i = 0; i < v->count; i++)
        if (strcmp(v->keys[i], "when") && strcmp(v->keys[i], "set") && strcmp(v->keys[i], "note"))
            return pfail(p, "unknown key '%s' (a case has when, set, note)", v->keys[i]);
    const iot_json *when = iot_json_get(v, "when"), *set = iot_json_get(v, "set"), *note = iot_json_get(v, "note");
    if (!when)
        return pfail(p, "missing \"when\" (write {} for a case that always holds)");
    if (!set)
        return pfail(p, "missing \"set\" (write {} to keep the defaults)");
    if (parse_when(p, when, rc) < 0)
        return -1;
    if (set->type != IOT_JSON_OBJECT)
        return pfail(p, "'set' must be an object of \"layer.knob\": value");
    if (note) {
        if (note->type != IOT_JSON_STRING)
            return pfail(p, "'note' must be a string");
        if (!(rc->note = strdup(note->string)))
            return pfail(p, "out of memory");
    }
    rc->set = calloc(set->count ? set->count : 1, sizeof *rc->set);
    if (!rc->set)
        return pfail(p, "out of memory");
    int layout = 0, striping = 0;
    for (size_t i = 0; i < set->count; i++) {
        set_item *it = &rc->set[rc->nset];
        if (parse_setting(p, "set", set->keys[i], set->items[i], it) < 0)
            return -1;
        for (int j = 0; j < rc->nset; j++)
            if (!strcmp(rc->set[j].name, it->name))
                return pfail(p, "set %s written twice", it->name);
        layout |= lustre_part_of(it->name) == IOT_LUSTRE_LAYOUT;
        striping |= lustre_part_of(it->name) == IOT_LUSTRE_STRIPING;
        rc->nset++;
    }
    if (layout && striping)
        return pfail(p, "lustre.layout replaces stripe_count and stripe_size: set one or the other");
    return 0;
}

static int parse_rule(pctx *p, const iot_json *v, size_t index, rule *r)
{
    snprintf(p->where, sizeof p->where, "rules[%zu]", index);
    if (v->type != IOT_JSON_OBJECT)
        return pfail(p, "expected an object with id, title, cases");
    const iot_json *id = iot_json_get(v, "id");
    if (!id || id->type != IOT_JSON_NUMBER || !id->is_integer || id->integer < 1 || id->integer > 1000000)
        return pfail(p, "\"id\" must be a whole number from 1");
    r->id = (int)id->integer;
    r->evaluated = -1;
    snprintf(p->where, sizeof p->where, "rule %d", r->id);
    for (size_t i = 0; i < v->count; i++) {
        const char *k = v->keys[i];
        const iot_json *x = v->items[i];
        char **text = !strcmp(k, "title")          ? &r->title
                      : !strcmp(k, "source")       ? &r->source
                      : !strcmp(k, "optimization") ? &r->optimization
                                                   : NULL;
        if (text) {
            if (x->type != IOT_JSON_STRING)
                return pfail(p, "'%s' must be a string", k);
            free(*text);
            if (!(*text = strdup(x->string)))
                return pfail(p, "out of memory");
        } else if (!strcmp(k, "evaluated")) {
            if (x->type != IOT_JSON_BOOL)
                return pfail(p, "'evaluated' must be true or false");
            r->evaluated = x->boolean;
        } else if (strcmp(k, "id") && strcmp(k, "cases")) {
            return pfail(p, "unknown key '%s' (a rule has id, title, optimization, source, evaluated, cases)", k);
        }
    }
    if (!r->title || !r->title[0])
        return pfail(p, "missing \"title\"");
    const iot_json *cases = iot_json_get(v, "cases");
    if (!cases || cases->type != IOT_JSON_ARRAY || cases->count == 0)
        return pfail(p, "\"cases\" must be a non-empty list of {\"when\": {...}, \"set\": {...}}");
    r->cases = calloc(cases->count, sizeof *r->cases);
    if (!r->cases)
        return pfail(p, "out of memory");
    for (size_t c = 0; c < cases->count; c++) {
        snprintf(p->where, sizeof p->where, "rule %d, case %zu", r->id, c);
        r->ncases++;
        if (parse_case(p, cases->items[c], &r->cases[c]) < 0)
            return -1;
    }
    return 0;
}

static int by_id(const void *a, const void *b)
{
    return ((const rule *)a)->id - ((const rule *)b)->id;
}

iot_rules *iot_rules_parse(const char *json, char *err, size_t errlen)
{
    pctx p = {err, errlen, "rules table"};
    char jerr[256];
    if (!json) {
        pfail(&p, "no text");
        return NULL;
    }
    iot_json *doc = iot_json_parse(json, strlen(json), jerr, sizeof jerr);
    if (!doc) {
        pfail(&p, "not valid JSON: %s", jerr);
        return NULL;
    }
    iot_rules *r = calloc(1, sizeof *r);
    int rc = -1;
    if (!r) {
        pfail(&p, "out of memory");
        goto done;
    }
    if (doc->type != IOT_JSON_OBJECT) {
        pfail(&p, "expected an object with \"version\" and \"rules\"");
        goto done;
    }
    for (size_t i = 0; i < doc->count; i++) {
        const char *k = doc->keys[i];
        const iot_json *x = doc->items[i];
        if (!strcmp(k, "name") || !strcmp(k, "description")) {
            if (x->type != IOT_JSON_STRING) {
                pfail(&p, "'%s' must be a string", k);
                goto done;
            }
            char **text = k[0] == 'n' ? &r->name : &r->description;
            free(*text);
            *text = strdup(x->string);
        } else if (strcmp(k, "version") && strcmp(k, "rules")) {
            pfail(&p, "unknown key '%s' (a rules table has version, name, description, rules)", k);
            goto done;
        }
    }
    const iot_json *ver = iot_json_get(doc, "version");
    if (!ver || ver->type != IOT_JSON_NUMBER || !ver->is_integer || ver->integer != 1) {
        pfail(&p, "\"version\" must be 1");
        goto done;
    }
    const iot_json *rules = iot_json_get(doc, "rules");
    if (!rules || rules->type != IOT_JSON_ARRAY || rules->count == 0) {
        pfail(&p, "\"rules\" must be a non-empty list");
        goto done;
    }
    if (rules->count > IOT_RULES_MAX) {
        pfail(&p, "%zu rules: at most %d", rules->count, IOT_RULES_MAX);
        goto done;
    }
    r->rules = calloc(rules->count, sizeof *r->rules);
    if (!r->rules) {
        pfail(&p, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < rules->count; i++) {
        r->nrules++;
        if (parse_rule(&p, rules->items[i], i, &r->rules[i]) < 0)
            goto done;
        for (size_t j = 0; j < i; j++)
            if (r->rules[j].id == r->rules[i].id) {
                snprintf(p.where, sizeof p.where, "rule %d", r->rules[i].id);
                pfail(&p, "id used twice (rules[%zu] and rules[%zu])", j, i);
                goto done;
            }
    }
    qsort(r->rules, (size_t)r->nrules, sizeof *r->rules, by_id); /* evaluated in id order */
    rc = 0;
done:
    iot_json_free(doc);
    if (rc < 0) {
        rules_free_now(r);
        return NULL;
    }
    return r;
}

static _Atomic(iot_rules *) builtin_rules;

iot_rules *iot_rules_builtin(void)
{
    iot_rules *r = atomic_load(&builtin_rules);
    if (r)
        return r;
    char err[512];
    iot_rules *mine = iot_rules_parse(builtin_json, err, sizeof err);
    if (!mine)
        return NULL; /* out of memory: the table itself is checked by test_rules */
    mine->builtin = 1;
    iot_rules *expected = NULL;
    if (!atomic_compare_exchange_strong(&builtin_rules, &expected, mine)) { /* another thread won */
        rules_free_now(mine);
        return expected;
    }
    return mine;
}

const char *iot_rules_builtin_json(void)
{
    return builtin_json;
}

/* ---- evaluation ---- */

const char *iot_rule_result_get(const iot_rule_result *res, const char *name)
{
    for (int i = 0; res && i < res->nsettings; i++)
        if (!strcmp(res->settings[i].name, name))
            return res->settings[i].value;
    return NULL;
}

static int rule_of_setting(const iot_rule_result *res, const char *name)
{
    for (int i = 0; i < res->nsettings; i++)
        if (!strcmp(res->settings[i].name, name))
            return res->settings[i].rule;
    return 0;
}

/* Will collective buffering happen, given the decisions so far? A direction
 * does it when its transfers are collective or mixed (as hdf5.transfer_mode
 * now makes them) and its romio_cb_* hint is not "disable". */
static int collective_buffering(const iot_insights *in, const iot_rule_result *res)
{
    iot_xfer w = in->write_xfer, r = in->read_xfer;
    const char *mode = iot_rule_result_get(res, "hdf5.transfer_mode");
    if (mode) {
        iot_xfer m = !strcmp(mode, "collective") ? IOT_XFER_COLLECTIVE : IOT_XFER_INDEPENDENT;
        if (w != IOT_XFER_NONE)
            w = m;
        if (r != IOT_XFER_NONE)
            r = m;
    }
    const char *cbw = iot_rule_result_get(res, "mpiio.romio_cb_write");
    const char *cbr = iot_rule_result_get(res, "mpiio.romio_cb_read");
    int wcb = (w == IOT_XFER_COLLECTIVE || w == IOT_XFER_MIXED) && !(cbw && !strcmp(cbw, "disable"));
    int rcb = (r == IOT_XFER_COLLECTIVE || r == IOT_XFER_MIXED) && !(cbr && !strcmp(cbr, "disable"));
    return wcb || rcb;
}

static int in_range(const cond *c, int64_t v)
{
    if (v < 0)
        return 0; /* unknown */
    for (int i = 0; i < c->nops; i++) {
        int64_t b = c->bound[i];
        int ok = c->op[i] == OP_BELOW     ? v < b
                 : c->op[i] == OP_AT_MOST ? v <= b
                 : c->op[i] == OP_AT_LEAST ? v >= b
                                           : v > b;
        if (!ok)
            return 0;
    }
    return 1;
}

static int holds(const cond *c, const iot_insights *in, const iot_rule_result *res)
{
    switch (c->kind) {
    case C_FILES: return in->files != IOT_FILES_UNKNOWN && (c->mask >> in->files & 1u);
    case C_SEQUENTIAL: {
        iot_locality l = iot_insights_locality(in);
        return l != IOT_LOC_UNKNOWN && (l == IOT_LOC_SEQUENTIAL) == c->boolean;
    }
    case C_TRANSFER: return c->mask >> iot_insights_xfer(in) & 1u;
    case C_TRANSFER_SIZE: return in_range(c, in->transfer_size);
    case C_FILE_SIZE: return in_range(c, in->file_size);
    case C_FILE_SYSTEM:
        for (int i = 0; i < c->nfs; i++)
            if (in->file_system[0] && !strcasecmp(in->file_system, c->fs[i]))
                return 1;
        return 0;
    case C_PFL: return in->lustre_pfl >= 0 && in->lustre_pfl == c->boolean;
    case C_SAME_CALLS: return in->same_calls >= 0 && in->same_calls == c->boolean;
    case C_CB: return collective_buffering(in, res) == c->boolean;
    case C_DECIDED: {
        const char *v = iot_rule_result_get(res, c->decided.name);
        return c->is_null ? v == NULL : v && !strcmp(v, c->decided.value);
    }
    default: return 0;
    }
}

/* Appends to a fixed buffer, truncating. */
static void add(char *out, size_t outlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void add(char *out, size_t outlen, const char *fmt, ...)
{
    size_t at = strlen(out);
    if (at + 1 >= outlen)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out + at, outlen - at, fmt, ap);
    va_end(ap);
}

static void range_phrase(const cond *c, int64_t v, const char *what, char *out, size_t outlen)
{
    char size[32], bound[32];
    iot_format_size(v, size, sizeof size);
    add(out, outlen, "%s is %s (", what, size);
    for (int i = 0; i < c->nops; i++) {
        iot_format_size(c->bound[i], bound, sizeof bound);
        add(out, outlen, "%s%s %s", i ? " and " : "", op_words[c->op[i]], bound);
    }
    add(out, outlen, ")");
}

/* One phrase per condition, from the insights' values. */
static void phrase(const cond *c, const iot_insights *in, const iot_rule_result *res, char *out, size_t outlen)
{
    out[0] = 0;
    switch (c->kind) {
    case C_FILES:
        add(out, outlen, "%s", in->files == IOT_FILES_SHARED ? "all processes share one file"
                                                              : "each process has its own file");
        break;
    case C_SEQUENTIAL:
        add(out, outlen, "accesses are %s", iot_locality_name(iot_insights_locality(in)));
        break;
    case C_TRANSFER: {
        iot_xfer x = iot_insights_xfer(in);
        add(out, outlen, "%s", x == IOT_XFER_MIXED ? "transfers are both collective and independent"
                               : x == IOT_XFER_NONE ? "there are no transfers"
                               : x == IOT_XFER_COLLECTIVE ? "transfers are collective"
                                                          : "transfers are independent");
        break;
    }
    case C_TRANSFER_SIZE: range_phrase(c, in->transfer_size, "the typical transfer", out, outlen); break;
    case C_FILE_SIZE: range_phrase(c, in->file_size, "the expected file size", out, outlen); break;
    case C_FILE_SYSTEM: add(out, outlen, "the file system is %s", in->file_system); break;
    case C_PFL:
        add(out, outlen, "progressive file layouts are %savailable", in->lustre_pfl ? "" : "not ");
        break;
    case C_SAME_CALLS:
        add(out, outlen, "%s", in->same_calls ? "every rank makes the same number of data calls"
                                              : "the ranks make different numbers of data calls");
        break;
    case C_CB:
        add(out, outlen, "%s", c->boolean ? "collective buffering will be performed"
                                          : "no collective buffering will be performed");
        break;
    case C_DECIDED:
        if (c->is_null)
            add(out, outlen, "no earlier rule set %s", c->decided.name);
        else
            add(out, outlen, "rule %d set %s=%s", rule_of_setting(res, c->decided.name), c->decided.name,
                c->decided.value);
        break;
    default: break;
    }
}

static void make_reason(const rule_case *rc, const iot_insights *in, const iot_rule_result *res, char *out,
                        size_t outlen)
{
    char part[200];
    out[0] = 0;
    for (int i = 0; i < rc->nconds; i++) {
        phrase(&rc->conds[i], in, res, part, sizeof part);
        add(out, outlen, "%s%s", i ? ", " : "", part);
    }
    if (rc->nconds == 0)
        add(out, outlen, "always");
    if (rc->note)
        add(out, outlen, "; %s", rc->note);
    add(out, outlen, ".");
    out[0] = (char)toupper((unsigned char)out[0]);
}

static void drop_setting(iot_rule_result *res, int i)
{
    memmove(&res->settings[i], &res->settings[i + 1], (size_t)(res->nsettings - i - 1) * sizeof res->settings[0]);
    res->nsettings--;
}

/* A later decision replaces an earlier one of the same knob, and a Lustre
 * layout and plain striping replace each other (as in settings documents). */
static int decide(iot_rule_result *res, const set_item *it, int rule_id)
{
    iot_lustre_part part = lustre_part_of(it->name);
    for (int i = res->nsettings - 1; i >= 0; i--) {
        iot_lustre_part other = lustre_part_of(res->settings[i].name);
        if (part && other && part != other)
            drop_setting(res, i);
    }
    for (int i = 0; i < res->nsettings; i++)
        if (!strcmp(res->settings[i].name, it->name)) {
            snprintf(res->settings[i].value, sizeof res->settings[i].value, "%s", it->value);
            res->settings[i].rule = rule_id;
            return 0;
        }
    if (res->nsettings == IOT_RULE_MAX_SETTINGS)
        return -1;
    iot_rule_setting *s = &res->settings[res->nsettings++];
    snprintf(s->name, sizeof s->name, "%s", it->name);
    snprintf(s->value, sizeof s->value, "%s", it->value);
    s->rule = rule_id;
    s->knob = it->knob;
    return 0;
}

/* Whether a setting "layer.knob" can act on a file of this library ("" unknown: any). Lustre's act on any file,
 * MPI-IO's (and OMPIO's) on every file that goes through MPI-IO, a library's on its own files only. */
static int layer_acts(const char *name, const char *library)
{
    if (!library[0] || !strncmp(name, "lustre.", 7) || !strncmp(name, "mpiio.", 6) || !strncmp(name, "ompio.", 6))
        return 1;
    size_t n = strlen(library);
    return !strncmp(name, library, n) && name[n] == '.';
}

static const char *library_title(const char *library)
{
    return !strcmp(library, "hdf5") ? "an HDF5" : !strcmp(library, "pnetcdf") ? "a PnetCDF" : "a plain MPI-IO";
}

int iot_rules_evaluate(const iot_rules *r, const iot_insights *in, iot_rule_result *out)
{
    if (!r || !in || !out)
        return -1;
    memset(out, 0, sizeof *out);
    for (int i = 0; i < r->nrules; i++) {
        const rule *ru = &r->rules[i];
        for (int c = 0; c < ru->ncases; c++) {
            const rule_case *rc = &ru->cases[c];
            int ok = 1;
            for (int k = 0; ok && k < rc->nconds; k++)
                ok = holds(&rc->conds[k], in, out);
            if (!ok)
                continue;
            iot_rule_fired *f = &out->fired[out->nfired++];
            f->rule = ru->id;
            f->case_index = c;
            make_reason(rc, in, out, f->reason, sizeof f->reason);
            int skipped = 0;
            for (int k = 0; k < rc->nset; k++) {
                if (!layer_acts(rc->set[k].name, in->library)) {
                    if (k < 32)
                        f->skipped |= 1u << k;
                    add(f->reason, sizeof f->reason, "%s%s", skipped++ ? ", " : " Not set: ", rc->set[k].name);
                    continue;
                }
                if (decide(out, &rc->set[k], ru->id) < 0)
                    return -1; /* cannot happen: results hold more knobs than the catalogue has */
            }
            if (skipped)
                add(f->reason, sizeof f->reason, " (%s file).", library_title(in->library));
            break;
        }
    }
    return out->nfired;
}

/* ---- output ---- */

/* A canonical value as typed JSON (what iot_settings_parse reads back). */
static void write_typed(iot_buf *b, const char *key, int knob, const char *text)
{
    iot_type t = knob >= 0 && (size_t)knob < iot_catalogue_size ? iot_catalogue[knob].type : IOT_TYPE_STRING;
    switch (t) {
    case IOT_TYPE_SIZE:
    case IOT_TYPE_INT: iot_jw_int(b, key, strtoll(text, NULL, 10)); break;
    case IOT_TYPE_BOOL: iot_jw_bool(b, key, !strcmp(text, "true")); break;
    case IOT_TYPE_FLOAT: iot_jw_double(b, key, strtod(text, NULL)); break;
    case IOT_TYPE_SIZE_PAIR:
    case IOT_TYPE_DIMS: {
        iot_jw_begin_array(b, key);
        const char *p = text;
        while (*p) {
            char *end;
            iot_jw_int(b, NULL, strtoll(p, &end, 10));
            p = *end == ',' ? end + 1 : end + strlen(end);
        }
        iot_jw_end_array(b);
        break;
    }
    default: iot_jw_string(b, key, text);
    }
}

static const rule *find_rule(const iot_rules *r, int id)
{
    for (int i = 0; r && i < r->nrules; i++)
        if (r->rules[i].id == id)
            return &r->rules[i];
    return NULL;
}

static void write_result_members(const iot_rule_result *res, const iot_rules *rules, iot_buf *b)
{
    iot_jw_begin_array(b, "fired");
    for (int i = 0; i < res->nfired; i++) {
        const iot_rule_fired *f = &res->fired[i];
        const rule *ru = find_rule(rules, f->rule);
        iot_jw_begin_object(b, NULL);
        iot_jw_int(b, "rule", f->rule);
        iot_jw_int(b, "case_index", f->case_index);
        if (ru)
            iot_jw_string(b, "title", ru->title);
        iot_jw_string(b, "reason", f->reason);
        if (ru && f->case_index >= 0 && f->case_index < ru->ncases) {
            const rule_case *rc = &ru->cases[f->case_index];
            iot_jw_begin_object(b, "set");
            for (int k = 0; k < rc->nset; k++)
                if (k >= 32 || !(f->skipped & 1u << k))
                    iot_jw_string(b, rc->set[k].name, rc->set[k].value);
            iot_jw_end_object(b);
            if (f->skipped) {
                iot_jw_begin_object(b, "not_set");
                for (int k = 0; k < rc->nset && k < 32; k++)
                    if (f->skipped & 1u << k)
                        iot_jw_string(b, rc->set[k].name, rc->set[k].value);
                iot_jw_end_object(b);
            }
        }
        iot_jw_end_object(b);
    }
    iot_jw_end_array(b);
    iot_jw_begin_object(b, "settings");
    for (int i = 0; i < res->nsettings; i++)
        iot_jw_string(b, res->settings[i].name, res->settings[i].value);
    iot_jw_end_object(b);
}

void iot_rule_result_write_json(const iot_rule_result *res, const iot_rules *rules, iot_buf *b, const char *key)
{
    iot_jw_begin_object(b, key);
    write_result_members(res, rules, b);
    iot_jw_end_object(b);
}

char *iot_rule_result_settings_json(const iot_rule_result *res, const char *file_glob, const char *description)
{
    iot_buf b;
    iot_buf_init(&b);
    iot_jw_begin_object(&b, NULL);
    iot_jw_int(&b, "version", IOT_SETTINGS_VERSION);
    if (description)
        iot_jw_string(&b, "description", description);
    iot_jw_begin_object(&b, "meta");
    iot_jw_string(&b, "made_by", "iotuner SmartIO rules");
    iot_jw_begin_array(&b, "rules_fired");
    for (int i = 0; i < res->nfired; i++)
        iot_jw_int(&b, NULL, res->fired[i].rule);
    iot_jw_end_array(&b);
    iot_jw_end_object(&b);
    iot_jw_begin_array(&b, "groups");
    iot_jw_begin_object(&b, NULL);
    if (file_glob)
        iot_jw_string(&b, "file", file_glob);
    for (int layer = 0; layer < IOT_LAYER_COUNT; layer++) {
        const char *lname = iot_layer_name((iot_layer)layer);
        size_t llen = strlen(lname);
        int opened = 0;
        for (int i = 0; i < res->nsettings; i++) {
            const iot_rule_setting *s = &res->settings[i];
            if (strncmp(s->name, lname, llen) || s->name[llen] != '.')
                continue;
            if (!opened) {
                iot_jw_begin_object(&b, lname);
                opened = 1;
            }
            write_typed(&b, s->name + llen + 1, s->knob, s->value);
        }
        if (opened)
            iot_jw_end_object(&b);
    }
    iot_jw_end_object(&b);
    iot_jw_end_array(&b);
    iot_jw_end_object(&b);
    return iot_buf_take(&b);
}

static void write_cond(iot_buf *b, const cond *conds, int n, int *i)
{
    const cond *c = &conds[*i];
    const char *name = cond_names[c->kind];
    switch (c->kind) {
    case C_FILES:
    case C_TRANSFER: {
        const char *const *names = c->kind == C_FILES ? (const char *const[]){"unknown", "shared", "per_process", ""}
                                                      : (const char *const[]){"none", "independent", "collective",
                                                                              "mixed"};
        int count = 0, last = 0;
        for (int j = 0; j < 4; j++)
            if (c->mask >> j & 1u) {
                count++;
                last = j;
            }
        if (count == 1) {
            iot_jw_string(b, name, names[last]);
        } else {
            iot_jw_begin_array(b, name);
            for (int j = 0; j < 4; j++)
                if (c->mask >> j & 1u)
                    iot_jw_string(b, NULL, names[j]);
            iot_jw_end_array(b);
        }
        break;
    }
    case C_TRANSFER_SIZE:
    case C_FILE_SIZE: {
        char size[32];
        iot_jw_begin_object(b, name);
        for (int j = 0; j < c->nops; j++) {
            iot_format_size(c->bound[j], size, sizeof size);
            iot_jw_string(b, op_names[c->op[j]], size);
        }
        iot_jw_end_object(b);
        break;
    }
    case C_FILE_SYSTEM:
        if (c->nfs == 1) {
            iot_jw_string(b, name, c->fs[0]);
        } else {
            iot_jw_begin_array(b, name);
            for (int j = 0; j < c->nfs; j++)
                iot_jw_string(b, NULL, c->fs[j]);
            iot_jw_end_array(b);
        }
        break;
    case C_DECIDED:
        iot_jw_begin_object(b, name);
        for (; *i < n && conds[*i].kind == C_DECIDED; (*i)++) {
            if (conds[*i].is_null)
                iot_jw_null(b, conds[*i].decided.name);
            else
                write_typed(b, conds[*i].decided.name, conds[*i].decided.knob, conds[*i].decided.value);
        }
        iot_jw_end_object(b);
        (*i)--;
        break;
    default: iot_jw_bool(b, name, c->boolean);
    }
}

char *iot_rules_to_json(const iot_rules *r)
{
    if (!r)
        return NULL;
    iot_buf b;
    iot_buf_init(&b);
    iot_jw_begin_object(&b, NULL);
    iot_jw_int(&b, "version", 1);
    if (r->name)
        iot_jw_string(&b, "name", r->name);
    if (r->description)
        iot_jw_string(&b, "description", r->description);
    iot_jw_begin_array(&b, "rules");
    for (int i = 0; i < r->nrules; i++) {
        const rule *ru = &r->rules[i];
        iot_jw_begin_object(&b, NULL);
        iot_jw_int(&b, "id", ru->id);
        if (ru->optimization)
            iot_jw_string(&b, "optimization", ru->optimization);
        iot_jw_string(&b, "title", ru->title);
        if (ru->source)
            iot_jw_string(&b, "source", ru->source);
        if (ru->evaluated >= 0)
            iot_jw_bool(&b, "evaluated", ru->evaluated);
        iot_jw_begin_array(&b, "cases");
        for (int c = 0; c < ru->ncases; c++) {
            const rule_case *rc = &ru->cases[c];
            iot_jw_begin_object(&b, NULL);
            iot_jw_begin_object(&b, "when");
            for (int k = 0; k < rc->nconds; k++)
                write_cond(&b, rc->conds, rc->nconds, &k);
            iot_jw_end_object(&b);
            iot_jw_begin_object(&b, "set");
            for (int k = 0; k < rc->nset; k++)
                write_typed(&b, rc->set[k].name, rc->set[k].knob, rc->set[k].value);
            iot_jw_end_object(&b);
            if (rc->note)
                iot_jw_string(&b, "note", rc->note);
            iot_jw_end_object(&b);
        }
        iot_jw_end_array(&b);
        iot_jw_end_object(&b);
    }
    iot_jw_end_array(&b);
    iot_jw_end_object(&b);
    return iot_buf_take(&b);
}

char *iot_rules_explain(const char *insights_json, const char *rules_json_or_NULL, char *err, size_t errlen)
{
    iot_insights in;
    if (iot_insights_from_json(insights_json, &in, err, errlen) < 0)
        return NULL;
    iot_rules *rules = rules_json_or_NULL ? iot_rules_parse(rules_json_or_NULL, err, errlen) : iot_rules_builtin();
    if (!rules) {
        if (!rules_json_or_NULL && err && errlen)
            snprintf(err, errlen, "out of memory");
        return NULL;
    }
    iot_rule_result *res = malloc(sizeof *res);
    char *out = NULL, *doc = NULL;
    iot_json *docv = NULL;
    const char *why = "out of memory";
    if (!res)
        goto done;
    if (iot_rules_evaluate(rules, &in, res) < 0) { /* unreachable with catalogued knobs */
        why = "the rules set more knobs than a result holds";
        goto done;
    }
    doc = iot_rule_result_settings_json(res, NULL, NULL);
    docv = doc ? iot_json_parse(doc, strlen(doc), NULL, 0) : NULL;
    if (!docv)
        goto done;
    iot_buf b;
    iot_buf_init(&b);
    iot_jw_begin_object(&b, NULL);
    write_result_members(res, rules, &b);
    iot_jw_value(&b, "document", docv);
    iot_jw_end_object(&b);
    out = iot_buf_take(&b);
done:
    if (!out && err && errlen)
        snprintf(err, errlen, "%s", why);
    free(res);
    free(doc);
    iot_json_free(docv);
    if (rules_json_or_NULL)
        iot_rules_free(rules);
    return out;
}
