/* bin/tune-score: scores search strategies on recorded spaces and prints the
 * tables as Markdown, so that the figures in the README are regenerated from
 * data, never typed.
 *
 *   tune-score --fixtures tests/fixtures/tuner            all strategies, 20 seeds
 *   tune-score --fixtures DIR --seeds 50 --strategy local,random
 *   tune-score --fixtures DIR --leave-one-out --json FILE leave-one-scene-out
 *   tune-score --fixtures DIR --sequences FILE --json FILE another tuner's runs
 *
 * Every DIR/<scene>_exhaustive.jsonl and DIR/<scene>_sampled.jsonl[.gz] is
 * replayed (tuner/eval.h: the simulated clock with its compile pool) and
 * scored after Willemsen et al. (tuner/score.h), seeds 1..N (--first-seed S:
 * S..S+N-1). Columns:
 *   score (evals), score (time)  0 = the calculated random search, 1 = the
 *                                optimum from the first evaluation on
 *   reach 98% in 5%              fraction of seeds whose best within 5% of the
 *                                exhaustive search's wall time has at least
 *                                98% of the optimum's throughput (issue 4)
 *   thr. at 5%                   mean of optimum / best at that time
 *   to 98% (median)              median simulated time until the best first
 *                                has 98% of the optimum's throughput
 *   thr. at K                    mean of optimum / best after K evaluations
 *   optimum at K                 fraction of seeds that found the optimum
 *                                within K evaluations
 *   2% at 90 s                   fraction of seeds whose run with the tune's
 *                                default budget (90 s, simulated) ends within
 *                                2% of the optimum's time (issue 21)
 *
 * --leave-one-out: nothing is fitted on the scene it is scored on. For each
 * scene H in turn, what the tuner could learn from recorded scenes is fitted
 * on the others only:
 *   - the transfer prior: a portfolio of starts, each other scene's fastest
 *     config and the config with the least geometric mean of time / optimum
 *     over the other scenes that recorded it ok on every one of them
 *     (transfer_portfolio); a config missing from H's space starts at its
 *     nearest member;
 *   - the strategy and its start (the candidates below): chosen by its mean
 *     time-axis score over the other scenes, each of them scored with a
 *     portfolio fitted without it as well (nested leave-one-out), so the
 *     choice never saw H either;
 * then every candidate, the chosen one marked, is scored on H. Candidates:
 *   local, thesis prior           the default of bin/tune today (the thesis'
 *                                 regenerationSK-thread, known before any
 *                                 measurement, not fitted on any scene)
 *   local, no prior               random starts (the best of 4)
 *   local, transfer               the portfolio, without the thesis' prior
 *   local, thesis + transfer      the thesis' prior and the portfolio
 *   annealing, thesis + transfer
 *   random                        the baseline itself
 *
 * --sequences FILE (tuner/sequences.h): every (scene, tuner, strategy) group
 * of runs in FILE is scored as vpt_score_sequences does, on the recorded
 * space of the scene, beside no vptune strategy; with --json each group is
 * one row.
 *
 * --json FILE: the rows of the tables as JSON lines (kind "tuner_score"),
 * written atomically at the end, for scripts/readme_tables.py and the
 * report. */
#include "base/embedded.h"
#include "base/error.h"
#include "base/file.h"
#include "base/parse.h"
#include "cli/version.h"
#include "tuner/score.h"
#include "tuner/sequences.h"

#include <glob.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *prog = "tune-score";

#define MAX_SCENES 32

