/* Incremental Sequitur (Nevill-Manning & Witten, 1997), written from the
 * paper's description.
 *
 * Representation. Every rule's right-hand side is a circular doubly linked
 * list of nodes through a guard node; nodes live in one array and are
 * addressed by 32-bit index (half the size of pointers, and the array can
 * be reallocated). A node's symbol is a terminal (>= 0), a reference to a
 * rule (-1 - rule) or, for a guard, GUARD_BASE - rule.
 *
 * Digram uniqueness. A hash table maps each digram (pair of adjacent
 * symbols) to the one node where it starts: open addressing, linear
 * probing, backward-shift deletion, slots of {node, hash}; O(1) expected
 * per look-up, insert and delete. Whenever a node's successor changes or
 * the node goes away, its digram is first taken out of the table
 * ("forget"); every digram that comes into being is pushed on a work stack
 * and checked later: absent from the table, it is entered; present
 * elsewhere without overlap, the two occurrences are matched: replaced by
 * the rule whose whole right-hand side the older one is, or by a new rule.
 * Checks are idempotent, so checking more than needed is harmless; the
 * work stack replaces the recursion of the classic formulation, so a long
 * chain of replacements costs heap, not C stack.
 *
 * Rule utility. References to a rule only disappear when a digram holding
 * them is replaced, and the replacing rule's right-hand side then holds the
 * last one; so after each match only the two symbols of that right-hand
 * side can name a rule used once, which is then expanded in place.
 *
 * A rule's expansion never changes once made (substitution and expansion
 * both preserve it), so each rule keeps its expansion length and first
 * terminal from birth, and rules are indexed by first terminal (a list per
 * terminal) for prediction. References from S are counted too (a node
 * knows whether it is in S: nodes enter S only by appending or by a
 * substitution inside S, and expansion never happens in S).
 *
 * Memory. Nodes: 16 bytes; digram slots: 8 bytes at load 1/4..1/2; rules:
 * 40 bytes. Every allocation happens before a step starts (reserve), so
 * running out of memory never leaves a half-done step behind. */
#include "iotuner/grammar.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NIL UINT32_MAX
#define REF_MIN (-(1 << 30))                /* references: -1 (rule 0) .. REF_MIN */
#define GUARD_BASE (REF_MIN - 1)            /* guard of rule r: GUARD_BASE - r */
#define FREE_SYM INT32_MIN                  /* a node on the free list */
#define MAX_RULES ((uint32_t)(1u << 30) - 2) /* keeps every guard symbol above FREE_SYM */
#define STEP_NODES 8                        /* most nodes one step can take (5 in fact) */

typedef struct {
    uint32_t prev, next;
    int32_t sym;
    uint32_t in_start; /* 1 if the node is on S's right-hand side */
} gnode;

typedef struct {
    uint32_t guard;                /* NIL: free slot */
    uint32_t uses, in_start;       /* references from all right-hand sides / from S's */
    int32_t first;                 /* first terminal of the expansion */
    uint32_t cand_prev, cand_next; /* rules with the same first terminal; the free list uses cand_next */
    uint64_t length, last_seen;
} grule;

typedef struct {
    uint32_t node; /* NIL: empty */
    uint32_t hash;
} dslot;

struct iot_grammar {
    gnode *n;
    uint32_t ncap, nused, nfree, nlive; /* nused: high-water mark; nfree: free-list head */
    grule *r;
    uint32_t rcap, rused, rfree, rlive;
    dslot *d;
    size_t dcap, dcount; /* dcap: power of two */
    uint32_t *heads;     /* per terminal: newest rule whose expansion begins with it */
    uint64_t *seen_at;   /* per terminal: its last two positions in the input + 1 (0: none) */
    size_t nheads;
    uint32_t *work; /* nodes whose digram needs checking */
    size_t nwork, workcap;
    uint64_t appended;
    size_t symbols; /* right-hand-side symbols, all rules */
    int failed;
};

/* ---- symbols ---- */

static int is_guard(int32_t s)
{
    return s <= GUARD_BASE && s != FREE_SYM;
}

static int is_ref(int32_t s)
{
    return s < 0 && s >= REF_MIN;
}

static uint32_t ref_rule(int32_t s)
{
    return (uint32_t)(-(s + 1));
}

static int32_t rule_ref(uint32_t r)
{
    return -(int32_t)r - 1;
}

static uint32_t guard_rule(int32_t s)
{
    return (uint32_t)(GUARD_BASE - s);
}

