/* bin/bench: measure kernel configurations on the GPU.
 *
 *   bench --thesis [--scene NAME]...            the thesis' named variants
 *   bench --scene manix --configs FILE          one config per line
 *   bench --scene manix --config "streamingSK,block=128"
 *   bench --scene manix --roofline              the divergence-free step loop
 *                                               (per estimator of the configs)
 *   bench --scene-file scene.xml --config C     a Mitsuba scene (scenes/mitsuba/mitsuba_xml.h)
 *   bench --precompile --arch sm_90 --configs FILE   fill the cubin cache, no GPU
 *
 * Every evaluation becomes one JSON line (results/<gpu>/bench.jsonl unless -o)
 * with provenance and all metrics; a summary table goes to stdout.
 *
 * The GPU work runs in a worker process (harness/eval_worker.h) per GPU:
 * a config that crashes or hangs it is recorded as a runtime or timeout
 * result and a fresh worker measures the rest. With --gpus all|LIST the
 * configs are measured side by side, one worker per GPU, each pinned to its
 * GPU and driven by a thread of its own (tuner/lanes.h); the rows still come
 * out in config order, each naming the GPU that measured it. */
#include "base/error.h"
#include "base/file.h"
#include "base/parse.h"
#include "cli/config_best.h"
#include "cli/gpu_check.h"
#include "cli/gpus_arg.h"
#include "cli/scene_args.h"
#include "cli/version.h"
#include "codegen/config.h"
#include "codegen/kernel_source.h"
#include "harness/compile_pool.h"
#include "harness/cubin_cache.h"
#include "harness/eval_worker.h"
#include "harness/evaluator.h"
#include "harness/gpu_list.h"
#include "harness/results.h"
#include "harness/variant.h"
#include "image/image.h"
#include "scenes/mitsuba/mitsuba_xml.h"
#include "scenes/scene.h"
#include "tuner/lanes.h"
#include "tuner/mpi.h"
#include "tuner/pool.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_SCENES 16
#define MAX_CONFIGS 4096

static const char *prog = "bench";

static void usage(FILE *fp)
{
    fprintf(fp,
            "usage: bench [--scene NAME]... [--volume FILE [--like SCENE ...]] [--scene-file FILE.xml]\n"
            "             (--thesis | --configs FILE | --config STR|best)...\n"
            "             [--roofline] [--width W] [--height H] [--spp N] [--seed S] [-o FILE.jsonl]\n"
            "             [--max-depth D (0: unlimited)] [--rr DEPTH (Russian roulette from DEPTH; -1: off)]\n"
            "             [--tiles N (the image in NxN tiles, one launch each: thesis 4.1.2)]\n"
            "             [--timeout SEC] [--max-reps N] [--max-time SEC] [--target-ci FRACTION]\n"
            "             [--no-gate] [--cache DIR] [--jobs N] [--gpus all|LIST] [--quiet]\n"
            "       bench --precompile --arch sm_XY (--thesis | --configs FILE | --config STR)...\n"
            "             [--roofline] [--cache DIR] [--jobs N]\n"
            "\n"
            "Measures each configuration on each scene (default: all built-in scenes with\n"
            "--thesis, else manix) at the scene's thesis workload (400x400, 100 spp) unless\n"
            "overridden. Each result is appended as a JSON line to -o (default\n"
            "results/<gpu>/bench.jsonl) with GPU, driver, NVRTC, commit, scene, workload,\n"
            "config, status and metrics. A Mitsuba scene file (--scene-file) is named\n"
            "<stem>-<8 hex digits of its content's hash>; its integrator's depths apply unless\n"
            "--max-depth or --rr are given. Exit status: 0 done (failed variants are results),\n"
            "1 error, 2 bad usage, 3 no CUDA GPU or driver.\n"
            "\n"
            "Every config to measure is handed to the compile pool at once, so compiles\n"
            "run ahead of the GPU: --jobs N of them at a time, in N worker processes\n"
            "(default $VPT_COMPILE_JOBS, else one per core but one; 1 compiles in-process).\n"
            "--precompile opens no GPU: it compiles the configs (and the reference variant\n"
            "the gate renders; the roofline probe with --roofline) for sm_XY into the cubin\n"
            "cache (--cache, else $VPT_CACHE_DIR, else ~/.cache/vptune/cubin), prints one\n"
            "line per kernel and the NVRTC build and CCCL the cache entries are keyed on.\n"
            "Carried to a GPU machine with the same toolkit at the same path, the cache\n"
            "makes its bench or tune compile nothing; run --precompile there again to\n"
            "check: it then reports every kernel as cached.\n"
            "--roofline measures the divergence-free Woodcock step loop on each scene first,\n"
            "with random rays, one-voxel bundles and camera tiles: against the global\n"
            "majorant over each density format the configs use (f32 always), and walking\n"
            "each majorant grid the configs use (majorant=gridC) over that config's format\n"
            "(for majorant=skip, skipping by the distance map as the tracer does),\n"
            "so that each config's percent of roofline is against the probe of its own\n"
            "majorant and format (the rows' \"majorant\" and \"density\"); --precompile\n"
            "--roofline compiles the global probe and each of those probes.\n"
            "--config best measures the winner `tune` saved for each scene on this GPU.\n"
            "--gpus all or a list such as 0,1 measures on these GPUs of this host side by side\n"
            "(identical ones only; default GPU 0); rows come out in config order, each naming\n"
            "its GPU. (Across hosts, tune runs under MPI; bench runs on one.)\n"
            "--version prints the commit, NVRTC and driver versions.\n"
            "\n");
    vpt_scene_args_usage(fp);
    fprintf(fp, "\nScenes:\n");
    vpt_scene_print_list(fp);
}

