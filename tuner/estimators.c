/* The estimator stage (contract in tuner/estimators.h). */
#include "tuner/estimators.h"

#include "base/error.h"
#include "base/progress.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>


VptConfig vpt_estimator_apply(const VptConfig *c, const VptEstimator *e)
{
    VptConfig x = *c;
    x.majorant = e->majorant;
    x.density = e->density;
    x.sparse = e->sparse;
    return x;
}

static int parse_one(const char *item, VptEstimator *e)
{
    /* an optional third part: the volume's representation */
    char head[64];
    const char *last = strrchr(item, ':');
    e->sparse = 0;
    if (last && last != strchr(item, ':')) {
        if (strcmp(last + 1, "sparse") && strcmp(last + 1, "dense"))
            return vpt_fail("estimator '%s': volume '%s' is not dense or sparse", item, last + 1);
        e->sparse = !strcmp(last + 1, "sparse");
        size_t hn = (size_t)(last - item);
        if (hn >= sizeof head) return vpt_fail("estimator '%s': unknown majorant", item);
        memcpy(head, item, hn);
        head[hn] = '\0';
        item = head;
    }
    const char *colon = strchr(item, ':');
    if (!colon) return vpt_fail("estimator '%s': expected MAJORANT:DENSITY, e.g. grid8:u8", item);
    char m[32];
    size_t n = (size_t)(colon - item);
    if (n >= sizeof m) return vpt_fail("estimator '%s': unknown majorant", item);
    memcpy(m, item, n);
    m[n] = '\0';
    /* a cell of -1 is skip: found is the flag */
    int cell = 0, found = 0;
    const int *majorants;
    const int nm = vpt_majorant_cells(&majorants);
    for (int i = 0; i < nm && !found; i++)
        if (!strcmp(m, vpt_majorant_name(majorants[i]))) {
            cell = majorants[i];
            found = 1;
        }
    if (!found)
        return vpt_fail("estimator '%s': majorant '%s' is not global, grid4, grid8, ..., grid128 or skip", item, m);
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
        const int *majorants;
        const int nm = vpt_majorant_cells(&majorants);
        for (int i = 0; i < nm; i++)
            for (int f = 0; f < VPT_DENSITY_FORMAT_COUNT; f++) out[k++] = (VptEstimator){majorants[i], (VptDensityFormat)f, 0};
        return k;
    }
    if (!strcmp(text, "global")) {
        out[0] = (VptEstimator){0, VPT_DENSITY_F32, 0};
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
            if (vpt_estimator_equal(&out[j], &out[k]))
                return vpt_fail("estimator '%s' given twice", item);
        k++;
    }
    if (k == 0) return vpt_fail("empty estimator list (all, global, or MAJORANT:DENSITY,...)");
    return k;
}

/* Evaluates base with *e through the pool (the cache first) and appends
 * its record; updates the best objective and estimator. */
static int screen_one(const VptConfig *base, const VptEstimator *e, VptEvalPool *pool, VptEvalRecord *recs,
                      size_t *n_recs, double *seconds, double *best_obj, VptEstimator *best)
{
    const VptConfig c = vpt_estimator_apply(base, e);
    VptEvalRecord rec;
    if (vpt_eval_pool_get_charged(pool, &c, &rec, seconds)) return -1;
    recs[(*n_recs)++] = rec;
    const double obj = vpt_eval_objective(&rec);
    if (obj < *best_obj) {
        *best_obj = obj;
        *best = *e;
    }
    return 0;
}

static int same_majorant(const VptEstimator *a, const VptEstimator *b) { return a->majorant == b->majorant; }

static int same_texture(const VptEstimator *a, const VptEstimator *b)
{
    return a->density == b->density && a->sparse == b->sparse;
}

int vpt_estimator_equal(const VptEstimator *a, const VptEstimator *b)
{
    return same_majorant(a, b) && same_texture(a, b);
}

/* 1 when e is in list[0..n). */
static int listed(const VptEstimator *list, size_t n, const VptEstimator *e)
{
    for (size_t i = 0; i < n; i++)
        if (vpt_estimator_equal(&list[i], e)) return 1;
    return 0;
}

