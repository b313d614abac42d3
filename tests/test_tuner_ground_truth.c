/* The ground-truth tools without a GPU (issue 21): recordings read
 * compressed, recorded joint spaces (schedules x estimators),
 * bin/tune-space's sample, neighbours, pick and correlate on the recorded
 * 336-config fixtures, and the transfer prior (tuner/transfer.h) with the
 * search's portfolio of starts. */
#include "tests/harness/test.h"
#include "tests/test_tools.h"

#include "base/error.h"
#include "base/file.h"
#include "tuner/best.h"
#include "tuner/eval.h"
#include "tuner/search.h"
#include "tuner/space.h"
#include "tuner/transfer.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define FIXTURE "tests/fixtures/tuner/manix_exhaustive.jsonl"

static char out[1 << 20];

static void require_fixture(void)
{
    if (access(FIXTURE, R_OK) != 0) SKIP("no recorded exhaustive run %s", FIXTURE);
}

/* path.gz: the gzip of path's first `keep` bytes (all when keep is 0). */
static void write_gzip(const char *path, const char *gz, size_t keep)
{
    char *data;
    size_t size;
    REQUIRE(vpt_read_file(path, 1u << 26, &data, &size) == 0);
    gzFile f = gzopen(gz, "wb9");
    REQUIRE(f);
    REQUIRE(gzwrite(f, data, (unsigned)size) == (int)size);
    REQUIRE(gzclose(f) == Z_OK);
    free(data);
    if (keep) REQUIRE(truncate(gz, (off_t)keep) == 0);
}

TEST(tuner_replay_reads_gzip_recordings)
{
    require_fixture();
    char gz[600], cut[600];
    snprintf(gz, sizeof gz, "%s/manix.jsonl.gz", vpt_test_tmpdir());
    snprintf(cut, sizeof cut, "%s/cut.jsonl.gz", vpt_test_tmpdir());
    write_gzip(FIXTURE, gz, 0);
    VptReplay *a = vpt_replay_open(FIXTURE), *b = vpt_replay_open(gz);
    REQUIRE(a && b);
    CHECK_EQ_INT((int)vpt_replay_count(a), (int)vpt_replay_count(b));
    for (size_t i = 0; i < vpt_replay_count(a); i++) {
        CHECK(vpt_config_equal(&vpt_replay_record(a, i)->config, &vpt_replay_record(b, i)->config));
        CHECK(vpt_replay_record(a, i)->time_ms == vpt_replay_record(b, i)->time_ms ||
              (isnan(vpt_replay_record(a, i)->time_ms) && isnan(vpt_replay_record(b, i)->time_ms)));
    }
    vpt_replay_destroy(a);
    vpt_replay_destroy(b);
    /* a cut-off file is an error naming it, not a shorter recording */
    write_gzip(FIXTURE, cut, 20000);
    CHECK(vpt_replay_open(cut) == NULL);
    CHECK_STR_CONTAINS(vpt_errmsg(), "cut.jsonl.gz");
    CHECK_STR_CONTAINS(vpt_errmsg(), "truncated");
    REQUIRE(vpt_write_file_atomic(cut, "\x1f\x8bnot deflate", 13) == 0);
    CHECK(vpt_replay_open(cut) == NULL);
    CHECK_STR_CONTAINS(vpt_errmsg(), "not valid gzip data");
}

/* A recorded space whose configs carry several estimators is one joint
 * space: the estimators are its dimensions, a strategy moves in them, and
 * the default search options stamp nothing over them. */