static int read_configs(const char *path, VptConfig *out, int *n, int max)
{
    int before = *n;
    char *data;
    size_t size;
    if (vpt_read_file(path, 16u << 20, &data, &size)) return -1;
    int line = 0;
    for (char *p = data, *nl; p && *p; p = nl ? nl + 1 : NULL) {
        nl = strchr(p, '\n');
        if (nl) *nl = '\0';
        line++;
        char *hash = strchr(p, '#');
        if (hash) *hash = '\0';
        while (*p == ' ' || *p == '\t') p++;
        size_t len = strlen(p);
        while (len && (p[len - 1] == ' ' || p[len - 1] == '\t' || p[len - 1] == '\r')) p[--len] = '\0';
        if (!len) continue;
        if (*n >= max) {
            free(data);
            return vpt_fail("%s: more than %d configs", path, max);
        }
        if (vpt_config_parse(p, &out[*n])) {
            vpt_error_prefix("%s:%d", path, line);
            free(data);
            return -1;
        }
        (*n)++;
    }
    free(data);
    if (*n == before) return vpt_fail("%s: no config in the file (one per line, '#' starts a comment)", path);
    return 0;
}

/* "sm_90", "sm_100", "90" or "9.0" -> 9, 0. */
static int parse_arch(const char *v, int *major, int *minor)
{
    const char *d = !strncmp(v, "sm_", 3) ? v + 3 : v;
    int a, b;
    char tail;
    if (sscanf(d, "%d.%d%c", &a, &b, &tail) == 2 && a >= 3 && a <= 99 && b >= 0 && b <= 9) {
        *major = a;
        *minor = b;
        return 0;
    }
    if (strspn(d, "0123456789") == strlen(d) && strlen(d) >= 2 && strlen(d) <= 3) {
        int n = atoi(d);
        *major = n / 10;
        *minor = n % 10;
        if (*major >= 3) return 0;
    }
    return vpt_fail("--arch: '%s' is not a GPU architecture (sm_XY, e.g. sm_90 for an H100, sm_80, sm_100)", v);
}

typedef struct {
    char label[VPT_CONFIG_STR_MAX + 16];
    VptKernelSource ks;
    int ticket;
} Precompile;

/* Whether one of configs[0..n) has majorant `majorant` (-2: any) and
 * density format `density` (-1: any): the probes bench --roofline runs,
 * and --precompile compiles, are those of the configs' estimators. */
static int configs_use(const VptConfig *configs, int n, int majorant, int density)
{
    for (int i = 0; i < n; i++)
        if ((majorant == -2 || configs[i].majorant == majorant) && (density < 0 || (int)configs[i].density == density))
            return 1;
    return 0;
}

/* bench --precompile: the kernels of configs (plus the reference variant,
 * and when asked the roofline probes a measurement of these configs runs:
 * the global one and one per majorant grid of the configs; the density
 * format is the texture's, not the kernel's) for sm_<major><minor> into the
 * cubin cache, through the compile pool; no GPU. */
static int precompile(const VptConfig *configs, int nconfigs, int roofline, int major, int minor, const char *cache_dir,
                      int jobs)
{
    VptCubinCache *cache = vpt_cubin_cache_open(cache_dir);
    if (!cache) {
        vpt_error_prefix("opening the cubin cache");
        vpt_report_error(prog);
        return 1;
    }
    const char *cccl = vpt_cccl_include_dir();
    if (!cccl) {
        vpt_report_error(prog);
        vpt_cubin_cache_close(cache);
        return 1;
    }
    Precompile *k = vpt_calloc((size_t)nconfigs + 1 + VPT_MAJORANT_COUNT, sizeof *k);
    VptCompilePool *pool = k ? vpt_compile_pool_create(cache, jobs) : NULL;
    if (!pool) {
        vpt_report_error(prog);
        free(k);
        vpt_cubin_cache_close(cache);
        return 1;
    }
    int jobs_now = vpt_compile_pool_threads(pool);
    printf("precompiling for sm_%d%d into %s: %d compile%s at a time%s\n", major, minor, vpt_cubin_cache_dir(cache),
           jobs_now, jobs_now > 1 ? "s" : "", vpt_compile_pool_uses_processes(pool) ? " in worker processes" : "");
    printf("cache key: %s, CCCL %ld at %s\n", vpt_nvrtc_build(), vpt_cccl_version(cccl), cccl);
    fflush(stdout);
    double t0 = vpt_wire_now();
    /* The reference variant first (every GPU session compiles it), then the
     * configs in order, each once; rule breakers have no kernel. */
    int n = 0, rules = 0, rc = 0;
    VptConfig ref = vpt_config_default();
    for (int i = -1; i < nconfigs; i++) {
        const VptConfig *c = i < 0 ? &ref : &configs[i];
        int dup = i >= 0 && vpt_config_equal(c, &ref);
        for (int j = 0; j < i && !dup; j++) dup = vpt_config_equal(c, &configs[j]);
        if (dup) continue;
        char canon[VPT_CONFIG_STR_MAX];
        vpt_config_format(c, canon, sizeof canon);
        if (vpt_kernel_source_build(c, &k[n].ks)) {
            printf("  %-9s %9s  %s\n    %s\n", "skipped", "", canon, vpt_errmsg());
            rules++;
            continue;
        }
        snprintf(k[n].label, sizeof k[n].label, "%s%s", canon, i < 0 ? " (reference)" : "");
        n++;
    }
    if (roofline) {
        const int *cells;
        const int ncells = vpt_majorant_cells(&cells);
        for (int m = 0; m < ncells; m++) {
            if (cells[m] != 0 && !configs_use(configs, nconfigs, cells[m], -1)) continue; /* the global one always */
            if (vpt_kernel_source_build_roofline(256, cells[m], &k[n].ks)) {
                vpt_report_error(prog);
                rc = 1;
                continue;
            }
            if (cells[m] == 0) snprintf(k[n].label, sizeof k[n].label, "roofline probe");
            else snprintf(k[n].label, sizeof k[n].label, "roofline probe, majorant=%s", vpt_majorant_name(cells[m]));
            n++;
        }
    }
    for (int i = 0; i < n; i++) {
        VptCompileRequest req = vpt_compile_request_of(&k[i].ks, major, minor);
        if ((k[i].ticket = vpt_compile_pool_submit(pool, &req)) < 0) {
            vpt_report_error(prog);
            rc = 1;
            n = i;
            break;
        }
    }
    int compiled = 0, cached = 0, failed = 0;
    double nvrtc_s = 0;
    for (int i = 0; i < n; i++) {
        VptCompileResult r;
        if (vpt_compile_pool_wait(pool, k[i].ticket, &r)) {
            failed++;
            printf("  %-9s %7.2f s  %s\n    %s\n", "FAILED", r.seconds, k[i].label, vpt_errmsg());
        } else if (r.from_cache) {
            cached++;
            printf("  %-9s %7.2f s  %s\n", "cached", r.seconds, k[i].label);
        } else {
            compiled++;
            nvrtc_s += r.seconds;
            printf("  %-9s %7.2f s  %s\n", "compiled", r.seconds, k[i].label);
        }
        fflush(stdout);
        vpt_compile_result_free(&r);
    }
    double wall = vpt_wire_now() - t0;
    char skipped[64] = "";
    if (rules) snprintf(skipped, sizeof skipped, " (%d config%s a rule: no kernel)", rules, rules > 1 ? "s break" : " breaks");
    printf("%d kernels for sm_%d%d: %d compiled, %d already cached, %d failed to compile%s; "
           "%.1f s of NVRTC time in %.1f s\n",
           n, major, minor, compiled, cached, failed, skipped, nvrtc_s, wall);
    VptCubinCacheStats st;
    vpt_cubin_cache_stats(cache, &st);
    if (st.write_errors) {
        fprintf(stderr, "%s: error: %llu cache entries could not be written\n", prog, (unsigned long long)st.write_errors);
        rc = 1;
    }
    vpt_compile_pool_destroy(pool);
    for (int i = 0; i < nconfigs + 1 + VPT_MAJORANT_COUNT; i++) vpt_kernel_source_free(&k[i].ks);
    free(k);
    vpt_cubin_cache_close(cache);
    return rc;
}

