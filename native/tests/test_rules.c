#include "check.h"
#include "iotuner/core.h"
#include "iotuner/rules.h"
#include <stdint.h>
#include <stdlib.h>

#define KiB 1024LL
#define MiB (1024LL * 1024)
#define GiB (1024LL * MiB)

#define PFL "-E 256M -c 1 -E 4G -c 4 -E -1 -c -1"

static iot_rule_result res; /* large: not on the stack */

static int fired(const iot_rule_result *r, int rule)
{
    for (int i = 0; i < r->nfired; i++)
        if (r->fired[i].rule == rule)
            return 1;
    return 0;
}

static int fired_case(const iot_rule_result *r, int rule)
{
    for (int i = 0; i < r->nfired; i++)
        if (r->fired[i].rule == rule)
            return r->fired[i].case_index;
    return -1;
}

static const char *reason(const iot_rule_result *r, int rule)
{
    for (int i = 0; i < r->nfired; i++)
        if (r->fired[i].rule == rule)
            return r->fired[i].reason;
    return NULL;
}

/* Rules that fired, as "1,4,5": compact to check against the paper's tables. */
static const char *fired_list(const iot_rule_result *r)
{
    static char buf[256];
    buf[0] = 0;
    for (int i = 0; i < r->nfired; i++)
        snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%d", i ? "," : "", r->fired[i].rule);
    return buf;
}

/* Section 4.1, IOR on Ruby: collective, transfer < 4MB, shared, sequential, Lustre. */
static void ior_insights(iot_insights *in, int64_t transfer)
{
    iot_insights_init(in);
    in->write_xfer = IOT_XFER_COLLECTIVE;
    in->transfer_size = in->max_transfer_size = transfer;
    in->files = IOT_FILES_SHARED;
    in->write_locality = IOT_LOC_SEQUENTIAL;
    in->bytes_written = 128 * MiB * 256;
    in->file_size = 128 * MiB * 256;
    in->write_calls = 32 * 256;
    in->same_calls = 1;
    in->processes = 256;
    snprintf(in->file_system, sizeof in->file_system, "lustre");
    snprintf(in->identity, sizeof in->identity, "/p/lustre/ior/testFile.h5");
    in->lustre_pfl = 1;
}

/* Section 4.2, Flash-X Sedov: mixed, transfers <= 1MB, shared, non-sequential, Lustre. */
static void flash_insights(iot_insights *in)
{
    iot_insights_init(in);
    in->write_xfer = IOT_XFER_MIXED;
    in->transfer_size = 256 * KiB;
    in->max_transfer_size = MiB;
    in->files = IOT_FILES_SHARED;
    in->write_locality = IOT_LOC_RANDOM;
    in->file_size = 3 * GiB;
    in->same_calls = 0;
    in->processes = 448;
    snprintf(in->file_system, sizeof in->file_system, "lustre");
    in->lustre_pfl = 1;
}

static void test_builtin(void)
{
    iot_rules *r = iot_rules_builtin();
    CHECK(r != NULL);
    CHECK(r == iot_rules_builtin()); /* parsed once */
    CHECK(iot_rules_count(r) == 10);
    iot_rules_free(r); /* ignored: the library owns it */
    CHECK(iot_rules_count(iot_rules_builtin()) == 10);

    /* the normalized table is a table, and normalizing is idempotent */
    char err[512];
    char *json = iot_rules_to_json(r);
    CHECK_CONTAINS(json, "\"source\":\"[10, 17], SmartIO Table 2\"");
    CHECK_CONTAINS(json, "\"hdf5.alignment\":[0,1048576]");
    CHECK_CONTAINS(json, "\"hdf5.mdc_initial_size\":8388608");
    CHECK_CONTAINS(json, "\"transfer_size\":{\"below\":\"16M\"}");
    iot_rules *again = iot_rules_parse(json, err, sizeof err);
    CHECK(again != NULL);
    char *json2 = again ? iot_rules_to_json(again) : NULL;
    CHECK_STR(json2, json);
    free(json);
    free(json2);
    iot_rules_free(again);

    /* the embedded text is what Python reads */
    iot_json *doc = iot_json_parse(iot_rules_builtin_json(), strlen(iot_rules_builtin_json()), err, sizeof err);
    CHECK(doc && iot_json_get(doc, "rules")->count == 10);
    iot_json_free(doc);
}

