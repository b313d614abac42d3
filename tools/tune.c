/* bin/tune: find a scene's fastest correct kernel configuration.
 *
 *   tune --scene manix                         defaults: see DEFAULT_* below
 *   tune --scene smoke --strategy genetic --budget 300evals --seed 7
 *   tune --scene-file scene.xml                 a Mitsuba scene (scenes/mitsuba/mitsuba_xml.h)
 *   tune --replay tests/fixtures/tuner/manix_exhaustive.jsonl --strategy local
 *
 * On a GPU, every evaluation is compiled (cached, in background threads),
 * checked for launch limits, gated against the reference image and measured
 * to a 1% confidence half-width; each is appended to the tune's cache
 * (results/<gpu>/tune/<scene>.jsonl) as it completes, so an interrupted tune
 * resumes where it stopped. The finalists are re-measured interleaved; the
 * winner goes to results/<gpu>/best/<scene>.json, where `render --config
 * best` finds it. --replay runs the same search on a recorded exhaustive run
 * instead of a GPU (simulation: the recorded times and costs), its finish
 * too. A time budget covers the finish (tuner/tune.h); the last lines say
 * how the time went: start, search and finish, and the finish against its
 * prediction.
 *
 * On several GPUs (--gpus all|LIST on one host, and/or one MPI rank per GPU
 * under mpirun or srun) the search stays here, in one process (rank 0), and
 * the GPUs evaluate what it announces side by side: tuner/pool.h says how,
 * tuner/mpi.h what each rank does. With one GPU and no MPI, nothing of that
 * runs: the tune is the one it always was. */
#include "base/embedded.h"
#include "base/error.h"
#include "base/progress.h"
#include "base/file.h"
#include "base/parse.h"
#include "base/threads.h"
#include "harness/gpu_list.h"
#include "harness/provenance.h"
#include "cli/gpu_check.h"
#include "cli/gpus_arg.h"
#include "cli/scene_args.h"
#include "cli/version.h"
#include "scenes/mitsuba/mitsuba_xml.h"
#include "scenes/scene.h"
#include "tuner/best.h"
#include "tuner/cache.h"
#include "tuner/gpu_eval.h"
#include "tuner/lanes.h"
#include "tuner/mpi.h"
#include "tuner/pool.h"
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
#include <time.h>
#include <unistd.h>