/* ---- the GPUs bench measures on ------------------------------------------
 *
 * One lane (tuner/lanes.h) per GPU: a thread that starts the GPU's worker
 * process and is the only one to use it. With one GPU that is one lane, and
 * everything happens as it always did, in the same order. */

typedef struct BenchLane BenchLane;

typedef struct {
    VptWorkerSpec spec;              /* options, settings, the scene of the moment */
    int n;
    int device[VPT_GPUS_MAX];
    char visible[VPT_GPUS_MAX][128]; /* "" with one GPU: not pinned (spec.eval.device) */
    BenchLane *lane[VPT_GPUS_MAX];   /* each lane's own, set by its thread as it opens */
} BenchGpus;

struct BenchLane {
    VptEvalWorker *w;
    const char *scene;               /* name of the scene it holds */
    VptParams params;                /* the workload of that scene */
    VptEvalResult result;            /* the last evaluation's */
    json_t *row;                     /* its result row, until the main thread takes it */
};

static void *bench_lane_open(void *user, int lane, VptLaneInfo *info, int *no_gpu)
{
    BenchGpus *g = user;
    BenchLane *bl = vpt_calloc(1, sizeof *bl);
    if (!bl) return NULL;
    VptWorkerSpec spec = g->spec;
    snprintf(spec.visible_devices, sizeof spec.visible_devices, "%s", g->visible[lane]);
    if (!(bl->w = vpt_eval_worker_start(&spec, no_gpu))) {
        if (g->n > 1) vpt_error_prefix("GPU %d", g->device[lane]);
        free(bl);
        return NULL;
    }
    const VptProvenance *p = vpt_eval_worker_provenance(bl->w);
    snprintf(info->gpu_name, sizeof info->gpu_name, "%.127s", p->gpu_name);
    snprintf(info->gpu_uuid, sizeof info->gpu_uuid, "%s", p->gpu_uuid);
    snprintf(info->driver, sizeof info->driver, "%s", p->driver_release);
    snprintf(info->nvrtc, sizeof info->nvrtc, "%s", p->nvrtc);
    snprintf(info->commit, sizeof info->commit, "%s", p->commit);
    info->device = g->device[lane];
    bl->scene = spec.scene->name;
    bl->params = *vpt_eval_worker_params(bl->w);
    g->lane[lane] = bl;
    return bl;
}

static int bench_lane_evaluate(void *ctx, const VptConfig *c, int fidelity, VptEvalRecord *out)
{
    (void)fidelity;
    (void)out; /* the result and its row stay with the lane, for the main thread */
    BenchLane *bl = ctx;
    if (vpt_eval_worker_run(bl->w, c, &bl->result)) return -1;
    json_decref(bl->row);
    bl->row = vpt_eval_worker_result_json(bl->w, &bl->result);
    return bl->row ? 0 : vpt_fail("out of memory building a result row");
}

static void bench_lane_prefetch(void *ctx, const VptConfig *c, size_t n, int fidelity)
{
    (void)fidelity;
    vpt_eval_worker_prefetch(((BenchLane *)ctx)->w, c, (int)n);
}

static void bench_lane_close(void *ctx)
{
    BenchLane *bl = ctx;
    vpt_eval_worker_stop(bl->w);
    json_decref(bl->row);
    free(bl);
}

static int lane_set_scene(void *ctx, void *arg)
{
    BenchLane *bl = ctx;
    const VptWorkerSpec *spec = arg;
    if (vpt_eval_worker_set_scene(bl->w, spec->scene, &spec->settings)) return -1;
    bl->scene = spec->scene->name;
    bl->params = *vpt_eval_worker_params(bl->w);
    return 0;
}

typedef struct {
    int coherent;
    VptDensityFormat density;
    int majorant; /* cells; 0: the global majorant */
    VptTimingStats ms;
    double gsteps_per_s;
    unsigned long long steps;
} Roofline;

static int lane_roofline(void *ctx, void *arg)
{
    Roofline *r = arg;
    return vpt_eval_worker_roofline(((BenchLane *)ctx)->w, r->coherent, r->density, r->majorant, &r->ms,
                                    &r->gsteps_per_s, &r->steps);
}

