/* The search engine (contracts in tuner/search.h and tuner/search_engine.h);
 * the strategies are in tuner/strategy_<name>.c. */
#include "tuner/search.h"

#include "base/error.h"
#include "base/progress.h"
#include "tuner/pool.h"
#include "tuner/search_engine.h"

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
    o->stagnation = VPT_SEARCH_STAGNATION;
    o->random_starts = VPT_SEARCH_RANDOM_STARTS;
    o->prune = VPT_SEARCH_PRUNE;
}

int vpt_shuffle_init(VptShuffle *s, size_t n)
{
    s->perm = vpt_malloc((n ? n : 1) * sizeof *s->perm);
    if (!s->perm) return -1;
    for (size_t i = 0; i < n; i++) s->perm[i] = i;
    s->n = n;
    s->pos = 0;
    return 0;
}

long vpt_shuffle_next_unvisited(VptShuffle *s, VptSearchEngine *e, int fidelity)
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

void vpt_shuffle_array(VptSearchEngine *e, size_t *a, size_t n)
{
    for (size_t i = n; i > 1; i--) {
        size_t j = (size_t)vpt_rng_below(&e->rng, i);
        size_t t = a[i - 1];
        a[i - 1] = a[j];
        a[j] = t;
    }
}

int vpt_individual_cmp(const void *a, const void *b)
{
    const VptIndividual *x = a, *y = b;
    if (x->obj != y->obj) return x->obj < y->obj ? -1 : 1; /* +inf sorts last */
    return (x->member > y->member) - (x->member < y->member);
}

int vpt_search_listed(const size_t *list, size_t n, size_t m)
{
    for (size_t i = 0; i < n; i++)
        if (list[i] == m) return 1;
    return 0;
}

void vpt_search_stop(VptSearchEngine *e, VptStopReason why)
{
    if (!e->stopped) {
        e->stopped = 1;
        e->res->stop = why;
    }
}

static int push_eval(VptSearchEngine *e, const VptEvalRecord *r)
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
    if (o->transmittance != VPT_TRANSMITTANCE_NONE) c.transmittance = o->transmittance;
    return c;
}

int vpt_search_schedule_pruned(const VptSearchEngine *e, size_t member)
{
    const double f = e->o->prune;
    if (!(f > 0) || !e->o->schedule_best) return 0;
    const VptConfig c = stamp_estimator(e->o, vpt_space_point(e->space, member));
    const int schedule = vpt_config_schedule_index(&c);
    if (schedule < 0) return 0;
    const double mine = e->o->schedule_best(e->o->schedule_best_user, &c, schedule);
    const double all = e->o->schedule_best(e->o->schedule_best_user, &c, -1);
    return isfinite(mine) && isfinite(all) && !(mine < f * f * all);
}

/* What a record costs the budget: its recorded cost_s, or nothing for a
 * cached row the caller has paid for already (VptSearchOptions.paid). */
static double charged_cost(const VptSearchEngine *e, const VptEvalRecord *rec, int fresh)
{
    if (!fresh && e->o->paid && e->o->paid(e->o->paid_user, rec)) return 0;
    return isfinite(rec->cost_s) && rec->cost_s > 0 ? rec->cost_s : 0;
}

/* The wall time charged for a record of member m (search_engine.h: the
 * simulated wall clock). One GPU: the sum of the costs. */
static void charge(VptSearchEngine *e, size_t m, int fidelity, double cost_s)
{
    VptSearchResult *res = e->res;
    if (e->servers <= 1) {
        res->seconds += cost_s;
        e->now = res->seconds;
        return;
    }
    int k = 0;
    for (int i = 1; i < e->servers; i++)
        if (e->server_free[i] < e->server_free[k]) k = i;
    double ready = e->announced[fidelity][m] >= 0 ? e->announced[fidelity][m] : e->now;
    /* the pool runs at most e->ahead evaluations per lane ahead of what
     * the search took (tuner/pool.h) */
    size_t ring = (size_t)e->servers * e->ahead;
    size_t j = e->taken++;
    if (j >= ring && e->took_at[j % ring] > ready) ready = e->took_at[j % ring];
    double start = e->server_free[k] > ready ? e->server_free[k] : ready;
    double end = start + cost_s;
    e->server_free[k] = end;
    if (end > e->now) e->now = end;
    e->took_at[j % ring] = e->now;
    res->seconds = e->now;
}

