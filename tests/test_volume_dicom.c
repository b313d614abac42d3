/* DICOM through GDCM (scenes/formats/volume_dicom.c, volume_dicom_gdcm.cc) on the
 * committed fixtures of tests/fixtures/dicom (make_fixtures.py says what they
 * hold): values in Hounsfield units (2 v - 1024), slices ordered by position
 * although the file names are not, spacing from PixelSpacing (x: between
 * columns, y: between rows) and the slice distance; a mixed series, a
 * missing slice, unequal slice sizes, an empty folder and a non-DICOM file
 * are refused with messages naming the problem. Skipped, with the reason,
 * when the shim is not built (no libgdcm-dev). */
#include "tests/harness/test.h"
#include "tests/test_tools.h"

#include "base/error.h"
#include "base/file.h"
#include "scenes/scene.h"
#include "scenes/volume.h"
#include "scenes/formats/volume_dicom.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define FIX "tests/fixtures/dicom"

static void need_shim(void)
{
    if (access(FIX "/multiframe.dcm", R_OK) != 0) SKIP("run the tests from the repository root (" FIX ")");
    if (!vpt_volume_dicom_shim_path()) {
        VptVolume v;
        vpt_volume_load(FIX "/multiframe.dcm", NULL, &v);
        SKIP("no GDCM shim: %s", vpt_errmsg());
    }
}

/* The fixtures' 4x3x5 grid: slice k, row y, column x holds 2(100k + 10y + x) - 1024. */
static void check_fixture_volume(const VptVolume *v, const char *what)
{
    REQUIRE_MSG(v->nx == 4 && v->ny == 3 && v->nz == 5, "%s: %dx%dx%d", what, v->nx, v->ny, v->nz);
    CHECK_NEAR(v->spacing[0], 0.75, 1e-6);
    CHECK_NEAR(v->spacing[1], 0.5, 1e-6);
    CHECK_NEAR(v->spacing[2], 2.5, 1e-6);
    CHECK_NEAR(v->origin[0], -1.0, 1e-6);
    CHECK_NEAR(v->origin[1], -2.0, 1e-6);
    CHECK_NEAR(v->origin[2], 10.0, 1e-6);
    for (int k = 0; k < 5; k++)
        for (int y = 0; y < 3; y++)
            for (int x = 0; x < 4; x++) {
                float want = 2.0f * (100 * k + 10 * y + x) - 1024.0f, got = v->data[x + 4 * (y + 3 * k)];
                CHECK_MSG(got == want, "%s: voxel (%d,%d,%d) is %g, expected %g", what, x, y, k, (double)got,
                          (double)want);
            }
}

TEST(dicom_series_sorted_rescaled_and_spaced)
{
    need_shim();
    VptVolume v;
    REQUIRE_MSG(vpt_volume_load(FIX "/series", NULL, &v) == 0, "%s", vpt_errmsg());
    check_fixture_volume(&v, "series/");
    CHECK(v.stored == VPT_SCALAR_I16);
    vpt_volume_free(&v);
}

TEST(dicom_multiframe_file_and_memory)
{
    need_shim();
    VptVolume v;
    REQUIRE_MSG(vpt_volume_load(FIX "/multiframe.dcm", NULL, &v) == 0, "%s", vpt_errmsg());
    check_fixture_volume(&v, "multiframe.dcm");
    vpt_volume_free(&v);
    char *data;
    size_t size;
    REQUIRE(vpt_read_file(FIX "/multiframe.dcm", 1 << 20, &data, &size) == 0);
    REQUIRE_MSG(vpt_volume_parse_dicom("mem.dcm", (const unsigned char *)data, size, 0, &v) == 0, "%s", vpt_errmsg());
    check_fixture_volume(&v, "multiframe.dcm in memory");
    vpt_volume_free(&v);
    /* a byte cap below the grid's 240 bytes of floats is refused */
    CHECK(vpt_volume_parse_dicom("mem.dcm", (const unsigned char *)data, size, 100, &v) == -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), "limit");
    free(data);
}

