/* Volume files that are wrong: every case must fail with -1 and a message
 * that names the file and the problem, allocate nothing oversized, and never
 * crash; then a deterministic mutation fuzz of the in-memory parsers. */
#include "tests/harness/test.h"
#include "tests/test_tools.h"

#include "base/error.h"
#include "scenes/volume.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <zlib.h>

/* Loading `path` fails, the volume stays zeroed, and the message names the
 * file's base name and contains `what`. */
static void expect_fail_at(const char *file, int line, const char *path, const VptVolumeLoadOptions *o,
                           const char *what)
{
    VptVolume v;
    memset(&v, 0xab, sizeof v);
    vpt_error_clear();
    VptVolumeLoadOptions dflt = {0};
    int rc = vpt_volume_load(path, o ? o : &dflt, &v);
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    const char *msg = vpt_errmsg();
    if (rc != -1) {
        vpt_test_fail_at(file, line, "%s: loaded, expected a failure mentioning '%s'", base, what);
        vpt_volume_free(&v);
        return;
    }
    if (v.data != NULL || v.nx != 0) vpt_test_fail_at(file, line, "%s: *out not zeroed on failure", base);
    if (!strstr(msg, base)) vpt_test_fail_at(file, line, "message '%s' should name '%s'", msg, base);
    if (!strstr(msg, what)) vpt_test_fail_at(file, line, "message '%s' should contain '%s'", msg, what);
}
#define EXPECT_FAIL(path, opt, what) expect_fail_at(__FILE__, __LINE__, path, opt, what)

/* Writes a file and expects loading it to fail. */
static void bad_file_at(const char *file, int line, const char *name, const void *a, size_t na, const void *b,
                        size_t nb, const char *what)
{
    char p[600];
    vpt_test_write_file(vpt_test_tmp_path(p, sizeof p, name), a, na, b, nb);
    expect_fail_at(file, line, p, NULL, what);
}
#define BAD(name, hdr, data, ndata, what) bad_file_at(__FILE__, __LINE__, name, hdr, strlen(hdr), data, ndata, what)

/* Keeps any oversized allocation from succeeding: a loader that allocated
 * before validating would fail here with an out-of-memory message (or crash)
 * instead of naming the size. AddressSanitizer needs a huge address space
 * for its shadow memory, and aborts on oversized allocations by itself. */
static void limit_memory(void)
{
#ifndef __SANITIZE_ADDRESS__
    struct rlimit r = {(rlim_t)1 << 30, (rlim_t)1 << 30};
    setrlimit(RLIMIT_AS, &r);
#endif
}

static void vol_header(unsigned char h[48], int enc, int x, int y, int z, int ch)
{
    int32_t w[6] = {enc, x, y, z, ch};
    memcpy(h, "VOL\3", 4);
    memcpy(h + 4, w, 20);
    float box[6] = {-0.5f, -0.5f, -0.5f, 0.5f, 0.5f, 0.5f};
    memcpy(h + 24, box, sizeof box);
}

TEST(volume_bad_files_generic)
{
    char p[600];
    EXPECT_FAIL(vpt_test_tmp_path(p, sizeof p, "nonexistent.vol"), NULL, "No such file");
    EXPECT_FAIL(vpt_test_tmp_path(p, sizeof p, "nonexistent.mhd"), NULL, "No such file");
    EXPECT_FAIL(vpt_test_tmpdir(), NULL, "DICOM");            /* a directory: read as a DICOM series */
    VptVolumeLoadOptions o = {.dims = {2, 2, 2}, .has_dims = 1, .type = VPT_SCALAR_U8, .has_type = 1};
    EXPECT_FAIL(vpt_test_tmpdir(), &o, "not a regular file");
    snprintf(p, sizeof p, "%s/dir.nrrd", vpt_test_tmpdir());
    REQUIRE(mkdir(p, 0700) == 0);
    EXPECT_FAIL(p, NULL, "not a regular file");
    BAD("empty.vol", "", NULL, 0, "empty");
    BAD("empty.mha", "", NULL, 0, "empty");
    BAD("empty.nrrd", "", NULL, 0, "empty");
}

