/* Codegen without a GPU: every schedule of the thesis becomes a kernel that
 * NVRTC compiles to a CUBIN for Hopper (sm_90) and Ampere (sm_80), with the
 * kernels the harness will look up, and register bounds that take effect. */
#include "tests/harness/test.h"

#include "base/error.h"
#include "codegen/config.h"
#include "codegen/kernel_abi.h"
#include "codegen/kernel_source.h"
#include "harness/nvrtc_compile.h"
#include "harness/variant.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int compile(const VptConfig *c, int major, int minor, VptCompileResult *cr)
{
    VptKernelSource ks;
    if (vpt_kernel_source_build(c, &ks)) return -1;
    VptCompileRequest r = vpt_compile_request_of(&ks, major, minor);
    int rc = vpt_nvrtc_compile(&r, cr);
    /* the kernels the harness looks up are in the image */
    for (int k = 0; rc == 0 && k < ks.nkernels; k++)
        if (!memmem(cr->cubin, cr->cubin_size, ks.kernels[k], strlen(ks.kernels[k])))
            rc = vpt_fail("kernel %s is missing from the CUBIN", ks.kernels[k]);
    vpt_kernel_source_free(&ks);
    return rc;
}

TEST_TIMEOUT(codegen_every_schedule_compiles_for_sm90_and_sm80, 600)
{
    VptConfig cs[16];
    int n = vpt_config_thesis_set(cs, 16);
    CHECK_EQ_INT(n, 9);
    static const int archs[2][2] = {{9, 0}, {8, 0}};
    for (int i = 0; i < n; i++)
        for (int a = 0; a < 2; a++) {
            VptCompileResult cr;
            int rc = compile(&cs[i], archs[a][0], archs[a][1], &cr);
            CHECK_MSG(rc == 0, "%s for sm_%d%d: %s", vpt_config_schedule_name(&cs[i]), archs[a][0], archs[a][1],
                      vpt_errmsg());
            if (rc == 0) {
                CHECK(cr.cubin_size > 4 && memcmp(cr.cubin, "\177ELF", 4) == 0);
                int st, ld;
                vpt_parse_spills(cr.log, &st, &ld);
                /* the thesis' settings compile without local-memory spills for
                 * Hopper, the target; sm_80 is only logged (the block-level
                 * schedules spill 12 bytes there with CUDA 13.0) */
                if (archs[a][0] == 9)
                    CHECK_MSG(st == 0 && ld == 0, "%s sm_90 spills %d/%d bytes", vpt_config_schedule_name(&cs[i]), st,
                              ld);
                else if (st > 0)
                    vpt_test_log("%s sm_80: %d bytes spill stores", vpt_config_schedule_name(&cs[i]), st);
            }
            vpt_compile_result_free(&cr);
        }
}

/* Cooperative flights (extend_warp) for every schedule: the warp-wide code
 * must compile wherever the schedule calls it. */
TEST_TIMEOUT(codegen_every_schedule_compiles_with_cooperative_flights, 600)
{
    VptConfig cs[16];
    int n = vpt_config_thesis_set(cs, 16);
    static const int coop[] = {1, 2, 4, 8, 16};
    for (int i = 0; i < n; i++) {
        cs[i].coop = coop[i % 5];
        cs[i].lookahead = i % 2 ? 4 : 1;
        VptCompileResult cr;
        int rc = compile(&cs[i], 9, 0, &cr);
        CHECK_MSG(rc == 0, "%s coop=%d for sm_90: %s", vpt_config_schedule_name(&cs[i]), cs[i].coop, vpt_errmsg());
        if (rc == 0) CHECK(cr.cubin_size > 4 && memcmp(cr.cubin, "\177ELF", 4) == 0);
        vpt_compile_result_free(&cr);
    }
}

/* Asynchronous flights with every free-flight estimator and the sparse
 * volume: the event rounds and the batch loop compile wherever a lane
 * steps a flight (regen thread and warp). */
