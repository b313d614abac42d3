/* A test double of the GPU evaluator for the tuner's tests: a deterministic
 * time computed from the config by a simple formula, some configs failing
 * with a fixed status, and a call counter.
 *
 * It exercises the machinery that does not care what the numbers mean (the
 * results cache, resuming, budgets, validity of what strategies return, the
 * T4 export). It says nothing about how well a strategy does on the real
 * problem: strategy-quality claims are tested only against a recorded GPU
 * run (tests/fixtures/tuner, test_tuner_fixture.c). */
#ifndef VPT_TEST_TUNER_DOUBLE_H
#define VPT_TEST_TUNER_DOUBLE_H

#include "tests/harness/test.h"

#include "base/error.h"
#include "tuner/estimators.h"
#include "tuner/eval.h"
#include "tuner/tune.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct {
    long calls;      /* evaluator calls so far */
    long fail_after; /* > 0: the call after this many fails with -1 */
} TdCtx;

static inline unsigned td_hash(const VptConfig *c)
{
    char text[VPT_CONFIG_STR_MAX];
    vpt_config_format(c, text, sizeof text);
    unsigned h = 2166136261u;
    for (const char *p = text; *p; p++) h = (h ^ (unsigned char)*p) * 16777619u;
    return h;
}

static inline double td_time_ms(const VptConfig *c)
{
    static const double base[VPT_SCHEDULE_COUNT] = {3.0, 2.6, 1.3, 1.1, 1.6, 1.0, 1.5, 1.05, 0.95};
    int s = vpt_config_schedule_index(c);
    double t = base[s < 0 ? 0 : s];
    t *= 1 + 0.04 * fabs(log2(c->block / 256.0));
    t *= 1 + 0.05 * fabs(c->ppt - 2.0);
    t *= c->maxrregcount == 0 ? 1.0 : 1 + 0.3 * fabs(c->maxrregcount - 64.0) / 255.0;
    t *= 1 + 0.01 * c->grid;
    t *= 1 + 0.002 * c->threshold;
    t *= c->sortkey == VPT_SORTKEY_TERMINATION ? 0.97 : 1.0;
    t *= 1 + (td_hash(c) % 1000) * 1e-5; /* a little deterministic "noise" */
    return t;
}

static inline void td_fill(const VptConfig *c, int fidelity, VptEvalRecord *out)
{
    unsigned h = td_hash(c);
    /* a fixed completion time, so that runs are comparable byte for byte */
    snprintf(out->time, sizeof out->time, "2025-01-01T00:%02u:%02uZ", h / 60 % 60, h % 60);
    out->compile_s = 1.0 + (h % 7) * 0.1;
    if (c->maxrregcount == 0 && c->block == 1024) {
        out->status = VPT_STATUS_LAUNCH_LIMITS;
        snprintf(out->reason, sizeof out->reason, "72 registers x 1024 threads exceed the register file");
        out->registers = 72;
        out->cost_s = out->compile_s;
        return;
    }
    if (h % 53 == 0) {
        out->status = VPT_STATUS_COMPILE;
        snprintf(out->reason, sizeof out->reason, "nvrtc: error (test double)");
        out->cost_s = out->compile_s;
        return;
    }
    double f = fidelity ? 1.0 : 0.125;
    out->time_ms = td_time_ms(c) * f;
    out->time_ms_spread = out->time_ms * 0.01;
    out->reps = 15;
    out->mrays_per_s = 100.0 / out->time_ms;
    out->registers = c->maxrregcount ? c->maxrregcount : 64;
    out->measure_s = 0.2 * f + 15 * out->time_ms / 1000;
    out->cost_s = out->compile_s + out->measure_s;
}

/* A VptEvaluateFn over TdCtx. */
static inline int td_evaluate(void *ctx, const VptConfig *c, int fidelity, VptEvalRecord *out)
{
    TdCtx *t = ctx;
    if (t->fail_after > 0 && t->calls >= t->fail_after) return vpt_fail("test double: GPU lost");
    t->calls++;
    td_fill(c, fidelity, out);
    return 0;
}

static inline VptTuneProvenance td_provenance(void)
{
    VptTuneProvenance p;
    memset(&p, 0, sizeof p);
    snprintf(p.gpu_name, sizeof p.gpu_name, "Test Double GPU");
    snprintf(p.gpu_uuid, sizeof p.gpu_uuid, "GPU-00000000-test");
    snprintf(p.driver, sizeof p.driver, "580.00");
    snprintf(p.nvrtc, sizeof p.nvrtc, "13.0");
    snprintf(p.commit, sizeof p.commit, "abc123");
    snprintf(p.scene, sizeof p.scene, "manix");
    p.width = 64;
    p.height = 48;
    p.spp = 4;
    p.seed = 7;
    p.max_depth = 0;
    p.rr_depth = -1;
    return p;
}

/* A local-search tune of s on evaluate under a time budget, with the
 * estimators `list` parsed into est (NULL: none). */
static inline void td_local_tune(VptTuneOptions *o, VptSpace *s, VptEvaluateFn evaluate, TdCtx *ctx, double max_seconds,
                                 const char *list, VptEstimator *est)
{
    vpt_tune_options_init(o);
    o->space = s;
    o->evaluate = evaluate;
    o->evaluate_ctx = ctx;
    o->search.strategy = VPT_STRATEGY_LOCAL;
    o->search.max_seconds = max_seconds;
    if (!list) return;
    const int n = vpt_estimators_parse(list, est);
    if (n < 1) vpt_test_fail_at(__FILE__, __LINE__, "estimators %s: %s", list, vpt_errmsg());
    o->estimators = est;
    o->n_estimators = n > 0 ? (size_t)n : 0;
}

#endif
