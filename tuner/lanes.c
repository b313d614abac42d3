/* Evaluation lanes: a thread per evaluator (contract in tuner/lanes.h). */
#include "tuner/lanes.h"

#include "base/error.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
    VptConfig *configs;
    size_t n, cap;
    int fidelity;
} Hints;

typedef struct {
    VptLanes *owner;
    int index;
    pthread_t thread;
    int started;          /* the thread exists (join it) */
    pthread_cond_t wake;  /* mailbox changed */
    VptLaneInfo info;
    /* opening */
    int opened;           /* 1 opened, -1 failed */
    int no_gpu;
    char open_error[768];
    /* mailbox */
    int have_job;
    uint64_t job;
    VptConfig config;
    int fidelity;
    Hints hints[2];       /* per fidelity, in arrival order within each */
    int (*call)(void *, void *);
    void *call_arg;
    int busy;             /* a job handed over and not yet reported */
    int lost;
    int stop;
} Lane;

struct VptLanes {
    VptLaneOps ops;
    int n;
    Lane *lane;
    pthread_mutex_t mu;
    pthread_cond_t changed;  /* an event was queued, or a lane opened */
    VptLaneEvent *events;    /* FIFO ring */
    size_t head, count, cap;
};

/* Queues an event (under mu). Out of memory drops it with a message on
 * stderr: the caller then waits for a job that never reports, which is why
 * the ring is grown ahead (vpt_lanes_start sizes it for every lane). */
static void push_event(VptLanes *l, const VptLaneEvent *ev)
{
    if (l->count == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 16;
        VptLaneEvent *e = malloc(cap * sizeof *e);
        if (!e) {
            fprintf(stderr, "vptune: out of memory queueing a lane event (lane %d)\n", ev->lane);
            return;
        }
        for (size_t i = 0; i < l->count; i++) e[i] = l->events[(l->head + i) % l->cap];
        free(l->events);
        l->events = e;
        l->head = 0;
        l->cap = cap;
    }
    l->events[(l->head + l->count) % l->cap] = *ev;
    l->count++;
    pthread_cond_broadcast(&l->changed);
}

static void take_hints(Hints *h, Hints *out)
{
    *out = *h;
    memset(h, 0, sizeof *h);
}

static void *lane_main(void *arg)
{
    Lane *ln = arg;
    VptLanes *l = ln->owner;
    int no_gpu = 0;
    VptLaneInfo info = ln->info;
    void *ctx = l->ops.open(l->ops.user, ln->index, &info, &no_gpu);
    pthread_mutex_lock(&l->mu);
    if (!ctx) {
        ln->opened = -1;
        ln->no_gpu = no_gpu;
        snprintf(ln->open_error, sizeof ln->open_error, "%s", vpt_errmsg());
        pthread_cond_broadcast(&l->changed);
        pthread_mutex_unlock(&l->mu);
        return NULL;
    }
    /* the caller's rank and host stay; the rest is the evaluator's */
    snprintf(info.host, sizeof info.host, "%s", ln->info.host);
    info.rank = ln->info.rank;
    ln->info = info;
    ln->opened = 1;
    pthread_cond_broadcast(&l->changed);
    for (;;) {
        while (!ln->stop && !ln->have_job && !ln->call && !ln->hints[0].n && !ln->hints[1].n)
            pthread_cond_wait(&ln->wake, &l->mu);
        if (ln->stop) break;
        if (ln->hints[0].n || ln->hints[1].n) {
            /* compile hints first, so that compiles start before the job */
            Hints h[2];
            take_hints(&ln->hints[0], &h[0]);
            take_hints(&ln->hints[1], &h[1]);
            pthread_mutex_unlock(&l->mu);
            for (int f = 0; f < 2; f++) {
                if (h[f].n && l->ops.prefetch) l->ops.prefetch(ctx, h[f].configs, h[f].n, f);
                free(h[f].configs);
            }
            pthread_mutex_lock(&l->mu);
            continue;
        }
        if (ln->have_job) {
            VptConfig c = ln->config;
            int fidelity = ln->fidelity;
            uint64_t job = ln->job;
            ln->have_job = 0;
            pthread_mutex_unlock(&l->mu);
            VptLaneEvent ev;
            memset(&ev, 0, sizeof ev);
            ev.lane = ln->index;
            ev.job = job;
            vpt_eval_record_init(&ev.rec, &c, fidelity);
            int rc = l->ops.evaluate(ctx, &c, fidelity, &ev.rec);
            if (rc != 0) {
                ev.kind = VPT_LANE_LOST;
                snprintf(ev.why, sizeof ev.why, "%s", vpt_errmsg());
            } else {
                ev.kind = VPT_LANE_DONE;
            }
            pthread_mutex_lock(&l->mu);
            ln->busy = 0;
            if (!ln->stop) push_event(l, &ev);
            if (rc != 0) {
                ln->lost = 1;
                break;
            }
            continue;
        }
        /* a call */
        int (*fn)(void *, void *) = ln->call;
        void *a = ln->call_arg;
        pthread_mutex_unlock(&l->mu);
        VptLaneEvent ev;
        memset(&ev, 0, sizeof ev);
        ev.kind = VPT_LANE_CALLED;
        ev.lane = ln->index;
        ev.job = VPT_LANE_NO_JOB;
        ev.call_rc = fn(ctx, a);
        if (ev.call_rc) snprintf(ev.why, sizeof ev.why, "%s", vpt_errmsg());
        pthread_mutex_lock(&l->mu);
        ln->call = NULL;
        push_event(l, &ev);
    }
    pthread_mutex_unlock(&l->mu);
    l->ops.close(ctx);
    return NULL;
}

