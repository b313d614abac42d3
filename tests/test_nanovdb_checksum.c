/* Every loaded byte of a .nvdb file checked: with the full checksum set by
 * NanoVDB's own code (scenes/formats/volume_nanovdb_checksum.h), every one-byte
 * corruption of a small file is refused or provably harmless (the loaded
 * volume identical to the original's: dims, voxel size, origin, every value
 * and albedo), over every byte position and every other byte value; on a
 * file with a real tree (root, upper, lower and leaf nodes), over a sample
 * of positions and every byte of the leaves. A grid without a checksum
 * still loads (NanoVDB writes files without one), and the file's own
 * statement of a grid's size in the file (fileSize) is checked. */
#include "tests/harness/test.h"

#include "base/error.h"
#include "base/file.h"
#include "physics/sparse_grid.h"
#include "scenes/volume.h"
#include "scenes/formats/volume_nanovdb_checksum.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SEED "fuzz/corpus/volume_nanovdb/"

/* Sets the full checksum of every grid of an uncompressed file in place (the
 * grids copied out to aligned memory and back); returns how many it set. */
static int set_checksums(unsigned char *b, size_t n)
{
    int done = 0;
    for (size_t p = 0; p < n;) {
        REQUIRE(n - p >= 16);
        uint16_t grids;
        memcpy(&grids, b + p + 12, 2);
        REQUIRE(b[p + 14] == 0 && b[p + 15] == 0); /* codec NONE */
        p += 16;
        uint64_t size[8];
        uint32_t type[8];
        REQUIRE(grids <= 8);
        for (unsigned g = 0; g < grids; g++) {
            uint32_t nsz;
            memcpy(&size[g], b + p, 8);
            memcpy(&type[g], b + p + 32, 4);
            memcpy(&nsz, b + p + 136, 4);
            p += 176 + nsz;
        }
        for (unsigned g = 0; g < grids; g++) {
            REQUIRE(p + size[g] <= n);
            void *a = aligned_alloc(32, (size[g] + 31) / 32 * 32);
            memcpy(a, b + p, size[g]);
            REQUIRE(vptv_nanovdb_checksum_update(a, type[g]) == 0);
            memcpy(b + p, a, size[g]);
            free(a);
            p += size[g];
            done++;
        }
    }
    return done;
}

static int same(const VptVolume *a, const VptVolume *b)
{
    if (a->nx != b->nx || a->ny != b->ny || a->nz != b->nz) return 0;
    for (int k = 0; k < 3; k++)
        if (memcmp(&a->spacing[k], &b->spacing[k], 4) || memcmp(&a->origin[k], &b->origin[k], 4)) return 0;
    const size_t count = (size_t)a->nx * a->ny * a->nz;
    if (memcmp(a->data, b->data, count * 4)) return 0;
    if (!a->albedo != !b->albedo) return 0;
    return !a->albedo || !memcmp(a->albedo, b->albedo, count * 12);
}

typedef struct {
    long tried, refused, harmless, changed;
} Tally;

/* Parses b with byte i replaced by v; tallies the outcome against orig. */
static void corrupt_one(unsigned char *b, size_t n, size_t i, unsigned char v, const VptVolume *orig, Tally *t)
{
    const unsigned char keep = b[i];
    b[i] = v;
    VptVolume x;
    t->tried++;
    if (vpt_volume_parse_nanovdb("c.nvdb", b, n, (size_t)64 << 20, &x) != 0) {
        t->refused++;
    } else if (same(&x, orig)) {
        t->harmless++;
        vpt_volume_free(&x);
    } else {
        if (t->changed++ < 10) vpt_test_log("byte %zu: %02x -> %02x loads a different volume", i, keep, v);
        vpt_volume_free(&x);
    }
    b[i] = keep;
}

static unsigned char *seed(const char *name, size_t *n)
{
    if (access(SEED "tiles.nvdb", R_OK) != 0) SKIP("run the tests from the repository root (" SEED ")");
    char *d;
    REQUIRE(vpt_read_file(name, 1 << 20, &d, n) == 0);
    return (unsigned char *)d;
}

TEST_TIMEOUT(nanovdb_every_one_byte_corruption_is_refused_or_harmless, 600)
{
    const char *files[] = {SEED "tiles.nvdb", SEED "tiles_albedo.nvdb"};
    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
        size_t n;
        unsigned char *b = seed(files[f], &n);
        REQUIRE(set_checksums(b, n) >= 1);
        VptVolume orig;
        REQUIRE_MSG(vpt_volume_parse_nanovdb("c.nvdb", b, n, (size_t)64 << 20, &orig) == 0, "%s", vpt_errmsg());
        Tally t = {0, 0, 0, 0};
        for (size_t i = 0; i < n; i++)
            for (int v = 0; v < 256; v++)
                if (v != b[i]) corrupt_one(b, n, i, (unsigned char)v, &orig, &t);
        vpt_test_log("%s (%zu bytes, checksummed): %ld corruptions: %ld refused, %ld harmless, %ld changed the volume",
                     files[f], n, t.tried, t.refused, t.harmless, t.changed);
        CHECK_EQ_INT(t.changed, 0);
        CHECK(t.refused > 0 && t.harmless > 0);
        vpt_volume_free(&orig);
        free(b);
    }
}

