/* The tune driver (contract in tuner/tune.h). */
#include "tuner/tune.h"

#include "base/error.h"
#include "base/progress.h"
#include "tuner/cache.h"
#include "tuner/pool.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void vpt_tune_options_init(VptTuneOptions *o)
{
    memset(o, 0, sizeof *o);
    vpt_search_options_init(&o->search);
    o->top_k = 10;
    o->rivals = VPT_ESTIMATORS_RIVALS_MAX;
    o->remeasure_rounds = VPT_REMEASURE_ROUNDS;
}

typedef struct {
    const VptTuneOptions *o;
    int tty;
    double last_print; /* monotonic seconds */
    size_t printed_len;
} Progress;

/* The measurements a tune has paid for, as cache keys (vpt_cache_key of
 * config and fidelity) in an open-addressing set; 0 marks a free slot. */
typedef struct {
    uint64_t *slot;
    size_t cap, n; /* cap: 0 or a power of two */
} KeySet;

static uint64_t key_of(const VptEvalRecord *r)
{
    const uint64_t k = vpt_cache_key(&r->config, r->fidelity);
    return k ? k : 1;
}

static int keyset_has(const KeySet *s, uint64_t k)
{
    for (size_t i = s->cap ? k & (s->cap - 1) : 0; s->cap; i = (i + 1) & (s->cap - 1)) {
        if (s->slot[i] == k) return 1;
        if (s->slot[i] == 0) return 0;
    }
    return 0;
}

static int keyset_add(KeySet *s, uint64_t k)
{
    if (keyset_has(s, k)) return 0;
    if (2 * (s->n + 1) > s->cap) {
        KeySet g = {.cap = s->cap ? 2 * s->cap : 256};
        if (!(g.slot = calloc(g.cap, sizeof *g.slot))) return vpt_fail("out of memory recording the tune's measurements");
        for (size_t i = 0; i < s->cap; i++)
            if (s->slot[i]) keyset_add(&g, s->slot[i]);
        free(s->slot);
        *s = g;
    }
    size_t i = k & (s->cap - 1);
    while (s->slot[i]) i = (i + 1) & (s->cap - 1);
    s->slot[i] = k;
    s->n++;
    return 0;
}

/* One tune under way: its progress line, the finish it sets aside, and
 * where the search running now stands in the whole tune. */
typedef struct {
    const VptTuneOptions *o;
    Progress pr;
    VptFinishTracker *finish; /* every record the tune took; NULL: no finish */
    /* every record the tune took, so that a later search taking one again
     * (from the cache) is not charged for it twice (VptSearchOptions.paid);
     * failed: adding to it ran out of memory */
    KeySet paid;
    int paid_failed;
    /* the recorded costs of the distinct records taken, and their count:
     * what the next evaluation is expected to cost (next_cost_s) */
    double paid_s;
    size_t paid_n;
    double budget_s;          /* the tune's time budget; 0: none */
    double wall_deadline;     /* 0: none */
    /* the tune's records, evaluations from the cache and charged seconds
     * before the search running now (its own count from 0) */
    size_t before_evals, before_cached;
    double before_s;
    /* set aside beside the finish while a search before the last screening
     * runs: that screening's seconds (estimator_stage) */
    double held_s;
    /* the best objective of the full-fidelity records taken, by estimator
     * and schedule (schedule_best); estimators past the table's size are
     * not recorded, and their schedule moves are all made */
    struct {
        VptEstimator e;
        double best[VPT_SCHEDULE_COUNT];
    } sched[VPT_ESTIMATORS_MAX];
    size_t n_sched;
} Tune;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void format_duration(double s, char *buf, size_t size)
{
    if (!isfinite(s) || s < 0) {
        snprintf(buf, size, "?");
        return;
    }
    long t = lround(s);
    if (t >= 3600) snprintf(buf, size, "%ldh%02ldm", t / 3600, t / 60 % 60);
    else if (t >= 60) snprintf(buf, size, "%ldm%02lds", t / 60, t % 60);
    else snprintf(buf, size, "%lds", t);
}

/* "streamingSK maxrregcount=64,ppt=1,..." : the schedule's name, then the
 * canonical text without the three fields the name already says. */
static void short_config(const VptConfig *c, char *buf, size_t size)
{
    char text[VPT_CONFIG_STR_MAX];
    vpt_config_format(c, text, sizeof text);
    const char *rest = strstr(text, "maxrregcount=");
    snprintf(buf, size, "%s %s", vpt_config_schedule_name(c), rest ? rest : text);
}

static double eta_seconds(const VptTuneOptions *o, const VptSearchProgress *p)
{
    const VptSearchOptions *s = &o->search;
    double per_eval = p->evals ? p->seconds / (double)p->evals : NAN;
    double eta = INFINITY;
    if (s->max_seconds > 0) eta = fmax(0, s->max_seconds - p->seconds);
    if (s->max_evals) eta = fmin(eta, (double)(s->max_evals > p->evals ? s->max_evals - p->evals : 0) * per_eval);
    if (!s->max_seconds && !s->max_evals &&
        (s->strategy == VPT_STRATEGY_EXHAUSTIVE || s->strategy == VPT_STRATEGY_RANDOM)) {
        size_t n = vpt_space_size(o->space);
        eta = (double)(n > p->evals ? n - p->evals : 0) * per_eval;
    }
    return eta;
}

static void print_progress(Progress *pr, const VptSearchProgress *p, int final)
{
    const VptTuneOptions *o = pr->o;
    double t = now_s();
    if (!final && t - pr->last_print < (pr->tty ? 0.1 : 10.0)) return;
    pr->last_print = t;
    char spent[32], eta[32], best[VPT_CONFIG_STR_MAX + 64] = "none yet";
    format_duration(p->seconds, spent, sizeof spent);
    format_duration(eta_seconds(o, p), eta, sizeof eta);
    if (p->best) {
        char cfg[VPT_CONFIG_STR_MAX + 32];
        short_config(&p->best->config, cfg, sizeof cfg);
        snprintf(best, sizeof best, "%.4f ms %s", p->best->time_ms, cfg);
    }
    char line[1024];
    int n = snprintf(line, sizeof line, "[tune %s] %zu evals (%zu cached) %s | ETA %s | best %s",
                     vpt_strategy_name(o->search.strategy), p->evals, p->cached, spent, eta, best);
    if (n < 0) return;
    size_t len = strlen(line);
    if (pr->tty) {
        /* pad over the previous, longer line */
        fprintf(o->progress, "\r%s%*s", line, len < pr->printed_len ? (int)(pr->printed_len - len) : 0, "");
        if (final) fputc('\n', o->progress);
    } else {
        fprintf(o->progress, "%s\n", line);
    }
    pr->printed_len = len;
    fflush(o->progress);
}

