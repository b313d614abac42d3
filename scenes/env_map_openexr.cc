// The OpenEXR plugin: scenes/env_map_exr_shim.h. OpenEXR's C API
// (OpenEXRCore): a read context over the file's bytes in memory, whose
// errors come back through a handler into the result's message, then the
// scanline chunks decoded straight into the float RGB image.
#include "scenes/env_map_exr_shim.h"

#include <OpenEXR/openexr.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

// The context's user data: the bytes it reads, and its last error for the
// message (the library's default handler would print to stderr).
struct Source {
    const unsigned char *buf;
    size_t size;
    char text[512];
};

void on_error(exr_const_context_t ctxt, exr_result_t code, const char *msg)
{
    void *ud = nullptr;
    if (exr_get_user_data(ctxt, &ud) == EXR_ERR_SUCCESS && ud)
        std::snprintf(static_cast<Source *>(ud)->text, sizeof static_cast<Source *>(ud)->text, "%s (%s)", msg,
                      exr_get_error_code_as_string(code));
}

// pread's contract over the buffer: what lies at offset, short at the end,
// 0 beyond it (OpenEXR then reports the short read).
int64_t read_bytes(exr_const_context_t, void *ud, void *to, uint64_t n, uint64_t offset,
                   exr_stream_error_func_ptr_t)
{
    const Source *s = static_cast<const Source *>(ud);
    if (offset >= s->size) return 0;
    const uint64_t k = n < s->size - offset ? n : s->size - offset;
    std::memcpy(to, s->buf + offset, k);
    return (int64_t)k;
}

int64_t size_of(exr_const_context_t, void *ud) { return (int64_t) static_cast<const Source *>(ud)->size; }

int fail(VptExrResult *out, const char *path, const char *what, const Source &e)
{
    std::snprintf(out->error, sizeof out->error, "'%s': %s%s%s", path, what, e.text[0] ? ": " : "", e.text);
    std::free(out->rgb);
    out->rgb = nullptr;
    return -1;
}

// Which of R, G, B (0..2) a channel fills, 3 for Y (all three), -1 none.
int slot_of(const char *name)
{
    if (!std::strcmp(name, "R")) return 0;
    if (!std::strcmp(name, "G")) return 1;
    if (!std::strcmp(name, "B")) return 2;
    if (!std::strcmp(name, "Y")) return 3;
    return -1;
}

} // namespace

extern "C" int vpt_exr_shim_abi(void) { return VPT_EXR_SHIM_ABI; }

