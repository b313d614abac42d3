/* Sparse volumes (NanoVDB): the C builder against the dense grid it stands
 * for, the checker against hostile buffers, .nvdb files through the loader,
 * and the CPU reference with volume=sparse against the dense one (the same
 * bits: the sparse sampler computes the dense filter exactly). The .nvdb
 * fixtures are written here byte by byte from NanoVDB's file layout
 * (nanovdb/util/IO.h: segment header, grid metadata, name, grid buffer). */
#include "tests/harness/test.h"

#include "base/error.h"
#include "codegen/config.h"
#include "physics/sparse_grid.h"
#include "reference/cpu_render.h"
#include "scenes/scene.h"
#include "scenes/volume.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

/* A cloud: a few soft blobs in an otherwise empty box, values in [0, 1],
 * deterministic. Most 8^3 blocks are empty. */
static float *make_cloud(int nx, int ny, int nz)
{
    float *d = calloc((size_t)nx * ny * nz, sizeof *d);
    REQUIRE(d);
    static const float blobs[3][4] = {{0.3f, 0.4f, 0.5f, 0.18f}, {0.7f, 0.6f, 0.35f, 0.12f}, {0.55f, 0.25f, 0.7f, 0.1f}};
    for (int z = 0; z < nz; z++)
        for (int y = 0; y < ny; y++)
            for (int x = 0; x < nx; x++) {
                float v = 0.0f;
                for (int b = 0; b < 3; b++) {
                    const float dx = (x + 0.5f) / nx - blobs[b][0], dy = (y + 0.5f) / ny - blobs[b][1],
                                dz = (z + 0.5f) / nz - blobs[b][2];
                    const float r = sqrtf(dx * dx + dy * dy + dz * dz) / blobs[b][3];
                    if (r < 1.0f) v += (1.0f - r) * (0.6f + 0.4f * (float)((x * 7 + y * 13 + z * 29) % 17) / 16.0f);
                }
                d[(size_t)x + (size_t)nx * ((size_t)y + (size_t)ny * z)] = v > 1.0f ? 1.0f : v;
            }
    return d;
}

TEST(sparse_grid_builds_checks_and_densifies_to_the_same_values)
{
    const int nx = 45, ny = 38, nz = 51; /* not multiples of 8: partial blocks */
    float *d = make_cloud(nx, ny, nz);
    VptSparseGrid g;
    REQUIRE_MSG(vpt_sparse_grid_build(d, nx, ny, nz, "density", &g) == 0, "%s", vpt_errmsg());
    const int blocks = ((nx + 7) / 8) * ((ny + 7) / 8) * ((nz + 7) / 8);
    vpt_test_log("%u of %d leaves kept (%.0f%% empty), %u lowers, %u uppers, %zu bytes", g.leaves, blocks,
                 100.0 * g.empty_fraction, g.lowers, g.uppers, g.size);
    CHECK(g.leaves > 0 && (int)g.leaves < blocks);
    CHECK_EQ_INT((int)g.lowers, 1);
    CHECK_EQ_INT((int)g.uppers, 1);
    VptSparseGridInfo info;
    REQUIRE_MSG(vpt_sparse_grid_check("built", g.data, g.size, &info) == 0, "%s", vpt_errmsg());
    CHECK_EQ_INT((int)info.leaves, (int)g.leaves);
    CHECK(!strcmp(info.name, "density"));
    /* the active box: the nonzero voxels' */
    int lo[3] = {nx, ny, nz}, hi[3] = {-1, -1, -1};
    for (int z = 0; z < nz; z++)
        for (int y = 0; y < ny; y++)
            for (int x = 0; x < nx; x++)
                if (d[(size_t)x + (size_t)nx * ((size_t)y + (size_t)ny * z)] != 0.0f) {
                    const int c[3] = {x, y, z};
                    for (int k = 0; k < 3; k++) {
                        if (c[k] < lo[k]) lo[k] = c[k];
                        if (c[k] > hi[k]) hi[k] = c[k];
                    }
                }
    for (int k = 0; k < 3; k++) {
        CHECK_EQ_INT(info.bbox_min[k], lo[k]);
        CHECK_EQ_INT(info.bbox_max[k], hi[k]);
    }
    /* densified over the whole grid: every value, the left-out blocks' zeros too */
    float *back = malloc((size_t)nx * ny * nz * sizeof *back);
    const int zero[3] = {0, 0, 0}, dims[3] = {nx, ny, nz};
    REQUIRE(vpt_sparse_grid_densify("built", g.data, zero, dims, back) == 0);
    CHECK(memcmp(back, d, (size_t)nx * ny * nz * sizeof *back) == 0);
    free(back);
    vpt_sparse_grid_free(&g);
    free(d);
}

