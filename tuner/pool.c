/* The evaluation pool (contract in tuner/pool.h). */
#include "tuner/pool.h"

#include "base/error.h"
#include "tuner/rows.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* At most this many evaluations per lane in flight or finished-but-not-
 * taken: enough that a lane finds its next job ready when the search is
 * still waiting on a slower one, few enough that a stop wastes little. */
#define SPECULATION_PER_LANE 2

int vpt_eval_pool_ahead_per_lane(void) { return SPECULATION_PER_LANE; }
/* How long one wait for an event lasts before the remote ranks are served
 * again (heartbeats, tuner/mpi.h) or, without them, before waiting again. */
#define POLL_WITH_REMOTE_S 0.002
#define POLL_LOCAL_S 0.25

typedef enum { JOB_QUEUED, JOB_RUNNING, JOB_DONE } JobState;

typedef struct {
    uint64_t id;
    uint64_t key;       /* config key << 1 | fidelity */
    VptConfig config;
    int fidelity;
    JobState state;
    int lane;           /* QUEUED: the lane that compiles it ahead (-1 none); RUNNING: the lane running it */
    int urgent;         /* asked for by get() */
    int requeued;       /* lost once already */
    char lost_why[512]; /* why, the first time */
    VptEvalRecord rec;  /* DONE */
} Job;

typedef struct {
    VptLaneInfo info;
    int transport;      /* 0 local, 1 remote */
    int index;          /* in its transport */
    int group;          /* lanes on one physical GPU share a group */
    int alive, busy;
    uint64_t job;
    size_t evaluated;
} PoolLane;

struct VptEvalPool {
    VptCache *cache;
    /* direct */
    int direct;
    VptEvaluateFn fn;
    void *ctx;
    VptPrefetchFn prefetch;
    void *prefetch_user;
    VptRetraceFn retrace;
    void *retrace_user;
    /* lanes */
    VptLanes *local;
    VptTransport t[2];
    int nt;
    PoolLane *lane;
    int nlanes, alive, ngroups;
    int *group_busy;
    Job *jobs;
    size_t njobs, capjobs;
    uint64_t next_id;
    int rr;
    size_t running, done_untaken;
    int failed;
    int write_failed; /* the failure was the cache's: no record is handed out after it */
    char error[1024];
    /* a call on lane 0 */
    int call_done, call_rc;
    char call_why[768];
};

void vpt_lane_describe(const VptLaneInfo *l, char *buf, size_t size)
{
    if (l->rank >= 0)
        snprintf(buf, size, "rank %d on %s, GPU %d (%s)", l->rank, l->host[0] ? l->host : "?", l->device, l->gpu_uuid);
    else
        snprintf(buf, size, "GPU %d (%s)", l->device, l->gpu_uuid);
}

int vpt_lanes_check_identical(const VptLaneInfo *lanes, int n)
{
    for (int i = 1; i < n; i++) {
        const VptLaneInfo *a = &lanes[0], *b = &lanes[i];
        struct { const char *what, *x, *y; } f[] = {
            {"GPU", a->gpu_name, b->gpu_name},
            {"driver", a->driver, b->driver},
            {"NVRTC", a->nvrtc, b->nvrtc},
            {"build (commit)", a->commit, b->commit},
        };
        for (size_t k = 0; k < sizeof f / sizeof f[0]; k++)
            if (strcmp(f[k].x, f[k].y) != 0) {
                char da[256], db[256];
                vpt_lane_describe(a, da, sizeof da);
                vpt_lane_describe(b, db, sizeof db);
                return vpt_fail("only identical GPUs are mixed in one tune, and %s differs: %s has '%s', %s has '%s' "
                                "(choose the GPUs with --gpus, or run one tune per kind of GPU)",
                                f[k].what, db, f[k].y, da, f[k].x);
            }
    }
    return 0;
}

/* ---- direct ------------------------------------------------------------ */

VptEvalPool *vpt_eval_pool_direct(VptEvaluateFn fn, void *ctx, VptCache *cache, VptPrefetchFn prefetch,
                                  void *prefetch_user)
{
    VptEvalPool *p = vpt_calloc(1, sizeof *p);
    if (!p) return NULL;
    p->direct = 1;
    p->fn = fn;
    p->ctx = ctx;
    p->cache = cache;
    p->prefetch = prefetch;
    p->prefetch_user = prefetch_user;
    p->nlanes = 1;
    return p;
}

