/* NanoVDB float grids: build from dense, check, densify (sparse_grid.h). */
#include "physics/sparse_grid.h"

#include "base/error.h"
#include "physics/vpt_physics.h"
#include "physics/vpt_sparse.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ layout */

#define T_FLOAT PNANOVDB_GRID_TYPE_FLOAT
#define C(field) (pnanovdb_grid_type_constants[T_FLOAT].field)
#define NANOVDB_ALIGN 32u
/* NanoVDB's GridFlags: HasBBox, HasMinMax, IsBreadthFirst */
#define GRID_FLAGS ((1u << 1) | (1u << 2) | (1u << 5))
#define LEAF_FLAG_HAS_BBOX 2u

static void put_u32(unsigned char *b, size_t off, uint32_t v) { memcpy(b + off, &v, 4); }
static void put_i32(unsigned char *b, size_t off, int32_t v) { memcpy(b + off, &v, 4); }
static void put_u64(unsigned char *b, size_t off, uint64_t v) { memcpy(b + off, &v, 8); }
static void put_f32(unsigned char *b, size_t off, float v) { memcpy(b + off, &v, 4); }
static void put_f64(unsigned char *b, size_t off, double v) { memcpy(b + off, &v, 8); }
static void put_coord(unsigned char *b, size_t off, const int32_t c[3])
{
    for (int k = 0; k < 3; k++) put_i32(b, off + 4 * (size_t)k, c[k]);
}

static uint32_t get_u32(const unsigned char *b, uint64_t off)
{
    uint32_t v;
    memcpy(&v, b + off, 4);
    return v;
}
static uint64_t get_u64(const unsigned char *b, uint64_t off)
{
    uint64_t v;
    memcpy(&v, b + off, 8);
    return v;
}
static double get_f64(const unsigned char *b, uint64_t off)
{
    double v;
    memcpy(&v, b + off, 8);
    return v;
}

/* An active-voxel box and value range, merged up the tree. */
typedef struct {
    int32_t lo[3], hi[3];
    float vmin, vmax;
    uint64_t active;
} Stats;

static void stats_empty(Stats *s)
{
    for (int k = 0; k < 3; k++) {
        s->lo[k] = INT32_MAX;
        s->hi[k] = INT32_MIN;
    }
    s->vmin = INFINITY;
    s->vmax = -INFINITY;
    s->active = 0;
}

static void stats_merge(Stats *a, const Stats *b)
{
    for (int k = 0; k < 3; k++) {
        if (b->lo[k] < a->lo[k]) a->lo[k] = b->lo[k];
        if (b->hi[k] > a->hi[k]) a->hi[k] = b->hi[k];
    }
    if (b->vmin < a->vmin) a->vmin = b->vmin;
    if (b->vmax > a->vmax) a->vmax = b->vmax;
    a->active += b->active;
}

/* Writes a node's bbox (at 0 and 12) and min/max (at off_min, off_max). */
static void put_node_stats(unsigned char *node, const Stats *s, uint32_t off_min, uint32_t off_max)
{
    put_coord(node, 0, s->lo);
    put_coord(node, 12, s->hi);
    put_f32(node, off_min, s->active ? s->vmin : 0.0f);
    put_f32(node, off_max, s->active ? s->vmax : 0.0f);
}

/* ------------------------------------------------------------ build */

void vpt_sparse_grid_free(VptSparseGrid *g)
{
    if (!g) return;
    free(g->data);
    memset(g, 0, sizeof *g);
}

static int ceil_div(int a, int b) { return (a + b - 1) / b; }

