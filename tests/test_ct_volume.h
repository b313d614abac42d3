/* The loaded CT the GPU tests gate: the shared data's engine CT (128x128x64
 * u8) through the CT transfer, with manix's camera and boundary, so its
 * albedo is the transfer's table (post-classification, docs/albedo.md). */
#ifndef VPT_TESTS_TEST_CT_VOLUME_H
#define VPT_TESTS_TEST_CT_VOLUME_H

#include "tests/harness/test.h"

#include "base/error.h"
#include "scenes/scene.h"

#include <stdio.h>

static inline VptScene *vpt_test_ct_volume(void)
{
    const char *sd = vpt_test_shared_data();
    if (!sd) SKIP("no shared data directory (../shared/data, or $VPT_SHARED_DATA): the loaded CT is its engine_small.mhd");
    char p[600];
    snprintf(p, sizeof p, "%s/formats/engine_small.mhd", sd);
    VptVolumeSceneOptions vo = {.transfer = VPT_TF_CT, .like = "manix"};
    VptScene *s = vpt_scene_from_volume(p, &vo);
    REQUIRE_MSG(s, "%s", vpt_errmsg());
    REQUIRE(s->albedo_table && s->albedo_entries == VPT_CT_ALBEDO_ENTRIES);
    return s;
}

#endif
