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
 * exact size, and stream them (inflating them into exactly the expected
 * size) into the float grid with vptv_read_voxels (volume_stream.c).
 * Messages start with the file's name. */
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
 * messages), dir (resolves detached data files; NULL in memory), the bytes,
 * the load options (max_bytes and the admit hook; NULL: none). */
typedef int (*VptvParseFn)(const char *name, const char *dir, const unsigned char *buf, size_t size,
                           const VptVolumeLoadOptions *opt, VptVolume *out);

/* The loader of such a format: reads the file at path whole (at most the
 * allowed size plus deflate's worst case and a header) and parses it with
 * `parse`, resolving detached data against the file's directory; the
 * volume's sha256 is the file's. For formats that cannot stream (a sparse
 * tree is read whole); the others use vptv_load_streamed (below). */
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
 * max_bytes, and that the float grid fits in this machine's physical memory
 * (vptv_physical_memory; the data is streamed into it, never held whole);
 * fills *shape. ndims is 2 (nz = 1) or 3. */
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

/* Inflates src into exactly `expected` bytes at dst, for data held in
 * memory (a NanoVDB grid); the streamed formats inflate in vptv_read_voxels.
 * window_bits as for zlib's inflateInit2: 15 (zlib), 16 + 15 (gzip), 32 + 15
 * (either). A stream that ends early, holds more data, is corrupt or is
 * followed by anything but further gzip members is an error naming `name`. */
int vptv_inflate(const char *name, const unsigned char *src, size_t srclen, int window_bits, unsigned char *dst,
                 size_t expected);

/* ---------- inputs and their voxel data (volume_stream.c) ----------
 *
 * A format reader parses its header from bytes in memory and then streams
 * its voxel data, wherever it lies, into the float grid: the data is never
 * held twice. Data comes from a VptvInput (the file named, or the buffer of
 * the in-memory parsers the fuzz targets call) or from a data file the
 * header names, through a VptvRange; vptv_read_voxels reads it in chunks
 * on one thread (inflating zlib/gzip data there) while the others convert
 * the previous chunk, and files are hashed (SHA-256) as they are read, for
 * the provenance result rows carry. */

/* A regular file read front to back through a buffer; every byte read,
 * skipped ones included, goes through SHA-256. Reads never go backwards. */
typedef struct VptvFile VptvFile;

/* Opens path (a regular file); `name` starts its messages. */
int vptv_file_open(const char *name, const char *path, VptvFile **out);
uint64_t vptv_file_size(const VptvFile *f);
/* The first n bytes (n <= size), read apart from the stream: the stream
 * still starts at 0. */
int vptv_file_head(VptvFile *f, unsigned char *buf, size_t n);
/* Up to n bytes; fewer only at the end of the file. */
int vptv_file_read(VptvFile *f, void *buf, size_t n, size_t *got);
/* Reads the rest of the file and gives its SHA-256 as 64 hex digits. */
int vptv_file_finish(VptvFile *f, char hex[65]);
void vptv_file_close(VptvFile *f);

/* How much of a file vpt_volume_load reads for the header: headers must end
 * within it (real ones are a few kB). */
#define VPTV_HEAD_MAX ((size_t)1 << 20)

/* What a format reader parses. */
typedef struct {
    const char *name;                /* starts every message */
    const char *dir;                 /* resolves data files a header names; NULL: none can be read */
    const unsigned char *buf;        /* the input's first `len` bytes (all of them for memory input) */
    size_t len;
    uint64_t size;                   /* the whole input */
    VptvFile *file;                  /* the file behind buf; NULL for memory input */
    size_t max_bytes;                /* 0: the default */
    const VptVolumeLoadOptions *opt; /* the admit hook; NULL: none */
    VptvFile *data_file;             /* a data file the header named, once opened */
    char data_path[4096];
} VptvInput;

/* A memory input (the in-memory parsers'). */
void vptv_input_memory(VptvInput *in, const char *name, const char *dir, const unsigned char *buf, size_t size,
                       size_t max_bytes);
/* After a header parse that ended at data_off: a file input whose header
 * runs past the bytes read for it is an error. */
int vptv_input_header_end(const VptvInput *in, size_t data_off);
/* On success: the SHA-256 of the input file and of its data file into out
 * (both read to their ends); then, either way, closes the data file. */
int vptv_input_finish(VptvInput *in, int ok, VptVolume *out);

/* Bytes [pos, end) of memory or of a file, read in order. */
typedef struct {
    const unsigned char *mem; /* memory input */
    VptvFile *file;           /* or a file (positioned at or before pos) */
    uint64_t pos, end;
} VptvRange;

/* The input from offset off to its end. */
void vptv_input_range(VptvInput *in, uint64_t off, VptvRange *r);
/* Opens the data file at path (closed and hashed by vptv_input_finish) and
 * gives all of it; the message names the header (`in->name`). */
