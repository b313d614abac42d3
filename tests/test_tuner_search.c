/* Strategy mechanics on the test double: budgets, validity of what comes
 * back, determinism, stopping. Not strategy quality (see
 * test_tuner_fixture.c). */
#include "tests/harness/test.h"
#include "tests/test_tuner_double.h"

#include "base/error.h"
#include "base/progress.h"
#include "tuner/search.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static VptSearchOptions opts(VptStrategy s, uint64_t seed, size_t max_evals, double max_seconds)
{
    VptSearchOptions o;
    vpt_search_options_init(&o);
    o.strategy = s;
    o.seed = seed;
    o.max_evals = max_evals;
    o.max_seconds = max_seconds;
    return o;
}

/* What every result must satisfy, whatever the strategy. */
static void check_result(const VptSpace *s, const VptSearchResult *r)
{
    double best = INFINITY;
    for (size_t i = 0; i < r->n_evals; i++) {
        const VptEvalRecord *e = &r->evals[i];
        CHECK(vpt_space_index_of(s, &e->config) >= 0);
        CHECK(vpt_config_check(&e->config) == 0);
        CHECK(e->fidelity == 0 || e->fidelity == 1);
        for (size_t j = 0; j < i; j++) /* nothing counted twice */
            CHECK(!(vpt_config_equal(&r->evals[j].config, &e->config) && r->evals[j].fidelity == e->fidelity));
        if (e->fidelity == 1 && vpt_eval_objective(e) < best) best = vpt_eval_objective(e);
        CHECK(r->trace[i].evals == i + 1);
        CHECK(r->trace[i].best_ms == best);
        CHECK(i == 0 || r->trace[i].seconds >= r->trace[i - 1].seconds);
    }
    CHECK_EQ_INT(r->found, isfinite(best));
    if (r->found) {
        CHECK(r->best.status == VPT_STATUS_OK);
        CHECK(r->best.fidelity == 1);
        CHECK(r->best.time_ms == best);
    }
}

TEST(tuner_search_respects_evaluation_budget)
{
    VptSpace *s = vpt_space_create();
    REQUIRE(s);
    for (int k = 0; k < VPT_STRATEGY_COUNT; k++)
        for (uint64_t seed = 1; seed <= 4; seed++) {
            TdCtx ctx = {0};
            VptSearchOptions o = opts((VptStrategy)k, seed, 25, 0);
            VptSearchResult r;
            REQUIRE_MSG(vpt_search_run(s, td_evaluate, &ctx, NULL, &o, &r) == 0, "%s", vpt_errmsg());
            CHECK_MSG(r.n_evals == 25, "%s seed %d: %zu evals", vpt_strategy_name(k), (int)seed, r.n_evals);
            CHECK(r.stop == VPT_STOP_BUDGET);
            CHECK_EQ_INT(ctx.calls, 25);
            CHECK_EQ_INT(r.evaluated, 25);
            check_result(s, &r);
            if (k != VPT_STRATEGY_HALVING) CHECK(r.found); /* 25 full evaluations find an ok config */
            vpt_search_result_free(&r);
        }
    vpt_space_destroy(s);
}

TEST(tuner_search_respects_time_budget)
{
    VptSpace *s = vpt_space_create();
    REQUIRE(s);
    for (int k = 0; k < VPT_STRATEGY_COUNT; k++)
        for (uint64_t seed = 1; seed <= 3; seed++) {
            TdCtx ctx = {0};
            VptSearchOptions o = opts((VptStrategy)k, seed, 0, 30.0);
            VptSearchResult r;
            REQUIRE(vpt_search_run(s, td_evaluate, &ctx, NULL, &o, &r) == 0);
            CHECK(r.stop == VPT_STOP_BUDGET);
            REQUIRE(r.n_evals >= 2);
            /* an evaluation starts only while under budget: the last one may overrun */
            CHECK(r.trace[r.n_evals - 2].seconds < 30.0);
            CHECK(r.seconds >= 30.0);
            CHECK(r.seconds == r.trace[r.n_evals - 1].seconds);
            check_result(s, &r);
            vpt_search_result_free(&r);
        }
    vpt_space_destroy(s);
}

/* The test double, taking 5 ms of real time per evaluation while it
 * charges its own (simulated) cost. */
