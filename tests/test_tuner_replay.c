/* The replay evaluator and the scoring arithmetic, on small recordings
 * written by the test (the recorded GPU run is test_tuner_fixture.c's). */
#include "tests/harness/test.h"
#include "tests/test_tuner_double.h"

#include "base/error.h"
#include "base/file.h"
#include "tuner/eval.h"
#include "tuner/score.h"
#include "tuner/search.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* One harness result row (vptune.result/1) for c, timed by the test double. */
static void result_row(FILE *f, const VptConfig *c, int fidelity, int write_fidelity, const char *commit)
{
    VptEvalRecord r;
    vpt_eval_record_init(&r, c, fidelity);
    td_fill(c, fidelity, &r);
    char text[VPT_CONFIG_STR_MAX];
    vpt_config_format(c, text, sizeof text);
    fprintf(f,
            "{\"kind\":\"result\",\"schema\":\"vptune.result/1\",\"gpu\":{\"name\":\"NVIDIA H100 80GB HBM3\","
            "\"uuid\":\"GPU-1234\",\"sm_count\":132,\"cc\":\"9.0\",\"driver\":\"580.159.04\","
            "\"cuda_driver_version\":13000},\"nvrtc\":\"13.0\",\"commit\":\"%s\",\"scene\":\"manix\","
            "\"workload\":{\"width\":400,\"height\":400,\"spp\":100,\"seed\":1,\"max_depth\":0,\"rr_depth\":-1},"
            "\"config\":\"%s\",\"schedule\":\"%s\",\"status\":\"%s\",\"reason\":\"%s\",",
            commit, text, vpt_config_schedule_name(c), vpt_status_name(r.status), r.reason);
    if (write_fidelity) fprintf(f, "\"fidelity\":%d,", fidelity);
    fprintf(f, "\"metrics\":{\"compile_s\":%.17g", r.compile_s);
    if (r.status == VPT_STATUS_OK)
        fprintf(f, ",\"time_ms\":%.17g,\"time_ms_spread\":%.17g,\"reps\":15,\"mrays_per_s\":%.17g,\"measure_s\":%.17g",
                r.time_ms, r.time_ms_spread, r.mrays_per_s, r.measure_s);
    fprintf(f, "},\"time\":\"2025-06-01T10:00:00Z\"}\n");
}

static VptSpace *small_space(void)
{
    VptSpace *s = vpt_space_create();
    if (!s || vpt_space_restrict(s, "schedule", "streamingSK,regenerationSK-warp,naiveSK") ||
        vpt_space_restrict(s, "ppt", "1,2") || vpt_space_restrict(s, "block", "128,256,1024") ||
        vpt_space_restrict(s, "grid", "0,2")) {
        vpt_space_destroy(s);
        return NULL;
    }
    return s;
}

/* A recording of every member of small_space() at full fidelity, plus a
 * recorded cheap row for every fifth one. */
static void write_recording(const char *path, const VptSpace *s)
{
    FILE *f = fopen(path, "w");
    REQUIRE(f);
    fprintf(f, "{\"kind\":\"note\",\"text\":\"lines of other kinds are skipped\"}\n\n");
    for (size_t i = 0; i < vpt_space_size(s); i++) {
        result_row(f, vpt_space_point(s, i), 1, i % 2, "abc");
        if (i % 5 == 0) result_row(f, vpt_space_point(s, i), 0, 1, "abc");
    }
    /* a config recorded twice (a re-measured finalist): the first row counts */
    VptConfig c = *vpt_space_point(s, 1);
    fprintf(f,
            "{\"kind\":\"result\",\"schema\":\"vptune.result/1\",\"gpu\":{\"uuid\":\"GPU-1234\"},\"nvrtc\":\"13.0\","
            "\"commit\":\"abc\",\"scene\":\"manix\",\"workload\":{\"width\":400,\"height\":400,\"spp\":100,"
            "\"seed\":1,\"max_depth\":0,\"rr_depth\":-1},\"config\":\"%s,maxrregcount=%d,ppt=%d,block=%d,grid=%d,"
            "threshold=%d,sortkey=%s,lookahead=%d\",\"status\":\"ok\",\"metrics\":{\"time_ms\":1e-9}}\n",
            vpt_config_schedule_name(&c), c.maxrregcount, c.ppt, c.block, c.grid, c.threshold,
            vpt_sortkey_name(c.sortkey), c.lookahead);
    REQUIRE(fclose(f) == 0);
}

