/* Volume files: the real samples in ../shared/data, generated round trips in
 * every format and encoding, downsampling, and scenes from volumes. Expected
 * values come from the files' bytes read here directly (fread, zlib's
 * one-shot uncompress), not through the loaders under test. */
#include "tests/harness/test.h"
#include "tests/test_tools.h"

#include "base/error.h"
#include "scenes/scene.h"
#include "scenes/volume.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "tests/test_tools.h"

/* ---------- helpers ---------- */

static unsigned char *slurp(const char *path, size_t *n)
{
    FILE *fp = fopen(path, "rb");
    if (!fp) return NULL;
    fseek(fp, 0, SEEK_END);
    long sz = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    unsigned char *d = malloc((size_t)sz + 1);
    *n = fread(d, 1, (size_t)sz, fp);
    fclose(fp);
    return d;
}

static const char *shared(char *buf, size_t n, const char *rel)
{
    const char *d = vpt_test_shared_data();
    if (!d) SKIP("no shared data directory (../shared/data)");
    snprintf(buf, n, "%s/%s", d, rel);
    return buf;
}

static int load(const char *path, VptVolume *v)
{
    VptVolumeLoadOptions o = {0};
    int rc = vpt_volume_load(path, &o, v);
    if (rc) vpt_test_log("load %s: %s", path, vpt_errmsg());
    return rc;
}

static void check_dims(const VptVolume *v, int nx, int ny, int nz)
{
    CHECK_EQ_INT(v->nx, nx);
    CHECK_EQ_INT(v->ny, ny);
    CHECK_EQ_INT(v->nz, nz);
}

static size_t count_of(const VptVolume *v) { return (size_t)v->nx * v->ny * v->nz; }

/* Number of voxels where the volume differs from the uint8 bytes. */
static size_t diff_u8(const VptVolume *v, const unsigned char *b, size_t n)
{
    if (count_of(v) != n) return n + 1;
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) bad += v->data[i] != (float)b[i];
    return bad;
}

static size_t diff_vol(const VptVolume *a, const VptVolume *b)
{
    if (a->nx != b->nx || a->ny != b->ny || a->nz != b->nz) return (size_t)-1;
    size_t bad = 0;
    for (size_t i = 0; i < count_of(a); i++) bad += a->data[i] != b->data[i];
    return bad;
}

static unsigned char *inflate_all(const unsigned char *src, size_t n, size_t expected)
{
    unsigned char *out = malloc(expected);
    uLongf got = expected;
    if (uncompress(out, &got, src, n) != Z_OK || got != expected) {
        free(out);
        return NULL;
    }
    return out;
}

/* ---------- real samples ---------- */

TEST(volume_shared_bucky_raw_mhd_nhdr_agree)
{
    char p[600];
    size_t n;
    unsigned char *bytes = slurp(shared(p, sizeof p, "thesis/bucky_32x32x32_u8.raw"), &n);
    REQUIRE(bytes && n == 32768);

    VptVolumeLoadOptions o = {.dims = {32, 32, 32}, .has_dims = 1, .type = VPT_SCALAR_U8, .has_type = 1};
    VptVolume raw, mhd, nhdr;
    REQUIRE(vpt_volume_load(p, &o, &raw) == 0);
    check_dims(&raw, 32, 32, 32);
    CHECK(raw.stored == VPT_SCALAR_U8);
    CHECK_EQ_INT(diff_u8(&raw, bytes, n), 0);
    CHECK_EQ_INT(raw.data[16 + 32 * 16 + 32 * 32 * 16], 1); /* read with python: bytes[16,16,16] = 1 */
    float lo, hi;
    vpt_volume_range(&raw, &lo, &hi);
    CHECK(lo == 0.0f && hi == 255.0f);

    REQUIRE(load(shared(p, sizeof p, "thesis/bucky_32x32x32_u8.mhd"), &mhd) == 0);
    REQUIRE(load(shared(p, sizeof p, "thesis/bucky_32x32x32_u8.nhdr"), &nhdr) == 0);
    CHECK_EQ_INT(diff_vol(&raw, &mhd), 0);
    CHECK_EQ_INT(diff_vol(&raw, &nhdr), 0);
    CHECK(mhd.stored == VPT_SCALAR_U8 && nhdr.stored == VPT_SCALAR_U8);
    CHECK(mhd.spacing[0] == 1 && mhd.spacing[2] == 1 && nhdr.spacing[1] == 1);
    CHECK(!mhd.has_bbox && !nhdr.has_bbox);
    vpt_volume_free(&raw);
    vpt_volume_free(&mhd);
    vpt_volume_free(&nhdr);
    free(bytes);
}

TEST(volume_shared_smoke_vol)
{
    char p[600];
    size_t n;
    unsigned char *bytes = slurp(shared(p, sizeof p, "thesis/smoke.vol"), &n);
    REQUIRE(bytes && n == 48 + 128 * 128 * 50 * 4);
    VptVolume v;
    REQUIRE(load(p, &v) == 0);
    check_dims(&v, 128, 128, 50);
    CHECK(v.stored == VPT_SCALAR_F32);
    REQUIRE(v.has_bbox);
    CHECK_NEAR(v.bbox_min[0], -0.5, 0);
    CHECK_NEAR(v.bbox_min[1], -0.5, 0);
    CHECK_NEAR(v.bbox_min[2], -0.1953125, 1e-6);
    CHECK_NEAR(v.bbox_max[0], 0.5, 0);
    CHECK_NEAR(v.bbox_max[1], 0.5, 0);
    CHECK_NEAR(v.bbox_max[2], 0.1953125, 1e-6);
    CHECK_NEAR(v.spacing[0], 1.0 / 128, 1e-7);
    CHECK_NEAR(v.spacing[2], 0.390625 / 50, 1e-7);
    float lo, hi;
    vpt_volume_range(&v, &lo, &hi);
    CHECK(lo == 0.0f && hi == 1.0f);
    size_t bad = 0;
    double sum = 0;
    for (size_t i = 0; i < count_of(&v); i++) {
        float f;
        memcpy(&f, bytes + 48 + 4 * i, 4); /* this host is little endian, as the file */
        bad += f != v.data[i];
        sum += v.data[i];
    }
    CHECK_EQ_INT(bad, 0);
    CHECK_NEAR(sum, 9470.82561375532, 1e-6); /* python over the file's floats */
    CHECK_NEAR(v.data[64 + 128 * 64 + 128 * 128 * 25], 0.23685812950134277, 0);
    vpt_volume_free(&v);
    free(bytes);
}

