/* The search engine and the strategies (contracts in tuner/search.h). */
#include "tuner/search.h"

#include "base/error.h"
#include "tuner/pool.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const strategy_names[VPT_STRATEGY_COUNT] = {
    "exhaustive", "random", "local", "annealing", "genetic", "halving",
};

const char *vpt_strategy_name(VptStrategy s)
{
    return (int)s >= 0 && s < VPT_STRATEGY_COUNT ? strategy_names[s] : "?";
}

int vpt_strategy_parse(const char *name, VptStrategy *out)
{
    for (int i = 0; i < VPT_STRATEGY_COUNT; i++)
        if (strcmp(name, strategy_names[i]) == 0) {
            *out = (VptStrategy)i;
            return 0;
        }
    return vpt_fail("unknown strategy '%s' (exhaustive, random, local, annealing, genetic, halving)", name);
}

const char *vpt_stop_reason_name(VptStopReason r)
{
    switch (r) {
    case VPT_STOP_BUDGET: return "budget reached";
    case VPT_STOP_DONE: return "search complete";
    case VPT_STOP_STALLED: return "stalled (no new configs proposed)";
    case VPT_STOP_INTERRUPTED: return "interrupted";
    case VPT_STOP_ERROR: return "error";
    }
    return "?";
}

void vpt_search_options_init(VptSearchOptions *o)
{
    memset(o, 0, sizeof *o);
    o->strategy = VPT_STRATEGY_RANDOM;
    o->seed = 1;
    o->ga_population = 10;
    o->ga_mutation = 1.0 / VPT_DIM_RATE_COUNT;
    o->sa_t0 = 0.1;
    o->sa_tmin = 0.001;
    o->sa_alpha = 0.995;
    o->sh_eta = 3;
    o->stall_limit = 100000;
}

/* ---- engine ----------------------------------------------------------- */

typedef struct {
    const VptSpace *space;
    size_t n_members;
    VptEvalPool *pool;  /* o->pool, or a direct one over fn (tuner/pool.h) */
    double gpus;        /* an evaluation is charged cost_s / gpus */
    VptCache *cache;
    const VptSearchOptions *o;
    VptRng rng;
    long *memo[2]; /* per fidelity: index into res->evals, or -1 */
    size_t visited[2];
    VptSearchResult *res;
    size_t cap;
    double best_obj;
    size_t stalls;
    int stopped;
} Engine;

/* Members in a random order, drawn lazily (incremental Fisher-Yates). */
typedef struct {
    size_t *perm;
    size_t n, pos;
} Shuffle;

static int shuffle_init(Shuffle *s, size_t n)
{
    s->perm = vpt_malloc((n ? n : 1) * sizeof *s->perm);
    if (!s->perm) return -1;
    for (size_t i = 0; i < n; i++) s->perm[i] = i;
    s->n = n;
    s->pos = 0;
    return 0;
}

/* The next member not yet evaluated at fidelity, or -1 when none is left. */
static long shuffle_next_unvisited(Shuffle *s, Engine *e, int fidelity)
{
    while (s->pos < s->n) {
        size_t j = s->pos + (size_t)vpt_rng_below(&e->rng, s->n - s->pos);
        size_t t = s->perm[s->pos];
        s->perm[s->pos] = s->perm[j];
        s->perm[j] = t;
        size_t m = s->perm[s->pos++];
        if (e->memo[fidelity][m] < 0) return (long)m;
    }
    return -1;
}

static void stop(Engine *e, VptStopReason why)
{
    if (!e->stopped) {
        e->stopped = 1;
        e->res->stop = why;
    }
}

static int push_eval(Engine *e, const VptEvalRecord *r)
{
    VptSearchResult *res = e->res;
    if (res->n_evals == e->cap) {
        size_t cap = e->cap ? 2 * e->cap : 256;
        VptEvalRecord *ev = vpt_realloc(res->evals, cap * sizeof *ev);
        if (!ev) return -1;
        res->evals = ev;
        VptTracePoint *tr = vpt_realloc(res->trace, cap * sizeof *tr);
        if (!tr) return -1;
        res->trace = tr;
        e->cap = cap;
    }
    res->evals[res->n_evals++] = *r;
    return 0;
}

