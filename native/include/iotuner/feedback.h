/* Smart mode's feedback loop (not in SmartIO: its future work): which of the
 * rules that set knobs the next phase of a file identity runs with, judged
 * one finished phase at a time against a reference. Pure C11. */
#ifndef IOTUNER_FEEDBACK_H
#define IOTUNER_FEEDBACK_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Feedback (not in SmartIO: its future work)
 *
 * Decides, one finished phase at a time, which of the rules that set knobs
 * the next phase of an identity runs with. Each optimized phase's bandwidth
 * is compared with a reference, at first the learned phase's (the
 * application's own settings):
 *  1. slower than the reference by more than the margin twice in a row: the
 *     next phase is a probe with the default settings, to tell harm from a
 *     machine that slowed down;
 *  2. the probe no faster than the better of those two by the margin: the
 *     slowdown was the machine's (or the probe met a burst of it), the rules
 *     stay and the reference too, but the next probe waits for twice as many
 *     phases in a row below it (4, 8, up to 16): a harm is looked at again,
 *     and a lasting slowdown costs few probes;
 *  3. the probe faster: the rules did harm. With one rule applied, it is
 *     rolled back. With several, each is tried alone in the next phases and
 *     judged against the probe. One slower than it by the margin gets a
 *     second look, paired the same way: the default settings run again,
 *     then the rule alone, judged against that new measurement; slower
 *     again, it is rolled back. The others stay and run together again. A
 *     second confirmed harm rolls back every rule still applied (rules can
 *     hurt only together).
 * Rolled-back rules stay rolled back for the rest of the run. */
#define IOT_FEEDBACK_MAX_RULES 32 /* rules that set knobs (at most one per setting) */
#define IOT_FEEDBACK_MAX_PATIENCE 16 /* most phases in a row below the reference before a probe */

typedef enum {
    IOT_FB_NONE,        /* nothing to report */
    IOT_FB_SLOW,        /* one phase below the reference */
    IOT_FB_PROBE_NEXT,  /* two in a row: the next phase runs with the default settings */
    IOT_FB_KEPT,        /* the probe was no faster: the rules stay */
    IOT_FB_ISOLATE_NEXT,/* harm confirmed with several rules: the next phases try each alone */
    IOT_FB_RULE_KEPT,   /* a rule tried alone did no harm */
    IOT_FB_ROLLED_BACK  /* one or more rules rolled back (see rolled_back_now) */
} iot_feedback_action;

typedef enum {
    IOT_FB_RUN_RULES,    /* the applied rules (mask) */
    IOT_FB_RUN_PROBE,    /* the default settings, to judge the rules */
    IOT_FB_RUN_ISOLATED, /* one rule alone (mask has one bit) */
    IOT_FB_RUN_DEFAULT   /* every rule rolled back */
} iot_feedback_run;

typedef struct {
    double reference, margin;
    int nrules;
    int rules[IOT_FEEDBACK_MAX_RULES]; /* rule ids; bit i of a mask is rules[i] */
    uint32_t applied;                   /* rules still in force */
    uint32_t untried;                   /* rules still to try alone */
    uint32_t rolled_back_now;           /* rules the last observation rolled back */
    int isolated;                       /* index of the rule tried alone now, -1 none */
    int isolated_slow;                  /* it ran below the probe once: the next probe and try are its second look */
    int probing, harms, regressions;
    int patience;     /* phases in a row below the reference that make the next one a probe */
    double slow[2];   /* the last two phases below the reference */
    double probe;     /* the probe's bandwidth: what rules tried alone are judged against */
} iot_feedback;

/* learned_mib_s: the learned phase's bandwidth; rule_ids: the rules that set
 * knobs (at most IOT_FEEDBACK_MAX_RULES are tracked); an invalid margin
 * (not in (0, 1)) falls back to 0.25. */
void iot_feedback_init(iot_feedback *f, double learned_mib_s, double margin, const int *rule_ids, int nrules);
/* What the next phase runs, and with which rules (bit i = rules[i]). */
iot_feedback_run iot_feedback_next(const iot_feedback *f, uint32_t *mask);
/* The phase that ran as iot_feedback_next said has finished at mib_s. note
 * (may be NULL) says what was decided and why, with the numbers. */
iot_feedback_action iot_feedback_observe(iot_feedback *f, double mib_s, char *note, size_t notelen);
/* "1, 7": the ids of the rules in mask. */
void iot_feedback_rules_text(const iot_feedback *f, uint32_t mask, char *out, size_t outlen);

#ifdef __cplusplus
}
#endif
#endif
