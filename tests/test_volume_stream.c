/* The streaming loaders (scenes/formats/volume_stream.c): a file loaded from disk,
 * its data streamed in chunks through the reading thread (chunks made tiny
 * here, so that small files cross many chunk boundaries), gives the very
 * floats the in-memory parser gives for the same bytes, in every format,
 * encoding and layout; the files' SHA-256 is that of their bytes; errors in
 * compressed data are found wherever a chunk boundary falls; the admit hook
 * refuses a volume before anything is allocated; a header that does not end
 * within the bytes read for it is refused. Expected hashes come from
 * OpenSSL's one-shot digest of the bytes written, not from the loader. */
#include "tests/harness/test.h"
#include "tests/test_tools.h"

#include "base/error.h"
#include "scenes/volume.h"
#include "scenes/formats/volume_format.h"

#include <openssl/evp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

static void sha256_hex(const void *a, size_t na, const void *b, size_t nb, char hex[65])
{
    EVP_MD_CTX *m = EVP_MD_CTX_new();
    unsigned char sum[32];
    unsigned int len = 0;
    REQUIRE(m && EVP_DigestInit_ex(m, EVP_sha256(), NULL) == 1);
    EVP_DigestUpdate(m, a, na);
    if (nb) EVP_DigestUpdate(m, b, nb);
    EVP_DigestFinal_ex(m, sum, &len);
    EVP_MD_CTX_free(m);
    for (int i = 0; i < 32; i++) snprintf(hex + 2 * i, 3, "%02x", sum[i]);
}

/* A varied payload of n bytes of type t in either byte order: random
 * bytes for the integers, finite values for the float types. */
static unsigned char *payload(size_t n, VptScalarType t, int big)
{
    unsigned char *d = malloc(n ? n : 1);
    REQUIRE(d);
    const size_t esz = vpt_scalar_type_size(t);
    for (size_t i = 0; i < n; i++) d[i] = (unsigned char)(i * 2654435761u >> 13);
    if (t == VPT_SCALAR_F32 || t == VPT_SCALAR_F64)
        for (size_t i = 0; i + esz <= n; i += esz) {
            const double v = (double)((i * 37) % 1000) / 7.0 - 50.0;
            unsigned char b[8];
            if (esz == 4) {
                float f = (float)v;
                memcpy(b, &f, 4);
            } else {
                memcpy(b, &v, 8);
            }
            for (size_t k = 0; k < esz; k++) d[i + k] = b[big ? esz - 1 - k : k]; /* the host is little endian */
        }
    return d;
}

static unsigned char *deflated(const unsigned char *src, size_t n, int gzip, size_t *out_n)
{
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    REQUIRE(deflateInit2(&zs, 6, Z_DEFLATED, gzip ? 16 + 15 : 15, 8, Z_DEFAULT_STRATEGY) == Z_OK);
    size_t cap = deflateBound(&zs, n);
    unsigned char *out = malloc(cap);
    REQUIRE(out);
    zs.next_in = (Bytef *)src;
    zs.avail_in = (uInt)n;
    zs.next_out = out;
    zs.avail_out = (uInt)cap;
    REQUIRE(deflate(&zs, Z_FINISH) == Z_STREAM_END);
    *out_n = cap - zs.avail_out;
    deflateEnd(&zs);
    return out;
}

/* Loads path from disk and compares with the in-memory parse of the same
 * bytes (mem: the header file's bytes; its data files are beside it). */
static void same_as_memory(const char *path, const unsigned char *mem, size_t nmem,
                           int (*parse)(const char *, const char *, const unsigned char *, size_t, size_t, VptVolume *),
                           const VptVolumeLoadOptions *opt)
{
    VptVolume a, b;
    int ra = vpt_volume_load(path, opt, &a);
    REQUIRE_MSG(ra == 0, "%s: %s", path, vpt_errmsg());
    if (parse) {
        REQUIRE_MSG(parse(path, vpt_test_tmpdir(), mem, nmem, 0, &b) == 0, "%s (memory): %s", path, vpt_errmsg());
        CHECK(a.nx == b.nx && a.ny == b.ny && a.nz == b.nz && a.stored == b.stored);
        size_t n = (size_t)a.nx * a.ny * a.nz;
        CHECK_MSG(memcmp(a.data, b.data, n * sizeof(float)) == 0, "%s: file and memory loads differ", path);
        CHECK(!memcmp(a.spacing, b.spacing, sizeof a.spacing) && !memcmp(a.origin, b.origin, sizeof a.origin));
        CHECK_MSG(!strcmp(a.data_sha256, b.data_sha256), "%s: data file hashed %s vs %s", path, a.data_sha256,
                  b.data_sha256);
        vpt_volume_free(&b);
    }
    vpt_volume_free(&a);
}