/* The config a member is evaluated as: the member with the options'
 * estimator and path order stamped on (search.h). The thesis' estimator
 * (global, f32) and order (sample), the defaults, stamp nothing, so that a
 * recorded joint space (whose members carry their own estimators,
 * tuner/space.h) is searched as recorded. */
static VptConfig stamp_estimator(const VptSearchOptions *o, const VptConfig *member)
{
    VptConfig c = *member;
    if (o->majorant != 0 || o->density != VPT_DENSITY_F32) {
        c.majorant = o->majorant;
        c.density = o->density;
    }
    if (o->paths != VPT_PATHS_SAMPLE) c.paths = o->paths;
    return c;
}

/* Evaluates member m at fidelity (see search.h for what counts). Returns 1
 * with its objective in *obj, or 0 when the search must stop (budget,
 * interrupt, stall, error: e->res->stop says which). */
static int eval(Engine *e, size_t m, int fidelity, double *obj)
{
    if (e->stopped) return 0;
    VptSearchResult *res = e->res;
    long idx = e->memo[fidelity][m];
    if (idx >= 0) {
        if (++e->stalls >= e->o->stall_limit) {
            stop(e, VPT_STOP_STALLED);
            return 0;
        }
        *obj = vpt_eval_objective(&res->evals[idx]);
        return 1;
    }
    if (e->o->interrupt && *e->o->interrupt) {
        stop(e, VPT_STOP_INTERRUPTED);
        return 0;
    }
    if ((e->o->max_evals && res->n_evals >= e->o->max_evals) ||
        (e->o->max_seconds > 0 && res->seconds >= e->o->max_seconds)) {
        stop(e, VPT_STOP_BUDGET);
        return 0;
    }
    VptConfig stamped = stamp_estimator(e->o, vpt_space_point(e->space, m));
    /* the cache, else an evaluation (on one GPU here, or taken from a pool
     * that evaluated it ahead): tuner/pool.h; either way it is in the cache
     * before the strategy sees it */
    VptEvalRecord rec;
    int fresh;
    size_t wanted = e->o->max_evals ? e->o->max_evals - res->n_evals : SIZE_MAX;
    if (vpt_eval_pool_get(e->pool, &stamped, fidelity, wanted, &rec, &fresh)) {
        stop(e, VPT_STOP_ERROR);
        return 0;
    }
    if (fresh) res->evaluated++;
    else res->cached++;
    if (push_eval(e, &rec)) {
        stop(e, VPT_STOP_ERROR);
        return 0;
    }
    idx = (long)res->n_evals - 1;
    e->memo[fidelity][m] = idx;
    e->visited[fidelity]++;
    e->stalls = 0;
    res->seconds += rec.cost_s / e->gpus;
    *obj = vpt_eval_objective(&rec);
    if (fidelity == 1 && *obj < e->best_obj) {
        e->best_obj = *obj;
        res->best = rec;
        res->found = 1;
    }
    res->trace[idx] = (VptTracePoint){.evals = res->n_evals, .seconds = res->seconds, .best_ms = e->best_obj};
    if (e->o->progress) {
        VptSearchProgress p = {
            .evals = res->n_evals,
            .seconds = res->seconds,
            .cached = res->cached,
            .last = &res->evals[idx],
            .best = res->found ? &res->best : NULL,
        };
        e->o->progress(e->o->progress_user, &p);
    }
    return 1;
}

static int visited(const Engine *e, size_t m, int fidelity)
{
    return e->memo[fidelity][m] >= 0;
}

/* Announces members the strategy will evaluate next (search.h: prefetch),
 * in calls of at most HINT_MAX configs. */
