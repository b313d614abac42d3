/* The interface between vpt_volume_load (volume.c) and the volume formats,
 * one file each (volume_mitsuba.c, volume_metaimage.c, volume_nrrd.c,
 * volume_dicom.c, ...); not a public API.
 *
 * Registration: a format defines one VptVolumeFormat (its name, extensions
 * and loader) and volume.c lists it in its table of formats. volume.c only
 * calls the formats; the formats call only the helpers below
 * (volume_format.c), never volume.c, so data flows one way: adding a format
 * is one new file and one table row.
 *
 * Every reader follows the same order, so that no bad header can cause an
 * oversized allocation: parse the header, check the shape with vptv_shape
 * (before any data is read or allocated), locate the data bytes, check their
 * exact size (or inflate them into exactly the expected size), and convert
 * with vptv_convert. Messages start with the file's name. */
#ifndef VPT_SCENES_VOLUME_FORMAT_H
#define VPT_SCENES_VOLUME_FORMAT_H

#include "scenes/volume.h"

#include <stddef.h>
#include <stdint.h>

#define VPTV_MAX_DIM 65536
/* The largest position (an origin, a translation) a header may state, in
 * magnitude: the bound the text formats' parsers put on numbers, far inside
 * the float range a VptVolume stores. */
#define VPTV_MAX_COORD 1e30

/* One volume format. vpt_volume_load picks the first format whose
 * extensions name the path's (case-insensitive), else the first whose
 * `claims` accepts it, else headerless raw data. `load` fills *out (the
 * caller frees it with vpt_volume_free) or fails with a message naming the
 * path and leaves *out zeroed. */
typedef struct {
    const char *name;        /* "MetaImage": for messages and listings */
    const char *extensions;  /* "mha mhd": blank-separated, without dots */
    int (*claims)(const char *path, const VptVolumeLoadOptions *opt); /* NULL: extensions only */
    int (*load)(const char *path, const VptVolumeLoadOptions *opt, VptVolume *out);
} VptVolumeFormat;

/* A format whose files are read whole and parsed in memory: name (for
 * messages), dir (resolves detached data files; NULL in memory), the bytes. */
typedef int (*VptvParseFn)(const char *name, const char *dir, const unsigned char *buf, size_t size,
                           size_t max_bytes, VptVolume *out);

/* The loader of such a format: reads the file at path whole (at most the
 * allowed size plus deflate's worst case and a header) and parses it with
 * `parse`, resolving detached data against the file's directory. */
int vptv_load_whole(const char *path, const VptVolumeLoadOptions *opt, VptvParseFn parse, VptVolume *out);

/* The checked shape of a volume's data. */
typedef struct {
    int dims[3];
    size_t count;       /* nx * ny * nz */
    size_t nbytes;      /* count * the stored type's size */
} VptvShape;

/* max_bytes, with 0 meaning the default. */
size_t vptv_max_bytes(size_t max_bytes);

/* The machine's physical memory in bytes (sysconf), or SIZE_MAX when it
 * cannot be told. A volume that needs more can never load here: the
 * loaders refuse it up front with a message, instead of failing (or
 * swapping) part way through. */
size_t vptv_physical_memory(void);

/* Checks dims (each in [1, 65536], `what` names the header key), the products
 * for overflow, that both the stored data and the float grid fit in
 * max_bytes, and that the two together fit in this machine's physical memory
 * (vptv_physical_memory); fills *shape. ndims is 2 (nz = 1) or 3. */
int vptv_shape(const char *name, const char *what, const int64_t *dims, int ndims, VptScalarType t,
               size_t max_bytes, VptvShape *shape);

/* Checks the voxel sizes a header states (nd of them, in double) as the
 * floats a VptVolume stores: each must stay positive and finite, and so must
 * the grid's extent along that axis (size * spacing). `what` names the
 * header key. */
int vptv_check_spacing(const char *name, const char *what, const double *sp, const VptvShape *shape, int nd);

/* Compressed data of srclen bytes that is to inflate into `expected` bytes:
 * fails (before the output buffer is allocated) when deflate could not
 * produce that much from so little: it compresses at most 1032:1. `kind`
 * names the encoding in the message. */
