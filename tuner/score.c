/* Strategy scores against a calculated random-search baseline. */
#include "tuner/score.h"

#include "base/error.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Simulated wall time of exhaustive search with its hints, from a fresh
 * replay; the replay is left reset. */
static int exhaustive_seconds(const VptSpace *space, VptReplay *replay, double *out)
{
    VptSearchOptions o;
    vpt_search_options_init(&o);
    o.strategy = VPT_STRATEGY_EXHAUSTIVE;
    o.prefetch = vpt_replay_prefetch;
    o.prefetch_user = replay;
    vpt_replay_reset(replay);
    VptSearchResult r;
    int rc = vpt_search_run(space, vpt_replay_evaluate, replay, NULL, &o, &r);
    *out = r.seconds;
    vpt_search_result_free(&r);
    vpt_replay_reset(replay);
    if (rc) vpt_error_prefix("exhaustive search of the recorded space");
    return rc;
}

int vpt_space_stats(const VptSpace *space, VptReplay *replay, VptSpaceStats *out)
{
    memset(out, 0, sizeof *out);
    size_t n = vpt_space_size(space);
    out->sorted = vpt_malloc((n ? n : 1) * sizeof *out->sorted);
    if (!out->sorted) return -1;
    double cost = 0, sum_ok = 0;
    for (size_t i = 0; i < n; i++) {
        const VptEvalRecord *r = vpt_replay_find(replay, vpt_space_point(space, i));
        if (!r) {
            char text[VPT_CONFIG_STR_MAX];
            vpt_config_format(vpt_space_point(space, i), text, sizeof text);
            vpt_space_stats_free(out);
            return vpt_fail("space member %s is not in the recording", text);
        }
        out->sorted[i] = vpt_eval_objective(r);
        if (isfinite(out->sorted[i])) {
            out->n_ok++;
            sum_ok += out->sorted[i];
        }
        cost += (isfinite(r->compile_s) ? r->compile_s : 0) + (isfinite(r->measure_s) ? r->measure_s : 0);
    }
    out->serial_s = cost;
    if (out->n_ok == 0) {
        vpt_space_stats_free(out);
        return vpt_fail("no ok config in the recorded space");
    }
    qsort(out->sorted, n, sizeof *out->sorted, cmp_double);
    out->n = n;
    out->optimum = out->sorted[0];
    out->worst_ok = out->sorted[out->n_ok - 1];
    out->no_result = sum_ok / (double)out->n_ok;
    size_t h = out->n_ok / 2;
    out->median = out->n_ok % 2 ? out->sorted[h] : 0.5 * (out->sorted[h - 1] + out->sorted[h]);
    if (exhaustive_seconds(space, replay, &out->exhaustive_s)) {
        vpt_space_stats_free(out);
        return -1;
    }
    out->mean_cost_s = out->exhaustive_s / (double)n;
    return 0;
}

void vpt_space_stats_free(VptSpaceStats *st)
{
    free(st->sorted);
    memset(st, 0, sizeof *st);
}

double vpt_random_expected_best(const VptSpaceStats *st, size_t k)
{
    size_t n = st->n;
    if (k == 0) return st->no_result;
    if (k >= n) return st->optimum;
    /* P(the best drawn is the i-th smallest) = C(n-i, k-1) / C(n, k),
     * i = 1..n-k+1, by the ratio of successive terms. */
    double p = (double)k / (double)n, e = 0;
    for (size_t i = 1; i + k <= n + 1; i++) {
        /* failures sort last: reaching one means every draw failed */
        double v = isfinite(st->sorted[i - 1]) ? st->sorted[i - 1] : st->no_result;
        e += p * v;
        p *= (double)(n - i - k + 1) / (double)(n - i);
        if (p < 1e-300) break;
    }
    return e;
}

size_t vpt_score_cutoff_budget(const VptSpaceStats *st, double cutoff)
{
    double target = st->optimum + (1.0 - cutoff) * (st->median - st->optimum);
    size_t lo = 1, hi = st->n; /* b(n) = optimum <= target */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (vpt_random_expected_best(st, mid) <= target) hi = mid;
        else lo = mid + 1;
    }
    return lo;
}