#define HINT_MAX 64
static void hint(Engine *e, const size_t *members, size_t n, int fidelity)
{
    const VptSearchOptions *o = e->o;
    if (!vpt_eval_pool_wants_hints(e->pool) || e->stopped) return;
    size_t left = SIZE_MAX;
    if (o->max_evals) left = o->max_evals > e->res->n_evals ? o->max_evals - e->res->n_evals : 0;
    VptConfig cfgs[HINT_MAX];
    size_t k = 0;
    for (size_t i = 0; i < n && left > 0; i++) {
        if (visited(e, members[i], fidelity)) continue;
        VptConfig stamped = stamp_estimator(o, vpt_space_point(e->space, members[i]));
        const VptConfig *c = &stamped;
        if (e->cache && vpt_cache_find(e->cache, c, fidelity)) continue;
        int dup = 0;
        for (size_t j = 0; j < k && !dup; j++) dup = vpt_config_equal(&cfgs[j], c);
        if (dup) continue;
        cfgs[k++] = *c;
        left--;
        if (k == HINT_MAX) {
            vpt_eval_pool_announce(e->pool, cfgs, k, fidelity);
            k = 0;
        }
    }
    if (k) vpt_eval_pool_announce(e->pool, cfgs, k, fidelity);
}

/* ---- strategies ------------------------------------------------------- */

/* How far ahead exhaustive and random search announce their order: enough
 * to keep a compile pool of one thread per core busy while the GPU
 * measures, announced again whenever less than half of it is left. */
#define LOOKAHEAD 256

/* Evaluates order[0..n) at full fidelity, announcing it LOOKAHEAD ahead. */
static void run_sequence(Engine *e, const size_t *order, size_t n)
{
    double obj;
    size_t announced = 0;
    for (size_t i = 0; i < n; i++) {
        if (announced < n && announced - i < LOOKAHEAD / 2) {
            size_t to = i + LOOKAHEAD < n ? i + LOOKAHEAD : n;
            hint(e, order + announced, to - announced, 1);
            announced = to;
        }
        if (!eval(e, order[i], 1, &obj)) return;
    }
    stop(e, VPT_STOP_DONE);
}

static void run_exhaustive(Engine *e)
{
    size_t *order = vpt_malloc((e->n_members ? e->n_members : 1) * sizeof *order);
    if (!order) {
        stop(e, VPT_STOP_ERROR);
        return;
    }
    for (size_t m = 0; m < e->n_members; m++) order[m] = m;
    run_sequence(e, order, e->n_members);
    free(order);
}

/* Random search: the members in a uniformly random order (nothing else
 * visits members, so drawing the whole order first is drawing as it goes). */
static void run_random(Engine *e)
{
    Shuffle sh;
    if (shuffle_init(&sh, e->n_members)) {
        stop(e, VPT_STOP_ERROR);
        return;
    }
    while (shuffle_next_unvisited(&sh, e, 1) >= 0) {
    }
    run_sequence(e, sh.perm, sh.n);
    free(sh.perm);
}

static void shuffle_array(Engine *e, size_t *a, size_t n)
{
    for (size_t i = n; i > 1; i--) {
        size_t j = (size_t)vpt_rng_below(&e->rng, i);
        size_t t = a[i - 1];
        a[i - 1] = a[j];
        a[j] = t;
    }
}

/* The thesis' default variant (regenerationSK: thread regeneration, block
 * 256, one path per thread, the compiler's register count), or the member
 * nearest to it in a space that lacks it; -1 for an empty space. */
static long prior_member(Engine *e)
{
    VptConfig c;
    if (e->o->no_prior) return -1;
    if (vpt_config_parse("regenerationSK", &c)) {
        vpt_error_clear();
        return -1;
    }
    return vpt_space_nearest(e->space, &c, &e->rng);
}

/* Without the prior: the best of a few random members (announced
 * together), so that the first descent does not start from whatever a single
 * draw gives; -1 when no member is left, -2 when the search must stop. */
#define START_SAMPLE 4
static long sampled_start(Engine *e, Shuffle *starts)
{
    size_t sample[START_SAMPLE];
    size_t k = 0;
    long m;
    while (k < START_SAMPLE && (m = shuffle_next_unvisited(starts, e, 1)) >= 0) sample[k++] = (size_t)m;
    if (k == 0) return -1;
    hint(e, sample, k, 1);
    long best = (long)sample[0];
    double best_obj = INFINITY;
    for (size_t i = 0; i < k; i++) {
        double obj;
        if (!eval(e, sample[i], 1, &obj)) return -2;
        if (obj < best_obj) {
            best_obj = obj;
            best = (long)sample[i];
        }
    }
    return best;
}

