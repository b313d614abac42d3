/* A kernel configuration: one point of vptune's parameter space.
 *
 * Every thesis variant (ch. 4) is a VptConfig: naiveSK, naiveMK,
 * regenerationSK at thread/warp/block level, streamingSK (block compaction),
 * streamingMK (device-wide compaction), Morton sorting and sortingSK, each with
 * maxrregcount, paths per thread and block size, plus the parameters beyond
 * the thesis (regeneration threshold, persistent grid size, sort key).
 *
 * A config has exactly one canonical text form, every field in a fixed order:
 *   regen=block,reorder=compact,kernels=single,maxrregcount=64,ppt=1,block=256,grid=0,threshold=0,sortkey=position
 * used on the command line, as cache key and in results. The parser also
 * takes any subset in any order (the rest default as in vpt_config_default)
 * and the thesis' names ("streamingSK", "regenerationSK-warp", ...), optionally
 * followed by overrides: "streamingSK,block=128". */
#ifndef VPT_CODEGEN_CONFIG_H
#define VPT_CODEGEN_CONFIG_H

#include <stddef.h>

typedef enum { VPT_REGEN_NONE, VPT_REGEN_THREAD, VPT_REGEN_WARP, VPT_REGEN_BLOCK, VPT_REGEN_DEVICE } VptRegen;
typedef enum { VPT_REORDER_NONE, VPT_REORDER_COMPACT, VPT_REORDER_MORTON, VPT_REORDER_MORTON_DELAYED } VptReorder;
typedef enum { VPT_KERNELS_SINGLE, VPT_KERNELS_MULTI } VptKernels;
typedef enum { VPT_SORTKEY_POSITION, VPT_SORTKEY_TERMINATION } VptSortKey;

typedef struct {
    VptRegen regen;
    VptReorder reorder;      /* compact: cub::BlockScan (SK) / device scan (MK);
                                morton: cub::BlockRadixSort before the texture access;
                                morton_delayed: sortingSK, albedo fetched after the sort */
    VptKernels kernels;
    int maxrregcount;        /* 0: compiler's choice; else 24..255 */
    int ppt;                 /* paths per thread: 1, 2, 4 */
    int block;               /* threads per block: multiple of 32, 32..1024 */
    int grid;                /* persistent kernels: blocks per SM (0: all that fit) */
    int threshold;           /* warp/block regeneration when the active fraction
                                is <= threshold percent (0: only when all done, the thesis) */
    VptSortKey sortkey;      /* morton key: current position or estimated termination point */
} VptConfig;

/* naiveSK with block 256, ppt 1, maxrregcount 0. */
VptConfig vpt_config_default(void);

/* Parses text into *out; on error names the offending field or value and
 * lists what is allowed. Does not check cross-field constraints. */
int vpt_config_parse(const char *text, VptConfig *out);

/* Canonical form into buf (VPT_CONFIG_STR_MAX bytes are always enough). */
#define VPT_CONFIG_STR_MAX 256
void vpt_config_format(const VptConfig *c, char *buf, size_t size);

/* Checks the rules a config must obey before compiling; on violation returns
 * -1 with a message naming the rule, e.g. "reorder=compact needs regen=block
 * (single kernel) or regen=device (multi kernel)". */
int vpt_config_check(const VptConfig *c);

/* The thesis' name of a config's schedule ("streamingSK", "regenerationSK-warp",
 * ...) or "custom". */
const char *vpt_config_schedule_name(const VptConfig *c);

/* The thesis' named variants with the thesis' settings, for bench --thesis:
 * fills up to max configs and returns how many. */
int vpt_config_thesis_set(VptConfig *out, int max);

int vpt_config_equal(const VptConfig *a, const VptConfig *b);

#endif
