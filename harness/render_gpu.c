#include "harness/render_gpu.h"

#include "base/error.h"
#include "codegen/kernel_abi.h"
#include "harness/watchdog.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Multi-kernel pool: enough paths in flight to fill the GPU several times. */
static unsigned long long pool_capacity(const VptParams *P, const VptGpu *g)
{
    unsigned long long cap = (unsigned long long)g->sm_count * (unsigned long long)g->max_threads_per_sm * 4ull;
    unsigned long long wave = (unsigned long long)P->width * P->height;
    if (wave > cap) cap = wave;
    return cap < P->npaths ? cap : P->npaths;
}

int vpt_render_buffers_create(const VptParams *P, const VptGpu *g, VptRenderBuffers *b)
{
    memset(b, 0, sizeof *b);
    b->width = P->width;
    b->height = P->height;
    size_t img = (size_t)P->width * P->height * 3 * sizeof(float);
    b->pool_capacity = pool_capacity(P, g);
    size_t pool = (size_t)b->pool_capacity * sizeof(VptPath);
    if (VPT_CU_TRY(cuMemAlloc, &b->image, img) || VPT_CU_TRY(cuMemAlloc, &b->image_sq, img) ||
        VPT_CU_TRY(cuMemAlloc, &b->stats, sizeof(VptDevStats)) ||
        VPT_CU_TRY(cuMemAlloc, &b->windows, 2 * VPT_MAX_SMS * sizeof(VptSmWindow)) ||
        VPT_CU_TRY(cuMemAlloc, &b->abort_flag, sizeof(int)) || VPT_CU_TRY(cuMemAlloc, &b->paths_a, pool) ||
        VPT_CU_TRY(cuMemAlloc, &b->paths_b, pool) ||
        VPT_CU_TRY(cuStreamCreate, &b->control, CU_STREAM_NON_BLOCKING) ||
        VPT_CU_TRY(cuMemHostAlloc, (void **)&b->abort_host, sizeof(int), 0)) {
        vpt_error_prefix("allocating render buffers for %ux%u, %u spp", P->width, P->height, P->spp);
        vpt_render_buffers_destroy(b);
        return -1;
    }
    return 0;
}

void vpt_render_buffers_destroy(VptRenderBuffers *b)
{
    CUdeviceptr *ptrs[] = {&b->image, &b->image_sq, &b->stats, &b->windows, &b->abort_flag, &b->paths_a, &b->paths_b};
    for (size_t i = 0; i < sizeof ptrs / sizeof ptrs[0]; i++)
        if (*ptrs[i]) vpt_cu.cuMemFree(*ptrs[i]);
    if (b->control) vpt_cu.cuStreamDestroy(b->control);
    if (b->abort_host) vpt_cu.cuMemFreeHost(b->abort_host);
    memset(b, 0, sizeof *b);
}

static int reset_device_state(VptRenderBuffers *b, int moments)
{
    static VptSmWindow init[2 * VPT_MAX_SMS];
    static int init_done;
    if (!init_done) {
        for (int i = 0; i < 2 * VPT_MAX_SMS; i++) {
            init[i].start = ~0ull;
            init[i].end = 0;
        }
        init_done = 1;
    }
    size_t img = (size_t)b->width * b->height * 3 * sizeof(float);
    if (VPT_CU_TRY(cuMemsetD8, b->image, 0, img) || (moments && VPT_CU_TRY(cuMemsetD8, b->image_sq, 0, img)) ||
        VPT_CU_TRY(cuMemsetD8, b->stats, 0, sizeof(VptDevStats)) ||
        VPT_CU_TRY(cuMemsetD8, b->abort_flag, 0, sizeof(int)) ||
        VPT_CU_TRY(cuMemcpyHtoD, b->windows, init, sizeof init))
        return -1;
    return 0;
}

static void sleep_us(long us)
{
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    nanosleep(&ts, NULL);
}

/* Waits for ev; on the deadline asks persistent kernels to stop through the
 * abort flag and waits a grace period. Returns 0 done, 1 timed out (the GPU
 * is idle again), -1 error (or a kernel that would not stop). */