/* The finish predicted from the records so far, with what `n` records not
 * yet taken are expected to add to it (tuner/finish.h: next_s each); 0
 * without one. */
static double finish_with(const Tune *t, size_t n)
{
    if (!t->finish) return 0;
    VptFinishPrediction p;
    vpt_finish_tracker_predict(t->finish, &p);
    return p.total_s + (double)n * p.next_s;
}

/* The finish predicted, with what the next record is expected to add. */
static double finish_s(const Tune *t)
{
    return finish_with(t, 1);
}

/* The row of t's schedule table for c's estimator; NULL when it has none
 * and `add` is 0 or the table is full. */
static double *schedule_row(Tune *t, const VptConfig *c, int add)
{
    const VptEstimator e = vpt_estimator_of(c);
    for (size_t i = 0; i < t->n_sched; i++)
        if (vpt_estimator_equal(&t->sched[i].e, &e)) return t->sched[i].best;
    if (!add || t->n_sched == sizeof t->sched / sizeof *t->sched) return NULL;
    t->sched[t->n_sched].e = e;
    for (int k = 0; k < VPT_SCHEDULE_COUNT; k++) t->sched[t->n_sched].best[k] = INFINITY;
    return t->sched[t->n_sched++].best;
}

/* VptSearchOptions.schedule_best over the records the tune took. */
static double schedule_best(void *user, const VptConfig *c, int schedule)
{
    const double *row = schedule_row(user, c, 0);
    if (!row || schedule >= VPT_SCHEDULE_COUNT) return INFINITY;
    if (schedule >= 0) return row[schedule];
    double best = INFINITY;
    for (int k = 0; k < VPT_SCHEDULE_COUNT; k++) best = fmin(best, row[k]);
    return best;
}

/* A record the tune took: the finish's, the schedule table's, and paid
 * for. */
static void took(Tune *t, const VptEvalRecord *r)
{
    if (t->finish) vpt_finish_tracker_add(t->finish, r);
    const int schedule = vpt_config_schedule_index(&r->config);
    const double obj = vpt_eval_objective(r);
    double *row = r->fidelity == 1 && schedule >= 0 && isfinite(obj) ? schedule_row(t, &r->config, 1) : NULL;
    if (row && obj < row[schedule]) row[schedule] = obj;
    const uint64_t k = key_of(r);
    if (keyset_has(&t->paid, k)) return;
    if (keyset_add(&t->paid, k)) t->paid_failed = 1;
    if (isfinite(r->cost_s) && r->cost_s > 0) {
        t->paid_s += r->cost_s;
        t->paid_n++;
    }
}

/* What one record the tune has not taken yet is expected to add to the
 * finish (VptFinishPrediction.next_s; finish_s counts one already). */
static double finish_next_s(const Tune *t)
{
    if (!t->finish) return 0;
    VptFinishPrediction p;
    vpt_finish_tracker_predict(t->finish, &p);
    return p.next_s;
}

/* What the next evaluation is expected to cost: the mean of what the
 * tune's evaluations cost so far (0 before the first). */
static double next_cost_s(const Tune *t)
{
    return t->paid_n ? t->paid_s / (double)t->paid_n : 0;
}

/* VptSearchOptions.paid: the tune took the record's config before. */
static int paid(void *user, const VptEvalRecord *rec)
{
    const Tune *t = user;
    return keyset_has(&t->paid, key_of(rec));
}

/* The search's progress hook: its record is taken (took), and the line
 * counts the whole tune's evaluations and seconds, not the running search's. */
static void on_progress(void *user, const VptSearchProgress *p)
{
    Tune *t = user;
    if (p->last) took(t, p->last);
    if (!t->o->progress) return;
    VptSearchProgress q = *p;
    q.evals += t->before_evals;
    q.cached += t->before_cached;
    q.seconds += t->before_s;
    print_progress(&t->pr, &q, 0);
}

/* VptSearchOptions.over_budget: the tune's budget holds the searches before
 * the running one (before_s), what is held for the last screening, the
 * finish predicted now and the evaluation about to start, at what the
 * tune's evaluations cost on average; the wall deadline, the finish and
 * that evaluation. Why the evaluation: one started with less left than it
 * takes ends past the budget, by seconds where evaluations take seconds
 * (docs/decisions/the-next-evaluation-fits.md). */
static int over_budget(void *user, double seconds)
{
    Tune *t = user;
    const double f = finish_s(t), next = next_cost_s(t);
    if (t->budget_s > 0 && t->before_s + seconds + t->held_s + f + next > t->budget_s) return 1;
    return t->wall_deadline > 0 && f > 0 && vpt_seconds() + f + next > t->wall_deadline;
}

/* What the budget leaves to a screening now: the seconds (0: no limit;
 * negative: nothing left) and the wall deadline, the finish set aside. */
static double screening_seconds(const Tune *t, const VptSearchResult *out)
{
    return t->budget_s > 0 ? t->budget_s - out->seconds - finish_s(t) : 0;
}

static double screening_deadline(const Tune *t)
{
    return t->wall_deadline > 0 ? t->wall_deadline - finish_s(t) : 0;
}

/* The ok full-fidelity records of recs, best first, at most k, in a new array. */
static VptEvalRecord *best_ok(const VptEvalRecord *recs, size_t n, size_t k, size_t *n_out)
{
    VptEvalRecord *ok = vpt_malloc((n ? n : 1) * sizeof *ok);
    if (!ok) return NULL;
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (recs[i].fidelity == 1 && isfinite(vpt_eval_objective(&recs[i]))) ok[m++] = recs[i];
    qsort(ok, m, sizeof *ok, vpt_eval_record_rank_cmp);
    /* one row per config, its best record: a config the searches took
     * again (a cache hit, a rival's start) would take a finalist's place */
    size_t kept = 0;
    for (size_t i = 0; i < m && kept < k; i++) {
        int seen = 0;
        for (size_t j = 0; j < kept && !seen; j++) seen = vpt_config_equal(&ok[j].config, &ok[i].config);
        if (!seen) ok[kept++] = ok[i];
    }
    *n_out = kept;
    return ok;
}

