#include "harness/compile_pool.h"

#include "base/error.h"

#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* NVRTC's front end recurses deeply on template-heavy code (CUB): give the
 * workers more stack than a thread's default. */
#define WORKER_STACK_BYTES ((size_t)64 << 20)
#define MAX_THREADS 256

typedef enum { JOB_QUEUED, JOB_RUNNING, JOB_DONE } JobState;

typedef struct {
    VptCompileRequest req;  /* deep copy, owned */
    VptCompileResult res;
    int rc;
    char err[1024];
    JobState state;
} Job;

struct VptCompilePool {
    VptCubinCache *cache;
    pthread_mutex_t mu;
    pthread_cond_t work;    /* a job was queued, or shutdown */
    pthread_cond_t done;    /* a job finished */
    Job **jobs;             /* indexed by ticket; NULL once collected or dropped */
    int njobs, cap;
    int next_run;           /* first ticket not yet taken by a worker */
    int shutdown;
    pthread_t *threads;
    int nthreads;
};

static void request_free(VptCompileRequest *r)
{
    free((char *)r->name);
    free((char *)r->source);
    for (int i = 0; i < r->nheaders; i++) {
        if (r->headers) free((char *)r->headers[i]);
        if (r->include_names) free((char *)r->include_names[i]);
    }
    free((void *)r->headers);
    free((void *)r->include_names);
    for (int i = 0; i < r->noptions; i++) free((char *)r->options[i]);
    free((void *)r->options);
    memset(r, 0, sizeof *r);
}

static int copy_list(int n, const char *const *src, const char *const **dst)
{
    *dst = NULL;
    if (n == 0) return 0;
    char **d = vpt_calloc((size_t)n, sizeof *d);
    if (!d) return -1;
    *dst = (const char *const *)d;
    for (int i = 0; i < n; i++) {
        if (!src[i]) return vpt_fail("compile request: entry %d of a list is NULL", i);
        if (!(d[i] = vpt_strdup(src[i]))) return -1;
    }
    return 0;
}

static int request_copy(const VptCompileRequest *src, VptCompileRequest *dst)
{
    memset(dst, 0, sizeof *dst);
    if (!src->source) return vpt_fail("compile request %s has no source", src->name ? src->name : "(unnamed)");
    if (src->nheaders < 0 || src->noptions < 0 || (src->nheaders && (!src->headers || !src->include_names)) ||
        (src->noptions && !src->options))
        return vpt_fail("compile request %s: bad header or option list", src->name ? src->name : "(unnamed)");
    dst->arch_major = src->arch_major;
    dst->arch_minor = src->arch_minor;
    /* Counts are set before the lists so request_free frees partial copies. */
    dst->nheaders = src->nheaders;
    dst->noptions = src->noptions;
    if ((src->name && !(dst->name = vpt_strdup(src->name))) || !(dst->source = vpt_strdup(src->source)) ||
        copy_list(src->nheaders, src->headers, &dst->headers) ||
        copy_list(src->nheaders, src->include_names, &dst->include_names) ||
        copy_list(src->noptions, src->options, &dst->options)) {
        request_free(dst);
        return -1;
    }
    return 0;
}

static void *worker(void *arg)
{
    VptCompilePool *p = arg;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->shutdown && p->next_run >= p->njobs) pthread_cond_wait(&p->work, &p->mu);
        if (p->shutdown) break;
        Job *j = p->jobs[p->next_run++];
        j->state = JOB_RUNNING;
        pthread_mutex_unlock(&p->mu);

        vpt_error_clear();
        j->rc = vpt_compile_cached(p->cache, &j->req, &j->res);
        if (j->rc != 0) snprintf(j->err, sizeof j->err, "%s", vpt_errmsg());

        pthread_mutex_lock(&p->mu);
        j->state = JOB_DONE;
        pthread_cond_broadcast(&p->done);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

