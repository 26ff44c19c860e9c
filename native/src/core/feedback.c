/* Smart mode's feedback loop as a pure decision, one phase at a time. */
#include <stdio.h>
#include <string.h>

#include "iotuner/smart.h"

void iot_feedback_init(iot_feedback *f, double learned_mib_s, double margin)
{
    memset(f, 0, sizeof *f);
    f->reference = learned_mib_s;
    f->margin = margin > 0 && margin < 1 ? margin : 0.25;
}

iot_feedback_action iot_feedback_observe(iot_feedback *f, int probe, double mib_s, char *note, size_t notelen)
{
    if (note && notelen)
        note[0] = 0;
    if (f->rolled_back)
        return IOT_FB_NONE;
    if (probe) {
        f->probing = 0;
        double better_slow = f->slow[0] > f->slow[1] ? f->slow[0] : f->slow[1];
        if (mib_s >= better_slow * (1 + f->margin)) {
            f->rolled_back = 1;
            if (note)
                snprintf(note, notelen, "with the default settings this phase ran at %.1f MiB/s, against %.1f and "
                         "%.1f MiB/s under the rules", mib_s, f->slow[0], f->slow[1]);
            return IOT_FB_ROLLED_BACK;
        }
        f->regressions = 0;
        f->reference = mib_s;
        if (note)
            snprintf(note, notelen, "the default settings ran no faster (%.1f MiB/s), so the slowdown was not the "
                     "rules'; %.1f MiB/s is the new reference", mib_s, mib_s);
        return IOT_FB_KEPT;
    }
    if (mib_s >= f->reference * (1 - f->margin)) {
        f->regressions = 0;
        return IOT_FB_NONE;
    }
    f->slow[0] = f->slow[1];
    f->slow[1] = mib_s;
    if (++f->regressions < 2) {
        if (note)
            snprintf(note, notelen, "%.1f MiB/s is below the reference %.1f MiB/s by more than %.0f%%", mib_s,
                     f->reference, f->margin * 100);
        return IOT_FB_SLOW;
    }
    f->probing = 1;
    if (note)
        snprintf(note, notelen, "two phases below the reference %.1f MiB/s by more than %.0f%%: the next phase is a "
                 "probe with the default settings", f->reference, f->margin * 100);
    return IOT_FB_PROBE_NEXT;
}
