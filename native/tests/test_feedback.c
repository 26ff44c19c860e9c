#include "check.h"
#include "iotuner/feedback.h"

static iot_feedback_run next(const iot_feedback *f, uint32_t *mask)
{
    return iot_feedback_next(f, mask);
}

int main(void)
{
    iot_feedback f;
    char note[512];
    uint32_t mask;
    const int one[] = {7}, three[] = {1, 4, 7};

    /* one rule, harmful: two slow phases, then the default settings are clearly faster */
    iot_feedback_init(&f, 1000, 0.25, one, 1);
    CHECK(next(&f, &mask) == IOT_FB_RUN_RULES && mask == 1);
    CHECK(iot_feedback_observe(&f, 900, note, sizeof note) == IOT_FB_NONE); /* within the margin */
    CHECK(iot_feedback_observe(&f, 200, note, sizeof note) == IOT_FB_SLOW);
    CHECK_CONTAINS(note, "below the reference 1000.0");
    CHECK(iot_feedback_observe(&f, 210, note, sizeof note) == IOT_FB_PROBE_NEXT);
    CHECK(next(&f, &mask) == IOT_FB_RUN_PROBE && mask == 0);
    CHECK(iot_feedback_observe(&f, 1000, note, sizeof note) == IOT_FB_ROLLED_BACK);
    CHECK_CONTAINS(note, "rolled back rule 7: ");
    CHECK_CONTAINS(note, "1000.0 MiB/s, against 200.0 and 210.0");
    CHECK(f.rolled_back_now == 1);
    CHECK(next(&f, &mask) == IOT_FB_RUN_DEFAULT && mask == 0);
    CHECK(iot_feedback_observe(&f, 10, note, sizeof note) == IOT_FB_NONE); /* nothing after a roll-back */
    CHECK(next(&f, NULL) == IOT_FB_RUN_DEFAULT);

    /* drift: the machine slowed down, the default is no faster: keep the rules and the reference; the next
     * probe waits for four slow phases, then eight, and no more than sixteen */
    iot_feedback_init(&f, 1000, 0.25, three, 3);
    CHECK(next(&f, &mask) == IOT_FB_RUN_RULES && mask == 7);
    CHECK(iot_feedback_observe(&f, 700, NULL, 0) == IOT_FB_SLOW);
    CHECK(iot_feedback_observe(&f, 650, NULL, 0) == IOT_FB_PROBE_NEXT);
    CHECK(iot_feedback_observe(&f, 690, note, sizeof note) == IOT_FB_KEPT);
    CHECK(f.applied == 7 && f.reference == 1000);
    CHECK_CONTAINS(note, "not the rules'");
    CHECK_CONTAINS(note, "the next probe comes after 4 phases");
    CHECK(next(&f, &mask) == IOT_FB_RUN_RULES && mask == 7);
    for (int i = 0; i < 3; i++)
        CHECK(iot_feedback_observe(&f, 640, NULL, 0) == IOT_FB_SLOW);
    CHECK(iot_feedback_observe(&f, 640, NULL, 0) == IOT_FB_PROBE_NEXT);
    CHECK(iot_feedback_observe(&f, 650, NULL, 0) == IOT_FB_KEPT);
    CHECK(f.patience == 8);
    for (int i = 0; i < 7; i++)
        iot_feedback_observe(&f, 640, NULL, 0);
    CHECK(iot_feedback_observe(&f, 640, NULL, 0) == IOT_FB_PROBE_NEXT);
    iot_feedback_observe(&f, 650, NULL, 0);
    CHECK(f.patience == 16);
    for (int i = 0; i < 15; i++)
        iot_feedback_observe(&f, 640, NULL, 0);
    CHECK(iot_feedback_observe(&f, 640, NULL, 0) == IOT_FB_PROBE_NEXT);
    iot_feedback_observe(&f, 650, NULL, 0);
    CHECK(f.patience == 16);

    /* a probe that met a burst lets a harmful rule stay for a while, not for good: it is looked at again */
    iot_feedback_init(&f, 1000, 0.25, one, 1);
    iot_feedback_observe(&f, 200, NULL, 0);
    iot_feedback_observe(&f, 210, NULL, 0);
    CHECK(iot_feedback_observe(&f, 220, NULL, 0) == IOT_FB_KEPT); /* the burst */
    for (int i = 0; i < 3; i++)
        CHECK(iot_feedback_observe(&f, 200, NULL, 0) == IOT_FB_SLOW);
    CHECK(iot_feedback_observe(&f, 200, NULL, 0) == IOT_FB_PROBE_NEXT);
    CHECK(iot_feedback_observe(&f, 1000, NULL, 0) == IOT_FB_ROLLED_BACK);

    /* a probe only a little faster is noise, not harm */
    iot_feedback_init(&f, 1000, 0.25, three, 3);
    iot_feedback_observe(&f, 600, NULL, 0);
    iot_feedback_observe(&f, 700, NULL, 0);
    CHECK(iot_feedback_observe(&f, 860, NULL, 0) == IOT_FB_KEPT); /* 860 < 700 * 1.25 */

    /* several rules, one harmful: each is tried alone against the probe, only the harmful one goes */
    iot_feedback_init(&f, 1000, 0.25, three, 3);
    iot_feedback_observe(&f, 300, NULL, 0);
    iot_feedback_observe(&f, 320, NULL, 0);
    CHECK(iot_feedback_observe(&f, 1100, note, sizeof note) == IOT_FB_ISOLATE_NEXT);
    CHECK_CONTAINS(note, "try rules 1, 4, 7 one at a time");
    CHECK(next(&f, &mask) == IOT_FB_RUN_ISOLATED && mask == 1);
    CHECK(iot_feedback_observe(&f, 1050, note, sizeof note) == IOT_FB_RULE_KEPT);
    CHECK_CONTAINS(note, "rule 1 alone ran at 1050.0");
    CHECK(next(&f, &mask) == IOT_FB_RUN_ISOLATED && mask == 2);
    CHECK(iot_feedback_observe(&f, 250, note, sizeof note) == IOT_FB_SLOW); /* once may be noise */
    CHECK_CONTAINS(note, "rule 4 alone ran at 250.0 MiB/s, below 1100.0");
    CHECK(next(&f, &mask) == IOT_FB_RUN_PROBE && mask == 0); /* the defaults again, right away */
    CHECK(iot_feedback_observe(&f, 1000, note, sizeof note) == IOT_FB_NONE);
    CHECK_CONTAINS(note, "rule 4 alone is judged against that");
    CHECK(next(&f, &mask) == IOT_FB_RUN_ISOLATED && mask == 2);
    CHECK(iot_feedback_observe(&f, 260, note, sizeof note) == IOT_FB_ROLLED_BACK);
    CHECK_CONTAINS(note, "rolled back rule 4: alone it ran twice below the default settings by more than 25% "
                         "(last 260.0 against 1000.0 MiB/s)");
    CHECK(f.rolled_back_now == 2);
    CHECK(next(&f, &mask) == IOT_FB_RUN_ISOLATED && mask == 4);
    CHECK(iot_feedback_observe(&f, 1000, NULL, 0) == IOT_FB_RULE_KEPT); /* not below the latest defaults */
    CHECK(next(&f, &mask) == IOT_FB_RUN_RULES && mask == (1 | 4)); /* rules 1 and 7 together again */
    CHECK(f.reference == 1000); /* the latest measurement of the defaults */
    CHECK(iot_feedback_observe(&f, 1200, NULL, 0) == IOT_FB_NONE);
    /* a second harm (the kept rules hurt together) rolls back every rule still applied */
    CHECK(iot_feedback_observe(&f, 400, NULL, 0) == IOT_FB_SLOW);
    CHECK(iot_feedback_observe(&f, 420, NULL, 0) == IOT_FB_PROBE_NEXT);
    CHECK(iot_feedback_observe(&f, 1100, note, sizeof note) == IOT_FB_ROLLED_BACK);
    CHECK_CONTAINS(note, "rolled back rules 1, 7: ");
    CHECK(next(&f, &mask) == IOT_FB_RUN_DEFAULT && mask == 0);

    /* every rule harmful alone: all go, the defaults stay */
    iot_feedback_init(&f, 1000, 0.25, three, 2);
    iot_feedback_observe(&f, 300, NULL, 0);
    iot_feedback_observe(&f, 300, NULL, 0);
    CHECK(iot_feedback_observe(&f, 1000, NULL, 0) == IOT_FB_ISOLATE_NEXT);
    CHECK(iot_feedback_observe(&f, 100, NULL, 0) == IOT_FB_SLOW);
    CHECK(iot_feedback_observe(&f, 1000, NULL, 0) == IOT_FB_NONE); /* the defaults again */
    CHECK(iot_feedback_observe(&f, 100, NULL, 0) == IOT_FB_ROLLED_BACK);
    /* a burst: the rule alone and the defaults after it are both slow, the rule's second try is like the
     * defaults': it stays */
    CHECK(next(&f, &mask) == IOT_FB_RUN_ISOLATED && mask == 2);
    CHECK(iot_feedback_observe(&f, 100, NULL, 0) == IOT_FB_SLOW);
    CHECK(iot_feedback_observe(&f, 150, NULL, 0) == IOT_FB_NONE);
    CHECK(iot_feedback_observe(&f, 140, NULL, 0) == IOT_FB_RULE_KEPT);
    CHECK(next(&f, &mask) == IOT_FB_RUN_RULES && mask == 2);
    CHECK(f.reference == 150); /* judged against the latest defaults from here */
    CHECK(iot_feedback_observe(&f, 1000, NULL, 0) == IOT_FB_NONE);
    /* harmful after all, together: the second harm rolls it back */
    iot_feedback_observe(&f, 100, NULL, 0);
    iot_feedback_observe(&f, 100, NULL, 0);
    CHECK(iot_feedback_observe(&f, 1000, NULL, 0) == IOT_FB_ROLLED_BACK);
    CHECK(next(&f, &mask) == IOT_FB_RUN_DEFAULT && f.applied == 0);

    /* one slow phase, then a good one: the count starts again */
    iot_feedback_init(&f, 1000, 0.25, one, 1);
    CHECK(iot_feedback_observe(&f, 500, NULL, 0) == IOT_FB_SLOW);
    CHECK(iot_feedback_observe(&f, 1000, NULL, 0) == IOT_FB_NONE);
    CHECK(iot_feedback_observe(&f, 500, NULL, 0) == IOT_FB_SLOW);

    /* the boundary: exactly at the floor is not slow */
    iot_feedback_init(&f, 1000, 0.25, one, 1);
    CHECK(iot_feedback_observe(&f, 750, NULL, 0) == IOT_FB_NONE);
    /* an invalid margin falls back to 25% */
    iot_feedback_init(&f, 1000, 7, one, 1);
    CHECK(f.margin == 0.25);
    /* no rule set anything: the defaults, nothing to judge */
    iot_feedback_init(&f, 1000, 0.25, NULL, 0);
    CHECK(next(&f, &mask) == IOT_FB_RUN_DEFAULT);
    CHECK(iot_feedback_observe(&f, 10, NULL, 0) == IOT_FB_NONE);
    CHECK_DONE();
}
