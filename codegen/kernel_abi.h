/* kernel_abi.h: the binary interface between the host harness (C11) and the
 * kernels of kernels.cu.in (CUDA C++ under NVRTC). Both sides compile this
 * file, so the layouts agree by construction; device pointers and texture
 * objects travel as 64-bit integers.
 *
 * Counters are 64-bit and reduced per warp before one atomic per warp, so
 * counting costs a few instructions per extension, not per step. */
#ifndef VPT_KERNEL_ABI_H
#define VPT_KERNEL_ABI_H

#if defined(__CUDACC_RTC__)
#include "vpt_physics.h"
#else
#include "physics/vpt_physics.h"
#endif

/* Largest SM count the per-SM occupancy windows cover. */
#define VPT_MAX_SMS 512

/* Device-side statistics of one render; zeroed before the first launch. */
typedef struct {
    vpt_u64 path_head;     /* next path index to start (persistent kernels) */
    vpt_u64 rays;          /* extensions */
    vpt_u64 steps;         /* Woodcock iterations, null collisions included */
    vpt_u64 paths;         /* finished paths */
    vpt_u64 ext_lanes;     /* sum over warp-level extension rounds of active lanes */
    vpt_u64 ext_rounds;    /* warp-level extension rounds (x 32 = lane slots) */
    vpt_u64 warp_cycles;   /* sum of warp lifetimes, SM clock cycles */
    vpt_u64 sm_cycles;     /* sum over launches and SMs of the SM's busy window */
    vpt_u64 active_out;    /* multi-kernel: paths alive after the last launch */
    vpt_u64 aborted;       /* set when a kernel saw the abort flag */
} VptDevStats;

/* Per-SM busy window of one launch: first warp start and last warp end. */
typedef struct {
    vpt_u64 start, end;
} VptSmWindow;

/* Everything a launch needs; passed by value as the only kernel parameter. */
typedef struct {
    VptParams P;
    vpt_u64 density_tex;   /* CUtexObject: the config's density format, read as float, trilinear, normalized coords;
                              majorant=skip: two channels, the density and the distance map */
    vpt_u64 albedo_tex;    /* CUtexObject: RGBA8 unorm -> float4, trilinear */
    vpt_u64 majorant_grid; /* const float*: the majorant grid's cells (P.mg_cells), 0 without */
    vpt_u64 sparse_grid;   /* const uint32_t*: volume=sparse, the density as a NanoVDB grid
                              (physics/sparse_grid.h) of grid_n voxels; 0 without */
    int grid_n[3];         /* the density grid's voxels per axis */
    vpt_u64 image;         /* float[3 * width * height], radiance sums */
    vpt_u64 image_sq;      /* the same for the squares (naiveSK only; 0: not accumulated) */
    vpt_u64 stats;         /* VptDevStats* */
    vpt_u64 windows;       /* VptSmWindow[2][VPT_MAX_SMS], by launch parity */
    vpt_u64 abort_flag;    /* int*: nonzero asks persistent loops to stop */
    int parity;            /* which window set this launch writes */
    int fold;              /* fold the other parity's windows into sm_cycles */
    int num_sms;
    float mean_free_path;  /* 1 / (density_scale * mean density): the termination sort key */
    float voxel_uvw[3];    /* 1 / grid size per axis: one voxel in texture space */
    /* image tiling (thesis 4.1.2): this launch's paths are the tile's pixels
     * [tile_x0, tile_x0 + tile_w) x [tile_y0, tile_y0 + tile_h), every
     * sample; P.npaths counts them. tile_w == 0: the whole image, path id =
     * launch path index. A tiled path keeps its untiled id (same RNG stream,
     * same image). */
    vpt_u32 tile_x0, tile_y0, tile_w, tile_h;
    /* multi-kernel schedules */
    vpt_u64 paths_in;      /* VptPath[capacity] */
    vpt_u64 paths_out;     /* VptPath[capacity] (streamingMK) */
    vpt_u64 n_in;          /* states in paths_in to extend */
    vpt_u64 start_first;   /* vpt_mk_start: first new path index */
    vpt_u64 start_count;   /* vpt_mk_start: how many, placed at paths_in[n_in ...] */
} VptLaunch;

#endif
