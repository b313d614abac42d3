/* The evaluation pool on several lanes (tuner/pool.h, tuner/lanes.h) and
 * --gpus, without a GPU: lanes over the test double in this process, and
 * `tune --replay ... --gpus 0,1,2`, whose simulated GPUs run the same lanes
 * and the same pool as real ones. MPI is tested in test_tuner_mpi.c. */
#include "tests/harness/test.h"
#include "tests/test_tune_runs.h"
#include "tests/test_tuner_double.h"

#include "base/error.h"
#include "cli/gpus_arg.h"
#include "tuner/cache.h"
#include "tuner/lanes.h"
#include "tuner/pool.h"
#include "tuner/search.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- lanes over the test double ---------------------------------------- */

typedef struct {
    int lane_fails_at[8];  /* > 0: lane i's evaluator fails (-1) on its n-th evaluation */
    int poison;            /* every lane evaluating `poisoned` fails */
    VptConfig poisoned;
    double delay_s;        /* real time per evaluation, so that lanes overlap */
    int slow;              /* evaluating `slowed` takes slow_s more */
    VptConfig slowed;
    double slow_s;
} DoubleSetup;

typedef struct {
    const DoubleSetup *setup;
    int lane;
    int evaluated;
} DoubleLane;

static void *double_open(void *user, int lane, VptLaneInfo *info, int *no_gpu)
{
    *no_gpu = 0;
    DoubleLane *d = calloc(1, sizeof *d);
    if (!d) return NULL;
    d->setup = user;
    d->lane = lane;
    snprintf(info->gpu_name, sizeof info->gpu_name, "Test Double GPU");
    snprintf(info->gpu_uuid, sizeof info->gpu_uuid, "GPU-double-%d", lane);
    snprintf(info->driver, sizeof info->driver, "580.00");
    snprintf(info->nvrtc, sizeof info->nvrtc, "13.0");
    snprintf(info->commit, sizeof info->commit, "abc123");
    info->device = lane;
    return d;
}

static int double_evaluate(void *ctx, const VptConfig *c, int fidelity, VptEvalRecord *out)
{
    DoubleLane *d = ctx;
    d->evaluated++;
    if (d->setup->delay_s > 0) usleep((useconds_t)(d->setup->delay_s * 1e6));
    if (d->setup->slow && vpt_config_equal(c, &d->setup->slowed)) usleep((useconds_t)(d->setup->slow_s * 1e6));
    int at = d->lane < 8 ? d->setup->lane_fails_at[d->lane] : 0;
    if (at > 0 && d->evaluated == at) return vpt_fail("test double: GPU %d fell off the bus", d->lane);
    if (d->setup->poison && vpt_config_equal(c, &d->setup->poisoned))
        return vpt_fail("test double: GPU %d died on the poisoned config", d->lane);
    td_fill(c, fidelity, out);
    return 0;
}

static void double_close(void *ctx) { free(ctx); }

static VptLanes *double_lanes(DoubleSetup *setup, int n)
{
    VptLaneOps ops = {double_open, double_evaluate, NULL, double_close, setup};
    return vpt_lanes_start(&ops, n, -1, "testhost", NULL);
}

static VptSearchOptions search_opts(VptStrategy s, size_t max_evals)
{
    VptSearchOptions o;
    vpt_search_options_init(&o);
    o.strategy = s;
    o.seed = 11;
    o.max_evals = max_evals;
    o.prefetch = NULL;
    return o;
}

/* Runs the search on one GPU (the test double in this thread) and returns it. */
static void run_direct(const VptSpace *s, VptStrategy st, size_t evals, VptSearchResult *r)
{
    TdCtx ctx = {0};
    VptSearchOptions o = search_opts(st, evals);
    REQUIRE_MSG(vpt_search_run(s, td_evaluate, &ctx, NULL, &o, r) == 0, "%s", vpt_errmsg());
}