static int parse_mha(const char *n, const char *d, const unsigned char *b, size_t s, size_t m, VptVolume *o)
{
    return vpt_volume_parse_metaimage(n, d, b, s, m, o);
}
static int parse_nrrd(const char *n, const char *d, const unsigned char *b, size_t s, size_t m, VptVolume *o)
{
    return vpt_volume_parse_nrrd(n, d, b, s, m, o);
}
static int parse_vol(const char *n, const char *d, const unsigned char *b, size_t s, size_t m, VptVolume *o)
{
    (void)d;
    return vpt_volume_parse_mitsuba(n, b, s, m, o);
}

/* Every type, both byte orders, raw and compressed, attached and detached,
 * in chunks of 24 bytes (not a multiple of 16: a chunk ends inside a
 * voxel's bytes only if the rounding to 8 is wrong) and of the default
 * size: the file loads give the in-memory parse's floats. */
TEST(volume_stream_file_equals_memory_every_layout)
{
    static const size_t chunks[] = {24, 1000, 0};
    const int dims[3] = {37, 11, 5}; /* 2035 voxels, odd sizes */
    const size_t count = (size_t)dims[0] * dims[1] * dims[2];
    for (size_t c = 0; c < sizeof chunks / sizeof chunks[0]; c++) {
        vptv_set_chunk_bytes(chunks[c]);
        for (int t = VPT_SCALAR_U8; t <= VPT_SCALAR_F64; t++) {
            const size_t nbytes = count * vpt_scalar_type_size((VptScalarType)t);
            unsigned char *data = NULL, *z = NULL, *gz = NULL;
            size_t nz, ngz;
            char p[600], q[600], hdr[1024];
            const char *met[] = {"MET_UCHAR", "MET_CHAR", "MET_USHORT", "MET_SHORT", "MET_UINT", "MET_INT", "MET_FLOAT",
                                 "MET_DOUBLE"};
            const char *nt[] = {"uchar", "signed char", "ushort", "short", "uint", "int", "float", "double"};
            for (int big = 0; big <= 1; big++) {
                free(data);
                free(z);
                free(gz);
                data = payload(nbytes, (VptScalarType)t, big);
                z = deflated(data, nbytes, 0, &nz);
                gz = deflated(data, nbytes, 1, &ngz);
                /* MetaImage, LOCAL raw and zlib */
                int h = snprintf(hdr, sizeof hdr,
                                 "ObjectType = Image\nNDims = 3\nDimSize = %d %d %d\nElementType = %s\n"
                                 "BinaryDataByteOrderMSB = %s\nElementDataFile = LOCAL\n",
                                 dims[0], dims[1], dims[2], met[t], big ? "True" : "False");
                unsigned char *mem = malloc((size_t)h + nbytes);
                memcpy(mem, hdr, (size_t)h);
                memcpy(mem + h, data, nbytes);
                vpt_test_write_file(vpt_test_tmp_path(p, sizeof p, "s.mha"), hdr, (size_t)h, data, nbytes);
                same_as_memory(p, mem, (size_t)h + nbytes, parse_mha, NULL);
                free(mem);
                h = snprintf(hdr, sizeof hdr,
                             "ObjectType = Image\nNDims = 3\nDimSize = %d %d %d\nElementType = %s\n"
                             "BinaryDataByteOrderMSB = %s\nCompressedData = True\nCompressedDataSize = %zu\n"
                             "ElementDataFile = LOCAL\n",
                             dims[0], dims[1], dims[2], met[t], big ? "True" : "False", nz);
                mem = malloc((size_t)h + nz);
                memcpy(mem, hdr, (size_t)h);
                memcpy(mem + h, z, nz);
                vpt_test_write_file(vpt_test_tmp_path(p, sizeof p, "z.mha"), hdr, (size_t)h, z, nz);
                same_as_memory(p, mem, (size_t)h + nz, parse_mha, NULL);
                free(mem);
                /* MetaImage, detached with a 13-byte header in the data file */
                vpt_test_write_file(vpt_test_tmp_path(q, sizeof q, "d.raw"), "thirteen byte", 13, data, nbytes);
                h = snprintf(hdr, sizeof hdr,
                             "NDims = 3\nDimSize = %d %d %d\nElementType = %s\nElementByteOrderMSB = %s\n"
                             "HeaderSize = 13\nElementDataFile = d.raw\n",
                             dims[0], dims[1], dims[2], met[t], big ? "True" : "False");
                vpt_test_write_file(vpt_test_tmp_path(p, sizeof p, "d.mhd"), hdr, (size_t)h, NULL, 0);
                same_as_memory(p, (unsigned char *)hdr, (size_t)h, parse_mha, NULL);
                /* NRRD: attached raw after two skipped lines and 3 bytes,
                 * detached gzip with a byte skip of inflated bytes */
                h = snprintf(hdr, sizeof hdr,
                             "NRRD0004\ntype: %s\ndimension: 3\nsizes: %d %d %d\nendian: %s\nencoding: raw\n"
                             "line skip: 2\nbyte skip: 3\n\n",
                             nt[t], dims[0], dims[1], dims[2], big ? "big" : "little");
                mem = malloc((size_t)h + 20 + nbytes);
                memcpy(mem, hdr, (size_t)h);
                memcpy(mem + h, "line one\nline 2!\nxyz", 20);
                memcpy(mem + h + 20, data, nbytes);
                vpt_test_write_file(vpt_test_tmp_path(p, sizeof p, "s.nrrd"), mem, (size_t)h + 20 + nbytes, NULL, 0);
                same_as_memory(p, mem, (size_t)h + 20 + nbytes, parse_nrrd, NULL);
                free(mem);
                unsigned char *pre = malloc(5 + nbytes);
                memcpy(pre, "5byte", 5);
                memcpy(pre + 5, data, nbytes);
                size_t npg;
                unsigned char *pg = deflated(pre, 5 + nbytes, 1, &npg);
                vpt_test_write_file(vpt_test_tmp_path(q, sizeof q, "g.raw.gz"), pg, npg, NULL, 0);
                h = snprintf(hdr, sizeof hdr,
                             "NRRD0005\ntype: %s\ndimension: 3\nsizes: %d %d %d\nendian: %s\nencoding: gzip\n"
                             "byte skip: 5\ndata file: g.raw.gz\n",
                             nt[t], dims[0], dims[1], dims[2], big ? "big" : "little");
                vpt_test_write_file(vpt_test_tmp_path(p, sizeof p, "g.nhdr"), hdr, (size_t)h, NULL, 0);
                same_as_memory(p, (unsigned char *)hdr, (size_t)h, parse_nrrd, NULL);
                free(pg);
                free(pre);
                /* headerless raw */
                VptVolumeLoadOptions o = {{dims[0], dims[1], dims[2]}, 1, (VptScalarType)t, 1, big, 0, NULL, NULL};
                vpt_test_write_file(vpt_test_tmp_path(p, sizeof p, "h.raw"), data, nbytes, NULL, 0);
                VptVolume v;
                REQUIRE_MSG(vpt_volume_load(p, &o, &v) == 0, "%s", vpt_errmsg());
                VptVolume m; /* the same bytes as a MetaImage in memory */
                h = snprintf(hdr, sizeof hdr,
                             "NDims = 3\nDimSize = %d %d %d\nElementType = %s\nElementByteOrderMSB = %s\n"
                             "ElementDataFile = LOCAL\n",
                             dims[0], dims[1], dims[2], met[t], big ? "True" : "False");
                mem = malloc((size_t)h + nbytes);
                memcpy(mem, hdr, (size_t)h);
                memcpy(mem + h, data, nbytes);
                REQUIRE(vpt_volume_parse_metaimage("m.mha", NULL, mem, (size_t)h + nbytes, 0, &m) == 0);
                CHECK_MSG(!memcmp(v.data, m.data, count * sizeof(float)), "raw %s big %d: differs", nt[t], big);
                vpt_volume_free(&v);
                vpt_volume_free(&m);
                free(mem);
            }
            /* Mitsuba .vol (float32 or uint8 only, little endian) */
            if (t == VPT_SCALAR_F32 || t == VPT_SCALAR_U8) {
                free(data);
                data = payload(nbytes, (VptScalarType)t, 0);
                unsigned char vh[48] = {'V', 'O', 'L', 3};
                int32_t w[5] = {t == VPT_SCALAR_F32 ? 1 : 3, dims[0], dims[1], dims[2], 1};
                memcpy(vh + 4, w, sizeof w);
                float box[6] = {0, 0, 0, 1, 2, 3};
                memcpy(vh + 24, box, sizeof box);
                unsigned char *mem = malloc(48 + nbytes);
                memcpy(mem, vh, 48);
                memcpy(mem + 48, data, nbytes);
                vpt_test_write_file(vpt_test_tmp_path(p, sizeof p, "s.vol"), mem, 48 + nbytes, NULL, 0);
                same_as_memory(p, mem, 48 + nbytes, parse_vol, NULL);
                free(mem);
            }
            free(data);
            free(z);
            free(gz);
        }
    }
    vptv_set_chunk_bytes(0);
}

