/* Tests of the environment map light (scenes/env_map.h, physics/vpt_physics.h
 * "the environment map", next-event estimation in physics/vpt_tracer.h):
 * its PFM files and their errors, the direction convention (Mitsuba 3's
 * envmap), the sampler's pdf (it integrates to 1; a chi-square test of
 * sampled directions against it), and the CPU reference's estimates: a
 * white furnace, a constant map against the constant environment, and a
 * map's next-event estimation against escape-only paths with the same map,
 * for each shadow-ray transmittance estimator. */
#include "tests/harness/test.h"

#include "base/error.h"
#include "base/file.h"
#include "cli/scene_args.h"
#include "image/image.h"
#include "physics/vpt_tracer.h"
#include "reference/cpu_medium.h"
#include "reference/cpu_render.h"
#include "scenes/env_map.h"
#include "scenes/scene.h"
#include "tests/test_physics_stats.h"
#include "tests/test_tools.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ files */

/* Writes a PFM: colour (3 floats a pixel) or grey, in either byte order,
 * rows bottom to top as the format has them; `rgb` is top row first.
 * `header` replaces the header when given; `cut` bytes are left off the
 * end. Returns the path (in the test's folder). */
static const char *write_pfm(const char *name, int w, int h, int grey, int big, const float *vals, const char *header,
                             size_t cut)
{
    static char path[4096];
    snprintf(path, sizeof path, "%s/%s", vpt_test_tmpdir(), name);
    FILE *f = fopen(path, "wb");
    REQUIRE(f);
    if (header) fputs(header, f);
    else fprintf(f, "%s\n%d %d\n%s\n", grey ? "Pf" : "PF", w, h, big ? "1.0" : "-1.0");
    const int c = grey ? 1 : 3;
    size_t n = (size_t)w * (size_t)h * (size_t)c * 4, written = 0;
    for (int y = h - 1; y >= 0; y--)
        for (int x = 0; x < w * c; x++) {
            uint32_t u;
            memcpy(&u, &vals[(size_t)y * (size_t)w * (size_t)c + (size_t)x], 4);
            unsigned char b[4];
            for (int k = 0; k < 4; k++) b[k] = (unsigned char)(u >> (big ? 24 - 8 * k : 8 * k));
            for (int k = 0; k < 4; k++, written++)
                if (written + cut < n) fputc(b[k], f);
        }
    fclose(f);
    return path;
}

TEST(env_map_pfm_round_trips_in_both_byte_orders_colour_and_grey)
{
    float rgb[4 * 3 * 3], grey[4 * 3];
    for (int i = 0; i < 36; i++) rgb[i] = 0.25f * (float)i + 1e-3f;
    for (int i = 0; i < 12; i++) grey[i] = 3.0f * (float)i;
    for (int big = 0; big < 2; big++) {
        const char *p = write_pfm(big ? "big.pfm" : "little.pfm", 4, 3, 0, big, rgb, NULL, 0);
        VptEnvMap *m = vpt_env_map_load(p, 2.0);
        REQUIRE_MSG(m, "%s", vpt_errmsg());
        CHECK(m->width == 4 && m->height == 3 && m->scale == 2.0);
        for (int i = 0; i < 36; i++) CHECK_MSG(m->radiance[i] == 2.0f * rgb[i], "value %d: %g", i, m->radiance[i]);
        CHECK(!strcmp(m->stem, big ? "big" : "little"));
        vpt_env_map_destroy(m);
        p = write_pfm("grey.PFM", 4, 3, 1, big, grey, NULL, 0);
        m = vpt_env_map_load(p, 1.0);
        REQUIRE_MSG(m, "%s", vpt_errmsg());
        for (int i = 0; i < 12; i++)
            for (int k = 0; k < 3; k++) CHECK(m->radiance[3 * i + k] == grey[i]);
        vpt_env_map_destroy(m);
    }
    /* the tables: each ends at 1 and never decreases */
    VptEnvMap *m = vpt_env_map_load(write_pfm("t.pfm", 4, 3, 0, 0, rgb, NULL, 0), 1.0);
    REQUIRE(m);
    CHECK(m->row_cdf[0] == 0.0f && m->row_cdf[3] == 1.0f && m->uniform == VPT_ENV_UNIFORM);
    for (int j = 0; j < 3; j++) {
        CHECK(m->row_cdf[j + 1] >= m->row_cdf[j]);
        CHECK(m->col_cdf[j * 5] == 0.0f && m->col_cdf[j * 5 + 4] == 1.0f);
        for (int i = 0; i < 4; i++) CHECK(m->col_cdf[j * 5 + i + 1] >= m->col_cdf[j * 5 + i]);
    }
    vpt_env_map_destroy(m);
}