static int slow_evaluate(void *ctx, const VptConfig *c, int fidelity, VptEvalRecord *out)
{
    struct timespec ts = {0, 5000000};
    nanosleep(&ts, NULL);
    return td_evaluate(ctx, c, fidelity, out);
}

/* The wall-clock side of a time budget: when the real clock reaches the
 * deadline first, no evaluation starts after it, whatever the charged
 * clock says; without one the same search runs on. */
TEST(tuner_search_stops_at_the_wall_deadline)
{
    VptSpace *s = vpt_space_create();
    REQUIRE(s);
    for (int k = 0; k < VPT_STRATEGY_COUNT; k++) {
        TdCtx ctx = {0};
        VptSearchOptions o = opts((VptStrategy)k, 1, 0, 1e9);
        const double t0 = vpt_seconds();
        o.wall_deadline = t0 + 0.25;
        VptSearchResult r;
        REQUIRE(vpt_search_run(s, slow_evaluate, &ctx, NULL, &o, &r) == 0);
        const double took = vpt_seconds() - t0;
        CHECK_MSG(r.stop == VPT_STOP_BUDGET, "%s: stop %s", vpt_strategy_name(k), vpt_stop_reason_name(r.stop));
        CHECK_MSG(took >= 0.25 && took < 2.0, "%s: %.3f s for a 0.25 s deadline", vpt_strategy_name(k), took);
        CHECK(r.seconds < 1e9);
        check_result(s, &r);
        vpt_search_result_free(&r);
    }
    TdCtx ctx = {0};
    VptSearchOptions o = opts(VPT_STRATEGY_RANDOM, 1, 80, 1e9);
    VptSearchResult r;
    REQUIRE(vpt_search_run(s, slow_evaluate, &ctx, NULL, &o, &r) == 0);
    CHECK_EQ_INT(r.n_evals, 80); /* no deadline: no stop however long it takes */
    vpt_search_result_free(&r);
    vpt_space_destroy(s);
}

/* A small space: streamingSK at ppt 1 and block 128/256, sortkey off. */
static VptSpace *small_space(void)
{
    VptSpace *s = vpt_space_create();
    if (!s || vpt_space_restrict(s, "schedule", "streamingSK,regenerationSK-warp") ||
        vpt_space_restrict(s, "ppt", "1") || vpt_space_restrict(s, "block", "128,256") ||
        vpt_space_restrict(s, "grid", "0,2") || vpt_space_restrict(s, "lookahead", "1") ||
        vpt_space_restrict(s, "coop", "0")) {
        vpt_space_destroy(s);
        return NULL;
    }
    return s;
}

TEST(tuner_search_unbounded_runs_cover_the_space_once)
{
    VptSpace *s = small_space();
    REQUIRE(s);
    size_t n = vpt_space_size(s);
    REQUIRE(n > 50 && n < 1000);
    /* the optimum, computed independently */
    double opt = INFINITY;
    for (size_t i = 0; i < n; i++) {
        VptEvalRecord r;
        vpt_eval_record_init(&r, vpt_space_point(s, i), 1);
        td_fill(vpt_space_point(s, i), 1, &r);
        if (vpt_eval_objective(&r) < opt) opt = vpt_eval_objective(&r);
    }
    for (int k = 0; k < VPT_STRATEGY_COUNT; k++) {
        TdCtx ctx = {0};
        VptSearchOptions o = opts((VptStrategy)k, 3, 0, 0);
        o.stall_limit = 5000;
        VptSearchResult r;
        REQUIRE(vpt_search_run(s, td_evaluate, &ctx, NULL, &o, &r) == 0);
        check_result(s, &r);
        if (k == VPT_STRATEGY_EXHAUSTIVE || k == VPT_STRATEGY_RANDOM || k == VPT_STRATEGY_LOCAL) {
            CHECK_MSG(r.stop == VPT_STOP_DONE, "%s: %s", vpt_strategy_name(k), vpt_stop_reason_name(r.stop));
            CHECK_EQ_INT(r.n_evals, n); /* all of it (local search restarts until none is left) */
            CHECK(r.best.time_ms == opt);
        } else if (k == VPT_STRATEGY_HALVING) {
            CHECK(r.stop == VPT_STOP_DONE);
            size_t f0 = 0;
            for (size_t i = 0; i < r.n_evals; i++) f0 += r.evals[i].fidelity == 0;
            CHECK_EQ_INT(f0, n); /* every member screened once */
            CHECK(r.best.time_ms == opt); /* the test double's cheap times rank exactly */
        } else {
            CHECK(r.stop == VPT_STOP_DONE || r.stop == VPT_STOP_STALLED);
        }
        CHECK_EQ_INT(ctx.calls, r.n_evals);
        if (k == VPT_STRATEGY_EXHAUSTIVE)
            for (size_t i = 0; i < n; i++) CHECK(vpt_config_equal(&r.evals[i].config, vpt_space_point(s, i)));
        vpt_search_result_free(&r);
    }
    vpt_space_destroy(s);
}

