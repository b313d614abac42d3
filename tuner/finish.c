/* The finish's prediction (contract in tuner/finish.h). */
#include "tuner/finish.h"

#include "base/error.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int have;
    VptEvalRecord rec;
    int distance; /* config fields apart; 0 for its own record */
} Nearest;

struct VptFinishTracker {
    VptFinishPlan plan;
    VptEvalRecord *top; /* the plan's top_k best, in vpt_eval_record_rank_cmp order */
    size_t n_top;
    double overhead_min; /* +inf until an ok record with reps and a time */
    double renders_sum;  /* their renders, summed, and how many */
    size_t renders_n;
    Nearest ref[VPT_FINISH_MAX_REFS];
    /* compile_s > 0 of the records, summed per schedule (the last slot: no
     * schedule) and over all, for a reference the evaluator must compile */
    double compile_sum[VPT_SCHEDULE_COUNT + 1], compile_all;
    size_t compile_n[VPT_SCHEDULE_COUNT + 1], compile_all_n;
};

VptFinishTracker *vpt_finish_tracker_create(const VptFinishPlan *plan)
{
    VptFinishTracker *t = vpt_calloc(1, sizeof *t);
    if (!t) return NULL;
    t->plan = *plan;
    if (t->plan.n_refs > VPT_FINISH_MAX_REFS) t->plan.n_refs = VPT_FINISH_MAX_REFS;
    t->top = vpt_malloc((t->plan.top_k ? t->plan.top_k : 1) * sizeof *t->top);
    if (!t->top) {
        free(t);
        return NULL;
    }
    t->overhead_min = INFINITY;
    return t;
}

void vpt_finish_tracker_destroy(VptFinishTracker *t)
{
    if (!t) return;
    free(t->top);
    free(t);
}

static int has_renders(const VptEvalRecord *r)
{
    return isfinite(r->reps) && r->reps > 0 && isfinite(r->time_ms) && r->time_ms > 0;
}

static double renders_s(const VptEvalRecord *r)
{
    return (r->reps + 1) * r->time_ms * 1e-3;
}

double vpt_finish_repetition_s(const VptEvalRecord *r, double overhead_s)
{
    if (has_renders(r)) return renders_s(r) + overhead_s;
    if (isfinite(r->measure_s) && r->measure_s > 0) return r->measure_s;
    return isfinite(r->cost_s) && r->cost_s > 0 ? r->cost_s : 0;
}

/* How many fields of the two configs differ. */
static int distance(const VptConfig *a, const VptConfig *b)
{
    const int diff[] = {
        a->regen != b->regen,       a->reorder != b->reorder,     a->kernels != b->kernels,
        a->maxrregcount != b->maxrregcount, a->ppt != b->ppt,     a->block != b->block,
        a->grid != b->grid,         a->threshold != b->threshold, a->sortkey != b->sortkey,
        a->lookahead != b->lookahead, a->coop != b->coop,         a->flights != b->flights,
        a->paths != b->paths,       a->majorant != b->majorant,   a->density != b->density,
        a->sparse != b->sparse,     a->transmittance != b->transmittance,
    };
    int n = 0;
    for (size_t i = 0; i < sizeof diff / sizeof diff[0]; i++) n += diff[i];
    return n;
}

static int schedule_slot(const VptConfig *c)
{
    const int s = vpt_config_schedule_index(c);
    return s < 0 ? VPT_SCHEDULE_COUNT : s;
}

/* r into the finalists when it ranks among the top_k (as best_ok in
 * tuner/tune.c ranks: ok full fidelity, a finite objective, one record per
 * config: r takes its config's place when it ranks better, else nothing). */
static void add_finalist(VptFinishTracker *t, const VptEvalRecord *r)
{
    const size_t k = t->plan.top_k;
    if (k == 0 || r->fidelity != 1 || !isfinite(vpt_eval_objective(r))) return;
    size_t i = t->n_top;
    for (size_t j = 0; j < t->n_top; j++)
        if (vpt_config_equal(&t->top[j].config, &r->config)) {
            if (vpt_eval_record_rank_cmp(r, &t->top[j]) >= 0) return;
            i = j;
            break;
        }
    if (i == t->n_top) {
        if (t->n_top == k && vpt_eval_record_rank_cmp(r, &t->top[k - 1]) >= 0) return;
        i = t->n_top < k ? t->n_top++ : k - 1;
    }
    while (i > 0 && vpt_eval_record_rank_cmp(r, &t->top[i - 1]) < 0) {
        t->top[i] = t->top[i - 1];
        i--;
    }
    t->top[i] = *r;
}

