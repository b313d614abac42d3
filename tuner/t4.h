/* Export of evaluations in the T4 auto-tuning results format (the "Open
 * Autotuning Results Schema", results-schema.json v1.0.0 of the TuningSchema
 * T4 branch, as shipped and written by Kernel Tuner):
 *
 *   {"schema_version":"1.0.0","results":[{
 *      "timestamp":"<ISO-8601>",
 *      "configuration":{"regen":"block","reorder":"compact","kernels":"single",
 *                       "maxrregcount":64,"ppt":1,"block":256,"grid":0,
 *                       "threshold":0,"sortkey":"position"},
 *      "times":{"compilation_time":<ms>,"benchmark":<ms>,"runtimes":[<ms>]},
 *      "invalidity":"correct"|"compile"|"runtime"|"constraints"|"correctness"|"timeout",
 *      "correctness":1,
 *      "measurements":[{"name":"time","value":1.23,"unit":"ms"}, ...],
 *      "objectives":["time"]}, ...]}
 *
 * One result per evaluation, in the order given (fidelity-0 evaluations
 * included, marked by a "fidelity" measurement). Choices where the schema
 * leaves room:
 *   - times are in milliseconds, as Kernel Tuner writes them; "benchmark" is
 *     the measuring time (a Kernel Tuner key beyond the schema's list);
 *   - "runtimes" holds the median kernel time only: the harness keeps the
 *     median and spread of its repetitions, not each one ([] when not ok);
 *   - invalidity: ok -> "correct", compile -> "compile", runtime ->
 *     "runtime", launch_limits -> "constraints" (the config exceeds what the
 *     GPU can launch; Kernel Tuner files such configs under constraints),
 *     invalid_output -> "correctness", timeout -> "timeout";
 *   - "correctness" is 0 for invalid_output, else 1;
 *   - "objectives" names the objective, "time", as Kernel Tuner does;
 *   - measurements: every metric that was measured, with its unit. */
#ifndef VPT_TUNER_T4_H
#define VPT_TUNER_T4_H

#include "tuner/cache.h"
#include "tuner/eval.h"

#include <stddef.h>

/* Writes the records to path atomically (base/file.h). */
int vpt_t4_write(const char *path, const VptEvalRecord *recs, size_t n);

/* Writes every row of a results cache (e.g. opened VPT_CACHE_READONLY). */
int vpt_t4_write_cache(const char *path, const VptCache *cache);

/* The T4 "invalidity" word of a status. */
const char *vpt_t4_invalidity(VptStatus s);

#endif