TEST(tuner_replay_answers_and_charges)
{
    VptSpace *s = small_space();
    REQUIRE(s);
    char path[600];
    snprintf(path, sizeof path, "%s/rec.jsonl", vpt_test_tmpdir());
    write_recording(path, s);
    VptReplay *r = vpt_replay_open(path);
    REQUIRE_MSG(r, "%s", vpt_errmsg());
    CHECK_EQ_INT(vpt_replay_count(r), vpt_space_size(s));
    const VptTuneProvenance *p = vpt_replay_provenance(r);
    CHECK(strcmp(p->gpu_uuid, "GPU-1234") == 0 && strcmp(p->driver, "580.159.04") == 0 && p->spp == 100 &&
          p->rr_depth == -1 && strcmp(p->scene, "manix") == 0);

    /* the recorded space is the space recorded */
    size_t rejected = 1;
    VptSpace *rs = vpt_replay_space(r, &rejected);
    REQUIRE(rs);
    CHECK_EQ_INT(rejected, 0);
    CHECK_EQ_INT(vpt_space_size(rs), vpt_space_size(s));
    for (size_t i = 0; i < vpt_space_size(s); i++) CHECK(vpt_space_index_of(rs, vpt_space_point(s, i)) >= 0);
    vpt_space_destroy(rs);

    /* full fidelity: the recorded row; compile charged once */
    const VptConfig *c = vpt_space_point(s, 1); /* no recorded cheap row */
    VptEvalRecord want, got;
    vpt_eval_record_init(&want, c, 1);
    td_fill(c, 1, &want);
    REQUIRE(vpt_replay_evaluate(r, c, 1, &got) == 0);
    CHECK(got.status == want.status && got.fidelity == 1);
    if (want.status == VPT_STATUS_OK) CHECK(got.time_ms == want.time_ms);
    double first = want.compile_s + (isfinite(want.measure_s) ? want.measure_s : 0);
    CHECK_NEAR(got.cost_s, first, 1e-12);
    CHECK_NEAR(vpt_replay_clock(r), first, 1e-12);
    REQUIRE(vpt_replay_evaluate(r, c, 1, &got) == 0);
    CHECK_NEAR(got.cost_s, isfinite(want.measure_s) ? want.measure_s : 0, 1e-12); /* compiled already */
    /* a derived cheap measurement: the full row scaled by the cheap fraction */
    REQUIRE(vpt_replay_evaluate(r, c, 0, &got) == 0);
    CHECK(got.fidelity == 0);
    if (want.status == VPT_STATUS_OK) {
        CHECK_NEAR(got.time_ms, want.time_ms * 0.125, 1e-12);
        CHECK_STR_CONTAINS(got.reason, "derived fidelity 0");
        CHECK_NEAR(got.cost_s, want.measure_s * 0.125, 1e-12);
    }
    vpt_replay_reset(r);
    CHECK(vpt_replay_clock(r) == 0);
    /* a recorded cheap row is used as recorded */
    const VptConfig *c0 = vpt_space_point(s, 5);
    VptEvalRecord want0;
    vpt_eval_record_init(&want0, c0, 0);
    td_fill(c0, 0, &want0);
    REQUIRE(vpt_replay_evaluate(r, c0, 0, &got) == 0);
    CHECK(got.fidelity == 0 && got.status == want0.status);
    if (want0.status == VPT_STATUS_OK) {
        CHECK(got.time_ms == want0.time_ms);
        CHECK(got.reason[0] == '\0');
        CHECK_NEAR(got.cost_s, want0.compile_s + want0.measure_s, 1e-12);
    }
    /* a config the recording lacks */
    VptConfig other;
    REQUIRE(vpt_config_parse("sortingSK", &other) == 0);
    CHECK(vpt_replay_evaluate(r, &other, 1, &got) == -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), "was not recorded");
    CHECK(vpt_replay_find(r, &other) == NULL);
    vpt_replay_destroy(r);
    vpt_space_destroy(s);
}

