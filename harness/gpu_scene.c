#include "harness/gpu_scene.h"

#include "base/error.h"
#include "base/threads.h"
#include "codegen/config.h"
#include "physics/distance_map.h"
#include "physics/majorant_grid.h"
#include "physics/sparse_grid.h"
#include "scenes/env_map.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int upload_3d(CUarray arr, const void *host, size_t row_bytes, int ny, int nz)
{
    CUDA_MEMCPY3D cp;
    memset(&cp, 0, sizeof cp);
    cp.srcMemoryType = CU_MEMORYTYPE_HOST;
    cp.srcHost = host;
    cp.srcPitch = row_bytes;
    cp.srcHeight = (size_t)ny;
    cp.dstMemoryType = CU_MEMORYTYPE_ARRAY;
    cp.dstArray = arr;
    cp.WidthInBytes = row_bytes;
    cp.Height = (size_t)ny;
    cp.Depth = (size_t)nz;
    return VPT_CU_TRY(cuMemcpy3D, &cp);
}

/* A post-classified scene's albedo table (scenes/scene.h) as a texture of
 * entries x 1 x 1 float4 texels, each RGB v / 255 (as the CPU reference
 * reads them) and alpha 1, read at texel centres without filtering or
 * normalized coordinates (kernels.cu.in, vpt_medium_albedo). */
static int make_table_texture(const VptScene *s, CUarray *arr, CUtexObject *tex)
{
    float entries[4 * 256];
    const int n = s->albedo_entries;
    if (n < 1 || n > 256) return vpt_fail("scene '%s': albedo table of %d entries (1 to 256)", s->name, n);
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < 3; k++) entries[4 * i + k] = (float)s->albedo_table[i][k] / 255.0f;
        entries[4 * i + 3] = 1.0f;
    }
    CUDA_ARRAY3D_DESCRIPTOR d;
    memset(&d, 0, sizeof d);
    d.Width = (size_t)n;
    d.Height = d.Depth = 1;
    d.Format = CU_AD_FORMAT_FLOAT;
    d.NumChannels = 4;
    if (VPT_CU_TRY(cuArray3DCreate, arr, &d) || upload_3d(*arr, entries, (size_t)n * 4 * sizeof(float), 1, 1))
        return -1;
    CUDA_RESOURCE_DESC res;
    memset(&res, 0, sizeof res);
    res.resType = CU_RESOURCE_TYPE_ARRAY;
    res.res.array.hArray = *arr;
    CUDA_TEXTURE_DESC td;
    memset(&td, 0, sizeof td);
    td.addressMode[0] = td.addressMode[1] = td.addressMode[2] = CU_TR_ADDRESS_MODE_CLAMP;
    td.filterMode = CU_TR_FILTER_MODE_POINT;
    return VPT_CU_TRY(cuTexObjectCreate, tex, &res, &td, NULL);
}

static int make_texture(CUarray arr, CUtexObject *tex)
{
    CUDA_RESOURCE_DESC res;
    memset(&res, 0, sizeof res);
    res.resType = CU_RESOURCE_TYPE_ARRAY;
    res.res.array.hArray = arr;
    CUDA_TEXTURE_DESC td;
    memset(&td, 0, sizeof td);
    td.addressMode[0] = td.addressMode[1] = td.addressMode[2] = CU_TR_ADDRESS_MODE_CLAMP;
    td.filterMode = CU_TR_FILTER_MODE_LINEAR;
    td.flags = CU_TRSF_NORMALIZED_COORDINATES; /* unorm8 reads as float in [0,1] */
    return VPT_CU_TRY(cuTexObjectCreate, tex, &res, &td, NULL);
}

void vpt_gpu_estimators_add(VptGpuEstimators *e, VptDensityFormat f, int majorant)
{
    const int cell = vpt_majorant_grid_cell(majorant);
    if ((unsigned)f >= VPT_DENSITY_FORMAT_COUNT) return;
    if (vpt_majorant_skips(majorant)) e->paired |= 1u << f;
    e->formats |= 1u << f;
    int k = 0;
    while (cell > 0 && (1 << k) < cell) k++;
    if (cell > 0 && k < VPT_GPU_GRID_LOG2_MAX) e->grids[f] |= 1u << k;
}