static void usage(FILE *fp)
{
    fprintf(fp,
            "usage: tune-score --fixtures DIR [--seeds N] [--strategy S,...]\n"
            "                  [--compile-model serial|parallel] [--compile-threads P] [--no-prior]\n"
            "                  [--stagnation K] [--random-starts R] [--prune F]\n"
            "                  [--leave-one-out | --sequences FILE] [--json FILE] [--first-seed S]\n"
            "\n"
            "Scores the search strategies on every DIR/*_exhaustive.jsonl and\n"
            "DIR/*_sampled.jsonl[.gz] (recorded GPU runs) and prints Markdown tables.\n"
            "\n"
            "  --seeds N            seeds per strategy and scene (default 20)\n"
            "  --first-seed S       vptune's strategies run seeds S..S+N-1 (default 1; one seed\n"
            "                       at a time gives per-seed scores: the score is linear in them)\n"
            "  --strategy S,...     strategies to score (default: all but exhaustive)\n"
            "  --compile-model M    how the replay times compiles (tuner/eval.h; default serial)\n"
            "  --compile-threads P  simulated compile threads (default %d)\n"
            "  --no-prior           strategies start from random members, not the thesis'\n"
            "                       default (what the prior is worth)\n"
            "  --stagnation K       local search and annealing restart wide after K evaluations\n"
            "                       without a better best (0: never; default %d)\n"
            "  --random-starts R    random members in their start batch (default %d)\n"
            "  --prune F            local search skips restarts F times slower than the best\n"
            "                       (0: never; default %g)\n"
            "  --leave-one-out      each scene scored with what is fitted on the others only\n"
            "                       (transfer prior, choice of strategy); see the source\n"
            "  --sequences FILE     score another tuner's recorded runs (tuner/sequences.h)\n"
            "  --json FILE          also write the rows as JSON lines\n",
            VPT_REPLAY_COMPILE_THREADS, VPT_SEARCH_STAGNATION, VPT_SEARCH_RANDOM_STARTS,
            VPT_SEARCH_PRUNE);
}

typedef struct {
    const char *dir, *sequences, *json;
    int seeds, first_seed;
    int use[VPT_STRATEGY_COUNT];
    int threads;
    VptCompileModel model;
    int no_prior, loo;
    int stagnation, random_starts; /* the search's knobs (tuner/search.h) */
    double prune;
} Options;

static int parse_strategies(const char *list, Options *o)
{
    char buf[256];
    if (strlen(list) >= sizeof buf) return vpt_fail("--strategy: list too long");
    strcpy(buf, list);
    memset(o->use, 0, sizeof o->use);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        VptStrategy s;
        if (vpt_strategy_parse(tok, &s)) return -1;
        o->use[s] = 1;
    }
    return 0;
}

static int parse_args(int argc, char **argv, Options *o)
{
    memset(o, 0, sizeof *o);
    o->seeds = 20;
    o->first_seed = 1;
    o->threads = VPT_REPLAY_COMPILE_THREADS;
    o->model = VPT_COMPILE_SERIAL;
    o->stagnation = VPT_SEARCH_STAGNATION;
    o->random_starts = VPT_SEARCH_RANDOM_STARTS;
    o->prune = VPT_SEARCH_PRUNE;
    for (int k = VPT_STRATEGY_RANDOM; k < VPT_STRATEGY_COUNT; k++) o->use[k] = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 1;
        }
        if (!strcmp(a, "--no-prior")) {
            o->no_prior = 1;
            continue;
        }
        if (!strcmp(a, "--leave-one-out")) {
            o->loo = 1;
            continue;
        }
        if (!v) return vpt_fail("%s needs a value (see --help)", a);
        i++;
        if (!strcmp(a, "--fixtures")) o->dir = v;
        else if (!strcmp(a, "--sequences")) o->sequences = v;
        else if (!strcmp(a, "--json")) o->json = v;
        else if (!strcmp(a, "--seeds")) {
            if (vpt_parse_int(v, 1, 10000, "--seeds", &o->seeds)) return -1;
        } else if (!strcmp(a, "--first-seed")) {
            if (vpt_parse_int(v, 1, 1000000, "--first-seed", &o->first_seed)) return -1;
        } else if (!strcmp(a, "--strategy")) {
            if (parse_strategies(v, o)) return -1;
        } else if (!strcmp(a, "--stagnation")) {
            if (vpt_parse_int(v, 0, 1000000, "--stagnation", &o->stagnation)) return -1;
        } else if (!strcmp(a, "--prune")) {
            if (vpt_parse_double(v, 0, 1000, "--prune", &o->prune)) return -1;
            if (o->prune > 0 && o->prune <= 1) return vpt_fail("--prune %s: give 0 (never) or a factor above 1", v);
        } else if (!strcmp(a, "--random-starts")) {
            if (vpt_parse_int(v, 0, 64, "--random-starts", &o->random_starts)) return -1;
        } else if (!strcmp(a, "--compile-threads")) {
            if (vpt_parse_int(v, 1, VPT_REPLAY_MAX_COMPILE_THREADS, "--compile-threads", &o->threads)) return -1;
        } else if (!strcmp(a, "--compile-model")) {
            if (!strcmp(v, "serial")) o->model = VPT_COMPILE_SERIAL;
            else if (!strcmp(v, "parallel")) o->model = VPT_COMPILE_PARALLEL;
            else return vpt_fail("--compile-model: '%s' is not serial or parallel", v);
        } else {
            return vpt_fail("unknown option '%s' (see --help)", a);
        }
    }
    if (!o->dir) return vpt_fail("--fixtures DIR is required");
    if (o->loo && o->sequences) return vpt_fail("--leave-one-out and --sequences are two runs: give one of them");
    if (o->loo && o->no_prior) return vpt_fail("--leave-one-out scores with and without the prior: drop --no-prior");
    return 0;
}