/* stderr into a file for the duration (the pool reports lost lanes there). */
static int capture_stderr(const char *path)
{
    fflush(stderr);
    int saved = dup(2);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (saved < 0 || fd < 0) return -1;
    dup2(fd, 2);
    close(fd);
    return saved;
}

static void restore_stderr(int saved)
{
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
}

static char *slurp(const char *path)
{
    static char buf[1 << 16];
    FILE *f = fopen(path, "r");
    buf[0] = '\0';
    if (!f) return buf;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

/* Every (config, fidelity) of the cache at most once. */
static int cache_has_duplicates(const VptCache *c)
{
    for (size_t i = 0; i < vpt_cache_count(c); i++)
        for (size_t j = 0; j < i; j++) {
            const VptEvalRecord *a = vpt_cache_record(c, i), *b = vpt_cache_record(c, j);
            if (a->fidelity == b->fidelity && vpt_config_equal(&a->config, &b->config)) return 1;
        }
    return 0;
}

/* A search on lanes of the test double, with its cache (NULL name: none)
 * and stderr captured (the pool reports lost lanes there). */
typedef struct {
    char path[600], err[600];
    VptCache *cache;
    VptLanes *lanes;
    VptEvalPool *pool;
    VptSearchResult r;
    int rc;
} LanesRun;

static void search_on_lanes(const VptSpace *s, DoubleSetup *setup, int n, VptStrategy st, size_t evals,
                            const char *name, LanesRun *run)
{
    memset(run, 0, sizeof *run);
    VptTuneProvenance prov = td_provenance();
    snprintf(run->err, sizeof run->err, "%s/%s.err", vpt_test_tmpdir(), name ? name : "run");
    if (name) {
        snprintf(run->path, sizeof run->path, "%s/%s.jsonl", vpt_test_tmpdir(), name);
        run->cache = vpt_cache_open(run->path, &prov, VPT_CACHE_NOSYNC);
        REQUIRE_MSG(run->cache, "%s", vpt_errmsg());
    }
    run->lanes = double_lanes(setup, n);
    REQUIRE(run->lanes);
    run->pool = vpt_eval_pool_create(run->lanes, NULL, run->cache);
    REQUIRE(run->pool);
    VptSearchOptions o = search_opts(st, evals);
    o.pool = run->pool;
    int saved = capture_stderr(run->err);
    REQUIRE(saved >= 0);
    run->rc = vpt_search_run(s, NULL, NULL, run->cache, &o, &run->r);
    restore_stderr(saved);
}

static void end_lanes_run(LanesRun *run)
{
    vpt_eval_pool_destroy(run->pool);
    vpt_lanes_stop(run->lanes);
    if (run->cache) vpt_cache_close(run->cache);
    vpt_search_result_free(&run->r);
}

/* The same records in the same order. */
static void check_same_records(const char *what, const VptSearchResult *one, const VptSearchResult *many)
{
    CHECK_EQ_INT(many->n_evals, one->n_evals);
    for (size_t i = 0; i < one->n_evals && i < many->n_evals; i++)
        CHECK_MSG(vpt_config_equal(&one->evals[i].config, &many->evals[i].config) &&
                      one->evals[i].fidelity == many->evals[i].fidelity && one->evals[i].status == many->evals[i].status,
                  "%s: record %zu differs", what, i);
    CHECK(one->found == many->found && vpt_config_equal(&one->best.config, &many->best.config));
}

/* A search on three lanes takes the same records, in the same order, and
 * finds the same best as on one GPU: the lanes only evaluate ahead what the
 * strategy announced. */
TEST(tuner_pool_lanes_search_equals_one_gpu)
{
    VptSpace *s = vpt_space_create();
    REQUIRE(s);
    static const VptStrategy strategies[] = {VPT_STRATEGY_RANDOM, VPT_STRATEGY_EXHAUSTIVE, VPT_STRATEGY_GENETIC,
                                             VPT_STRATEGY_HALVING, VPT_STRATEGY_LOCAL, VPT_STRATEGY_ANNEALING};
    for (size_t k = 0; k < sizeof strategies / sizeof strategies[0]; k++) {
        VptSearchResult one;
        run_direct(s, strategies[k], 60, &one);
        DoubleSetup setup = {.delay_s = 0.001};
        LanesRun run;
        char name[32];
        snprintf(name, sizeof name, "pool-%zu", k);
        search_on_lanes(s, &setup, 3, strategies[k], 60, name, &run);
        REQUIRE_MSG(run.rc == 0, "%s", vpt_errmsg());
        CHECK_EQ_INT(vpt_eval_pool_lanes(run.pool), 3);
        CHECK_EQ_INT(vpt_eval_pool_gpus(run.pool), 3);
        check_same_records(vpt_strategy_name(strategies[k]), &one, &run.r);
        CHECK_EQ_INT(run.r.cached, 0);
        CHECK_EQ_INT(run.r.evaluated, run.r.n_evals);
        /* what the search took is in the cache once, named by its lane */
        CHECK(!cache_has_duplicates(run.cache));
        CHECK(vpt_cache_count(run.cache) >= run.r.n_evals);
        if (strategies[k] != VPT_STRATEGY_HALVING) /* halving may leave a screening it announced */
            CHECK_EQ_INT(vpt_cache_count(run.cache), run.r.n_evals);
        for (size_t i = 0; i < vpt_cache_count(run.cache); i++) {
            const VptEvalRecord *r = vpt_cache_record(run.cache, i);
            CHECK_MSG(strncmp(r->by_gpu, "GPU-double-", 11) == 0 && strcmp(r->by_host, "testhost") == 0 &&
                          r->by_rank == -1,
                      "row %zu measured by '%s' on '%s', rank %d", i, r->by_gpu, r->by_host, r->by_rank);
        }
        end_lanes_run(&run);
        /* and the rows parse back with who measured them */
        VptTuneProvenance prov = td_provenance();
        VptCache *cache = vpt_cache_open(run.path, &prov, VPT_CACHE_NOSYNC);
        REQUIRE_MSG(cache, "%s", vpt_errmsg());
        CHECK(strncmp(vpt_cache_record(cache, 0)->by_gpu, "GPU-double-", 11) == 0);
        vpt_cache_close(cache);
        vpt_search_result_free(&one);
    }
    vpt_space_destroy(s);
}

/* vpt_eval_pool_get_first takes whichever record a lane finishes first:
 * with the first config slowed (slow_s) on two lanes, the second comes
 * first, then the first; each is evaluated once and written once. It can
 * fail: a pool taking records in the order asked for answers which = 0. */
TEST(tuner_pool_get_first_takes_the_first_finished)
{
    VptSpace *s = vpt_space_create();
    REQUIRE(s);
    VptConfig c[2] = {*vpt_space_point(s, 0), *vpt_space_point(s, 1)};
    DoubleSetup setup = {.slow = 1, .slowed = c[0], .slow_s = 0.5};
    char path[512];
    snprintf(path, sizeof path, "%s/first.jsonl", vpt_test_tmpdir());
    VptTuneProvenance prov = td_provenance();
    VptCache *cache = vpt_cache_open(path, &prov, VPT_CACHE_NOSYNC);
    REQUIRE_MSG(cache, "%s", vpt_errmsg());
    VptLanes *lanes = double_lanes(&setup, 2);
    REQUIRE(lanes);
    VptEvalPool *pool = vpt_eval_pool_create(lanes, NULL, cache);
    REQUIRE(pool);
    CHECK_EQ_INT(vpt_eval_pool_ahead_per_lane(), 2);
    vpt_eval_pool_announce(pool, c, 2, 1);
    VptEvalRecord rec;
    size_t which = 9;
    int fresh = 0;
    REQUIRE_MSG(vpt_eval_pool_get_first(pool, c, 2, 1, SIZE_MAX, &rec, &which, &fresh) == 0, "%s", vpt_errmsg());
    CHECK_EQ_INT(which, 1);
    CHECK(fresh && vpt_config_equal(&rec.config, &c[1]));
    REQUIRE_MSG(vpt_eval_pool_get_first(pool, c, 1, 1, SIZE_MAX, &rec, &which, &fresh) == 0, "%s", vpt_errmsg());
    CHECK_EQ_INT(which, 0);
    CHECK(fresh && vpt_config_equal(&rec.config, &c[0]));
    /* a record in the cache is at hand at once */
    REQUIRE_MSG(vpt_eval_pool_get_first(pool, &c[1], 2, 1, SIZE_MAX, &rec, &which, &fresh) == 0, "%s", vpt_errmsg());
    CHECK_EQ_INT(which, 0);
    CHECK(!fresh && vpt_config_equal(&rec.config, &c[1]));
    CHECK_EQ_INT(vpt_cache_count(cache), 2);
    CHECK(!cache_has_duplicates(cache));
    vpt_eval_pool_destroy(pool);
    vpt_lanes_stop(lanes);
    vpt_cache_close(cache);
    vpt_space_destroy(s);
}

/* Local search on three lanes under a time budget takes its records in
 * completion order: each config evaluated once, every record it took in
 * the cache, the charged seconds past the budget by at most one
 * evaluation's cost. */
TEST(tuner_pool_local_search_in_completion_order_loses_nothing)
{
    VptSpace *s = vpt_space_create();
    REQUIRE(s);
    DoubleSetup setup = {.delay_s = 0.001};
    LanesRun run;
    memset(&run, 0, sizeof run);
    VptTuneProvenance prov = td_provenance();
    snprintf(run.path, sizeof run.path, "%s/completion.jsonl", vpt_test_tmpdir());
    run.cache = vpt_cache_open(run.path, &prov, VPT_CACHE_NOSYNC);
    REQUIRE_MSG(run.cache, "%s", vpt_errmsg());
    run.lanes = double_lanes(&setup, 3);
    REQUIRE(run.lanes);
    run.pool = vpt_eval_pool_create(run.lanes, NULL, run.cache);
    REQUIRE(run.pool);
    VptSearchOptions o = search_opts(VPT_STRATEGY_LOCAL, 0);
    o.pool = run.pool;
    o.max_seconds = 30;
    run.rc = vpt_search_run(s, NULL, NULL, run.cache, &o, &run.r);
    REQUIRE_MSG(run.rc == 0, "%s", vpt_errmsg());
    CHECK(run.r.stop == VPT_STOP_BUDGET);
    CHECK(run.r.n_evals > 10);
    CHECK_EQ_INT(run.r.evaluated, run.r.n_evals);
    CHECK(!cache_has_duplicates(run.cache));
    CHECK(vpt_cache_count(run.cache) >= run.r.n_evals);
    double worst = 0;
    for (size_t i = 0; i < run.r.n_evals; i++) {
        CHECK(vpt_cache_find(run.cache, &run.r.evals[i].config, 1) != NULL);
        if (run.r.evals[i].cost_s > worst) worst = run.r.evals[i].cost_s;
    }
    CHECK_MSG(run.r.seconds >= 30 && run.r.seconds <= 30 + worst, "%.3f s charged", run.r.seconds);
    end_lanes_run(&run);
    vpt_space_destroy(s);
}

/* A lane that fails is reported and its config evaluated again elsewhere:
 * nothing lost, nothing twice, the same search. */
TEST(tuner_pool_lost_lane_is_reported_and_its_config_requeued)
{
    VptSpace *s = vpt_space_create();
    REQUIRE(s);
    VptSearchResult one;
    run_direct(s, VPT_STRATEGY_GENETIC, 80, &one);
    DoubleSetup setup = {.delay_s = 0.001};
    setup.lane_fails_at[1] = 5;
    LanesRun run;
    search_on_lanes(s, &setup, 3, VPT_STRATEGY_GENETIC, 80, "lost", &run);
    REQUIRE_MSG(run.rc == 0, "%s", vpt_errmsg());
    const char *said = slurp(run.err);
    CHECK_STR_CONTAINS(said, "GPU 1 (GPU-double-1) is lost (test double: GPU 1 fell off the bus) while evaluating");
    CHECK_STR_CONTAINS(said, "that config is queued again");
    check_same_records("a lane lost", &one, &run.r);
    CHECK_EQ_INT(vpt_cache_count(run.cache), 80);
    CHECK(!cache_has_duplicates(run.cache));
    char lines[2048];
    FILE *f = fmemopen(lines, sizeof lines, "w");
    REQUIRE(f);
    vpt_eval_pool_print_lanes(run.pool, f);
    fclose(f);
    CHECK_STR_CONTAINS(lines, "GPU 1 (GPU-double-1): 4 evaluations (lost)");
    end_lanes_run(&run);
    vpt_search_result_free(&one);
    vpt_space_destroy(s);
}

/* A config that kills every lane it runs on is queued again once, then
 * recorded as a runtime failure: the search goes on with the lanes left. */
TEST(tuner_pool_config_lost_twice_is_a_runtime_failure)
{
    VptSpace *s = vpt_space_create();
    REQUIRE(s);
    VptSearchResult one;
    run_direct(s, VPT_STRATEGY_RANDOM, 30, &one);
    DoubleSetup setup = {.poison = 1, .poisoned = one.evals[5].config};
    LanesRun run;
    search_on_lanes(s, &setup, 3, VPT_STRATEGY_RANDOM, 30, "twice", &run);
    REQUIRE_MSG(run.rc == 0, "%s", vpt_errmsg());
    CHECK_STR_CONTAINS(slurp(run.err), "which was lost once before: recorded as a runtime failure");
    CHECK_EQ_INT(run.r.n_evals, 30);
    REQUIRE(run.r.n_evals > 5);
    CHECK(vpt_config_equal(&run.r.evals[5].config, &setup.poisoned));
    CHECK(run.r.evals[5].status == VPT_STATUS_RUNTIME);
    CHECK_STR_CONTAINS(run.r.evals[5].reason, "evaluation lost twice");
    for (size_t i = 0; i < run.r.n_evals; i++)
        if (i != 5) CHECK(vpt_config_equal(&run.r.evals[i].config, &one.evals[i].config));
    CHECK_EQ_INT(vpt_cache_count(run.cache), 30);
    CHECK(!cache_has_duplicates(run.cache));
    end_lanes_run(&run);
    vpt_search_result_free(&one);
    vpt_space_destroy(s);
}

TEST(tuner_pool_lanes_all_lost_stop_the_search)
{
    VptSpace *s = vpt_space_create();
    REQUIRE(s);
    DoubleSetup setup = {0};
    setup.lane_fails_at[0] = 3;
    setup.lane_fails_at[1] = 3;
    LanesRun run;
    search_on_lanes(s, &setup, 2, VPT_STRATEGY_RANDOM, 50, NULL, &run);
    CHECK_EQ_INT(run.rc, -1);
    CHECK(run.r.stop == VPT_STOP_ERROR);
    CHECK_STR_CONTAINS(vpt_errmsg(), "every evaluation lane is lost");
    /* each lane measured two configs before it was lost: the search keeps
     * those it asked for in order, whenever the losses arrived */
    CHECK_MSG(run.r.n_evals >= 3 && run.r.n_evals < 50, "%zu records", run.r.n_evals);
    end_lanes_run(&run);
    vpt_space_destroy(s);
}

TEST(tuner_pool_only_identical_gpus_mix)
{
    VptLaneInfo l[3];
    memset(l, 0, sizeof l);
    for (int i = 0; i < 3; i++) {
        snprintf(l[i].gpu_name, sizeof l[i].gpu_name, "NVIDIA H100 80GB HBM3");
        snprintf(l[i].gpu_uuid, sizeof l[i].gpu_uuid, "GPU-%d", i);
        snprintf(l[i].driver, sizeof l[i].driver, "580.159.04");
        snprintf(l[i].nvrtc, sizeof l[i].nvrtc, "13.0");
        snprintf(l[i].commit, sizeof l[i].commit, "cafe");
        snprintf(l[i].host, sizeof l[i].host, "node%d", i);
        l[i].rank = i;
    }
    CHECK(vpt_lanes_check_identical(l, 3) == 0);
    snprintf(l[2].driver, sizeof l[2].driver, "550.54.15");
    CHECK(vpt_lanes_check_identical(l, 3) == -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), "driver differs: rank 2 on node2, GPU 0 (GPU-2) has '550.54.15', rank 0 on "
                                     "node0, GPU 0 (GPU-0) has '580.159.04'");
    snprintf(l[2].driver, sizeof l[2].driver, "580.159.04");
    snprintf(l[1].gpu_name, sizeof l[1].gpu_name, "NVIDIA H200");
    CHECK(vpt_lanes_check_identical(l, 3) == -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), "GPU differs");
    CHECK_STR_CONTAINS(vpt_errmsg(), "'NVIDIA H200'");
    snprintf(l[1].gpu_name, sizeof l[1].gpu_name, "NVIDIA H100 80GB HBM3");
    snprintf(l[1].nvrtc, sizeof l[1].nvrtc, "12.8");
    CHECK(vpt_lanes_check_identical(l, 3) == -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), "NVRTC differs");
}

