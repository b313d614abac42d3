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

int vpt_space_stats(const VptSpace *space, const VptReplay *replay, VptSpaceStats *out)
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
    out->mean_cost_s = cost / (double)n;
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
    memset(s, 0, sizeof *s);
}

int vpt_score_strategy(const VptSpace *space, VptReplay *replay, const VptSpaceStats *st,
                       const VptSearchOptions *base, int seeds, size_t budget_evals, VptScore *out)
{
    memset(out, 0, sizeof *out);
    if (seeds < 1) return vpt_fail("score: at least one seed is needed");
    size_t K = budget_evals ? budget_evals : vpt_score_cutoff_budget(st, 0.95);
    double T = (double)K * st->mean_cost_s;
    out->strategy = base->strategy;
    out->seeds = seeds;
    out->budget_evals = K;
    out->budget_seconds = T;
    out->optimum_ms = st->optimum;
    out->random_best_ms = vpt_random_expected_best(st, K);
    out->curve_evals = vpt_calloc(K, sizeof *out->curve_evals);
    out->curve_seconds = vpt_calloc(VPT_SCORE_TIME_POINTS, sizeof *out->curve_seconds);
    if (!out->curve_evals || !out->curve_seconds) {
        vpt_score_free(out);
        return -1;
    }
    for (int s = 0; s < seeds; s++) {
        for (int axis = 0; axis < 2; axis++) {
            VptSearchOptions o = *base;
            o.seed = base->seed + (uint64_t)s;
            o.max_evals = axis == 0 ? K : 0;
            o.max_seconds = axis == 0 ? 0 : T;
            o.progress = NULL;
            o.interrupt = NULL;
            vpt_replay_reset(replay);
            VptSearchResult r;
            if (vpt_search_run(space, vpt_replay_evaluate, replay, NULL, &o, &r)) {
                vpt_search_result_free(&r);
                vpt_score_free(out);
                vpt_error_prefix("score %s seed %llu", vpt_strategy_name(base->strategy),
                                 (unsigned long long)o.seed);
                return -1;
            }
            if (axis == 0) {
                for (size_t k = 1; k <= K; k++)
                    out->curve_evals[k - 1] += finite_or(vpt_search_best_at_evals(&r, k), st->no_result);
                double best = finite_or(vpt_search_best_at_evals(&r, K), st->no_result);
                out->found_optimum += best <= st->optimum;
            } else if (T > 0) {
                for (int j = 1; j <= VPT_SCORE_TIME_POINTS; j++) {
                    double t = T * j / VPT_SCORE_TIME_POINTS;
                    out->curve_seconds[j - 1] += finite_or(vpt_search_best_at_seconds(&r, t), st->no_result);
                }
            }
            vpt_search_result_free(&r);
        }
    }
    vpt_replay_reset(replay);
    double sum = 0;
    for (size_t k = 1; k <= K; k++) {
        out->curve_evals[k - 1] /= seeds;
        sum += standardized(vpt_random_expected_best(st, k), out->curve_evals[k - 1], st->optimum);
    }
    out->score_evals = sum / (double)K;
    out->mean_best_ms = out->curve_evals[K - 1];
    out->found_optimum /= seeds;
    sum = 0;
    for (int j = 1; j <= VPT_SCORE_TIME_POINTS; j++) {
        out->curve_seconds[j - 1] /= seeds;
        double t = T * j / VPT_SCORE_TIME_POINTS;
        size_t k = st->mean_cost_s > 0 ? (size_t)llround(t / st->mean_cost_s) : K;
        if (k < 1) k = 1;
        sum += standardized(vpt_random_expected_best(st, k), out->curve_seconds[j - 1], st->optimum);
    }
    out->score_seconds = T > 0 ? sum / VPT_SCORE_TIME_POINTS : 0;
    return 0;
}