TEST(env_map_bad_files_are_refused_naming_the_file_and_the_fault)
{
    float good[2 * 2 * 3] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
    float neg[2 * 2 * 3] = {1, 1, 1, 1, -0.5f, 1, 1, 1, 1, 1, 1, 1};
    float nan_[2 * 2 * 3] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, NAN};
    float inf_[2 * 2 * 3] = {1, 1, 1, 1, 1, 1, INFINITY, 1, 1, 1, 1, 1};
    const struct {
        const char *name;
        const float *vals;
        const char *header;
        size_t cut;
        double scale;
        const char *says;
    } bad[] = {
        {"trunc.pfm", good, NULL, 5, 1, "truncated"},
        {"long.pfm", good, "PF\n2 1\n-1.0\n", 0, 1, "expected 24"},
        {"magic.pfm", good, "P6\n2 2\n-1.0\n", 0, 1, "not a PFM file"},
        {"nowidth.pfm", good, "PF\n", 0, 1, "bad PFM header"},
        {"width.pfm", good, "PF\nx 2\n-1.0\n", 0, 1, "PFM width"},
        {"zero.pfm", good, "PF\n0 2\n-1.0\n", 0, 1, "PFM width"},
        {"huge.pfm", good, "PF\n100000 100000\n-1.0\n", 0, 1, "PFM width"},
        {"many.pfm", good, "PF\n65536 65536\n-1.0\n", 0, 1, "pixels"},
        {"scale0.pfm", good, "PF\n2 2\n0\n", 0, 1, "scale is 0"},
        {"neg.pfm", neg, NULL, 0, 1, "channel 1 is -0.5"},
        {"nan.pfm", nan_, NULL, 0, 1, "is nan"},
        {"inf.pfm", inf_, NULL, 0, 1, "is inf"},
        {"over.pfm", good, NULL, 0, 1e300, "must be a finite number > 0"},
        {"overflow.pfm", good, NULL, 0, 3e38, "times the scale"},
        {"mapscale.pfm", good, NULL, 0, -1, "scale -1"},
        {"map.hdr", good, NULL, 0, 1, "unknown environment map extension '.hdr'"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const float *v = bad[i].vals;
        float buf[12];
        memcpy(buf, v, sizeof buf);
        if (!strcmp(bad[i].name, "overflow.pfm")) { /* 2 x 3e38 is beyond a float */
            for (int k = 0; k < 12; k++) buf[k] = 2.0f;
        }
        const char *p = write_pfm(bad[i].name, 2, 2, 0, 0, buf, bad[i].header, bad[i].cut);
        vpt_error_clear();
        VptEnvMap *m = vpt_env_map_load(p, bad[i].scale);
        CHECK_MSG(m == NULL, "%s accepted", bad[i].name);
        vpt_env_map_destroy(m);
        CHECK_STR_CONTAINS(vpt_errmsg(), bad[i].name);
        CHECK_STR_CONTAINS(vpt_errmsg(), bad[i].says);
    }
    vpt_error_clear();
    CHECK(vpt_env_map_load("/nonexistent/sky.pfm", 1) == NULL);
    CHECK_STR_CONTAINS(vpt_errmsg(), "/nonexistent/sky.pfm");
}

/* ------------------------------------------------------------ OpenEXR */

/* A byte buffer for the files below. */
typedef struct {
    unsigned char b[1 << 16];
    size_t n;
} Bytes;
static void put(Bytes *o, const void *p, size_t k)
{
    REQUIRE(o->n + k <= sizeof o->b);
    memcpy(o->b + o->n, p, k);
    o->n += k;
}
static void put_i32(Bytes *o, int32_t v) { put(o, &v, 4); } /* the format is little-endian, as this host */
static void put_str(Bytes *o, const char *s) { put(o, s, strlen(s) + 1); }
static void put_attr(Bytes *o, const char *name, const char *type, const void *v, int32_t size)
{
    put_str(o, name);
    put_str(o, type);
    put_i32(o, size);
    put(o, v, (size_t)size);
}

/* The magic, version and header of a single-part scanline OpenEXR file of
 * w x h pixels with the channel list ch (as the chlist attribute holds it)
 * and the given compression (0 none, 1 RLE), written after the format's
 * specification; the offset table and the chunks follow. */
static void put_exr_header(Bytes *o, const Bytes *ch, int w, int h, unsigned char compression)
{
    const unsigned char magic[8] = {0x76, 0x2f, 0x31, 0x01, 2, 0, 0, 0};
    put(o, magic, 8);
    put_attr(o, "channels", "chlist", ch->b, (int32_t)ch->n);
    const unsigned char zero = 0;
    put_attr(o, "compression", "compression", &compression, 1);
    const int32_t box[4] = {0, 0, w - 1, h - 1};
    put_attr(o, "dataWindow", "box2i", box, 16);
    put_attr(o, "displayWindow", "box2i", box, 16);
    put_attr(o, "lineOrder", "lineOrder", &zero, 1);
    const float one = 1.0f, centre[2] = {0, 0};
    put_attr(o, "pixelAspectRatio", "float", &one, 4);
    put_attr(o, "screenWindowCenter", "v2f", centre, 8);
    put_attr(o, "screenWindowWidth", "float", &one, 4);
    put(o, "", 1);
}

/* A single-part, uncompressed, scanline OpenEXR file of the given channels
 * (names in alphabetical order, as the format stores them; pixel type 1
 * half, 2 float), one scanline a chunk, written by hand after the format's
 * specification so that the test needs no OpenEXR writer. vals[c][y * w +
 * x] are the channels' values (halves as their bits). */
static const char *write_exr(const char *name, int w, int h, int nch, const char *const *names, const int *types,
                             const uint32_t *const *vals, size_t cut)
{
    static Bytes o;
    o.n = 0;
    Bytes ch = {{0}, 0};
    for (int c = 0; c < nch; c++) {
        put_str(&ch, names[c]);
        put_i32(&ch, types[c]);
        const unsigned char lin[4] = {0, 0, 0, 0};
        put(&ch, lin, 4);
        put_i32(&ch, 1);
        put_i32(&ch, 1);
    }
    put(&ch, "", 1);
    put_exr_header(&o, &ch, w, h, 0);
    int32_t row = 0;
    for (int c = 0; c < nch; c++) row += w * (types[c] == 1 ? 2 : 4);
    const size_t table = o.n;
    for (int y = 0; y < h; y++) {
        const uint64_t at = table + 8 * (uint64_t)h + (uint64_t)y * (8 + (uint64_t)row);
        put(&o, &at, 8);
    }
    for (int y = 0; y < h; y++) {
        put_i32(&o, y);
        put_i32(&o, row);
        for (int c = 0; c < nch; c++)
            for (int x = 0; x < w; x++) put(&o, &vals[c][y * w + x], types[c] == 1 ? 2 : 4);
    }
    static char path[4096];
    snprintf(path, sizeof path, "%s/%s", vpt_test_tmpdir(), name);
    FILE *f = fopen(path, "wb");
    REQUIRE(f);
    REQUIRE(fwrite(o.b, 1, o.n - cut, f) == o.n - cut);
    fclose(f);
    return path;
}

static uint32_t fbits(float v)
{
    uint32_t u;
    memcpy(&u, &v, 4);
    return u;
}

/* OpenEXR maps through the plugin: float RGB, half Y (grey), and the
 * errors, each naming the file: a truncated file, no colour channels, a
 * negative texel, not an OpenEXR file. Without the plugin, a message saying
 * what to install (in a process of its own: this one has it loaded). */
