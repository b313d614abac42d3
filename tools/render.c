/* bin/render: render one scene to an image.
 *
 *   render --scene manix --config streamingSK -o manix.png      (GPU)
 *   render --cpu --scene manix --spp 16 -o manix.png            (CPU reference)
 *   render --cpu --config majorant=grid8,volume=sparse ...      (its estimator)
 *   render --cpu --volume head.mha --like manix --downsample 2 -o head.pfm
 *   render --cpu --scene-file scene.xml -o scene.pfm            (a Mitsuba scene)
 *   render --scene manix --export-mitsuba out/manix.xml         (export only)
 *   render --volume cloud.vdb --export-nvdb cloud.nvdb          (conversion only)
 *
 * The scene is a built-in one (--scene), a volume file turned into one
 * (--volume, with --like taking camera, boundary and scale from a built-in
 * scene) or a Mitsuba scene file (--scene-file, scenes/mitsuba/mitsuba_xml.h; its
 * integrator's max_depth and rr_depth apply unless --max-depth or --rr say
 * otherwise). --export-mitsuba writes the scene, with the workload and
 * depths of this command, as a Mitsuba 3 scene; --export-nvdb writes a .vdb
 * volume's grids as the NanoVDB file it loads through (for machines without
 * OpenVDB); without -o neither renders. The workload defaults to the scene's thesis workload. The image is
 * written only after the render succeeded, atomically: on any failure no
 * file appears under the output name. With --cpu, --config chooses the CPU
 * reference's estimator (VptCpuEstimator: its majorant, density and volume
 * keys, which change how the medium is sampled as they do on the GPU); its
 * schedule keys choose GPU kernels and do not apply. Exit status: 0 done, 1 runtime
 * failure, 2 bad usage, 3 no CUDA GPU or driver (VPT_EXIT_NO_GPU). */
#include "reference/cpu_render.h" /* first: defines the CPU medium */

#include "base/error.h"
#include "base/file.h"
#include "base/parse.h"
#include "cli/config_best.h"
#include "cli/gpu_check.h"
#include "cli/scene_args.h"
#include "cli/version.h"
#include "codegen/config.h"
#include "harness/evaluator.h"
#include "image/image.h"
#include "scenes/mitsuba/mitsuba_xml.h"
#include "scenes/scene.h"
#include "scenes/formats/volume_vdb.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

static const char *prog = "render";

enum { EXIT_OK = 0, EXIT_RUNTIME = 1, EXIT_USAGE = 2 };

/* The GPU default: the thesis' default schedule (regenerationSK, thread). */
#define DEFAULT_CONFIG "regenerationSK-thread"

typedef struct {
    int cpu;
    VptSceneArgs scene;           /* --scene, --volume (+ its flags), --scene-file */
    const char *out;
    const char *export_mitsuba;   /* write the scene as a Mitsuba 3 scene here */
    const char *export_nvdb;      /* write the --volume .vdb file as NanoVDB here */
    int has_max_depth, has_rr;    /* given on the command line */
    const char *config;           /* GPU kernel configuration (text) */
    VptConfig kernel;
    int width, height, spp;       /* 0: the scene's workload */
    uint32_t seed;
    int max_depth, rr_depth;
    int tiles;                    /* GPU: NxN tiles, one launch each (0: none) */
    int threads;                  /* 0: all cores */
    int quiet;
} Options;

