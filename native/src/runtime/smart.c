/* Smart mode: SmartIO's workflow at run time, with a feedback loop.
 *
 * Every HDF5 and MPI-IO call of a file phase becomes a terminal of a
 * Sequitur grammar (POSIX calls stay out: too many and too cheap to model).
 * There is one grammar per rank and phase identity: the file name with its
 * numbers normalized (chk_0001.h5 and chk_0002.h5 are one), whether the file
 * is created or opened, and who opens it (the group of the communicator, as
 * the report keys phases; a rank alone is an identity of its own). So the
 * calls of files open at the same time stay apart, and a rank's own side
 * check of a file never stands in for the collective phases of that file.
 *
 * The first phase of an identity is learned: at its close, which is
 * collective for the ranks that share the file, the grammar predicts the
 * calls of its recurrence (SmartIO 3.1.2), the insights of that prediction
 * are merged across those ranks, and the rules decide settings for the
 * phases that recur. Those settings go through the same appliers, and the
 * same verification, as a settings document's. At each later phase start
 * the phase's calls are predicted again and the prediction is scored
 * against what follows.
 *
 * Ranks must take the same decisions, or a collective transfer on one rank
 * meets an independent one on another and the job hangs. So at every phase
 * start the ranks that share the file (a point that is collective for them:
 * H5Fcreate, H5Fopen, MPI_File_open) check that they propose the same role
 * and settings; if not, the phase runs untuned on all of them and the
 * identity is learned again.
 *
 * The feedback loop (iot_feedback, iotuner/feedback.h) judges every phase run
 * under rules against a reference and rolls back the rules that hurt. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iotuner/feedback.h"
#include "iotuner/rules.h"
#include "module.h"
#include "phases.h"
#include "pmpi.h"

/* Memory: everything is allocated when smart mode is on, and bounded. */
#define SMART_SECTION_VERSION 1 /* the report's "smart" section (iotuner_report_version) */
#define MAX_IDENTITIES 256
#define MAX_LOG 4096                  /* phases logged for the report (about 1.5 KiB each) */
#define MAX_PREDICTED 65536           /* calls predicted at one phase start */
#define MAX_EXTRACT (1u << 20)        /* calls of a predicted recurrence read for extraction (4 MiB) */
#define GRAMMAR_BUDGET (64u << 20)    /* bytes of grammar per identity; past it, it stops learning */
#define GRAMMARS_BUDGET (256u << 20)  /* bytes of all grammars; past it, no identity learns more */
#define SPAN_STATES 8                 /* settings states remembered per identity */

static int slot; /* its state of a phase: the smart_phase */

/* unchanged: run with rules' settings of which none took effect (dropped, not applicable): not judged */
typedef enum { ROLE_LEARN, ROLE_OPTIMIZED, ROLE_PROBE, ROLE_ISOLATE, ROLE_DEFAULT, ROLE_OFF, ROLE_UNCHANGED } phase_role;
static const char *const role_names[] = {"learn", "optimized", "probe", "isolate", "default", "off", "unchanged"};

/* The last phase of an identity run under one settings state (a mask of
 * rules, 0 for the defaults), as a span of the identity's grammar. */
typedef struct {
    int valid;
    uint32_t mask;
    uint64_t pos, len;
    int taken;       /* phases of this state the grammar took in */
    double last_hit; /* how well the last one was predicted */
} span_rec;

typedef struct {
    char identity[256];
    uint64_t hash;
    int created;    /* create and open of the same name are different phases */
    iot_phase_kind kind; /* so are an HDF5 file and an MPI-IO open of that file (a size check, say) */
    uint64_t group; /* the opening communicator's group (iot_phase_key), 0: one rank alone */
    int occurrences;
    int learned;
    int64_t learned_bytes; /* the learned phase's data bytes (all its ranks): a recurrence moves about as many */
    iot_grammar *grammar;
    iot_insights insights;
    iot_rule_result result;
    iot_feedback feedback;
    span_rec spans[SPAN_STATES];
    iot_phase_history history; /* which earlier phase the next one repeats, and which method to trust */
} identity_rec;

typedef struct smart_phase {
    identity_rec *id;
    int occurrence;
    phase_role role;
    uint32_t mask;           /* rules whose settings this phase runs with */
    iot_settings *settings;  /* those settings, NULL for none */
    int trigger;             /* terminal of the phase's first call */
    uint64_t start_pos;      /* the identity grammar's length at the phase's first call */
    int learn_calls;         /* the grammar takes this phase's calls in */
    iot_locality_tracker writes, reads;
    MPI_Comm comm;           /* the file's ranks (the phase's: iot_phase_comm), MPI_COMM_NULL: one process */
    iot_predcheck check;
    char method[16];         /* how the phase was predicted: "rule", "repeat", "context", "none" */
    size_t predicted;
    uint64_t state;          /* settings and first call (iot_phase_seen) */
    uint64_t shape;          /* hash of its calls after the first */
    int tried[IOT_METHODS];  /* the methods that predicted it, and the hash of what each predicted */
    uint64_t tried_hash[IOT_METHODS];
} smart_phase;

typedef struct {
    char identity[256];
    char file[256];
    iot_phase_key key; /* the report's phase it was (the report context's phase_id) */
    int created, ranks;
    int occurrence;
    phase_role role;
    char rules[128];     /* ids of the rules whose settings it ran with */
    char method[16];
    size_t predicted;
    uint64_t hits, misses;
    double mib_s, reference_mib_s;
    char insights_from[16]; /* learned phases: the prediction the insights came from */
    char *insights_json;    /* learned phases */
    char *rules_json;       /* learned phases: fired rules and settings */
    char *settings_json;    /* what was requested and what took effect */
    char feedback[768];
} log_entry;

typedef struct {
    uint64_t predictions, hits, misses;
} method_score;

static struct {
    atomic_flag lock; /* a spin lock: held for a few hundred instructions, almost never contended */
    int broken;       /* out of memory at start-up: every phase runs untuned (and says so to the others) */
    iot_sigtab *sigs;
    iot_rules *rules;
    int64_t rules_hash;
    char rules_source[256];
    double margin;
    identity_rec *ids[MAX_IDENTITIES];
    int nids;
    int warned_full;
    log_entry *log; /* grows to MAX_LOG */
    int nlog, caplog;
    iot_rule_result *sub; /* scratch of settings_for */
    iot_predcheck total;       /* every phase's scores, summed */
    method_score by_method[IOT_METHODS]; /* rule, repeat, context */
    uint64_t t_predict, t_extract, t_optimize;
    uint64_t calls; /* calls seen, for sampling the timing of the per-call work */
    uint64_t boundaries; /* phase boundaries put into the grammars */
    int *buf;       /* prediction and extraction scratch */
    /* terminal of recent (call site, arguments): a repeated call skips hashing its name */
    struct {
        const char *func;
        int nargs;
        int64_t args[3];
        int terminal;
    } recent[64];
} S = {.lock = ATOMIC_FLAG_INIT};

