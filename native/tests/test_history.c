/* Which earlier phase a phase repeats: the phase history's REPEAT and
 * CONTEXT methods, and the choice of method by each one's record. The
 * history is driven here as smart mode drives it: before each phase, find
 * the candidates and choose; after it, score them and add the phase. */
#include "check.h"
#include "iotuner/grammar.h"

enum { WRITE = 1, READ = 2 }; /* states: a write (created) and a read (opened read-only) */

typedef struct {
    iot_phase_history h;
    uint64_t pos;
    int right, predicted; /* phases the chosen method got right, phases predicted */
    iot_method last;      /* the method chosen for the latest phase */
} run;

/* One phase of `state` whose calls hash to `shape`: predicted by the chosen method, then scored and added
 * (taken into the grammar when taken_in). Phases are 10 calls long at increasing grammar positions. */
static void phase(run *r, uint64_t state, uint64_t shape, int taken_in)
{
    int tried[IOT_METHODS] = {0};
    uint64_t hash[IOT_METHODS] = {0};
    for (int m = IOT_METHOD_REPEAT; m <= IOT_METHOD_CONTEXT; m++) {
        iot_phase_seen p;
        tried[m] = iot_history_find(&r->h, (iot_method)m, state, &p);
        hash[m] = tried[m] ? p.shape : 0;
        if (tried[m])
            CHECK(p.len > 0 && p.state == state); /* only phases whose calls the grammar holds */
    }
    iot_method order[IOT_METHODS] = {IOT_METHOD_RULE, IOT_METHOD_REPEAT, IOT_METHOD_CONTEXT};
    r->last = iot_history_choose(&r->h, tried, order);
    if (r->last != IOT_METHODS) {
        r->predicted++;
        r->right += hash[r->last] == shape;
    }
    iot_history_score(&r->h, tried, hash, shape);
    iot_phase_seen seen = {state, shape, r->pos, taken_in ? 10 : 0};
    iot_history_add(&r->h, &seen);
    r->pos += 10;
}

static void steady_phases_repeat(void)
{
    run r = {.last = IOT_METHODS};
    iot_history_init(&r.h);
    for (int i = 0; i < 10; i++)
        phase(&r, WRITE, 100, i < 2);
    CHECK(r.predicted == 9 && r.right == 9);
    CHECK(r.last == IOT_METHOD_REPEAT); /* both right: the first in the preference */
}

/* A full and a light checkpoint in turn, opened alike: REPEAT predicts the other one every time. Once
 * CONTEXT has seen one cycle it predicts each phase, and the choice goes to it. */
static void alternating_phases_follow_their_cycle(void)
{
    run r = {.last = IOT_METHODS};
    iot_history_init(&r.h);
    int right_after_warmup = 0;
    for (int i = 0; i < 12; i++) {
        int before = r.right;
        phase(&r, WRITE, i % 2 ? 200 : 100, 1);
        if (i >= 4)
            right_after_warmup += r.right > before;
    }
    CHECK(right_after_warmup == 8);
    CHECK(r.last == IOT_METHOD_CONTEXT);
    /* REPEAT was tried every phase and was always wrong */
    CHECK(r.h.wrong[IOT_METHOD_REPEAT] == 0xff);
}

/* Writes and reads of one file interleaved (an IOR-like benchmark): REPEAT keeps the states apart, so
 * each phase is predicted by the last one of its own kind. */
static void states_stay_apart(void)
{
    run r = {.last = IOT_METHODS};
    iot_history_init(&r.h);
    for (int i = 0; i < 6; i++) {
        phase(&r, WRITE, 300, 1);
        phase(&r, READ, 400, 1);
    }
    CHECK(r.predicted == 10 && r.right == 10);
    iot_phase_seen p;
    CHECK(iot_history_find(&r.h, IOT_METHOD_REPEAT, READ, &p) && p.shape == 400);
    CHECK(iot_history_find(&r.h, IOT_METHOD_REPEAT, 3, &p) == 0); /* a state never seen */
}