TEST(tuner_space_joint_estimators)
{
    VptConfig c[4];
    REQUIRE(vpt_config_parse("regenerationSK-warp,threshold=50", &c[0]) == 0);
    REQUIRE(vpt_config_parse("regenerationSK-warp,threshold=50,majorant=grid8", &c[1]) == 0);
    REQUIRE(vpt_config_parse("regenerationSK-warp,threshold=50,density=u8", &c[2]) == 0);
    REQUIRE(vpt_config_parse("regenerationSK-warp,threshold=50,majorant=grid8,density=u8", &c[3]) == 0);
    VptSpace *s = vpt_space_create_from_configs(c, 4, NULL);
    REQUIRE(s);
    CHECK_EQ_INT((int)vpt_space_size(s), 4);
    CHECK_EQ_INT(vpt_space_domain_size(s, VPT_DIM_MAJORANT), 2);
    CHECK_EQ_INT(vpt_space_domain_size(s, VPT_DIM_DENSITY), 2);
    for (int i = 0; i < 4; i++) CHECK(vpt_space_index_of(s, &c[i]) >= 0);
    size_t nb[VPT_SPACE_MAX_NEIGHBOURS];
    long m = vpt_space_index_of(s, &c[0]);
    CHECK_EQ_INT((int)vpt_space_neighbours(s, (size_t)m, nb, VPT_SPACE_MAX_NEIGHBOURS), 2); /* grid8, u8 */
    CHECK_EQ_INT(vpt_space_restrict(s, "majorant", "grid8"), 0);
    CHECK_EQ_INT((int)vpt_space_size(s), 2);
    CHECK(vpt_space_restrict(s, "density", "f64") != 0);
    CHECK_STR_CONTAINS(vpt_errmsg(), "density 'f64'");
    vpt_space_destroy(s);
    /* the schedule space keeps one estimator and its size */
    VptSpace *d = vpt_space_create();
    REQUIRE(d);
    CHECK_EQ_INT((int)vpt_space_size(d), 353934);
    CHECK_EQ_INT(vpt_space_domain_size(d, VPT_DIM_MAJORANT), 1);
    CHECK_EQ_INT(vpt_space_domain_size(d, VPT_DIM_DENSITY), 1);
    vpt_space_destroy(d);
}

/* An evaluator that records which configs it was asked for. */
typedef struct {
    VptConfig seen[8];
    int n;
} Seen;

static int seen_evaluate(void *ctx, const VptConfig *c, int fidelity, VptEvalRecord *r)
{
    Seen *s = ctx;
    if (s->n < 8) s->seen[s->n++] = *c;
    vpt_eval_record_init(r, c, fidelity);
    r->time_ms = 1.0 + c->majorant + c->density;
    r->cost_s = 1;
    return 0;
}

TEST(tuner_search_keeps_a_joint_space_estimators)
{
    VptConfig c[2];
    REQUIRE(vpt_config_parse("regenerationSK-warp", &c[0]) == 0);
    REQUIRE(vpt_config_parse("regenerationSK-warp,majorant=grid16,density=f16", &c[1]) == 0);
    VptSpace *s = vpt_space_create_from_configs(c, 2, NULL);
    REQUIRE(s);
    VptSearchOptions o;
    vpt_search_options_init(&o);
    o.strategy = VPT_STRATEGY_EXHAUSTIVE;
    Seen seen = {0};
    VptSearchResult r;
    REQUIRE(vpt_search_run(s, seen_evaluate, &seen, NULL, &o, &r) == 0);
    CHECK_EQ_INT(seen.n, 2);
    CHECK(vpt_config_equal(&seen.seen[0], &c[0]) || vpt_config_equal(&seen.seen[0], &c[1]));
    CHECK(!vpt_config_equal(&seen.seen[0], &seen.seen[1]));
    vpt_search_result_free(&r);
    /* an estimator given in the options is stamped onto every member */
    o.majorant = 8;
    seen.n = 0;
    REQUIRE(vpt_search_run(s, seen_evaluate, &seen, NULL, &o, &r) == 0);
    for (int i = 0; i < seen.n; i++) CHECK_EQ_INT(seen.seen[i].majorant, 8);
    vpt_search_result_free(&r);
    vpt_space_destroy(s);
}

/* Runs bin/tune-space with args; the output into `out`. */
static int tune_space(const char *args)
{
    const char *tool = vpt_test_tool("tune-space");
    REQUIRE_MSG(access(tool, X_OK) == 0, "%s is missing: build it with make", tool);
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "%s %s", tool, args);
    return vpt_test_sh(cmd, out, sizeof out);
}

/* The configs of `out`, one per line, into cfgs; returns how many (each
 * checked to parse). */
static int parse_lines(VptConfig *cfgs, int max)
{
    int n = 0;
    char *save = NULL;
    for (char *line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        REQUIRE(n < max);
        CHECK_MSG(vpt_config_parse(line, &cfgs[n]) == 0, "not a config: %s", line);
        n++;
    }
    return n;
}