static inline void lock(void)
{
    while (atomic_flag_test_and_set_explicit(&S.lock, memory_order_acquire))
        ;
}

static inline void unlock(void)
{
    atomic_flag_clear_explicit(&S.lock, memory_order_release);
}

static int smart_init(void)
{
    const char *env = getenv("IOTUNER_SMART");
    if (!env || !*env || !strcmp(env, "0"))
        return 0;
    /* from here on every phase start takes part in the ranks' agreement */
    S.sigs = iot_sigtab_new();
    S.buf = malloc(MAX_EXTRACT * sizeof *S.buf);
    S.sub = malloc(sizeof *S.sub);
    iot_predcheck_init(&S.total);
    const char *margin = getenv("IOTUNER_SMART_MARGIN");
    S.margin = margin ? atof(margin) : 0.25;
    if (!(S.margin > 0 && S.margin < 1))
        S.margin = 0.25;
    const char *table = getenv("IOTUNER_SMART_RULES"); /* tests only: replace the rules table */
    if (table && *table) {
        char err[512] = "";
        char *text = iot_read_regular_file(table, "rules table", 1 << 20, NULL, err, sizeof err);
        if (text)
            S.rules = iot_rules_parse(text, err, sizeof err);
        free(text);
        if (!S.rules)
            iot_warn("smart mode: rules table %s rejected (%s); using the built-in one", table, err);
        else
            snprintf(S.rules_source, sizeof S.rules_source, "%s", table);
    }
    if (!S.rules) {
        S.rules = iot_rules_builtin();
        snprintf(S.rules_source, sizeof S.rules_source, "built-in (SmartIO Table 2)");
    }
    char *normalized = S.rules ? iot_rules_to_json(S.rules) : NULL;
    S.rules_hash = normalized ? (int64_t)iot_path_hash(normalized) : 0; /* ranks compare it */
    free(normalized);
    if (!S.sigs || !S.buf || !S.rules || !S.sub) {
        iot_warn("smart mode: out of memory at start-up; every phase runs untuned");
        S.broken = 1;
    }
    return 1;
}

/* ---- identities and settings states ---- */

static identity_rec *identity_for(const iot_phase *ph)
{
    char identity[256];
    uint64_t hash = iot_identity(ph->path, identity, sizeof identity);
    for (int i = 0; i < S.nids; i++) {
        identity_rec *id = S.ids[i];
        if (id->created == ph->created && id->kind == ph->kind && id->group == ph->key.group && id->hash == hash &&
            !strcmp(id->identity, identity))
            return id;
    }
    if (S.nids == MAX_IDENTITIES) {
        if (!S.warned_full++)
            iot_warn("smart mode: more than %d file identities; files of new ones run untuned", MAX_IDENTITIES);
        return NULL;
    }
    identity_rec *id = calloc(1, sizeof *id);
    iot_grammar *g = id ? iot_grammar_new() : NULL;
    if (!g) {
        free(id);
        return NULL;
    }
    S.ids[S.nids++] = id;
    snprintf(id->identity, sizeof id->identity, "%s", identity);
    id->hash = hash;
    id->created = ph->created;
    id->kind = ph->kind;
    id->group = ph->key.group;
    id->grammar = g;
    iot_history_init(&id->history);
    return id;
}

/* Forgets what was learned: the ranks disagreed on it. The grammar stays (it is history). */
static void relearn(identity_rec *id)
{
    id->learned = 0;
    memset(&id->feedback, 0, sizeof id->feedback);
    memset(id->spans, 0, sizeof id->spans);
}

static span_rec *span_of(identity_rec *id, uint32_t mask, int create)
{
    span_rec *oldest = &id->spans[0];
    for (int i = 0; i < SPAN_STATES; i++) {
        if (id->spans[i].valid && id->spans[i].mask == mask)
            return &id->spans[i];
        if (!id->spans[i].valid || id->spans[i].pos < oldest->pos)
            oldest = &id->spans[i];
    }
    if (!create)
        return NULL;
    memset(oldest, 0, sizeof *oldest);
    oldest->valid = 1;
    oldest->mask = mask;
    return oldest;
}

/* The settings of the rules in mask (bit i: the feedback's rules[i]), with a hash of their document. */
static iot_settings *settings_for(const identity_rec *id, uint32_t mask, int64_t *hash)
{
    iot_rule_result *sub = S.sub; /* large: under the lock, one at a time */
    *hash = 0;
    if (!mask)
        return NULL;
    *sub = id->result;
    sub->nsettings = sub->nfired = 0;
    const iot_feedback *f = &id->feedback;
    for (int i = 0; i < f->nrules; i++) {
        if (!(mask & (1u << i)))
            continue;
        for (int k = 0; k < id->result.nsettings; k++)
            if (id->result.settings[k].rule == f->rules[i])
                sub->settings[sub->nsettings++] = id->result.settings[k];
        for (int k = 0; k < id->result.nfired; k++)
            if (id->result.fired[k].rule == f->rules[i])
                sub->fired[sub->nfired++] = id->result.fired[k];
    }
    char *doc = iot_rule_result_settings_json(sub, NULL, "smart mode");
    if (!doc)
        return NULL;
    char err[256];
    iot_settings *s = iot_settings_parse(doc, strlen(doc), err, sizeof err);
    if (!s)
        iot_warn("smart mode: the rules produced settings the runtime rejects (%s); %s stays untuned", err,
                 id->identity);
    else
        *hash = (int64_t)iot_path_hash(doc);
    free(doc);
    return s;
}

/* The role and rules of an identity's next phase. */
static phase_role next_role(const identity_rec *id, uint32_t *mask)
{
    *mask = 0;
    if (!id->learned)
        return ROLE_LEARN;
    switch (iot_feedback_next(&id->feedback, mask)) {
    case IOT_FB_RUN_RULES: return ROLE_OPTIMIZED;
    case IOT_FB_RUN_PROBE: return ROLE_PROBE;
    case IOT_FB_RUN_ISOLATED: return ROLE_ISOLATE;
    default: return ROLE_DEFAULT;
    }
}