TEST(sparse_sampler_is_the_dense_filter_bit_for_bit)
{
    const int nx = 29, ny = 17, nz = 40;
    float *d = make_cloud(nx, ny, nz);
    VptSparseGrid g;
    REQUIRE(vpt_sparse_grid_build(d, nx, ny, nz, "density", &g) == 0);
    uint8_t *albedo = calloc((size_t)4 * nx * ny * nz, 1);
    VptMedium dense = {nx, ny, nz, d, albedo, NULL, NULL, NULL, NULL, NULL, 0, 0.0f}, sparse = dense;
    sparse.sparse = g.data;
    uint32_t state = 12345u;
    int differ = 0;
    for (int i = 0; i < 200000; i++) {
        float u[3];
        for (int k = 0; k < 3; k++) {
            state = state * 1664525u + 1013904223u;
            u[k] = (float)(state >> 8) / 16777216.0f * 1.2f - 0.1f; /* some outside [0, 1]: clamping */
        }
        const vpt_vec3 p = vpt_v3(u[0], u[1], u[2]);
        const float a = vpt_medium_density(&dense, p), b = vpt_medium_density(&sparse, p);
        if (memcmp(&a, &b, sizeof a)) differ++;
    }
    CHECK_EQ_INT(differ, 0);
    free(albedo);
    vpt_sparse_grid_free(&g);
    free(d);
}

/* The CPU reference with volume=sparse traces the dense estimator's paths
 * and gives its image bit for bit, alone and with a majorant grid. */
TEST(sparse_cpu_reference_equals_dense)
{
    VptScene *s = vpt_scene_builtin("smoke");
    REQUIRE(s);
    const int W = 20, H = 20, SPP = 4;
    for (int cell = 0; cell <= 8; cell += 8) {
        float *img[2], *var[2];
        VptRenderStats st[2];
        for (int sp = 0; sp < 2; sp++) {
            img[sp] = malloc((size_t)W * H * 3 * sizeof(float));
            var[sp] = malloc((size_t)W * H * 3 * sizeof(float));
            VptRenderSettings rs = {W, H, SPP, 7u, 0, -1, 1};
            VptParams p;
            vpt_params_init(&p, s, &rs);
            VptCpuEstimator e;
            REQUIRE_MSG(vpt_cpu_estimator_init(&e, s, VPT_DENSITY_F32, cell, sp, &p) == 0, "%s", vpt_errmsg());
            if (sp) vpt_test_log("smoke as a sparse grid: %u leaves, %.0f%% of the blocks empty, %zu bytes",
                                 e.tree.leaves, 100.0 * e.tree.empty_fraction, e.tree.size);
            VptCpuRenderOptions o = {2, VPT_PROGRESS_OFF, &e};
            REQUIRE_MSG(vpt_cpu_render(s, &p, &o, img[sp], var[sp], &st[sp]) == 0, "%s", vpt_errmsg());
            vpt_cpu_estimator_free(&e);
        }
        CHECK(st[0].counters.rays == st[1].counters.rays && st[0].counters.steps == st[1].counters.steps);
        CHECK_MSG(memcmp(img[0], img[1], (size_t)W * H * 3 * sizeof(float)) == 0, "majorant cell %d: images differ",
                  cell);
        CHECK(st[0].counters.steps > 0);
        for (int sp = 0; sp < 2; sp++) {
            free(img[sp]);
            free(var[sp]);
        }
    }
    vpt_scene_destroy(s);
}

