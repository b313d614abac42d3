/* The CPU reference renderer: pthreads over blocks of whole pixels, see
 * cpu_render.h for the determinism contract. */
#include "reference/cpu_render.h"

#include "base/error.h"
#include "physics/vpt_tracer.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum {
    MAX_THREADS = 1024,
    TARGET_CHUNK_PATHS = 8192, /* paths per work item: small enough to balance and to report progress */
    PROGRESS_PERIOD_MS = 250
};

typedef struct {
    const VptParams *P;
    VptMedium M;
    float *mean, *var;
    uint64_t npix, chunk;
    atomic_uint_fast64_t next;      /* first pixel of the next unclaimed block */
    atomic_uint_fast64_t pix_done;  /* pixels finished (progress only) */
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int running;                    /* workers not yet finished; under lock */
} Job;

typedef struct {
    Job *job;
    pthread_t tid;
    VptCounters c;
} Worker;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* All samples of one pixel, in sample order, accumulated in double
 * (Welford, so a zero-variance pixel gets exactly zero variance). */
static void render_pixel(Job *j, uint64_t pix, VptCounters *c)
{
    const VptParams *P = j->P;
    uint64_t stride = j->npix;
    double mean[3] = {0, 0, 0}, m2[3] = {0, 0, 0};
    for (uint32_t s = 0; s < P->spp; s++) {
        vpt_vec3 L = vpt_trace_path(P, &j->M, (vpt_u64)s * stride + pix, c);
        const double v[3] = {L.x, L.y, L.z};
        for (int k = 0; k < 3; k++) {
            double d = v[k] - mean[k];
            mean[k] += d / (double)(s + 1);
            m2[k] += d * (v[k] - mean[k]);
        }
    }
    for (int k = 0; k < 3; k++) {
        j->mean[3 * pix + k] = (float)mean[k];
        if (j->var)
            j->var[3 * pix + k] = P->spp > 1 ? (float)(m2[k] / ((double)P->spp * (double)(P->spp - 1))) : 0.0f;
    }
}

static void *worker_main(void *arg)
{
    Worker *w = arg;
    Job *j = w->job;
    for (;;) {
        uint64_t first = atomic_fetch_add(&j->next, j->chunk);
        if (first >= j->npix) break;
        uint64_t end = first + j->chunk < j->npix ? first + j->chunk : j->npix;
        for (uint64_t pix = first; pix < end; pix++) render_pixel(j, pix, &w->c);
        atomic_fetch_add(&j->pix_done, end - first);
    }
    pthread_mutex_lock(&j->lock);
    j->running--;
    pthread_cond_signal(&j->cond);
    pthread_mutex_unlock(&j->lock);
    return NULL;
}

static void print_progress(const Job *j, double elapsed)
{
    uint64_t done = atomic_load(&j->pix_done);
    double frac = (double)done / (double)j->npix;
    double paths = (double)done * (double)j->P->spp;
    double rate = elapsed > 0 ? paths / elapsed : 0;
    char eta[32] = "?";
    if (done > 0) {
        double left = elapsed * (1.0 - frac) / frac;
        if (left < 120)
            snprintf(eta, sizeof eta, "%.0fs", left);
        else if (left < 7200)
            snprintf(eta, sizeof eta, "%dm%02ds", (int)left / 60, (int)left % 60);
        else
            snprintf(eta, sizeof eta, "%.1fh", left / 3600);
    }
    fprintf(stderr, "\r  %3.0f%% %.2f Mpaths/s ETA %-10s", 100.0 * frac, rate * 1e-6, eta);
    fflush(stderr);
}