/* ---- calls ---- */

/* The terminal of a call: the signature table, through a small cache keyed
 * by the call site's name pointer and the arguments but the offset. */
static int terminal_of(const char *func, const int64_t *args, int nargs, int offset_index)
{
    int64_t key[3] = {0, 0, 0};
    int k = 0;
    for (int i = 0; i < nargs && k < 3; i++)
        if (i != offset_index)
            key[k++] = args[i];
    if (nargs - (offset_index >= 0) > 3)
        return iot_sig_intern(S.sigs, func, args, nargs, offset_index);
    uint64_t h = (uint64_t)(uintptr_t)func * 0x9E3779B97F4A7C15ull ^ (uint64_t)key[0] * 0xC2B2AE3D27D4EB4Full ^
                 (uint64_t)key[1] ^ (uint64_t)key[2] << 1;
    unsigned slot = (unsigned)(h >> 58);
    if (S.recent[slot].func == func && S.recent[slot].nargs == nargs && !memcmp(S.recent[slot].args, key, sizeof key))
        return S.recent[slot].terminal;
    int t = iot_sig_intern(S.sigs, func, args, nargs, offset_index);
    if (t >= 0) {
        S.recent[slot].func = func;
        S.recent[slot].nargs = nargs;
        memcpy(S.recent[slot].args, key, sizeof key);
        S.recent[slot].terminal = t;
    }
    return t;
}

/* One call of a phase: scored against its prediction, and a terminal of its
 * identity's grammar while the phase is being learned. */
static int feed(smart_phase *sp, const char *func, const int64_t *args, int nargs, int offset_index)
{
    int t = terminal_of(func, args, nargs, offset_index);
    if (t < 0)
        return t;
    if (sp->learn_calls && iot_grammar_append(sp->id->grammar, t) == 0 &&
        iot_grammar_memory(sp->id->grammar) > GRAMMAR_BUDGET)
        sp->learn_calls = 0;
    iot_predcheck_observe(&sp->check, t);
    sp->shape = iot_calls_hash_add(sp->shape, t);
    return t;
}

/* ---- prediction ---- */

/* The phase's calls after its first one, into S.buf; returns how many. Each
 * method that can predicts into its own part of S.buf:
 *  - SmartIO 3.1.2's rule, when the grammar's latest phase ran under the same
 *    settings (the calls, collective or independent say, follow the settings);
 *  - REPEAT and CONTEXT from the identity's phase history (iotuner/grammar.h):
 *    the last phase of the same settings and first call, or what followed a
 *    phase like the latest one.
 * A rule shorter than the repeat is no candidate. The history's record of
 * each method picks one; on a tie, the rule, the repeat, the context, in
 * this order. The first phase under new settings is not predicted. */
static size_t predict(smart_phase *sp)
{
    identity_rec *id = sp->id;
    snprintf(sp->method, sizeof sp->method, "none");
    span_rec *last = span_of(id, sp->mask, 0);
    if (!last || last->len < 2)
        return 0;
    int *out[IOT_METHODS] = {S.buf, S.buf + MAX_PREDICTED, S.buf + 2 * MAX_PREDICTED};
    size_t n[IOT_METHODS] = {0, 0, 0};
    for (int m = IOT_METHOD_REPEAT; m <= IOT_METHOD_CONTEXT; m++) {
        iot_phase_seen p;
        if (iot_history_find(&id->history, (iot_method)m, sp->state, &p) && p.len >= 2)
            n[m] = iot_grammar_expand(id->grammar, 0, p.pos + 1, out[m],
                                      p.len - 1 > MAX_PREDICTED ? MAX_PREDICTED : p.len - 1);
    }
    int latest = 1;
    for (int i = 0; i < SPAN_STATES; i++)
        if (id->spans[i].valid && id->spans[i].pos > last->pos)
            latest = 0;
    if (latest)
        n[IOT_METHOD_RULE] = iot_grammar_predict_phase(id->grammar, sp->trigger, out[IOT_METHOD_RULE], MAX_PREDICTED);
    if (n[IOT_METHOD_RULE] < n[IOT_METHOD_REPEAT])
        n[IOT_METHOD_RULE] = 0; /* a rule shorter than the phase it would predict is no candidate */
    for (int m = 0; m < IOT_METHODS; m++) {
        sp->tried[m] = n[m] > 0;
        sp->tried_hash[m] = iot_calls_hash(out[m], n[m]);
    }
    iot_method preference[IOT_METHODS] = {IOT_METHOD_RULE, IOT_METHOD_REPEAT, IOT_METHOD_CONTEXT};
    iot_method m = iot_history_choose(&id->history, sp->tried, preference);
    if (m == IOT_METHODS)
        return 0;
    if (m != IOT_METHOD_RULE)
        memmove(S.buf, out[m], n[m] * sizeof *S.buf);
    snprintf(sp->method, sizeof sp->method, "%s", iot_method_name(m));
    return n[m];
}

/* At the learned phase's close: the calls its recurrence is predicted to
 * make, trigger first, into S.buf. SmartIO 3.1.2's rule for the trigger when
 * it covers the phase; with one phase in the grammar there is seldom such a
 * rule yet, and the prediction is the phase just seen. */
static size_t predict_recurrence(smart_phase *sp, char *method, size_t methodlen)
{
    iot_grammar *g = sp->id->grammar;
    uint64_t len = iot_grammar_length(g) - sp->start_pos;
    S.buf[0] = sp->trigger;
    size_t n = iot_grammar_predict_phase(g, sp->trigger, S.buf + 1, MAX_EXTRACT - 1);
    if (n && n + 1 >= len) {
        snprintf(method, methodlen, "rule");
    } else {
        n = len ? iot_grammar_expand(g, 0, sp->start_pos + 1, S.buf + 1, len - 1 < MAX_EXTRACT - 1 ? len - 1 : MAX_EXTRACT - 1)
                : 0;
        snprintf(method, methodlen, "repeat");
    }
    return n + 1;
}

static size_t grammars_memory(void)
{
    size_t bytes = 0;
    for (int i = 0; i < S.nids; i++)
        bytes += iot_grammar_memory(S.ids[i]->grammar);
    return bytes;
}

