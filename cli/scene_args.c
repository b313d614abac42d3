/* The scene options shared by every tool: see cli/scene_args.h. */
#include "cli/scene_args.h"

#include "base/error.h"
#include "base/parse.h"
#include "base/progress.h"
#include "harness/results.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

void vpt_scene_args_init(VptSceneArgs *a)
{
    memset(a, 0, sizeof *a);
    a->downsample = 1;
    a->upsample = 1;
    a->transfer = VPT_TF_AUTO;
    /* --sun without --sun-irradiance: 3 (white) */
    for (int k = 0; k < 3; k++) a->light.sun_irradiance[k] = 3.0;
}

static const struct {
    const char *name;
    VptTransfer tf;
} transfers[] = {{"auto", VPT_TF_AUTO}, {"ct", VPT_TF_CT}, {"linear", VPT_TF_LINEAR}, {"identity", VPT_TF_IDENTITY}};

static int parse_transfer(const char *s, VptTransfer *t)
{
    for (size_t i = 0; i < sizeof transfers / sizeof transfers[0]; i++)
        if (strcmp(s, transfers[i].name) == 0) {
            *t = transfers[i].tf;
            return 0;
        }
    return vpt_fail("--transfer: unknown transfer function '%s'; expected ct, linear, identity or auto", s);
}

static const char *transfer_name(VptTransfer t)
{
    for (size_t i = 0; i < sizeof transfers / sizeof transfers[0]; i++)
        if (transfers[i].tf == t) return transfers[i].name;
    return "auto";
}

static int parse_dims(const char *s, int dims[3])
{
    char buf[128];
    if (strlen(s) >= sizeof buf) return vpt_fail("--dims: '%.40s...' is too long; expected X,Y,Z", s);
    strcpy(buf, s);
    char *parts[3], *p = buf;
    for (int k = 0; k < 3; k++) {
        parts[k] = p;
        char *c = strchr(p, ',');
        if (k < 2) {
            if (!c) return vpt_fail("--dims: '%s' is not X,Y,Z (three positive integers)", s);
            *c = '\0';
            p = c + 1;
        } else if (c) {
            return vpt_fail("--dims: '%s' has more than three values; expected X,Y,Z", s);
        }
    }
    for (int k = 0; k < 3; k++)
        if (vpt_parse_int(parts[k], 1, 1 << 20, "--dims", &dims[k])) return -1;
    return 0;
}

/* The options with a value; the volume-only ones are marked. */
static const struct {
    const char *flag;
    int volume_only;
} flags[] = {{"--scene", 0},    {"--volume", 0}, {"--scene-file", 0}, {"--like", 1},     {"--dims", 1},
             {"--type", 1},     {"--downsample", 1}, {"--upsample", 1}, {"--transfer", 1},
             {"--density-scale", 0}, {"--albedo", 0}, {"--g", 0}, {"--sun", 0}, {"--sun-irradiance", 0},
             {"--sun-radius", 0}, {"--env", 0},
             {"--env-map", 0},    {"--env-map-scale", 0}};

/* Largest irradiance or radiance a flag takes: a float's range. */
#define LIGHT_MAX 3e38

/* A flag's three values: "A" (one value for the three, when `one` is set)
 * or "X,Y,Z", each in [min, max]. -0 is 0: one value, one scene name (a
 * "-0,0,0" would format back as the single "-0"). */
static int parse_triple(const char *flag, const char *v, double min, double max, int one, double out[3])
{
    const char *expect = one ? "A or R,G,B" : "X,Y,Z";
    char buf[128];
    if (strlen(v) >= sizeof buf) return vpt_fail("%s: '%.40s...' is too long; expected %s", flag, v, expect);
    snprintf(buf, sizeof buf, "%s", v);
    char *parts[4];
    int n = 0;
    for (char *p = buf;; p++) {
        if (n == 3) return vpt_fail("%s: '%s' has more than three values; expected %s", flag, v, expect);
        parts[n++] = p;
        p = strchr(p, ',');
        if (!p) break;
        *p = '\0';
    }
    if (n == 2 || (n == 1 && !one))
        return vpt_fail("%s: '%s' has %s value%s; expected %s", flag, v, n == 1 ? "one" : "two", n == 1 ? "" : "s",
                        expect);
    for (int k = 0; k < n; k++) {
        if (vpt_parse_double(parts[k], min, max, flag, &out[k])) return -1;
        if (out[k] == 0) out[k] = 0;
    }
    if (n == 1) out[1] = out[2] = out[0];
    return 0;
}