void vpt_eval_pool_set_retrace(VptEvalPool *p, VptRetraceFn fn, void *ctx)
{
    if (!p->direct) return;
    p->retrace = fn;
    p->retrace_user = ctx;
}

/* The last two steps of an evaluation's flow (pool.h): row encode, cache
 * append. */
static int write_record(VptEvalPool *p, const VptEvalRecord *r)
{
    if (!p->cache) return 0;
    char *line = vpt_rows_record_line(r);
    int rc = line ? vpt_cache_append(p->cache, r, line) : -1;
    free(line);
    return rc;
}

/* One evaluation on one GPU, in the order of pool.h: cache lookup, else
 * evaluate, row encode, cache append. *src: where the record came from. */
static int direct_get(VptEvalPool *p, const VptConfig *c, int fidelity, VptEvalRecord *out, VptCacheHit *src)
{
    *src = p->cache ? vpt_cache_lookup(p->cache, c, fidelity, out) : VPT_CACHE_MISS;
    if (*src != VPT_CACHE_MISS) {
        if (*src == VPT_CACHE_RETRACED && p->retrace) p->retrace(p->retrace_user, out);
        return 0;
    }
    if (vpt_eval_run(p->fn, p->ctx, c, fidelity, out)) return -1;
    return write_record(p, out);
}

/* ---- lanes ------------------------------------------------------------- */

static uint64_t job_key(const VptConfig *c, int fidelity)
{
    return vpt_cache_key(c, fidelity);
}

static Job *find_key(VptEvalPool *p, uint64_t key)
{
    for (size_t i = 0; i < p->njobs; i++)
        if (p->jobs[i].key == key) return &p->jobs[i];
    return NULL;
}

static Job *find_id(VptEvalPool *p, uint64_t id)
{
    for (size_t i = 0; i < p->njobs; i++)
        if (p->jobs[i].id == id) return &p->jobs[i];
    return NULL;
}

static Job *add_job(VptEvalPool *p, const VptConfig *c, int fidelity, int urgent)
{
    if (p->njobs == p->capjobs) {
        size_t cap = p->capjobs ? 2 * p->capjobs : 256;
        Job *j = vpt_realloc(p->jobs, cap * sizeof *j);
        if (!j) return NULL;
        p->jobs = j;
        p->capjobs = cap;
    }
    Job *j = &p->jobs[p->njobs++];
    memset(j, 0, sizeof *j);
    j->id = p->next_id++;
    j->key = job_key(c, fidelity);
    j->config = *c;
    j->fidelity = fidelity;
    j->state = JOB_QUEUED;
    j->lane = -1;
    j->urgent = urgent;
    return j;
}

static void remove_job(VptEvalPool *p, Job *j)
{
    *j = p->jobs[--p->njobs];
}

static void fail(VptEvalPool *p)
{
    if (!p->failed) {
        p->failed = 1;
        snprintf(p->error, sizeof p->error, "%s", vpt_errmsg());
    }
}

static int lane_of(const VptEvalPool *p, int transport, int index)
{
    for (int i = 0; i < p->nlanes; i++)
        if (p->lane[i].transport == transport && p->lane[i].index == index) return i;
    return -1;
}

VptEvalPool *vpt_eval_pool_create(VptLanes *local, const VptTransport *remote, VptCache *cache)
{
    VptEvalPool *p = vpt_calloc(1, sizeof *p);
    if (!p) return NULL;
    p->cache = cache;
    p->local = local;
    p->t[p->nt++] = vpt_lanes_transport(local);
    if (remote) p->t[p->nt++] = *remote;
    int n = 0;
    for (int t = 0; t < p->nt; t++) n += p->t[t].count(p->t[t].self);
    p->lane = vpt_calloc((size_t)n, sizeof *p->lane);
    p->group_busy = vpt_calloc((size_t)n, sizeof *p->group_busy);
    if (!p->lane || !p->group_busy) {
        vpt_eval_pool_destroy(p);
        return NULL;
    }
    for (int t = 0; t < p->nt; t++)
        for (int i = 0; i < p->t[t].count(p->t[t].self); i++) {
            PoolLane *l = &p->lane[p->nlanes++];
            l->info = *p->t[t].info(p->t[t].self, i);
            l->transport = t;
            l->index = i;
            l->alive = 1;
            l->group = -1;
            for (int k = 0; k < p->nlanes - 1 && l->group < 0; k++)
                if (strcmp(p->lane[k].info.gpu_uuid, l->info.gpu_uuid) == 0) l->group = p->lane[k].group;
            if (l->group < 0) l->group = p->ngroups++;
        }
    p->alive = p->nlanes;
    return p;
}