static VptConfig sample[2100];

TEST(tune_space_sample_is_stratified_and_reproducible)
{
    CHECK_EQ_INT(tune_space("sample 2000 --seed 21"), 0);
    char first[sizeof out];
    memcpy(first, out, sizeof out);
    int n = parse_lines(sample, 2100);
    CHECK_EQ_INT(n, 2001); /* 2000 drawn and the thesis' default */
    int per_schedule[VPT_SCHEDULE_COUNT] = {0}, per_estimator[VPT_MAJORANT_COUNT][4] = {{0}};
    VptConfig prior;
    REQUIRE(vpt_config_parse("regenerationSK", &prior) == 0);
    int has_prior = 0;
    for (int i = 0; i < n; i++) {
        CHECK(vpt_config_check(&sample[i]) == 0);
        for (int j = 0; j < i; j++) CHECK(!vpt_config_equal(&sample[i], &sample[j]));
        per_schedule[vpt_config_schedule_index(&sample[i])]++;
        const int *cells;
        int mi = 0;
        for (int m = vpt_majorant_cells(&cells) - 1; m >= 0; m--)
            if (cells[m] == sample[i].majorant) mi = m;
        per_estimator[mi][sample[i].density]++;
        has_prior |= vpt_config_equal(&sample[i], &prior);
    }
    CHECK(has_prior);
    /* equal shares, a quarter for the multi-kernel schedules: 2000 x 1/7.5
     * = 266.7 each, 66.7 for naiveMK and streamingMK */
    const VptSchedule *sch;
    vpt_config_schedules(&sch);
    for (int k = 0; k < VPT_SCHEDULE_COUNT; k++) {
        double want = sch[k].kernels == VPT_KERNELS_MULTI ? 2000 / 30.0 : 2000 / 7.5;
        CHECK_MSG(fabs(per_schedule[k] - want) <= 1 + (k == 2), "%s: %d configs, %.1f expected", sch[k].name,
                  per_schedule[k], want);
    }
    /* and equal over the 32 estimators: 2000 / 32 = 62.5 each */
    for (int m = 0; m < VPT_MAJORANT_COUNT; m++)
        for (int f = 0; f < 4; f++) CHECK_MSG(per_estimator[m][f] >= 59 && per_estimator[m][f] <= 66, "%d", per_estimator[m][f]);
    /* the same seed gives the same list; another seed another one */
    CHECK_EQ_INT(tune_space("sample 2000 --seed 21"), 0);
    CHECK(strcmp(first, out) == 0);
    CHECK_EQ_INT(tune_space("sample 2000 --seed 22"), 0);
    CHECK(strcmp(first, out) != 0);
    /* flights=async is drawn within its schedules' strata; --space narrows
     * the space as tune's does */
    int async = 0;
    for (int i = 0; i < n; i++) async += sample[i].flights == VPT_FLIGHTS_ASYNC;
    CHECK(async > 0);
    CHECK_EQ_INT(tune_space("sample 500 --seed 21 --space flights=sync --space block=64,128"), 0);
    n = parse_lines(sample, 2100);
    CHECK_EQ_INT(n, 501); /* and the thesis' default (block 256), always in */
    for (int i = 0; i < n; i++)
        CHECK(sample[i].flights == VPT_FLIGHTS_SYNC &&
              (sample[i].block == 64 || sample[i].block == 128 || vpt_config_equal(&sample[i], &prior)));
    CHECK(tune_space("sample 10 --space flights=fast") != 0);
}