TEST(volume_shared_engine_zlib)
{
    char p[600];
    size_t n;
    unsigned char *z = slurp(shared(p, sizeof p, "formats/engine_small.raw"), &n);
    REQUIRE(z && n == 430001);
    unsigned char *ref = inflate_all(z, n, 128 * 128 * 64);
    REQUIRE(ref);
    VptVolume v;
    REQUIRE(load(shared(p, sizeof p, "formats/engine_small.mhd"), &v) == 0);
    check_dims(&v, 128, 128, 64);
    CHECK(v.spacing[0] == 2 && v.spacing[1] == 2 && v.spacing[2] == 2);
    CHECK_EQ_INT(diff_u8(&v, ref, 128 * 128 * 64), 0);
    double sum = 0;
    for (size_t i = 0; i < count_of(&v); i++) sum += v.data[i];
    CHECK_NEAR(sum, 23362657, 0); /* python: sum(zlib.decompress(raw)) */
    vpt_volume_free(&v);
    free(ref);
    free(z);
}

TEST(volume_shared_brain_3slices_mha)
{
    char p[600];
    size_t n;
    unsigned char *bytes = slurp(shared(p, sizeof p, "formats/BrainProtonDensity3Slices.raw"), &n);
    REQUIRE(bytes && n == 181 * 217 * 3);
    VptVolume v;
    REQUIRE(load(shared(p, sizeof p, "formats/BrainProtonDensity3Slices.mha"), &v) == 0);
    check_dims(&v, 181, 217, 3);
    CHECK_EQ_INT(diff_u8(&v, bytes, n), 0);
    vpt_volume_free(&v);
    free(bytes);
}

TEST(volume_shared_corpus_callosum_local)
{
    char p[600];
    size_t n;
    unsigned char *file = slurp(shared(p, sizeof p, "formats/CorpusCallosumMeanShape.mha"), &n);
    REQUIRE(file);
    const char *mark = "ElementDataFile = LOCAL\n";
    unsigned char *at = memmem(file, n, mark, strlen(mark));
    REQUIRE(at);
    size_t off = (size_t)(at - file) + strlen(mark);
    unsigned char *ref = inflate_all(file + off, n - off, 58 * 31 * 4);
    REQUIRE(ref);
    VptVolume v;
    REQUIRE(load(p, &v) == 0);
    check_dims(&v, 58, 31, 1);
    CHECK(v.stored == VPT_SCALAR_F32);
    CHECK(v.spacing[0] == 2 && v.spacing[1] == 2 && v.spacing[2] == 1);
    CHECK(v.origin[0] == -57.5f && v.origin[1] == -30.5f && v.origin[2] == 0);
    size_t bad = 0;
    for (size_t i = 0; i < 58 * 31; i++) {
        float f;
        memcpy(&f, ref + 4 * i, 4);
        bad += f != v.data[i];
    }
    CHECK_EQ_INT(bad, 0);
    float lo, hi;
    vpt_volume_range(&v, &lo, &hi);
    CHECK_NEAR(lo, -3.8260929584503174, 1e-6);
    CHECK_NEAR(hi, 38.650211334228516, 1e-5);
    vpt_volume_free(&v);
    free(ref);
    free(file);
}

TEST(volume_shared_2d_slices_load_as_nz1)
{
    char p[600];
    size_t n;
    unsigned char *bytes = slurp(shared(p, sizeof p, "formats/BrainProtonDensitySliceBorder20.raw"), &n);
    REQUIRE(bytes && n == 221 * 257);
    static const char *const files[] = {
        "formats/BrainProtonDensitySliceBorder20.mhd",
        "formats/BrainProtonDensitySliceBorder20.nhdr",
        "formats/BrainProtonDensitySliceBorder20DirectionPlus30.mhd", /* .zraw, rotated */
    };
    for (int i = 0; i < 3; i++) {
        VptVolume v;
        CHECK_MSG(load(shared(p, sizeof p, files[i]), &v) == 0, "%s: %s", files[i], vpt_errmsg());
        check_dims(&v, 221, 257, 1);
        CHECK_EQ_INT(diff_u8(&v, bytes, n), 0);
        CHECK_NEAR(v.data[100 * 221 + 100], 171, 0); /* python */
        vpt_volume_free(&v);
    }
    free(bytes);
}

/* ---------- generated files: round trips ---------- */

/* A deterministic test volume holding negative, fractional and large values
 * (only values representable in every type that uses them). */
static void make_values(double *vals, size_t n, VptScalarType t)
{
    for (size_t i = 0; i < n; i++) {
        double x = (double)((i * 37 + 11) % 101);
        switch (t) {
        case VPT_SCALAR_U8: vals[i] = x * 2; break;
        case VPT_SCALAR_I8: vals[i] = x - 50; break;
        case VPT_SCALAR_U16: vals[i] = x * 600; break;
        case VPT_SCALAR_I16: vals[i] = x * 300 - 15000; break;
        case VPT_SCALAR_U32: vals[i] = x * 1000000; break;
        case VPT_SCALAR_I32: vals[i] = x * 1000 - 70000; break;
        case VPT_SCALAR_F32: vals[i] = x * 0.25 - 3; break;
        case VPT_SCALAR_F64: vals[i] = x * 0.125 + 1e6; break;
        }
    }
}