/* The SHA-256 a load reports is the file's, and the data file's. */
TEST(volume_stream_hashes_the_files_read)
{
    vptv_set_chunk_bytes(64);
    const size_t n = 40 * 30 * 7 * 2;
    unsigned char *data = payload(n, VPT_SCALAR_I16, 0);
    char p[600], q[600], want[65], want_data[65];
    const char *hdr = "NDims = 3\nDimSize = 40 30 7\nElementType = MET_SHORT\nHeaderSize = -1\nElementDataFile = x.raw\n";
    vpt_test_write_file(vpt_test_tmp_path(q, sizeof q, "x.raw"), "prefix", 6, data, n); /* HeaderSize -1: the data is the file's tail */
    vpt_test_write_file(vpt_test_tmp_path(p, sizeof p, "x.mhd"), hdr, strlen(hdr), NULL, 0);
    VptVolume v;
    REQUIRE_MSG(vpt_volume_load(p, NULL, &v) == 0, "%s", vpt_errmsg());
    sha256_hex(hdr, strlen(hdr), NULL, 0, want);
    sha256_hex("prefix", 6, data, n, want_data);
    CHECK_MSG(!strcmp(v.sha256, want), "header hashed %s, want %s", v.sha256, want);
    CHECK_MSG(!strcmp(v.data_sha256, want_data), "data hashed %s, want %s", v.data_sha256, want_data);
    vpt_volume_free(&v);
    /* one file: header and attached data */
    const char *h2 = "NDims = 3\nDimSize = 40 30 7\nElementType = MET_SHORT\nElementDataFile = LOCAL\n";
    vpt_test_write_file(vpt_test_tmp_path(p, sizeof p, "y.mha"), h2, strlen(h2), data, n);
    REQUIRE_MSG(vpt_volume_load(p, NULL, &v) == 0, "%s", vpt_errmsg());
    sha256_hex(h2, strlen(h2), data, n, want);
    CHECK_MSG(!strcmp(v.sha256, want), "hashed %s, want %s", v.sha256, want);
    CHECK(v.data_sha256[0] == '\0');
    vpt_volume_free(&v);
    /* in memory: nothing hashed */
    unsigned char *mem = malloc(strlen(h2) + n);
    memcpy(mem, h2, strlen(h2));
    memcpy(mem + strlen(h2), data, n);
    REQUIRE(vpt_volume_parse_metaimage("m.mha", NULL, mem, strlen(h2) + n, 0, &v) == 0);
    CHECK(v.sha256[0] == '\0');
    vpt_volume_free(&v);
    free(mem);
    free(data);
    vptv_set_chunk_bytes(0);
}