TEST(env_map_openexr_files_through_the_plugin)
{
    const int w = 3, h = 2;
    uint32_t r[6], g[6], b[6], y[6];
    for (int i = 0; i < 6; i++) {
        r[i] = fbits(0.5f * (float)i);
        g[i] = fbits(1.0f + (float)i);
        b[i] = fbits(10.0f * (float)i);
    }
    /* halves: 1, 0.5, 2, 0, 1.5, 0.25 */
    const uint16_t halves[6] = {0x3C00, 0x3800, 0x4000, 0x0000, 0x3E00, 0x3400};
    const float want_y[6] = {1.0f, 0.5f, 2.0f, 0.0f, 1.5f, 0.25f};
    for (int i = 0; i < 6; i++) y[i] = halves[i];
    const char *rgb_names[3] = {"B", "G", "R"};
    const int rgb_types[3] = {2, 2, 2};
    const uint32_t *rgb_vals[3] = {b, g, r};
    const char *p = write_exr("sky.exr", w, h, 3, rgb_names, rgb_types, rgb_vals, 0);
    vpt_error_clear();
    VptEnvMap *m = vpt_env_map_load(p, 1.0);
    if (!m && strstr(vpt_errmsg(), "could not be loaded")) SKIP("the OpenEXR plugin is not built: %s", vpt_errmsg());
    REQUIRE_MSG(m, "%s", vpt_errmsg());
    CHECK(m->width == 3 && m->height == 2 && !strcmp(m->stem, "sky"));
    for (int i = 0; i < 6; i++) {
        float v[3];
        memcpy(&v[0], &r[i], 4);
        memcpy(&v[1], &g[i], 4);
        memcpy(&v[2], &b[i], 4);
        for (int k = 0; k < 3; k++) CHECK_MSG(m->radiance[3 * i + k] == v[k], "texel %d channel %d", i, k);
    }
    vpt_env_map_destroy(m);
    const char *y_names[1] = {"Y"};
    const int y_types[1] = {1};
    const uint32_t *y_vals[1] = {y};
    /* the halves travel as the low two bytes of each word (little-endian) */
    m = vpt_env_map_load(write_exr("grey.exr", w, h, 1, y_names, y_types, y_vals, 0), 3.0);
    REQUIRE_MSG(m, "%s", vpt_errmsg());
    for (int i = 0; i < 6; i++)
        for (int k = 0; k < 3; k++) CHECK_MSG(m->radiance[3 * i + k] == 3.0f * want_y[i], "texel %d", i);
    vpt_env_map_destroy(m);
    /* errors, each naming the file */
    vpt_error_clear();
    CHECK(vpt_env_map_load(write_exr("short.exr", w, h, 3, rgb_names, rgb_types, rgb_vals, 7), 1.0) == NULL);
    CHECK_STR_CONTAINS(vpt_errmsg(), "short.exr");
    const char *a_names[1] = {"A"};
    vpt_error_clear();
    CHECK(vpt_env_map_load(write_exr("alpha.exr", w, h, 1, a_names, rgb_types, rgb_vals, 0), 1.0) == NULL);
    CHECK_STR_CONTAINS(vpt_errmsg(), "alpha.exr");
    CHECK_STR_CONTAINS(vpt_errmsg(), "no R, G and B channels");
    uint32_t neg[6];
    for (int i = 0; i < 6; i++) neg[i] = fbits(i == 4 ? -1.0f : 1.0f);
    const uint32_t *neg_vals[3] = {b, neg, r};
    vpt_error_clear();
    CHECK(vpt_env_map_load(write_exr("neg.exr", w, h, 3, rgb_names, rgb_types, neg_vals, 0), 1.0) == NULL);
    CHECK_STR_CONTAINS(vpt_errmsg(), "channel 1 is -1");
    FILE *f = fopen(p, "r+b");
    REQUIRE(f);
    fputs("not an exr", f);
    fclose(f);
    vpt_error_clear();
    CHECK(vpt_env_map_load(p, 1.0) == NULL);
    CHECK_STR_CONTAINS(vpt_errmsg(), "not a readable OpenEXR file");
    char cmd[8192];
    static char out[1 << 14];
    const char *q = write_exr("sky2.exr", w, h, 3, rgb_names, rgb_types, rgb_vals, 0);
    snprintf(cmd, sizeof cmd, "VPT_OPENEXR_SHIM=/nonexistent/libvptune-openexr.so %s --scene cloud16 --env-map %s "
             "--print-scene",
             vpt_test_tool("render"), q);
    CHECK(vpt_test_sh(cmd, out, sizeof out) != 0);
    CHECK_STR_CONTAINS(out, "/nonexistent/libvptune-openexr.so");
    CHECK_STR_CONTAINS(out, "libopenexr-dev");
}

/* A black w x h map of one half Y channel, RLE-compressed (one scanline a
 * chunk), written by hand as write_exr is: a few bytes a row, whatever its
 * width, so that a small file decodes to a large image. A row of zeros is,
 * after RLE's byte split and predictor, a 0 and 2w - 1 bytes of 128: one
 * literal byte, then runs of at most 128. */
static const char *write_black_rle_exr(const char *name, int w, int h)
{
    static Bytes o;
    o.n = 0;
    Bytes ch = {{0}, 0};
    put_str(&ch, "Y");
    put_i32(&ch, 1);
    const unsigned char lin[4] = {0, 0, 0, 0};
    put(&ch, lin, 4);
    put_i32(&ch, 1);
    put_i32(&ch, 1);
    put(&ch, "", 1);
    put_exr_header(&o, &ch, w, h, 1);
    Bytes row = {{0}, 0};
    const unsigned char first[2] = {0xff, 0x00}; /* a literal of one byte: 0 */
    put(&row, first, 2);
    for (int left = 2 * w - 1; left > 0; left -= 128) {
        const unsigned char run[2] = {(unsigned char)((left < 128 ? left : 128) - 1), 128};
        put(&row, run, 2);
    }
    const size_t table = o.n;
    for (int y = 0; y < h; y++) {
        const uint64_t at = table + 8 * (uint64_t)h + (uint64_t)y * (8 + row.n);
        put(&o, &at, 8);
    }
    for (int y = 0; y < h; y++) {
        put_i32(&o, y);
        put_i32(&o, (int32_t)row.n);
        put(&o, row.b, row.n);
    }
    static char path[4096];
    snprintf(path, sizeof path, "%s/%s", vpt_test_tmpdir(), name);
    FILE *f = fopen(path, "wb");
    REQUIRE(f);
    REQUIRE(fwrite(o.b, 1, o.n, f) == o.n);
    fclose(f);
    return path;
}