/* Runs fn in lane `lane`'s thread, or in every lane's (-1), and waits; -1
 * with the first failure's message. No job may be running. */
static int call_lanes(VptLanes *l, int lane, int (*fn)(void *, void *), void *arg)
{
    int waiting = 0, rc = 0;
    char why[768] = "";
    for (int i = 0; i < vpt_lanes_count(l); i++) {
        if (lane >= 0 && i != lane) continue;
        if (vpt_lanes_call(l, i, fn, arg)) return -1;
        waiting++;
    }
    VptLaneEvent ev;
    while (waiting > 0 && vpt_lanes_poll(l, -1, &ev) > 0) {
        if (ev.kind != VPT_LANE_CALLED) continue;
        waiting--;
        if (ev.call_rc && !rc) {
            rc = -1;
            snprintf(why, sizeof why, "%s", ev.why);
        }
    }
    return rc ? vpt_fail("%s", why) : 0;
}

static void print_row(const VptEvalResult *r);

/* Measures configs[0..n) on the lanes, each lane first taking the configs
 * it compiled ahead (every lanes-th one), and prints and appends each row
 * in config order as soon as it and those before it are in. -1 with the
 * message when a GPU's worker cannot be started or a row not written. */
static int measure_configs(VptLanes *l, BenchGpus *g, const VptConfig *configs, int n, VptResultsFile *rf)
{
    int nl = vpt_lanes_count(l);
    VptConfig *mine = vpt_malloc((size_t)(n ? n : 1) * sizeof *mine);
    VptEvalResult *res = vpt_calloc((size_t)(n ? n : 1), sizeof *res);
    json_t **rows = vpt_calloc((size_t)(n ? n : 1), sizeof *rows);
    char *state = vpt_calloc((size_t)(n ? n : 1), 1); /* 0 waiting, 1 running, 2 done */
    if (!mine || !res || !rows || !state) {
        free(mine);
        free(res);
        free(rows);
        free(state);
        return -1;
    }
    for (int lane = 0; lane < nl; lane++) {
        int k = 0;
        for (int i = lane; i < n; i += nl) mine[k++] = configs[i];
        vpt_lanes_prefetch(l, lane, mine, (size_t)k, 1);
    }
    int busy[VPT_GPUS_MAX] = {0}, running = 0, printed = 0, rc = 0;
    while (printed < n && rc == 0) {
        for (int lane = 0; lane < nl; lane++) {
            if (busy[lane]) continue;
            int pick = -1;
            for (int i = lane; i < n && pick < 0; i += nl)
                if (state[i] == 0) pick = i;
            for (int i = 0; i < n && pick < 0; i++)
                if (state[i] == 0) pick = i;
            if (pick < 0) break;
            if (vpt_lanes_submit(l, lane, (uint64_t)pick, &configs[pick], 1)) {
                rc = -1;
                break;
            }
            state[pick] = 1;
            busy[lane] = 1;
            running++;
        }
        VptLaneEvent ev;
        if (rc || running == 0 || vpt_lanes_poll(l, -1, &ev) <= 0) break;
        if (ev.kind == VPT_LANE_CALLED) continue;
        busy[ev.lane] = 0;
        running--;
        if (ev.kind == VPT_LANE_LOST) {
            rc = vpt_fail("%s", ev.why);
            break;
        }
        BenchLane *bl = g->lane[ev.lane];
        res[ev.job] = bl->result;
        rows[ev.job] = bl->row;
        bl->row = NULL;
        state[ev.job] = 2;
        for (; printed < n && state[printed] == 2; printed++) {
            print_row(&res[printed]);
            if (vpt_results_append(rf, rows[printed])) rc = -1;
        }
    }
    for (VptLaneEvent ev; running > 0 && vpt_lanes_poll(l, -1, &ev) > 0;) /* after a failure: let them finish */
        if (ev.kind != VPT_LANE_CALLED) running--;
    for (int i = 0; i < n; i++) json_decref(rows[i]);
    free(mine);
    free(res);
    free(rows);
    free(state);
    return rc;
}

static void print_row(const VptEvalResult *r)
{
    if (r->status == VPT_STATUS_OK)
        printf("  %-22s %9.2f ms %9.1f Mrays/s %7.2f Gsteps/s  regs %3d  occ %4.0f%%/%4.0f%%  simd %4.0f%%  %s\n",
               vpt_config_schedule_name(&r->config), r->time_ms.median, r->mrays_per_s, r->gsteps_per_s, r->registers,
               100 * r->occupancy_theoretical, 100 * r->occupancy_achieved, 100 * r->simd_efficiency, r->canon);
    else
        printf("  %-22s %-14s %s\n    %s\n", vpt_config_schedule_name(&r->config), vpt_status_name(r->status), r->canon,
               r->reason);
    fflush(stdout);
}

/* ---- the command line ---------------------------------------------------- */

typedef struct {
    VptSceneArgs sa;
    int best; /* --config best */
    int thesis, roofline, quiet, precompile_only, arch_major, arch_minor;
    const char *out_path, *cache;
    int has_max_depth, has_rr;
    VptConfig configs[MAX_CONFIGS];
    int nconfigs;
    VptRenderSettings rs;
    VptEvaluatorOptions eo;
    VptGpuSelection gpus;
    VptGpuCheck gpu_check; /* what sa.admit asks, while scenes are loaded */
} Options;

static void options_init(Options *o)
{
    memset(o, 0, sizeof *o);
    vpt_scene_args_init(&o->sa);
    o->rs = (VptRenderSettings){0, 0, 0, 1, 0, -1, 1};
    o->eo = vpt_evaluator_options_default();
}

static int opt_arch(Options *o, const char *v) { return parse_arch(v, &o->arch_major, &o->arch_minor); }

static int opt_configs(Options *o, const char *v)
{
    if (read_configs(v, o->configs, &o->nconfigs, MAX_CONFIGS)) {
        vpt_error_prefix("--configs");
        return -1;
    }
    return 0;
}