TEST_TIMEOUT(codegen_asynchronous_flights_compile_with_every_estimator, 600)
{
    static const char *const texts[] = {
        "regenerationSK-thread,flights=async",
        "regenerationSK-warp,threshold=50,lookahead=4,flights=async,density=u8",
        "regenerationSK-warp,threshold=25,lookahead=2,flights=async,majorant=grid32,density=f16",
        "regenerationSK-thread,lookahead=4,flights=async,majorant=skip,density=u8",
        "regenerationSK-warp,threshold=75,flights=async,majorant=grid8,volume=sparse",
    };
    for (int i = 0; i < 5; i++) {
        VptConfig c;
        REQUIRE_MSG(vpt_config_parse(texts[i], &c) == 0, "%s", vpt_errmsg());
        VptCompileResult cr;
        int rc = compile(&c, 9, 0, &cr);
        CHECK_MSG(rc == 0, "%s for sm_90: %s", texts[i], vpt_errmsg());
        if (rc == 0) CHECK(cr.cubin_size > 4 && memcmp(cr.cubin, "\177ELF", 4) == 0);
        vpt_compile_result_free(&cr);
    }
}

/* paths=pixel with every schedule: launch_path's pixel-major order compiles
 * wherever a launch hands out path ids (single and multi kernel, the
 * regeneration levels, compaction and sorting, asynchronous flights), and
 * the define is what selects it. */
TEST_TIMEOUT(codegen_pixel_major_paths_compile_with_every_schedule, 600)
{
    static const char *const texts[] = {
        "naiveSK,paths=pixel",           "naiveMK,paths=pixel",
        "regenerationSK-thread,paths=pixel,majorant=grid32,density=u8",
        "regenerationSK-warp,threshold=50,lookahead=4,coop=4,paths=pixel",
        "streamingSK,paths=pixel",       "streamingMK,paths=pixel",
        "sortingSK,paths=pixel",         "regenerationSK-warp,flights=async,paths=pixel,majorant=skip,density=u8",
    };
    for (int i = 0; i < 8; i++) {
        VptConfig c;
        REQUIRE_MSG(vpt_config_parse(texts[i], &c) == 0, "%s", vpt_errmsg());
        VptKernelSource src;
        REQUIRE_MSG(vpt_kernel_source_build(&c, &src) == 0, "%s", vpt_errmsg());
        CHECK_STR_CONTAINS(src.source, "#define VPT_PATHS_PIXEL 1\n");
        vpt_kernel_source_free(&src);
        VptCompileResult cr;
        int rc = compile(&c, 9, 0, &cr);
        CHECK_MSG(rc == 0, "%s for sm_90: %s", texts[i], vpt_errmsg());
        if (rc == 0) CHECK(cr.cubin_size > 4 && memcmp(cr.cubin, "\177ELF", 4) == 0);
        vpt_compile_result_free(&cr);
    }
    VptConfig c = vpt_config_default();
    VptKernelSource src;
    REQUIRE(vpt_kernel_source_build(&c, &src) == 0);
    CHECK_STR_CONTAINS(src.source, "#define VPT_PATHS_PIXEL 0\n");
    vpt_kernel_source_free(&src);
}

/* volume=sparse for every schedule: PNanoVDB.h, embedded at build time,
 * compiles under NVRTC (the GPU machines have no libnanovdb-dev), with the
 * estimators it combines with. */
TEST_TIMEOUT(codegen_every_schedule_compiles_with_a_sparse_volume, 600)
{
    VptConfig cs[16];
    int n = vpt_config_thesis_set(cs, 16);
    for (int i = 0; i < n; i++) {
        cs[i].sparse = 1;
        cs[i].majorant = i % 3 == 1 ? 8 : 0;
        cs[i].lookahead = i % 2 ? 4 : 1;
        cs[i].coop = i % 4 == 3 ? 4 : 0;
        VptCompileResult cr;
        char canon[VPT_CONFIG_STR_MAX];
        vpt_config_format(&cs[i], canon, sizeof canon);
        CHECK(strstr(canon, ",volume=sparse") != NULL);
        int rc = compile(&cs[i], 9, 0, &cr);
        CHECK_MSG(rc == 0, "%s for sm_90: %s", canon, vpt_errmsg());
        if (rc == 0) CHECK(cr.cubin_size > 4 && memcmp(cr.cubin, "\177ELF", 4) == 0);
        vpt_compile_result_free(&cr);
    }
}