void vpt_finish_tracker_add(VptFinishTracker *t, const VptEvalRecord *r)
{
    add_finalist(t, r);
    if (isfinite(r->compile_s) && r->compile_s > 0) {
        const int s = schedule_slot(&r->config);
        t->compile_sum[s] += r->compile_s;
        t->compile_n[s]++;
        t->compile_all += r->compile_s;
        t->compile_all_n++;
    }
    if (r->fidelity != 1 || r->status != VPT_STATUS_OK || !has_renders(r)) return;
    t->renders_sum += renders_s(r);
    t->renders_n++;
    if (isfinite(r->measure_s)) {
        const double o = r->measure_s - renders_s(r);
        if (o < t->overhead_min) t->overhead_min = o;
    }
    for (size_t i = 0; i < t->plan.n_refs; i++) {
        Nearest *n = &t->ref[i];
        const int d = distance(&r->config, &t->plan.refs[i]);
        /* on a tie the costlier: its renders at any overhead */
        if (!n->have || d < n->distance || (d == n->distance && renders_s(r) > renders_s(&n->rec))) {
            n->have = 1;
            n->rec = *r;
            n->distance = d;
        }
    }
}

/* The compile a reference not measured by the tune waits for (finish.h). */
static double compile_estimate(const VptFinishTracker *t, const VptConfig *c)
{
    const int s = schedule_slot(c);
    if (t->compile_n[s]) return t->compile_sum[s] / (double)t->compile_n[s];
    return t->compile_all_n ? t->compile_all / (double)t->compile_all_n : 0;
}

double vpt_finish_tracker_predict(const VptFinishTracker *t, VptFinishPrediction *out)
{
    VptFinishPrediction p;
    memset(&p, 0, sizeof p);
    p.overhead_s = isfinite(t->overhead_min) && t->overhead_min > 0 ? t->overhead_min : 0;
    for (size_t i = 0; t->n_top > 0 && i < t->plan.n_refs; i++) {
        const Nearest *n = &t->ref[i];
        if (!n->have) continue; /* a finalist is an ok record: unreachable */
        p.n_refs++;
        p.refs_s += vpt_finish_repetition_s(&n->rec, p.overhead_s);
        if (n->distance > 0) {
            p.refs_estimated++;
            if (!t->plan.ref_compiled[i]) p.refs_s += compile_estimate(t, &t->plan.refs[i]);
        }
    }
    /* the finalists, best first, while they fit the plan's max_s beside the
     * references (the best one always) */
    p.n_finalists = t->n_top;
    if (t->plan.rounds > 0)
        for (size_t i = 0; i < t->n_top; i++) {
            const double f = t->plan.rounds * vpt_finish_repetition_s(&t->top[i], p.overhead_s);
            if (i > 0 && t->plan.max_s > 0 && p.refs_s + p.finalists_s + f > t->plan.max_s) {
                p.n_finalists = i;
                p.capped = 1;
                break;
            }
            p.finalists_s += f;
        }
    p.total_s = p.finalists_s + p.refs_s;
    if (t->plan.rounds > 0 && p.n_finalists == t->n_top && t->n_top < t->plan.top_k && t->renders_n > 0)
        p.next_s = t->plan.rounds * (t->renders_sum / (double)t->renders_n + p.overhead_s);
    if (t->plan.max_s > 0 && p.total_s + p.next_s > t->plan.max_s) /* no finalist past max_s joins */
        p.next_s = t->plan.max_s > p.total_s ? t->plan.max_s - p.total_s : 0;
    if (out) *out = p;
    return p.total_s;
}

double vpt_finish_predict(const VptFinishPlan *plan, const VptEvalRecord *recs, size_t n, VptFinishPrediction *out)
{
    VptFinishTracker *t = vpt_finish_tracker_create(plan);
    if (!t) {
        if (out) memset(out, 0, sizeof *out);
        return 0;
    }
    for (size_t i = 0; i < n; i++) vpt_finish_tracker_add(t, &recs[i]);
    const double s = vpt_finish_tracker_predict(t, out);
    vpt_finish_tracker_destroy(t);
    return s;
}
