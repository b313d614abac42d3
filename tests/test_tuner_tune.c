/* The tune driver and the T4 export, end to end on the test double. */
#include "tests/harness/test.h"
#include "tests/test_tuner_double.h"

#include "base/error.h"
#include "base/file.h"
#include "tuner/cache.h"
#include "tuner/estimators.h"
#include "tuner/t4.h"
#include "tuner/tune.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int calls;
    size_t n;
    VptConfig seen[16];
} Remeasure;

/* Re-measures in reverse order of the search's ranking, by making the
 * search's best slower: the driver must rank by the new times. */
static int remeasure_reversed(void *ctx, const VptConfig *cfgs, size_t n, VptEvalRecord *out)
{
    Remeasure *rm = ctx;
    rm->calls++;
    rm->n = n;
    for (size_t i = 0; i < n && i < 16; i++) {
        rm->seen[i] = cfgs[i];
        td_fill(&cfgs[i], 1, &out[i]);
        out[i].time_ms = 10.0 - (double)i; /* the last finalist becomes the fastest */
    }
    return 0;
}

TEST(tuner_tune_run_end_to_end)
{
    VptSpace *s = vpt_space_create();
    REQUIRE(s);
    char cache_path[600], progress_path[600], report_path[600], t4_path[600];
    snprintf(cache_path, sizeof cache_path, "%s/tune.jsonl", vpt_test_tmpdir());
    snprintf(progress_path, sizeof progress_path, "%s/progress.txt", vpt_test_tmpdir());
    snprintf(report_path, sizeof report_path, "%s/report.txt", vpt_test_tmpdir());
    snprintf(t4_path, sizeof t4_path, "%s/t4.json", vpt_test_tmpdir());
    VptTuneProvenance prov = td_provenance();
    VptCache *cache = vpt_cache_open(cache_path, &prov, VPT_CACHE_NOSYNC);
    REQUIRE(cache);
    FILE *progress = fopen(progress_path, "w"), *report = fopen(report_path, "w");
    REQUIRE(progress && report);
    TdCtx ctx = {0};
    Remeasure rm = {0};
    VptTuneOptions o;
    vpt_tune_options_init(&o);
    o.space = s;
    o.evaluate = td_evaluate;
    o.evaluate_ctx = &ctx;
    o.cache = cache;
    o.search.strategy = VPT_STRATEGY_GENETIC;
    o.search.max_evals = 60;
    o.top_k = 5;
    o.progress = progress;
    o.report = report;
    o.remeasure = remeasure_reversed;
    o.remeasure_ctx = &rm;
    VptTuneResult r;
    REQUIRE_MSG(vpt_tune_run(&o, &r) == 0, "%s", vpt_errmsg());
    fclose(progress);
    fclose(report);
    CHECK_EQ_INT(r.search.n_evals, 60);
    CHECK_EQ_INT(vpt_cache_count(cache), 60);
    /* finalists: the search's 5 best, re-measured and re-ranked */
    CHECK_EQ_INT(rm.calls, 1);
    CHECK_EQ_INT(rm.n, 5);
    CHECK(vpt_config_equal(&rm.seen[0], &r.search.best.config));
    REQUIRE(r.have_winner);
    CHECK(vpt_config_equal(&r.winner.config, &rm.seen[4]));
    CHECK(r.winner.time_ms == 6.0);
    CHECK_EQ_INT(r.n_top, 5);
    for (size_t i = 1; i < r.n_top; i++) CHECK(r.top[i - 1].time_ms <= r.top[i].time_ms);

    char *text;
    size_t size;
    REQUIRE(vpt_read_file(progress_path, 1 << 20, &text, &size) == 0);
    CHECK_STR_CONTAINS(text, "[tune genetic] 60 evals (0 cached)");
    CHECK_STR_CONTAINS(text, "stopped: budget reached");
    CHECK_STR_CONTAINS(text, "ETA 0s");
    free(text);
    REQUIRE(vpt_read_file(report_path, 1 << 20, &text, &size) == 0);
    char winner[VPT_CONFIG_STR_MAX];
    vpt_config_format(&r.winner.config, winner, sizeof winner);
    CHECK_STR_CONTAINS(text, "finalists re-measured");
    CHECK_STR_CONTAINS(text, winner);
    CHECK_STR_CONTAINS(text, "   1     6.0000");
    free(text);

    /* T4 export of the cache: valid JSON, one result per evaluation */
    size_t n = vpt_cache_count(cache);
    VptEvalRecord *recs = malloc(n * sizeof *recs);
    REQUIRE(recs);
    for (size_t i = 0; i < n; i++) recs[i] = *vpt_cache_record(cache, i);
    REQUIRE_MSG(vpt_t4_write(t4_path, recs, n) == 0, "%s", vpt_errmsg());
    json_error_t jerr;
    json_t *root = json_load_file(t4_path, 0, &jerr);
    REQUIRE_MSG(root, "T4 export is not JSON: %s", jerr.text);
    CHECK(strcmp(json_string_value(json_object_get(root, "schema_version")), "1.0.0") == 0);
    json_t *results = json_object_get(root, "results");
    REQUIRE(json_is_array(results));
    CHECK_EQ_INT(json_array_size(results), n);
    const char *allowed[] = {"timeout", "compile", "runtime", "correctness", "constraints", "correct"};
    int saw_failure = 0;
    for (size_t i = 0; i < json_array_size(results); i++) {
        json_t *e = json_array_get(results, i);
        /* the schema's required keys */
        CHECK(json_is_object(json_object_get(e, "configuration")));
        CHECK(json_is_object(json_object_get(e, "times")));
        CHECK(json_is_number(json_object_get(e, "correctness")));
        const char *inv = json_string_value(json_object_get(e, "invalidity"));
        REQUIRE(inv);
        int known = 0;
        for (int k = 0; k < 6; k++) known |= strcmp(inv, allowed[k]) == 0;
        CHECK(known);
        CHECK(strcmp(inv, vpt_t4_invalidity(recs[i].status)) == 0);
        saw_failure |= strcmp(inv, "correct") != 0;
        json_t *cfg = json_object_get(e, "configuration");
        CHECK_EQ_INT(json_object_size(cfg), 17); /* every config field, paths, majorant, density, volume and transmittance */
        CHECK(strcmp(json_string_value(json_object_get(cfg, "volume")), vpt_volume_name(recs[i].config.sparse)) == 0);
        CHECK_EQ_INT(json_integer_value(json_object_get(cfg, "block")), recs[i].config.block);
        CHECK(strcmp(json_string_value(json_object_get(cfg, "regen")), vpt_regen_name(recs[i].config.regen)) == 0);
        json_t *runtimes = json_object_get(json_object_get(e, "times"), "runtimes");
        REQUIRE(json_is_array(runtimes));
        if (recs[i].status == VPT_STATUS_OK) {
            CHECK_EQ_INT(json_array_size(runtimes), 1);
            CHECK(json_real_value(json_array_get(runtimes, 0)) == recs[i].time_ms);
        } else {
            CHECK_EQ_INT(json_array_size(runtimes), 0);
        }
        CHECK(strcmp(json_string_value(json_array_get(json_object_get(e, "objectives"), 0)), "time") == 0);
        CHECK(strcmp(json_string_value(json_object_get(e, "timestamp")), recs[i].time) == 0);
    }
    CHECK(saw_failure); /* the double fails some configs: they are exported too */
    json_decref(root);
    /* straight from the cache: the same document */
    char t4_cache[600];
    snprintf(t4_cache, sizeof t4_cache, "%s/t4-cache.json", vpt_test_tmpdir());
    REQUIRE(vpt_t4_write_cache(t4_cache, cache) == 0);
    char *a, *b;
    size_t na, nb;
    REQUIRE(vpt_read_file(t4_path, 1 << 24, &a, &na) == 0 && vpt_read_file(t4_cache, 1 << 24, &b, &nb) == 0);
    CHECK(na == nb && memcmp(a, b, na) == 0);
    free(a);
    free(b);
    free(recs);
    vpt_tune_result_free(&r);
    vpt_cache_close(cache);
    vpt_space_destroy(s);
}

