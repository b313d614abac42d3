/* JSON forms of the tuner's records (internal to tuner/: the cache, the
 * pool, the replay evaluator and the T4 export share them). Rows are only
 * encoded and decoded here; the cache writes and indexes them.
 *
 * Cache rows (schema vptune.tune/1), one JSON object per line:
 *   {"kind":"header","schema":"vptune.tune/1",
 *    "gpu":{"name":..,"uuid":..},"driver":..,"nvrtc":..,"commit":..,"scene":..,
 *    "workload":{"width":..,"height":..,"spp":..,"seed":..,"max_depth":..,"rr_depth":..},
 *    "volume":{"dims":[..],"format":..,"bytes":..,"source":..,...}}
 * ("volume" since issue 17: headers and result rows without it are read as
 * before, and are not compared on it)
 *   {"kind":"eval","config":"<canonical>","schedule":"streamingSK","fidelity":1,
 *    "status":"ok","reason":"","cost_s":1.9,"metrics":{"time_ms":..,...},
 *    "measured_by":{"gpu":"GPU-..","host":..,"rank":..},"time":"ISO-8601"}
 *   where "measured_by" is written only by a tune on several GPUs (rank only
 *   under MPI): a row without it was measured by the header's GPU.
 * The harness' result rows (vptune.result/1) carry the provenance in every
 * row ("gpu" with "driver" inside, "nvrtc", "commit", "scene", "workload")
 * and no cost_s: their cost is compile_s + measure_s. */
#ifndef VPT_TUNER_ROWS_H
#define VPT_TUNER_ROWS_H

#include "tuner/eval.h"

#include <jansson.h>

#define VPT_TUNE_SCHEMA "vptune.tune/1"
#define VPT_RESULT_SCHEMA "vptune.result/1"

/* A new JSON object (caller decrefs), or NULL on out-of-memory. */
json_t *vpt_rows_record_json(const VptEvalRecord *r);
json_t *vpt_rows_header_json(const VptTuneProvenance *p);

/* Fills *r from a cache "eval" row (with_cost: cost_s required) or a result
 * row (cost_s = compile_s + measure_s, NaN parts counting 0). -1 with a
 * message naming the field on anything missing or malformed. */
int vpt_rows_record_parse(json_t *row, int with_cost, VptEvalRecord *r);

/* Provenance from a cache header (driver at the top level) or a result row
 * (driver inside "gpu"); -1 naming the missing or malformed field. */
int vpt_rows_provenance_parse(json_t *row, VptTuneProvenance *p);

/* The row as one compact line, '\n'-terminated, in a malloc'd string. */
char *vpt_rows_dump_line(json_t *row);

/* The cache row of r as that line (an evaluation's "row encode" step,
 * tuner/pool.h); NULL on out-of-memory. r->time is written as it is. */
char *vpt_rows_record_line(const VptEvalRecord *r);

/* 1 when a and b are the same measurement: status, reason, cost_s and every
 * metric equal (NaN equals NaN). The completion time and who measured it
 * are not part of a measurement: a resumed run that appends a row again
 * writes the same measurement at another time. */
int vpt_rows_same_measurement(const VptEvalRecord *a, const VptEvalRecord *b);

/* Fails (-1) with the message for two rows of one config and fidelity that
 * are different measurements: both rows as path:line, the config, and what
 * each row says. */
int vpt_rows_conflict(const char *path, size_t line_a, const VptEvalRecord *a, size_t line_b, const VptEvalRecord *b);

#endif
