/* The tuner's search space: the parameters, their domains and which
 * combinations exist, declared here once.
 *
 * Dimensions (VptDim), each with an ordered domain of values:
 *   schedule      the (regen, reorder, kernels) triple, one of the nine named
 *                 schedules of codegen/config.h (naiveSK ... sortingSK). It
 *                 is one dimension, not three, because the constraints couple
 *                 its parts so tightly that changing one alone is almost never
 *                 valid; as one categorical dimension every schedule is one
 *                 step from every other.
 *   maxrregcount  0 (compiler's choice), 32, 40, 48, 64, 80, 96, 128, 168, 255
 *   ppt           1, 2, 4
 *   block         32, 64, 128, 256, 512, 1024
 *   grid          0 (all resident blocks), 1, 2, 4, 8 blocks per SM
 *   threshold     0, 25, 50, 75, 100 percent
 *   sortkey       position, termination
 *   lookahead     1, 2, 4
 *   coop          0 (off), 2, 4, 8 cooperative flights; categorical (its
 *                 time is not unimodal in the lanes per flight)
 *   flights       sync (the thesis' rounds), async (a lane flies its next
 *                 extension without waiting for the warp's longest flight;
 *                 regen thread|warp, ppt 1, coop 0 only); categorical
 *   majorant      the free-flight estimator: global (0), or a grid of C^3-voxel
 *                 cells (4 .. 128); categorical
 *   density       the density texture's format: f32, f16, u16, u8; categorical
 * The default space (vpt_space_create) holds schedules only: its majorant
 * and density domains are {global} and {f32}, because the tune driver
 * chooses the estimator in a stage of its own (tuner/estimators.h), so
 * member numbers and neighbourhoods are those of the ten dimensions above.
 * A recorded space (vpt_space_create_from_configs) takes whatever estimators
 * its configs carry, and strategies then move in them like in any other
 * dimension: a recording drawn from the full space (schedules x estimators,
 * tools/tune-space.c) replays as one joint space.
 * The volume key (dense|sparse) is no dimension of either: a sparse
 * volume is an estimator the stage screens only when asked for.
 * The members of the space are the points of the domains' product that pass
 * vpt_config_check (so the constraints are codegen's, not restated here):
 * grid only varies for persistent kernels, threshold for warp/block
 * regeneration, sortkey for Morton reordering, and maxrregcount x block must
 * fit the register file; flights=async only with regen thread|warp, ppt 1
 * and coop 0. The default space has 353,934 members (87,291 for each coop
 * value with flights=sync, 4,770 with flights=async); with every estimator
 * the full space has 20 times as many, which is never built as a VptSpace
 * (tools/tune-space.c samples it stratum by stratum).
 *
 * Members are numbered 0..size-1 in the mixed-radix order of their domain
 * indices (schedule slowest, sortkey fastest); that order is stable for a
 * given space, and strategies refer to points by member number.
 *
 * Operators for the search strategies (neighbours, random point, mutation,
 * crossover) only ever return members. When a move lands on a non-member
 * (say, from regenerationSK-warp with threshold=50 to regenerationSK-thread),
 * it is repaired by setting the fewest of the dimensions that have an "off"
 * value (maxrregcount 0, grid 0, threshold 0, sortkey position; in a space
 * that holds flights=async also coop 0, ppt 1 and flights sync, which only
 * it constrains) to that value, never touching the dimension the move
 * changed; a move no repair rescues is dropped.
 *
 * A VptSpace is immutable after creation and restriction, so strategies may
 * share it; the caller owns it and frees it with vpt_space_destroy. */
#ifndef VPT_TUNER_SPACE_H
#define VPT_TUNER_SPACE_H

#include "codegen/config.h"
#include "tuner/rng.h"

#include <stddef.h>

typedef enum {
    VPT_DIM_SCHEDULE,
    VPT_DIM_MAXRREGCOUNT,
    VPT_DIM_PPT,
    VPT_DIM_BLOCK,
    VPT_DIM_GRID,
    VPT_DIM_THRESHOLD,
    VPT_DIM_SORTKEY,
    VPT_DIM_LOOKAHEAD,
    VPT_DIM_COOP,
    VPT_DIM_FLIGHTS,
    VPT_DIM_MAJORANT,
    VPT_DIM_DENSITY,
    VPT_DIM_COUNT
} VptDim;