static double standardized(double b, double f, double opt)
{
    if (b - opt <= 1e-12 * fabs(opt)) return f <= opt * (1 + 1e-12) ? 1.0 : 0.0;
    return (b - f) / (b - opt);
}

static double finite_or(double x, double fallback)
{
    return isfinite(x) ? x : fallback;
}

void vpt_score_free(VptScore *s)
{
    free(s->curve_evals);
    free(s->curve_seconds);
    free(s->baseline_seconds);
    memset(s, 0, sizeof *s);
}

/* One search on the recorded run from its start: *r is the caller's to free
 * on success; on failure nothing is left to free. */
static int replay_search(const VptSpace *space, VptReplay *replay, VptSearchOptions *o, VptSearchResult *r)
{
    o->prefetch = vpt_replay_prefetch;
    o->prefetch_user = replay;
    vpt_replay_reset(replay);
    if (vpt_search_run(space, vpt_replay_evaluate, replay, NULL, o, r) == 0) return 0;
    vpt_search_result_free(r);
    return -1;
}

/* The time axis' baseline (score.h) at T * j / VPT_SCORE_TIME_POINTS. */
static int time_baseline(const VptSpace *space, VptReplay *replay, const VptSpaceStats *st, double T, double *out)
{
    for (int j = 0; j < VPT_SCORE_TIME_POINTS; j++) out[j] = 0;
    for (int run = 0; run < VPT_SCORE_BASELINE_RUNS; run++) {
        VptSearchOptions o;
        vpt_search_options_init(&o);
        o.strategy = VPT_STRATEGY_RANDOM;
        o.seed = VPT_SCORE_BASELINE_SEED + (uint64_t)run;
        o.max_seconds = T;
        VptSearchResult r;
        if (replay_search(space, replay, &o, &r)) {
            vpt_error_prefix("score: random search for the time baseline");
            return -1;
        }
        for (int j = 1; j <= VPT_SCORE_TIME_POINTS; j++)
            out[j - 1] += finite_or(vpt_search_best_at_seconds(&r, T * j / VPT_SCORE_TIME_POINTS), st->no_result);
        vpt_search_result_free(&r);
    }
    vpt_replay_reset(replay);
    for (int j = 0; j < VPT_SCORE_TIME_POINTS; j++) out[j] /= VPT_SCORE_BASELINE_RUNS;
    return 0;
}

/* Produces run `i` (0..runs-1) of what is scored, with the given limits
 * (0: none), on the reset replay; *r is the caller's to free on success. */
typedef int (*RunFn)(void *ctx, int i, size_t max_evals, double max_seconds, VptSearchResult *r);