TEST(tuner_tune_without_remeasure_ranks_the_search)
{
    VptSpace *s = vpt_space_create();
    REQUIRE(s);
    TdCtx ctx = {0};
    VptTuneOptions o;
    td_local_tune(&o, s, td_evaluate, &ctx, 40, NULL, NULL);
    VptTuneResult r;
    REQUIRE(vpt_tune_run(&o, &r) == 0);
    REQUIRE(r.have_winner);
    CHECK(r.winner.time_ms == r.search.best.time_ms);
    CHECK(vpt_config_equal(&r.winner.config, &r.search.best.config));
    CHECK(r.n_top <= 10);
    vpt_tune_result_free(&r);
    /* an evaluator failure: -1 with the message, what was found kept */
    TdCtx failing = {.fail_after = 4};
    o.evaluate_ctx = &failing;
    CHECK(vpt_tune_run(&o, &r) == -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), "GPU lost");
    CHECK_EQ_INT(r.search.n_evals, 4);
    vpt_tune_result_free(&r);
    vpt_space_destroy(s);
}

/* A sun's scene as the evaluator measures it: every record carries its
 * transmittance estimator's variance over ratio tracking's
 * (equal_error_factor). In this double delta tracking is the fastest per
 * image and the noisiest (0.6 of ratio tracking's time, three times its
 * variance), residual ratio tracking the best at equal error (1.1 of the
 * time, 0.7 of the variance). */