static int same_trajectory(const VptSearchResult *a, const VptSearchResult *b)
{
    if (a->n_evals != b->n_evals) return 0;
    for (size_t i = 0; i < a->n_evals; i++)
        if (!vpt_config_equal(&a->evals[i].config, &b->evals[i].config) || a->evals[i].fidelity != b->evals[i].fidelity)
            return 0;
    return 1;
}

TEST(tuner_search_is_deterministic_in_the_seed)
{
    VptSpace *s = vpt_space_create();
    REQUIRE(s);
    for (int k = VPT_STRATEGY_RANDOM; k < VPT_STRATEGY_COUNT; k++) {
        VptSearchResult a, b, c;
        TdCtx ctx = {0};
        VptSearchOptions o = opts((VptStrategy)k, 11, 40, 0);
        REQUIRE(vpt_search_run(s, td_evaluate, &ctx, NULL, &o, &a) == 0);
        REQUIRE(vpt_search_run(s, td_evaluate, &ctx, NULL, &o, &b) == 0);
        o.seed = 12;
        REQUIRE(vpt_search_run(s, td_evaluate, &ctx, NULL, &o, &c) == 0);
        CHECK_MSG(same_trajectory(&a, &b), "%s: same seed, different paths", vpt_strategy_name(k));
        CHECK_MSG(!same_trajectory(&a, &c), "%s: different seeds, same path", vpt_strategy_name(k));
        vpt_search_result_free(&a);
        vpt_search_result_free(&b);
        vpt_search_result_free(&c);
    }
    vpt_space_destroy(s);
}

static volatile sig_atomic_t g_interrupt;

static void interrupt_after_5(void *user, const VptSearchProgress *p)
{
    (void)user;
    if (p->evals == 5) g_interrupt = 1;
}

TEST(tuner_search_interrupt_and_errors_stop_cleanly)
{
    VptSpace *s = vpt_space_create();
    REQUIRE(s);
    TdCtx ctx = {0};
    VptSearchOptions o = opts(VPT_STRATEGY_LOCAL, 1, 100, 0);
    o.interrupt = &g_interrupt;
    o.progress = interrupt_after_5;
    VptSearchResult r;
    CHECK(vpt_search_run(s, td_evaluate, &ctx, NULL, &o, &r) == 0);
    CHECK(r.stop == VPT_STOP_INTERRUPTED);
    CHECK_EQ_INT(r.n_evals, 5);
    vpt_search_result_free(&r);

    for (int k = 0; k < VPT_STRATEGY_COUNT; k++) {
        TdCtx failing = {.fail_after = 3};
        VptSearchOptions f = opts((VptStrategy)k, 1, 100, 0);
        CHECK(vpt_search_run(s, td_evaluate, &failing, NULL, &f, &r) == -1);
        CHECK(r.stop == VPT_STOP_ERROR);
        CHECK_STR_CONTAINS(vpt_errmsg(), "GPU lost");
        CHECK_EQ_INT(r.n_evals, 3); /* what was found before the failure is kept */
        check_result(s, &r);
        vpt_search_result_free(&r);
    }
    vpt_space_destroy(s);
}

/* An evaluator that claims ok without a time, and one with a bad cost. */
static int sloppy_evaluate(void *ctx, const VptConfig *c, int fidelity, VptEvalRecord *out)
{
    (void)ctx;
    (void)c;
    (void)fidelity;
    out->status = VPT_STATUS_OK;
    out->cost_s = NAN;
    return 0;
}