TEST(tune_space_resumes_and_finds_neighbours)
{
    require_fixture();
    /* --exclude: the same sample less what is recorded (the fixture holds
     * the thesis' default, global f32) */
    CHECK_EQ_INT(tune_space("sample 300 --seed 5"), 0);
    int all = parse_lines(sample, 2100);
    VptReplay *rec = vpt_replay_open(FIXTURE);
    REQUIRE(rec);
    int recorded = 0;
    for (int i = 0; i < all; i++) recorded += vpt_replay_find(rec, &sample[i]) != NULL;
    CHECK(recorded >= 1);
    CHECK_EQ_INT(tune_space("sample 300 --seed 5 --exclude " FIXTURE), 0);
    static VptConfig rest[400];
    int n = parse_lines(rest, 400);
    CHECK_EQ_INT(n, all - recorded);
    for (int i = 0, j = 0; i < all; i++) { /* the same order, less the recorded */
        if (vpt_replay_find(rec, &sample[i])) continue;
        CHECK(j < n && vpt_config_equal(&sample[i], &rest[j]));
        j++;
    }

    /* neighbours of the fastest: unrecorded, one move away in a dimension
     * (a schedule move may bring its dependent parameters), or another
     * estimator of the same schedule config */
    CHECK_EQ_INT(tune_space("neighbours --top 1 " FIXTURE), 0);
    static VptConfig nb[1000];
    n = parse_lines(nb, 1000);
    CHECK(n > 19);
    const VptEvalRecord *best = NULL;
    for (size_t i = 0; i < vpt_replay_count(rec); i++) {
        const VptEvalRecord *r = vpt_replay_record(rec, i);
        if (!best || vpt_eval_objective(r) < vpt_eval_objective(best)) best = r;
    }
    int estimators = 0;
    for (int i = 0; i < n; i++) {
        CHECK(vpt_replay_find(rec, &nb[i]) == NULL);
        VptConfig x = nb[i];
        if (x.majorant != best->config.majorant || x.density != best->config.density) {
            x.majorant = best->config.majorant;
            x.density = best->config.density;
            CHECK(vpt_config_equal(&x, &best->config));
            estimators++;
        }
    }
    CHECK_EQ_INT(estimators, VPT_MAJORANT_COUNT * VPT_DENSITY_FORMAT_COUNT - 1);

    /* pick: the fastest first, then random others; correlate of a recording
     * with itself is 1 */
    CHECK_EQ_INT(tune_space("pick " FIXTURE " --top 3 --random 7 --seed 2"), 0);
    n = parse_lines(nb, 1000);
    CHECK_EQ_INT(n, 10);
    CHECK(vpt_config_equal(&nb[0], &best->config));
    CHECK_EQ_INT(tune_space("pick " FIXTURE " --top 3 --random 7 --seed 2 --exclude " FIXTURE), 0);
    CHECK_EQ_INT((int)strlen(out), 0);
    CHECK_EQ_INT(tune_space("correlate " FIXTURE " " FIXTURE), 0);
    CHECK_STR_CONTAINS(out, "spearman_rho: 1.0000");
    CHECK_STR_CONTAINS(out, "top 20 overlap: 20");
    vpt_replay_destroy(rec);
}

TEST(tune_space_usage_errors)
{
    CHECK_EQ_INT(tune_space("--help"), 0);
    CHECK_STR_CONTAINS(out, "usage: tune-space sample N");
    CHECK_EQ_INT(tune_space(""), 2);
    CHECK_EQ_INT(tune_space("shuffle"), 2);
    CHECK_STR_CONTAINS(out, "unknown command 'shuffle'");
    CHECK_EQ_INT(tune_space("sample"), 2);
    CHECK_STR_CONTAINS(out, "sample needs N");
    CHECK_EQ_INT(tune_space("sample 0"), 2);
    CHECK_STR_CONTAINS(out, "0 configs");
    CHECK_EQ_INT(tune_space("sample 10 --top 3"), 2);
    CHECK_STR_CONTAINS(out, "unknown option '--top' for sample");
    CHECK_EQ_INT(tune_space("neighbours"), 2);
    CHECK_STR_CONTAINS(out, "at least one recording");
    CHECK_EQ_INT(tune_space("correlate a.jsonl"), 2);
    CHECK_STR_CONTAINS(out, "two recordings");
    CHECK_EQ_INT(tune_space("neighbours /nonexistent/rec.jsonl"), 1);
    CHECK_STR_CONTAINS(out, "/nonexistent/rec.jsonl");
    CHECK_EQ_INT(tune_space("sample 5 --seed x"), 2);
    CHECK_STR_CONTAINS(out, "--seed");
}

/* The transfer prior: other scenes' saved winners, never the scene's own,
 * files that do not load left out, none when nothing was saved. */
