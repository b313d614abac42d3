/* Resuming an interrupted tune from its results cache: a kill at any point
 * loses and repeats nothing. Driven by the test double evaluator (the cache
 * and resume logic do not care what the times mean). */
#include "tests/harness/test.h"
#include "tests/test_tuner_double.h"

#include "base/error.h"
#include "base/file.h"
#include "tuner/cache.h"
#include "tuner/search.h"

#include <signal.h>
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

TEST(tuner_resume_every_byte_local)
{
    resume_at_every_offset(VPT_STRATEGY_LOCAL, 1);
}

TEST(tuner_resume_every_byte_genetic)
{
    resume_at_every_offset(VPT_STRATEGY_GENETIC, 1);
}

TEST(tuner_resume_every_byte_halving)
{
    resume_at_every_offset(VPT_STRATEGY_HALVING, 1);
}

TEST(tuner_resume_every_byte_annealing)
{
    resume_at_every_offset(VPT_STRATEGY_ANNEALING, 1);
}

TEST(tuner_resume_every_byte_random_and_exhaustive)
{
    resume_at_every_offset(VPT_STRATEGY_RANDOM, 1);
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
