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

/* The median of the test double's compile_s over the members of s with c's
 * schedule: at full fidelity, plus the cheap rows write_recording adds (every
 * fifth member), as the replay takes it. */
static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double schedule_median(const VptSpace *s, const VptConfig *c)
{
    static double v[4096];
    size_t k = 0;
    for (size_t i = 0; i < vpt_space_size(s) && k + 2 <= 4096; i++) {
        const VptConfig *x = vpt_space_point(s, i);
        if (vpt_config_schedule_index(x) != vpt_config_schedule_index(c)) continue;
        VptEvalRecord r;
        vpt_eval_record_init(&r, x, 1);
        td_fill(x, 1, &r);
        v[k++] = r.compile_s;
        if (i % 5 == 0) v[k++] = r.compile_s; /* its cheap row */
    }
    qsort(v, k, sizeof *v, cmp_dbl);
    return k % 2 ? v[k / 2] : 0.5 * (v[k / 2 - 1] + v[k / 2]);
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
    /* a config recorded twice, the same measurement both times (a file
     * concatenated twice): one row */
    result_row(f, vpt_space_point(s, 1), 1, 1, "abc");
    REQUIRE(fclose(f) == 0);
}

/* Two different measurements of one config at one fidelity in a recording
 * are refused, naming both rows as file:line (tuner/eval.h). */
