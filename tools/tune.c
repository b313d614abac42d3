/* bin/tune: find a scene's fastest correct kernel configuration.
 *
 *   tune --scene manix                         defaults: see DEFAULT_* below
 *   tune --scene smoke --strategy genetic --budget 300evals --seed 7
 *   tune --scene-file scene.xml                 a Mitsuba scene (scenes/mitsuba_xml.h)
 *   tune --replay tests/fixtures/tuner/manix_exhaustive.jsonl --strategy local
 *
 * On a GPU, every evaluation is compiled (cached, in background threads),
 * checked for launch limits, gated against the reference image and measured
 * to a 1% confidence half-width; each is appended to the tune's cache
 * (results/<gpu>/tune/<scene>.jsonl) as it completes, so an interrupted tune
 * resumes where it stopped. The finalists are re-measured interleaved; the
 * winner goes to results/<gpu>/best/<scene>.json, where `render --config
 * best` finds it. --replay runs the same search on a recorded exhaustive run
 * instead of a GPU (simulation: the recorded times and costs). */
#include "base/error.h"
#include "base/file.h"
#include "base/parse.h"
#include "harness/provenance.h"
#include "cli/gpu_check.h"
#include "cli/scene_args.h"
#include "cli/version.h"
#include "scenes/mitsuba_xml.h"
#include "scenes/scene.h"
#include "tuner/best.h"
#include "tuner/cache.h"
#include "tuner/gpu_eval.h"
#include "tuner/search.h"
#include "tuner/estimators.h"
#include "tuner/space.h"
#include "tuner/t4.h"
#include "tuner/transfer.h"
#include "tuner/tune.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Chosen by measurement on the recorded spaces: bin/tune-score --fixtures
 * tests/fixtures/tuner --seeds 1000 (H100, manix and bucky, 336 configs
 * each). Local search scores +0.93/+0.90 (by evaluations) and +0.98/+0.98
 * (by time) against random search's 0, and is the only strategy that reaches
 * 98% of the optimum's throughput within 5% of the exhaustive search's wall
 * time (9.2-9.3 s of 184-186 s) on every seed of both scenes, in a median 1.2 s
 * and 1.6 s (annealing: 80%/73% of seeds, the GA 45%/28%, random 33%/21%,
 * halving 31%/22%); test_tuner_fixture.c checks it. On a GPU it also starts
 * from the winners other scenes' tunes saved (tuner/transfer.h): left out
 * one scene at a time, that scored at least as well on all six
 * (bin/tune-score --leave-one-out). */
#define DEFAULT_STRATEGY "local"
#define DEFAULT_BUDGET_S 90.0

static const char *prog = "tune";
static volatile sig_atomic_t interrupted;

static void on_sigint(int sig)
{
    (void)sig;
    interrupted = 1;
}