TEST(tuner_search_never_ranks_a_config_without_a_time)
{
    VptSpace *s = vpt_space_create();
    REQUIRE(s);
    VptSearchOptions o = opts(VPT_STRATEGY_RANDOM, 1, 10, 0);
    VptSearchResult r;
    REQUIRE(vpt_search_run(s, sloppy_evaluate, NULL, NULL, &o, &r) == 0);
    CHECK_EQ_INT(r.n_evals, 10);
    CHECK(!r.found);
    for (size_t i = 0; i < r.n_evals; i++) {
        CHECK(r.evals[i].status == VPT_STATUS_RUNTIME);
        CHECK_STR_CONTAINS(r.evals[i].reason, "without a time");
        CHECK(r.evals[i].cost_s == 0);
        CHECK(r.evals[i].time[0] != '\0'); /* stamped */
    }
    CHECK(isinf(vpt_search_best_at_evals(&r, 10)));
    vpt_search_result_free(&r);
    vpt_space_destroy(s);
}

TEST(tuner_search_halving_promotes_the_best_fraction)
{
    VptSpace *s = vpt_space_create();
    REQUIRE(s);
    TdCtx ctx = {0};
    VptSearchOptions o = opts(VPT_STRATEGY_HALVING, 5, 150, 0);
    VptSearchResult r;
    REQUIRE(vpt_search_run(s, td_evaluate, &ctx, NULL, &o, &r) == 0);
    check_result(s, &r);
    /* ASHA: a full measurement exactly when some screened config ranks among
     * the best floor(n / 3) of the n screened so far and has none yet; it
     * goes to the best such config. Otherwise a new config is screened. */
    VptConfig prior;
    REQUIRE(vpt_config_parse("regenerationSK", &prior) == 0);
    CHECK(r.evals[0].fidelity == 0 && vpt_config_equal(&r.evals[0].config, &prior)); /* the prior first */
    size_t screened = 0, promoted = 0;
    for (size_t i = 0; i < r.n_evals; i++) {
        /* the promotable configs before evaluation i, best first */
        long want = -1;
        size_t top = screened / 3, rank = 0;
        double want_obj = INFINITY;
        for (size_t j = 0; j < i; j++) {
            if (r.evals[j].fidelity != 0) continue;
            double oj = vpt_eval_objective(&r.evals[j]);
            if (!isfinite(oj)) continue;
            size_t better = 0; /* rank among the screened (equals: earlier first) */
            for (size_t k = 0; k < i; k++)
                if (r.evals[k].fidelity == 0) {
                    double ok = vpt_eval_objective(&r.evals[k]);
                    better += ok < oj || (ok == oj && vpt_space_index_of(s, &r.evals[k].config) <
                                                          vpt_space_index_of(s, &r.evals[j].config));
                }
            int done = 0;
            for (size_t k = 0; k < i; k++)
                done |= r.evals[k].fidelity == 1 && vpt_config_equal(&r.evals[k].config, &r.evals[j].config);
            if (better < top && !done && oj < want_obj) {
                want_obj = oj;
                want = (long)j;
            }
            (void)rank;
        }
        if (want >= 0) {
            CHECK_MSG(r.evals[i].fidelity == 1 && vpt_config_equal(&r.evals[i].config, &r.evals[want].config),
                      "evaluation %zu: the promotable best was not promoted", i);
            promoted++;
        } else {
            CHECK_MSG(r.evals[i].fidelity == 0, "evaluation %zu: a promotion with nothing promotable", i);
            screened++;
        }
    }
    CHECK(promoted >= screened / 3 - 2 && promoted <= screened / 2); /* about one in three */
    /* the curve helpers */
    CHECK(vpt_search_best_at_evals(&r, r.n_evals) == r.best.time_ms);
    CHECK(vpt_search_best_at_evals(&r, 1000000) == r.best.time_ms);
    CHECK(isinf(vpt_search_best_at_evals(&r, 3))); /* three screenings before the first promotion */
    CHECK(isfinite(vpt_search_best_at_evals(&r, 4)));
    CHECK(isinf(vpt_search_best_at_seconds(&r, 0.0)));
    CHECK(vpt_search_best_at_seconds(&r, r.seconds) == r.best.time_ms);
    vpt_search_result_free(&r);
    vpt_space_destroy(s);
}

/* The prior: every strategy but exhaustive and random search starts at the
 * thesis' default (regenerationSK), or the member nearest to it; no_prior
 * turns that off. Local search then descends: parameter moves before
 * schedule moves, each neighbourhood measured whole (steepest descent). */