/* Phases past the first few are not taken into the grammar; their shape still counts, and the calls come
 * from an earlier phase of the same shape that was taken in. */
static void calls_come_from_a_taken_in_phase(void)
{
    iot_phase_history h;
    iot_history_init(&h);
    iot_phase_seen a = {WRITE, 100, 0, 10}, b = {WRITE, 200, 10, 10};
    iot_phase_seen a2 = {WRITE, 100, 20, 0}, b2 = {WRITE, 200, 30, 0}; /* not taken in */
    iot_history_add(&h, &a);
    iot_history_add(&h, &b);
    iot_history_add(&h, &a2);
    iot_history_add(&h, &b2);
    iot_phase_seen p;
    CHECK(iot_history_find(&h, IOT_METHOD_REPEAT, WRITE, &p) && p.shape == 200 && p.pos == 10);
    CHECK(iot_history_find(&h, IOT_METHOD_CONTEXT, WRITE, &p) && p.shape == 100 && p.pos == 0);
    /* a shape the grammar never took in: REPEAT falls back on the latest taken-in phase of the state */
    iot_phase_seen c = {WRITE, 999, 40, 0};
    iot_history_add(&h, &c);
    CHECK(iot_history_find(&h, IOT_METHOD_REPEAT, WRITE, &p) && p.pos == 10);
    CHECK(iot_history_find(&h, IOT_METHOD_CONTEXT, WRITE, &p) == 0); /* nothing ever followed 999 */
}

/* A method that fails is dropped after a phase and taken back when it is right again; the ring forgets
 * what is older than IOT_HISTORY_PHASES phases. */
static void the_choice_follows_the_record(void)
{
    iot_phase_history h;
    iot_history_init(&h);
    int all[IOT_METHODS] = {1, 1, 1};
    iot_method order[IOT_METHODS] = {IOT_METHOD_RULE, IOT_METHOD_REPEAT, IOT_METHOD_CONTEXT};
    uint64_t predicted[IOT_METHODS] = {1, 2, 3};
    CHECK(iot_history_choose(&h, all, order) == IOT_METHOD_RULE); /* no record: the preference */
    iot_history_score(&h, all, predicted, 2);                    /* REPEAT right, the others wrong */
    CHECK(iot_history_choose(&h, all, order) == IOT_METHOD_REPEAT);
    for (int i = 0; i < 3; i++)
        iot_history_score(&h, all, predicted, 1); /* then RULE, three times */
    CHECK(iot_history_choose(&h, all, order) == IOT_METHOD_RULE);
    int only_context[IOT_METHODS] = {0, 0, 1};
    CHECK(iot_history_choose(&h, only_context, order) == IOT_METHOD_CONTEXT);
    int none[IOT_METHODS] = {0, 0, 0};
    CHECK(iot_history_choose(&h, none, order) == IOT_METHODS);
    for (uint64_t k = 0; k < 3 * IOT_HISTORY_PHASES; k++) {
        iot_phase_seen p = {k < IOT_HISTORY_PHASES ? READ : WRITE, k, k * 10, 10};
        iot_history_add(&h, &p);
    }
    iot_phase_seen p;
    CHECK(iot_history_find(&h, IOT_METHOD_REPEAT, READ, &p) == 0); /* forgotten */
    CHECK(iot_history_find(&h, IOT_METHOD_REPEAT, WRITE, &p) && p.shape == 3 * IOT_HISTORY_PHASES - 1);
    CHECK_STR(iot_method_name(IOT_METHOD_CONTEXT), "context");
    CHECK(iot_calls_hash((const int[]){1, 2}, 2) != iot_calls_hash((const int[]){2, 1}, 2));
}

int main(void)
{
    steady_phases_repeat();
    alternating_phases_follow_their_cycle();
    states_stay_apart();
    calls_come_from_a_taken_in_phase();
    the_choice_follows_the_record();
    CHECK_DONE();
}