static uint64_t sym_length(const iot_grammar *g, int32_t s)
{
    return s >= 0 ? 1 : g->r[ref_rule(s)].length;
}

static int32_t sym_first(const iot_grammar *g, int32_t s)
{
    return s >= 0 ? s : g->r[ref_rule(s)].first;
}

static int live_rule(const iot_grammar *g, int rule)
{
    return g && rule >= 0 && (uint32_t)rule < g->rused && g->r[rule].guard != NIL;
}

/* ---- memory ---- */

static int grow_nodes(iot_grammar *g)
{
    if (g->ncap >= (1u << 31))
        return -1;
    uint32_t cap = g->ncap * 2;
    gnode *n = realloc(g->n, (size_t)cap * sizeof *n);
    if (!n)
        return -1;
    g->n = n;
    g->ncap = cap;
    return 0;
}

static int grow_rules(iot_grammar *g)
{
    if (g->rcap > MAX_RULES / 2)
        return -1;
    uint32_t cap = g->rcap * 2;
    grule *r = realloc(g->r, (size_t)cap * sizeof *r);
    if (!r)
        return -1;
    g->r = r;
    g->rcap = cap;
    return 0;
}

static uint32_t digram_hash(int32_t a, int32_t b)
{
    uint64_t k = (uint64_t)(uint32_t)a << 32 | (uint32_t)b;
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    k *= 0xc4ceb9fe1a85ec53ULL;
    k ^= k >> 33;
    return (uint32_t)k;
}

static void slot_put(dslot *d, size_t mask, uint32_t node, uint32_t hash)
{
    size_t i = hash & mask;
    while (d[i].node != NIL)
        i = (i + 1) & mask;
    d[i] = (dslot){node, hash};
}

static int grow_table(iot_grammar *g)
{
    if (g->dcap >= ((size_t)1 << 31))
        return -1;
    size_t cap = g->dcap * 2;
    dslot *d = malloc(cap * sizeof *d);
    if (!d)
        return -1;
    for (size_t i = 0; i < cap; i++)
        d[i].node = NIL;
    for (size_t i = 0; i < g->dcap; i++)
        if (g->d[i].node != NIL)
            slot_put(d, cap - 1, g->d[i].node, g->d[i].hash);
    free(g->d);
    g->d = d;
    g->dcap = cap;
    return 0;
}

/* Room for one step: a match with its substitutions and expansions. */
static int reserve(iot_grammar *g)
{
    if (g->ncap - g->nlive < STEP_NODES && grow_nodes(g))
        return -1;
    if (g->rcap - g->rlive < 2 && grow_rules(g))
        return -1;
    if ((g->dcount + STEP_NODES) * 2 > g->dcap && grow_table(g))
        return -1;
    return 0;
}

static int reserve_terminal(iot_grammar *g, int t)
{
    if ((size_t)t < g->nheads)
        return 0;
    size_t n = g->nheads * 2 > (size_t)t + 1 ? g->nheads * 2 : (size_t)t + 1;
    uint64_t *at = realloc(g->seen_at, 2 * n * sizeof *at);
    if (!at)
        return -1;
    g->seen_at = at;
    memset(at + 2 * g->nheads, 0, 2 * (n - g->nheads) * sizeof *at);
    uint32_t *h = realloc(g->heads, n * sizeof *h);
    if (!h)
        return -1;
    for (size_t i = g->nheads; i < n; i++)
        h[i] = NIL;
    g->heads = h;
    g->nheads = n;
    return 0;
}

static void push(iot_grammar *g, uint32_t node)
{
    if (g->nwork == g->workcap) {
        size_t cap = g->workcap ? g->workcap * 2 : 64;
        uint32_t *w = realloc(g->work, cap * sizeof *w);
        if (!w) {
            g->failed = 1; /* this check is lost: stop learning once the step is done */
            return;
        }
        g->work = w;
        g->workcap = cap;
    }
    g->work[g->nwork++] = node;
}

/* Only after reserve(): cannot fail. */
static uint32_t node_new(iot_grammar *g, int32_t sym, uint32_t in_start)
{
    uint32_t i;
    if (g->nfree != NIL) {
        i = g->nfree;
        g->nfree = g->n[i].next;
    } else {
        i = g->nused++;
    }
    g->n[i] = (gnode){NIL, NIL, sym, in_start};
    g->nlive++;
    return i;
}

static void node_free(iot_grammar *g, uint32_t i)
{
    g->n[i] = (gnode){NIL, g->nfree, FREE_SYM, 0};
    g->nfree = i;
    g->nlive--;
}

