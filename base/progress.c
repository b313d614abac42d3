/* Progress lines for long host steps: see base/progress.h. */
#include "base/progress.h"

#include <pthread.h>
#include <string.h>
#include <time.h>

static struct {
    pthread_mutex_t lock;
    FILE *fp;
    char what[160];
    double start, last;
    int shown; /* a line is on the terminal */
} P = {PTHREAD_MUTEX_INITIALIZER, NULL, "", 0, 0, 0};

double vpt_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* With the lock held. */
static void clear_line(void)
{
    if (P.fp && P.shown) {
        fprintf(P.fp, "\r%*s\r", (int)strlen(P.what) + 8, "");
        fflush(P.fp);
    }
    P.shown = 0;
}

void vpt_progress_enable(FILE *fp)
{
    pthread_mutex_lock(&P.lock);
    clear_line();
    P.fp = fp;
    pthread_mutex_unlock(&P.lock);
}

void vpt_progress_begin(const char *what)
{
    pthread_mutex_lock(&P.lock);
    clear_line();
    snprintf(P.what, sizeof P.what, "%s", what);
    P.start = P.last = vpt_seconds();
    pthread_mutex_unlock(&P.lock);
}

void vpt_progress_update(double fraction)
{
    pthread_mutex_lock(&P.lock);
    if (P.fp) {
        double now = vpt_seconds();
        if (now - P.start >= 1.0 && now - P.last >= 0.25) {
            fraction = fraction < 0 ? 0 : fraction > 1 ? 1 : fraction;
            fprintf(P.fp, "\r%s: %3.0f%%", P.what, 100.0 * fraction);
            fflush(P.fp);
            P.last = now;
            P.shown = 1;
        }
    }
    pthread_mutex_unlock(&P.lock);
}

void vpt_progress_end(void)
{
    pthread_mutex_lock(&P.lock);
    clear_line();
    P.what[0] = '\0';
    pthread_mutex_unlock(&P.lock);
}
