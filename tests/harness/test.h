/* vptune's test harness: tests register themselves, run each in its own child
 * process (a crash or hang fails that test only, with its signal or timeout),
 * and the runner ends with "N passed, N failed, N skipped".
 *
 *   TEST(physics_hg_chi2) { CHECK(x > 0); CHECK_NEAR(a, b, 1e-6); }
 *   TEST_TIMEOUT(cpu_furnace, 300) { ... }      default timeout: 120 s
 *   SKIP("no GPU: %s", why);                      skip with a visible reason
 *
 * Names are "<area>_<what>"; `bin/vptune-tests furnace nvrtc` runs the tests
 * whose names contain any of the given words. A CHECK failure prints
 * file:line, the expression and the values, and marks the test failed but lets
 * it go on; REQUIRE stops the test. */
#ifndef VPT_TEST_H
#define VPT_TEST_H

#include <stdarg.h>
#include <stdio.h>

typedef void (*VptTestFn)(void);
void vpt_test_register(const char *name, VptTestFn fn, int timeout_s, const char *file);

#define TEST_TIMEOUT(name, secs)                                                   \
    static void test_##name(void);                                                 \
    __attribute__((constructor)) static void register_##name(void)                 \
    { vpt_test_register(#name, test_##name, secs, __FILE__); }                     \
    static void test_##name(void)
#define TEST(name) TEST_TIMEOUT(name, 120)

void vpt_test_fail_at(const char *file, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
_Noreturn void vpt_test_stop(void);
_Noreturn void vpt_test_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Printed under the test's name only when it fails or with -v. */
void vpt_test_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#define CHECK(cond) \
    do { if (!(cond)) vpt_test_fail_at(__FILE__, __LINE__, "CHECK(%s)", #cond); } while (0)
#define CHECK_MSG(cond, ...) \
    do { if (!(cond)) vpt_test_fail_at(__FILE__, __LINE__, __VA_ARGS__); } while (0)
#define REQUIRE(cond) \
    do { if (!(cond)) { vpt_test_fail_at(__FILE__, __LINE__, "REQUIRE(%s)", #cond); vpt_test_stop(); } } while (0)
#define REQUIRE_MSG(cond, ...) \
    do { if (!(cond)) { vpt_test_fail_at(__FILE__, __LINE__, __VA_ARGS__); vpt_test_stop(); } } while (0)
#define CHECK_EQ_INT(a, b)                                                          \
    do { long long va_ = (long long)(a), vb_ = (long long)(b);                      \
         if (va_ != vb_) vpt_test_fail_at(__FILE__, __LINE__, "%s == %s: %lld != %lld", #a, #b, va_, vb_); } while (0)
#define CHECK_NEAR(a, b, tol)                                                       \
    do { double va_ = (double)(a), vb_ = (double)(b), t_ = (double)(tol);           \
         if (!(va_ - vb_ <= t_ && vb_ - va_ <= t_))                                 \
             vpt_test_fail_at(__FILE__, __LINE__, "|%s - %s| <= %g: %.9g vs %.9g", #a, #b, t_, va_, vb_); } while (0)
#define CHECK_STR_CONTAINS(hay, needle)                                             \
    do { const char *h_ = (hay), *n_ = (needle);                                    \
         if (!h_ || !strstr(h_, n_))                                                \
             vpt_test_fail_at(__FILE__, __LINE__, "'%s' should contain '%s'", h_ ? h_ : "(null)", n_); } while (0)
#define SKIP(...) vpt_test_skip(__VA_ARGS__)

/* ../shared/data (or $VPT_SHARED_DATA), or NULL when absent. */
const char *vpt_test_shared_data(void);
/* A fresh empty directory for this test (removed after the run). */
const char *vpt_test_tmpdir(void);

#endif
