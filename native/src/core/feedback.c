/* Smart mode's feedback loop as a pure decision, one phase at a time
 * (iotuner/feedback.h says the rules of the game). */
#include <stdio.h>
#include <string.h>

#include "iotuner/feedback.h"

#define BIT(i) ((uint32_t)1 << (i))

void iot_feedback_init(iot_feedback *f, double learned_mib_s, double margin, const int *rule_ids, int nrules)
{
    memset(f, 0, sizeof *f);
    f->reference = learned_mib_s;
    f->margin = margin > 0 && margin < 1 ? margin : 0.25;
    f->isolated = -1;
    f->patience = 2;
    for (int i = 0; i < nrules && f->nrules < IOT_FEEDBACK_MAX_RULES; i++)
        f->rules[f->nrules++] = rule_ids[i];
    f->applied = f->nrules ? (uint32_t)((1ull << f->nrules) - 1) : 0;
}

iot_feedback_run iot_feedback_next(const iot_feedback *f, uint32_t *mask)
{
    iot_feedback_run run = f->probing          ? IOT_FB_RUN_PROBE
                           : f->isolated >= 0  ? IOT_FB_RUN_ISOLATED
                           : f->applied == 0   ? IOT_FB_RUN_DEFAULT
                                               : IOT_FB_RUN_RULES;
    if (mask)
        *mask = run == IOT_FB_RUN_ISOLATED ? BIT(f->isolated) : run == IOT_FB_RUN_RULES ? f->applied : 0;
    return run;
}

void iot_feedback_rules_text(const iot_feedback *f, uint32_t mask, char *out, size_t outlen)
{
    size_t pos = 0;
    if (outlen)
        out[0] = 0;
    for (int i = 0; i < f->nrules && pos < outlen; i++)
        if (mask & BIT(i))
            pos += (size_t)snprintf(out + pos, outlen - pos, "%s%d", pos ? ", " : "", f->rules[i]);
}

static int lowest_bit(uint32_t m)
{
    return m ? __builtin_ctz(m) : -1;
}

static iot_feedback_action roll_back(iot_feedback *f, uint32_t which, char *note, size_t notelen, const char *why)
{
    char ids[128];
    iot_feedback_rules_text(f, which, ids, sizeof ids);
    f->applied &= ~which;
    f->rolled_back_now = which;
    if (note)
        snprintf(note, notelen, "rolled back rule%s %s: %s", which & (which - 1) ? "s" : "", ids, why);
    return IOT_FB_ROLLED_BACK;
}

/* After a harm, back to running the rules still applied, judged against the defaults the probe measured. */
static void resume(iot_feedback *f)
{
    f->isolated = -1;
    f->regressions = 0;
    f->reference = f->probe;
}

static iot_feedback_action after_probe(iot_feedback *f, double mib_s, char *note, size_t notelen)
{
    char why[256];
    f->probing = 0;
    double better_slow = f->slow[0] > f->slow[1] ? f->slow[0] : f->slow[1];
    if (mib_s < better_slow * (1 + f->margin)) {
        /* The machine's, or the probe hit a burst: keep the reference, so a harm is looked at again, but wait
         * for twice as many slow phases before the next probe, so a lasting slowdown costs few of them. */
        f->regressions = 0;
        if (f->patience < IOT_FEEDBACK_MAX_PATIENCE)
            f->patience *= 2;
        if (note)
            snprintf(note, notelen, "the default settings ran no faster (%.1f MiB/s against %.1f and %.1f under "
                     "the rules), so the slowdown was not the rules': they stay; the next probe comes after %d "
                     "phases below the reference", mib_s, f->slow[0], f->slow[1], f->patience);
        return IOT_FB_KEPT;
    }
    f->probe = mib_s;
    snprintf(why, sizeof why, "with the default settings this phase ran at %.1f MiB/s, against %.1f and %.1f MiB/s "
             "under the rules", mib_s, f->slow[0], f->slow[1]);
    if (++f->harms > 1 || !(f->applied & (f->applied - 1))) {
        resume(f);
        return roll_back(f, f->applied, note, notelen, why);
    }
    f->untried = f->applied;
    f->isolated = lowest_bit(f->untried);
    if (note) {
        char ids[128];
        iot_feedback_rules_text(f, f->applied, ids, sizeof ids);
        snprintf(note, notelen, "%s: the next phases try rules %s one at a time", why, ids);
    }
    return IOT_FB_ISOLATE_NEXT;
}