static int validate(const VptScene *s, const VptParams *p, const float *mean_rgb)
{
    if (!s || !p || !mean_rgb) return vpt_fail("cpu render: scene, parameters and output image are required");
    if (s->nx <= 0 || s->ny <= 0 || s->nz <= 0 || !s->density || !(s->albedo || s->albedo_table))
        return vpt_fail("cpu render: scene '%s' has no grids (was it finalized?)", s->name);
    if (p->albedo_entries != (s->albedo_table ? s->albedo_entries : 0) || !(p->albedo_index >= 0.0f))
        return vpt_fail("cpu render: the parameters' albedo table (%d entries, index %g) is not scene '%s''s (%d "
                        "entries): make them with vpt_params_init on this scene",
                        p->albedo_entries, (double)p->albedo_index, s->name, s->albedo_table ? s->albedo_entries : 0);
    if (p->width == 0 || p->height == 0 || p->spp == 0)
        return vpt_fail("cpu render: image %ux%u at %u spp has a zero dimension", (unsigned)p->width,
                        (unsigned)p->height, (unsigned)p->spp);
    uint64_t npix = (uint64_t)p->width * p->height;
    if (p->npaths / p->spp != npix || p->npaths % p->spp != 0)
        return vpt_fail("cpu render: npaths %llu is not width * height * spp = %ux%ux%u",
                        (unsigned long long)p->npaths, (unsigned)p->width, (unsigned)p->height, (unsigned)p->spp);
    if (npix > SIZE_MAX / (3 * sizeof(float)))
        return vpt_fail("cpu render: image %ux%u is too large", (unsigned)p->width, (unsigned)p->height);
    if (!(p->free_path_unit > 0.0f) || !(p->density_max >= 0.0f))
        return vpt_fail("cpu render: majorant parameters are invalid (free_path_unit %g, density_max %g)",
                        (double)p->free_path_unit, (double)p->density_max);
    return 0;
}

int vpt_cpu_render(const VptScene *s, const VptParams *p, const VptCpuRenderOptions *o, float *mean_rgb,
                   float *var_rgb, VptRenderStats *st)
{
    if (validate(s, p, mean_rgb) < 0) return -1;
    VptCpuRenderOptions opt = {0, VPT_PROGRESS_AUTO, NULL};
    if (o) opt = *o;
    if (vpt_uses_skip(p) && !(opt.estimator && opt.estimator->distance))
        return vpt_fail("cpu render: the parameters ask for a distance map but no estimator holds one");
    if (vpt_uses_grid(p) && !(opt.estimator && opt.estimator->cells))
        return vpt_fail("cpu render: the parameters ask for a majorant grid but no estimator holds one");
    int nthreads = opt.threads;
    if (nthreads <= 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        nthreads = n > 0 ? (int)n : 1;
    }
    if (nthreads > MAX_THREADS) nthreads = MAX_THREADS;
    int progress = opt.progress == VPT_PROGRESS_ON || (opt.progress == VPT_PROGRESS_AUTO && isatty(STDERR_FILENO));

    Job j;
    memset(&j, 0, sizeof j);
    j.P = p;
    vpt_cpu_medium_init(&j.M, s);
    j.M.albedo_index = p->albedo_index; /* in the estimator's units (vpt_density_format_fold_params) */
    if (opt.estimator) {
        if (opt.estimator->density) j.M.density = opt.estimator->density;
        j.M.majorant = opt.estimator->cells;
        j.M.minorant = opt.estimator->cells ? opt.estimator->cells + 2 * opt.estimator->grid.count : NULL;
        j.M.distance = opt.estimator->distance;
        j.M.sparse = opt.estimator->sparse ? opt.estimator->tree.data : NULL;
    }
    j.mean = mean_rgb;
    j.var = var_rgb;
    j.npix = (uint64_t)p->width * p->height;
    /* Blocks of about TARGET_CHUNK_PATHS paths, but at least ~8 blocks per
     * thread when the image allows it, so the last ones balance. */
    uint64_t chunk = TARGET_CHUNK_PATHS / p->spp;
    uint64_t balance = j.npix / (8 * (uint64_t)nthreads);
    if (chunk > balance) chunk = balance;
    j.chunk = chunk > 0 ? chunk : 1;
    if ((uint64_t)nthreads > j.npix) nthreads = (int)j.npix;
    atomic_init(&j.next, 0);
    atomic_init(&j.pix_done, 0);
    pthread_mutex_init(&j.lock, NULL);
    pthread_cond_init(&j.cond, NULL);

    Worker *w = vpt_calloc((size_t)nthreads, sizeof *w);
    if (!w) {
        pthread_mutex_destroy(&j.lock);
        pthread_cond_destroy(&j.cond);
        vpt_error_prefix("cpu render");
        return -1;
    }
    double t0 = now_s();
    int started = 0, create_err = 0;
    pthread_mutex_lock(&j.lock);
    for (int i = 0; i < nthreads; i++) {
        w[i].job = &j;
        int e = pthread_create(&w[i].tid, NULL, worker_main, &w[i]);
        if (e) {
            create_err = e;
            break; /* the threads already running take all the blocks */
        }
        started++;
        j.running++;
    }
    if (started == 0) {
        pthread_mutex_unlock(&j.lock);
        free(w);
        pthread_mutex_destroy(&j.lock);
        pthread_cond_destroy(&j.cond);
        errno = create_err;
        return vpt_fail_errno("cpu render: cannot start a thread");
    }
    /* Wait for the workers, waking up for the progress line if wanted. */
    while (j.running > 0) {
        if (!progress) {
            pthread_cond_wait(&j.cond, &j.lock);
            continue;
        }
        struct timespec dl;
        clock_gettime(CLOCK_REALTIME, &dl);
        dl.tv_nsec += PROGRESS_PERIOD_MS * 1000000L;
        if (dl.tv_nsec >= 1000000000L) {
            dl.tv_sec += 1;
            dl.tv_nsec -= 1000000000L;
        }
        if (pthread_cond_timedwait(&j.cond, &j.lock, &dl) == ETIMEDOUT && j.running > 0)
            print_progress(&j, now_s() - t0);
    }
    pthread_mutex_unlock(&j.lock);
    VptCounters c = {0, 0, 0};
    for (int i = 0; i < started; i++) {
        pthread_join(w[i].tid, NULL);
        c.rays += w[i].c.rays;
        c.steps += w[i].c.steps;
        c.paths += w[i].c.paths;
    }
    double secs = now_s() - t0;
    if (progress) {
        fprintf(stderr, "\r%-48s\r", "");
        fflush(stderr);
    }
    free(w);
    pthread_mutex_destroy(&j.lock);
    pthread_cond_destroy(&j.cond);
    if (st) {
        st->seconds = secs;
        st->counters = c;
    }
    return 0;
}