/* The start of local search and annealing: with a portfolio of starts
 * (VptSearchOptions.starts), the prior (unless no_prior) and the member
 * nearest to each start, announced together and measured, and the best of
 * them; without one, the prior, or the best of a few random members.
 * -1 when no member is left, -2 when the search must stop. */
static long start_member(Engine *e, Shuffle *starts)
{
    const VptSearchOptions *o = e->o;
    if (o->n_starts == 0 || !o->starts) {
        long m = prior_member(e);
        return m >= 0 ? m : sampled_start(e, starts);
    }
    size_t list[VPT_SEARCH_MAX_STARTS + 1], k = 0;
    long prior = prior_member(e);
    if (prior >= 0) list[k++] = (size_t)prior;
    for (size_t i = 0; i < o->n_starts && i < VPT_SEARCH_MAX_STARTS; i++) {
        long m = vpt_space_nearest(e->space, &o->starts[i], NULL);
        int dup = m < 0;
        for (size_t j = 0; j < k && !dup; j++) dup = list[j] == (size_t)m;
        if (!dup) list[k++] = (size_t)m;
    }
    if (k == 0) return sampled_start(e, starts);
    hint(e, list, k, 1);
    long best = (long)list[0];
    double best_obj = INFINITY;
    for (size_t i = 0; i < k; i++) {
        double obj;
        if (!eval(e, list[i], 1, &obj)) return -2;
        if (obj < best_obj) {
            best_obj = obj;
            best = (long)list[i];
        }
    }
    return best;
}

/* Where a search starts again after a local optimum: a perturbation of the
 * best member found so far (iterated local search: a good region usually has
 * more good members than a random point's), two dimensions on average, or,
 * when a few perturbations land only on evaluated members (or nothing is
 * known yet), a random unevaluated member. -1 when every member has been
 * evaluated. */
static long restart_member(Engine *e, Shuffle *starts, long incumbent)
{
    if (incumbent >= 0)
        for (int tries = 0; tries < 8; tries++) {
            size_t m = vpt_space_mutate(e->space, (size_t)incumbent, 2.0 / VPT_DIM_RATE_COUNT, &e->rng);
            if (!visited(e, m, 1)) return (long)m;
        }
    return shuffle_next_unvisited(starts, e, 1);
}

/* Evaluates list[0..n) in a random order after announcing it; the best
 * (first of equals) into *best / *best_obj (+inf and unchanged *best when
 * none is ok). 0 when the search must stop. */
static int evaluate_all(Engine *e, size_t *list, size_t n, size_t *best, double *best_obj)
{
    shuffle_array(e, list, n);
    hint(e, list, n, 1);
    *best_obj = INFINITY;
    for (size_t i = 0; i < n; i++) {
        double obj;
        if (!eval(e, list[i], 1, &obj)) return 0;
        if (obj < *best_obj) {
            *best_obj = obj;
            *best = list[i];
        }
    }
    return 1;
}

/* Parameter moves: every dimension but the schedule. */
#define PARAM_DIMS (VPT_SPACE_ALL_DIMS & ~(1u << VPT_DIM_SCHEDULE))