int vpt_eval_pool_lanes(const VptEvalPool *p) { return p->nlanes; }

int vpt_eval_pool_gpus(const VptEvalPool *p) { return p->direct ? 1 : p->ngroups; }

int vpt_eval_pool_wants_hints(const VptEvalPool *p) { return !p->direct || p->prefetch != NULL; }

static void lane_text(const VptEvalPool *p, int lane, char *buf, size_t size)
{
    vpt_lane_describe(&p->lane[lane].info, buf, size);
}

/* Stamps who measured it and writes it: the cache's one writer (the flow
 * of pool.h, the lane having evaluated). */
static void record_done(VptEvalPool *p, Job *j, VptEvalRecord *rec, int lane)
{
    vpt_eval_record_sanitize(rec, &j->config, j->fidelity);
    if (lane >= 0) {
        const VptLaneInfo *in = &p->lane[lane].info;
        snprintf(rec->by_gpu, sizeof rec->by_gpu, "%s", in->gpu_uuid);
        snprintf(rec->by_host, sizeof rec->by_host, "%s", in->host);
        rec->by_rank = in->rank;
    }
    if (write_record(p, rec)) {
        fail(p);
        p->write_failed = 1;
    }
    j->rec = *rec;
    j->state = JOB_DONE;
    p->done_untaken++;
}

static void lane_free(VptEvalPool *p, int lane)
{
    PoolLane *l = &p->lane[lane];
    if (!l->busy) return;
    l->busy = 0;
    p->group_busy[l->group]--;
    p->running--;
}

static void handle_lost(VptEvalPool *p, int lane, const VptLaneEvent *ev)
{
    PoolLane *l = &p->lane[lane];
    Job *j = l->busy ? find_id(p, l->job) : NULL;
    lane_free(p, lane);
    if (l->alive) {
        l->alive = 0;
        p->alive--;
    }
    char who[256], cfg[VPT_CONFIG_STR_MAX] = "";
    lane_text(p, lane, who, sizeof who);
    if (j) vpt_config_format(&j->config, cfg, sizeof cfg);
    if (!j) {
        fprintf(stderr, "tune: %s is lost (%s); it takes no more work\n", who, ev->why);
    } else if (!j->requeued) {
        fprintf(stderr, "tune: %s is lost (%s) while evaluating %s; that config is queued again\n", who, ev->why, cfg);
        j->requeued = 1;
        snprintf(j->lost_why, sizeof j->lost_why, "%.200s: %.300s", who, ev->why);
        j->state = JOB_QUEUED;
        j->lane = -1;
    } else {
        fprintf(stderr, "tune: %s is lost (%s) while evaluating %s, which was lost once before: recorded as a "
                        "runtime failure\n", who, ev->why, cfg);
        VptEvalRecord rec;
        vpt_eval_record_init(&rec, &j->config, j->fidelity);
        rec.status = VPT_STATUS_RUNTIME;
        snprintf(rec.reason, sizeof rec.reason, "evaluation lost twice: %.100s; then %.60s: %.60s", j->lost_why, who,
                 ev->why);
        record_done(p, j, &rec, -1);
    }
    fflush(stderr);
    if (p->alive == 0 && !p->failed) {
        vpt_fail("every evaluation lane is lost (the last: %s: %s)", who, ev->why);
        fail(p);
    }
}

static void handle(VptEvalPool *p, int transport, VptLaneEvent *ev)
{
    int lane = lane_of(p, transport, ev->lane);
    if (lane < 0) return;
    if (ev->kind == VPT_LANE_CALLED) {
        p->call_done = 1;
        p->call_rc = ev->call_rc;
        snprintf(p->call_why, sizeof p->call_why, "%s", ev->why);
        return;
    }
    if (ev->kind == VPT_LANE_LOST) {
        handle_lost(p, lane, ev);
        return;
    }
    PoolLane *l = &p->lane[lane];
    if (!l->busy || l->job != ev->job) return; /* not what this lane was given: never counted */
    Job *j = find_id(p, ev->job);
    lane_free(p, lane);
    l->evaluated++;
    if (j && j->state == JOB_RUNNING) record_done(p, j, &ev->rec, lane);
}

