/* Writes the seed corpus of the volume_nanovdb fuzz target (make
 * fuzz-corpus): NanoVDB files laid out as nanovdb::io writes them (segment
 * header, grid metadata and name, grid buffer), every one under 4 KB.
 *
 * Why small: a grid with a single leaf carries a 270 KB upper node (a 32^3
 * table of 8-byte entries), and libFuzzer mutates and replays every input at
 * its full length; with such seeds the target ran at about 3,000 executions
 * a second. The seeds are therefore grids of root tiles only, uncompressed
 * (a few hundred bytes: every byte of the grid, the map and the root is in
 * reach of a mutation; one file adds a Vec3f "albedo" grid of tiles), and
 * the real trees (root, upper, lower and leaf nodes, built by
 * physics/sparse_grid.c) ZIP-compressed, as one grid and as two segments.
 * Usage: nanovdb_seeds DIR */
#include "physics/sparse_grid.h"
#include "physics/vpt_sparse.h" /* PNanoVDB's layout constants */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define C(type, field) (pnanovdb_grid_type_constants[type].field)

static void segment(FILE *fp, const VptSparseGrid *g, uint32_t type, const char *name, int zip)
{
    const uint64_t magic = 0x304244566f6e614eULL;
    const uint32_t version = (32u << 21) | (4u << 10) | 2u;
    const uint16_t count = 1, codec = (uint16_t)zip;
    fwrite(&magic, 8, 1, fp);
    fwrite(&version, 4, 1, fp);
    fwrite(&count, 2, 1, fp);
    fwrite(&codec, 2, 1, fp);
    unsigned char meta[176] = {0};
    const uint64_t gs = g->size;
    const uint32_t cls = 2, nsz = (uint32_t)strlen(name) + 1;
    memcpy(meta, &gs, 8);
    memcpy(meta + 32, &type, 4);
    memcpy(meta + 36, &cls, 4);
    memcpy(meta + 136, &nsz, 4);
    memcpy(meta + 168, &codec, 2);
    uLongf n = compressBound(g->size);
    unsigned char *z = NULL;
    if (zip && (!(z = malloc(n)) || compress2(z, &n, (const Bytef *)g->data, g->size, 9) != Z_OK)) exit(1);
    /* the grid's bytes in the file: itself, or the 8-byte count and the block */
    const uint64_t in_file = zip ? 8 + (uint64_t)n : g->size;
    memcpy(meta + 8, &in_file, 8);
    fwrite(meta, 1, sizeof meta, fp);
    fwrite(name, 1, nsz, fp);
    if (!zip) {
        fwrite(g->data, 1, g->size, fp);
        return;
    }
    const uint64_t n64 = n;
    fwrite(&n64, 8, 1, fp);
    fwrite(z, 1, n, fp);
    free(z);
}

/* A grid of value type `type` (float or Vec3f: ch floats a value) of `n`
 * constant root tiles and no nodes: tile t (origin (4096 t, 0, 0)) holds
 * value[ch t ...], and the active box runs from x = 4090 across the tiles'
 * boundary, so that the densified volume (12x4x3) reads both. Made from the
 * builder's empty float grid (its grid and tree headers, retyped and
 * renamed) with a root of this type and the tiles appended. */
