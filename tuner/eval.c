/* Evaluation records, statuses and provenance. */
#include "tuner/eval.h"

#include "base/error.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define F(name) {#name, offsetof(VptEvalRecord, name)}
const VptMetricField vpt_metric_fields[] = {
    F(time_ms),          F(time_ms_spread),  F(reps),         F(mrays_per_s),
    F(gsteps_per_s),     F(mpaths_per_s),    F(rays),         F(steps),
    F(paths),            F(registers),       F(spill_bytes),  F(shared_bytes),
    F(occupancy_theoretical), F(occupancy_achieved), F(simd_efficiency),
    F(compile_s),        F(measure_s),       F(image_rel_err),  F(equal_error_factor),
};
#undef F
const int vpt_metric_field_count = (int)(sizeof vpt_metric_fields / sizeof vpt_metric_fields[0]);

void vpt_eval_record_init(VptEvalRecord *r, const VptConfig *c, int fidelity)
{
    memset(r, 0, sizeof *r);
    r->config = *c;
    r->fidelity = fidelity;
    r->status = VPT_STATUS_OK;
    r->by_rank = -1;
    for (int i = 0; i < vpt_metric_field_count; i++)
        *(double *)((char *)r + vpt_metric_fields[i].offset) = NAN;
}

double vpt_eval_objective(const VptEvalRecord *r)
{
    if (r->status != VPT_STATUS_OK || !isfinite(r->time_ms) || r->time_ms <= 0) return INFINITY;
    if (isfinite(r->equal_error_factor) && r->equal_error_factor > 0) return r->time_ms * r->equal_error_factor;
    return r->time_ms;
}

int vpt_eval_record_rank_cmp(const void *a, const void *b)
{
    const VptEvalRecord *x = a, *y = b;
    const double ox = vpt_eval_objective(x), oy = vpt_eval_objective(y);
    if (ox != oy) return ox < oy ? -1 : 1;
    char tx[VPT_CONFIG_STR_MAX], ty[VPT_CONFIG_STR_MAX];
    vpt_config_format(&x->config, tx, sizeof tx);
    vpt_config_format(&y->config, ty, sizeof ty);
    return strcmp(tx, ty);
}

void vpt_timestamp_now(char *buf, size_t size)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* The identity of a "volume" object: what must match for rows to mix. */
static void volume_identity(const char *json, char *out, size_t n)
{
    json_t *v = json_loads(json, 0, NULL);
    json_t *d = v ? json_object_get(v, "dims") : NULL;
    snprintf(out, n, "dims %lld x %lld x %lld, format %s, sha256 %s, data_sha256 %s, resample %s",
             (long long)json_integer_value(json_array_get(d, 0)), (long long)json_integer_value(json_array_get(d, 1)),
             (long long)json_integer_value(json_array_get(d, 2)),
             json_string_value(json_object_get(v, "format")) ? json_string_value(json_object_get(v, "format")) : "-",
             json_string_value(json_object_get(v, "sha256")) ? json_string_value(json_object_get(v, "sha256")) : "-",
             json_string_value(json_object_get(v, "data_sha256")) ? json_string_value(json_object_get(v, "data_sha256"))
                                                                   : "-",
             json_string_value(json_object_get(v, "resample")) ? json_string_value(json_object_get(v, "resample")) : "-");
    json_decref(v);
}

int vpt_tune_provenance_match(const VptTuneProvenance *a, const VptTuneProvenance *b)
{
    struct { const char *field, *x, *y; } s[] = {
        {"gpu.uuid", a->gpu_uuid, b->gpu_uuid},
        {"commit", a->commit, b->commit},
        {"nvrtc", a->nvrtc, b->nvrtc},
        {"scene", a->scene, b->scene},
    };
    for (size_t i = 0; i < sizeof s / sizeof s[0]; i++)
        if (strcmp(s[i].x, s[i].y) != 0)
            return vpt_fail("%s: recorded '%s', this run '%s'", s[i].field, s[i].x, s[i].y);
    struct { const char *field; long long x, y; } n[] = {
        {"workload.width", a->width, b->width},
        {"workload.height", a->height, b->height},
        {"workload.spp", a->spp, b->spp},
        {"workload.seed", (long long)a->seed, (long long)b->seed},
        {"workload.max_depth", a->max_depth, b->max_depth},
        {"workload.rr_depth", a->rr_depth, b->rr_depth},
    };
    for (size_t i = 0; i < sizeof n / sizeof n[0]; i++)
        if (n[i].x != n[i].y) return vpt_fail("%s: recorded %lld, this run %lld", n[i].field, n[i].x, n[i].y);
    if (a->volume[0] && b->volume[0]) {
        char x[512], y[512];
        volume_identity(a->volume, x, sizeof x);
        volume_identity(b->volume, y, sizeof y);
        if (strcmp(x, y) != 0) return vpt_fail("volume: recorded '%s', this run '%s'", x, y);
    }
    return 0;
}

/* An evaluator's record made safe to cache and to rank: the config and
 * fidelity asked for, a finite cost, and no "ok" without a time. */
void vpt_eval_record_sanitize(VptEvalRecord *r, const VptConfig *c, int fidelity)
{
    r->config = *c;
    r->fidelity = fidelity;
    r->reason[VPT_REASON_MAX - 1] = '\0';
    r->time[VPT_TIMESTAMP_MAX - 1] = '\0';
    r->by_gpu[sizeof r->by_gpu - 1] = '\0';
    r->by_host[sizeof r->by_host - 1] = '\0';
    if ((int)r->status < 0 || r->status >= VPT_STATUS_COUNT) {
        r->status = VPT_STATUS_RUNTIME;
        snprintf(r->reason, sizeof r->reason, "evaluator returned an unknown status");
    }
    if (!isfinite(r->cost_s) || r->cost_s < 0) r->cost_s = 0;
    if (r->status == VPT_STATUS_OK && !(isfinite(r->time_ms) && r->time_ms > 0)) {
        r->status = VPT_STATUS_RUNTIME;
        snprintf(r->reason, sizeof r->reason, "evaluator reported ok without a time");
    }
    if (!r->time[0]) vpt_timestamp_now(r->time, sizeof r->time);
}

int vpt_eval_run(VptEvaluateFn fn, void *ctx, const VptConfig *c, int fidelity, VptEvalRecord *out)
{
    vpt_eval_record_init(out, c, fidelity);
    if (fn(ctx, c, fidelity, out) != 0) return -1;
    vpt_eval_record_sanitize(out, c, fidelity);
    return 0;
}