int vpt_scene_args_take(VptSceneArgs *a, int argc, char **argv, int *i, int multi_scene)
{
    const char *arg = argv[*i];
    if (!strcmp(arg, "--print-scene")) {
        a->print_scene = 1;
        return 1;
    }
    /* "--flag=value" is the same as "--flag value". */
    const char *eq = strncmp(arg, "--", 2) == 0 ? strchr(arg, '=') : NULL;
    size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
    int k = -1;
    for (size_t j = 0; j < sizeof flags / sizeof flags[0]; j++)
        if (strlen(flags[j].flag) == len && !strncmp(arg, flags[j].flag, len)) k = (int)j;
    if (k < 0) return 0;
    const char *flag = flags[k].flag, *v;
    if (eq) {
        v = eq + 1;
    } else {
        if (*i + 1 >= argc) return vpt_fail("%s needs a value", flag);
        v = argv[++*i];
    }
    if (!*v) return vpt_fail("%s: the value is empty", flag);
    /* "--volume --like manix": the value was forgotten, not a file "--like" */
    if (!eq && !strncmp(v, "--", 2)) return vpt_fail("%s needs a value (got the option '%s')", flag, v);
    if (flags[k].volume_only && !a->volume_flag) a->volume_flag = flag;
    if (!strcmp(flag, "--scene")) {
        if (a->nscenes && !multi_scene) return vpt_fail("--scene given twice ('%s' and '%s')", a->scene, v);
        if (a->nscenes == VPT_SCENE_ARGS_MAX_SCENES) return vpt_fail("--scene: at most %d scenes", VPT_SCENE_ARGS_MAX_SCENES);
        a->scenes[a->nscenes++] = v;
        if (!a->scene) a->scene = v;
    } else if (!strcmp(flag, "--volume")) {
        if (a->volume) return vpt_fail("--volume given twice ('%s' and '%s')", a->volume, v);
        /* a folder (a DICOM series) may come with a trailing slash; the
         * scene is named after the last path component */
        size_t n = strlen(v);
        while (n > 1 && v[n - 1] == '/') n--;
        if (n >= sizeof a->volume_path) return vpt_fail("--volume: the path is longer than %zu bytes", sizeof a->volume_path - 1);
        memcpy(a->volume_path, v, n);
        a->volume_path[n] = '\0';
        a->volume = a->volume_path;
    } else if (!strcmp(flag, "--scene-file")) {
        if (a->scene_file) return vpt_fail("--scene-file given twice ('%s' and '%s')", a->scene_file, v);
        a->scene_file = v;
    } else if (!strcmp(flag, "--like")) {
        a->like = v;
    } else if (!strcmp(flag, "--dims")) {
        if (parse_dims(v, a->load.dims)) return -1;
        a->load.has_dims = 1;
    } else if (!strcmp(flag, "--type")) {
        if (vpt_scalar_type_parse(v, &a->load.type)) {
            vpt_error_prefix("--type");
            return -1;
        }
        a->load.has_type = 1;
    } else if (!strcmp(flag, "--downsample")) {
        if (vpt_parse_int(v, 1, 1024, "--downsample", &a->downsample)) return -1;
    } else if (!strcmp(flag, "--upsample")) {
        if (vpt_parse_int(v, 1, 1024, "--upsample", &a->upsample)) return -1;
    } else if (!strcmp(flag, "--density-scale")) {
        if (a->medium.density_scale != 0) return vpt_fail("--density-scale given twice");
        if (vpt_parse_double(v, 0, 1e9, "--density-scale", &a->medium.density_scale)) return -1;
        if (!(a->medium.density_scale > 0)) return vpt_fail("--density-scale: %s is not positive", v);
    } else if (!strcmp(flag, "--albedo")) {
        if (a->medium.has_albedo) return vpt_fail("--albedo given twice");
        if (parse_triple("--albedo", v, 0, 1, 1, a->medium.albedo)) return -1;
        a->medium.has_albedo = 1;
    } else if (!strcmp(flag, "--g")) {
        if (a->medium.has_g) return vpt_fail("--g given twice");
        if (vpt_parse_double(v, -1, 1, "--g", &a->medium.g)) return -1;
        if (!(a->medium.g > -1 && a->medium.g < 1))
            return vpt_fail("--g: %s is not inside (-1, 1) (the Henyey-Greenstein asymmetry)", v);
        a->medium.has_g = 1;
    } else if (!strcmp(flag, "--sun")) {
        if (a->light.has_sun) return vpt_fail("--sun given twice");
        if (parse_triple("--sun", v, -LIGHT_MAX, LIGHT_MAX, 0, a->light.sun_dir)) return -1;
        float unit[3];
        if (vpt_sun_direction(a->light.sun_dir, "--sun: the direction", unit)) return -1;
        a->light.has_sun = 1;
    } else if (!strcmp(flag, "--sun-irradiance")) {
        if (a->sun_irradiance_given) return vpt_fail("--sun-irradiance given twice");
        if (parse_triple("--sun-irradiance", v, 0, LIGHT_MAX, 1, a->light.sun_irradiance)) return -1;
        a->sun_irradiance_given = 1;
    } else if (!strcmp(flag, "--sun-radius")) {
        if (a->sun_radius_given) return vpt_fail("--sun-radius given twice");
        if (vpt_parse_double(v, 0, 45, "--sun-radius", &a->light.sun_radius_deg)) return -1;
        if (a->light.sun_radius_deg == 0) a->light.sun_radius_deg = 0;
        a->sun_radius_given = 1;
    } else if (!strcmp(flag, "--env")) {
        if (a->light.has_env) return vpt_fail("--env given twice");
        if (parse_triple("--env", v, 0, LIGHT_MAX, 1, a->light.env)) return -1;
        a->light.has_env = 1;
    } else if (!strcmp(flag, "--env-map")) {
        if (a->light.env_map) return vpt_fail("--env-map given twice ('%s' and '%s')", a->light.env_map, v);
        a->light.env_map = v;
    } else if (!strcmp(flag, "--env-map-scale")) {
        if (a->light.env_map_scale != 0) return vpt_fail("--env-map-scale given twice");
        if (vpt_parse_double(v, 0, LIGHT_MAX, "--env-map-scale", &a->light.env_map_scale)) return -1;
        if (!(a->light.env_map_scale > 0)) return vpt_fail("--env-map-scale: %s is not positive", v);
    } else {
        if (parse_transfer(v, &a->transfer)) return -1;
    }
    return 1;
}