/* The default strategy is local search: on the recorded spaces
 * (bin/tune-score --fixtures tests/fixtures/tuner) it is the strategy that
 * reaches 98% of the optimum's throughput within 5% of the exhaustive
 * search's wall time on every seed, which test_tuner_fixture.c checks; the
 * scores are in docs/decisions/default-strategy-local.md. On a GPU it also
 * starts from the winners other scenes' tunes saved (tuner/transfer.h,
 * docs/decisions/transfer-prior.md). */
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
            "                    default %.0fs. A time covers the whole tune past its start:\n"
            "                    the search stops so that the finish (the finalists re-measured,\n"
            "                    the references) predicted from its measurements fits too\n"
            "  --seed N          search seed (default 1)\n"
            "  --space DIM=V,..  restrict a dimension (schedule, maxrregcount, ppt, block, grid,\n"
            "                    threshold, sortkey, lookahead, coop, flights); may repeat\n"
            "  --estimators L    the estimators to choose from (majorant: global, gridC or skip;\n"
            "                    density format):\n"
            "                    all (default on a GPU), global (the thesis' only; default with\n"
            "                    --replay), or MAJORANT:DENSITY,... e.g. global:f32,grid8:u8;\n"
            "                    screened on the start config and on the search's best\n"
            "  --rivals N        race the N fastest majorants among the screening's near-fastest,\n"
            "                    one descent each, before the rest of the budget goes to one\n"
            "                    (default %d; 1: the screening's fastest gets it all)\n"
            "  --width W --height H --spp N    workload (default: the scene's thesis workload)\n"
            "  --cache FILE      evaluations cache (default results/<gpu>/tune/<scene>.jsonl)\n"
            "  --fresh           start a new cache (the old one is kept as FILE.prevN)\n"
            "  --top K           rows of the final table and finalists re-measured (default 5);\n"
            "                    fewer leave more of a time budget to the search\n"
            "  --t4 FILE         also export the evaluations in Kernel Tuner's T4 format\n"
            "  --replay FILE     simulate on a recorded exhaustive run (no GPU needed)\n"
            "  --gpus all|LIST   evaluate on these GPUs of this host side by side (LIST: 0,1,...);\n"
            "                    default: GPU 0, or under MPI (mpirun, srun) one GPU per rank: its\n"
            "                    rank on the node modulo the GPUs it sees. With --replay, LIST\n"
            "                    names simulated GPUs (ranks naming the same one take turns)\n"
            "  --no-save         do not write results/<gpu>/best/<scene>.json\n"
            "  --dump-space      print the (restricted) space, one config per line, and exit\n"
            "  --quiet           no progress line\n"
            "  --version         commit, NVRTC and driver versions\n"
            "\n",
            DEFAULT_BUDGET_S, VPT_ESTIMATORS_RIVALS_MAX);
    vpt_scene_args_usage(fp);
    fprintf(fp, "\nUnder mpirun or srun (a build with MPI: make MPI=1), rank 0 searches, writes the cache and\n"
                "prints; every rank measures on its GPU (mpirun -np 2 bin/tune --scene manix).\n"
                "\nExit status: 0 done, 1 error, 2 bad usage, 3 no CUDA GPU or driver.\n\nScenes:\n");
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
    int rivals;
    VptGpuSelection gpus;
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
    o->rivals = VPT_ESTIMATORS_RIVALS_MAX;
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
        } else if (!strcmp(a, "--rivals")) {
            if (vpt_parse_int(v, 1, VPT_ESTIMATORS_MAX, "--rivals", &o->rivals)) return -1;
        } else if (!strcmp(a, "--gpus")) {
            if (vpt_gpus_parse(v, &o->gpus)) return -1;
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
    for (int i = 0; i < o->nspace; i++)
        if (vpt_space_restrict_spec(s, o->space[i])) {
            vpt_space_destroy(s);
            return NULL;
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
    to->rivals = o->rivals;
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

/* ---- where the evaluations run ------------------------------------------
 *
 * One GPU and no MPI: the evaluator of the GPU (or the replay) runs in this
 * thread, as it always did (a direct pool, tuner/pool.h). Otherwise this
 * process's lanes (tuner/lanes.h: a thread and a GPU, or a simulated GPU,
 * each) and, at rank 0, the other ranks' lanes (tuner/mpi.h) evaluate side
 * by side for one pool. */

typedef struct {
    const Options *o;
    const VptScene *scene;        /* GPU lanes */
    VptEvaluatorOptions eo;
    double delay_s;               /* replay lanes: VPT_REPLAY_DELAY_S */
    int device[VPT_GPUS_MAX];
    char visible[VPT_GPUS_MAX][128];
    int n;
} LaneSetup;

static void set_lane_info(VptLaneInfo *info, const char *name, const char *uuid, const char *driver, const char *nvrtc,
                          const char *commit, int device)
{
    snprintf(info->gpu_name, sizeof info->gpu_name, "%s", name);
    snprintf(info->gpu_uuid, sizeof info->gpu_uuid, "%s", uuid);
    snprintf(info->driver, sizeof info->driver, "%s", driver);
    snprintf(info->nvrtc, sizeof info->nvrtc, "%s", nvrtc);
    snprintf(info->commit, sizeof info->commit, "%s", commit);
    info->device = device;
}

static void *gpu_lane_open(void *user, int lane, VptLaneInfo *info, int *no_gpu)
{
    const LaneSetup *ls = user;
    VptGpuEval *g = vpt_gpu_eval_create_pinned(&ls->eo, ls->visible[lane], ls->scene, &ls->o->rs, no_gpu);
    if (!g) {
        vpt_error_prefix("GPU %d", ls->device[lane]);
        return NULL;
    }
    const VptProvenance *p = vpt_gpu_eval_harness_provenance(g);
    set_lane_info(info, p->gpu_name, p->gpu_uuid, p->driver_release, p->nvrtc, p->commit, ls->device[lane]);
    return g;
}

static void gpu_lane_close(void *ctx) { vpt_gpu_eval_destroy(ctx); }

/* A simulated GPU: a replay of the recording of its own (its own clock and
 * compile pool), named "<recorded UUID>#<k>" for simulated GPU k. */
typedef struct {
    VptReplay *r;
    double delay_s;
} ReplayLane;

static void *replay_lane_open(void *user, int lane, VptLaneInfo *info, int *no_gpu)
{
    const LaneSetup *ls = user;
    *no_gpu = 0;
    ReplayLane *rl = vpt_calloc(1, sizeof *rl);
    if (!rl) return NULL;
    if (!(rl->r = vpt_replay_open(ls->o->replay))) {
        vpt_error_prefix("--replay");
        free(rl);
        return NULL;
    }
    rl->delay_s = ls->delay_s;
    const VptTuneProvenance *p = vpt_replay_provenance(rl->r);
    char uuid[80];
    snprintf(uuid, sizeof uuid, "%.64s#%d", p->gpu_uuid, ls->device[lane]);
    set_lane_info(info, p->gpu_name, uuid, p->driver, p->nvrtc, p->commit, ls->device[lane]);
    return rl;
}

/* The recorded answer; with VPT_REPLAY_DELAY_S, after that much real time,
 * as a GPU would take (the tests that kill a rank mid-run need a run that
 * lasts). */
static int replay_lane_evaluate(void *ctx, const VptConfig *c, int fidelity, VptEvalRecord *out)
{
    ReplayLane *rl = ctx;
    if (rl->delay_s > 0) {
        struct timespec ts = {(time_t)rl->delay_s, (long)((rl->delay_s - (double)(time_t)rl->delay_s) * 1e9)};
        while (nanosleep(&ts, &ts) != 0) {
        }
    }
    return vpt_replay_evaluate(rl->r, c, fidelity, out);
}

static void replay_lane_prefetch(void *ctx, const VptConfig *configs, size_t n, int fidelity)
{
    vpt_replay_prefetch(((ReplayLane *)ctx)->r, configs, n, fidelity);
}

static void replay_lane_close(void *ctx)
{
    ReplayLane *rl = ctx;
    vpt_replay_destroy(rl->r);
    free(rl);
}

/* The GPUs this process drives: --gpus; else one GPU, GPU 0 in one process
 * and, under MPI, the rank's place on its node modulo the GPUs it sees
 * (tuner/mpi.h). A replay simulates the GPUs it is given, by default one
 * per rank. Fills ls->device, ls->visible and ls->n; -1 with a message
 * (*no_gpu: the GPU or driver is missing), -2 when --gpus names a GPU this
 * host does not have. */
static int select_gpus(const Options *o, const VptMpi *m, LaneSetup *ls, int *no_gpu)
{
    *no_gpu = 0;
    ls->n = 0;
    if (o->replay) {
        if (o->gpus.given && !o->gpus.all) {
            for (int i = 0; i < o->gpus.n; i++) ls->device[ls->n++] = o->gpus.index[i];
        } else {
            ls->device[ls->n++] = m ? vpt_mpi_rank(m) : 0;
        }
        return 0;
    }
    if (!o->gpus.given && !m) { /* the tune on one GPU, as it always was */
        ls->device[ls->n++] = 0;
        return 0;
    }
    VptGpuBrief gpus[VPT_GPU_LIST_MAX];
    int count = vpt_gpu_list(gpus, VPT_GPU_LIST_MAX, no_gpu);
    if (count < 0) return -1;
    if (o->gpus.given) {
        int n = vpt_gpus_resolve(&o->gpus, count, ls->device);
        if (n < 0) return -2;
        ls->n = n;
    } else {
        ls->device[ls->n++] = vpt_mpi_local_rank(m) % count;
    }
    for (int i = 0; i < ls->n; i++)
        if (vpt_gpu_visible_value(ls->device[i], ls->visible[i], (int)sizeof ls->visible[i])) return -1;
    return 0;
}

/* Compiles per lane when several lanes share this process's cores (and
 * VPT_COMPILE_JOBS does not say): the cores but one per lane, shared out.
 * The cores are the process's CPU affinity; when a launcher gave it fewer
 * than the host has (mpirun --map-by ...:PE=N, srun --cpus-per-task), they
 * are this process's own and only its lanes share them, else every lane of
 * the host does. Fewer than two cores per lane starves the compiles, so
 * that is said (docs/decisions/cores-from-affinity.md). */
static void share_cores(VptEvaluatorOptions *eo, int lanes_here, int lanes_on_host)
{
    const int cores = vpt_cpu_count();
    const long online = sysconf(_SC_NPROCESSORS_ONLN);
    const int sharing = online > 0 && cores < online ? lanes_here : lanes_on_host;
    if (cores < 2 * lanes_here)
        fprintf(stderr,
                "tune: this process may run on %d core%s (its CPU affinity) for %d GPU%s: compiles will queue "
                "behind the measurements; give it more (mpirun --bind-to none or --map-by slot:PE=N, srun "
                "--cpus-per-task=N, taskset)\n",
                cores, cores == 1 ? "" : "s", lanes_here, lanes_here == 1 ? "" : "s");
    if (sharing < 2 || eo->compile_threads != 0 || getenv("VPT_COMPILE_JOBS")) return;
    int jobs = (cores - sharing) / sharing;
    eo->compile_threads = jobs > 1 ? jobs : 1;
}

typedef struct {
    VptMpi *m;           /* NULL: one process */
    int rank0;           /* this process searches (no MPI, or rank 0) */
    VptLanes *lanes;     /* NULL: one GPU in this thread */
    VptRemote *remote;   /* rank 0: the other ranks */
    int told;            /* rank 0: the other ranks were welcomed or refused */
    VptEvalPool *pool;
    VptLaneInfo *all;    /* every lane, this process's first */
    int nall;
} Backend;

static int distributed(const VptMpi *m, const LaneSetup *ls)
{
    return (m && vpt_mpi_size(m) > 1) || ls->n > 1;
}

/* Starts this process's lanes; -1 with the message (*no_gpu). */
static int start_lanes(Backend *b, const LaneSetup *ls, int *no_gpu)
{
    VptLaneOps ops;
    memset(&ops, 0, sizeof ops);
    ops.user = (void *)ls;
    if (ls->o->replay) {
        ops.open = replay_lane_open;
        ops.evaluate = replay_lane_evaluate;
        ops.prefetch = replay_lane_prefetch;
        ops.close = replay_lane_close;
    } else {
        ops.open = gpu_lane_open;
        ops.evaluate = vpt_gpu_eval_evaluate;
        ops.prefetch = vpt_gpu_eval_prefetch;
        ops.close = gpu_lane_close;
    }
    char host[64] = "?";
    if (b->m) snprintf(host, sizeof host, "%s", vpt_mpi_host(b->m));
    else if (gethostname(host, sizeof host) != 0) snprintf(host, sizeof host, "?");
    host[sizeof host - 1] = '\0';
    b->lanes = vpt_lanes_start(&ops, ls->n, b->m ? vpt_mpi_rank(b->m) : -1, host, no_gpu);
    return b->lanes ? 0 : -1;
}

/* Runs fn on lane 0 of this process before the pool exists. */
static int lane0_call(VptLanes *lanes, int (*fn)(void *, void *), void *arg)
{
    if (vpt_lanes_call(lanes, 0, fn, arg)) return -1;
    VptLaneEvent ev;
    while (vpt_lanes_poll(lanes, -1, &ev) > 0)
        if (ev.kind == VPT_LANE_CALLED && ev.lane == 0) return ev.call_rc ? vpt_fail("%s", ev.why) : 0;
    return vpt_fail("internal error: lane 0 did not answer");
}

/* Rank 0 with lanes: the other ranks' hellos (tuner/mpi.h), the check that
 * every lane is on an identical GPU, then the pool. -1 with the message;
 * every other rank has then been told to go. */
static int join_lanes(Backend *b, const char *what, VptCache *cache, int *no_gpu)
{
    *no_gpu = 0;
    if (b->m && vpt_mpi_size(b->m) > 1 && !(b->remote = vpt_mpi_gather(b->m, what, no_gpu))) return -1;
    int nl = vpt_lanes_count(b->lanes), nr = b->remote ? vpt_remote_lanes(b->remote) : 0;
    if (!(b->all = vpt_malloc((size_t)(nl + nr) * sizeof *b->all))) return -1;
    for (int i = 0; i < nl; i++) b->all[b->nall++] = *vpt_lanes_info(b->lanes, i);
    for (int i = 0; i < nr; i++) b->all[b->nall++] = *vpt_remote_info(b->remote, i);
    if (vpt_lanes_check_identical(b->all, b->nall)) return -1;
    if (b->remote) {
        if (vpt_mpi_welcome(b->remote)) return -1;
        b->told = 1;
    }
    VptTransport t;
    if (b->remote) t = vpt_remote_transport(b->remote);
    b->pool = vpt_eval_pool_create(b->lanes, b->remote ? &t : NULL, cache);
    return b->pool ? 0 : -1;
}

/* Ends what the backend started: the pool (evaluations in flight written),
 * the other ranks (told to stop, or, when rank 0 failed before welcoming
 * them, to exit), the lanes. */
static void close_backend(Backend *b)
{
    vpt_eval_pool_destroy(b->pool);
    b->pool = NULL;
    if (b->m && b->rank0 && vpt_mpi_size(b->m) > 1 && !b->told) {
        char why[1200];
        snprintf(why, sizeof why, "rank 0 stopped: %s", vpt_errmsg());
        vpt_mpi_refuse(b->m, why);
        b->told = 1;
    }
    vpt_remote_stop(b->remote); /* tells only ranks that were welcomed */
    b->remote = NULL;
    vpt_lanes_stop(b->lanes);
    b->lanes = NULL;
    free(b->all);
    b->all = NULL;
}

/* Every rank but 0: evaluates for rank 0 until it says stop; the status to
 * exit with. lanes NULL: this rank could not start (the message says why). */
static int serve(Backend *b, const char *what, int no_gpu)
{
    char failure[1024] = "";
    if (!b->lanes) snprintf(failure, sizeof failure, "%s", vpt_errmsg());
    int rc = vpt_mpi_serve(b->m, b->lanes, what, failure, no_gpu, &interrupted);
    vpt_lanes_stop(b->lanes);
    b->lanes = NULL;
    return rc;
}

/* The lines that say where a tune on several GPUs measures. */
static void print_lanes(const Backend *b, const char *verb)
{
    int gpus = 0;
    for (int i = 0; i < b->nall; i++) {
        int first = 1;
        for (int k = 0; k < i && first; k++) first = strcmp(b->all[k].gpu_uuid, b->all[i].gpu_uuid) != 0;
        gpus += first;
    }
    if (gpus == b->nall) printf("%s on %d GPUs side by side", verb, gpus);
    else printf("%s with %d evaluators on %d GPU%s", verb, b->nall, gpus, gpus == 1 ? "" : "s");
    if (b->m && vpt_mpi_size(b->m) > 1)
        printf(" (%d MPI ranks, %s)", vpt_mpi_size(b->m), vpt_mpi_library(b->m));
    printf("; the finalists are re-measured on the first:\n");
    for (int i = 0; i < b->nall; i++) {
        char who[256];
        vpt_lane_describe(&b->all[i], who, sizeof who);
        int shared = 0;
        for (int k = 0; k < b->nall; k++)
            if (k != i && strcmp(b->all[k].gpu_uuid, b->all[i].gpu_uuid) == 0) shared++;
        printf("  %s%s\n", who, shared ? " (shares its GPU: they measure in turn)" : "");
    }
}

/* ---- measurements on lane 0 (this thread with one GPU) -------------------- */

/* What evaluates on lane 0: a GPU, or a replay (a direct pool's evaluator
 * is the VptReplay, a lane's its ReplayLane). */
typedef enum { LANE0_GPU, LANE0_REPLAY, LANE0_REPLAY_LANE } Lane0;

static VptReplay *replay_of(Lane0 kind, void *evaluator)
{
    return kind == LANE0_REPLAY ? evaluator : kind == LANE0_REPLAY_LANE ? ((ReplayLane *)evaluator)->r : NULL;
}

/* Work for lane 0 (vpt_eval_pool_call) and what it took: a replay's
 * simulated seconds (its clock's advance), 0 on a GPU. */
typedef struct {
    Lane0 kind;
    const VptConfig *configs;
    size_t n;
    VptEvalRecord *out;
    double simulated_s;
} Lane0Call;

static int remeasure_on_lane0(void *evaluator, void *arg)
{
    Lane0Call *f = arg;
    VptReplay *r = replay_of(f->kind, evaluator);
    if (!r) return vpt_gpu_eval_remeasure(evaluator, f->configs, f->n, f->out);
    const double c0 = vpt_replay_clock(r);
    const int rc = vpt_replay_remeasure(r, f->configs, f->n, f->out);
    f->simulated_s += vpt_replay_clock(r) - c0;
    return rc;
}

static int evaluate_on_lane0(void *evaluator, void *arg)
{
    Lane0Call *f = arg;
    VptReplay *r = replay_of(f->kind, evaluator);
    const double c0 = r ? vpt_replay_clock(r) : 0;
    for (size_t i = 0; i < f->n; i++)
        if (r ? vpt_replay_evaluate(r, &f->configs[i], 1, &f->out[i])
              : vpt_gpu_eval_evaluate(evaluator, &f->configs[i], 1, &f->out[i]))
            return -1;
    if (r) f->simulated_s += vpt_replay_clock(r) - c0;
    return 0;
}

/* The finalists' re-measurement on lane 0, a VptRemeasureFn (ctx: a
 * Remeasure): on one GPU (or replay) the search measured on, or the
 * first of several; its simulated seconds are kept for the summary. */
typedef struct {
    VptEvalPool *pool;
    Lane0 kind;
    double simulated_s;
} Remeasure;

static int pool_remeasure(void *ctx, const VptConfig *configs, size_t n, VptEvalRecord *out)
{
    Remeasure *rm = ctx;
    Lane0Call f = {rm->kind, configs, n, out, 0};
    const int rc = vpt_eval_pool_call(rm->pool, remeasure_on_lane0, &f);
    rm->simulated_s += f.simulated_s;
    return rc;
}

static int provenance_of_gpu(void *evaluator, void *arg)
{
    vpt_gpu_eval_provenance(evaluator, arg);
    return 0;
}

/* The two references the issue names, measured after the finalists on
 * their GPU: naiveSK and the thesis' default (regenerationSK, thread). The
 * gate's reference variant is naiveSK, so a GPU's evaluator has compiled
 * it before the search (harness/evaluator.h); a replay has compiled
 * nothing before it. A replay whose recording lacks one measures neither
 * (*n 0). */
#define N_REFERENCES 2
typedef struct {
    VptConfig configs[N_REFERENCES];
    int compiled[N_REFERENCES];
    size_t n;
} References;

static void references(const VptReplay *replay, References *refs)
{
    static const char *const names[N_REFERENCES] = {"naiveSK", "regenerationSK-thread"};
    memset(refs, 0, sizeof *refs);
    for (int i = 0; i < N_REFERENCES; i++) {
        if (vpt_config_parse(names[i], &refs->configs[i])) return; /* the thesis' names always parse */
        if (replay && !vpt_replay_find(replay, &refs->configs[i])) return;
        refs->compiled[i] = !replay && i == 0;
    }
    refs->n = N_REFERENCES;
}

/* A tune's options: its records come from the pool (one GPU in this thread,
 * or many), the report to stdout, progress to stderr; its finish (the
 * budget covers it, tuner/tune.h): the finalists re-measured on lane 0
 * (rm), then refs. */
static void tune_options(Options *o, const VptSpace *space, VptCache *cache, VptEvalPool *pool, Remeasure *rm,
                         const References *refs, VptTuneOptions *to)
{
    vpt_tune_options_init(to);
    to->space = space;
    to->cache = cache;
    search_options(o, &to->search);
    to->search.pool = pool;
    to->top_k = o->top;
    to->progress = o->quiet ? NULL : stderr;
    to->report = stdout;
    set_estimators(o, to, o->replay != NULL);
    to->remeasure = pool_remeasure;
    to->remeasure_ctx = rm;
    to->references = refs->configs;
    to->reference_compiled = refs->compiled;
    to->n_references = refs->n;
}

/* The references measured on lane 0, as the finish's last part: 0 with
 * ref[] filled and *simulated_s the replay's seconds for them, else -1 with
 * the message. */
static int measure_references(VptEvalPool *pool, Lane0 kind, const References *refs, VptEvalRecord *ref,
                              double *simulated_s)
{
    Lane0Call f = {kind, refs->configs, refs->n, ref, 0};
    const int rc = vpt_eval_pool_call(pool, evaluate_on_lane0, &f);
    *simulated_s = f.simulated_s;
    return rc;
}

/* The finalists against the references (measured just before, in this
 * session on the finalists' GPU, or replayed from the recording). */
static void print_against_references(const VptTuneResult *res, const VptEvalRecord *ref, int replayed)
{
    printf("\nagainst the references (%s: naiveSK %.3f ms, regenerationSK-thread %.3f ms):\n",
           replayed ? "replayed from the recording" : "measured in this session", ref[0].time_ms, ref[1].time_ms);
    printf("rank   Mrays/s    time_ms  occ theor/achieved  regs  SIMD eff  vs naiveSK  vs regenerationSK-thread\n");
    for (size_t i = 0; i < res->n_top; i++) {
        const VptEvalRecord *r = &res->top[i];
        if (r->status != VPT_STATUS_OK) continue;
        printf("%4zu %9.1f %10.4f       %4.2f / %4.2f   %4.0f    %5.1f%%     %6.2fx    %6.2fx\n", i + 1, r->mrays_per_s,
               r->time_ms, r->occupancy_theoretical, r->occupancy_achieved, r->registers, 100 * r->simd_efficiency,
               ref[0].time_ms / r->time_ms, ref[1].time_ms / r->time_ms);
    }
}

/* The finish against its prediction and the budget (tuner/tune.h): what it
 * took beyond the prediction, and how much of a time budget the search and
 * the finish took together. */
static void print_finish(const Options *o, double search_s, double finish_s, const VptFinishPrediction *p)
{
    printf("finish: %.1f s, predicted %.1f s", finish_s, p->total_s);
    if (finish_s - p->total_s >= 0.05) printf(" (%.1f s more than predicted)", finish_s - p->total_s);
    if (o->budget_s > 0) {
        const double used = search_s + finish_s;
        printf("; search and finish %.1f s of the %g s budget", used, o->budget_s);
        if (used - o->budget_s >= 0.05) printf(", %.1f s past it", used - o->budget_s);
    }
    printf("\n");
}

static int write_exports(const Options *o, const VptTuneResult *res, const VptCache *cache)
{
    if (o->t4 && cache && vpt_t4_write_cache(o->t4, cache)) return -1;
    if (o->t4 && !cache && vpt_t4_write(o->t4, res->search.evals, res->search.n_evals)) return -1;
    if (o->t4) printf("T4 export: %s\n", o->t4);
    return 0;
}

/* VPT_REPLAY_DELAY_S, a test hook: seconds of real time per replayed
 * evaluation on lanes (0 when unset). */
static int replay_delay(double *out)
{
    *out = 0;
    const char *v = getenv("VPT_REPLAY_DELAY_S");
    if (!v || !*v) return 0;
    return vpt_parse_double(v, 0, 60, "VPT_REPLAY_DELAY_S", out);
}

/* What every rank must agree on before evaluating for rank 0. */
static void replay_what(const VptReplay *r, char *buf, size_t size)
{
    const VptTuneProvenance *p = vpt_replay_provenance(r);
    snprintf(buf, size, "tune %s; replay of %s on %s (%s, %zu configs), %dx%d, %d spp, seed %llu", vpt_git_commit,
             p->scene, p->gpu_uuid, p->commit, vpt_replay_count(r), p->width, p->height, p->spp,
             (unsigned long long)p->seed);
}

static int run_replay(Options *o, VptMpi *m)
{
    Backend b = {.m = m, .rank0 = !m || vpt_mpi_rank(m) == 0};
    LaneSetup ls = {.o = o};
    int no_gpu = 0;
    if (replay_delay(&ls.delay_s) || select_gpus(o, m, &ls, &no_gpu)) {
        if (!b.rank0) return serve(&b, "", 0); /* rank 0 reports it */
        vpt_report_error(prog);
        close_backend(&b);
        return 2;
    }
    int lanes = distributed(m, &ls);
    VptReplay *r = vpt_replay_open(o->replay);
    if (!r) {
        vpt_error_prefix("--replay");
        if (!b.rank0) return serve(&b, "", 0);
        vpt_report_error(prog);
        close_backend(&b);
        return 1;
    }
    char what[1024];
    replay_what(r, what, sizeof what);
    if (lanes && start_lanes(&b, &ls, &no_gpu) && b.rank0) {
        vpt_report_error(prog);
        close_backend(&b);
        vpt_replay_destroy(r);
        return 1;
    }
    if (!b.rank0) {
        vpt_replay_destroy(r);
        return serve(&b, what, no_gpu);
    }
    size_t rejected = 0;
    VptSpace *s = make_space(o, vpt_replay_space(r, &rejected));
    if (!s) {
        vpt_report_error(prog);
        close_backend(&b);
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
            close_backend(&b);
            vpt_space_destroy(s);
            vpt_replay_destroy(r);
            return 1;
        }
    }
    int rc = 0;
    if (!lanes) {
        /* compiles overlap as on a GPU */
        b.pool = vpt_eval_pool_direct(vpt_replay_evaluate, r, cache, vpt_replay_prefetch, r);
        rc = b.pool ? 0 : -1;
        /* a resumed tune's clock retraces the interrupted one's (tuner/cache.h) */
        if (b.pool) vpt_eval_pool_set_retrace(b.pool, vpt_replay_retrace, r);
    } else if ((rc = join_lanes(&b, what, cache, &no_gpu)) == 0) {
        print_lanes(&b, "simulating");
    }
    VptTuneResult res;
    /* the finish on lane 0: the replay the search ran on, or the first
     * simulated GPU's */
    Remeasure rm = {b.pool, lanes ? LANE0_REPLAY_LANE : LANE0_REPLAY, 0};
    References refs;
    references(r, &refs);
    if (rc == 0) {
        VptTuneOptions to;
        tune_options(o, s, cache, b.pool, &rm, &refs, &to);
        rc = vpt_tune_run(&to, &res);
    }
    if (rc == 0) {
        VptEvalRecord ref[N_REFERENCES];
        double refs_s = 0;
        int with_refs = res.have_winner && !interrupted && refs.n > 0;
        if (with_refs && measure_references(b.pool, rm.kind, &refs, ref, &refs_s)) {
            vpt_report_error(prog);
            with_refs = 0;
            rc = -1;
        }
        const double finish_s = rm.simulated_s + refs_s;
        printf("simulated tuning time %.1f s: %.1f s searching over %zu evaluations, %.1f s finishing (the finalists "
               "%.1f s, the references %.1f s)\n",
               res.search.seconds + finish_s, res.search.seconds, res.search.n_evals, finish_s, rm.simulated_s, refs_s);
        if (lanes) {
            printf("evaluations measured per simulated GPU (a search takes them in its own order):\n");
            vpt_eval_pool_print_lanes(b.pool, stdout);
        }
        if (refs.n == 0) printf("the references (naiveSK, regenerationSK-thread) are not both in the recording\n");
        else if (with_refs) print_against_references(&res, ref, 1);
        print_finish(o, res.search.seconds, finish_s, &res.finish);
        if (write_exports(o, &res, cache)) rc = -1;
        vpt_tune_result_free(&res);
    }
    if (rc) vpt_report_error(prog);
    close_backend(&b);
    if (cache) vpt_cache_close(cache);
    vpt_space_destroy(s);
    vpt_replay_destroy(r);
    return rc ? 1 : 0;
}

/* A large scene that cannot fit on the GPU with the estimators the tune
 * may choose is refused before it is built or loaded (cli/gpu_check.h):
 * *check says what it asks, for as long as scenes are loaded. */
static void admit_by_gpu(Options *o, VptGpuCheck *check)
{
    memset(check, 0, sizeof *check);
    vpt_gpu_estimators_add(&check->estimators, VPT_DENSITY_F32, 0);
    if (o->n_estimators < 0) vpt_gpu_estimators_all(&check->estimators);
    for (int i = 0; i < o->n_estimators; i++)
        vpt_gpu_estimators_add(&check->estimators, o->estimators[i].density, o->estimators[i].majorant);
    if (!o->scene.print_scene) {
        o->scene.admit = vpt_gpu_check_admit;
        o->scene.admit_ctx = check;
    }
}

/* Without a GPU: what can still be done, as commands (`words`: the scene
 * as options). */
static void print_no_gpu_hints(const VptScene *scene, const char *words)
{
    /* A recorded space of this scene when the repository has one. */
    char fixture[256];
    snprintf(fixture, sizeof fixture, "tests/fixtures/tuner/%s_exhaustive.jsonl", scene->name);
    if (access(fixture, R_OK) != 0) snprintf(fixture, sizeof fixture, "tests/fixtures/tuner/manix_exhaustive.jsonl");
    fprintf(stderr,
            "%s: tuning measures kernels on a CUDA GPU. Without one you can still:\n"
            "  tune --replay %s   search a recorded space (in the source tree)\n"
            "  render --cpu %s --spp 1 -o out.png   a one-sample preview with the CPU reference\n",
            prog, fixture, words);
}

/* The tune's cache: --cache, else results/<gpu>/tune/<scene>.jsonl (its
 * folder made); NULL with the message reported and the --fresh hint. */
static VptCache *open_gpu_cache(const Options *o, const VptTuneProvenance *prov, const VptScene *scene,
                                const char *words, char *path, size_t size)
{
    char gpu_dir[128];
    vpt_gpu_dirname(prov->gpu_name, gpu_dir, sizeof gpu_dir);
    if (o->cache) snprintf(path, size, "%s", o->cache);
    else snprintf(path, size, "results/%s/tune/%s.jsonl", gpu_dir, scene->name);
    char dir[1024];
    vpt_dirname(path, dir, sizeof dir);
    VptCache *cache = NULL;
    if (vpt_mkdirs(dir) == 0) cache = vpt_cache_open(path, prov, o->fresh ? VPT_CACHE_FRESH : 0);
    if (!cache) {
        vpt_report_error(prog);
        fprintf(stderr, "%s: to start a new cache (the old file is kept): tune %s --fresh\n", prog, words);
    }
    return cache;
}

/* The winner to results/<gpu>/best/ unless --no-save; -1 with the message
 * reported. */
static int save_winner(const Options *o, const VptTuneProvenance *prov, const VptScene *scene,
                       const VptTuneResult *res, const char *words)
{
    if (!res->have_winner) {
        printf("no configuration passed: nothing saved\n");
        return 0;
    }
    if (!o->save) return 0;
    char best[1024];
    if (vpt_best_path("results", prov->gpu_name, scene->name, best, sizeof best) ||
        vpt_best_save(best, prov, &res->winner, o->strategy)) {
        vpt_report_error(prog);
        return -1;
    }
    printf("winner saved to %s (render %s --config best -o out.png)\n", best, words);
    return 0;
}

/* When main began: the wall time a tune reports is counted from it. */
static double started_s;

static int run_gpu(Options *o, VptMpi *m)
{
    VptGpuCheck gpu_check;
    admit_by_gpu(o, &gpu_check);
    Backend b = {.m = m, .rank0 = !m || vpt_mpi_rank(m) == 0};
    VptMitsubaIntegrator in;
    VptScene *scene = vpt_scene_args_load(&o->scene, NULL, &in);
    if (!scene) { /* the other ranks' failures are reported by rank 0 */
        if (!b.rank0) return serve(&b, "", 0);
        vpt_report_error(prog);
        close_backend(&b);
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
    char words[2048], digest[65] = "", what[1024];
    if (vpt_scene_args_format(&o->scene, words, sizeof words) || vpt_scene_digest(scene, digest)) {
        vpt_scene_destroy(scene);
        if (!b.rank0) return serve(&b, "", 0);
        vpt_report_error(prog);
        close_backend(&b);
        return 1;
    }
    snprintf(what, sizeof what, "tune %s; scene %s (sha256 %s), %dx%d, %d spp, seed %llu, depth %d, rr %d",
             vpt_git_commit, scene->name, digest, o->rs.width, o->rs.height, o->rs.spp,
             (unsigned long long)o->rs.seed, o->rs.max_depth, o->rs.rr_depth);
    VptSpace *space = make_space(o, NULL);
    if (!space) {
        vpt_scene_destroy(scene);
        if (!b.rank0) return serve(&b, "", 0);
        vpt_report_error(prog);
        close_backend(&b);
        return 2;
    }
    LaneSetup ls = {.o = o, .scene = scene, .eo = vpt_evaluator_options_default()};
    ls.eo.quiet = 1;
    int no_gpu = 0, rc = 1;
    VptGpuEval *g = NULL;
    VptCache *cache = NULL;
    int selected = select_gpus(o, m, &ls, &no_gpu);
    if (selected == 0) {
        if (!distributed(m, &ls)) {
            ls.eo.device = ls.device[0];
            g = vpt_gpu_eval_create(&ls.eo, scene, &o->rs, &no_gpu);
        } else {
            share_cores(&ls.eo, ls.n, ls.n * (m ? vpt_mpi_local_size(m) : 1));
            start_lanes(&b, &ls, &no_gpu);
        }
    }
    if (!b.rank0) {
        rc = serve(&b, what, no_gpu);
        goto out;
    }
    if (!g && !b.lanes) {
        vpt_report_error(prog);
        if (no_gpu) print_no_gpu_hints(scene, words);
        rc = no_gpu ? VPT_EXIT_NO_GPU : selected == -2 ? 2 : 1;
        goto out;
    }
    VptTuneProvenance prov;
    if (g) vpt_gpu_eval_provenance(g, &prov);
    else if (lane0_call(b.lanes, provenance_of_gpu, &prov)) {
        vpt_report_error(prog);
        goto out;
    }
    char cache_path[1024];
    if (!(cache = open_gpu_cache(o, &prov, scene, words, cache_path, sizeof cache_path))) goto out;
    if (g) {
        b.pool = vpt_eval_pool_direct(vpt_gpu_eval_evaluate, g, cache, vpt_gpu_eval_prefetch, g);
        if (!b.pool) {
            vpt_report_error(prog);
            goto out;
        }
    } else if (join_lanes(&b, what, cache, &no_gpu)) {
        vpt_report_error(prog);
        rc = no_gpu ? VPT_EXIT_NO_GPU : 1;
        goto out;
    }
    printf("tuning %s on %s (driver %s, NVRTC %s, commit %s): %ux%u, %d spp; strategy %s; space of %zu schedule "
           "configs x %d estimators\n",
           scene->name, prov.gpu_name, prov.driver, prov.nvrtc, prov.commit, prov.width, prov.height, prov.spp,
           o->strategy, vpt_space_size(space), o->n_estimators < 0 ? VPT_ESTIMATORS_ALL : o->n_estimators);
    printf("cache %s (%zu evaluations already there)\n", cache_path, vpt_cache_count(cache));
    if (b.lanes) print_lanes(&b, "measuring");
    fflush(stdout);
    VptTuneOptions to;
    Remeasure rm = {b.pool, LANE0_GPU, 0};
    References refs;
    references(NULL, &refs);
    tune_options(o, space, cache, b.pool, &rm, &refs, &to);
    /* the transfer prior: other scenes' saved winners as extra starts
     * (tuner/transfer.h says why) */
    VptConfig starts[VPT_SEARCH_MAX_STARTS];
    char from[1024];
    to.search.starts = starts;
    to.search.n_starts = vpt_transfer_starts("results", prov.gpu_name, scene->name, starts, VPT_SEARCH_MAX_STARTS,
                                             from, sizeof from);
    if (to.search.n_starts && b.rank0)
        printf("transfer prior: %zu starts, the configs saved for %s\n", to.search.n_starts, from);
    /* a time budget is wall time too (VptSearchOptions.wall_deadline) */
    const double search_start_s = vpt_seconds();
    if (o->budget_s > 0) to.search.wall_deadline = search_start_s + o->budget_s;
    VptTuneResult res;
    if (vpt_tune_run(&to, &res)) {
        vpt_report_error(prog);
        goto out;
    }
    if (b.lanes) {
        printf("evaluations measured per GPU (a search takes them in its own order):\n");
        vpt_eval_pool_print_lanes(b.pool, stdout);
    }
    double refs_s = 0;
    if (interrupted) {
        printf("interrupted: the cache keeps every evaluation; run the same command to resume\n");
    } else if (res.have_winner) {
        VptEvalRecord ref[N_REFERENCES];
        const double t = vpt_seconds();
        double simulated;
        if (measure_references(b.pool, LANE0_GPU, &refs, ref, &simulated)) vpt_report_error(prog);
        else print_against_references(&res, ref, 0);
        refs_s = vpt_seconds() - t;
    }
    rc = save_winner(o, &prov, scene, &res, words) ? 1 : 0;
    if (write_exports(o, &res, cache)) {
        vpt_report_error(prog);
        rc = 1;
    }
    const double end_s = vpt_seconds(), finish_s = end_s - search_start_s - res.search_wall_s;
    printf("wall time: %.1f s: %.1f s to start (scene, GPUs), %.1f s searching, %.1f s finishing (the finalists "
           "%.1f s, the references %.1f s)\n",
           end_s - started_s, search_start_s - started_s, res.search_wall_s, finish_s, res.remeasure_wall_s, refs_s);
    print_finish(o, res.search_wall_s, finish_s, &res.finish);
    vpt_tune_result_free(&res);
out:
    close_backend(&b);
    if (cache) vpt_cache_close(cache);
    vpt_gpu_eval_destroy(g);
    vpt_space_destroy(space);
    vpt_scene_destroy(scene);
    return rc;
}

/* Under an MPI launcher with more than one process: MPI, from the shim
 * (tuner/mpi.h). *m NULL otherwise. -1 with the message. */
static int start_mpi(VptMpi **m)
{
    *m = NULL;
    int size = vpt_mpi_launched_size();
    if (size == 0 || size == 1) return 0;
    if (!(*m = vpt_mpi_init())) return -1;
    if (vpt_mpi_size(*m) == 1) { /* one process after all: no MPI needed */
        vpt_mpi_finalize(*m, 0);
        *m = NULL;
    }
    return 0;
}

int main(int argc, char **argv)
{
    started_s = vpt_seconds();
    Options o;
    /* Under a launcher, only rank 0 speaks about the command line: every
     * rank parses the same one. */
    int quiet_rank = vpt_mpi_env_rank() > 0;
    for (int i = 1; quiet_rank && i < argc; i++)
        if (!strcmp(argv[i], "--version") || !strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) return 0;
    if (vpt_handle_version(argc, argv, prog)) return 0;
    int pr = parse_args(argc, argv, &o);
    if (pr == 1) return 0;
    if (pr < 0) {
        if (!quiet_rank) {
            vpt_report_error(prog);
            fprintf(stderr, "%s: try '%s --help'\n", prog, prog);
        }
        return 2;
    }
    if (o.dump_space || (o.scene.print_scene && !o.replay)) {
        if (quiet_rank) return 0;
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
        return run_gpu(&o, NULL);
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    VptMpi *m;
    if (start_mpi(&m)) {
        if (!quiet_rank) vpt_report_error(prog);
        return 1;
    }
    if (m && vpt_mpi_rank(m) > 0) {
        static char rank_prog[128];
        snprintf(rank_prog, sizeof rank_prog, "tune (rank %d on %s)", vpt_mpi_rank(m), vpt_mpi_host(m));
        prog = rank_prog;
    }
    int rc = o.replay ? run_replay(&o, m) : run_gpu(&o, m);
    vpt_mpi_finalize(m, rc);
    return rc;
}