TEST(dicom_bad_series_are_refused_with_the_reason)
{
    need_shim();
    const char *tmp = vpt_test_tmpdir();
    char empty[600], junk[600];
    snprintf(empty, sizeof empty, "%s/empty-folder", tmp);
    REQUIRE(mkdir(empty, 0700) == 0);
    snprintf(junk, sizeof junk, "%s/junk.dcm", tmp);
    FILE *f = fopen(junk, "wb");
    REQUIRE(f);
    fputs("this is not a DICOM file\n", f);
    fclose(f);
    const struct {
        const char *path, *says;
    } cases[] = {
        {FIX "/mixed", "mixed series"},
        {FIX "/gap", "missing slice: 5 mm between"},
        {FIX "/unequal", "unequal slice sizes"},
        {empty, "no DICOM files in the folder"},
        {junk, "not a DICOM file"},
        {FIX "/no-such-series", "cannot open"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        VptVolume v;
        CHECK_MSG(vpt_volume_load(cases[i].path, NULL, &v) == -1, "%s was accepted", cases[i].path);
        CHECK_MSG(strstr(vpt_errmsg(), cases[i].says), "%s: '%s' should say '%s'", cases[i].path, vpt_errmsg(),
                  cases[i].says);
        CHECK_MSG(strstr(vpt_errmsg(), cases[i].path), "%s: '%s' should name it", cases[i].path, vpt_errmsg());
        CHECK(v.data == NULL);
    }
}

/* The tools: a series folder is a --volume (its name without the trailing
 * slash); without the shim only DICOM fails, saying what to install. */
TEST(dicom_series_as_a_tool_volume)
{
    need_shim();
    char cmd[2048], out[8192];
    snprintf(cmd, sizeof cmd, "%s --cpu --volume " FIX "/series/ --like manix --print-scene 2>&1", vpt_test_tool("render"));
    FILE *p = popen(cmd, "r");
    REQUIRE(p);
    size_t n = fread(out, 1, sizeof out - 1, p);
    out[n] = '\0';
    CHECK_EQ_INT(WEXITSTATUS(pclose(p)), 0);
    CHECK_STR_CONTAINS(out, "scene series\n");
    snprintf(cmd, sizeof cmd, "VPT_DICOM_SHIM=/nonexistent/libvptune-dicom.so %s --cpu --volume " FIX
                              "/series --print-scene 2>&1", vpt_test_tool("render"));
    p = popen(cmd, "r");
    REQUIRE(p);
    n = fread(out, 1, sizeof out - 1, p);
    out[n] = '\0';
    CHECK_EQ_INT(WEXITSTATUS(pclose(p)), 1);
    CHECK_STR_CONTAINS(out, "GDCM");
    CHECK_STR_CONTAINS(out, "apt-get install libgdcm");
}

/* Installed as `make install` lays it out (PREFIX/bin/render beside
 * PREFIX/lib/vptune/libvptune-dicom.so), the program finds the shim. */
TEST(dicom_shim_found_where_make_install_puts_it)
{
    need_shim();
    char out[8192];
    const int rc = vpt_test_installed_render(vpt_test_tmpdir(), vpt_volume_dicom_shim_path(),
                                             "--volume " FIX "/multiframe.dcm --print-scene", out, sizeof out);
    CHECK_MSG(rc == 0, "%s", out);
    CHECK_STR_CONTAINS(out, "grid 4x3x5");
}

/* ---------- hostile files: GDCM behind the fault boundary ---------- */

/* A fixture slice's bytes (one 4x3 CT slice of the series, 768 bytes). */
static unsigned char *slice_bytes(size_t *size)
{
    char *data;
    REQUIRE(vpt_read_file(FIX "/series/IM1", 1 << 20, &data, size) == 0);
    return (unsigned char *)data;
}

static void write_bytes(const char *path, const void *b, size_t n)
{
    FILE *f = fopen(path, "wb");
    REQUIRE(f);
    REQUIRE(fwrite(b, 1, n, f) == n);
    REQUIRE(fclose(f) == 0);
}

/* The offset of a value in the fixture (the first occurrence of `text`). */
static size_t find(const unsigned char *b, size_t n, const void *text, size_t len)
{
    for (size_t i = 0; i + len <= n; i++)
        if (!memcmp(b + i, text, len)) return i;
    REQUIRE_MSG(0, "'%.*s' not in the fixture", (int)len, (const char *)text);
    return 0;
}

static int same_volume(const VptVolume *a, const VptVolume *b)
{
    if (a->nx != b->nx || a->ny != b->ny || a->nz != b->nz || a->stored != b->stored) return 0;
    for (int k = 0; k < 3; k++)
        if (a->spacing[k] != b->spacing[k] || a->origin[k] != b->origin[k]) return 0;
    return !memcmp(a->data, b->data, (size_t)a->nx * a->ny * a->nz * sizeof(float));
}

/* Loads path expecting a refusal that names it and says `says`. */
static void refused(const char *path, const char *says)
{
    VptVolume v;
    CHECK_MSG(vpt_volume_load(path, NULL, &v) == -1, "%s was loaded", path);
    CHECK_MSG(strstr(vpt_errmsg(), path), "'%s' should name %s", vpt_errmsg(), path);
    CHECK_MSG(strstr(vpt_errmsg(), says), "%s: '%s' should say '%s'", path, vpt_errmsg(), says);
    CHECK(v.data == NULL);
}

/* The file that made GDCM assert (128 zero bytes and "DICM"), then a good
 * one in the same process: the caller survives and still loads. */
TEST(dicom_gdcm_assertion_is_an_error_and_the_process_goes_on)
{
    need_shim();
    char path[600];
    snprintf(path, sizeof path, "%s/zeros.dcm", vpt_test_tmpdir());
    unsigned char b[132] = {0};
    memcpy(b + 128, "DICM", 4);
    write_bytes(path, b, sizeof b);
    VptVolume v;
    CHECK(vpt_volume_load(path, NULL, &v) == -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), path);
    vpt_test_log("%s", vpt_errmsg());
    CHECK(vpt_volume_parse_dicom("zeros.dcm", b, sizeof b, 0, &v) == -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), "zeros.dcm");
    REQUIRE_MSG(vpt_volume_load(FIX "/multiframe.dcm", NULL, &v) == 0, "%s", vpt_errmsg());
    check_fixture_volume(&v, "multiframe.dcm after a crash of GDCM");
    vpt_volume_free(&v);
}

