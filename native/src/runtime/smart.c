/* Smart mode: SmartIO's workflow at run time, with a feedback loop.
 *
 * Every HDF5 and MPI-IO call of a file phase becomes a terminal of one
 * Sequitur grammar per rank (POSIX calls stay out: too many and too cheap to
 * model). At each phase start the grammar predicts the phase's calls, and
 * the prediction is scored against what follows. The first phase of an
 * identity (the file name with its numbers normalized: chk_0001.h5 and
 * chk_0002.h5 are one) is learned: at its close, which is collective for the
 * ranks that share the file, the insights read back from the grammar are
 * merged across those ranks and the rules decide settings for the phases
 * that recur. Those settings go through the same appliers, and the same
 * verification, as a settings document's.
 *
 * Feedback: an optimized phase slower than the learned one beyond the margin
 * twice in a row makes the next phase a probe with the default settings. If
 * the probe is clearly faster than those optimized phases, the rules did the
 * harm and are rolled back for good; if not, the slowdown was the machine's
 * (this one drifts 2x over minutes), the rules stay and the probe becomes the
 * new reference.
 *
 * Prediction is per settings state: a phase is predicted from the last phase
 * of its identity that ran under the same settings, since the calls (MPI-IO
 * collective or independent, say) follow the settings. The first phase under
 * new settings is not predicted. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iotuner/smart.h"
#include "pmpi.h"
#include "rt.h"

#define MAX_IDENTITIES 256
#define MAX_LOG 4096
#define MAX_PREDICTED 65536        /* calls predicted at one phase start */
#define MAX_EXTRACT (1u << 20)     /* calls of a learned phase read back for extraction */

int iot_smart_on;

typedef enum { ROLE_LEARN, ROLE_OPTIMIZED, ROLE_PROBE, ROLE_DEFAULT } phase_role;
enum { STATE_DEFAULT, STATE_OPTIMIZED, STATES }; /* the settings a phase ran under */

typedef struct {
    char identity[256];
    int created; /* create and open of the same name are different phases */
    int occurrences;
    int learned;
    iot_insights insights;
    iot_rule_result result;
    iot_settings *settings; /* decided for the recurrences; kept after a roll-back (phases may point into it) */
    iot_feedback feedback;
    /* the last phase in each state that the grammar took in, as a span of its input */
    uint64_t span_pos[STATES], span_len[STATES];
    int have_span[STATES];
    int taken[STATES];         /* phases of each state the grammar took in */
    double last_hit[STATES];   /* how well the last phase of each state was predicted */
} identity_rec;

typedef struct iot_smart_phase {
    identity_rec *id;
    int occurrence;
    phase_role role;
    uint64_t start_pos; /* grammar length at the phase's first call */
    iot_locality_tracker writes, reads;
    MPI_Comm comm;      /* ours, duplicated from the file's (MPI_COMM_NULL: one process) */
    int comm_size;
    int learn_calls;    /* the grammar takes this phase's calls in */
    char method[16];    /* how the phase was predicted: "rule", "repeat", "none" */
    size_t predicted;
    uint64_t hits0, misses0;
} smart_phase;

typedef struct {
    char identity[256];
    char file[256];
    int occurrence;
    phase_role role;
    char method[16];
    size_t predicted;
    uint64_t hits, misses;
    double mib_s, reference_mib_s;
    char *insights_json; /* learned phases */
    char *rules_json;    /* learned phases: fired rules and settings */
    char feedback[512];
} log_entry;

