#include "codegen/kernel_source.h"

#include "base/embedded.h"
#include "base/error.h"
#include "codegen/kernel_abi.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The layouts the kernels assume; the template re-checks them on the device
 * side against VPT_HOST_* so a host/device mismatch fails to compile. */
_Static_assert(sizeof(VptPath) == 80, "VptPath layout changed: update the shared memory sizing");
/* A kernel without a sun or a map has no radiance field (VPT_GATHERS 0):
 * its paths keep the 64 bytes they move through shared memory. */
_Static_assert(offsetof(VptPath, L) == 64, "VptPath's radiance field must come last");

static size_t path_size(const VptConfig *c)
{
    return c->transmittance != VPT_TRANSMITTANCE_NONE ? sizeof(VptPath) : offsetof(VptPath, L);
}

static int inject_code; /* see vpt_codegen_inject_fault */

void vpt_codegen_inject_fault(VptFault f) { inject_code = (int)f; }

/* What PNanoVDB.h includes, for NVRTC, which has no C library headers:
 * the fixed-width integers (the device's sizes) and nothing from string.h
 * (NVRTC knows memcpy as a builtin). */
static const char nvrtc_stdint_h[] =
    "typedef unsigned char uint8_t; typedef signed char int8_t; typedef unsigned short uint16_t;\n"
    "typedef short int16_t; typedef unsigned int uint32_t; typedef int int32_t;\n"
    "typedef unsigned long long uint64_t; typedef long long int64_t;\n";
static const char nvrtc_string_h[] = "/* memcpy: an NVRTC builtin */\n";

/* What a #define's value is computed from: the config and whether the
 * source is the roofline probe's. */
typedef struct {
    const VptConfig *c;
    int roofline;
} DefineInput;

static long long def_regen(const DefineInput *in) { return (long long)in->c->regen; }
static long long def_reorder(const DefineInput *in) { return (long long)in->c->reorder; }
static long long def_multi(const DefineInput *in) { return in->c->kernels == VPT_KERNELS_MULTI; }
static long long def_ppt(const DefineInput *in) { return in->c->ppt; }
static long long def_block(const DefineInput *in) { return in->c->block; }
static long long def_threshold(const DefineInput *in) { return in->c->threshold; }
static long long def_flights_async(const DefineInput *in) { return in->c->flights == VPT_FLIGHTS_ASYNC; }
static long long def_paths_pixel(const DefineInput *in) { return in->c->paths == VPT_PATHS_PIXEL; }
static long long def_sortkey(const DefineInput *in) { return in->c->sortkey == VPT_SORTKEY_TERMINATION; }
static long long def_maxrreg(const DefineInput *in) { return in->c->maxrregcount; }
static long long def_lookahead(const DefineInput *in) { return in->c->lookahead; }
static long long def_coop(const DefineInput *in) { return in->c->coop; }
static long long def_majorant_grid(const DefineInput *in) { return in->c->majorant > 0; }
static long long def_majorant_skip(const DefineInput *in) { return vpt_majorant_skips(in->c->majorant); }
static long long def_sparse(const DefineInput *in) { return in->c->sparse; }
static long long def_roofline(const DefineInput *in) { return in->roofline; }
static long long def_inject(const DefineInput *in) { (void)in; return inject_code; }
static long long def_path_size(const DefineInput *in) { return (long long)path_size(in->c); }
static long long def_sun(const DefineInput *in)
{
    return in->c->transmittance != VPT_TRANSMITTANCE_NONE && in->c->nee_lights != VPT_NEE_ENV_MAP;
}
static long long def_env_map(const DefineInput *in)
{
    return in->c->transmittance != VPT_TRANSMITTANCE_NONE && in->c->nee_lights != VPT_NEE_SUN;
}
/* VPT_TR_* (0 with no sun, unused then) */
static long long def_transmittance(const DefineInput *in)
{
    return in->c->transmittance != VPT_TRANSMITTANCE_NONE ? (long long)in->c->transmittance - 1 : 0;
}
static long long def_launch_size(const DefineInput *in) { (void)in; return (long long)sizeof(VptLaunch); }

/* The #defines that open every kernel source, in this order: kernels.cu.in
 * reads the config from them, and the source's text is part of the cubin
 * cache's key (harness/cubin_cache.h), so a new row, or a new order, changes
 * every key. A row marked only_when_set is left out when its value is 0
 * (the template tests it with #ifdef). */
