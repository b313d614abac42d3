#include "harness/variant.h"

#include "base/error.h"

#include <stdio.h>
#include <string.h>

void vpt_parse_spills(const char *log, int *stores, int *loads)
{
    *stores = *loads = -1;
    if (!log) return;
    /* ptxas -v prints one such line per entry function; take the largest. */
    for (const char *p = log; (p = strstr(p, "bytes spill stores")) != NULL; p++) {
        const char *q = p;
        while (q > log && q[-1] == ' ') q--;
        while (q > log && q[-1] >= '0' && q[-1] <= '9') q--;
        int s = 0, l = 0;
        if (sscanf(q, "%d bytes spill stores, %d bytes spill loads", &s, &l) == 2) {
            if (s > *stores) *stores = s;
            if (l > *loads) *loads = l;
        }
    }
}

VptCompileRequest vpt_compile_request_of(const VptKernelSource *ks, int arch_major, int arch_minor)
{
    return (VptCompileRequest){.name = ks->name,
                               .source = ks->source,
                               .nheaders = ks->nheaders,
                               .headers = ks->headers,
                               .include_names = ks->include_names,
                               .noptions = ks->noptions,
                               .options = ks->options,
                               .arch_major = arch_major,
                               .arch_minor = arch_minor};
}

static int attr(CUfunction f, CUfunction_attribute a, int *out)
{
    return VPT_CU_TRY(cuFuncGetAttribute, out, a, f);
}

int vpt_variant_load(const VptGpu *g, const VptConfig *c, const VptKernelSource *ks, const VptCompileResult *cr,
                     VptVariant *v, VptStatus *status)
{
    memset(v, 0, sizeof *v);
    v->config = *c;
    vpt_config_format(c, v->canon, sizeof v->canon);
    v->is_multi = c->kernels == VPT_KERNELS_MULTI;
    *status = VPT_STATUS_RUNTIME;
    if (VPT_CU_TRY(cuModuleLoadData, &v->module, cr->cubin)) return -1;
    const char *main_name = ks->kernels[ks->nkernels - 1];
    if (VPT_CU_TRY(cuModuleGetFunction, &v->render, v->module, main_name)) goto fail;
    if (ks->nkernels == 2 && VPT_CU_TRY(cuModuleGetFunction, &v->start, v->module, ks->kernels[0])) goto fail;
    int max_threads = 0;
    if (attr(v->render, CU_FUNC_ATTRIBUTE_NUM_REGS, &v->registers) ||
        attr(v->render, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, &v->local_bytes) ||
        attr(v->render, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, &v->static_smem) ||
        attr(v->render, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, &max_threads))
        goto fail;
    vpt_parse_spills(cr->log, &v->spill_stores, &v->spill_loads);
    v->dynamic_smem = ks->dynamic_smem;

    *status = VPT_STATUS_LAUNCH_LIMITS;
    if (c->block > max_threads) {
        vpt_fail("launch limits: block %d exceeds the %d threads per block this kernel allows with %d registers",
                 c->block, max_threads, v->registers);
        goto fail;
    }
    size_t smem = (size_t)v->static_smem + v->dynamic_smem;
    if (smem > (size_t)g->max_shared_per_block_optin) {
        vpt_fail("launch limits: %zu bytes of shared memory per block (block %d x ppt %d paths) exceed the %d the GPU allows",
                 smem, c->block, c->ppt, g->max_shared_per_block_optin);
        goto fail;
    }
    if (v->dynamic_smem > 48u * 1024u &&
        VPT_CU_TRY(cuFuncSetAttribute, v->render, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)v->dynamic_smem)) {
        *status = VPT_STATUS_RUNTIME;
        goto fail;
    }
    if (VPT_CU_TRY(cuOccupancyMaxActiveBlocksPerMultiprocessor, &v->blocks_per_sm, v->render, c->block,
                   v->dynamic_smem)) {
        *status = VPT_STATUS_RUNTIME;
        goto fail;
    }
    if (v->blocks_per_sm <= 0) {
        vpt_fail("launch limits: no block of %d threads fits on an SM (%d registers/thread, %zu bytes shared memory)",
                 c->block, v->registers, smem);
        goto fail;
    }
    int max_warps = g->max_threads_per_sm / 32;
    v->occupancy_theoretical = (double)(v->blocks_per_sm * (c->block / 32)) / (double)max_warps;
    *status = VPT_STATUS_OK;
    return 0;
fail:
    vpt_variant_unload(v);
    return -1;
}

void vpt_variant_unload(VptVariant *v)
{
    if (v->module) vpt_cu.cuModuleUnload(v->module);
    v->module = NULL;
    v->render = v->start = NULL;
}

unsigned vpt_variant_grid(const VptVariant *v, const VptGpu *g, unsigned long long npaths)
{
    const VptConfig *c = &v->config;
    unsigned long long per_block = (unsigned long long)c->block * (unsigned long long)c->ppt;
    if (c->regen == VPT_REGEN_NONE || c->kernels == VPT_KERNELS_MULTI) {
        unsigned long long b = (npaths + per_block - 1) / per_block;
        return (unsigned)(b ? b : 1);
    }
    /* persistent: grid blocks per SM, or all that are resident at once */
    int per_sm = c->grid > 0 ? c->grid : v->blocks_per_sm;
    unsigned long long b = (unsigned long long)per_sm * (unsigned long long)g->sm_count;
    unsigned long long need = (npaths + per_block - 1) / per_block;
    return (unsigned)(b < need ? b : need ? need : 1);
}
