#include "check.h"
#include "iotuner/core.h"
#include <stdlib.h>

int main(void)
{
    char why[512];
    /* striping hints vanish on ROMIO's UFS driver */
    CHECK(iot_explain_hint("striping_factor", "4", NULL, "ufs", 1, 2, "*:1", why, sizeof why) == IOT_STATUS_DROPPED);
    CHECK_CONTAINS(why, "ufs driver ignores striping hints");
    CHECK(iot_explain_hint("striping_factor", "4", NULL, "lustre", 1, 2, "*:1", why, sizeof why) == IOT_STATUS_DROPPED);
    CHECK_CONTAINS(why, "does not support");
    /* ROMIO's ufs driver keeps striping_unit, for file-domain alignment only */
    CHECK(iot_explain_hint("striping_unit", "1048576", "1048576", "ufs", 1, 2, "*:1", why, sizeof why) == IOT_STATUS_APPLIED);
    CHECK_CONTAINS(why, "nothing is striped");
    CHECK(iot_explain_hint("striping_unit", "1048576", "1048576", "lustre", 1, 2, "*:1", why, sizeof why) == IOT_STATUS_APPLIED);
    CHECK(why[0] == 0);
    /* cb_nodes capped by cb_config_list on one node */
    CHECK(iot_explain_hint("cb_nodes", "2", "1", "ufs", 1, 2, "*:1", why, sizeof why) == IOT_STATUS_CHANGED);
    CHECK_CONTAINS(why, "capped at 1");
    CHECK_CONTAINS(why, "\"*:2\"");
    CHECK(iot_explain_hint("cb_nodes", "8", "4", "ufs", 2, 16, "*:2", why, sizeof why) == IOT_STATUS_CHANGED);
    CHECK_CONTAINS(why, "on 2 node(s)");
    CHECK_CONTAINS(why, "\"*:4\"");
    CHECK(iot_explain_hint("cb_nodes", "4", "2", "ufs", 1, 2, "*:4", why, sizeof why) == IOT_STATUS_CHANGED);
    CHECK_CONTAINS(why, "number of processes");
    CHECK(iot_explain_hint("cb_nodes", "2", "2", "ufs", 1, 2, "*:2", why, sizeof why) == IOT_STATUS_APPLIED);
    CHECK(why[0] == 0);
    /* same value, other spelling */
    CHECK(iot_explain_hint("romio_cb_write", "enable", "ENABLE", "ufs", 1, 2, NULL, why, sizeof why) == IOT_STATUS_APPLIED);
    CHECK(iot_explain_hint("cb_buffer_size", "1048576", "1048576", "ufs", 1, 2, NULL, why, sizeof why) == IOT_STATUS_APPLIED);
    CHECK(iot_explain_hint("romio_cb_read", "disable", "enable", "ufs", 1, 2, NULL, why, sizeof why) == IOT_STATUS_CHANGED);
    CHECK_CONTAINS(why, "romio_no_indep_rw");
    /* unknown hints, with a suggestion for typos */
    CHECK(iot_explain_hint("romio_cb_wirte", "enable", NULL, "ufs", 1, 2, NULL, why, sizeof why) == IOT_STATUS_DROPPED);
    CHECK_CONTAINS(why, "did you mean mpiio.romio_cb_write");
    CHECK(iot_explain_hint("vendor_magic", "1", NULL, "ufs", 1, 2, NULL, why, sizeof why) == IOT_STATUS_DROPPED);
    CHECK_CONTAINS(why, "not recognized");

    CHECK_STR(iot_fs_name(0xEF53), "ext4");
    CHECK_STR(iot_fs_name(0x0BD00BD0), "lustre");
    CHECK(iot_fs_is_lustre("lustre") && !iot_fs_is_lustre("ext4"));

    /* the catalogue is valid JSON and lists every knob once */
    char *cat = iot_catalogue_json();
    char err[256];
    iot_json *doc = iot_json_parse(cat, strlen(cat), err, sizeof err);
    CHECK(doc != NULL);
    const iot_json *knobs = iot_json_get(doc, "knobs");
    CHECK(knobs && knobs->count == iot_catalogue_size);
    for (size_t i = 0; i < iot_catalogue_size; i++)
        for (size_t j = i + 1; j < iot_catalogue_size; j++)
            CHECK(iot_catalogue[i].layer != iot_catalogue[j].layer || strcmp(iot_catalogue[i].name, iot_catalogue[j].name));
    iot_json_free(doc);
    free(cat);
    CHECK_DONE();
}