/* ---- the recorded scenes ------------------------------------------------ */

typedef struct {
    char path[1100];
    char name[128];
    VptReplay *replay;
    VptSpace *space;
    VptSpaceStats st;
    size_t rejected, K;
} Scene;

/* "manix" from ".../manix_exhaustive.jsonl" or ".../manix_sampled.jsonl.gz". */
static void scene_of(const char *path, char *buf, size_t size)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    const char *end = strstr(base, "_exhaustive.jsonl");
    if (!end) end = strstr(base, "_sampled.jsonl");
    size_t n = end ? (size_t)(end - base) : strlen(base);
    snprintf(buf, size, "%.*s", (int)n, base);
}

static void scene_close(Scene *s)
{
    vpt_space_stats_free(&s->st);
    vpt_space_destroy(s->space);
    vpt_replay_destroy(s->replay);
    memset(s, 0, sizeof *s);
}

static int scene_open(Scene *s, const char *path, const Options *o)
{
    memset(s, 0, sizeof *s);
    snprintf(s->path, sizeof s->path, "%s", path);
    scene_of(path, s->name, sizeof s->name);
    if (!(s->replay = vpt_replay_open(path)) || vpt_replay_set_compile_model(s->replay, o->model, o->threads) ||
        !(s->space = vpt_replay_space(s->replay, &s->rejected)) || vpt_space_stats(s->space, s->replay, &s->st)) {
        vpt_error_prefix("%s", path);
        scene_close(s);
        return -1;
    }
    s->K = vpt_score_cutoff_budget(&s->st, 0.95);
    return 0;
}

/* Every recording in dir, sorted by path. */
static int scenes_open(const Options *o, Scene *scenes, int *n)
{
    static const char *const patterns[] = {"%s/*_exhaustive.jsonl", "%s/*_sampled.jsonl", "%s/*_sampled.jsonl.gz"};
    char *paths[MAX_SCENES];
    int k = 0;
    for (size_t p = 0; p < sizeof patterns / sizeof patterns[0]; p++) {
        char pattern[1100];
        snprintf(pattern, sizeof pattern, patterns[p], o->dir);
        glob_t g;
        if (glob(pattern, 0, NULL, &g) == 0)
            for (size_t i = 0; i < g.gl_pathc; i++) {
                if (k == MAX_SCENES) {
                    globfree(&g);
                    for (int j = 0; j < k; j++) free(paths[j]);
                    return vpt_fail("%s: more than %d recordings", o->dir, MAX_SCENES);
                }
                paths[k++] = vpt_strdup(g.gl_pathv[i]);
            }
        globfree(&g);
    }
    if (k == 0) {
        return vpt_fail("no recorded run (%s/*_exhaustive.jsonl, %s/*_sampled.jsonl[.gz])", o->dir, o->dir);
    }
    for (int i = 1; i < k; i++) /* insertion sort by path */
        for (int j = i; j > 0 && strcmp(paths[j - 1], paths[j]) > 0; j--) {
            char *t = paths[j];
            paths[j] = paths[j - 1];
            paths[j - 1] = t;
        }
    int rc = 0;
    *n = 0;
    for (int i = 0; i < k; i++) {
        if (rc == 0 && scene_open(&scenes[*n], paths[i], o) == 0) (*n)++;
        else rc = -1;
        free(paths[i]);
    }
    if (rc)
        while (*n > 0) scene_close(&scenes[--*n]);
    return rc;
}

