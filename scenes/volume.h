/* Volume files: loading, saving and reshaping scalar 3D grids.
 *
 * A VptVolume holds the voxel values of a file converted to float, x fastest
 * (index = x + nx * (y + ny * z)), plus the geometry the file states. It is
 * raw data: the scene layer (scene.h) turns it into densities and albedos.
 * Loaders validate everything before allocating: each dimension must lie in
 * [1, 65536], products must not overflow, both the file's data size and the
 * float grid's size must be at most `max_bytes` (VPT_VOLUME_DEFAULT_MAX_BYTES
 * unless set), compressed data must inflate to exactly the expected size, the
 * data must be complete with nothing left over, and NaN or infinite values
 * are rejected with the voxel's index. Error messages start with the file's
 * path and say what is wrong.
 * Loaders never hold a file's data twice: the header is parsed from the
 * file's first bytes, and the voxel data (raw or zlib/gzip, in the file or
 * in a data file the header names) is streamed in chunks into the float
 * grid, converted on every core (volume_stream.c); the peak is the float
 * grid plus a few chunk buffers. .nvdb and .vdb files are the exception: a
 * sparse tree is read whole (OpenVDB reads a .vdb itself) and densified
 * into the grid, and into the albedo grid when the file has one.
 * Lifecycle: a loader fills *out on success (caller calls vpt_volume_free),
 * and leaves *out zeroed on failure. Implementation: volume.c (the table of
 * formats and the dispatch, raw, reshaping), one file per format
 * (volume_mitsuba.c, volume_metaimage.c, volume_nrrd.c, volume_dicom.c,
 * volume_nanovdb.c, volume_vdb.c), which register through volume_format.h
 * and share its helpers (volume_format.c) and the streaming of the data
 * (volume_stream.c); the formats' supported subsets are described at the
 * top of each. */
#ifndef VPT_SCENES_VOLUME_H
#define VPT_SCENES_VOLUME_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef enum {
    VPT_SCALAR_U8,
    VPT_SCALAR_I8,
    VPT_SCALAR_U16,
    VPT_SCALAR_I16,
    VPT_SCALAR_U32,
    VPT_SCALAR_I32,
    VPT_SCALAR_F32,
    VPT_SCALAR_F64
} VptScalarType;

typedef struct {
    int nx, ny, nz;
    float *data;             /* owned; nx * ny * nz values */
    VptScalarType stored;    /* the type in the file */
    float spacing[3];        /* voxel size; 1 when the file has none; for .vol
                                the bbox extent / n */
    float origin[3];         /* centre of voxel 0 (MetaImage Offset, NRRD
                                space origin); 0 when the file has none */
    int has_bbox;            /* Mitsuba .vol states its world box (only .vol
                                sets it) */
    float bbox_min[3], bbox_max[3];
    float *albedo;           /* owned; NULL, or the file's per-voxel albedo: 3
                                floats (r, g, b, linear, in [0, 1]) a voxel,
                                interleaved, same order as data (.nvdb and .vdb:
                                a Vec3f grid named "albedo") */
    /* Provenance, set by vpt_volume_load (hashed while the data streams in,
     * so it costs no second read): the SHA-256 of the file named, and of a
     * separate data file its header names; "" when not read from a file
     * (in-memory parsers, DICOM through GDCM). */
    char sha256[65];
    char data_sha256[65];
    /* The values' min and max, found while the loader converted them (so
     * that a multi-GB grid needs no pass of its own for them); has_range 0
     * when unknown (DICOM, after resampling, a grid edited by hand). */
    int has_range;
    float range_min, range_max;
} VptVolume;

#define VPT_VOLUME_DEFAULT_MAX_BYTES ((size_t)8 << 30)

typedef struct {
    /* For headerless raw files (and overriding nothing else): */
    int dims[3];             /* --dims X,Y,Z */
    int has_dims;
    VptScalarType type;      /* --type u8|i8|u16|i16|u32|i32|f32|f64 */
    int has_type;
    int big_endian;          /* raw files only; default little endian */
    size_t max_bytes;        /* 0: VPT_VOLUME_DEFAULT_MAX_BYTES */
    /* Called once a header has given the grid's shape, before any voxel is
     * read or the grid allocated: non-zero refuses the volume (the hook sets
     * the message). How a caller refuses a volume that will not fit in
     * memory without loading it first. albedo: non-zero when the file has an
     * albedo grid, which loads beside the values (VptVolume.albedo, 12 bytes
     * a voxel). NULL: none. DICOM series (read whole by GDCM) are not asked;
     * .nvdb and .vdb files are asked once the file (read whole: a sparse tree
     * does not stream) has given the box, before it is densified. */
    int (*admit)(void *ctx, const char *name, const int dims[3], VptScalarType stored, int albedo);
    void *admit_ctx;
} VptVolumeLoadOptions;

