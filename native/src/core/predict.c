/* Prediction of the next I/O calls from the grammar (SmartIO, section
 * 3.1.2), and the scoring of predictions against what then happens. Uses
 * only the grammar's public interface. */
#include "iotuner/grammar.h"

#include <stdlib.h>
#include <string.h>

/* "Rules that begin with the current symbol" are read as rules whose
 * expansion begins with it: a rule whose right-hand side starts with
 * another rule begins, as a call sequence, with that rule's first call. Read
 * literally (the right-hand side's first symbol is the terminal), only the
 * innermost rules would qualify, and those are seldom referenced from S, so
 * ranking by frequency in S would have nothing to rank. */
int iot_grammar_predict_rule(const iot_grammar *g, int terminal, iot_prediction *out)
{
    iot_prediction p = {-1, 0, 0, 0};
    iot_rule_info best = {0}, info;
    /* The list runs newest rule first and only a strictly better candidate
     * replaces the best, so a full tie goes to the most recently created. */
    for (int r = iot_grammar_first_starting_with(g, terminal); r >= 0; r = iot_grammar_next_starting_with(g, r)) {
        if (iot_grammar_rule_info(g, r, &info))
            continue;
        p.candidates++;
        if (p.rule < 0 || info.uses_in_start > best.uses_in_start ||
            (info.uses_in_start == best.uses_in_start && info.last_seen > best.last_seen)) {
            best = info;
            p.rule = r;
        }
    }
    if (p.rule >= 0) {
        p.uses_in_start = best.uses_in_start;
        p.length = best.expansion_length - 1;
    }
    if (out)
        *out = p;
    return p.rule >= 0;
}

size_t iot_grammar_predict(const iot_grammar *g, int terminal, int *out, size_t max)
{
    iot_prediction p;
    if (!iot_grammar_predict_rule(g, terminal, &p))
        return 0;
    return iot_grammar_expand(g, p.rule, 1, out, max); /* from 1: the trigger itself is not predicted */
}

size_t iot_grammar_predict_phase(const iot_grammar *g, int terminal, int *out, size_t max)
{
    iot_prediction p;
    if (!iot_grammar_predict_rule(g, terminal, &p))
        return 0;
    /* The chosen rule may span many phases: expand in growing pieces and
     * stop at the trigger's next occurrence. */
    size_t w = 0, piece = 32;
    while (w < max) {
        size_t want = max - w < piece ? max - w : piece;
        size_t k = iot_grammar_expand(g, p.rule, 1 + (uint64_t)w, out + w, want);
        for (size_t i = w; i < w + k; i++)
            if (out[i] == terminal)
                return i;
        w += k;
        if (k < want)
            break;
        piece *= 2;
    }
    return w;
}

size_t iot_grammar_predict_repeat(const iot_grammar *g, int terminal, int *out, size_t max)
{
    uint64_t prev = 0, last = 0, from, to;
    int seen = iot_grammar_last_seen(g, terminal, &prev, &last);
    if (!seen)
        return 0;
    if (last + 1 == iot_grammar_length(g)) { /* the trigger was just appended */
        if (seen < 2)
            return 0;
        from = prev + 1, to = last;
    } else {
        from = last + 1, to = iot_grammar_length(g);
    }
    if (to - from < max)
        max = (size_t)(to - from);
    return iot_grammar_expand(g, 0, from, out, max);
}

/* ---- the phase history ---- */

const char *iot_method_name(iot_method m)
{
    static const char *const names[IOT_METHODS] = {"rule", "repeat", "context"};
    return m < IOT_METHODS ? names[m] : "none";
}

uint64_t iot_calls_hash(const int *terminals, size_t n)
{
    uint64_t h = IOT_CALLS_HASH_INIT;
    for (size_t i = 0; i < n; i++)
        h = iot_calls_hash_add(h, terminals[i]);
    return h;
}

void iot_history_init(iot_phase_history *h)
{
    memset(h, 0, sizeof *h);
}

void iot_history_add(iot_phase_history *h, const iot_phase_seen *p)
{
    h->seen[h->n++ % IOT_HISTORY_PHASES] = *p;
}

/* Phase k (k < n, within the ring). */
static const iot_phase_seen *seen_at(const iot_phase_history *h, uint64_t k)
{
    return &h->seen[k % IOT_HISTORY_PHASES];
}

static uint64_t oldest(const iot_phase_history *h)
{
    return h->n > IOT_HISTORY_PHASES ? h->n - IOT_HISTORY_PHASES : 0;
}

/* The latest taken-in phase of state with this shape (any shape: match_shape 0). */
static int taken_in(const iot_phase_history *h, uint64_t state, int match_shape, uint64_t shape, iot_phase_seen *out)
{
    for (uint64_t k = h->n; k-- > oldest(h);) {
        const iot_phase_seen *p = seen_at(h, k);
        if (p->state == state && p->len > 0 && (!match_shape || p->shape == shape)) {
            *out = *p;
            return 1;
        }
    }
    return 0;
}

