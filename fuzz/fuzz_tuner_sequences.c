/* libFuzzer target: sequences files (tuner/sequences.h), another tuner's
 * evaluation orders as bin/tune-score --sequences reads them. A parse
 * either fails with a message or yields sequences whose names are non-empty
 * and terminated and whose configs are valid, canonical configs. */
#include "fuzz/fuzz_common.h"
#include "tuner/sequences.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    vpt_error_clear();
    VptSequences *s = vpt_sequences_parse("input", (const char *)data, size);
    if (!s) {
        FUZZ_CHECK_FAILED_WITH_MESSAGE("vpt_sequences_parse");
        return 0;
    }
    for (size_t i = 0; i < vpt_sequences_count(s); i++) {
        const VptSequence *q = vpt_sequences_get(s, i);
        FUZZ_CHECK(q->scene[0] && memchr(q->scene, '\0', sizeof q->scene), "sequence %zu: bad scene", i);
        FUZZ_CHECK(q->tuner[0] && memchr(q->tuner, '\0', sizeof q->tuner), "sequence %zu: bad tuner", i);
        FUZZ_CHECK(q->strategy[0] && memchr(q->strategy, '\0', sizeof q->strategy), "sequence %zu: bad strategy", i);
        FUZZ_CHECK(q->n <= VPT_SEQUENCE_MAX_CONFIGS, "sequence %zu: %zu configs", i, q->n);
        for (size_t k = 0; k < q->n; k++) {
            char text[VPT_CONFIG_STR_MAX];
            vpt_config_format(&q->configs[k], text, sizeof text);
            VptConfig back;
            FUZZ_CHECK(vpt_config_check(&q->configs[k]) == 0, "sequence %zu config %zu fails its check", i, k);
            FUZZ_CHECK(vpt_config_parse(text, &back) == 0 && vpt_config_equal(&back, &q->configs[k]),
                       "sequence %zu config %zu (%s) does not parse back", i, k, text);
        }
    }
    vpt_sequences_destroy(s);
    return 0;
}