/* The search takes m's record: counted, remembered, charged (end >= 0: the
 * simulated clock's end of its measurement in completion order, else
 * charge()), the best and the trace updated, progress told. */
static int accept(VptSearchEngine *e, size_t m, int fidelity, const VptEvalRecord *rec, int fresh, double end,
                  double *obj)
{
    VptSearchResult *res = e->res;
    if (fresh) res->evaluated++;
    else res->cached++;
    if (push_eval(e, rec)) {
        vpt_search_stop(e, VPT_STOP_ERROR);
        return 0;
    }
    long idx = (long)res->n_evals - 1;
    e->memo[fidelity][m] = idx;
    e->visited[fidelity]++;
    e->stalls = 0;
    if (end >= 0) {
        if (end > e->now) e->now = end;
        res->seconds = e->now;
    } else {
        charge(e, m, fidelity, charged_cost(e, rec, fresh));
    }
    *obj = vpt_eval_objective(rec);
    if (fidelity == 1 && *obj < e->best_obj) {
        e->best_obj = *obj;
        e->best_at = res->n_evals;
        res->best = *rec;
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

/* 0 (stopped) when the search may start no more evaluations: interrupted,
 * or a budget reached (search.h: an evaluation starts only while both
 * limits, and the caller's own, are unreached). */
static int may_start(VptSearchEngine *e)
{
    if (e->o->interrupt && *e->o->interrupt) {
        vpt_search_stop(e, VPT_STOP_INTERRUPTED);
        return 0;
    }
    if ((e->o->max_evals && e->res->n_evals >= e->o->max_evals) ||
        (e->o->max_seconds > 0 && e->res->seconds >= e->o->max_seconds) ||
        (e->o->wall_deadline > 0 && vpt_seconds() >= e->o->wall_deadline) ||
        (e->o->over_budget && e->o->over_budget(e->o->over_budget_user, e->res->seconds))) {
        vpt_search_stop(e, VPT_STOP_BUDGET);
        return 0;
    }
    return 1;
}

int vpt_search_eval(VptSearchEngine *e, size_t m, int fidelity, double *obj)
{
    if (e->stopped) return 0;
    VptSearchResult *res = e->res;
    long idx = e->memo[fidelity][m];
    if (idx >= 0) {
        if (++e->stalls >= e->o->stall_limit) {
            vpt_search_stop(e, VPT_STOP_STALLED);
            return 0;
        }
        *obj = vpt_eval_objective(&res->evals[idx]);
        return 1;
    }
    if (e->completion && fidelity == 1) {
        size_t which;
        return vpt_search_eval_first(e, &m, 1, &which, obj);
    }
    if (!may_start(e)) return 0;
    VptConfig stamped = stamp_estimator(e->o, vpt_space_point(e->space, m));
    /* the cache, else an evaluation (on one GPU here, or taken from a pool
     * that evaluated it ahead): tuner/pool.h; either way it is in the cache
     * before the strategy sees it */
    VptEvalRecord rec;
    int fresh;
    size_t wanted = e->o->max_evals ? e->o->max_evals - res->n_evals : SIZE_MAX;
    if (vpt_eval_pool_get(e->pool, &stamped, fidelity, wanted, &rec, &fresh)) {
        vpt_search_stop(e, VPT_STOP_ERROR);
        return 0;
    }
    return accept(e, m, fidelity, &rec, fresh, -1, obj);
}

int vpt_search_completion_begin(VptSearchEngine *e)
{
    if (e->servers <= 1) return 0;
    e->win_cap = 256;
    e->window = vpt_malloc(e->win_cap * sizeof *e->window);
    e->queued = vpt_calloc(e->n_members ? e->n_members : 1, 1);
    e->run = vpt_calloc((size_t)e->servers, sizeof *e->run);
    e->fetched = vpt_calloc((size_t)e->servers * e->ahead, sizeof *e->fetched);
    if (!e->window || !e->queued || !e->run || !e->fetched) return -1;
    e->completion = 1;
    return 0;
}

/* Queues m for the simulated GPUs (announced now when it was not). */
static int window_push(VptSearchEngine *e, size_t m)
{
    if (e->queued[m] || e->memo[1][m] >= 0) return 0;
    if (e->win_n == e->win_cap) {
        size_t cap = 2 * e->win_cap;
        size_t *w = vpt_realloc(e->window, cap * sizeof *w);
        if (!w) return -1;
        e->window = w;
        e->win_cap = cap;
    }
    if (e->announced[1][m] < 0) e->announced[1][m] = e->now;
    e->window[e->win_n++] = m;
    e->queued[m] = 1;
    return 0;
}

/* The index of m's fetched record in e->fetched, or -1. */
static long fetched_at(const VptSearchEngine *e, size_t m)
{
    for (size_t i = 0; i < e->nfetched; i++)
        if (e->fetched[i].member == m) return (long)i;
    return -1;
}

/* Starts the next announced members on the simulated GPUs left free, in
 * the order announced: each on the GPU free first, no earlier than it was
 * announced. A start needs the member's record (its cost): the records of
 * the next servers x ahead announced members are fetched whichever the
 * lanes finish first (vpt_eval_pool_get_first), so the lanes are not held
 * up by the order the search starts them in; those fetched but not yet
 * started wait in e->fetched. 0, or -1 (stopped) when the pool failed. */
static int fill_servers(VptSearchEngine *e)
{
    size_t want = (size_t)e->servers - e->nrun, look = (size_t)e->servers * e->ahead, k = 0, nl = 0;
    if (want == 0) return 0;
    size_t *mem = vpt_malloc(look * sizeof *mem);
    VptConfig *cfg = vpt_malloc(look * sizeof *cfg);
    size_t *idx = vpt_malloc(look * sizeof *idx);
    int rc = -1;
    if (!mem || !cfg || !idx) goto out;
    for (size_t w = e->win_pos; w < e->win_n && k < look; w++)
        if (e->memo[1][e->window[w]] < 0) mem[k++] = e->window[w];
    if (want > k) want = k;
    for (;;) {
        size_t missing = 0;
        for (size_t i = 0; i < want; i++) missing += fetched_at(e, mem[i]) < 0;
        if (missing == 0) break;
        nl = 0;
        for (size_t i = 0; i < k; i++)
            if (fetched_at(e, mem[i]) < 0) {
                idx[nl] = i;
                cfg[nl++] = stamp_estimator(e->o, vpt_space_point(e->space, mem[i]));
            }
        VptSearchRunning *r = &e->fetched[e->nfetched];
        size_t which;
        if (vpt_eval_pool_get_first(e->pool, cfg, nl, 1, SIZE_MAX, &r->rec, &which, &r->fresh)) goto out;
        r->member = mem[idx[which]];
        e->nfetched++;
    }
    for (size_t i = 0; i < want; i++) {
        size_t f = (size_t)fetched_at(e, mem[i]);
        VptSearchRunning r = e->fetched[f];
        e->fetched[f] = e->fetched[--e->nfetched];
        int s = 0;
        for (int j = 1; j < e->servers; j++)
            if (e->server_free[j] < e->server_free[s]) s = j;
        double ready = e->announced[1][r.member] >= 0 ? e->announced[1][r.member] : e->now;
        double start = e->server_free[s] > ready ? e->server_free[s] : ready;
        r.end = start + charged_cost(e, &r.rec, r.fresh);
        e->server_free[s] = r.end;
        e->run[e->nrun++] = r;
    }
    /* past the members started (and those taken meanwhile) */
    while (e->win_pos < e->win_n) {
        size_t m = e->window[e->win_pos];
        int started = e->memo[1][m] >= 0;
        for (size_t i = 0; i < e->nrun && !started; i++) started = e->run[i].member == m;
        if (!started) break;
        e->win_pos++;
    }
    rc = 0;
out:
    free(mem);
    free(cfg);
    free(idx);
    if (rc) vpt_search_stop(e, VPT_STOP_ERROR);
    return rc;
}

int vpt_search_eval_first(VptSearchEngine *e, const size_t *members, size_t n, size_t *which, double *obj)
{
    if (e->stopped) return 0;
    for (size_t i = 0; i < n; i++)
        if (e->memo[1][members[i]] >= 0) {
            *which = i;
            *obj = vpt_eval_objective(&e->res->evals[e->memo[1][members[i]]]);
            return 1;
        }
    if (!e->completion) {
        *which = 0;
        return vpt_search_eval(e, members[0], 1, obj);
    }
    for (size_t i = 0; i < n; i++)
        if (window_push(e, members[i])) {
            vpt_search_stop(e, VPT_STOP_ERROR);
            return 0;
        }
    for (;;) {
        if (!may_start(e) || fill_servers(e)) return 0;
        if (e->nrun == 0) {
            vpt_fail("internal error: the search waits for members no GPU runs");
            vpt_search_stop(e, VPT_STOP_ERROR);
            return 0;
        }
        size_t r = 0;
        for (size_t i = 1; i < e->nrun; i++)
            if (e->run[i].end < e->run[r].end) r = i;
        VptSearchRunning done = e->run[r];
        memmove(&e->run[r], &e->run[r + 1], (e->nrun - r - 1) * sizeof *e->run);
        e->nrun--;
        double o;
        if (!accept(e, done.member, 1, &done.rec, done.fresh, done.end, &o)) return 0;
        for (size_t i = 0; i < n; i++)
            if (members[i] == done.member) {
                *which = i;
                *obj = o;
                return 1;
            }
    }
}

int vpt_search_visited(const VptSearchEngine *e, size_t m, int fidelity)
{
    return e->memo[fidelity][m] >= 0;
}

const VptEvalRecord *vpt_search_record(const VptSearchEngine *e, size_t m)
{
    const long idx = e->memo[1][m];
    return idx >= 0 ? &e->res->evals[idx] : NULL;
}

void vpt_search_hint(VptSearchEngine *e, const size_t *members, size_t n, int fidelity)
{
    const VptSearchOptions *o = e->o;
    for (size_t i = 0; i < n; i++) /* the clock's "announced at", hooks or not */
        if (e->announced[fidelity][members[i]] < 0) e->announced[fidelity][members[i]] = e->now;
    if (e->completion && fidelity == 1)
        for (size_t i = 0; i < n; i++)
            if (window_push(e, members[i])) vpt_search_stop(e, VPT_STOP_ERROR);
    if (!vpt_eval_pool_wants_hints(e->pool) || e->stopped) return;
    size_t left = SIZE_MAX;
    if (o->max_evals) left = o->max_evals > e->res->n_evals ? o->max_evals - e->res->n_evals : 0;
    VptConfig cfgs[VPT_SEARCH_HINT_MAX];
    size_t k = 0;
    for (size_t i = 0; i < n && left > 0; i++) {
        if (vpt_search_visited(e, members[i], fidelity)) continue;
        VptConfig stamped = stamp_estimator(o, vpt_space_point(e->space, members[i]));
        const VptConfig *c = &stamped;
        if (e->cache && vpt_cache_find(e->cache, c, fidelity)) continue;
        int dup = 0;
        for (size_t j = 0; j < k && !dup; j++) dup = vpt_config_equal(&cfgs[j], c);
        if (dup) continue;
        cfgs[k++] = *c;
        left--;
        if (k == VPT_SEARCH_HINT_MAX) {
            vpt_eval_pool_announce(e->pool, cfgs, k, fidelity);
            k = 0;
        }
    }
    if (k) vpt_eval_pool_announce(e->pool, cfgs, k, fidelity);
}

double vpt_search_budget_used(const VptSearchEngine *e)
{
    double f = -1;
    if (e->o->max_evals) f = (double)e->res->n_evals / (double)e->o->max_evals;
    if (e->o->max_seconds > 0) {
        double g = e->res->seconds / e->o->max_seconds;
        if (g > f) f = g;
    }
    return f > 1 ? 1 : f;
}

void vpt_search_run_sequence(VptSearchEngine *e, const size_t *order, size_t n)
{
    double obj;
    size_t announced = 0;
    for (size_t i = 0; i < n; i++) {
        if (announced < n && announced - i < VPT_SEARCH_LOOKAHEAD / 2) {
            size_t to = i + VPT_SEARCH_LOOKAHEAD < n ? i + VPT_SEARCH_LOOKAHEAD : n;
            vpt_search_hint(e, order + announced, to - announced, 1);
            announced = to;
        }
        if (!vpt_search_eval(e, order[i], 1, &obj)) return;
    }
    vpt_search_stop(e, VPT_STOP_DONE);
}

int vpt_search_eval_all(VptSearchEngine *e, size_t *list, size_t n, size_t *best, double *best_obj)
{
    vpt_shuffle_array(e, list, n);
    vpt_search_hint(e, list, n, 1);
    *best_obj = INFINITY;
    for (size_t i = 0; i < n; i++) {
        double obj;
        if (!vpt_search_eval(e, list[i], 1, &obj)) return 0;
        if (obj < *best_obj) {
            *best_obj = obj;
            *best = list[i];
        }
    }
    return 1;
}

/* The batch width (search.h: batch). */
static int batch_width(const VptSearchOptions *o, VptEvalPool *pool)
{
    if (o->batch > 0) return o->batch;
    if (o->max_seconds > 0 && !o->max_evals) return vpt_eval_pool_lanes(pool);
    return 1;
}

int vpt_search_run(const VptSpace *space, VptEvaluateFn fn, void *ctx, VptCache *cache,
                   const VptSearchOptions *o, VptSearchResult *out)
{
    memset(out, 0, sizeof *out);
    VptSearchEngine *e = vpt_calloc(1, sizeof *e);
    if (!e) {
        out->stop = VPT_STOP_ERROR;
        return -1;
    }
    *e = (VptSearchEngine){
        .space = space,
        .n_members = vpt_space_size(space),
        .pool = o->pool,
        .cache = cache,
        .o = o,
        .res = out,
        .best_obj = INFINITY,
    };
    VptEvalPool *own = NULL;
    if (!e->pool && !(e->pool = own = vpt_eval_pool_direct(fn, ctx, cache, o->prefetch, o->prefetch_user))) {
        free(e);
        out->stop = VPT_STOP_ERROR;
        return -1;
    }
    e->servers = vpt_eval_pool_gpus(e->pool);
    if (e->servers > VPT_SEARCH_MAX_SERVERS) e->servers = VPT_SEARCH_MAX_SERVERS;
    e->width = batch_width(o, e->pool);
    e->ahead = (size_t)vpt_eval_pool_ahead_per_lane();
    e->took_at = vpt_calloc((size_t)e->servers * e->ahead, sizeof *e->took_at);
    VptSearchOptions local;
    if (o->stall_limit == 0) {
        local = *o;
        local.stall_limit = 100000;
        e->o = &local;
    }
    vpt_rng_seed(&e->rng, o->seed);
    int failed = !e->took_at;
    for (int f = 0; f < 2; f++) {
        e->memo[f] = vpt_malloc((e->n_members ? e->n_members : 1) * sizeof *e->memo[f]);
        e->announced[f] = vpt_malloc((e->n_members ? e->n_members : 1) * sizeof *e->announced[f]);
        if (!e->memo[f] || !e->announced[f]) {
            failed = 1;
            continue;
        }
        for (size_t i = 0; i < e->n_members; i++) {
            e->memo[f][i] = -1;
            e->announced[f][i] = -1;
        }
    }
    if (failed) {
        vpt_search_stop(e, VPT_STOP_ERROR);
    } else {
        switch (o->strategy) {
        case VPT_STRATEGY_EXHAUSTIVE: vpt_strategy_exhaustive_run(e); break;
        case VPT_STRATEGY_RANDOM: vpt_strategy_random_run(e); break;
        case VPT_STRATEGY_LOCAL: vpt_strategy_local_run(e); break;
        case VPT_STRATEGY_ANNEALING: vpt_strategy_annealing_run(e); break;
        case VPT_STRATEGY_GENETIC: vpt_strategy_genetic_run(e); break;
        case VPT_STRATEGY_HALVING: vpt_strategy_halving_run(e); break;
        default:
            vpt_fail("unknown strategy %d", (int)o->strategy);
            vpt_search_stop(e, VPT_STOP_ERROR);
        }
    }
    if (!e->stopped) vpt_search_stop(e, VPT_STOP_ERROR); /* every strategy ends through stop() */
    /* evaluations still in flight on other GPUs are written to the cache
     * before returning (tuner/pool.h); what was only announced is dropped */
    if (vpt_eval_pool_drain(e->pool) && out->stop != VPT_STOP_ERROR) out->stop = VPT_STOP_ERROR;
    vpt_eval_pool_destroy(own);
    for (int f = 0; f < 2; f++) {
        free(e->memo[f]);
        free(e->announced[f]);
    }
    free(e->took_at);
    free(e->window);
    free(e->queued);
    free(e->run);
    free(e->fetched);
    free(e);
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