static int sun_evaluate(void *ctx, const VptConfig *c, int fidelity, VptEvalRecord *out)
{
    if (td_evaluate(ctx, c, fidelity, out)) return -1;
    const VptTransmittance t = c->transmittance == VPT_TRANSMITTANCE_NONE ? VPT_TRANSMITTANCE_RATIO : c->transmittance;
    if (out->status != VPT_STATUS_OK) return 0;
    out->time_ms *= t == VPT_TRANSMITTANCE_DELTA ? 0.6 : t == VPT_TRANSMITTANCE_RESIDUAL ? 1.1 : 1.0;
    out->equal_error_factor = t == VPT_TRANSMITTANCE_DELTA ? 3.0 : t == VPT_TRANSMITTANCE_RESIDUAL ? 0.7 : 1.0;
    return 0;
}

TEST(tuner_tune_screens_the_transmittance_at_equal_error)
{
    VptSpace *s = vpt_space_create();
    REQUIRE(s);
    TdCtx ctx = {0};
    VptTuneOptions o;
    VptEstimator est[VPT_ESTIMATORS_MAX];
    td_local_tune(&o, s, sun_evaluate, &ctx, 40, "global:f32,global:u8", est);
    REQUIRE(o.n_estimators == 2);
    VptTuneResult r;
    REQUIRE(vpt_tune_run(&o, &r) == 0);
    REQUIRE(r.have_winner);
    /* the fastest per image (delta) loses at equal error */
    CHECK_EQ_INT(r.winner.config.transmittance, VPT_TRANSMITTANCE_RESIDUAL);
    int delta = 0, residual = 0;
    for (size_t i = 0; i < r.search.n_evals; i++) {
        delta += r.search.evals[i].config.transmittance == VPT_TRANSMITTANCE_DELTA;
        residual += r.search.evals[i].config.transmittance == VPT_TRANSMITTANCE_RESIDUAL;
    }
    CHECK(delta >= 1);
    CHECK_MSG(residual > 10, "the search after the screening ran with residual ratio tracking: %d records", residual);
    /* the table ranks by the time to equal error, and shows it */
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    REQUIRE(f);
    vpt_tune_print_top(f, r.search.evals, r.search.n_evals, 3);
    fclose(f);
    CHECK_STR_CONTAINS(buf, "eq_err_ms");
    char want[64];
    snprintf(want, sizeof want, "   1 %10.4f %10.4f", r.winner.time_ms, vpt_eval_objective(&r.winner));
    CHECK_MSG(strstr(buf, want) != NULL, "rank 1 is not the winner at equal error (%s):\n%s", want, buf);
    free(buf);
    vpt_tune_result_free(&r);
    /* no sun (no factor): nothing screened, no record names an estimator */
    o.evaluate = td_evaluate;
    REQUIRE(vpt_tune_run(&o, &r) == 0);
    for (size_t i = 0; i < r.search.n_evals; i++) CHECK(r.search.evals[i].config.transmittance == VPT_TRANSMITTANCE_NONE);
    f = open_memstream(&buf, &len);
    REQUIRE(f);
    vpt_tune_print_top(f, r.search.evals, r.search.n_evals, 3);
    fclose(f);
    CHECK_MSG(strstr(buf, "eq_err_ms") == NULL, "a table without a sun shows no time to equal error:\n%s", buf);
    free(buf);
    vpt_tune_result_free(&r);
    vpt_space_destroy(s);
}

/* A large volume as the evaluator measures it: every config that names an
 * estimator other than the first search's costs 5 s (a new kernel, a new
 * texture, slow images). */
