/* The estimator stage's regeneration families (tuner/tune.c,
 * screen_families) on real records: default 90 s tunes replayed on the
 * caches that GPU tunes wrote. The real CT upsampled 4x: the ten seeds of
 * one 4x H200 host (CT4_CACHES); manix: the five seeds of one H200
 * (MANIX_CACHES_1, the tuner of today but the families) and the eight of
 * that 4x H200 host (MANIX_CACHES_2). A config is answered by the replayed
 * seed's own row, else by another seed's (the same config on another GPU
 * of those hosts); a config no seed measured fails (status runtime),
 * charged the recordings' median cost, so a replayed search moves only
 * where the GPUs measured. Seed 3 of the CT is retraced row for row up to
 * the race: its first search ends on naiveSK, and without the families
 * every rival descended without regeneration
 * (docs/decisions/regeneration-family-rival.md). */
#include "tests/harness/test.h"

#include "base/error.h"
#include "tuner/estimators.h"
#include "tuner/rows.h"
#include "tuner/tune.h"

#include <glob.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define CT4_CACHES "results/h200x4/archive/seeds-606c517/ct4-s*.jsonl.gz"
/* The same CT's seven seeds on one H200, tuned with the families' race */
#define CT4_CACHES_3 "results/h200/archive/seeds-d929ce8/ct4-s*.jsonl.gz"
#define MANIX_CACHES_1 "results/h200/archive/seeds-caplift-91f8882/manix-s*.jsonl.gz"
#define MANIX_CACHES_2 "results/h200x4/archive/seeds-606c517/manix-s*.jsonl.gz"
/* The start the recorded CT tunes had beside the prior: the configs saved
 * for manix on that host ("transfer prior: 1 starts" in ct4-s3.log), the
 * second row of every ct4 cache. The manix tunes had none. */
#define CT4_TRANSFER "regen=warp,reorder=none,kernels=single,maxrregcount=80,ppt=1,block=256,grid=0,threshold=50," \
                     "sortkey=position,lookahead=4,coop=8"

typedef struct {
    char key[VPT_CONFIG_STR_MAX];
    VptEvalRecord rec;
    int seed;
} Row;

typedef struct {
    Row *rows;
    size_t n, cap;
    int prefer;          /* the seed whose own rows answer first */
    double miss_cost_s;  /* the median cost_s of the rows */
    double fastest_ms;   /* the fastest ok row of any seed */
    long misses;
} Recorded;

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Appends the full-fidelity eval rows of one gzipped cache. */
static int load_cache(Recorded *r, const char *path, int seed)
{
    gzFile f = gzopen(path, "rb");
    if (!f) return vpt_fail("%s: cannot open", path);
    enum { LINE = 1 << 16 };
    char *line = malloc(LINE);
    if (!line) {
        gzclose(f);
        return vpt_fail("out of memory");
    }
    int rc = 0;
    while (rc == 0 && gzgets(f, line, LINE)) {
        json_t *j = json_loads(line, 0, NULL);
        if (!j) continue;
        const char *kind = json_string_value(json_object_get(j, "kind"));
        VptEvalRecord rec;
        if (kind && !strcmp(kind, "eval") && vpt_rows_record_parse(j, 1, &rec) == 0 && rec.fidelity == 1) {
            if (r->n == r->cap) {
                r->cap = r->cap ? 2 * r->cap : 1024;
                Row *grown = realloc(r->rows, r->cap * sizeof *grown);
                if (!grown) rc = vpt_fail("out of memory");
                else r->rows = grown;
            }
            if (rc == 0) {
                Row *row = &r->rows[r->n++];
                vpt_config_format(&rec.config, row->key, sizeof row->key);
                row->rec = rec;
                row->seed = seed;
            }
        }
        json_decref(j);
    }
    free(line);
    gzclose(f);
    return rc;
}

/* The caches of globs[0..n_globs), in that order (an earlier one answers
 * first among rows of equal preference), or 0 rows when none is found. */