/* Every truncation of a valid slice, from disk and from memory: each either
 * loads a volume identical to the whole file's or fails with a message
 * naming the file; none aborts, none loads different data. The whole file
 * loads (so the test can fail both ways). */
TEST_TIMEOUT(dicom_every_truncation_fails_cleanly_or_loads_the_same, 300)
{
    need_shim();
    size_t n;
    unsigned char *b = slice_bytes(&n);
    VptVolume whole;
    REQUIRE_MSG(vpt_volume_parse_dicom("whole.dcm", b, n, 0, &whole) == 0, "%s", vpt_errmsg());
    char path[600];
    snprintf(path, sizeof path, "%s/cut.dcm", vpt_test_tmpdir());
    int loaded = 0, refusals = 0, unnamed = 0, different = 0, crashes = 0;
    for (size_t cut = 0; cut < n; cut++) {
        write_bytes(path, b, cut);
        for (int mem = 0; mem < 2; mem++) {
            VptVolume v;
            const int rc = mem ? vpt_volume_parse_dicom("cut.dcm", b, cut, 0, &v) : vpt_volume_load(path, NULL, &v);
            if (rc == 0) {
                loaded++;
                if (!same_volume(&v, &whole)) {
                    different++;
                    vpt_test_log("cut at %zu (%s) loaded a different volume", cut, mem ? "memory" : "file");
                }
                vpt_volume_free(&v);
                continue;
            }
            refusals++;
            unnamed += !strstr(vpt_errmsg(), mem ? "cut.dcm" : path);
            crashes += strstr(vpt_errmsg(), "crashed") != NULL;
        }
    }
    vpt_test_log("%zu cuts, twice: %d loaded, %d refused (%d of them GDCM crashes, contained)", n, loaded, refusals,
                 crashes);
    CHECK_EQ_INT(different, 0);
    CHECK_EQ_INT(unnamed, 0);
    CHECK_EQ_INT(loaded + refusals, 2 * (int)n);
    /* the pixel data is last: no proper prefix holds the whole slice */
    CHECK_EQ_INT(loaded, 0);
    vpt_volume_free(&whole);
    free(b);
}

