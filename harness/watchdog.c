#include "harness/watchdog.h"

#include "base/error.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

struct VptWatchdog {
    struct timespec start;
    double limit;       /* seconds; <= 0: none */
    char what[160];
};

static double since(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) * 1e-9;
}

VptWatchdog *vpt_watchdog_start(double seconds, const char *what)
{
    VptWatchdog *w = vpt_malloc(sizeof *w);
    if (!w) return NULL;
    w->limit = isnan(seconds) ? 0 : seconds;
    snprintf(w->what, sizeof w->what, "%s", what ? what : "work");
    clock_gettime(CLOCK_MONOTONIC, &w->start);
    return w;
}

int vpt_watchdog_expired(VptWatchdog *w)
{
    if (w->limit <= 0) return 0;
    double t = since(&w->start);
    if (t <= w->limit) return 0;
    vpt_fail("%s still running after %.3g s (limit %.3g s)", w->what, t, w->limit);
    return 1;
}

double vpt_watchdog_elapsed(const VptWatchdog *w) { return since(&w->start); }

void vpt_watchdog_stop(VptWatchdog *w) { free(w); }