/* ---------- .nvdb files ---------- */

typedef struct {
    unsigned char *b;
    size_t n, cap;
} Bytes;

static void put(Bytes *o, const void *p, size_t n)
{
    if (o->n + n > o->cap) {
        o->cap = (o->n + n) * 2;
        o->b = realloc(o->b, o->cap);
        REQUIRE(o->b);
    }
    memcpy(o->b + o->n, p, n);
    o->n += n;
}
static void put64(Bytes *o, uint64_t v) { put(o, &v, 8); }
static void put32(Bytes *o, uint32_t v) { put(o, &v, 4); }
static void put16(Bytes *o, uint16_t v) { put(o, &v, 2); }

/* A one-grid .nvdb file of g (codec 0 none, 1 zip), named `name`. */
static Bytes nvdb_file(const VptSparseGrid *g, const char *name, int codec)
{
    Bytes o = {NULL, 0, 0};
    put64(&o, 0x304244566f6e614eULL);
    put32(&o, (32u << 21) | (4u << 10) | 2u);
    put16(&o, 1);
    put16(&o, (uint16_t)codec);
    Bytes z = {NULL, 0, 0};
    if (codec == 1) {
        uLongf zn = compressBound(g->size);
        z.b = malloc(zn);
        REQUIRE(compress(z.b, &zn, (const Bytef *)g->data, g->size) == Z_OK);
        z.n = zn;
    }
    unsigned char meta[176];
    memset(meta, 0, sizeof meta);
    uint64_t gs = g->size, fs = codec ? 8 + z.n : g->size;
    uint32_t type = 1, cls = 2, nsz = (uint32_t)strlen(name) + 1;
    memcpy(meta + 0, &gs, 8);
    memcpy(meta + 8, &fs, 8);
    memcpy(meta + 32, &type, 4);
    memcpy(meta + 36, &cls, 4);
    memcpy(meta + 136, &nsz, 4);
    uint16_t c16 = (uint16_t)codec;
    memcpy(meta + 168, &c16, 2);
    put(&o, meta, sizeof meta);
    put(&o, name, nsz);
    if (codec == 1) {
        put64(&o, z.n);
        put(&o, z.b, z.n);
        free(z.b);
    } else {
        put(&o, g->data, g->size);
    }
    return o;
}

static void write_file(const char *path, const Bytes *b)
{
    FILE *fp = fopen(path, "wb");
    REQUIRE(fp);
    REQUIRE(fwrite(b->b, 1, b->n, fp) == b->n);
    fclose(fp);
}

TEST(nanovdb_file_round_trip_through_the_loader_and_a_scene)
{
    const int nx = 40, ny = 33, nz = 36;
    float *d = make_cloud(nx, ny, nz);
    VptSparseGrid g;
    REQUIRE(vpt_sparse_grid_build(d, nx, ny, nz, "density", &g) == 0);
    VptSparseGridInfo info;
    REQUIRE(vpt_sparse_grid_check("g", g.data, g.size, &info) == 0);
    char dir[] = "/tmp/vpt-nvdb-XXXXXX";
    REQUIRE(mkdtemp(dir));
    for (int codec = 0; codec < 2; codec++) {
        Bytes f = nvdb_file(&g, "density", codec);
        char path[128];
        snprintf(path, sizeof path, "%s/cloud%d.nvdb", dir, codec);
        write_file(path, &f);
        free(f.b);
        VptVolume v;
        REQUIRE_MSG(vpt_volume_load(path, NULL, &v) == 0, "%s", vpt_errmsg());
        /* the active voxels' box, densified */
        CHECK_EQ_INT(v.nx, info.bbox_max[0] - info.bbox_min[0] + 1);
        CHECK_EQ_INT(v.ny, info.bbox_max[1] - info.bbox_min[1] + 1);
        CHECK_EQ_INT(v.nz, info.bbox_max[2] - info.bbox_min[2] + 1);
        CHECK(v.stored == VPT_SCALAR_F32);
        int bad = 0;
        for (int z = 0; z < v.nz; z++)
            for (int y = 0; y < v.ny; y++)
                for (int x = 0; x < v.nx; x++) {
                    const float a = v.data[(size_t)x + (size_t)v.nx * ((size_t)y + (size_t)v.ny * z)];
                    const int gx = x + info.bbox_min[0], gy = y + info.bbox_min[1], gz = z + info.bbox_min[2];
                    if (a != d[(size_t)gx + (size_t)nx * ((size_t)gy + (size_t)ny * gz)]) bad++;
                }
        CHECK_EQ_INT(bad, 0);
        vpt_volume_free(&v);
        /* a scene of it: values in [0, 1] from floats: the identity transfer */
        VptVolumeSceneOptions so;
        memset(&so, 0, sizeof so);
        so.like = "smoke";
        VptScene *s = vpt_scene_from_volume(path, &so);
        REQUIRE_MSG(s, "%s", vpt_errmsg());
        CHECK(s->density_max > 0.0f && s->density_max <= 1.0f);
        vpt_scene_destroy(s);
    }
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK(system(cmd) == 0);
    vpt_sparse_grid_free(&g);
    free(d);
}