/* Next-event estimation toward a sun: every schedule compiles with each
 * transmittance estimator, across the majorants (global, grid, skip), with
 * a path of 80 bytes (its gathered radiance) where it moves through shared
 * memory. VPT_TRANSMITTANCE is VPT_TR_* (delta 0, ratio 1, residual 2). */
TEST_TIMEOUT(codegen_every_schedule_compiles_with_every_transmittance, 900)
{
    VptConfig cs[16];
    int n = vpt_config_thesis_set(cs, 16);
    static const int majorants[3] = {0, 8, -1};
    for (int i = 0; i < n; i++) {
        cs[i].transmittance = (VptTransmittance)(1 + i % 3);
        cs[i].majorant = majorants[(i / 3) % 3];
        cs[i].lookahead = i % 2 ? 2 : 1;
        cs[i].coop = i % 4 == 3 && cs[i].kernels == VPT_KERNELS_SINGLE ? 4 : 0;
        char canon[VPT_CONFIG_STR_MAX];
        vpt_config_format(&cs[i], canon, sizeof canon);
        CHECK(strstr(canon, ",transmittance=") != NULL);
        VptKernelSource ks;
        REQUIRE_MSG(vpt_kernel_source_build(&cs[i], &ks) == 0, "%s: %s", canon, vpt_errmsg());
        CHECK_STR_CONTAINS(ks.source, "#define VPT_SUN 1\n");
        char want[64];
        snprintf(want, sizeof want, "#define VPT_TRANSMITTANCE %d\n", i % 3);
        CHECK_STR_CONTAINS(ks.source, want);
        snprintf(want, sizeof want, "#define VPT_HOST_PATH_SIZE %zu\n", sizeof(VptPath));
        CHECK_STR_CONTAINS(ks.source, want);
        if (cs[i].reorder != VPT_REORDER_NONE && cs[i].kernels == VPT_KERNELS_SINGLE)
            CHECK_EQ_INT((long long)ks.dynamic_smem, (long long)cs[i].block * cs[i].ppt * (long long)sizeof(VptPath));
        vpt_kernel_source_free(&ks);
        VptCompileResult cr;
        int rc = compile(&cs[i], 9, 0, &cr);
        CHECK_MSG(rc == 0, "%s for sm_90: %s", canon, vpt_errmsg());
        vpt_compile_result_free(&cr);
    }
}

/* Next-event estimation toward an environment map, alone or beside a sun:
 * every schedule compiles with each transmittance estimator across the
 * majorants, VPT_ENV_MAP 1 in its source (and VPT_SUN 1 only with a sun), a
 * path of 80 bytes; and the source differs from the sun-only kernel's of
 * the same config, so their cubins never share a cache entry. */
