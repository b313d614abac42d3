/* libFuzzer target: command-line and header values (base/parse.h). The
 * input is split at newlines into pieces, and every piece goes through every
 * parser with several ranges. Properties: a success yields a value in the
 * range asked for (finite for floating point; a positive finite duration);
 * a failure leaves a message naming the value's `what` and does not write
 * the output. */
#include "base/parse.h"
#include "fuzz/fuzz_common.h"

#include <float.h>
#include <limits.h>
#include <math.h>

#define FUZZ_WHAT "--fuzz-value"

static void fuzz_numbers_expect_failure(const char *fn, const char *piece)
{
    FUZZ_CHECK(strstr(vpt_errmsg(), FUZZ_WHAT) != NULL, "%s('%s') failed with a message not naming the value: %s",
               fn, piece, vpt_errmsg());
}

static void fuzz_numbers_piece(const char *s)
{
    static const int64_t ranges[][2] = {{INT64_MIN, INT64_MAX}, {0, 0}, {1, 1 << 24}, {-1, 1 << 20}, {-5, -1}};
    for (size_t r = 0; r < sizeof ranges / sizeof ranges[0]; r++) {
        int64_t v = 0x7777;
        vpt_error_clear();
        if (vpt_parse_i64(s, ranges[r][0], ranges[r][1], FUZZ_WHAT, &v) == 0)
            FUZZ_CHECK(v >= ranges[r][0] && v <= ranges[r][1], "i64 '%s' -> %lld", s, (long long)v);
        else {
            FUZZ_CHECK(v == 0x7777, "a failed i64 parse wrote its output");
            fuzz_numbers_expect_failure("vpt_parse_i64", s);
        }
        if (ranges[r][0] >= INT_MIN && ranges[r][1] <= INT_MAX) {
            int iv = 0x7777;
            vpt_error_clear();
            if (vpt_parse_int(s, (int)ranges[r][0], (int)ranges[r][1], FUZZ_WHAT, &iv) == 0)
                FUZZ_CHECK(iv >= ranges[r][0] && iv <= ranges[r][1], "int '%s' -> %d", s, iv);
            else {
                FUZZ_CHECK(iv == 0x7777, "a failed int parse wrote its output");
                fuzz_numbers_expect_failure("vpt_parse_int", s);
            }
        }
    }
    static const uint64_t umax[] = {UINT64_MAX, UINT32_MAX, 0, 1000};
    for (size_t r = 0; r < sizeof umax / sizeof umax[0]; r++) {
        uint64_t u = 0x7777;
        vpt_error_clear();
        if (vpt_parse_u64(s, umax[r], FUZZ_WHAT, &u) == 0) FUZZ_CHECK(u <= umax[r], "u64 '%s' -> %llu", s, (unsigned long long)u);
        else {
            FUZZ_CHECK(u == 0x7777, "a failed u64 parse wrote its output");
            fuzz_numbers_expect_failure("vpt_parse_u64", s);
        }
    }
    static const double dranges[][2] = {{-1e30, 1e30}, {0.0, 86400.0}, {1e-4, 1.0}, {-DBL_MAX, DBL_MAX}};
    for (size_t r = 0; r < sizeof dranges / sizeof dranges[0]; r++) {
        double d = 7777.0;
        vpt_error_clear();
        if (vpt_parse_double(s, dranges[r][0], dranges[r][1], FUZZ_WHAT, &d) == 0)
            FUZZ_CHECK(isfinite(d) && d >= dranges[r][0] && d <= dranges[r][1], "double '%s' -> %g", s, d);
        else {
            FUZZ_CHECK(d == 7777.0, "a failed double parse wrote its output");
            fuzz_numbers_expect_failure("vpt_parse_double", s);
        }
    }
    float f = 7777.0f;
    vpt_error_clear();
    if (vpt_parse_float(s, -FLT_MAX, FLT_MAX, FUZZ_WHAT, &f) == 0) FUZZ_CHECK(isfinite(f), "float '%s' -> %g", s, (double)f);
    else {
        FUZZ_CHECK(f == 7777.0f, "a failed float parse wrote its output");
        fuzz_numbers_expect_failure("vpt_parse_float", s);
    }
    static const char seps[] = {',', ' '};
    for (size_t k = 0; k < sizeof seps; k++) {
        float v3[3];
        vpt_error_clear();
        if (vpt_parse_vec3(s, seps[k], FUZZ_WHAT, v3) == 0)
            for (int i = 0; i < 3; i++) FUZZ_CHECK(isfinite(v3[i]), "vec3 '%s' -> [%d] = %g", s, i, (double)v3[i]);
        else fuzz_numbers_expect_failure("vpt_parse_vec3", s);
    }
    double sec = 7777.0;
    vpt_error_clear();
    if (vpt_parse_duration(s, FUZZ_WHAT, &sec) == 0)
        FUZZ_CHECK(isfinite(sec) && sec > 0.0, "duration '%s' -> %g s", s, sec);
    else {
        FUZZ_CHECK(sec == 7777.0, "a failed duration parse wrote its output");
        fuzz_numbers_expect_failure("vpt_parse_duration", s);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_strndup(data, size);
    if (!text) return 0;
    /* A command line cannot hold NUL bytes: a NUL ends the last piece. */
    for (char *p = text, *nl;; p = nl + 1) {
        nl = strchr(p, '\n');
        if (nl) *nl = '\0';
        fuzz_numbers_piece(p);
        if (!nl) break;
    }
    free(text);
    return 0;
}