/* Encodes values as the type's bytes in the given byte order. */
static unsigned char *encode(const double *vals, size_t n, VptScalarType t, int big, size_t *nbytes)
{
    size_t es = vpt_scalar_type_size(t);
    unsigned char *b = malloc(n * es);
    for (size_t i = 0; i < n; i++) {
        uint64_t u = 0;
        switch (t) {
        case VPT_SCALAR_U8: u = (uint8_t)vals[i]; break;
        case VPT_SCALAR_I8: u = (uint8_t)(int8_t)vals[i]; break;
        case VPT_SCALAR_U16: u = (uint16_t)vals[i]; break;
        case VPT_SCALAR_I16: u = (uint16_t)(int16_t)vals[i]; break;
        case VPT_SCALAR_U32: u = (uint32_t)vals[i]; break;
        case VPT_SCALAR_I32: u = (uint32_t)(int32_t)vals[i]; break;
        case VPT_SCALAR_F32: {
            float f = (float)vals[i];
            uint32_t w;
            memcpy(&w, &f, 4);
            u = w;
            break;
        }
        case VPT_SCALAR_F64: memcpy(&u, &vals[i], 8); break;
        }
        for (size_t k = 0; k < es; k++) b[i * es + (big ? es - 1 - k : k)] = (unsigned char)(u >> (8 * k));
    }
    *nbytes = n * es;
    return b;
}

static unsigned char *zlib_pack(const unsigned char *src, size_t n, size_t *out_n)
{
    uLongf cap = compressBound(n);
    unsigned char *z = malloc(cap);
    REQUIRE(compress2(z, &cap, src, n, 6) == Z_OK);
    *out_n = cap;
    return z;
}

static unsigned char *gzip_pack(const unsigned char *src, size_t n, size_t *out_n)
{
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    REQUIRE(deflateInit2(&zs, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) == Z_OK);
    size_t cap = deflateBound(&zs, n) + 64;
    unsigned char *z = malloc(cap);
    zs.next_in = (Bytef *)src;
    zs.avail_in = (uInt)n;
    zs.next_out = z;
    zs.avail_out = (uInt)cap;
    REQUIRE(deflate(&zs, Z_FINISH) == Z_STREAM_END);
    *out_n = zs.total_out;
    deflateEnd(&zs);
    return z;
}

static size_t diff_vals(const VptVolume *v, const double *vals, size_t n)
{
    if (count_of(v) != n) return n + 1;
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) bad += v->data[i] != (float)vals[i];
    return bad;
}

static const char *metatype(VptScalarType t)
{
    static const char *const names[] = {"MET_UCHAR", "MET_CHAR", "MET_USHORT", "MET_SHORT",
                                        "MET_UINT", "MET_INT", "MET_FLOAT", "MET_DOUBLE"};
    return names[t];
}

TEST(volume_metaimage_roundtrip_all_types_and_layouts)
{
    enum { NX = 7, NY = 5, NZ = 3, N = NX * NY * NZ };
    double vals[N];
    char hp[600], dp[600], hdr[1024];
    for (int t = VPT_SCALAR_U8; t <= VPT_SCALAR_F64; t++) {
        make_values(vals, N, (VptScalarType)t);
        for (int layout = 0; layout < 8; layout++) {
            int local = layout & 1, zipped = layout & 2, big = (layout & 4) != 0;
            size_t nraw, nz = 0;
            unsigned char *raw = encode(vals, N, (VptScalarType)t, big, &nraw), *z = NULL;
            if (zipped) z = zlib_pack(raw, nraw, &nz);
            char csize[64] = "";
            if (zipped) snprintf(csize, sizeof csize, "CompressedDataSize = %zu\n", nz);
            snprintf(hdr, sizeof hdr,
                     "ObjectType = Image\nNDims = 3\nBinaryData = True\nBinaryDataByteOrderMSB = %s\n"
                     "CompressedData = %s\n%sTransformMatrix = 1 0 0 0 1 0 0 0 1\nOffset = -1.5 2 0.25\n"
                     "ElementSpacing = 0.5 1 2\nDimSize = %d %d %d\nElementType = %s\nElementDataFile = %s\n",
                     big ? "True" : "False", zipped ? "True" : "False", csize, NX, NY, NZ,
                     metatype((VptScalarType)t), local ? "LOCAL" : "data.bin");
            vpt_test_tmp_path(hp, sizeof hp, local ? "img.mha" : "img.mhd");
            const unsigned char *data = zipped ? z : raw;
            size_t ndata = zipped ? nz : nraw;
            if (local) vpt_test_write_file(hp, hdr, strlen(hdr), data, ndata);
            else {
                vpt_test_write_file(hp, hdr, strlen(hdr), NULL, 0);
                vpt_test_write_file(vpt_test_tmp_path(dp, sizeof dp, "data.bin"), data, ndata, NULL, 0);
            }
            VptVolume v;
            CHECK_MSG(load(hp, &v) == 0, "type %s layout %d: %s", vpt_scalar_type_name((VptScalarType)t), layout,
                      vpt_errmsg());
            CHECK_MSG(diff_vals(&v, vals, N) == 0, "type %s layout %d", vpt_scalar_type_name((VptScalarType)t),
                      layout);
            CHECK(v.stored == (VptScalarType)t);
            CHECK(v.spacing[0] == 0.5f && v.spacing[1] == 1 && v.spacing[2] == 2);
            CHECK(v.origin[0] == -1.5f && v.origin[1] == 2 && v.origin[2] == 0.25f);
            vpt_volume_free(&v);
            free(raw);
            free(z);
        }
    }
}