static void link2(iot_grammar *g, uint32_t a, uint32_t b)
{
    g->n[a].next = b;
    g->n[b].prev = a;
}

/* ---- the digram table ---- */

static uint32_t digram_find(const iot_grammar *g, int32_t a, int32_t b, uint32_t hash)
{
    size_t mask = g->dcap - 1;
    for (size_t i = hash & mask; g->d[i].node != NIL; i = (i + 1) & mask) {
        if (g->d[i].hash != hash)
            continue;
        const gnode *x = &g->n[g->d[i].node];
        if (x->sym == a && g->n[x->next].sym == b)
            return g->d[i].node;
    }
    return NIL;
}

static void digram_insert(iot_grammar *g, uint32_t a)
{
    slot_put(g->d, g->dcap - 1, a, digram_hash(g->n[a].sym, g->n[g->n[a].next].sym));
    g->dcount++;
}

/* Takes the digram starting at a out of the table, if it is the one entered. */
static void forget(iot_grammar *g, uint32_t a)
{
    int32_t sa = g->n[a].sym;
    uint32_t b = g->n[a].next;
    int32_t sb = g->n[b].sym;
    if (is_guard(sa) || is_guard(sb))
        return;
    size_t mask = g->dcap - 1, i = digram_hash(sa, sb) & mask;
    while (g->d[i].node != a) {
        if (g->d[i].node == NIL)
            return;
        i = (i + 1) & mask;
    }
    /* Backward-shift deletion: pull later entries of the probe run into the
     * hole unless their home lies in (hole, j]. */
    for (size_t j = i;;) {
        j = (j + 1) & mask;
        if (g->d[j].node == NIL)
            break;
        size_t home = g->d[j].hash & mask;
        if (((j - home) & mask) >= ((j - i) & mask)) {
            g->d[i] = g->d[j];
            i = j;
        }
    }
    g->d[i].node = NIL;
    g->dcount--;
    /* In "x x x" only one of the two overlapping digrams is entered; when it
     * goes, the other one must come in. */
    if (sa == sb) {
        if (g->n[g->n[a].prev].sym == sa)
            push(g, g->n[a].prev);
        if (g->n[g->n[b].next].sym == sa)
            push(g, b);
    }
}

/* ---- rules ---- */

static void ref(iot_grammar *g, int32_t s, uint32_t in_start)
{
    if (!is_ref(s))
        return;
    grule *r = &g->r[ref_rule(s)];
    r->uses++;
    if (in_start) {
        r->in_start++;
        r->last_seen = g->appended;
    }
}

static void unref(iot_grammar *g, int32_t s, uint32_t in_start)
{
    if (!is_ref(s))
        return;
    grule *r = &g->r[ref_rule(s)];
    r->uses--;
    r->in_start -= in_start;
}

static void cand_add(iot_grammar *g, uint32_t r)
{
    uint32_t *head = &g->heads[g->r[r].first];
    g->r[r].cand_prev = NIL;
    g->r[r].cand_next = *head;
    if (*head != NIL)
        g->r[*head].cand_prev = r;
    *head = r;
}

static void cand_remove(iot_grammar *g, uint32_t r)
{
    uint32_t p = g->r[r].cand_prev, n = g->r[r].cand_next;
    if (p != NIL)
        g->r[p].cand_next = n;
    else
        g->heads[g->r[r].first] = n;
    if (n != NIL)
        g->r[n].cand_prev = p;
}

/* A new rule with right-hand side s1 s2 (not yet entered in the table). */
static uint32_t rule_new(iot_grammar *g, int32_t s1, int32_t s2)
{
    uint32_t r;
    if (g->rfree != NIL) {
        r = g->rfree;
        g->rfree = g->r[r].cand_next;
    } else {
        r = g->rused++;
    }
    g->rlive++;
    uint32_t guard = node_new(g, GUARD_BASE - (int32_t)r, 0);
    uint32_t b1 = node_new(g, s1, 0), b2 = node_new(g, s2, 0);
    link2(g, guard, b1);
    link2(g, b1, b2);
    link2(g, b2, guard);
    g->r[r] = (grule){guard, 0, 0, sym_first(g, s1), NIL, NIL, sym_length(g, s1) + sym_length(g, s2), g->appended};
    cand_add(g, r);
    ref(g, s1, 0);
    ref(g, s2, 0);
    g->symbols += 2;
    return r;
}