int vpt_sparse_grid_build(const float *dense, int nx, int ny, int nz, const char *name, VptSparseGrid *out)
{
    memset(out, 0, sizeof *out);
    if (nx <= 0 || ny <= 0 || nz <= 0 || nx > 65536 || ny > 65536 || nz > 65536)
        return vpt_fail("sparse grid: %dx%dx%d is not a grid of 1 to 65536 voxels per axis", nx, ny, nz);
    const int n[3] = {nx, ny, nz};
    /* blocks per axis at each level: leaves (8), lowers (128), uppers (4096) */
    int nb[3][3];
    for (int k = 0; k < 3; k++) {
        nb[0][k] = ceil_div(n[k], 8);
        nb[1][k] = ceil_div(n[k], 128);
        nb[2][k] = ceil_div(n[k], 4096);
    }
    size_t count[3];
    for (int l = 0; l < 3; l++) count[l] = (size_t)nb[l][0] * nb[l][1] * nb[l][2];
    /* index of each block's node at each level, or -1 */
    int32_t *idx[3] = {NULL, NULL, NULL};
    for (int l = 0; l < 3; l++) {
        idx[l] = vpt_malloc(count[l] * sizeof(int32_t));
        if (!idx[l]) goto oom;
        for (size_t i = 0; i < count[l]; i++) idx[l][i] = -1;
    }
    const size_t sy = (size_t)nx, sz = (size_t)nx * ny;
    /* leaves kept: blocks with a nonzero value; then their parents */
    uint32_t kept[3] = {0, 0, 0};
    for (int bz = 0; bz < nb[0][2]; bz++)
        for (int by = 0; by < nb[0][1]; by++)
            for (int bx = 0; bx < nb[0][0]; bx++) {
                int any = 0;
                for (int z = bz * 8; z < bz * 8 + 8 && z < nz && !any; z++)
                    for (int y = by * 8; y < by * 8 + 8 && y < ny && !any; y++)
                        for (int x = bx * 8; x < bx * 8 + 8 && x < nx; x++)
                            if (dense[(size_t)x + y * sy + z * sz] != 0.0f) {
                                any = 1;
                                break;
                            }
                if (!any) continue;
                const int b[3] = {bx, by, bz};
                for (int l = 0; l < 3; l++) {
                    const int s = l == 0 ? 1 : l == 1 ? 16 : 512;
                    const size_t i = (size_t)(b[0] / s) + (size_t)nb[l][0] * ((size_t)(b[1] / s) + (size_t)nb[l][1] * (size_t)(b[2] / s));
                    if (idx[l][i] < 0) idx[l][i] = (int32_t)kept[l]++;
                }
            }
    const uint64_t off_tree = PNANOVDB_GRID_SIZE, off_root = off_tree + PNANOVDB_TREE_SIZE;
    const uint64_t off_upper = off_root + C(root_size) + (uint64_t)kept[2] * C(root_tile_size);
    const uint64_t off_lower = off_upper + (uint64_t)kept[2] * C(upper_size);
    const uint64_t off_leaf = off_lower + (uint64_t)kept[1] * C(lower_size);
    const uint64_t total = off_leaf + (uint64_t)kept[0] * C(leaf_size);
    unsigned char *b = NULL;
    if (total > SIZE_MAX - NANOVDB_ALIGN || !(b = aligned_alloc(NANOVDB_ALIGN, (size_t)total))) {
        vpt_fail("sparse grid: out of memory for %llu bytes", (unsigned long long)total);
        goto fail;
    }
    memset(b, 0, (size_t)total);
    /* bottom up: each node's statistics feed its parent's */
    Stats *st[3] = {NULL, NULL, NULL};
    for (int l = 0; l < 3; l++) {
        st[l] = vpt_malloc((kept[l] ? kept[l] : 1) * sizeof(Stats));
        if (!st[l]) {
            for (int m = 0; m < l; m++) free(st[m]);
            free(b);
            goto oom;
        }
        for (uint32_t i = 0; i < kept[l]; i++) stats_empty(&st[l][i]);
    }
    for (int bz = 0; bz < nb[0][2]; bz++)
        for (int by = 0; by < nb[0][1]; by++)
            for (int bx = 0; bx < nb[0][0]; bx++) {
                const int32_t li = idx[0][(size_t)bx + (size_t)nb[0][0] * ((size_t)by + (size_t)nb[0][1] * bz)];
                if (li < 0) continue;
                unsigned char *leaf = b + off_leaf + (uint64_t)li * C(leaf_size);
                Stats *s = &st[0][li];
                for (int z = 0; z < 8; z++)
                    for (int y = 0; y < 8; y++)
                        for (int x = 0; x < 8; x++) {
                            const int gx = bx * 8 + x, gy = by * 8 + y, gz = bz * 8 + z;
                            const float v = gx < nx && gy < ny && gz < nz ? dense[(size_t)gx + gy * sy + gz * sz] : 0.0f;
                            const uint32_t o = ((uint32_t)x << 6) | ((uint32_t)y << 3) | (uint32_t)z;
                            put_f32(leaf, C(leaf_off_table) + 4 * o, v);
                            if (v == 0.0f) continue;
                            leaf[PNANOVDB_LEAF_OFF_VALUE_MASK + 4 * (o >> 5) + ((o & 31) >> 3)] |= (unsigned char)(1u << (o & 7));
                            const int32_t c[3] = {gx, gy, gz};
                            Stats one = {{c[0], c[1], c[2]}, {c[0], c[1], c[2]}, v, v, 1};
                            stats_merge(s, &one);
                        }
                put_node_stats(leaf, s, C(leaf_off_min), C(leaf_off_max));
                /* a leaf stores its active box as min and max - min (bytes) */
                uint32_t dif = 0;
                for (int k = 0; k < 3; k++) dif |= (uint32_t)(s->hi[k] - s->lo[k]) << (8 * k);
                put_u32(leaf, PNANOVDB_LEAF_OFF_BBOX_DIF_AND_FLAGS, dif | LEAF_FLAG_HAS_BBOX << 24);
            }
    /* lowers and uppers: child masks, child offsets, statistics */
    for (int l = 1; l < 3; l++) {
        const int ratio = l == 1 ? 16 : 32, shift = l == 1 ? 4 : 5;
        const uint64_t off_self = l == 1 ? off_lower : off_upper, off_child = l == 1 ? off_leaf : off_lower;
        const uint32_t size_self = l == 1 ? C(lower_size) : C(upper_size), size_child = l == 1 ? C(leaf_size) : C(lower_size);
        const uint32_t table = l == 1 ? C(lower_off_table) : C(upper_off_table);
        const uint32_t mask_off = l == 1 ? PNANOVDB_LOWER_OFF_CHILD_MASK : PNANOVDB_UPPER_OFF_CHILD_MASK;
        for (int cz = 0; cz < nb[l - 1][2]; cz++)
            for (int cy = 0; cy < nb[l - 1][1]; cy++)
                for (int cx = 0; cx < nb[l - 1][0]; cx++) {
                    const int32_t ci = idx[l - 1][(size_t)cx + (size_t)nb[l - 1][0] * ((size_t)cy + (size_t)nb[l - 1][1] * cz)];
                    if (ci < 0) continue;
                    const int px = cx / ratio, py = cy / ratio, pz = cz / ratio;
                    const int32_t pi = idx[l][(size_t)px + (size_t)nb[l][0] * ((size_t)py + (size_t)nb[l][1] * pz)];
                    unsigned char *node = b + off_self + (uint64_t)pi * size_self;
                    const uint32_t o = ((uint32_t)(cx % ratio) << (2 * shift)) | ((uint32_t)(cy % ratio) << shift) |
                                       (uint32_t)(cz % ratio);
                    node[mask_off + 4 * (o >> 5) + ((o & 31) >> 3)] |= (unsigned char)(1u << (o & 7));
                    const uint64_t child = off_child + (uint64_t)ci * size_child, self = off_self + (uint64_t)pi * size_self;
                    put_u64(node, table + (uint64_t)C(table_stride) * o, child - self);
                    stats_merge(&st[l][pi], &st[l - 1][ci]);
                }
        for (uint32_t i = 0; i < kept[l]; i++)
            put_node_stats(b + off_self + (uint64_t)i * size_self, &st[l][i], l == 1 ? C(lower_off_min) : C(upper_off_min),
                           l == 1 ? C(lower_off_max) : C(upper_off_max));
    }
    /* the root: one tile per upper node, keyed by its origin */
    Stats all;
    stats_empty(&all);
    unsigned char *root = b + off_root;
    put_u32(root, PNANOVDB_ROOT_OFF_TABLE_SIZE, kept[2]);
    for (int uz = 0; uz < nb[2][2]; uz++)
        for (int uy = 0; uy < nb[2][1]; uy++)
            for (int ux = 0; ux < nb[2][0]; ux++) {
                const int32_t ui = idx[2][(size_t)ux + (size_t)nb[2][0] * ((size_t)uy + (size_t)nb[2][1] * uz)];
                if (ui < 0) continue;
                unsigned char *tile = root + C(root_size) + (uint64_t)ui * C(root_tile_size);
                const pnanovdb_coord_t origin = {ux * 4096, uy * 4096, uz * 4096};
                put_u64(tile, PNANOVDB_ROOT_TILE_OFF_KEY, pnanovdb_coord_to_key(&origin));
                put_u64(tile, PNANOVDB_ROOT_TILE_OFF_CHILD, off_upper + (uint64_t)ui * C(upper_size) - off_root);
                stats_merge(&all, &st[2][ui]);
            }
    put_node_stats(root, &all, C(root_off_min), C(root_off_max));
    /* root background (0), average and deviation stay 0 */
    unsigned char *tree = b + off_tree;
    put_u64(tree, PNANOVDB_TREE_OFF_NODE_OFFSET_LEAF, kept[0] ? off_leaf - off_tree : 0);
    put_u64(tree, PNANOVDB_TREE_OFF_NODE_OFFSET_LOWER, kept[1] ? off_lower - off_tree : 0);
    put_u64(tree, PNANOVDB_TREE_OFF_NODE_OFFSET_UPPER, kept[2] ? off_upper - off_tree : 0);
    put_u64(tree, PNANOVDB_TREE_OFF_NODE_OFFSET_ROOT, off_root - off_tree);
    put_u32(tree, PNANOVDB_TREE_OFF_NODE_COUNT_LEAF, kept[0]);
    put_u32(tree, PNANOVDB_TREE_OFF_NODE_COUNT_LOWER, kept[1]);
    put_u32(tree, PNANOVDB_TREE_OFF_NODE_COUNT_UPPER, kept[2]);
    put_u64(tree, PNANOVDB_TREE_OFF_VOXEL_COUNT, all.active);
    /* the grid: identity map (index = world), voxel size 1, a fog volume */
    put_u64(b, PNANOVDB_GRID_OFF_MAGIC, PNANOVDB_MAGIC_NUMBER);
    put_u64(b, PNANOVDB_GRID_OFF_CHECKSUM, ~(uint64_t)0); /* NanoVDB's "no checksum" */
    put_u32(b, PNANOVDB_GRID_OFF_VERSION,
            (PNANOVDB_MAJOR_VERSION_NUMBER << 21) | (PNANOVDB_MINOR_VERSION_NUMBER << 10) | PNANOVDB_PATCH_VERSION_NUMBER);
    put_u32(b, PNANOVDB_GRID_OFF_FLAGS, GRID_FLAGS);
    put_u32(b, PNANOVDB_GRID_OFF_GRID_COUNT, 1);
    put_u64(b, PNANOVDB_GRID_OFF_GRID_SIZE, total);
    snprintf((char *)b + PNANOVDB_GRID_OFF_GRID_NAME, 256, "%s", name ? name : "density");
    for (int k = 0; k < 3; k++) {
        put_f32(b, PNANOVDB_GRID_OFF_MAP + PNANOVDB_MAP_OFF_MATF + 16 * (size_t)k, 1.0f);
        put_f32(b, PNANOVDB_GRID_OFF_MAP + PNANOVDB_MAP_OFF_INVMATF + 16 * (size_t)k, 1.0f);
        put_f64(b, PNANOVDB_GRID_OFF_MAP + PNANOVDB_MAP_OFF_MATD + 32 * (size_t)k, 1.0);
        put_f64(b, PNANOVDB_GRID_OFF_MAP + PNANOVDB_MAP_OFF_INVMATD + 32 * (size_t)k, 1.0);
        put_f64(b, PNANOVDB_GRID_OFF_VOXEL_SIZE + 8 * (size_t)k, 1.0);
        put_f64(b, PNANOVDB_GRID_OFF_WORLD_BBOX + 8 * (size_t)k, all.active ? (double)all.lo[k] : 0.0);
        put_f64(b, PNANOVDB_GRID_OFF_WORLD_BBOX + 24 + 8 * (size_t)k, all.active ? (double)all.hi[k] + 1.0 : 0.0);
    }
    put_f32(b, PNANOVDB_GRID_OFF_MAP + PNANOVDB_MAP_OFF_TAPERF, 1.0f);
    put_f64(b, PNANOVDB_GRID_OFF_MAP + PNANOVDB_MAP_OFF_TAPERD, 1.0);
    put_u32(b, PNANOVDB_GRID_OFF_GRID_CLASS, PNANOVDB_GRID_CLASS_FOG_VOLUME);
    put_u32(b, PNANOVDB_GRID_OFF_GRID_TYPE, T_FLOAT);

    out->data = (uint32_t *)b;
    out->size = (size_t)total;
    out->dims[0] = nx;
    out->dims[1] = ny;
    out->dims[2] = nz;
    out->leaves = kept[0];
    out->lowers = kept[1];
    out->uppers = kept[2];
    out->empty_fraction = 1.0 - (double)kept[0] / (double)count[0];
    for (int l = 0; l < 3; l++) {
        free(st[l]);
        free(idx[l]);
    }
    return 0;
oom:
    vpt_error_prefix("sparse grid of %dx%dx%d voxels", nx, ny, nz);
fail:
    for (int l = 0; l < 3; l++) free(idx[l]);
    return -1;
}