static void usage(FILE *fp)
{
    fprintf(fp,
            "usage: render [--cpu | --config CONFIG] (--scene NAME | --volume FILE | --scene-file FILE.xml)\n"
            "              (-o OUT.png|OUT.pfm | --export-mitsuba FILE.xml | --export-nvdb FILE.nvdb) [options]\n"
            "\n"
            "Renders a scene with the volumetric path tracer and writes the mean radiance\n"
            "per pixel: PNG (8-bit sRGB, for viewing) or PFM (32-bit float, exact).\n"
            "Renders on the GPU unless --cpu is given.\n"
            "\n"
            "  --config CONFIG     GPU kernel configuration: a thesis name (naiveSK, naiveMK,\n"
            "                      regenerationSK-thread|warp|block, streamingSK, streamingMK,\n"
            "                      streamingSK-morton, sortingSK) and/or key=value pairs, e.g.\n"
            "                      \"streamingSK,block=128,maxrregcount=64\" (default " DEFAULT_CONFIG "),\n"
            "                      or best: the winner of `tune` for this scene on this GPU\n"
            "  --cpu               render on the CPU (the reference renderer); with --config, its\n"
            "                      estimator keys apply (majorant=, density=, volume=), not the\n"
            "                      schedule (e.g. --cpu --config volume=sparse)\n"
            "  --export-mitsuba FILE.xml\n"
            "                      write the scene as a Mitsuba 3 scene (FILE.xml and its .vol grids\n"
            "                      beside it) with this command's workload; renders only with -o\n"
            "  --export-nvdb FILE.nvdb\n"
            "                      with --volume FILE.vdb: write its grids as the NanoVDB file it\n"
            "                      loads through, which loads without OpenVDB; renders only with -o\n"
            "  -o, --output FILE   output image, .png or .pfm (required)\n"
            "  --width W, --height H, --spp N\n"
            "                      image size and samples per pixel (default: the scene's)\n"
            "  --seed S            random seed, 0..4294967295 (default 0)\n"
            "  --max-depth D       maximum interactions per path; 0: unlimited (default, or the\n"
            "                      scene file's)\n"
            "  --rr DEPTH          Russian roulette from this depth; -1: off (default, or the scene\n"
            "                      file's)\n"
            "  --tiles N           GPU: render in NxN image tiles, one launch each (thesis 4.1.2)\n"
            "  --threads T         CPU threads (default: all cores)\n"
            "  --quiet             no progress line and no summary\n"
            "  --version           commit, NVRTC and driver versions\n"
            "  -h, --help          this text\n"
            "\n");
    vpt_scene_args_usage(fp);
    fprintf(fp, "\nExit status: 0 done, 1 runtime failure, 2 bad usage, 3 no CUDA GPU or driver.\n"
                "\nBuilt-in scenes:\n");
    vpt_scene_print_list(fp);
}

/* Prints the message and "try --help"; returns the usage exit code. */
static int usage_error(void)
{
    vpt_report_error(prog);
    fprintf(stderr, "%s: try '%s --help'\n", prog, prog);
    return EXIT_USAGE;
}

/* Whether path's file name ends in ext (".xml", any case) after a nonempty stem. */
static int has_extension(const char *path, const char *ext)
{
    const char *dot = strrchr(path, '.'), *slash = strrchr(path, '/');
    if (!dot || (slash && dot < slash) || dot == (slash ? slash + 1 : path)) return 0;
    return strcasecmp(dot, ext) == 0;
}

static int has_image_extension(const char *path)
{
    const char *dot = strrchr(path, '.'), *slash = strrchr(path, '/');
    if (!dot || (slash && dot < slash)) return 0;
    return strcasecmp(dot, ".png") == 0 || strcasecmp(dot, ".pfm") == 0;
}

/* Parses argv into o. Returns 0, 1 for --help (already printed), or -1 with a
 * message. */
