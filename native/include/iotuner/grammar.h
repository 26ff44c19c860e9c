/* Grammar-based I/O call prediction (SmartIO, section 3.1): a call-signature
 * table that turns each intercepted call into a terminal id, an incremental
 * Sequitur grammar of one rank's terminals, and the prediction of the calls
 * that follow a given one. Pure C11, no MPI, no HDF5, no global state: one
 * table and one grammar per rank (or per thread); none of it is thread-safe
 * by itself, and read-only calls may run concurrently only while nothing
 * appends. */
#ifndef IOTUNER_GRAMMAR_H
#define IOTUNER_GRAMMAR_H

#include <stddef.h>
#include <stdint.h>

#include "iotuner/json.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Largest terminal id the grammar takes (ids are dense: 0, 1, 2, ...). */
#define IOT_GRAMMAR_MAX_TERMINAL ((1 << 30) - 1)
/* Most arguments one signature keeps. */
#define IOT_SIG_MAX_ARGS 64

/* Writes a readable name of a terminal (for dumps). ctx is the caller's. */
typedef void (*iot_terminal_namer)(void *ctx, int terminal, char *buf, size_t buflen);

/* ---- call-signature table ---- */

/* Interns (function, arguments) into dense terminal ids. The argument at
 * offset_index (the file offset of a read or write) is not part of the key,
 * so sequential calls of the same shape share one id; the caller keeps the
 * offsets (the grammar only sees ids). Other arguments that vary from call
 * to call (buffers, timestamps, per-step file names) must be left out or
 * normalized by the caller, or every call becomes a new terminal and nothing
 * repeats. Look-ups are O(1) expected (open addressing). */
typedef struct iot_sigtab iot_sigtab;

typedef struct {
    const char *func;
    const int64_t *args; /* nargs values; the one at offset_index reads 0 */
    int nargs;
    int offset_index;    /* -1 if the signature has no offset */
    uint64_t calls;      /* how many interned calls had this signature */
} iot_sig;

iot_sigtab *iot_sigtab_new(void); /* NULL if out of memory */
void iot_sigtab_free(iot_sigtab *t);
/* Terminal id (>= 0) of the call, a new one (the next dense id) if unseen;
 * -1 on bad arguments (func NULL, nargs outside 0..IOT_SIG_MAX_ARGS, args
 * NULL with nargs > 0, offset_index outside -1..nargs-1) or out of memory. */
int iot_sig_intern(iot_sigtab *t, const char *func, const int64_t *args, int nargs, int offset_index);
/* Id of the call if already interned, else -1; counts nothing. */
int iot_sig_find(const iot_sigtab *t, const char *func, const int64_t *args, int nargs, int offset_index);
size_t iot_sigtab_count(const iot_sigtab *t);
/* Describes terminal id (pointers stay valid until the table is freed); 0, or -1 if unknown. */
int iot_sigtab_get(const iot_sigtab *t, int id, iot_sig *out);
/* "H5Dwrite(3, 4096, offset)"; "?7" for an unknown id. */
void iot_sig_format(const iot_sigtab *t, int id, char *out, size_t outlen);
/* iot_terminal_namer over a table (ctx is the iot_sigtab). */
void iot_sig_namer(void *sigtab, int terminal, char *buf, size_t buflen);
/* [{"id", "func", "args" (null at the offset), "offset_arg", "calls"}, ...] */
void iot_sigtab_write_json(const iot_sigtab *t, iot_buf *b, const char *key);

/* ---- Sequitur grammar ---- */

/* Built one terminal at a time, keeping Sequitur's two invariants after
 * every append: digram uniqueness (no pair of adjacent symbols occurs twice,
 * overlapping "aaa" aside) and rule utility (every rule but the start rule S
 * is referenced at least twice). Appends are amortized O(1) (linear in
 * total) and never recurse. Memory is linear in the grammar's size: about
 * 16 bytes per right-hand-side symbol, 16-32 per digram-table entry and 40
 * per rule, plus 20 bytes per terminal id. For repetitive input that size
 * grows like the log of the input (a periodic stream of n calls needs
 * O(log n) rules); for input that never repeats it is linear in the number
 * of appended terminals. iot_grammar_memory() says how much is held, so a
 * caller can stop (or start over) past a budget.
 *
 * Rules have small integer ids; S is 0. Ids of deleted rules are reused.
 * A right-hand-side symbol s is a terminal if s >= 0, else a reference to
 * rule IOT_GSYM_RULE(s). */