TEST(tuner_search_starts_at_the_thesis_default)
{
    VptSpace *s = vpt_space_create();
    REQUIRE(s);
    VptConfig prior;
    REQUIRE(vpt_config_parse("regenerationSK", &prior) == 0);
    for (int k = VPT_STRATEGY_LOCAL; k < VPT_STRATEGY_COUNT; k++) {
        TdCtx ctx = {0};
        VptSearchOptions o = opts((VptStrategy)k, 4, 30, 0);
        VptSearchResult r;
        REQUIRE(vpt_search_run(s, td_evaluate, &ctx, NULL, &o, &r) == 0);
        CHECK_MSG(vpt_config_equal(&r.evals[0].config, &prior), "%s does not start at the prior",
                  vpt_strategy_name(k));
        vpt_search_result_free(&r);
        o.no_prior = 1;
        int at_prior = 0;
        for (uint64_t seed = 1; seed <= 5; seed++) {
            o.seed = seed;
            REQUIRE(vpt_search_run(s, td_evaluate, &ctx, NULL, &o, &r) == 0);
            at_prior += vpt_config_equal(&r.evals[0].config, &prior);
            vpt_search_result_free(&r);
        }
        CHECK_MSG(at_prior == 0, "%s starts at the prior with no_prior", vpt_strategy_name(k));
    }
    /* a space without the prior: the nearest member */
    REQUIRE(vpt_space_restrict(s, "block", "128,512") == 0);
    TdCtx ctx = {0};
    VptSearchOptions o = opts(VPT_STRATEGY_LOCAL, 4, 30, 0);
    VptSearchResult r;
    REQUIRE(vpt_search_run(s, td_evaluate, &ctx, NULL, &o, &r) == 0);
    VptConfig near = prior;
    near.block = r.evals[0].config.block;
    CHECK(vpt_config_equal(&r.evals[0].config, &near));
    /* the descent: after the start, its parameter neighbourhood, whole,
     * with the register-cap move where the start's cap does not bind */
    size_t nb[VPT_SPACE_MAX_NEIGHBOURS + 1];
    long start = vpt_space_index_of(s, &r.evals[0].config);
    REQUIRE(start >= 0);
    size_t n = vpt_space_neighbours_in(s, (size_t)start, VPT_SPACE_ALL_DIMS & ~(1u << VPT_DIM_SCHEDULE), nb,
                                       VPT_SPACE_MAX_NEIGHBOURS);
    const long cap = vpt_space_register_cap(s, (size_t)start, r.evals[0].registers);
    if (cap >= 0) nb[n++] = (size_t)cap;
    REQUIRE(n > 0 && n + 1 <= r.n_evals);
    for (size_t i = 1; i <= n; i++) {
        long m = vpt_space_index_of(s, &r.evals[i].config);
        int found = 0;
        for (size_t j = 0; j < n; j++) found |= (long)nb[j] == m;
        CHECK_MSG(found, "evaluation %zu is not a parameter move from the start", i);
    }
    vpt_search_result_free(&r);
    vpt_space_destroy(s);
}

TEST(tuner_search_names)
{
    for (int k = 0; k < VPT_STRATEGY_COUNT; k++) {
        VptStrategy back;
        CHECK(vpt_strategy_parse(vpt_strategy_name((VptStrategy)k), &back) == 0 && (int)back == k);
    }
    VptStrategy x;
    CHECK(vpt_strategy_parse("bayes", &x) == -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), "annealing");
    for (int st = 0; st < VPT_STATUS_COUNT; st++) {
        VptStatus back;
        CHECK(vpt_status_parse(vpt_status_name((VptStatus)st), &back) == 0 && (int)back == st);
    }
}

typedef struct {
    VptConfig cfg[2048];
    int fidelity[2048];
    size_t n;
} Hints;

static void record_hints(void *user, const VptConfig *c, size_t n, int fidelity)
{
    Hints *h = user;
    for (size_t i = 0; i < n && h->n < 2048; i++) {
        h->cfg[h->n] = c[i];
        h->fidelity[h->n++] = fidelity;
    }
}

typedef struct {
    TdCtx td;
    const Hints *hints;
    size_t unhinted;
} HintCheck;