void vpt_gpu_estimators_all(VptGpuEstimators *e)
{
    const int *cells;
    const int n = vpt_majorant_cells(&cells); /* the majorants vptune has, 0 (global) among them */
    memset(e, 0, sizeof *e);
    for (int f = 0; f < VPT_DENSITY_FORMAT_COUNT; f++)
        for (int c = 0; c < n; c++) vpt_gpu_estimators_add(e, (VptDensityFormat)f, cells[c]);
}

/* The parts of vpt_gpu_scene_bytes: textures (f32 density, albedo, compact
 * formats, skip's two-channel ones) and majorant grids
 * (VPT_MAJORANT_CELL_FLOATS a cell, as make_grid uploads). */
static void scene_parts(int nx, int ny, int nz, const VptGpuEstimators *e, double *textures, double *compact,
                        double *grids)
{
    const double nvox = (double)nx * ny * nz;
    *textures = nvox * (sizeof(float) + (e && e->albedo_table ? 0 : 4));
    *compact = *grids = 0;
    for (int f = 0; e && f < VPT_DENSITY_FORMAT_COUNT; f++) {
        if (f != VPT_DENSITY_F32 && (e->formats >> f & 1)) *compact += nvox * (double)vpt_density_format_bytes((VptDensityFormat)f);
        if (e->paired >> f & 1) *compact += 2.0 * nvox * (double)vpt_density_format_bytes((VptDensityFormat)f);
        for (int k = 0; k < VPT_GPU_GRID_LOG2_MAX; k++)
            if (e->grids[f] >> k & 1) {
                const double c = (double)(1 << k);
                *grids += VPT_MAJORANT_CELL_FLOATS * sizeof(float) * ceil(nx / c) * ceil(ny / c) * ceil(nz / c);
            }
    }
}

double vpt_gpu_scene_bytes(int nx, int ny, int nz, const VptGpuEstimators *e)
{
    double t, c, g;
    scene_parts(nx, ny, nz, e, &t, &c, &g);
    return t + c + g;
}

/* CUDA arrays are padded and tiled, and a render allocates its buffers. */
static double with_margin(double need) { return need + need / 32 + 256.0 * 1048576.0; }

int vpt_gpu_scene_check_fits(const char *name, int nx, int ny, int nz, const VptGpuEstimators *e, size_t free_bytes,
                             size_t total_bytes)
{
    size_t nvox = (size_t)nx * (size_t)ny * (size_t)nz;
    if (nx <= 0 || ny <= 0 || nz <= 0 || nvox / (size_t)nx / (size_t)ny != (size_t)nz)
        return vpt_fail("scene '%s': grid %dx%dx%d is not a valid size", name, nx, ny, nz);
    double tex, compact, grids;
    scene_parts(nx, ny, nz, e, &tex, &compact, &grids);
    const double need = tex + compact + grids;
    if (with_margin(need) <= (double)free_bytes) return 0;
    const double MiB = 1048576.0;
    char parts[160] = "", fit[200] = "";
    if (compact > 0 || grids > 0)
        snprintf(parts, sizeof parts, " (f32 density and albedo %.0f MiB, compact density formats %.0f MiB, majorant "
                                      "grids %.0f MiB)",
                 tex / MiB, compact / MiB, grids / MiB);
    if (compact > 0 && with_margin(tex + grids) <= (double)free_bytes)
        snprintf(fit, sizeof fit, "; without the compact density formats (density=f16|u16|u8) it would need %.0f MiB",
                 (tex + grids) / MiB);
    for (int k = 2; k <= 64 && !fit[0]; k++) {
        const int a = nx >= k ? nx / k : 1, b = ny >= k ? ny / k : 1, c = nz >= k ? nz / k : 1;
        const double n2 = vpt_gpu_scene_bytes(a, b, c, e);
        if (with_margin(n2) <= (double)free_bytes)
            snprintf(fit, sizeof fit, "; downsampled by %d (--downsample %d: %dx%dx%d) it would need %.0f MiB", k, k, a,
                     b, c, n2 / MiB);
    }
    return vpt_fail("scene '%s' (%dx%dx%d voxels) needs about %.0f MiB of GPU memory%s, but only %.0f MiB of %.0f MiB "
                    "are free%s",
                    name, nx, ny, nz, need / MiB, parts, free_bytes / MiB, total_bytes / MiB, fit);
}