TEST(volume_metaimage_headersize_and_2d)
{
    char hp[600], dp[600];
    unsigned char data[4 + 6] = {'J', 'U', 'N', 'K', 1, 2, 3, 4, 5, 6};
    vpt_test_write_file(vpt_test_tmp_path(dp, sizeof dp, "d.raw"), data, sizeof data, NULL, 0);
    const char *h1 = "NDims = 2\nDimSize = 3 2\nElementType = MET_UCHAR\nHeaderSize = 4\nElementDataFile = d.raw\n";
    const char *h2 = "NDims = 2\nDimSize = 3 2\nElementType = MET_UCHAR\nHeaderSize = -1\nElementDataFile = d.raw\n";
    for (int i = 0; i < 2; i++) {
        vpt_test_write_file(vpt_test_tmp_path(hp, sizeof hp, "h.mhd"), i ? h2 : h1, strlen(i ? h2 : h1), NULL, 0);
        VptVolume v;
        REQUIRE(load(hp, &v) == 0);
        check_dims(&v, 3, 2, 1);
        CHECK_EQ_INT(diff_u8(&v, data + 4, 6), 0);
        vpt_volume_free(&v);
    }
}

TEST(volume_nrrd_roundtrip_all_types_and_layouts)
{
    enum { NX = 6, NY = 4, NZ = 5, N = NX * NY * NZ };
    static const char *const nrrd_type[] = {"uchar", "int8", "unsigned short", "short",
                                            "uint32", "int", "float", "double"};
    double vals[N];
    char hp[600], dp[600], hdr[1024];
    for (int t = VPT_SCALAR_U8; t <= VPT_SCALAR_F64; t++) {
        make_values(vals, N, (VptScalarType)t);
        for (int layout = 0; layout < 8; layout++) {
            int attached = layout & 1, gz = layout & 2, big = (layout & 4) != 0;
            size_t nraw, nz = 0;
            unsigned char *raw = encode(vals, N, (VptScalarType)t, big, &nraw), *z = NULL;
            if (gz) z = gzip_pack(raw, nraw, &nz);
            char dfile[64] = "";
            if (!attached) snprintf(dfile, sizeof dfile, "data file: %s\n", gz ? "d.raw.gz" : "d.raw");
            snprintf(hdr, sizeof hdr,
                     "NRRD0004\n# a comment\ntype: %s\ndimension: 3\nspace: left-posterior-superior\n"
                     "sizes: %d %d %d\nspace directions: (0.5,0,0) (0,1,0) (0,0,2)\nkinds: domain domain domain\n"
                     "endian: %s\nencoding: %s\nspace origin: (-1.5,2,0.25)\nmykey:=my value\n%s%s",
                     nrrd_type[t], NX, NY, NZ, big ? "big" : "little", gz ? "gzip" : "raw", dfile,
                     attached ? "\n" : "");
            vpt_test_tmp_path(hp, sizeof hp, attached ? "img.nrrd" : "img.nhdr");
            const unsigned char *data = gz ? z : raw;
            size_t ndata = gz ? nz : nraw;
            if (attached) vpt_test_write_file(hp, hdr, strlen(hdr), data, ndata);
            else {
                vpt_test_write_file(hp, hdr, strlen(hdr), NULL, 0);
                vpt_test_write_file(vpt_test_tmp_path(dp, sizeof dp, gz ? "d.raw.gz" : "d.raw"), data, ndata, NULL, 0);
            }
            VptVolume v;
            CHECK_MSG(load(hp, &v) == 0, "type %s layout %d: %s", nrrd_type[t], layout, vpt_errmsg());
            CHECK_MSG(diff_vals(&v, vals, N) == 0, "type %s layout %d", nrrd_type[t], layout);
            CHECK(v.stored == (VptScalarType)t);
            CHECK(v.spacing[0] == 0.5f && v.spacing[1] == 1 && v.spacing[2] == 2);
            CHECK(v.origin[0] == -1.5f && v.origin[1] == 2 && v.origin[2] == 0.25f);
            vpt_volume_free(&v);
            free(raw);
            free(z);
        }
    }
}

TEST(volume_nrrd_skips_and_leading_axis)
{
    char hp[600], dp[600];
    unsigned char vals[2 * 3 * 2];
    for (int i = 0; i < 12; i++) vals[i] = (unsigned char)(i * 7);
    /* line skip 2 then byte skip 3 in a detached file */
    vpt_test_write_file(vpt_test_tmp_path(dp, sizeof dp, "d.raw"), "line one\nline two\nXYZ", 21, vals, 12);
    const char *h = "NRRD0005\ntype: uint8\ndimension: 3\nsizes: 2 3 2\nencoding: raw\nline skip: 2\n"
                    "byte skip: 3\ndata file: d.raw\n";
    vpt_test_write_file(vpt_test_tmp_path(hp, sizeof hp, "a.nhdr"), h, strlen(h), NULL, 0);
    VptVolume v;
    REQUIRE(load(hp, &v) == 0);
    CHECK_EQ_INT(diff_u8(&v, vals, 12), 0);
    vpt_volume_free(&v);
    /* byte skip -1: the data is the file's tail */
    h = "NRRD0005\ntype: uint8\ndimension: 3\nsizes: 2 3 2\nencoding: raw\nbyte skip: -1\ndata file: d.raw\n";
    vpt_test_write_file(hp, h, strlen(h), NULL, 0);
    REQUIRE(load(hp, &v) == 0);
    CHECK_EQ_INT(diff_u8(&v, vals, 12), 0);
    vpt_volume_free(&v);
    /* a leading axis of size 1 (4D with one value per voxel), nan spacing */
    h = "NRRD0004\ntype: uchar\ndimension: 4\nsizes: 1 2 3 2\nspacings: nan 1 2 3\nencoding: raw\n\n";
    vpt_test_write_file(vpt_test_tmp_path(hp, sizeof hp, "b.nrrd"), h, strlen(h), vals, 12);
    REQUIRE(load(hp, &v) == 0);
    check_dims(&v, 2, 3, 2);
    CHECK(v.spacing[0] == 1 && v.spacing[1] == 2 && v.spacing[2] == 3);
    CHECK_EQ_INT(diff_u8(&v, vals, 12), 0);
    vpt_volume_free(&v);
    /* 2D, CRLF line ends */
    h = "NRRD0004\r\ntype: uchar\r\ndimension: 2\r\nsizes: 4 3\r\nencoding: raw\r\n\r\n";
    vpt_test_write_file(vpt_test_tmp_path(hp, sizeof hp, "c.nrrd"), h, strlen(h), vals, 12);
    REQUIRE(load(hp, &v) == 0);
    check_dims(&v, 4, 3, 1);
    CHECK_EQ_INT(diff_u8(&v, vals, 12), 0);
    vpt_volume_free(&v);
}

