/* The scene options every tool takes, parsed in one place.
 *
 *   --scene NAME            a built-in scene
 *   --volume FILE|DIR       a volume file (or a folder of one DICOM series)
 *     --like SCENE          camera, boundary and density scale of a built-in scene
 *     --dims X,Y,Z --type T a headerless .raw file's grid and voxel type
 *     --downsample N        N x N x N box average (N >= 1; 1: none)
 *     --upsample N          N-fold finer grid (N >= 1; 1: none)
 *     --transfer TF         ct | linear | identity | auto
 *   --scene-file FILE.xml   a Mitsuba scene file
 *   --density-scale S       sigma_t per unit density (any scene; default the scene's)
 *   --albedo A|R,G,B        a constant albedo in [0, 1] in place of the scene's
 *   --g G                   Henyey-Greenstein asymmetry in (-1, 1)
 *   --sun X,Y,Z             a distant light toward X,Y,Z (world space, normalized)
 *     --sun-irradiance E|R,G,B  its irradiance, >= 0 (default 3)
 *     --sun-radius DEG      its angular radius in [0, 45] (default 0: a delta light)
 *   --env E|R,G,B           constant environment radiance, >= 0
 *   --env-map FILE          an environment map (scenes/env_map.h), added to --env
 *     --env-map-scale S     its texels' factor, > 0 (default 1)
 *   --print-scene           print the scene's name and digest, and exit
 *
 * render, bench and tune call vpt_scene_args_take for each argument before
 * their own options, so the flags, their values, their messages and the
 * scene they build are the same in every tool: the same options name the
 * same scene (the same vpt_scene_digest), which tests/test_scene_args.c
 * checks for every tool. vpt_scene_args_format writes the options back as
 * shell words, so that a hint a tool prints ("render --cpu <these> -o
 * out.png") names the scene the user gave, --like and all. */
#ifndef VPT_CLI_SCENE_ARGS_H
#define VPT_CLI_SCENE_ARGS_H

#include "scenes/mitsuba/mitsuba_xml.h"
#include "scenes/scene.h"

#include <stddef.h>
#include <stdio.h>

typedef struct {
    const char *scene;       /* --scene (bench: the first; see scenes[]) */
    const char *scenes[16];  /* every --scene, in order (bench measures each) */
    int nscenes;
    const char *volume;      /* --volume (volume_path, without trailing slashes) */
    char volume_path[4096];
    const char *scene_file;  /* --scene-file */
    const char *like;        /* --like */
    VptVolumeLoadOptions load; /* --dims, --type */
    int downsample, upsample;  /* 1: none */
    VptTransfer transfer;
    VptMediumOverride medium; /* --density-scale, --albedo, --g (scenes/scene.h) */
    VptLightOverride light;   /* --sun, --sun-irradiance, --sun-radius, --env, --env-map,
                                 --env-map-scale (scenes/scene.h);
                                 sun_irradiance is 3 until --sun-irradiance sets it */
    int sun_irradiance_given, sun_radius_given; /* for "given twice" and "needs --sun" */
    const char *volume_flag; /* the first volume-only flag given, for messages */
    int print_scene;         /* --print-scene */
    /* Set by a tool, not by options: asked with a scene's grid before it is
     * built or its voxels are read (e.g. vpt_gpu_check_admit, the GPU memory
     * check of cli/gpu_check.h); non-zero refuses it. NULL: none. */
    int (*admit)(void *ctx, const char *name, const int dims[3]);
    void *admit_ctx;
} VptSceneArgs;

#define VPT_SCENE_ARGS_MAX_SCENES 16

void vpt_scene_args_init(VptSceneArgs *a);

/* Looks at argv[*i]. A scene option ("--flag value" or "--flag=value") is
 * stored, *i is moved past its value and 1 is returned; anything else
 * returns 0 and leaves *i alone; a scene option with a missing or bad value
 * returns -1 with a message naming the flag. A --scene given twice is an
 * error unless multi_scene (bench). */
int vpt_scene_args_take(VptSceneArgs *a, int argc, char **argv, int *i, int multi_scene);

/* After the whole command line: at most one of --scene, --volume and
 * --scene-file (bench: several --scene plus one of each), the volume-only
 * flags only with --volume, --sun-irradiance and --sun-radius only with
 * --sun, and a scene when `required`. -1 with a message. */
int vpt_scene_args_check(const VptSceneArgs *a, int required, int multi_scene);

/* 1 when path names a .vdb or .nvdb file (any case): a volume that
 * vpt_scene_args_load lights as a cloud (vpt_scene_light_cloud) when it comes
 * without --like, --sun and --env. */
int vpt_scene_args_cloud_file(const char *path);

/* 1 when some scene was named. */
int vpt_scene_args_given(const VptSceneArgs *a);

/* Builds the scene of --volume (and its flags) or --scene-file, or the
 * built-in scene `name` (NULL: a->scene), then applies the medium and the
 * light options (vpt_scene_set_medium, vpt_scene_set_light; a cloud file's
 * default light, vpt_scene_args_cloud_file). A scene file's integrator depths go
 * to *in when in is not NULL (set to 0 / -1 for the other kinds). NULL with a
 * message naming the file or name otherwise.
 * Long loads report themselves on stderr: a progress line while stderr is a
 * terminal (base/progress.h), and, terminal or not, one line when the load
 * took a second or more ("loaded big.mhd: 1024x1024x512 i16, 1.07 GB of
 * voxel data, a 4.29 GB scene, in 2.9 s"); shorter ones (every test's)
 * print nothing. The time is kept in s->volume.load_s. */
VptScene *vpt_scene_args_load(const VptSceneArgs *a, const char *name, VptMitsubaIntegrator *in);

/* The options as shell words ("--volume 'my head.mhd' --like manix
 * --downsample 2"), quoted where the shell needs it, so that pasting them
 * after a tool's name names the same scene. -1 when buf is too small. */
int vpt_scene_args_format(const VptSceneArgs *a, char *buf, size_t n);

/* Appends `word` to buf (of size n, holding a string), shell-quoted when
 * needed, with a space before it unless buf is empty. -1 if it does not fit. */
int vpt_shell_word_append(char *buf, size_t n, const char *word);

/* The options of one of a's scenes into *out: which >= 0 the built-in scene
 * scenes[which], VPT_SCENE_ARGS_VOLUME the volume (with its flags),
 * VPT_SCENE_ARGS_FILE the scene file. */
#define VPT_SCENE_ARGS_VOLUME (-1)
#define VPT_SCENE_ARGS_FILE (-2)
void vpt_scene_args_only(const VptSceneArgs *a, int which, VptSceneArgs *out);

/* --print-scene: for s, lines "scene NAME", "sha256 DIGEST" (of the scene,
 * vpt_scene_digest), "source SOURCE", "grid XxYxZ", "volume {...}" (the
 * "volume" of its result rows, with the file's own SHA-256) and "load_s S"
 * (the seconds vpt_scene_args_load took: the time to load, without
 * rendering, that a large volume's users want to know); then, for a volume
 * placed by its own world frame (VptSceneVolume.has_world), "world_box MIN
 * MAX" (the file's frame) and "box MIN MAX" (the scene's), each corner
 * X,Y,Z: the two boxes' corners map to each other. */
int vpt_scene_args_print(FILE *fp, const VptScene *s);

/* The usage lines of the scene options, for a tool's --help. */
void vpt_scene_args_usage(FILE *fp);

#endif
