/* A kernel configuration: one point of vptune's parameter space.
 *
 * Every thesis variant (ch. 4) is a VptConfig: naiveSK, naiveMK,
 * regenerationSK at thread/warp/block level, streamingSK (block compaction),
 * streamingMK (device-wide compaction), Morton sorting and sortingSK, each with
 * maxrregcount, paths per thread and block size, plus the parameters beyond
 * the thesis (regeneration threshold, persistent grid size, sort key).
 *
 * A config has exactly one canonical text form, every field in a fixed order:
 *   regen=block,reorder=compact,kernels=single,maxrregcount=64,ppt=1,block=256,grid=0,threshold=100,sortkey=position,lookahead=1
 * used on the command line, as cache key and in results. The last fields,
 * coop, flights, paths, majorant, density and volume, are written only off their defaults
 * ("...,lookahead=4,coop=4,majorant=grid8,density=u8,volume=sparse",
 * "...,lookahead=2,flights=async,majorant=grid32"), so the texts of
 * every config from before they existed stay canonical. The parser also
 * takes any subset in any order (the rest default as in vpt_config_default)
 * and the thesis' names ("streamingSK", "regenerationSK-warp", ...), optionally
 * followed by overrides: "streamingSK,block=128". */
#ifndef VPT_CODEGEN_CONFIG_H
#define VPT_CODEGEN_CONFIG_H

#include "physics/density_format.h"
#include "physics/majorant_grid.h"

#include <stddef.h>

typedef enum { VPT_REGEN_NONE, VPT_REGEN_THREAD, VPT_REGEN_WARP, VPT_REGEN_BLOCK, VPT_REGEN_DEVICE } VptRegen;
typedef enum { VPT_REORDER_NONE, VPT_REORDER_COMPACT, VPT_REORDER_MORTON, VPT_REORDER_MORTON_DELAYED } VptReorder;
typedef enum { VPT_KERNELS_SINGLE, VPT_KERNELS_MULTI } VptKernels;
typedef enum { VPT_SORTKEY_POSITION, VPT_SORTKEY_TERMINATION } VptSortKey;
typedef enum { VPT_FLIGHTS_SYNC, VPT_FLIGHTS_ASYNC } VptFlights;
typedef enum { VPT_PATHS_SAMPLE, VPT_PATHS_PIXEL } VptPathOrder;
/* The sun's shadow rays (physics/vpt_tracer.h): none for a scene without a
 * sun, else the transmittance estimator (VPT_TR_* + 1). */
typedef enum { VPT_TRANSMITTANCE_NONE, VPT_TRANSMITTANCE_DELTA, VPT_TRANSMITTANCE_RATIO, VPT_TRANSMITTANCE_RESIDUAL } VptTransmittance;
/* The lights next-event estimation samples, when a config has a
 * transmittance estimator: the sun (the first value, so that a config
 * parsed from text lights a sun as before), the environment map, or both. */
typedef enum { VPT_NEE_SUN, VPT_NEE_ENV_MAP, VPT_NEE_SUN_AND_ENV_MAP } VptNeeLights;

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
                                is <= threshold percent: 0 only when all are done
                                (regenerationSK), 100 whenever any is idle (streamingSK) */
    VptSortKey sortkey;      /* morton key: current position or estimated termination point */
    int lookahead;           /* Woodcock steps whose density fetches are issued together
                                (software pipelining, vpt_woodcock): 1, 2, 4 */
    int coop;                /* cooperative flights (beyond the thesis): when at most
                                coop of a warp's flights remain, its 32 lanes step
                                them together, 32/coop lanes per flight (kernels.cu.in,
                                extend_warp); 0: off, each lane steps its own */
    VptFlights flights;      /* beyond the thesis: sync, a warp's lanes take one
                                extension each per round, the round lasting as long
                                as its longest flight (the thesis); async, a lane
                                whose flight ended waits only for the next event
                                round (when at most threshold percent of the warp's
                                lanes are in flight; regen=thread: whenever one lane
                                is ready) and then flies its next extension
                                (kernels.cu.in, async_flights) */
    VptPathOrder paths;      /* beyond the thesis: the order in which a launch hands
                                out its paths. sample (the thesis): every pixel's
                                first sample, row by row, then every pixel's second,
                                ...; pixel: a pixel's samples one after another, so
                                the lanes of a warp start nearly the same camera ray
                                and fetch the same few texels (kernels.cu.in,
                                launch_path). Either way a path keeps its id, pixel
                                and random numbers: the same image, bit for bit up to
                                the order of the float additions into a pixel */
    int majorant;            /* the free-flight estimator (physics/vpt_tracer.h): 0 the
                                global majorant; C > 0 a majorant grid of C^3-voxel
                                cells walked by a DDA (text majorant=global|grid4|grid8|
                                grid16|grid32|grid64|grid128); -1 the global majorant
                                with empty space skipped by the distance map (skip) */
    VptDensityFormat density; /* the density texture's format (physics/density_format.h):
                                f32|f16|u16|u8 */
    int sparse;              /* the density's representation (text volume=dense|sparse):
                                0 a dense 3D texture, filtered by the hardware; 1 a
                                NanoVDB tree of the same values without its empty 8^3
                                blocks (physics/sparse_grid.h), filtered in software
                                (physics/vpt_sparse.h) */
    VptTransmittance transmittance; /* beyond the thesis: next-event estimation toward the
                                scene's sun with this shadow-ray estimator (text
                                transmittance=delta|ratio|residual); none (not written)
                                for a scene without a sun. Set by the scene
                                (vpt_config_for_scene), chosen by the tuner */
    VptNeeLights nee_lights;   /* which lights the shadow rays go to: the scene's
                                (vpt_config_for_scene), never written in the text
                                (the scene's digest tells scenes apart) and not
                                compared by vpt_config_equal; the kernels' #defines
                                (VPT_SUN, VPT_ENV_MAP) carry it into the cubin
                                cache's key */
} VptConfig;