static void rule_free(iot_grammar *g, uint32_t r)
{
    cand_remove(g, r);
    node_free(g, g->r[r].guard);
    g->r[r].guard = NIL;
    g->r[r].cand_next = g->rfree;
    g->rfree = r;
    g->rlive--;
}

/* Is the digram at a the whole right-hand side of a rule other than S? */
static int whole_rule(const iot_grammar *g, uint32_t a, uint32_t *rule)
{
    int32_t p = g->n[g->n[a].prev].sym;
    if (!is_guard(p) || guard_rule(p) == 0 || !is_guard(g->n[g->n[g->n[a].next].next].sym))
        return 0;
    *rule = guard_rule(p);
    return 1;
}

/* Replaces the digram at a by a reference to rule r. */
static void substitute(iot_grammar *g, uint32_t a, uint32_t r)
{
    uint32_t b = g->n[a].next, p = g->n[a].prev, c = g->n[b].next;
    uint32_t in = g->n[a].in_start;
    forget(g, p);
    forget(g, a);
    forget(g, b);
    unref(g, g->n[a].sym, in);
    unref(g, g->n[b].sym, in);
    node_free(g, a);
    node_free(g, b);
    uint32_t m = node_new(g, rule_ref(r), in);
    link2(g, p, m);
    link2(g, m, c);
    ref(g, rule_ref(r), in);
    g->symbols--;
    push(g, m); /* LIFO: (p, m) is checked first, then (m, c) */
    push(g, p);
}

/* Rule utility: node m holds the last reference to its rule; put the rule's
 * right-hand side in its place and delete the rule. Never happens in S. */
static void expand(iot_grammar *g, uint32_t m)
{
    uint32_t x = ref_rule(g->n[m].sym), p = g->n[m].prev, c = g->n[m].next;
    uint32_t guard = g->r[x].guard, f = g->n[guard].next, l = g->n[guard].prev;
    forget(g, p);
    forget(g, m);
    link2(g, p, f);
    link2(g, l, c);
    node_free(g, m);
    rule_free(g, x);
    g->symbols--;
    push(g, l);
    push(g, p);
}

/* The digram at a also occurs, without overlap, at x (the one in the table). */
static void match(iot_grammar *g, uint32_t a, uint32_t x)
{
    uint32_t r;
    if (whole_rule(g, x, &r)) {
        substitute(g, a, r);
    } else if (whole_rule(g, a, &r)) { /* not seen in fuzzing; keeps bodies >= 2 whatever the order */
        substitute(g, x, r);
        digram_insert(g, a);
    } else {
        r = rule_new(g, g->n[a].sym, g->n[g->n[a].next].sym);
        substitute(g, x, r);
        substitute(g, a, r);
        digram_insert(g, g->n[g->r[r].guard].next);
    }
    /* The replaced occurrences took references only from the symbols now in
     * r's right-hand side, so only they can name a rule used once. */
    uint32_t first = g->n[g->r[r].guard].next, second = g->n[first].next;
    if (is_ref(g->n[first].sym) && g->r[ref_rule(g->n[first].sym)].uses == 1)
        expand(g, first);
    if (is_ref(g->n[second].sym) && g->r[ref_rule(g->n[second].sym)].uses == 1)
        expand(g, second);
}

/* Enters, or matches, the digram starting at a. */
static void check(iot_grammar *g, uint32_t a)
{
    int32_t sa = g->n[a].sym;
    if (sa == FREE_SYM || is_guard(sa))
        return;
    uint32_t b = g->n[a].next;
    int32_t sb = g->n[b].sym;
    if (is_guard(sb))
        return;
    uint32_t hash = digram_hash(sa, sb);
    uint32_t x = digram_find(g, sa, sb, hash);
    if (x == NIL) {
        slot_put(g->d, g->dcap - 1, a, hash);
        g->dcount++;
    } else if (x != a && g->n[x].next != a && b != x) { /* not itself, no overlap */
        match(g, a, x);
    }
}

/* ---- public: building ---- */

iot_grammar *iot_grammar_new(void)
{
    iot_grammar *g = calloc(1, sizeof *g);
    if (!g)
        return NULL;
    g->ncap = 256;
    g->rcap = 64;
    g->dcap = 256;
    g->n = malloc(g->ncap * sizeof *g->n);
    g->r = malloc(g->rcap * sizeof *g->r);
    g->d = malloc(g->dcap * sizeof *g->d);
    if (!g->n || !g->r || !g->d) {
        iot_grammar_free(g);
        return NULL;
    }
    for (size_t i = 0; i < g->dcap; i++)
        g->d[i].node = NIL;
    g->nfree = g->rfree = NIL;
    /* S: rule 0, never referenced, never in a first-terminal list */
    uint32_t guard = node_new(g, GUARD_BASE, 0);
    link2(g, guard, guard);
    g->r[0] = (grule){guard, 0, 0, -1, NIL, NIL, 0, 0};
    g->rused = g->rlive = 1;
    return g;
}

