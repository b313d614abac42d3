/* The C side of the differential fuzzing of config texts (used by
 * fuzz/fuzz_experiment_spec.py): reads one config text per line on stdin and
 * answers each on stdout, in the words of tests/test_experiments.c:
 *   "error"               vpt_config_parse rejects it
 *   "ok <canonical>"      it parses and passes vpt_config_check
 *   "invalid <canonical>" it parses and breaks a rule
 * Lines are at most 64 KiB; a longer one is answered "error" as a whole. */
#include "codegen/config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void)
{
    static char line[1 << 16];
    while (fgets(line, sizeof line, stdin)) {
        size_t n = strlen(line);
        int whole = n > 0 && line[n - 1] == '\n';
        if (whole) line[--n] = '\0';
        if (!whole && !feof(stdin)) {
            int ch;
            while ((ch = getchar()) != EOF && ch != '\n') {}
            puts("error");
            continue;
        }
        VptConfig c;
        if (vpt_config_parse(line, &c) != 0) {
            puts("error");
            continue;
        }
        char canon[VPT_CONFIG_STR_MAX];
        vpt_config_format(&c, canon, sizeof canon);
        printf("%s %s\n", vpt_config_check(&c) == 0 ? "ok" : "invalid", canon);
    }
    return fflush(stdout) == 0 ? 0 : 1;
}