/* ------------------------------------------------------------ check */

/* A node array of `count` nodes of `size` bytes at tree offset `off`. */
typedef struct {
    uint64_t base, count, size;
    unsigned char *seen; /* one flag a node: each is some parent's child once */
} NodeArray;

static int node_array(const char *name, const char *what, uint64_t tree, uint64_t off, uint64_t count, uint64_t size,
                      uint64_t grid_size, NodeArray *a)
{
    a->seen = NULL;
    a->count = count;
    a->size = size;
    a->base = 0;
    /* a level without nodes states offset 0; any other offset, even of an
     * empty level, must lie in the grid, aligned: NanoVDB's node manager
     * forms the level's first-node pointer from it whatever the count */
    if (count == 0 && off == 0) return 0;
    if (off > grid_size || tree > grid_size - off)
        return vpt_fail("%s: the %s nodes' offset %llu lies outside the grid's %llu bytes", name, what,
                        (unsigned long long)off, (unsigned long long)grid_size);
    a->base = tree + off;
    if (a->base % NANOVDB_ALIGN)
        return vpt_fail("%s: the %s nodes start at byte %llu, not a multiple of %u", name, what,
                        (unsigned long long)a->base, NANOVDB_ALIGN);
    if (count == 0) return 0;
    if (count > (grid_size - a->base) / size)
        return vpt_fail("%s: %llu %s nodes of %llu bytes do not fit in the grid's %llu bytes from byte %llu", name,
                        (unsigned long long)count, what, (unsigned long long)size, (unsigned long long)grid_size,
                        (unsigned long long)a->base);
    a->seen = vpt_calloc((size_t)count, 1);
    return a->seen ? 0 : -1;
}