/* OpenEXR decodes behind the fault boundary: a 2048 x 256 map of a 21 KB
 * file needs 6 MiB decoded, more than a parser memory limit of 1 MiB, and is
 * refused naming the limit; the caller goes on, and under the default limit
 * the same file loads (a fresh worker: the limit changed). */
TEST(env_map_openexr_decodes_under_the_parser_memory_limit)
{
    if (!vpt_env_map_exr_shim_path()) SKIP("the OpenEXR plugin (bin/libvptune-openexr.so) is not built or cannot load");
#if defined(__SANITIZE_ADDRESS__)
    SKIP("under ASan the allocator aborts the worker on the refused allocation (docs/input-safety.md)");
#endif
    const char *p = write_black_rle_exr("wide.exr", 2048, 256);
    setenv("VPT_PARSER_MEMORY", "1M", 1);
    vpt_error_clear();
    VptEnvMap *m = vpt_env_map_load(p, 1.0);
    unsetenv("VPT_PARSER_MEMORY");
    CHECK_MSG(m == NULL, "a 2048x256 map decoded under a 1 MiB limit");
    vpt_env_map_destroy(m);
    vpt_test_log("refused: %s", vpt_errmsg());
    CHECK_STR_CONTAINS(vpt_errmsg(), "wide.exr");
    CHECK_STR_CONTAINS(vpt_errmsg(), "ran out of memory under the parser limit");
    vpt_error_clear();
    m = vpt_env_map_load(p, 1.0);
    REQUIRE_MSG(m, "%s", vpt_errmsg());
    CHECK(m->width == 2048 && m->height == 256 && m->uniform == 1.0f);
    float most = 0.0f;
    for (size_t k = 0; k < 3 * (size_t)2048 * 256; k++) most = fmaxf(most, m->radiance[k]);
    CHECK_MSG(most == 0.0f, "a black map has a texel of %g", (double)most);
    vpt_env_map_destroy(m);
}

/* The env_map_exr fuzz target's seeds (fuzz/exr_seeds.c, OpenEXR's own
 * writer) through vpt_env_map_load: every compression OpenEXRCore writes
 * decodes to the generator's values (exactly where the compression is
 * lossless; B44's, lossy, within a quarter: its 6-bit differences span a
 * 4x4 block holding a texel of 64 among ones of 2), and each broken seed is
 * refused saying why. Run from the repository root, as `make test` does. */
static float exr_seed_value(int c, int x, int y, int w, int h)
{
    if (x == w / 2 && y == h / 2) return 64.0f + (float)c;
    return (float)(1 + (x * 3 + y * 5 + c * 7) % 16) / 8.0f;
}

TEST(env_map_openexr_seeds_decode_to_the_written_values)
{
    if (!vpt_env_map_exr_shim_path()) SKIP("the OpenEXR plugin (bin/libvptune-openexr.so) is not built or cannot load");
    /* file, size, the generator's channel index of R, G and B (-1: grey, Y is 0), texel scale, tolerance, and
     * 1 where the top row was written 0 (B44 decodes it a little below 0: read as 0, exactly) */
    static const struct {
        const char *file;
        int w, h, r, g, b;
        float scale, tol;
        int zero_row;
    } good[] = {
        {"rgb_half_none_8x4.exr", 8, 4, 2, 1, 0, 1, 0, 0},        {"rgb_half_rle_8x4.exr", 8, 4, 2, 1, 0, 1, 0, 0},
        {"rgb_half_zips_8x4.exr", 8, 4, 2, 1, 0, 1, 0, 0},        {"rgb_half_zip_8x4.exr", 8, 4, 2, 1, 0, 1, 0, 0},
        {"rgb_half_piz_8x4.exr", 8, 4, 2, 1, 0, 1, 0, 0},         {"rgb_half_pxr24_8x4.exr", 8, 4, 2, 1, 0, 1, 0, 0},
        {"rgb_half_b44_8x4.exr", 8, 4, 2, 1, 0, 1, 0.25f, 0},     {"rgb_half_b44a_8x4.exr", 8, 4, 2, 1, 0, 1, 0.25f, 0},
        {"rgb_float_zip_4x4.exr", 4, 4, 2, 1, 0, 1, 0, 0},        {"rgb_uint_none_4x2.exr", 4, 2, 2, 1, 0, 8, 0, 0},
        {"grey_y_piz_6x3.exr", 6, 3, -1, -1, -1, 1, 0, 0},        {"rgba_half_rle_4x2.exr", 4, 2, 3, 2, 1, 1, 0, 0},
        {"rgb_half_none_window_5x3.exr", 5, 3, 2, 1, 0, 1, 0, 0}, {"rgb_half_zip_2x40.exr", 2, 40, 2, 1, 0, 1, 0, 0},
        {"rgb_half_piz_3x70.exr", 3, 70, 2, 1, 0, 1, 0, 0},       {"rgb_half_none_1x1.exr", 1, 1, 2, 1, 0, 1, 0, 0},
        /* zeros widen the block's span: a half of the other values */
        {"rgb_half_b44_zero_row_8x4.exr", 8, 4, 2, 1, 0, 1, 0.5f, 1},
    };
    char path[512];
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        snprintf(path, sizeof path, "fuzz/corpus/env_map_exr/%s", good[i].file);
        vpt_error_clear();
        VptEnvMap *m = vpt_env_map_load(path, 1.0);
        CHECK_MSG(m, "%s", vpt_errmsg());
        if (!m) continue;
        CHECK_MSG(m->width == good[i].w && m->height == good[i].h, "%s is %dx%d", path, m->width, m->height);
        const int ch[3] = {good[i].r, good[i].g, good[i].b};
        int off = 0;
        char first[160] = "";
        for (int y = 0; y < m->height && y < good[i].h; y++)
            for (int x = 0; x < m->width && x < good[i].w; x++)
                for (int k = 0; k < 3; k++) {
                    const float want = good[i].zero_row && y == 0
                                           ? 0.0f
                                           : good[i].scale * exr_seed_value(ch[k] < 0 ? 0 : ch[k], x, y, good[i].w, good[i].h);
                    const float got = m->radiance[3 * ((size_t)y * (size_t)m->width + (size_t)x) + (size_t)k];
                    /* a 0 written: B44 decodes it within 1e-4 of 0, never below (read as 0) */
                    const float tol = want == 0.0f && good[i].tol > 0 ? 1e-4f : good[i].tol * want;
                    if (!(fabsf(got - want) <= tol && got >= 0.0f) && !off++)
                        snprintf(first, sizeof first, "texel (%d, %d) channel %d is %g, written %g", x, y, k,
                                 (double)got, (double)want);
                }
        CHECK_MSG(off == 0, "%s: %d values differ from the written ones, the first: %s", path, off, first);
        vpt_env_map_destroy(m);
    }
    static const struct {
        const char *file, *says;
    } bad[] = {
        {"bad_tiled_8x8.exr", "tiled or deep"},
        {"bad_alpha_only_4x2.exr", "no R, G and B channels"},
        {"bad_subsampled_4x4.exr", "subsampled colour channel"},
        {"bad_negative_4x2.exr", "channel 2 is -1"},
        {"bad_nan_4x2.exr", "channel 2 is nan"},
        {"bad_cut_half.exr", "not a readable OpenEXR file"},
        {"bad_cut_end.exr", "damaged or truncated chunk"},
        {"bad_window_too_wide.exr", "70000"},
        {"bad_not_exr", "not a readable OpenEXR file"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(path, sizeof path, "fuzz/corpus/env_map_exr/%s", bad[i].file);
        char *data;
        size_t size;
        REQUIRE_MSG(vpt_read_file(path, 1 << 20, &data, &size) == 0, "%s", vpt_errmsg());
        vpt_error_clear();
        VptEnvMap *m = vpt_env_map_parse_exr(bad[i].file, (const unsigned char *)data, size, 1.0);
        free(data);
        CHECK_MSG(m == NULL, "%s accepted", path);
        vpt_env_map_destroy(m);
        CHECK_STR_CONTAINS(vpt_errmsg(), bad[i].file);
        CHECK_STR_CONTAINS(vpt_errmsg(), bad[i].says);
    }
}