/* The application's bytes of a phase, at its kind's level (as the report counts them). */
static int64_t phase_bytes(const iot_phase *ph)
{
    iot_level l = iot_data_level(ph->kind);
    return (int64_t)(atomic_load(&ph->level[l].bytes_written) + atomic_load(&ph->level[l].bytes_read));
}

/* ---- collectives on the file's ranks (never under the lock: they block) ---- */

/* 1 when every rank of comm proposes the same values. */
static int ranks_agree(MPI_Comm comm, const int64_t *v, int n)
{
    int64_t mine[16], all[16];
    for (int i = 0; i < n; i++) {
        mine[i] = v[i];
        mine[n + i] = -v[i]; /* MAX of the negation: the minimum */
    }
    if (iot_pmpi.Allreduce(mine, all, 2 * n, MPI_INT64_T, MPI_MAX, comm) != MPI_SUCCESS)
        return 0;
    for (int i = 0; i < n; i++)
        if (all[i] != -all[n + i])
            return 0;
    return 1;
}

/* The phase's data bytes (summed) and time (first open to last close), agreed by the ranks that share the
 * file, as the report computes them. */
static double phase_bandwidth(iot_phase *ph, smart_phase *sp, int64_t *bytes_out)
{
    int64_t bytes = phase_bytes(ph);
    double span[2] = {-iot_clock_of(ph->t_start), iot_clock_of(ph->t_end)}; /* MAX of both: first open, last close */
    if (sp->comm != MPI_COMM_NULL) {
        int64_t total = 0;
        double all[2] = {0, 0};
        iot_pmpi.Allreduce(&bytes, &total, 1, MPI_INT64_T, MPI_SUM, sp->comm);
        iot_pmpi.Allreduce(span, all, 2, MPI_DOUBLE, MPI_MAX, sp->comm);
        bytes = total;
        span[0] = all[0];
        span[1] = all[1];
    }
    double seconds = span[1] + span[0];
    *bytes_out = bytes;
    return seconds > 0 ? (double)bytes / (1024.0 * 1024.0) / seconds : 0;
}

/* ---- the log ---- */

static log_entry *log_begin(const char *identity, const iot_phase *ph, int occurrence, phase_role role)
{
    static log_entry overflow; /* past MAX_LOG (or out of memory), entries are built and dropped */
    if (S.nlog == S.caplog && S.caplog < MAX_LOG) {
        int cap = S.caplog ? S.caplog * 2 : 64;
        log_entry *l = realloc(S.log, (size_t)cap * sizeof *l);
        if (l) {
            S.log = l;
            S.caplog = cap;
        }
    }
    log_entry *e = S.nlog < S.caplog ? &S.log[S.nlog++] : &overflow;
    if (e == &overflow) {
        free(e->insights_json);
        free(e->rules_json);
        free(e->settings_json);
    }
    memset(e, 0, sizeof *e);
    snprintf(e->identity, sizeof e->identity, "%s", identity);
    snprintf(e->file, sizeof e->file, "%s", ph->path);
    e->key = ph->key;
    e->created = ph->created;
    e->ranks = ph->group_size;
    e->occurrence = occurrence;
    e->role = role;
    snprintf(e->method, sizeof e->method, "none");
    return e;
}

/* ---- phases ---- */

static smart_phase *state_of(const iot_phase *ph)
{
    return iot_phase_state(ph, slot);
}

static int learning(const smart_phase *sp)
{
    return sp && sp->role == ROLE_LEARN; /* set at the phase start, then read only */
}

/* A file phase starts with its opening call. Every rank of the file's communicator hears it, whatever its own
 * state, because the agreement is a collective. */
static void smart_phase_begin(iot_phase *ph, const iot_call *opening)
{
    uint64_t t0 = iot_ticks();
    MPI_Comm comm = iot_phase_comm(ph); /* also keys the phase as the report does: identities use the key */
    const char *func = opening->name;
    const int64_t *args = opening->args;
    int nargs = opening->nargs;

    smart_phase *sp = calloc(1, sizeof *sp); /* before the agreement: a rank without it says so there */
    lock();
    identity_rec *id = S.broken || !sp ? NULL : identity_for(ph);
    uint32_t mask = 0;
    phase_role role = id ? next_role(id, &mask) : ROLE_OFF;
    int64_t settings_hash = 0;
    iot_settings *settings = id ? settings_for(id, mask, &settings_hash) : NULL;
    if (mask && !settings) /* the rules' settings were rejected: run the defaults, as the other ranks will */
        mask = 0;
    int64_t proposal[5] = {id != NULL, id ? (int64_t)id->hash : 0, role, settings_hash, S.rules_hash};
    unlock();

    int agreed = comm == MPI_COMM_NULL || ranks_agree(comm, proposal, 5);

    lock();
    if (!id || !agreed) {
        char identity[256];
        iot_identity(ph->path, identity, sizeof identity);
        log_entry *e = log_begin(identity, ph, id ? id->occurrences++ : 0, ROLE_OFF);
        if (!id)
            snprintf(e->feedback, sizeof e->feedback, "smart mode keeps no more than %d file identities (or ran out "
                     "of memory): untuned", MAX_IDENTITIES);
        else
            snprintf(e->feedback, sizeof e->feedback, "the ranks that share this file disagree on what was learned "
                     "of it (they saw different files of this name before): untuned, and learned again at its next "
                     "phase");
        if (id && !agreed)
            relearn(id);
        iot_settings_free(settings);
        S.t_extract += iot_ticks() - t0;
        unlock();
        free(sp);
        return;
    }
    sp->id = id;
    sp->occurrence = id->occurrences++;
    sp->role = role;
    sp->mask = mask;
    sp->settings = settings;
    sp->comm = comm;
    iot_predcheck_init(&sp->check);
    iot_locality_init(&sp->writes);
    iot_locality_init(&sp->reads);
    /* the grammar takes a phase in until two phases of its settings state
     * were taken and the last was predicted well: a steady phase only costs its scoring */
    span_rec *span = span_of(id, mask, 0);
    sp->learn_calls = (!span || span->taken < 2 || span->last_hit < 0.9) && grammars_memory() < GRAMMARS_BUDGET;
    if (sp->learn_calls) {
        /* A terminal that never recurs between phases: no digram, so no rule,
         * spans two phases, and the rules that begin with a phase's first call
         * are whole phases (SmartIO 3.1.2 predicts from those). Without it,
         * the digram (H5Fclose, H5Fcreate) of successive phases makes
         * Sequitur cut the phases at other places. */
        int64_t n = (int64_t)++S.boundaries;
        int boundary = iot_sig_intern(S.sigs, "phase boundary", &n, 1, -1);
        if (boundary >= 0)
            iot_grammar_append(id->grammar, boundary);
    }
    sp->start_pos = iot_grammar_length(id->grammar);
    sp->trigger = feed(sp, func, args, nargs, -1);
    sp->shape = IOT_CALLS_HASH_INIT; /* the calls after the first */
    sp->state = (uint64_t)mask * 0x9E3779B97F4A7C15ull ^ (uint64_t)(uint32_t)sp->trigger;
    size_t n = sp->trigger >= 0 ? predict(sp) : 0;
    sp->predicted = n;
    if (n)
        iot_predcheck_begin(&sp->check, S.buf, n);
    iot_phase_swap_state(ph, slot, NULL, sp);
    S.t_predict += iot_ticks() - t0;
    unlock();
}

