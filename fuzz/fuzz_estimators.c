/* libFuzzer target: estimator lists (vpt_estimators_parse), as given to
 * tune --estimators. A parsed list has 1..VPT_ESTIMATORS_MAX distinct
 * estimators, each a majorant, density format and volume the config parser
 * takes back; a failed parse says why. */
#include "fuzz/fuzz_common.h"
#include "tuner/estimators.h"

#include <stdio.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_strndup(data, size);
    if (!text) return 0;
    VptEstimator e[VPT_ESTIMATORS_MAX];
    vpt_error_clear();
    int n = vpt_estimators_parse(text, e);
    if (n < 0) {
        FUZZ_CHECK_FAILED_WITH_MESSAGE("vpt_estimators_parse");
        free(text);
        return 0;
    }
    FUZZ_CHECK(n >= 1 && n <= VPT_ESTIMATORS_MAX, "%d estimators", n);
    for (int i = 0; i < n; i++) {
        char cfg[128];
        snprintf(cfg, sizeof cfg, "naiveSK,majorant=%s,density=%s,volume=%s", vpt_majorant_name(e[i].majorant),
                 vpt_density_name(e[i].density), vpt_volume_name(e[i].sparse));
        VptConfig c;
        FUZZ_CHECK(vpt_config_parse(cfg, &c) == 0, "estimator %d (%s) is no config: %s", i, cfg, vpt_errmsg());
        FUZZ_CHECK(c.majorant == e[i].majorant && c.density == e[i].density && c.sparse == e[i].sparse,
                   "estimator %d changed in '%s'", i, cfg);
        for (int j = 0; j < i; j++)
            FUZZ_CHECK(e[j].majorant != e[i].majorant || e[j].density != e[i].density || e[j].sparse != e[i].sparse,
                       "estimator %d repeats %d", i, j);
    }
    free(text);
    return 0;
}
