/* The tune's finish and the budget that covers it (tuner/finish.h,
 * tuner/tune.h): the prediction from records, a tune on the test double
 * whose search and finish end within its budget, a budget too small for
 * the finish, and bin/tune --replay on recorded GPU runs. */
#include "tests/harness/test.h"
#include "tests/test_tools.h"
#include "tests/test_tuner_double.h"

#include "base/error.h"
#include "base/file.h"
#include "base/progress.h"
#include "tuner/estimators.h"
#include "tuner/finish.h"
#include "tuner/tune.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static VptConfig config(const char *text)
{
    VptConfig c;
    if (vpt_config_parse(text, &c)) vpt_test_fail_at(__FILE__, __LINE__, "%s: %s", text, vpt_errmsg());
    return c;
}

/* An ok record whose renders, (reps + 1) x time_ms, take renders_s, and
 * whose measurement took measure_s in all. */
static VptEvalRecord ok_record(const char *text, double time_ms, double reps, double measure_s, double compile_s)
{
    VptConfig c = config(text);
    VptEvalRecord r;
    vpt_eval_record_init(&r, &c, 1);
    r.time_ms = time_ms;
    r.reps = reps;
    r.measure_s = measure_s;
    r.compile_s = compile_s;
    r.cost_s = compile_s + measure_s;
    return r;
}

/* The finalists repeat their renders plus the least overhead of any
 * record, not their own measure_s (which may hold a compile wait or an
 * estimator's first reference render); a config taken twice is one
 * finalist, at its better record; a reference the tune measured repeats its own record, one it did
 * not repeats the nearest record's (the costlier on a tie) and compiles
 * as the records of its schedule did, unless the evaluator holds it. */
TEST(tuner_finish_predicts_the_finalists_rounds_and_the_references)
{
    VptEvalRecord recs[6];
    recs[0] = ok_record("regenerationSK-warp", 100, 9, 1.05, 10.0);           /* renders 1.0, overhead 0.05 */
    recs[1] = ok_record("regenerationSK-warp,block=128", 50, 19, 1.8, 0);     /* renders 1.0, 0.8 more: first-time work */
    recs[2] = ok_record("regenerationSK-thread", 200, 4, 1.02, 0);            /* renders 1.0, the least overhead */
    recs[3] = ok_record("naiveSK,block=64", 1, 1, 0, 3.0);
    recs[3].status = VPT_STATUS_COMPILE;                                      /* a failure: never a finalist */
    recs[4] = ok_record("naiveSK,block=128", 300, 4, 1.6, 0.6);               /* renders 1.5 */
    recs[5] = recs[1];                                                        /* taken again from the cache */
    VptFinishPlan plan;
    memset(&plan, 0, sizeof plan);
    plan.top_k = 3;
    plan.rounds = 3;
    plan.refs[0] = config("regenerationSK-thread"); /* measured: recs[2] */
    plan.refs[1] = config("naiveSK");               /* not: one field from recs[2] and recs[4] */
    plan.n_refs = 2;
    VptFinishPrediction p;
    const double total = vpt_finish_predict(&plan, recs, 6, &p);
    CHECK_NEAR(p.overhead_s, 0.02, 1e-9);
    CHECK_EQ_INT(p.n_finalists, 3); /* recs[1] once, recs[0], recs[2] */
    CHECK_NEAR(p.finalists_s, 3 * 3 * 1.02, 1e-9);
    CHECK_EQ_INT(p.n_refs, 2);
    CHECK_EQ_INT(p.refs_estimated, 1);
    /* recs[2] once; recs[4] (costlier than recs[2]) and naiveSK's mean compile (0.6 and 3.0) */
    CHECK_NEAR(p.refs_s, 1.02 + (1.5 + 0.02) + 1.8, 1e-9);
    CHECK_NEAR(total, p.finalists_s + p.refs_s, 1e-12);
    CHECK_NEAR(p.next_s, 0, 0); /* top_k finalists: the next record takes a place */

    plan.ref_compiled[1] = 1; /* the gate's reference variant: compiled before the search */
    vpt_finish_predict(&plan, recs, 6, &p);
    CHECK_NEAR(p.refs_s, 1.02 + 1.52, 1e-9);

    /* fewer finalists than top_k: the next ok record joins them, at the
     * records' mean renders (recs[1] counted twice: each record rendered) */
    plan.top_k = 10;
    vpt_finish_predict(&plan, recs, 6, &p);
    CHECK_EQ_INT(p.n_finalists, 4);
    CHECK_NEAR(p.finalists_s, 3 * (3 * 1.02 + 1.52), 1e-9);
    CHECK_NEAR(p.next_s, 3 * ((1.0 + 1.0 + 1.0 + 1.5 + 1.0) / 5 + 0.02), 1e-9);

    /* no finalist: no reference is measured either */
    vpt_finish_predict(&plan, &recs[3], 1, &p);
    CHECK_EQ_INT(p.n_finalists, 0);
    CHECK_NEAR(p.total_s, 0, 0);

    /* without re-measurement the finalists cost nothing */
    plan.rounds = 0;
    vpt_finish_predict(&plan, recs, 6, &p);
    CHECK_NEAR(p.finalists_s, 0, 0);
    CHECK(p.refs_s > 0);
}