static void scene_header(FILE *out, const Scene *s, const Options *o, const char *note)
{
    const VptTuneProvenance *p = vpt_replay_provenance(s->replay);
    fprintf(out,
            "\n**%s** (%s, %dx%d, %d spp): %zu configs (%zu ok), optimum %.4f ms, median %.4f ms; "
            "exhaustive search %.1f s simulated (%.1f s serial), target time (5%%) %.1f s; "
            "score budget K = %zu evaluations, T = %.1f s. %d seeds, %s compile model, %d compile threads%s.\n\n",
            s->name, p->gpu_name, p->width, p->height, p->spp, s->st.n, s->st.n_ok, s->st.optimum, s->st.median,
            s->st.exhaustive_s, s->st.serial_s, VPT_SCORE_TARGET_TIME * s->st.exhaustive_s, s->K,
            (double)s->K * s->st.mean_cost_s, o->seeds, o->model == VPT_COMPILE_SERIAL ? "serial" : "parallel",
            o->threads, note);
    if (s->rejected) fprintf(out, "(%zu recorded configs fail vpt_config_check and are left out)\n\n", s->rejected);
}

/* ---- JSON rows ------------------------------------------------------------- */

static json_t *json_rows;

static void json_row(const Scene *s, const char *mode, const char *tuner, const char *strategy, const char *start,
                     int selected, const VptScore *sc)
{
    if (!json_rows) return;
    const VptTuneProvenance *p = vpt_replay_provenance(s->replay);
    json_t *r = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:b, s:i, s:f, s:f, s:f, s:f, s:f, s:f, s:I, s:f, s:f, "
                          "s:I, s:I, s:s, s:s, s:s, s:{s:i, s:i, s:i}, s:s}",
                          "kind", "tuner_score", "mode", mode, "scene", s->name, "tuner", tuner, "strategy", strategy,
                          "start", start, "selected", selected, "seeds", sc->seeds, "score_evals", sc->score_evals,
                          "score_seconds", sc->score_seconds, "within_2pct_at_90s", sc->within_at_default,
                          "throughput_at_90s", sc->default_rel_throughput, "reach_98_in_5pct", sc->reached_target,
                          "throughput_at_5pct", sc->target_rel_throughput, "budget_evals", (json_int_t)sc->budget_evals,
                          "budget_seconds", sc->budget_seconds, "optimum_ms", sc->optimum_ms, "configs",
                          (json_int_t)s->st.n, "configs_ok", (json_int_t)s->st.n_ok, "gpu", p->gpu_name,
                          "fixture_commit", p->commit, "fixture", s->path, "workload", "width", p->width, "height",
                          p->height, "spp", p->spp, "commit", vpt_git_commit);
    if (r) json_array_append_new(json_rows, r);
}

static int json_write(const char *path)
{
    if (!json_rows) return 0;
    size_t cap = 1 << 16, n = 0;
    char *buf = vpt_malloc(cap);
    if (!buf) return -1;
    for (size_t i = 0; i < json_array_size(json_rows); i++) {
        char *line = json_dumps(json_array_get(json_rows, i), JSON_COMPACT | JSON_REAL_PRECISION(6));
        if (!line) {
            free(buf);
            return vpt_fail("cannot serialize a score row");
        }
        size_t len = strlen(line);
        if (n + len + 2 > cap) {
            while (n + len + 2 > cap) cap *= 2;
            char *p = vpt_realloc(buf, cap);
            if (!p) {
                free(line);
                free(buf);
                return -1;
            }
            buf = p;
        }
        memcpy(buf + n, line, len);
        n += len;
        buf[n++] = '\n';
        free(line);
    }
    int rc = vpt_write_file_atomic(path, buf, n);
    free(buf);
    return rc;
}

/* ---- one table row ----------------------------------------------------------- */