/* The node a child offset names: parent + off must be the start of a node of
 * the array not named before. */
static int child_node(const char *name, const char *what, uint64_t parent, uint64_t off, NodeArray *a, uint64_t *node)
{
    const uint64_t at = parent + off; /* wraps for negative offsets, as PNanoVDB's address arithmetic does */
    if (a->count == 0 || at < a->base || (at - a->base) % a->size || (at - a->base) / a->size >= a->count)
        return vpt_fail("%s: a child offset of %lld from byte %llu does not name one of the %llu %s nodes", name,
                        (long long)off, (unsigned long long)parent, (unsigned long long)a->count, what);
    const uint64_t k = (at - a->base) / a->size;
    if (a->seen[k]) return vpt_fail("%s: %s node %llu is the child of two parents", name, what, (unsigned long long)k);
    a->seen[k] = 1;
    *node = at;
    return 0;
}

/* Every set bit of a child mask of `bits` bits at mask_off of node, with
 * its table entry (stride bytes at table_off) naming a node of `child`. */
static int check_children(const char *name, const char *what, const unsigned char *b, uint64_t node, uint32_t mask_off,
                          uint32_t bits, uint32_t table_off, uint32_t stride, NodeArray *child, uint64_t *found)
{
    for (uint32_t w = 0; w < bits / 32; w++) {
        uint32_t m = get_u32(b, node + mask_off + 4 * (uint64_t)w);
        while (m) {
            const uint32_t bit = (uint32_t)__builtin_ctz(m), n = 32 * w + bit;
            m &= m - 1;
            uint64_t at;
            if (child_node(name, what, node, get_u64(b, node + table_off + (uint64_t)stride * n), child, &at)) return -1;
            ++*found;
        }
    }
    return 0;
}