/* Corrupt or truncated compressed data is found wherever the chunks fall,
 * with the messages of the in-memory parser; nothing is left behind. */
TEST(volume_stream_compressed_errors_at_any_chunk)
{
    const size_t n = 64 * 64 * 16;
    unsigned char *data = payload(n, VPT_SCALAR_U8, 0);
    size_t nz;
    unsigned char *z = deflated(data, n, 1, &nz);
    char p[600];
    const char *hdr = "NRRD0004\ntype: uchar\ndimension: 3\nsizes: 64 64 16\nencoding: gzip\n\n";
    static const struct {
        const char *what;
        size_t cut;       /* bytes of the stream kept */
        int flip;         /* a byte changed in the middle */
        int junk;         /* bytes appended */
    } cases[] = {{"truncated", 0, 0, 0}, {"corrupt", 0, 1, 0}, {"junk", 0, 0, 1}};
    for (int c = 0; c < 3; c++)
        for (size_t chunk = 8; chunk <= 4096; chunk *= 8) {
            vptv_set_chunk_bytes(chunk);
            unsigned char *bad = malloc(nz + 16);
            memcpy(bad, z, nz);
            size_t nb = nz;
            if (!strcmp(cases[c].what, "truncated")) nb = nz / 2;
            if (cases[c].flip) bad[nz / 2] ^= 0x55;
            if (cases[c].junk) {
                memcpy(bad + nz, "JUNKJUNK", 8);
                nb = nz + 8;
            }
            vpt_test_write_file(vpt_test_tmp_path(p, sizeof p, "bad.nrrd"), hdr, strlen(hdr), bad, nb);
            VptVolume v;
            memset(&v, 0xab, sizeof v);
            CHECK_MSG(vpt_volume_load(p, NULL, &v) == -1, "%s at chunk %zu loaded", cases[c].what, chunk);
            CHECK(v.data == NULL && v.nx == 0);
            CHECK_STR_CONTAINS(vpt_errmsg(), "bad.nrrd");
            CHECK_MSG(strstr(vpt_errmsg(), cases[c].what) || (cases[c].flip && strstr(vpt_errmsg(), "truncated")) ||
                          (cases[c].flip && strstr(vpt_errmsg(), "inflates")),
                      "%s at chunk %zu: %s", cases[c].what, chunk, vpt_errmsg());
            free(bad);
        }
    vptv_set_chunk_bytes(0);
    free(z);
    free(data);
}