typedef struct iot_grammar iot_grammar;

#define IOT_GSYM_IS_RULE(s) ((s) < 0)
#define IOT_GSYM_RULE(s) (-(s) - 1)

typedef struct {
    size_t uses;               /* references from right-hand sides (0 for S) */
    size_t uses_in_start;      /* of which in S's right-hand side */
    uint64_t expansion_length; /* terminals it derives */
    int first_terminal;        /* first of them (-1 for an empty S) */
    uint64_t last_seen;        /* input length when the rule was created or last put into S */
} iot_rule_info;

iot_grammar *iot_grammar_new(void); /* NULL if out of memory */
void iot_grammar_free(iot_grammar *g);
/* Appends one terminal (0..IOT_GRAMMAR_MAX_TERMINAL). Returns 0, or -1 for
 * a terminal out of range or when memory ran out; after running out the
 * grammar stops learning (every later append returns -1) but stays a valid
 * grammar of what it took, for reading and prediction. */
int iot_grammar_append(iot_grammar *g, int terminal);
int iot_grammar_failed(const iot_grammar *g);     /* ran out of memory */
uint64_t iot_grammar_length(const iot_grammar *g); /* terminals appended (= expansion of S) */
size_t iot_grammar_rule_count(const iot_grammar *g);   /* live rules, S included */
size_t iot_grammar_symbol_count(const iot_grammar *g); /* right-hand-side symbols, all rules */
size_t iot_grammar_memory(const iot_grammar *g);       /* bytes held */

/* Ids of the live rules, ascending (S first); returns how many there are,
 * writing at most max. */
size_t iot_grammar_rule_ids(const iot_grammar *g, int *out, size_t max);
/* O(1); 0, or -1 if no such rule. */
int iot_grammar_rule_info(const iot_grammar *g, int rule, iot_rule_info *out);
/* Right-hand side of a rule (symbols as above); returns its length, writing
 * at most max (out may be NULL with max 0). O(length). */
size_t iot_grammar_rhs(const iot_grammar *g, int rule, int *out, size_t max);
/* Terminals from..from+max-1 of a rule's expansion, iteratively (no
 * recursion; deep grammars use a heap stack); returns how many it wrote:
 * fewer than max at the end of the expansion, 0 for an unknown rule (and
 * on out of memory, at a depth beyond 64 only). Finding `from` walks each
 * right-hand side on the way down from its nearer end (expansion lengths
 * are kept per rule), so a long expansion can be read in pieces, and the
 * latest calls cheaply. */
size_t iot_grammar_expand(const iot_grammar *g, int rule, uint64_t from, int *out, size_t max);
/* Positions (0-based, in the input) of the last occurrence of terminal and
 * the one before; returns how many of the two exist (0, 1 or 2). */
int iot_grammar_last_seen(const iot_grammar *g, int terminal, uint64_t *prev, uint64_t *last);
/* Rules other than S whose expansion begins with terminal, most recently
 * created first; -1 at the end:
 *   for (int r = iot_grammar_first_starting_with(g, t); r >= 0; r = iot_grammar_next_starting_with(g, r)) */
int iot_grammar_first_starting_with(const iot_grammar *g, int terminal);
int iot_grammar_next_starting_with(const iot_grammar *g, int rule);

/* Checks everything: well-formed rules, reference counts, rule utility,
 * digram uniqueness, the digram index, expansion lengths. 0 if all hold;
 * else -1 and the first violation in err. For tests and debugging:
 * O(grammar size) time and memory. */
int iot_grammar_check(const iot_grammar *g, char *err, size_t errlen);
/* "S -> a R1 d R1\nR1 -> b c\n": rules numbered R1, R2, ... in the order
 * they are first met reading from S; terminals through namer (NULL: the
 * id in decimal). Caller frees; NULL if out of memory. */