/* x with the given width and precision, or "-" when not measured. */
static const char *num(char *buf, size_t size, double x, int width, int prec)
{
    if (isfinite(x)) snprintf(buf, size, "%*.*f", width, prec, x);
    else snprintf(buf, size, "%*s", width, "-");
    return buf;
}

void vpt_tune_print_top(FILE *f, const VptEvalRecord *recs, size_t n, int k)
{
    size_t m;
    VptEvalRecord *top = best_ok(recs, n, k > 0 ? (size_t)k : 0, &m);
    if (!top) return;
    /* with a sun the rank is the time to equal error (vpt_eval_objective),
     * which the table then shows beside the time */
    int eq = 0;
    for (size_t i = 0; i < m; i++) eq |= isfinite(top[i].equal_error_factor) && top[i].equal_error_factor > 0;
    fprintf(f, "%4s %10s%s %9s %9s %5s %6s  %-22s %s\n", "rank", "time_ms", eq ? "  eq_err_ms" : "", "spread",
            "Mrays/s", "regs", "occ", "schedule", "config");
    for (size_t i = 0; i < m; i++) {
        const VptEvalRecord *r = &top[i];
        char text[VPT_CONFIG_STR_MAX];
        vpt_config_format(&r->config, text, sizeof text);
        char a[32], b[32], c[32], d[32], e[32] = "";
        if (eq) snprintf(e, sizeof e, " %10.4f", vpt_eval_objective(r));
        fprintf(f, "%4zu %10.4f%s %s %s %s %s  %-22s %s\n", i + 1, r->time_ms, e,
                num(a, sizeof a, r->time_ms_spread, 9, 4), num(b, sizeof b, r->mrays_per_s, 9, 2),
                num(c, sizeof c, r->registers, 5, 0), num(d, sizeof d, r->occupancy_theoretical, 6, 2),
                vpt_config_schedule_name(&r->config), text);
    }
    if (m == 0) fprintf(f, "   (no config passed every gate)\n");
    free(top);
}

/* Appends records to a search result, with trace points, keeping its best;
 * the tune t (NULL: none) takes them too (records a search took reached it
 * through on_progress already). */
static int append_records(VptSearchResult *s, const VptEvalRecord *recs, size_t n, double seconds, Tune *t)
{
    for (size_t i = 0; t && i < n; i++) took(t, &recs[i]);
    if (t && t->paid_failed) return -1;
    if (n == 0) return 0;
    VptEvalRecord *all = realloc(s->evals, (s->n_evals + n) * sizeof *all);
    if (all) s->evals = all;
    VptTracePoint *tr = all ? realloc(s->trace, (s->n_evals + n) * sizeof *tr) : NULL;
    if (!all || !tr) return vpt_fail("out of memory merging the estimator stage's records");
    s->trace = tr;
    for (size_t i = 0; i < n; i++) {
        s->seconds += seconds / (double)n;
        if (vpt_eval_objective(&recs[i]) < (s->found ? vpt_eval_objective(&s->best) : INFINITY)) {
            s->best = recs[i];
            s->found = 1;
        }
        s->evals[s->n_evals] = recs[i];
        s->trace[s->n_evals] = (VptTracePoint){s->n_evals + 1, s->seconds, s->found ? vpt_eval_objective(&s->best)
                                                                                     : INFINITY};
        s->n_evals++;
    }
    return 0;
}

/* 1 when one measurement more, at what the tune's evaluations cost on
 * average, fits what the budget leaves beside the finish: on the charged
 * clock, out's seconds and `pending` more charged for `n_pending` records
 * not yet in out (each may join the finalists), and, with by_wall, before
 * the wall deadline (docs/decisions/the-next-evaluation-fits.md). */
static int measurement_fits(const Tune *t, const VptSearchResult *out, double pending, size_t n_pending, int by_wall)
{
    const double f = finish_with(t, 1 + n_pending), next = next_cost_s(t);
    if (t->budget_s > 0 && out->seconds + pending + f + next > t->budget_s) return 0;
    return !(by_wall && t->wall_deadline > 0 && vpt_seconds() + f + next > t->wall_deadline);
}

/* The path order screened on the best record so far: that config with the
 * other order (codegen/config.h: paths), evaluated through the pool (the
 * cache first) and appended to *out; *order is then the order of out's best,
 * so the faster one, the current one on a tie. Why a screening and not a
 * dimension of the space: the order changes which texels a warp's lanes
 * fetch together, not how the schedule maps flights to lanes, and
 * doubling the space would halve how densely a tune covers it for a choice
 * that one evaluation settles (measured in results/<gpu>/paths/). */
static int screen_paths(Tune *t, VptEvalPool *pool, VptSearchResult *out, double *seconds, VptPathOrder *order,
                        int by_wall)
{
    *order = out->best.config.paths;
    if (!measurement_fits(t, out, 0, 0, by_wall)) return 0;
    VptConfig c = out->best.config;
    c.paths = c.paths == VPT_PATHS_SAMPLE ? VPT_PATHS_PIXEL : VPT_PATHS_SAMPLE;
    VptEvalRecord rec;
    double s = 0;
    if (vpt_eval_pool_get_charged(pool, &c, &rec, &s) || append_records(out, &rec, 1, s, t)) return -1;
    *seconds += s;
    *order = out->best.config.paths;
    return vpt_eval_pool_drain(pool);
}

/* With a sun, the transmittance estimator of the shadow rays screened on
 * the best record so far: that config with each other estimator (delta,
 * ratio, residual; codegen/config.h: transmittance), evaluated through the
 * pool and appended to *out, ranked at equal error (vpt_eval_objective:
 * the time times the estimator's variance over ratio tracking's, measured
 * by the evaluator's gate); *tr is then the estimator of out's best. A
 * scene without a sun (its records carry no equal_error_factor) screens
 * nothing. Why a screening and not a dimension: like the path order, the
 * estimator changes what a path costs and how noisy it is, not how the
 * schedule maps flights to lanes, and three evaluations settle it. */