TEST(volume_mitsuba_roundtrip)
{
    enum { NX = 5, NY = 4, NZ = 3, N = NX * NY * NZ };
    VptVolume v = {.nx = NX, .ny = NY, .nz = NZ, .stored = VPT_SCALAR_F32, .has_bbox = 1,
                   .bbox_min = {-1, -2, -0.25f}, .bbox_max = {1, 0.5f, 0.75f}};
    v.data = malloc(N * sizeof(float));
    for (int i = 0; i < N; i++) v.data[i] = (float)i / 7.0f - 2.5f;
    char p[600];
    REQUIRE(vpt_volume_save_mitsuba(vpt_test_tmp_path(p, sizeof p, "out.vol"), &v) == 0);
    size_t n;
    unsigned char *bytes = slurp(p, &n);
    REQUIRE(bytes);
    CHECK_EQ_INT(n, 48 + 4 * N);
    CHECK(memcmp(bytes, "VOL\3\1\0\0\0\5\0\0\0\4\0\0\0\3\0\0\0\1\0\0\0", 24) == 0);
    free(bytes);
    VptVolume w;
    REQUIRE(load(p, &w) == 0);
    CHECK_EQ_INT(diff_vol(&v, &w), 0);
    CHECK(w.has_bbox);
    for (int k = 0; k < 3; k++) CHECK(w.bbox_min[k] == v.bbox_min[k] && w.bbox_max[k] == v.bbox_max[k]);
    CHECK_NEAR(w.spacing[1], 2.5 / 4, 1e-7);
    vpt_volume_free(&w);

    /* no bbox: [0, n * spacing] */
    v.has_bbox = 0;
    v.spacing[0] = 0.5f;
    v.spacing[1] = 1;
    v.spacing[2] = 2;
    REQUIRE(vpt_volume_save_mitsuba(p, &v) == 0);
    REQUIRE(load(p, &w) == 0);
    CHECK(w.bbox_min[0] == 0 && w.bbox_max[0] == 2.5f && w.bbox_max[1] == 4 && w.bbox_max[2] == 6);
    CHECK_EQ_INT(diff_vol(&v, &w), 0);
    vpt_volume_free(&w);

    /* a NaN is refused, and the earlier file is left whole */
    v.data[7] = NAN;
    CHECK(vpt_volume_save_mitsuba(p, &v) == -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), "out.vol");
    REQUIRE(load(p, &w) == 0);
    vpt_volume_free(&w);
    free(v.data);
}

TEST(volume_mitsuba_uint8_encoding)
{
    unsigned char f[48 + 8] = {'V', 'O', 'L', 3, 3, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0};
    float box[6] = {0, 0, 0, 1, 1, 1};
    memcpy(f + 24, box, sizeof box);
    for (int i = 0; i < 8; i++) f[48 + i] = (unsigned char)(i * 36);
    VptVolume v;
    REQUIRE(vpt_volume_parse_mitsuba("u8.vol", f, sizeof f, 0, &v) == 0);
    CHECK(v.stored == VPT_SCALAR_U8);
    for (int i = 0; i < 8; i++) CHECK_NEAR(v.data[i], i * 36 / 255.0, 1e-7);
    vpt_volume_free(&v);
}

/* ---------- reshaping and types ---------- */

TEST(volume_downsample2_exact_averages)
{
    /* 5x3x1: x and y odd (last column and row dropped), z stays 1 */
    VptVolume v = {.nx = 5, .ny = 3, .nz = 1, .spacing = {1, 2, 3}, .origin = {10, 20, 30}};
    v.data = malloc(15 * sizeof(float));
    for (int y = 0; y < 3; y++)
        for (int x = 0; x < 5; x++) v.data[x + 5 * y] = (float)(x + 10 * y);
    REQUIRE(vpt_volume_downsample2(&v) == 0);
    check_dims(&v, 2, 1, 1);
    CHECK(v.data[0] == 5.5f);  /* (0 + 1 + 10 + 11) / 4 */
    CHECK(v.data[1] == 7.5f);  /* (2 + 3 + 12 + 13) / 4 */
    CHECK(v.spacing[0] == 2 && v.spacing[1] == 4 && v.spacing[2] == 3);
    CHECK(v.origin[0] == 10.5f && v.origin[1] == 21 && v.origin[2] == 30);
    vpt_volume_free(&v);

    /* 4x2x3 with a box: 2x1x1, averages over 2x2x2 blocks, box loses z's last cell */
    VptVolume w = {.nx = 4, .ny = 2, .nz = 3, .spacing = {1, 1, 1}, .has_bbox = 1, .bbox_min = {0, 0, 0},
                   .bbox_max = {4, 2, 3}};
    w.data = malloc(24 * sizeof(float));
    for (int i = 0; i < 24; i++) w.data[i] = (float)(i * i);
    REQUIRE(vpt_volume_downsample2(&w) == 0);
    check_dims(&w, 2, 1, 1);
    /* block x 0..1, y 0..1, z 0..1: i = x + 4y + 8z */
    double e0 = 0, e1 = 0;
    for (int z = 0; z < 2; z++)
        for (int y = 0; y < 2; y++)
            for (int x = 0; x < 2; x++) {
                int i0 = x + 4 * y + 8 * z, i1 = i0 + 2;
                e0 += i0 * i0 / 8.0;
                e1 += i1 * i1 / 8.0;
            }
    CHECK(w.data[0] == (float)e0 && w.data[1] == (float)e1);
    CHECK(w.bbox_max[0] == 4 && w.bbox_max[1] == 2 && w.bbox_max[2] == 2);
    /* 1x1x1 stays */
    REQUIRE(vpt_volume_downsample2(&w) == 0);
    check_dims(&w, 1, 1, 1);
    CHECK_NEAR(w.data[0], (e0 + e1) / 2, 1e-3);
    REQUIRE(vpt_volume_downsample2(&w) == 0);
    check_dims(&w, 1, 1, 1);
    vpt_volume_free(&w);
}

