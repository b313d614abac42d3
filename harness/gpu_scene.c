#include "harness/gpu_scene.h"

#include "base/error.h"

#include <stdint.h>
#include <string.h>

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

int vpt_gpu_scene_check_fits(const char *name, int nx, int ny, int nz, size_t free_bytes, size_t total_bytes)
{
    size_t nvox = (size_t)nx * (size_t)ny * (size_t)nz;
    if (nx <= 0 || ny <= 0 || nz <= 0 || nvox / (size_t)nx / (size_t)ny != (size_t)nz)
        return vpt_fail("scene '%s': grid %dx%dx%d is not a valid size", name, nx, ny, nz);
    const size_t per_voxel = sizeof(float) + 4; /* density + RGBA8 albedo */
    if (nvox > SIZE_MAX / per_voxel / 2)
        return vpt_fail("scene '%s': grid %dx%dx%d is too large for any GPU", name, nx, ny, nz);
    size_t need = nvox * per_voxel;
    /* CUDA arrays are padded and tiled: leave a margin. */
    if (need + need / 4 + ((size_t)64 << 20) > free_bytes)
        return vpt_fail("scene '%s' (%dx%dx%d voxels) needs about %.0f MiB of GPU memory for its textures, "
                        "but only %.0f MiB of %.0f MiB are free",
                        name, nx, ny, nz, need / 1048576.0, free_bytes / 1048576.0, total_bytes / 1048576.0);
    return 0;
}

int vpt_gpu_scene_create(const VptScene *s, VptGpuScene *out)
{
    memset(out, 0, sizeof *out);
    size_t nvox = (size_t)s->nx * s->ny * s->nz;
    size_t need = nvox * (sizeof(float) + 4);
    size_t free_b = 0, total_b = 0;
    if (VPT_CU_TRY(cuMemGetInfo, &free_b, &total_b)) return -1;
    if (vpt_gpu_scene_check_fits(s->name, s->nx, s->ny, s->nz, free_b, total_b)) return -1;
    CUDA_ARRAY3D_DESCRIPTOR d;
    memset(&d, 0, sizeof d);
    d.Width = (size_t)s->nx;
    d.Height = (size_t)s->ny;
    d.Depth = (size_t)s->nz;
    d.Format = CU_AD_FORMAT_FLOAT;
    d.NumChannels = 1;
    if (VPT_CU_TRY(cuArray3DCreate, &out->density_array, &d)) goto fail;
    d.Format = CU_AD_FORMAT_UNSIGNED_INT8;
    d.NumChannels = 4;
    if (VPT_CU_TRY(cuArray3DCreate, &out->albedo_array, &d)) goto fail;
    if (upload_3d(out->density_array, s->density, (size_t)s->nx * sizeof(float), s->ny, s->nz)) goto fail;
    if (upload_3d(out->albedo_array, s->albedo, (size_t)s->nx * 4, s->ny, s->nz)) goto fail;
    if (make_texture(out->density_array, &out->density_tex)) goto fail;
    if (make_texture(out->albedo_array, &out->albedo_tex)) goto fail;
    out->bytes = need;
    double sum = 0.0;
    for (size_t i = 0; i < nvox; i++) sum += s->density[i];
    out->mean_density = (float)(sum / (double)nvox);
    return 0;
fail:
    vpt_error_prefix("uploading scene '%s'", s->name);
    vpt_gpu_scene_destroy(out);
    return -1;
}

void vpt_gpu_scene_destroy(VptGpuScene *g)
{
    if (g->density_tex) vpt_cu.cuTexObjectDestroy(g->density_tex);
    if (g->albedo_tex) vpt_cu.cuTexObjectDestroy(g->albedo_tex);
    if (g->density_array) vpt_cu.cuArrayDestroy(g->density_array);
    if (g->albedo_array) vpt_cu.cuArrayDestroy(g->albedo_array);
    memset(g, 0, sizeof *g);
}