static void tile_grid(uint32_t type, const char *name, const float *value, int ch, int n, VptSparseGrid *out)
{
    VptSparseGrid empty;
    const float zero = 0.0f;
    if (vpt_sparse_grid_build(&zero, 1, 1, 1, name, &empty)) exit(1);
    const size_t head = PNANOVDB_GRID_SIZE + PNANOVDB_TREE_SIZE;
    const size_t size = head + C(type, root_size) + (size_t)n * C(type, root_tile_size);
    unsigned char *b = aligned_alloc(32, (size + 31) / 32 * 32);
    if (!b) exit(1);
    memset(b, 0, size);
    memcpy(b, empty.data, head);
    vpt_sparse_grid_free(&empty);
    const uint64_t size64 = size;
    memcpy(b + PNANOVDB_GRID_OFF_GRID_SIZE, &size64, 8);
    memcpy(b + PNANOVDB_GRID_OFF_GRID_TYPE, &type, 4);
    unsigned char *root = b + head;
    const int32_t box[6] = {4090, 0, 0, 4096 + 5, 3, 2};
    memcpy(root + PNANOVDB_ROOT_OFF_BBOX_MIN, box, 12);
    memcpy(root + PNANOVDB_ROOT_OFF_BBOX_MAX, box + 3, 12);
    const uint32_t tiles = (uint32_t)n;
    memcpy(root + PNANOVDB_ROOT_OFF_TABLE_SIZE, &tiles, 4);
    for (int t = 0; t < n; t++) {
        unsigned char *tile = root + C(type, root_size) + (size_t)t * C(type, root_tile_size);
        const pnanovdb_coord_t origin = {4096 * t, 0, 0};
        const uint64_t key = pnanovdb_coord_to_key(&origin), child = 0;
        const uint32_t active = 1;
        memcpy(tile + PNANOVDB_ROOT_TILE_OFF_KEY, &key, 8);
        memcpy(tile + PNANOVDB_ROOT_TILE_OFF_CHILD, &child, 8);
        memcpy(tile + PNANOVDB_ROOT_TILE_OFF_STATE, &active, 4);
        memcpy(tile + C(type, root_tile_off_value), &value[ch * t], 4 * (size_t)ch);
    }
    memset(out, 0, sizeof *out);
    out->data = (uint32_t *)b;
    out->size = size;
}

static FILE *open_seed(const char *dir, const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *fp = fopen(path, "wb");
    if (!fp) exit(1);
    return fp;
}

int main(int argc, char **argv)
{
    if (argc != 2) return 2;
    const int n = 12;
    float d[12 * 12 * 12];
    for (int i = 0; i < n * n * n; i++) {
        const int x = i % n, y = i / n % n, z = i / (n * n);
        const int r2 = (x - 3) * (x - 3) + (y - 4) * (y - 4) + (z - 5) * (z - 5);
        d[i] = r2 < 10 ? 1.0f - (float)r2 / 10.0f : 0.0f;
    }
    VptSparseGrid cloud, tiles;
    if (vpt_sparse_grid_build(d, n, n, n, "density", &cloud)) return 1;
    const float values[2] = {0.25f, 1.0f}, colours[6] = {0.9f, 0.5f, 0.1f, 0.2f, 0.4f, 0.8f};
    VptSparseGrid albedo;
    const uint32_t f = PNANOVDB_GRID_TYPE_FLOAT, v3 = PNANOVDB_GRID_TYPE_VEC3F;
    tile_grid(f, "density", values, 1, 2, &tiles);
    tile_grid(v3, "albedo", colours, 3, 2, &albedo);
    FILE *fp = open_seed(argv[1], "tiles.nvdb");
    segment(fp, &tiles, f, "density", 0);
    if (fclose(fp)) return 1;
    fp = open_seed(argv[1], "tiles_two_segments.nvdb");
    segment(fp, &tiles, f, "temperature", 0);
    segment(fp, &tiles, f, "density", 0);
    if (fclose(fp)) return 1;
    fp = open_seed(argv[1], "tiles_albedo.nvdb");
    segment(fp, &tiles, f, "density", 0);
    segment(fp, &albedo, v3, "albedo", 0);
    if (fclose(fp)) return 1;
    fp = open_seed(argv[1], "cloud_zip.nvdb");
    segment(fp, &cloud, f, "density", 1);
    if (fclose(fp)) return 1;
    fp = open_seed(argv[1], "two_segments.nvdb");
    segment(fp, &cloud, f, "temperature", 1);
    segment(fp, &cloud, f, "density", 1);
    if (fclose(fp)) return 1;
    vpt_sparse_grid_free(&cloud);
    free(tiles.data);
    free(albedo.data);
    return 0;
}