static const struct {
    const char *name;
    long long (*value)(const DefineInput *in);
    int only_when_set;
} kernel_defines[] = {
    {"VPT_REGEN", def_regen, 0},
    {"VPT_REORDER", def_reorder, 0},
    {"VPT_MULTI", def_multi, 0},
    {"VPT_PPT", def_ppt, 0},
    {"VPT_BLOCK", def_block, 0},
    {"VPT_THRESHOLD", def_threshold, 0},
    {"VPT_FLIGHTS_ASYNC", def_flights_async, 0},
    {"VPT_PATHS_PIXEL", def_paths_pixel, 0},
    {"VPT_SORTKEY", def_sortkey, 0},
    {"VPT_MAXRREG", def_maxrreg, 0},
    {"VPT_LOOKAHEAD", def_lookahead, 0},
    {"VPT_COOP", def_coop, 0},
    {"VPT_MAJORANT_GRID", def_majorant_grid, 0},
    {"VPT_MAJORANT_SKIP", def_majorant_skip, 0},
    {"VPT_SPARSE", def_sparse, 1},
    {"VPT_SUN", def_sun, 1},
    {"VPT_ENV_MAP", def_env_map, 1},
    {"VPT_TRANSMITTANCE", def_transmittance, 1},
    {"VPT_ROOFLINE", def_roofline, 0},
    {"VPT_INJECT", def_inject, 0},
    {"VPT_HOST_PATH_SIZE", def_path_size, 0},
    {"VPT_HOST_LAUNCH_SIZE", def_launch_size, 0},
};

/* The source's first lines: the config's canonical text as a comment, the
 * #defines, and the #line that makes NVRTC's messages name the template's
 * lines. Returns the length written, or -1 with the message. */
static int write_defines(const VptConfig *c, int roofline, char *buf, size_t size)
{
    char canon[VPT_CONFIG_STR_MAX];
    vpt_config_format(c, canon, sizeof canon);
    const DefineInput in = {c, roofline};
    size_t n = (size_t)snprintf(buf, size, "// vptune kernel: %s\n", canon);
    for (size_t i = 0; i < sizeof kernel_defines / sizeof kernel_defines[0] && n < size; i++) {
        long long v = kernel_defines[i].value(&in);
        if (kernel_defines[i].only_when_set && v == 0) continue;
        n += (size_t)snprintf(buf + n, size - n, "#define %s %lld\n", kernel_defines[i].name, v);
    }
    if (n < size) n += (size_t)snprintf(buf + n, size - n, "#line 1 \"kernels.cu.in\"\n");
    if (n >= size) return vpt_fail("internal error: kernel defines too long");
    return (int)n;
}

