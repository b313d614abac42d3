/* `--config best`, wherever a tool takes a config: the winner `tune` saved
 * for this scene on this GPU model (results/<gpu>/best/<scene>.json,
 * tuner/best.h). Resolved once the GPU is known. */
#ifndef VPT_CLI_CONFIG_BEST_H
#define VPT_CLI_CONFIG_BEST_H

#include "cli/scene_args.h"
#include "codegen/config.h"

#include <stddef.h>

/* 1 for the text "best". */
int vpt_config_is_best(const char *text);

/* Loads the best config of scene `s` on gpu_name into *out and its path into
 * path. When there is none, the message names the file and the tune command
 * that makes it for the scene a names (a command that works as printed):
 * a names that one scene only (see vpt_scene_args_only). */
int vpt_config_best_load(const VptSceneArgs *a, const char *gpu_name, const VptScene *s, VptConfig *out, char *path,
                         size_t n);

#endif