static int costly_estimators_evaluate(void *ctx, const VptConfig *c, int fidelity, VptEvalRecord *out)
{
    if (td_evaluate(ctx, c, fidelity, out)) return -1;
    if (c->majorant != 0 || c->density != VPT_DENSITY_F32) out->cost_s = 5.0;
    return 0;
}

/* The estimator screening is charged to the budget and stops with it: with
 * 32 estimators at 5 s each, a whole screening would take the 40 s budget
 * twice over. What may overrun: the member started last, and the path
 * order's screening after it (one or two members), as any evaluation
 * started under budget may. */
TEST(tuner_tune_screening_stops_at_the_budget)
{
    VptSpace *s = vpt_space_create();
    REQUIRE(s);
    TdCtx ctx = {0};
    VptTuneOptions o;
    VptEstimator est[VPT_ESTIMATORS_MAX];
    td_local_tune(&o, s, costly_estimators_evaluate, &ctx, 40, "all", est);
    REQUIRE(o.n_estimators == VPT_ESTIMATORS_ALL);
    VptTuneResult r;
    REQUIRE_MSG(vpt_tune_run(&o, &r) == 0, "%s", vpt_errmsg());
    REQUIRE(r.have_winner);
    size_t screened = 0;
    for (size_t i = 0; i < r.search.n_evals; i++)
        screened += r.search.evals[i].config.majorant != 0 ||
                    r.search.evals[i].config.density != VPT_DENSITY_F32;
    CHECK_MSG(screened >= 2, "the screening measured %zu estimators", screened);
    CHECK_MSG(r.search.seconds <= 40 + 3 * 5.0, "%.1f s charged for a 40 s budget (%zu estimator records)",
              r.search.seconds, screened);
    vpt_tune_result_free(&r);
    vpt_space_destroy(s);
}

/* A screening the budget cuts short has tried each kind of estimator: on
 * the first round (around global:f32) another format, a grid and skip come
 * before a second format or a second grid, so skip, last in the list, is
 * not the kind left out (vpt_estimators_screen). */
TEST(tuner_tune_screening_cut_short_tries_every_kind)
{
    VptSpace *s = vpt_space_create();
    REQUIRE(s);
    TdCtx ctx = {0};
    VptTuneOptions o;
    VptEstimator est[VPT_ESTIMATORS_MAX];
    td_local_tune(&o, s, costly_estimators_evaluate, &ctx, 40, "all", est);
    VptTuneResult r;
    REQUIRE_MSG(vpt_tune_run(&o, &r) == 0, "%s", vpt_errmsg());
    size_t formats = 0, grids = 0, skips = 0;
    for (size_t i = 0; i < r.search.n_evals; i++) {
        const VptConfig *c = &r.search.evals[i].config;
        formats += c->majorant == 0 && c->density != VPT_DENSITY_F32;
        grids += c->majorant > 0;
        skips += c->majorant < 0;
    }
    CHECK_MSG(formats + grids + skips < VPT_ESTIMATORS_ALL - 1, "the screening was not cut short: %zu members",
              formats + grids + skips);
    CHECK_MSG(formats >= 1 && grids >= 1 && skips >= 1,
              "a kind left out: %zu other formats, %zu grids, %zu skip records", formats, grids, skips);
    vpt_tune_result_free(&r);
    vpt_space_destroy(s);
}

/* Grids of 64-voxel cells the fastest on every schedule, their neighbours
 * 32 and 128 more than the contenders' margin behind. */
static int grid64_evaluate(void *ctx, const VptConfig *c, int fidelity, VptEvalRecord *out)
{
    if (td_evaluate(ctx, c, fidelity, out)) return -1;
    out->time_ms *= c->majorant == 64 ? 0.5 : c->majorant == 0 ? 1.0 : 2.0;
    return 0;
}

/* The last screening measures the winner's grid neighbours on the final
 * best, though they were never contenders (vpt_estimators_cell_neighbours). */