/* A config the searches took twice (a cache hit, a rival's start) is one
 * finalist at its better record, in the table vpt_tune_run prints and in
 * the finish's prediction alike, whichever record came first. */
TEST(tuner_finalists_are_distinct_configs)
{
    VptEvalRecord recs[6];
    recs[0] = ok_record("regenerationSK-warp,block=64", 7.40, 99, 1.0, 0);  /* renders 0.74 */
    recs[1] = ok_record("regenerationSK-warp,block=128", 7.41, 99, 1.0, 0);
    recs[2] = recs[0];                                                      /* taken again */
    recs[3] = ok_record("regenerationSK-warp,block=256", 7.42, 99, 1.0, 0);
    recs[4] = recs[1];
    recs[4].time_ms = 7.39;                                                 /* measured again, faster */
    recs[5] = ok_record("regenerationSK-warp,block=512", 7.43, 99, 1.0, 0);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    REQUIRE(f);
    vpt_tune_print_top(f, recs, 6, 3);
    fclose(f);
    const char *want[] = {"   1     7.3900", "   2     7.4000", "   3     7.4200"};
    for (size_t i = 0; i < 3; i++) CHECK_MSG(strstr(buf, want[i]) != NULL, "no row \"%s\" in:\n%s", want[i], buf);
    CHECK_MSG(strstr(buf, "block=512") == NULL, "a fourth config in a table of three:\n%s", buf);
    free(buf);
    VptFinishPlan plan;
    memset(&plan, 0, sizeof plan);
    plan.top_k = 3;
    plan.rounds = 1;
    VptFinishPrediction p;
    vpt_finish_predict(&plan, recs, 6, &p);
    CHECK_EQ_INT(p.n_finalists, 3);
    /* block=128 at its faster record, block=64, block=256: 100 renders each
     * plus the least overhead (block=512's measure_s less its renders) */
    CHECK_NEAR(p.finalists_s, 0.739 + 0.740 + 0.742 + 3 * (1.0 - 0.743), 1e-9);
    plan.top_k = 10;
    vpt_finish_predict(&plan, recs, 6, &p);
    CHECK_EQ_INT(p.n_finalists, 4);
}

/* A remeasure as a GPU's runs it, simulated: each finalist measured
 * VPT_REMEASURE_ROUNDS times at its recorded measure_s (what the test
 * double's measurement costs), the seconds summed. */
typedef struct {
    int calls;
    size_t n;
    double seconds;
} SimRemeasure;