static int score_runs(const VptSpace *space, VptReplay *replay, const VptSpaceStats *st, RunFn run, void *ctx,
                      int runs, size_t budget_evals, VptScore *out)
{
    memset(out, 0, sizeof *out);
    if (runs < 1) return vpt_fail("score: at least one seed is needed");
    size_t K = budget_evals ? budget_evals : vpt_score_cutoff_budget(st, 0.95);
    double T = (double)K * st->mean_cost_s;
    double target_s = VPT_SCORE_TARGET_TIME * st->exhaustive_s;
    double target_ms = st->optimum / VPT_SCORE_TARGET_QUALITY;
    out->seeds = runs;
    out->budget_evals = K;
    out->budget_seconds = T;
    out->target_seconds = target_s;
    out->default_seconds = VPT_SCORE_DEFAULT_BUDGET_S;
    out->optimum_ms = st->optimum;
    out->random_best_ms = vpt_random_expected_best(st, K);
    out->curve_evals = vpt_calloc(K, sizeof *out->curve_evals);
    out->curve_seconds = vpt_calloc(VPT_SCORE_TIME_POINTS, sizeof *out->curve_seconds);
    out->baseline_seconds = vpt_calloc(VPT_SCORE_TIME_POINTS, sizeof *out->baseline_seconds);
    if (!out->curve_evals || !out->curve_seconds || !out->baseline_seconds ||
        (T > 0 && time_baseline(space, replay, st, T, out->baseline_seconds))) {
        vpt_score_free(out);
        return -1;
    }
    double *to_quality = vpt_malloc((size_t)runs * sizeof *to_quality);
    if (!to_quality) {
        vpt_score_free(out);
        return -1;
    }
    for (int s = 0; s < runs; s++) {
        /* axis 0: K evaluations; 1: T seconds (or the target time when
         * later); 2: the tune's default budget, VPT_SCORE_DEFAULT_BUDGET_S */
        for (int axis = 0; axis < 3; axis++) {
            VptSearchResult r;
            size_t max_evals = axis == 0 ? K : 0;
            double max_s = axis == 0 ? 0 : axis == 1 ? (T > target_s ? T : target_s) : VPT_SCORE_DEFAULT_BUDGET_S;
            vpt_replay_reset(replay);
            if (run(ctx, s, max_evals, max_s, &r)) {
                vpt_score_free(out);
                free(to_quality);
                return -1;
            }
            if (axis == 0) {
                for (size_t k = 1; k <= K; k++)
                    out->curve_evals[k - 1] += finite_or(vpt_search_best_at_evals(&r, k), st->no_result);
                double best = finite_or(vpt_search_best_at_evals(&r, K), st->no_result);
                out->found_optimum += best <= st->optimum;
            } else if (axis == 1) {
                if (T > 0)
                    for (int j = 1; j <= VPT_SCORE_TIME_POINTS; j++) {
                        double t = T * j / VPT_SCORE_TIME_POINTS;
                        out->curve_seconds[j - 1] += finite_or(vpt_search_best_at_seconds(&r, t), st->no_result);
                    }
                double b = vpt_search_best_at_seconds(&r, target_s);
                out->reached_target += b <= target_ms;
                to_quality[s] = INFINITY;
                for (size_t i = 0; i < r.n_evals && !isfinite(to_quality[s]); i++)
                    if (r.trace[i].best_ms <= target_ms) to_quality[s] = r.trace[i].seconds;
                out->target_rel_throughput += isfinite(b) ? st->optimum / b : 0;
            } else {
                double b = vpt_search_best_at_seconds(&r, VPT_SCORE_DEFAULT_BUDGET_S);
                out->within_at_default += b <= st->optimum * (1 + VPT_SCORE_DEFAULT_TOLERANCE);
                out->default_rel_throughput += isfinite(b) ? st->optimum / b : 0;
            }
            vpt_search_result_free(&r);
        }
    }
    vpt_replay_reset(replay);
    qsort(to_quality, (size_t)runs, sizeof *to_quality, cmp_double);
    out->median_to_quality = runs % 2 ? to_quality[runs / 2]
                                      : 0.5 * (to_quality[runs / 2 - 1] + to_quality[runs / 2]);
    free(to_quality);
    double sum = 0;
    for (size_t k = 1; k <= K; k++) {
        out->curve_evals[k - 1] /= runs;
        sum += standardized(vpt_random_expected_best(st, k), out->curve_evals[k - 1], st->optimum);
    }
    out->score_evals = sum / (double)K;
    out->mean_best_ms = out->curve_evals[K - 1];
    out->found_optimum /= runs;
    out->reached_target /= runs;
    out->target_rel_throughput /= runs;
    out->within_at_default /= runs;
    out->default_rel_throughput /= runs;
    /* The time axis' baseline is itself simulated (noisy), and late in the
     * window it comes close to the optimum, where a ratio per point divides
     * noise by almost nothing. So the time score is a ratio of areas: the
     * area the strategy gains over the baseline over the area between the
     * baseline and the optimum (0 = random search, 1 = the optimum from the
     * start, as on the evaluation axis). */
    double gain = 0, room = 0;
    for (int j = 1; j <= VPT_SCORE_TIME_POINTS; j++) {
        out->curve_seconds[j - 1] /= runs;
        gain += out->baseline_seconds[j - 1] - out->curve_seconds[j - 1];
        room += out->baseline_seconds[j - 1] - st->optimum;
    }
    out->score_seconds = T > 0 && room > 0 ? gain / room : 0;
    return 0;
}

