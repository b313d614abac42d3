/* JSON rows of the results cache and of recorded runs. */
#include "tuner/rows.h"

#include "base/error.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define METRIC(r, i) (*(double *)((char *)(r) + vpt_metric_fields[i].offset))

/* json_object_set_new that reports failure (only out-of-memory). */
static int put(json_t *o, const char *key, json_t *v)
{
    if (!v || json_object_set_new(o, key, v) != 0) return -1;
    return 0;
}

/* Objects are attached to their parent as soon as they exist, so that on
 * any failure one json_decref of the root frees everything (put() steals
 * the value's reference even when it fails). */
json_t *vpt_rows_record_json(const VptEvalRecord *r)
{
    char cfg[VPT_CONFIG_STR_MAX];
    vpt_config_format(&r->config, cfg, sizeof cfg);
    json_t *o = json_object();
    if (!o) goto fail;
    if (put(o, "kind", json_string("eval")) || put(o, "config", json_string(cfg)) ||
        put(o, "schedule", json_string(vpt_config_schedule_name(&r->config))) ||
        put(o, "fidelity", json_integer(r->fidelity)) || put(o, "status", json_string(vpt_status_name(r->status))) ||
        put(o, "reason", json_string(r->reason)) ||
        put(o, "cost_s", json_real(isfinite(r->cost_s) ? r->cost_s : 0)) || put(o, "metrics", json_object()))
        goto fail;
    json_t *m = json_object_get(o, "metrics");
    for (int i = 0; i < vpt_metric_field_count; i++) {
        double v = METRIC(r, i);
        if (isfinite(v) && put(m, vpt_metric_fields[i].name, json_real(v))) goto fail;
    }
    if (r->by_gpu[0]) { /* a tune on several GPUs: who measured it */
        if (put(o, "measured_by", json_object())) goto fail;
        json_t *by = json_object_get(o, "measured_by");
        if (put(by, "gpu", json_string(r->by_gpu)) || put(by, "host", json_string(r->by_host)) ||
            (r->by_rank >= 0 && put(by, "rank", json_integer(r->by_rank))))
            goto fail;
    }
    if (put(o, "time", json_string(r->time))) goto fail;
    return o;
fail:
    json_decref(o);
    vpt_fail("out of memory building a cache row");
    return NULL;
}

json_t *vpt_rows_header_json(const VptTuneProvenance *p)
{
    json_t *o = json_object();
    if (!o || put(o, "kind", json_string("header")) || put(o, "schema", json_string(VPT_TUNE_SCHEMA)) ||
        put(o, "gpu", json_object()))
        goto fail;
    json_t *gpu = json_object_get(o, "gpu");
    if (put(gpu, "name", json_string(p->gpu_name)) || put(gpu, "uuid", json_string(p->gpu_uuid)) ||
        put(o, "driver", json_string(p->driver)) || put(o, "nvrtc", json_string(p->nvrtc)) ||
        put(o, "commit", json_string(p->commit)) || put(o, "scene", json_string(p->scene)) ||
        put(o, "workload", json_object()))
        goto fail;
    json_t *w = json_object_get(o, "workload");
    if (put(w, "width", json_integer(p->width)) || put(w, "height", json_integer(p->height)) ||
        put(w, "spp", json_integer(p->spp)) || put(w, "seed", json_integer((json_int_t)p->seed)) ||
        put(w, "max_depth", json_integer(p->max_depth)) || put(w, "rr_depth", json_integer(p->rr_depth)))
        goto fail;
    if (p->volume[0]) {
        json_t *v = json_loads(p->volume, 0, NULL);
        if (!v || put(o, "volume", v)) goto fail;
    }
    return o;
fail:
    json_decref(o);
    vpt_fail("out of memory building the cache header");
    return NULL;
}

char *vpt_rows_dump_line(json_t *row)
{
    /* 17 significant digits: doubles survive the round trip bit for bit,
     * which a resumed tune needs to retrace its path exactly. */
    char *s = json_dumps(row, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17));
    if (!s) {
        vpt_fail("out of memory writing JSON");
        return NULL;
    }
    size_t n = strlen(s);
    char *line = realloc(s, n + 2);
    if (!line) {
        free(s);
        vpt_fail("out of memory writing JSON");
        return NULL;
    }
    line[n] = '\n';
    line[n + 1] = '\0';
    return line;
}