static void test_ior(void)
{
    iot_rules *r = iot_rules_builtin();
    iot_insights in;

    /* IOR's 4MB transfer (section 4.1), and the "< 4MB" the paper reports */
    for (int k = 0; k < 2; k++) {
        ior_insights(&in, k ? 4 * MiB - 4 * KiB : 4 * MiB);
        CHECK(iot_rules_evaluate(r, &in, &res) == 6);
        /* Table 3: rules 1, 4, 5, 7, 10; rule 8 (keep data sieving defaults) always holds and sets nothing */
        CHECK_STR(fired_list(&res), "1,4,5,7,8,10");
        CHECK(!fired(&res, 2) && !fired(&res, 3) && !fired(&res, 6) && !fired(&res, 9));
        CHECK(res.nsettings == 5);
        CHECK_STR(iot_rule_result_get(&res, "hdf5.transfer_mode"), "independent");
        CHECK_STR(iot_rule_result_get(&res, "hdf5.alignment"), "0,1048576");
        CHECK_STR(iot_rule_result_get(&res, "hdf5.mdc_initial_size"), "8388608");
        CHECK_STR(iot_rule_result_get(&res, "mpiio.romio_cb_write"), "disable");
        CHECK_STR(iot_rule_result_get(&res, "lustre.layout"), PFL);
        CHECK(iot_rule_result_get(&res, "mpiio.cb_config_list") == NULL);
    }
    CHECK_STR(reason(&res, 1), "All processes share one file, accesses are sequential, transfers are collective.");
    CHECK_STR(reason(&res, 4), "The typical transfer is 4092K (below 16M).");
    CHECK_STR(reason(&res, 8), "Always.");
    CHECK_CONTAINS(reason(&res, 10), "the file system is lustre, progressive file layouts are available");
    CHECK(res.settings[0].rule == 1 && !strcmp(res.settings[0].name, "hdf5.transfer_mode"));

    /* Lassen (GPFS): the same without the Lustre rule */
    ior_insights(&in, 4 * MiB);
    snprintf(in.file_system, sizeof in.file_system, "gpfs");
    in.lustre_pfl = -1;
    iot_rules_evaluate(r, &in, &res);
    CHECK_STR(fired_list(&res), "1,4,5,7,8");
    CHECK(res.nsettings == 4);

    /* ext4: no Lustre rule produces settings */
    snprintf(in.file_system, sizeof in.file_system, "ext4");
    in.lustre_pfl = 0;
    iot_rules_evaluate(r, &in, &res);
    for (int i = 0; i < res.nsettings; i++)
        CHECK(strncmp(res.settings[i].name, "lustre.", 7) != 0);
    CHECK(!fired(&res, 9) && !fired(&res, 10));
    in.files = IOT_FILES_PER_PROCESS;
    iot_rules_evaluate(r, &in, &res);
    CHECK(!fired(&res, 9) && iot_rule_result_get(&res, "lustre.stripe_count") == NULL);
}

static void test_flash(void)
{
    iot_rules *r = iot_rules_builtin();
    iot_insights in;
    flash_insights(&in);
    iot_rules_evaluate(r, &in, &res);
    /* Table 4: rules 4, 5, 6, 10; rule 2 holds and keeps the collective transfers */
    CHECK_STR(fired_list(&res), "2,4,5,6,8,10");
    CHECK(fired_case(&res, 2) == 0);
    CHECK(res.nsettings == 4);
    CHECK(iot_rule_result_get(&res, "hdf5.transfer_mode") == NULL);
    CHECK_STR(iot_rule_result_get(&res, "hdf5.alignment"), "0,1048576");
    CHECK_STR(iot_rule_result_get(&res, "hdf5.mdc_initial_size"), "8388608");
    CHECK_STR(iot_rule_result_get(&res, "mpiio.cb_config_list"), "*:8");
    CHECK_STR(iot_rule_result_get(&res, "lustre.layout"), PFL);
    CHECK(iot_rule_result_get(&res, "mpiio.romio_cb_write") == NULL);
    CHECK_CONTAINS(reason(&res, 2), "transfers are both collective and independent");
    CHECK_CONTAINS(reason(&res, 2), "accesses are random");
    CHECK_STR(reason(&res, 6), "Collective buffering will be performed.");

    /* strided counts as non-sequential too */
    in.write_locality = IOT_LOC_STRIDED;
    iot_rules_evaluate(r, &in, &res);
    CHECK_STR(fired_list(&res), "2,4,5,6,8,10");

    /* collective buffering already disabled for writes by an earlier rule: see test_table */
}