static int parse_args(int argc, char **argv, Options *o)
{
    memset(o, 0, sizeof *o);
    o->rr_depth = -1;
    vpt_scene_args_init(&o->scene);
    for (int i = 1; i < argc; i++) {
        int taken = vpt_scene_args_take(&o->scene, argc, argv, &i, 0);
        if (taken < 0) return -1;
        if (taken) continue;
        const char *a = argv[i];
        /* "--flag=value" is the same as "--flag value". */
        char flag[64];
        const char *val = NULL;
        const char *eq = strncmp(a, "--", 2) == 0 ? strchr(a, '=') : NULL;
        if (eq) {
            size_t n = (size_t)(eq - a);
            if (n >= sizeof flag) return vpt_fail("unknown option '%s'", a);
            memcpy(flag, a, n);
            flag[n] = '\0';
            val = eq + 1;
            a = flag;
        }
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 1;
        }
        if (!strcmp(a, "--cpu") || !strcmp(a, "--quiet")) {
            if (val) return vpt_fail("%s takes no value", a);
            if (!strcmp(a, "--cpu")) o->cpu = 1;
            else o->quiet = 1;
            continue;
        }
        static const char *const with_value[] = {"-o", "--output", "--width", "--height", "--spp", "--seed",
                                                 "--max-depth", "--rr", "--tiles", "--threads", "--config",
                                                 "--export-mitsuba", "--export-nvdb", NULL};
        int known = 0;
        for (int k = 0; with_value[k]; k++) known |= !strcmp(a, with_value[k]);
        if (!known) return vpt_fail("unknown option '%s'", argv[i]);
        if (!val) {
            if (i + 1 >= argc) return vpt_fail("%s needs a value", a);
            val = argv[++i];
        }
        if (!strcmp(a, "--config")) {
            o->config = val;
        } else if (!strcmp(a, "--export-mitsuba")) {
            o->export_mitsuba = val;
        } else if (!strcmp(a, "--export-nvdb")) {
            o->export_nvdb = val;
        } else if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
            o->out = val;
        } else if (!strcmp(a, "--width")) {
            if (vpt_parse_int(val, 1, VPT_IMAGE_MAX_DIM, "--width", &o->width)) return -1;
        } else if (!strcmp(a, "--height")) {
            if (vpt_parse_int(val, 1, VPT_IMAGE_MAX_DIM, "--height", &o->height)) return -1;
        } else if (!strcmp(a, "--spp")) {
            if (vpt_parse_int(val, 1, 1 << 24, "--spp", &o->spp)) return -1;
        } else if (!strcmp(a, "--seed")) {
            uint64_t s;
            if (vpt_parse_u64(val, UINT32_MAX, "--seed", &s)) return -1;
            o->seed = (uint32_t)s;
        } else if (!strcmp(a, "--max-depth")) {
            if (vpt_parse_int(val, 0, 1 << 20, "--max-depth", &o->max_depth)) return -1;
            o->has_max_depth = 1;
        } else if (!strcmp(a, "--rr")) {
            if (vpt_parse_int(val, -1, 1 << 20, "--rr", &o->rr_depth)) return -1;
            o->has_rr = 1;
        } else if (!strcmp(a, "--tiles")) {
            if (vpt_parse_int(val, 1, VPT_MAX_TILES, "--tiles", &o->tiles)) return -1;
        } else if (!strcmp(a, "--threads")) {
            if (vpt_parse_int(val, 1, 1024, "--threads", &o->threads)) return -1;
        }
    }
    if (vpt_scene_args_check(&o->scene, 1, 0)) return -1;
    if (o->scene.print_scene) return 0;
    if (o->cpu && vpt_config_is_best(o->config))
        return vpt_fail("--config best is a GPU's tuned kernel; with --cpu, name the estimator keys it should use "
                        "(e.g. --config majorant=grid8,density=f16,volume=sparse)");
    /* "best" is resolved once the GPU is known (results/<gpu>/best/<scene>.json). */
    if (!vpt_config_is_best(o->config)) {
        if (vpt_config_parse(o->config ? o->config : DEFAULT_CONFIG, &o->kernel)) return -1;
        if (vpt_config_check(&o->kernel)) return -1;
    }
    if (o->export_mitsuba && !has_extension(o->export_mitsuba, ".xml"))
        return vpt_fail("--export-mitsuba %s: expected a FILE.xml name", o->export_mitsuba);
    if (o->export_nvdb) {
        if (!has_extension(o->export_nvdb, ".nvdb"))
            return vpt_fail("--export-nvdb %s: expected a FILE.nvdb name", o->export_nvdb);
        if (!o->scene.volume || !has_extension(o->scene.volume, ".vdb"))
            return vpt_fail("--export-nvdb converts an OpenVDB file: it needs --volume FILE.vdb (other volumes load "
                            "without OpenVDB as they are)");
        if (o->scene.downsample > 1 || o->scene.upsample > 1)
            return vpt_fail("--export-nvdb writes the file's grids as they are: --downsample and --upsample do not "
                            "apply to it");
    }
    if ((o->export_mitsuba || o->export_nvdb) && !o->out) return 0;
    if (!o->out)
        return vpt_fail("an output file is required: -o OUT.png or -o OUT.pfm (or --export-mitsuba FILE.xml, "
                        "--export-nvdb FILE.nvdb)");
    if (!has_image_extension(o->out))
        return vpt_fail("-o %s: unknown image format; expected a .png or .pfm file name", o->out);
    return 0;
}