void iot_grammar_free(iot_grammar *g)
{
    if (!g)
        return;
    free(g->n);
    free(g->r);
    free(g->d);
    free(g->heads);
    free(g->seen_at);
    free(g->work);
    free(g);
}

int iot_grammar_append(iot_grammar *g, int terminal)
{
    if (!g || g->failed || terminal < 0 || terminal > IOT_GRAMMAR_MAX_TERMINAL)
        return -1;
    if (reserve(g) || reserve_terminal(g, terminal)) {
        g->failed = 1;
        return -1;
    }
    uint32_t guard = g->r[0].guard, last = g->n[guard].prev;
    uint32_t m = node_new(g, terminal, 1);
    link2(g, last, m);
    link2(g, m, guard);
    if (!g->appended)
        g->r[0].first = terminal;
    g->seen_at[2 * terminal] = g->seen_at[2 * terminal + 1];
    g->seen_at[2 * terminal + 1] = g->appended + 1;
    g->appended++;
    g->r[0].length++;
    g->symbols++;
    push(g, last);
    while (g->nwork && !g->failed) {
        if (reserve(g)) {
            g->failed = 1;
            break;
        }
        check(g, g->work[--g->nwork]);
    }
    return g->failed ? -1 : 0;
}

int iot_grammar_failed(const iot_grammar *g)
{
    return !g || g->failed;
}

uint64_t iot_grammar_length(const iot_grammar *g)
{
    return g ? g->appended : 0;
}

size_t iot_grammar_rule_count(const iot_grammar *g)
{
    return g ? g->rlive : 0;
}

size_t iot_grammar_symbol_count(const iot_grammar *g)
{
    return g ? g->symbols : 0;
}

size_t iot_grammar_memory(const iot_grammar *g)
{
    if (!g)
        return 0;
    return sizeof *g + (size_t)g->ncap * sizeof *g->n + (size_t)g->rcap * sizeof *g->r + g->dcap * sizeof *g->d +
           g->nheads * (sizeof *g->heads + 2 * sizeof *g->seen_at) + g->workcap * sizeof *g->work;
}

/* ---- public: introspection ---- */

size_t iot_grammar_rule_ids(const iot_grammar *g, int *out, size_t max)
{
    size_t k = 0;
    for (uint32_t r = 0; g && r < g->rused; r++)
        if (g->r[r].guard != NIL) {
            if (k < max)
                out[k] = (int)r;
            k++;
        }
    return k;
}

int iot_grammar_rule_info(const iot_grammar *g, int rule, iot_rule_info *out)
{
    if (!live_rule(g, rule))
        return -1;
    const grule *r = &g->r[rule];
    *out = (iot_rule_info){r->uses, r->in_start, r->length, r->first, r->last_seen};
    return 0;
}

size_t iot_grammar_rhs(const iot_grammar *g, int rule, int *out, size_t max)
{
    if (!live_rule(g, rule))
        return 0;
    size_t k = 0;
    uint32_t guard = g->r[rule].guard;
    for (uint32_t i = g->n[guard].next; i != guard; i = g->n[i].next) {
        if (k < max)
            out[k] = g->n[i].sym;
        k++;
    }
    return k;
}

/* The symbol of rule's right-hand side that holds terminal *at of its
 * expansion; *at becomes the offset inside that symbol. Walks from the
 * nearer end, so reading near the end of a long S costs what follows. */
static uint32_t locate(const iot_grammar *g, uint32_t rule, uint64_t *at)
{
    uint32_t guard = g->r[rule].guard, i;
    if (*at < g->r[rule].length / 2) {
        for (i = g->n[guard].next;; i = g->n[i].next) {
            uint64_t len = sym_length(g, g->n[i].sym);
            if (*at < len)
                return i;
            *at -= len;
        }
    }
    uint64_t start = g->r[rule].length; /* where the symbol at i starts, walking back */
    for (i = g->n[guard].prev;; i = g->n[i].prev) {
        start -= sym_length(g, g->n[i].sym);
        if (start <= *at) {
            *at -= start;
            return i;
        }
    }
}