TEST(tuner_pool_gpus_argument)
{
    VptGpuSelection g;
    char text[64];
    int dev[VPT_GPUS_MAX];
    REQUIRE(vpt_gpus_parse("all", &g) == 0);
    CHECK(g.given && g.all);
    CHECK_EQ_INT(vpt_gpus_resolve(&g, 3, dev), 3);
    CHECK(dev[0] == 0 && dev[2] == 2);
    REQUIRE(vpt_gpus_parse("2,0", &g) == 0);
    CHECK(g.given && !g.all && g.n == 2 && g.index[0] == 2 && g.index[1] == 0);
    vpt_gpus_format(&g, text, sizeof text);
    CHECK(strcmp(text, "2,0") == 0);
    CHECK_EQ_INT(vpt_gpus_resolve(&g, 3, dev), 2);
    CHECK_EQ_INT(vpt_gpus_resolve(&g, 2, dev), -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), "--gpus 2: this host has 2 GPUs (0..1)");
    CHECK_EQ_INT(vpt_gpus_resolve(&g, 1, dev), -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), "has 1 GPU (0)");
    static const char *const bad[][2] = {
        {"", "empty"},          {"0,,1", "empty item"},       {"1,1", "GPU 1 is given twice"},
        {"x", "'x' is not a GPU index"}, {"64", "out of range"}, {"-1", "'-1' is not a GPU index"},
        {"1,", "empty item"},   {"0001", "'0001' is not"},    {"ALL", "'ALL' is not"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK_MSG(vpt_gpus_parse(bad[i][0], &g) == -1, "'%s' parsed", bad[i][0]);
        CHECK_STR_CONTAINS(vpt_errmsg(), bad[i][1]);
    }
}

