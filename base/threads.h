/* A parallel for over an index range on POSIX threads, for the host's
 * data-parallel preparation work (density encoding, majorant grids).
 *
 * vpt_parallel_for(n, threads, fn, arg) splits [0, n) into contiguous
 * chunks, calls fn(arg, lo, hi) for each on up to `threads` threads
 * (<= 0: the online cores) and returns when all are done. fn must write
 * disjoint outputs per index; results are then independent of the thread
 * count. Small ranges, or a thread that cannot be started, run on the
 * calling thread: the call cannot fail. */
#ifndef VPT_BASE_THREADS_H
#define VPT_BASE_THREADS_H

#include <stddef.h>

typedef void (*VptRangeFn)(void *arg, size_t lo, size_t hi);

void vpt_parallel_for(size_t n, int threads, VptRangeFn fn, void *arg);

/* The same for n items of work that are each large (a slab of a grid, a
 * block of a reduction): no minimum chunk, and items go one at a time to
 * whichever thread is free, so uneven items balance. fn(arg, i, i + 1) is
 * called once per item; results written per item are independent of the
 * thread count. */
void vpt_parallel_items(size_t n, int threads, VptRangeFn fn, void *arg);

/* The cores this process may run on (its CPU affinity: taskset, a cpuset, a
 * batch job's allocation), else the online cores; at least 1. */
int vpt_cpu_count(void);

#endif
