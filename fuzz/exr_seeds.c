/* Writes the seed corpus of the env_map_exr fuzz target (make fuzz-corpus):
 * small OpenEXR files written by OpenEXR's own C API (OpenEXRCore, the
 * library the plugin reads them with), so that each of its decoders has a
 * valid input to start from: scanline files of R, G and B halves in every
 * compression it writes (not DWAA and DWAB: Debian's OpenEXRCore 3.1 has no
 * encoder for them), float and uint channels, a grey Y map, an extra A channel, a
 * data window away from the origin, maps of several chunks; and invalid ones,
 * each near a different refusal: a tiled file, no colour channel, a
 * subsampled one, a negative and a NaN texel, a cut header, a cut chunk, a data window
 * beyond the plugin's limits.
 *
 * Why small (every file under about 2 KB): libFuzzer mutates and replays
 * every input at its full length, and the plugin's work grows with the
 * pixels. The values are exact in half precision (multiples of 1/8), and the
 * output is the same at every run (no time stamps: OpenEXR writes none
 * unless asked). Usage: exr_seeds DIR */
#include <OpenEXR/openexr.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A float's half bits, for the multiples of 1/8 in 0..8192 used here (exact
 * in half), and infinities and NaN. */
static uint16_t half_bits(float f)
{
    if (isnan(f)) return 0x7e00;
    uint32_t u;
    memcpy(&u, &f, 4);
    const uint16_t sign = (uint16_t)((u >> 16) & 0x8000);
    if (f == 0.0f) return sign;
    if (isinf(f)) return (uint16_t)(sign | 0x7c00);
    const int e = (int)((u >> 23) & 0xff) - 127 + 15;
    return (uint16_t)(sign | (uint16_t)(e << 10) | (uint16_t)((u >> 13) & 0x3ff));
}

typedef struct {
    const char *name;
    exr_pixel_type_t type;
    int xs, ys; /* sampling */
} Channel;

typedef struct {
    const char *file;
    exr_compression_t comp;
    int w, h, x0, y0; /* data window: (x0, y0) .. (x0 + w - 1, y0 + h - 1) */
    int nch;
    Channel ch[4];
    int tiled;
    float bad; /* a value placed at texel 1 of channel 0 (0: none) */
    int zero_row; /* 1: the top row of every channel is 0 */
} Spec;

/* Channel c's value at (x, y) of the data window: a gradient, a bright
 * spot, exact in half; never 0 (a Spec's zero_row writes its zeros). tests/test_env_map.c
 * computes the same. */
static float value(int c, int x, int y, int w, int h)
{
    float v = (float)(1 + (x * 3 + y * 5 + c * 7) % 16) / 8.0f;
    if (x == w / 2 && y == h / 2) v = 64.0f + (float)c;
    return v;
}

