/* A deadline for work the host polls, e.g. a kernel watched with
 * cuStreamQuery/cuEventQuery:
 *
 *   VptWatchdog *w = vpt_watchdog_start(10.0, "kernel regen_block");
 *   while (vpt_cu.cuEventQuery(done) == CUDA_ERROR_NOT_READY) {
 *       if (vpt_watchdog_expired(w)) { status = VPT_STATUS_TIMEOUT; break; }
 *       usleep(100);
 *   }
 *   vpt_watchdog_stop(w);
 *
 * Only a monotonic-clock deadline: no threads, no signals. A timed-out
 * kernel cannot be stopped from the host; the caller resets the context
 * (vpt_gpu_reset) or ends the process. */
#ifndef VPT_HARNESS_WATCHDOG_H
#define VPT_HARNESS_WATCHDOG_H

typedef struct VptWatchdog VptWatchdog;

/* Starts the clock. seconds <= 0 (or NaN) means no limit. `what` names the
 * work in the timeout message. NULL only when out of memory. */
VptWatchdog *vpt_watchdog_start(double seconds, const char *what);
/* 1 once the deadline has passed, then also setting the message
 * "<what> still running after <t> s (limit <s> s)"; else 0. */
int vpt_watchdog_expired(VptWatchdog *w);
/* Seconds since the start. */
double vpt_watchdog_elapsed(const VptWatchdog *w);
/* Frees w (NULL is fine). */
void vpt_watchdog_stop(VptWatchdog *w);

#endif