/* The same seed without a checksum: some corruptions of its values load a
 * different volume (what the checksum is for: the test above can fail). */
TEST(nanovdb_without_a_checksum_corruptions_go_unseen)
{
    size_t n;
    unsigned char *b = seed(SEED "tiles.nvdb", &n);
    VptVolume orig;
    REQUIRE_MSG(vpt_volume_parse_nanovdb("c.nvdb", b, n, (size_t)64 << 20, &orig) == 0, "%s", vpt_errmsg());
    Tally t = {0, 0, 0, 0};
    for (size_t i = 0; i < n; i++) corrupt_one(b, n, i, (unsigned char)(b[i] ^ 0x01), &orig, &t);
    CHECK(t.changed > 0);
    vpt_volume_free(&orig);
    free(b);
}

/* A uncompressed one-grid file of g, its fileSize as stated. */
static unsigned char *file_of(const VptSparseGrid *g, size_t *n)
{
    *n = 16 + 176 + 8 + g->size;
    unsigned char *b = calloc(1, *n);
    const uint64_t magic = 0x304244566f6e614eULL, gs = g->size;
    const uint32_t version = (32u << 21) | (4u << 10) | 2u, type = 1, cls = 2, nsz = 8;
    const uint16_t count = 1;
    memcpy(b, &magic, 8);
    memcpy(b + 8, &version, 4);
    memcpy(b + 12, &count, 2);
    memcpy(b + 16, &gs, 8);
    memcpy(b + 24, &gs, 8);
    memcpy(b + 16 + 32, &type, 4);
    memcpy(b + 16 + 36, &cls, 4);
    memcpy(b + 16 + 136, &nsz, 4);
    memcpy(b + 16 + 176, "density", 8);
    memcpy(b + 16 + 176 + 8, g->data, g->size);
    return b;
}

/* A real tree: corruptions of every byte of its leaves (the values) and of
 * every 97th byte elsewhere; a false fileSize; a wrong stored checksum. */
TEST_TIMEOUT(nanovdb_tree_corruptions_are_refused_or_harmless, 600)
{
    const int nx = 12, ny = 10, nz = 9;
    float *d = malloc(sizeof(float) * nx * ny * nz);
    for (int i = 0; i < nx * ny * nz; i++) d[i] = (float)((i * 37) % 101) / 100.0f;
    VptSparseGrid g;
    REQUIRE(vpt_sparse_grid_build(d, nx, ny, nz, "density", &g) == 0);
    size_t n;
    unsigned char *b = file_of(&g, &n);
    VptVolume plain;
    REQUIRE_MSG(vpt_volume_parse_nanovdb("c.nvdb", b, n, 0, &plain) == 0, "%s", vpt_errmsg());
    REQUIRE(set_checksums(b, n) == 1);
    VptVolume orig;
    REQUIRE_MSG(vpt_volume_parse_nanovdb("c.nvdb", b, n, 0, &orig) == 0, "%s", vpt_errmsg());
    CHECK(same(&plain, &orig));
    /* the leaves are the grid's last nodes: one 8^3 leaf holds the values */
    const size_t leaves = n - 4096;
    Tally t = {0, 0, 0, 0};
    for (size_t i = 0; i < n; i += i >= leaves ? 1 : 97) corrupt_one(b, n, i, (unsigned char)(b[i] ^ 0x5a), &orig, &t);
    vpt_test_log("%zu-byte file: %ld corruptions: %ld refused, %ld harmless, %ld changed the volume", n, t.tried,
                 t.refused, t.harmless, t.changed);
    CHECK_EQ_INT(t.changed, 0);
    /* a false fileSize, and a checksum off by one bit, with the messages */
    VptVolume x;
    b[24] ^= 1;
    CHECK(vpt_volume_parse_nanovdb("c.nvdb", b, n, 0, &x) == -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), "c.nvdb: grid 0's metadata says it takes");
    b[24] ^= 1;
    b[16 + 176 + 8 + 8] ^= 1;
    CHECK(vpt_volume_parse_nanovdb("c.nvdb", b, n, 0, &x) == -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), "c.nvdb: grid 'density' does not match its checksum");
    vpt_volume_free(&plain);
    vpt_volume_free(&orig);
    vpt_sparse_grid_free(&g);
    free(b);
    free(d);
}