/* ------------------------------------------------------------ back ends */

/* What a back end renders: the scene, its parameter block and the options. */
typedef struct {
    const Options *opt;
    const VptScene *scene;
    const VptParams *params;
} RenderJob;

/* The CPU reference; with --config, the estimator its keys name (the
 * majorant grid, density format and volume representation the GPU kernels
 * of that config would sample), folded into a copy of the parameters. */
static int render_cpu(const RenderJob *job, float *rgb, VptRenderStats *st)
{
    const Options *o = job->opt;
    VptCpuRenderOptions co = {o->threads, o->quiet ? VPT_PROGRESS_OFF : VPT_PROGRESS_AUTO, NULL};
    if (!o->config) return vpt_cpu_render(job->scene, job->params, &co, rgb, NULL, st);
    VptParams p = *job->params;
    VptCpuEstimator e;
    if (vpt_cpu_estimator_init(&e, job->scene, o->kernel.density, o->kernel.majorant, o->kernel.sparse, &p))
        return -1;
    co.estimator = &e;
    const int rc = vpt_cpu_render(job->scene, &p, &co, rgb, NULL, st);
    vpt_cpu_estimator_free(&e);
    if (rc == 0 && !o->quiet)
        printf("cpu estimator majorant=%s, density=%s, volume=%s (the config's schedule keys apply to GPU kernels)\n",
               vpt_majorant_name(o->kernel.majorant), vpt_density_format_name(o->kernel.density),
               vpt_volume_name(o->kernel.sparse));
    return rc;
}

/* The GPU back end: one render with the chosen configuration, through the
 * same evaluator bench and tune use (no reference render, no repetitions). */
static int render_gpu(const RenderJob *job, float *rgb, VptRenderStats *st, int *no_gpu)
{
    VptEvaluatorOptions eo = vpt_evaluator_options_default();
    eo.gate = 0;
    eo.quiet = job->opt->quiet;
    VptEvaluator *e = vpt_evaluator_create(&eo);
    if (!e) {
        *no_gpu = 1;
        return -1;
    }
    VptRenderSettings rs = {job->opt->width, job->opt->height, job->opt->spp, job->opt->seed, job->opt->max_depth,
                            job->opt->rr_depth, job->opt->tiles};
    int rc = -1;
    VptConfig kernel = job->opt->kernel;
    if (vpt_config_is_best(job->opt->config)) {
        char path[1024];
        if (vpt_config_best_load(&job->opt->scene, vpt_evaluator_provenance(e)->gpu_name, job->scene, &kernel, path,
                                 sizeof path)) {
            vpt_evaluator_destroy(e);
            return -1;
        }
        if (!job->opt->quiet) printf("config best: %s\n", path);
    }
    if (vpt_evaluator_set_scene(e, job->scene, &rs) == 0) {
        VptEvalResult r;
        float *img = vpt_evaluator_render(e, &kernel, &r);
        if (img) {
            size_t n = (size_t)job->params->width * job->params->height * 3;
            memcpy(rgb, img, n * sizeof(float));
            free(img);
            st->seconds = r.time_ms.median * 1e-3;
            st->counters.rays = r.rays;
            st->counters.steps = r.steps;
            st->counters.paths = r.paths;
            if (!job->opt->quiet)
                printf("gpu %s, %s: %d registers, occupancy %.0f%% theoretical / %.0f%% achieved, SIMD efficiency %.0f%%\n",
                       vpt_evaluator_provenance(e)->gpu_name, r.canon, r.registers, 100 * r.occupancy_theoretical,
                       100 * r.occupancy_achieved, 100 * r.simd_efficiency);
            rc = 0;
        }
    }
    vpt_evaluator_destroy(e);
    return rc;
}

