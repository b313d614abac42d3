/* Inputs of the header-based volume targets (MetaImage, NRRD), which can
 * name a separate data file (not a public API).
 *
 * An input is parsed twice: whole, with no directory (detached data is then
 * an error), and split at the first FUZZ_DATA_MARKER line: the part before
 * is the header, parsed with a scratch directory in which the part after is
 * the file "data.raw" (empty when there is no marker), so that the fuzzer
 * mutates detached data files as well. Seeds name "data.raw". */
#ifndef VPT_FUZZ_VOLUME_SPLIT_H
#define VPT_FUZZ_VOLUME_SPLIT_H

#include "fuzz/fuzz_volume_check.h"

#define FUZZ_DATA_MARKER "\n--data.raw--\n"

typedef int (*FuzzVolumeParse)(const char *name, const char *dir, const unsigned char *buf, size_t size,
                               size_t max_bytes, VptVolume *out);

static inline void fuzz_volume_split_run(FuzzVolumeParse parse, const char *name, const uint8_t *data, size_t size,
                                         const char *what)
{
    VptVolume v;
    vpt_error_clear();
    int rc = parse(name, NULL, data, size, FUZZ_VOLUME_MAX_BYTES, &v);
    fuzz_volume_check(rc, &v, FUZZ_VOLUME_MAX_BYTES, what);

    size_t mlen = sizeof FUZZ_DATA_MARKER - 1, hsize = size;
    const uint8_t *rest = NULL;
    for (size_t i = 0; i + mlen <= size; i++)
        if (data[i] == '\n' && memcmp(data + i, FUZZ_DATA_MARKER, mlen) == 0) {
            hsize = i + 1; /* the header keeps its final newline */
            rest = data + i + mlen;
            break;
        }
    const char *dir = FUZZ_TMPDIR();
    char path[1024];
    fuzz_write_file(dir, "data.raw", rest, rest ? size - (size_t)(rest - data) : 0, path, sizeof path);
    vpt_error_clear();
    rc = parse(name, dir, data, hsize, 0, &v);
    fuzz_volume_check(rc, &v, VPT_VOLUME_DEFAULT_MAX_BYTES, what);
}

#endif
