/* Resuming an interrupted tune from its results cache: a kill at any point
 * loses and repeats nothing. Driven by the test double evaluator (the cache
 * and resume logic do not care what the times mean). */
#include "tests/harness/test.h"
#include "tests/test_tuner_double.h"

#include "base/error.h"
#include "base/file.h"
#include "tuner/cache.h"
#include "tuner/estimators.h"
#include "tuner/pool.h"
#include "tuner/search.h"
#include "tuner/tune.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static VptSearchOptions resume_opts(VptStrategy s)
{
    VptSearchOptions o;
    vpt_search_options_init(&o);
    o.strategy = s;
    o.seed = 99;
    o.max_evals = 12;
    o.ga_population = 4; /* so that 12 evaluations span generations */
    /* halving: 12 evaluations are 9 screenings and 3 promotions */
    return o;
}

/* One run on the cache at path; returns the search result (caller frees). */
static int run_on_cache(const VptSpace *s, const char *path, const VptSearchOptions *o, TdCtx *ctx,
                        VptSearchResult *r, size_t *kept)
{
    VptTuneProvenance prov = td_provenance();
    VptCache *c = vpt_cache_open(path, &prov, VPT_CACHE_NOSYNC);
    if (!c) return -1;
    if (kept) *kept = vpt_cache_count(c);
    int rc = vpt_search_run(s, td_evaluate, ctx, c, o, r);
    vpt_cache_close(c);
    return rc;
}

static int same_run(const VptSearchResult *a, const VptSearchResult *b)
{
    if (a->n_evals != b->n_evals || a->found != b->found || a->seconds != b->seconds) return 0;
    for (size_t i = 0; i < a->n_evals; i++)
        if (!vpt_config_equal(&a->evals[i].config, &b->evals[i].config) ||
            a->evals[i].fidelity != b->evals[i].fidelity || a->evals[i].status != b->evals[i].status ||
            vpt_eval_objective(&a->evals[i]) != vpt_eval_objective(&b->evals[i]) ||
            a->evals[i].cost_s != b->evals[i].cost_s ||
            a->trace[i].best_ms != b->trace[i].best_ms)
            return 0;
    return !a->found || vpt_config_equal(&a->best.config, &b->best.config);
}

/* The first n bytes of data as the file at path (no fsync: a scratch file). */
static int write_prefix(const char *path, const char *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    size_t w = fwrite(data, 1, n, f);
    return fclose(f) == 0 && w == n ? 0 : -1;
}

/* Truncates a finished run's cache at every byte offset, resumes the same
 * strategy and seed on it, and checks that the resumed run is the
 * uninterrupted one: same trajectory and winner, the evaluator called exactly
 * for the rows that were missing, and in the end the very same file. */
static void resume_at_every_offset(VptStrategy strategy, size_t step)
{
    /* coop off: random and exhaustive runs set up per-member state, and
     * thousands of resumes on the 4x larger space overran the time limit
     * under ASan; the resume logic does not depend on the space's size */
    VptSpace *s = vpt_space_create();
    REQUIRE(s);
    REQUIRE(vpt_space_restrict(s, "coop", "0") == 0);
    char full[600], cut[600];
    snprintf(full, sizeof full, "%s/full-%s.jsonl", vpt_test_tmpdir(), vpt_strategy_name(strategy));
    snprintf(cut, sizeof cut, "%s/cut.jsonl", vpt_test_tmpdir());
    VptSearchOptions o = resume_opts(strategy);
    TdCtx ctx = {0};
    VptSearchResult ref;
    REQUIRE_MSG(run_on_cache(s, full, &o, &ctx, &ref, NULL) == 0, "%s", vpt_errmsg());
    REQUIRE(ref.n_evals == 12);
    char *data;
    size_t size;
    REQUIRE(vpt_read_file(full, 1 << 22, &data, &size) == 0);
    int failures = 0;
    for (size_t k = 0; k <= size && failures < 5; k += (k + step <= size || k == size) ? step : size - k) {
        REQUIRE(write_prefix(cut, data, k) == 0);
        TdCtx c2 = {0};
        VptSearchResult r;
        size_t kept = 0;
        int rc = run_on_cache(s, cut, &o, &c2, &r, &kept);
        const char *why = NULL;
        if (rc != 0) why = vpt_errmsg();
        else if (!same_run(&ref, &r)) why = "another trajectory";
        else if ((size_t)c2.calls != ref.n_evals - kept || r.cached != kept || r.evaluated != (size_t)c2.calls)
            why = "evaluations lost or repeated";
        char *after = NULL;
        size_t after_size = 0;
        if (!why && (vpt_read_file(cut, 1 << 22, &after, &after_size) != 0 || after_size != size ||
                     memcmp(after, data, size) != 0))
            why = "another file";
        free(after);
        if (why) {
            failures++;
            vpt_test_fail_at(__FILE__, __LINE__, "%s: resume after a cut at byte %zu of %zu (%zu rows kept, "
                             "%ld evaluator calls): %s",
                             vpt_strategy_name(strategy), k, size, kept, c2.calls, why);
        }
        vpt_search_result_free(&r);
        if (k == size) break;
    }
    free(data);
    vpt_search_result_free(&ref);
    vpt_space_destroy(s);
}