/* A call of a phase; a data call with a known offset (at >= 0) is also a point of its locality. */
static void call(iot_phase *ph, const char *func, const int64_t *args, int nargs, int offset_index, int64_t at,
                 int is_write)
{
    if (!state_of(ph))
        return;
    lock();
    smart_phase *sp = state_of(ph);
    if (!sp) { /* the phase ended meanwhile */
        unlock();
        return;
    }
    unsigned w = iot_time_weight(S.calls++, 0); /* the per-call work is timed on a sample, like the I/O */
    uint64_t t0 = w ? iot_ticks() : 0;
    feed(sp, func, args, nargs, offset_index);
    if (at >= 0 && learning(sp)) /* locality matters to the learned phase only */
        iot_locality_add(is_write ? &sp->writes : &sp->reads, at, args[IOT_ARG_BYTES]);
    if (w)
        S.t_predict += (iot_ticks() - t0) * w;
    unlock();
}

static void smart_call(iot_phase *ph, const iot_call *c)
{
    call(ph, c->name, c->args, c->nargs, c->offset_index, -1, 0);
}

/* A data call: its bytes and, for the _at calls, its offset are its signature (iotuner/signature.h); its
 * place in the file (in bytes) is a point of the learned phase's locality. Only the learned phase asks
 * where the individual file pointer is: that costs a query. */
static void smart_data(iot_phase *ph, iot_data *d)
{
    int64_t at = -1, offset;
    if ((d->explicit_offset || learning(state_of(ph))) && iot_data_offset(d, &offset))
        at = d->disp + offset * d->etype_size;
    int64_t args[2] = {(int64_t)d->bytes, at};
    call(ph, d->name, args, d->explicit_offset ? 2 : 1, d->explicit_offset ? IOT_ARG_OFFSET : -1, at, d->is_write);
}

/* Progressive layouts need Lustre 2.10 on the client: its version, read once. */
static int lustre_pfl(void)
{
    static int known = -2;
    if (known == -2) {
        known = -1;
        const char *paths[] = {"/sys/fs/lustre/version", "/proc/fs/lustre/version"};
        for (int i = 0; i < 2 && known < 0; i++) {
            char err[64];
            char *text = iot_read_regular_file(paths[i], "Lustre version", 256, NULL, err, sizeof err);
            if (text)
                known = iot_lustre_has_pfl(text);
            free(text);
        }
    }
    return known;
}

/* SmartIO 3.2 and 3.3: the insights of the learned phase's predicted
 * recurrence, merged across the ranks that share it, then the rules.
 * Called and returns with the lock held; releases it for the merge. */
static void learn(iot_phase *ph, smart_phase *sp, log_entry *e)
{
    uint64_t t0 = iot_ticks();
    identity_rec *id = sp->id;
    size_t n = predict_recurrence(sp, e->insights_from, sizeof e->insights_from);
    iot_insights local;
    iot_insights_from_calls(S.sigs, S.buf, n, &local);
    iot_insights_set_locality(&local, &sp->writes, &sp->reads);
    snprintf(local.identity, sizeof local.identity, "%s", id->identity);
    local.path_hash = (int64_t)iot_path_hash(ph->path);
    snprintf(local.file_system, sizeof local.file_system, "%s", ph->file_system);
    local.lustre_pfl = iot_fs_is_lustre(ph->file_system) ? lustre_pfl() : 0;
    iot_insights merged = local;
    if (sp->comm != MPI_COMM_NULL) {
        int64_t mx[IOT_INSIGHTS_NMAX], sm[IOT_INSIGHTS_NSUM], rmx[IOT_INSIGHTS_NMAX], rsm[IOT_INSIGHTS_NSUM];
        iot_insights_pack(&local, mx, sm);
        unlock();
        iot_pmpi.Allreduce(mx, rmx, IOT_INSIGHTS_NMAX, MPI_INT64_T, MPI_MAX, sp->comm);
        iot_pmpi.Allreduce(sm, rsm, IOT_INSIGHTS_NSUM, MPI_INT64_T, MPI_SUM, sp->comm);
        lock();
        iot_insights_unpack(rmx, rsm, &local, &merged);
    } else if (iot_g.nprocs > 1 && merged.files == IOT_FILES_UNKNOWN) {
        merged.files = IOT_FILES_PER_PROCESS; /* one process of several opened it */
    }
    id->insights = merged;
    uint64_t t1 = iot_ticks();
    S.t_extract += t1 - t0;

    iot_rules_evaluate(S.rules, &id->insights, &id->result);
    int with_settings[IOT_FEEDBACK_MAX_RULES], nrules = 0;
    for (int i = 0; i < id->result.nfired; i++)
        for (int k = 0; k < id->result.nsettings && nrules < IOT_FEEDBACK_MAX_RULES; k++)
            if (id->result.settings[k].rule == id->result.fired[i].rule) {
                with_settings[nrules++] = id->result.fired[i].rule;
                break;
            }
    iot_feedback_init(&id->feedback, e->mib_s, S.margin, with_settings, nrules);
    id->learned = 1;
    S.t_optimize += iot_ticks() - t1;

    iot_buf b;
    iot_buf_init(&b);
    iot_insights_write_json(&id->insights, &b, NULL);
    e->insights_json = iot_buf_take(&b);
    iot_buf_init(&b);
    iot_rule_result_write_json(&id->result, S.rules, &b, NULL);
    e->rules_json = iot_buf_take(&b);
}