char *iot_grammar_format(const iot_grammar *g, iot_terminal_namer namer, void *ctx);
/* {"length", "rules": [{"name", "id", "uses", "uses_in_start",
 * "expansion_length", "rhs": [terminal id or "Rk", ...]}, ...]}, same order. */
void iot_grammar_write_json(const iot_grammar *g, iot_buf *b, const char *key);

/* ---- prediction (SmartIO 3.1.2) ---- */

/* Given the terminal just appended, the candidates are the rules other than
 * S whose expansion begins with it. The one referenced most often from S's
 * right-hand side wins; ties go to the most recent (largest last_seen, then
 * the most recently created). Its expansion, iteratively, is the
 * prediction. The triggering terminal is that expansion's first symbol and
 * is NOT part of the predicted sequence: what is returned is the calls
 * expected to follow it, in order. */
typedef struct {
    int rule;                /* chosen rule, -1 if there is no prediction */
    size_t uses_in_start;    /* its references from S */
    uint64_t length;         /* predicted terminals (its expansion length - 1) */
    size_t candidates;       /* rules that began with the terminal */
} iot_prediction;

/* 1 and *out filled if a prediction exists, else 0 (out->rule = -1).
 * Costs O(candidates): one pass over the rules beginning with terminal. */
int iot_grammar_predict_rule(const iot_grammar *g, int terminal, iot_prediction *out);
/* Writes the first max predicted terminals (the calls after `terminal`)
 * into out and returns how many it wrote (0: no prediction). */
size_t iot_grammar_predict(const iot_grammar *g, int terminal, int *out, size_t max);
/* The same prediction cut before the next occurrence of `terminal`: when
 * the trigger marks the start of an I/O phase (H5Fcreate), the rest of this
 * phase. Without run-length symbols Sequitur stores k repetitions of a
 * phase as doubling rules (S -> A A B, A -> B B, B -> phase), so the rule
 * most referenced from S often spans 2, 4, ... phases; the cut keeps a
 * prediction from running past the phase it is meant for (and past the end
 * of the run). */
size_t iot_grammar_predict_phase(const iot_grammar *g, int terminal, int *out, size_t max);
/* Not in the paper: the calls that followed the previous occurrence of
 * `terminal`, up to the occurrence after it (when terminal is the call just
 * appended: the whole previous phase), read back from the grammar (cost:
 * the symbols of S after that point, plus depth and max). The paper's choice depends on a rule beginning with the
 * trigger; when an early irregularity makes Sequitur cut the repeating
 * phase at another place ("close open" inside one rule), the rules that
 * begin with the trigger are short, and so are its predictions. This one
 * is immune to that, at the price of trusting the latest phase over the
 * most frequent one. */
size_t iot_grammar_predict_repeat(const iot_grammar *g, int terminal, int *out, size_t max);

/* ---- which earlier phase a phase repeats (not in the paper) ----
 *
 * The grammar holds the calls of the phases it took in; a phase history of
 * one identity (one per rank and file identity) says which of them the
 * next phase is likely to repeat, by three methods:
 *  - RULE: SmartIO 3.1.2 (iot_grammar_predict_phase), chosen by the caller;
 *  - REPEAT: the latest phase of the same state (settings and first call: a
 *    read opened read-only, a write created, under the same settings);
 *  - CONTEXT: the calls that most often followed a phase like the latest
 *    one (an order-1 Markov predictor over the phases' shapes): phases of
 *    one file that alternate (a full and a light checkpoint, a write and a
 *    read that open the file alike) follow their own cycle, which REPEAT
 *    gets wrong every time.
 * Each phase scores every method that could predict it (its calls' hash
 * against the phase's), and the next phase trusts the one wrong least often
 * over its last 4 tries: a method that fails is dropped at once, and taken
 * back after 4 tries without a failure. */
#define IOT_HISTORY_PHASES 32
typedef enum { IOT_METHOD_RULE, IOT_METHOD_REPEAT, IOT_METHOD_CONTEXT, IOT_METHODS } iot_method;
const char *iot_method_name(iot_method m); /* "rule", "repeat", "context" */