static void expect_replay_error(const char *name, const char *body, const char *n1, const char *n2)
{
    char path[600];
    snprintf(path, sizeof path, "%s/%s", vpt_test_tmpdir(), name);
    REQUIRE(vpt_write_file_atomic(path, body, strlen(body)) == 0);
    VptReplay *r = vpt_replay_open(path);
    CHECK_MSG(r == NULL, "%s accepted", name);
    vpt_replay_destroy(r);
    CHECK_STR_CONTAINS(vpt_errmsg(), n1);
    if (n2) CHECK_STR_CONTAINS(vpt_errmsg(), n2);
}

TEST(tuner_replay_refuses_bad_recordings)
{
    VptConfig a, b;
    REQUIRE(vpt_config_parse("streamingSK", &a) == 0 && vpt_config_parse("sortingSK", &b) == 0);
    char *buf;
    size_t len;
    FILE *f = open_memstream(&buf, &len);
    result_row(f, &a, 1, 1, "abc");
    result_row(f, &b, 1, 1, "abc");
    result_row(f, &b, 0, 1, "other"); /* line 3: another commit */
    fclose(f);
    expect_replay_error("mixed.jsonl", buf, "mixed.jsonl:3", "commit: recorded 'abc', this run 'other'");
    free(buf);
    f = open_memstream(&buf, &len);
    result_row(f, &a, 1, 1, "abc");
    fputs("{\"kind\":\"result\", garbage\n", f);
    fclose(f);
    expect_replay_error("garbage.jsonl", buf, "garbage.jsonl:2", "not valid JSON");
    free(buf);
    expect_replay_error("empty.jsonl", "", "no full-fidelity result rows", NULL);
    expect_replay_error("schema.jsonl", "{\"kind\":\"result\",\"schema\":\"vptune.result/9\"}\n", "schema.jsonl:1",
                        "vptune.result/9");
    expect_replay_error("noconfig.jsonl",
                        "{\"kind\":\"result\",\"schema\":\"vptune.result/1\",\"gpu\":{\"uuid\":\"x\"},\"nvrtc\":\"1\","
                        "\"commit\":\"c\",\"scene\":\"s\",\"workload\":{\"width\":1,\"height\":1,\"spp\":1,"
                        "\"seed\":1},\"status\":\"ok\"}\n",
                        "noconfig.jsonl:1", "missing \"config\"");
    expect_replay_error("nouuid.jsonl",
                        "{\"kind\":\"result\",\"schema\":\"vptune.result/1\",\"gpu\":{\"name\":\"x\"}}\n",
                        "nouuid.jsonl:1", "uuid");
    CHECK(vpt_replay_open("/nonexistent/rec.jsonl") == NULL);
}

/* The calculated random baseline against random search actually run: on a
 * recorded space, the mean best-so-far of many random searches converges to
 * vpt_random_expected_best. */