static void test_rule2(void)
{
    iot_rules *r = iot_rules_builtin();
    iot_insights in;
    flash_insights(&in);
    in.write_xfer = IOT_XFER_INDEPENDENT;

    /* independent, non-sequential, shared: collective only if every rank makes the same calls */
    in.same_calls = 1;
    iot_rules_evaluate(r, &in, &res);
    CHECK(fired_case(&res, 2) == 1);
    CHECK_STR(iot_rule_result_get(&res, "hdf5.transfer_mode"), "collective");
    CHECK(fired(&res, 6)); /* rule 6 sees rule 2's decision: collective buffering now happens */
    CHECK_STR(iot_rule_result_get(&res, "mpiio.cb_config_list"), "*:8");

    in.same_calls = -1;
    iot_rules_evaluate(r, &in, &res);
    CHECK(fired_case(&res, 2) == 2);
    CHECK(iot_rule_result_get(&res, "hdf5.transfer_mode") == NULL);
    CHECK(!fired(&res, 6));
    CHECK_CONTAINS(reason(&res, 2), "not switched");

    /* locality unknown: neither rule 1 nor rule 2 (nor 7) */
    in.write_locality = IOT_LOC_UNKNOWN;
    iot_rules_evaluate(r, &in, &res);
    CHECK(!fired(&res, 1) && !fired(&res, 2) && !fired(&res, 7));

    /* reads count too: sequential collective reads of a shared file */
    iot_insights_init(&in);
    in.read_xfer = IOT_XFER_COLLECTIVE;
    in.read_locality = IOT_LOC_SEQUENTIAL;
    in.files = IOT_FILES_SHARED;
    iot_rules_evaluate(r, &in, &res);
    CHECK_STR(fired_list(&res), "1,7,8");
    CHECK(!fired(&res, 6));
}

static void test_per_process(void)
{
    iot_rules *r = iot_rules_builtin();
    iot_insights in;
    iot_insights_init(&in);
    in.write_xfer = IOT_XFER_INDEPENDENT;
    in.write_locality = IOT_LOC_SEQUENTIAL;
    in.transfer_size = 64 * KiB;
    in.files = IOT_FILES_PER_PROCESS;
    snprintf(in.file_system, sizeof in.file_system, "Lustre");
    in.lustre_pfl = 1;
    iot_rules_evaluate(r, &in, &res);
    CHECK_STR(fired_list(&res), "3,4,5,8,9");
    CHECK_STR(iot_rule_result_get(&res, "lustre.stripe_count"), "1");
    CHECK(iot_rule_result_get(&res, "hdf5.transfer_mode") == NULL);
    CHECK(iot_rule_result_get(&res, "lustre.layout") == NULL);
    CHECK(iot_rule_result_get(&res, "mpiio.romio_cb_write") == NULL);
    CHECK_STR(reason(&res, 3), "Each process has its own file.");
    CHECK(res.nsettings == 3);
}

