/* libFuzzer target: GPU selections (vpt_gpus_parse), as given to tune and
 * bench --gpus. A parsed selection is "all" or 1..VPT_GPUS_MAX distinct
 * indices in range; it formats to text that parses back to the same
 * selection; resolved against any number of GPUs it gives that many (all)
 * or its own indices, each below the count, or fails with a message. A
 * failed parse says why. */
#include "fuzz/fuzz_common.h"
#include "cli/gpus_arg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_strndup(data, size);
    if (!text) return 0;
    VptGpuSelection g, back;
    vpt_error_clear();
    if (vpt_gpus_parse(text, &g)) {
        FUZZ_CHECK_FAILED_WITH_MESSAGE("vpt_gpus_parse");
        free(text);
        return 0;
    }
    FUZZ_CHECK(g.given, "parsed '%s' without given", text);
    FUZZ_CHECK(g.all || (g.n >= 1 && g.n <= VPT_GPUS_MAX), "%d GPUs", g.n);
    for (int i = 0; !g.all && i < g.n; i++) {
        FUZZ_CHECK(g.index[i] >= 0 && g.index[i] < VPT_GPUS_MAX, "GPU %d", g.index[i]);
        for (int j = 0; j < i; j++) FUZZ_CHECK(g.index[i] != g.index[j], "GPU %d twice", g.index[i]);
    }
    char formatted[VPT_GPUS_MAX * 4 + 8];
    vpt_gpus_format(&g, formatted, (int)sizeof formatted);
    FUZZ_CHECK(vpt_gpus_parse(formatted, &back) == 0, "'%s' does not parse back: %s", formatted, vpt_errmsg());
    FUZZ_CHECK(back.all == g.all && back.n == g.n && memcmp(back.index, g.index, sizeof g.index) == 0,
               "'%s' parses back to another selection", formatted);
    for (int available = 0; available <= VPT_GPUS_MAX; available += 7) {
        int dev[VPT_GPUS_MAX];
        vpt_error_clear();
        int n = vpt_gpus_resolve(&g, available, dev);
        if (n < 0) {
            FUZZ_CHECK_FAILED_WITH_MESSAGE("vpt_gpus_resolve");
            continue;
        }
        FUZZ_CHECK(n == (g.all ? available : g.n), "%d GPUs of %d", n, available);
        for (int i = 0; i < n; i++) FUZZ_CHECK(dev[i] >= 0 && dev[i] < available, "GPU %d of %d", dev[i], available);
    }
    free(text);
    return 0;
}