static void print_row(FILE *out, const char *label, const VptScore *sc, double optimum)
{
    char to_q[32];
    if (isfinite(sc->median_to_quality)) snprintf(to_q, sizeof to_q, "%.1f s", sc->median_to_quality);
    else snprintf(to_q, sizeof to_q, "> %.0f s", fmax(sc->budget_seconds, sc->target_seconds));
    fprintf(out, "| %s | %+.3f | %+.3f | %.0f%% | %.3f | %s | %.3f | %.0f%% | %.0f%% |\n", label, sc->score_evals,
            sc->score_seconds, 100 * sc->reached_target, sc->target_rel_throughput, to_q, optimum / sc->mean_best_ms,
            100 * sc->found_optimum, 100 * sc->within_at_default);
    fflush(out);
}

static const char table_head[] =
    "| strategy | score (evals) | score (time) | reach 98%% in 5%% | thr. at 5%% | to 98%% (median) | "
    "thr. at K | optimum at K | 2%% at 90 s |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n";

/* ---- strategies (the default mode) ------------------------------------------- */

static int score_scene(Scene *s, const Options *o, FILE *out)
{
    scene_header(out, s, o, o->no_prior ? ", strategies started at random (--no-prior)" : "");
    fprintf(out, table_head);
    for (int k = 0; k < VPT_STRATEGY_COUNT; k++) {
        if (!o->use[k]) continue;
        VptSearchOptions so;
        vpt_search_options_init(&so);
        so.strategy = (VptStrategy)k;
        so.seed = (uint64_t)o->first_seed;
        so.no_prior = o->no_prior;
        so.stagnation = (size_t)o->stagnation;
        so.random_starts = o->random_starts;
        so.prune = o->prune;
        VptScore sc;
        if (vpt_score_strategy(s->space, s->replay, &s->st, &so, o->seeds, s->K, &sc)) return -1;
        print_row(out, vpt_strategy_name((VptStrategy)k), &sc, s->st.optimum);
        json_row(s, "strategy", "vptune", vpt_strategy_name((VptStrategy)k), o->no_prior ? "none" : "thesis", 0, &sc);
        vpt_score_free(&sc);
    }
    return 0;
}

/* ---- leave one scene out --------------------------------------------------- */

typedef struct {
    const char *label, *start;
    VptStrategy strategy;
    int no_prior, transfer;
} Candidate;

static const Candidate candidates[] = {
    {"local, thesis prior", "thesis", VPT_STRATEGY_LOCAL, 0, 0},
    {"local, no prior", "none", VPT_STRATEGY_LOCAL, 1, 0},
    {"local, transfer", "transfer", VPT_STRATEGY_LOCAL, 1, 1},
    {"local, thesis + transfer", "thesis+transfer", VPT_STRATEGY_LOCAL, 0, 1},
    {"annealing, thesis + transfer", "thesis+transfer", VPT_STRATEGY_ANNEALING, 0, 1},
    {"random", "none", VPT_STRATEGY_RANDOM, 1, 0},
};
#define N_CANDIDATES ((int)(sizeof candidates / sizeof candidates[0]))

/* The fastest ok config of a recording; 0 when it has none. */
static int fastest(const Scene *s, VptConfig *out)
{
    double best = INFINITY;
    for (size_t i = 0; i < vpt_replay_count(s->replay); i++) {
        const VptEvalRecord *r = vpt_replay_record(s->replay, i);
        if (vpt_eval_objective(r) < best) {
            best = vpt_eval_objective(r);
            *out = r->config;
        }
    }
    return isfinite(best);
}

/* The transfer prior fitted on the scenes train[0..n) (see the top of the
 * file) into starts; returns how many (at most VPT_SEARCH_MAX_STARTS). */