typedef struct {
    int calls;
    int dims[3];
    VptScalarType t;
    int albedo;
} AdmitSeen;

static int refuse(void *ctx, const char *name, const int dims[3], VptScalarType stored, int albedo)
{
    AdmitSeen *a = ctx;
    a->albedo = albedo;
    a->calls++;
    memcpy(a->dims, dims, sizeof a->dims);
    a->t = stored;
    return vpt_fail("%s: refused by the test", name);
}

/* The admit hook sees the shape before anything is read or allocated, and
 * its refusal is the load's error (the 8 GiB the header claims is never
 * asked for: the data is not even there). */
TEST(volume_stream_admit_refuses_before_reading)
{
    char p[600];
    const char *hdr = "NDims = 3\nDimSize = 2048 2048 512\nElementType = MET_FLOAT\nElementDataFile = missing.raw\n";
    vpt_test_write_file(vpt_test_tmp_path(p, sizeof p, "huge.mhd"), hdr, strlen(hdr), NULL, 0);
    vpt_test_write_file(vpt_test_tmp_path(p, sizeof p, "missing.raw"), "", 0, NULL, 0);
    AdmitSeen seen = {0, {0, 0, 0}, VPT_SCALAR_U8, -1};
    VptVolumeLoadOptions o;
    memset(&o, 0, sizeof o);
    o.admit = refuse;
    o.admit_ctx = &seen;
    /* wrong size on disk is found first... */
    VptVolume v;
    CHECK(vpt_volume_load(vpt_test_tmp_path(p, sizeof p, "huge.mhd"), &o, &v) == -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), "truncated");
    CHECK_EQ_INT(seen.calls, 0);
    /* ...and with data of the right size claimed by a raw file's options,
     * the hook refuses before a byte is read */
    const unsigned char d[8] = {0};
    vpt_test_write_file(vpt_test_tmp_path(p, sizeof p, "small.raw"), d, sizeof d, NULL, 0);
    o.has_dims = o.has_type = 1;
    o.dims[0] = 2;
    o.dims[1] = 1;
    o.dims[2] = 1;
    o.type = VPT_SCALAR_F32;
    CHECK(vpt_volume_load(p, &o, &v) == -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), "refused by the test");
    CHECK_EQ_INT(seen.calls, 1);
    CHECK(seen.dims[0] == 2 && seen.dims[1] == 1 && seen.dims[2] == 1 && seen.t == VPT_SCALAR_F32 && seen.albedo == 0);
    CHECK(v.data == NULL);
}

/* A file whose header does not end within the bytes read for it (1 MiB):
 * refused, not parsed from a cut line. */
TEST(volume_stream_header_must_end_early)
{
    size_t n = VPTV_HEAD_MAX + 4096;
    char *h = malloc(n + 64);
    REQUIRE(h);
    size_t k = (size_t)snprintf(h, 64, "NRRD0004\ntype: uchar\n");
    while (k < n) k += (size_t)snprintf(h + k, 64, "# a comment line of the header\n");
    k += (size_t)snprintf(h + k, 64, "dimension: 1\n\n");
    char p[600];
    vpt_test_write_file(vpt_test_tmp_path(p, sizeof p, "long.nrrd"), h, k, NULL, 0);
    VptVolume v;
    CHECK(vpt_volume_load(p, NULL, &v) == -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), "does not end within");
    CHECK_STR_CONTAINS(vpt_errmsg(), "long.nrrd");
    free(h);
}