static int screen_transmittance(Tune *tn, VptEvalPool *pool, VptSearchResult *out, double *seconds,
                                VptTransmittance *tr, int by_wall)
{
    if (!out->found || !isfinite(out->best.equal_error_factor)) return 0;
    const VptTransmittance now =
        out->best.config.transmittance == VPT_TRANSMITTANCE_NONE ? VPT_TRANSMITTANCE_DEFAULT : out->best.config.transmittance;
    VptEvalRecord recs[3];
    size_t n = 0;
    double s = 0;
    for (int t = VPT_TRANSMITTANCE_DELTA; t <= VPT_TRANSMITTANCE_RESIDUAL; t++) {
        if (t == (int)now) continue;
        if (!measurement_fits(tn, out, s, n, by_wall)) break;
        VptConfig c = out->best.config;
        c.transmittance = (VptTransmittance)t;
        double cs = 0;
        if (vpt_eval_pool_get_charged(pool, &c, &recs[n], &cs)) return -1;
        s += cs;
        n++;
    }
    if (append_records(out, recs, n, s, tn)) return -1;
    *seconds += s;
    *tr = out->best.config.transmittance;
    return vpt_eval_pool_drain(pool);
}

/* The first search's share of the budget, as 1 / FIRST_SHARE: it finds the
 * schedule the estimators are screened on, and the rest goes to the search
 * with the screening's choice. Why a quarter and not a half: in the
 * committed tunes the first search's best after a quarter of the budget was
 * nearly always already its best at half, so a second quarter buys nearly
 * nothing, while on a large volume the half-and-half split can leave no
 * second search at all (docs/decisions/first-search-quarter.md). */
enum { FIRST_SHARE = 4 };

/* Runs a search with options so and appends its records to *out (their
 * trace continues out's); *best: the search's best config, *best_obj its
 * objective (+inf when it found none). */
static int search_appended(Tune *t, const VptSearchOptions *so, VptSearchResult *out, VptConfig *best,
                           double *best_obj)
{
    const VptTuneOptions *o = t->o;
    VptSearchResult r;
    t->before_evals = out->n_evals;
    t->before_cached = out->cached;
    t->before_s = out->seconds;
    int rc = vpt_search_run(o->space, o->evaluate, o->evaluate_ctx, o->cache, so, &r);
    const double before = out->seconds;
    const int ok = append_records(out, r.evals, r.n_evals, r.seconds, NULL) == 0;
    out->cached += r.cached;
    out->evaluated += r.evaluated;
    out->stop = r.stop;
    out->seconds = before + r.seconds;
    *best_obj = r.found ? vpt_eval_objective(&r.best) : INFINITY;
    if (r.found) *best = r.best.config;
    vpt_search_result_free(&r);
    return ok ? rc : -1;
}

/* How much slower than the first search's best a regeneration family's
 * best record may be, with the first search's estimator, and still be
 * measured with the screening's choice (screen_families). Why the
 * estimators' contender margin: in the committed tunes with an estimator
 * stage, the family that won had stood within it in the first search in all
 * but the two-GPU runs whose first search met warp regeneration only far
 * from its basin, while the families beyond it (naiveMK, device
 * regeneration on manix) are the ones whose evaluations cost most
 * (docs/decisions/regeneration-family-rival.md). */
#define FAMILY_MARGIN 1.25

/* Other families measured within this factor of the fastest of them each
 * get a rival. Why: one measurement at a config none of them was descended
 * in does not tell apart families that close, and the one that measured
 * second can hold the better basin (docs/decisions/regeneration-family-rival.md,
 * "The families that tie"). */
#define FAMILY_TIE 1.05

/* The config the first screening measures every estimator on: the first
 * search's best (out->best), or, where one of its records within
 * FAMILY_TIE of it cost less than half as much to measure, the cheapest
 * of those. Why: the screening ranks estimators, and every contender is a
 * new kernel of its base's schedule; a schedule of several kernels (the
 * sorting and compacting ones) compiles and measures several times slower
 * than one of a single kernel, so a base that ties at a fraction of the
 * cost ranks them as well and leaves the searches their budget
 * (docs/decisions/screening-base-the-cheapest-tie.md). */
static VptConfig screening_base(const VptSearchResult *out, size_t n_first)
{
    const double best_obj = vpt_eval_objective(&out->best), best_cost = out->best.cost_s;
    const VptEvalRecord *pick = NULL;
    if (!(isfinite(best_cost) && best_cost > 0)) return out->best.config;
    for (size_t i = 0; i < n_first; i++) {
        const VptEvalRecord *r = &out->evals[i];
        if (r->fidelity != 1 || !(vpt_eval_objective(r) <= FAMILY_TIE * best_obj)) continue;
        if (!(isfinite(r->cost_s) && r->cost_s > 0 && r->cost_s < 0.5 * best_cost)) continue;
        if (!pick || r->cost_s < pick->cost_s) pick = r;
    }
    return pick ? pick->config : out->best.config;
}

/* The regeneration families measured with the estimator the screenings
 * chose: for each value of regen (none, thread, warp, block, device) but
 * at's, the fastest record of the first search (first[0..n_first)) in that
 * family, when within FAMILY_MARGIN of the first search's best, with at's
 * estimator, path order and transmittance stamped on (one already measured
 * so is left out: it is slower than at); measured through the pool
 * (announced together, the fastest first), charged and appended to *out;
 * none starts once out's seconds reach max_seconds (> 0), its evaluations
 * max_evals (> 0), or vpt_seconds() wall_deadline (> 0); the records
 * are taken by the tune t as every record of it is. from[0..*n_from): the
 * configs of those faster than at (objective at_obj) and within FAMILY_TIE
 * of the fastest of them, fastest first. At most four evaluations.
 * Why: the first search chose among the families with the thesis'
 * estimator, which can leave them within a few percent of each other, and
 * every rival starts from its choice; an estimator that makes steps cheaper
 * changes what a lane idle until the warp's longest path ends costs, which
 * is what the families differ in, and the race's descents can be too short
 * to reach the schedule moves (docs/decisions/regeneration-family-rival.md). */