TEST_TIMEOUT(codegen_every_schedule_compiles_with_an_env_map, 900)
{
    VptConfig cs[16];
    int n = vpt_config_thesis_set(cs, 16);
    static const int majorants[3] = {0, 8, -1};
    for (int i = 0; i < n; i++) {
        cs[i].transmittance = (VptTransmittance)(1 + i % 3);
        cs[i].majorant = majorants[(i / 3) % 3];
        cs[i].lookahead = i % 2 ? 2 : 1;
        cs[i].coop = i % 4 == 3 && cs[i].kernels == VPT_KERNELS_SINGLE ? 4 : 0;
        const int sun = i % 2;
        VptConfig c = cs[i];
        vpt_config_for_scene(&c, sun, 1);
        CHECK(c.nee_lights == (sun ? VPT_NEE_SUN_AND_ENV_MAP : VPT_NEE_ENV_MAP));
        CHECK(c.transmittance == cs[i].transmittance);
        char canon[VPT_CONFIG_STR_MAX], sun_canon[VPT_CONFIG_STR_MAX];
        vpt_config_format(&c, canon, sizeof canon);
        vpt_config_format(&cs[i], sun_canon, sizeof sun_canon);
        CHECK(!strcmp(canon, sun_canon)); /* the lights are the scene's, not the text's */
        VptKernelSource ks, sun_ks;
        REQUIRE_MSG(vpt_kernel_source_build(&c, &ks) == 0, "%s: %s", canon, vpt_errmsg());
        REQUIRE(vpt_kernel_source_build(&cs[i], &sun_ks) == 0);
        CHECK_STR_CONTAINS(ks.source, "#define VPT_ENV_MAP 1\n");
        CHECK_MSG((strstr(ks.source, "#define VPT_SUN 1\n") != NULL) == sun, "%s: VPT_SUN with sun %d", canon, sun);
        CHECK(strstr(sun_ks.source, "VPT_ENV_MAP 1") == NULL);
        CHECK(strcmp(ks.source, sun_ks.source) != 0);
        char want[64];
        snprintf(want, sizeof want, "#define VPT_HOST_PATH_SIZE %zu\n", sizeof(VptPath));
        CHECK_STR_CONTAINS(ks.source, want);
        vpt_kernel_source_free(&ks);
        vpt_kernel_source_free(&sun_ks);
        VptCompileResult cr;
        int rc = compile(&c, 9, 0, &cr);
        CHECK_MSG(rc == 0, "%s (env map, sun %d) for sm_90: %s", canon, sun, vpt_errmsg());
        vpt_compile_result_free(&cr);
    }
    /* a scene without either light drops the estimator */
    VptConfig c = cs[0];
    vpt_config_for_scene(&c, 0, 0);
    CHECK(c.transmittance == VPT_TRANSMITTANCE_NONE);
}

TEST_TIMEOUT(codegen_register_bound_takes_effect, 300)
{
    /* __launch_bounds__ would silently override --maxrregcount: the bound
     * must show in the ptxas report. */
    VptConfig c;
    REQUIRE(vpt_config_parse("regenerationSK-thread,maxrregcount=40", &c) == 0);
    VptCompileResult cr;
    REQUIRE_MSG(compile(&c, 9, 0, &cr) == 0, "%s", vpt_errmsg());
    CHECK_STR_CONTAINS(cr.log, "Used 40 registers");
    vpt_compile_result_free(&cr);
}

TEST(codegen_source_carries_the_config)
{
    VptConfig c;
    REQUIRE(vpt_config_parse("streamingSK,ppt=2,block=128,lookahead=4,maxrregcount=64", &c) == 0);
    VptKernelSource ks;
    REQUIRE(vpt_kernel_source_build(&c, &ks) == 0);
    CHECK_STR_CONTAINS(ks.source, "#define VPT_REGEN 3");
    CHECK_STR_CONTAINS(ks.source, "#define VPT_REORDER 1");
    CHECK_STR_CONTAINS(ks.source, "#define VPT_PPT 2");
    CHECK_STR_CONTAINS(ks.source, "#define VPT_BLOCK 128");
    CHECK_STR_CONTAINS(ks.source, "#define VPT_LOOKAHEAD 4");
    CHECK_STR_CONTAINS(ks.source, "#define VPT_MAXRREG 64");
    CHECK_EQ_INT((long long)ks.dynamic_smem, 128 * 2 * 64); /* the block's path pool */
    int fmad = 0;
    for (int i = 0; i < ks.noptions; i++) fmad |= !strcmp(ks.options[i], "--fmad=false");
    CHECK(fmad);
    vpt_kernel_source_free(&ks);
    /* a config that breaks a rule produces no source */
    REQUIRE(vpt_config_parse("regen=warp,reorder=compact", &c) == 0);
    CHECK(vpt_kernel_source_build(&c, &ks) == -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), "reorder=compact needs regen=block");
}