int vpt_gpu_memory_probe(int ordinal, size_t *free_bytes, size_t *total_bytes)
{
    int fds[2];
    if (VPT_SYS_TRY(pipe, fds)) return -1;
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return VPT_SYS_FAIL("fork()");
    }
    if (pid == 0) { /* the child: open the GPU, ask, report, leave */
        close(fds[0]);
        size_t m[2] = {0, 0};
        VptGpu g;
        if (vpt_gpu_open(ordinal, &g) == 0 && vpt_cu.cuMemGetInfo(&m[0], &m[1]) == CUDA_SUCCESS &&
            write(fds[1], m, sizeof m) == (ssize_t)sizeof m)
            _exit(0);
        _exit(1);
    }
    close(fds[1]);
    size_t m[2];
    ssize_t got;
    do got = read(fds[0], m, sizeof m);
    while (got < 0 && errno == EINTR);
    close(fds[0]);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
    if (got != (ssize_t)sizeof m) return vpt_fail("GPU %d: its free memory could not be read (no driver or no such GPU)", ordinal);
    *free_bytes = m[0];
    *total_bytes = m[1];
    return 0;
}

/* The mean of n densities, summed in fixed blocks on every core (a 1024^3
 * grid is a second of one core) and the blocks' sums in order: the same
 * value whatever the thread count. */
#define MEAN_BLOCK ((size_t)1 << 22)
typedef struct {
    const float *d;
    size_t n;
    double *sums;
} MeanJob;

static void mean_block(void *arg, size_t lo, size_t hi)
{
    MeanJob *j = arg;
    for (size_t b = lo; b < hi; b++) {
        double s = 0.0;
        const size_t end = (b + 1) * MEAN_BLOCK < j->n ? (b + 1) * MEAN_BLOCK : j->n;
        for (size_t i = b * MEAN_BLOCK; i < end; i++) s += j->d[i];
        j->sums[b] = s;
    }
}

static float mean_density(const float *d, size_t n)
{
    const size_t nb = (n + MEAN_BLOCK - 1) / MEAN_BLOCK;
    double sum = 0.0, *sums = malloc(nb * sizeof *sums);
    if (!sums) { /* no room for the blocks' sums: one pass */
        for (size_t i = 0; i < n; i++) sum += d[i];
        return (float)(sum / (double)n);
    }
    MeanJob j = {d, n, sums};
    vpt_parallel_items(nb, 0, mean_block, &j);
    for (size_t b = 0; b < nb; b++) sum += sums[b];
    free(sums);
    return (float)(sum / (double)n);
}

static int check_free(const VptGpuScene *g, size_t need, const char *what);

/* One host array into a new device allocation at *d. */
static int upload_array(CUdeviceptr *d, const void *host, size_t bytes)
{
    return VPT_CU_TRY(cuMemAlloc, d, bytes) || VPT_CU_TRY(cuMemcpyHtoD, *d, host, bytes);
}

/* The scene's environment map: its radiance and both sampling tables, once
 * per scene, their bytes counted in g. */
static int upload_env_map(VptGpuScene *g)
{
    const VptEnvMap *m = g->scene->env_map;
    const size_t W = (size_t)m->width, H = (size_t)m->height;
    const size_t rad = 3 * W * H * sizeof(float), rows = (H + 1) * sizeof(float), cols = H * (W + 1) * sizeof(float);
    if (check_free(g, rad + rows + cols, "the environment map") || upload_array(&g->env_radiance, m->radiance, rad) ||
        upload_array(&g->env_row_cdf, m->row_cdf, rows) || upload_array(&g->env_col_cdf, m->col_cdf, cols))
        return -1;
    g->bytes += rad + rows + cols;
    return 0;
}

