#include "tests/harness/test.h"

#include "base/error.h"
#include "base/file.h"
#include "image/image.h"

#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

static void tmp_path(char *out, size_t cap, const char *name)
{
    snprintf(out, cap, "%s/%s", vpt_test_tmpdir(), name);
}

/* Number of entries in the test's tmpdir: catches leftover temporaries. */
static int tmpdir_entries(void)
{
    DIR *d = opendir(vpt_test_tmpdir());
    if (!d) return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
    closedir(d);
    return n;
}

TEST(image_create_limits)
{
    VptImage *img = vpt_image_create(3, 2);
    REQUIRE(img);
    CHECK(img->width == 3 && img->height == 2);
    for (int i = 0; i < 18; i++) CHECK(img->rgb[i] == 0.0f);
    vpt_image_at(img, 2, 1)[1] = 7.0f;
    CHECK(img->rgb[3 * (2 + 3 * 1) + 1] == 7.0f);
    vpt_image_destroy(img);
    vpt_image_destroy(NULL);
    CHECK(vpt_image_create(0, 5) == NULL);
    CHECK_STR_CONTAINS(vpt_errmsg(), "0x5");
    CHECK(vpt_image_create(5, -1) == NULL);
    CHECK(vpt_image_create(VPT_IMAGE_MAX_DIM + 1, 1) == NULL);
    CHECK(vpt_image_create(VPT_IMAGE_MAX_DIM, VPT_IMAGE_MAX_DIM) == NULL); /* too many pixels */
    CHECK_STR_CONTAINS(vpt_errmsg(), "pixels");
}

TEST(image_pfm_roundtrip_exact)
{
    VptImage *img = vpt_image_create(5, 3);
    REQUIRE(img);
    const float special[] = {-1.5f, 0.0f, -0.0f, 1e-38f, 3.4e38f, 0.1f, 123456.789f, -7e-3f, INFINITY};
    for (int i = 0; i < 5 * 3 * 3; i++) img->rgb[i] = i < 9 ? special[i] : (float)i * 0.37f - 4.0f;
    char path[700];
    tmp_path(path, sizeof path, "a.pfm");
    REQUIRE(vpt_image_write(path, img) == 0);

    /* The header and row order on disk: bottom row first, little endian. */
    char *data;
    size_t size;
    REQUIRE(vpt_read_file(path, 1 << 20, &data, &size) == 0);
    const char *hdr = "PF\n5 3\n-1.0\n";
    REQUIRE(size == strlen(hdr) + 5 * 3 * 12);
    CHECK(memcmp(data, hdr, strlen(hdr)) == 0);
    const unsigned char *p = (const unsigned char *)data + strlen(hdr);
    float first;
    uint32_t u = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
    memcpy(&first, &u, 4);
    CHECK(first == vpt_image_at(img, 0, 2)[0]); /* first stored value: bottom-left red */
    free(data);

    VptImage *back = vpt_image_read_pfm(path);
    REQUIRE(back);
    CHECK(back->width == 5 && back->height == 3);
    CHECK(memcmp(back->rgb, img->rgb, sizeof(float) * 5 * 3 * 3) == 0);
    CHECK(signbit(back->rgb[2])); /* -0.0 kept bit-exactly */
    vpt_image_destroy(back);
    vpt_image_destroy(img);
}

TEST(image_pfm_big_endian_read)
{
    /* A 1x1 big-endian PFM (positive scale) holding (1, -2, 0.5). */
    unsigned char buf[64];
    const char *hdr = "PF 1 1 1.0\n";
    size_t n = strlen(hdr);
    memcpy(buf, hdr, n);
    const float v[3] = {1.0f, -2.0f, 0.5f};
    for (int i = 0; i < 3; i++) {
        uint32_t u;
        memcpy(&u, &v[i], 4);
        buf[n++] = (unsigned char)(u >> 24);
        buf[n++] = (unsigned char)(u >> 16);
        buf[n++] = (unsigned char)(u >> 8);
        buf[n++] = (unsigned char)u;
    }
    VptImage *img = vpt_image_parse_pfm("be.pfm", buf, n);
    REQUIRE(img);
    CHECK(img->rgb[0] == 1.0f && img->rgb[1] == -2.0f && img->rgb[2] == 0.5f);
    vpt_image_destroy(img);
}

