/* Recorded evaluation orders of a tuner: what another tuner (Kernel Tuner in
 * its simulation mode, experiments/kernel_tuner/) evaluated on a recorded
 * space, run by run, so that bin/tune-score scores it with the same scorer
 * as vptune's strategies (tuner/score.h, vpt_score_sequences).
 *
 * A sequences file is JSON lines; lines of another "kind" are skipped:
 *   {"kind":"sequence","scene":"manix","tuner":"kernel_tuner 1.5.0",
 *    "strategy":"genetic_algorithm","seed":3,
 *    "configs":["regen=warp,reorder=none,...", ...]}
 * scene, tuner and strategy are non-empty strings of at most
 * VPT_SEQUENCE_NAME_MAX - 1 bytes, seed an integer >= 0, configs an array of
 * config texts (codegen/config.h's parser and checks: each must be a config a
 * kernel can be built for), in evaluation order, at most
 * VPT_SEQUENCE_MAX_CONFIGS. Anything else is an error naming the file, the
 * line and the field. */
#ifndef VPT_TUNER_SEQUENCES_H
#define VPT_TUNER_SEQUENCES_H

#include "codegen/config.h"

#include <stddef.h>
#include <stdint.h>

#define VPT_SEQUENCE_NAME_MAX 64
#define VPT_SEQUENCE_MAX_CONFIGS 100000
#define VPT_SEQUENCES_MAX_BYTES ((size_t)1 << 28)

typedef struct {
    char scene[VPT_SEQUENCE_NAME_MAX];
    char tuner[VPT_SEQUENCE_NAME_MAX];
    char strategy[VPT_SEQUENCE_NAME_MAX];
    uint64_t seed;
    VptConfig *configs;
    size_t n;
} VptSequence;

typedef struct VptSequences VptSequences;

/* Reads path (at most VPT_SEQUENCES_MAX_BYTES); NULL with a message. */
VptSequences *vpt_sequences_load(const char *path);
/* The same from text in memory (name is used in messages). */
VptSequences *vpt_sequences_parse(const char *name, const char *text, size_t size);
void vpt_sequences_destroy(VptSequences *s);

size_t vpt_sequences_count(const VptSequences *s);
const VptSequence *vpt_sequences_get(const VptSequences *s, size_t i);

#endif