VptCompilePool *vpt_compile_pool_create(VptCubinCache *cache, int nthreads)
{
    if (nthreads <= 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        nthreads = n > 0 ? (int)(n < MAX_THREADS ? n : MAX_THREADS) : 1;
    }
    if (nthreads > MAX_THREADS) nthreads = MAX_THREADS;
    VptCompilePool *p = vpt_calloc(1, sizeof *p);
    if (!p) return NULL;
    p->cache = cache;
    p->threads = vpt_calloc((size_t)nthreads, sizeof *p->threads);
    if (!p->threads) {
        free(p);
        return NULL;
    }
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->work, NULL);
    pthread_cond_init(&p->done, NULL);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, WORKER_STACK_BYTES);
    for (int i = 0; i < nthreads; i++) {
        int e = pthread_create(&p->threads[i], &attr, worker, p);
        if (e != 0) {
            pthread_attr_destroy(&attr);
            vpt_compile_pool_destroy(p);
            vpt_fail("cannot start compile thread %d of %d: %s", i + 1, nthreads, strerror(e));
            return NULL;
        }
        p->nthreads = i + 1;
    }
    pthread_attr_destroy(&attr);
    return p;
}

int vpt_compile_pool_threads(const VptCompilePool *p) { return p->nthreads; }

int vpt_compile_pool_submit(VptCompilePool *p, const VptCompileRequest *req)
{
    Job *j = vpt_calloc(1, sizeof *j);
    if (!j) return -1;
    if (request_copy(req, &j->req)) {
        free(j);
        return -1;
    }
    j->state = JOB_QUEUED;
    pthread_mutex_lock(&p->mu);
    int ticket = -1;
    if (p->shutdown) {
        vpt_fail("compile pool is shutting down");
    } else if (p->njobs == INT_MAX) {
        vpt_fail("compile pool: too many submissions");
    } else if (p->njobs == p->cap) {
        int ncap = p->cap ? (p->cap > INT_MAX / 2 ? INT_MAX : p->cap * 2) : 64;
        Job **nj = vpt_realloc(p->jobs, (size_t)ncap * sizeof *nj);
        if (nj) {
            p->jobs = nj;
            p->cap = ncap;
        }
    }
    if (!p->shutdown && p->njobs < p->cap) {
        ticket = p->njobs;
        p->jobs[p->njobs++] = j;
        pthread_cond_signal(&p->work);
    }
    pthread_mutex_unlock(&p->mu);
    if (ticket < 0) {
        request_free(&j->req);
        free(j);
    }
    return ticket;
}

int vpt_compile_pool_done(VptCompilePool *p, int ticket)
{
    pthread_mutex_lock(&p->mu);
    int r = -1;
    if (ticket >= 0 && ticket < p->njobs && p->jobs[ticket]) r = p->jobs[ticket]->state == JOB_DONE;
    pthread_mutex_unlock(&p->mu);
    if (r < 0) vpt_fail("compile pool: unknown or already collected ticket %d", ticket);
    return r;
}

int vpt_compile_pool_wait(VptCompilePool *p, int ticket, VptCompileResult *out)
{
    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&p->mu);
    if (ticket < 0 || ticket >= p->njobs || !p->jobs[ticket]) {
        pthread_mutex_unlock(&p->mu);
        return vpt_fail("compile pool: unknown or already collected ticket %d", ticket);
    }
    Job *j = p->jobs[ticket];
    while (j->state != JOB_DONE) pthread_cond_wait(&p->done, &p->mu);
    p->jobs[ticket] = NULL;
    pthread_mutex_unlock(&p->mu);

    *out = j->res;
    int rc = j->rc;
    if (rc != 0) vpt_fail("%s", j->err);
    request_free(&j->req);
    free(j);
    return rc;
}

void vpt_compile_pool_destroy(VptCompilePool *p)
{
    if (!p) return;
    pthread_mutex_lock(&p->mu);
    p->shutdown = 1;
    pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->mu);
    /* A worker finishes the compile it holds before it sees the flag. */
    for (int i = 0; i < p->nthreads; i++) pthread_join(p->threads[i], NULL);
    for (int i = 0; i < p->njobs; i++) {
        Job *j = p->jobs[i];
        if (!j) continue;
        vpt_compile_result_free(&j->res);
        request_free(&j->req);
        free(j);
    }
    free(p->jobs);
    free(p->threads);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->work);
    pthread_cond_destroy(&p->done);
    free(p);
}