static int parse_fails(const unsigned char *b, size_t n, const char *needle)
{
    VptVolume v;
    const int rc = vpt_volume_parse_nanovdb("hostile.nvdb", b, n, 0, &v);
    if (rc == 0) {
        vpt_volume_free(&v);
        return 0;
    }
    if (needle && !strstr(vpt_errmsg(), needle)) {
        vpt_test_log("message without '%s': %s", needle, vpt_errmsg());
        return 0;
    }
    return strstr(vpt_errmsg(), "hostile.nvdb") != NULL;
}

TEST(nanovdb_loader_rejects_truncated_and_hostile_files)
{
    const int nx = 20, ny = 20, nz = 20;
    float *d = make_cloud(nx, ny, nz);
    VptSparseGrid g;
    REQUIRE(vpt_sparse_grid_build(d, nx, ny, nz, "density", &g) == 0);
    Bytes f = nvdb_file(&g, "density", 0);
    VptVolume v;
    REQUIRE(vpt_volume_parse_nanovdb("ok.nvdb", f.b, f.n, 0, &v) == 0);
    vpt_volume_free(&v);
    /* every truncation */
    int bad = 0;
    for (size_t n = 0; n < f.n; n += n < 2048 ? 1 : 97)
        if (!parse_fails(f.b, n, NULL)) bad++;
    CHECK_EQ_INT(bad, 0);
    CHECK(parse_fails(f.b, 100, "truncated"));
    /* bytes after the last segment */
    Bytes longer = {NULL, 0, 0};
    put(&longer, f.b, f.n);
    put32(&longer, 7);
    CHECK(parse_fails(longer.b, longer.n, "truncated"));
    for (int k = 0; k < 4; k++) put32(&longer, 7);
    CHECK(parse_fails(longer.b, longer.n, "after the last segment"));
    free(longer.b);
    const size_t grid0 = 16 + 176 + 8; /* the grid buffer's offset in the file */
    unsigned char *h = malloc(f.n);
    /* hostile fields, one at a time: (offset, value, what the message says) */
    const struct {
        size_t off;
        uint64_t val;
        int width;
        const char *says;
    } cases[] = {
        {0, 0x1122334455667788ULL, 8, "not a NanoVDB file"},
        {8, 31u << 21, 4, "version 31"},
        {14, 2, 2, "BLOSC"},
        {14, 9, 2, "unknown codec"},
        {12, 0, 2, "no grids"},
        {16, (uint64_t)1 << 40, 8, "truncated"},                         /* grid size */
        {16 + 136, 300, 4, "name"},                                       /* name size */
        {grid0 + 16, 30u << 21, 4, "version 30"},                         /* the grid's own version */
        {grid0 + 636, 13, 4, "grid type 13"},                             /* FP4: quantized */
        {grid0 + 32, (uint64_t)1 << 50, 8, "states"},                     /* grid size in the grid */
        {grid0 + 672 + 24, (uint64_t)1 << 40, 8, "root"},                 /* root offset */
        {grid0 + 672 + 0, 8, 8, "leaf"},                                  /* leaf array offset */
        {grid0 + 672 + 32, 100000, 4, "leaf nodes"},                      /* leaf count */
        {grid0 + 672 + 64 + 24, 1000000, 4, "tiles"},                     /* root tiles */
        {grid0 + 672 + 64 + 64 + 8, (uint64_t)-64, 8, "child offset"},    /* the tile's child */
        {grid0 + 296 + 232 + 16, 0x7ff0000000000000ULL, 8, "translation along z"}, /* map translation: inf */
        {grid0 + 296 + 232, 0x46293e5939a08cebULL, 8, "translation along x"},      /* the double after 1e30 */
        {grid0 + 296 + 88 + 8 * 4, 0x7ff8000000000000ULL, 8, "matrix entry (1, 1)"}, /* map matrix: NaN */
        {grid0 + 608 + 8, 0, 8, "voxel size along y"},                    /* voxel size 0 */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        memcpy(h, f.b, f.n);
        memcpy(h + cases[i].off, &cases[i].val, (size_t)cases[i].width);
        CHECK_MSG(parse_fails(h, f.n, cases[i].says), "case %zu (%s): %s", i, cases[i].says, vpt_errmsg());
    }
    /* a translation and a voxel size each in range, but the first active
       voxel's position (translation + voxel size * index) beyond 1e30 */
    memcpy(h, f.b, f.n);
    const double t = 1e30, vs = 1e28;
    memcpy(h + grid0 + 296 + 232, &t, 8);
    memcpy(h + grid0 + 608, &vs, 8);
    CHECK_MSG(parse_fails(h, f.n, "first active voxel's position along x"), "%s", vpt_errmsg());
    /* every child offset of the upper and lower nodes, pointed elsewhere */
    const size_t upper = grid0 + 672 + 64 + 64 + 32, table = 8256;
    memcpy(h, f.b, f.n);
    uint64_t off;
    memcpy(&off, h + upper + table, 8);
    const uint64_t wrong[] = {off + 8, off - 33856, 0, (uint64_t)1 << 62, off + 33856 * 4};
    for (size_t i = 0; i < sizeof wrong / sizeof wrong[0]; i++) {
        memcpy(h, f.b, f.n);
        memcpy(h + upper + table, &wrong[i], 8);
        CHECK_MSG(parse_fails(h, f.n, "child"), "upper child offset %llu: %s", (unsigned long long)wrong[i], vpt_errmsg());
    }
    /* a NaN voxel */
    memcpy(h, f.b, f.n);
    const size_t leaf0 = grid0 + 672 + 64 + 64 + 32 + 270400 + 33856;
    const float nan = NAN;
    for (int k = 0; k < 512; k++) memcpy(h + leaf0 + 96 + 4 * (size_t)k, &nan, 4);
    CHECK(parse_fails(h, f.n, "non-finite"));
    free(h);
    free(f.b);
    vpt_sparse_grid_free(&g);
    free(d);
}