typedef struct {
    uint64_t state;    /* what its calls depend on besides the application: settings, first call */
    uint64_t shape;    /* iot_calls_hash of its calls after the first */
    uint64_t pos, len; /* its calls in the grammar, first call included (len 0: not taken in) */
} iot_phase_seen;

typedef struct {
    iot_phase_seen seen[IOT_HISTORY_PHASES]; /* ring: phase k at k % IOT_HISTORY_PHASES */
    uint64_t n;                              /* phases added */
    uint8_t wrong[IOT_METHODS]; /* the last 8 tries of each method: 1 where it was wrong, bit 0 the newest */
} iot_phase_history;
#define IOT_HISTORY_RECENT 0x0f /* the tries that count for the choice: the last 4 */

#define IOT_CALLS_HASH_INIT 0xcbf29ce484222325ull
static inline uint64_t iot_calls_hash_add(uint64_t h, int terminal)
{
    return (h ^ (uint64_t)(uint32_t)terminal) * 0x100000001b3ull;
}
uint64_t iot_calls_hash(const int *terminals, size_t n);

void iot_history_init(iot_phase_history *h);
void iot_history_add(iot_phase_history *h, const iot_phase_seen *p);
/* The taken-in phase whose calls a phase of `state` is predicted to make,
 * by REPEAT or CONTEXT: 1 and *out, or 0. REPEAT falls back on the latest
 * taken-in phase of the state when none has the latest phase's shape. */
int iot_history_find(const iot_phase_history *h, iot_method m, uint64_t state, iot_phase_seen *out);
/* After a phase of this shape: each method that predicted it (predicted[m],
 * the hash of its calls, valid[m] nonzero) was right or wrong. */
void iot_history_score(iot_phase_history *h, const int *valid, const uint64_t *predicted, uint64_t shape);
/* The method to trust among the available ones: the fewest wrong over its
 * last 4 tries; ties go to the first in `preference` (all IOT_METHODS of
 * them). IOT_METHODS when none is available. */
iot_method iot_history_choose(const iot_phase_history *h, const int *available, const iot_method *preference);

/* Scores predictions against what the application then does, for the
 * per-run "fraction of predicted calls that occurred". Begin a prediction,
 * then observe every later terminal. A predicted call is a hit when it
 * occurs in order, allowing for up to `window` unpredicted calls in between
 * (so noise does not desynchronize the comparison); it is a miss when it is
 * skipped over, when more than `window` calls went by after its turn, when
 * a newer prediction replaces this one after its turn came, or at finish.
 * Predicted calls whose turn had not come when a newer prediction replaced
 * them are "superseded" and not scored. */
typedef struct {
    int *expected;
    size_t len, cap, pos;   /* current prediction, next expected index */
    uint64_t seen;          /* calls observed since it began */
    size_t window;          /* allowed unpredicted calls in between (default 8) */
    uint64_t predictions;   /* predictions begun (empty ones not counted) */
    uint64_t hits, misses;  /* scored predicted calls */
    uint64_t superseded;    /* predicted calls dropped unscored */
    uint64_t unpredicted;   /* observed calls outside any prediction match */
} iot_predcheck;

void iot_predcheck_init(iot_predcheck *c);
void iot_predcheck_free(iot_predcheck *c);
/* Starts scoring a prediction (copied); 0, or -1 if out of memory (the
 * previous one is then closed as if superseded). */
int iot_predcheck_begin(iot_predcheck *c, const int *predicted, size_t n);
void iot_predcheck_observe(iot_predcheck *c, int terminal);
/* End of the run: what is still expected counts as missed. */
void iot_predcheck_finish(iot_predcheck *c);
/* hits / (hits + misses), or -1 when nothing was scored. */
double iot_predcheck_hit_fraction(const iot_predcheck *c);
/* {"predictions", "hits", "misses", "hit_fraction", "superseded", "unpredicted"} */
void iot_predcheck_write_json(const iot_predcheck *c, iot_buf *b, const char *key);

#ifdef __cplusplus
}
#endif
#endif