static void usage(FILE *fp)
{
    fprintf(fp,
            "usage: tune (--scene NAME | --volume FILE [--like SCENE ...] | --scene-file FILE.xml | --replay FILE)\n"
            "            [options]\n"
            "\n"
            "Searches the kernel configuration space for the fastest configuration that\n"
            "renders the scene correctly, and saves it as results/<gpu>/best/<scene>.json\n"
            "(used by `render --config best`). A Mitsuba scene file (--scene-file) is named\n"
            "<file stem>-<8 hex digits of its content's SHA-256>, so that the caches and best\n"
            "configs of different scenes never mix; its integrator's depths apply.\n"
            "\n"
            "  --strategy S      exhaustive | random | local | annealing | genetic | halving\n"
            "                    (default " DEFAULT_STRATEGY ")\n"
            "  --budget B        90s, 2m, 200evals; may be given twice (time and count);\n"
            "                    default %.0fs\n"
            "  --seed N          search seed (default 1)\n"
            "  --space DIM=V,..  restrict a dimension (schedule, maxrregcount, ppt, block, grid,\n"
            "                    threshold, sortkey, lookahead, coop); may repeat\n"
            "  --estimators L    the estimators to choose from (majorant grid, density format):\n"
            "                    all (default on a GPU), global (the thesis' only; default with\n"
            "                    --replay), or MAJORANT:DENSITY,... e.g. global:f32,grid8:u8;\n"
            "                    screened on the start config and on the search's best\n"
            "  --width W --height H --spp N    workload (default: the scene's thesis workload)\n"
            "  --cache FILE      evaluations cache (default results/<gpu>/tune/<scene>.jsonl)\n"
            "  --fresh           start a new cache (the old one is kept as FILE.prevN)\n"
            "  --top K           rows of the final table and finalists re-measured (default 5)\n"
            "  --t4 FILE         also export the evaluations in Kernel Tuner's T4 format\n"
            "  --replay FILE     simulate on a recorded exhaustive run (no GPU needed)\n"
            "  --no-save         do not write results/<gpu>/best/<scene>.json\n"
            "  --dump-space      print the (restricted) space, one config per line, and exit\n"
            "  --quiet           no progress line\n"
            "  --version         commit, NVRTC and driver versions\n"
            "\n",
            DEFAULT_BUDGET_S);
    vpt_scene_args_usage(fp);
    fprintf(fp, "\nExit status: 0 done, 1 error, 2 bad usage, 3 no CUDA GPU or driver.\n\nScenes:\n");
    vpt_scene_print_list(fp);
}

typedef struct {
    VptSceneArgs scene;   /* --scene, --volume (+ its flags), --scene-file */
    const char *replay, *cache, *t4, *strategy;
    double budget_s;
    size_t budget_evals;
    uint64_t seed;
    int fresh, top, save, quiet, dump_space;
    VptRenderSettings rs;
    const char *space[16];
    int nspace;
    VptEstimator estimators[VPT_ESTIMATORS_MAX];
    int n_estimators; /* -1: the default (all on a GPU, global with --replay) */
} Options;

static int parse_budget(const char *v, Options *o)
{
    size_t n = strlen(v);
    if (n > 5 && !strcmp(v + n - 5, "evals")) {
        char num[32];
        if (n - 5 >= sizeof num) return vpt_fail("--budget: '%s' is too long", v);
        memcpy(num, v, n - 5);
        num[n - 5] = '\0';
        uint64_t e;
        if (vpt_parse_u64(num, 10000000, "--budget (evaluations)", &e)) return -1;
        if (e == 0) return vpt_fail("--budget: 0evals allows no evaluation (give at least 1evals)");
        o->budget_evals = (size_t)e;
        return 0;
    }
    return vpt_parse_duration(v, "--budget (e.g. 90s, 2m, 200evals)", &o->budget_s);
}