void vpt_render_stats_format(const VptRenderStats *st, char *buf, size_t bufsz)
{
    if (!buf || bufsz == 0) return;
    double t = st->seconds > 0 ? st->seconds : 0;
    double inv = t > 0 ? 1.0 / t : 0;
    snprintf(buf, bufsz, "%.3f s, %.3g paths/s, %.2f Mrays/s, %.3f Gsteps/s", t,
             (double)st->counters.paths * inv, (double)st->counters.rays * inv * 1e-6,
             (double)st->counters.steps * inv * 1e-9);
}

void vpt_render_stats_print(FILE *fp, const VptRenderStats *st)
{
    char line[256];
    vpt_render_stats_format(st, line, sizeof line);
    fprintf(fp, "%s\n", line);
}

int vpt_cpu_estimator_init(VptCpuEstimator *e, const VptScene *s, VptDensityFormat format, int cell, int sparse,
                           VptParams *P)
{
    memset(e, 0, sizeof *e);
    e->format = format;
    e->cell = cell;
    e->sparse = sparse;
    const size_t n = (size_t)s->nx * (size_t)s->ny * (size_t)s->nz;
    if (format != VPT_DENSITY_F32) {
        void *texels = vpt_malloc(n * vpt_density_format_bytes(format));
        e->density = vpt_malloc(n * sizeof(float));
        if (!texels || !e->density) {
            free(texels);
            vpt_cpu_estimator_free(e);
            return -1;
        }
        vpt_density_format_encode(format, s->density, n, s->density_max, texels, e->density, 0);
        free(texels);
    }
    if (sparse && vpt_sparse_grid_build(e->density ? e->density : s->density, s->nx, s->ny, s->nz, "density", &e->tree)) {
        vpt_cpu_estimator_free(e);
        return -1;
    }
    const int gc = vpt_majorant_grid_cell(cell);
    if (gc > 0 &&
        vpt_majorant_grid_build(s->density, s->nx, s->ny, s->nz, gc, format, s->density_max, 0, &e->grid)) {
        vpt_cpu_estimator_free(e);
        return -1;
    }
    if (vpt_majorant_skips(cell) && vpt_distance_map_build(s->density, s->nx, s->ny, s->nz, 0, &e->distance)) {
        vpt_cpu_estimator_free(e);
        return -1;
    }
    vpt_density_format_fold_params(format, s->density_max, P);
    vpt_params_set_majorant_grid(P, gc > 0 ? &e->grid : NULL, s->nx, s->ny, s->nz);
    if (vpt_majorant_skips(cell)) vpt_params_set_distance_map(P, s->nx, s->ny, s->nz);
    if (gc > 0 && !(e->cells = vpt_majorant_grid_cells(&e->grid, P->tau_per_density))) {
        vpt_cpu_estimator_free(e);
        return -1;
    }
    return 0;
}

void vpt_cpu_estimator_free(VptCpuEstimator *e)
{
    free(e->density);
    free(e->cells);
    free(e->distance);
    vpt_sparse_grid_free(&e->tree);
    vpt_majorant_grid_free(&e->grid);
    e->density = NULL;
    e->cells = NULL;
    e->distance = NULL;
}