size_t iot_grammar_expand(const iot_grammar *g, int rule, uint64_t from, int *out, size_t max)
{
    if (!live_rule(g, rule) || from >= g->r[rule].length || !max)
        return 0;
    uint32_t local[64], *stack = local; /* nodes to resume after, one per level */
    size_t depth = 0, cap = 64, w = 0;
    uint32_t cur = locate(g, (uint32_t)rule, &from);
    while (w < max) {
        int32_t s = g->n[cur].sym;
        if (is_guard(s)) {
            if (!depth)
                break;
            cur = g->n[stack[--depth]].next;
        } else if (s >= 0) {
            out[w++] = s; /* from is 0 here: locate only stops inside a terminal at its start */
            cur = g->n[cur].next;
        } else {
            if (depth == cap) {
                uint32_t *bigger = malloc(cap * 2 * sizeof *bigger);
                if (!bigger)
                    break;
                memcpy(bigger, stack, depth * sizeof *stack);
                if (stack != local)
                    free(stack);
                stack = bigger;
                cap *= 2;
            }
            stack[depth++] = cur;
            cur = from ? locate(g, ref_rule(s), &from) : g->n[g->r[ref_rule(s)].guard].next;
        }
    }
    if (stack != local)
        free(stack);
    return w;
}

int iot_grammar_last_seen(const iot_grammar *g, int terminal, uint64_t *prev, uint64_t *last)
{
    if (!g || terminal < 0 || (size_t)terminal >= g->nheads || !g->seen_at[2 * terminal + 1])
        return 0;
    *last = g->seen_at[2 * terminal + 1] - 1;
    if (!g->seen_at[2 * terminal])
        return 1;
    *prev = g->seen_at[2 * terminal] - 1;
    return 2;
}

int iot_grammar_first_starting_with(const iot_grammar *g, int terminal)
{
    if (!g || terminal < 0 || (size_t)terminal >= g->nheads || g->heads[terminal] == NIL)
        return -1;
    return (int)g->heads[terminal];
}

int iot_grammar_next_starting_with(const iot_grammar *g, int rule)
{
    if (!live_rule(g, rule) || rule == 0 || g->r[rule].cand_next == NIL)
        return -1;
    return (int)g->r[rule].cand_next;
}

/* ---- public: the invariant checker ---- */

typedef struct {
    uint64_t key;
    uint32_t node, rule;
} seen_digram;

static uint64_t digram_key(int32_t a, int32_t b)
{
    return (uint64_t)(uint32_t)a << 32 | (uint32_t)b;
}

#define FAIL(...)                                                                                            \
    do {                                                                                                     \
        if (err && errlen)                                                                                   \
            snprintf(err, errlen, __VA_ARGS__);                                                              \
        goto done;                                                                                           \
    } while (0)