/* Each sweep resumes a few thousand times, slow under ASan + UBSan on two
 * busy cores (make test SANITIZE=1): each strategy is a test of its own,
 * with a timeout that leaves room for the sanitizers. */
TEST_TIMEOUT(tuner_resume_every_byte_local, 300)
{
    resume_at_every_offset(VPT_STRATEGY_LOCAL, 1);
}

TEST_TIMEOUT(tuner_resume_every_byte_genetic, 300)
{
    resume_at_every_offset(VPT_STRATEGY_GENETIC, 1);
}

TEST_TIMEOUT(tuner_resume_every_byte_halving, 300)
{
    resume_at_every_offset(VPT_STRATEGY_HALVING, 1);
}

TEST_TIMEOUT(tuner_resume_every_byte_annealing, 300)
{
    resume_at_every_offset(VPT_STRATEGY_ANNEALING, 1);
}

TEST_TIMEOUT(tuner_resume_every_byte_random, 300)
{
    resume_at_every_offset(VPT_STRATEGY_RANDOM, 1);
}

TEST_TIMEOUT(tuner_resume_every_byte_exhaustive, 300)
{
    resume_at_every_offset(VPT_STRATEGY_EXHAUSTIVE, 1);
}

/* Resuming with fsync on (the default), at line boundaries and mid-row. */
TEST(tuner_resume_with_fsync)
{
    VptSpace *s = vpt_space_create();
    REQUIRE(s);
    char path[600];
    snprintf(path, sizeof path, "%s/sync.jsonl", vpt_test_tmpdir());
    VptSearchOptions o = resume_opts(VPT_STRATEGY_LOCAL);
    VptTuneProvenance prov = td_provenance();
    /* first session: a budget of 5, as if stopped by a job's time limit */
    o.max_evals = 5;
    VptCache *c = vpt_cache_open(path, &prov, 0);
    REQUIRE(c);
    TdCtx ctx = {0};
    VptSearchResult r;
    REQUIRE(vpt_search_run(s, td_evaluate, &ctx, c, &o, &r) == 0);
    vpt_cache_close(c);
    vpt_search_result_free(&r);
    CHECK_EQ_INT(ctx.calls, 5);
    /* second session: the full budget; the first 5 come from the cache */
    o.max_evals = 12;
    c = vpt_cache_open(path, &prov, 0);
    REQUIRE(c);
    TdCtx ctx2 = {0};
    REQUIRE(vpt_search_run(s, td_evaluate, &ctx2, c, &o, &r) == 0);
    CHECK_EQ_INT(ctx2.calls, 7);
    CHECK_EQ_INT(r.cached, 5);
    CHECK_EQ_INT(vpt_cache_count(c), 12);
    vpt_cache_close(c);
    /* the same as one uninterrupted session */
    char other[600];
    snprintf(other, sizeof other, "%s/one.jsonl", vpt_test_tmpdir());
    VptSearchResult ref;
    TdCtx ctx3 = {0};
    REQUIRE(run_on_cache(s, other, &o, &ctx3, &ref, NULL) == 0);
    CHECK(same_run(&ref, &r));
    vpt_search_result_free(&r);
    vpt_search_result_free(&ref);
    vpt_space_destroy(s);
}

/* A slow evaluator, for a real SIGKILL in the middle of a tune. */
static int slow_evaluate(void *ctx, const VptConfig *c, int fidelity, VptEvalRecord *out)
{
    struct timespec ts = {0, 2 * 1000 * 1000};
    nanosleep(&ts, NULL);
    return td_evaluate(ctx, c, fidelity, out);
}