static int write_exr(const char *dir, const Spec *s)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, s->file);
    exr_context_initializer_t init = EXR_DEFAULT_CONTEXT_INITIALIZER;
    exr_context_t f = NULL;
    int part = 0;
    exr_result_t r = exr_start_write(&f, path, EXR_WRITE_FILE_DIRECTLY, &init);
    if (r == EXR_ERR_SUCCESS)
        r = exr_add_part(f, "env", s->tiled ? EXR_STORAGE_TILED : EXR_STORAGE_SCANLINE, &part);
    if (r == EXR_ERR_SUCCESS) r = exr_initialize_required_attr_simple(f, part, s->w, s->h, s->comp);
    exr_attr_box2i_t dw;
    dw.min.x = s->x0;
    dw.min.y = s->y0;
    dw.max.x = s->x0 + s->w - 1;
    dw.max.y = s->y0 + s->h - 1;
    if (r == EXR_ERR_SUCCESS) r = exr_set_data_window(f, part, &dw);
    if (r == EXR_ERR_SUCCESS && s->tiled)
        r = exr_set_tile_descriptor(f, part, 4, 4, EXR_TILE_ONE_LEVEL, EXR_TILE_ROUND_DOWN);
    for (int c = 0; c < s->nch && r == EXR_ERR_SUCCESS; c++)
        r = exr_add_channel(f, part, s->ch[c].name, s->ch[c].type, EXR_PERCEPTUALLY_LOGARITHMIC, s->ch[c].xs,
                            s->ch[c].ys);
    if (r == EXR_ERR_SUCCESS) r = exr_write_header(f);
    /* the channels' values in the file's types, one plane each, full size */
    const size_t n = (size_t)s->w * (size_t)s->h;
    unsigned char *planes[4] = {NULL, NULL, NULL, NULL};
    for (int c = 0; c < s->nch; c++) {
        const int bytes = s->ch[c].type == EXR_PIXEL_HALF ? 2 : 4;
        planes[c] = calloc(n, (size_t)bytes);
        if (!planes[c]) {
            fprintf(stderr, "exr_seeds: out of memory\n");
            exit(1);
        }
        for (int y = 0; y < s->h; y++)
            for (int x = 0; x < s->w; x++) {
                float v = value(c, x, y, s->w, s->h);
                if (c == 0 && s->bad != 0.0f && y * s->w + x == 1) v = s->bad;
                if (s->zero_row && y == 0) v = 0.0f;
                unsigned char *p = planes[c] + ((size_t)y * (size_t)s->w + (size_t)x) * (size_t)bytes;
                if (s->ch[c].type == EXR_PIXEL_HALF) {
                    const uint16_t b = half_bits(v);
                    memcpy(p, &b, 2);
                } else if (s->ch[c].type == EXR_PIXEL_FLOAT) {
                    memcpy(p, &v, 4);
                } else {
                    const uint32_t u = (uint32_t)(v * 8.0f);
                    memcpy(p, &u, 4);
                }
            }
    }
    exr_encode_pipeline_t enc = EXR_ENCODE_PIPELINE_INITIALIZER;
    int enc_init = 0;
    int32_t lines = 1;
    if (r == EXR_ERR_SUCCESS && !s->tiled) r = exr_get_scanlines_per_chunk(f, part, &lines);
    const int ty = s->tiled ? (s->h + 3) / 4 : 0, tx = s->tiled ? (s->w + 3) / 4 : 0;
    const int chunks = s->tiled ? tx * ty : (s->h + lines - 1) / lines;
    for (int k = 0; k < chunks && r == EXR_ERR_SUCCESS; k++) {
        exr_chunk_info_t ci;
        r = s->tiled ? exr_write_tile_chunk_info(f, part, k % tx, k / tx, 0, 0, &ci)
                     : exr_write_scanline_chunk_info(f, part, s->y0 + k * lines, &ci);
        if (r != EXR_ERR_SUCCESS) break;
        r = enc_init ? exr_encoding_update(f, part, &ci, &enc) : exr_encoding_initialize(f, part, &ci, &enc);
        if (r != EXR_ERR_SUCCESS) break;
        const int first = !enc_init;
        enc_init = 1;
        for (int c = 0; c < enc.channel_count; c++) {
            exr_coding_channel_info_t *cc = &enc.channels[c];
            int k2 = 0;
            while (k2 < s->nch && strcmp(s->ch[k2].name, cc->channel_name)) k2++;
            const int bytes = cc->bytes_per_element;
            const int col0 = s->tiled ? (k % tx) * 4 : 0;
            const int row0 = ci.start_y - s->y0;
            cc->user_bytes_per_element = (int8_t)bytes;
            cc->user_data_type = cc->data_type;
            cc->user_pixel_stride = bytes * s->ch[k2].xs;
            cc->user_line_stride = bytes * s->w * s->ch[k2].ys;
            cc->encode_from_ptr = planes[k2] + ((size_t)row0 * (size_t)s->w + (size_t)col0) * (size_t)bytes;
        }
        if (first && (r = exr_encoding_choose_default_routines(f, part, &enc)) != EXR_ERR_SUCCESS) break;
        r = exr_encoding_run(f, part, &enc);
    }
    if (enc_init) exr_encoding_destroy(f, &enc);
    for (int c = 0; c < s->nch; c++) free(planes[c]);
    const exr_result_t fin = exr_finish(&f);
    if (r == EXR_ERR_SUCCESS) r = fin;
    if (r != EXR_ERR_SUCCESS) {
        fprintf(stderr, "exr_seeds: %s: %s\n", path, exr_get_error_code_as_string(r));
        return -1;
    }
    return 0;
}

static unsigned char *slurp(const char *path, size_t *size)
{
    FILE *fp = fopen(path, "rb");
    if (!fp) return NULL;
    fseek(fp, 0, SEEK_END);
    const long n = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    unsigned char *b = malloc((size_t)n + 1);
    if (b && fread(b, 1, (size_t)n, fp) != (size_t)n) {
        free(b);
        b = NULL;
    }
    fclose(fp);
    *size = (size_t)n;
    return b;
}

static int spit(const char *path, const unsigned char *b, size_t n)
{
    FILE *fp = fopen(path, "wb");
    if (!fp || fwrite(b, 1, n, fp) != n || fclose(fp) != 0) {
        fprintf(stderr, "exr_seeds: cannot write %s\n", path);
        return -1;
    }
    return 0;
}

/* Variants of a written seed: its first half (a cut header), all but its
 * last 7 bytes (a cut chunk), and its dataWindow attribute made 70000 wide
 * (beyond the plugin's 65536 per side). */
