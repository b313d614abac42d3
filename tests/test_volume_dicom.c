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