TEST(volume_bad_raw)
{
    char p[600];
    vpt_test_write_file(vpt_test_tmp_path(p, sizeof p, "x.raw"), "0123456789", 10, NULL, 0);
    EXPECT_FAIL(p, NULL, "dims");
    VptVolumeLoadOptions o = {.dims = {2, 2, 2}, .has_dims = 1, .type = VPT_SCALAR_U16, .has_type = 1};
    EXPECT_FAIL(p, &o, "expected 16 bytes");
    o.type = VPT_SCALAR_U8;
    EXPECT_FAIL(p, &o, "file has 10");
    o.dims[1] = 0;
    EXPECT_FAIL(p, &o, "must be positive");
    o.dims[1] = -3;
    EXPECT_FAIL(p, &o, "-3");
    o.dims[1] = 70000;
    EXPECT_FAIL(p, &o, "70000");
    /* f32 with a NaN: rejected with the voxel index */
    float f[8] = {0, 1, 2, 3, 4, NAN, 6, 7};
    vpt_test_write_file(vpt_test_tmp_path(p, sizeof p, "nan.dat"), f, sizeof f, NULL, 0);
    o = (VptVolumeLoadOptions){.dims = {2, 2, 2}, .has_dims = 1, .type = VPT_SCALAR_F32, .has_type = 1};
    EXPECT_FAIL(p, &o, "voxel 5 (x 1, y 0, z 1)");
    f[5] = INFINITY;
    vpt_test_write_file(p, f, sizeof f, NULL, 0);
    EXPECT_FAIL(p, &o, "non-finite");
    double d[8] = {0, 0, 0, 1e300, 0, 0, 0, 0};
    vpt_test_write_file(p, d, sizeof d, NULL, 0);
    o.type = VPT_SCALAR_F64;
    EXPECT_FAIL(p, &o, "voxel 3");
}

TEST(volume_bad_mitsuba)
{
    limit_memory();
    unsigned char h[48], data[64] = {0};
    char p[600];
    vol_header(h, 1, 2, 2, 2, 1);
    vpt_test_write_file(vpt_test_tmp_path(p, sizeof p, "short.vol"), h, 48, data, 10);
    EXPECT_FAIL(p, NULL, "truncated: expected 32 data bytes, file has 10");
    vpt_test_write_file(vpt_test_tmp_path(p, sizeof p, "hdronly.vol"), h, 48, NULL, 0);
    EXPECT_FAIL(p, NULL, "truncated");
    vpt_test_write_file(vpt_test_tmp_path(p, sizeof p, "cut.vol"), h, 30, NULL, 0);
    EXPECT_FAIL(p, NULL, "truncated header");
    vpt_test_write_file(vpt_test_tmp_path(p, sizeof p, "long.vol"), h, 48, data, 40);
    EXPECT_FAIL(p, NULL, "8 bytes after");
    vpt_test_write_file(vpt_test_tmp_path(p, sizeof p, "magic.vol"), "VOX\3", 4, data, 60);
    EXPECT_FAIL(p, NULL, "bad magic");
    h[3] = 2;
    vpt_test_write_file(vpt_test_tmp_path(p, sizeof p, "version.vol"), h, 48, data, 32);
    EXPECT_FAIL(p, NULL, "version 2");
    vol_header(h, 2, 2, 2, 2, 1);
    vpt_test_write_file(vpt_test_tmp_path(p, sizeof p, "f16.vol"), h, 48, data, 16);
    EXPECT_FAIL(p, NULL, "float16");
    vol_header(h, 9, 2, 2, 2, 1);
    vpt_test_write_file(vpt_test_tmp_path(p, sizeof p, "enc.vol"), h, 48, data, 32);
    EXPECT_FAIL(p, NULL, "unknown encoding 9");
    vol_header(h, 1, 2, 2, 2, 3);
    vpt_test_write_file(vpt_test_tmp_path(p, sizeof p, "rgb.vol"), h, 48, data, 64);
    EXPECT_FAIL(p, NULL, "3 channels");
    vol_header(h, 1, 2, 0, 2, 1);
    vpt_test_write_file(vpt_test_tmp_path(p, sizeof p, "zero.vol"), h, 48, data, 32);
    EXPECT_FAIL(p, NULL, "size 0 along y must be positive");
    vol_header(h, 1, -5, 2, 2, 1);
    vpt_test_write_file(vpt_test_tmp_path(p, sizeof p, "neg.vol"), h, 48, data, 32);
    EXPECT_FAIL(p, NULL, "-5");
    vol_header(h, 1, 100000, 100000, 100000, 1);
    vpt_test_write_file(vpt_test_tmp_path(p, sizeof p, "huge.vol"), h, 48, data, 32);
    EXPECT_FAIL(p, NULL, "100000");
    /* within the per-axis limit, but 65536^3 floats are far beyond max_bytes */
    vol_header(h, 1, 65536, 65536, 65536, 1);
    vpt_test_write_file(vpt_test_tmp_path(p, sizeof p, "big.vol"), h, 48, data, 32);
    EXPECT_FAIL(p, NULL, "1125899906842624 bytes, more than the 8589934592 allowed");
    vol_header(h, 1, 2, 2, 2, 1);
    float bad_box[6] = {0, 0, 1, 1, 1, 1};
    memcpy(h + 24, bad_box, sizeof bad_box);
    vpt_test_write_file(vpt_test_tmp_path(p, sizeof p, "box.vol"), h, 48, data, 32);
    EXPECT_FAIL(p, NULL, "bounding box is empty along z");
    vol_header(h, 1, 2, 2, 2, 1);
    float nan_data[8] = {0, 0, 0, 0, 0, 0, NAN, 0};
    vpt_test_write_file(vpt_test_tmp_path(p, sizeof p, "nan.vol"), h, 48, nan_data, sizeof nan_data);
    EXPECT_FAIL(p, NULL, "voxel 6");
    /* max_bytes is honoured */
    vpt_test_write_file(vpt_test_tmp_path(p, sizeof p, "ok.vol"), h, 48, data, 32);
    VptVolumeLoadOptions o = {.max_bytes = 16};
    EXPECT_FAIL(p, &o, "more than the 16 allowed");
}