static void stop_all(VptLanes *l)
{
    pthread_mutex_lock(&l->mu);
    for (int i = 0; i < l->n; i++) {
        l->lane[i].stop = 1;
        pthread_cond_signal(&l->lane[i].wake);
    }
    pthread_mutex_unlock(&l->mu);
    for (int i = 0; i < l->n; i++)
        if (l->lane[i].started) pthread_join(l->lane[i].thread, NULL);
}

static void free_lanes(VptLanes *l)
{
    for (int i = 0; i < l->n; i++) {
        pthread_cond_destroy(&l->lane[i].wake);
        free(l->lane[i].hints[0].configs);
        free(l->lane[i].hints[1].configs);
    }
    pthread_mutex_destroy(&l->mu);
    pthread_cond_destroy(&l->changed);
    free(l->events);
    free(l->lane);
    free(l);
}

VptLanes *vpt_lanes_start(const VptLaneOps *ops, int n, int rank, const char *host, int *no_gpu)
{
    if (no_gpu) *no_gpu = 0;
    if (n < 1) {
        vpt_fail("internal error: %d evaluation lanes", n);
        return NULL;
    }
    VptLanes *l = vpt_calloc(1, sizeof *l);
    if (!l) return NULL;
    l->ops = *ops;
    l->n = n;
    l->lane = vpt_calloc((size_t)n, sizeof *l->lane);
    l->cap = 4 * (size_t)n + 16;
    l->events = vpt_malloc(l->cap * sizeof *l->events);
    if (!l->lane || !l->events) {
        free(l->lane);
        free(l->events);
        free(l);
        return NULL;
    }
    pthread_mutex_init(&l->mu, NULL);
    pthread_cond_init(&l->changed, NULL);
    for (int i = 0; i < n; i++) {
        Lane *ln = &l->lane[i];
        ln->owner = l;
        ln->index = i;
        ln->info.rank = rank;
        ln->info.device = i;
        snprintf(ln->info.host, sizeof ln->info.host, "%s", host ? host : "");
        pthread_cond_init(&ln->wake, NULL);
    }
    int failed = -1;
    char why[1024] = "";
    for (int i = 0; i < n; i++) {
        int err = pthread_create(&l->lane[i].thread, NULL, lane_main, &l->lane[i]);
        if (err) {
            errno = err;
            vpt_fail_errno("starting evaluation lane %d (pthread_create)", i);
            snprintf(why, sizeof why, "%s", vpt_errmsg());
            failed = i;
            break;
        }
        l->lane[i].started = 1;
    }
    /* wait for every started lane to open (or fail) */
    pthread_mutex_lock(&l->mu);
    for (int i = 0; i < n; i++) {
        if (!l->lane[i].started) continue;
        while (l->lane[i].opened == 0) pthread_cond_wait(&l->changed, &l->mu);
        if (l->lane[i].opened < 0 && failed < 0) {
            failed = i;
            if (no_gpu) *no_gpu = l->lane[i].no_gpu;
            snprintf(why, sizeof why, "%s", l->lane[i].open_error);
        }
    }
    pthread_mutex_unlock(&l->mu);
    if (failed >= 0) {
        stop_all(l);
        free_lanes(l);
        vpt_fail("%s", why);
        return NULL;
    }
    return l;
}

int vpt_lanes_count(const VptLanes *l) { return l->n; }

const VptLaneInfo *vpt_lanes_info(const VptLanes *l, int lane) { return &l->lane[lane].info; }