static int screen_families(const VptEvalRecord *first, size_t n_first, VptConfig at, double at_obj, VptEvalPool *pool,
                           VptSearchResult *out, double max_seconds, size_t max_evals, double wall_deadline,
                           Tune *t, VptConfig *from, size_t *n_from)
{
    enum { FAMILIES = VPT_REGEN_DEVICE + 1 };
    const VptEvalRecord *fam[FAMILIES] = {NULL};
    double first_obj = INFINITY;
    for (size_t i = 0; i < n_first; i++) {
        const VptEvalRecord *r = &first[i];
        const double obj = vpt_eval_objective(r);
        if (r->fidelity != 1 || !isfinite(obj)) continue;
        if (obj < first_obj) first_obj = obj;
        const int f = (int)r->config.regen;
        if (f >= 0 && f < FAMILIES && (!fam[f] || obj < vpt_eval_objective(fam[f]))) fam[f] = r;
    }
    *n_from = 0;
    VptConfig c[FAMILIES];
    double c_obj[FAMILIES];
    size_t n = 0;
    for (int f = 0; f < FAMILIES; f++) {
        if (f == (int)at.regen || !fam[f] || !(vpt_eval_objective(fam[f]) <= FAMILY_MARGIN * first_obj)) continue;
        VptConfig x = vpt_estimator_apply(&fam[f]->config, &(VptEstimator){at.majorant, at.density, at.sparse});
        x.paths = at.paths;
        x.transmittance = at.transmittance;
        if (vpt_config_equal(&x, &fam[f]->config)) continue; /* measured already, and slower than at */
        size_t k = n++;
        for (; k > 0 && c_obj[k - 1] > vpt_eval_objective(fam[f]); k--) {
            c[k] = c[k - 1];
            c_obj[k] = c_obj[k - 1];
        }
        c[k] = x;
        c_obj[k] = vpt_eval_objective(fam[f]);
    }
    if (n == 0) return 0;
    vpt_eval_pool_announce(pool, c, n, 1);
    VptEvalRecord recs[FAMILIES];
    size_t m = 0, from_rec[FAMILIES];
    double s = 0, fastest = at_obj;
    for (size_t i = 0; i < n; i++) {
        const double next = next_cost_s(t) + (double)m * finish_next_s(t);
        if ((max_seconds > 0 && out->seconds + s + next > max_seconds) || (max_evals && out->n_evals + m >= max_evals) ||
            (wall_deadline > 0 && vpt_seconds() + next >= wall_deadline))
            break;
        if (vpt_eval_pool_get_charged(pool, &c[i], &recs[m], &s)) return -1;
        fastest = fmin(fastest, vpt_eval_objective(&recs[m]));
        m++;
    }
    /* the faster than at within the tie of the fastest, fastest first */
    for (size_t i = 0; i < m; i++) {
        const double obj = vpt_eval_objective(&recs[i]);
        if (!(obj < at_obj && obj <= FAMILY_TIE * fastest)) continue;
        size_t k = (*n_from)++;
        for (; k > 0 && vpt_eval_objective(&recs[from_rec[k - 1]]) > obj; k--) {
            from[k] = from[k - 1];
            from_rec[k] = from_rec[k - 1];
        }
        from[k] = c[i];
        from_rec[k] = i;
    }
    if (append_records(out, recs, m, s, t)) return -1;
    return vpt_eval_pool_drain(pool);
}

/* The estimator stage (tuner/estimators.h): a quarter of the budget
 * (FIRST_SHARE) searching with the first estimator of the list (the
 * thesis' global majorant, f32, in "all"), the estimators screened on that
 * search's best (vpt_estimators_screen); then, when the screening's
 * contenders (vpt_estimators_contenders) span several majorants, a race:
 * each rival (vpt_estimators_rivals: the fastest contender of each
 * majorant) makes one descent from the first search's best, each at most
 * 1 / (rivals + 1) of what is left; the rest searches with the rival whose
 * descent ended fastest, from that descent's best as well as from the
 * search's own starts; with one majorant among the contenders, all of it searches with
 * the screening's fastest, from the first search's best and the starts.
 * Before the race, the other regeneration families are measured with the
 * screening's fastest (screen_families); when one is faster than the first
 * search's best, the race gains a rival, the screening's fastest again,
 * descending from that family's config (in the last majorant rival's place
 * when the race already has `rivals`), so that the first search's family
 * does not decide every rival's schedule; with rivals 1 there is no race
 * and no family is measured.
 * Last, the contenders are screened again on the search's best. All
 * records are ranked together, so the winner is never slower than the
 * first search's. After each estimator screening the path order is
 * screened on the best (screen_paths) and the searches after it run with
 * the faster one. Screenings are charged to the budget, and the finish
 * the budget covers (tuner/tune.h) is set aside from what each stage may
 * spend. Why the race: a screening on one schedule ranks the majorants for
 * that schedule, and the
 * schedules that pay differ by majorant; bound to the screening's winner,
 * the second search never visits the other majorants' best schedules
 * (docs/decisions/estimator-rivals.md). */
/* What the last screening's reserve left, once the finish predicted now is
 * set aside, when it is worth LEFTOVER_EVALS evaluations at what the
 * tune's evaluations cost on average: one more search from the best,
 * with its estimator, path order and transmittance, until the budget ends.
 * Why: the reserve is priced at the first screening's cost per contender,
 * whose compiles were cold and whose schedule was the first search's, so
 * the last screening often takes a fraction of it
 * (docs/decisions/leftover-descent.md); a config the tune took before
 * costs nothing (VptSearchOptions.paid), so the search walks back to
 * where the tune stood for free. */
enum { LEFTOVER_EVALS = 8 };

static int leftover_descent(Tune *tn, const VptSearchOptions *stage, VptSearchResult *out, double budget_s,
                            size_t budget_n)
{
    if (budget_s <= 0 || out->evaluated == 0 || !out->found) return 0;
    const double per_s = out->seconds / (double)out->evaluated;
    const double left_s = budget_s - out->seconds - finish_s(tn);
    if (left_s < LEFTOVER_EVALS * per_s) return 0;
    if (budget_n && out->n_evals + LEFTOVER_EVALS > budget_n) return 0;
    VptSearchOptions so = *stage;
    VptConfig from = out->best.config;
    so.majorant = from.majorant;
    so.density = from.density;
    so.paths = from.paths;
    so.transmittance = from.transmittance;
    so.max_seconds = left_s;
    so.max_evals = budget_n ? budget_n - out->n_evals : 0;
    so.no_prior = 1;
    so.starts = &from;
    so.n_starts = 1;
    double obj;
    if (search_appended(tn, &so, out, &from, &obj)) return -1;
    if (tn->o->progress)
        fprintf(tn->o->progress, "[tune] %.1f s the last screening left: a search from the best ended at %.4f ms\n",
                left_s, obj);
    return 0;
}