/* Waits for one event and handles it; 0, or -1 when a transport failed. */
static int wait_event(VptEvalPool *p)
{
    VptLaneEvent ev;
    for (;;) {
        int got;
        if (p->nt > 1) {
            got = p->t[0].poll(p->t[0].self, POLL_WITH_REMOTE_S, &ev);
            if (got > 0) {
                handle(p, 0, &ev);
                return 0;
            }
            got = p->t[1].poll(p->t[1].self, 0, &ev);
            if (got < 0) {
                fail(p);
                return -1;
            }
            if (got > 0) {
                handle(p, 1, &ev);
                return 0;
            }
        } else if (p->t[0].poll(p->t[0].self, POLL_LOCAL_S, &ev) > 0) {
            handle(p, 0, &ev);
            return 0;
        }
    }
}

static int eligible(const VptEvalPool *p, int lane)
{
    const PoolLane *l = &p->lane[lane];
    return l->alive && !l->busy && p->group_busy[l->group] == 0;
}

static void dispatch(VptEvalPool *p, Job *j, int lane)
{
    PoolLane *l = &p->lane[lane];
    const VptTransport *t = &p->t[l->transport];
    if (t->submit(t->self, l->index, j->id, &j->config, j->fidelity)) {
        VptLaneEvent ev;
        memset(&ev, 0, sizeof ev);
        ev.kind = VPT_LANE_LOST;
        ev.lane = l->index;
        ev.job = VPT_LANE_NO_JOB;
        snprintf(ev.why, sizeof ev.why, "%s", vpt_errmsg());
        handle_lost(p, lane, &ev);
        return;
    }
    l->busy = 1;
    l->job = j->id;
    p->group_busy[l->group]++;
    p->running++;
    j->state = JOB_RUNNING;
    j->lane = lane;
}

/* The first eligible lane, preferring `prefer`; -1 when none. */
static int pick_lane(const VptEvalPool *p, int prefer)
{
    if (prefer >= 0 && eligible(p, prefer)) return prefer;
    for (int i = 0; i < p->nlanes; i++)
        if (eligible(p, i)) return i;
    return -1;
}

/* The queued job with the least id that satisfies urgent/affinity; NULL
 * when none. affinity -2: any. */
static Job *first_queued(VptEvalPool *p, int urgent_only, int affinity)
{
    Job *best = NULL;
    for (size_t i = 0; i < p->njobs; i++) {
        Job *j = &p->jobs[i];
        if (j->state != JOB_QUEUED || (urgent_only && !j->urgent) || (affinity != -2 && j->lane != affinity)) continue;
        if (!best || j->id < best->id) best = j;
    }
    return best;
}

static int cmp_job_id(const void *a, const void *b)
{
    uint64_t x = (*(Job *const *)a)->id, y = (*(Job *const *)b)->id;
    return (x > y) - (x < y);
}

/* Hands out work: what was asked for first, then announced configs while
 * the speculation bound allows. Those are the next `room` announced ones,
 * in order (the search takes them in that order, so with an evaluation
 * budget none is wasted); among them each idle lane prefers one it
 * compiled ahead, else takes the earliest. */
static void schedule(VptEvalPool *p, size_t wanted)
{
    Job *j;
    while ((j = first_queued(p, 1, -2)) != NULL) {
        int lane = pick_lane(p, j->lane);
        if (lane < 0) break;
        dispatch(p, j, lane);
    }
    size_t bound = (size_t)SPECULATION_PER_LANE * (size_t)p->alive;
    if (wanted < bound) bound = wanted;
    size_t outstanding = p->running + p->done_untaken;
    if (outstanding >= bound || pick_lane(p, -1) < 0) return;
    size_t room = bound - outstanding, k = 0;
    Job **window = malloc(p->njobs * sizeof *window);
    if (!window) return; /* speculation is optional */
    for (size_t i = 0; i < p->njobs; i++)
        if (p->jobs[i].state == JOB_QUEUED) window[k++] = &p->jobs[i];
    qsort(window, k, sizeof *window, cmp_job_id);
    if (k > room) k = room;
    for (int pass = 0; pass < 2; pass++)
        for (int lane = 0; lane < p->nlanes; lane++) {
            if (!eligible(p, lane)) continue;
            for (size_t i = 0; i < k; i++)
                if (window[i]->state == JOB_QUEUED && (pass == 1 || window[i]->lane == lane)) {
                    dispatch(p, window[i], lane);
                    break;
                }
        }
    free(window);
}