static const char *MHD_OK = "ObjectType = Image\nNDims = 3\nDimSize = 2 2 2\nElementType = MET_UCHAR\n";

TEST(volume_bad_metaimage)
{
    limit_memory();
    char h[1024], p[600];
    unsigned char data[64] = {1, 2, 3, 4, 5, 6, 7, 8};
    snprintf(h, sizeof h, "%sElementDataFile = LOCAL\n", MHD_OK);
    BAD("trunc.mha", h, data, 5, "truncated: expected 8 data bytes, file has 5");
    BAD("hdronly.mha", h, NULL, 0, "truncated");
    BAD("long.mha", h, data, 9, "wrong size");
    BAD("nodatafile.mha", "NDims = 3\nDimSize = 2 2 2\nElementType = MET_UCHAR\n", NULL, 0, "no ElementDataFile");
    BAD("nondims.mha", "DimSize = 2 2 2\nElementType = MET_UCHAR\nElementDataFile = LOCAL\n", data, 8,
        "missing required key NDims");
    BAD("nodimsize.mha", "NDims = 3\nElementType = MET_UCHAR\nElementDataFile = LOCAL\n", data, 8,
        "missing required key DimSize");
    BAD("notype.mha", "NDims = 3\nDimSize = 2 2 2\nElementDataFile = LOCAL\n", data, 8,
        "missing required key ElementType");
    BAD("4d.mha", "NDims = 4\nDimSize = 2 2 2 1\nElementType = MET_UCHAR\nElementDataFile = LOCAL\n", data, 8,
        "4D");
    BAD("1d.mha", "NDims = 1\nDimSize = 8\nElementType = MET_UCHAR\nElementDataFile = LOCAL\n", data, 8,
        "only 2D and 3D");
    BAD("dimcount.mha", "NDims = 3\nDimSize = 2 2\nElementType = MET_UCHAR\nElementDataFile = LOCAL\n", data, 8,
        "expected 3 integers");
    BAD("type.mha", "NDims = 3\nDimSize = 2 2 2\nElementType = MET_LONG_LONG\nElementDataFile = LOCAL\n", data, 8,
        "MET_LONG_LONG");
    BAD("zero.mha", "NDims = 3\nDimSize = 2 0 2\nElementType = MET_UCHAR\nElementDataFile = LOCAL\n", data, 8,
        "must be positive");
    BAD("neg.mha", "NDims = 3\nDimSize = 2 -7 2\nElementType = MET_UCHAR\nElementDataFile = LOCAL\n", data, 8,
        "-7");
    BAD("huge.mha", "NDims = 3\nDimSize = 100000 100000 100000\nElementType = MET_UCHAR\nElementDataFile = LOCAL\n",
        data, 8, "100000");
    BAD("big.mha", "NDims = 3\nDimSize = 65536 65536 65536\nElementType = MET_DOUBLE\nElementDataFile = LOCAL\n",
        data, 8, "2251799813685248 bytes");
    BAD("overflow.mha", "NDims = 3\nDimSize = 99999999999999999999 2 2\nElementType = MET_UCHAR\n"
        "ElementDataFile = LOCAL\n", data, 8, "out of range");
    BAD("chan.mha", "NDims = 3\nDimSize = 2 2 2\nElementNumberOfChannels = 3\nElementType = MET_UCHAR\n"
        "ElementDataFile = LOCAL\n", data, 8, "ElementNumberOfChannels = 3");
    BAD("ascii.mha", "NDims = 3\nDimSize = 2 2 2\nBinaryData = False\nElementType = MET_UCHAR\n"
        "ElementDataFile = LOCAL\n", data, 8, "ASCII");
    BAD("list.mhd", "NDims = 3\nDimSize = 2 2 2\nElementType = MET_UCHAR\nElementDataFile = LIST\n", NULL, 0,
        "LIST");
    BAD("pattern.mhd", "NDims = 3\nDimSize = 2 2 2\nElementType = MET_UCHAR\nElementDataFile = s%03d.raw 1 2 1\n",
        NULL, 0, "pattern");
    BAD("garbage.mha", "NDims = 3\nthis is not a key value line\n", NULL, 0, "line 2");
    BAD("twice.mha", "NDims = 3\nNDims = 3\n", NULL, 0, "twice");
    BAD("objtype.mha", "ObjectType = Mesh\nNDims = 3\nDimSize = 2 2 2\nElementType = MET_UCHAR\n"
        "ElementDataFile = LOCAL\n", data, 8, "not Image");
    BAD("spacing.mha", "NDims = 3\nDimSize = 2 2 2\nElementSpacing = 1 0 1\nElementType = MET_UCHAR\n"
        "ElementDataFile = LOCAL\n", data, 8, "must be positive");
    BAD("matrix.mha", "NDims = 3\nDimSize = 2 2 2\nTransformMatrix = 1 0 0 1\nElementType = MET_UCHAR\n"
        "ElementDataFile = LOCAL\n", data, 8, "expected 9 numbers");
    BAD("boolean.mha", "NDims = 3\nDimSize = 2 2 2\nCompressedData = maybe\nElementType = MET_UCHAR\n"
        "ElementDataFile = LOCAL\n", data, 8, "not True or False");
    BAD("binary.mha", "NDims = 3\n\x01\x02", "\x00\x03 = 4\n", 7, "NUL");
    float nan_data[8] = {0, 0, 0, 0, 0, 0, 0, NAN};
    BAD("nan.mha", "NDims = 3\nDimSize = 2 2 2\nElementType = MET_FLOAT\nElementDataFile = LOCAL\n", nan_data,
        sizeof nan_data, "voxel 7");

    /* separate data files */
    BAD("missing.mhd", "NDims = 3\nDimSize = 2 2 2\nElementType = MET_UCHAR\nElementDataFile = nothere.raw\n", NULL,
        0, "nothere.raw");
    vpt_test_write_file(vpt_test_tmp_path(p, sizeof p, "short.raw"), data, 7, NULL, 0);
    BAD("short.mhd", "NDims = 3\nDimSize = 2 2 2\nElementType = MET_UCHAR\nElementDataFile = short.raw\n", NULL, 0,
        "truncated: expected 8 data bytes, file has 7");
    BAD("hsize.mhd", "NDims = 3\nDimSize = 2 2 2\nHeaderSize = 100\nElementType = MET_UCHAR\n"
        "ElementDataFile = short.raw\n", NULL, 0, "HeaderSize 100");

    /* compressed data */
    unsigned char z[128];
    uLongf nz = sizeof z;
    REQUIRE(compress2(z, &nz, data, 8, 9) == Z_OK);
    snprintf(h, sizeof h, "%sCompressedData = True\nCompressedDataSize = %lu\nElementDataFile = LOCAL\n", MHD_OK,
             (unsigned long)nz + 3);
    BAD("csize.mha", h, z, nz, "CompressedDataSize");
    snprintf(h, sizeof h, "%sCompressedData = True\nElementDataFile = LOCAL\n", MHD_OK);
    BAD("ztrunc.mha", h, z, nz - 4, "truncated");
    unsigned char zc[128];
    memcpy(zc, z, nz);
    zc[2] ^= 0xff;
    zc[3] ^= 0x55;
    BAD("zcorrupt.mha", h, zc, nz, "corrupt");
    BAD("zempty.mha", h, NULL, 0, "no compressed data");
    unsigned char z9[128];
    uLongf nz9 = sizeof z9;
    REQUIRE(compress2(z9, &nz9, data, 9, 9) == Z_OK); /* one byte more than 2x2x2 */
    BAD("zlong.mha", h, z9, nz9, "more than the expected 8 bytes");
    REQUIRE(compress2(z9, &nz9, data, 7, 9) == Z_OK);
    BAD("zshort.mha", h, z9, nz9, "inflates to 7 bytes, expected 8");
    unsigned char zj[140];
    memcpy(zj, z, nz);
    memcpy(zj + nz, "junk", 4);
    BAD("zjunk.mha", h, zj, nz + 4, "junk");
}

