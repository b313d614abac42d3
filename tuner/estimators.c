/* The estimator stage (contract in tuner/estimators.h). */
#include "tuner/estimators.h"

#include "base/error.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const int majorants[] = {0, 4, 8, 16, 32};

VptConfig vpt_estimator_apply(const VptConfig *c, const VptEstimator *e)
{
    VptConfig x = *c;
    x.majorant = e->majorant;
    x.density = e->density;
    return x;
}

static int parse_one(const char *item, VptEstimator *e)
{
    const char *colon = strchr(item, ':');
    if (!colon) return vpt_fail("estimator '%s': expected MAJORANT:DENSITY, e.g. grid8:u8", item);
    char m[32];
    size_t n = (size_t)(colon - item);
    if (n >= sizeof m) return vpt_fail("estimator '%s': unknown majorant", item);
    memcpy(m, item, n);
    m[n] = '\0';
    int cell = -1;
    for (size_t i = 0; i < sizeof majorants / sizeof majorants[0]; i++)
        if (!strcmp(m, vpt_majorant_name(majorants[i]))) cell = majorants[i];
    if (cell < 0) return vpt_fail("estimator '%s': majorant '%s' is not global, grid4, grid8, grid16 or grid32", item, m);
    if (vpt_density_format_parse(colon + 1, &e->density))
        return vpt_fail("estimator '%s': density '%s' is not f32, f16, u16 or u8", item, colon + 1);
    e->majorant = cell;
    return 0;
}

int vpt_estimators_parse(const char *text, VptEstimator *out)
{
    if (!text || !*text) return vpt_fail("empty estimator list (all, global, or MAJORANT:DENSITY,...)");
    if (!strcmp(text, "all")) {
        int k = 0;
        for (size_t i = 0; i < sizeof majorants / sizeof majorants[0]; i++)
            for (int f = 0; f < VPT_DENSITY_FORMAT_COUNT; f++) out[k++] = (VptEstimator){majorants[i], (VptDensityFormat)f};
        return k;
    }
    if (!strcmp(text, "global")) {
        out[0] = (VptEstimator){0, VPT_DENSITY_F32};
        return 1;
    }
    char buf[512];
    if (strlen(text) >= sizeof buf) return vpt_fail("estimator list too long");
    strcpy(buf, text);
    int k = 0;
    for (char *save = NULL, *item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        if (k == VPT_ESTIMATORS_MAX) return vpt_fail("more than %d estimators", VPT_ESTIMATORS_MAX);
        if (parse_one(item, &out[k])) return -1;
        for (int j = 0; j < k; j++)
            if (out[j].majorant == out[k].majorant && out[j].density == out[k].density)
                return vpt_fail("estimator '%s' given twice", item);
        k++;
    }
    if (k == 0) return vpt_fail("empty estimator list (all, global, or MAJORANT:DENSITY,...)");
    return k;
}

int vpt_estimators_screen(const VptConfig *base, const VptEstimator *est, size_t n, VptEvalPool *pool,
                          VptEvalRecord **recs, size_t *n_recs, double *seconds, VptEstimator *best)
{
    VptEvalRecord *grown = realloc(*recs, (*n_recs + n + 1) * sizeof *grown);
    if (!grown) return vpt_fail("out of memory screening estimators");
    *recs = grown;
    if (vpt_eval_pool_lanes(pool) > 1) { /* on several GPUs, side by side */
        VptConfig *all = vpt_malloc((n ? n : 1) * sizeof *all);
        if (!all) return -1;
        for (size_t i = 0; i < n; i++) all[i] = vpt_estimator_apply(base, &est[i]);
        vpt_eval_pool_announce(pool, all, n, 1);
        free(all);
    }
    double best_obj = INFINITY;
    for (size_t i = 0; i < n; i++) {
        const VptConfig c = vpt_estimator_apply(base, &est[i]);
        VptEvalRecord rec;
        int fresh;
        if (vpt_eval_pool_get(pool, &c, 1, SIZE_MAX, &rec, &fresh)) return -1;
        if (fresh && isfinite(rec.cost_s) && rec.cost_s > 0) *seconds += rec.cost_s / vpt_eval_pool_gpus(pool);
        (*recs)[(*n_recs)++] = rec;
        const double obj = vpt_eval_objective(&rec);
        if (obj < best_obj) {
            best_obj = obj;
            *best = est[i];
        }
    }
    return vpt_eval_pool_drain(pool);
}