extern "C" int vpt_exr_read_memory(const char *path, const unsigned char *buf, size_t size, int max_dim,
                                   size_t max_pixels, VptExrResult *out)
{
    std::memset(out, 0, sizeof *out);
    Source errs = {buf, size, {0}};
    exr_context_initializer_t init = EXR_DEFAULT_CONTEXT_INITIALIZER;
    init.error_handler_fn = on_error;
    init.user_data = &errs;
    init.read_fn = read_bytes;
    init.size_fn = size_of;
    init.max_image_width = max_dim;
    init.max_image_height = max_dim;
    exr_context_t f = nullptr;
    if (exr_start_read(&f, path, &init) != EXR_ERR_SUCCESS) return fail(out, path, "not a readable OpenEXR file", errs);
    int rc = -1;
    exr_decode_pipeline_t dec = EXR_DECODE_PIPELINE_INITIALIZER;
    bool dec_init = false;
    exr_storage_t storage;
    exr_attr_box2i_t dw;
    const exr_attr_chlist_t *ch = nullptr;
    int32_t lines = 0;
    int have[4] = {0, 0, 0, 0};
    size_t W = 0, H = 0;
    if (exr_get_storage(f, 0, &storage) != EXR_ERR_SUCCESS) {
        fail(out, path, "no part to read", errs);
        goto done;
    }
    if (storage != EXR_STORAGE_SCANLINE) {
        fail(out, path, "a tiled or deep OpenEXR file; environment maps are read from scanline files only", errs);
        goto done;
    }
    if (exr_get_data_window(f, 0, &dw) != EXR_ERR_SUCCESS || exr_get_channels(f, 0, &ch) != EXR_ERR_SUCCESS ||
        exr_get_scanlines_per_chunk(f, 0, &lines) != EXR_ERR_SUCCESS || lines < 1) {
        fail(out, path, "bad header", errs);
        goto done;
    }
    {
        const int64_t w = (int64_t)dw.max.x - dw.min.x + 1, h = (int64_t)dw.max.y - dw.min.y + 1;
        if (w < 1 || h < 1 || w > max_dim || h > max_dim || (uint64_t)w * (uint64_t)h > max_pixels) {
            char what[160];
            std::snprintf(what, sizeof what, "data window %lldx%lld is outside 1..%d per side or beyond %zu pixels",
                          (long long)w, (long long)h, max_dim, max_pixels);
            fail(out, path, what, errs);
            goto done;
        }
        W = (size_t)w;
        H = (size_t)h;
    }
    for (int c = 0; c < ch->num_channels; c++) {
        const int s = slot_of(ch->entries[c].name.str);
        if (s < 0) continue;
        if (ch->entries[c].x_sampling != 1 || ch->entries[c].y_sampling != 1) {
            fail(out, path, "a subsampled colour channel (environment maps need 1x1 sampling)", errs);
            goto done;
        }
        have[s] = 1;
    }
    if (!(have[0] && have[1] && have[2]) && !have[3]) {
        fail(out, path, "no R, G and B channels, nor a Y channel", errs);
        goto done;
    }
    out->rgb = static_cast<float *>(std::calloc(3 * W * H, sizeof(float)));
    if (!out->rgb) {
        fail(out, path, "out of memory", errs);
        goto done;
    }
    {
        const bool rgb = have[0] && have[1] && have[2];
        // 64 bits: a data window ending near INT32_MAX must not wrap the step
        for (int64_t y = dw.min.y; y <= dw.max.y; y += lines) {
            exr_chunk_info_t ci;
            if (exr_read_scanline_chunk_info(f, 0, (int)y, &ci) != EXR_ERR_SUCCESS) {
                fail(out, path, "a damaged or truncated chunk", errs);
                goto done;
            }
            // the rows it decodes into must be this chunk's rows of the image
            if (ci.type != EXR_STORAGE_SCANLINE || ci.start_y != y || ci.height < 1 || ci.height > lines ||
                (int64_t)ci.start_y + ci.height - 1 > dw.max.y || ci.width < 0 || (size_t)ci.width != W) {
                char what[200];
                std::snprintf(what, sizeof what,
                              "the chunk of row %lld is rows %d..%lld, %d wide, not rows of the %zux%zu data window",
                              (long long)y, ci.start_y, (long long)ci.start_y + ci.height - 1, ci.width, W, H);
                fail(out, path, what, errs);
                goto done;
            }
            exr_result_t r = dec_init ? exr_decoding_update(f, 0, &ci, &dec) : exr_decoding_initialize(f, 0, &ci, &dec);
            if (r != EXR_ERR_SUCCESS) {
                fail(out, path, "a chunk that cannot be decoded", errs);
                goto done;
            }
            const bool first = !dec_init;
            dec_init = true;
            const size_t row0 = (size_t)(ci.start_y - dw.min.y);
            for (int c = 0; c < dec.channel_count; c++) {
                exr_coding_channel_info_t &cc = dec.channels[c];
                const int s = slot_of(cc.channel_name);
                // Y only for a grey file; the three grey copies are made below
                if (s < 0 || (s == 3 && rgb)) {
                    cc.decode_to_ptr = nullptr;
                    continue;
                }
                cc.user_bytes_per_element = 4;
                cc.user_data_type = EXR_PIXEL_FLOAT;
                cc.user_pixel_stride = 12;
                cc.user_line_stride = (int32_t)(12 * W);
                cc.decode_to_ptr = reinterpret_cast<uint8_t *>(out->rgb + 3 * row0 * W + (s == 3 ? 0 : s));
            }
            if (first && exr_decoding_choose_default_routines(f, 0, &dec) != EXR_ERR_SUCCESS) {
                fail(out, path, "no decoder for its channels", errs);
                goto done;
            }
            if (exr_decoding_run(f, 0, &dec) != EXR_ERR_SUCCESS) {
                fail(out, path, "a damaged or truncated chunk", errs);
                goto done;
            }
        }
        if (!rgb)
            for (size_t i = 0; i < W * H; i++) out->rgb[3 * i + 1] = out->rgb[3 * i + 2] = out->rgb[3 * i];
    }
    {
        exr_compression_t comp;
        if (exr_get_compression(f, 0, &comp) == EXR_ERR_SUCCESS)
            out->lossy = comp == EXR_COMPRESSION_B44 || comp == EXR_COMPRESSION_B44A ||
                         comp == EXR_COMPRESSION_DWAA || comp == EXR_COMPRESSION_DWAB;
    }
    out->width = (int)W;
    out->height = (int)H;
    rc = 0;
done:
    if (dec_init) exr_decoding_destroy(f, &dec);
    exr_finish(&f);
    return rc;
}