TEST(tuner_tune_last_screening_measures_the_winners_grid_neighbours)
{
    VptSpace *s = vpt_space_create();
    REQUIRE(s);
    TdCtx ctx = {0};
    VptTuneOptions o;
    VptEstimator est[VPT_ESTIMATORS_MAX];
    td_local_tune(&o, s, grid64_evaluate, &ctx, 60, "global:f32,grid32:f32,grid64:f32,grid128:f32", est);
    REQUIRE(o.n_estimators == 4);
    VptTuneResult r;
    REQUIRE_MSG(vpt_tune_run(&o, &r) == 0, "%s", vpt_errmsg());
    REQUIRE(r.have_winner);
    CHECK_EQ_INT(r.search.best.config.majorant, 64);
    for (int cells = 32; cells <= 128; cells *= 4) {
        VptConfig nb = r.search.best.config;
        nb.majorant = cells;
        int found = 0;
        for (size_t i = 0; i < r.search.n_evals; i++) found |= vpt_config_equal(&r.search.evals[i].config, &nb);
        CHECK_MSG(found, "grid%d was not measured on the final best", cells);
    }
    vpt_tune_result_free(&r);
    vpt_space_destroy(s);
}

/* A tune pays for a measurement once: the searches after the estimator
 * screening revisit configs the first search measured, and the cache
 * answers them; those answers are charged nothing
 * (VptSearchOptions.paid), so what the whole tune charges is the sum of
 * the costs of the distinct configs it took (docs/decisions/a-tune-pays-once.md). */
TEST(tuner_tune_pays_for_a_measurement_once)
{
    char path[512];
    snprintf(path, sizeof path, "%s/pays-once.jsonl", vpt_test_tmpdir());
    remove(path);
    VptTuneProvenance prov = td_provenance();
    VptCache *cache = vpt_cache_open(path, &prov, VPT_CACHE_NOSYNC);
    REQUIRE_MSG(cache, "%s", vpt_errmsg());
    VptSpace *s = vpt_space_create();
    REQUIRE(s);
    TdCtx ctx = {0};
    VptTuneOptions o;
    VptEstimator est[VPT_ESTIMATORS_MAX];
    td_local_tune(&o, s, td_evaluate, &ctx, 120, "all", est);
    o.cache = cache;
    o.remeasure = 0;
    VptTuneResult r;
    REQUIRE_MSG(vpt_tune_run(&o, &r) == 0, "%s", vpt_errmsg());
    double distinct_s = 0;
    size_t distinct = 0, taken_again = 0;
    for (size_t i = 0; i < r.search.n_evals; i++) {
        const VptEvalRecord *a = &r.search.evals[i];
        int seen = 0;
        for (size_t j = 0; j < i && !seen; j++)
            seen = r.search.evals[j].fidelity == a->fidelity && vpt_config_equal(&r.search.evals[j].config, &a->config);
        if (seen) {
            taken_again++;
            continue;
        }
        distinct++;
        distinct_s += isfinite(a->cost_s) && a->cost_s > 0 ? a->cost_s : 0;
    }
    CHECK_MSG(taken_again > 0, "no search took a config again (%zu records): the test shows nothing", r.search.n_evals);
    CHECK_MSG(fabs(r.search.seconds - distinct_s) <= 1e-6 * distinct_s,
              "%.4f s charged for %zu distinct configs costing %.4f s (%zu records taken again)", r.search.seconds,
              distinct, distinct_s, taken_again);
    CHECK_MSG(ctx.calls == (long)distinct, "%ld evaluator calls for %zu distinct configs", ctx.calls, distinct);
    vpt_tune_result_free(&r);
    vpt_space_destroy(s);
    vpt_cache_close(cache);
}

/* The first evaluation with each estimator costs 4 s more than it would
 * later (a cold compile of its kernel, its texture made): so the last
 * screening's reserve, priced at the first screening's cost per contender,
 * is several times what the last screening takes. */
typedef struct {
    TdCtx td;
    unsigned char warm[VPT_MAJORANT_COUNT][VPT_DENSITY_FORMAT_COUNT];
} ColdCtx;

static int cold_estimators_evaluate(void *ctx, const VptConfig *c, int fidelity, VptEvalRecord *out)
{
    ColdCtx *x = ctx;
    if (td_evaluate(&x->td, c, fidelity, out)) return -1;
    int m = 0;
    const int *cells;
    const int nm = vpt_majorant_cells(&cells);
    while (m < nm && cells[m] != c->majorant) m++;
    if (m < nm && !x->warm[m][c->density]) {
        x->warm[m][c->density] = 1;
        out->cost_s += 4.0;
    }
    return 0;
}

/* What the last screening's reserve leaves goes to one more search from
 * the best (tuner/tune.c: leftover_descent), so a time budget is spent to
 * within about one evaluation, the finish included. */