int iot_grammar_check(const iot_grammar *g, char *err, size_t errlen)
{
    int rc = -1;
    uint32_t *uses = NULL, *in_s = NULL;
    seen_digram *seen = NULL;
    size_t seencap = 0, ndistinct = 0;
    if (err && errlen)
        err[0] = '\0';
    if (!g)
        FAIL("no grammar");
    if (g->failed)
        FAIL("the grammar stopped learning after running out of memory");
    uses = calloc(g->rused, sizeof *uses);
    in_s = calloc(g->rused, sizeof *in_s);
    for (seencap = 64; seencap < 2 * (size_t)g->nlive; seencap *= 2)
        ;
    seen = malloc(seencap * sizeof *seen);
    if (!uses || !in_s || !seen)
        FAIL("out of memory while checking");
    for (size_t i = 0; i < seencap; i++)
        seen[i].node = NIL;

    /* 1. each rule: a well-formed list, its symbols, its length; count references; collect digrams */
    size_t symbols = 0, rules = 0;
    for (uint32_t r = 0; r < g->rused; r++) {
        const grule *R = &g->r[r];
        if (R->guard == NIL)
            continue;
        rules++;
        if (R->guard >= g->nused || g->n[R->guard].sym != GUARD_BASE - (int32_t)r)
            FAIL("rule %" PRIu32 ": bad guard", r);
        uint64_t length = 0;
        int32_t first = -1;
        size_t k = 0;
        for (uint32_t i = R->guard, j = g->n[i].next; j != R->guard; i = j, j = g->n[j].next, k++) {
            if (j >= g->nused || g->n[j].prev != i || g->n[j].next >= g->nused || k > g->nlive)
                FAIL("rule %" PRIu32 ": broken list at symbol %zu", r, k);
            int32_t s = g->n[j].sym;
            if (s == FREE_SYM || is_guard(s))
                FAIL("rule %" PRIu32 ": symbol %zu is a %s node", r, k, s == FREE_SYM ? "free" : "guard");
            if (g->n[j].in_start != (r == 0))
                FAIL("rule %" PRIu32 ": symbol %zu has a wrong in-S mark", r, k);
            if (is_ref(s)) {
                uint32_t x = ref_rule(s);
                if (!live_rule(g, (int)x) || x == 0)
                    FAIL("rule %" PRIu32 ": symbol %zu refers to %s rule %" PRIu32, r, k, x ? "deleted" : "start",
                         x);
                uses[x]++;
                in_s[x] += (r == 0);
            }
            if (!k)
                first = sym_first(g, s);
            length += sym_length(g, s);
            /* digram (j, next) */
            int32_t t = g->n[g->n[j].next].sym;
            if (is_guard(t))
                continue;
            uint64_t key = digram_key(s, t);
            size_t mask = seencap - 1, h = digram_hash(s, t) & mask;
            while (seen[h].node != NIL && seen[h].key != key)
                h = (h + 1) & mask;
            if (seen[h].node == NIL) {
                seen[h] = (seen_digram){key, j, r};
                ndistinct++;
            } else if (g->n[seen[h].node].next != j) {
                FAIL("digram uniqueness: (%" PRId32 " %" PRId32 ") occurs in rule %" PRIu32 " and in rule %" PRIu32,
                     s, t, seen[h].rule, r);
            }
            /* the table holds this digram here or at its overlapping twin */
            uint32_t x = digram_find(g, s, t, digram_hash(s, t));
            if (x != j && x != g->n[j].prev && x != g->n[j].next)
                FAIL("digram index: (%" PRId32 " %" PRId32 ") in rule %" PRIu32 " is not entered", s, t, r);
        }
        symbols += k;
        if (r != 0 && k < 2)
            FAIL("rule %" PRIu32 " has %zu symbol(s)", r, k);
        if (length != R->length)
            FAIL("rule %" PRIu32 ": expansion length %" PRIu64 ", recorded %" PRIu64, r, length, R->length);
        if (k && first != R->first)
            FAIL("rule %" PRIu32 ": first terminal %" PRId32 ", recorded %" PRId32, r, first, R->first);
    }
    if (rules != g->rlive || symbols != g->symbols || g->nlive != symbols + rules)
        FAIL("counts: %zu rules, %zu symbols, %" PRIu32 " nodes; recorded %" PRIu32 ", %zu", rules, symbols,
             g->nlive, g->rlive, g->symbols);
    if (g->r[0].length != g->appended)
        FAIL("S derives %" PRIu64 " terminals, %" PRIu64 " appended", g->r[0].length, g->appended);

    /* 2. reference counts and rule utility */
    for (uint32_t r = 0; r < g->rused; r++) {
        if (g->r[r].guard == NIL)
            continue;
        if (uses[r] != g->r[r].uses || in_s[r] != g->r[r].in_start)
            FAIL("rule %" PRIu32 ": %" PRIu32 " uses (%" PRIu32 " in S), recorded %" PRIu32 " (%" PRIu32 ")", r,
                 uses[r], in_s[r], g->r[r].uses, g->r[r].in_start);
        if (r != 0 && uses[r] < 2)
            FAIL("rule utility: rule %" PRIu32 " is used %" PRIu32 " time(s)", r, uses[r]);
    }

    /* 3. the digram table holds exactly the grammar's digrams */
    size_t entries = 0;
    for (size_t i = 0; i < g->dcap; i++) {
        uint32_t a = g->d[i].node;
        if (a == NIL)
            continue;
        entries++;
        if (a >= g->nused || g->n[a].sym == FREE_SYM || is_guard(g->n[a].sym) ||
            is_guard(g->n[g->n[a].next].sym) || g->d[i].hash != digram_hash(g->n[a].sym, g->n[g->n[a].next].sym))
            FAIL("digram index: stale entry for node %" PRIu32, a);
    }
    if (entries != g->dcount || entries != ndistinct)
        FAIL("digram index: %zu entries (%zu recorded) for %zu distinct digrams", entries, g->dcount, ndistinct);

    /* 4. the first-terminal lists hold every rule but S once */
    size_t listed = 0;
    for (size_t t = 0; t < g->nheads; t++) {
        uint32_t prev = NIL;
        for (uint32_t r = g->heads[t]; r != NIL; prev = r, r = g->r[r].cand_next) {
            if (!live_rule(g, (int)r) || r == 0 || g->r[r].first != (int32_t)t || g->r[r].cand_prev != prev ||
                ++listed > g->rlive)
                FAIL("first-terminal list of %zu: bad entry %" PRIu32, t, r);
        }
    }
    if (listed + 1 != g->rlive)
        FAIL("first-terminal lists hold %zu rules of %" PRIu32, listed, g->rlive - 1);
    rc = 0;
done:
    free(uses);
    free(in_s);
    free(seen);
    return rc;
}