static void test_sizes(void)
{
    iot_rules *r = iot_rules_builtin();
    iot_insights in;

    /* exactly 16 MiB is ">= 16MB"; one byte less is "< 16MB" */
    ior_insights(&in, 16 * MiB);
    iot_rules_evaluate(r, &in, &res);
    CHECK(fired_case(&res, 4) == 1 && fired_case(&res, 5) == 1);
    CHECK_STR(iot_rule_result_get(&res, "hdf5.alignment"), "0,16777216");
    CHECK_STR(iot_rule_result_get(&res, "hdf5.mdc_initial_size"), "16777216");
    CHECK_STR(reason(&res, 4), "The typical transfer is 16M (at least 16M).");
    ior_insights(&in, 16 * MiB - 1);
    iot_rules_evaluate(r, &in, &res);
    CHECK(fired_case(&res, 4) == 0);
    CHECK_STR(iot_rule_result_get(&res, "hdf5.alignment"), "0,1048576");
    /* the autotuning comparison of section 4.4: 32MB transfers */
    ior_insights(&in, 32 * MiB);
    iot_rules_evaluate(r, &in, &res);
    CHECK_STR(iot_rule_result_get(&res, "hdf5.alignment"), "0,16777216");
    /* unknown transfer size: neither rule 4 nor 5 */
    in.transfer_size = -1;
    iot_rules_evaluate(r, &in, &res);
    CHECK(!fired(&res, 4) && !fired(&res, 5));

    /* rule 10 without progressive layouts: stripe count from the file size */
    static const struct {
        int64_t size;
        const char *count;
    } cases[] = {{100 * MiB, "1"}, {256 * MiB, "1"},     {256 * MiB + 1, "4"},
                 {4 * GiB, "4"},   {4 * GiB + 1, "-1"}, {32 * GiB * 1024, "-1"}};
    for (int pfl = -1; pfl <= 0; pfl++)
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            ior_insights(&in, 4 * MiB);
            in.lustre_pfl = pfl;
            in.file_size = cases[i].size;
            iot_rules_evaluate(r, &in, &res);
            CHECK(fired(&res, 10) && fired_case(&res, 10) > 0);
            CHECK_STR(iot_rule_result_get(&res, "lustre.stripe_count"), cases[i].count);
            CHECK(iot_rule_result_get(&res, "lustre.layout") == NULL);
        }
    CHECK_CONTAINS(reason(&res, 10), "the expected file size is 32T (above 4G)");
    in.file_size = -1;
    iot_rules_evaluate(r, &in, &res);
    CHECK(!fired(&res, 10));

    /* nothing known: only the unconditional rule */
    iot_insights_init(&in);
    iot_rules_evaluate(r, &in, &res);
    CHECK_STR(fired_list(&res), "8");
    CHECK(res.nsettings == 0);
}

static void test_document(void)
{
    iot_rules *r = iot_rules_builtin();
    iot_insights in;
    char err[512];
    const iot_setting *set[32];
    ior_insights(&in, 4 * MiB);
    iot_rules_evaluate(r, &in, &res);
    char *doc = iot_rule_result_settings_json(&res, "testFile*.h5", "SmartIO rules for IOR");
    iot_settings *s = doc ? iot_settings_parse(doc, strlen(doc), err, sizeof err) : NULL;
    CHECK(s != NULL);
    if (!s) {
        fprintf(stderr, "%s\n%s\n", doc ? doc : "(null)", err);
        free(doc);
        return;
    }
    CHECK_CONTAINS(doc, "\"rules_fired\":[1,4,5,7,8,10]");
    size_t n = iot_settings_resolve(s, "/p/lustre/ior/testFile.h5", NULL, -1, set, 32);
    CHECK(n == 5);
    for (size_t i = 0; i < n; i++) {
        if (!strcmp(set[i]->name, "alignment"))
            CHECK(set[i]->nints == 2 && set[i]->ints[0] == 0 && set[i]->ints[1] == 1048576);
        else if (!strcmp(set[i]->name, "mdc_initial_size"))
            CHECK(set[i]->ints[0] == 8388608);
        else if (!strcmp(set[i]->name, "transfer_mode"))
            CHECK_STR(set[i]->text, "independent");
        else if (!strcmp(set[i]->name, "romio_cb_write"))
            CHECK_STR(set[i]->text, "disable");
        else if (!strcmp(set[i]->name, "layout"))
            CHECK_STR(set[i]->text, PFL);
        else
            CHECK(!"unexpected setting");
    }
    CHECK(iot_settings_resolve(s, "/p/lustre/ior/other.h5", NULL, -1, set, 32) == 0);
    iot_settings_free(s);
    free(doc);

    /* Flash-X and file per process too (a string hint and a negative-capable int) */
    flash_insights(&in);
    iot_rules_evaluate(r, &in, &res);
    doc = iot_rule_result_settings_json(&res, NULL, NULL);
    s = iot_settings_parse(doc, strlen(doc), err, sizeof err);
    CHECK(s && iot_settings_resolve(s, "/x.h5", NULL, -1, set, 32) == 4);
    iot_settings_free(s);
    free(doc);
    ior_insights(&in, 4 * MiB);
    in.lustre_pfl = 0;
    iot_rules_evaluate(r, &in, &res);
    doc = iot_rule_result_settings_json(&res, NULL, NULL);
    CHECK_CONTAINS(doc, "\"lustre\":{\"stripe_count\":-1}");
    s = iot_settings_parse(doc, strlen(doc), err, sizeof err);
    CHECK(s != NULL);
    iot_settings_free(s);
    free(doc);

    /* nothing to set is still a valid document */
    iot_insights_init(&in);
    iot_rules_evaluate(r, &in, &res);
    doc = iot_rule_result_settings_json(&res, NULL, NULL);
    s = iot_settings_parse(doc, strlen(doc), err, sizeof err);
    CHECK(s && iot_settings_resolve(s, "/x.h5", NULL, -1, set, 32) == 0);
    iot_settings_free(s);
    free(doc);
}