/* On several GPUs, the configs of est[i] for the i with pick[i] set are
 * announced together, so the lanes measure them side by side. */
static int announce(const VptConfig *base, const VptEstimator *est, size_t n, const unsigned char *pick,
                    VptEvalPool *pool)
{
    if (vpt_eval_pool_lanes(pool) <= 1) return 0;
    VptConfig *all = vpt_malloc((n ? n : 1) * sizeof *all);
    if (!all) return -1;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (pick[i]) all[k++] = vpt_estimator_apply(base, &est[i]);
    vpt_eval_pool_announce(pool, all, k, 1);
    free(all);
    return 0;
}

/* 1 when the next member does not fit the screening's budget
 * (vpt_estimators_screen): *seconds at `seconds`, of which `own` went to
 * the `done` members of this call; the next expected at their mean cost,
 * or at next_s before the first, and grow_s more for each done. */
static int spent(double seconds, double own, size_t done, double next_s, double grow_s, double max_seconds,
                 double wall_deadline)
{
    const double next = (done ? own / (double)done : next_s) + (double)done * grow_s;
    return (max_seconds > 0 && (seconds >= max_seconds || seconds + next > max_seconds)) ||
           (wall_deadline > 0 && vpt_seconds() + next >= wall_deadline);
}

/* The kind of a round's member next to the round's centre at: 0 another
 * texture with at's majorant, then on at's texture 1 a grid, 2 skip, 3 the
 * global majorant. */
static int round_kind(const VptEstimator *e, const VptEstimator *at)
{
    if (same_majorant(e, at)) return 0;
    return e->majorant > 0 ? 1 : e->majorant < 0 ? 2 : 3;
}

/* The order a round measures its picked members in, into order[0..picked):
 * the kinds in turn (round_kind), each kind's members in list order, so
 * that a screening the budget cuts short has tried every kind as far as it
 * got, instead of the list's last kind never. */
static void round_order(const VptEstimator *est, size_t n, const unsigned char *pick, const VptEstimator *at,
                        size_t *order)
{
    size_t next[4] = {0, 0, 0, 0}, k = 0;
    for (int more = 1; more;) {
        more = 0;
        for (int kind = 0; kind < 4; kind++) {
            size_t i = next[kind];
            while (i < n && !(pick[i] && round_kind(&est[i], at) == kind)) i++;
            if (i < n) {
                order[k++] = i;
                next[kind] = i + 1;
                more = 1;
            } else {
                next[kind] = n;
            }
        }
    }
}

int vpt_estimators_screen(const VptConfig *base, const VptEstimator *est, size_t n, VptEvalPool *pool,
                          VptEvalRecord **recs, size_t *n_recs, double *seconds, VptEstimator *best,
                          double max_seconds, double wall_deadline, double next_s, double grow_s)
{
    if (n > VPT_ESTIMATORS_MAX) return vpt_fail("more than %d estimators to screen", VPT_ESTIMATORS_MAX);
    VptEvalRecord *grown = realloc(*recs, (*n_recs + n + 1) * sizeof *grown);
    if (!grown) return vpt_fail("out of memory screening estimators");
    *recs = grown;
    const size_t n0 = *n_recs;
    const double s0 = *seconds;
    double best_obj = INFINITY;
    unsigned char done[VPT_ESTIMATORS_MAX] = {0}, pick[VPT_ESTIMATORS_MAX] = {0};
    if (n <= VPT_ESTIMATORS_SCREEN_ALL) {
        memset(pick, 1, n);
        if (announce(base, est, n, pick, pool)) return -1;
        for (size_t i = 0; i < n; i++) {
            if (spent(*seconds, *seconds - s0, *n_recs - n0, next_s, grow_s, max_seconds, wall_deadline)) break;
            if (screen_one(base, &est[i], pool, *recs, n_recs, seconds, &best_obj, best)) return -1;
        }
        return vpt_eval_pool_drain(pool);
    }
    /* Coordinate descent: from base's own estimator (or the list's first),
     * screen the members that share the current best's majorant or its
     * texture (format and volume), move to the fastest, and repeat until it
     * stays. */
    VptEstimator at = vpt_estimator_of(base);
    size_t order[VPT_ESTIMATORS_MAX];
    int in_list = 0;
    for (size_t i = 0; i < n; i++) in_list |= same_majorant(&est[i], &at) && same_texture(&est[i], &at);
    if (!in_list) at = est[0];
    for (;;) {
        size_t round = 0;
        for (size_t i = 0; i < n; i++) {
            pick[i] = !done[i] && (same_majorant(&est[i], &at) || same_texture(&est[i], &at));
            round += pick[i];
        }
        if (round == 0) break;
        if (announce(base, est, n, pick, pool)) return -1;
        round_order(est, n, pick, &at, order);
        for (size_t j = 0; j < round; j++) {
            const size_t i = order[j];
            if (spent(*seconds, *seconds - s0, *n_recs - n0, next_s, grow_s, max_seconds, wall_deadline))
                return vpt_eval_pool_drain(pool);
            done[i] = 1;
            if (screen_one(base, &est[i], pool, *recs, n_recs, seconds, &best_obj, best)) return -1;
        }
        if (!isfinite(best_obj) || (same_majorant(best, &at) && same_texture(best, &at))) break;
        at = *best;
    }
    return vpt_eval_pool_drain(pool);
}