static int load_caches(Recorded *r, const char *const *globs, size_t n_globs)
{
    memset(r, 0, sizeof *r);
    int rc = 0;
    for (size_t k = 0; k < n_globs && rc == 0; k++) {
        glob_t g;
        if (glob(globs[k], 0, NULL, &g) != 0) continue;
        for (size_t i = 0; i < g.gl_pathc && rc == 0; i++) {
            const char *s = strrchr(g.gl_pathv[i], '-');
            rc = load_cache(r, g.gl_pathv[i], s && s[1] == 's' ? atoi(s + 2) : 0);
        }
        globfree(&g);
    }
    if (rc || r->n == 0) return rc;
    double *costs = malloc(r->n * sizeof *costs);
    if (!costs) return vpt_fail("out of memory");
    r->fastest_ms = INFINITY;
    for (size_t i = 0; i < r->n; i++) {
        costs[i] = r->rows[i].rec.cost_s;
        if (r->rows[i].rec.status == VPT_STATUS_OK && r->rows[i].rec.time_ms < r->fastest_ms)
            r->fastest_ms = r->rows[i].rec.time_ms;
    }
    qsort(costs, r->n, sizeof *costs, cmp_double);
    r->miss_cost_s = costs[r->n / 2];
    free(costs);
    return 0;
}

static int load_ct4(Recorded *r)
{
    const char *const globs[] = {CT4_CACHES};
    return load_caches(r, globs, 1);
}

static int load_ct4_h200(Recorded *r)
{
    const char *const globs[] = {CT4_CACHES_3};
    return load_caches(r, globs, 1);
}

static int load_manix(Recorded *r)
{
    const char *const globs[] = {MANIX_CACHES_1, MANIX_CACHES_2};
    return load_caches(r, globs, 2);
}

static int recorded_evaluate(void *ctx, const VptConfig *c, int fidelity, VptEvalRecord *out)
{
    Recorded *r = ctx;
    char key[VPT_CONFIG_STR_MAX];
    vpt_config_format(c, key, sizeof key);
    const Row *hit = NULL;
    for (size_t i = 0; i < r->n; i++)
        if (!strcmp(r->rows[i].key, key) && (!hit || (r->rows[i].seed == r->prefer && hit->seed != r->prefer)))
            hit = &r->rows[i];
    if (hit) {
        *out = hit->rec;
        out->config = *c;
        return 0;
    }
    r->misses++;
    out->fidelity = fidelity;
    out->status = VPT_STATUS_RUNTIME;
    snprintf(out->reason, sizeof out->reason, "no recorded seed measured this config");
    out->cost_s = r->miss_cost_s;
    return 0;
}

/* The default tune as the recorded ones ran (90 s, local search, every
 * estimator, on one GPU) of `seed`, with `rivals` and the start `transfer`
 * (NULL: none); progress into *log. */
static void replay(Recorded *r, int seed, int rivals, const char *transfer, VptTuneResult *res, char **log)
{
    VptSpace *s = vpt_space_create();
    REQUIRE(s);
    VptEstimator est[VPT_ESTIMATORS_MAX];
    const int n = vpt_estimators_parse("all", est);
    REQUIRE(n > 0);
    VptConfig start;
    if (transfer) REQUIRE(vpt_config_parse(transfer, &start) == 0);
    size_t log_n = 0;
    FILE *progress = open_memstream(log, &log_n);
    REQUIRE(progress);
    r->prefer = seed;
    r->misses = 0;
    VptTuneOptions o;
    vpt_tune_options_init(&o);
    o.space = s;
    o.evaluate = recorded_evaluate;
    o.evaluate_ctx = r;
    o.search.strategy = VPT_STRATEGY_LOCAL;
    o.search.seed = (uint64_t)seed;
    o.search.max_seconds = 90;
    o.search.starts = transfer ? &start : NULL;
    o.search.n_starts = transfer ? 1 : 0;
    o.estimators = est;
    o.n_estimators = (size_t)n;
    o.rivals = rivals;
    o.progress = progress;
    REQUIRE_MSG(vpt_tune_run(&o, res) == 0, "%s", vpt_errmsg());
    fclose(progress);
    vpt_space_destroy(s);
}