static void test_table(void)
{
    char err[512];
    /* a test-only table: out of id order, conditions on earlier decisions,
     * canonical values, a layout replaced by plain striping */
    const char *table =
        "{\"version\": 1, \"name\": \"test\", \"rules\": [\n"
        " {\"id\": 3, \"title\": \"c\", \"cases\": [\n"
        "   {\"when\": {\"decided\": {\"hdf5.transfer_mode\": \"INDEPENDENT\", \"lustre.layout\": null}},\n"
        "    \"set\": {\"mpiio.romio_cb_read\": \"disable\", \"lustre.stripe_count\": 2}},\n"
        "   {\"when\": {}, \"set\": {\"lustre.stripe_count\": 3}}]},\n"
        " {\"id\": 1, \"title\": \"a\", \"cases\": [\n"
        "   {\"when\": {\"transfer_size\": {\"above\": \"1M\", \"at_most\": 2097152}, \"file_system\": [\"ext4\", \"xfs\"]},\n"
        "    \"set\": {\"hdf5.transfer_mode\": \"INDEPENDENT\", \"hdf5.alignment\": [\"4K\", \"1M\"]}, \"note\": \"test note\"},\n"
        "   {\"when\": {}, \"set\": {\"lustre.layout\": \"-E 1G -c 2 -E -1 -c 8\"}}]},\n"
        " {\"id\": 2, \"title\": \"b\", \"cases\": [\n"
        "   {\"when\": {\"collective_buffering\": false, \"transfer\": \"collective\"}, \"set\": {}}]}\n"
        "]}";
    iot_rules *t = iot_rules_parse(table, err, sizeof err);
    CHECK(t != NULL);
    if (!t) {
        fprintf(stderr, "%s\n", err);
        return;
    }
    CHECK(iot_rules_count(t) == 3);
    iot_insights in;
    iot_insights_init(&in);
    in.transfer_size = 2 * MiB;
    in.write_xfer = IOT_XFER_COLLECTIVE;
    snprintf(in.file_system, sizeof in.file_system, "xfs");
    CHECK(iot_rules_evaluate(t, &in, &res) == 3);
    CHECK_STR(fired_list(&res), "1,2,3");
    CHECK_STR(reason(&res, 1), "The typical transfer is 2M (above 1M and at most 2M), the file system is xfs; test note.");
    CHECK_STR(iot_rule_result_get(&res, "hdf5.transfer_mode"), "independent");
    CHECK_STR(iot_rule_result_get(&res, "hdf5.alignment"), "4096,1048576");
    /* rule 2: collective transfers, but hdf5.transfer_mode=independent from rule 1: no collective buffering */
    CHECK_STR(reason(&res, 2), "No collective buffering will be performed, transfers are collective.");
    CHECK(fired_case(&res, 3) == 0);
    CHECK_STR(reason(&res, 3), "Rule 1 set hdf5.transfer_mode=independent, no earlier rule set lustre.layout.");
    CHECK_STR(iot_rule_result_get(&res, "lustre.stripe_count"), "2");

    /* the other branch: rule 1 sets a layout, rule 3 then replaces it with a stripe count */
    in.transfer_size = 3 * MiB;
    iot_rules_evaluate(t, &in, &res);
    CHECK_STR(fired_list(&res), "1,3");
    CHECK(fired_case(&res, 1) == 1 && fired_case(&res, 3) == 1);
    CHECK(iot_rule_result_get(&res, "lustre.layout") == NULL);
    CHECK_STR(iot_rule_result_get(&res, "lustre.stripe_count"), "3");
    CHECK(res.nsettings == 1);
    char *doc = iot_rule_result_settings_json(&res, NULL, NULL);
    iot_settings *s = iot_settings_parse(doc, strlen(doc), err, sizeof err);
    CHECK(s != NULL);
    iot_settings_free(s);
    free(doc);

    /* write it back and read it again */
    char *json = iot_rules_to_json(t);
    CHECK_CONTAINS(json, "\"decided\":{\"hdf5.transfer_mode\":\"independent\",\"lustre.layout\":null}");
    CHECK_CONTAINS(json, "\"transfer_size\":{\"above\":\"1M\",\"at_most\":\"2M\"}");
    CHECK_CONTAINS(json, "\"file_system\":[\"ext4\",\"xfs\"]");
    iot_rules *t2 = iot_rules_parse(json, err, sizeof err);
    CHECK(t2 != NULL);
    iot_rules_free(t2);
    free(json);
    iot_rules_free(t);
}