/* A Vec3f grid named "albedo" is the volume's albedo over the density's box:
 * the fuzz seed tiles_albedo.nvdb (fuzz/nanovdb_seeds.c: two root tiles of
 * each grid, the box across their boundary, 6 voxels in each tile). */
TEST(nanovdb_albedo_grid_is_the_volume_albedo)
{
    const char *path = "fuzz/corpus/volume_nanovdb/tiles_albedo.nvdb";
    if (access(path, R_OK) != 0) SKIP("%s not found: run the tests from the repository root", path);
    VptVolume v;
    REQUIRE_MSG(vpt_volume_load(path, NULL, &v) == 0, "%s", vpt_errmsg());
    REQUIRE(v.nx == 12 && v.ny == 4 && v.nz == 3 && v.albedo);
    const float want[2][3] = {{0.9f, 0.5f, 0.1f}, {0.2f, 0.4f, 0.8f}};
    int bad = 0;
    for (int i = 0; i < 12 * 4 * 3; i++)
        for (int c = 0; c < 3; c++) bad += v.albedo[3 * i + c] != want[i % 12 >= 6][c] || v.data[i] != (i % 12 >= 6 ? 1.0f : 0.25f);
    CHECK_EQ_INT(bad, 0);
    vpt_volume_free(&v);
}

