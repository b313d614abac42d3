/* libFuzzer target: PFM images (vpt_image_parse_pfm). On success the
 * image's size must be within the limits and its floats must be the data
 * bytes in the order the header's scale sign gives. */
#include "fuzz/fuzz_common.h"
#include "image/image.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    vpt_error_clear();
    VptImage *img = vpt_image_parse_pfm("fuzz.pfm", data, size);
    if (!img) {
        FUZZ_CHECK_FAILED_WITH_MESSAGE("vpt_image_parse_pfm");
        return 0;
    }
    FUZZ_CHECK(img->width >= 1 && img->width <= VPT_IMAGE_MAX_DIM && img->height >= 1 &&
                   img->height <= VPT_IMAGE_MAX_DIM,
               "size %dx%d", img->width, img->height);
    size_t n = (size_t)img->width * (size_t)img->height;
    FUZZ_CHECK(n <= VPT_IMAGE_MAX_PIXELS, "%zu pixels", n);
    FUZZ_CHECK(n * 12 < size, "%zu pixels from %zu bytes", n, size);
    /* The data is the file's last n * 12 bytes, bottom row first. */
    const uint8_t *p = data + size - n * 12;
    int big = 0;
    {
        /* the scale is the third header token; only its sign matters */
        size_t i = 2;
        for (int tok = 0; tok < 2; tok++) {
            while (i < size && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r' ||
                                data[i] == '\v' || data[i] == '\f'))
                i++;
            while (i < size && !(data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r' ||
                                 data[i] == '\v' || data[i] == '\f'))
                i++;
        }
        while (i < size && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r' ||
                            data[i] == '\v' || data[i] == '\f'))
            i++;
        big = i < size && data[i] != '-';
    }
    /* Strict header: a NUL byte cannot hide trailing junk in a field. */
    FUZZ_CHECK(memchr(data, '\0', size - n * 12) == NULL, "accepted a header holding a NUL byte");
    for (int y = img->height - 1; y >= 0; y--)
        for (int x = 0; x < img->width * 3; x++, p += 4) {
            uint32_t u = big ? (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]
                             : (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
            uint32_t got;
            memcpy(&got, &vpt_image_at(img, 0, y)[x], 4);
            FUZZ_CHECK(got == u, "pixel value %d of row %d is %08x, the file has %08x", x, y, got, u);
        }
    vpt_image_destroy(img);
    return 0;
}