static int wait_event(CUevent ev, VptRenderBuffers *b, VptWatchdog *wd)
{
    for (long sleep = 20;; sleep = sleep < 2000 ? sleep * 2 : 2000) {
        CUresult r = vpt_cu.cuEventQuery(ev);
        if (r == CUDA_SUCCESS) return 0;
        if (r != CUDA_ERROR_NOT_READY) return vpt_cu_result(r, "cuEventQuery(end)", __FILE__, __LINE__);
        if (wd && vpt_watchdog_expired(wd)) break;
        sleep_us(sleep);
    }
    *b->abort_host = 1;
    if (VPT_CU_TRY(cuMemcpyHtoDAsync, b->abort_flag, b->abort_host, sizeof(int), b->control)) return -1;
    VptWatchdog *grace = vpt_watchdog_start(10.0, "abort grace period");
    int rc = -1;
    for (;;) {
        CUresult r = vpt_cu.cuEventQuery(ev);
        if (r == CUDA_SUCCESS) {
            rc = 1;
            break;
        }
        if (r != CUDA_ERROR_NOT_READY) {
            vpt_cu_result(r, "cuEventQuery(end)", __FILE__, __LINE__);
            break;
        }
        if (vpt_watchdog_expired(grace)) {
            vpt_fail("a kernel did not stop within 10 s after its time limit; the GPU context is unusable");
            break;
        }
        sleep_us(1000);
    }
    vpt_watchdog_stop(grace);
    *b->abort_host = 0;
    return rc;
}

static int launch(CUfunction f, unsigned grid, unsigned block, size_t smem, VptLaunch *L)
{
    void *args[] = {L};
    return VPT_CU_TRY(cuLaunchKernel, f, grid, 1, 1, block, 1, 1, (unsigned)smem, NULL, args, NULL);
}

static int read_u64(CUdeviceptr p, unsigned long long *out)
{
    return VPT_CU_TRY(cuMemcpyDtoH, out, p, sizeof *out);
}

/* Multi-kernel host loop (thesis 4.1.1). naiveMK: waves of one sample per
 * pixel, extended in place until none lives. streamingMK: a pool refilled
 * with new paths before every extension launch, survivors compacted. */
static int run_multi(const VptGpu *g, const VptVariant *v, VptLaunch *L, VptRenderBuffers *b, VptWatchdog *wd,
                     int *launches)
{
    const VptConfig *c = &v->config;
    const unsigned long long npaths = L->P.npaths, cap = b->pool_capacity;
    const unsigned long long per_block = (unsigned long long)c->block * c->ppt;
    CUdeviceptr active_out = b->stats + offsetof(VptDevStats, active_out);
    CUdeviceptr in = b->paths_a, out = b->paths_b;
    unsigned long long head = 0, n = 0;
    int parity = *launches & 1; /* alternates over every launch of the render, tiles included */
    (void)g;
    while (head < npaths || n > 0) {
        if (wd && vpt_watchdog_expired(wd)) return 1;
        unsigned long long add = 0;
        if (c->reorder == VPT_REORDER_COMPACT) {
            add = npaths - head < cap - n ? npaths - head : cap - n;
        } else if (n == 0) {
            add = npaths - head < cap ? npaths - head : cap; /* next wave */
        }
        if (add) {
            L->paths_in = in;
            L->n_in = n;
            L->start_first = head;
            L->start_count = add;
            L->parity = parity;
            L->fold = *launches > 0;
            unsigned grid = (unsigned)((add + (unsigned)c->block - 1) / (unsigned)c->block);
            if (launch(v->start, grid, (unsigned)c->block, 0, L)) return -1;
            (*launches)++;
            parity ^= 1;
            head += add;
            n += add;
        }
        if (VPT_CU_TRY(cuMemsetD8, active_out, 0, sizeof(unsigned long long))) return -1;
        L->paths_in = in;
        L->paths_out = out;
        L->n_in = n;
        L->parity = parity;
        L->fold = *launches > 0;
        unsigned grid = (unsigned)((n + per_block - 1) / per_block);
        if (launch(v->render, grid ? grid : 1, (unsigned)c->block, v->dynamic_smem, L)) return -1;
        (*launches)++;
        parity ^= 1;
        unsigned long long alive = 0;
        if (read_u64(active_out, &alive)) return -1;
        if (c->reorder == VPT_REORDER_COMPACT) {
            CUdeviceptr t = in;
            in = out;
            out = t;
            n = alive;
        } else if (alive == 0) {
            n = 0; /* wave finished */
        }
    }
    return 0;
}