static void run_local(Engine *e)
{
    Shuffle starts;
    if (shuffle_init(&starts, e->n_members)) {
        stop(e, VPT_STOP_ERROR);
        return;
    }
    size_t nb[VPT_SPACE_MAX_SCHEDULE_MOVES];
    long start = start_member(e, &starts), incumbent = -1;
    double inc_obj = INFINITY;
    if (start == -2) goto out;
    for (;;) {
        if (start < 0) {
            stop(e, VPT_STOP_DONE);
            break;
        }
        size_t cur = (size_t)start, s0 = cur;
        double cur_obj;
        hint(e, &s0, 1, 1);
        if (!eval(e, cur, 1, &cur_obj)) break;
        /* variable neighbourhood descent: steepest descent over the
         * parameter moves; at their optimum, over the schedule moves; an
         * improvement there starts over with the parameters */
        for (int phase = 0; phase < 2;) {
            size_t n = phase == 0 ? vpt_space_neighbours_in(e->space, cur, PARAM_DIMS, nb, VPT_SPACE_MAX_NEIGHBOURS)
                                  : vpt_space_schedule_moves(e->space, cur, nb, VPT_SPACE_MAX_SCHEDULE_MOVES);
            size_t best = cur;
            double best_obj;
            if (!evaluate_all(e, nb, n, &best, &best_obj)) goto out;
            if (best_obj < cur_obj) {
                cur = best;
                cur_obj = best_obj;
                phase = 0;
            } else {
                phase++;
            }
        }
        if (cur_obj < inc_obj) {
            inc_obj = cur_obj;
            incumbent = (long)cur;
        }
        start = restart_member(e, &starts, incumbent);
    }
out:
    free(starts.perm);
}

/* Fraction of the budget used, 0..1 (the larger of evaluations and
 * seconds), or -1 without a budget. */
static double budget_used(const Engine *e)
{
    double f = -1;
    if (e->o->max_evals) f = (double)e->res->n_evals / (double)e->o->max_evals;
    if (e->o->max_seconds > 0) {
        double g = e->res->seconds / e->o->max_seconds;
        if (g > f) f = g;
    }
    return f > 1 ? 1 : f;
}

/* A random move from cur for annealing: a dimension drawn uniformly among
 * those that can move (the schedule with its dependent parameters, see
 * vpt_space_schedule_moves), then one of its moves, so that the nine-valued
 * schedule is not proposed more often than a two-valued parameter. -1 when
 * nothing can move. */
static long annealing_move(Engine *e, size_t cur)
{
    size_t nb[VPT_SPACE_MAX_SCHEDULE_MOVES];
    size_t count[VPT_DIM_COUNT];
    int dims[VPT_DIM_COUNT], nd = 0;
    for (int d = 0; d < VPT_DIM_COUNT; d++) {
        count[d] = d == VPT_DIM_SCHEDULE
                       ? vpt_space_schedule_moves(e->space, cur, nb, VPT_SPACE_MAX_SCHEDULE_MOVES)
                       : vpt_space_neighbours_in(e->space, cur, 1u << d, nb, VPT_SPACE_MAX_NEIGHBOURS);
        if (count[d]) dims[nd++] = d;
    }
    if (nd == 0) return -1;
    int d = dims[vpt_rng_below(&e->rng, (uint64_t)nd)];
    size_t n = d == VPT_DIM_SCHEDULE ? vpt_space_schedule_moves(e->space, cur, nb, VPT_SPACE_MAX_SCHEDULE_MOVES)
                                     : vpt_space_neighbours_in(e->space, cur, 1u << d, nb, VPT_SPACE_MAX_NEIGHBOURS);
    return (long)nb[vpt_rng_below(&e->rng, n)];
}

