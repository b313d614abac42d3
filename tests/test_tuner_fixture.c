/* Strategy quality on a real recorded space: every strategy must beat random
 * search on an exhaustive GPU run replayed from
 * tests/fixtures/tuner/<scene>_exhaustive.jsonl (see the README there),
 * scored after Willemsen et al. (tuner/score.h), and the default strategy
 * must meet issue 4's target. Skips until such a recording is committed.
 *
 * 1000 seeds (about a second per scene): random search scores 0 only in
 * expectation, and at 20 or even 100 seeds its own score on these spaces is
 * +0.1 to +0.25, which would let a strategy no better than random pass on
 * lucky seeds. */
#include "tests/harness/test.h"
#include "tests/test_tools.h"

#include "base/error.h"
#include "tuner/score.h"

#include <glob.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FIXTURE_GLOB "tests/fixtures/tuner/*_exhaustive.jsonl"
#define NO_FIXTURE "no recorded exhaustive run in tests/fixtures/tuner"
#define SEEDS 1000

typedef struct {
    VptReplay *replay;
    VptSpace *space;
    VptSpaceStats stats;
} Fixture;

static int open_fixture(const char *path, Fixture *f)
{
    memset(f, 0, sizeof *f);
    f->replay = vpt_replay_open(path);
    if (!f->replay) return -1;
    size_t rejected = 0;
    f->space = vpt_replay_space(f->replay, &rejected);
    if (!f->space) return -1;
    if (rejected) vpt_test_log("%s: %zu recorded configs fail vpt_config_check, left out", path, rejected);
    return vpt_space_stats(f->space, f->replay, &f->stats);
}

static void close_fixture(Fixture *f)
{
    vpt_space_stats_free(&f->stats);
    vpt_space_destroy(f->space);
    vpt_replay_destroy(f->replay);
}

/* Runs body on every fixture; skips when there is none. */
#define FOR_EACH_FIXTURE(fx, path)                                                       \
    glob_t g_;                                                                           \
    if (glob(FIXTURE_GLOB, 0, NULL, &g_) != 0 || g_.gl_pathc == 0) SKIP(NO_FIXTURE);      \
    for (size_t gi_ = 0; gi_ < g_.gl_pathc; gi_++)                                       \
        for (const char *path = g_.gl_pathv[gi_]; path; path = NULL)                     \
            for (Fixture fx, *once_ = &fx; once_; close_fixture(&fx), once_ = NULL)      \
                if (open_fixture(path, &fx) != 0) {                                      \
                    vpt_test_fail_at(__FILE__, __LINE__, "%s: %s", path, vpt_errmsg());  \
                } else

TEST_TIMEOUT(tuner_fixture_exhaustive_finds_the_recorded_optimum, 300)
{
    FOR_EACH_FIXTURE(fx, path)
    {
        VptSearchOptions o;
        vpt_search_options_init(&o);
        o.strategy = VPT_STRATEGY_EXHAUSTIVE;
        VptSearchResult r;
        REQUIRE_MSG(vpt_search_run(fx.space, vpt_replay_evaluate, fx.replay, NULL, &o, &r) == 0, "%s", vpt_errmsg());
        CHECK_EQ_INT(r.n_evals, vpt_space_size(fx.space));
        CHECK(r.stop == VPT_STOP_DONE);
        CHECK(r.found && r.best.time_ms == fx.stats.optimum);
        vpt_test_log("%s: %zu configs, %zu ok, optimum %.4f ms (%s), median %.4f ms, exhaustive search %.1f s "
                     "simulated (%.1f s serial)",
                     path, fx.stats.n, fx.stats.n_ok, fx.stats.optimum, vpt_config_schedule_name(&r.best.config),
                     fx.stats.median, fx.stats.exhaustive_s, fx.stats.serial_s);
        vpt_search_result_free(&r);
    }
    globfree(&g_);
}

TEST_TIMEOUT(tuner_fixture_strategies_beat_random_search, 600)
{
    FOR_EACH_FIXTURE(fx, path)
    {
        size_t K = vpt_score_cutoff_budget(&fx.stats, 0.95);
        vpt_test_log("%s: budget %zu evaluations (random search 95%% of the way from median to optimum)", path, K);
        for (int k = VPT_STRATEGY_RANDOM; k < VPT_STRATEGY_COUNT; k++) {
            VptSearchOptions o;
            vpt_search_options_init(&o);
            o.strategy = (VptStrategy)k;
            VptScore sc;
            REQUIRE_MSG(vpt_score_strategy(fx.space, fx.replay, &fx.stats, &o, SEEDS, K, &sc) == 0, "%s",
                        vpt_errmsg());
            vpt_test_log("  %-10s score(evals) %+.3f score(time) %+.3f mean best %.4f ms (random %.4f, optimum %.4f), "
                         "optimum found by %.0f%% of seeds",
                         vpt_strategy_name(k), sc.score_evals, sc.score_seconds, sc.mean_best_ms, sc.random_best_ms,
                         sc.optimum_ms, 100 * sc.found_optimum);
            if (k == VPT_STRATEGY_RANDOM) {
                /* the calculated baseline describes the strategy */
                CHECK_MSG(fabs(sc.score_evals) < 0.1 && fabs(sc.score_seconds) < 0.1,
                          "%s: random search scores %+.3f / %+.3f against its own baseline", path, sc.score_evals,
                          sc.score_seconds);
            } else if (k == VPT_STRATEGY_HALVING) {
                /* its cheap screenings count as evaluations: compared on time */
                CHECK_MSG(sc.score_seconds > 0, "%s: halving does not beat random search on time (%+.3f)", path,
                          sc.score_seconds);
            } else {
                CHECK_MSG(sc.score_evals > 0 && sc.score_seconds > 0,
                          "%s: %s does not beat random search (score %+.3f by evaluations, %+.3f by time)", path,
                          vpt_strategy_name(k), sc.score_evals, sc.score_seconds);
            }
            vpt_score_free(&sc);
        }
    }
    globfree(&g_);
}