/* The dimensions of the default (schedule) space: the first ten. */
#define VPT_DIM_SCHEDULE_COUNT 10
/* Strategies scale their mutation rates by the nine schedule dimensions
 * there were before flights, so that spaces keep the rates the defaults were
 * scored with (tests/fixtures/tuner: recorded spaces, flights=sync only). */
#define VPT_DIM_RATE_COUNT 9

typedef struct VptSpace VptSpace;

/* The default space above. NULL with a message on out-of-memory. */
VptSpace *vpt_space_create(void);

/* The space of a recorded run: each domain is the set of values that occur in
 * configs, and the members are exactly the configs (duplicates merged) that
 * pass vpt_config_check. Configs that fail it are left out; *rejected (may be
 * NULL) receives their number. Fails when no config is valid. */
VptSpace *vpt_space_create_from_configs(const VptConfig *configs, size_t n, size_t *rejected);

void vpt_space_destroy(VptSpace *s);

/* Narrows one dimension to the listed values, e.g. ("block", "128,256"),
 * ("schedule", "streamingSK,sortingSK"), ("sortkey", "position"),
 * ("majorant", "global,grid8"), ("density", "f32,u8"). Each value
 * must be in the dimension's current domain; members with other values leave
 * the space. Fails (space unchanged) on an unknown dimension or value, or
 * when no member would be left. */
int vpt_space_restrict(VptSpace *s, const char *dim, const char *values);

/* The same from one "DIM=V1,V2,..." text (tune and tune-space --space);
 * fails, naming the text, when it has no '=' or no dimension before it. */
int vpt_space_restrict_spec(VptSpace *s, const char *spec);

/* "schedule", "maxrregcount", ... ; vpt_space_dim_parse is its inverse. */
const char *vpt_space_dim_name(VptDim d);
int vpt_space_dim_parse(const char *name, VptDim *out);

size_t vpt_space_size(const VptSpace *s);
const VptConfig *vpt_space_point(const VptSpace *s, size_t member);
/* Member number of c, or -1 when c is not a member. */
long vpt_space_index_of(const VptSpace *s, const VptConfig *c);

int vpt_space_domain_size(const VptSpace *s, VptDim d);
/* The value at position i of d's domain: the schedule's index in
 * vpt_config_schedules() for VPT_DIM_SCHEDULE, the VptSortKey for
 * VPT_DIM_SORTKEY, the VptDensityFormat for VPT_DIM_DENSITY, the number
 * itself otherwise (majorant: 0 global, else the cell size). */
int vpt_space_domain_value(const VptSpace *s, VptDim d, int i);
/* One line per dimension, "block: 32,64,128" style, plus the member count. */
void vpt_space_describe(const VptSpace *s, char *buf, size_t size);

/* Members one step from `member`: for each dimension, the adjacent domain
 * values (the other values for the categorical schedule, sortkey, coop, flights, majorant
 * and density), each repaired as above, without duplicates and without `member` itself, in a
 * fixed order. Writes at most max member numbers and returns how many there
 * are in all (a result > max means out was too small; VPT_SPACE_MAX_NEIGHBOURS
 * always suffices). */
#define VPT_SPACE_MAX_NEIGHBOURS 64
size_t vpt_space_neighbours(const VptSpace *s, size_t member, size_t *out, size_t max);

/* The same, moving only the dimensions in `dims` (a mask of 1u << VptDim);
 * repairs may still set the "off" dimensions as above. */
#define VPT_SPACE_ALL_DIMS ((1u << VPT_DIM_COUNT) - 1)
size_t vpt_space_neighbours_in(const VptSpace *s, size_t member, unsigned dims, size_t *out, size_t max);

