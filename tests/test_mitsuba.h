/* Helpers of the Mitsuba interoperability tests (test_mitsuba.c: export
 * and round trips; test_mitsuba_import.c: reading scene files, the Python
 * side); not a test file itself. */
#ifndef VPT_TESTS_TEST_MITSUBA_H
#define VPT_TESTS_TEST_MITSUBA_H

#include "tests/harness/test.h"

#include <stdio.h>
#include <string.h>

/* "<the test's scratch folder>/<name>" in buf. */
static inline const char *tmp(char *buf, size_t n, const char *name)
{
    snprintf(buf, n, "%s/%s", vpt_test_tmpdir(), name);
    return buf;
}

static inline void write_text(const char *path, const char *text)
{
    FILE *fp = fopen(path, "w");
    REQUIRE_MSG(fp, "cannot write %s", path);
    fputs(text, fp);
    fclose(fp);
}

/* out = in with every `from` replaced by `to` (in may be out). */
static inline void replace_all(char *out, size_t n, const char *in, const char *from, const char *to)
{
    static char buf[16384];
    size_t o = 0, lf = strlen(from), lt = strlen(to);
    for (const char *p = in; *p;) {
        if (!strncmp(p, from, lf)) {
            REQUIRE(o + lt < sizeof buf);
            memcpy(buf + o, to, lt);
            o += lt;
            p += lf;
        } else {
            REQUIRE(o + 1 < sizeof buf);
            buf[o++] = *p++;
        }
    }
    buf[o] = '\0';
    REQUIRE(o < n);
    memcpy(out, buf, o + 1);
}

#endif
