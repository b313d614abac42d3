/* bin/tune-score: scores every search strategy on recorded exhaustive runs
 * and prints the table as Markdown, so that the figures in the README are
 * regenerated from data, never typed.
 *
 *   tune-score --fixtures tests/fixtures/tuner            all strategies, 20 seeds
 *   tune-score --fixtures DIR --seeds 50 --strategy local,random
 *
 * Every DIR/<scene>_exhaustive.jsonl is replayed (tuner/eval.h: the simulated
 * clock with its compile pool) and each strategy scored after Willemsen et
 * al. (tuner/score.h) with its default knobs, seeds 1..N. Columns:
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
 *                                within K evaluations */
#include "base/error.h"
#include "base/parse.h"
#include "cli/version.h"
#include "tuner/score.h"

#include <glob.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *prog = "tune-score";

static void usage(FILE *fp)
{
    fprintf(fp,
            "usage: tune-score --fixtures DIR [--seeds N] [--strategy S,...]\n"
            "                  [--compile-model serial|parallel] [--compile-threads P] [--no-prior]\n"
            "\n"
            "Scores the search strategies on every DIR/*_exhaustive.jsonl (recorded\n"
            "exhaustive GPU runs) and prints a Markdown table.\n"
            "\n"
            "  --seeds N            seeds per strategy and scene (default 20)\n"
            "  --strategy S,...     strategies to score (default: all but exhaustive)\n"
            "  --compile-model M    how the replay times compiles (tuner/eval.h; default serial)\n"
            "  --compile-threads P  simulated compile threads (default %d)\n"
            "  --no-prior           strategies start from random members, not the thesis'\n"
            "                       default (what the prior is worth)\n",
            VPT_REPLAY_COMPILE_THREADS);
}

typedef struct {
    const char *dir;
    int seeds;
    int use[VPT_STRATEGY_COUNT];
    int threads;
    VptCompileModel model;
    int no_prior;
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
    o->threads = VPT_REPLAY_COMPILE_THREADS;
    o->model = VPT_COMPILE_SERIAL;
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
        if (!v) return vpt_fail("%s needs a value (see --help)", a);
        i++;
        if (!strcmp(a, "--fixtures")) o->dir = v;
        else if (!strcmp(a, "--seeds")) {
            if (vpt_parse_int(v, 1, 10000, "--seeds", &o->seeds)) return -1;
        } else if (!strcmp(a, "--strategy")) {
            if (parse_strategies(v, o)) return -1;
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
    return 0;
}

/* "manix" from ".../manix_exhaustive.jsonl". */
static void scene_of(const char *path, char *buf, size_t size)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    const char *end = strstr(base, "_exhaustive.jsonl");
    size_t n = end ? (size_t)(end - base) : strlen(base);
    snprintf(buf, size, "%.*s", (int)n, base);
}

/* One scene: its header line, then one row per strategy. */
static int score_scene(const char *path, const Options *o, FILE *out)
{
    char scene[128];
    scene_of(path, scene, sizeof scene);
    VptReplay *r = vpt_replay_open(path);
    if (!r) return -1;
    int rc = -1;
    VptSpace *s = NULL;
    VptSpaceStats st;
    memset(&st, 0, sizeof st);
    size_t rejected = 0;
    if (vpt_replay_set_compile_model(r, o->model, o->threads) || !(s = vpt_replay_space(r, &rejected)) ||
        vpt_space_stats(s, r, &st))
        goto out;
    size_t K = vpt_score_cutoff_budget(&st, 0.95);
    const VptTuneProvenance *p = vpt_replay_provenance(r);
    fprintf(out,
            "\n**%s** (%s, %dx%d, %d spp): %zu configs (%zu ok), optimum %.4f ms, median %.4f ms; "
            "exhaustive search %.1f s simulated (%.1f s serial), target time (5%%) %.1f s; "
            "score budget K = %zu evaluations, T = %.1f s. %d seeds, %s compile model, %d compile threads%s.\n\n",
            scene, p->gpu_name, p->width, p->height, p->spp, st.n, st.n_ok, st.optimum, st.median, st.exhaustive_s,
            st.serial_s, VPT_SCORE_TARGET_TIME * st.exhaustive_s, K, (double)K * st.mean_cost_s, o->seeds,
            o->model == VPT_COMPILE_SERIAL ? "serial" : "parallel", o->threads,
            o->no_prior ? ", strategies started at random (--no-prior)" : "");
    if (rejected) fprintf(out, "(%zu recorded configs fail vpt_config_check and are left out)\n\n", rejected);
    fprintf(out, "| strategy | score (evals) | score (time) | reach 98%% in 5%% | thr. at 5%% | to 98%% (median) | "
                 "thr. at K | optimum at K |\n");
    fprintf(out, "|---|---:|---:|---:|---:|---:|---:|---:|\n");
    for (int k = 0; k < VPT_STRATEGY_COUNT; k++) {
        if (!o->use[k]) continue;
        VptSearchOptions so;
        vpt_search_options_init(&so);
        so.strategy = (VptStrategy)k;
        so.seed = 1;
        so.no_prior = o->no_prior;
        VptScore sc;
        if (vpt_score_strategy(s, r, &st, &so, o->seeds, K, &sc)) goto out;
        char to_q[32];
        if (isfinite(sc.median_to_quality)) snprintf(to_q, sizeof to_q, "%.1f s", sc.median_to_quality);
        else snprintf(to_q, sizeof to_q, "> %.0f s", fmax(sc.budget_seconds, sc.target_seconds));
        fprintf(out, "| %s | %+.3f | %+.3f | %.0f%% | %.3f | %s | %.3f | %.0f%% |\n", vpt_strategy_name((VptStrategy)k),
                sc.score_evals, sc.score_seconds, 100 * sc.reached_target, sc.target_rel_throughput, to_q,
                st.optimum / sc.mean_best_ms, 100 * sc.found_optimum);
        fflush(out);
        vpt_score_free(&sc);
    }
    rc = 0;
out:
    if (rc) vpt_error_prefix("%s", path);
    vpt_space_stats_free(&st);
    vpt_space_destroy(s);
    vpt_replay_destroy(r);
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
    char pattern[1100];
    snprintf(pattern, sizeof pattern, "%s/*_exhaustive.jsonl", o.dir);
    glob_t g;
    if (glob(pattern, 0, NULL, &g) != 0 || g.gl_pathc == 0) {
        fprintf(stderr, "%s: error: no recorded exhaustive run (%s)\n", prog, pattern);
        return 1;
    }
    printf("Strategy scores on recorded exhaustive runs (bin/tune-score --fixtures %s --seeds %d). "
           "Scores after Willemsen et al.: 0 = random search (calculated by evaluations, simulated by time), "
           "1 = the optimum at once. "
           "\"reach 98%% in 5%%\": fraction of seeds whose best within 5%% of the exhaustive search's wall "
           "time has at least 98%% of the optimum's throughput; \"thr.\": mean optimum/best.\n",
           o.dir, o.seeds);
    int rc = 0;
    for (size_t i = 0; i < g.gl_pathc && rc == 0; i++)
        if (score_scene(g.gl_pathv[i], &o, stdout)) rc = 1;
    globfree(&g);
    if (rc) vpt_report_error(prog);
    return rc;
}