int vptv_input_data_file(VptvInput *in, const char *path, VptvRange *r);
uint64_t vptv_range_left(const VptvRange *r);
/* Skips n bytes (n <= left). */
int vptv_range_skip(VptvRange *r, uint64_t n);
/* Skips `lines` lines ('\n'-terminated); fails naming `where` when the
 * range ends first. */
int vptv_range_skip_lines(VptvRange *r, const char *where, int64_t lines);

/* How vptv_read_voxels finds the voxels in a range. */
typedef struct {
    int window_bits;     /* 0: raw bytes (the range holds exactly shape->nbytes);
                            else inflated as by zlib's inflateInit2: 15 zlib,
                            16 + 15 gzip, 32 + 15 either */
    uint64_t skip;       /* inflated bytes to drop before the voxels (NRRD byte skip) */
    int big_endian;
    float scale;         /* each value times this (0 or 1: as stored) */
} VptvEncoding;

/* Reads the voxels of `shape` and type t from r into a new float grid in
 * out (spacing 1, origin 0, no bbox; zeroed on failure). Before allocating
 * it asks in->opt's admit hook. Rejects NaN, infinities and doubles beyond
 * the float range with the voxel's index. Compressed data must inflate to
 * exactly skip + shape->nbytes bytes: a stream that ends early, holds more
 * data, is corrupt or is followed by anything but further gzip members is
 * an error naming `where`. */
int vptv_read_voxels(VptvInput *in, const char *where, VptvRange *r, const VptvShape *shape, VptScalarType t,
                     const VptvEncoding *enc, VptVolume *out);
/* Uncompressed data of `avail` bytes must be the shape's nbytes exactly:
 * -1 with a message naming `where` (truncated, or the wrong size). */
int vptv_check_raw_size(const char *where, uint64_t avail, size_t nbytes);
/* vptv_read_voxels, then the spacing and origin of the first nd axes from
 * a header's sp[] and org[] (the detached-header formats'). */
int vptv_read_voxels_placed(VptvInput *in, const char *where, VptvRange *r, const VptvShape *shape, VptScalarType t,
                            const VptvEncoding *enc, const double *sp, const double *org, int nd, VptVolume *out);

/* ---------- the format readers ---------- */

/* Each reads one format from an input (volume_mitsuba.c, volume_metaimage.c,
 * volume_nrrd.c): the header from in->buf, the voxels streamed. */
typedef int (*VptvReader)(VptvInput *in, VptVolume *out);
int vptv_read_mitsuba(VptvInput *in, VptVolume *out);
int vptv_read_metaimage(VptvInput *in, VptVolume *out);
int vptv_read_nrrd(VptvInput *in, VptVolume *out);

/* The .nvdb parser (volume_nanovdb.c; vpt_volume_parse_nanovdb with the
 * load options): asks opt's admit hook once the density's box is known,
 * before densifying. The .vdb loader (volume_vdb.c) hands it the NanoVDB
 * bytes the OpenVDB shim made. opt NULL: the default cap, no hook. */
int vptv_parse_nanovdb(const char *name, const unsigned char *buf, size_t size, const VptVolumeLoadOptions *opt,
                       VptVolume *out);

/* The in-memory parsers (volume.h): `read` over buf as a memory input. */
int vptv_parse_memory(VptvReader read, const char *name, const char *dir, const unsigned char *buf, size_t size,
                      size_t max_bytes, VptVolume *out);

/* The loader of a streamed format (its VptVolumeFormat's load): opens the
 * file, hands `read` its first VPTV_HEAD_MAX bytes (head NULL for the
 * headerless raw reader: head_bytes 0) and lets it stream the rest; the
 * volume's sha256 (and data_sha256) are the files'. */
int vptv_load_streamed(const char *path, const VptVolumeLoadOptions *opt, VptvReader read, size_t head_bytes,
                       VptVolume *out);

/* For tests: chunks of n bytes (rounded up to 8; 0: the default, 16 MiB),
 * so that small files go through the reading thread and chunk boundaries
 * land anywhere. Not thread-safe: set it before loading. */
void vptv_set_chunk_bytes(size_t n);

/* Resolves a data file named in a header: absolute, or relative to dir.
 * dir NULL (in-memory parsing) is an error. */
int vptv_data_path(const char *name, const char *dir, const char *file, char *out, size_t outsz);
/* Opens the data file a detached header names (`file`, the value of its
 * `field`, e.g. "ElementDataFile =") as vptv_input_data_file does, and
 * sets `where` to "<header>: data file <path>" for the messages about the
 * data. A LIST of files (`list_what` says what the format means by one)
 * and file-name patterns (a '%') are refused with a message. */
int vptv_input_named_file(VptvInput *in, const char *field, const char *list_what, const char *file, VptvRange *r,
                          char *where, size_t wsize);

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

/* Case-insensitive equality. */
int vptv_ieq(const char *a, const char *b);

#endif