int vpt_lanes_submit(VptLanes *l, int lane, uint64_t job, const VptConfig *c, int fidelity)
{
    if (lane < 0 || lane >= l->n) return vpt_fail("internal error: no evaluation lane %d", lane);
    Lane *ln = &l->lane[lane];
    pthread_mutex_lock(&l->mu);
    int rc = 0;
    if (ln->lost || ln->opened < 0) rc = vpt_fail("evaluation lane %d is lost", lane);
    else if (ln->busy) rc = vpt_fail("internal error: evaluation lane %d is busy", lane);
    else {
        ln->have_job = 1;
        ln->busy = 1;
        ln->job = job;
        ln->config = *c;
        ln->fidelity = fidelity ? 1 : 0;
        pthread_cond_signal(&ln->wake);
    }
    pthread_mutex_unlock(&l->mu);
    return rc;
}

void vpt_lanes_prefetch(VptLanes *l, int lane, const VptConfig *configs, size_t n, int fidelity)
{
    if (lane < 0 || lane >= l->n || n == 0) return;
    Lane *ln = &l->lane[lane];
    Hints *h = &ln->hints[fidelity ? 1 : 0];
    pthread_mutex_lock(&l->mu);
    if (!ln->lost && h->n + n > h->cap) {
        size_t cap = h->cap ? h->cap : 64;
        while (cap < h->n + n) cap *= 2;
        VptConfig *p = realloc(h->configs, cap * sizeof *p);
        if (p) {
            h->configs = p;
            h->cap = cap;
        }
    }
    if (!ln->lost && h->n + n <= h->cap) { /* a hint that does not fit is dropped: it was only a hint */
        memcpy(h->configs + h->n, configs, n * sizeof *configs);
        h->n += n;
        pthread_cond_signal(&ln->wake);
    }
    pthread_mutex_unlock(&l->mu);
}

int vpt_lanes_call(VptLanes *l, int lane, int (*fn)(void *, void *), void *arg)
{
    if (lane < 0 || lane >= l->n) return vpt_fail("internal error: no evaluation lane %d", lane);
    Lane *ln = &l->lane[lane];
    pthread_mutex_lock(&l->mu);
    int rc = 0;
    if (ln->lost) rc = vpt_fail("evaluation lane %d is lost", lane);
    else if (ln->call) rc = vpt_fail("internal error: evaluation lane %d already has a call waiting", lane);
    else {
        ln->call = fn;
        ln->call_arg = arg;
        pthread_cond_signal(&ln->wake);
    }
    pthread_mutex_unlock(&l->mu);
    return rc;
}

int vpt_lanes_poll(VptLanes *l, double timeout_s, VptLaneEvent *ev)
{
    pthread_mutex_lock(&l->mu);
    if (l->count == 0 && timeout_s != 0) {
        if (timeout_s < 0) {
            while (l->count == 0) pthread_cond_wait(&l->changed, &l->mu);
        } else {
            struct timespec until;
            clock_gettime(CLOCK_REALTIME, &until);
            double s = floor(timeout_s);
            until.tv_sec += (time_t)s;
            until.tv_nsec += (long)((timeout_s - s) * 1e9);
            if (until.tv_nsec >= 1000000000L) {
                until.tv_sec++;
                until.tv_nsec -= 1000000000L;
            }
            while (l->count == 0)
                if (pthread_cond_timedwait(&l->changed, &l->mu, &until) == ETIMEDOUT) break;
        }
    }
    int got = 0;
    if (l->count) {
        *ev = l->events[l->head];
        l->head = (l->head + 1) % l->cap;
        l->count--;
        got = 1;
    }
    pthread_mutex_unlock(&l->mu);
    return got;
}

void vpt_lanes_stop(VptLanes *l)
{
    if (!l) return;
    stop_all(l);
    free_lanes(l);
}

static int t_count(void *self) { return vpt_lanes_count(self); }
static const VptLaneInfo *t_info(void *self, int lane) { return vpt_lanes_info(self, lane); }
static int t_submit(void *self, int lane, uint64_t job, const VptConfig *c, int fidelity)
{
    return vpt_lanes_submit(self, lane, job, c, fidelity);
}
static void t_prefetch(void *self, int lane, const VptConfig *c, size_t n, int fidelity)
{
    vpt_lanes_prefetch(self, lane, c, n, fidelity);
}
static int t_poll(void *self, double timeout_s, VptLaneEvent *ev) { return vpt_lanes_poll(self, timeout_s, ev); }

VptTransport vpt_lanes_transport(VptLanes *l)
{
    return (VptTransport){t_count, t_info, t_submit, t_prefetch, t_poll, l};
}