/* The test double, counting the evaluations that were not announced first. */
static int checking_evaluate(void *ctx, const VptConfig *c, int fidelity, VptEvalRecord *out)
{
    HintCheck *hc = ctx;
    int found = 0;
    for (size_t i = 0; i < hc->hints->n && !found; i++)
        found = hc->hints->fidelity[i] == fidelity && vpt_config_equal(&hc->hints->cfg[i], c);
    hc->unhinted += !found;
    return td_evaluate(&hc->td, c, fidelity, out);
}

TEST(tuner_search_prefetch_hints_never_change_the_search)
{
    VptSpace *s = vpt_space_create();
    REQUIRE(s);
    static Hints hints;
    for (int k = 0; k < VPT_STRATEGY_COUNT; k++) {
        VptSearchOptions o = opts((VptStrategy)k, 21, 70, 0);
        o.ga_population = 10;
        VptSearchResult plain, hinted;
        TdCtx td = {0};
        REQUIRE(vpt_search_run(s, td_evaluate, &td, NULL, &o, &plain) == 0);
        memset(&hints, 0, sizeof hints);
        HintCheck hc = {.hints = &hints};
        o.prefetch = record_hints;
        o.prefetch_user = &hints;
        REQUIRE(vpt_search_run(s, checking_evaluate, &hc, NULL, &o, &hinted) == 0);
        CHECK_MSG(same_trajectory(&plain, &hinted), "%s: hints changed the search", vpt_strategy_name(k));
        switch (k) {
        case VPT_STRATEGY_ANNEALING:
            CHECK_EQ_INT(hints.n, 0);
            break;
        case VPT_STRATEGY_LOCAL:
            CHECK(hints.n > 0);
            CHECK_MSG(hc.unhinted * 2 < hinted.n_evals, "local: %zu of %zu evaluations unannounced", hc.unhinted,
                      hinted.n_evals);
            break;
        default:
            CHECK_MSG(hc.unhinted == 0, "%s: %zu evaluations unannounced", vpt_strategy_name(k), hc.unhinted);
            CHECK_MSG(hints.n <= 70, "%s: %zu announced for a budget of 70", vpt_strategy_name(k), hints.n);
        }
        vpt_search_result_free(&plain);
        vpt_search_result_free(&hinted);
    }
    vpt_space_destroy(s);
}

/* Cooperative flights in the shape measured on manix on an H100: coop=2
 * slower than none, coop=4 the fastest. A descent that stepped only to the
 * adjacent coop value would never leave coop=0; coop is categorical, so one
 * descent from the prior reaches coop=4. */
static int coop_evaluate(void *ctx, const VptConfig *c, int fidelity, VptEvalRecord *out)
{
    if (td_evaluate(ctx, c, fidelity, out)) return -1;
    if (out->status == VPT_STATUS_OK) out->time_ms *= c->coop == 2 ? 1.2 : c->coop == 4 ? 0.8 : c->coop == 8 ? 1.1 : 1.0;
    return 0;
}

TEST(tuner_search_descends_to_coop_past_a_slower_neighbour)
{
    VptSpace *s = vpt_space_create();
    REQUIRE(s);
    TdCtx ctx = {0};
    VptSearchOptions o = opts(VPT_STRATEGY_LOCAL, 3, 2000, 0);
    o.max_descents = 1;
    VptSearchResult r;
    REQUIRE(vpt_search_run(s, coop_evaluate, &ctx, NULL, &o, &r) == 0);
    REQUIRE(r.found);
    CHECK_MSG(r.best.config.coop == 4, "one descent from the prior ended at coop=%d", r.best.config.coop);
    vpt_search_result_free(&r);
    vpt_space_destroy(s);
}

/* Registers in the double's shape on a real GPU: uncapped, the kernel uses
 * 90; a cap from 80 up to 90 lifts occupancy (0.8 of the time), one below
 * 64 spills (1.5). The domain's step from no cap reaches only 32, so a
 * descent that moved only along the domain would stay uncapped. */
