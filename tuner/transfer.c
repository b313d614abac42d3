/* The transfer prior (contract in tuner/transfer.h). */
#include "tuner/transfer.h"

#include "base/error.h"
#include "tuner/best.h"

#include <glob.h>
#include <stdio.h>
#include <string.h>

size_t vpt_transfer_starts(const char *results, const char *gpu_name, const char *scene, VptConfig *out,
                           size_t max, char *names, size_t names_size)
{
    if (names && names_size) names[0] = '\0';
    char pattern[2048];
    if (vpt_best_path(results, gpu_name, "*", pattern, sizeof pattern)) {
        vpt_error_clear();
        return 0;
    }
    glob_t g;
    size_t n = 0;
    if (glob(pattern, 0, NULL, &g) != 0) return 0; /* GLOB_NOMATCH: no tune saved yet */
    for (size_t i = 0; i < g.gl_pathc && n < max; i++) {
        const char *base = strrchr(g.gl_pathv[i], '/');
        base = base ? base + 1 : g.gl_pathv[i];
        size_t len = strlen(base) - strlen(".json");
        if (strlen(scene) == len && strncmp(base, scene, len) == 0) continue; /* its own */
        if (vpt_best_load(g.gl_pathv[i], &out[n])) {
            vpt_error_clear();
            continue;
        }
        int dup = 0;
        for (size_t j = 0; j < n && !dup; j++) dup = vpt_config_equal(&out[j], &out[n]);
        if (dup) continue;
        n++;
        if (names && names_size) {
            size_t used = strlen(names);
            snprintf(names + used, names_size - used, "%s%.*s", used ? ", " : "", (int)len, base);
        }
    }
    globfree(&g);
    return n;
}