static int parse_args(int argc, char **argv, Options *o)
{
    memset(o, 0, sizeof *o);
    o->seed = 1;
    o->top = 5;
    o->save = 1;
    o->rs.seed = 1;
    o->rs.rr_depth = -1;
    o->strategy = DEFAULT_STRATEGY;
    o->n_estimators = -1;
    int budget_given = 0;
    vpt_scene_args_init(&o->scene);
    for (int i = 1; i < argc; i++) {
        int taken = vpt_scene_args_take(&o->scene, argc, argv, &i, 0);
        if (taken < 0) return -1;
        if (taken) continue;
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 1;
        }
        if (!strcmp(a, "--fresh")) { o->fresh = 1; continue; }
        if (!strcmp(a, "--no-save")) { o->save = 0; continue; }
        if (!strcmp(a, "--quiet")) { o->quiet = 1; continue; }
        if (!strcmp(a, "--dump-space")) { o->dump_space = 1; continue; }
        if (a[0] != '-') return vpt_fail("unexpected argument '%s' (see --help)", a);
        if (!v) return vpt_fail("%s needs a value", a);
        i++;
        if (!strcmp(a, "--replay")) o->replay = v;
        else if (!strcmp(a, "--cache")) o->cache = v;
        else if (!strcmp(a, "--t4")) o->t4 = v;
        else if (!strcmp(a, "--strategy")) {
            VptStrategy s;
            if (vpt_strategy_parse(v, &s)) return -1;
            o->strategy = v;
        } else if (!strcmp(a, "--budget")) {
            if (parse_budget(v, o)) return -1;
            budget_given = 1;
        } else if (!strcmp(a, "--seed")) {
            if (vpt_parse_u64(v, UINT64_MAX, "--seed", &o->seed)) return -1;
        } else if (!strcmp(a, "--top")) {
            if (vpt_parse_int(v, 1, 100, "--top", &o->top)) return -1;
        } else if (!strcmp(a, "--width")) {
            if (vpt_parse_int(v, 1, 16384, "--width", &o->rs.width)) return -1;
        } else if (!strcmp(a, "--height")) {
            if (vpt_parse_int(v, 1, 16384, "--height", &o->rs.height)) return -1;
        } else if (!strcmp(a, "--spp")) {
            if (vpt_parse_int(v, 1, 1 << 20, "--spp", &o->rs.spp)) return -1;
        } else if (!strcmp(a, "--estimators")) {
            if ((o->n_estimators = vpt_estimators_parse(v, o->estimators)) < 0) {
                vpt_error_prefix("--estimators");
                return -1;
            }
        } else if (!strcmp(a, "--space")) {
            if (o->nspace == 16) return vpt_fail("--space: at most 16 restrictions");
            if (!strchr(v, '=')) return vpt_fail("--space: expected DIM=V1,V2,... (got '%s')", v);
            o->space[o->nspace++] = v;
        } else {
            return vpt_fail("unknown option '%s' (see --help)", a);
        }
    }
    if (o->dump_space) return 0;
    if (vpt_scene_args_check(&o->scene, 0, 0)) return -1;
    if (vpt_scene_args_given(&o->scene) + !!o->replay != 1)
        return vpt_fail("give exactly one of --scene NAME, --volume FILE, --scene-file FILE.xml or --replay FILE");
    if (!budget_given) o->budget_s = DEFAULT_BUDGET_S;
    return 0;
}

static VptSpace *make_space(const Options *o, VptSpace *base)
{
    VptSpace *s = base ? base : vpt_space_create();
    if (!s) return NULL;
    for (int i = 0; i < o->nspace; i++) {
        char dim[64];
        const char *eq = strchr(o->space[i], '=');
        size_t n = (size_t)(eq - o->space[i]);
        if (n >= sizeof dim) n = sizeof dim - 1;
        memcpy(dim, o->space[i], n);
        dim[n] = '\0';
        if (vpt_space_restrict(s, dim, eq + 1)) {
            vpt_error_prefix("--space %s", o->space[i]);
            vpt_space_destroy(s);
            return NULL;
        }
    }
    if (vpt_space_size(s) == 0) {
        vpt_space_destroy(s);
        vpt_fail("--space: the restrictions leave no valid configuration");
        return NULL;
    }
    return s;
}

/* The estimator stage's list: the one given, else all estimators on a GPU
 * and the recording's only (the global majorant, f32) in a replay. A list
 * of global:f32 alone needs no screening. */
static void set_estimators(Options *o, VptTuneOptions *to, int replay)
{
    if (o->n_estimators < 0) o->n_estimators = vpt_estimators_parse(replay ? "global" : "all", o->estimators);
    int only_global = o->n_estimators == 1 && o->estimators[0].majorant == 0 &&
                      o->estimators[0].density == VPT_DENSITY_F32;
    to->estimators = o->estimators;
    to->n_estimators = only_global ? 0 : (size_t)o->n_estimators;
}

static void search_options(const Options *o, VptSearchOptions *so)
{
    vpt_search_options_init(so);
    vpt_strategy_parse(o->strategy, &so->strategy);
    so->seed = o->seed;
    so->max_evals = o->budget_evals;
    so->max_seconds = o->budget_s;
    so->interrupt = &interrupted;
}