static int register_evaluate(void *ctx, const VptConfig *c, int fidelity, VptEvalRecord *out)
{
    VptConfig uncapped = *c;
    uncapped.maxrregcount = 0;
    if (td_evaluate(ctx, &uncapped, fidelity, out)) return -1;
    out->config = *c;
    if (out->status != VPT_STATUS_OK) return 0;
    const int cap = c->maxrregcount;
    out->registers = cap > 0 && cap < 90 ? cap : 90;
    out->time_ms *= cap == 0 || cap >= 90 ? 1.0 : cap >= 80 ? 0.8 : cap >= 64 ? 0.9 : 1.5;
    return 0;
}

TEST(tuner_search_descends_to_the_cap_below_the_kernels_registers)
{
    VptSpace *s = vpt_space_create();
    REQUIRE(s);
    TdCtx ctx = {0};
    VptSearchOptions o = opts(VPT_STRATEGY_LOCAL, 3, 2000, 0);
    o.max_descents = 1;
    VptSearchResult r;
    REQUIRE(vpt_search_run(s, register_evaluate, &ctx, NULL, &o, &r) == 0);
    REQUIRE(r.found);
    CHECK_MSG(r.best.config.maxrregcount == 80, "one descent from the prior ended at maxrregcount=%d",
              r.best.config.maxrregcount);
    vpt_search_result_free(&r);
    vpt_space_destroy(s);
}

/* A basin two moves wide, in the shape the manix tunes on an H200 showed:
 * without cooperative flights the kernel wants 72 registers, with coop=4 it
 * wants 96; a cap of 64 (or block 1024 uncapped, whose launch bound is 64)
 * holds either to 64 registers. Capped at 64, coop=4
 * measures a little slower than none; with a cap of 80 it is the fastest
 * (occupancy kept, lanes fed); uncapped, 96 registers cost occupancy. Moves
 * of the estimator and of the lookahead cost 3%, so that the descent stands
 * at (cap 64, no coop) where every one-move neighbour is slower. */
static int lift_evaluate(void *ctx, const VptConfig *c, int fidelity, VptEvalRecord *out)
{
    VptConfig plain = *c;
    plain.maxrregcount = 0;
    plain.coop = 0;
    if (plain.block == 1024) plain.block = 512; /* the double refuses uncapped block 1024 */
    if (td_evaluate(ctx, &plain, fidelity, out)) return -1;
    out->config = *c;
    if (out->status != VPT_STATUS_OK) return 0;
    const int bound = c->maxrregcount ? c->maxrregcount : 65536 / c->block, demand = c->coop == 4 ? 96 : 72;
    const int regs = bound < demand ? bound : demand;
    double f = regs < 64 ? 1.3 : regs == 64 ? (c->coop == 4 ? 1.004 : 1.0) : regs <= 80 ? (c->coop == 4 ? 0.94 : 1.02) : 1.05;
    if (c->coop == 2 || c->coop == 8) f *= 1.1;
    if (c->majorant != 0 || c->density != VPT_DENSITY_F32 || c->lookahead != 4) f *= 1.03;
    out->registers = regs;
    out->time_ms *= f;
    return 0;
}

TEST(tuner_search_lifts_the_cap_of_a_move_it_held)
{
    VptSpace *s = vpt_space_create();
    REQUIRE(s);
    static const char *const starts[] = {"regenerationSK-warp,threshold=50,block=128,lookahead=4,maxrregcount=64",
                                         "regenerationSK-warp,threshold=50,block=1024,lookahead=4"};
    for (uint64_t seed = 1; seed <= 6; seed++) {
        VptConfig start;
        REQUIRE(vpt_config_parse(starts[seed % 2], &start) == 0);
        REQUIRE(vpt_space_index_of(s, &start) >= 0);
        TdCtx ctx = {0};
        VptSearchOptions o = opts(VPT_STRATEGY_LOCAL, seed, 4000, 0);
        o.max_descents = 1;
        o.no_prior = 1;
        o.starts = &start;
        o.n_starts = 1;
        o.random_starts = 0;
        VptSearchResult r;
        REQUIRE(vpt_search_run(s, lift_evaluate, &ctx, NULL, &o, &r) == 0);
        REQUIRE(r.found);
        CHECK_MSG(r.best.config.coop == 4 && r.best.config.maxrregcount == 80,
                  "seed %llu: one descent from %s ended at coop=%d, maxrregcount=%d", (unsigned long long)seed,
                  starts[seed % 2], r.best.config.coop, r.best.config.maxrregcount);
        vpt_search_result_free(&r);
    }
    vpt_space_destroy(s);
}