static void expect_pfm_error(const char *buf, size_t size, const char *needle)
{
    VptImage *img = vpt_image_parse_pfm("bad.pfm", (const unsigned char *)buf, size);
    CHECK_MSG(img == NULL, "malformed PFM accepted: %.20s", buf);
    vpt_image_destroy(img);
    CHECK_STR_CONTAINS(vpt_errmsg(), "bad.pfm");
    if (needle) CHECK_STR_CONTAINS(vpt_errmsg(), needle);
}

TEST(image_pfm_malformed)
{
    char buf[256];
    expect_pfm_error("", 0, "not a PFM");
    expect_pfm_error("P6\n1 1\n255\n...", 14, "not a PFM");
    expect_pfm_error("Pf\n1 1\n-1.0\nabcd", 16, "grayscale");
    expect_pfm_error("PF\n1\n", 5, "height");
    expect_pfm_error("PF\nx 1\n-1.0\n", 12, "width");
    expect_pfm_error("PF\n-3 1\n-1.0\n", 13, "width");
    expect_pfm_error("PF\n1 1\nnan\n", 11, "scale");
    expect_pfm_error("PF\n1 1\n0.0\n", 11, "scale");
    expect_pfm_error("PF\n1 1\n-1.0", 11, "whitespace");
    /* huge dims: refused before any allocation, whatever the data size */
    expect_pfm_error("PF\n99999999999 2\n-1.0\n", 22, "width");
    expect_pfm_error("PF\n65536 65536\n-1.0\n", 20, "pixels");
    /* truncated and overlong data */
    memset(buf, 0, sizeof buf);
    memcpy(buf, "PF\n2 2\n-1.0\n", 12);
    expect_pfm_error(buf, 12 + 47, "expected 48");
    expect_pfm_error(buf, 12 + 49, "expected 48");
    VptImage *ok = vpt_image_parse_pfm("ok.pfm", (const unsigned char *)buf, 12 + 48);
    CHECK(ok != NULL); /* the same header with the right size is fine */
    vpt_image_destroy(ok);
    /* a missing file names the file */
    char path[700];
    tmp_path(path, sizeof path, "missing.pfm");
    CHECK(vpt_image_read_pfm(path) == NULL);
    CHECK_STR_CONTAINS(vpt_errmsg(), "missing.pfm");
}

TEST(image_srgb_curve)
{
    CHECK(vpt_srgb_encode8(0.0f) == 0);
    CHECK(vpt_srgb_encode8(1.0f) == 255);
    CHECK(vpt_srgb_encode8(0.5f) == 188);
    CHECK(vpt_srgb_encode8(0.18f) == 118);
    CHECK(vpt_srgb_encode8(0.001f) == 3);   /* linear segment: 12.92 * 0.001 * 255 = 3.29 */
    CHECK(vpt_srgb_encode8(7.0f) == 255);
    CHECK(vpt_srgb_encode8(-1.0f) == 0);
    CHECK(vpt_srgb_encode8(NAN) == 0);
    for (int i = 0; i < 256; i++) /* decode is the inverse on every 8-bit level */
        CHECK(vpt_srgb_encode8(vpt_srgb_decode((float)i / 255.0f)) == i);
    CHECK_NEAR(vpt_srgb_decode(vpt_srgb_encode(0.3f)), 0.3f, 1e-6);
}

