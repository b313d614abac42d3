/* The best configuration of a scene on a GPU model, as a tune named it:
 * results/<gpu>/best/<scene>.json, written atomically, read by
 * `render --config best`. */
#ifndef VPT_TUNER_BEST_H
#define VPT_TUNER_BEST_H

#include "codegen/config.h"
#include "tuner/eval.h"

#include <stddef.h>

/* "<results>/<gpu_dir>/best/<scene>.json" into buf; results NULL: "results". */
int vpt_best_path(const char *results, const char *gpu_name, const char *scene, char *buf, size_t size);

/* Writes the winner with its provenance and metrics. */
int vpt_best_save(const char *path, const VptTuneProvenance *prov, const VptEvalRecord *winner, const char *strategy);

/* Reads the config saved at path; the message names the file when it is
 * missing ("run tune --scene S first") or malformed. */
int vpt_best_load(const char *path, VptConfig *out);

#endif