static int estimator_stage(Tune *tn, const VptSearchOptions *base, VptEvalPool *pool, VptSearchResult *out)
{
    const VptTuneOptions *o = tn->o;
    VptSearchOptions so = *base;
    const double budget_s = so.max_seconds;
    const size_t budget_n = so.max_evals;
    if (budget_s > 0) so.max_seconds = budget_s / FIRST_SHARE;
    if (budget_n) so.max_evals = budget_n / FIRST_SHARE > 0 ? budget_n / FIRST_SHARE : 1;
    so.majorant = o->estimators[0].majorant;
    so.density = o->estimators[0].density;
    int rc = vpt_search_run(o->space, o->evaluate, o->evaluate_ctx, o->cache, &so, out);
    if (rc || !out->found) return rc;
    const size_t n_first = out->n_evals;
    /* nothing left for the screening once the finish is set aside: the
     * stage ends with the first search's records */
    const double screening_s = screening_seconds(tn, out);
    if (budget_s > 0 && screening_s <= 0) {
        out->stop = VPT_STOP_BUDGET;
        return 0;
    }
    VptEvalRecord *screened = NULL;
    size_t n_screened = 0;
    double screen_s = 0;
    VptEstimator e = o->estimators[0];
    const VptConfig base_config = screening_base(out, n_first);
    if (vpt_estimators_screen(&base_config, o->estimators, o->n_estimators, pool, &screened, &n_screened,
                              &screen_s, &e, screening_s, screening_deadline(tn), next_cost_s(tn),
                              finish_next_s(tn)) ||
        append_records(out, screened, n_screened, screen_s, tn)) {
        free(screened);
        return -1;
    }
    /* the contenders, screened again on the last search's best */
    VptEstimator contenders[VPT_ESTIMATORS_MAX];
    double contenders_s = 0;
    const size_t n_contenders = vpt_estimators_contenders(screened, n_screened, VPT_ESTIMATORS_CONTENDER_MARGIN,
                                                          contenders, &contenders_s);
    free(screened);
    screened = NULL;
    /* the rivals, the screening's choice first */
    VptEstimator rivals[VPT_ESTIMATORS_MAX + 1] = {e};
    size_t n_rivals = 1;
    {
        VptEstimator r[VPT_ESTIMATORS_MAX];
        const size_t max = o->rivals > 1 ? (size_t)o->rivals : 1;
        const size_t n = vpt_estimators_rivals(contenders, n_contenders, VPT_ESTIMATORS_MAX, r);
        for (size_t i = 0; i < n && n_rivals < max; i++)
            if (r[i].majorant != e.majorant) rivals[n_rivals++] = r[i];
    }
    VptPathOrder paths = so.paths;
    VptTransmittance tr = so.transmittance;
    const double before_paths_s = screen_s;
    if (screen_paths(tn, pool, out, &screen_s, &paths, 1) || screen_transmittance(tn, pool, out, &screen_s, &tr, 1))
        return -1;
    const double paths_s = screen_s - before_paths_s;
    n_screened = 0;
    if (o->progress)
        fprintf(o->progress,
                "[tune] estimators screened on the first search's best: %s:%s is the fastest; paths=%s%s%s; "
                "%zu contenders within %.2fx, %zu majorant%s among them\n",
                vpt_majorant_name(e.majorant), vpt_density_name(e.density), vpt_paths_name(paths),
                tr != VPT_TRANSMITTANCE_NONE ? "; transmittance=" : "",
                tr != VPT_TRANSMITTANCE_NONE ? vpt_transmittance_name(tr) : "", n_contenders,
                VPT_ESTIMATORS_CONTENDER_MARGIN, n_rivals, n_rivals == 1 ? "" : "s");
    /* what the searches may spend: what is left of the budget once the last
     * screening (the contenders, the winner's grid neighbours when a grid
     * contends, and the path order, at what they cost the first time) and
     * the finish predicted now are set aside; while they run, over_budget
     * holds the screening's seconds beside the finish as it grows */
    int grid_contends = 0;
    for (size_t i = 0; i < n_contenders; i++) grid_contends |= contenders[i].majorant > 0;
    const size_t n_reserved = n_contenders + (grid_contends ? 2 : 0);
    const double per_contender_s = n_contenders ? contenders_s / (double)n_contenders : 0;
    const double reserve_s = per_contender_s * (double)n_reserved / vpt_eval_pool_gpus(pool) + paths_s;
    const size_t reserve_n = n_reserved + (tr != VPT_TRANSMITTANCE_NONE ? 3 : 1);
    double left_s = budget_s - out->seconds - reserve_s - finish_s(tn);
    if (budget_s > 0 && left_s <= 0) return 0;
    if (budget_n && out->n_evals + reserve_n >= budget_n) return 0;
    /* the rivals' starts: the first search's best; and when another
     * regeneration family is faster with the screening's choice
     * (screen_families), one rival more, the screening's choice from that
     * family's config, in the last majorant's place when the race is full */
    const VptConfig first_best = out->best.config;
    VptConfig rival_from[VPT_ESTIMATORS_MAX + 1];
    for (size_t i = 0; i < n_rivals; i++) rival_from[i] = first_best;
    if (o->rivals > 1) {
        VptConfig fam[VPT_REGEN_DEVICE + 1];
        size_t n_fam = 0;
        const size_t before = out->n_evals;
        if (screen_families(out->evals, n_first, first_best, vpt_eval_objective(&out->best), pool, out,
                            budget_s > 0 ? budget_s - reserve_s - finish_s(tn) : 0, budget_n ? budget_n - reserve_n : 0,
                            screening_deadline(tn), tn, fam, &n_fam))
            return -1;
        /* each faster family a rival after the first, in the last majorants'
         * places when the race is full */
        if (n_fam > (size_t)o->rivals - 1) n_fam = (size_t)o->rivals - 1;
        for (size_t j = 0; j < n_fam; j++) {
            if (n_rivals >= (size_t)o->rivals) n_rivals = (size_t)o->rivals - 1;
            for (size_t i = n_rivals; i > 1 + j; i--) {
                rivals[i] = rivals[i - 1];
                rival_from[i] = rival_from[i - 1];
            }
            rivals[1 + j] = e;
            rival_from[1 + j] = fam[j];
            n_rivals++;
        }
        if (o->progress && out->n_evals > before) {
            fprintf(o->progress, "[tune] regeneration families measured with %s:%s: %zu other, %s the fastest%s",
                    vpt_majorant_name(e.majorant), vpt_density_name(e.density), out->n_evals - before,
                    vpt_config_schedule_name(n_fam ? &fam[0] : &first_best),
                    n_fam ? ", a rival from there" : " (the first search's)");
            for (size_t j = 1; j < n_fam; j++)
                fprintf(o->progress, " and from %s (within %.2fx)", vpt_config_schedule_name(&fam[j]), FAMILY_TIE);
            fputc('\n', o->progress);
        }
        left_s = budget_s - out->seconds - reserve_s - finish_s(tn);
        if (budget_s > 0 && left_s <= 0) return 0;
        if (budget_n && out->n_evals + reserve_n >= budget_n) return 0;
    }
    tn->held_s = reserve_s;
    so.max_seconds = budget_s > 0 ? left_s : 0;
    so.max_evals = budget_n ? budget_n - out->n_evals - reserve_n : 0;
    so.paths = paths;
    so.transmittance = tr;
    VptConfig from = first_best;
    if (n_rivals > 1) {
        /* the race: one descent per rival from its start (the first
         * search's best, or the faster family's: its own start alone, no
         * prior, no transfer starts), each at most 1 / (rivals + 1) of what
         * is left; a descent's neighbourhood is announced whole, so several
         * GPUs measure it side by side */
        VptSearchOptions t = so;
        if (so.max_seconds > 0) t.max_seconds = so.max_seconds / (double)(n_rivals + 1);
        if (so.max_evals) t.max_evals = so.max_evals / (n_rivals + 1) > 0 ? so.max_evals / (n_rivals + 1) : 1;
        t.batch = 1;
        t.max_descents = 1;
        t.no_prior = 1;
        t.n_starts = 1;
        double won = INFINITY;
        size_t winner = 0;
        for (size_t i = 0; i < n_rivals; i++) {
            t.majorant = rivals[i].majorant;
            t.density = rivals[i].density;
            t.starts = &rival_from[i];
            VptConfig b;
            double obj;
            if ((rc = search_appended(tn, &t, out, &b, &obj))) return rc;
            if (o->progress)
                fprintf(o->progress, "[tune] rival %s:%s%s%s descended to %.4f ms\n", vpt_majorant_name(rivals[i].majorant),
                        vpt_density_name(rivals[i].density), rival_from[i].regen != first_best.regen ? " from " : "",
                        rival_from[i].regen != first_best.regen ? vpt_config_schedule_name(&rival_from[i]) : "", obj);
            if (obj < won) {
                won = obj;
                winner = i;
                from = b;
            }
        }
        e = rivals[winner];
        left_s = budget_s - out->seconds - reserve_s - finish_s(tn);
        if ((budget_s > 0 && left_s <= 0) || (budget_n && out->n_evals + reserve_n >= budget_n)) {
            /* the budget ended the stage, not the last descent's "search complete" */
            if (out->stop == VPT_STOP_DONE) out->stop = VPT_STOP_BUDGET;
            goto last_screening;
        }
        so.max_seconds = budget_s > 0 ? left_s : 0;
        so.max_evals = budget_n ? budget_n - out->n_evals - reserve_n : 0;
    }
    so.majorant = e.majorant;
    so.density = e.density;
    {
        /* the best so far joins the starts, first so it is never left out
         * of VPT_SEARCH_MAX_STARTS */
        VptConfig starts[VPT_SEARCH_MAX_STARTS];
        starts[0] = from;
        size_t n_starts = 1;
        for (size_t i = 0; base->starts && i < base->n_starts && n_starts < VPT_SEARCH_MAX_STARTS; i++)
            starts[n_starts++] = base->starts[i];
        so.starts = starts;
        so.n_starts = n_starts;
        double obj;
        if ((rc = search_appended(tn, &so, out, &from, &obj))) return rc;
        if (!isfinite(obj)) return 0;
    }
last_screening:
    /* the budget set it aside (reserve_s), on the charged clock: it runs
     * past a wall deadline, as the finalists do */
    tn->held_s = 0;
    screen_s = 0;
    const VptConfig last_best = out->best.config;
    /* the winner's grid neighbours, after the contenders */
    const VptEstimator at = vpt_estimator_of(&last_best);
    const size_t n_last = vpt_estimators_add_cell_neighbours(&at, o->estimators, o->n_estimators, contenders, n_contenders);
    if (vpt_estimators_screen(&last_best, contenders, n_last, pool, &screened, &n_screened, &screen_s, &e,
                              budget_s > 0 ? fmax(screening_seconds(tn, out), reserve_s) : 0, 0, next_cost_s(tn),
                              finish_next_s(tn)) ||
        append_records(out, screened, n_screened, screen_s, tn)) {
        free(screened);
        return -1;
    }
    free(screened);
    screen_s = 0;
    if (screen_paths(tn, pool, out, &screen_s, &paths, 0) || screen_transmittance(tn, pool, out, &screen_s, &tr, 0))
        return -1;
    return leftover_descent(tn, &so, out, budget_s, budget_n);
}