static size_t transfer_portfolio(Scene *const *train, int n, VptConfig *starts)
{
    size_t k = 0;
    for (int i = 0; i < n && k < VPT_SEARCH_MAX_STARTS; i++) {
        VptConfig c;
        if (!fastest(train[i], &c)) continue;
        int dup = 0;
        for (size_t j = 0; j < k && !dup; j++) dup = vpt_config_equal(&starts[j], &c);
        if (!dup) starts[k++] = c;
    }
    /* the least geometric mean of time / optimum over every training scene */
    double best = INFINITY;
    VptConfig mean_best;
    for (size_t i = 0; n > 0 && i < vpt_replay_count(train[0]->replay); i++) {
        const VptConfig *c = &vpt_replay_record(train[0]->replay, i)->config;
        double logsum = 0;
        int all = 1;
        for (int t = 0; t < n && all; t++) {
            const VptEvalRecord *r = vpt_replay_find(train[t]->replay, c);
            double obj = r ? vpt_eval_objective(r) : INFINITY;
            if (!isfinite(obj)) all = 0;
            else logsum += log(obj / train[t]->st.optimum);
        }
        if (all && logsum < best) {
            best = logsum;
            mean_best = *c;
        }
    }
    if (isfinite(best) && k < VPT_SEARCH_MAX_STARTS) {
        int dup = 0;
        for (size_t j = 0; j < k && !dup; j++) dup = vpt_config_equal(&starts[j], &mean_best);
        if (!dup) starts[k++] = mean_best;
    }
    return k;
}

static int score_candidate(Scene *s, const Candidate *c, const VptConfig *starts, size_t n_starts,
                           const Options *o, VptScore *sc)
{
    VptSearchOptions so;
    vpt_search_options_init(&so);
    so.strategy = c->strategy;
    so.seed = (uint64_t)o->first_seed;
    so.no_prior = c->no_prior;
    so.stagnation = (size_t)o->stagnation;
    so.random_starts = o->random_starts;
    so.prune = o->prune;
    if (c->transfer) {
        so.starts = starts;
        so.n_starts = n_starts;
    }
    return vpt_score_strategy(s->space, s->replay, &s->st, &so, o->seeds, s->K, sc);
}

static void list_names(Scene *const *set, int n, char *buf, size_t size)
{
    buf[0] = '\0';
    for (int i = 0; i < n; i++) {
        size_t len = strlen(buf);
        snprintf(buf + len, size - len, "%s%s", i ? ", " : "", set[i]->name);
    }
}

