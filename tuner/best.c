#include "tuner/best.h"

#include "base/error.h"
#include "base/file.h"
#include "harness/provenance.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int vpt_best_path(const char *results, const char *gpu_name, const char *scene, char *buf, size_t size)
{
    char dir[128];
    if (vpt_gpu_dirname(gpu_name, dir, sizeof dir)) return -1;
    int n = snprintf(buf, size, "%s/%s/best/%s.json", results ? results : "results", dir, scene);
    if (n < 0 || (size_t)n >= size) return vpt_fail("best-config path too long");
    return 0;
}

int vpt_best_save(const char *path, const VptTuneProvenance *prov, const VptEvalRecord *w, const char *strategy)
{
    char dir[4096], canon[VPT_CONFIG_STR_MAX];
    vpt_dirname(path, dir, sizeof dir);
    if (vpt_mkdirs(dir)) return -1;
    vpt_config_format(&w->config, canon, sizeof canon);
    json_t *o = json_pack("{s:s, s:s, s:s, s:{s:s, s:s, s:s}, s:s, s:s, s:{s:i, s:i, s:i, s:I}, s:s, s:f, s:f, s:f, s:f, s:f}",
                          "schema", "vptune.best/1", "scene", prov->scene, "config", canon, "gpu", "name",
                          prov->gpu_name, "uuid", prov->gpu_uuid, "driver", prov->driver, "nvrtc", prov->nvrtc,
                          "commit", prov->commit, "workload", "width", prov->width, "height", prov->height, "spp",
                          prov->spp, "seed", (json_int_t)prov->seed, "strategy", strategy, "time_ms", w->time_ms,
                          "mrays_per_s", w->mrays_per_s, "gsteps_per_s", w->gsteps_per_s, "occupancy_achieved",
                          w->occupancy_achieved, "simd_efficiency", w->simd_efficiency);
    if (!o) return vpt_fail("internal error: cannot build %s", path);
    char *text = json_dumps(o, JSON_INDENT(2) | JSON_SORT_KEYS);
    json_decref(o);
    if (!text) return vpt_fail("internal error: cannot serialize %s", path);
    size_t len = strlen(text);
    text[len] = '\n';
    int rc = vpt_write_file_atomic(path, text, len + 1);
    free(text);
    return rc;
}

int vpt_best_load(const char *path, VptConfig *out)
{
    if (access(path, F_OK) != 0)
        return vpt_fail("no tuned configuration at '%s': run 'tune --scene <scene>' on this GPU first", path);
    json_error_t err;
    json_t *o = json_load_file(path, 0, &err);
    if (!o) return vpt_fail("%s:%d: %s", path, err.line, err.text);
    const char *cfg = json_string_value(json_object_get(o, "config"));
    int rc = cfg ? vpt_config_parse(cfg, out) : vpt_fail("%s: no \"config\" string", path);
    if (rc && cfg) vpt_error_prefix("%s", path);
    json_decref(o);
    return rc;
}
