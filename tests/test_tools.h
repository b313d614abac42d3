/* Where the tests find the programs they run (bin/render, bin/bench), and
 * how they run shell commands, for the CLI tests; not a test file itself.
 *
 * $VPT_BIN_DIR when set; else the directory of the running test binary,
 * since the Makefile puts the tools beside it (bin/ for `make test`,
 * build-asan/bin/ for `make test SANITIZE=1`, so a sanitizer run tests the
 * sanitizer-built tools); else ./bin. */
#ifndef VPT_TESTS_TEST_TOOLS_H
#define VPT_TESTS_TEST_TOOLS_H

#include "tests/harness/test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* "<dir>/<tool>" in a static buffer (one per call site is enough: the
 * tests use the result at once). */
static inline const char *vpt_test_tool(const char *tool)
{
    static char path[512];
    const char *env = getenv("VPT_BIN_DIR");
    if (env && *env) {
        snprintf(path, sizeof path, "%s/%s", env, tool);
        return path;
    }
    char exe[512];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = '\0';
            if ((size_t)snprintf(path, sizeof path, "%s/%s", exe, tool) < sizeof path && access(path, X_OK) == 0)
                return path;
        }
    }
    snprintf(path, sizeof path, "./bin/%s", tool);
    return path;
}

/* Runs "cmd 2>&1" through the shell, its output (at most size - 1 bytes,
 * NUL-terminated) into out; returns the exit status, -1 when it did not exit
 * normally and -2 when it could not be started. */
static inline int vpt_test_sh(const char *cmd, char *out, size_t size)
{
    size_t len = strlen(cmd) + 8;
    char *full = malloc(len);
    if (!full) return -2;
    snprintf(full, len, "%s 2>&1", cmd);
    FILE *p = popen(full, "r");
    free(full);
    out[0] = '\0';
    if (!p) return -2;
    size_t n = fread(out, 1, size - 1, p);
    out[n] = '\0';
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The last size - 1 bytes of the file at path into buf, NUL-terminated
 * ("" when it cannot be read): a failed child's log, for a message. */
static inline const char *vpt_test_read_tail(const char *path, char *buf, size_t size)
{
    size_t len = 0;
    FILE *f = fopen(path, "r");
    if (f) {
        fseek(f, 0, SEEK_END);
        long end = ftell(f);
        fseek(f, end > (long)size - 1 ? end - (long)size + 1 : 0, SEEK_SET);
        len = fread(buf, 1, size - 1, f);
        fclose(f);
    }
    buf[len] = '\0';
    return buf;
}

/* Lays out dir/p as `make install` does, with render and one shim library
 * (PREFIX/bin/render, PREFIX/lib/vptune/<shim's file name>), and runs the
 * installed render with args, like vpt_test_sh. */
static inline int vpt_test_installed_render(const char *dir, const char *shim, const char *args, char *out,
                                            size_t size)
{
    char cmd[8192];
    snprintf(cmd, sizeof cmd,
             "mkdir -p %s/p/bin %s/p/lib/vptune && cp %s %s/p/bin/render && cp %s %s/p/lib/vptune/ && "
             "%s/p/bin/render %s",
             dir, dir, vpt_test_tool("render"), dir, shim, dir, dir, args);
    return vpt_test_sh(cmd, out, size);
}

/* "<this test's directory>/<name>" into buf (of size n). */
static inline const char *vpt_test_tmp_path(char *buf, size_t n, const char *name)
{
    snprintf(buf, n, "%s/%s", vpt_test_tmpdir(), name);
    return buf;
}

/* Writes na bytes of a, then nb of b (either may be 0) to path; stops the
 * test when it cannot. */
static inline void vpt_test_write_file(const char *path, const void *a, size_t na, const void *b, size_t nb)
{
    FILE *fp = fopen(path, "wb");
    REQUIRE_MSG(fp, "cannot write %s", path);
    if (na) REQUIRE_MSG(fwrite(a, 1, na, fp) == na, "cannot write %s", path);
    if (nb) REQUIRE_MSG(fwrite(b, 1, nb, fp) == nb, "cannot write %s", path);
    REQUIRE_MSG(fclose(fp) == 0, "cannot write %s", path);
}

#endif
