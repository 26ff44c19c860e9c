#include "check.h"
#include "iotuner/core.h"
#include <stdlib.h>

static iot_settings *parse(const char *s, char *err)
{
    return iot_settings_parse(s, strlen(s), err, 512);
}

static const iot_setting *find(const iot_setting **v, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(v[i]->name, name))
            return v[i];
    return NULL;
}

int main(void)
{
    char err[512];
    const iot_setting *r[64];
    iot_settings *s = parse("{\"version\": 1,\n"
                            " \"hdf5\": {\"alignment\": [0, \"1M\"], \"sieve_buf_size\": \"256K\", \"transfer_mode\": \"COLLECTIVE\"},\n"
                            " \"mpiio\": {\"romio_cb_write\": \"enable\", \"cb_nodes\": \"2\", \"cb_config_list\": \"*:2\",\n"
                            "           \"romio_no_indep_rw\": true, \"my_vendor_hint\": 7},\n"
                            " \"lustre\": {\"stripe_count\": 4, \"stripe_size\": \"1M\"},\n"
                            " \"groups\": [\n"
                            "   {\"file\": \"chk_*.h5\", \"hdf5\": {\"sieve_buf_size\": 1048576}, \"lustre\": {\"layout\": \"-E 256M -c 1 -E -1 -c -1\"}},\n"
                            "   {\"file\": \"chk_*.h5\", \"dataset\": \"dens*\", \"hdf5\": {\"chunk_dims\": [8, 8, 8]}}\n"
                            " ]}",
                            err);
    CHECK(s != NULL);
    if (!s) {
        fprintf(stderr, "%s\n", err);
        CHECK_DONE();
    }
    CHECK(s->ngroups == 3);

    size_t n = iot_settings_resolve(s, "/scratch/run/plot_0001.h5", NULL, -1, r, 64);
    CHECK(n == 10);
    CHECK_STR(find(r, n, "alignment")->text, "0,1048576");
    CHECK_STR(find(r, n, "sieve_buf_size")->text, "262144");
    CHECK_STR(find(r, n, "transfer_mode")->text, "collective");
    CHECK_STR(find(r, n, "cb_nodes")->text, "2");
    CHECK_STR(find(r, n, "romio_no_indep_rw")->text, "true");
    CHECK(find(r, n, "my_vendor_hint")->knob == -1);
    CHECK_STR(find(r, n, "my_vendor_hint")->text, "7");
    CHECK(find(r, n, "layout") == NULL);

    /* a later group overrides; a layout replaces plain striping */
    n = iot_settings_resolve(s, "/scratch/run/chk_0003.h5", NULL, -1, r, 64);
    CHECK_STR(find(r, n, "sieve_buf_size")->text, "1048576");
    CHECK(find(r, n, "stripe_count") == NULL && find(r, n, "stripe_size") == NULL);
    CHECK_STR(find(r, n, "layout")->text, "-E 256M -c 1 -E -1 -c -1");
    CHECK(find(r, n, "chunk_dims") == NULL); /* dataset groups only at dataset level */

    n = iot_settings_resolve(s, "/scratch/run/chk_0003.h5", "/density", IOT_LAYER_HDF5, r, 64);
    CHECK(find(r, n, "chunk_dims") && find(r, n, "chunk_dims")->nints == 3);
    CHECK(find(r, n, "cb_nodes") == NULL); /* layer filter */
    n = iot_settings_resolve(s, "/scratch/run/chk_0003.h5", "/Step#0/pressure", IOT_LAYER_HDF5, r, 64);
    CHECK(find(r, n, "chunk_dims") == NULL);
    n = iot_settings_resolve(s, "/scratch/run/plot.h5", "/density", IOT_LAYER_HDF5, r, 64);
    CHECK(find(r, n, "chunk_dims") == NULL);

    /* normalized JSON parses back to the same resolution */
    char *json = iot_settings_to_json(s);
    iot_settings *s2 = parse(json, err);
    CHECK(s2 && s2->ngroups == 3);
    size_t n2 = iot_settings_resolve(s2, "/x/chk_1.h5", "/dens", -1, r, 64);
    CHECK(n2 == iot_settings_resolve(s, "/x/chk_1.h5", "/dens", -1, r, 64));
    free(json);
    iot_settings_free(s2);
    iot_settings_free(s);

    /* globs with a slash match the whole path */
    CHECK(iot_glob_match_file("/scratch/*/out.h5", "/scratch/a/out.h5"));
    CHECK(!iot_glob_match_file("out*.h5", "/scratch/a/in.h5"));
    CHECK(iot_glob_match_file(NULL, "/anything"));

    /* errors: each names the place, the problem, and a way out */
    CHECK(!parse("{\"version\": 1, \"hdf5\": {\"alignmnet\": [1, 4096]}}", err));
    CHECK_CONTAINS(err, "document.hdf5.alignmnet");
    CHECK_CONTAINS(err, "did you mean hdf5.alignment");
    CHECK(!parse("{\"version\": 1, \"mpiio\": {\"cb_nodes\": \"two\"}}", err));
    CHECK_CONTAINS(err, "cb_nodes");
    CHECK_CONTAINS(err, "whole number");
    CHECK(!parse("{\"version\": 1, \"hdf5\": {\"sieve_buf_size\": \"16MB\"}}", err));
    CHECK_CONTAINS(err, "ambiguous");
    CHECK(!parse("{\"version\": 1, \"mpiio\": {\"romio_cb_write\": \"on\"}}", err));
    CHECK_CONTAINS(err, "enable|disable|automatic");
    CHECK(!parse("{\"version\": 1, \"hdf5\": {\"chunk_cache_w0\": 1.5}}", err));
    CHECK_CONTAINS(err, "maximum");
    CHECK(!parse("{\"version\": 1, \"lustre\": {\"stripe_size\": 1000}}", err));
    CHECK(!parse("{\"version\": 1, \"lustre\": {\"layout\": \"-E 1G -c 2 -E -1 -c 4\", \"stripe_count\": 2}}", err));
    CHECK_CONTAINS(err, "replaces");
    CHECK(!parse("{\"version\": 1, \"groups\": [{\"dataset\": \"x\", \"hdf5\": {\"alignment\": [1, 2]}}]}", err));
    CHECK_CONTAINS(err, "groups[0]");
    CHECK(!parse("{\"version\": 1, \"hdf\": {}}", err));
    CHECK_CONTAINS(err, "unknown key 'hdf'");
    CHECK(!parse("{\"version\": 2}", err));
    CHECK_CONTAINS(err, "newer");
    CHECK(!parse("{\"hdf5\": {}}", err));
    CHECK_CONTAINS(err, "version");
    CHECK(!parse("{\"version\": 1, \"mpiio\": {\"cb_config_list\": \"*: 2\"}}", err));
    CHECK(!parse("{\"version\": 1, \"hdf5\": {\"meta_block_size\": 1, \"meta_block_size\": 2}}", err));
    CHECK_CONTAINS(err, "twice");
    CHECK(!parse("{\"version\": 1,\n\"hdf5\": {\"sieve_buf_size\": }}", err));
    CHECK_CONTAINS(err, "not valid JSON: line 2");
    CHECK(!parse("[]", err));

    /* every error of a document, one per line, in document order; a later knob is still checked */
    CHECK(!parse("{\"hdf5\": {\"alignmnet\": 1},\n \"mpiio\": {\"cb_nodes\": \"two\", \"cb_buffer_size\": \"4M\"},\n"
                 " \"groups\": [{\"colour\": 1, \"lustre\": {\"stripe_size\": 1000}}]}", err));
    CHECK(!strncmp(err, "line 1: version: missing", 24));
    CHECK_CONTAINS(err, "\nline 1: document.hdf5.alignmnet: unknown hdf5 knob");
    CHECK_CONTAINS(err, "\nline 2: document.mpiio.cb_nodes: expected a whole number");
    CHECK_CONTAINS(err, "\nline 3: groups[0]: unknown key 'colour'");
    CHECK_CONTAINS(err, "\nline 3: groups[0].lustre.stripe_size");
    {
        int lines = 1;
        for (const char *p = err; *p; p++)
            lines += *p == '\n';
        CHECK(lines == 5);
    }
    /* a buffer too small for them all keeps whole lines, never half of one */
    {
        char small[80];
        const char *doc = "{\"version\": 1, \"mpiio\": {\"cb_nodes\": \"a\", \"cb_buffer_size\": \"b\"}}";
        CHECK(!iot_settings_parse(doc, strlen(doc), small, sizeof small));
        CHECK(strchr(small, '\n') == NULL && strstr(small, "cb_nodes") != NULL);
    }

    /* an empty document is a valid pass-through */
    s = parse("{\"version\": 1}", err);
    CHECK(s && iot_settings_resolve(s, "/a.h5", NULL, -1, r, 64) == 0);
    iot_settings_free(s);
    /* ranges from the libraries' own limits, and the warnings of legal but ruinous values */
    static const char *const bad[][2] = {
        {"{\"version\":1,\"mpiio\":{\"cb_buffer_size\":\"4G\"}}", "4G is above the maximum 2147483647 (ROMIO"},
        {"{\"version\":1,\"mpiio\":{\"cb_buffer_size\":\"2G\"}}", "2G is above the maximum 2147483647"},
        {"{\"version\":1,\"mpiio\":{\"cb_buffer_size\":1}}", "1 is below the minimum 4K"},
        {"{\"version\":1,\"mpiio\":{\"ind_wr_buffer_size\":\"3G\"}}", "above the maximum 2147483647"},
        {"{\"version\":1,\"hdf5\":{\"alignment\":[1,\"1T\"]}}", "1T is above the maximum 4G"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK(parse(bad[i][0], err) == NULL);
        CHECK_CONTAINS(err, bad[i][1]);
    }
    iot_settings *fine = parse("{\"version\":1,\"mpiio\":{\"cb_buffer_size\":\"2047M\"},"
                               "\"hdf5\":{\"alignment\":[1,\"4G\"]}}", err);
    char warn[2048];
    CHECK(fine != NULL && iot_settings_warnings(fine, warn, sizeof warn) == 0 && warn[0] == 0);
    iot_settings_free(fine);
    iot_settings *ruinous = parse("{\"version\":1,\n\"hdf5\":{\"chunk_bytes\":1},\n"
                                  "\"groups\":[{\"dataset\":\"x\",\"hdf5\":{\"chunk_dims\":[1,2]}}],\n"
                                  "\"mpiio\":{\"cb_buffer_size\":4096},\n\"ompio\":{\"bytes_per_agg\":4096}}", err);
    CHECK(ruinous && iot_settings_warnings(ruinous, warn, sizeof warn) == 4);
    CHECK_CONTAINS(warn, "line 2: hdf5.chunk_bytes: chunks of 1 byte(s): a 1 GiB dataset would have 1073741824");
    CHECK_CONTAINS(warn, "line 3: hdf5.chunk_dims: chunks of 2 element(s)");
    CHECK_CONTAINS(warn, "line 4: mpiio.cb_buffer_size: a collective buffer of 4096 bytes");
    CHECK_CONTAINS(warn, "line 5: ompio.bytes_per_agg: a collective buffer of 4096 bytes per aggregator");
    iot_settings_free(ruinous);

    /* which groups apply: a dataset pattern only to datasets */
    iot_settings *g = parse("{\"version\":1,\"groups\":[{\"file\":\"a*.h5\",\"dataset\":\"d*\","
                            "\"hdf5\":{\"transfer_mode\":\"collective\"}}]}", err);
    CHECK(g && iot_group_matches(&g->groups[0], "/x/a1.h5", "/grp/dens") == 1);
    CHECK(g && iot_group_matches(&g->groups[0], "/x/a1.h5", NULL) == 0);
    CHECK(g && iot_group_matches(&g->groups[0], "/x/b1.h5", "/grp/dens") == 0);
    CHECK(g && iot_group_matches(&g->groups[0], "/x/a1.h5", "/grp/pres") == 0);
    iot_settings_free(g);
    CHECK_DONE();
}