/* The finalists against the two references the issue names, measured now in
 * the same session: naiveSK and the thesis' default (regenerationSK, thread). */
static void print_against_references(VptGpuEval *g, const VptTuneResult *res)
{
    static const char *const names[2] = {"naiveSK", "regenerationSK-thread"};
    VptEvalRecord ref[2];
    for (int i = 0; i < 2; i++) {
        VptConfig c;
        if (vpt_config_parse(names[i], &c) || vpt_gpu_eval_evaluate(g, &c, 1, &ref[i])) {
            vpt_report_error(prog);
            return;
        }
    }
    printf("\nagainst the references (measured in this session: naiveSK %.3f ms, regenerationSK-thread %.3f ms):\n",
           ref[0].time_ms, ref[1].time_ms);
    printf("rank   Mrays/s    time_ms  occ theor/achieved  regs  SIMD eff  vs naiveSK  vs regenerationSK-thread\n");
    for (size_t i = 0; i < res->n_top; i++) {
        const VptEvalRecord *r = &res->top[i];
        if (r->status != VPT_STATUS_OK) continue;
        printf("%4zu %9.1f %10.4f       %4.2f / %4.2f   %4.0f    %5.1f%%     %6.2fx    %6.2fx\n", i + 1, r->mrays_per_s,
               r->time_ms, r->occupancy_theoretical, r->occupancy_achieved, r->registers, 100 * r->simd_efficiency,
               ref[0].time_ms / r->time_ms, ref[1].time_ms / r->time_ms);
    }
}

static int finish(const Options *o, const VptTuneResult *res, const VptCache *cache)
{
    if (o->t4 && cache && vpt_t4_write_cache(o->t4, cache)) return -1;
    if (o->t4 && !cache && vpt_t4_write(o->t4, res->search.evals, res->search.n_evals)) return -1;
    if (o->t4) printf("T4 export: %s\n", o->t4);
    return 0;
}

static int run_replay(Options *o)
{
    VptReplay *r = vpt_replay_open(o->replay);
    if (!r) {
        vpt_error_prefix("--replay");
        vpt_report_error(prog);
        return 1;
    }
    size_t rejected = 0;
    VptSpace *s = make_space(o, vpt_replay_space(r, &rejected));
    if (!s) {
        vpt_replay_destroy(r);
        return 2;
    }
    printf("replaying %s: %zu recorded configurations (scene %s, %s)\n", o->replay, vpt_space_size(s),
           vpt_replay_provenance(r)->scene, vpt_replay_provenance(r)->gpu_name);
    /* --cache: the simulated evaluations are kept like real ones, under the
     * recording's provenance (convergence traces for the report). */
    VptCache *cache = NULL;
    if (o->cache) {
        cache = vpt_cache_open(o->cache, vpt_replay_provenance(r), o->fresh ? VPT_CACHE_FRESH : 0);
        if (cache) printf("cache %s (%zu evaluations already there)\n", o->cache, vpt_cache_count(cache));
        if (!cache) {
            vpt_report_error(prog);
            vpt_space_destroy(s);
            vpt_replay_destroy(r);
            return 1;
        }
    }
    VptTuneOptions to;
    vpt_tune_options_init(&to);
    to.space = s;
    to.evaluate = vpt_replay_evaluate;
    to.evaluate_ctx = r;
    to.cache = cache;
    search_options(o, &to.search);
    set_estimators(o, &to, 1);
    to.search.prefetch = vpt_replay_prefetch; /* compiles overlap as on a GPU */
    to.search.prefetch_user = r;
    to.top_k = o->top;
    to.progress = o->quiet ? NULL : stderr;
    to.report = stdout;
    VptTuneResult res;
    int rc = vpt_tune_run(&to, &res);
    if (rc == 0) {
        printf("simulated tuning time %.1f s over %zu evaluations\n", vpt_replay_clock(r), res.search.n_evals);
        if (finish(o, &res, cache)) rc = -1;
        vpt_tune_result_free(&res);
    }
    if (cache) vpt_cache_close(cache);
    vpt_space_destroy(s);
    vpt_replay_destroy(r);
    if (rc) vpt_report_error(prog);
    return rc ? 1 : 0;
}