static int cmp_objective(const void *a, const void *b)
{
    const double x = vpt_eval_objective(*(const VptEvalRecord *const *)a);
    const double y = vpt_eval_objective(*(const VptEvalRecord *const *)b);
    return x < y ? -1 : x > y;
}

size_t vpt_estimators_contenders(const VptEvalRecord *recs, size_t n, double margin, VptEstimator *out,
                                 double *cost_s)
{
    *cost_s = 0;
    const VptEvalRecord *ok[VPT_ESTIMATORS_MAX * 2];
    size_t m = 0;
    for (size_t i = 0; i < n && m < sizeof ok / sizeof *ok; i++)
        if (recs[i].fidelity == 1 && isfinite(vpt_eval_objective(&recs[i]))) ok[m++] = &recs[i];
    if (m == 0) return 0;
    qsort(ok, m, sizeof *ok, cmp_objective);
    const double limit = vpt_eval_objective(ok[0]) * margin;
    size_t k = 0;
    for (size_t i = 0; i < m && k < VPT_ESTIMATORS_MAX && vpt_eval_objective(ok[i]) <= limit; i++) {
        const VptEstimator e = vpt_estimator_of(&ok[i]->config);
        if (listed(out, k, &e)) continue;
        out[k++] = e;
        if (isfinite(ok[i]->cost_s) && ok[i]->cost_s > 0) *cost_s += ok[i]->cost_s;
    }
    return k;
}

size_t vpt_estimators_rivals(const VptEstimator *contenders, size_t n, size_t max, VptEstimator *out)
{
    size_t k = 0;
    for (size_t i = 0; i < n && k < max; i++) {
        int seen = 0;
        for (size_t j = 0; j < k; j++) seen |= same_majorant(&out[j], &contenders[i]);
        if (!seen) out[k++] = contenders[i];
    }
    return k;
}

size_t vpt_estimators_cell_neighbours(const VptEstimator *e, const VptEstimator *list, size_t n, VptEstimator *out)
{
    if (e->majorant <= 0) return 0;
    const int want[2] = {e->majorant / 2, e->majorant * 2};
    size_t k = 0;
    for (int w = 0; w < 2; w++)
        for (size_t i = 0; i < n; i++)
            if (list[i].majorant == want[w] && same_texture(&list[i], e)) {
                out[k++] = list[i];
                break;
            }
    return k;
}

size_t vpt_estimators_add_cell_neighbours(const VptEstimator *e, const VptEstimator *list, size_t n, VptEstimator *to,
                                          size_t n_to)
{
    VptEstimator nb[2];
    const size_t k = vpt_estimators_cell_neighbours(e, list, n, nb);
    for (size_t i = 0; i < k && n_to < VPT_ESTIMATORS_MAX; i++)
        if (!listed(to, n_to, &nb[i])) to[n_to++] = nb[i];
    return n_to;
}

VptEstimator vpt_estimator_of(const VptConfig *c)
{
    return (VptEstimator){c->majorant, c->density, c->sparse};
}