static int leave_one_out(Scene *scenes, int n, const Options *o, FILE *out)
{
    if (n < 3) return vpt_fail("--leave-one-out needs at least 3 recorded scenes (found %d)", n);
    typedef struct {
        int chosen;
        VptScore held[N_CANDIDATES];
    } Held;
    Held *res = vpt_calloc((size_t)n, sizeof *res);
    if (!res) return -1;
    int rc = -1;
    for (int h = 0; h < n; h++) {
        Scene *train[MAX_SCENES];
        int nt = 0;
        for (int i = 0; i < n; i++)
            if (i != h) train[nt++] = &scenes[i];
        /* the choice: each candidate's mean time score over the training
         * scenes, each scored with a portfolio fitted without it */
        double mean[N_CANDIDATES] = {0};
        for (int t = 0; t < nt; t++) {
            Scene *inner[MAX_SCENES];
            int ni = 0;
            for (int i = 0; i < nt; i++)
                if (i != t) inner[ni++] = train[i];
            VptConfig starts[VPT_SEARCH_MAX_STARTS];
            size_t ns = transfer_portfolio(inner, ni, starts);
            for (int c = 0; c < N_CANDIDATES; c++) {
                VptScore sc;
                if (score_candidate(train[t], &candidates[c], starts, ns, o, &sc)) goto out;
                mean[c] += sc.score_seconds / nt;
                vpt_score_free(&sc);
            }
        }
        int chosen = 0;
        for (int c = 1; c < N_CANDIDATES; c++)
            if (mean[c] > mean[chosen]) chosen = c;
        res[h].chosen = chosen;
        VptConfig starts[VPT_SEARCH_MAX_STARTS];
        size_t ns = transfer_portfolio(train, nt, starts);
        char names[1024], note[1400];
        list_names(train, nt, names, sizeof names);
        snprintf(note, sizeof note, ", held out: prior and strategy fitted on %s", names);
        scene_header(out, &scenes[h], o, note);
        fprintf(out, "Transfer portfolio (%zu starts, fitted on %s):\n\n", ns, names);
        for (size_t i = 0; i < ns; i++) {
            char text[VPT_CONFIG_STR_MAX];
            vpt_config_format(&starts[i], text, sizeof text);
            long m = vpt_space_nearest(scenes[h].space, &starts[i], NULL);
            const VptEvalRecord *r = m >= 0 ? vpt_replay_find(scenes[h].replay, vpt_space_point(scenes[h].space, (size_t)m))
                                            : NULL;
            fprintf(out, "- `%s`%s: here %.3fx the optimum's time\n", text,
                    m >= 0 && vpt_config_equal(vpt_space_point(scenes[h].space, (size_t)m), &starts[i])
                        ? ""
                        : " (nearest member)",
                    r && isfinite(vpt_eval_objective(r)) ? vpt_eval_objective(r) / scenes[h].st.optimum : INFINITY);
        }
        fprintf(out, "\n| candidate | training score (time) | score (evals) | score (time) | reach 98%% in 5%% | "
                     "thr. at 5%% | to 98%% (median) | thr. at K | optimum at K | 2%% at 90 s |\n"
                     "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        for (int c = 0; c < N_CANDIDATES; c++) {
            VptScore *sc = &res[h].held[c];
            if (score_candidate(&scenes[h], &candidates[c], starts, ns, o, sc)) goto out;
            char label[128], to_q[32];
            snprintf(label, sizeof label, c == chosen ? "**%s** (chosen)" : "%s", candidates[c].label);
            if (isfinite(sc->median_to_quality)) snprintf(to_q, sizeof to_q, "%.1f s", sc->median_to_quality);
            else snprintf(to_q, sizeof to_q, "> %.0f s", fmax(sc->budget_seconds, sc->target_seconds));
            fprintf(out, "| %s | %+.3f | %+.3f | %+.3f | %.0f%% | %.3f | %s | %.3f | %.0f%% | %.0f%% |\n", label,
                    mean[c], sc->score_evals, sc->score_seconds, 100 * sc->reached_target, sc->target_rel_throughput,
                    to_q, scenes[h].st.optimum / sc->mean_best_ms, 100 * sc->found_optimum,
                    100 * sc->within_at_default);
            fflush(out);
            json_row(&scenes[h], "leave_one_out", "vptune", vpt_strategy_name(candidates[c].strategy),
                     candidates[c].start, c == chosen, sc);
        }
    }
    fprintf(out, "\n**Leave-one-scene-out summary** (%d seeds): the candidate chosen on the other scenes, scored on "
                 "the held-out one, beside today's default (local search from the thesis' prior).\n\n"
                 "| held-out scene | chosen | score (evals) | score (time) | 2%% at 90 s | reach 98%% in 5%% | "
                 "default: score (time) | default: 2%% at 90 s |\n|---|---|---:|---:|---:|---:|---:|---:|\n",
            o->seeds);
    for (int h = 0; h < n; h++) {
        const VptScore *c = &res[h].held[res[h].chosen], *d = &res[h].held[0];
        fprintf(out, "| %s | %s | %+.3f | %+.3f | %.0f%% | %.0f%% | %+.3f | %.0f%% |\n", scenes[h].name,
                candidates[res[h].chosen].label, c->score_evals, c->score_seconds, 100 * c->within_at_default,
                100 * c->reached_target, d->score_seconds, 100 * d->within_at_default);
    }
    rc = 0;
out:
    for (int h = 0; h < n; h++)
        for (int c = 0; c < N_CANDIDATES; c++) vpt_score_free(&res[h].held[c]);
    free(res);
    return rc;
}

/* ---- another tuner's runs ---------------------------------------------------- */