/* --verbose prints JSON documents as wrapped "name=value" words, so a line stays within a terminal's 100 columns. */
enum { VERBOSE_COLUMNS = 100 };

typedef struct {
    int column;
} verbose_line;

/* Writes text's space-separated pieces, each on the current line when it fits, else on a new indented one. */
static void verbose_text(verbose_line *l, const char *text)
{
    while (*text) {
        while (*text == ' ')
            text++;
        int len = (int)strcspn(text, " ");
        if (!len)
            break;
        if (l->column > 4 && l->column + 1 + len > VERBOSE_COLUMNS) {
            fputs("\n    ", stderr);
            l->column = 4;
        } else if (l->column > 4) {
            fputc(' ', stderr);
            l->column++;
        }
        fprintf(stderr, "%.*s", len, text);
        l->column += len;
        text += len;
    }
}

static void verbose_word(verbose_line *l, const char *name, const char *value)
{
    char word[1024];
    snprintf(word, sizeof word, "%s%s%s", name, name[0] ? "=" : "", value);
    verbose_text(l, word);
}

static void verbose_value(verbose_line *l, const char *name, const iot_json *v)
{
    char text[64], path[256];
    switch (v->type) {
    case IOT_JSON_OBJECT: {
        /* a setting ({"knob": K, "value": V, ...}) reads best as K=V */
        const iot_json *knob = iot_json_get(v, "knob"), *value = iot_json_get(v, "value");
        if (knob && knob->type == IOT_JSON_STRING && value && value->type != IOT_JSON_OBJECT &&
            value->type != IOT_JSON_ARRAY) {
            verbose_value(l, knob->string, value);
            return;
        }
        for (size_t i = 0; i < v->count; i++) {
            snprintf(path, sizeof path, "%s%s%s", name, name[0] ? "." : "", v->keys[i]);
            verbose_value(l, path, v->items[i]);
        }
        return;
    }
    case IOT_JSON_ARRAY:
        if (!v->count)
            verbose_word(l, name, "[]");
        for (size_t i = 0; i < v->count; i++) {
            const iot_json *item = v->items[i];
            int scalar = item->type != IOT_JSON_OBJECT && item->type != IOT_JSON_ARRAY;
            snprintf(path, sizeof path, scalar || !name[0] ? "%s" : "%s[%zu]", name, i);
            verbose_value(l, path, item);
        }
        return;
    case IOT_JSON_STRING:
        verbose_word(l, name, v->string);
        return;
    case IOT_JSON_NUMBER:
        if (v->is_integer)
            snprintf(text, sizeof text, "%lld", (long long)v->integer);
        else
            snprintf(text, sizeof text, "%g", v->number);
        verbose_word(l, name, text);
        return;
    case IOT_JSON_BOOL:
        verbose_word(l, name, v->boolean ? "true" : "false");
        return;
    case IOT_JSON_NULL:
        verbose_word(l, name, "null");
        return;
    }
}

/* "  label: name=value name=value ..." wrapped at VERBOSE_COLUMNS; a document that does not parse as it is. */
static void print_json_words(const char *label, const char *json)
{
    char err[64];
    iot_json *v = iot_json_parse(json, strlen(json), err, sizeof err);
    if (!v) {
        fprintf(stderr, "  %s: %s\n", label, json);
        return;
    }
    verbose_line l = {.column = 3 + (int)strlen(label)}; /* "  label:" */
    fprintf(stderr, "  %s:", label);
    verbose_value(&l, "", v);
    fputc('\n', stderr);
    iot_json_free(v);
}

static void print_verbose(const log_entry *e)
{
    char head[4096];
    snprintf(head, sizeof head, "iotuner smart: %s #%d (%s%s%s): %zu calls predicted (%s), %.1f MiB/s%s%s",
             e->identity, e->occurrence, role_names[e->role], e->rules[0] ? ", rules " : "", e->rules, e->predicted,
             e->method, e->mib_s, e->feedback[0] ? "; " : "", e->feedback);
    verbose_line l = {.column = 0};
    verbose_text(&l, head);
    fputc('\n', stderr);
    if (e->insights_json) {
        char label[64];
        snprintf(label, sizeof label, "insights (from the %s prediction)", e->insights_from);
        print_json_words(label, e->insights_json);
        print_json_words("rules", e->rules_json ? e->rules_json : "[]");
    }
    if (e->settings_json && strcmp(e->settings_json, "[]"))
        print_json_words("settings", e->settings_json);
}

/* 1 when a phase moving `bytes` is about the phase that moved `learned` (within a factor of 2): a checkpoint
 * that grows a little recurs; a file of the same name with 50x less data does not. */
static int same_data(int64_t bytes, int64_t learned)
{
    return learned > 0 && bytes <= 2 * learned && learned <= 2 * bytes;
}

/* 1 when at least one of the phase's settings (its checks, as JSON) took effect (applied or changed); else 0,
 * with each knob and what became of it in why ("mpiio.cb_config_list dropped, ..."). */
static int took_effect(const char *checks_json, char *why, size_t whylen)
{
    char err[64];
    iot_json *v = checks_json ? iot_json_parse(checks_json, strlen(checks_json), err, sizeof err) : NULL;
    int any = 0;
    why[0] = 0;
    for (size_t i = 0; v && v->type == IOT_JSON_ARRAY && i < v->count && !any; i++) {
        const iot_json *knob = iot_json_get(v->items[i], "knob"), *status = iot_json_get(v->items[i], "status");
        if (!knob || !status || knob->type != IOT_JSON_STRING || status->type != IOT_JSON_STRING)
            continue;
        if (!strcmp(status->string, "applied") || !strcmp(status->string, "changed")) {
            any = 1;
        } else if (!strstr(why, knob->string)) {
            size_t at = strlen(why);
            snprintf(why + at, whylen - at, "%s%s %s", at ? ", " : "", knob->string, status->string);
        }
    }
    iot_json_free(v);
    return any;
}

