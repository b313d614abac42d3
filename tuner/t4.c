/* T4 results export (format in tuner/t4.h). */
#include "tuner/t4.h"

#include "base/error.h"
#include "base/file.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *vpt_t4_invalidity(VptStatus s)
{
    switch (s) {
    case VPT_STATUS_OK: return "correct";
    case VPT_STATUS_COMPILE: return "compile";
    case VPT_STATUS_LAUNCH_LIMITS: return "constraints";
    case VPT_STATUS_RUNTIME: return "runtime";
    case VPT_STATUS_INVALID_OUTPUT: return "correctness";
    case VPT_STATUS_TIMEOUT: return "timeout";
    default: return "runtime";
    }
}

/* Units of the metrics, by field name; "" for counts and ratios. */
static const char *metric_unit(const char *name)
{
    static const struct { const char *name, *unit; } units[] = {
        {"time_ms", "ms"},          {"time_ms_spread", "ms"},  {"mrays_per_s", "Mrays/s"},
        {"gsteps_per_s", "Gsteps/s"}, {"mpaths_per_s", "Mpaths/s"}, {"spill_bytes", "B"},
        {"shared_bytes", "B"},      {"compile_s", "s"},        {"measure_s", "s"},
    };
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (strcmp(units[i].name, name) == 0) return units[i].unit;
    return "";
}

static int put(json_t *o, const char *key, json_t *v)
{
    return !v || json_object_set_new(o, key, v) != 0 ? -1 : 0;
}

static int push(json_t *a, json_t *v)
{
    return !v || json_array_append_new(a, v) != 0 ? -1 : 0;
}

static json_t *measurement(const char *name, double value, const char *unit)
{
    json_t *m = json_object();
    if (!m || put(m, "name", json_string(name)) || put(m, "value", json_real(value)) ||
        put(m, "unit", json_string(unit))) {
        json_decref(m);
        return NULL;
    }
    return m;
}

static json_t *result_json(const VptEvalRecord *r)
{
    const VptConfig *c = &r->config;
    json_t *o = json_object();
    if (!o || put(o, "timestamp", json_string(r->time)) || put(o, "configuration", json_object()) ||
        put(o, "times", json_object()) || put(o, "invalidity", json_string(vpt_t4_invalidity(r->status))) ||
        put(o, "correctness", json_integer(r->status == VPT_STATUS_INVALID_OUTPUT ? 0 : 1)) ||
        put(o, "measurements", json_array()) || put(o, "objectives", json_array()))
        goto fail;
    json_t *cfg = json_object_get(o, "configuration");
    if (put(cfg, "regen", json_string(vpt_regen_name(c->regen))) ||
        put(cfg, "reorder", json_string(vpt_reorder_name(c->reorder))) ||
        put(cfg, "kernels", json_string(vpt_kernels_name(c->kernels))) ||
        put(cfg, "maxrregcount", json_integer(c->maxrregcount)) || put(cfg, "ppt", json_integer(c->ppt)) ||
        put(cfg, "block", json_integer(c->block)) || put(cfg, "grid", json_integer(c->grid)) ||
        put(cfg, "threshold", json_integer(c->threshold)) ||
        put(cfg, "sortkey", json_string(vpt_sortkey_name(c->sortkey))) ||
        put(cfg, "lookahead", json_integer(c->lookahead)) || put(cfg, "coop", json_integer(c->coop)) ||
        put(cfg, "flights", json_string(vpt_flights_name(c->flights))) ||
        put(cfg, "paths", json_string(vpt_paths_name(c->paths))) ||
        put(cfg, "majorant", json_string(vpt_majorant_name(c->majorant))) ||
        put(cfg, "density", json_string(vpt_density_name(c->density))) ||
        put(cfg, "volume", json_string(vpt_volume_name(c->sparse))) ||
        put(cfg, "transmittance", json_string(vpt_transmittance_name(c->transmittance))))
        goto fail;
    json_t *times = json_object_get(o, "times");
    if (isfinite(r->compile_s) && put(times, "compilation_time", json_real(r->compile_s * 1e3))) goto fail;
    if (isfinite(r->measure_s) && put(times, "benchmark", json_real(r->measure_s * 1e3))) goto fail;
    if (put(times, "runtimes", json_array())) goto fail;
    if (r->status == VPT_STATUS_OK && isfinite(r->time_ms) &&
        push(json_object_get(times, "runtimes"), json_real(r->time_ms)))
        goto fail;
    json_t *ms = json_object_get(o, "measurements");
    for (int i = 0; i < vpt_metric_field_count; i++) {
        const char *name = vpt_metric_fields[i].name;
        double v = *(const double *)((const char *)r + vpt_metric_fields[i].offset);
        if (!isfinite(v)) continue;
        /* the objective under its T4 name */
        if (push(ms, measurement(strcmp(name, "time_ms") == 0 ? "time" : name, v, metric_unit(name)))) goto fail;
    }
    if (push(ms, measurement("fidelity", r->fidelity, ""))) goto fail;
    if (push(json_object_get(o, "objectives"), json_string("time"))) goto fail;
    return o;
fail:
    json_decref(o);
    return NULL;
}

int vpt_t4_write(const char *path, const VptEvalRecord *recs, size_t n)
{
    json_t *root = json_object();
    if (!root || put(root, "schema_version", json_string("1.0.0")) || put(root, "results", json_array())) {
        json_decref(root);
        return vpt_fail("out of memory building the T4 export");
    }
    json_t *results = json_object_get(root, "results");
    for (size_t i = 0; i < n; i++)
        if (push(results, result_json(&recs[i]))) {
            json_decref(root);
            return vpt_fail("out of memory building the T4 export");
        }
    char *text = json_dumps(root, JSON_INDENT(1) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17));
    json_decref(root);
    if (!text) return vpt_fail("out of memory writing the T4 export");
    int rc = vpt_write_file_atomic(path, text, strlen(text));
    free(text);
    if (rc) vpt_error_prefix("T4 export");
    return rc;
}

int vpt_t4_write_cache(const char *path, const VptCache *cache)
{
    size_t n = vpt_cache_count(cache);
    VptEvalRecord *recs = vpt_malloc((n ? n : 1) * sizeof *recs);
    if (!recs) return -1;
    for (size_t i = 0; i < n; i++) recs[i] = *vpt_cache_record(cache, i);
    int rc = vpt_t4_write(path, recs, n);
    free(recs);
    return rc;
}