static void run_annealing(Engine *e)
{
    const VptSearchOptions *o = e->o;
    double t0 = o->sa_t0 > 0 ? o->sa_t0 : 0.1;
    double tmin = o->sa_tmin > 0 && o->sa_tmin < t0 ? o->sa_tmin : t0 * 1e-3;
    double alpha = o->sa_alpha > 0 && o->sa_alpha < 1 ? o->sa_alpha : 0.995;
    Shuffle starts;
    if (shuffle_init(&starts, e->n_members)) {
        stop(e, VPT_STOP_ERROR);
        return;
    }
    size_t nb[VPT_SPACE_MAX_SCHEDULE_MOVES];
    long start = start_member(e, &starts), incumbent = -1;
    double inc_obj = INFINITY;
    if (start == -2) goto out;
    for (;;) { /* one walk per (re)heat */
        if (start < 0) {
            stop(e, VPT_STOP_DONE);
            break;
        }
        size_t cur = (size_t)start;
        double cur_obj, obj, temp = t0;
        double f_start = budget_used(e);
        if (!eval(e, cur, 1, &cur_obj)) break;
        size_t free_steps = 0;
        while (temp > tmin) {
            long next = annealing_move(e, cur);
            if (next < 0) break;
            size_t before = e->res->n_evals;
            if (!eval(e, (size_t)next, 1, &obj)) goto out;
            if (e->res->n_evals > before) {
                /* cool over what is left of the budget, else geometrically */
                double f = budget_used(e);
                if (f_start >= 0) temp = f_start < 1 ? t0 * pow(tmin / t0, (f - f_start) / (1 - f_start)) : tmin;
                else temp *= alpha;
                free_steps = 0;
            } else if (++free_steps > 4 * (vpt_space_neighbours(e->space, cur, nb, VPT_SPACE_MAX_NEIGHBOURS) +
                                           vpt_space_schedule_moves(e->space, cur, nb, VPT_SPACE_MAX_SCHEDULE_MOVES)) +
                                          16) {
                break; /* every move seen, none taken: reheat elsewhere */
            }
            int accept;
            if (!isfinite(cur_obj)) accept = 1;
            else if (!isfinite(obj)) accept = 0;
            else if (obj < cur_obj) accept = 1;
            else accept = vpt_rng_uniform(&e->rng) < exp(-(obj / cur_obj - 1.0) / temp);
            if (accept) {
                cur = (size_t)next;
                cur_obj = obj;
            }
            if (cur_obj < inc_obj) {
                inc_obj = cur_obj;
                incumbent = (long)cur;
            }
        }
        if (cur_obj < inc_obj) {
            inc_obj = cur_obj;
            incumbent = (long)cur;
        }
        start = restart_member(e, &starts, incumbent);
    }
out:
    free(starts.perm);
}

typedef struct {
    size_t member;
    double obj;
} Individual;

static int cmp_individual(const void *a, const void *b)
{
    const Individual *x = a, *y = b;
    if (x->obj != y->obj) return x->obj < y->obj ? -1 : 1; /* +inf sorts last */
    return (x->member > y->member) - (x->member < y->member);
}

static size_t tournament(Engine *e, const Individual *pop, size_t n)
{
    const Individual *a = &pop[vpt_rng_below(&e->rng, n)], *b = &pop[vpt_rng_below(&e->rng, n)];
    return cmp_individual(a, b) <= 0 ? a->member : b->member;
}

/* 1 when member m is among the first n of list. */
static int in_list(const Individual *list, size_t n, size_t m)
{
    for (size_t i = 0; i < n; i++)
        if (list[i].member == m) return 1;
    return 0;
}

/* Announces the members of list[from..n) at fidelity. */
static void hint_list(Engine *e, const Individual *list, size_t from, size_t n, int fidelity)
{
    size_t members[HINT_MAX];
    for (size_t i = from; i < n; i += HINT_MAX) {
        size_t k = 0;
        for (size_t j = i; j < n && k < HINT_MAX; j++) members[k++] = list[j].member;
        hint(e, members, k, fidelity);
    }
}

/* Evaluates list[from..n) in order after announcing them; 0 when stopped. */
static int eval_generation(Engine *e, Individual *list, size_t from, size_t n)
{
    hint_list(e, list, from, n, 1);
    for (size_t i = from; i < n; i++)
        if (!eval(e, list[i].member, 1, &list[i].obj)) return 0;
    return 1;
}