/* ------------------------------------------------------------ main */

/* The scene; a scene file's integrator depths become o's unless given. */
static VptScene *load_scene(Options *o)
{
    VptMitsubaIntegrator in;
    VptScene *s = vpt_scene_args_load(&o->scene, NULL, &in);
    if (s && o->scene.scene_file) {
        if (!o->has_max_depth) o->max_depth = in.max_depth;
        if (!o->has_rr) o->rr_depth = in.rr_depth;
    }
    return s;
}

/* Fails early, before a long render, when the image cannot be written there. */
static int check_output_dir(const char *flag, const char *path)
{
    char dir[4096];
    if (strlen(path) >= sizeof dir) return vpt_fail("%s %.60s...: path too long", flag, path);
    vpt_dirname(path, dir, sizeof dir);
    if (access(dir, W_OK | X_OK) != 0) return vpt_fail_errno("%s %s: cannot write in directory '%s'", flag, path, dir);
    return 0;
}

/* Without a GPU: the same render on the CPU, as a command that works as
 * printed (the scene options, the workload given, the output). */
static void print_cpu_hint(const Options *o)
{
    char cmd[4096] = "render --cpu", num[32];
    char words[2048];
    if (vpt_scene_args_format(&o->scene, words, sizeof words)) return;
    strncat(cmd, " ", sizeof cmd - strlen(cmd) - 1);
    strncat(cmd, words, sizeof cmd - strlen(cmd) - 1);
    const struct {
        const char *flag;
        int given;
        long long value;
    } w[] = {{"--width", o->width > 0, o->width},        {"--height", o->height > 0, o->height},
             {"--spp", o->spp > 0, o->spp},              {"--seed", o->seed != 0, o->seed},
             {"--max-depth", o->has_max_depth, o->max_depth}, {"--rr", o->has_rr, o->rr_depth}};
    for (size_t i = 0; i < sizeof w / sizeof w[0]; i++) {
        if (!w[i].given) continue;
        snprintf(num, sizeof num, "%lld", w[i].value);
        vpt_shell_word_append(cmd, sizeof cmd, w[i].flag);
        vpt_shell_word_append(cmd, sizeof cmd, num);
    }
    /* the config's estimator: the CPU reference samples the medium as it would */
    if (o->config && !vpt_config_is_best(o->config)) {
        char est[128];
        snprintf(est, sizeof est, "majorant=%s,density=%s,volume=%s", vpt_majorant_name(o->kernel.majorant),
                 vpt_density_format_name(o->kernel.density), vpt_volume_name(o->kernel.sparse));
        vpt_shell_word_append(cmd, sizeof cmd, "--config");
        vpt_shell_word_append(cmd, sizeof cmd, est);
    }
    vpt_shell_word_append(cmd, sizeof cmd, "-o");
    vpt_shell_word_append(cmd, sizeof cmd, o->out);
    fprintf(stderr, "%s: without a GPU, the CPU reference renders the same image:\n  %s\n", prog, cmd);
}

