/* libFuzzer target: kernel configuration strings (vpt_config_parse), as
 * given to --config, in config files and in the tuner's cache keys. A parsed
 * config must format to its canonical text and parse back to itself; the
 * rule check must answer either way without crashing. */
#include "codegen/config.h"
#include "fuzz/fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_strndup(data, size);
    if (!text) return 0;
    VptConfig c, sentinel;
    memset(&c, 0x5a, sizeof c);
    sentinel = c;
    vpt_error_clear();
    if (vpt_config_parse(text, &c) != 0) {
        FUZZ_CHECK_FAILED_WITH_MESSAGE("vpt_config_parse");
        FUZZ_CHECK(memcmp(&c, &sentinel, sizeof c) == 0, "a failed parse wrote its output");
        free(text);
        return 0;
    }
    char canon[VPT_CONFIG_STR_MAX], again[VPT_CONFIG_STR_MAX];
    vpt_config_format(&c, canon, sizeof canon);
    FUZZ_CHECK(strlen(canon) < sizeof canon - 1, "canonical form may be cut: %s", canon);
    VptConfig d;
    FUZZ_CHECK(vpt_config_parse(canon, &d) == 0, "canonical form '%s' does not parse: %s", canon, vpt_errmsg());
    FUZZ_CHECK(vpt_config_equal(&c, &d), "'%s' parses to a different config", canon);
    vpt_config_format(&d, again, sizeof again);
    FUZZ_CHECK(strcmp(canon, again) == 0, "'%s' formats as '%s'", canon, again);
    vpt_error_clear();
    if (vpt_config_check(&c) != 0) FUZZ_CHECK_FAILED_WITH_MESSAGE("vpt_config_check");
    else FUZZ_CHECK(vpt_config_schedule_index(&c) >= 0, "'%s' passes the check but is no schedule", canon);
    FUZZ_CHECK(vpt_config_schedule_name(&c) != NULL, "no schedule name");
    free(text);
    return 0;
}