/* The best record of the first search: those before the first with
 * another estimator than the thesis' (global, f32). */
static const VptEvalRecord *first_search_best(const VptTuneResult *res)
{
    const VptEvalRecord *best = NULL;
    for (size_t i = 0; i < res->search.n_evals; i++) {
        const VptEvalRecord *x = &res->search.evals[i];
        if (x->config.majorant != 0 || x->config.density != VPT_DENSITY_F32) break;
        if (isfinite(vpt_eval_objective(x)) && (!best || vpt_eval_objective(x) < vpt_eval_objective(best))) best = x;
    }
    return best;
}

static size_t count_lines(const char *log, const char *prefix)
{
    size_t k = 0;
    for (const char *p = log; (p = strstr(p, prefix)); p += strlen(prefix)) k++;
    return k;
}

TEST(tuner_tune_ct4_seed3_races_the_faster_regeneration_family)
{
    Recorded r;
    REQUIRE_MSG(load_ct4(&r) == 0, "%s", vpt_errmsg());
    if (r.n == 0) SKIP("%s not found: run the tests from the repository root", CT4_CACHES);
    VptTuneResult res;
    char *log = NULL;
    replay(&r, 3, VPT_ESTIMATORS_RIVALS_MAX, CT4_TRANSFER, &res, &log);
    vpt_test_log("%s", log);
    /* the recorded situation: the first search ended without regeneration */
    const VptEvalRecord *first = first_search_best(&res);
    REQUIRE(first);
    CHECK_MSG(first->config.regen == VPT_REGEN_NONE, "the first search ended on %s, not naiveSK",
              vpt_config_schedule_name(&first->config));
    /* a rival descended from a regenerating family, and the race kept to
     * its three descents */
    CHECK_STR_CONTAINS(log, "a rival from there");
    CHECK_STR_CONTAINS(log, " from regenerationSK-");
    CHECK(count_lines(log, "[tune] rival ") <= VPT_ESTIMATORS_RIVALS_MAX);
    REQUIRE(res.have_winner);
    CHECK_MSG(res.winner.config.regen != VPT_REGEN_NONE, "the winner is %s at %.4f ms",
              vpt_config_schedule_name(&res.winner.config), res.winner.time_ms);
    /* without the families the replay ends where the GPU's tune did, on
     * naiveSK (ct4-s3.log), far behind the caches' fastest */
    CHECK_MSG(res.winner.time_ms <= 1.02 * r.fastest_ms, "the winner %.4f ms against the caches' fastest %.4f ms",
              res.winner.time_ms, r.fastest_ms);
    vpt_test_log("%zu evaluations, %ld not recorded, winner %.4f ms %s", res.search.n_evals, r.misses,
                 res.winner.time_ms, vpt_config_schedule_name(&res.winner.config));
    free(log);
    vpt_tune_result_free(&res);
    free(r.rows);
}

/* Seeds 1 to n of the CT replayed on r, as the GPU ran them, each checked
 * to end with regeneration; returns how many end within 2% of the caches'
 * fastest row. */
static int ct4_seeds_within(Recorded *r, int n)
{
    int within = 0;
    for (int seed = 1; seed <= n; seed++) {
        VptTuneResult res;
        char *log = NULL;
        replay(r, seed, VPT_ESTIMATORS_RIVALS_MAX, CT4_TRANSFER, &res, &log);
        REQUIRE(res.have_winner);
        vpt_test_log("seed %d: %zu evaluations, %ld not recorded, winner %.4f ms (%+.2f%%) %s", seed,
                     res.search.n_evals, r->misses, res.winner.time_ms, 100 * (res.winner.time_ms / r->fastest_ms - 1),
                     vpt_config_schedule_name(&res.winner.config));
        CHECK_MSG(res.winner.config.regen != VPT_REGEN_NONE, "seed %d ends on %s", seed,
                  vpt_config_schedule_name(&res.winner.config));
        within += res.winner.time_ms <= 1.02 * r->fastest_ms;
        free(log);
        vpt_tune_result_free(&res);
    }
    return within;
}