/* ------------------------------------------------------------ directions */

TEST(env_map_directions_follow_mitsubas_envmap_convention)
{
    /* Mitsuba 3: u = atan2(x, -z) / 2 pi, v = acos(y) / pi */
    const struct {
        float x, y, z, u, v;
    } pts[] = {
        {0, 0, -1, 0.0f, 0.5f}, {1, 0, 0, 0.25f, 0.5f}, {0, 0, 1, 0.5f, 0.5f},
        {-1, 0, 0, 0.75f, 0.5f}, {0, 1, 0, 0.0f, 0.0f},  {0, -1, 0, 0.0f, 1.0f},
    };
    for (size_t i = 0; i < sizeof pts / sizeof pts[0]; i++) {
        VptEnvUV uv = vpt_env_uv_of(vpt_v3(pts[i].x, pts[i].y, pts[i].z));
        if (fabsf(pts[i].y) < 1) CHECK_MSG(fabsf(uv.u - pts[i].u) < 1e-6f, "point %zu: u %g", i, uv.u);
        CHECK_MSG(fabsf(uv.v - pts[i].v) < 1e-6f, "point %zu: v %g", i, uv.v);
        CHECK(uv.u >= 0.0f && uv.u < 1.0f);
    }
    for (int a = 0; a < 64; a++)
        for (int b = 1; b < 32; b++) {
            VptEnvUV uv = {(a + 0.5f) / 64.0f, b / 32.0f};
            vpt_vec3 d = vpt_env_dir_of(uv);
            CHECK_NEAR(vpt_dot(d, d), 1.0, 1e-5);
            VptEnvUV back = vpt_env_uv_of(d);
            CHECK_MSG(fabsf(back.u - uv.u) < 2e-5f && fabsf(back.v - uv.v) < 2e-5f, "(%g, %g) -> (%g, %g)", uv.u,
                      uv.v, back.u, back.v);
        }
}

/* ------------------------------------------------------------ the sampler */

/* A 16 x 8 map with structure: a colour gradient, a bright spot, a black
 * band (weight 0: sampled only by the uniform part) and a spot on the top
 * row (near the pole, where sin theta is small). */
static VptEnvMap *test_map(double scale)
{
    VptImage *img = vpt_image_create(16, 8);
    REQUIRE(img);
    for (int y = 0; y < 8; y++)
        for (int x = 0; x < 16; x++) {
            float *p = vpt_image_at(img, x, y);
            p[0] = 0.1f + 0.05f * (float)x;
            p[1] = 0.2f + 0.1f * (float)y;
            p[2] = 0.3f;
            if (x >= 4 && x < 6) p[0] = p[1] = p[2] = 0.0f; /* black band */
            if (x == 11 && y == 3) p[0] = p[1] = p[2] = 40.0f;
            if (x == 2 && y == 0) p[0] = 10.0f;
        }
    VptEnvMap *m = vpt_env_map_from_image("test_sky.pfm", img, scale);
    vpt_image_destroy(img);
    REQUIRE_MSG(m, "%s", vpt_errmsg());
    return m;
}

static void map_params(const VptEnvMap *m, VptParams *P)
{
    memset(P, 0, sizeof *P);
    vpt_env_map_params(m, P);
}

/* The integral of the pdf over the sphere (sub-texel cells in (u, v), each
 * by 5 x 5 Gauss-Legendre in u and v with d omega = 2 pi^2 sin theta du
 * dv), per cell into out[NU * NV] when given. */
enum { SUB = 2 };
static double pdf_integral(const VptParams *P, float uniform_override, double *out)
{
    VptParams Q = *P;
    if (uniform_override >= 0) Q.em_uniform = uniform_override;
    const int NU = Q.em_width * SUB, NV = Q.em_height * SUB;
    double total = 0;
    for (int j = 0; j < NV; j++)
        for (int i = 0; i < NU; i++) {
            double acc = 0;
            for (int a = 0; a < 5; a++)
                for (int b = 0; b < 5; b++) {
                    const double u = (i + 0.5 * (1 + vpt_test_gl_x[a])) / NU, v = (j + 0.5 * (1 + vpt_test_gl_x[b])) / NV;
                    VptEnvUV uv = {(float)u, (float)v};
                    const vpt_vec3 d = vpt_env_dir_of(uv);
                    acc += 0.25 * vpt_test_gl_w[a] * vpt_test_gl_w[b] * vpt_env_pdf(&Q, d) * 2 * M_PI * M_PI *
                           sin(M_PI * v);
                }
            acc /= (double)NU * NV;
            if (out) out[j * NU + i] = acc;
            total += acc;
        }
    return total;
}