static void run_genetic(Engine *e)
{
    const VptSearchOptions *o = e->o;
    size_t want = (size_t)(o->ga_population > 1 ? o->ga_population : 10);
    size_t p = want < e->n_members ? want : e->n_members;
    double rate = o->ga_mutation > 0 && o->ga_mutation <= 1 ? o->ga_mutation : 1.0 / VPT_DIM_RATE_COUNT;
    /* chance that a per-dimension mutation changes anything at all */
    double p_mutate = 1.0 - pow(1.0 - rate, VPT_DIM_RATE_COUNT);
    Individual *pop = vpt_malloc(p * sizeof *pop), *next = vpt_malloc(p * sizeof *next);
    Shuffle init;
    if (!pop || !next || shuffle_init(&init, e->n_members)) {
        free(pop);
        free(next);
        stop(e, VPT_STOP_ERROR);
        return;
    }
    /* the thesis' default and random members */
    long prior = prior_member(e);
    for (size_t i = 0; i < p; i++) {
        long m = i == 0 && prior >= 0 ? prior : shuffle_next_unvisited(&init, e, 1);
        while (i > 0 && m >= 0 && m == prior) m = shuffle_next_unvisited(&init, e, 1);
        pop[i].member = m >= 0 ? (size_t)m : vpt_space_random(e->space, &e->rng);
    }
    if (!eval_generation(e, pop, 0, p)) goto out;
    for (;;) {
        if (e->visited[1] == e->n_members) {
            stop(e, VPT_STOP_DONE);
            break;
        }
        qsort(pop, p, sizeof *pop, cmp_individual);
        size_t k = 0;
        for (; k < 2 && k < p; k++) next[k] = pop[k]; /* elitism */
        size_t elite = k;
        /* the whole generation first (announced together), then measured */
        for (; k < p; k++) {
            size_t a = tournament(e, pop, p), b = tournament(e, pop, p);
            size_t child = vpt_space_crossover(e->space, a, b, &e->rng);
            if (vpt_rng_uniform(&e->rng) < p_mutate) child = vpt_space_mutate(e->space, child, rate, &e->rng);
            for (int tries = 0; tries < 8 && (visited(e, child, 1) || in_list(next, k, child)); tries++)
                child = vpt_space_mutate(e->space, child, rate, &e->rng);
            next[k].member = child;
        }
        if (!eval_generation(e, next, elite, p)) goto out;
        Individual *t = pop;
        pop = next;
        next = t;
    }
out:
    free(init.perm);
    free(pop);
    free(next);
}

/* Successive halving over two fidelities, asynchronously (ASHA, Li et al.
 * 2020): whenever a config screened at fidelity 0 ranks among the best
 * floor(n / eta) of the n screened so far (failures never) and is not yet
 * measured at fidelity 1, the best such config is measured at fidelity 1;
 * otherwise the next unscreened member is screened (search.h). */
static void run_halving(Engine *e)
{
    const VptSearchOptions *o = e->o;
    size_t eta = (size_t)(o->sh_eta > 1 ? o->sh_eta : 3);
    Shuffle order;
    /* screened configs, kept sorted by cheap objective (failures last) */
    Individual *rung = vpt_malloc((e->n_members ? e->n_members : 1) * sizeof *rung);
    size_t *ahead = vpt_malloc(LOOKAHEAD * sizeof *ahead);
    if (!rung || !ahead || shuffle_init(&order, e->n_members)) {
        free(rung);
        free(ahead);
        stop(e, VPT_STOP_ERROR);
        return;
    }
    size_t n = 0, n_ahead = 0, next_ahead = 0;
    long prior = prior_member(e);
    for (;;) {
        /* promote: the best unpromoted config within the top floor(n / eta) */
        size_t top = n / eta;
        long pick = -1;
        for (size_t i = 0; i < top && i < n; i++) {
            if (!isfinite(rung[i].obj)) break;
            if (!visited(e, rung[i].member, 1)) {
                pick = (long)i;
                break;
            }
        }
        if (pick >= 0) {
            size_t m = rung[pick].member;
            double obj;
            hint(e, &m, 1, 1);
            if (!eval(e, m, 1, &obj)) break;
            continue;
        }
        /* screen the next member (the thesis' default first); the order is
         * drawn and announced ahead */
        if (next_ahead == n_ahead) {
            /* with an evaluation budget, announce no more screenings than
             * fit in it along with the promotions they may bring: up to two
             * each (the screened config itself, and one more when the top
             * grows by one) */
            size_t want = LOOKAHEAD;
            if (o->max_evals) {
                size_t left = o->max_evals > e->res->n_evals ? o->max_evals - e->res->n_evals : 0;
                if (left / 3 < want) want = left / 3 > 0 ? left / 3 : 1;
            }
            n_ahead = next_ahead = 0;
            long m;
            if (n == 0 && prior >= 0) ahead[n_ahead++] = (size_t)prior;
            while (n_ahead < want && (m = shuffle_next_unvisited(&order, e, 0)) >= 0)
                if (m != prior || n > 0) ahead[n_ahead++] = (size_t)m;
            if (n_ahead == 0) {
                stop(e, VPT_STOP_DONE);
                break;
            }
            hint(e, ahead, n_ahead, 0);
        }
        Individual x = {.member = ahead[next_ahead++]};
        if (!eval(e, x.member, 0, &x.obj)) break;
        size_t at = n; /* insertion keeps the rung sorted; equals keep their order */
        while (at > 0 && cmp_individual(&rung[at - 1], &x) > 0) at--;
        memmove(&rung[at + 1], &rung[at], (n - at) * sizeof *rung);
        rung[at] = x;
        n++;
    }
    free(order.perm);
    free(rung);
    free(ahead);
}