static int derived(const char *dir, const char *from)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, from);
    size_t n;
    unsigned char *b = slurp(path, &n);
    if (!b) return fprintf(stderr, "exr_seeds: cannot read %s\n", path), -1;
    snprintf(path, sizeof path, "%s/bad_cut_half.exr", dir);
    int rc = spit(path, b, n / 2);
    snprintf(path, sizeof path, "%s/bad_cut_end.exr", dir);
    rc |= spit(path, b, n - 7);
    static const char key[] = "dataWindow\0box2i";
    unsigned char *at = memmem(b, n, key, sizeof key);
    if (!at || at + sizeof key + 4 + 16 > b + n) {
        fprintf(stderr, "exr_seeds: %s has no dataWindow attribute\n", from);
        free(b);
        return -1;
    }
    const int32_t max_x = 69999;
    memcpy(at + sizeof key + 4 + 8, &max_x, 4);
    snprintf(path, sizeof path, "%s/bad_window_too_wide.exr", dir);
    rc |= spit(path, b, n);
    free(b);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: exr_seeds DIR\n");
        return 2;
    }
    const Channel R = {"R", EXR_PIXEL_HALF, 1, 1}, G = {"G", EXR_PIXEL_HALF, 1, 1}, B = {"B", EXR_PIXEL_HALF, 1, 1};
    const Channel Rf = {"R", EXR_PIXEL_FLOAT, 1, 1}, Gf = {"G", EXR_PIXEL_FLOAT, 1, 1},
                  Bf = {"B", EXR_PIXEL_FLOAT, 1, 1};
    const Channel Ru = {"R", EXR_PIXEL_UINT, 1, 1}, Gu = {"G", EXR_PIXEL_UINT, 1, 1}, Bu = {"B", EXR_PIXEL_UINT, 1, 1};
    const Channel Y = {"Y", EXR_PIXEL_HALF, 1, 1}, A = {"A", EXR_PIXEL_HALF, 1, 1};
    const Channel R22 = {"R", EXR_PIXEL_HALF, 2, 2};
    static const struct {
        const char *name;
        exr_compression_t c;
    } comps[] = {{"none", EXR_COMPRESSION_NONE}, {"rle", EXR_COMPRESSION_RLE},     {"zips", EXR_COMPRESSION_ZIPS},
                 {"zip", EXR_COMPRESSION_ZIP},   {"piz", EXR_COMPRESSION_PIZ},     {"pxr24", EXR_COMPRESSION_PXR24},
                 {"b44", EXR_COMPRESSION_B44},   {"b44a", EXR_COMPRESSION_B44A}};
    int rc = 0;
    char file[64][64];
    int nf = 0;
    for (size_t i = 0; i < sizeof comps / sizeof comps[0]; i++) {
        snprintf(file[nf], sizeof file[nf], "rgb_half_%s_8x4.exr", comps[i].name);
        const Spec s = {file[nf++], comps[i].c, 8, 4, 0, 0, 3, {B, G, R}, 0, 0};
        rc |= write_exr(argv[1], &s);
    }
    const Spec more[] = {
        {"rgb_float_zip_4x4.exr", EXR_COMPRESSION_ZIP, 4, 4, 0, 0, 3, {Bf, Gf, Rf}, 0, 0},
        {"rgb_uint_none_4x2.exr", EXR_COMPRESSION_NONE, 4, 2, 0, 0, 3, {Bu, Gu, Ru}, 0, 0},
        {"grey_y_piz_6x3.exr", EXR_COMPRESSION_PIZ, 6, 3, 0, 0, 1, {Y}, 0, 0},
        {"rgba_half_rle_4x2.exr", EXR_COMPRESSION_RLE, 4, 2, 0, 0, 4, {A, B, G, R}, 0, 0},
        {"rgb_half_none_window_5x3.exr", EXR_COMPRESSION_NONE, 5, 3, -2, 7, 3, {B, G, R}, 0, 0},
        {"rgb_half_zip_2x40.exr", EXR_COMPRESSION_ZIP, 2, 40, 0, 0, 3, {B, G, R}, 0, 0},
        {"rgb_half_piz_3x70.exr", EXR_COMPRESSION_PIZ, 3, 70, 0, 0, 3, {B, G, R}, 0, 0},
        {"rgb_half_none_1x1.exr", EXR_COMPRESSION_NONE, 1, 1, 0, 0, 3, {B, G, R}, 0, 0},
        {"bad_tiled_8x8.exr", EXR_COMPRESSION_NONE, 8, 8, 0, 0, 3, {B, G, R}, 1, 0},
        {"bad_alpha_only_4x2.exr", EXR_COMPRESSION_NONE, 4, 2, 0, 0, 1, {A}, 0, 0},
        {"bad_subsampled_4x4.exr", EXR_COMPRESSION_NONE, 4, 4, 0, 0, 3, {B, G, R22}, 0, 0},
        {"bad_negative_4x2.exr", EXR_COMPRESSION_ZIPS, 4, 2, 0, 0, 3, {B, G, R}, 0, -1.0f},
        {"rgb_half_b44_zero_row_8x4.exr", EXR_COMPRESSION_B44, 8, 4, 0, 0, 3, {B, G, R}, 0, 0, 1},
        {"bad_nan_4x2.exr", EXR_COMPRESSION_NONE, 4, 2, 0, 0, 3, {Bf, Gf, Rf}, 0, NAN},
    };
    for (size_t i = 0; i < sizeof more / sizeof more[0]; i++) rc |= write_exr(argv[1], &more[i]);
    rc |= derived(argv[1], "rgb_half_none_8x4.exr");
    char path[4096];
    snprintf(path, sizeof path, "%s/bad_not_exr", argv[1]);
    rc |= spit(path, (const unsigned char *)"PF\n1 1\n-1.0\n\0\0\0\0\0\0\0\0\0\0\0\0", 24);
    return rc ? 1 : 0;
}