static int sim_remeasure(void *ctx, const VptConfig *cfgs, size_t n, VptEvalRecord *out)
{
    SimRemeasure *rm = ctx;
    rm->calls++;
    rm->n = n;
    for (size_t i = 0; i < n; i++) {
        vpt_eval_record_init(&out[i], &cfgs[i], 1);
        td_fill(&cfgs[i], 1, &out[i]);
        rm->seconds += VPT_REMEASURE_ROUNDS * out[i].measure_s;
    }
    return 0;
}

/* The largest cost_s of a search's records: what the evaluation started
 * last may overrun a time budget by. */
static double max_cost(const VptSearchResult *s)
{
    double m = 0;
    for (size_t i = 0; i < s->n_evals; i++) m = fmax(m, s->evals[i].cost_s);
    return m;
}

/* The largest time_ms of a search's ok records. */
static double max_time_ms(const VptSearchResult *s)
{
    double m = 0;
    for (size_t i = 0; i < s->n_evals; i++)
        if (s->evals[i].status == VPT_STATUS_OK) m = fmax(m, s->evals[i].time_ms);
    return m;
}

/* A local-search tune of the test double with ten finalists re-measured,
 * a time budget, and the estimators `list` (NULL: none). */
static void finish_tune(VptTuneOptions *o, VptSpace *s, TdCtx *ctx, SimRemeasure *rm, double budget_s,
                        const char *list, VptEstimator *est, FILE *report)
{
    td_local_tune(o, s, td_evaluate, ctx, budget_s, list, est);
    o->top_k = 10;
    o->remeasure = sim_remeasure;
    o->remeasure_ctx = rm;
    o->report = report;
}

/* The budget holds search and finish: the search stops early enough that
 * its charged seconds and the simulated re-measurement of its ten
 * finalists end within the budget, but for the evaluation started last
 * (as a budget always allowed); and the finish is the one predicted. The
 * whole budget given to the search, as before, leaves the finish past it
 * by several seconds. With and without the estimator stage. */
TEST(tuner_tune_budget_holds_search_and_finish)
{
    const char *lists[] = {NULL, "global:f32,global:u8,grid8:f32"};
    for (int l = 0; l < 2; l++) {
        VptSpace *s = vpt_space_create();
        REQUIRE(s);
        TdCtx ctx = {0};
        SimRemeasure rm = {0};
        VptEstimator est[VPT_ESTIMATORS_MAX];
        char path[600];
        snprintf(path, sizeof path, "%s/report%d.txt", vpt_test_tmpdir(), l);
        FILE *report = fopen(path, "w");
        REQUIRE(report);
        VptTuneOptions o;
        finish_tune(&o, s, &ctx, &rm, 40, lists[l], est, report);
        VptTuneResult r;
        REQUIRE_MSG(vpt_tune_run(&o, &r) == 0, "%s", vpt_errmsg());
        fclose(report);
        REQUIRE(r.have_winner);
        CHECK_EQ_INT(rm.calls, 1);
        CHECK_EQ_INT(rm.n, 10);
        const double overrun = max_cost(&r.search);
        vpt_test_log("estimators %s: %zu evaluations, %.2f s charged, finish %.2f s (predicted %.2f s), overrun "
                     "allowed %.2f s",
                     lists[l] ? lists[l] : "(none)", r.search.n_evals, r.search.seconds, rm.seconds, r.finish.total_s,
                     overrun);
        CHECK_MSG(r.search.seconds + rm.seconds <= 40 + overrun,
                  "estimators %s: %.2f s charged and a finish of %.2f s for a 40 s budget", lists[l] ? lists[l] : "(none)",
                  r.search.seconds, rm.seconds);
        CHECK_MSG(r.search.seconds + r.finish.total_s <= 40 + overrun, "%.2f s charged, %.2f s predicted",
                  r.search.seconds, r.finish.total_s);
        /* the double's measure_s is a fixed part and 15 renders where the
         * prediction counts 16: the overhead it derives, the fixed part
         * less the slowest record's render, misses each repetition by less
         * than that render */
        const double miss = VPT_REMEASURE_ROUNDS * 10 * max_time_ms(&r.search) * 1e-3;
        CHECK_MSG(fabs(r.finish.total_s - rm.seconds) <= miss, "finish predicted %.3f s, took %.3f s (at most %.3f apart)",
                  r.finish.total_s, rm.seconds, miss);
        CHECK_EQ_INT(r.finish.n_finalists, 10);
        char *text;
        size_t size;
        REQUIRE(vpt_read_file(path, 1 << 20, &text, &size) == 0);
        CHECK_STR_CONTAINS(text, "budget 40 s: ");
        CHECK_STR_CONTAINS(text, " s set aside for the finish (10 finalists x 3 rounds: ");
        free(text);
        vpt_tune_result_free(&r);
        vpt_space_destroy(s);
    }
}