/* The finish vpt_tune_run's caller asks for (tuner/finish.h): the finalists'
 * rounds when it re-measures them, and its references. */
static VptFinishPlan finish_plan(const VptTuneOptions *o, size_t top_k)
{
    VptFinishPlan p;
    memset(&p, 0, sizeof p);
    p.top_k = top_k;
    p.rounds = o->remeasure ? o->remeasure_rounds : 0;
    for (size_t i = 0; o->references && i < o->n_references && i < VPT_FINISH_MAX_REFS; i++) {
        p.refs[i] = o->references[i];
        p.ref_compiled[i] = o->reference_compiled ? o->reference_compiled[i] : 0;
        p.n_refs++;
    }
    return p;
}

/* The report's line on the budget: the seconds the search charged and the
 * finish set aside, and by how much the two together pass a time budget
 * (its last evaluation's overrun, or a budget smaller than the finish);
 * and, when the finish took the larger share, what leaves the search more. */
static void print_budget(FILE *f, const VptFinishPlan *plan, double budget_s, double charged_s,
                         const VptFinishPrediction *p)
{
    char parts[256];
    char fit[96] = "";
    if (p->capped)
        snprintf(fit, sizeof fit, " (of %zu: the finish gets at most %.0f%% of the budget)", plan->top_k,
                 100.0 * VPT_FINISH_SHARE);
    snprintf(parts, sizeof parts, "%zu finalist%s%s x %d round%s: %.1f s; %zu reference%s: %.1f s", p->n_finalists,
             p->n_finalists == 1 ? "" : "s", fit, plan->rounds, plan->rounds == 1 ? "" : "s", p->finalists_s,
             p->n_refs, p->n_refs == 1 ? "" : "s", p->refs_s);
    if (budget_s <= 0) {
        fprintf(f, "finish predicted %.1f s (%s)\n", p->total_s, parts);
        return;
    }
    fprintf(f, "budget %g s: %.1f s charged to the search, %.1f s set aside for the finish (%s)", budget_s, charged_s,
            p->total_s, parts);
    const double over = charged_s + p->total_s - budget_s;
    if (over >= 0.05) fprintf(f, ", %.1f s past the budget", over);
    fputc('\n', f);
    if (p->total_s > charged_s)
        fprintf(f, "the finish takes more of the budget than the search: a longer budget, or fewer finalists, "
                   "leaves the search more\n");
}