static const char *NRRD_OK = "NRRD0004\ntype: uchar\ndimension: 3\nsizes: 2 2 2\nencoding: raw\n";

TEST(volume_bad_nrrd)
{
    limit_memory();
    char h[1024], p[600];
    unsigned char data[64] = {1, 2, 3, 4, 5, 6, 7, 8};
    snprintf(h, sizeof h, "%s\n", NRRD_OK);
    BAD("trunc.nrrd", h, data, 5, "truncated: expected 8 data bytes, file has 5");
    BAD("hdronly.nrrd", NRRD_OK, NULL, 0, "truncated: expected 8 data bytes, file has 0");
    BAD("long.nrrd", h, data, 12, "wrong size");
    BAD("magic.nrrd", "NRRD0009\ntype: uchar\n\n", data, 8, "bad magic");
    BAD("magic2.nrrd", "P5 2 2 255\n", data, 8, "bad magic");
    BAD("notype.nrrd", "NRRD0004\ndimension: 3\nsizes: 2 2 2\nencoding: raw\n\n", data, 8,
        "missing required field 'type'");
    BAD("nosizes.nrrd", "NRRD0004\ntype: uchar\ndimension: 3\nencoding: raw\n\n", data, 8,
        "missing required field 'sizes'");
    BAD("noenc.nrrd", "NRRD0004\ntype: uchar\ndimension: 3\nsizes: 2 2 2\n\n", data, 8,
        "missing required field 'encoding'");
    BAD("noendian.nrrd", "NRRD0004\ntype: short\ndimension: 3\nsizes: 2 2 1\nencoding: raw\n\n", data, 8,
        "endian");
    BAD("type.nrrd", "NRRD0004\ntype: int64\ndimension: 3\nsizes: 2 2 2\nencoding: raw\n\n", data, 8,
        "unknown or unsupported type 'int64'");
    BAD("block.nrrd", "NRRD0004\ntype: block\ndimension: 3\nsizes: 2 2 2\nencoding: raw\n\n", data, 8, "block");
    BAD("enc.nrrd", "NRRD0004\ntype: uchar\ndimension: 3\nsizes: 2 2 2\nencoding: bzip2\n\n", data, 8, "bzip2");
    BAD("field.nrrd", "NRRD0004\ntype: uchar\nflavor: vanilla\n\n", data, 8, "unknown field 'flavor'");
    BAD("dup.nrrd", "NRRD0004\ntype: uchar\ntype: uchar\n\n", data, 8, "appears twice");
    BAD("noline.nrrd", "NRRD0004\ntype uchar\n\n", data, 8, "expected 'field: value'");
    BAD("1d.nrrd", "NRRD0004\ntype: uchar\ndimension: 1\nsizes: 8\nencoding: raw\n\n", data, 8, "dimension 1");
    BAD("4d.nrrd", "NRRD0004\ntype: uchar\ndimension: 4\nsizes: 2 2 2 1\nencoding: raw\n\n", data, 8, "4D");
    BAD("5d.nrrd", "NRRD0004\ntype: uchar\ndimension: 5\nsizes: 1 2 2 2 1\nencoding: raw\n\n", data, 8,
        "dimension 5");
    BAD("rgb.nrrd", "NRRD0004\ntype: uchar\ndimension: 3\nsizes: 3 2 1\nkinds: RGB-color domain domain\n"
        "encoding: raw\n\n", data, 6, "3 values per voxel");
    BAD("sizecount.nrrd", "NRRD0004\ntype: uchar\ndimension: 3\nsizes: 2 2\nencoding: raw\n\n", data, 8,
        "expected 3 values");
    BAD("zero.nrrd", "NRRD0004\ntype: uchar\ndimension: 3\nsizes: 2 0 2\nencoding: raw\n\n", data, 8,
        "must be positive");
    BAD("neg.nrrd", "NRRD0004\ntype: uchar\ndimension: 3\nsizes: -2 2 2\nencoding: raw\n\n", data, 8, "-2");
    BAD("huge.nrrd", "NRRD0004\ntype: uchar\ndimension: 3\nsizes: 100000 100000 100000\nencoding: raw\n\n", data, 8,
        "100000");
    BAD("big.nrrd", "NRRD0004\ntype: float\ndimension: 3\nsizes: 65536 65536 65536\nendian: little\n"
        "encoding: raw\n\n", data, 8, "1125899906842624 bytes");
    BAD("spacing.nrrd", "NRRD0004\ntype: uchar\ndimension: 3\nsizes: 2 2 2\nspacings: 1 0 1\nencoding: raw\n\n",
        data, 8, "spacing 0");
    BAD("dirs.nrrd", "NRRD0004\ntype: uchar\ndimension: 3\nsizes: 2 2 2\nspace directions: (1,0,0) (0,1,0) 7\n"
        "encoding: raw\n\n", data, 8, "not a vector");
    BAD("bskip.nrrd", "NRRD0004\ntype: uchar\ndimension: 3\nsizes: 2 2 2\nbyte skip: 20\nencoding: raw\n\n", data,
        8, "byte skip 20");
    BAD("lskip.nrrd", "NRRD0004\ntype: uchar\ndimension: 3\nsizes: 2 2 2\nline skip: 3\nencoding: raw\n\n",
        "a\nb\n", 4, "line skip 3");
    BAD("list.nhdr", "NRRD0004\ntype: uchar\ndimension: 3\nsizes: 2 2 2\nencoding: raw\ndata file: LIST\n", NULL, 0,
        "LIST");
    BAD("missing.nhdr", "NRRD0004\ntype: uchar\ndimension: 3\nsizes: 2 2 2\nencoding: raw\ndata file: gone.raw\n",
        NULL, 0, "gone.raw");
    vpt_test_write_file(vpt_test_tmp_path(p, sizeof p, "short.raw"), data, 7, NULL, 0);
    BAD("short.nhdr", "NRRD0004\ntype: uchar\ndimension: 3\nsizes: 2 2 2\nencoding: raw\ndata file: short.raw\n",
        NULL, 0, "truncated: expected 8 data bytes, file has 7");
    float nan_data[8] = {0, 0, NAN, 0, 0, 0, 0, 0};
    BAD("nan.nrrd", "NRRD0004\ntype: float\ndimension: 3\nsizes: 2 2 2\nendian: little\nencoding: raw\n\n",
        nan_data, sizeof nan_data, "voxel 2");

    /* gzip */
    unsigned char gz[128];
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    REQUIRE(deflateInit2(&zs, 9, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) == Z_OK);
    zs.next_in = data;
    zs.avail_in = 8;
    zs.next_out = gz;
    zs.avail_out = sizeof gz;
    REQUIRE(deflate(&zs, Z_FINISH) == Z_STREAM_END);
    size_t ngz = zs.total_out;
    deflateEnd(&zs);
    const char *hg = "NRRD0004\ntype: uchar\ndimension: 3\nsizes: 2 2 2\nencoding: gzip\n\n";
    BAD("gztrunc.nrrd", hg, gz, ngz - 6, "truncated");
    unsigned char gc[128];
    memcpy(gc, gz, ngz);
    gc[ngz - 1] ^= 0x40; /* the length in the gzip trailer */
    BAD("gzcrc.nrrd", hg, gc, ngz, "corrupt");
    memcpy(gc, gz, ngz);
    gc[12] ^= 0xff;
    BAD("gzcorrupt.nrrd", hg, gc, ngz, "gzip");
    BAD("gzempty.nrrd", hg, NULL, 0, "no gzip data");
    unsigned char zl[128];
    uLongf nzl = sizeof zl;
    REQUIRE(compress2(zl, &nzl, data, 8, 9) == Z_OK); /* a zlib stream is not gzip */
    BAD("gzzlib.nrrd", hg, zl, nzl, "corrupt");
    snprintf(h, sizeof h, "%s", "NRRD0004\ntype: uchar\ndimension: 3\nsizes: 2 2 2\nencoding: gzip\n"
                                "byte skip: -1\n\n");
    BAD("gzskip.nrrd", h, gz, ngz, "byte skip -1");
}