int vpt_scene_args_cloud_file(const char *path)
{
    const char *dot = strrchr(path, '.'), *slash = strrchr(path, '/');
    return dot && (!slash || dot > slash) && (!strcasecmp(dot, ".vdb") || !strcasecmp(dot, ".nvdb"));
}

int vpt_scene_args_given(const VptSceneArgs *a)
{
    return a->nscenes || a->volume || a->scene_file;
}

static int check_name(const char *flag, const char *name)
{
    if (vpt_scene_builtin_check(name) == 0) return 0;
    vpt_error_prefix("%s", flag);
    return -1;
}

int vpt_scene_args_check(const VptSceneArgs *a, int required, int multi_scene)
{
    if (!multi_scene && (a->nscenes > 0) + !!a->volume + !!a->scene_file > 1)
        return vpt_fail("--scene, --volume and --scene-file exclude each other (use --like with --volume)");
    if (!a->volume && a->volume_flag)
        return vpt_fail("%s applies to --volume only (it changes how a volume file becomes a scene)", a->volume_flag);
    if (!a->light.has_sun && (a->sun_irradiance_given || a->sun_radius_given))
        return vpt_fail("%s applies to the sun: give --sun X,Y,Z (the direction toward it) as well",
                        a->sun_irradiance_given ? "--sun-irradiance" : "--sun-radius");
    if (a->light.env_map_scale != 0 && !a->light.env_map)
        return vpt_fail("--env-map-scale applies to the environment map: give --env-map FILE as well");
    if (required && !vpt_scene_args_given(a))
        return vpt_fail("a scene is required: --scene NAME, --volume FILE or --scene-file FILE.xml");
    for (int i = 0; i < a->nscenes; i++)
        if (check_name("--scene", a->scenes[i])) return -1;
    if (a->like && check_name("--like", a->like)) return -1;
    return 0;
}