TEST(tuner_transfer_starts_are_other_scenes_winners)
{
    char results[600], path[800];
    snprintf(results, sizeof results, "%s/results", vpt_test_tmpdir());
    const char *gpu = "NVIDIA H100 80GB HBM3";
    VptConfig got[VPT_SEARCH_MAX_STARTS];
    char names[256];
    CHECK_EQ_INT((int)vpt_transfer_starts(results, gpu, "manix", got, VPT_SEARCH_MAX_STARTS, names, sizeof names), 0);
    VptTuneProvenance prov;
    memset(&prov, 0, sizeof prov);
    snprintf(prov.gpu_name, sizeof prov.gpu_name, "%s", gpu);
    static const char *const saved[][2] = {{"manix", "regenerationSK-warp,coop=4"},
                                           {"artifix", "regenerationSK-warp,maxrregcount=64,lookahead=4"},
                                           {"smoke", "regenerationSK-warp,threshold=25,coop=8,majorant=grid4"}};
    for (int i = 0; i < 3; i++) {
        VptEvalRecord w;
        VptConfig c;
        REQUIRE(vpt_config_parse(saved[i][1], &c) == 0);
        vpt_eval_record_init(&w, &c, 1);
        w.time_ms = w.mrays_per_s = w.gsteps_per_s = w.occupancy_achieved = w.simd_efficiency = 1; /* JSON has no NaN */
        snprintf(prov.scene, sizeof prov.scene, "%s", saved[i][0]);
        REQUIRE(vpt_best_path(results, gpu, saved[i][0], path, sizeof path) == 0);
        REQUIRE(vpt_best_save(path, &prov, &w, "local") == 0);
    }
    REQUIRE(vpt_best_path(results, gpu, "broken", path, sizeof path) == 0);
    REQUIRE(vpt_write_file_atomic(path, "{\"config\":\"regen=thread,threshold=50\"}", 37) == 0);
    size_t n = vpt_transfer_starts(results, gpu, "manix", got, VPT_SEARCH_MAX_STARTS, names, sizeof names);
    CHECK_EQ_INT((int)n, 2);
    CHECK_STR_CONTAINS(names, "artifix");
    CHECK_STR_CONTAINS(names, "smoke");
    CHECK(strstr(names, "manix") == NULL);
    for (size_t i = 0; i < n; i++) CHECK(got[i].regen == VPT_REGEN_WARP);
    /* a new volume learns from all three; max bounds the count */
    CHECK_EQ_INT((int)vpt_transfer_starts(results, gpu, "cranium", got, VPT_SEARCH_MAX_STARTS, NULL, 0), 3);
    CHECK_EQ_INT((int)vpt_transfer_starts(results, gpu, "cranium", got, 1, NULL, 0), 1);
}

/* Starts are measured first and the descent begins at the best of them:
 * on a recorded space, a portfolio holding the optimum finds it at once. */
TEST(tuner_search_starts_from_the_best_start)
{
    require_fixture();
    VptReplay *r = vpt_replay_open(FIXTURE);
    REQUIRE(r);
    VptSpace *s = vpt_replay_space(r, NULL);
    REQUIRE(s);
    const VptEvalRecord *best = NULL;
    for (size_t i = 0; i < vpt_replay_count(r); i++)
        if (!best || vpt_eval_objective(vpt_replay_record(r, i)) < vpt_eval_objective(best)) best = vpt_replay_record(r, i);
    VptConfig starts[2];
    REQUIRE(vpt_config_parse("naiveSK,block=128", &starts[0]) == 0);
    starts[1] = best->config;
    for (int strategy = VPT_STRATEGY_LOCAL; strategy <= VPT_STRATEGY_ANNEALING; strategy++) {
        VptSearchOptions o;
        vpt_search_options_init(&o);
        o.strategy = (VptStrategy)strategy;
        o.max_evals = 3;
        o.starts = starts;
        o.n_starts = 2;
        VptSearchResult res;
        vpt_replay_reset(r);
        REQUIRE(vpt_search_run(s, vpt_replay_evaluate, r, NULL, &o, &res) == 0);
        CHECK_EQ_INT((int)res.n_evals, 3); /* the thesis' prior and the two starts */
        CHECK(res.found && vpt_config_equal(&res.best.config, &best->config));
        vpt_search_result_free(&res);
    }
    vpt_space_destroy(s);
    vpt_replay_destroy(r);
}