TEST(image_png_write_read_values)
{
    VptImage *img = vpt_image_create(4, 2);
    REQUIRE(img);
    const float in[4][3] = {{0.0f, 0.5f, 1.0f}, {2.0f, -1.0f, 0.18f}, {NAN, INFINITY, 0.001f}, {0.25f, 0.75f, 0.04f}};
    const int want[4][3] = {{0, 188, 255}, {255, 0, 118}, {0, 255, 3}, {137, 225, 56}};
    for (int x = 0; x < 4; x++)
        for (int c = 0; c < 3; c++) {
            vpt_image_at(img, x, 0)[c] = in[x][c];
            vpt_image_at(img, x, 1)[c] = in[3 - x][c]; /* second row mirrored: checks row order */
        }
    char path[700];
    tmp_path(path, sizeof path, "a.PNG");
    REQUIRE(vpt_image_write(path, img) == 0);
    VptImage *enc = vpt_image_read_png(path, VPT_PNG_ENCODED);
    REQUIRE(enc);
    CHECK(enc->width == 4 && enc->height == 2);
    for (int x = 0; x < 4; x++)
        for (int c = 0; c < 3; c++) {
            int got0 = (int)lrintf(vpt_image_at(enc, x, 0)[c] * 255.0f);
            int got1 = (int)lrintf(vpt_image_at(enc, x, 1)[c] * 255.0f);
            CHECK_MSG(got0 == want[x][c], "pixel (%d,0)[%d]: %d != %d", x, c, got0, want[x][c]);
            CHECK_MSG(got1 == want[3 - x][c], "pixel (%d,1)[%d]: %d != %d", x, c, got1, want[3 - x][c]);
        }
    VptImage *lin = vpt_image_read_png(path, VPT_PNG_LINEAR);
    REQUIRE(lin);
    CHECK_NEAR(vpt_image_at(lin, 0, 0)[1], 0.5f, 0.003f); /* 188 decodes to ~0.5 */
    CHECK(vpt_image_at(lin, 0, 0)[2] == 1.0f);
    vpt_image_destroy(lin);
    vpt_image_destroy(enc);
    vpt_image_destroy(img);
}

TEST(image_png_refuses_other_formats)
{
    /* A PFM is not a PNG; and a grayscale PNG is refused by type. */
    char path[700];
    VptImage *img = vpt_image_create(2, 2);
    REQUIRE(img);
    tmp_path(path, sizeof path, "x.pfm");
    REQUIRE(vpt_image_write(path, img) == 0);
    CHECK(vpt_image_read_png(path, VPT_PNG_ENCODED) == NULL);
    CHECK_STR_CONTAINS(vpt_errmsg(), "x.pfm");
    vpt_image_destroy(img);

    /* Our own 1x1 RGB PNG with IHDR patched to other types (CRC fixed up):
     * refused by type, before any pixel data is read. */
    tmp_path(path, sizeof path, "rgb.png");
    VptImage *one = vpt_image_create(1, 1);
    REQUIRE(one);
    REQUIRE(vpt_image_write_png(path, one) == 0);
    vpt_image_destroy(one);
    char *data;
    size_t size;
    REQUIRE(vpt_read_file(path, 1 << 20, &data, &size) == 0);
    /* signature (8), length (4), "IHDR" (4), w (4), h (4), depth, color type, ..., CRC at 29 */
    REQUIRE(size > 33 && memcmp(data + 12, "IHDR", 4) == 0);
    CHECK(data[24] == 8 && data[25] == 2);
    const struct { char depth, type; const char *why; } variants[] = {{16, 2, "16-bit"}, {8, 0, "grayscale"},
                                                                     {8, 3, "PLTE"}}; /* palette without PLTE: malformed */
    for (int i = 0; i < 3; i++) {
        data[24] = variants[i].depth;
        data[25] = variants[i].type;
        uLong crc = crc32(0, (const Bytef *)data + 12, 17);
        for (int k = 0; k < 4; k++) data[29 + k] = (char)(crc >> (24 - 8 * k));
        char bad[700];
        tmp_path(bad, sizeof bad, "bad.png");
        REQUIRE(vpt_write_file_atomic(bad, data, size) == 0);
        CHECK(vpt_image_read_png(bad, VPT_PNG_ENCODED) == NULL);
        CHECK_STR_CONTAINS(vpt_errmsg(), "bad.png");
        CHECK_STR_CONTAINS(vpt_errmsg(), variants[i].why);
    }
    free(data);
}