/* The exact text before the template, for two configs: the cubin cache's
 * keys hash the whole source (harness/cubin_cache.h), so a change to the
 * defines' table (a row, its order, its format) must show here, not as
 * every cached kernel silently compiling again. The struct sizes come from
 * kernel_abi.h, which the template checks on its side. */
TEST(codegen_defines_text_is_pinned)
{
    static const struct {
        const char *config, *defines;
    } pins[] = {
        {"regenerationSK-thread",
         "// vptune kernel: regen=thread,reorder=none,kernels=single,maxrregcount=0,ppt=1,block=256,grid=0,"
         "threshold=0,sortkey=position,lookahead=1\n"
         "#define VPT_REGEN 1\n#define VPT_REORDER 0\n#define VPT_MULTI 0\n#define VPT_PPT 1\n#define VPT_BLOCK 256\n"
         "#define VPT_THRESHOLD 0\n#define VPT_FLIGHTS_ASYNC 0\n#define VPT_PATHS_PIXEL 0\n#define VPT_SORTKEY 0\n"
         "#define VPT_MAXRREG 0\n#define VPT_LOOKAHEAD 1\n#define VPT_COOP 0\n#define VPT_MAJORANT_GRID 0\n"
         "#define VPT_MAJORANT_SKIP 0\n#define VPT_ROOFLINE 0\n#define VPT_INJECT 0\n"},
        {"streamingMK,ppt=2,paths=pixel,volume=sparse,majorant=grid16,density=u8,lookahead=4,maxrregcount=64",
         "// vptune kernel: regen=device,reorder=compact,kernels=multi,maxrregcount=64,ppt=2,block=256,grid=0,"
         "threshold=0,sortkey=position,lookahead=4,paths=pixel,majorant=grid16,density=u8,volume=sparse\n"
         "#define VPT_REGEN 4\n#define VPT_REORDER 1\n#define VPT_MULTI 1\n#define VPT_PPT 2\n#define VPT_BLOCK 256\n"
         "#define VPT_THRESHOLD 0\n#define VPT_FLIGHTS_ASYNC 0\n#define VPT_PATHS_PIXEL 1\n#define VPT_SORTKEY 0\n"
         "#define VPT_MAXRREG 64\n#define VPT_LOOKAHEAD 4\n#define VPT_COOP 0\n#define VPT_MAJORANT_GRID 1\n"
         "#define VPT_MAJORANT_SKIP 0\n#define VPT_SPARSE 1\n#define VPT_ROOFLINE 0\n#define VPT_INJECT 0\n"},
    };
    for (size_t i = 0; i < sizeof pins / sizeof pins[0]; i++) {
        VptConfig c;
        REQUIRE_MSG(vpt_config_parse(pins[i].config, &c) == 0, "%s", vpt_errmsg());
        VptKernelSource ks;
        REQUIRE_MSG(vpt_kernel_source_build(&c, &ks) == 0, "%s", vpt_errmsg());
        char want[2048];
        snprintf(want, sizeof want,
                 "%s#define VPT_HOST_PATH_SIZE %zu\n#define VPT_HOST_LAUNCH_SIZE %zu\n#line 1 \"kernels.cu.in\"\n",
                 pins[i].defines, offsetof(VptPath, L), sizeof(VptLaunch)); /* no sun: a path without L */
        const size_t n = strlen(want);
        CHECK_MSG(strncmp(ks.source, want, n) == 0, "%s: the source starts\n%.*s\nnot\n%s", pins[i].config, (int)n,
                  ks.source, want);
        vpt_kernel_source_free(&ks);
    }
}

/* The roofline probe, against the global majorant or walking a majorant
 * grid (kernels.cu.in, vpt_roofline): the grid variant is compiled with
 * VPT_MAJORANT_GRID 1 and the pairs of steps of the global one (lookahead 2),
 * the global variant's source is what it was before the grid probe existed
 * (the default config, majorant 0), and a cell size no config has is an
 * error with a reason. */