/* Loads by extension (case-insensitive): .vol (Mitsuba VOL v3: float32, or
 * uint8 read as v / 255 as Mitsuba defines it), .mha/.mhd (MetaImage: raw,
 * CompressedData zlib, ElementDataFile LOCAL or a separate file), .nrrd/.nhdr
 * (raw or gzip encoding, attached or detached data), .nvdb (NanoVDB: a float
 * grid, densified), .vdb (OpenVDB: converted to NanoVDB, then as .nvdb),
 * .dcm/.dicom or a folder (DICOM); any other extension is
 * headerless raw data, which needs opt->has_dims and opt->has_type and must
 * be exactly that size. dims/type/big_endian apply to raw files only; other
 * formats ignore them. opt may be NULL (no raw options, default max_bytes).
 * 2D inputs load as nz = 1. */
int vpt_volume_load(const char *path, const VptVolumeLoadOptions *opt, VptVolume *out);

/* Parsers over an in-memory header+data buffer, for tests and fuzzers; any
 * bytes are safe input. `name` starts every message; `dir` resolves detached
 * data files (NULL: detached data is an error); max_bytes 0 is the default. */
int vpt_volume_parse_mitsuba(const char *name, const unsigned char *buf, size_t size, size_t max_bytes, VptVolume *out);
int vpt_volume_parse_metaimage(const char *name, const char *dir, const unsigned char *buf, size_t size, size_t max_bytes, VptVolume *out);
int vpt_volume_parse_nrrd(const char *name, const char *dir, const unsigned char *buf, size_t size, size_t max_bytes, VptVolume *out);
/* NanoVDB .nvdb (volume_nanovdb.c): the float grid "density" (else the first
 * float grid), densified over its active voxels' box. */
int vpt_volume_parse_nanovdb(const char *name, const unsigned char *buf, size_t size, size_t max_bytes, VptVolume *out);

/* Writes a Mitsuba VOL v3 float32 1-channel file atomically; the bbox is the
 * volume's own or, without one, [0, n * spacing]. */
int vpt_volume_save_mitsuba(const char *path, const VptVolume *v);

/* A Mitsuba VOL grid with 1 or 3 channels, as Mitsuba stores it: values
 * interleaved per voxel (index = c + channels * (x + nx * (y + ny * z))),
 * and the file's bounding box. The scene layer uses it for albedo grids
 * (3 channels) and for the grids it exports; VptVolume above stays the
 * scalar view every other format loads into. The parser accepts float32
 * (encoding 1) and uint8 (3, read as v / 255) data and the same limits as
 * vpt_volume_parse_mitsuba; the writer writes float32. */
typedef struct {
    int nx, ny, nz, channels;
    float *data;             /* owned; nx * ny * nz * channels values */
    float bbox_min[3], bbox_max[3];
} VptVolGrid;

int vpt_vol_grid_parse(const char *name, const unsigned char *buf, size_t size, size_t max_bytes, VptVolGrid *out);
/* Reads and parses a .vol file (max_bytes 0: the default cap). */
int vpt_vol_grid_load(const char *path, size_t max_bytes, VptVolGrid *out);
/* Writes atomically (base/file.h): no file appears under path on failure. */
int vpt_vol_grid_save(const char *path, const VptVolGrid *g);
/* Writes the file's bytes to fp (for callers that commit several files
 * together); path names it in messages. */
int vpt_vol_grid_write(FILE *fp, const char *path, const VptVolGrid *g);
void vpt_vol_grid_free(VptVolGrid *g);

/* The reshaping functions resample the albedo, when there is one, as the
 * values.
 *
 * Halves each dimension greater than 1 (rounding down: an odd size drops its
 * last slice) by 2x2x2 box averaging (vpt_volume_downsample with 2); a
 * dimension of 1 stays 1 and averages over 2x2 or 2. Spacing doubles and origin moves to the new voxel 0's centre
 * along halved axes; a bbox shrinks by a dropped slice. On failure (out of
 * memory) v is unchanged. */
int vpt_volume_downsample2(VptVolume *v);

/* Any integer factor: averages factor^3 blocks (an axis shorter than the
 * factor averages over all of it into one voxel); a partial last block is
 * dropped, as vpt_volume_downsample2 drops an odd slice. factor 1: nothing.
 * Spacing grows by the factor, origin moves to the new voxel 0's centre. */
int vpt_volume_downsample(VptVolume *v, int factor);

/* Trilinear upsampling by an integer factor along every axis longer than one
 * voxel, with texel centres at (j + 0.5) / factor - 0.5 source voxels
 * (clamped), CUDA's normalized-coordinate convention: the upsampled grid,
 * filtered, shows the same function as the source. Spacing shrinks by the
 * factor; the box is unchanged. On failure v is unchanged. */
int vpt_volume_upsample(VptVolume *v, int factor);

/* min and max of the values (NaN-free volumes only: loaders reject NaN):
 * the loader's when it has them, else one pass. */
void vpt_volume_range(const VptVolume *v, float *vmin, float *vmax);

void vpt_volume_free(VptVolume *v);

/* "u8" -> VPT_SCALAR_U8 etc.; also accepts MetaImage (MET_UCHAR) and NRRD
 * ("unsigned char", "uint8", "short", ...) spellings. */
int vpt_scalar_type_parse(const char *s, VptScalarType *out);
const char *vpt_scalar_type_name(VptScalarType t);
size_t vpt_scalar_type_size(VptScalarType t);

#endif