static int opt_config(Options *o, const char *v)
{
    if (vpt_config_is_best(v)) {
        o->best = 1;
        return 0;
    }
    if (o->nconfigs == MAX_CONFIGS) return vpt_fail("--config: more than %d configs", MAX_CONFIGS);
    if (vpt_config_parse(v, &o->configs[o->nconfigs])) {
        vpt_error_prefix("--config");
        return -1;
    }
    o->nconfigs++;
    return 0;
}

static int opt_seed(Options *o, const char *v)
{
    uint64_t s;
    if (vpt_parse_u64(v, 0xffffffffu, "--seed", &s)) return -1;
    o->rs.seed = (uint32_t)s;
    return 0;
}

/* --max-depth and --rr, given, override a --scene-file's integrator. */
static int opt_max_depth(Options *o, const char *v)
{
    o->has_max_depth = 1;
    return vpt_parse_int(v, 0, 1 << 20, "--max-depth", &o->rs.max_depth);
}

static int opt_rr(Options *o, const char *v)
{
    o->has_rr = 1;
    return vpt_parse_int(v, -1, 1 << 20, "--rr", &o->rs.rr_depth);
}

static int opt_max_reps(Options *o, const char *v)
{
    if (vpt_parse_int(v, 1, 1000, "--max-reps", &o->eo.policy.max_reps)) return -1;
    if (o->eo.policy.min_reps > o->eo.policy.max_reps) o->eo.policy.min_reps = o->eo.policy.max_reps;
    return 0;
}

static int opt_gpus(Options *o, const char *v) { return vpt_gpus_parse(v, &o->gpus); }

/* How an option's value reaches Options: SET stores `lo` and takes no
 * value; INT and DOUBLE parse within [lo, hi]; STRING keeps the argument;
 * CALL hands it to its function. */
typedef enum { OPT_SET, OPT_INT, OPT_DOUBLE, OPT_STRING, OPT_CALL } BenchOptionKind;

typedef struct {
    const char *name;
    BenchOptionKind kind;
    size_t field; /* offsetof(Options, ...) of an int, double or const char * */
    double lo, hi;
    int (*call)(Options *o, const char *v);
} BenchOption;

#define FIELD(member) offsetof(Options, member)

/* Every option of bench but --help and the scene options (cli/scene_args.h). */
static const BenchOption bench_options[] = {
    {"--thesis", OPT_SET, FIELD(thesis), 1, 0, NULL},
    {"--roofline", OPT_SET, FIELD(roofline), 1, 0, NULL},
    {"--precompile", OPT_SET, FIELD(precompile_only), 1, 0, NULL},
    {"--no-gate", OPT_SET, FIELD(eo.gate), 0, 0, NULL},
    {"--quiet", OPT_SET, FIELD(quiet), 1, 0, NULL},
    {"--arch", OPT_CALL, 0, 0, 0, opt_arch},
    {"--configs", OPT_CALL, 0, 0, 0, opt_configs},
    {"--config", OPT_CALL, 0, 0, 0, opt_config},
    {"--width", OPT_INT, FIELD(rs.width), 1, 16384, NULL},
    {"--height", OPT_INT, FIELD(rs.height), 1, 16384, NULL},
    {"--spp", OPT_INT, FIELD(rs.spp), 1, 1 << 20, NULL},
    {"--seed", OPT_CALL, 0, 0, 0, opt_seed},
    {"--max-depth", OPT_CALL, 0, 0, 0, opt_max_depth},
    {"--rr", OPT_CALL, 0, 0, 0, opt_rr},
    {"--tiles", OPT_INT, FIELD(rs.tiles), 1, VPT_MAX_TILES, NULL},
    {"-o", OPT_STRING, FIELD(out_path), 0, 0, NULL},
    {"--timeout", OPT_DOUBLE, FIELD(eo.timeout_s), 0.1, 86400, NULL},
    {"--max-reps", OPT_CALL, 0, 0, 0, opt_max_reps},
    {"--max-time", OPT_DOUBLE, FIELD(eo.policy.max_seconds), 0.0, 86400, NULL},
    {"--target-ci", OPT_DOUBLE, FIELD(eo.policy.target_rel), 1e-4, 1.0, NULL},
    {"--cache", OPT_STRING, FIELD(cache), 0, 0, NULL},
    {"--jobs", OPT_INT, FIELD(eo.compile_threads), 1, 256, NULL},
    {"--gpus", OPT_CALL, 0, 0, 0, opt_gpus},
};

#undef FIELD

static int set_option(Options *o, const BenchOption *opt, const char *v)
{
    char *field = (char *)o + opt->field;
    switch (opt->kind) {
    case OPT_SET: *(int *)field = (int)opt->lo; return 0;
    case OPT_INT: return vpt_parse_int(v, (int)opt->lo, (int)opt->hi, opt->name, (int *)field);
    case OPT_DOUBLE: return vpt_parse_double(v, opt->lo, opt->hi, opt->name, (double *)field);
    case OPT_STRING: *(const char **)field = v; return 0;
    case OPT_CALL: return opt->call(o, v);
    }
    return vpt_fail("internal error: option %s has no kind", opt->name);
}

/* 0: parsed; 1: --help printed; -1: bad usage, with the message. */
static int parse_args(int argc, char **argv, Options *o)
{
    for (int i = 1; i < argc; i++) {
        int taken = vpt_scene_args_take(&o->sa, argc, argv, &i, 1);
        if (taken < 0) return -1;
        if (taken) continue;
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 1;
        }
        const BenchOption *opt = NULL;
        for (size_t k = 0; k < sizeof bench_options / sizeof bench_options[0] && !opt; k++)
            if (!strcmp(a, bench_options[k].name)) opt = &bench_options[k];
        if (!opt) return vpt_fail("unknown argument '%s' (see --help)", a);
        const char *v = NULL;
        if (opt->kind != OPT_SET) {
            if (i + 1 >= argc) return vpt_fail("%s needs a value", a);
            v = argv[++i];
        }
        if (set_option(o, opt, v)) return -1;
    }
    return 0;
}