static void bad(const char *rules, const char *expect1, const char *expect2)
{
    char err[512] = "";
    char text[2048];
    snprintf(text, sizeof text, "{\"version\": 1, \"rules\": [%s]}", rules);
    iot_rules *r = iot_rules_parse(text, err, sizeof err);
    CHECK(r == NULL);
    iot_rules_free(r);
    CHECK_CONTAINS(err, expect1);
    if (expect2)
        CHECK_CONTAINS(err, expect2);
}

static void test_errors(void)
{
    char err[512];
#define CASE(when, set) "{\"id\": 4, \"title\": \"t\", \"cases\": [{\"when\": " when ", \"set\": " set "}]}"
    bad(CASE("{\"transfer_szie\": {\"below\": \"16M\"}}", "{}"), "rule 4, case 0: unknown condition 'transfer_szie'",
        "transfer_size");
    bad(CASE("{}", "{\"hdf5.alignmnet\": [0, \"1M\"]}"), "rule 4, case 0: set 'hdf5.alignmnet': unknown knob",
        "did you mean hdf5.alignment");
    bad(CASE("{}", "{\"mpiio.cb_config_lst\": \"*:8\"}"), "unknown knob", "did you mean mpiio.cb_config_list");
    bad(CASE("{}", "{\"mpiio.romio_cb_write\": \"off\"}"), "rule 4, case 0: set mpiio.romio_cb_write:",
        "'off' is not one of enable|disable|automatic");
    bad(CASE("{}", "{\"hdf5.mdc_initial_size\": \"8MB\"}"), "hdf5.mdc_initial_size", "ambiguous");
    bad(CASE("{}", "{\"alignment\": 1}"), "write a knob as \"layer.knob\"", NULL);
    bad(CASE("{}", "{\"posix.alignment\": 1}"), "unknown layer 'posix'", NULL);
    bad(CASE("{}", "{\"lustre.layout\": \"-E 1G -c 2 -E -1 -c 4\", \"lustre.stripe_count\": 2}"), "replaces", NULL);
    bad(CASE("{\"files\": \"all\"}", "{}"), "condition 'files': expected shared, per_process", NULL);
    bad(CASE("{\"transfer\": []}", "{}"), "empty list", NULL);
    bad(CASE("{\"sequential\": \"yes\"}", "{}"), "condition 'sequential': expected true or false", NULL);
    bad(CASE("{\"transfer_size\": {\"below\": \"1M\", \"above\": \"2M\"}}", "{}"), "exclude every size", NULL);
    bad(CASE("{\"transfer_size\": {\"below\": \"1M\", \"at_most\": \"2M\"}}", "{}"), "one upper bound", NULL);
    bad(CASE("{\"transfer_size\": {\"under\": \"1M\"}}", "{}"), "unknown bound 'under'", NULL);
    bad(CASE("{\"transfer_size\": 5}", "{}"), "expected an object like", NULL);
    bad(CASE("{\"decided\": {\"hdf5.transfer_mode\": \"sometimes\"}}", "{}"), "condition 'decided': hdf5.transfer_mode",
        "independent|collective");
    bad(CASE("{\"file_system\": 3}", "{}"), "condition 'file_system'", NULL);
    bad(CASE("[]", "{}"), "rule 4, case 0: 'when' must be an object", NULL);
    bad("{\"id\": 4, \"title\": \"t\", \"cases\": [{\"set\": {}}]}", "missing \"when\"", NULL);
    bad("{\"id\": 4, \"title\": \"t\", \"cases\": [{\"when\": {}}]}", "missing \"set\"", NULL);
    bad("{\"id\": 4, \"title\": \"t\", \"cases\": [{\"when\": {}, \"set\": {}, \"then\": 1}]}", "unknown key 'then'",
        NULL);
    bad("{\"id\": 4, \"title\": \"t\", \"cases\": []}", "rule 4: \"cases\" must be a non-empty list", NULL);
    bad("{\"id\": 4, \"cases\": [{\"when\": {}, \"set\": {}}]}", "rule 4: missing \"title\"", NULL);
    bad("{\"id\": 4, \"title\": \"t\", \"sources\": \"x\", \"cases\": [{\"when\": {}, \"set\": {}}]}",
        "rule 4: unknown key 'sources'", NULL);
    bad("{\"id\": 0, \"title\": \"t\", \"cases\": [{\"when\": {}, \"set\": {}}]}", "rules[0]: \"id\"", NULL);
    bad(CASE("{}", "{}") ", " CASE("{}", "{}"), "rule 4: id used twice", NULL);
    bad(CASE("{\"pfl\": true, \"pfl\": false}", "{}"), "key 'pfl' appears twice", NULL);
#undef CASE
    CHECK(iot_rules_parse("{\"version\": 2, \"rules\": []}", err, sizeof err) == NULL);
    CHECK_CONTAINS(err, "\"version\" must be 1");
    CHECK(iot_rules_parse("{\"version\": 1, \"rules\": []}", err, sizeof err) == NULL);
    CHECK_CONTAINS(err, "non-empty list");
    CHECK(iot_rules_parse("{\"version\": 1, \"rule\": []}", err, sizeof err) == NULL);
    CHECK_CONTAINS(err, "unknown key 'rule'");
    CHECK(iot_rules_parse("{\"version\": 1,\n \"rules\": [}", err, sizeof err) == NULL);
    CHECK_CONTAINS(err, "not valid JSON: line 2");
    CHECK(iot_rules_parse(NULL, err, sizeof err) == NULL);
    CHECK(iot_rules_evaluate(NULL, NULL, &res) == -1);
}