/* After the phase's file is closed: collective on the ranks that share the file. */
static void smart_phase_end(iot_phase *ph)
{
    smart_phase *sp = state_of(ph);
    if (!sp)
        return;
    lock(); /* a call of the phase that is running finishes first */
    iot_phase_swap_state(ph, slot, sp, NULL);
    unlock();
    identity_rec *id = sp->id;
    lock();
    log_entry *e = log_begin(id->identity, ph, sp->occurrence, sp->role);
    iot_feedback_rules_text(&id->feedback, sp->mask, e->rules, sizeof e->rules);
    snprintf(e->method, sizeof e->method, "%s", sp->method);
    e->predicted = sp->predicted;
    iot_predcheck_finish(&sp->check);
    e->hits = sp->check.hits;
    e->misses = sp->check.misses;
    S.total.predictions += sp->check.predictions;
    S.total.hits += sp->check.hits;
    S.total.misses += sp->check.misses;
    S.total.superseded += sp->check.superseded;
    S.total.unpredicted += sp->check.unpredicted;
    int m = -1;
    for (int k = 0; k < IOT_METHODS; k++)
        if (!strcmp(sp->method, iot_method_name((iot_method)k)))
            m = k;
    if (m >= 0) {
        S.by_method[m].predictions++;
        S.by_method[m].hits += sp->check.hits;
        S.by_method[m].misses += sp->check.misses;
    }
    if (sp->learn_calls) {
        span_rec *span = span_of(id, sp->mask, 1);
        span->pos = sp->start_pos;
        span->len = iot_grammar_length(id->grammar) - sp->start_pos;
        span->taken++;
    }
    span_rec *span = span_of(id, sp->mask, 0);
    if (span)
        span->last_hit = e->hits + e->misses ? (double)e->hits / (double)(e->hits + e->misses) : 1.0;
    /* the history learns which method was right about this phase, and where its calls are */
    iot_history_score(&id->history, sp->tried, sp->tried_hash, sp->shape);
    iot_phase_seen seen = {sp->state, sp->shape, sp->start_pos,
                           sp->learn_calls ? iot_grammar_length(id->grammar) - sp->start_pos : 0};
    iot_history_add(&id->history, &seen);
    e->settings_json = iot_phase_checks_json(ph, 1);
    unlock();

    uint64_t t0 = iot_ticks();
    int64_t bytes;
    char why[512];
    e->mib_s = phase_bandwidth(ph, sp, &bytes); /* a collective: outside the lock */
    lock();
    S.t_extract += iot_ticks() - t0;
    if (sp->role == ROLE_LEARN && bytes == 0) {
        /* a check of the file (opened, looked at, closed): nothing to learn the I/O from, nor a reference */
        e->role = ROLE_DEFAULT;
        snprintf(e->feedback, sizeof e->feedback, "moved no data: nothing to learn from; the next phase of this file is learned instead");
    } else if (sp->role == ROLE_LEARN) {
        learn(ph, sp, e);
        id->learned_bytes = bytes;
    } else if (sp->role != ROLE_DEFAULT && bytes > 0 && !same_data(bytes, id->learned_bytes)) {
        /* one name, another phase (a second history file of other variables): not judged against what the
         * first taught, but learned from instead. Every rank of the file decides alike (the bytes are the
         * file's, agreed), as learn's reductions need */
        snprintf(e->feedback, sizeof e->feedback, "moved %.3g MiB where the learned phase of this name moved "
                 "%.3g: not a recurrence; learned from instead", (double)bytes / 1048576.0,
                 (double)id->learned_bytes / 1048576.0);
        e->role = ROLE_LEARN;
        learn(ph, sp, e);
        id->learned_bytes = bytes;
    } else if (sp->role != ROLE_DEFAULT && sp->settings && !took_effect(e->settings_json, why, sizeof why)) {
        /* the rules' settings could not act here: it ran as with the defaults, so it judges nothing */
        e->role = ROLE_UNCHANGED;
        snprintf(e->feedback, sizeof e->feedback, "none of its settings took effect (%s): not judged",
                 why[0] ? why : "no setting was read back");
    } else if (sp->role != ROLE_DEFAULT && bytes == 0) {
        /* no bandwidth to judge the settings by: the feedback waits for a phase that moves data */
        snprintf(e->feedback, sizeof e->feedback, "moved no data: not judged");
    } else if (sp->role != ROLE_DEFAULT) {
        uint64_t t1 = iot_ticks();
        iot_feedback_observe(&id->feedback, e->mib_s, e->feedback, sizeof e->feedback);
        S.t_optimize += iot_ticks() - t1;
    }
    e->reference_mib_s = id->feedback.reference;
    int verbose = iot_g.verbose && iot_g.rank == 0;
    unlock();
    if (verbose)
        print_verbose(e);
    iot_predcheck_free(&sp->check);
    iot_settings_free(sp->settings);
    free(sp);
}

/* The phase's open failed: forget it. */
static void smart_phase_dropped(iot_phase *ph)
{
    smart_phase *sp = state_of(ph);
    if (!sp)
        return;
    lock();
    iot_phase_swap_state(ph, slot, sp, NULL);
    unlock();
    iot_predcheck_free(&sp->check);
    iot_settings_free(sp->settings);
    free(sp);
}

static const iot_settings *smart_settings(const iot_phase *ph)
{
    const smart_phase *sp = state_of(ph);
    return sp ? sp->settings : NULL;
}

/* ---- the report ---- */

static void write_raw_json(iot_buf *b, const char *key, const char *json)
{
    if (json)
        iot_jw_raw(b, key, json);
}

static const char *const methods[] = {"rule", "repeat", "context"};
static const char *const counts[] = {"predictions", "hits", "misses", "superseded", "unpredicted"};
static const char *const method_fields[] = {"predictions", "hits", "misses"};
static const char *const parts[] = {"prediction_s", "extraction_s", "optimization_s", "total_s"};
enum { NCOUNTS = 5, NMETHODS = IOT_METHODS, NFIELDS = 3, NPARTS = 4 };

static void write_fraction(iot_buf *b, int64_t hits, int64_t misses)
{
    if (hits + misses > 0)
        iot_jw_double(b, "hit_fraction", (double)hits / (double)(hits + misses));
    else
        iot_jw_null(b, "hit_fraction");
}

/* rank 0's view of the phases and decisions (the same on every rank that shares a file), with the report's
 * phase of each; prediction scores summed over ranks; overheads: each part's and the total's largest */