/* naiveSK with block 256, ppt 1, maxrregcount 0, grid 0, threshold 0,
 * sortkey position. */
VptConfig vpt_config_default(void);

/* Parses text into *out; on error names the offending field or value and
 * lists what is allowed. Does not check cross-field constraints.
 *
 * Grammar: [NAME ","] KEY "=" VALUE {"," KEY "=" VALUE}, no whitespace. NAME
 * (case-insensitive) is a thesis variant: naiveSK, naiveMK, regenerationSK
 * (= regenerationSK-thread, the thesis' default), regenerationSK-thread,
 * regenerationSK-warp, regenerationSK-block, streamingSK, streamingMK,
 * streamingSK-morton (the thesis' "streamingSK (sorting)": block regeneration
 * with Morton reordering), sortingSK. It sets regen, reorder and kernels; the
 * pairs that follow override any field. Fields not given keep their
 * vpt_config_default values. Unknown keys, values outside the domains below
 * and a key given twice are errors. *out is written only on success.
 *
 * Domains: regen none|thread|warp|block|device; reorder
 * none|compact|morton|morton_delayed; kernels single|multi; maxrregcount 0 or
 * 24..255; ppt 1|2|4; block a multiple of 32 in 32..1024; grid 0..64;
 * threshold 0..100; sortkey position|termination; lookahead 1|2|4; coop
 * 0|1|2|4|8|16 (a divisor of 32: lanes per flight); flights sync|async; paths
 * sample|pixel; majorant
 * global|grid4|...|grid128; density f32|f16|u16|u8; volume
 * dense|sparse; transmittance none|delta|ratio|residual. */
int vpt_config_parse(const char *text, VptConfig *out);

/* Canonical form into buf (VPT_CONFIG_STR_MAX bytes are always enough). */
#define VPT_CONFIG_STR_MAX 256
void vpt_config_format(const VptConfig *c, char *buf, size_t size);

/* Checks the rules a config must obey before compiling; on violation returns
 * -1 with a message naming the rule and the offending values, e.g.
 * "reorder=compact needs regen=block with kernels=single (got regen=warp)".
 * First every field must lie in its domain (a VptConfig may be built by hand),
 * then, in this order:
 *   1. regen=device needs kernels=multi (device-wide regeneration is a
 *      host-driven loop of kernels);
 *   2. kernels=multi allows regen none|device only;
 *   3. kernels=multi allows reorder none|compact only;
 *   4. with kernels=multi, regen=device and reorder=compact go together
 *      (streamingMK; naiveMK is none/none);
 *   5. reorder compact|morton|morton_delayed with kernels=single needs
 *      regen=block (the block-wide scan/sort is the regeneration's barrier);
 *   6. threshold > 0 needs regen warp|block (thread regeneration has no group
 *      to wait for, the others none at all);
 *   7. sortkey=termination needs reorder morton|morton_delayed;
 *   8. grid > 0 needs a persistent kernel (regen thread|warp|block): other
 *      schedules launch one thread per path (or per path slot);
 *   9. maxrregcount > 0: a block of `block` threads at maxrregcount registers
 *      must fit one SM's register file of VPT_SM_REGISTERS, counting the
 *      allocation granularity (registers per thread rounded up to
 *      VPT_REG_ALLOC_UNIT). A budget no block could hold describes no kernel
 *      the harness could launch at that budget; whether the compiled kernel
 *      fits is the harness' (launch_limits) question, asked with the real
 *      register count;
 *  10. reorder != none: ppt * block <= VPT_MAX_PATH_SLOTS, the number of path
 *      slots the block-wide scan/sort keeps in shared memory. Implied by the
 *      domains today (4 * 1024); kept so that widening a domain cannot make
 *      the bound silently false;
 *  11. flights=async needs regen thread|warp (a lane takes its own next
 *      path; block and device regeneration are barriers of whole rounds),
 *      coop=0 (cooperative flights share a round's last flights) and ppt=1
 *      (a lane flies one path).
 * ppt > 1 with reorder != none is allowed. */