int vpt_search_run(const VptSpace *space, VptEvaluateFn fn, void *ctx, VptCache *cache,
                   const VptSearchOptions *o, VptSearchResult *out)
{
    memset(out, 0, sizeof *out);
    Engine e = {
        .space = space,
        .n_members = vpt_space_size(space),
        .pool = o->pool,
        .cache = cache,
        .o = o,
        .res = out,
        .best_obj = INFINITY,
    };
    VptEvalPool *own = NULL;
    if (!e.pool && !(e.pool = own = vpt_eval_pool_direct(fn, ctx, cache, o->prefetch, o->prefetch_user))) {
        out->stop = VPT_STOP_ERROR;
        return -1;
    }
    e.gpus = vpt_eval_pool_gpus(e.pool);
    VptSearchOptions local;
    if (o->stall_limit == 0) {
        local = *o;
        local.stall_limit = 100000;
        e.o = &local;
    }
    vpt_rng_seed(&e.rng, o->seed);
    for (int f = 0; f < 2; f++) {
        e.memo[f] = vpt_malloc(e.n_members * sizeof *e.memo[f]);
        if (!e.memo[f]) {
            free(e.memo[0]);
            vpt_eval_pool_destroy(own);
            out->stop = VPT_STOP_ERROR;
            return -1;
        }
        for (size_t i = 0; i < e.n_members; i++) e.memo[f][i] = -1;
    }
    switch (o->strategy) {
    case VPT_STRATEGY_EXHAUSTIVE: run_exhaustive(&e); break;
    case VPT_STRATEGY_RANDOM: run_random(&e); break;
    case VPT_STRATEGY_LOCAL: run_local(&e); break;
    case VPT_STRATEGY_ANNEALING: run_annealing(&e); break;
    case VPT_STRATEGY_GENETIC: run_genetic(&e); break;
    case VPT_STRATEGY_HALVING: run_halving(&e); break;
    default:
        vpt_fail("unknown strategy %d", (int)o->strategy);
        stop(&e, VPT_STOP_ERROR);
    }
    if (!e.stopped) stop(&e, VPT_STOP_ERROR); /* every strategy ends through stop() */
    /* evaluations still in flight on other GPUs are written to the cache
     * before returning (tuner/pool.h); what was only announced is dropped */
    if (vpt_eval_pool_drain(e.pool) && out->stop != VPT_STOP_ERROR) out->stop = VPT_STOP_ERROR;
    vpt_eval_pool_destroy(own);
    free(e.memo[0]);
    free(e.memo[1]);
    return out->stop == VPT_STOP_ERROR ? -1 : 0;
}

void vpt_search_result_free(VptSearchResult *r)
{
    free(r->evals);
    free(r->trace);
    memset(r, 0, sizeof *r);
}

double vpt_search_best_at_evals(const VptSearchResult *r, size_t k)
{
    if (r->n_evals == 0 || k == 0) return INFINITY;
    if (k > r->n_evals) k = r->n_evals;
    return r->trace[k - 1].best_ms;
}

double vpt_search_best_at_seconds(const VptSearchResult *r, double t)
{
    /* last trace point with seconds <= t */
    size_t lo = 0, hi = r->n_evals;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (r->trace[mid].seconds <= t) lo = mid + 1;
        else hi = mid;
    }
    return lo == 0 ? INFINITY : r->trace[lo - 1].best_ms;
}