TEST(env_map_pdf_integrates_to_one)
{
    VptEnvMap *m = test_map(1.0);
    VptParams P;
    map_params(m, &P);
    const double t = pdf_integral(&P, -1, NULL);
    CHECK_MSG(fabs(t - 1.0) < 1e-4, "integral %.8f", t);
    /* and every direction has pdf > 0, the black band and the poles too */
    for (int i = 0; i < 1000; i++) {
        VptEnvUV uv = {(i % 40 + 0.5f) / 40.0f, (i / 40 + 0.5f) / 25.0f};
        CHECK(vpt_env_pdf(&P, vpt_env_dir_of(uv)) > 0.0f);
    }
    CHECK(vpt_env_pdf(&P, vpt_v3(0, 1, 0)) > 0.0f && vpt_env_pdf(&P, vpt_v3(0, -1, 0)) > 0.0f);
    vpt_env_map_destroy(m);
    /* a black map samples the sphere uniformly */
    VptImage *img = vpt_image_create(4, 2);
    REQUIRE(img);
    m = vpt_env_map_from_image("black.pfm", img, 1.0);
    vpt_image_destroy(img);
    REQUIRE(m && m->uniform == 1.0f);
    map_params(m, &P);
    CHECK_NEAR(vpt_env_pdf(&P, vpt_v3(0.6f, 0.0f, 0.8f)), 1.0 / (4 * M_PI), 1e-7);
    CHECK_NEAR(pdf_integral(&P, -1, NULL), 1.0, 1e-4);
    vpt_env_map_destroy(m);
}

/* Sampled directions binned into the same sub-texel cells, against the
 * expected counts from the pdf's integral over each: 1e6 samples, sparse
 * cells pooled; rejected below p = 1e-3 (the false-alarm rate of a
 * correct sampler). A pdf that does not match the sampler (the uniform
 * share changed from 0.1 to 0.2) must fail. */
TEST(env_map_sampler_matches_its_pdf_chi2)
{
    VptEnvMap *m = test_map(1.0);
    VptParams P;
    map_params(m, &P);
    const int NU = P.em_width * SUB, NV = P.em_height * SUB, n = NU * NV;
    double *expect = malloc((size_t)n * sizeof *expect), *wrong = malloc((size_t)n * sizeof *wrong);
    double *seen = calloc((size_t)n, sizeof *seen);
    VptTestCell *cells = malloc((size_t)n * sizeof *cells);
    REQUIRE(expect && wrong && seen && cells);
    pdf_integral(&P, -1, expect);
    pdf_integral(&P, 0.2f, wrong);
    const int N = 1000000;
    for (int k = 0; k < N; k++) {
        const vpt_u4 r = vpt_rng(7u, (vpt_u64)k, 0u);
        const vpt_vec3 d = vpt_env_sample(&P, vpt_u01(r.x), vpt_u01(r.y), vpt_u01(r.z));
        REQUIRE(fabsf(vpt_dot(d, d) - 1.0f) < 1e-4f);
        VptEnvUV uv = vpt_env_uv_of(d);
        int i = (int)(uv.u * NU), j = (int)(uv.v * NV);
        i = i < 0 ? 0 : i >= NU ? NU - 1 : i;
        j = j < 0 ? 0 : j >= NV ? NV - 1 : j;
        seen[j * NU + i] += 1;
    }
    for (int i = 0; i < n; i++) cells[i] = (VptTestCell){expect[i] * N, seen[i]};
    VptTestChi2 c = vpt_test_chi2(cells, n, 5.0);
    CHECK_MSG(c.pvalue > 1e-3, "chi2 %.1f, %d dof: p %.3g", c.chi2, c.dof, c.pvalue);
    for (int i = 0; i < n; i++) cells[i] = (VptTestCell){wrong[i] * N, seen[i]};
    c = vpt_test_chi2(cells, n, 5.0);
    CHECK_MSG(c.pvalue < 1e-6, "a wrong pdf passed: chi2 %.1f, %d dof: p %.3g", c.chi2, c.dof, c.pvalue);
    free(expect);
    free(wrong);
    free(seen);
    free(cells);
    vpt_env_map_destroy(m);
}

/* ------------------------------------------------------------ the reference */

/* A 4^3 grid of constant density 1 (sigma_t = density_scale) in the unit
 * box about the origin, one albedo byte everywhere, HG g, null boundary,
 * no environment and no sun. */
static VptScene *box_scene(uint8_t albedo, float density_scale, float g)
{
    VptScene *s = calloc(1, sizeof *s);
    REQUIRE(s);
    snprintf(s->name, sizeof s->name, "envtest");
    s->nx = s->ny = s->nz = 4;
    s->density = malloc(64 * sizeof(float));
    s->albedo = malloc(64 * 4);
    REQUIRE(s->density && s->albedo);
    for (int i = 0; i < 64; i++) {
        s->density[i] = 0.5f + 0.5f * (float)((i * 7) % 5) / 4.0f; /* heterogeneous, in [0.5, 1] */
        s->albedo[4 * i + 0] = s->albedo[4 * i + 1] = s->albedo[4 * i + 2] = albedo;
        s->albedo[4 * i + 3] = 255;
    }
    s->density_scale = density_scale;
    for (int k = 0; k < 3; k++) {
        s->box_min[k] = -0.5f;
        s->box_max[k] = 0.5f;
    }
    const float pos[3] = {1.0f, 0.6f, 1.8f}, up[3] = {0, 1, 0};
    memcpy(s->cam_pos, pos, sizeof pos);
    memcpy(s->cam_up, up, sizeof up);
    s->fov_deg = 30.0f;
    s->boundary = VPT_BOUNDARY_NULL;
    s->ior_inside = s->ior_outside = 1.0f;
    s->hg_g = g;
    s->width = s->height = 8;
    s->spp = 4;
    REQUIRE_MSG(vpt_scene_finalize(s) == 0, "%s", vpt_errmsg());
    return s;
}