TEST(image_write_bad_extension)
{
    VptImage *img = vpt_image_create(2, 2);
    REQUIRE(img);
    char path[700];
    tmp_path(path, sizeof path, "out.jpg");
    CHECK(vpt_image_write(path, img) == -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), ".jpg");
    CHECK_STR_CONTAINS(vpt_errmsg(), ".png");
    CHECK_STR_CONTAINS(vpt_errmsg(), ".pfm");
    tmp_path(path, sizeof path, "noext");
    CHECK(vpt_image_write(path, img) == -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), "noext");
    tmp_path(path, sizeof path, ".png"); /* a hidden file named ".png" has no extension */
    CHECK(vpt_image_write(path, img) == -1);
    CHECK(tmpdir_entries() == 0);
    vpt_image_destroy(img);
}

TEST(image_write_unwritable_leaves_nothing)
{
    VptImage *img = vpt_image_create(8, 8);
    REQUIRE(img);
    char path[700];
    tmp_path(path, sizeof path, "no/such/dir/out.png");
    CHECK(vpt_image_write(path, img) == -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), path);
    tmp_path(path, sizeof path, "no/such/dir/out.pfm");
    CHECK(vpt_image_write(path, img) == -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), path);

    /* A read-only directory (skipped as root, who can write anyway). */
    char dir[600];
    tmp_path(dir, sizeof dir, "ro");
    REQUIRE(mkdir(dir, 0555) == 0);
    snprintf(path, sizeof path, "%s/out.png", dir);
    int rc = vpt_image_write(path, img);
    if (geteuid() != 0) {
        CHECK(rc == -1);
        CHECK_STR_CONTAINS(vpt_errmsg(), path);
        CHECK(access(path, F_OK) != 0);
    }
    chmod(dir, 0755);
    vpt_image_destroy(img);
}

TEST(image_write_failing_commit_leaves_nothing)
{
    /* The final name is a directory: the data goes to the temporary, the
     * rename fails, and neither a partial file nor the temporary remains. */
    VptImage *img = vpt_image_create(64, 64);
    REQUIRE(img);
    const char *names[] = {"dir.pfm", "dir.png"};
    for (int i = 0; i < 2; i++) {
        char path[700];
        tmp_path(path, sizeof path, names[i]);
        REQUIRE(mkdir(path, 0755) == 0);
        CHECK(vpt_image_write(path, img) == -1);
        CHECK_STR_CONTAINS(vpt_errmsg(), path);
        struct stat st;
        CHECK(stat(path, &st) == 0 && S_ISDIR(st.st_mode));
    }
    CHECK(tmpdir_entries() == 2); /* just the two directories */
    vpt_image_destroy(img);
}

TEST(image_stats)
{
    VptImage *img = vpt_image_create(2, 1);
    REQUIRE(img);
    const float v[6] = {1, 2, 3, -1, NAN, INFINITY};
    memcpy(img->rgb, v, sizeof v);
    VptImageStats st;
    vpt_image_stats(img, &st);
    CHECK(st.nonfinite == 2);
    CHECK_NEAR(st.mean[0], 0.0, 1e-12);
    CHECK_NEAR(st.mean[1], 2.0, 1e-12);
    CHECK_NEAR(st.mean[2], 3.0, 1e-12);
    CHECK_NEAR(st.mean_all, 5.0 / 4.0, 1e-12);
    CHECK(st.min == -1.0f && st.max == 3.0f);
    vpt_image_destroy(img);
}
