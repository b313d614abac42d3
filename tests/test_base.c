#include "tests/harness/test.h"

#include "base/error.h"
#include "base/file.h"
#include "base/parse.h"
#include "base/threads.h"
#include "harness/compile_pool.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

TEST(base_parse_int_strict)
{
    int v = 0;
    CHECK(vpt_parse_int("42", 1, 100, "--spp", &v) == 0 && v == 42);
    CHECK(vpt_parse_int("0", 1, 100, "--spp", &v) == -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), "--spp");
    CHECK_STR_CONTAINS(vpt_errmsg(), "[1, 100]");
    CHECK(vpt_parse_int("12x", 1, 100, "--spp", &v) == -1);
    CHECK(vpt_parse_int("", 1, 100, "--spp", &v) == -1);
    CHECK(vpt_parse_int(" 3", 1, 100, "--spp", &v) == -1);
    CHECK(vpt_parse_int("99999999999999999999", 1, 100, "--spp", &v) == -1);
}

TEST(base_parse_double_rejects_nan_inf)
{
    double d;
    CHECK(vpt_parse_double("nan", -1, 1, "g", &d) == -1);
    CHECK(vpt_parse_double("inf", -1e9, 1e9, "g", &d) == -1);
    CHECK(vpt_parse_double("0.5", -1, 1, "g", &d) == 0 && d == 0.5);
    CHECK(vpt_parse_double("1.5", -1, 1, "g", &d) == -1);
}

TEST(base_parse_vec3_and_duration)
{
    float v[3];
    CHECK(vpt_parse_vec3("1,2.5,-3", ',', "--dims", v) == 0 && v[0] == 1 && v[1] == 2.5f && v[2] == -3);
    CHECK(vpt_parse_vec3("1 2 3", ' ', "DimSize", v) == 0 && v[2] == 3);
    CHECK(vpt_parse_vec3("1,2", ',', "--dims", v) == -1);
    CHECK(vpt_parse_vec3("1,2,3,4", ',', "--dims", v) == -1);
    double s;
    CHECK(vpt_parse_duration("90s", "--budget", &s) == 0 && s == 90);
    CHECK(vpt_parse_duration("2m", "--budget", &s) == 0 && s == 120);
    CHECK(vpt_parse_duration("500ms", "--budget", &s) == 0 && s == 0.5);
    CHECK(vpt_parse_duration("-1s", "--budget", &s) == -1);
    CHECK(vpt_parse_duration("5 parsecs", "--budget", &s) == -1);
}

TEST(base_outfile_commit_and_abort)
{
    char path[600];
    snprintf(path, sizeof path, "%s/out.txt", vpt_test_tmpdir());
    VptOutFile *f = vpt_outfile_open(path);
    REQUIRE(f);
    fputs("partial", vpt_outfile_stream(f));
    CHECK(access(path, F_OK) != 0); /* not visible before commit */
    vpt_outfile_abort(f);
    CHECK(access(path, F_OK) != 0);
    CHECK(vpt_write_file_atomic(path, "whole", 5) == 0);
    char *data;
    size_t n;
    REQUIRE(vpt_read_file(path, 100, &data, &n) == 0);
    CHECK(n == 5 && memcmp(data, "whole", 5) == 0);
    free(data);
    CHECK(vpt_read_file(path, 3, &data, &n) == -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), "out.txt");
}

TEST(base_outfile_unwritable_dir_reports_path)
{
    CHECK(vpt_outfile_open("/nonexistent-dir/x.png") == NULL);
    CHECK_STR_CONTAINS(vpt_errmsg(), "/nonexistent-dir/x.png");
}

#include <sys/stat.h>

TEST_TIMEOUT(base_read_file_refuses_a_fifo_without_hanging, 10)
{
    char path[600];
    snprintf(path, sizeof path, "%s/fifo", vpt_test_tmpdir());
    REQUIRE(mkfifo(path, 0600) == 0);
    char *data;
    size_t n;
    CHECK(vpt_read_file(path, 100, &data, &n) == -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), "not a regular file");
}

static int returns_error_number(int e) { return e; }

TEST(base_sys_try_names_call_place_and_errno)
{
    /* -1 with errno: the call as written, file:line, the errno's name. */
    CHECK(VPT_SYS_TRY(close, -1) == -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), "close(-1) failed at tests/test_base.c:");
    CHECK_STR_CONTAINS(vpt_errmsg(), ": EBADF (Bad file descriptor)");
    int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    REQUIRE(fd >= 0);
    vpt_error_clear();
    CHECK(VPT_SYS_TRY(close, fd) == 0);
    CHECK(vpt_errmsg()[0] == '\0'); /* success leaves the message alone */
    /* Calls that return the error number (posix_spawn, pthread_*). */
    CHECK(VPT_ERRNO_TRY(returns_error_number, EAGAIN) == -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), "returns_error_number(EAGAIN) failed at tests/test_base.c:");
    CHECK_STR_CONTAINS(vpt_errmsg(), ": EAGAIN (Resource temporarily unavailable)");
    CHECK(VPT_ERRNO_TRY(returns_error_number, 0) == 0);
    errno = ENOENT;
    CHECK(VPT_SYS_FAIL("open(x)") == -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), "open(x) failed at tests/test_base.c:");
    CHECK_STR_CONTAINS(vpt_errmsg(), "ENOENT (No such file or directory)");
    char b[32];
    CHECK_STR_CONTAINS(vpt_errno_name(99999, b, sizeof b), "error 99999");
}

/* A process held to one core (taskset, a cpuset, a batch job's allocation)
 * counts one core, and compiles one variant at a time: the host's other
 * cores are not its to use. In a child, so the suite keeps its cores. */
TEST(base_cpu_count_follows_the_affinity)
{
    REQUIRE(vpt_cpu_count() >= 1);
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(sched_getcpu() >= 0 ? sched_getcpu() : 0, &one);
        if (sched_setaffinity(0, sizeof one, &one) != 0) _exit(3);
        unsetenv("VPT_COMPILE_JOBS");
        _exit(vpt_cpu_count() == 1 && vpt_compile_pool_default_jobs() == 1 ? 0 : 1);
    }
    int status = 0;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0,
              "held to one core, the count or the compile jobs were not 1 (child status %d)", status);
}