/* The variant's schedule over the image: one launch (single kernel) or one
 * host loop (multi kernel), or with tiles > 1 one per tile, one tile after
 * the other: the tile's paths are L->P.npaths of the launch and its
 * rectangle L->tile_* (tile_w 0: the whole image); the persistent kernels'
 * path counter restarts at each tile. Returns 0, 1 timed out, -1 error. */
static int run_schedule(const VptGpu *g, const VptVariant *v, const VptParams *P, int tiles, VptLaunch *L,
                        VptRenderBuffers *b, VptWatchdog *wd, int *launches)
{
    CUdeviceptr head = b->stats + offsetof(VptDevStats, path_head);
    const int n = tiles > 1 ? tiles : 1;
    for (int ty = 0; ty < n; ty++) {
        for (int tx = 0; tx < n; tx++) {
            if (wd && vpt_watchdog_expired(wd)) return 1;
            if (n > 1) {
                unsigned x0 = (unsigned)((unsigned long long)P->width * tx / n);
                unsigned x1 = (unsigned)((unsigned long long)P->width * (tx + 1) / n);
                unsigned y0 = (unsigned)((unsigned long long)P->height * ty / n);
                unsigned y1 = (unsigned)((unsigned long long)P->height * (ty + 1) / n);
                if (x1 == x0 || y1 == y0) continue; /* more tiles than pixels on an axis */
                L->tile_x0 = x0;
                L->tile_y0 = y0;
                L->tile_w = x1 - x0;
                L->tile_h = y1 - y0;
                L->P.npaths = (unsigned long long)L->tile_w * L->tile_h * P->spp;
                if (VPT_CU_TRY(cuMemsetD8, head, 0, sizeof(unsigned long long))) return -1;
            }
            if (v->is_multi) {
                int r = run_multi(g, v, L, b, wd, launches);
                if (r) return r;
            } else {
                L->parity = *launches & 1;
                L->fold = *launches > 0;
                if (launch(v->render, vpt_variant_grid(v, g, L->P.npaths), (unsigned)v->config.block, v->dynamic_smem,
                           L))
                    return -1;
                (*launches)++;
            }
        }
    }
    return 0;
}