/* Every evaluation of the test double costing 3 s. */
static int three_second_evaluate(void *ctx, const VptConfig *c, int fidelity, VptEvalRecord *out)
{
    if (td_evaluate(ctx, c, fidelity, out)) return -1;
    out->cost_s = 3.0;
    return 0;
}

/* The evaluation about to start is counted at what the tune's evaluations
 * cost on average: where each takes 3 s, the search and the finish end
 * within the budget, not up to an evaluation past it; with the estimator
 * stage too, whose screenings (estimators, path order, regeneration
 * families) each start a measurement only where it fits. */
TEST(tuner_tune_the_next_evaluation_fits_the_budget)
{
    const char *lists[] = {NULL, "global:f32,global:u8,grid8:f32,grid8:u8,grid16:f32,grid16:u8,grid32:f32,grid32:u8"};
    for (int l = 0; l < 2; l++) {
        VptSpace *s = vpt_space_create();
        REQUIRE(s);
        TdCtx ctx = {0};
        SimRemeasure rm = {0};
        VptEstimator est[VPT_ESTIMATORS_MAX];
        VptTuneOptions o;
        finish_tune(&o, s, &ctx, &rm, 40, lists[l], est, NULL);
        o.evaluate = three_second_evaluate;
        VptTuneResult r;
        REQUIRE_MSG(vpt_tune_run(&o, &r) == 0, "%s", vpt_errmsg());
        REQUIRE(r.have_winner);
        const char *name = lists[l] ? "with estimators" : "without estimators";
        CHECK_MSG(r.search.seconds + r.finish.total_s <= 40, "%s: %.2f s charged and %.2f s predicted for the finish "
                  "of a 40 s budget (%zu evaluations)", name, r.search.seconds, r.finish.total_s, r.search.n_evals);
        CHECK_MSG(r.search.seconds + r.finish.total_s > 40 - 3.0 - 1e-9, "%s: %.2f s charged and %.2f s for the "
                  "finish: more than an evaluation of the budget left", name, r.search.seconds, r.finish.total_s);
        vpt_tune_result_free(&r);
        vpt_space_destroy(s);
    }
}

/* A budget smaller than one evaluation: the search makes its first, the
 * finish still runs (the winner is re-measured), and the report says the
 * finish ends the tune past the budget. */
TEST(tuner_tune_budget_too_small_for_the_finish_still_finishes)
{
    VptSpace *s = vpt_space_create();
    REQUIRE(s);
    TdCtx ctx = {0};
    SimRemeasure rm = {0};
    char path[600];
    snprintf(path, sizeof path, "%s/report.txt", vpt_test_tmpdir());
    FILE *report = fopen(path, "w");
    REQUIRE(report);
    VptTuneOptions o;
    finish_tune(&o, s, &ctx, &rm, 0.5, NULL, NULL, report);
    VptTuneResult r;
    REQUIRE_MSG(vpt_tune_run(&o, &r) == 0, "%s", vpt_errmsg());
    fclose(report);
    CHECK_EQ_INT(r.search.n_evals, 1);
    CHECK(r.search.stop == VPT_STOP_BUDGET);
    REQUIRE(r.have_winner);
    CHECK_EQ_INT(rm.calls, 1);
    CHECK(r.finish.total_s > 0);
    char *text;
    size_t size;
    REQUIRE(vpt_read_file(path, 1 << 20, &text, &size) == 0);
    CHECK_STR_CONTAINS(text, "budget 0.5 s: ");
    CHECK_STR_CONTAINS(text, " s past the budget");
    CHECK_STR_CONTAINS(text, "finalists re-measured");
    free(text);
    vpt_tune_result_free(&r);
    vpt_space_destroy(s);
}