/* The rules between options, once all are read (the thesis' variants join
 * the configs first). -1 with the message: bad usage. */
static int check_options(Options *o)
{
    if (o->thesis) o->nconfigs += vpt_config_thesis_set(o->configs + o->nconfigs, MAX_CONFIGS - o->nconfigs);
    if (vpt_scene_args_check(&o->sa, 0, 1)) return -1;
    if (o->arch_major && !o->precompile_only)
        return vpt_fail("--arch is for --precompile (a measurement compiles for its GPU)");
    if (o->precompile_only) {
        if (!o->arch_major) return vpt_fail("--precompile needs --arch sm_XY (no GPU is opened to ask)");
        if (o->best)
            return vpt_fail("--config best is the winner of a tune on a GPU; --precompile opens none "
                            "(give the config itself)");
        if (o->nconfigs == 0 && !o->roofline)
            return vpt_fail("nothing to precompile: give --thesis, --configs FILE, --config STR or --roofline");
        return 0;
    }
    if (o->nconfigs == 0 && !o->roofline && !o->best && !o->sa.print_scene)
        return vpt_fail("nothing to measure: give --thesis, --configs FILE, --config STR or --roofline");
    return 0;
}

static int run_precompile(const Options *o)
{
    if (vpt_scene_args_given(&o->sa) || o->out_path)
        fprintf(stderr, "%s: note: --precompile measures nothing: --scene, --volume, --scene-file and -o are ignored "
                        "(kernels do not depend on the scene)\n", prog);
    return precompile(o->configs, o->nconfigs, o->roofline, o->arch_major, o->arch_minor, o->cache,
                      o->eo.compile_threads);
}

/* ---- the scenes ------------------------------------------------------------ */

typedef struct {
    VptScene *built[MAX_SCENES + 2]; /* the scenes, a --volume and a --scene-file */
    int which[MAX_SCENES + 2];       /* each one's options (vpt_scene_args_only) */
    int n;
} Scenes;

/* Rule breakers are measured too (each a result saying which rule); the
 * scenes default to the built-in ones with --thesis, else manix; a large
 * scene that cannot fit on the GPU with the configs' estimators (and the
 * roofline probe's formats) is refused before it is built or loaded
 * (cli/gpu_check.h); --config best's are known only later. */
static void prepare_scenes(Options *o)
{
    for (int i = 0; i < o->nconfigs; i++)
        if (vpt_config_check(&o->configs[i])) {
            char c[VPT_CONFIG_STR_MAX];
            vpt_config_format(&o->configs[i], c, sizeof c);
            fprintf(stderr, "%s: note: %s breaks a rule and will be recorded as such: %s\n", prog, c, vpt_errmsg());
        }
    if (!vpt_scene_args_given(&o->sa)) {
        if (o->thesis) {
            for (const char *const *n = vpt_scene_names(); *n && o->sa.nscenes < MAX_SCENES; n++)
                o->sa.scenes[o->sa.nscenes++] = *n;
        } else {
            o->sa.scenes[o->sa.nscenes++] = "manix";
        }
    }
    o->gpu_check.device = o->eo.device;
    vpt_gpu_estimators_add(&o->gpu_check.estimators, VPT_DENSITY_F32, 0);
    for (int i = 0; i < o->nconfigs; i++)
        vpt_gpu_estimators_add(&o->gpu_check.estimators, o->configs[i].density, o->configs[i].majorant);
    if (!o->sa.print_scene) {
        o->sa.admit = vpt_gpu_check_admit;
        o->sa.admit_ctx = &o->gpu_check;
    }
}

/* A --scene-file's integrator depths apply unless --max-depth or --rr say
 * otherwise; one setting serves every scene. -1 with the message: bad usage. */
static int take_file_depths(Options *o, const VptMitsubaIntegrator *in, int nbuilt)
{
    if ((o->has_max_depth || in->max_depth == o->rs.max_depth) && (o->has_rr || in->rr_depth == o->rs.rr_depth))
        return 0;
    if (nbuilt > 1)
        return vpt_fail("--scene-file %s sets max_depth %d and rr_depth %d, which would apply to the other scenes "
                        "too: give --max-depth and --rr",
                        o->sa.scene_file, in->max_depth, in->rr_depth);
    if (!o->has_max_depth) o->rs.max_depth = in->max_depth;
    if (!o->has_rr) o->rs.rr_depth = in->rr_depth;
    return 0;
}

/* Builds every scene before the GPU is touched: bad names fail fast. 0, or
 * the exit status with the message reported (a file that cannot be read
 * is not bad usage). */
static int build_scenes(Options *o, Scenes *sc)
{
    for (int i = 0; i < o->sa.nscenes; i++) {
        if (!(sc->built[sc->n] = vpt_scene_args_load(&o->sa, o->sa.scenes[i], NULL))) goto usage_error;
        sc->which[sc->n++] = i;
    }
    VptSceneArgs one;
    if (o->sa.volume) {
        vpt_scene_args_only(&o->sa, VPT_SCENE_ARGS_VOLUME, &one);
        if (!(sc->built[sc->n] = vpt_scene_args_load(&one, NULL, NULL))) goto runtime_error;
        sc->which[sc->n++] = VPT_SCENE_ARGS_VOLUME;
    }
    if (o->sa.scene_file) {
        VptMitsubaIntegrator in;
        vpt_scene_args_only(&o->sa, VPT_SCENE_ARGS_FILE, &one);
        if (!(sc->built[sc->n] = vpt_scene_args_load(&one, NULL, &in))) goto runtime_error;
        sc->which[sc->n++] = VPT_SCENE_ARGS_FILE;
        if (take_file_depths(o, &in, sc->n)) goto usage_error;
    }
    return 0;
usage_error:
    vpt_report_error(prog);
    return 2;
runtime_error:
    vpt_report_error(prog);
    return 1;
}

static void destroy_scenes(Scenes *sc)
{
    for (int i = 0; i < sc->n; i++) vpt_scene_destroy(sc->built[i]);
}