void vpt_eval_pool_announce(VptEvalPool *p, const VptConfig *configs, size_t n, int fidelity)
{
    if (p->direct) {
        if (p->prefetch && n) p->prefetch(p->prefetch_user, configs, n, fidelity);
        return;
    }
    if (p->failed || p->alive == 0) return;
    /* each config's compile-ahead lane, round-robin over the lanes alive;
     * the hints go out per lane, in order */
    VptConfig *per = vpt_malloc((n ? n : 1) * sizeof *per);
    int *to = vpt_malloc((n ? n : 1) * sizeof *to);
    if (!per || !to) {
        free(per);
        free(to);
        return; /* only hints */
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t key = job_key(&configs[i], fidelity);
        /* a row not reached yet by a retrace is an evaluation done all the same */
        if (find_key(p, key) || (p->cache && vpt_cache_has(p->cache, &configs[i], fidelity))) continue;
        Job *j = add_job(p, &configs[i], fidelity, 0);
        if (!j) break;
        do p->rr = (p->rr + 1) % p->nlanes;
        while (!p->lane[p->rr].alive);
        j->lane = p->rr;
        to[k] = p->rr;
        per[k++] = configs[i];
    }
    for (int lane = 0; lane < p->nlanes; lane++) {
        VptConfig *mine = vpt_malloc((k ? k : 1) * sizeof *mine);
        if (!mine) break;
        size_t m = 0;
        for (size_t i = 0; i < k; i++)
            if (to[i] == lane) mine[m++] = per[i];
        const PoolLane *l = &p->lane[lane];
        if (m) p->t[l->transport].prefetch(p->t[l->transport].self, l->index, mine, m, fidelity);
        free(mine);
    }
    free(per);
    free(to);
}

/* vpt_eval_pool_get, with where the record came from in *src (MISS: it
 * was evaluated for this caller). */
static int pool_get(VptEvalPool *p, const VptConfig *c, int fidelity, size_t wanted, VptEvalRecord *out,
                    VptCacheHit *src)
{
    if (p->direct) return direct_get(p, c, fidelity, out, src);
    /* a record that finished, or one in the cache, is taken even once the
     * pool failed because its lanes were lost: what they measured before
     * reaches the search; never after the cache failed to take a record */
    if (p->write_failed) return vpt_fail("%s", p->error);
    Job *j = find_key(p, job_key(c, fidelity));
    if (!j) {
        *src = p->cache ? vpt_cache_lookup(p->cache, c, fidelity, out) : VPT_CACHE_MISS;
        if (*src != VPT_CACHE_MISS) return 0;
        if (p->failed) return vpt_fail("%s", p->error);
        if (!(j = add_job(p, c, fidelity, 1))) return -1;
    }
    *src = VPT_CACHE_MISS;
    j->urgent = 1;
    uint64_t id = j->id;
    for (;;) {
        if (j->state == JOB_DONE) break;
        schedule(p, wanted);
        if (j->state == JOB_DONE) break;
        if (p->failed) return vpt_fail("%s", p->error);
        if (p->running == 0) {
            if (p->alive == 0) return vpt_fail("no evaluation lane is left");
            return vpt_fail("internal error: nothing runs and the job waits");
        }
        (void)wait_event(p); /* a failure sets p->failed: the next pass tells, after a record it finished */
        if (!(j = find_id(p, id))) return vpt_fail("internal error: a job the search waits for vanished");
    }
    *out = j->rec;
    p->done_untaken--;
    remove_job(p, j);
    return 0;
}

int vpt_eval_pool_get(VptEvalPool *p, const VptConfig *c, int fidelity, size_t wanted, VptEvalRecord *out,
                      int *fresh)
{
    VptCacheHit src;
    if (pool_get(p, c, fidelity, wanted, out, &src)) return -1;
    *fresh = src == VPT_CACHE_MISS;
    return 0;
}