/* The test double, each evaluation lasting 20 ms of wall time, its
 * measurement reported as such (reps 9 of 2 ms: renders 20 ms). */
static int slow_evaluate(void *ctx, const VptConfig *c, int fidelity, VptEvalRecord *out)
{
    if (td_evaluate(ctx, c, fidelity, out)) return -1;
    struct timespec ts = {0, 20 * 1000 * 1000};
    nanosleep(&ts, NULL);
    if (out->status == VPT_STATUS_OK) {
        out->time_ms = 2.0 * (1 + 1e-5 * (double)(td_hash(c) % 100));
        out->reps = 9;
        out->measure_s = 0.020;
    }
    out->cost_s = 0.001; /* the charged clock never binds: the wall deadline does */
    return 0;
}

/* Re-measures in real time what slow_evaluate's records predict: 20 ms a
 * finalist a round. */
static int slow_remeasure(void *ctx, const VptConfig *cfgs, size_t n, VptEvalRecord *out)
{
    (void)ctx;
    for (size_t i = 0; i < n; i++) {
        vpt_eval_record_init(&out[i], &cfgs[i], 1);
        td_fill(&cfgs[i], 1, &out[i]);
        struct timespec ts = {0, VPT_REMEASURE_ROUNDS * 20 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    return 0;
}

/* On a GPU the budget is wall time too (VptSearchOptions.wall_deadline):
 * the search stops so that the finish ends by the deadline, not starts at
 * it. Ten finalists, three rounds of 20 ms each, under a 1500 ms deadline. */
TEST(tuner_tune_wall_deadline_holds_the_finish)
{
    VptSpace *s = vpt_space_create();
    REQUIRE(s);
    TdCtx ctx = {0};
    VptTuneOptions o;
    vpt_tune_options_init(&o);
    o.space = s;
    o.evaluate = slow_evaluate;
    o.evaluate_ctx = &ctx;
    o.search.strategy = VPT_STRATEGY_LOCAL;
    o.top_k = 10;
    o.remeasure = slow_remeasure;
    const double t0 = vpt_seconds();
    o.search.wall_deadline = t0 + 1.5;
    VptTuneResult r;
    REQUIRE_MSG(vpt_tune_run(&o, &r) == 0, "%s", vpt_errmsg());
    const double took = vpt_seconds() - t0;
    REQUIRE(r.have_winner);
    CHECK_EQ_INT(r.n_top, 10);
    vpt_test_log("%zu evaluations, search %.2f s, finish %.2f s (predicted %.2f s), %.2f s in all", r.search.n_evals,
                 r.search_wall_s, r.remeasure_wall_s, r.finish.total_s, took);
    CHECK_NEAR(r.finish.total_s, 0.6, 0.001);
    /* the evaluation started last (20 ms) and the sleeps' lateness on a
     * loaded machine; the deadline given to the search alone would end the
     * tune a whole finish later */
    CHECK_MSG(took <= 1.5 + 0.25, "the tune took %.2f s for a 1.5 s wall deadline", took);
    vpt_tune_result_free(&r);
    vpt_space_destroy(s);
}

/* ---- bin/tune --replay: the finish simulated on the recording ---------- */

/* `tune --replay FIXTURE --budget 30s` on a recorded exhaustive GPU run: the
 * seconds the search charged plus the finish predicted (the report's
 * "budget" line) stay within the budget but for the evaluation started
 * last (the cache's last row). Given the whole budget, the search of these
 * recordings left the finish past it by seconds. */
TEST(tuner_replay_budget_covers_the_finish)
{
    const char *fixtures[] = {"tests/fixtures/tuner/cgg-logo_exhaustive.jsonl",
                              "tests/fixtures/tuner/smoke_exhaustive.jsonl"};
    for (int f = 0; f < 2; f++) {
        if (access(fixtures[f], R_OK) != 0) SKIP("%s not found: run from the repository root", fixtures[f]);
        char cache[600], cmd[2048], last[64];
        static char out[1 << 16];
        snprintf(cache, sizeof cache, "%s/replay%d.jsonl", vpt_test_tmpdir(), f);
        snprintf(cmd, sizeof cmd, "%s --replay %s --budget 30s --quiet --no-save --cache %s", vpt_test_tool("tune"),
                 fixtures[f], cache);
        REQUIRE_MSG(vpt_test_sh(cmd, out, sizeof out) == 0, "%s\n%s", cmd, out);
        vpt_test_log("%s", out);
        double charged = NAN, set_aside = NAN;
        const char *b = strstr(out, "budget 30 s: ");
        REQUIRE_MSG(b && sscanf(b, "budget 30 s: %lf s charged to the search, %lf s set aside", &charged, &set_aside) == 2,
                    "no budget line in\n%s", out);
        snprintf(cmd, sizeof cmd, "tail -n 1 %s | grep -o '\"cost_s\":[0-9.e+-]*' | cut -d: -f2", cache);
        REQUIRE(vpt_test_sh(cmd, last, sizeof last) == 0);
        const double overrun = atof(last);
        CHECK_MSG(charged + set_aside <= 30 + overrun + 0.05, "%s: %.1f s charged, %.1f s set aside, last evaluation %.2f s",
                  fixtures[f], charged, set_aside, overrun);
        CHECK_STR_CONTAINS(out, "simulated tuning time ");
        CHECK_STR_CONTAINS(out, "finish: ");
        CHECK_STR_CONTAINS(out, "against the references (replayed from the recording: naiveSK ");
    }
}

/* More finalists than a budget's evaluations buy: while they are fewer
 * than --top, every record joins them, and the report says the finish took
 * the larger share and what leaves the search more. */
TEST(tuner_replay_caps_the_finish_at_its_share_of_the_budget)
{
    const char *fixture = "tests/fixtures/tuner/smoke_exhaustive.jsonl";
    if (access(fixture, R_OK) != 0) SKIP("%s not found: run from the repository root", fixture);
    char cmd[2048];
    static char out[1 << 16];
    /* twenty finalists re-measured would take most of 30 s on smoke */
    snprintf(cmd, sizeof cmd, "%s --replay %s --budget 30s --top 20 --quiet --no-save", vpt_test_tool("tune"), fixture);
    REQUIRE_MSG(vpt_test_sh(cmd, out, sizeof out) == 0, "%s\n%s", cmd, out);
    vpt_test_log("%s", out);
    CHECK_STR_CONTAINS(out, "(of 20: the finish gets at most 25% of the budget)");
    const char *b = strstr(out, "budget 30 s: ");
    REQUIRE_MSG(b, "no budget line:\n%s", out);
    double search_s = 0, finish_s = 0;
    REQUIRE(sscanf(b, "budget 30 s: %lf s charged to the search, %lf s set aside for the finish", &search_s,
                   &finish_s) == 2);
    CHECK_MSG(finish_s <= 0.25 * 30 + 1e-9, "finish %.2f s set aside, more than a quarter of 30 s", finish_s);
    CHECK_MSG(search_s >= 0.6 * 30, "the search charged only %.2f s of 30", search_s);
}