TEST(volume_range_and_types)
{
    float d[6] = {3, -2, 7.5f, 0, 7.5f, -2.25f};
    VptVolume v = {.nx = 3, .ny = 2, .nz = 1, .data = d};
    float lo, hi;
    vpt_volume_range(&v, &lo, &hi);
    CHECK(lo == -2.25f && hi == 7.5f);
    VptScalarType t;
    static const struct {
        const char *s;
        VptScalarType t;
        size_t size;
    } cases[] = {{"u8", VPT_SCALAR_U8, 1},          {"MET_CHAR", VPT_SCALAR_I8, 1},
                 {"unsigned short", VPT_SCALAR_U16, 2}, {"int16_t", VPT_SCALAR_I16, 2},
                 {"uint", VPT_SCALAR_U32, 4},        {"MET_INT", VPT_SCALAR_I32, 4},
                 {"float", VPT_SCALAR_F32, 4},       {"MET_DOUBLE", VPT_SCALAR_F64, 8},
                 {"signed char", VPT_SCALAR_I8, 1},  {"uint8_t", VPT_SCALAR_U8, 1}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        CHECK_MSG(vpt_scalar_type_parse(cases[i].s, &t) == 0 && t == cases[i].t, "%s", cases[i].s);
        CHECK_EQ_INT(vpt_scalar_type_size(cases[i].t), cases[i].size);
    }
    CHECK(vpt_scalar_type_parse("int64", &t) == -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), "int64");
    CHECK(vpt_scalar_type_parse("", &t) == -1);
    CHECK(strcmp(vpt_scalar_type_name(VPT_SCALAR_I16), "i16") == 0);
    CHECK(vpt_scalar_type_parse(vpt_scalar_type_name(VPT_SCALAR_F64), &t) == 0 && t == VPT_SCALAR_F64);
}

/* ---------- scenes from volumes ---------- */

TEST(volume_scene_bucky_ct)
{
    char p[600];
    size_t n;
    unsigned char *bytes = slurp(shared(p, sizeof p, "thesis/bucky_32x32x32_u8.raw"), &n);
    REQUIRE(bytes && n == 32768);
    VptVolumeSceneOptions o = {.transfer = VPT_TF_AUTO};
    VptScene *s = vpt_scene_from_volume(shared(p, sizeof p, "thesis/bucky_32x32x32_u8.mhd"), &o);
    REQUIRE_MSG(s, "%s", vpt_errmsg());
    CHECK_EQ_INT(s->nx, 32);
    CHECK_EQ_INT(s->nz, 32);
    CHECK(strcmp(s->name, "bucky_32x32x32_u8.mhd") == 0);
    CHECK_STR_CONTAINS(s->source, "loaded from ");
    float mx = 0;
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        float want = vpt_ct_density(bytes[i] / 255.0f); /* range is 0..255 */
        bad += fabsf(s->density[i] - want) > 1e-6f;
        if (s->density[i] > mx) mx = s->density[i];
    }
    CHECK_EQ_INT(bad, 0);
    /* the CT transfer's albedo is its table, classified from the filtered density: no grid */
    CHECK(s->albedo == NULL && s->albedo_table == vpt_ct_albedo_table() && s->albedo_entries == 100);
    CHECK_EQ_INT(vpt_scene_albedo_bytes(s), 0);
    CHECK(s->density_max == mx && mx == 1.0f);
    CHECK(s->density_scale == 100);
    CHECK(s->box_min[0] == -0.5f && s->box_max[2] == 0.5f); /* cubic grid: the unit cube */
    CHECK(s->cam_pos[2] == 100 && s->fov_deg == 0.7f && s->boundary == VPT_BOUNDARY_GGX);
    CHECK(s->width == 400 && s->spp == 100);
    vpt_scene_destroy(s);

    /* downsampled, linear, own density scale */
    o.downsample = 2;
    o.transfer = VPT_TF_LINEAR;
    o.density_scale = 40;
    s = vpt_scene_from_volume(p, &o);
    REQUIRE_MSG(s, "%s", vpt_errmsg());
    CHECK(s->nx == 16 && s->ny == 16 && s->nz == 16 && s->density_scale == 40);
    CHECK(s->albedo == NULL && s->albedo_entries == 1 && s->albedo_table[0][0] == 255 && s->albedo_table[0][2] == 255);
    CHECK_MSG(!strcmp(s->name, "bucky_32x32x32_u8.mhd@down2"), "%s", s->name); /* rows and caches tell it from the full grid */
    vpt_scene_destroy(s);

    /* identity needs values in [0, 1] */
    o.transfer = VPT_TF_IDENTITY;
    CHECK(vpt_scene_from_volume(p, &o) == NULL);
    CHECK_STR_CONTAINS(vpt_errmsg(), "bucky_32x32x32_u8.mhd");
    CHECK_STR_CONTAINS(vpt_errmsg(), "outside [0, 1]");
    free(bytes);
}