TEST(tuner_tune_spends_what_the_last_screening_left)
{
    VptSpace *s = vpt_space_create();
    REQUIRE(s);
    ColdCtx ctx = {0};
    VptTuneOptions o;
    VptEstimator est[VPT_ESTIMATORS_MAX];
    td_local_tune(&o, s, cold_estimators_evaluate, &ctx.td, 120, "global:f32,global:u8,grid16:u8,grid32:u8,grid64:u8",
                  est);
    o.evaluate_ctx = &ctx;
    VptTuneResult r;
    REQUIRE_MSG(vpt_tune_run(&o, &r) == 0, "%s", vpt_errmsg());
    REQUIRE(r.have_winner);
    double max_cost = 0;
    for (size_t i = 0; i < r.search.n_evals; i++)
        if (r.search.evals[i].cost_s > max_cost && r.search.evals[i].cost_s < 4) max_cost = r.search.evals[i].cost_s;
    const double used = r.search.seconds + r.finish.total_s;
    CHECK_MSG(used >= 120 - 2 * max_cost, "%.1f s charged and %.1f s for the finish of a 120 s budget (an evaluation "
              "costs up to %.1f s warm)", r.search.seconds, r.finish.total_s, max_cost);
    vpt_tune_result_free(&r);
    vpt_space_destroy(s);
}

/* The double with naiveMK as it measures on manix: far slower than every
 * other schedule (a hundred times the double's time) and costly to
 * measure (twenty times its cost). */
enum { NAIVE_MK = 1 };
static int slow_naive_mk_evaluate(void *ctx, const VptConfig *c, int fidelity, VptEvalRecord *out)
{
    if (td_evaluate(ctx, c, fidelity, out)) return -1;
    if (vpt_config_schedule_index(c) != NAIVE_MK || out->status != VPT_STATUS_OK) return 0;
    out->time_ms *= 100;
    out->cost_s *= 20;
    return 0;
}

/* naiveMK's evaluations, and the most of them under one estimator. */
static size_t naive_mk_evals(const VptSearchResult *r, size_t *most)
{
    VptEstimator seen[VPT_ESTIMATORS_MAX];
    size_t count[VPT_ESTIMATORS_MAX] = {0}, n_seen = 0, all = 0;
    *most = 0;
    for (size_t i = 0; i < r->n_evals; i++) {
        if (vpt_config_schedule_index(&r->evals[i].config) != NAIVE_MK) continue;
        all++;
        const VptEstimator e = vpt_estimator_of(&r->evals[i].config);
        size_t k = 0;
        while (k < n_seen && !vpt_estimator_equal(&seen[k], &e)) k++;
        if (k == n_seen) seen[n_seen++] = e;
        if (++count[k] > *most) *most = count[k];
    }
    return all;
}

/* A tune moves to a schedule no more once its records under the search's
 * estimator show it prune x prune times slower than the best: naiveMK is
 * measured at most once per estimator, where with pruning off the
 * schedule moves measure it again at every local optimum. */
TEST(tuner_tune_schedule_moves_leave_out_a_far_slower_schedule)
{
    size_t n[2], most[2];
    for (int pruned = 1; pruned >= 0; pruned--) {
        VptSpace *s = vpt_space_create();
        REQUIRE(s);
        TdCtx ctx = {0};
        VptEstimator est[VPT_ESTIMATORS_MAX];
        VptTuneOptions o;
        td_local_tune(&o, s, slow_naive_mk_evaluate, &ctx, 600, "global:f32,global:u8,grid8:f32,grid8:u8", est);
        if (!pruned) o.search.prune = 0;
        VptTuneResult r;
        REQUIRE_MSG(vpt_tune_run(&o, &r) == 0, "%s", vpt_errmsg());
        n[pruned] = naive_mk_evals(&r.search, &most[pruned]);
        vpt_test_log("prune %s: %zu evaluations, %zu of naiveMK (at most %zu under one estimator)",
                     pruned ? "on" : "off", r.search.n_evals, n[pruned], most[pruned]);
        vpt_tune_result_free(&r);
        vpt_space_destroy(s);
    }
    REQUIRE_MSG(n[0] > most[0] && most[0] > 1, "with pruning off naiveMK was measured %zu times (at most %zu under one "
                "estimator): the test says nothing", n[0], most[0]);
    CHECK_MSG(most[1] <= 1, "naiveMK measured %zu times under one estimator", most[1]);
    CHECK_MSG(n[1] < n[0], "naiveMK measured %zu times with the schedule moves pruned, %zu without", n[1], n[0]);
}