/* Issue 4: the default strategy (bin/tune's DEFAULT_STRATEGY, local search)
 * reaches at least 98% of the optimum's throughput within 5% of the
 * exhaustive search's wall time, on every scene, for every seed. */
TEST_TIMEOUT(tuner_fixture_default_meets_the_target, 300)
{
    FOR_EACH_FIXTURE(fx, path)
    {
        VptSearchOptions o;
        vpt_search_options_init(&o);
        o.strategy = VPT_STRATEGY_LOCAL;
        VptScore sc;
        REQUIRE_MSG(vpt_score_strategy(fx.space, fx.replay, &fx.stats, &o, SEEDS, 0, &sc) == 0, "%s", vpt_errmsg());
        vpt_test_log("%s: within %.1f s (5%% of %.1f s) %s reached %.0f%% of the optimum's throughput on average, "
                     "98%% on %.0f%% of %d seeds",
                     path, sc.target_seconds, fx.stats.exhaustive_s, vpt_strategy_name(o.strategy),
                     100 * sc.target_rel_throughput, 100 * sc.reached_target, SEEDS);
        CHECK_MSG(sc.reached_target == 1.0, "%s: the default reaches the target on %.0f%% of the seeds only", path,
                  100 * sc.reached_target);
        vpt_score_free(&sc);
    }
    globfree(&g_);
}

/* ---- the default tune on simulated lanes --------------------------------- */

/* Evaluations of `tune --replay FIXTURE --budget 90 --seed S --gpus LIST`
 * (the default strategy and budget), or -1. */
static int replay_evaluations(const char *fixture, int seed, const char *gpus)
{
    char cmd[1024];
    static char out[1 << 16];
    snprintf(cmd, sizeof cmd, "%s --replay %s --budget 90 --seed %d --quiet --no-save --gpus %s",
             vpt_test_tool("tune"), fixture, seed, gpus);
    if (vpt_test_sh(cmd, out, sizeof out) != 0) {
        vpt_test_log("%s\n%s", cmd, out);
        return -1;
    }
    const char *p = strstr(out, "local: ");
    return p ? atoi(p + 7) : -1;
}

/* Four simulated GPUs must buy the default 90 s tune at least LANES_MIN_GAIN
 * times the evaluations of one on a recorded 2,001-config space, the wall
 * time charged as the GPUs would spend it side by side, idle waits included
 * (tuner/search.h). Issue 31 asks 0.9 of linear on four lanes; what the
 * default reaches with the descents taking records in completion order is
 * in results/cpu-amd-epyc-2c/archive/lanes_scaling/lanes_scaling.jsonl
 * (docs/tuner-search.md), and the bound sits below the target so that it
 * holds the gain without false alarms: means over three seeds, because
 * lanes are threads and a run's count varies with their timing; in that
 * file the least mean over any three consecutive seeds is above the
 * bound by more than a fifth, and the least single seed is below it, so a
 * false alarm needs three seeds together lower than any window of the 20
 * (docs/decisions/search-completion-order.md). */
#define LANES_FIXTURE "tests/fixtures/tuner/sampled/manix_sampled.jsonl.gz"
#define LANES_MIN_GAIN 3.0

TEST_TIMEOUT(tuner_fixture_default_grows_with_simulated_lanes, 300)
{
    if (access(LANES_FIXTURE, R_OK) != 0) SKIP("%s not found: run from the repository root", LANES_FIXTURE);
    double one = 0, four = 0;
    for (int seed = 1; seed <= 3; seed++) {
        int a = replay_evaluations(LANES_FIXTURE, seed, "0"), b = replay_evaluations(LANES_FIXTURE, seed, "0,1,2,3");
        REQUIRE_MSG(a > 0 && b > 0, "seed %d: tune --replay failed (see the log)", seed);
        vpt_test_log("seed %d: %d evaluations on one simulated GPU, %d on four", seed, a, b);
        one += a;
        four += b;
    }
    CHECK_MSG(four >= LANES_MIN_GAIN * one, "four simulated GPUs: %.0f evaluations against %.0f on one (%.2fx)",
              four / 3, one / 3, four / one);
}