int vpt_tune_run(const VptTuneOptions *o, VptTuneResult *out)
{
    memset(out, 0, sizeof *out);
    const double t0 = now_s();
    size_t k = o->top_k > 0 ? (size_t)o->top_k : 10, m;
    Tune tn = {
        .o = o,
        .pr = {.o = o, .tty = o->progress && isatty(fileno(o->progress)), .last_print = -1e9},
        .budget_s = o->search.max_seconds > 0 ? o->search.max_seconds : 0,
        .wall_deadline = o->search.wall_deadline > 0 ? o->search.wall_deadline : 0,
    };
    VptFinishPlan plan = finish_plan(o, k);
    if (tn.budget_s > 0) plan.max_s = VPT_FINISH_SHARE * tn.budget_s;
    if ((plan.rounds > 0 || plan.n_refs > 0) && !(tn.finish = vpt_finish_tracker_create(&plan))) return -1;
    VptSearchOptions so = o->search;
    so.progress = on_progress;
    so.progress_user = &tn;
    so.paid = paid;
    so.paid_user = &tn;
    so.schedule_best = schedule_best;
    so.schedule_best_user = &tn;
    if (tn.finish && (tn.budget_s > 0 || tn.wall_deadline > 0)) {
        so.over_budget = over_budget;
        so.over_budget_user = &tn;
    }
    int rc;
    VptSearchResult *s = &out->search;
    if (o->n_estimators > 0) {
        /* screenings go through the search's pool, or one like the search's own */
        VptEvalPool *direct = NULL, *pool = so.pool;
        if (!pool) pool = direct = vpt_eval_pool_direct(o->evaluate, o->evaluate_ctx, o->cache, NULL, NULL);
        rc = pool ? estimator_stage(&tn, &so, pool, s) : -1;
        vpt_eval_pool_destroy(direct);
    } else {
        rc = vpt_search_run(o->space, o->evaluate, o->evaluate_ctx, o->cache, &so, s);
    }
    const int predicted = tn.finish != NULL;
    if (predicted) vpt_finish_tracker_predict(tn.finish, &out->finish);
    vpt_finish_tracker_destroy(tn.finish);
    tn.finish = NULL;
    free(tn.paid.slot);
    if (rc == 0 && tn.paid_failed) rc = -1;
    out->search_wall_s = now_s() - t0;
    if (o->progress) {
        VptSearchProgress p = {
            .evals = s->n_evals,
            .seconds = s->seconds,
            .cached = s->cached,
            .last = s->n_evals ? &s->evals[s->n_evals - 1] : NULL,
            .best = s->found ? &s->best : NULL,
        };
        print_progress(&tn.pr, &p, 1);
        fprintf(o->progress, "[tune %s] stopped: %s\n", vpt_strategy_name(o->search.strategy),
                vpt_stop_reason_name(s->stop));
    }
    char saved[1024] = "";
    if (rc) snprintf(saved, sizeof saved, "%s", vpt_errmsg());

    out->top = best_ok(s->evals, s->n_evals, k, &m);
    if (!out->top) return -1;
    /* under a time budget, the finalists that fit the finish's share */
    if (rc == 0 && o->remeasure && plan.max_s > 0 && predicted && out->finish.n_finalists < m)
        m = out->finish.n_finalists > 0 ? out->finish.n_finalists : 1;
    out->n_top = m;
    if (rc == 0 && o->remeasure && m > 0) {
        VptConfig *cfgs = vpt_malloc(m * sizeof *cfgs);
        VptEvalRecord *again = vpt_malloc(m * sizeof *again);
        if (!cfgs || !again) {
            free(cfgs);
            free(again);
            return -1;
        }
        for (size_t i = 0; i < m; i++) {
            cfgs[i] = out->top[i].config;
            vpt_eval_record_init(&again[i], &cfgs[i], 1);
        }
        const double r0 = now_s();
        const int failed = o->remeasure(o->remeasure_ctx, cfgs, m, again);
        out->remeasure_wall_s = now_s() - r0;
        if (failed) {
            snprintf(saved, sizeof saved, "re-measuring the finalists: %s", vpt_errmsg());
            rc = -1;
        } else {
            for (size_t i = 0; i < m; i++) {
                again[i].config = cfgs[i];
                again[i].fidelity = 1;
            }
            size_t m2;
            VptEvalRecord *ranked = best_ok(again, m, m, &m2);
            if (!ranked) rc = -1;
            else {
                free(out->top);
                out->top = ranked;
                out->n_top = m2;
            }
        }
        free(cfgs);
        free(again);
    }
    if (out->n_top > 0) {
        out->have_winner = 1;
        out->winner = out->top[0];
    }
    if (o->report) {
        fprintf(o->report, "%s: %zu evaluations (%zu from the cache), %.1f s charged, %s\n",
                vpt_strategy_name(o->search.strategy), s->n_evals, s->cached, s->seconds,
                vpt_stop_reason_name(s->stop));
        if (plan.rounds > 0 || plan.n_refs > 0) print_budget(o->report, &plan, tn.budget_s, s->seconds, &out->finish);
        if (o->remeasure && rc == 0) fprintf(o->report, "finalists re-measured:\n");
        vpt_tune_print_top(o->report, out->top, out->n_top, (int)out->n_top);
    }
    if (rc) vpt_fail("%s", saved);
    return rc;
}

void vpt_tune_result_free(VptTuneResult *r)
{
    vpt_search_result_free(&r->search);
    free(r->top);
    memset(r, 0, sizeof *r);
}
