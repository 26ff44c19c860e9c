#include "check.h"
#include "iotuner/smart.h"

int main(void)
{
    iot_feedback f;
    char note[256];

    /* harm: two slow phases, then the default settings are clearly faster */
    iot_feedback_init(&f, 1000, 0.25);
    CHECK(iot_feedback_observe(&f, 0, 900, note, sizeof note) == IOT_FB_NONE); /* within the margin */
    CHECK(iot_feedback_observe(&f, 0, 200, note, sizeof note) == IOT_FB_SLOW);
    CHECK_CONTAINS(note, "below the reference 1000.0");
    CHECK(iot_feedback_observe(&f, 0, 210, note, sizeof note) == IOT_FB_PROBE_NEXT);
    CHECK(f.probing);
    CHECK(iot_feedback_observe(&f, 1, 1000, note, sizeof note) == IOT_FB_ROLLED_BACK);
    CHECK(f.rolled_back && !f.probing);
    CHECK_CONTAINS(note, "1000.0 MiB/s, against 200.0 and 210.0");
    CHECK(iot_feedback_observe(&f, 0, 10, note, sizeof note) == IOT_FB_NONE); /* nothing after a roll-back */

    /* drift: the machine slowed down, the default is no faster: keep the rules, new reference */
    iot_feedback_init(&f, 1000, 0.25);
    CHECK(iot_feedback_observe(&f, 0, 700, NULL, 0) == IOT_FB_SLOW);
    CHECK(iot_feedback_observe(&f, 0, 650, NULL, 0) == IOT_FB_PROBE_NEXT);
    CHECK(iot_feedback_observe(&f, 1, 690, note, sizeof note) == IOT_FB_KEPT);
    CHECK(!f.rolled_back && f.reference == 690);
    CHECK_CONTAINS(note, "not the rules'");
    CHECK(iot_feedback_observe(&f, 0, 640, NULL, 0) == IOT_FB_NONE); /* judged against the new reference */

    /* a probe only a little faster is noise, not harm */
    iot_feedback_init(&f, 1000, 0.25);
    iot_feedback_observe(&f, 0, 600, NULL, 0);
    iot_feedback_observe(&f, 0, 700, NULL, 0);
    CHECK(iot_feedback_observe(&f, 1, 860, NULL, 0) == IOT_FB_KEPT); /* 860 < 700 * 1.25 */

    /* one slow phase, then a good one: the count starts again */
    iot_feedback_init(&f, 1000, 0.25);
    CHECK(iot_feedback_observe(&f, 0, 500, NULL, 0) == IOT_FB_SLOW);
    CHECK(iot_feedback_observe(&f, 0, 1000, NULL, 0) == IOT_FB_NONE);
    CHECK(iot_feedback_observe(&f, 0, 500, NULL, 0) == IOT_FB_SLOW);

    /* the boundary: exactly at the floor is not slow */
    iot_feedback_init(&f, 1000, 0.25);
    CHECK(iot_feedback_observe(&f, 0, 750, NULL, 0) == IOT_FB_NONE);
    /* an invalid margin falls back to 25% */
    iot_feedback_init(&f, 1000, 7);
    CHECK(f.margin == 0.25);
    CHECK_DONE();
}
