#include "check.h"
#include "iotuner/core.h"

int main(void)
{
    iot_layout l;
    char err[256], out[256];
    CHECK(iot_layout_parse("-E 256M -c 1 -E 4G -c 4 -E -1 -c -1", &l, err, sizeof err) == 0);
    CHECK(l.composite && l.ncomponents == 3);
    CHECK(l.c[0].end == 256LL << 20 && l.c[0].stripe_count == 1);
    CHECK(l.c[1].end == 4LL << 30 && l.c[1].stripe_count == 4);
    CHECK(l.c[2].end == -1 && l.c[2].stripe_count == -1);
    iot_layout_format(&l, out, sizeof out);
    CHECK_STR(out, "-E 256M -c 1 -E 4G -c 4 -E -1 -c -1");

    CHECK(iot_layout_parse("--stripe-count 8 --stripe-size 4M", &l, err, sizeof err) == 0);
    CHECK(!l.composite && l.ncomponents == 1 && l.c[0].stripe_count == 8 && l.c[0].stripe_size == 4 << 20);
    iot_layout_format(&l, out, sizeof out);
    CHECK_STR(out, "-c 8 -S 4M");

    CHECK(iot_layout_parse("-E 4G -c 4 -E 256M -c 1 -E eof -c -1", &l, err, sizeof err) < 0);
    CHECK_CONTAINS(err, "increase");
    CHECK(iot_layout_parse("-E 256M -c 1", &l, err, sizeof err) < 0);
    CHECK_CONTAINS(err, "end of file");
    CHECK(iot_layout_parse("-E -1 -c 1 -E 1G -c 2", &l, err, sizeof err) < 0);
    CHECK(iot_layout_parse("-c 4 -S 1000", &l, err, sizeof err) < 0);
    CHECK_CONTAINS(err, "64 KiB");
    CHECK(iot_layout_parse("-c", &l, err, sizeof err) < 0);
    CHECK(iot_layout_parse("-p flash -c 2", &l, err, sizeof err) < 0);
    CHECK_CONTAINS(err, "not supported");
    CHECK(iot_layout_parse("-c -2", &l, err, sizeof err) < 0);
    CHECK(iot_layout_parse("", &l, err, sizeof err) < 0);
    /* progressive layouts come with Lustre 2.10 */
    CHECK(iot_lustre_has_pfl("2.15.3\n") == 1);
    CHECK(iot_lustre_has_pfl("lustre: 2.12.8_ddn20") == 1);
    CHECK(iot_lustre_has_pfl("2.10.0") == 1);
    CHECK(iot_lustre_has_pfl("2.9.99") == 0);
    CHECK(iot_lustre_has_pfl("lustre: 1.8.9") == 0);
    CHECK(iot_lustre_has_pfl("") == -1);
    CHECK(iot_lustre_has_pfl("unknown") == -1);
    CHECK(iot_lustre_has_pfl(NULL) == -1);
    CHECK_DONE();
}