/* The register-cap move. A cap at or above the registers a kernel uses
 * (maxrregcount 0: no cap) does not bind: the kernel runs at the count the
 * compiler chose, and so do its neighbours' (the next caps up, or down to
 * the smallest from "no cap", which the domain's order puts beside it).
 * The caps that change anything lie below that count. From a member whose
 * cap does not bind its kernel's `registers` (its record's), the member
 * with the largest cap of the domain below that count, repaired as above;
 * -1 when the cap binds, `registers` is unknown (not > 0), no cap is below
 * it, or no member is left after repair. */
long vpt_space_register_cap(const VptSpace *s, size_t member, double registers);

/* The most registers a lane of member's kernel may hold: its maxrregcount,
 * or without one the launch bound the kernel declares (the SM's register
 * file over the block, VPT_SM_REGISTERS / block, at most
 * VPT_SPACE_MAX_REGISTERS: kernels.cu.in, VPT_KERNEL_BOUNDS). A block of
 * 1024 caps an uncapped kernel at 64 registers as surely as maxrregcount=64. */
#define VPT_SPACE_MAX_REGISTERS 255
int vpt_space_register_bound(const VptSpace *s, size_t member);

/* The cap lifted. A move that changes what a kernel holds per lane (its
 * cooperative flights, its lookahead, its estimator) is measured under the
 * register bound of the member it left; where that bound binds the new
 * kernel, the move is judged with its registers cut, and a basin two moves
 * wide (the move, then a larger cap) hides behind a slower first step. The
 * member with the cap `steps` places of the domain above member's bound
 * (step 1: the smallest cap above it), its block the one of the domain, at
 * most member's, at which an SM holds the most threads under that cap (the
 * blocks its register file holds, at most VPT_SPACE_SM_BLOCKS), the larger
 * on a tie; all else kept. -1 when the bound is the largest there is, the
 * domain has no cap that far up, or no block is left. Why not the largest
 * block that fits: a lifted cap that the SM's register file holds once per
 * block of 512 holds three blocks of 256, and the descent judges the cap
 * at the residency it is lifted to (docs/decisions/lifted-cap-residency.md).
 * VPT_SPACE_SM_BLOCKS: the fewest blocks an SM holds at once among the
 * architectures from sm_75 on (16 on sm_75 and sm_86, 32 on sm_80 and
 * sm_90), so that a small block is not credited with residency a GPU
 * cannot give it. */
#define VPT_SPACE_SM_BLOCKS 16
long vpt_space_cap_lifted(const VptSpace *s, size_t member, int steps);

/* Schedule moves that bring their dependent parameters along: for each other
 * schedule, the plain move (as vpt_space_neighbours_in with the schedule
 * dimension), and, for each of grid, threshold and sortkey that is fixed at
 * `member` (no other value is valid there, e.g. threshold under
 * regenerationSK-thread) but free to vary after the move (threshold under
 * regenerationSK-warp), the move with that dimension at each of its other
 * values. A parameter that the old schedule ignored has no value worth
 * keeping, so a move to a schedule that uses it tries them all: from
 * regenerationSK-thread, the warp schedule is tried with every threshold.
 * Without duplicates or `member`; returns the count as
 * vpt_space_neighbours does (VPT_SPACE_MAX_SCHEDULE_MOVES always suffices). */
#define VPT_SPACE_MAX_SCHEDULE_MOVES 128
size_t vpt_space_schedule_moves(const VptSpace *s, size_t member, size_t *out, size_t max);

/* The member closest to c: fewest dimensions whose value differs (a value
 * outside a domain differs from every member's). Ties are broken uniformly
 * with rng, or by the lowest member number when rng is NULL. */
long vpt_space_nearest(const VptSpace *s, const VptConfig *c, VptRng *rng);

/* A member drawn uniformly. */
size_t vpt_space_random(const VptSpace *s, VptRng *rng);

/* GA mutation: each dimension with probability rate takes another value of
 * its domain (at least one dimension changes when any can), then repair; a
 * mutation that cannot be repaired is redrawn (a few times, then a random
 * member is returned). */
size_t vpt_space_mutate(const VptSpace *s, size_t member, double rate, VptRng *rng);

/* GA uniform crossover: each dimension from a or b with equal probability,
 * then repair; when the child cannot be repaired, a or b at random. */
size_t vpt_space_crossover(const VptSpace *s, size_t a, size_t b, VptRng *rng);

#endif