static int build(const VptConfig *c, int roofline, VptKernelSource *out)
{
    memset(out, 0, sizeof *out);
    const VptEmbeddedFile *tmpl = vpt_embedded_find("kernels.cu.in");
    const VptEmbeddedFile *phys = vpt_embedded_find("physics/vpt_physics.h");
    const VptEmbeddedFile *medium = vpt_embedded_find("physics/vpt_medium.h");
    const VptEmbeddedFile *tracer = vpt_embedded_find("physics/vpt_tracer.h");
    const VptEmbeddedFile *abi = vpt_embedded_find("codegen/kernel_abi.h");
    const VptEmbeddedFile *sparse = vpt_embedded_find("physics/vpt_sparse.h");
    const VptEmbeddedFile *pnano = vpt_embedded_find("nanovdb/PNanoVDB.h");
    if (!tmpl || !phys || !medium || !tracer || !abi || !sparse || !pnano)
        return vpt_fail("internal error: kernel sources are not embedded in this build");

    char defs[1024];
    int n = write_defines(c, roofline, defs, sizeof defs);
    if (n < 0) return -1;
    out->source = vpt_malloc((size_t)n + tmpl->size + 1);
    if (!out->source) return -1;
    memcpy(out->source, defs, (size_t)n);
    memcpy(out->source + n, tmpl->data, tmpl->size + 1);

    if (roofline && c->majorant > 0)
        snprintf(out->name, sizeof out->name, "vptune_roofline_%s.cu", vpt_majorant_name(c->majorant));
    else
        snprintf(out->name, sizeof out->name, "vptune_%s.cu", roofline ? "roofline" : vpt_config_schedule_name(c));
    out->nheaders = 4;
    out->headers[0] = phys->data;
    out->include_names[0] = "vpt_physics.h";
    out->headers[1] = abi->data;
    out->include_names[1] = "kernel_abi.h";
    out->headers[2] = medium->data;
    out->include_names[2] = "vpt_medium.h";
    out->headers[3] = tracer->data;
    out->include_names[3] = "vpt_tracer.h";
    if (c->sparse) {
        out->nheaders = 8;
        out->headers[4] = sparse->data;
        out->include_names[4] = "vpt_sparse.h";
        out->headers[5] = pnano->data;
        out->include_names[5] = "nanovdb/PNanoVDB.h";
        out->headers[6] = nvrtc_stdint_h;
        out->include_names[6] = "stdint.h";
        out->headers[7] = nvrtc_string_h;
        out->include_names[7] = "string.h";
    }

    /* -Xptxas -v puts the register and spill report into the kept log.
     * --fmad=false: every schedule (and the CPU reference, built with
     * -ffp-contract=off) evaluates the physics with the same roundings, so
     * all variants trace bit-identical paths; see vpt_physics.h.
     * --prec-div=false --prec-sqrt=false: divisions and square roots (ray
     * setup, normalisations, the boundary's GGX and Fresnel sampling) within
     * 2 ulp instead of correctly rounded, one instruction sequence each
     * without the IEEE slow-path call, so still the same in every schedule;
     * the CPU reference agrees statistically, as it does with the GPU's
     * approximate log and sincos. */
    int k = 0;
    snprintf(out->option_buf[k++], sizeof out->option_buf[0], "--fmad=false");
    snprintf(out->option_buf[k++], sizeof out->option_buf[0], "--prec-div=false");
    snprintf(out->option_buf[k++], sizeof out->option_buf[0], "--prec-sqrt=false");
    snprintf(out->option_buf[k++], sizeof out->option_buf[0], "-lineinfo");
    snprintf(out->option_buf[k++], sizeof out->option_buf[0], "--ptxas-options=-v");
    if (c->maxrregcount > 0)
        snprintf(out->option_buf[k++], sizeof out->option_buf[0], "--maxrregcount=%d", c->maxrregcount);
    /* volume=sparse: PNanoVDB's plain C functions become device functions
     * (physics/vpt_sparse.h); every function of the template says its space */
    if (c->sparse) snprintf(out->option_buf[k++], sizeof out->option_buf[0], "-default-device");
    out->noptions = k;
    for (int i = 0; i < k; i++) out->options[i] = out->option_buf[i];

    if (roofline) {
        out->nkernels = 1;
        out->kernels[0] = "vpt_roofline";
    } else if (c->kernels == VPT_KERNELS_MULTI) {
        out->nkernels = 2;
        out->kernels[0] = "vpt_mk_start";
        out->kernels[1] = "vpt_mk_extend";
    } else {
        out->nkernels = 1;
        out->kernels[0] = "vpt_render";
    }
    out->dynamic_smem = !roofline && c->kernels == VPT_KERNELS_SINGLE && c->reorder != VPT_REORDER_NONE
                            ? (size_t)c->block * (size_t)c->ppt * path_size(c)
                            : 0;
    return 0;
}

int vpt_kernel_source_build(const VptConfig *c, VptKernelSource *out)
{
    if (vpt_config_check(c)) {
        memset(out, 0, sizeof *out);
        return -1;
    }
    return build(c, 0, out);
}

int vpt_kernel_source_build_roofline(int block, int majorant, VptKernelSource *out)
{
    VptConfig c = vpt_config_default();
    c.block = block;
    if (majorant != 0) {
        /* the grid probe's batches take the global probe's pairs of steps
         * (kernels.cu.in); the global probe's source stays as it always was;
         * the skip's probe is the global one's loop with its jumps */
        c.majorant = majorant;
        c.lookahead = 2;
        if (vpt_config_check(&c)) {
            memset(out, 0, sizeof *out);
            vpt_error_prefix("the roofline probe of majorant cells %d", majorant);
            return -1;
        }
    }
    return build(&c, 1, out);
}

void vpt_kernel_source_free(VptKernelSource *ks)
{
    if (!ks) return;
    free(ks->source);
    ks->source = NULL;
}