/* The mean and standard error of N paths' red radiance from (0, 0, -2)
 * along +z into the box: with next-event estimation toward the map
 * (escape_only 0), or with the map counted only where a path escapes
 * (escape_only 1: the map taken out of the params, added by hand at the
 * escape, so no shadow ray is traced). */
static void paths_mean(const VptScene *s, int transmittance, int escape_only, int N, double *mean, double *se)
{
    VptRenderSettings rs = {8, 8, 4, 3u, 0, -1, 1};
    VptParams P;
    vpt_params_init(&P, s, &rs);
    P.transmittance = transmittance;
    VptParams Q = P;
    if (escape_only) Q.env_map_on = 0;
    VptMedium m;
    vpt_cpu_medium_init(&m, s);
    double sx = 0, sxx = 0;
    for (int i = 0; i < N; i++) {
        VptPath path;
        vpt_path_start(&Q, (vpt_u64)i, &path);
        path.o = vpt_v3(0.1f, -0.05f, -2.0f);
        path.d = vpt_v3(0.0f, 0.0f, 1.0f);
        vpt_u64 steps = 0;
        for (;;) {
            vpt_path_extend(&Q, &m, &path, &steps);
            if (path.event == VPT_EV_ESCAPED || vpt_path_interact(&Q, &m, &path, &steps) != VPT_PATH_ALIVE) break;
        }
        vpt_vec3 L = vpt_path_radiance(&Q, &path);
        if (escape_only && path.event == VPT_EV_ESCAPED) L = vpt_add(L, vpt_mul(path.thr, vpt_env_radiance(&P, path.d)));
        sx += L.x;
        sxx += (double)L.x * L.x;
    }
    *mean = sx / N;
    *se = sqrt(fmax(sxx / N - *mean * *mean, 0.0) / N);
}

/* With albedo 1 and a constant map of value c (and nothing else), every
 * path ends by escaping or through next-event estimation's shadow rays,
 * and the image is c everywhere: the mean of 64 x 64 x 16 paths within 6
 * standard errors (a false alarm below 2e-9) of c, for each estimator. */
TEST(reference_env_map_white_furnace)
{
    VptScene *s = box_scene(255, 3.0f, 0.3f);
    VptLightOverride o = {0};
    char path[4096];
    float c[8 * 4 * 3];
    for (int i = 0; i < 96; i++) c[i] = 0.7f;
    snprintf(path, sizeof path, "%s", write_pfm("const.pfm", 8, 4, 0, 0, c, NULL, 0));
    o.env_map = path;
    REQUIRE_MSG(vpt_scene_set_light(s, &o) == 0, "%s", vpt_errmsg());
    CHECK(!strcmp(s->name, "envtest@envmapconst"));
    for (int tr = 0; tr < 3; tr++) {
        VptRenderSettings rs = {64, 64, 16, 5u, 0, -1, 1};
        VptParams P;
        vpt_params_init(&P, s, &rs);
        P.transmittance = tr;
        const size_t n = 64 * 64 * 3;
        float *mean = malloc(n * sizeof *mean), *var = malloc(n * sizeof *var);
        REQUIRE(mean && var);
        VptCpuRenderOptions ro = {0, VPT_PROGRESS_OFF, NULL};
        VptRenderStats st;
        REQUIRE_MSG(vpt_cpu_render(s, &P, &ro, mean, var, &st) == 0, "%s", vpt_errmsg());
        double sum = 0, v = 0;
        for (size_t i = 0; i < n; i += 3) {
            sum += mean[i];
            v += var[i];
        }
        const double px = (double)(n / 3), m = sum / px, se = sqrt(v / px / px);
        CHECK_MSG(fabs(m - 0.7) <= 6 * se + 1e-6, "estimator %d: %.6f, expected 0.7 +- %.6f", tr, m, se);
        free(mean);
        free(var);
    }
    vpt_scene_destroy(s);
}

/* A constant map of value c renders as the constant environment c does:
 * the map reached by next-event estimation after a scattering, the
 * environment only by escaping paths, two different estimators of one
 * image. Means within 6 combined standard errors, for each estimator. */
TEST(reference_constant_env_map_matches_the_constant_environment)
{
    float c[4 * 2 * 3];
    for (int i = 0; i < 24; i++) c[i] = 0.4f;
    char path[4096];
    snprintf(path, sizeof path, "%s", write_pfm("flat.pfm", 4, 2, 0, 1, c, NULL, 0));
    VptScene *with_map = box_scene(204, 4.0f, 0.5f), *with_env = box_scene(204, 4.0f, 0.5f);
    VptLightOverride om = {0}, oe = {0};
    om.env_map = path;
    oe.has_env = 1;
    oe.env[0] = oe.env[1] = oe.env[2] = 0.4;
    REQUIRE(vpt_scene_set_light(with_map, &om) == 0 && vpt_scene_set_light(with_env, &oe) == 0);
    for (int tr = 0; tr < 3; tr++) {
        double m1, s1, m2, s2;
        paths_mean(with_map, tr, 0, 200000, &m1, &s1);
        paths_mean(with_env, tr, 0, 200000, &m2, &s2);
        CHECK_MSG(fabs(m1 - m2) <= 6 * sqrt(s1 * s1 + s2 * s2), "estimator %d: map %.6f +- %.6f, env %.6f +- %.6f",
                  tr, m1, s1, m2, s2);
        CHECK(m1 > 0.05);
    }
    vpt_scene_destroy(with_map);
    vpt_scene_destroy(with_env);
}

/* A structured map (test_map: a bright spot, a black band, colours), all
 * orders of scattering: next-event estimation toward the map plus the map
 * at the camera ray's escape, against the same map counted only where
 * paths escape. Two unbiased estimators of one value: within 6 combined
 * standard errors (a false alarm below 2e-9), for each shadow-ray
 * estimator; and a sun beside the map leaves the map's part alone. */