static int get_string(json_t *o, const char *key, int required, char *out, size_t size)
{
    json_t *v = json_object_get(o, key);
    if (!v) {
        if (required) return vpt_fail("missing \"%s\"", key);
        out[0] = '\0';
        return 0;
    }
    if (!json_is_string(v)) return vpt_fail("\"%s\" is not a string", key);
    const char *s = json_string_value(v);
    if (strlen(s) >= size) return vpt_fail("\"%s\" is too long (%zu bytes, at most %zu)", key, strlen(s), size - 1);
    strcpy(out, s);
    return 0;
}

static int get_int(json_t *o, const char *key, long long lo, long long hi, long long *out)
{
    json_t *v = json_object_get(o, key);
    if (!v) return vpt_fail("missing \"%s\"", key);
    if (!json_is_integer(v)) return vpt_fail("\"%s\" is not an integer", key);
    long long x = json_integer_value(v);
    if (x < lo || x > hi) return vpt_fail("\"%s\" = %lld is out of range [%lld, %lld]", key, x, lo, hi);
    *out = x;
    return 0;
}

int vpt_rows_record_parse(json_t *row, int with_cost, VptEvalRecord *r)
{
    if (!json_is_object(row)) return vpt_fail("not a JSON object");
    char cfg_text[1024], status[32];
    if (get_string(row, "config", 1, cfg_text, sizeof cfg_text)) return -1;
    VptConfig c;
    if (vpt_config_parse(cfg_text, &c)) {
        vpt_error_prefix("\"config\"");
        return -1;
    }
    long long fid = 1;
    if (json_object_get(row, "fidelity") && get_int(row, "fidelity", 0, 1, &fid)) return -1;
    vpt_eval_record_init(r, &c, (int)fid);
    if (get_string(row, "status", 1, status, sizeof status)) return -1;
    if (vpt_status_parse(status, &r->status)) {
        vpt_error_prefix("\"status\"");
        return -1;
    }
    if (get_string(row, "reason", 0, r->reason, sizeof r->reason)) return -1;
    if (get_string(row, "time", 0, r->time, sizeof r->time)) return -1;
    json_t *by = json_object_get(row, "measured_by");
    if (by) {
        long long rank = -1;
        if (!json_is_object(by)) return vpt_fail("\"measured_by\" is not an object");
        if (get_string(by, "gpu", 1, r->by_gpu, sizeof r->by_gpu) ||
            get_string(by, "host", 1, r->by_host, sizeof r->by_host) ||
            (json_object_get(by, "rank") && get_int(by, "rank", 0, INT32_MAX, &rank))) {
            vpt_error_prefix("measured_by");
            return -1;
        }
        if (!r->by_gpu[0]) return vpt_fail("measured_by: \"gpu\" is empty");
        r->by_rank = (int)rank;
    }
    json_t *m = json_object_get(row, "metrics");
    if (m && !json_is_object(m)) return vpt_fail("\"metrics\" is not an object");
    for (int i = 0; m && i < vpt_metric_field_count; i++) {
        json_t *v = json_object_get(m, vpt_metric_fields[i].name);
        if (!v || json_is_null(v)) continue;
        if (!json_is_number(v)) return vpt_fail("\"metrics.%s\" is not a number", vpt_metric_fields[i].name);
        METRIC(r, i) = json_number_value(v);
    }
    if (r->status == VPT_STATUS_OK && !(isfinite(r->time_ms) && r->time_ms > 0))
        return vpt_fail("status ok without a positive \"metrics.time_ms\"");
    if (with_cost) {
        json_t *v = json_object_get(row, "cost_s");
        if (!v) return vpt_fail("missing \"cost_s\"");
        if (!json_is_number(v)) return vpt_fail("\"cost_s\" is not a number");
        r->cost_s = json_number_value(v);
    } else {
        r->cost_s = (isfinite(r->compile_s) ? r->compile_s : 0) + (isfinite(r->measure_s) ? r->measure_s : 0);
    }
    if (!isfinite(r->cost_s) || r->cost_s < 0) return vpt_fail("cost %g s is not a finite non-negative number", r->cost_s);
    return 0;
}