TEST(codegen_roofline_source_carries_the_majorant)
{
    VptKernelSource ks;
    REQUIRE_MSG(vpt_kernel_source_build_roofline(256, 0, &ks) == 0, "%s", vpt_errmsg());
    CHECK_STR_CONTAINS(ks.source, "#define VPT_ROOFLINE 1");
    CHECK_STR_CONTAINS(ks.source, "#define VPT_MAJORANT_GRID 0");
    CHECK_STR_CONTAINS(ks.source, "#define VPT_LOOKAHEAD 1");
    CHECK_STR_CONTAINS(ks.name, "vptune_roofline.cu");
    CHECK_EQ_INT(ks.nkernels, 1);
    CHECK(!strcmp(ks.kernels[0], "vpt_roofline"));
    vpt_kernel_source_free(&ks);

    REQUIRE_MSG(vpt_kernel_source_build_roofline(256, 8, &ks) == 0, "%s", vpt_errmsg());
    CHECK_STR_CONTAINS(ks.source, "#define VPT_ROOFLINE 1");
    CHECK_STR_CONTAINS(ks.source, "#define VPT_MAJORANT_GRID 1");
    CHECK_STR_CONTAINS(ks.source, "#define VPT_LOOKAHEAD 2");
    CHECK_STR_CONTAINS(ks.source, "#define VPT_BLOCK 256");
    CHECK_STR_CONTAINS(ks.source, "majorant=grid8");
    CHECK_STR_CONTAINS(ks.name, "vptune_roofline_grid8.cu");
    CHECK(!strcmp(ks.kernels[0], "vpt_roofline"));
    vpt_kernel_source_free(&ks);

    /* the skip's probe: the global loop with its jumps over its texture */
    REQUIRE(vpt_kernel_source_build_roofline(256, -1, &ks) == 0);
    CHECK_STR_CONTAINS(ks.source, "#define VPT_MAJORANT_GRID 0");
    CHECK_STR_CONTAINS(ks.source, "#define VPT_MAJORANT_SKIP 1");
    CHECK_STR_CONTAINS(ks.source, "majorant=skip");
    vpt_kernel_source_free(&ks);

    CHECK(vpt_kernel_source_build_roofline(256, 6, &ks) == -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), "the roofline probe of majorant cells 6");
    CHECK_STR_CONTAINS(vpt_errmsg(), "majorant 6 is not one of");
    CHECK(ks.source == NULL);
}

TEST_TIMEOUT(codegen_roofline_probes_compile_for_sm90, 300)
{
    static const int cells[] = {0, 4, 32, -1}; /* -1: the skip's probe */
    for (size_t i = 0; i < sizeof cells / sizeof cells[0]; i++) {
        VptKernelSource ks;
        REQUIRE_MSG(vpt_kernel_source_build_roofline(256, cells[i], &ks) == 0, "%s", vpt_errmsg());
        VptCompileRequest r = vpt_compile_request_of(&ks, 9, 0);
        VptCompileResult cr;
        int rc = vpt_nvrtc_compile(&r, &cr);
        CHECK_MSG(rc == 0, "majorant cells %d: %s", cells[i], vpt_errmsg());
        if (rc == 0) {
            CHECK_MSG(memmem(cr.cubin, cr.cubin_size, "vpt_roofline", strlen("vpt_roofline")) != NULL,
                      "majorant cells %d: vpt_roofline is missing from the CUBIN", cells[i]);
            /* the walk's types stay in registers (vpt_tracer.h): no local memory */
            CHECK_MSG(strstr(cr.log, "0 bytes stack frame, 0 bytes spill stores") != NULL,
                      "majorant cells %d: ptxas says %s", cells[i], cr.log);
            vpt_compile_result_free(&cr);
        }
        vpt_kernel_source_free(&ks);
    }
}