/* ---- public: dumps ---- */

/* Live rules in the order met reading from S (breadth first); num[rule] is
 * the position. One allocation: order, then num. */
static uint32_t *canonical_order(const iot_grammar *g, uint32_t **num)
{
    uint32_t *order = malloc(2 * (size_t)g->rused * sizeof *order);
    if (!order)
        return NULL;
    *num = order + g->rused;
    for (uint32_t r = 0; r < g->rused; r++)
        (*num)[r] = NIL;
    size_t n = 0;
    order[n++] = 0;
    (*num)[0] = 0;
    for (size_t q = 0; q < n; q++) {
        uint32_t guard = g->r[order[q]].guard;
        for (uint32_t i = g->n[guard].next; i != guard; i = g->n[i].next) {
            int32_t s = g->n[i].sym;
            if (is_ref(s) && (*num)[ref_rule(s)] == NIL) {
                (*num)[ref_rule(s)] = (uint32_t)n;
                order[n++] = ref_rule(s);
            }
        }
    }
    for (size_t k = n; k < g->rused; k++)
        order[k] = NIL; /* unreachable rules: none in a valid grammar */
    return order;
}

char *iot_grammar_format(const iot_grammar *g, iot_terminal_namer namer, void *ctx)
{
    if (!g)
        return NULL;
    uint32_t *num, *order = canonical_order(g, &num);
    if (!order)
        return NULL;
    iot_buf b;
    iot_buf_init(&b);
    char name[256];
    for (uint32_t q = 0; q < g->rused && order[q] != NIL; q++) {
        if (q)
            iot_buf_printf(&b, "R%" PRIu32 " ->", q);
        else
            iot_buf_puts(&b, "S ->");
        uint32_t guard = g->r[order[q]].guard;
        for (uint32_t i = g->n[guard].next; i != guard; i = g->n[i].next) {
            int32_t s = g->n[i].sym;
            if (is_ref(s)) {
                iot_buf_printf(&b, " R%" PRIu32, num[ref_rule(s)]);
            } else if (namer) {
                name[0] = '\0';
                namer(ctx, s, name, sizeof name);
                iot_buf_printf(&b, " %s", name);
            } else {
                iot_buf_printf(&b, " %" PRId32, s);
            }
        }
        iot_buf_puts(&b, "\n");
    }
    free(order);
    return iot_buf_take(&b);
}

void iot_grammar_write_json(const iot_grammar *g, iot_buf *b, const char *key)
{
    uint32_t *num = NULL, *order = g ? canonical_order(g, &num) : NULL;
    if (!order) {
        iot_jw_null(b, key);
        return;
    }
    char name[32];
    iot_jw_begin_object(b, key);
    iot_jw_int(b, "length", (int64_t)g->appended);
    iot_jw_begin_array(b, "rules");
    for (uint32_t q = 0; q < g->rused && order[q] != NIL; q++) {
        const grule *R = &g->r[order[q]];
        iot_jw_begin_object(b, NULL);
        if (q)
            snprintf(name, sizeof name, "R%" PRIu32, q);
        iot_jw_string(b, "name", q ? name : "S");
        iot_jw_int(b, "id", order[q]);
        iot_jw_int(b, "uses", R->uses);
        iot_jw_int(b, "uses_in_start", R->in_start);
        iot_jw_int(b, "expansion_length", (int64_t)R->length);
        iot_jw_begin_array(b, "rhs");
        for (uint32_t i = g->n[R->guard].next; i != R->guard; i = g->n[i].next) {
            int32_t s = g->n[i].sym;
            if (is_ref(s)) {
                snprintf(name, sizeof name, "R%" PRIu32, num[ref_rule(s)]);
                iot_jw_string(b, NULL, name);
            } else {
                iot_jw_int(b, NULL, s);
            }
        }
        iot_jw_end_array(b);
        iot_jw_end_object(b);
    }
    iot_jw_end_array(b);
    iot_jw_end_object(b);
    free(order);
}