static VptScene *load(const VptSceneArgs *a, const char *name, VptMitsubaIntegrator *in)
{
    if (in) {
        in->max_depth = 0;
        in->rr_depth = -1;
    }
    if (name || (a->scene && !a->volume && !a->scene_file)) {
        const char *n = name ? name : a->scene;
        VptScene params;
        if (a->admit && vpt_scene_builtin_params(n, &params) == 0) {
            const int dims[3] = {params.nx, params.ny, params.nz};
            if (a->admit(a->admit_ctx, n, dims)) return NULL;
        }
        return vpt_scene_builtin(n);
    }
    if (a->scene_file) {
        VptMitsubaIntegrator tmp;
        return vpt_scene_from_mitsuba(a->scene_file, in ? in : &tmp);
    }
    if (!a->volume) {
        vpt_fail("no scene given");
        return NULL;
    }
    const VptVolumeSceneOptions vo = {.load = a->load,
                                      .downsample = a->downsample,
                                      .upsample = a->upsample,
                                      .transfer = a->transfer,
                                      .like = a->like,
                                      .admit = a->admit,
                                      .admit_ctx = a->admit_ctx};
    return vpt_scene_from_volume(a->volume, &vo);
}

/* bytes as "906 MB" or "3.62 GB" (decimal, as file managers show files). */
static const char *size_text(double bytes, char buf[32])
{
    if (bytes >= 1e9) snprintf(buf, 32, "%.2f GB", bytes / 1e9);
    else snprintf(buf, 32, "%.0f MB", bytes / 1e6);
    return buf;
}

VptScene *vpt_scene_args_load(const VptSceneArgs *a, const char *name, VptMitsubaIntegrator *in)
{
    /* a progress line while it takes long, on a terminal only */
    vpt_progress_enable(isatty(STDERR_FILENO) ? stderr : NULL);
    const double t0 = vpt_seconds();
    VptScene *s = load(a, name, in);
    const double dt = vpt_seconds() - t0;
    vpt_progress_enable(NULL);
    if (!s) return NULL;
    if (vpt_scene_set_medium(s, &a->medium)) {
        vpt_error_prefix("%s", s->name);
        vpt_scene_destroy(s);
        return NULL;
    }
    /* a cloud (a .vdb or .nvdb file) sits in no glass box: the null
     * boundary, whatever light it gets, so a delta sun reaches it; without
     * a light of the user's it gets one that shows it (a --like scene keeps
     * that scene's environment and boundary) */
    const int cloud = !name && !a->scene_file && a->volume && !a->like && vpt_scene_args_cloud_file(a->volume);
    const int lit = cloud && !a->light.has_sun && !a->light.has_env && !a->light.env_map;
    if (cloud) s->boundary = VPT_BOUNDARY_NULL;
    if (lit ? vpt_scene_light_cloud(s) : vpt_scene_set_light(s, &a->light)) {
        vpt_scene_destroy(s);
        return NULL;
    }
    s->volume.load_s = dt;
    /* a long load says what it was, terminal or not (a log keeps the time) */
    if (dt >= 1.0) {
        char data[32], scene[32];
        const double voxels = (double)s->nx * s->ny * s->nz;
        if (s->volume.sha256[0] || s->volume.data_sha256[0] || !strncmp(s->source, "loaded from", 11))
            fprintf(stderr, "loaded %s: %dx%dx%d %s, %s of voxel data, a %s scene, in %.1f s\n", s->name, s->nx,
                    s->ny, s->nz, s->volume.format, size_text((double)vpt_scene_volume_bytes(s), data),
                    size_text(4.0 * voxels + (double)vpt_scene_albedo_bytes(s), scene), dt);
        else
            fprintf(stderr, "built %s: %dx%dx%d, a %s scene, in %.1f s\n", s->name, s->nx, s->ny, s->nz,
                    size_text(4.0 * voxels + (double)vpt_scene_albedo_bytes(s), scene), dt);
    }
    return s;
}