TEST_TIMEOUT(tuner_resume_after_sigkill, 60)
{
    VptSpace *s = vpt_space_create();
    REQUIRE(s);
    char path[600], ref_path[600];
    snprintf(path, sizeof path, "%s/killed.jsonl", vpt_test_tmpdir());
    snprintf(ref_path, sizeof ref_path, "%s/ref.jsonl", vpt_test_tmpdir());
    VptSearchOptions o = resume_opts(VPT_STRATEGY_GENETIC);
    o.max_evals = 200;
    VptTuneProvenance prov = td_provenance();
    int killed_mid_run = 0;
    for (int attempt = 0; attempt < 5 && !killed_mid_run; attempt++) {
        unlink(path);
        pid_t pid = fork();
        REQUIRE(pid >= 0);
        if (pid == 0) {
            VptCache *c = vpt_cache_open(path, &prov, 0); /* fsync on */
            TdCtx ctx = {0};
            VptSearchResult r;
            if (!c || vpt_search_run(s, slow_evaluate, &ctx, c, &o, &r)) _exit(2);
            _exit(0);
        }
        /* kill it once some rows are on disk, at no particular byte */
        for (int i = 0; i < 5000; i++) {
            int64_t sz = vpt_file_size(path);
            if (sz > 4000 + 97 * attempt) break;
            struct timespec ts = {0, 200 * 1000};
            nanosleep(&ts, NULL);
        }
        kill(pid, SIGKILL);
        int status;
        waitpid(pid, &status, 0);
        killed_mid_run = WIFSIGNALED(status);
    }
    REQUIRE_MSG(killed_mid_run, "the child finished before it could be killed");
    VptCache *c = vpt_cache_open(path, &prov, 0);
    REQUIRE_MSG(c, "%s", vpt_errmsg());
    size_t kept = vpt_cache_count(c);
    CHECK(kept > 0 && kept < 200);
    TdCtx ctx = {0};
    VptSearchResult r;
    REQUIRE(vpt_search_run(s, td_evaluate, &ctx, c, &o, &r) == 0);
    CHECK_EQ_INT(vpt_cache_count(c), 200);
    CHECK_EQ_INT((size_t)ctx.calls, 200 - kept);
    vpt_cache_close(c);
    TdCtx ctx2 = {0};
    VptSearchResult ref;
    REQUIRE(run_on_cache(s, ref_path, &o, &ctx2, &ref, NULL) == 0);
    CHECK(same_run(&ref, &r));
    vpt_search_result_free(&r);
    vpt_search_result_free(&ref);
    vpt_space_destroy(s);
}

/* ---- a replayed tune killed at random points -------------------------- */

#define KILL_FIXTURE "tests/fixtures/tuner/manix_exhaustive.jsonl"

/* What a replayed tune ends with. */
typedef struct {
    size_t n_evals, cached;
    double seconds;
    int found;
    VptConfig winner;
} ReplayOutcome;

/* A tune's options for a local search of s on cache c: seed, a time budget. */
static void local_tune_options(VptTuneOptions *o, const VptSpace *s, VptCache *c, uint64_t seed, double budget_s)
{
    vpt_tune_options_init(o);
    o->space = s;
    o->cache = c;
    o->search.strategy = VPT_STRATEGY_LOCAL;
    o->search.seed = seed;
    o->search.max_seconds = budget_s;
}

/* The tune `bin/tune --replay KILL_FIXTURE --cache path` runs (local
 * search, seed 1, 90 s, the recording's one estimator: no screening), on a
 * direct pool with the replay's prefetch and retrace hooks, the replay
 * reset first as a new process has it. */