/* Pixel data shorter than rows x columns x bits says (with a length field
 * that agrees, and with one that does not), and a length field of
 * 0xFFFFFFF0 in a small file: refused before GDCM allocates it. */
TEST(dicom_pixel_data_length_is_checked)
{
    need_shim();
    size_t n;
    unsigned char *b = slice_bytes(&n);
    const unsigned char tag[] = {0xe0, 0x7f, 0x10, 0x00, 'O', 'W', 0, 0};
    const size_t at = find(b, n, tag, sizeof tag), len_at = at + 8;
    REQUIRE(n == len_at + 4 + 24); /* 4 x 3 values of 2 bytes, last in the file */
    char path[600];
    snprintf(path, sizeof path, "%s/short.dcm", vpt_test_tmpdir());
    /* 12 of the 24 bytes, the length field saying 12 */
    b[len_at] = 12;
    write_bytes(path, b, n - 12);
    refused(path, "the pixel data holds 12 bytes, but rows x columns x frames x bits allocated (3 x 4 x 1 x 16 bits) need 24");
    /* the length field saying 24, the file holding 12 */
    b[len_at] = 24;
    write_bytes(path, b, n - 12);
    refused(path, "the pixel data's length field says 24 bytes, but only 12 bytes follow it");
    /* 0xFFFFFFF0 */
    snprintf(path, sizeof path, "%s/huge.dcm", vpt_test_tmpdir());
    const unsigned char huge[4] = {0xf0, 0xff, 0xff, 0xff};
    memcpy(b + len_at, huge, 4);
    write_bytes(path, b, n);
    refused(path, "the pixel data's length field says 4294967280 bytes, but only 24 bytes follow it");
    free(b);
}

/* PixelSpacing 0\0 and nan\nan (GDCM reads both as 1), a non-finite
 * ImagePositionPatient (GDCM reads it as 0): refused with the value named,
 * alone and in a series (where a 0 made it look like a duplicate slice). */
TEST(dicom_spacing_and_position_are_checked)
{
    need_shim();
    size_t n;
    unsigned char *b = slice_bytes(&n);
    const size_t ps = find(b, n, "0.5\\0.75", 8);
    const char *tmp = vpt_test_tmpdir();
    char path[600];
    const struct {
        const char *value, *says;
    } spacing[] = {{"0\\0     ", "PixelSpacing (0028,0030) is '0\\0': expected 2 finite positive numbers"},
                   {"nan\\nan ", "PixelSpacing (0028,0030) is 'nan\\nan': expected 2 finite positive numbers"},
                   {"1\\-0.75 ", "PixelSpacing (0028,0030) is '1\\-0.75'"},
                   {"1e999\\1 ", "PixelSpacing (0028,0030) is '1e999\\1'"}};
    for (size_t i = 0; i < sizeof spacing / sizeof spacing[0]; i++) {
        unsigned char *c = malloc(n);
        memcpy(c, b, n);
        memcpy(c + ps, spacing[i].value, 8);
        snprintf(path, sizeof path, "%s/spacing%zu.dcm", tmp, i);
        write_bytes(path, c, n);
        refused(path, spacing[i].says);
        free(c);
    }
    /* IM1 is slice 0 at z = 10: "-1.0\-2.0\10.0" */
    const size_t ipp = find(b, n, "-1.0\\-2.0\\10.0", 14);
    memcpy(b + ipp, "-1.0\\-2.0\\nan ", 14);
    snprintf(path, sizeof path, "%s/position.dcm", tmp);
    write_bytes(path, b, n);
    refused(path, "ImagePositionPatient (0020,0032) is '-1.0\\-2.0\\nan': expected 3 finite numbers");
    /* the same slice in a copy of the series */
    char dir[600], cmd[1400], im1[700];
    snprintf(dir, sizeof dir, "%s/series", tmp);
    snprintf(cmd, sizeof cmd, "cp -r " FIX "/series %s", dir);
    REQUIRE(system(cmd) == 0);
    snprintf(im1, sizeof im1, "%s/IM1", dir);
    write_bytes(im1, b, n);
    VptVolume v;
    CHECK(vpt_volume_load(dir, NULL, &v) == -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), "IM1: ImagePositionPatient (0020,0032) is '-1.0\\-2.0\\nan'");
    free(b);
}
