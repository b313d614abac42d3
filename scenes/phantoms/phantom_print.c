/* The "3D printing" scenes (thesis fig. 4.3/4.4): a solid of constant density
 * whose outer layer facing the camera carries a printed picture. The thesis'
 * logo and advertisement images are not available, so the pictures are drawn
 * here from shapes and a built-in 5x7 bitmap font. Colours are linear RGB. */
#include "scenes/phantoms/phantom.h"

#include "base/error.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- 5x7 font: 7 rows of 5 bits, bit 4 is the leftmost column ---- */

typedef struct {
    char c;
    uint8_t rows[7];
} Glyph;

static const Glyph font[] = {
    {'A', {0x0E, 0x11, 0x11, 0x1F, 0x11, 0x11, 0x11}}, {'B', {0x1E, 0x11, 0x11, 0x1E, 0x11, 0x11, 0x1E}},
    {'C', {0x0E, 0x11, 0x10, 0x10, 0x10, 0x11, 0x0E}}, {'D', {0x1C, 0x12, 0x11, 0x11, 0x11, 0x12, 0x1C}},
    {'E', {0x1F, 0x10, 0x10, 0x1E, 0x10, 0x10, 0x1F}}, {'F', {0x1F, 0x10, 0x10, 0x1E, 0x10, 0x10, 0x10}},
    {'G', {0x0E, 0x11, 0x10, 0x17, 0x11, 0x11, 0x0F}}, {'H', {0x11, 0x11, 0x11, 0x1F, 0x11, 0x11, 0x11}},
    {'I', {0x0E, 0x04, 0x04, 0x04, 0x04, 0x04, 0x0E}}, {'J', {0x07, 0x02, 0x02, 0x02, 0x02, 0x12, 0x0C}},
    {'K', {0x11, 0x12, 0x14, 0x18, 0x14, 0x12, 0x11}}, {'L', {0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x1F}},
    {'M', {0x11, 0x1B, 0x15, 0x15, 0x11, 0x11, 0x11}}, {'N', {0x11, 0x11, 0x19, 0x15, 0x13, 0x11, 0x11}},
    {'O', {0x0E, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0E}}, {'P', {0x1E, 0x11, 0x11, 0x1E, 0x10, 0x10, 0x10}},
    {'Q', {0x0E, 0x11, 0x11, 0x11, 0x15, 0x12, 0x0D}}, {'R', {0x1E, 0x11, 0x11, 0x1E, 0x14, 0x12, 0x11}},
    {'S', {0x0F, 0x10, 0x10, 0x0E, 0x01, 0x01, 0x1E}}, {'T', {0x1F, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04}},
    {'U', {0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0E}}, {'V', {0x11, 0x11, 0x11, 0x11, 0x11, 0x0A, 0x04}},
    {'W', {0x11, 0x11, 0x11, 0x15, 0x15, 0x15, 0x0A}}, {'X', {0x11, 0x11, 0x0A, 0x04, 0x0A, 0x11, 0x11}},
    {'Y', {0x11, 0x11, 0x0A, 0x04, 0x04, 0x04, 0x04}}, {'Z', {0x1F, 0x01, 0x02, 0x04, 0x08, 0x10, 0x1F}},
    {'0', {0x0E, 0x11, 0x13, 0x15, 0x19, 0x11, 0x0E}}, {'1', {0x04, 0x0C, 0x04, 0x04, 0x04, 0x04, 0x0E}},
    {'2', {0x0E, 0x11, 0x01, 0x02, 0x04, 0x08, 0x1F}}, {'3', {0x1F, 0x02, 0x04, 0x02, 0x01, 0x11, 0x0E}},
    {'4', {0x02, 0x06, 0x0A, 0x12, 0x1F, 0x02, 0x02}}, {'5', {0x1F, 0x10, 0x1E, 0x01, 0x01, 0x11, 0x0E}},
    {'6', {0x06, 0x08, 0x10, 0x1E, 0x11, 0x11, 0x0E}}, {'7', {0x1F, 0x01, 0x02, 0x04, 0x08, 0x08, 0x08}},
    {'8', {0x0E, 0x11, 0x11, 0x0E, 0x11, 0x11, 0x0E}}, {'9', {0x0E, 0x11, 0x11, 0x0F, 0x01, 0x02, 0x0C}},
    {'.', {0x00, 0x00, 0x00, 0x00, 0x00, 0x0C, 0x0C}}, {'-', {0x00, 0x00, 0x00, 0x1F, 0x00, 0x00, 0x00}},
    {'!', {0x04, 0x04, 0x04, 0x04, 0x04, 0x00, 0x04}}, {'+', {0x00, 0x04, 0x04, 0x1F, 0x04, 0x04, 0x00}},
    {'%', {0x18, 0x19, 0x02, 0x04, 0x08, 0x13, 0x03}},
};

static const uint8_t *glyph(char c)
{
    for (size_t i = 0; i < sizeof font / sizeof font[0]; i++)
        if (font[i].c == c) return font[i].rows;
    return NULL; /* blank */
}

int vpt_picture_text_width(int scale, const char *text)
{
    int n = (int)strlen(text);
    return n ? (6 * n - 1) * scale : 0;
}

static void put(VptPicture *pic, int x, int y, const uint8_t rgb[3])
{
    if (x < 0 || y < 0 || x >= pic->w || y >= pic->h) return;
    memcpy(pic->rgb + 3 * ((size_t)y * pic->w + x), rgb, 3);
}