static void test_explain(void)
{
    char err[512];
    const char *ior = "{\"write_transfer\": \"collective\", \"transfer_size\": \"4M\", \"files\": \"shared\","
                      " \"write_locality\": \"sequential\", \"file_system\": \"lustre\", \"lustre_pfl\": true}";
    char *out = iot_rules_explain(ior, NULL, err, sizeof err);
    CHECK(out != NULL);
    iot_json *v = out ? iot_json_parse(out, strlen(out), err, sizeof err) : NULL;
    CHECK(v != NULL);
    if (v) {
        const iot_json *fired_v = iot_json_get(v, "fired"), *settings = iot_json_get(v, "settings");
        CHECK(fired_v && fired_v->count == 6);
        CHECK_STR(iot_json_get(fired_v->items[0], "title")->string,
                  "Use independent I/O for sequential reads/writes to a shared file");
        CHECK_STR(iot_json_get(iot_json_get(fired_v->items[0], "set"), "hdf5.transfer_mode")->string, "independent");
        CHECK(settings && settings->count == 5);
        CHECK_STR(iot_json_get(settings, "hdf5.alignment")->string, "0,1048576");
        const iot_json *doc = iot_json_get(v, "document");
        CHECK(doc && iot_json_get(doc, "groups"));
        /* the document is a settings document */
        iot_buf b;
        iot_buf_init(&b);
        iot_jw_value(&b, NULL, doc);
        char *text = iot_buf_take(&b);
        iot_settings *s = iot_settings_parse(text, strlen(text), err, sizeof err);
        CHECK(s != NULL);
        iot_settings_free(s);
        free(text);
    }
    iot_json_free(v);
    iot_free(out);

    /* with a table of its own */
    out = iot_rules_explain("{\"files\": \"per_process\"}",
                            "{\"version\": 1, \"rules\": [{\"id\": 1, \"title\": \"fpp\", \"cases\": [{\"when\": "
                            "{\"files\": \"per_process\"}, \"set\": {\"lustre.stripe_count\": 1}}]}]}",
                            err, sizeof err);
    CHECK_CONTAINS(out, "\"settings\":{\"lustre.stripe_count\":\"1\"}");
    iot_free(out);

    /* bad input says what */
    CHECK(iot_rules_explain("{\"files\": \"both\"}", NULL, err, sizeof err) == NULL);
    CHECK_CONTAINS(err, "insights.files");
    CHECK(iot_rules_explain("{}", "{\"version\": 1}", err, sizeof err) == NULL);
    CHECK_CONTAINS(err, "rules");
}