int iot_history_find(const iot_phase_history *h, iot_method m, uint64_t state, iot_phase_seen *out)
{
    if (!h->n)
        return 0;
    if (m == IOT_METHOD_REPEAT) {
        for (uint64_t k = h->n; k-- > oldest(h);)
            if (seen_at(h, k)->state == state)
                return taken_in(h, state, 1, seen_at(h, k)->shape, out) || taken_in(h, state, 0, 0, out);
        return 0;
    }
    if (m != IOT_METHOD_CONTEXT || h->n < 2)
        return 0;
    /* the shapes that followed a phase like the latest one; the most frequent wins, ties the latest */
    const iot_phase_seen *latest = seen_at(h, h->n - 1);
    uint64_t best = 0;
    int best_count = 0;
    for (uint64_t k = h->n - 1; k-- > oldest(h);) {
        const iot_phase_seen *before = seen_at(h, k), *after = seen_at(h, k + 1);
        if (before->shape != latest->shape || before->state != latest->state || after->state != state)
            continue;
        int count = 0;
        for (uint64_t j = h->n - 1; j-- > oldest(h);)
            count += seen_at(h, j)->shape == latest->shape && seen_at(h, j)->state == latest->state &&
                     seen_at(h, j + 1)->state == state && seen_at(h, j + 1)->shape == after->shape;
        if (count > best_count) {
            best_count = count;
            best = after->shape;
        }
    }
    return best_count > 0 && taken_in(h, state, 1, best, out);
}


void iot_history_score(iot_phase_history *h, const int *valid, const uint64_t *predicted, uint64_t shape)
{
    for (int m = 0; m < IOT_METHODS; m++) {
        if (!valid[m])
            continue;
        h->wrong[m] = (uint8_t)(h->wrong[m] << 1 | (predicted[m] != shape));
    }
}

iot_method iot_history_choose(const iot_phase_history *h, const int *available, const iot_method *preference)
{
    iot_method best = IOT_METHODS;
    int best_score = 0;
    for (int i = 0; i < IOT_METHODS; i++) {
        iot_method m = preference[i];
        if (m >= IOT_METHODS || !available[m])
            continue;
        /* distrust by failures only: a method available at fewer phases (the rule) is not outvoted by one
         * that was merely tried more often */
        int score = -__builtin_popcount(h->wrong[m] & IOT_HISTORY_RECENT);
        if (best == IOT_METHODS || score > best_score) {
            best = m;
            best_score = score;
        }
    }
    return best;
}

/* ---- scoring ---- */

void iot_predcheck_init(iot_predcheck *c)
{
    memset(c, 0, sizeof *c);
    c->window = 8;
}

void iot_predcheck_free(iot_predcheck *c)
{
    free(c->expected);
    c->expected = NULL;
    c->len = c->cap = c->pos = 0;
}

/* Closes the current prediction: predicted calls whose turn has come (one
 * per observed call) are missed, later ones were never put to the test. */
static void supersede(iot_predcheck *c)
{
    while (c->pos < c->len && c->pos < c->seen) {
        c->misses++;
        c->pos++;
    }
    c->superseded += c->len - c->pos;
    c->len = c->pos = 0;
    c->seen = 0;
}

int iot_predcheck_begin(iot_predcheck *c, const int *predicted, size_t n)
{
    supersede(c);
    if (!n)
        return 0;
    if (n > c->cap) {
        int *e = realloc(c->expected, n * sizeof *e);
        if (!e)
            return -1;
        c->expected = e;
        c->cap = n;
    }
    memcpy(c->expected, predicted, n * sizeof *predicted);
    c->len = n;
    c->predictions++;
    return 0;
}

void iot_predcheck_observe(iot_predcheck *c, int terminal)
{
    if (c->pos >= c->len)
        return; /* nothing predicted: not scored */
    c->seen++;
    size_t end = c->len - c->pos > c->window ? c->pos + c->window + 1 : c->len;
    size_t j = c->pos;
    while (j < end && c->expected[j] != terminal)
        j++;
    if (j < end) {
        c->misses += j - c->pos; /* skipped over: they did not occur */
        c->hits++;
        c->pos = j + 1;
    } else {
        c->unpredicted++;
    }
    /* Predicted call i is due at observed call i + 1 and may come up to
     * window calls late. */
    while (c->pos < c->len && c->seen > c->pos + 1 + c->window) {
        c->misses++;
        c->pos++;
    }
}

void iot_predcheck_finish(iot_predcheck *c)
{
    c->misses += c->len - c->pos;
    c->len = c->pos = 0;
    c->seen = 0;
}

double iot_predcheck_hit_fraction(const iot_predcheck *c)
{
    uint64_t scored = c->hits + c->misses;
    return scored ? (double)c->hits / (double)scored : -1.0;
}

void iot_predcheck_write_json(const iot_predcheck *c, iot_buf *b, const char *key)
{
    iot_jw_begin_object(b, key);
    iot_jw_int(b, "predictions", (int64_t)c->predictions);
    iot_jw_int(b, "hits", (int64_t)c->hits);
    iot_jw_int(b, "misses", (int64_t)c->misses);
    double f = iot_predcheck_hit_fraction(c);
    if (f < 0)
        iot_jw_null(b, "hit_fraction");
    else
        iot_jw_double(b, "hit_fraction", f);
    iot_jw_int(b, "superseded", (int64_t)c->superseded);
    iot_jw_int(b, "unpredicted", (int64_t)c->unpredicted);
    iot_jw_end_object(b);
}