int vpt_sparse_grid_check(const char *name, const void *buf, size_t size, VptSparseGridInfo *info)
{
    const unsigned char *b = buf;
    memset(info, 0, sizeof *info);
    if (size < PNANOVDB_GRID_SIZE + PNANOVDB_TREE_SIZE)
        return vpt_fail("%s: %zu bytes cannot hold a NanoVDB grid (at least %d)", name, size,
                        PNANOVDB_GRID_SIZE + PNANOVDB_TREE_SIZE);
    if (get_u64(b, PNANOVDB_GRID_OFF_MAGIC) != PNANOVDB_MAGIC_NUMBER)
        return vpt_fail("%s: not a NanoVDB grid (bad magic number)", name);
    const uint32_t version = get_u32(b, PNANOVDB_GRID_OFF_VERSION);
    if (pnanovdb_version_get_major(version) != PNANOVDB_MAJOR_VERSION_NUMBER)
        return vpt_fail("%s: NanoVDB version %u.%u.%u; this build reads version %d grids", name,
                        pnanovdb_version_get_major(version), pnanovdb_version_get_minor(version),
                        pnanovdb_version_get_patch(version), PNANOVDB_MAJOR_VERSION_NUMBER);
    const uint32_t type = get_u32(b, PNANOVDB_GRID_OFF_GRID_TYPE);
    if (type == 0 || type >= PNANOVDB_GRID_TYPE_END || pnanovdb_grid_type_leaf_type[type] >= PNANOVDB_LEAF_TYPE_FP)
        return vpt_fail("%s: grid type %u is not one vptune reads (float, Vec3f and other fixed-size values; not "
                        "quantized or index grids)",
                        name, type);
    const uint64_t gsize = get_u64(b, PNANOVDB_GRID_OFF_GRID_SIZE);
    if (gsize > size || gsize < PNANOVDB_GRID_SIZE + PNANOVDB_TREE_SIZE)
        return vpt_fail("%s: the grid states %llu bytes, but %zu are there", name, (unsigned long long)gsize, size);
    const pnanovdb_grid_type_constants_t *c = &pnanovdb_grid_type_constants[type];
    const uint64_t tree = PNANOVDB_GRID_SIZE;
    const uint64_t root_off = get_u64(b, tree + PNANOVDB_TREE_OFF_NODE_OFFSET_ROOT);
    if (root_off > gsize - tree || gsize - tree - root_off < c->root_size)
        return vpt_fail("%s: the root's offset %llu lies outside the grid's %llu bytes", name, (unsigned long long)root_off,
                        (unsigned long long)gsize);
    /* NanoVDB lays every node out on a 32-byte boundary, and its C++ types
     * (the checksum's reader) are declared with that alignment */
    if ((tree + root_off) % NANOVDB_ALIGN)
        return vpt_fail("%s: the root starts at byte %llu, not a multiple of %u", name,
                        (unsigned long long)(tree + root_off), NANOVDB_ALIGN);
    const uint64_t root = tree + root_off;
    const uint32_t tiles = get_u32(b, root + PNANOVDB_ROOT_OFF_TABLE_SIZE);
    if (tiles > (gsize - root - c->root_size) / c->root_tile_size)
        return vpt_fail("%s: the root's %u tiles do not fit in the grid's %llu bytes", name, tiles, (unsigned long long)gsize);
    NodeArray up, lo, lf;
    memset(&lo, 0, sizeof lo);
    memset(&lf, 0, sizeof lf);
    int rc = -1;
    uint64_t found[3] = {0, 0, 0};
    if (node_array(name, "upper", tree, get_u64(b, tree + PNANOVDB_TREE_OFF_NODE_OFFSET_UPPER),
                   get_u32(b, tree + PNANOVDB_TREE_OFF_NODE_COUNT_UPPER), c->upper_size, gsize, &up) ||
        node_array(name, "lower", tree, get_u64(b, tree + PNANOVDB_TREE_OFF_NODE_OFFSET_LOWER),
                   get_u32(b, tree + PNANOVDB_TREE_OFF_NODE_COUNT_LOWER), c->lower_size, gsize, &lo) ||
        node_array(name, "leaf", tree, get_u64(b, tree + PNANOVDB_TREE_OFF_NODE_OFFSET_LEAF),
                   get_u32(b, tree + PNANOVDB_TREE_OFF_NODE_COUNT_LEAF), c->leaf_size, gsize, &lf))
        goto done;
    for (uint32_t t = 0; t < tiles; t++) {
        const uint64_t tile = root + c->root_size + (uint64_t)t * c->root_tile_size;
        const uint64_t child = get_u64(b, tile + PNANOVDB_ROOT_TILE_OFF_CHILD);
        if (child == 0) continue; /* a constant tile */
        uint64_t u = 0;
        if (child_node(name, "upper", root, child, &up, &u)) goto done;
        found[0]++;
        if (check_children(name, "lower", b, u, PNANOVDB_UPPER_OFF_CHILD_MASK, PNANOVDB_UPPER_TABLE_COUNT,
                           c->upper_off_table, c->table_stride, &lo, &found[1]))
            goto done;
    }
    for (uint64_t k = 0; k < lo.count; k++)
        if (lo.seen[k] && check_children(name, "leaf", b, lo.base + k * lo.size, PNANOVDB_LOWER_OFF_CHILD_MASK,
                                         PNANOVDB_LOWER_TABLE_COUNT, c->lower_off_table, c->table_stride, &lf, &found[2]))
            goto done;
    if (found[0] != up.count || found[1] != lo.count || found[2] != lf.count) {
        vpt_fail("%s: the tree holds %llu upper, %llu lower and %llu leaf nodes, but its counts say %llu, %llu and %llu",
                 name, (unsigned long long)found[0], (unsigned long long)found[1], (unsigned long long)found[2],
                 (unsigned long long)up.count, (unsigned long long)lo.count, (unsigned long long)lf.count);
        goto done;
    }
    info->grid_type = type;
    info->grid_size = gsize;
    memcpy(info->name, b + PNANOVDB_GRID_OFF_GRID_NAME, 256);
    info->name[256] = '\0';
    for (int k = 0; k < 3; k++) {
        info->bbox_min[k] = (int32_t)get_u32(b, root + PNANOVDB_ROOT_OFF_BBOX_MIN + 4 * (uint64_t)k);
        info->bbox_max[k] = (int32_t)get_u32(b, root + PNANOVDB_ROOT_OFF_BBOX_MAX + 4 * (uint64_t)k);
        info->voxel_size[k] = get_f64(b, PNANOVDB_GRID_OFF_VOXEL_SIZE + 8 * (uint64_t)k);
        info->map_translation[k] = get_f64(b, PNANOVDB_GRID_OFF_MAP + PNANOVDB_MAP_OFF_VECD + 8 * (uint64_t)k);
    }
    for (int k = 0; k < 9; k++) info->map_matrix[k] = get_f64(b, PNANOVDB_GRID_OFF_MAP + PNANOVDB_MAP_OFF_MATD + 8 * (uint64_t)k);
    info->uppers = (uint32_t)up.count;
    info->lowers = (uint32_t)lo.count;
    info->leaves = (uint32_t)lf.count;
    info->root_tiles = tiles;
    rc = 0;
done:
    free(up.seen);
    free(lo.seen);
    free(lf.seen);
    return rc;
}