int vpt_gpu_scene_create(const VptScene *s, VptGpuScene *out)
{
    memset(out, 0, sizeof *out);
    size_t nvox = (size_t)s->nx * s->ny * s->nz;
    size_t need = nvox * sizeof(float) + vpt_scene_albedo_bytes(s);
    size_t free_b = 0, total_b = 0;
    if (VPT_CU_TRY(cuMemGetInfo, &free_b, &total_b)) return -1;
    VptGpuEstimators own;
    memset(&own, 0, sizeof own);
    own.albedo_table = s->albedo_table != NULL;
    if (vpt_gpu_scene_check_fits(s->name, s->nx, s->ny, s->nz, &own, free_b, total_b)) return -1;
    CUDA_ARRAY3D_DESCRIPTOR d;
    memset(&d, 0, sizeof d);
    d.Width = (size_t)s->nx;
    d.Height = (size_t)s->ny;
    d.Depth = (size_t)s->nz;
    d.Format = CU_AD_FORMAT_FLOAT;
    d.NumChannels = 1;
    if (VPT_CU_TRY(cuArray3DCreate, &out->density_array, &d)) goto fail;
    if (upload_3d(out->density_array, s->density, (size_t)s->nx * sizeof(float), s->ny, s->nz)) goto fail;
    if (make_texture(out->density_array, &out->density_tex)) goto fail;
    if (s->albedo_table) {
        if (make_table_texture(s, &out->albedo_array, &out->albedo_tex)) goto fail;
    } else {
        d.Format = CU_AD_FORMAT_UNSIGNED_INT8;
        d.NumChannels = 4;
        if (VPT_CU_TRY(cuArray3DCreate, &out->albedo_array, &d)) goto fail;
        if (upload_3d(out->albedo_array, s->albedo, (size_t)s->nx * 4, s->ny, s->nz)) goto fail;
        if (make_texture(out->albedo_array, &out->albedo_tex)) goto fail;
    }
    out->bytes = need;
    out->scene = s;
    out->mean_density = mean_density(s->density, nvox);
    if (s->env_map && upload_env_map(out)) goto fail;
    return 0;
fail:
    vpt_error_prefix("uploading scene '%s'", s->name);
    vpt_gpu_scene_destroy(out);
    return -1;
}

/* Fails with a message when `need` more bytes would not fit. */
static int check_free(const VptGpuScene *g, size_t need, const char *what)
{
    size_t free_b = 0, total_b = 0;
    if (VPT_CU_TRY(cuMemGetInfo, &free_b, &total_b)) return -1;
    if (with_margin((double)need) > (double)free_b)
        return vpt_fail("scene '%s': %s needs about %.0f MiB of GPU memory, but only %.0f MiB of %.0f MiB are free "
                        "(check the estimators' needs before a run: vpt_gpu_scene_check_fits)",
                        g->scene->name, what, need / 1048576.0, free_b / 1048576.0, total_b / 1048576.0);
    return 0;
}

/* Texels of format f, `channels` a texel (x fastest), as a 3D array behind
 * a filtered texture object in *t (make_texture), their bytes counted in g.
 * -1 with a message naming `what`, *t left empty, on failure. */
static int upload_format_texture(VptGpuScene *g, VptDensityFormat f, int channels, const void *texels,
                                 const char *what, VptGpuDensityTexture *t)
{
    const VptScene *s = g->scene;
    const size_t row = (size_t)s->nx * (size_t)channels * vpt_density_format_bytes(f);
    CUDA_ARRAY3D_DESCRIPTOR d;
    memset(&d, 0, sizeof d);
    d.Width = (size_t)s->nx;
    d.Height = (size_t)s->ny;
    d.Depth = (size_t)s->nz;
    d.Format = f == VPT_DENSITY_F32   ? CU_AD_FORMAT_FLOAT
               : f == VPT_DENSITY_F16 ? CU_AD_FORMAT_HALF
               : f == VPT_DENSITY_U16 ? CU_AD_FORMAT_UNSIGNED_INT16
                                      : CU_AD_FORMAT_UNSIGNED_INT8;
    d.NumChannels = (unsigned)channels;
    if (VPT_CU_TRY(cuArray3DCreate, &t->array, &d) || upload_3d(t->array, texels, row, s->ny, s->nz) ||
        make_texture(t->array, &t->tex)) {
        if (t->tex) vpt_cu.cuTexObjectDestroy(t->tex);
        if (t->array) vpt_cu.cuArrayDestroy(t->array);
        memset(t, 0, sizeof *t);
        vpt_error_prefix("scene '%s': %s", s->name, what);
        return -1;
    }
    g->bytes += row * (size_t)s->ny * (size_t)s->nz;
    return 0;
}