/* --print-scene: each scene described, nothing measured. */
static int print_scenes(const Scenes *sc)
{
    int rc = 0;
    for (int i = 0; i < sc->n && rc == 0; i++) rc = vpt_scene_args_print(stdout, sc->built[i]);
    if (rc) vpt_report_error(prog);
    return rc ? 1 : 0;
}

/* The image each scene's workload asks for must be one the harness can
 * hold (--width and --height are bounded, their product too). */
static int check_image_sizes(const Options *o, const Scenes *sc)
{
    for (int i = 0; i < sc->n; i++) {
        const VptScene *s = sc->built[i];
        long long w = o->rs.width ? o->rs.width : s->width, h = o->rs.height ? o->rs.height : s->height;
        if (w * h > (long long)VPT_IMAGE_MAX_PIXELS)
            return vpt_fail("--width/--height: %s at %lldx%lld has more than the %zu pixels allowed", s->name, w, h,
                            (size_t)VPT_IMAGE_MAX_PIXELS);
    }
    return 0;
}

/* ---- the GPUs and the measurements --------------------------------------- */

/* Starts a worker on each GPU bench measures on, holding `first`; 0, or the
 * exit status (the message set; *lanes what was started). */
static int start_gpus(const Options *o, VptScene *first, BenchGpus *g, VptLanes **lanes)
{
    memset(g, 0, sizeof *g);
    g->spec = vpt_worker_spec_default();
    g->spec.eval = o->eo;
    g->spec.eval.cache_dir = o->cache;
    g->spec.eval.quiet = o->quiet;
    g->spec.scene = first;
    g->spec.settings = o->rs;
    *lanes = NULL;
    int no_gpu = 0;
    if (!o->gpus.given) { /* GPU 0, as bench always measured */
        g->n = 1;
    } else {
        VptGpuBrief list[VPT_GPU_LIST_MAX];
        int count = vpt_gpu_list(list, VPT_GPU_LIST_MAX, &no_gpu);
        g->n = count < 0 ? -1 : vpt_gpus_resolve(&o->gpus, count, g->device);
        if (g->n < 0) return count >= 0 ? 2 : no_gpu ? VPT_EXIT_NO_GPU : 1;
        for (int i = 0; g->n > 1 && i < g->n; i++)
            if (vpt_gpu_visible_value(g->device[i], g->visible[i], (int)sizeof g->visible[i])) return 1;
        if (g->n == 1) g->spec.eval.device = g->device[0];
    }
    VptLaneOps ops = {bench_lane_open, bench_lane_evaluate, bench_lane_prefetch, bench_lane_close, g};
    if (!(*lanes = vpt_lanes_start(&ops, g->n, -1, NULL, &no_gpu))) return no_gpu ? VPT_EXIT_NO_GPU : 1;
    if (g->n > 1) {
        VptLaneInfo info[VPT_GPUS_MAX];
        for (int i = 0; i < g->n; i++) info[i] = *vpt_lanes_info(*lanes, i);
        if (vpt_lanes_check_identical(info, g->n)) return 1;
    }
    return 0;
}

static void print_gpus(const VptProvenance *pv, const BenchGpus *g, VptLanes *lanes)
{
    printf("GPU %s (%d SMs, cc %s), driver %s, NVRTC %s, commit %s\n", pv->gpu_name, pv->sm_count, pv->cc,
           pv->driver_release, pv->nvrtc, pv->commit);
    if (g->n < 2) return;
    printf("measuring on %d GPUs side by side (rows in config order):", g->n);
    for (int i = 0; i < g->n; i++) {
        char who[256];
        vpt_lane_describe(vpt_lanes_info(lanes, i), who, sizeof who);
        printf("%s %s", i ? "," : "", who);
    }
    printf("\n");
}

/* What a bench session measures on, and where its rows go. */
typedef struct {
    Options *o;
    BenchGpus *g;
    VptLanes *lanes;
    const VptProvenance *pv;
    VptResultsFile *rf;
} Session;

/* random, the one-voxel bundle, the camera's 8x4 pixel tiles (kernels.cu.in, vpt_roofline) */
static const char *const rays_names[] = {"random", "coherent", "camera"};

static json_t *roofline_row(const Session *s, const VptScene *sc, const Roofline *probe)
{
    const VptParams *P = &s->g->lane[0]->params;
    json_t *row = vpt_provenance_json(s->pv);
    char when[64];
    vpt_iso8601_now(when, sizeof when);
    json_object_set_new(row, "kind", json_string("roofline"));
    json_object_set_new(row, "schema", json_string("vptune.result/1"));
    json_object_set_new(row, "time", json_string(when));
    json_object_set_new(row, "scene", json_string(sc->name));
    json_object_set_new(row, "volume", vpt_scene_volume_json(sc));
    json_object_set_new(row, "workload", vpt_workload_json(P, &s->o->rs));
    json_object_set_new(row, "rays", json_string(rays_names[probe->coherent]));
    if (probe->density != VPT_DENSITY_F32) /* rows of f32 probes read as before the formats existed */
        json_object_set_new(row, "density", json_string(vpt_density_format_name(probe->density)));
    /* "global" or "gridC"; rows from before the grid probes have none and are global */
    json_object_set_new(row, "majorant", json_string(vpt_majorant_name(probe->majorant)));
    json_object_set_new(row, "metrics",
                        json_pack("{s:f, s:f, s:f, s:i, s:I, s:f}", "time_ms", probe->ms.median, "time_ms_ci95",
                                  probe->ms.ci95_half, "time_ms_spread", probe->ms.rel_spread, "reps", probe->ms.n,
                                  "steps", (json_int_t)probe->steps, "gsteps_per_s", probe->gsteps_per_s));
    return row;
}

/* The probes of the configs' estimators on the first GPU, so that each
 * config's percent of roofline is against the probe of its own majorant
 * and density format: against the global majorant once per format the
 * configs use (f32 always), then each majorant grid the configs use with
 * the formats they use it with. -1 with the message. */