TEST(volume_scene_smoke_identity)
{
    char p[600];
    VptVolume v;
    REQUIRE(load(shared(p, sizeof p, "thesis/smoke.vol"), &v) == 0);
    VptScene *s = vpt_scene_from_volume(p, NULL);
    REQUIRE_MSG(s, "%s", vpt_errmsg());
    CHECK(s->nx == 128 && s->ny == 128 && s->nz == 50);
    size_t bad = 0;
    for (size_t i = 0; i < count_of(&v); i++) bad += s->density[i] != v.data[i];
    CHECK_EQ_INT(bad, 0); /* auto chose identity */
    CHECK(s->density_max == 1.0f);
    for (int k = 0; k < 3; k++) CHECK(s->box_min[k] == v.bbox_min[k] && s->box_max[k] == v.bbox_max[k]);
    vpt_scene_destroy(s);
    vpt_volume_free(&v);
}

TEST(volume_scene_aspect_box_and_constant_volume)
{
    /* 8x4x2 voxels of spacing (1, 1, 4): physical 8 x 4 x 8 -> box 1 x 0.5 x 1 */
    const char *h = "NRRD0004\ntype: uchar\ndimension: 3\nsizes: 8 4 2\nspacings: 1 1 4\nencoding: raw\n\n";
    unsigned char d[64];
    memset(d, 9, sizeof d);
    char p[600];
    vpt_test_write_file(vpt_test_tmp_path(p, sizeof p, "const.nrrd"), h, strlen(h), d, sizeof d);
    VptScene *s = vpt_scene_from_volume(p, NULL);
    REQUIRE_MSG(s, "%s", vpt_errmsg());
    CHECK(s->box_min[0] == -0.5f && s->box_max[0] == 0.5f);
    CHECK(s->box_min[1] == -0.25f && s->box_max[1] == 0.25f);
    CHECK(s->box_min[2] == -0.5f && s->box_max[2] == 0.5f);
    /* constant: a homogeneous medium of density 1 (CT and linear) */
    CHECK(s->density[0] == 1.0f && s->density[63] == 1.0f && s->density_max == 1.0f);
    vpt_scene_destroy(s);
}

TEST(volume_scene_bad_options)
{
    char p[600];
    const char *h = "NRRD0004\ntype: uchar\ndimension: 2\nsizes: 2 2\nencoding: raw\n\n";
    vpt_test_write_file(vpt_test_tmp_path(p, sizeof p, "s.nrrd"), h, strlen(h), "\1\2\3\4", 4);
    VptVolumeSceneOptions o = {.downsample = -1};
    CHECK(vpt_scene_from_volume(p, &o) == NULL);
    CHECK_STR_CONTAINS(vpt_errmsg(), "downsample");
    o.downsample = 2;
    o.upsample = 2;
    CHECK(vpt_scene_from_volume(p, &o) == NULL);
    CHECK_STR_CONTAINS(vpt_errmsg(), "give one of them");
    o.upsample = 0;
    o.downsample = 1;
    o.density_scale = -1;
    CHECK(vpt_scene_from_volume(p, &o) == NULL);
    CHECK_STR_CONTAINS(vpt_errmsg(), "density scale");
    o.density_scale = 0;
    o.like = "no-such-scene";
    CHECK(vpt_scene_from_volume(p, &o) == NULL);
    CHECK_STR_CONTAINS(vpt_errmsg(), "s.nrrd");
    CHECK_STR_CONTAINS(vpt_errmsg(), "no-such-scene");
    o.like = NULL;
    CHECK(vpt_scene_from_volume(vpt_test_tmp_path(p, sizeof p, "missing.nrrd"), &o) == NULL);
    CHECK_STR_CONTAINS(vpt_errmsg(), "missing.nrrd");
}

/* Any integer downsampling factor averages its blocks (a partial last block
 * dropped); upsampling is trilinear at texel centres, so a linear ramp stays
 * the same ramp; both keep the box. */
TEST(volume_resample_any_factor)
{
    VptVolume v;
    memset(&v, 0, sizeof v);
    v.nx = 7;
    v.ny = 3;
    v.nz = 1;
    v.data = malloc(21 * sizeof(float));
    REQUIRE(v.data);
    for (int i = 0; i < 21; i++) v.data[i] = (float)(i % 7); /* x ramp 0..6 */
    v.spacing[0] = v.spacing[1] = v.spacing[2] = 1.0f;
    REQUIRE(vpt_volume_downsample(&v, 3) == 0);
    CHECK_EQ_INT(v.nx, 2); /* 7 / 3: the seventh column is dropped */
    CHECK_EQ_INT(v.ny, 1); /* 3 / 3 */
    CHECK_EQ_INT(v.nz, 1);
    CHECK_NEAR(v.data[0], 1.0, 1e-6); /* mean of 0, 1, 2 */
    CHECK_NEAR(v.data[1], 4.0, 1e-6); /* mean of 3, 4, 5 */
    CHECK_NEAR(v.spacing[0], 3.0, 1e-6);
    CHECK_NEAR(v.origin[0], 1.0, 1e-6);
    vpt_volume_free(&v);

    memset(&v, 0, sizeof v);
    v.nx = 4;
    v.ny = 1;
    v.nz = 1;
    v.data = malloc(4 * sizeof(float));
    REQUIRE(v.data);
    for (int i = 0; i < 4; i++) v.data[i] = (float)(2 * i); /* 0 2 4 6 */
    v.spacing[0] = v.spacing[1] = v.spacing[2] = 1.0f;
    REQUIRE(vpt_volume_upsample(&v, 2) == 0);
    CHECK_EQ_INT(v.nx, 8);
    CHECK_EQ_INT(v.ny, 1);
    /* centres at (j + 0.5) / 2 - 0.5: -0.25 (clamped to 0), 0.25, 0.75, ... 3.25 (clamped to 3) */
    const float want[8] = {0.0f, 0.5f, 1.5f, 2.5f, 3.5f, 4.5f, 5.5f, 6.0f};
    for (int i = 0; i < 8; i++) CHECK_NEAR(v.data[i], want[i], 1e-6);
    CHECK_NEAR(v.spacing[0], 0.5, 1e-6);
    CHECK_NEAR(v.origin[0], -0.25, 1e-6);
    CHECK(vpt_volume_upsample(&v, 0) != 0);
    CHECK(vpt_volume_downsample(&v, 0) != 0);
    vpt_volume_free(&v);
}