static struct {
    atomic_flag lock; /* a spin lock: held for a few hundred instructions, almost never contended */
    iot_sigtab *sigs;
    iot_grammar *grammar;
    iot_predcheck check;
    iot_rules *rules;
    char rules_source[256];
    double margin;
    identity_rec ids[MAX_IDENTITIES];
    int nids;
    log_entry log[MAX_LOG];
    int nlog;
    uint64_t t_predict, t_extract, t_optimize;
    uint64_t calls; /* calls seen, for sampling the timing of the per-call work */
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

void iot_smart_init(void)
{
    const char *on = getenv("IOTUNER_SMART");
    if (!on || !*on || !strcmp(on, "0"))
        return;
    S.sigs = iot_sigtab_new();
    S.grammar = iot_grammar_new();
    S.buf = malloc(MAX_EXTRACT * sizeof *S.buf);
    iot_predcheck_init(&S.check);
    const char *margin = getenv("IOTUNER_SMART_MARGIN");
    S.margin = margin ? atof(margin) : 0.25;
    if (!(S.margin > 0 && S.margin < 1))
        S.margin = 0.25;
    const char *table = getenv("IOTUNER_SMART_RULES"); /* tests only: replace the rules table */
    if (table && *table) {
        char err[512] = "";
        FILE *f = fopen(table, "rb");
        char *text = NULL;
        if (f) {
            text = calloc(1, 1 << 20);
            if (text && fread(text, 1, (1 << 20) - 1, f) == 0)
                snprintf(err, sizeof err, "empty file");
            fclose(f);
        } else {
            snprintf(err, sizeof err, "cannot read it");
        }
        if (text && !err[0])
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
    if (!S.sigs || !S.grammar || !S.buf || !S.rules) {
        iot_warn("smart mode: out of memory at start-up; running without it");
        return;
    }
    iot_smart_on = 1;
}

static identity_rec *identity_for(const char *path, int created)
{
    char identity[256];
    iot_phase_identity(path, identity, sizeof identity);
    for (int i = 0; i < S.nids; i++)
        if (S.ids[i].created == created && !strcmp(S.ids[i].identity, identity))
            return &S.ids[i];
    if (S.nids == MAX_IDENTITIES)
        return NULL;
    identity_rec *id = &S.ids[S.nids++];
    memset(id, 0, sizeof *id);
    snprintf(id->identity, sizeof id->identity, "%s", identity);
    id->created = created;
    return id;
}

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

/* One call: scored against the running prediction, and a terminal of the
 * grammar while the phase is being learned. */
static int feed(const smart_phase *sp, const char *func, const int64_t *args, int nargs, int offset_index)
{
    int t = terminal_of(func, args, nargs, offset_index);
    if (t < 0)
        return t;
    if (!sp || sp->learn_calls)
        iot_grammar_append(S.grammar, t); /* stops learning past its memory, keeps predicting */
    iot_predcheck_observe(&S.check, t);
    return t;
}

static const char *role_name(phase_role r)
{
    static const char *names[] = {"learn", "optimized", "probe", "default"};
    return names[r];
}

static int state_of(phase_role r)
{
    return r == ROLE_OPTIMIZED ? STATE_OPTIMIZED : STATE_DEFAULT;
}

/* The phase's calls after its first one, into S.buf; returns how many. */
static size_t predict(smart_phase *sp, int trigger)
{
    identity_rec *id = sp->id;
    int state = state_of(sp->role);
    snprintf(sp->method, sizeof sp->method, "none");
    if (!id->have_span[state])
        return 0; /* no phase ran under these settings yet: its calls are unknown */
    /* the last phase under these settings, read back from the grammar (its first call is the trigger) */
    size_t n = iot_grammar_expand(S.grammar, 0, id->span_pos[state] + 1, S.buf,
                                  id->span_len[state] > MAX_PREDICTED ? MAX_PREDICTED : id->span_len[state] - 1);
    if (n)
        snprintf(sp->method, sizeof sp->method, "repeat");
    /* SmartIO 3.1.2, when the previous phase ran under the same settings (else
     * the grammar's rules describe the other settings' calls): the rule
     * beginning with this call that S references most, cut before the next
     * phase start; kept when it covers the phase at least as well */
    int same = id->have_span[STATES - 1 - state] == 0 ||
               id->span_pos[state] > id->span_pos[STATES - 1 - state];
    if (same) {
        size_t r = iot_grammar_predict_phase(S.grammar, trigger, S.buf + MAX_PREDICTED, MAX_PREDICTED);
        if (r >= n && r > 0) {
            memmove(S.buf, S.buf + MAX_PREDICTED, r * sizeof *S.buf);
            n = r;
            snprintf(sp->method, sizeof sp->method, "rule");
        }
    }
    return n;
}

void iot_smart_phase_begin(iot_phase *ph, const char *func, const int64_t *args, int nargs)
{
    if (!iot_smart_on || !ph)
        return;
    uint64_t t0 = iot_ticks();
    smart_phase *sp = calloc(1, sizeof *sp);
    if (!sp)
        return;
    lock();
    sp->id = identity_for(ph->path, ph->created);
    if (!sp->id) {
        unlock();
        free(sp);
        return;
    }
    identity_rec *id = sp->id;
    sp->occurrence = id->occurrences++;
    sp->role = !id->learned                ? ROLE_LEARN
               : id->feedback.rolled_back ? ROLE_DEFAULT
               : id->feedback.probing     ? ROLE_PROBE
                                          : ROLE_OPTIMIZED;
    sp->comm = MPI_COMM_NULL;
    sp->comm_size = 1;
    iot_locality_init(&sp->writes);
    iot_locality_init(&sp->reads);
    sp->start_pos = iot_grammar_length(S.grammar);
    /* the grammar takes a phase in until two phases of its state were taken
     * and the last one was predicted well: a steady phase only costs its scoring */
    int state = state_of(sp->role);
    sp->learn_calls = id->taken[state] < 2 || id->last_hit[state] < 0.9;
    int t = feed(sp, func, args, nargs, -1);
    size_t n = t >= 0 ? predict(sp, t) : 0;
    sp->predicted = n;
    if (n)
        iot_predcheck_begin(&S.check, S.buf, n);
    sp->hits0 = S.check.hits;
    sp->misses0 = S.check.misses;
    ph->smart = sp;
    S.t_predict += iot_ticks() - t0;
    unlock();
}

void iot_smart_phase_comm(iot_phase *ph, MPI_Comm comm)
{
    if (!iot_smart_on || !ph || !ph->smart || ph->smart->comm != MPI_COMM_NULL || !iot_pmpi_resolve())
        return;
    int size = 1;
    iot_pmpi.Comm_size(comm, &size);
    if (size > 1 && iot_pmpi.Comm_dup(comm, &ph->smart->comm) == MPI_SUCCESS) /* inside the collective open */
        ph->smart->comm_size = size;
}

/* A call of a phase; with an offset (MPI-IO _at data calls), also a point of its locality. */
static void call(iot_phase *ph, const char *func, const int64_t *args, int nargs, int offset_index, int is_write)
{
    if (!ph || !ph->smart)
        return;
    lock();
    unsigned w = iot_time_weight(S.calls++, 0); /* the per-call work is timed on a sample, like the I/O */
    uint64_t t0 = w ? iot_ticks() : 0;
    feed(ph->smart, func, args, nargs, offset_index);
    if (offset_index >= 0 && ph->smart->role == ROLE_LEARN) /* locality matters to the learned phase only */
        iot_locality_add(is_write ? &ph->smart->writes : &ph->smart->reads, args[offset_index], args[IOT_ARG_BYTES]);
    if (w)
        S.t_predict += (iot_ticks() - t0) * w;
    unlock();
}

void iot_smart_call(iot_phase *ph, const char *func, const int64_t *args, int nargs, int offset_index)
{
    if (iot_smart_on)
        call(ph, func, args, nargs, -1, 0);
}

void iot_smart_data(iot_phase *ph, const char *func, int64_t bytes, int64_t offset, int has_offset, int is_write)
{
    int64_t args[2] = {bytes, offset};
    if (iot_smart_on)
        call(ph, func, args, has_offset ? 2 : 1, has_offset ? 1 : -1, is_write);
}

/* The phase's data bytes and time, agreed by the ranks that share the file. */
static double phase_bandwidth(iot_phase *ph, smart_phase *sp)
{
    int64_t bytes;
    if (atomic_load(&ph->h5_writes) || atomic_load(&ph->h5_reads))
        bytes = (int64_t)(atomic_load(&ph->h5_bytes_written) + atomic_load(&ph->h5_bytes_read));
    else if (atomic_load(&ph->mpi_writes) || atomic_load(&ph->mpi_reads))
        bytes = (int64_t)(atomic_load(&ph->mpi_bytes_written) + atomic_load(&ph->mpi_bytes_read));
    else
        bytes = (int64_t)(atomic_load(&ph->bytes_written) + atomic_load(&ph->bytes_read));
    double seconds = iot_ticks_to_seconds(ph->t_end - ph->t_start);
    if (sp->comm != MPI_COMM_NULL) {
        int64_t total = 0;
        double slowest = 0;
        iot_pmpi.Allreduce(&bytes, &total, 1, MPI_INT64_T, MPI_SUM, sp->comm);
        iot_pmpi.Allreduce(&seconds, &slowest, 1, MPI_DOUBLE, MPI_MAX, sp->comm);
        bytes = total;
        seconds = slowest;
    }
    return seconds > 0 ? (double)bytes / (1024.0 * 1024.0) / seconds : 0;
}

/* SmartIO 3.2 and 3.3: insights of the phase just learned, merged across the
 * ranks that share it, then the rules. */
static void learn(iot_phase *ph, smart_phase *sp, log_entry *e)
{
    uint64_t t0 = iot_ticks();
    identity_rec *id = sp->id;
    uint64_t len = iot_grammar_length(S.grammar) - sp->start_pos;
    size_t n = iot_grammar_expand(S.grammar, 0, sp->start_pos, S.buf, len < MAX_EXTRACT ? len : MAX_EXTRACT);
    iot_insights local;
    iot_insights_from_calls(S.sigs, S.buf, n, &local);
    iot_insights_set_locality(&local, &sp->writes, &sp->reads);
    snprintf(local.identity, sizeof local.identity, "%s", id->identity);
    local.path_hash = (int64_t)iot_path_hash(ph->path);
    snprintf(local.file_system, sizeof local.file_system, "%s", ph->file_system);
    local.lustre_pfl = iot_fs_is_lustre(ph->file_system) ? 1 : 0; /* PFL since Lustre 2.10 (2017): assumed */
    if (sp->comm != MPI_COMM_NULL) {
        int64_t mx[IOT_INSIGHTS_NMAX], sm[IOT_INSIGHTS_NSUM], rmx[IOT_INSIGHTS_NMAX], rsm[IOT_INSIGHTS_NSUM];
        iot_insights_pack(&local, mx, sm);
        iot_pmpi.Allreduce(mx, rmx, IOT_INSIGHTS_NMAX, MPI_INT64_T, MPI_MAX, sp->comm);
        iot_pmpi.Allreduce(sm, rsm, IOT_INSIGHTS_NSUM, MPI_INT64_T, MPI_SUM, sp->comm);
        iot_insights_unpack(rmx, rsm, &local, &id->insights);
    } else {
        id->insights = local;
        if (iot_g.nprocs > 1 && id->insights.files == IOT_FILES_UNKNOWN)
            id->insights.files = IOT_FILES_PER_PROCESS; /* one process of several opened it */
    }
    uint64_t t1 = iot_ticks();
    S.t_extract += t1 - t0;

    iot_rules_evaluate(S.rules, &id->insights, &id->result);
    char *doc = iot_rule_result_settings_json(&id->result, NULL, "smart mode");
    char err[256];
    id->settings = doc ? iot_settings_parse(doc, strlen(doc), err, sizeof err) : NULL;
    if (doc && !id->settings)
        iot_warn("smart mode: the rules produced settings the runtime rejects (%s); %s stays untuned", err,
                 id->identity);
    free(doc);
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

static void fired_with_settings(const identity_rec *id, char *out, size_t outlen)
{
    size_t pos = 0;
    out[0] = 0;
    for (int i = 0; i < id->result.nfired && pos < outlen; i++)
        for (int k = 0; k < id->result.nsettings; k++)
            if (id->result.settings[k].rule == id->result.fired[i].rule) {
                pos += (size_t)snprintf(out + pos, outlen - pos, "%s%d", pos ? ", " : "", id->result.fired[i].rule);
                break;
            }
}

/* The feedback loop (see iot_feedback in iotuner/smart.h). */
static void feedback(smart_phase *sp, log_entry *e)
{
    identity_rec *id = sp->id;
    char why[256], rules[128];
    iot_feedback_action a = iot_feedback_observe(&id->feedback, sp->role == ROLE_PROBE, e->mib_s, why, sizeof why);
    fired_with_settings(id, rules, sizeof rules);
    if (a == IOT_FB_ROLLED_BACK)
        snprintf(e->feedback, sizeof e->feedback, "rolled back rules %s: %s; the next phases keep the defaults",
                 rules, why);
    else if (a == IOT_FB_KEPT)
        snprintf(e->feedback, sizeof e->feedback, "kept rules %s: %s", rules, why);
    else
        snprintf(e->feedback, sizeof e->feedback, "%s", why);
}

void iot_smart_phase_end(iot_phase *ph)
{
    if (!iot_smart_on || !ph || !ph->smart)
        return;
    smart_phase *sp = ph->smart;
    ph->smart = NULL;
    lock();
    log_entry *e = S.nlog < MAX_LOG ? &S.log[S.nlog++] : NULL;
    log_entry scratch;
    if (!e)
        e = &scratch;
    memset(e, 0, sizeof *e);
    snprintf(e->identity, sizeof e->identity, "%s", sp->id->identity);
    snprintf(e->file, sizeof e->file, "%s", ph->path);
    e->occurrence = sp->occurrence;
    e->role = sp->role;
    snprintf(e->method, sizeof e->method, "%s", sp->method);
    e->predicted = sp->predicted;
    e->hits = S.check.hits - sp->hits0;
    e->misses = S.check.misses - sp->misses0;
    unlock();

    /* collectives on the file's ranks, outside the lock: they block */
    uint64_t t0 = iot_ticks();
    e->mib_s = phase_bandwidth(ph, sp);
    lock();
    S.t_extract += iot_ticks() - t0;
    identity_rec *id = sp->id;
    int state = state_of(sp->role);
    if (sp->learn_calls) {
        id->span_pos[state] = sp->start_pos;
        id->span_len[state] = iot_grammar_length(S.grammar) - sp->start_pos;
        id->have_span[state] = 1;
        id->taken[state]++;
    }
    id->last_hit[state] = e->hits + e->misses ? (double)e->hits / (double)(e->hits + e->misses) : 1.0;
    if (sp->role == ROLE_LEARN) {
        iot_feedback_init(&id->feedback, e->mib_s, S.margin);
        unlock();
        learn(ph, sp, e); /* its collectives run outside the lock too */
        lock();
    } else if (sp->role == ROLE_OPTIMIZED || sp->role == ROLE_PROBE) {
        uint64_t t1 = iot_ticks();
        feedback(sp, e);
        S.t_optimize += iot_ticks() - t1;
    }
    e->reference_mib_s = sp->id->feedback.reference;
    int verbose = iot_g.verbose && iot_g.rank == 0;
    unlock();
    if (verbose)
        fprintf(stderr, "iotuner smart: %s #%d (%s): %zu calls predicted (%s), %.1f MiB/s%s%s\n%s%s%s%s",
                e->identity, e->occurrence,
                role_name(e->role),
                e->predicted, e->method, e->mib_s, e->feedback[0] ? "; " : "", e->feedback,
                e->insights_json ? "  insights: " : "", e->insights_json ? e->insights_json : "",
                e->rules_json ? "\n  rules: " : "", e->rules_json ? e->rules_json : "");
    if (verbose && e->insights_json)
        fputc('\n', stderr);
    if (sp->comm != MPI_COMM_NULL)
        iot_pmpi.Comm_free(&sp->comm);
    free(sp);
}

void iot_smart_phase_drop(iot_phase *ph)
{
    if (!ph || !ph->smart)
        return;
    if (ph->smart->comm != MPI_COMM_NULL)
        iot_pmpi.Comm_free(&ph->smart->comm);
    free(ph->smart);
    ph->smart = NULL;
}

const iot_settings *iot_smart_settings(const iot_phase *ph)
{
    if (!iot_smart_on || !ph || !ph->smart || ph->smart->role != ROLE_OPTIMIZED)
        return NULL;
    return ph->smart->id->settings;
}


char *iot_smart_rank_json(void)
{
    if (!iot_smart_on)
        return NULL;
    lock();
    iot_predcheck_finish(&S.check);
    iot_buf b;
    iot_buf_init(&b);
    iot_jw_begin_object(&b, NULL);
    iot_jw_string(&b, "rules_table", S.rules_source);
    iot_jw_double(&b, "margin", S.margin);
    iot_predcheck_write_json(&S.check, &b, "prediction");
    iot_jw_begin_object(&b, "overhead");
    iot_jw_double(&b, "prediction_s", iot_ticks_to_seconds(S.t_predict));
    iot_jw_double(&b, "extraction_s", iot_ticks_to_seconds(S.t_extract));
    iot_jw_double(&b, "optimization_s", iot_ticks_to_seconds(S.t_optimize));
    iot_jw_end_object(&b);
    iot_jw_begin_object(&b, "grammar");
    iot_jw_int(&b, "calls", (int64_t)iot_grammar_length(S.grammar));
    iot_jw_int(&b, "signatures", (int64_t)iot_sigtab_count(S.sigs));
    iot_jw_int(&b, "rules", (int64_t)iot_grammar_rule_count(S.grammar));
    iot_jw_int(&b, "memory_bytes", (int64_t)iot_grammar_memory(S.grammar));
    iot_jw_end_object(&b);
    iot_jw_begin_array(&b, "phases");
    for (int i = 0; i < S.nlog; i++) {
        const log_entry *e = &S.log[i];
        iot_jw_begin_object(&b, NULL);
        iot_jw_string(&b, "identity", e->identity);
        iot_jw_string(&b, "file", e->file);
        iot_jw_int(&b, "occurrence", e->occurrence);
        iot_jw_string(&b, "role", role_name(e->role));
        iot_jw_begin_object(&b, "prediction");
        iot_jw_string(&b, "method", e->method);
        iot_jw_int(&b, "calls", (int64_t)e->predicted);
        iot_jw_int(&b, "hits", (int64_t)e->hits);
        iot_jw_int(&b, "misses", (int64_t)e->misses);
        iot_jw_end_object(&b);
        iot_jw_double(&b, "bandwidth_mib_s", e->mib_s);
        iot_jw_double(&b, "reference_mib_s", e->reference_mib_s);
        if (e->insights_json) {
            iot_json *v = iot_json_parse(e->insights_json, strlen(e->insights_json), NULL, 0);
            iot_jw_value(&b, "insights", v);
            iot_json_free(v);
        }
        if (e->rules_json) {
            iot_json *v = iot_json_parse(e->rules_json, strlen(e->rules_json), NULL, 0);
            iot_jw_value(&b, "rules", v);
            iot_json_free(v);
        }
        iot_jw_string(&b, "feedback", e->feedback[0] ? e->feedback : NULL);
        iot_jw_end_object(&b);
    }
    iot_jw_end_array(&b);
    iot_jw_end_object(&b);
    unlock();
    return iot_buf_take(&b);
}

/* Rank 0's view of the phases and decisions (the same on every rank that
 * shares a file); prediction hits summed and overheads maxed over ranks. */
void iot_smart_merge_json(iot_buf *b, const iot_json *const *ranks, int n)
{
    const iot_json *first = NULL;
    int64_t sums[6] = {0};
    static const char *counts[] = {"predictions", "hits", "misses", "superseded", "unpredicted"};
    double over[3] = {0, 0, 0};
    static const char *parts[] = {"prediction_s", "extraction_s", "optimization_s"};
    for (int r = 0; r < n; r++) {
        const iot_json *s = iot_json_get(ranks[r], "smart");
        if (!s || s->type != IOT_JSON_OBJECT)
            continue;
        if (!first)
            first = s;
        const iot_json *p = iot_json_get(s, "prediction"), *o = iot_json_get(s, "overhead");
        for (int i = 0; i < 5; i++) {
            const iot_json *v = iot_json_get(p, counts[i]);
            sums[i] += v && v->type == IOT_JSON_NUMBER ? (int64_t)v->number : 0;
        }
        for (int i = 0; i < 3; i++) {
            const iot_json *v = iot_json_get(o, parts[i]);
            double x = v && v->type == IOT_JSON_NUMBER ? v->number : 0;
            over[i] = x > over[i] ? x : over[i];
        }
    }
    if (!first)
        return;
    iot_jw_begin_object(b, "smart");
    iot_jw_value(b, "rules_table", iot_json_get(first, "rules_table"));
    iot_jw_value(b, "margin", iot_json_get(first, "margin"));
    iot_jw_begin_object(b, "prediction");
    for (int i = 0; i < 5; i++)
        iot_jw_int(b, counts[i], sums[i]);
    if (sums[1] + sums[2] > 0)
        iot_jw_double(b, "hit_fraction", (double)sums[1] / (double)(sums[1] + sums[2]));
    else
        iot_jw_null(b, "hit_fraction");
    iot_jw_end_object(b);
    iot_jw_begin_object(b, "overhead");
    for (int i = 0; i < 3; i++)
        iot_jw_double(b, parts[i], over[i]);
    iot_jw_double(b, "total_s", over[0] + over[1] + over[2]);
    iot_jw_end_object(b);
    iot_jw_value(b, "grammar", iot_json_get(first, "grammar"));
    iot_jw_value(b, "phases", iot_json_get(first, "phases"));
    iot_jw_end_object(b);
}