static int measure_rooflines(const Session *s, const VptScene *sc, int nrun)
{
    const int *cells;
    const int ncells = vpt_majorant_cells(&cells);
    for (int m = 0; m < ncells; m++)
        for (int k = 0; k < 3 * VPT_DENSITY_FORMAT_COUNT; k++) {
            const int coh = k % 3, den = k / 3;
            /* cells[0] is 0: the global probe of f32 and of every format a config uses */
            const int want = cells[m] == 0 ? den == VPT_DENSITY_F32 || configs_use(s->o->configs, nrun, -2, den)
                                           : configs_use(s->o->configs, nrun, cells[m], den);
            if (!want) continue;
            Roofline probe = {.coherent = coh, .density = (VptDensityFormat)den, .majorant = cells[m]};
            if (call_lanes(s->lanes, 0, lane_roofline, &probe)) return -1;
            printf("  roofline %-9s %-4s %-7s %9.3f ms %7.2f Gsteps/s\n", rays_names[coh],
                   vpt_density_format_name(probe.density), vpt_majorant_name(cells[m]), probe.ms.median,
                   probe.gsteps_per_s);
            json_t *row = roofline_row(s, sc, &probe);
            int rc = vpt_results_append(s->rf, row);
            json_decref(row);
            if (rc) return -1;
        }
    return 0;
}

/* --config best: scene `i`'s winner on this GPU joins the configs, last. */
static int add_best_config(const Session *s, const Scenes *sc, int i, int *nrun)
{
    VptSceneArgs one;
    vpt_scene_args_only(&s->o->sa, sc->which[i], &one);
    char path[1024];
    if (*nrun == MAX_CONFIGS) return vpt_fail("--config best: more than %d configs", MAX_CONFIGS);
    if (vpt_config_best_load(&one, s->pv->gpu_name, sc->built[i], &s->o->configs[*nrun], path, sizeof path))
        return -1;
    printf("config best for %s: %s\n", sc->built[i]->name, path);
    (*nrun)++;
    return 0;
}

/* Scene `i`: the GPUs' workers take it (the first scene's were started
 * with it), then its roofline probes and its configs. -1 with the message. */
static int measure_scene(Session *s, const Scenes *sc, int i)
{
    VptScene *scene = sc->built[i];
    s->g->spec.scene = scene;
    if (i > 0 && call_lanes(s->lanes, -1, lane_set_scene, &s->g->spec)) return -1;
    int nrun = s->o->nconfigs;
    if (s->o->best && add_best_config(s, sc, i, &nrun)) return -1;
    const VptParams *P = &s->g->lane[0]->params;
    printf("\n%s: %ux%u, %u spp, seed %u (%s)\n", scene->name, P->width, P->height, P->spp, P->seed, scene->source);
    if (s->o->roofline && measure_rooflines(s, scene, nrun)) return -1;
    return measure_configs(s->lanes, s->g, s->o->configs, nrun, s->rf);
}

/* Every scene on the GPUs, each row to -o (default
 * results/<gpu>/bench.jsonl); the exit status. */
static int measure(Options *o, const Scenes *sc)
{
    if (check_image_sizes(o, sc)) {
        vpt_report_error(prog);
        return 2;
    }
    /* A results file named with -o is opened before the GPU is touched: an
     * unwritable path fails at once, not after the first measurement. */
    VptResultsFile *rf = NULL;
    int created = o->out_path && access(o->out_path, F_OK) != 0;
    if (o->out_path && !(rf = vpt_results_open(o->out_path))) {
        vpt_report_error(prog);
        return 1;
    }
    BenchGpus g;
    VptLanes *lanes;
    int rc = start_gpus(o, sc->built[0], &g, &lanes);
    if (rc) {
        vpt_report_error(prog);
        vpt_lanes_stop(lanes);
        vpt_results_close(rf);
        /* Nothing was measured: leave no empty results file behind. */
        if (created && vpt_file_size(o->out_path) == 0) unlink(o->out_path);
        return rc;
    }
    VptProvenance prov = *vpt_eval_worker_provenance(g.lane[0]->w);
    char default_out[512];
    const char *out_path = o->out_path;
    if (!out_path) {
        char dir[128];
        vpt_gpu_dirname(prov.gpu_name, dir, sizeof dir);
        snprintf(default_out, sizeof default_out, "results/%s/bench.jsonl", dir);
        out_path = default_out;
    }
    if (!rf && !(rf = vpt_results_open(out_path))) {
        vpt_report_error(prog);
        vpt_lanes_stop(lanes);
        return 1;
    }
    print_gpus(&prov, &g, lanes);
    Session s = {o, &g, lanes, &prov, rf};
    for (int i = 0; i < sc->n && rc == 0; i++)
        if (measure_scene(&s, sc, i)) {
            vpt_report_error(prog);
            rc = 1;
        }
    printf("\nresults: %s\n", out_path);
    vpt_results_close(rf);
    vpt_lanes_stop(lanes);
    return rc;
}

int main(int argc, char **argv)
{
    static Options o;
    if (vpt_handle_version(argc, argv, prog)) return 0;
    if (vpt_mpi_launched_size() > 1 || vpt_mpi_launched_size() < 0) {
        fprintf(stderr, "%s: error: bench runs as one process, not under an MPI launcher: measure on every GPU of "
                        "this host with --gpus all (tune spreads over MPI ranks)\n", prog);
        return 2;
    }
    options_init(&o);
    int pr = parse_args(argc, argv, &o);
    if (pr == 1) return 0;
    if (pr < 0 || check_options(&o)) {
        vpt_report_error(prog);
        return 2;
    }
    if (o.precompile_only) return run_precompile(&o);
    prepare_scenes(&o);
    Scenes sc;
    memset(&sc, 0, sizeof sc);
    int rc = build_scenes(&o, &sc);
    if (rc == 0) rc = o.sa.print_scene ? print_scenes(&sc) : measure(&o, &sc);
    destroy_scenes(&sc);
    return rc;
}