static int replay_tune(VptReplay *r, const VptSpace *s, const char *path, ReplayOutcome *out)
{
    vpt_replay_reset(r);
    VptCache *c = vpt_cache_open(path, vpt_replay_provenance(r), VPT_CACHE_NOSYNC);
    if (!c) return -1;
    VptEvalPool *pool = vpt_eval_pool_direct(vpt_replay_evaluate, r, c, vpt_replay_prefetch, r);
    if (!pool) {
        vpt_cache_close(c);
        return -1;
    }
    vpt_eval_pool_set_retrace(pool, vpt_replay_retrace, r);
    VptTuneOptions o;
    local_tune_options(&o, s, c, 1, 90);
    o.search.pool = pool;
    VptTuneResult res;
    int rc = vpt_tune_run(&o, &res);
    if (rc == 0 && out) {
        out->n_evals = res.search.n_evals;
        out->cached = res.search.cached;
        out->seconds = res.search.seconds;
        out->found = res.have_winner;
        out->winner = res.winner.config;
    }
    vpt_tune_result_free(&res);
    vpt_eval_pool_destroy(pool);
    vpt_cache_close(c);
    return rc;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* How many kills: VPT_KILL_RESUME_KILLS (scripts/kill_resume.sh asks for
 * 50), else the default of `make test`. */
#define KILLS_DEFAULT 3000

static int kills_wanted(void)
{
    const char *v = getenv("VPT_KILL_RESUME_KILLS");
    int n = v && *v ? atoi(v) : KILLS_DEFAULT;
    return n > 0 && n <= 100000 ? n : KILLS_DEFAULT;
}

/* A replayed 90 s local search (114 evaluations on manix), killed with
 * SIGKILL at random moments and resumed on the same cache, again and
 * again, ends with the rows of an uninterrupted run byte for byte (so the
 * same costs: each resumed replay retraces the cache, tuner/cache.h), the
 * same charged seconds and the same winner. A kill lands at a uniformly
 * random moment of a child's run (its length measured first); one that
 * comes after the child finished is not counted. Deterministic apart from
 * where the kills land: no false alarms. */
TEST_TIMEOUT(tuner_resume_replay_killed_at_random_points, 600)
{
    VptReplay *r = vpt_replay_open(KILL_FIXTURE);
    REQUIRE_MSG(r, "%s", vpt_errmsg());
    size_t rejected;
    VptSpace *s = vpt_replay_space(r, &rejected);
    REQUIRE(s);
    char ref_path[600], path[600];
    snprintf(ref_path, sizeof ref_path, "%s/kill-ref.jsonl", vpt_test_tmpdir());
    snprintf(path, sizeof path, "%s/kill.jsonl", vpt_test_tmpdir());
    ReplayOutcome ref;
    double t0 = now_s();
    REQUIRE_MSG(replay_tune(r, s, ref_path, &ref) == 0, "%s", vpt_errmsg());
    const double run_s = now_s() - t0;
    REQUIRE(ref.found && ref.n_evals > 100 && ref.cached == 0);
    char *want;
    size_t want_size;
    REQUIRE(vpt_read_file(ref_path, 1 << 24, &want, &want_size) == 0);

    const int kills = kills_wanted();
    unsigned seed = (unsigned)time(NULL) ^ (unsigned)getpid();
    vpt_test_log("kill seed %u, a tune takes %.3f s here", seed, run_s);
    int landed = 0, trials = 0, failures = 0, chain = 0;
    size_t rows_at_kill_min = SIZE_MAX, rows_at_kill_max = 0;
    unlink(path);
    while (landed < kills && failures < 3) {
        pid_t pid = fork();
        REQUIRE(pid >= 0);
        if (pid == 0) _exit(replay_tune(r, s, path, NULL) == 0 ? 0 : 2);
        /* up to 1.2 runs: the resumed part is shorter, so late kills miss */
        double delay = 1.2 * run_s * ((double)rand_r(&seed) / RAND_MAX);
        struct timespec ts = {(time_t)delay, (long)((delay - (double)(time_t)delay) * 1e9)};
        nanosleep(&ts, NULL);
        kill(pid, SIGKILL);
        int status;
        REQUIRE(waitpid(pid, &status, 0) == pid);
        trials++;
        if (WIFEXITED(status)) REQUIRE_MSG(WEXITSTATUS(status) == 0, "a tune's child failed");
        int finished = WIFEXITED(status);
        if (!finished) {
            landed++;
            chain++;
            VptCache *c = vpt_cache_open(path, NULL, VPT_CACHE_READONLY);
            size_t rows = c ? vpt_cache_count(c) : 0;
            vpt_cache_close(c);
            if (rows < rows_at_kill_min) rows_at_kill_min = rows;
            if (rows > rows_at_kill_max) rows_at_kill_max = rows;
        }
        /* after one to three kills in a row (or a child that finished),
         * resume here to the end and compare */
        if (finished || chain >= 1 + (int)(rand_r(&seed) % 3)) {
            ReplayOutcome got;
            REQUIRE_MSG(replay_tune(r, s, path, &got) == 0, "%s", vpt_errmsg());
            char *have;
            size_t have_size;
            REQUIRE(vpt_read_file(path, 1 << 24, &have, &have_size) == 0);
            const char *why = NULL;
            if (have_size != want_size || memcmp(have, want, want_size) != 0) why = "other rows";
            else if (got.n_evals != ref.n_evals || got.seconds != ref.seconds) why = "other charged seconds";
            else if (!got.found || !vpt_config_equal(&got.winner, &ref.winner)) why = "another winner";
            free(have);
            if (why) {
                failures++;
                vpt_test_fail_at(__FILE__, __LINE__,
                                 "after %d kill(s) (seed %u): %s: %zu evaluations, %.17g s charged "
                                 "(uninterrupted: %zu, %.17g s)",
                                 chain, seed, why, got.n_evals, got.seconds, ref.n_evals, ref.seconds);
            }
            chain = 0;
            unlink(path);
        }
    }
    vpt_test_log("%d kills landed in %d runs (%zu to %zu rows on disk at a kill); every resumed tune: %zu "
                 "evaluations, %.3f s charged, as uninterrupted",
                 landed, trials, rows_at_kill_min, rows_at_kill_max, ref.n_evals, ref.seconds);
    printf("kill_resume: %d SIGKILLs, %s\n", landed,
           failures ? "FAIL: a resumed tune differs from the uninterrupted one"
                    : "PASS: every resumed tune has the uninterrupted one's rows, charged seconds and winner");
    fflush(stdout);
    free(want);
    vpt_space_destroy(s);
    vpt_replay_destroy(r);
}

/* A tune with the estimator stage (two screenings and two path-order
 * screenings between two searches, a 60 s budget on the double's costs),
 * cut after every row and resumed: each resumed tune charges what the
 * uninterrupted one charged, screenings included (a screening's row that
 * the resumed tune retraces was its own evaluation before the cut, charged
 * again as then: tuner/pool.h), so its second search has the same budget
 * and it ends with the same rows, seconds and winner. */
static int estimator_tune(const VptSpace *s, const char *path, TdCtx *ctx, VptTuneResult *r)
{
    VptTuneProvenance prov = td_provenance();
    VptCache *c = vpt_cache_open(path, &prov, VPT_CACHE_NOSYNC);
    if (!c) return -1;
    VptEstimator est[2];
    if (vpt_estimators_parse("global:f32,grid8:u8", est) != 2) {
        vpt_cache_close(c);
        return vpt_fail("the estimator list does not parse");
    }
    VptTuneOptions o;
    local_tune_options(&o, s, c, 5, 60);
    o.evaluate = td_evaluate;
    o.evaluate_ctx = ctx;
    o.estimators = est;
    o.n_estimators = 2;
    int rc = vpt_tune_run(&o, r);
    vpt_cache_close(c);
    return rc;
}

TEST(tuner_resume_estimator_stage_charges_as_uninterrupted)
{
    VptSpace *s = vpt_space_create();
    REQUIRE(s);
    REQUIRE(vpt_space_restrict(s, "coop", "0") == 0);
    char full[600], cut[600];
    snprintf(full, sizeof full, "%s/est-full.jsonl", vpt_test_tmpdir());
    snprintf(cut, sizeof cut, "%s/est-cut.jsonl", vpt_test_tmpdir());
    TdCtx ctx = {0};
    VptTuneResult ref;
    REQUIRE_MSG(estimator_tune(s, full, &ctx, &ref) == 0, "%s", vpt_errmsg());
    REQUIRE(ref.have_winner && ref.search.stop == VPT_STOP_BUDGET);
    char *data;
    size_t size;
    REQUIRE(vpt_read_file(full, 1 << 22, &data, &size) == 0);
    int failures = 0;
    size_t rows = 0;
    for (size_t k = 0; k <= size && failures < 5; k++) {
        if (k < size && data[k] != '\n') continue; /* whole rows: the every-byte tests cover the rest */
        REQUIRE(write_prefix(cut, data, k < size ? k + 1 : k) == 0);
        TdCtx c2 = {0};
        VptTuneResult r;
        memset(&r, 0, sizeof r);
        int rc = estimator_tune(s, cut, &c2, &r);
        char *after = NULL;
        size_t after_size = 0;
        const char *why = NULL;
        if (rc) why = vpt_errmsg();
        else if (r.search.seconds != ref.search.seconds || r.search.n_evals != ref.search.n_evals)
            why = "other charged seconds";
        else if (!vpt_config_equal(&r.winner.config, &ref.winner.config)) why = "another winner";
        else if (vpt_read_file(cut, 1 << 22, &after, &after_size) != 0 || after_size != size ||
                 memcmp(after, data, size) != 0)
            why = "other rows";
        free(after);
        if (why) {
            failures++;
            vpt_test_fail_at(__FILE__, __LINE__, "resumed after %zu rows: %s (%zu evaluations, %.17g s; "
                             "uninterrupted %zu, %.17g s)", rows, why, r.search.n_evals, r.search.seconds,
                             ref.search.n_evals, ref.search.seconds);
        }
        vpt_tune_result_free(&r);
        rows++;
    }
    free(data);
    vpt_tune_result_free(&ref);
    vpt_space_destroy(s);
}