int vpt_picture_text(VptPicture *pic, int x0, int y0, int scale, const char *text, const uint8_t rgb[3])
{
    for (int i = 0; text[i]; i++) {
        const uint8_t *g = glyph(text[i]);
        if (!g) continue;
        for (int r = 0; r < 7; r++)
            for (int c = 0; c < 5; c++)
                if (g[r] & (0x10 >> c))
                    for (int dy = 0; dy < scale; dy++)
                        for (int dx = 0; dx < scale; dx++)
                            put(pic, x0 + (6 * i + c) * scale + dx, y0 + r * scale + dy, rgb);
    }
    return vpt_picture_text_width(scale, text);
}

static int picture_alloc(VptPicture *pic, int w, int h, const uint8_t bg[3])
{
    pic->w = w;
    pic->h = h;
    pic->rgb = vpt_malloc((size_t)w * h * 3);
    if (!pic->rgb) return -1;
    for (size_t i = 0; i < (size_t)w * h; i++) memcpy(pic->rgb + 3 * i, bg, 3);
    return 0;
}

void vpt_picture_free(VptPicture *pic)
{
    free(pic->rgb);
    pic->rgb = NULL;
}

/* Linear-RGB palette (what the albedo grid stores). */
static const uint8_t WHITE[3] = {255, 255, 255}, RED[3] = {200, 12, 10}, BLUE[3] = {8, 30, 150},
                     YELLOW[3] = {245, 190, 5}, CREAM[3] = {240, 228, 200}, GREEN[3] = {10, 140, 30},
                     ORANGE[3] = {240, 80, 4}, PURPLE[3] = {90, 10, 140}, SKY[3] = {60, 150, 235},
                     DARK[3] = {12, 12, 18};

/* The cgg-logo picture: red "CGG" over a yellow bar, inside a blue ring. */
int vpt_picture_logo(VptPicture *pic, int w, int h)
{
    if (picture_alloc(pic, w, h, WHITE) != 0) return -1;
    float cx = 0.5f * w, cy = 0.5f * h, r = 0.47f * (w < h ? w : h), t = 0.09f * r;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            float d = hypotf(x + 0.5f - cx, y + 0.5f - cy);
            if (d <= r && d >= r - t) put(pic, x, y, BLUE);
        }
    int scale = (int)(0.75f * 2.0f * r / 17.0f); /* "CGG" is 17 font pixels wide */
    if (scale < 1) scale = 1;
    int tw = vpt_picture_text_width(scale, "CGG"), th = 7 * scale;
    int x0 = (w - tw) / 2, y0 = (int)cy - th / 2 - scale;
    vpt_picture_text(pic, x0, y0, scale, "CGG", RED);
    int bar_y = y0 + th + scale, bar_h = scale > 1 ? scale : 1;
    for (int y = bar_y; y < bar_y + bar_h; y++)
        for (int x = x0; x < x0 + tw; x++) put(pic, x, y, YELLOW);
    return 0;
}

/* The ad picture: a poster with a red title band, a yellow sun over diagonal
 * stripes, a slogan and a row of colour bars. Sizes scale with w. */
int vpt_picture_ad(VptPicture *pic, int w, int h)
{
    if (picture_alloc(pic, w, h, CREAM) != 0) return -1;
    float u = (float)w / 320.0f;
    int band = (int)(70 * u);
    /* diagonal sky stripes in the middle field */
    for (int y = band; y < (int)(0.78f * h); y++)
        for (int x = 0; x < w; x++)
            if (((x + y) / (int)(16 * u + 1)) % 2 == 0) put(pic, x, y, SKY);
    /* sun with a dark outline */
    float cx = 0.5f * w, cy = 0.47f * h, r = 62 * u;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            float d = hypotf(x + 0.5f - cx, y + 0.5f - cy);
            if (d <= r) put(pic, x, y, d > r - 4 * u ? DARK : YELLOW);
        }
    /* red title band with white text */
    for (int y = 0; y < band; y++)
        for (int x = 0; x < w; x++) put(pic, x, y, RED);
    int s1 = (int)(8 * u) > 0 ? (int)(8 * u) : 1;
    vpt_picture_text(pic, (w - vpt_picture_text_width(s1, "VOLUME")) / 2, (band - 7 * s1) / 2, s1, "VOLUME", WHITE);
    /* slogan on cream */
    int sy = (int)(0.78f * h);
    for (int y = sy; y < (int)(0.90f * h); y++)
        for (int x = 0; x < w; x++) put(pic, x, y, CREAM);
    int s2 = (int)(4 * u) > 0 ? (int)(4 * u) : 1;
    vpt_picture_text(pic, (w - vpt_picture_text_width(s2, "3D PRINTING")) / 2, sy + (int)(0.06f * h) - 7 * s2 / 2,
                     s2, "3D PRINTING", BLUE);
    /* colour bars */
    const uint8_t *bars[6] = {RED, ORANGE, YELLOW, GREEN, BLUE, PURPLE};
    for (int y = (int)(0.90f * h); y < h; y++)
        for (int x = 0; x < w; x++) put(pic, x, y, bars[(6 * x) / w]);
    return 0;
}

void vpt_phantom_print(VptScene *s, const VptPicture *pic, int depth)
{
    size_t n = (size_t)s->nx * s->ny * s->nz;
    for (size_t i = 0; i < n; i++) {
        s->density[i] = 1.0f;
        s->albedo[4 * i + 0] = s->albedo[4 * i + 1] = s->albedo[4 * i + 2] = s->albedo[4 * i + 3] = 255;
    }
    for (int z = s->nz - depth; z < s->nz; z++)
        for (int y = 0; y < s->ny; y++)
            for (int x = 0; x < s->nx; x++) {
                const uint8_t *c = pic->rgb + 3 * ((size_t)(s->ny - 1 - y) * pic->w + x);
                uint8_t *a = s->albedo + 4 * ((size_t)x + (size_t)s->nx * ((size_t)y + (size_t)s->ny * z));
                a[0] = c[0];
                a[1] = c[1];
                a[2] = c[2];
            }
}