static int score_sequences(Scene *scenes, int n, const Options *o, FILE *out)
{
    VptSequences *seq = vpt_sequences_load(o->sequences);
    if (!seq) return -1;
    size_t total = vpt_sequences_count(seq);
    int rc = -1;
    const VptConfig **runs = vpt_malloc((total ? total : 1) * sizeof *runs);
    size_t *lens = vpt_malloc((total ? total : 1) * sizeof *lens);
    unsigned char *done = vpt_calloc(total ? total : 1, 1);
    if (!runs || !lens || !done) goto out;
    for (size_t i = 0; i < total; i++) {
        const VptSequence *q = vpt_sequences_get(seq, i);
        int found = 0;
        for (int h = 0; h < n && !found; h++) found = !strcmp(scenes[h].name, q->scene);
        if (!found) {
            vpt_fail("%s: sequence %zu is of scene '%s', which has no recording in %s", o->sequences, i + 1, q->scene,
                     o->dir);
            goto out;
        }
    }
    for (int h = 0; h < n; h++) {
        int headed = 0;
        for (size_t i = 0; i < total; i++) {
            const VptSequence *q = vpt_sequences_get(seq, i);
            if (done[i] || strcmp(q->scene, scenes[h].name)) continue;
            /* the group: every run of this scene, tuner and strategy */
            int k = 0;
            for (size_t j = i; j < total; j++) {
                const VptSequence *r = vpt_sequences_get(seq, j);
                if (done[j] || strcmp(r->scene, q->scene) || strcmp(r->tuner, q->tuner) ||
                    strcmp(r->strategy, q->strategy))
                    continue;
                runs[k] = r->configs;
                lens[k] = r->n;
                done[j] = 1;
                k++;
            }
            if (!headed) {
                scene_header(out, &scenes[h], o, ", another tuner's recorded runs (--sequences)");
                fprintf(out, table_head);
                headed = 1;
            }
            VptScore sc;
            if (vpt_score_sequences(scenes[h].space, scenes[h].replay, &scenes[h].st, runs, lens, k, scenes[h].K,
                                    &sc)) {
                vpt_error_prefix("%s: %s %s on %s", o->sequences, q->tuner, q->strategy, q->scene);
                goto out;
            }
            char label[2 * VPT_SEQUENCE_NAME_MAX + 32];
            snprintf(label, sizeof label, "%s %s (%d runs)", q->tuner, q->strategy, k);
            print_row(out, label, &sc, scenes[h].st.optimum);
            json_row(&scenes[h], "sequence", q->tuner, q->strategy, "-", 0, &sc);
            vpt_score_free(&sc);
        }
    }
    rc = 0;
out:
    free(runs);
    free(lens);
    free(done);
    vpt_sequences_destroy(seq);
    return rc;
}

int main(int argc, char **argv)
{
    Options o;
    if (vpt_handle_version(argc, argv, prog)) return 0;
    int pr = parse_args(argc, argv, &o);
    if (pr == 1) return 0;
    if (pr < 0) {
        vpt_report_error(prog);
        fprintf(stderr, "%s: try '%s --help'\n", prog, prog);
        return 2;
    }
    static Scene scenes[MAX_SCENES];
    int n = 0;
    if (scenes_open(&o, scenes, &n)) {
        vpt_report_error(prog);
        return 1;
    }
    if (o.json && !(json_rows = json_array())) {
        vpt_fail("out of memory");
        vpt_report_error(prog);
        return 1;
    }
    printf("Strategy scores on recorded GPU runs (bin/tune-score --fixtures %s --seeds %d%s%s). "
           "Scores after Willemsen et al.: 0 = random search (calculated by evaluations, simulated by time), "
           "1 = the optimum at once. "
           "\"reach 98%% in 5%%\": fraction of seeds whose best within 5%% of the exhaustive search's wall "
           "time has at least 98%% of the optimum's throughput; \"thr.\": mean optimum/best; \"2%% at 90 s\": "
           "fraction of seeds whose run with the default 90 s budget (simulated) ends within 2%% of the optimum.\n",
           o.dir, o.seeds, o.loo ? " --leave-one-out" : "", o.sequences ? " --sequences" : "");
    int rc = 0;
    if (o.loo) rc = leave_one_out(scenes, n, &o, stdout);
    else if (o.sequences) rc = score_sequences(scenes, n, &o, stdout);
    else
        for (int i = 0; i < n && rc == 0; i++) rc = score_scene(&scenes[i], &o, stdout);
    if (rc == 0 && o.json && json_write(o.json)) rc = -1;
    for (int i = 0; i < n; i++) scene_close(&scenes[i]);
    json_decref(json_rows);
    if (rc) vpt_report_error(prog);
    return rc ? 1 : 0;
}