/* A rule tried alone and slower than the probe beyond the margin gets a
 * second look, paired like the first: a phase with the default settings
 * right away (the machine changes over minutes), then the rule alone again,
 * judged against that. Rolled back only if it is slower both times. */
static iot_feedback_action after_isolated(iot_feedback *f, double mib_s, char *note, size_t notelen)
{
    int i = f->isolated;
    double floor = f->probe * (1 - f->margin);
    if (mib_s < floor && !f->isolated_slow) {
        f->isolated_slow = 1;
        f->probing = 1;
        if (note)
            snprintf(note, notelen, "rule %d alone ran at %.1f MiB/s, below %.1f MiB/s with the default settings by "
                     "more than %.0f%%: the default settings run again, then the rule alone once more", f->rules[i],
                     mib_s, f->probe, f->margin * 100);
        return IOT_FB_SLOW;
    }
    f->untried &= ~BIT(i);
    f->isolated = lowest_bit(f->untried);
    iot_feedback_action a;
    if (mib_s < floor) {
        char why[200];
        snprintf(why, sizeof why, "alone it ran twice below the default settings by more than %.0f%% (last %.1f "
                 "against %.1f MiB/s)", f->margin * 100, mib_s, f->probe);
        a = roll_back(f, BIT(i), note, notelen, why);
    } else {
        if (note)
            snprintf(note, notelen, "rule %d alone ran at %.1f MiB/s, not below %.1f MiB/s with the default settings "
                     "by more than %.0f%%: it stays", f->rules[i], mib_s, f->probe, f->margin * 100);
        a = IOT_FB_RULE_KEPT;
    }
    f->isolated_slow = 0;
    if (f->isolated < 0)
        resume(f);
    return a;
}

/* The default settings again, between two tries of one rule alone: the new reference for its second try. */
static iot_feedback_action after_reprobe(iot_feedback *f, double mib_s, char *note, size_t notelen)
{
    f->probing = 0;
    f->probe = mib_s;
    if (note)
        snprintf(note, notelen, "the default settings ran at %.1f MiB/s: rule %d alone is judged against that",
                 mib_s, f->rules[f->isolated]);
    return IOT_FB_NONE;
}

iot_feedback_action iot_feedback_observe(iot_feedback *f, double mib_s, char *note, size_t notelen)
{
    if (note && notelen)
        note[0] = 0;
    f->rolled_back_now = 0;
    if (f->probing)
        return f->isolated >= 0 ? after_reprobe(f, mib_s, note, notelen) : after_probe(f, mib_s, note, notelen);
    if (f->isolated >= 0)
        return after_isolated(f, mib_s, note, notelen);
    if (!f->applied)
        return IOT_FB_NONE; /* the defaults: nothing left to judge */
    if (mib_s >= f->reference * (1 - f->margin)) {
        f->regressions = 0;
        return IOT_FB_NONE;
    }
    f->slow[0] = f->slow[1];
    f->slow[1] = mib_s;
    if (++f->regressions < f->patience) {
        if (note)
            snprintf(note, notelen, "%.1f MiB/s is below the reference %.1f MiB/s by more than %.0f%%", mib_s,
                     f->reference, f->margin * 100);
        return IOT_FB_SLOW;
    }
    f->probing = 1;
    if (note)
        snprintf(note, notelen, "%d phases in a row below the reference %.1f MiB/s by more than %.0f%%: the next "
                 "phase is a probe with the default settings", f->regressions, f->reference, f->margin * 100);
    return IOT_FB_PROBE_NEXT;
}