#define VPT_SM_REGISTERS 65536
#define VPT_REG_ALLOC_UNIT 8
#define VPT_MAX_PATH_SLOTS 4096
int vpt_config_check(const VptConfig *c);

/* The majorants a config may name (VptConfig.majorant), in order: 0
 * (global), then the grids' C (4 .. 128; large cells pay on large volumes,
 * where a walk through many small cells costs more than the steps it
 * saves), then -1 (skip); returns the count. */
#define VPT_MAJORANT_COUNT 8
int vpt_majorant_cells(const int **cells);
/* (vpt_majorant_grid_cell and vpt_majorant_skips, physics/majorant_grid.h,
 * read a majorant's grid and kind.) */

/* "global", "grid4", ... for a majorant cell size ("?" for none of them);
 * "f32", ... for a density format. */
const char *vpt_majorant_name(int cell);
const char *vpt_density_name(VptDensityFormat f);
/* "dense" or "sparse" for VptConfig.sparse 0 or 1. */
const char *vpt_volume_name(int sparse);

/* The thesis' name of a config's schedule ("streamingSK", "regenerationSK-warp",
 * ...) or "custom". */
const char *vpt_config_schedule_name(const VptConfig *c);

/* The thesis' named variants with the thesis' settings, for bench --thesis:
 * fills up to max configs and returns how many. */
int vpt_config_thesis_set(VptConfig *out, int max);

/* A config as it renders a scene with or without a sun and an environment
 * map (each 1 or 0): with either, a config that names no transmittance
 * estimator gets ratio tracking (VPT_TRANSMITTANCE_DEFAULT) and nee_lights
 * names the lights; without, the estimator is dropped (a kernel with shadow
 * rays toward no light would only cost). */
#define VPT_TRANSMITTANCE_DEFAULT VPT_TRANSMITTANCE_RATIO
void vpt_config_for_scene(VptConfig *c, int sun, int env_map);
const char *vpt_transmittance_name(VptTransmittance t);

/* 1 when every field is equal, else 0. */
int vpt_config_equal(const VptConfig *a, const VptConfig *b);

/* A schedule is the (regen, reorder, kernels) triple. Every triple that passes
 * vpt_config_check is one of the thesis' nine named schedules, listed in this
 * fixed order: naiveSK, naiveMK, regenerationSK-thread, regenerationSK-warp,
 * regenerationSK-block, streamingSK, streamingMK, streamingSK-morton,
 * sortingSK. The table is static; *out points into it. */
typedef struct {
    const char *name;
    VptRegen regen;
    VptReorder reorder;
    VptKernels kernels;
    int threshold;   /* the thesis' regeneration point: 0 (all idle) for the
                        regeneration schedules, 100 (every extension, algorithm 5)
                        for the streaming and sorting ones */
} VptSchedule;
#define VPT_SCHEDULE_COUNT 9
int vpt_config_schedules(const VptSchedule **out);
/* Index of c's schedule in that table, or -1 for a triple that is none. */
int vpt_config_schedule_index(const VptConfig *c);

/* 1 for persistent kernels (regen thread, warp or block), which take grid. */
int vpt_config_is_persistent(const VptConfig *c);

/* The canonical spelling of each enum value ("block", "morton_delayed", ...),
 * or "?" for a value outside the enum. */
const char *vpt_regen_name(VptRegen r);
const char *vpt_reorder_name(VptReorder r);
const char *vpt_kernels_name(VptKernels k);
const char *vpt_sortkey_name(VptSortKey k);
const char *vpt_flights_name(VptFlights f);
const char *vpt_paths_name(VptPathOrder o);

#endif