TEST(tuner_score_baseline_matches_simulated_random_search)
{
    VptSpace *s = small_space();
    REQUIRE(s);
    char path[600];
    snprintf(path, sizeof path, "%s/rec.jsonl", vpt_test_tmpdir());
    write_recording(path, s);
    VptReplay *r = vpt_replay_open(path);
    REQUIRE(r);
    VptSpaceStats st;
    REQUIRE_MSG(vpt_space_stats(s, r, &st) == 0, "%s", vpt_errmsg());
    CHECK_EQ_INT(st.n, vpt_space_size(s));
    CHECK(st.n_ok < st.n); /* the double fails some configs */
    CHECK(st.optimum <= st.median && st.median <= st.worst_ok);
    CHECK(vpt_random_expected_best(&st, st.n) == st.optimum);
    /* E[best of 1 draw] = mean over members, failures counting no_result */
    double mean = 0;
    for (size_t i = 0; i < st.n; i++) mean += isfinite(st.sorted[i]) ? st.sorted[i] : st.no_result;
    mean /= (double)st.n;
    CHECK_NEAR(vpt_random_expected_best(&st, 1), mean, 1e-9 * mean);
    enum { SEEDS = 3000, K = 12 };
    double sum[K] = {0}, sum2[K] = {0};
    for (int seed = 0; seed < SEEDS; seed++) {
        VptSearchOptions o;
        vpt_search_options_init(&o);
        o.strategy = VPT_STRATEGY_RANDOM;
        o.seed = (uint64_t)seed + 1;
        o.max_evals = K;
        VptSearchResult res;
        REQUIRE(vpt_search_run(s, vpt_replay_evaluate, r, NULL, &o, &res) == 0);
        for (int k = 1; k <= K; k++) {
            double b = vpt_search_best_at_evals(&res, (size_t)k);
            b = isfinite(b) ? b : st.no_result;
            sum[k - 1] += b;
            sum2[k - 1] += b * b;
        }
        vpt_search_result_free(&res);
    }
    for (int k = 1; k <= K; k++) {
        double sim = sum[k - 1] / SEEDS, calc = vpt_random_expected_best(&st, (size_t)k);
        double se = sqrt(fmax(0, sum2[k - 1] / SEEDS - sim * sim) / SEEDS);
        CHECK_MSG(fabs(sim - calc) < 4 * se + 1e-12, "k=%d: simulated %.5f +- %.5f, calculated %.5f", k, sim, se,
                  calc);
    }
    /* the cutoff budget: random search is expected to be 95% of the way there */
    size_t K95 = vpt_score_cutoff_budget(&st, 0.95);
    double target = st.optimum + 0.05 * (st.median - st.optimum);
    CHECK(vpt_random_expected_best(&st, K95) <= target);
    CHECK(K95 == 1 || vpt_random_expected_best(&st, K95 - 1) > target);
    vpt_space_stats_free(&st);
    vpt_replay_destroy(r);
    vpt_space_destroy(s);
}

TEST(tuner_score_of_random_is_near_zero_and_exhaustive_finds_the_optimum)
{
    VptSpace *s = small_space();
    REQUIRE(s);
    char path[600];
    snprintf(path, sizeof path, "%s/rec.jsonl", vpt_test_tmpdir());
    write_recording(path, s);
    VptReplay *r = vpt_replay_open(path);
    REQUIRE(r);
    VptSpaceStats st;
    REQUIRE(vpt_space_stats(s, r, &st) == 0);
    VptSearchOptions o;
    vpt_search_options_init(&o);
    o.strategy = VPT_STRATEGY_RANDOM;
    VptScore sc;
    REQUIRE_MSG(vpt_score_strategy(s, r, &st, &o, 400, 0, &sc) == 0, "%s", vpt_errmsg());
    CHECK_MSG(fabs(sc.score_evals) < 0.1, "random search scores %.3f against its own baseline", sc.score_evals);
    CHECK(sc.budget_evals == vpt_score_cutoff_budget(&st, 0.95));
    CHECK(sc.budget_seconds > 0);
    CHECK(sc.curve_evals[0] >= sc.curve_evals[sc.budget_evals - 1]);
    vpt_score_free(&sc);
    o.strategy = VPT_STRATEGY_EXHAUSTIVE;
    REQUIRE(vpt_score_strategy(s, r, &st, &o, 1, st.n, &sc) == 0);
    CHECK(sc.found_optimum == 1.0);
    CHECK(sc.mean_best_ms == st.optimum);
    vpt_score_free(&sc);
    vpt_space_stats_free(&st);
    vpt_replay_destroy(r);
    vpt_space_destroy(s);
}