static int run_gpu(Options *o)
{
    /* A large scene that cannot fit on the GPU with the estimators the tune
     * may choose is refused before it is built or loaded (cli/gpu_check.h). */
    VptGpuCheck gpu_check;
    memset(&gpu_check, 0, sizeof gpu_check);
    vpt_gpu_estimators_add(&gpu_check.estimators, VPT_DENSITY_F32, 0);
    if (o->n_estimators < 0) vpt_gpu_estimators_all(&gpu_check.estimators);
    for (int i = 0; i < o->n_estimators; i++)
        vpt_gpu_estimators_add(&gpu_check.estimators, o->estimators[i].density, o->estimators[i].majorant);
    if (!o->scene.print_scene) {
        o->scene.admit = vpt_gpu_check_admit;
        o->scene.admit_ctx = &gpu_check;
    }
    VptMitsubaIntegrator in;
    VptScene *scene = vpt_scene_args_load(&o->scene, NULL, &in);
    if (!scene) {
        vpt_report_error(prog);
        return 1;
    }
    if (o->scene.scene_file) {
        o->rs.max_depth = in.max_depth;
        o->rs.rr_depth = in.rr_depth;
    }
    if (o->scene.print_scene) {
        int rc = vpt_scene_args_print(stdout, scene);
        if (rc) vpt_report_error(prog);
        vpt_scene_destroy(scene);
        return rc ? 1 : 0;
    }
    /* The scene as options, for the commands the hints below print. */
    char words[2048];
    if (vpt_scene_args_format(&o->scene, words, sizeof words)) {
        vpt_report_error(prog);
        vpt_scene_destroy(scene);
        return 1;
    }
    VptSpace *space = make_space(o, NULL);
    if (!space) {
        vpt_report_error(prog);
        vpt_scene_destroy(scene);
        return 2;
    }
    VptEvaluatorOptions eo = vpt_evaluator_options_default();
    eo.quiet = 1;
    int no_gpu = 0;
    VptGpuEval *g = vpt_gpu_eval_create(&eo, scene, &o->rs, &no_gpu);
    if (!g && !no_gpu) {
        vpt_report_error(prog);
        vpt_space_destroy(space);
        vpt_scene_destroy(scene);
        return 1;
    }
    if (!g) {
        vpt_report_error(prog);
        /* A recorded space of this scene when the repository has one. */
        char fixture[256];
        snprintf(fixture, sizeof fixture, "tests/fixtures/tuner/%s_exhaustive.jsonl", scene->name);
        if (access(fixture, R_OK) != 0) snprintf(fixture, sizeof fixture, "tests/fixtures/tuner/manix_exhaustive.jsonl");
        fprintf(stderr,
                "%s: tuning measures kernels on a CUDA GPU. Without one you can still:\n"
                "  tune --replay %s   search a recorded space (in the source tree)\n"
                "  render --cpu %s --spp 1 -o out.png   a one-sample preview with the CPU reference\n",
                prog, fixture, words);
        vpt_space_destroy(space);
        vpt_scene_destroy(scene);
        return VPT_EXIT_NO_GPU;
    }
    VptTuneProvenance prov;
    vpt_gpu_eval_provenance(g, &prov);
    char cache_path[1024], gpu_dir[128];
    vpt_gpu_dirname(prov.gpu_name, gpu_dir, sizeof gpu_dir);
    if (o->cache) snprintf(cache_path, sizeof cache_path, "%s", o->cache);
    else snprintf(cache_path, sizeof cache_path, "results/%s/tune/%s.jsonl", gpu_dir, scene->name);
    char dir[1024];
    vpt_dirname(cache_path, dir, sizeof dir);
    int rc = 1;
    VptCache *cache = NULL;
    if (vpt_mkdirs(dir) == 0) cache = vpt_cache_open(cache_path, &prov, o->fresh ? VPT_CACHE_FRESH : 0);
    if (!cache) {
        vpt_report_error(prog);
        fprintf(stderr, "%s: to start a new cache (the old file is kept): tune %s --fresh\n", prog, words);
        goto out;
    }
    printf("tuning %s on %s (driver %s, NVRTC %s, commit %s): %ux%u, %d spp; strategy %s; space of %zu schedule "
           "configs x %d estimators\n",
           scene->name, prov.gpu_name, prov.driver, prov.nvrtc, prov.commit, prov.width, prov.height, prov.spp,
           o->strategy, vpt_space_size(space), o->n_estimators < 0 ? VPT_ESTIMATORS_MAX : o->n_estimators);
    printf("cache %s (%zu evaluations already there)\n", cache_path, vpt_cache_count(cache));
    VptTuneOptions to;
    vpt_tune_options_init(&to);
    to.space = space;
    to.evaluate = vpt_gpu_eval_evaluate;
    to.evaluate_ctx = g;
    to.cache = cache;
    search_options(o, &to.search);
    to.search.prefetch = vpt_gpu_eval_prefetch;
    to.search.prefetch_user = g;
    to.top_k = o->top;
    to.progress = o->quiet ? NULL : stderr;
    to.report = stdout;
    to.remeasure = vpt_gpu_eval_remeasure;
    to.remeasure_ctx = g;
    set_estimators(o, &to, 0);
    /* the transfer prior: other scenes' saved winners as extra starts
     * (tuner/transfer.h says why) */
    VptConfig starts[VPT_SEARCH_MAX_STARTS];
    char from[1024];
    to.search.starts = starts;
    to.search.n_starts = vpt_transfer_starts("results", prov.gpu_name, scene->name, starts, VPT_SEARCH_MAX_STARTS,
                                             from, sizeof from);
    if (to.search.n_starts) printf("transfer prior: %zu starts, the configs saved for %s\n", to.search.n_starts, from);
    VptTuneResult res;
    if (vpt_tune_run(&to, &res)) {
        vpt_report_error(prog);
        goto out;
    }
    if (interrupted) printf("interrupted: the cache keeps every evaluation; run the same command to resume\n");
    else if (res.have_winner) print_against_references(g, &res);
    rc = 0;
    if (res.have_winner && o->save) {
        char best[1024];
        if (vpt_best_path("results", prov.gpu_name, scene->name, best, sizeof best) ||
            vpt_best_save(best, &prov, &res.winner, o->strategy)) {
            vpt_report_error(prog);
            rc = 1;
        } else {
            printf("winner saved to %s (render %s --config best -o out.png)\n", best, words);
        }
    } else if (!res.have_winner) {
        printf("no configuration passed: nothing saved\n");
    }
    if (finish(o, &res, cache)) {
        vpt_report_error(prog);
        rc = 1;
    }
    vpt_tune_result_free(&res);
out:
    if (cache) vpt_cache_close(cache);
    vpt_gpu_eval_destroy(g);
    vpt_space_destroy(space);
    vpt_scene_destroy(scene);
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
    if (o.dump_space) {
        VptSpace *s = make_space(&o, NULL);
        if (!s) {
            vpt_report_error(prog);
            return 2;
        }
        char buf[VPT_CONFIG_STR_MAX];
        for (size_t i = 0; i < vpt_space_size(s); i++) {
            vpt_config_format(vpt_space_point(s, i), buf, sizeof buf);
            puts(buf);
        }
        vpt_space_destroy(s);
        return 0;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    return o.replay ? run_replay(&o) : run_gpu(&o);
}