/* An albedo grid is resampled as the values: channel 0 holding the values
 * gives the resampled values bit for bit, a constant channel stays that
 * constant, in both directions. */
TEST(volume_resample_carries_the_albedo)
{
    for (int up = 0; up < 2; up++) {
        VptVolume v;
        memset(&v, 0, sizeof v);
        v.nx = 9;
        v.ny = 5;
        v.nz = 4;
        const size_t n = 9 * 5 * 4;
        v.data = malloc(n * sizeof(float));
        v.albedo = malloc(3 * n * sizeof(float));
        REQUIRE(v.data && v.albedo);
        for (size_t i = 0; i < n; i++) {
            v.data[i] = (float)((i * 37) % 101) / 100.0f;
            v.albedo[3 * i] = v.data[i];
            v.albedo[3 * i + 1] = 0.25f;
            v.albedo[3 * i + 2] = 1.0f - v.data[i];
        }
        v.spacing[0] = v.spacing[1] = v.spacing[2] = 1.0f;
        REQUIRE(up ? vpt_volume_upsample(&v, 3) == 0 : vpt_volume_downsample(&v, 2) == 0);
        const size_t m = (size_t)v.nx * v.ny * v.nz;
        CHECK_EQ_INT((int)m, up ? 27 * 15 * 12 : 4 * 2 * 2);
        int bad = 0;
        for (size_t i = 0; i < m; i++)
            bad += v.albedo[3 * i] != v.data[i] || v.albedo[3 * i + 1] != 0.25f || !(v.albedo[3 * i + 2] >= 0.0f) ||
                   !(v.albedo[3 * i + 2] <= 1.0f);
        CHECK_MSG(bad == 0, "%s: %d voxels' albedos are off", up ? "upsample" : "downsample", bad);
        vpt_volume_free(&v);
        CHECK(v.albedo == NULL && v.data == NULL);
    }
}

/* A resampled scene that cannot fit in host memory is refused before it is
 * allocated, naming the sizes and a factor that fits ($VPT_MEM_AVAILABLE
 * stands in for the machine's memory). */
TEST(volume_scene_refuses_what_host_memory_cannot_hold)
{
    char p[600];
    const char *h = "NRRD0004\ntype: uchar\ndimension: 3\nsizes: 8 8 8\nencoding: raw\n\n";
    char data[512];
    memset(data, 7, sizeof data);
    vpt_test_write_file(vpt_test_tmp_path(p, sizeof p, "m.nrrd"), h, strlen(h), data, sizeof data);
    /* 50 kB: a scene takes 4 bytes a voxel (the float density; the albedo
     * is the transfer's table), beside the 8^3 loaded grid (2 kB): 32^3
     * (133 kB) and 24^3 (57 kB) do not fit, 16^3 (18 kB) does */
    setenv("VPT_MEM_AVAILABLE", "50000", 1);
    VptVolumeSceneOptions o = {.upsample = 4};
    CHECK(vpt_scene_from_volume(p, &o) == NULL);
    CHECK_STR_CONTAINS(vpt_errmsg(), "m.nrrd");
    CHECK_STR_CONTAINS(vpt_errmsg(), "host memory");
    CHECK_STR_CONTAINS(vpt_errmsg(), "--upsample 2 would need");
    o.upsample = 2;
    VptScene *s = vpt_scene_from_volume(p, &o);
    CHECK_MSG(s != NULL, "%s", vpt_errmsg());
    if (s) {
        CHECK_EQ_INT(s->nx, 16);
        vpt_scene_destroy(s);
    }
    unsetenv("VPT_MEM_AVAILABLE");
}

/* ---------- layering (issue 22): the formats never call back into volume.c ---------- */

/* The object files of this build: build/obj beside bin/ (make test), or
 * build-asan/obj for build-asan/bin (make test SANITIZE=1). */
static int object_dir(char *out, size_t size)
{
    char exe[512];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return -1;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash) return -1;
    *slash = '\0';
    const char *const tries[] = {"%s/../obj/scenes/volume.o", "%s/../build/obj/scenes/volume.o"};
    for (int i = 0; i < 2; i++) {
        snprintf(out, size, tries[i], exe);
        if (access(out, R_OK) == 0) {
            out[strlen(out) - strlen("/volume.o")] = '\0';
            return 0;
        }
    }
    return -1;
}

TEST(volume_formats_never_call_back_into_the_dispatch)
{
    char dir[600], cmd[1600], out[4096];
    if (object_dir(dir, sizeof dir)) SKIP("the build's object files are not beside this test binary");
    /* every symbol volume.o defines, against every symbol a format's (or the
     * shared helpers') object file needs */
    snprintf(cmd, sizeof cmd,
             "cd '%s' && t=$(mktemp) && nm -g --defined-only volume.o | awk '{print $3}' | sort > $t && "
             "for f in formats/volume_*.o; do nm -u $f | awk '{print $2}' | sort | comm -12 - $t | sed \"s/^/$f needs /\"; "
             "done; rm -f $t; ls formats/volume_*.o | wc -l",
             dir);
    REQUIRE(vpt_test_sh(cmd, out, sizeof out) == 0);
    char *last = strrchr(out, '\n');
    REQUIRE(last && last != out);
    *last = '\0';
    char *count = strrchr(out, '\n');
    REQUIRE_MSG(!count, "a format calls back into volume.c: %s", out);
    REQUIRE_MSG(atoi(out) >= 5, "expected the format objects (formats/volume_*.o) in %s, found %s", dir, out);
}