/* Seeds 1 to 10 of the CT of one 4x H200 host. */
TEST(tuner_tune_ct4_ten_seeds_end_with_regeneration)
{
    Recorded r;
    REQUIRE_MSG(load_ct4(&r) == 0, "%s", vpt_errmsg());
    if (r.n == 0) SKIP("%s not found: run the tests from the repository root", CT4_CACHES);
    const int within = ct4_seeds_within(&r, 10);
    /* the one that misses is seed 5: its first search never left thread
     * regeneration, and nothing measured warp's basin before the race */
    CHECK_MSG(within >= 9, "%d of 10 seeds within 2%%", within);
    free(r.rows);
}

/* The CT's seven seeds of one H200, replayed the same way. On seeds 1 and 6
 * the first search ended on naiveSK, and thread and warp regeneration
 * measured nearly tied with grid32:u8; both race (FAMILY_TIE), and every
 * seed ends within 2% of the caches' fastest row
 * (docs/decisions/regeneration-family-rival.md, "The families that tie"). */
TEST(tuner_tune_ct4_h200_seeds_race_the_families_that_tie)
{
    Recorded r;
    REQUIRE_MSG(load_ct4_h200(&r) == 0, "%s", vpt_errmsg());
    if (r.n == 0) SKIP("%s not found: run the tests from the repository root", CT4_CACHES_3);
    const int within = ct4_seeds_within(&r, 7);
    CHECK_MSG(within == 7, "%d of 7 seeds within 2%%", within);
    free(r.rows);
}

/* What the families cost where the first search's family already wins:
 * manix, ten seeds (no transfer start, as the recorded tunes had none);
 * at most four evaluations each, and the reach it had. */
TEST(tuner_tune_manix_ten_seeds_keep_their_reach)
{
    Recorded r;
    REQUIRE_MSG(load_manix(&r) == 0, "%s", vpt_errmsg());
    if (r.n == 0) SKIP("%s not found: run the tests from the repository root", MANIX_CACHES_1);
    int within = 0;
    for (int seed = 1; seed <= 10; seed++) {
        VptTuneResult res;
        char *log = NULL;
        replay(&r, seed, VPT_ESTIMATORS_RIVALS_MAX, NULL, &res, &log);
        REQUIRE(res.have_winner);
        const char *fam = strstr(log, "regeneration families measured with ");
        const char *other = fam ? strstr(fam, ": ") : NULL;
        const int n_fam = other ? atoi(other + 2) : 0;
        vpt_test_log("seed %d: %zu evaluations (%d of the families), %ld not recorded, winner %.4f ms (%+.2f%%) %s",
                     seed, res.search.n_evals, n_fam, r.misses, res.winner.time_ms,
                     100 * (res.winner.time_ms / r.fastest_ms - 1), vpt_config_schedule_name(&res.winner.config));
        CHECK(n_fam <= 4);
        within += res.winner.time_ms <= 1.02 * r.fastest_ms;
        free(log);
        vpt_tune_result_free(&res);
    }
    /* seeds 1 and 8 end at 64 registers without cooperative flights, with
     * the families as without them */
    CHECK_MSG(within >= 8, "%d of 10 seeds within 2%%", within);
    free(r.rows);
}

TEST(tuner_tune_ct4_seed3_one_rival_screens_no_family)
{
    Recorded r;
    REQUIRE_MSG(load_ct4(&r) == 0, "%s", vpt_errmsg());
    if (r.n == 0) SKIP("%s not found: run the tests from the repository root", CT4_CACHES);
    VptTuneResult res;
    char *log = NULL;
    replay(&r, 3, 1, CT4_TRANSFER, &res, &log);
    vpt_test_log("%s", log);
    /* --rivals 1: no race, so no family measured and no rival from one */
    CHECK(strstr(log, "regeneration families") == NULL);
    CHECK(count_lines(log, "[tune] rival ") == 0);
    free(log);
    vpt_tune_result_free(&res);
    free(r.rows);
}