int vpt_eval_pool_get_first(VptEvalPool *p, const VptConfig *configs, size_t n, int fidelity, size_t wanted,
                            VptEvalRecord *out, size_t *which, int *fresh)
{
    if (n == 0) return vpt_fail("internal error: vpt_eval_pool_get_first asked for none of no configs");
    if (p->direct || n == 1) {
        *which = 0;
        return vpt_eval_pool_get(p, &configs[0], fidelity, wanted, out, fresh);
    }
    /* a record at hand first: from the cache, or finished ahead (also once
     * the lanes are lost, as vpt_eval_pool_get); else each is queued
     * (urgent) and the first to finish is taken */
    if (p->write_failed) return vpt_fail("%s", p->error);
    for (size_t i = 0; i < n; i++) {
        Job *j = find_key(p, job_key(&configs[i], fidelity));
        if (j && j->state == JOB_DONE) {
            *which = i;
            return vpt_eval_pool_get(p, &configs[i], fidelity, wanted, out, fresh);
        }
        if (!j && p->cache && vpt_cache_has(p->cache, &configs[i], fidelity)) {
            *which = i;
            return vpt_eval_pool_get(p, &configs[i], fidelity, wanted, out, fresh);
        }
    }
    if (p->failed) return vpt_fail("%s", p->error);
    /* the first is asked for (it runs on the first lane free); the others
     * run as announced ones do, within the speculation bound, on the lanes
     * that compiled them ahead */
    for (size_t i = 0; i < n; i++) {
        Job *j = find_key(p, job_key(&configs[i], fidelity));
        if (!j && !(j = add_job(p, &configs[i], fidelity, i == 0))) return -1;
        if (i == 0) j->urgent = 1;
    }
    for (;;) {
        schedule(p, wanted);
        for (size_t i = 0; i < n; i++) {
            Job *j = find_key(p, job_key(&configs[i], fidelity));
            if (j && j->state == JOB_DONE) {
                *which = i;
                return vpt_eval_pool_get(p, &configs[i], fidelity, wanted, out, fresh);
            }
        }
        if (p->failed) return vpt_fail("%s", p->error);
        if (p->running == 0) {
            if (p->alive == 0) return vpt_fail("no evaluation lane is left");
            return vpt_fail("internal error: nothing runs and the jobs wait");
        }
        (void)wait_event(p); /* a failure sets p->failed: the next pass tells, after a record it finished */
    }
}

int vpt_eval_pool_get_charged(VptEvalPool *p, const VptConfig *c, VptEvalRecord *out, double *seconds)
{
    VptCacheHit src;
    if (pool_get(p, c, 1, SIZE_MAX, out, &src)) return -1;
    /* a retraced row was this tune's own evaluation: charged again, as the
     * uninterrupted tune charged it */
    if (src != VPT_CACHE_HIT && isfinite(out->cost_s) && out->cost_s > 0)
        *seconds += out->cost_s / vpt_eval_pool_gpus(p);
    return 0;
}

int vpt_eval_pool_drain(VptEvalPool *p)
{
    if (!p || p->direct) return 0;
    while (p->running > 0)
        if (wait_event(p)) break;
    /* the finished ones are in the cache; the queued ones are forgotten */
    p->njobs = 0;
    p->done_untaken = 0;
    if (p->failed) return vpt_fail("%s", p->error);
    return 0;
}

int vpt_eval_pool_call(VptEvalPool *p, int (*fn)(void *, void *), void *arg)
{
    if (p->direct) return fn(p->ctx, arg);
    if (!p->lane[0].alive) return vpt_fail("lane 0 (this process's first GPU) is lost");
    p->call_done = 0;
    if (vpt_lanes_call(p->local, 0, fn, arg)) return -1;
    while (!p->call_done) {
        if (!p->lane[0].alive) return vpt_fail("lane 0 (this process's first GPU) was lost during the call");
        if (wait_event(p) && !p->call_done) return vpt_fail("%s", p->error);
    }
    if (p->call_rc) return vpt_fail("%s", p->call_why);
    return 0;
}

void vpt_eval_pool_print_lanes(const VptEvalPool *p, FILE *f)
{
    if (p->direct) return;
    for (int i = 0; i < p->nlanes; i++) {
        char who[256];
        lane_text(p, i, who, sizeof who);
        fprintf(f, "  %s: %zu evaluation%s%s\n", who, p->lane[i].evaluated, p->lane[i].evaluated == 1 ? "" : "s",
                p->lane[i].alive ? "" : " (lost)");
    }
}

void vpt_eval_pool_destroy(VptEvalPool *p)
{
    if (!p) return;
    if (!p->direct && p->lane) vpt_eval_pool_drain(p);
    free(p->lane);
    free(p->group_busy);
    free(p->jobs);
    free(p);
}
