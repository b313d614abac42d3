/* --config best: see cli/config_best.h. */
#include "cli/config_best.h"

#include "base/error.h"
#include "tuner/best.h"

#include <string.h>
#include <unistd.h>

int vpt_config_is_best(const char *text)
{
    return text && strcmp(text, "best") == 0;
}

int vpt_config_best_load(const VptSceneArgs *a, const char *gpu_name, const VptScene *s, VptConfig *out, char *path,
                         size_t n)
{
    if (vpt_best_path("results", gpu_name, s->name, path, n)) return -1;
    if (access(path, F_OK) != 0) {
        char words[2048] = "";
        vpt_scene_args_format(a, words, sizeof words);
        return vpt_fail("--config best: no tuned configuration at '%s': run 'tune %s' on this GPU first", path, words);
    }
    return vpt_best_load(path, out);
}