int vpt_render_run(const VptGpu *g, const VptVariant *v, const VptGpuMedium *gm, const VptParams *P, int tiles,
                   VptRenderBuffers *b, double timeout_s, float *image_out, float *var_out, VptRunStats *rs,
                   VptStatus *status)
{
    memset(rs, 0, sizeof *rs);
    *status = VPT_STATUS_RUNTIME;
    if (P->width != b->width || P->height != b->height)
        return vpt_fail("internal error: render buffers are for %ux%u, params for %ux%u", b->width, b->height, P->width,
                        P->height);
    if (tiles < 0 || tiles > VPT_MAX_TILES) return vpt_fail("tiles=%d: not in 0..%d", tiles, VPT_MAX_TILES);
    if (var_out && !(v->config.regen == VPT_REGEN_NONE && v->config.kernels == VPT_KERNELS_SINGLE))
        return vpt_fail("internal error: only naiveSK accumulates the pixels' second moments");
    if (reset_device_state(b, var_out != NULL)) return -1;
    VptLaunch L;
    memset(&L, 0, sizeof L);
    L.P = *P;
    L.density_tex = gm->density_tex;
    L.albedo_tex = gm->albedo_tex;
    L.majorant_grid = gm->majorant;
    L.sparse_grid = gm->sparse;
    for (int k = 0; k < 3; k++) L.grid_n[k] = gm->n[k];
    L.image_sq = var_out ? b->image_sq : 0;
    L.image = b->image;
    L.stats = b->stats;
    L.windows = b->windows;
    L.abort_flag = b->abort_flag;
    L.num_sms = g->sm_count < VPT_MAX_SMS ? g->sm_count : VPT_MAX_SMS;
    L.mean_free_path = gm->mean_density > 0.0f ? 1.0f / (P->density_scale * gm->mean_density) : 1.0f;

    CUevent e0 = NULL, e1 = NULL;
    VptWatchdog *wd = timeout_s > 0 ? vpt_watchdog_start(timeout_s, v->canon) : NULL;
    int rc = -1, timed_out = 0;
    if (VPT_CU_TRY(cuEventCreate, &e0, CU_EVENT_DEFAULT) || VPT_CU_TRY(cuEventCreate, &e1, CU_EVENT_DEFAULT)) goto out;
    if (VPT_CU_TRY(cuEventRecord, e0, NULL)) goto out;
    int r = run_schedule(g, v, P, tiles, &L, b, wd, &rs->launches);
    if (r < 0) goto out;
    timed_out = r == 1;
    if (VPT_CU_TRY(cuEventRecord, e1, NULL)) goto out;
    int w = wait_event(e1, b, wd);
    if (w < 0) goto out;
    timed_out |= w == 1;
    float ms = 0.0f;
    if (VPT_CU_TRY(cuEventElapsedTime, &ms, e0, e1)) goto out;
    rs->ms = ms;

    VptDevStats st;
    VptSmWindow win[2 * VPT_MAX_SMS];
    if (VPT_CU_TRY(cuMemcpyDtoH, &st, b->stats, sizeof st) || VPT_CU_TRY(cuMemcpyDtoH, win, b->windows, sizeof win))
        goto out;
    if (timed_out || st.aborted) {
        *status = VPT_STATUS_TIMEOUT;
        vpt_fail("timeout: the render ran longer than its %.1f s limit and was stopped", timeout_s);
        goto out;
    }
    unsigned long long sm_cycles = st.sm_cycles;
    for (int i = 0; i < 2 * VPT_MAX_SMS; i++)
        if (win[i].end > win[i].start) sm_cycles += win[i].end - win[i].start;
    rs->rays = st.rays;
    rs->steps = st.steps;
    rs->paths = st.paths;
    rs->simd_efficiency = st.ext_rounds ? (double)st.ext_lanes / (32.0 * (double)st.ext_rounds) : 0.0;
    int max_warps = g->max_threads_per_sm / 32;
    rs->occupancy_achieved = sm_cycles ? (double)st.warp_cycles / ((double)sm_cycles * max_warps) : 0.0;
    if (st.paths != P->npaths) {
        vpt_fail("the render finished %llu of %llu paths", (unsigned long long)st.paths, (unsigned long long)P->npaths);
        goto out;
    }
    if (image_out) {
        size_t npix = (size_t)P->width * P->height;
        if (VPT_CU_TRY(cuMemcpyDtoH, image_out, b->image, npix * 3 * sizeof(float))) goto out;
        float inv = 1.0f / (float)P->spp;
        for (size_t i = 0; i < npix * 3; i++) image_out[i] *= inv;
    }
    if (var_out) { /* the variance of each pixel's mean: (E[L^2] - mean^2) / (spp - 1) */
        size_t npix = (size_t)P->width * P->height;
        float *sum = vpt_malloc(npix * 3 * sizeof(float)), *sq = vpt_malloc(npix * 3 * sizeof(float));
        int bad = !sum || !sq || VPT_CU_TRY(cuMemcpyDtoH, sum, b->image, npix * 3 * sizeof(float)) ||
                  VPT_CU_TRY(cuMemcpyDtoH, sq, b->image_sq, npix * 3 * sizeof(float));
        for (size_t i = 0; !bad && i < npix * 3; i++) {
            double n = P->spp, m = sum[i] / n, v2 = (double)sq[i] / n - m * m;
            var_out[i] = P->spp > 1 ? (float)((v2 > 0 ? v2 : 0) / (n - 1)) : 0.0f;
        }
        free(sum);
        free(sq);
        if (bad) goto out;
    }
    *status = VPT_STATUS_OK;
    rc = 0;
out:
    if (e0) vpt_cu.cuEventDestroy(e0);
    if (e1) vpt_cu.cuEventDestroy(e1);
    vpt_watchdog_stop(wd);
    return rc;
}
