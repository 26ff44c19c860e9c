/* SmartIO runtime tuning, section 3.3: the rules that map a phase's insights
 * to settings (SmartIO Table 2), as a JSON table the runtime and Python
 * share. Pure C11; Python calls iot_rules_explain through ctypes. */
#ifndef IOTUNER_RULES_H
#define IOTUNER_RULES_H

#include <stddef.h>
#include <stdint.h>

#include "iotuner/insights.h"
#include "iotuner/json.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Rules (SmartIO Table 2)
 *
 * A rules table is a JSON document; the built-in one is embedded in rules.c
 * as text, so the runtime and Python read the same table:
 *   {"version": 1, "name": "...", "description": "...", "rules": [
 *     {"id": 1, "optimization": "...", "title": "...", "source": "[10, 17], SmartIO Table 2",
 *      "evaluated": false,
 *      "cases": [{"when": {...}, "set": {"hdf5.transfer_mode": "independent"}, "note": "..."}]}]}
 * Rules run in id order; the first case of a rule whose conditions all hold
 * fires it (its "set" may be empty: "keep the default"); later rules see the
 * settings earlier ones decided, and a later setting of the same knob (or a
 * lustre.layout against stripe_count/stripe_size) replaces the earlier one.
 * A condition on an insight that is unknown never holds.
 * Conditions ("when"):
 *   "files": "shared" | "per_process"
 *   "sequential": true | false            both directions together (iot_insights_locality)
 *   "transfer": "none" | "independent" | "collective" | "mixed", or a list of them
 *   "transfer_size", "file_size": {"below": S, "at_least": S, "at_most": S, "above": S}
 *                                         at most one lower and one upper bound; S bytes or "16M"
 *   "file_system": "lustre" or a list of names (case-insensitive)
 *   "pfl": true | false                   progressive layouts available
 *   "same_calls": true | false            every rank makes the same number of data calls
 *   "collective_buffering": true | false  collective buffering will be performed, given the
 *                                         decisions so far: a direction whose transfers are
 *                                         collective or mixed (after an hdf5.transfer_mode
 *                                         decision) and whose romio_cb_write / romio_cb_read
 *                                         was not decided "disable"
 *   "decided": {"layer.knob": value or null}  an earlier rule set that value (null: set nothing)
 * Settings ("set") are catalogued knobs as "layer.knob": value, validated
 * by the settings validator (iot_settings_parse). A setting of a layer the
 * file does not use (insights' library: HDF5 knobs for a PnetCDF or a plain
 * MPI-IO file, PnetCDF knobs for an HDF5 file) is not decided: the rule
 * still fires, and its reason says what was left out and why. */

typedef struct iot_rules iot_rules;

#define IOT_RULES_MAX 64          /* rules in a table */
#define IOT_RULE_MAX_SETTINGS 32  /* distinct knobs in a result (more than the catalogue holds) */
#define IOT_RULE_VALUE_MAX 256    /* canonical value text, NUL included */

/* The built-in table (SmartIO's 10 rules), parsed once; NULL only if out of
 * memory. Owned by the library: iot_rules_free ignores it. */
iot_rules *iot_rules_builtin(void);
/* The built-in table's text. */
const char *iot_rules_builtin_json(void);
/* Parses a table (test-only tables, same format). NULL on a problem, with a
 * message naming the rule and case ("rule 4, case 0: ..."). */
iot_rules *iot_rules_parse(const char *json, char *err, size_t errlen);
void iot_rules_free(iot_rules *r);
/* The table, normalized (canonical values); caller frees. */
char *iot_rules_to_json(const iot_rules *r);
size_t iot_rules_count(const iot_rules *r);

typedef struct {
    int rule;        /* rule id */
    int case_index;  /* 0-based case of that rule */
    char reason[256];/* why, in a plain sentence built from the insights */
    uint32_t skipped; /* bit k: the case's k-th setting is of a layer the file does not use (not decided) */
} iot_rule_fired;

typedef struct {
    char name[64];                  /* "layer.knob" */
    char value[IOT_RULE_VALUE_MAX]; /* canonical value text, as in iot_setting.text */
    int rule;                       /* id of the rule that set it */
    int knob;                       /* catalogue index */
} iot_rule_setting;

typedef struct {
    iot_rule_fired fired[IOT_RULES_MAX];
    int nfired;
    iot_rule_setting settings[IOT_RULE_MAX_SETTINGS]; /* in the order they were first decided */
    int nsettings;
} iot_rule_result;

/* Evaluates the rules; returns how many fired, or -1 on NULL arguments. */
int iot_rules_evaluate(const iot_rules *r, const iot_insights *in, iot_rule_result *out);
/* The value a result sets for "layer.knob", or NULL. */
const char *iot_rule_result_get(const iot_rule_result *res, const char *name);
/* {"fired": [{"rule", "case_index", "title" (with rules), "reason", "set": {...} (with rules)}],
 *  "settings": {"layer.knob": "canonical text", ...}}; rules may be NULL. */
void iot_rule_result_write_json(const iot_rule_result *res, const iot_rules *rules, iot_buf *b, const char *key);
/* The result as a settings document (core.h's format, one group; file_glob
 * and description may be NULL), for iot_settings_parse and the runtime's
 * appliers. Caller frees; NULL if out of memory. */
char *iot_rule_result_settings_json(const iot_rule_result *res, const char *file_glob, const char *description);

/* For ctypes: insights JSON in (and a table, NULL for the built-in one),
 * {"fired": [...], "settings": {...}, "document": {settings document}} out;
 * caller frees with iot_free. NULL with the message in err on bad input. */
char *iot_rules_explain(const char *insights_json, const char *rules_json_or_NULL, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