/* ---------- fuzz ---------- */

static uint64_t rng_state;
static uint32_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 16);
}

typedef int (*ParseFn)(const char *name, const unsigned char *buf, size_t size, VptVolume *out);
static int pm(const char *n, const unsigned char *b, size_t s, VptVolume *o)
{
    return vpt_volume_parse_mitsuba(n, b, s, 1 << 20, o);
}
static int pi(const char *n, const unsigned char *b, size_t s, VptVolume *o)
{
    return vpt_volume_parse_metaimage(n, NULL, b, s, 1 << 20, o);
}
static int pn(const char *n, const unsigned char *b, size_t s, VptVolume *o)
{
    return vpt_volume_parse_nrrd(n, NULL, b, s, 1 << 20, o);
}

static size_t build(unsigned char *out, const char *hdr, const unsigned char *data, size_t n)
{
    size_t h = strlen(hdr);
    memcpy(out, hdr, h);
    memcpy(out + h, data, n);
    return h + n;
}

/* Mutates valid files (byte flips, random bytes, digits written into the
 * header, truncation, duplicated spans) and parses each; the parse must
 * return 0 or -1 and, on 0, give a consistent volume. A crash kills the
 * test process and fails the test. */
TEST_TIMEOUT(volume_fuzz_parsers, 120)
{
    limit_memory();
    unsigned char data[4 * 4 * 3 * 4], z[512], gz[512];
    for (size_t i = 0; i < sizeof data; i++) data[i] = (unsigned char)(i * 13 % 61); /* finite floats too */
    uLongf nz = sizeof z;
    REQUIRE(compress2(z, &nz, data, 48, 6) == Z_OK);
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    REQUIRE(deflateInit2(&zs, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) == Z_OK);
    zs.next_in = data;
    zs.avail_in = 48;
    zs.next_out = gz;
    zs.avail_out = sizeof gz;
    REQUIRE(deflate(&zs, Z_FINISH) == Z_STREAM_END);
    size_t ngz = zs.total_out;
    deflateEnd(&zs);

    static unsigned char seeds[6][1024];
    size_t seed_n[6];
    ParseFn fn[6] = {pm, pi, pi, pn, pn, pn};
    unsigned char h[48];
    vol_header(h, 1, 4, 4, 3, 1);
    memcpy(seeds[0], h, 48);
    for (int i = 0; i < 48; i++) {
        float f = (float)i / 7;
        memcpy(seeds[0] + 48 + 4 * i, &f, 4);
    }
    seed_n[0] = 48 + 4 * 48;
    seed_n[1] = build(seeds[1],
                      "ObjectType = Image\nNDims = 3\nBinaryData = True\nBinaryDataByteOrderMSB = False\n"
                      "ElementSpacing = 1 1 2\nOffset = 0 0 0\nDimSize = 4 4 3\nElementType = MET_UCHAR\n"
                      "ElementDataFile = LOCAL\n",
                      data, 48);
    char hz[256];
    snprintf(hz, sizeof hz,
             "NDims = 3\nCompressedData = True\nCompressedDataSize = %lu\nDimSize = 4 4 3\nElementType = MET_UCHAR\n"
             "ElementDataFile = LOCAL\n",
             (unsigned long)nz);
    seed_n[2] = build(seeds[2], hz, z, nz);
    seed_n[3] = build(seeds[3],
                      "NRRD0004\n# c\ntype: uchar\ndimension: 3\nsizes: 4 4 3\nspace directions: (1,0,0) (0,1,0) "
                      "(0,0,2)\nspace origin: (0,0,0)\nencoding: raw\n\n",
                      data, 48);
    seed_n[4] = build(seeds[4], "NRRD0004\ntype: uchar\ndimension: 3\nsizes: 4 4 3\nencoding: gzip\n\n", gz, ngz);
    seed_n[5] = build(seeds[5],
                      "NRRD0004\ntype: float\ndimension: 3\nsizes: 4 4 3\nendian: little\nencoding: raw\n\n",
                      seeds[0] + 48, 192);
    for (int s = 0; s < 6; s++) {
        VptVolume v;
        REQUIRE_MSG(fn[s]("seed", seeds[s], seed_n[s], &v) == 0, "seed %d: %s", s, vpt_errmsg());
        vpt_volume_free(&v);
    }

    rng_state = 0x9e3779b97f4a7c15ull;
    unsigned char buf[2048];
    int ok = 0, failed = 0;
    for (int it = 0; it < 100000; it++) {
        int s = it % 6;
        size_t n = seed_n[s];
        memcpy(buf, seeds[s], n);
        int muts = 1 + (int)(rnd() % 4);
        for (int m = 0; m < muts && n > 0; m++) {
            size_t at = rnd() % n;
            switch (rnd() % 6) {
            case 0: buf[at] ^= (unsigned char)(1u << (rnd() % 8)); break;
            case 1: buf[at] = (unsigned char)rnd(); break;
            case 2: buf[at] = (unsigned char)"0123456789-. \n=:"[rnd() % 17]; break;
            case 3: n = at; break;
            case 4: /* duplicate a span */
                if (n < sizeof buf / 2) {
                    size_t len = rnd() % 16;
                    if (at + len > n) len = n - at;
                    memmove(buf + at + len, buf + at, n - at);
                    n += len;
                }
                break;
            default: /* delete a span */ {
                size_t len = rnd() % 8;
                if (at + len > n) len = n - at;
                memmove(buf + at, buf + at + len, n - at - len);
                n -= len;
            }
            }
        }
        /* parse from an exact-size heap copy so overreads hit the end */
        unsigned char *exact = malloc(n ? n : 1);
        memcpy(exact, buf, n);
        VptVolume v;
        int rc = fn[s]("fuzz", exact, n, &v);
        free(exact);
        if (rc == 0) {
            ok++;
            size_t cnt = (size_t)v.nx * v.ny * v.nz;
            CHECK(v.nx > 0 && v.ny > 0 && v.nz > 0 && v.data && cnt * 4 <= (1u << 20));
            for (size_t i = 0; i < cnt; i++)
                if (!isfinite(v.data[i])) {
                    CHECK_MSG(0, "iteration %d: non-finite value accepted", it);
                    break;
                }
            vpt_volume_free(&v);
        } else {
            REQUIRE_MSG(rc == -1, "iteration %d: rc %d", it, rc);
            CHECK_MSG(strstr(vpt_errmsg(), "fuzz") != NULL, "iteration %d: message '%s' does not name the file", it,
                      vpt_errmsg());
            CHECK(v.data == NULL);
            failed++;
        }
    }
    vpt_test_log("fuzz: %d parsed, %d rejected", ok, failed);
    CHECK(ok > 100 && failed > 1000); /* the mutations reach both outcomes */
}
