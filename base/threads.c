#include "base/threads.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <unistd.h>

enum { MAX_THREADS = 256, MIN_CHUNK = 4096 };

typedef struct {
    VptRangeFn fn;
    void *arg;
    size_t lo, hi;
} Chunk;

static void *run_chunk(void *p)
{
    Chunk *c = p;
    c->fn(c->arg, c->lo, c->hi);
    return NULL;
}

int vpt_cpu_count(void)
{
    /* The cores this process may run on: under taskset, a cpuset or a
     * batch scheduler's allocation that is fewer than the host has. */
    cpu_set_t set;
    long n = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 0;
    if (n < 1) n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > MAX_THREADS ? MAX_THREADS : (int)n;
}

void vpt_parallel_for(size_t n, int threads, VptRangeFn fn, void *arg)
{
    if (n == 0) return;
    int t = threads > 0 ? threads : vpt_cpu_count();
    if (t > MAX_THREADS) t = MAX_THREADS;
    if ((size_t)t > n / MIN_CHUNK) t = (int)(n / MIN_CHUNK);
    if (t <= 1) {
        fn(arg, 0, n);
        return;
    }
    Chunk c[MAX_THREADS];
    pthread_t tid[MAX_THREADS];
    int started[MAX_THREADS];
    for (int i = 0; i < t; i++) {
        c[i] = (Chunk){fn, arg, n * (size_t)i / (size_t)t, n * (size_t)(i + 1) / (size_t)t};
        started[i] = i > 0 && pthread_create(&tid[i], NULL, run_chunk, &c[i]) == 0;
    }
    run_chunk(&c[0]);
    for (int i = 1; i < t; i++) {
        if (started[i])
            pthread_join(tid[i], NULL);
        else
            run_chunk(&c[i]);
    }
}

typedef struct {
    VptRangeFn fn;
    void *arg;
    size_t n;
    atomic_size_t next;
} Items;

static void *run_items(void *p)
{
    Items *it = p;
    for (;;) {
        size_t i = atomic_fetch_add(&it->next, 1);
        if (i >= it->n) return NULL;
        it->fn(it->arg, i, i + 1);
    }
}

void vpt_parallel_items(size_t n, int threads, VptRangeFn fn, void *arg)
{
    if (n == 0) return;
    int t = threads > 0 ? threads : vpt_cpu_count();
    if (t > MAX_THREADS) t = MAX_THREADS;
    if ((size_t)t > n) t = (int)n;
    Items it = {fn, arg, n, 0};
    pthread_t tid[MAX_THREADS];
    int started[MAX_THREADS];
    for (int i = 1; i < t; i++) started[i] = pthread_create(&tid[i], NULL, run_items, &it) == 0;
    run_items(&it); /* a thread that did not start leaves its items to the others */
    for (int i = 1; i < t; i++)
        if (started[i]) pthread_join(tid[i], NULL);
}