/* The load options' admit hook sees a .nvdb file's box and its albedo grid
 * before anything is densified (a refusal allocates nothing), and the
 * scene's host-memory check counts the albedo grid: 12x4x3 voxels take
 * 4 bytes each as a scene (576 bytes) but 20 with the file's albedo
 * (2,880: 12 for the file's grid and 4 for the scene's RGBA8 one), so 2,000
 * bytes of memory refuse this file and 3,000 admit it. */
typedef struct {
    int calls, albedo, dims[3];
} NvdbAdmit;

static int nvdb_refuse(void *ctx, const char *name, const int dims[3], VptScalarType stored, int albedo)
{
    NvdbAdmit *a = ctx;
    (void)stored;
    a->calls++;
    a->albedo = albedo;
    memcpy(a->dims, dims, sizeof a->dims);
    return vpt_fail("%s: refused by the test", name);
}

TEST(nanovdb_albedo_grid_counts_in_the_memory_check)
{
    const char *path = "fuzz/corpus/volume_nanovdb/tiles_albedo.nvdb";
    if (access(path, R_OK) != 0) SKIP("%s not found: run the tests from the repository root", path);
    NvdbAdmit seen = {0, -1, {0, 0, 0}};
    VptVolumeLoadOptions o;
    memset(&o, 0, sizeof o);
    o.admit = nvdb_refuse;
    o.admit_ctx = &seen;
    VptVolume v;
    CHECK(vpt_volume_load(path, &o, &v) == -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), "refused by the test");
    CHECK(v.data == NULL && v.albedo == NULL);
    CHECK_EQ_INT(seen.calls, 1);
    CHECK_EQ_INT(seen.albedo, 1);
    CHECK(seen.dims[0] == 12 && seen.dims[1] == 4 && seen.dims[2] == 3);

    setenv("VPT_MEM_AVAILABLE", "2000", 1);
    VptVolumeSceneOptions so = {0};
    VptScene *s = vpt_scene_from_volume(path, &so);
    CHECK(s == NULL);
    CHECK_STR_CONTAINS(vpt_errmsg(), "tiles_albedo.nvdb");
    CHECK_STR_CONTAINS(vpt_errmsg(), "host memory");
    CHECK_STR_CONTAINS(vpt_errmsg(), "albedo grid");
    setenv("VPT_MEM_AVAILABLE", "3000", 1);
    s = vpt_scene_from_volume(path, &so);
    CHECK_MSG(s != NULL, "%s", vpt_errmsg());
    if (s) {
        /* the file's albedo, not the transfer's: voxel 0 is (0.9, 0.5, 0.1) */
        CHECK(s->albedo[0] == 230 && s->albedo[1] == 128 && s->albedo[2] == 26);
        vpt_scene_destroy(s);
    }
    unsetenv("VPT_MEM_AVAILABLE");
}

TEST(sparse_config_key_volume)
{
    VptConfig c;
    REQUIRE(vpt_config_parse("naiveSK,volume=sparse", &c) == 0);
    CHECK_EQ_INT(c.sparse, 1);
    char t[VPT_CONFIG_STR_MAX];
    vpt_config_format(&c, t, sizeof t);
    CHECK_STR_CONTAINS(t, ",volume=sparse");
    VptConfig back;
    REQUIRE(vpt_config_parse(t, &back) == 0);
    CHECK(vpt_config_equal(&c, &back));
    /* the default is not written: every text from before the key stays canonical */
    REQUIRE(vpt_config_parse("naiveSK,volume=dense", &c) == 0);
    vpt_config_format(&c, t, sizeof t);
    CHECK(strstr(t, "volume") == NULL);
    CHECK(vpt_config_parse("naiveSK,volume=tiles", &c) == -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), "dense, sparse");
}