int vpt_shell_word_append(char *buf, size_t n, const char *word)
{
    size_t len = strlen(buf);
    int plain = *word != '\0';
    for (const char *p = word; *p; p++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./,=:+@%", *p)) plain = 0;
    /* worst case: a space, two quotes, and 4 bytes per quote in the word */
    size_t need = len + 1 + strlen(word) * 4 + 3;
    if (need > n) return vpt_fail("a command line of more than %zu bytes", n);
    char *o = buf + len;
    if (len) *o++ = ' ';
    if (plain) {
        strcpy(o, word);
        return 0;
    }
    *o++ = '\'';
    for (const char *p = word; *p; p++) {
        if (*p == '\'') {
            memcpy(o, "'\\''", 4);
            o += 4;
        } else {
            *o++ = *p;
        }
    }
    *o++ = '\'';
    *o = '\0';
    return 0;
}

/* "--flag value", or "--flag=value" when the value starts with '-' (as a
 * separate word it would read as a forgotten value followed by an option). */
static int append_option(char *buf, size_t n, const char *flag, const char *value)
{
    if (value[0] != '-') return vpt_shell_word_append(buf, n, flag) || vpt_shell_word_append(buf, n, value) ? -1 : 0;
    size_t len = strlen(flag) + 1 + strlen(value) + 1;
    char *word = vpt_malloc(len);
    if (!word) return -1;
    snprintf(word, len, "%s=%s", flag, value);
    int rc = vpt_shell_word_append(buf, n, word);
    free(word);
    return rc;
}

int vpt_scene_args_format(const VptSceneArgs *a, char *buf, size_t n)
{
    if (!n) return vpt_fail("no room for the scene options");
    *buf = '\0';
    int rc = 0;
#define WORD(w) rc |= vpt_shell_word_append(buf, n, (w))
    for (int i = 0; i < a->nscenes; i++) rc |= append_option(buf, n, "--scene", a->scenes[i]);
    if (a->scene_file) rc |= append_option(buf, n, "--scene-file", a->scene_file);
    if (a->volume) {
        char num[64];
        rc |= append_option(buf, n, "--volume", a->volume);
        if (a->like) rc |= append_option(buf, n, "--like", a->like);
        if (a->load.has_dims) {
            snprintf(num, sizeof num, "%d,%d,%d", a->load.dims[0], a->load.dims[1], a->load.dims[2]);
            WORD("--dims");
            WORD(num);
        }
        if (a->load.has_type) {
            WORD("--type");
            WORD(vpt_scalar_type_name(a->load.type));
        }
        if (a->downsample != 1) {
            snprintf(num, sizeof num, "%d", a->downsample);
            WORD("--downsample");
            WORD(num);
        }
        if (a->upsample != 1) {
            snprintf(num, sizeof num, "%d", a->upsample);
            WORD("--upsample");
            WORD(num);
        }
        if (a->transfer != VPT_TF_AUTO) {
            WORD("--transfer");
            WORD(transfer_name(a->transfer));
        }
    }
    char num[3 * 32];
    if (a->medium.density_scale != 0) {
        vpt_format_double(a->medium.density_scale, num, sizeof num);
        rc |= append_option(buf, n, "--density-scale", num);
    }
    if (a->medium.has_albedo) {
        vpt_format_vec3_short(a->medium.albedo, num, sizeof num);
        rc |= append_option(buf, n, "--albedo", num);
    }
    if (a->medium.has_g) {
        vpt_format_double(a->medium.g, num, sizeof num);
        rc |= append_option(buf, n, "--g", num);
    }
    if (a->light.has_sun) {
        char x[32], y[32], z[32];
        vpt_format_double(a->light.sun_dir[0], x, sizeof x);
        vpt_format_double(a->light.sun_dir[1], y, sizeof y);
        vpt_format_double(a->light.sun_dir[2], z, sizeof z);
        snprintf(num, sizeof num, "%s,%s,%s", x, y, z);
        rc |= append_option(buf, n, "--sun", num);
        vpt_format_vec3_short(a->light.sun_irradiance, num, sizeof num);
        rc |= append_option(buf, n, "--sun-irradiance", num);
        if (a->light.sun_radius_deg != 0) {
            vpt_format_double(a->light.sun_radius_deg, num, sizeof num);
            rc |= append_option(buf, n, "--sun-radius", num);
        }
    }
    if (a->light.has_env) {
        vpt_format_vec3_short(a->light.env, num, sizeof num);
        rc |= append_option(buf, n, "--env", num);
    }
    if (a->light.env_map) {
        rc |= append_option(buf, n, "--env-map", a->light.env_map);
        if (a->light.env_map_scale != 0) {
            vpt_format_double(a->light.env_map_scale, num, sizeof num);
            rc |= append_option(buf, n, "--env-map-scale", num);
        }
    }
#undef WORD
    return rc ? -1 : 0;
}

void vpt_scene_args_only(const VptSceneArgs *a, int which, VptSceneArgs *out)
{
    *out = *a;
    out->nscenes = 0;
    out->scene = NULL;
    if (which != VPT_SCENE_ARGS_FILE) out->scene_file = NULL;
    if (which != VPT_SCENE_ARGS_VOLUME) out->volume = NULL;
    if (which >= 0) out->scenes[out->nscenes++] = out->scene = a->scenes[which];
}

int vpt_scene_args_print(FILE *fp, const VptScene *s)
{
    char hex[65];
    if (vpt_scene_digest(s, hex)) return -1;
    json_t *v = vpt_scene_volume_json(s);
    char *vtext = v ? json_dumps(v, JSON_COMPACT) : NULL;
    json_decref(v);
    if (!vtext) return vpt_fail("out of memory");
    fprintf(fp, "scene %s\nsha256 %s\nsource %s\ngrid %dx%dx%d\nvolume %s\nload_s %.3f\n", s->name, hex, s->source,
            s->nx, s->ny, s->nz, vtext, s->volume.load_s);
    free(vtext);
    if (s->volume.has_world) {
        const double *a = s->volume.world_min, *b = s->volume.world_max;
        fprintf(fp, "world_box %.9g,%.9g,%.9g %.9g,%.9g,%.9g\nbox %.9g,%.9g,%.9g %.9g,%.9g,%.9g\n", a[0], a[1], a[2],
                b[0], b[1], b[2], s->box_min[0], s->box_min[1], s->box_min[2], s->box_max[0], s->box_max[1],
                s->box_max[2]);
    }
    return 0;
}

void vpt_scene_args_usage(FILE *fp)
{
    fputs("Scene (the same options in render, bench and tune):\n"
          "  --scene NAME        a built-in scene (list below)\n"
          "  --volume FILE|DIR   a volume: .vol .mha .mhd .nrrd .nhdr .dcm .nvdb .vdb, a folder\n"
          "                      of one DICOM series, or headerless .raw with --dims and --type\n"
          "    --like SCENE      camera, boundary and density scale of a built-in scene\n"
          "    --dims X,Y,Z      dimensions of a .raw file\n"
          "    --type T          voxel type of a .raw file: u8 i8 u16 i16 u32 i32 f32 f64\n"
          "    --downsample N    N x N x N box average; 1: none (default)\n"
          "    --upsample N      N-fold finer grid; 1: none (default)\n"
          "    --transfer TF     ct | linear | identity | auto (default auto)\n"
          "  --scene-file FILE   a Mitsuba scene file (Mitsuba 3, or 0.5 as the thesis' scenes)\n"
          "  The medium of any of them (each appended to the scene's name, e.g. smoke@g0.877):\n"
          "  --density-scale S   sigma_t per unit of density (default the scene's)\n"
          "  --albedo A|R,G,B    a constant albedo in [0, 1] in place of the scene's (8 bits a channel)\n"
          "  --g G               Henyey-Greenstein asymmetry in (-1, 1) (default the scene's)\n"
          "  The light of any of them (appended to the name too, e.g. smoke@sun0,1,0@irr3@env0.1):\n"
          "  --sun X,Y,Z         a distant light toward X,Y,Z (world space, any length)\n"
          "    --sun-irradiance E|R,G,B  its irradiance, >= 0 (default 3)\n"
          "    --sun-radius DEG  its angular radius in [0, 45]; 0, a delta light (default), needs\n"
          "                      a scene with the null boundary\n"
          "  --env E|R,G,B       constant environment radiance, >= 0 (default the scene's)\n"
          "  --env-map FILE      an equirectangular environment map (.pfm or .exr), added\n"
          "                      to --env; Mitsuba 3's envmap convention (docs/lights.md)\n"
          "    --env-map-scale S its texels' factor, > 0 (default 1)\n"
          "  A .vdb or .nvdb volume without --like has the null boundary (a cloud); without\n"
          "  --sun or --env too, it is lit as a cloud: --sun 0.3,1,0.2 in the camera's frame,\n"
          "  --env 0.05,0.08,0.15\n"
          "  --print-scene       print the scene's name, SHA-256 digest and source; exit\n",
          fp);
}