int vpt_rows_provenance_parse(json_t *row, VptTuneProvenance *p)
{
    memset(p, 0, sizeof *p);
    json_t *gpu = json_object_get(row, "gpu");
    if (!json_is_object(gpu)) return vpt_fail("missing \"gpu\" object");
    if (get_string(gpu, "name", 0, p->gpu_name, sizeof p->gpu_name) ||
        get_string(gpu, "uuid", 1, p->gpu_uuid, sizeof p->gpu_uuid)) {
        vpt_error_prefix("gpu");
        return -1;
    }
    if (json_object_get(row, "driver")) {
        if (get_string(row, "driver", 1, p->driver, sizeof p->driver)) return -1;
    } else if (get_string(gpu, "driver", 0, p->driver, sizeof p->driver)) {
        vpt_error_prefix("gpu");
        return -1;
    }
    if (get_string(row, "nvrtc", 1, p->nvrtc, sizeof p->nvrtc) ||
        get_string(row, "commit", 1, p->commit, sizeof p->commit) ||
        get_string(row, "scene", 1, p->scene, sizeof p->scene))
        return -1;
    json_t *w = json_object_get(row, "workload");
    if (!json_is_object(w)) return vpt_fail("missing \"workload\" object");
    long long width, height, spp, seed, max_depth = 0, rr_depth = -1;
    if (get_int(w, "width", 1, 1 << 20, &width) || get_int(w, "height", 1, 1 << 20, &height) ||
        get_int(w, "spp", 1, 1LL << 40, &spp) || get_int(w, "seed", 0, INT64_MAX, &seed) ||
        (json_object_get(w, "max_depth") && get_int(w, "max_depth", 0, 1 << 20, &max_depth)) ||
        (json_object_get(w, "rr_depth") && get_int(w, "rr_depth", -1, 1 << 20, &rr_depth))) {
        vpt_error_prefix("workload");
        return -1;
    }
    if (spp > INT32_MAX) return vpt_fail("workload: \"spp\" = %lld is too large", spp);
    p->width = (int)width;
    p->height = (int)height;
    p->spp = (int)spp;
    p->seed = (uint64_t)seed;
    p->max_depth = (int)max_depth;
    p->rr_depth = (int)rr_depth;
    /* the volume (rows from before it existed have none) */
    json_t *v = json_object_get(row, "volume");
    if (v) {
        if (!json_is_object(v)) return vpt_fail("\"volume\" is not an object");
        char *text = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS);
        if (!text) return vpt_fail("out of memory");
        size_t len = strlen(text);
        if (len < sizeof p->volume) memcpy(p->volume, text, len + 1);
        free(text);
        if (len >= sizeof p->volume)
            return vpt_fail("\"volume\" is too long (%zu bytes, at most %zu)", len, sizeof p->volume - 1);
    }
    return 0;
}

char *vpt_rows_record_line(const VptEvalRecord *r)
{
    json_t *row = vpt_rows_record_json(r);
    if (!row) return NULL;
    char *line = vpt_rows_dump_line(row);
    json_decref(row);
    return line;
}

static int same_double(double x, double y)
{
    return x == y || (isnan(x) && isnan(y));
}

int vpt_rows_same_measurement(const VptEvalRecord *a, const VptEvalRecord *b)
{
    if (a->status != b->status || strcmp(a->reason, b->reason) != 0 || !same_double(a->cost_s, b->cost_s)) return 0;
    for (int i = 0; i < vpt_metric_field_count; i++)
        if (!same_double(METRIC(a, i), METRIC(b, i))) return 0;
    return 1;
}

/* What tells two measurements apart, short: status, time and cost. */
static void measurement_text(const VptEvalRecord *r, char *buf, size_t size)
{
    snprintf(buf, size, "status %s, time_ms %.17g, cost_s %.17g", vpt_status_name(r->status), r->time_ms, r->cost_s);
}

int vpt_rows_conflict(const char *path, size_t line_a, const VptEvalRecord *a, size_t line_b, const VptEvalRecord *b)
{
    char cfg[VPT_CONFIG_STR_MAX], ta[160], tb[160];
    vpt_config_format(&a->config, cfg, sizeof cfg);
    measurement_text(a, ta, sizeof ta);
    measurement_text(b, tb, sizeof tb);
    return vpt_fail("%s:%zu and %s:%zu: two different measurements of config %s at fidelity %d (%s:%zu: %s; "
                    "%s:%zu: %s); one config has one row per fidelity (a row repeated identically, as a resumed "
                    "run may append it, is fine): keep the right one and delete the other",
                    path, line_a, path, line_b, cfg, a->fidelity, path, line_a, ta, path, line_b, tb);
}