static int make_format_texture(VptGpuScene *g, VptDensityFormat f)
{
    const VptScene *s = g->scene;
    const size_t nvox = (size_t)s->nx * s->ny * s->nz, bytes = vpt_density_format_bytes(f);
    char what[64];
    snprintf(what, sizeof what, "the density texture in format %s", vpt_density_format_name(f));
    if (check_free(g, nvox * bytes, what)) return -1;
    void *texels = vpt_malloc(nvox * bytes);
    if (!texels) return -1;
    vpt_density_format_encode(f, s->density, nvox, s->density_max, texels, NULL, 0);
    const int rc = upload_format_texture(g, f, 1, texels, what, &g->formats[f]);
    free(texels);
    return rc;
}

static int log2_of(int cell)
{
    int k = 0;
    while ((1 << k) < cell) k++;
    return k;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

static int make_grid(VptGpuScene *g, VptDensityFormat f, int cell, float tau_per_density, VptGpuMajorantGrid *out)
{
    const VptScene *s = g->scene;
    VptMajorantGrid h;
    double t0 = now_ms();
    if (vpt_majorant_grid_build(s->density, s->nx, s->ny, s->nz, cell, f, s->density_max, 0, &h)) {
        vpt_error_prefix("scene '%s'", s->name);
        return -1;
    }
    out->build_ms = now_ms() - t0;
    vpt_majorant_grid_stats(&h, vpt_density_format_texture_value(f, s->density_max, s->density_max),
                            &out->empty_fraction, &out->mean_over_max);
    char what[64];
    snprintf(what, sizeof what, "the majorant grid of %d-voxel cells", cell);
    float *cells = vpt_majorant_grid_cells(&h, tau_per_density);
    const size_t bytes = VPT_MAJORANT_CELL_FLOATS * h.count * sizeof(float);
    int rc = !cells || check_free(g, bytes, what) || VPT_CU_TRY(cuMemAlloc, &out->cells, bytes) ||
             VPT_CU_TRY(cuMemcpyHtoD, out->cells, cells, bytes);
    free(cells);
    if (rc) {
        if (out->cells) vpt_cu.cuMemFree(out->cells);
        out->cells = 0;
        vpt_majorant_grid_free(&h);
        vpt_error_prefix("scene '%s': %s", s->name, what);
        return -1;
    }
    memcpy(out->n, h.n, sizeof h.n);
    g->bytes += bytes;
    vpt_majorant_grid_free(&h);
    return 0;
}

/* Interleaving the density texels with the distance map's, a range of
 * voxels per thread (a 1024x432x1024 volume has 453 M of them). */
typedef struct {
    VptDensityFormat f;
    size_t b; /* bytes per density texel */
    const unsigned char *dens;
    const uint8_t *map;
    unsigned char *pair;
} PairJob;

static void pair_texels(void *arg, size_t lo, size_t hi)
{
    const PairJob *j = arg;
    const size_t b = j->b;
    for (size_t i = lo; i < hi; i++) {
        const unsigned k = j->map[i];
        unsigned char *o = j->pair + 2 * b * i;
        memcpy(o, j->dens + b * i, b);
        if (j->f == VPT_DENSITY_U8) {
            o[1] = (unsigned char)k;
        } else if (j->f == VPT_DENSITY_U16) {
            const uint16_t v = (uint16_t)(k * 257u);
            memcpy(o + 2, &v, 2);
        } else if (j->f == VPT_DENSITY_F16) {
            const uint16_t v = vpt_half_from_float((float)k / 255.0f);
            memcpy(o + 2, &v, 2);
        } else {
            const float v = (float)k / 255.0f;
            memcpy(o + 4, &v, 4);
        }
    }
}

/* Format f's texture of two channels (majorant=skip): the density as
 * make_format_texture stores it, and the distance map (built on the host
 * once per scene) as texels of the same format read as value / 255: the
 * byte itself for u8, times 257 for u16, k / 255 as half or float. One
 * fetch filters both (kernels.cu.in, vpt_medium_density_distance). */
static int make_paired_texture(VptGpuScene *g, VptDensityFormat f)
{
    const VptScene *s = g->scene;
    const size_t nvox = (size_t)s->nx * s->ny * s->nz, b = vpt_density_format_bytes(f);
    char what[80];
    snprintf(what, sizeof what, "the density and distance map texture in format %s", vpt_density_format_name(f));
    if (!g->distance_map && vpt_distance_map_build(s->density, s->nx, s->ny, s->nz, 0, &g->distance_map)) {
        vpt_error_prefix("scene '%s'", s->name);
        return -1;
    }
    if (check_free(g, 2 * nvox * b, what)) return -1;
    /* f32's texels are the densities themselves */
    unsigned char *dens = f == VPT_DENSITY_F32 ? NULL : vpt_malloc(nvox * b), *pair = vpt_malloc(2 * nvox * b);
    if ((f != VPT_DENSITY_F32 && !dens) || !pair) {
        free(dens);
        free(pair);
        return -1;
    }
    if (dens) vpt_density_format_encode(f, s->density, nvox, s->density_max, dens, NULL, 0);
    PairJob job = {f, b, dens ? dens : (const unsigned char *)s->density, g->distance_map, pair};
    vpt_parallel_for(nvox, 0, pair_texels, &job);
    free(dens);
    const int rc = upload_format_texture(g, f, 2, pair, what, &g->paired[f]);
    free(pair);
    return rc;
}

/* The NanoVDB grid of format f's texture values (the scene's densities for
 * f32), built on the host and uploaded after the free-memory check. */
static int make_sparse(VptGpuScene *g, VptDensityFormat f, VptGpuSparseGrid *out)
{
    const VptScene *s = g->scene;
    const size_t nvox = (size_t)s->nx * s->ny * s->nz;
    float *values = NULL;
    void *texels = NULL;
    if (f != VPT_DENSITY_F32) {
        values = vpt_malloc(nvox * sizeof(float));
        texels = vpt_malloc(nvox * vpt_density_format_bytes(f));
        if (!values || !texels) {
            free(values);
            free(texels);
            return -1;
        }
        vpt_density_format_encode(f, s->density, nvox, s->density_max, texels, values, 0);
        free(texels);
    }
    VptSparseGrid h;
    const double t0 = now_ms();
    int rc = vpt_sparse_grid_build(values ? values : s->density, s->nx, s->ny, s->nz, "density", &h);
    free(values);
    if (rc) {
        vpt_error_prefix("scene '%s'", s->name);
        return -1;
    }
    out->build_ms = now_ms() - t0;
    out->empty_fraction = h.empty_fraction;
    char what[96];
    snprintf(what, sizeof what, "the sparse (NanoVDB) density in format %s", vpt_density_format_name(f));
    rc = check_free(g, h.size, what) || VPT_CU_TRY(cuMemAlloc, &out->grid, h.size) ||
         VPT_CU_TRY(cuMemcpyHtoD, out->grid, h.data, h.size);
    if (rc) {
        if (out->grid) vpt_cu.cuMemFree(out->grid);
        out->grid = 0;
        vpt_sparse_grid_free(&h);
        vpt_error_prefix("scene '%s': %s", s->name, what);
        return -1;
    }
    out->bytes = h.size;
    g->bytes += h.size;
    vpt_sparse_grid_free(&h);
    return 0;
}

int vpt_gpu_scene_medium(VptGpuScene *g, VptDensityFormat format, int majorant, int sparse, const VptParams *base,
                         VptParams *P, VptGpuMedium *out)
{
    const VptScene *s = g->scene;
    const int cell = vpt_majorant_grid_cell(majorant);
    if ((unsigned)format >= VPT_DENSITY_FORMAT_COUNT || majorant < -1 || cell > (1 << (VPT_GPU_GRID_LOG2_MAX - 1)) ||
        (cell & (cell - 1)))
        return vpt_fail("internal error: estimator (density %d, majorant %d) is not one vptune has", (int)format,
                        majorant);
    *P = *base;
    if (P->env_map_on) { /* the device's copies in place of the host's arrays */
        P->em_radiance = (vpt_u64)g->env_radiance;
        P->em_row_cdf = (vpt_u64)g->env_row_cdf;
        P->em_col_cdf = (vpt_u64)g->env_col_cdf;
    }
    memset(out, 0, sizeof *out);
    out->albedo_tex = g->albedo_tex;
    out->density_tex = g->density_tex;
    out->n[0] = s->nx;
    out->n[1] = s->ny;
    out->n[2] = s->nz;
    if (sparse) {
        if (!g->sparse[format].grid && make_sparse(g, format, &g->sparse[format])) return -1;
        out->sparse = g->sparse[format].grid;
    } else if (format != VPT_DENSITY_F32) {
        if (!g->formats[format].tex && make_format_texture(g, format)) return -1;
        out->density_tex = g->formats[format].tex;
    }
    vpt_density_format_fold_params(format, s->density_max, P);
    out->mean_density = g->mean_density / vpt_density_format_unit(format, s->density_max);
    if (cell > 0) {
        VptGpuMajorantGrid *gr = &g->grids[log2_of(cell)][format];
        if (!gr->cells && make_grid(g, format, cell, P->tau_per_density, gr)) return -1;
        VptMajorantGrid shape = {cell, {gr->n[0], gr->n[1], gr->n[2]}, 0, NULL, NULL};
        vpt_params_set_majorant_grid(P, &shape, s->nx, s->ny, s->nz);
        out->majorant = gr->cells;
    }
    if (vpt_majorant_skips(majorant)) {
        if (sparse) return vpt_fail("majorant=skip reads the distance map from the dense texture: not with volume=sparse");
        if (!g->paired[format].tex && make_paired_texture(g, format)) return -1;
        vpt_params_set_distance_map(P, s->nx, s->ny, s->nz);
        out->density_tex = g->paired[format].tex;
    }
    return 0;
}

void vpt_gpu_scene_destroy(VptGpuScene *g)
{
    for (int f = 0; f < VPT_DENSITY_FORMAT_COUNT; f++) {
        if (g->formats[f].tex) vpt_cu.cuTexObjectDestroy(g->formats[f].tex);
        if (g->formats[f].array) vpt_cu.cuArrayDestroy(g->formats[f].array);
        for (int k = 0; k < VPT_GPU_GRID_LOG2_MAX; k++)
            if (g->grids[k][f].cells) vpt_cu.cuMemFree(g->grids[k][f].cells);
        if (g->sparse[f].grid) vpt_cu.cuMemFree(g->sparse[f].grid);
    }
    for (int f = 0; f < VPT_DENSITY_FORMAT_COUNT; f++) {
        if (g->paired[f].tex) vpt_cu.cuTexObjectDestroy(g->paired[f].tex);
        if (g->paired[f].array) vpt_cu.cuArrayDestroy(g->paired[f].array);
    }
    free(g->distance_map);
    if (g->env_radiance) vpt_cu.cuMemFree(g->env_radiance);
    if (g->env_row_cdf) vpt_cu.cuMemFree(g->env_row_cdf);
    if (g->env_col_cdf) vpt_cu.cuMemFree(g->env_col_cdf);
    if (g->density_tex) vpt_cu.cuTexObjectDestroy(g->density_tex);
    if (g->albedo_tex) vpt_cu.cuTexObjectDestroy(g->albedo_tex);
    if (g->density_array) vpt_cu.cuArrayDestroy(g->density_array);
    if (g->albedo_array) vpt_cu.cuArrayDestroy(g->albedo_array);
    memset(g, 0, sizeof *g);
}