static void write_phases(const iot_report_ctx *ctx)
{
    iot_buf *b = ctx->out;
    iot_jw_begin_array(b, "phases");
    for (int i = 0; i < S.nlog; i++) {
        const log_entry *e = &S.log[i];
        iot_jw_begin_object(b, NULL);
        int id = ctx->phase_id(ctx, &e->key, ctx->rank);
        if (id >= 0)
            iot_jw_int(b, "phase", id);
        else
            iot_jw_null(b, "phase");
        iot_jw_string(b, "identity", e->identity);
        iot_jw_string(b, "opened", e->created ? "create" : "open");
        iot_jw_string(b, "scope", e->key.group ? "collective" : "independent");
        iot_jw_int(b, "ranks", e->ranks);
        iot_jw_string(b, "file", e->file);
        iot_jw_int(b, "occurrence", e->occurrence);
        iot_jw_string(b, "role", role_names[e->role]);
        iot_jw_string(b, "rules_applied", e->rules[0] ? e->rules : NULL);
        iot_jw_begin_object(b, "prediction");
        iot_jw_string(b, "method", e->method);
        iot_jw_int(b, "calls", (int64_t)e->predicted);
        iot_jw_int(b, "hits", (int64_t)e->hits);
        iot_jw_int(b, "misses", (int64_t)e->misses);
        iot_jw_end_object(b);
        iot_jw_double(b, "bandwidth_mib_s", e->mib_s);
        iot_jw_double(b, "reference_mib_s", e->reference_mib_s);
        if (e->insights_json) {
            iot_jw_string(b, "insights_from", e->insights_from);
            write_raw_json(b, "insights", e->insights_json);
            write_raw_json(b, "rules", e->rules_json);
        }
        iot_jw_raw(b, "settings", e->settings_json ? e->settings_json : "[]");
        iot_jw_string(b, "feedback", e->feedback[0] ? e->feedback : NULL);
        iot_jw_end_object(b);
    }
    iot_jw_end_array(b);
}

/* The module's report section: counts summed and overheads maximized over the ranks (two reductions of
 * fixed-size arrays), the rest from the root's own state. */
static void smart_report(const iot_report_ctx *ctx)
{
    lock();
    int64_t sums[NCOUNTS + NMETHODS * NFIELDS] = {(int64_t)S.total.predictions, (int64_t)S.total.hits,
                                                  (int64_t)S.total.misses, (int64_t)S.total.superseded,
                                                  (int64_t)S.total.unpredicted};
    for (int m = 0; m < NMETHODS; m++) {
        sums[NCOUNTS + m * NFIELDS + 0] = (int64_t)S.by_method[m].predictions;
        sums[NCOUNTS + m * NFIELDS + 1] = (int64_t)S.by_method[m].hits;
        sums[NCOUNTS + m * NFIELDS + 2] = (int64_t)S.by_method[m].misses;
    }
    double over[NPARTS] = {iot_ticks_to_seconds(S.t_predict), iot_ticks_to_seconds(S.t_extract),
                           iot_ticks_to_seconds(S.t_optimize), 0};
    over[3] = over[0] + over[1] + over[2];
    unlock();
    if (ctx->comm != MPI_COMM_NULL) {
        int64_t all[sizeof sums / sizeof *sums];
        double most[NPARTS];
        iot_pmpi.Reduce(sums, all, (int)(sizeof sums / sizeof *sums), MPI_INT64_T, MPI_SUM, 0, ctx->comm);
        iot_pmpi.Reduce(over, most, NPARTS, MPI_DOUBLE, MPI_MAX, 0, ctx->comm);
        memcpy(sums, all, sizeof sums);
        memcpy(over, most, sizeof over);
    }
    if (!ctx->root)
        return;
    iot_buf *b = ctx->out;
    iotuner_report_version(ctx, SMART_SECTION_VERSION);
    lock();
    iot_jw_begin_object(b, "smart");
    iot_jw_string(b, "rules_table", S.rules_source);
    iot_jw_double(b, "margin", S.margin);
    iot_jw_begin_object(b, "prediction");
    for (int i = 0; i < NCOUNTS; i++)
        iot_jw_int(b, counts[i], sums[i]);
    write_fraction(b, sums[1], sums[2]);
    for (int m = 0; m < NMETHODS; m++) {
        const int64_t *f = &sums[NCOUNTS + m * NFIELDS];
        iot_jw_begin_object(b, methods[m]);
        for (int k = 0; k < NFIELDS; k++)
            iot_jw_int(b, method_fields[k], f[k]);
        write_fraction(b, f[1], f[2]);
        iot_jw_end_object(b);
    }
    iot_jw_end_object(b);
    iot_jw_begin_object(b, "overhead");
    for (int i = 0; i < NPARTS; i++)
        iot_jw_double(b, parts[i], over[i]);
    iot_jw_end_object(b);
    size_t calls = 0, rules = 0;
    for (int i = 0; i < S.nids; i++) {
        calls += iot_grammar_length(S.ids[i]->grammar);
        rules += iot_grammar_rule_count(S.ids[i]->grammar);
    }
    iot_jw_begin_object(b, "grammar");
    iot_jw_int(b, "grammars", S.nids);
    iot_jw_int(b, "calls", (int64_t)calls);
    iot_jw_int(b, "signatures", S.sigs ? (int64_t)iot_sigtab_count(S.sigs) : 0);
    iot_jw_int(b, "rules", (int64_t)rules);
    iot_jw_int(b, "memory_bytes", (int64_t)grammars_memory());
    iot_jw_end_object(b);
    write_phases(ctx);
    iot_jw_end_object(b);
    unlock();
}

static void smart_cleanup(void)
{
    for (int i = 0; i < S.nids; i++) {
        iot_grammar_free(S.ids[i]->grammar);
        free(S.ids[i]);
    }
    S.nids = 0;
    for (int i = 0; i < S.nlog; i++) {
        free(S.log[i].insights_json);
        free(S.log[i].rules_json);
        free(S.log[i].settings_json);
    }
    free(S.log);
    S.log = NULL;
    S.nlog = S.caplog = 0;
    iot_sigtab_free(S.sigs);
    iot_rules_free(S.rules);
    free(S.buf);
    free(S.sub);
    S.sigs = NULL;
    S.rules = NULL;
    S.buf = NULL;
    S.sub = NULL;
}

/* A settings source (what it decided for a phase) and a report section. */
/* A subscriber to the phases' events, a settings source (what it decided for a phase) and a report section. */
static const iot_module smart_module = {.name = "smart",
                                        .init = smart_init,
                                        .slot = &slot,
                                        .phase_begin = smart_phase_begin,
                                        .call = smart_call,
                                        .data = smart_data,
                                        .phase_end = smart_phase_end,
                                        .phase_dropped = smart_phase_dropped,
                                        .settings = smart_settings,
                                        .report = smart_report,
                                        .cleanup = smart_cleanup};
IOT_MODULE(smart_module)