/* ------------------------------------------------------------ densify */

static int densify(const char *name, const void *buf, uint32_t type, const int lo[3], const int dims[3], float *out)
{
    pnanovdb_buf_t pb = pnanovdb_make_buf((uint32_t *)buf, 0);
    pnanovdb_readaccessor_t acc;
    pnanovdb_readaccessor_init(&acc, vpt_sparse_root(pb));
    const int ch = type == PNANOVDB_GRID_TYPE_VEC3F ? 3 : 1;
    size_t i = 0;
    for (int z = 0; z < dims[2]; z++)
        for (int y = 0; y < dims[1]; y++)
            for (int x = 0; x < dims[0]; x++) {
                pnanovdb_coord_t ijk = {lo[0] + x, lo[1] + y, lo[2] + z};
                const pnanovdb_address_t a = pnanovdb_readaccessor_get_value_address(type, pb, &acc, &ijk);
                for (int k = 0; k < ch; k++) {
                    const float v = pnanovdb_read_float(pb, pnanovdb_address_offset(a, 4u * (uint32_t)k));
                    if (!isfinite(v))
                        return vpt_fail("%s: non-finite value %g at voxel (%d, %d, %d)", name, v, ijk.x, ijk.y, ijk.z);
                    out[i++] = v;
                }
            }
    return 0;
}

int vpt_sparse_grid_densify(const char *name, const void *buf, const int lo[3], const int dims[3], float *out)
{
    return densify(name, buf, PNANOVDB_GRID_TYPE_FLOAT, lo, dims, out);
}

int vpt_sparse_grid_densify_vec3(const char *name, const void *buf, const int lo[3], const int dims[3], float *out)
{
    return densify(name, buf, PNANOVDB_GRID_TYPE_VEC3F, lo, dims, out);
}