/* A rule sets only knobs of layers the file uses: IOR's insights on a PnetCDF file and on a plain MPI-IO file
 * decide no HDF5 knob, and rule 6 then sees the collective buffering that rule 1's transfer mode would have
 * turned off; on an HDF5 file everything is as before. */
static void test_layers(void)
{
    iot_rules *r = iot_rules_builtin();
    iot_insights in;
    const char *libraries[] = {"pnetcdf", "mpiio"};
    for (int k = 0; k < 2; k++) {
        ior_insights(&in, 4 * MiB);
        snprintf(in.library, sizeof in.library, "%s", libraries[k]);
        iot_rules_evaluate(r, &in, &res);
        CHECK_STR(fired_list(&res), "1,4,5,6,7,8,10");
        for (int i = 0; i < res.nsettings; i++)
            CHECK(strncmp(res.settings[i].name, "hdf5.", 5) != 0);
        CHECK_STR(iot_rule_result_get(&res, "mpiio.cb_config_list"), "*:8"); /* collective transfers stay */
        CHECK_STR(iot_rule_result_get(&res, "mpiio.romio_cb_write"), "disable");
        CHECK_STR(iot_rule_result_get(&res, "lustre.layout"), PFL);
        CHECK_CONTAINS(reason(&res, 1), "Not set: hdf5.transfer_mode (");
        CHECK_CONTAINS(reason(&res, 4), k ? "(a plain MPI-IO file)." : "(a PnetCDF file).");
        CHECK(res.fired[0].skipped == 1u);
    }
    ior_insights(&in, 4 * MiB);
    snprintf(in.library, sizeof in.library, "hdf5");
    iot_rules_evaluate(r, &in, &res);
    CHECK_STR(fired_list(&res), "1,4,5,7,8,10");
    CHECK_STR(iot_rule_result_get(&res, "hdf5.transfer_mode"), "independent");
    CHECK(res.fired[0].skipped == 0);
    /* the JSON says what was not set */
    iot_buf b;
    iot_buf_init(&b);
    snprintf(in.library, sizeof in.library, "pnetcdf");
    iot_rules_evaluate(r, &in, &res);
    iot_rule_result_write_json(&res, r, &b, NULL);
    char *json = iot_buf_take(&b);
    CHECK_CONTAINS(json, "\"not_set\":{\"hdf5.transfer_mode\":\"independent\"}");
    free(json);
}

int main(void)
{
    test_layers();
    test_builtin();
    test_ior();
    test_flash();
    test_rule2();
    test_per_process();
    test_sizes();
    test_document();
    test_table();
    test_errors();
    test_explain();
    CHECK_DONE();
}
