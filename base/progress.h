/* Progress of long host steps (reading a volume, resampling it, building a
 * large scene) as one line on a stream, for the tools.
 *
 * Off until a tool turns it on with vpt_progress_enable: library code
 * reports unconditionally and costs a clock read per update, and the tests,
 * which never enable it, stay quiet. The tools enable it only while stderr
 * is a terminal (cli/scene_args.c): a log file gets the one summary line a
 * long load ends with, not a stream of carriage returns.
 *
 * A step shows nothing during its first second, then "what: 42%" at most
 * four times a second, rewritten in place with '\r'; vpt_progress_end
 * clears the line. Steps do not nest: a begin ends the previous step.
 * Updates may come from any thread (a mutex orders them). */
#ifndef VPT_BASE_PROGRESS_H
#define VPT_BASE_PROGRESS_H

#include <stdio.h>

/* fp NULL turns progress off. */
void vpt_progress_enable(FILE *fp);
void vpt_progress_begin(const char *what);
/* fraction of the step done, in [0, 1] */
void vpt_progress_update(double fraction);
void vpt_progress_end(void);

/* Seconds on a monotonic clock, for timing steps. */
double vpt_seconds(void);

#endif