typedef struct {
    const VptSpace *space;
    VptReplay *replay;
    const VptSearchOptions *base;
} StrategyRuns;

static int strategy_run(void *ctx, int i, size_t max_evals, double max_seconds, VptSearchResult *r)
{
    StrategyRuns *sr = ctx;
    VptSearchOptions o = *sr->base;
    o.seed = sr->base->seed + (uint64_t)i;
    o.max_evals = max_evals;
    o.max_seconds = max_seconds;
    o.progress = NULL;
    o.interrupt = NULL;
    if (replay_search(sr->space, sr->replay, &o, r) == 0) return 0;
    vpt_error_prefix("score %s seed %llu", vpt_strategy_name(sr->base->strategy), (unsigned long long)o.seed);
    return -1;
}

int vpt_score_strategy(const VptSpace *space, VptReplay *replay, const VptSpaceStats *st,
                       const VptSearchOptions *base, int seeds, size_t budget_evals, VptScore *out)
{
    StrategyRuns sr = {space, replay, base};
    int rc = score_runs(space, replay, st, strategy_run, &sr, seeds, budget_evals, out);
    out->strategy = base->strategy;
    return rc;
}

/* ---- recorded evaluation orders of another tuner ---------------------------- */

typedef struct {
    const VptSpace *space;
    VptReplay *replay;
    const VptConfig *const *runs;
    const size_t *lengths;
} SequenceRuns;

/* The order as a search result: each config's first occurrence counted, in
 * order, charged by the replay (no hints: compiled when evaluated), until a
 * limit is reached. */
static int sequence_run(void *ctx, int i, size_t max_evals, double max_seconds, VptSearchResult *r)
{
    SequenceRuns *sq = ctx;
    memset(r, 0, sizeof *r);
    size_t n = sq->lengths[i];
    r->evals = vpt_malloc((n ? n : 1) * sizeof *r->evals);
    r->trace = vpt_malloc((n ? n : 1) * sizeof *r->trace);
    unsigned char *seen = vpt_calloc(vpt_space_size(sq->space) ? vpt_space_size(sq->space) : 1, 1);
    if (!r->evals || !r->trace || !seen) {
        free(seen);
        vpt_search_result_free(r);
        return -1;
    }
    double best = INFINITY;
    r->stop = VPT_STOP_DONE;
    for (size_t k = 0; k < n; k++) {
        const VptConfig *c = &sq->runs[i][k];
        long m = vpt_space_index_of(sq->space, c);
        if (m < 0) {
            char text[VPT_CONFIG_STR_MAX];
            vpt_config_format(c, text, sizeof text);
            free(seen);
            vpt_search_result_free(r);
            return vpt_fail("run %d: config %s is not a member of the recorded space", i + 1, text);
        }
        if (seen[m]) continue;
        if ((max_evals && r->n_evals >= max_evals) || (max_seconds > 0 && r->seconds >= max_seconds)) {
            r->stop = VPT_STOP_BUDGET;
            break;
        }
        seen[m] = 1;
        VptEvalRecord rec;
        if (vpt_replay_evaluate(sq->replay, c, 1, &rec)) {
            free(seen);
            vpt_search_result_free(r);
            return -1;
        }
        r->seconds += rec.cost_s;
        double obj = vpt_eval_objective(&rec);
        if (obj < best) {
            best = obj;
            r->best = rec;
            r->found = 1;
        }
        r->evals[r->n_evals] = rec;
        r->trace[r->n_evals] = (VptTracePoint){r->n_evals + 1, r->seconds, best};
        r->n_evals++;
        r->evaluated++;
    }
    free(seen);
    return 0;
}

int vpt_score_sequences(const VptSpace *space, VptReplay *replay, const VptSpaceStats *st,
                        const VptConfig *const *runs, const size_t *lengths, int n_runs, size_t budget_evals,
                        VptScore *out)
{
    SequenceRuns sq = {space, replay, runs, lengths};
    return score_runs(space, replay, st, sequence_run, &sq, n_runs, budget_evals, out);
}