int main(int argc, char **argv)
{
    Options o;
    if (vpt_handle_version(argc, argv, prog)) return EXIT_OK;
    int pr = parse_args(argc, argv, &o);
    if (pr == 1) return EXIT_OK;
    if (pr < 0) return usage_error();
    if (o.scene.print_scene) {
        VptScene *s = load_scene(&o);
        int rc = s ? vpt_scene_args_print(stdout, s) : -1;
        if (rc) vpt_report_error(prog);
        vpt_scene_destroy(s);
        return rc ? EXIT_RUNTIME : EXIT_OK;
    }
    if ((o.out && check_output_dir("-o", o.out)) ||
        (o.export_mitsuba && check_output_dir("--export-mitsuba", o.export_mitsuba)) ||
        (o.export_nvdb && check_output_dir("--export-nvdb", o.export_nvdb))) {
        vpt_report_error(prog);
        return EXIT_RUNTIME;
    }
    if (o.export_nvdb) {
        if (vpt_volume_vdb_to_nanovdb(o.scene.volume_path, o.scene.load.max_bytes, o.export_nvdb)) {
            vpt_report_error(prog);
            return EXIT_RUNTIME;
        }
        if (!o.quiet) printf("wrote %s (NanoVDB, the grids of %s)\n", o.export_nvdb, o.scene.volume_path);
        if (!o.out && !o.export_mitsuba) return EXIT_OK;
    }

    /* a large scene that cannot fit on the GPU is refused before it loads
     * (its estimator: the config's; best's is known only with the GPU) */
    VptGpuCheck gpu_check;
    memset(&gpu_check, 0, sizeof gpu_check);
    if (!o.cpu && o.out) {
        vpt_gpu_estimators_add(&gpu_check.estimators, VPT_DENSITY_F32, 0);
        if (!vpt_config_is_best(o.config))
            vpt_gpu_estimators_add(&gpu_check.estimators, o.kernel.density, o.kernel.majorant);
        o.scene.admit = vpt_gpu_check_admit;
        o.scene.admit_ctx = &gpu_check;
    }
    VptScene *s = load_scene(&o);
    if (!s) {
        vpt_report_error(prog);
        return EXIT_RUNTIME;
    }
    VptRenderSettings rs = {o.width, o.height, o.spp, o.seed, o.max_depth, o.rr_depth, o.tiles};
    if (o.export_mitsuba) {
        if (vpt_scene_export_mitsuba(s, o.export_mitsuba, &rs)) {
            vpt_report_error(prog);
            vpt_scene_destroy(s);
            return EXIT_RUNTIME;
        }
        if (!o.quiet) printf("scene %s (%s)\nwrote %s (Mitsuba 3 scene, with its .vol grids beside it)\n", s->name,
                             s->source, o.export_mitsuba);
        if (!o.out) {
            vpt_scene_destroy(s);
            return EXIT_OK;
        }
    }
    VptParams p;
    vpt_params_init(&p, s, &rs);
    if ((uint64_t)p.width * p.height > VPT_IMAGE_MAX_PIXELS) {
        vpt_fail("image %ux%u has more than %zu pixels", (unsigned)p.width, (unsigned)p.height,
                 (size_t)VPT_IMAGE_MAX_PIXELS);
        vpt_scene_destroy(s);
        return usage_error();
    }
    VptImage *img = vpt_image_create((int)p.width, (int)p.height);
    if (!img) {
        vpt_report_error(prog);
        vpt_scene_destroy(s);
        return EXIT_RUNTIME;
    }
    RenderJob job = {&o, s, &p};
    VptRenderStats st;
    memset(&st, 0, sizeof st);
    int no_gpu = 0;
    int rc = o.cpu ? render_cpu(&job, img->rgb, &st) : render_gpu(&job, img->rgb, &st, &no_gpu);
    if (rc == 0) rc = vpt_image_write(o.out, img);
    if (rc != 0) {
        vpt_report_error(prog);
        if (no_gpu) print_cpu_hint(&o);
        vpt_image_destroy(img);
        vpt_scene_destroy(s);
        return no_gpu ? VPT_EXIT_NO_GPU : EXIT_RUNTIME;
    }
    if (!o.quiet) {
        char line[256];
        vpt_render_stats_format(&st, line, sizeof line);
        printf("scene %s (%s)\n", s->name, s->source);
        printf("workload %ux%u at %u spp = %llu paths, seed %u, %s\n", (unsigned)p.width, (unsigned)p.height,
               (unsigned)p.spp, (unsigned long long)p.npaths, (unsigned)p.seed, o.cpu ? "cpu" : "gpu");
        printf("%s\n", line);
        printf("wrote %s\n", o.out);
    }
    vpt_image_destroy(img);
    vpt_scene_destroy(s);
    return EXIT_OK;
}