TEST(tuner_replay_conflicting_rows_are_refused)
{
    VptSpace *s = small_space();
    REQUIRE(s);
    char path[600];
    snprintf(path, sizeof path, "%s/conflict.jsonl", vpt_test_tmpdir());
    FILE *f = fopen(path, "w");
    REQUIRE(f);
    const VptConfig *a = vpt_space_point(s, 0), *b = vpt_space_point(s, 1);
    result_row(f, a, 1, 1, "abc");
    result_row(f, b, 1, 1, "abc");
    result_row(f, b, 0, 1, "abc"); /* another fidelity: no conflict */
    result_row(f, a, 1, 0, "abc"); /* the same measurement again: fine */
    VptConfig a2 = *a;
    fprintf(f,
            "{\"kind\":\"result\",\"schema\":\"vptune.result/1\",\"gpu\":{\"uuid\":\"GPU-1234\"},\"nvrtc\":\"13.0\","
            "\"commit\":\"abc\",\"scene\":\"manix\",\"workload\":{\"width\":400,\"height\":400,\"spp\":100,"
            "\"seed\":1,\"max_depth\":0,\"rr_depth\":-1},\"config\":\"%s,maxrregcount=%d,ppt=%d,block=%d,grid=%d,"
            "threshold=%d,sortkey=%s,lookahead=%d\",\"status\":\"ok\",\"metrics\":{\"time_ms\":1e-9}}\n",
            vpt_config_schedule_name(&a2), a2.maxrregcount, a2.ppt, a2.block, a2.grid, a2.threshold,
            vpt_sortkey_name(a2.sortkey), a2.lookahead);
    REQUIRE(fclose(f) == 0);
    CHECK(vpt_replay_open(path) == NULL);
    char both[1300];
    snprintf(both, sizeof both, "%s:1 and %s:5", path, path);
    CHECK_STR_CONTAINS(vpt_errmsg(), both);
    CHECK_STR_CONTAINS(vpt_errmsg(), "two different measurements");
    /* without the last line it opens */
    char *data;
    size_t size;
    REQUIRE(vpt_read_file(path, 1 << 20, &data, &size) == 0);
    char *last = data + size - 1;
    while (last > data && last[-1] != '\n') last--;
    REQUIRE(vpt_write_file_atomic(path, data, (size_t)(last - data)) == 0);
    free(data);
    VptReplay *r = vpt_replay_open(path);
    CHECK_MSG(r != NULL, "%s", vpt_errmsg());
    if (r) CHECK_EQ_INT(vpt_replay_count(r), 2);
    vpt_replay_destroy(r);
    vpt_space_destroy(s);
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

    /* full fidelity: the recorded row; compile charged once: without hints
     * a compile is queued when asked for and waited for, lasting (serial
     * model) the front plus the body of its schedule's median compile_s */
    const VptConfig *c = vpt_space_point(s, 1); /* no recorded cheap row */
    VptEvalRecord want, got;
    vpt_eval_record_init(&want, c, 1);
    td_fill(c, 1, &want);
    REQUIRE(vpt_replay_evaluate(r, c, 1, &got) == 0);
    CHECK(got.status == want.status && got.fidelity == 1);
    if (want.status == VPT_STATUS_OK) CHECK(got.time_ms == want.time_ms);
    double med = schedule_median(s, c);
    double compile = VPT_REPLAY_COMPILE_FRONT_S + (med - VPT_REPLAY_COMPILE_FRONT_S) / VPT_REPLAY_COMPILE_THREADS;
    double first = compile + (isfinite(want.measure_s) ? want.measure_s : 0);
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
    /* a recorded cheap row is used as recorded; the parallel model charges
     * the schedule's median compile_s as is */
    REQUIRE(vpt_replay_set_compile_model(r, VPT_COMPILE_PARALLEL, 4) == 0);
    const VptConfig *c0 = vpt_space_point(s, 5);
    VptEvalRecord want0;
    vpt_eval_record_init(&want0, c0, 0);
    td_fill(c0, 0, &want0);
    REQUIRE(vpt_replay_evaluate(r, c0, 0, &got) == 0);
    CHECK(got.fidelity == 0 && got.status == want0.status);
    if (want0.status == VPT_STATUS_OK) {
        CHECK(got.time_ms == want0.time_ms);
        CHECK(got.reason[0] == '\0');
        CHECK_NEAR(got.cost_s, schedule_median(s, c0) + want0.measure_s, 1e-12);
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

/* A row with the given compile and measure seconds, time 1 ms. */
static void timed_row(FILE *f, const char *config, double compile_s, double measure_s)
{
    VptConfig c;
    REQUIRE(vpt_config_parse(config, &c) == 0);
    char text[VPT_CONFIG_STR_MAX];
    vpt_config_format(&c, text, sizeof text);
    fprintf(f,
            "{\"kind\":\"result\",\"schema\":\"vptune.result/1\",\"gpu\":{\"uuid\":\"GPU-1234\"},\"nvrtc\":\"13.0\","
            "\"commit\":\"abc\",\"scene\":\"manix\",\"workload\":{\"width\":400,\"height\":400,\"spp\":16,"
            "\"seed\":1,\"max_depth\":0,\"rr_depth\":-1},\"config\":\"%s\",\"status\":\"ok\","
            "\"metrics\":{\"time_ms\":1.0,\"compile_s\":%.17g,\"measure_s\":%.17g}}\n",
            text, compile_s, measure_s);
}

static void eval_cost(VptReplay *r, const char *config, int fidelity, double want)
{
    VptConfig c;
    REQUIRE(vpt_config_parse(config, &c) == 0);
    VptEvalRecord got;
    REQUIRE(vpt_replay_evaluate(r, &c, fidelity, &got) == 0);
    CHECK_MSG(fabs(got.cost_s - want) < 1e-9, "%s: cost %.6f, expected %.6f", config, got.cost_s, want);
}

static void prefetch(VptReplay *r, const char *const *configs, size_t n)
{
    VptConfig c[8];
    for (size_t i = 0; i < n; i++) REQUIRE(vpt_config_parse(configs[i], &c[i]) == 0);
    vpt_replay_prefetch(r, c, n, 1);
}

/* The simulated compile pool (tuner/eval.h), worked out by hand: four
 * configs of four schedules (so each schedule's median is its one row). */
TEST(tuner_replay_compile_pool)
{
    char path[600];
    snprintf(path, sizeof path, "%s/pool.jsonl", vpt_test_tmpdir());
    FILE *f = fopen(path, "w");
    REQUIRE(f);
    timed_row(f, "naiveSK", 2.0, 1.0);      /* A */
    timed_row(f, "regenerationSK-warp", 4.0, 0.5); /* B */
    timed_row(f, "sortingSK", 8.25, 0.25);  /* C */
    timed_row(f, "naiveMK", 0.2, 0.1);      /* D */
    REQUIRE(fclose(f) == 0);
    VptReplay *r = vpt_replay_open(path);
    REQUIRE_MSG(r, "%s", vpt_errmsg());
    const char *abc[] = {"naiveSK", "regenerationSK-warp", "sortingSK", "sortingSK", "streamingSK"};

    /* serial, 2 threads, front 0.25: bodies (c - 0.25) / 2 one at a time.
     * A: front 0-0.25, body 0.25-1.125; B: front 0-0.25 on the second
     * thread, body after A's 1.125-3.0; C: on A's thread from 1.125, body
     * after B's 3.0-7.0. The duplicate and the unrecorded hint change
     * nothing. */
    REQUIRE(vpt_replay_set_compile_model(r, VPT_COMPILE_SERIAL, 2) == 0);
    prefetch(r, abc, 5);
    eval_cost(r, "naiveSK", 1, 1.125 + 1.0);             /* clock 2.125 */
    eval_cost(r, "regenerationSK-warp", 1, 0.875 + 0.5); /* waits for 3.0; clock 3.5 */
    eval_cost(r, "sortingSK", 1, 3.5 + 0.25);            /* waits for 7.0; clock 7.25 */
    /* D unannounced: queued at 7.25 on the free thread, front 0.2 (its
     * whole compile), no body */
    eval_cost(r, "naiveMK", 1, 0.2 + 0.1);
    CHECK_NEAR(vpt_replay_clock(r), 7.55, 1e-9);
    /* compiled once: again, or at the other fidelity, only measures */
    eval_cost(r, "naiveSK", 1, 1.0);
    eval_cost(r, "naiveSK", 0, 1.0 / 8);

    /* a hint that is never evaluated still holds the pool: one thread, C
     * announced (0-8.25), A asked for unannounced waits behind it */
    REQUIRE(vpt_replay_set_compile_model(r, VPT_COMPILE_SERIAL, 1) == 0);
    CHECK(vpt_replay_clock(r) == 0); /* a new model is a fresh tune */
    prefetch(r, abc + 2, 1);
    eval_cost(r, "naiveSK", 1, 8.25 + 0.25 + 1.75 + 1.0);

    /* parallel, 2 threads: A 0-2 and B 0-4 side by side, C 2-10.25 */
    REQUIRE(vpt_replay_set_compile_model(r, VPT_COMPILE_PARALLEL, 2) == 0);
    prefetch(r, abc, 3);
    eval_cost(r, "naiveSK", 1, 2.0 + 1.0);             /* clock 3 */
    eval_cost(r, "regenerationSK-warp", 1, 1.0 + 0.5); /* clock 4.5 */
    eval_cost(r, "sortingSK", 1, 5.75 + 0.25);         /* clock 10.5 */
    int threads = 0;
    CHECK(vpt_replay_compile_model(r, &threads) == VPT_COMPILE_PARALLEL && threads == 2);

    /* without hints, the serial model's one-thread cost is the recorded
     * compile_s, scaled to the lone compile: front + (c - front) / threads */
    REQUIRE(vpt_replay_set_compile_model(r, VPT_COMPILE_SERIAL, 16) == 0);
    eval_cost(r, "sortingSK", 1, 0.25 + 8.0 / 16 + 0.25);

    CHECK(vpt_replay_set_compile_model(r, VPT_COMPILE_SERIAL, 0) == -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), "compile threads");
    CHECK(vpt_replay_set_compile_model(r, (VptCompileModel)7, 4) == -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), "compile model");
    CHECK(vpt_replay_compile_model(r, &threads) == VPT_COMPILE_SERIAL && threads == 16); /* unchanged */
    vpt_replay_destroy(r);
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

/* Hundreds of simulated searches: under ASan + UBSan on two cores this is
 * near the default timeout, so it has a longer one. */
TEST_TIMEOUT(tuner_score_of_random_is_near_zero_and_exhaustive_finds_the_optimum, 300)
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