int vptv_check_inflatable(const char *name, const char *kind, size_t srclen, size_t expected);

/* Converts shape->nbytes bytes of `t` (little or big endian) to floats,
 * rejecting NaN, infinities and doubles beyond the float range with the
 * voxel's index. Fills out's grid fields (spacing 1, origin 0, no bbox);
 * leaves *out zeroed on failure. */
int vptv_convert(const char *name, const unsigned char *src, const VptvShape *shape, VptScalarType t,
                 int big_endian, VptVolume *out);

/* Inflates src into exactly `expected` bytes at dst. window_bits as for
 * zlib's inflateInit2: 15 (zlib), 16 + 15 (gzip), 32 + 15 (either).
 * A stream that ends early, holds more data, is corrupt or is followed by
 * anything but further gzip members is an error naming `name`. */
int vptv_inflate(const char *name, const unsigned char *src, size_t srclen, int window_bits, unsigned char *dst,
                 size_t expected);

/* Resolves a data file named in a header: absolute, or relative to dir.
 * dir NULL (in-memory parsing) is an error. */
int vptv_data_path(const char *name, const char *dir, const char *file, char *out, size_t outsz);

/* Reads a detached data file whole; it must be a regular file of at most
 * cap bytes. The message names the header (`name`) and the data file. */
int vptv_read_data(const char *name, const char *path, size_t cap, unsigned char **data, size_t *size);

/* Reads len bytes at offset off of a regular file (caller frees *data). */
int vptv_read_range(const char *name, const char *path, uint64_t off, size_t len, unsigned char **data);

/* a + b, saturating at SIZE_MAX. */
size_t vptv_sat_add(size_t a, size_t b);

/* Header text helpers. Line-oriented readers copy one line at a time into a
 * fixed buffer (NUL-terminated, trailing CR/space trimmed); a line that is
 * too long or holds a NUL byte is an error. Returns the offset just past the
 * line's '\n' (or size at the end), or (size_t)-1 after vpt_fail. */
#define VPTV_LINE_MAX 4096
size_t vptv_next_line(const char *name, const unsigned char *buf, size_t size, size_t pos, int lineno, char *line);

/* Splits s in place at blanks into at most max tokens; returns the count, or
 * -1 when there are more than max. */
int vptv_split(char *s, char **tok, int max);

/* Copies s (length n) with non-printable bytes as '?' and at most 60
 * characters, for quoting file content in messages. */
const char *vptv_quote(const char *s, char out[64]);

/* A shim: a shared library of this project wrapping a C++ library that the
 * programs must not link (GDCM, OpenVDB: Debian ships them as shared
 * libraries only, and the GPU machines have neither), loaded with dlopen the
 * first time a format needs it, so that only that format fails where the
 * library is missing. A format defines one VptvShimLib (static, its first
 * five fields set, the rest zero) and calls vptv_shim_load before each use:
 * the first call looks for the library `file` at $env when that is set, else
 * beside the running program, else in ../lib/vptune/ relative to it (where
 * `make install` puts it), checks its version (the function abi_symbol, int
 * (void), must return abi: a stale install is refused) and looks up its
 * functions into fn[]; later calls return the first one's answer. 0 when
 * every function is there, else -1 with the reasons (dlerror's text
 * included) in error. Thread-safe. */
#define VPTV_SHIM_MAX_FNS 4
typedef struct {
    const char *file, *env, *abi_symbol;
    int abi;
    const char *symbols[VPTV_SHIM_MAX_FNS + 1]; /* NULL-terminated */
    void (*fn[VPTV_SHIM_MAX_FNS])(void);        /* cast to their types by the format */
    int state;                                  /* 0 not tried, 1 loaded, -1 failed */
    char path[4096];                            /* where it was found */
    char error[8192];                           /* why not */
} VptvShimLib;
int vptv_shim_load(VptvShimLib *s);

/* Case-insensitive equality. */
int vptv_ieq(const char *a, const char *b);

#endif