TEST(reference_env_map_next_event_estimation_matches_escaping_paths)
{
    VptScene *s = box_scene(230, 2.5f, 0.4f);
    VptEnvMap *m = test_map(0.5);
    s->env_map = m;
    REQUIRE(vpt_scene_finalize(s) == 0);
    double me, se_e;
    paths_mean(s, VPT_TR_RATIO, 1, 400000, &me, &se_e);
    for (int tr = 0; tr < 3; tr++) {
        double mn, se_n;
        paths_mean(s, tr, 0, 200000, &mn, &se_n);
        CHECK_MSG(fabs(mn - me) <= 6 * sqrt(se_n * se_n + se_e * se_e),
                  "estimator %d: next-event %.6f +- %.6f, escaping %.6f +- %.6f", tr, mn, se_n, me, se_e);
        /* per path: next-event estimation finds the bright spot that few escaping paths hit */
        CHECK_MSG(se_n * sqrt(200000.0) < se_e * sqrt(400000.0),
                  "estimator %d: next-event estimation's error %.6f is not below escaping's %.6f", tr, se_n, se_e);
    }
    vpt_scene_destroy(s);
}

/* ------------------------------------------------------------ scene options */

TEST(env_map_scene_options_name_and_digest_the_map)
{
    float a[4 * 2 * 3], b[4 * 2 * 3];
    for (int i = 0; i < 24; i++) a[i] = b[i] = 0.1f * (float)i;
    b[17] += 1e-6f; /* one texel's one channel */
    char pa[4096], pb[4096];
    snprintf(pa, sizeof pa, "%s", write_pfm("sky.pfm", 4, 2, 0, 0, a, NULL, 0));
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/other", vpt_test_tmpdir());
    REQUIRE(snprintf(pb, sizeof pb, "%s", write_pfm("sky2.pfm", 4, 2, 0, 0, b, NULL, 0)) > 0);

    char *argv[] = {"tool", "--scene", "cloud16", "--env-map", pa, "--env-map-scale=2", NULL};
    VptSceneArgs args;
    vpt_scene_args_init(&args);
    for (int i = 1; i < 6; i++) REQUIRE_MSG(vpt_scene_args_take(&args, 6, argv, &i, 0) == 1, "%s", vpt_errmsg());
    REQUIRE(vpt_scene_args_check(&args, 1, 0) == 0);
    VptScene *s = vpt_scene_args_load(&args, NULL, NULL);
    REQUIRE_MSG(s, "%s", vpt_errmsg());
    CHECK_MSG(strstr(s->name, "@envmapsky@emscale2") != NULL, "name %s", s->name);
    CHECK(s->env_map && s->env_map->radiance[3] == 2.0f * a[3]);
    char h1[65], h2[65], h0[65];
    REQUIRE(vpt_scene_digest(s, h1) == 0);
    /* --env-map formats back */
    char buf[8192];
    REQUIRE(vpt_scene_args_format(&args, buf, sizeof buf) == 0);
    CHECK_STR_CONTAINS(buf, "--env-map");
    CHECK_STR_CONTAINS(buf, "--env-map-scale 2");
    vpt_scene_destroy(s);
    /* one texel changed: another digest */
    args.light.env_map = pb;
    s = vpt_scene_args_load(&args, NULL, NULL);
    REQUIRE(s);
    REQUIRE(vpt_scene_digest(s, h2) == 0);
    CHECK(strcmp(h1, h2) != 0);
    vpt_scene_destroy(s);
    /* no map: the scene's own digest */
    args.light.env_map = NULL;
    args.light.env_map_scale = 0;
    s = vpt_scene_args_load(&args, NULL, NULL);
    REQUIRE(s);
    REQUIRE(vpt_scene_digest(s, h0) == 0);
    CHECK(strcmp(h0, h1) != 0 && strchr(s->name, '@') == NULL);
    vpt_scene_destroy(s);

    /* errors */
    const struct {
        const char *args[4];
        const char *says;
    } bad[] = {
        {{"--env-map", "a.pfm", "--env-map", "b.pfm"}, "--env-map given twice"},
        {{"--env-map-scale", "0", NULL, NULL}, "not positive"},
        {{"--env-map-scale", "-1", NULL, NULL}, "--env-map-scale"},
        {{"--env-map-scale", "2", "--env-map-scale", "3"}, "given twice"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        VptSceneArgs x;
        vpt_scene_args_init(&x);
        char *v[6] = {"tool", (char *)bad[k].args[0], (char *)bad[k].args[1], (char *)bad[k].args[2],
                      (char *)bad[k].args[3], NULL};
        const int argc = bad[k].args[2] ? 5 : 3;
        int rc = 0;
        vpt_error_clear();
        for (int i = 1; i < argc && rc >= 0; i++) rc = vpt_scene_args_take(&x, argc, v, &i, 0);
        CHECK_MSG(rc == -1, "case %zu accepted", k);
        CHECK_STR_CONTAINS(vpt_errmsg(), bad[k].says);
    }
    VptSceneArgs x;
    vpt_scene_args_init(&x);
    char *v[] = {"tool", "--scene", "cloud16", "--env-map-scale", "2", NULL};
    for (int i = 1; i < 5; i++) REQUIRE(vpt_scene_args_take(&x, 5, v, &i, 0) == 1);
    vpt_error_clear();
    CHECK(vpt_scene_args_check(&x, 1, 0) == -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), "give --env-map FILE as well");

    /* a map that does not load leaves the scene unlit and named as it was */
    VptScene *t = box_scene(255, 1.0f, 0.0f);
    VptLightOverride o = {0};
    o.env_map = "/nonexistent/sky.pfm";
    CHECK(vpt_scene_set_light(t, &o) == -1 && !t->env_map && !strcmp(t->name, "envtest"));
    /* a name too long is refused, never cut */
    char stem[200];
    memset(stem, 'a', sizeof stem - 1);
    stem[sizeof stem - 1] = '\0';
    char longname[300];
    snprintf(longname, sizeof longname, "%s.pfm", stem);
    o.env_map = write_pfm(longname, 4, 2, 0, 0, a, NULL, 0);
    vpt_error_clear();
    CHECK(vpt_scene_set_light(t, &o) == -1 && !t->env_map && !strcmp(t->name, "envtest"));
    CHECK_STR_CONTAINS(vpt_errmsg(), "never cut");
    vpt_scene_destroy(t);
}