/* ---- tune --replay --gpus: simulated GPUs, the lanes of a real tune ---- */

#define FIXTURE "tests/fixtures/tuner/manix_exhaustive.jsonl"

TEST_TIMEOUT(tuner_pool_tune_gpus_replay_equals_one_process, 300)
{
    if (access(FIXTURE, R_OK) != 0) SKIP("%s not found: run from the repository root", FIXTURE);
    static const char *const strategies[] = {"random", "exhaustive", "genetic", "halving", "local"};
    for (size_t k = 0; k < sizeof strategies / sizeof strategies[0]; k++) {
        const char *st = strategies[k];
        char one[600], many[600], cmd[2048];
        static char out1[1 << 16], outn[1 << 16];
        snprintf(one, sizeof one, "%s/one-%s.jsonl", vpt_test_tmpdir(), st);
        snprintf(many, sizeof many, "%s/many-%s.jsonl", vpt_test_tmpdir(), st);
        snprintf(cmd, sizeof cmd, "%s --replay " FIXTURE " --strategy %s --budget 150evals --seed 3 --cache %s --quiet",
                 vpt_test_tool("tune"), st, one);
        REQUIRE_MSG(vpt_test_sh(cmd, out1, sizeof out1) == 0, "%s\n%s", cmd, out1);
        snprintf(cmd, sizeof cmd,
                 "VPT_REPLAY_DELAY_S=0.002 %s --replay " FIXTURE " --strategy %s --budget 150evals --seed 3 "
                 "--cache %s --quiet --gpus 0,1,2",
                 vpt_test_tool("tune"), st, many);
        REQUIRE_MSG(vpt_test_sh(cmd, outn, sizeof outn) == 0, "%s\n%s", cmd, outn);
        CHECK_STR_CONTAINS(outn, "simulating on 3 GPUs side by side");
        CHECK_STR_CONTAINS(outn, "GPU 2 (GPU-1d7c4618-15b8-b299-3206-548aeba8ea67#2): ");
        int d1, dn;
        static char k1[1 << 16], kn[1 << 16];
        vpt_test_cache_keys(one, k1, sizeof k1, &d1);
        vpt_test_cache_keys(many, kn, sizeof kn, &dn);
        CHECK_EQ_INT(d1, 0);
        CHECK_EQ_INT(dn, 0);
        /* the same records, each once (halving may screen one or two it
         * announced beyond where its budget ended: tuner/pool.h) */
        int extra, extra_full, allowed = strcmp(st, "halving") == 0 ? 6 : 0;
        CHECK_MSG(vpt_test_keys_cover(k1, kn, &extra, &extra_full),
                  "%s: the cache lacks configs one process wrote (%d rows against %d)", st, vpt_test_count_lines(kn),
                  vpt_test_count_lines(k1));
        CHECK_MSG(extra <= allowed && extra_full == 0, "%s: %d configs one process did not write (%d at fidelity 1)",
                  st, extra, extra_full);
        char t1[4096], tn[4096], e1[128], en[128];
        vpt_test_tune_table(out1, t1, sizeof t1);
        vpt_test_tune_table(outn, tn, sizeof tn);
        CHECK_MSG(strcmp(t1, tn) == 0, "%s: other finalists:\n%s\nagainst\n%s", st, tn, t1);
        vpt_test_tune_count(out1, st, e1, sizeof e1);
        vpt_test_tune_count(outn, st, en, sizeof en);
        CHECK_MSG(strcmp(e1, en) == 0, "%s: '%s' against '%s'", st, en, e1);
    }
}

TEST(tuner_pool_tune_gpus_bad_values)
{
    char out[4096], cmd[1024];
    snprintf(cmd, sizeof cmd, "%s --replay " FIXTURE " --gpus 0,0", vpt_test_tool("tune"));
    CHECK_EQ_INT(vpt_test_sh(cmd, out, sizeof out), 2);
    CHECK_STR_CONTAINS(out, "--gpus: GPU 0 is given twice");
    snprintf(cmd, sizeof cmd, "%s --replay " FIXTURE " --gpus some", vpt_test_tool("tune"));
    CHECK_EQ_INT(vpt_test_sh(cmd, out, sizeof out), 2);
    CHECK_STR_CONTAINS(out, "'some' is not a GPU index");
}
