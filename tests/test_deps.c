/* scripts/deps.sh, the build's package check, with the system simulated:
 * fake dpkg-query, id, sudo and apt-get early in PATH (nothing is installed
 * or removed for real). A missing package is installed with apt-get when
 * running as root or with passwordless sudo, else the one message names the
 * exact apt-get line; and make stops before compiling anything. */
#include "tests/harness/test.h"
#include "tests/test_tools.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char out[1 << 16];

static int sh(const char *cmd)
{
    int st = vpt_test_sh(cmd, out, sizeof out);
    REQUIRE(st != -2);
    return st;
}

static void write_script(const char *dir, const char *name, const char *body)
{
    char path[700];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    REQUIRE(f);
    fprintf(f, "#!/bin/sh\n%s\n", body);
    fclose(f);
    REQUIRE(chmod(path, 0755) == 0);
}

/* A fake system in <tmp>/fake: $FAKE_MISSING are not installed, id -u says
 * $FAKE_UID, sudo works when $FAKE_SUDO=1, apt-get logs its arguments to
 * <tmp>/apt.log and fails when $FAKE_APT_FAILS=1. */
static const char *fake_system(void)
{
    static char dir[600];
    snprintf(dir, sizeof dir, "%s/fake", vpt_test_tmpdir());
    mkdir(dir, 0700);
    write_script(dir, "dpkg-query",
                 "for pkg; do :; done; for m in $FAKE_MISSING; do [ \"$m\" = \"$pkg\" ] && { printf 'unknown ok not-installed'; "
                 "exit 0; }; done; printf 'install ok installed'");
    write_script(dir, "id", "if [ \"$1\" = -u ]; then echo \"$FAKE_UID\"; else exec /usr/bin/id \"$@\"; fi");
    write_script(dir, "sudo", "[ \"$FAKE_SUDO\" = 1 ] || exit 1; [ \"$1\" = -n ] && shift; exec \"$@\"");
    write_script(dir, "apt-get", "echo \"apt-get $*\" >> \"$FAKE_LOG\"; [ \"$FAKE_APT_FAILS\" = 1 ] && exit 100; exit 0");
    return dir;
}

static int run_deps(const char *env)
{
    char cmd[4096], log[700];
    snprintf(log, sizeof log, "%s/apt.log", vpt_test_tmpdir());
    unlink(log);
    snprintf(cmd, sizeof cmd, "env PATH=%s:$PATH FAKE_LOG=%s FAKE_UID=1000 FAKE_SUDO=0 FAKE_MISSING= %s sh scripts/deps.sh",
             fake_system(), log, env);
    return sh(cmd);
}

static const char *apt_log(void)
{
    static char text[4096];
    char path[700];
    snprintf(path, sizeof path, "%s/apt.log", vpt_test_tmpdir());
    text[0] = '\0';
    FILE *f = fopen(path, "r");
    if (f) {
        size_t n = fread(text, 1, sizeof text - 1, f);
        text[n] = '\0';
        fclose(f);
    }
    return text;
}

TEST(deps_check_installs_or_names_the_apt_line)
{
    if (access("scripts/deps.sh", R_OK) != 0) SKIP("run the tests from the repository root");
    /* everything there: silent */
    CHECK_EQ_INT(run_deps(""), 0);
    CHECK_MSG(out[0] == '\0', "said: %s", out);
    CHECK_MSG(apt_log()[0] == '\0', "ran apt-get: %s", apt_log());
    /* a user without sudo: one message, the exact line, nothing run */
    CHECK_EQ_INT(run_deps("FAKE_MISSING='libjansson-dev libgdcm-dev'"), 1);
    CHECK_STR_CONTAINS(out, "sudo apt-get install -y libjansson-dev libgdcm-dev");
    CHECK_MSG(strchr(out, '\n') == strrchr(out, '\n'), "more than one line: %s", out);
    CHECK_MSG(apt_log()[0] == '\0', "ran apt-get: %s", apt_log());
    /* root: installs exactly the missing ones, saying so in one line */
    CHECK_EQ_INT(run_deps("FAKE_UID=0 FAKE_MISSING=libjansson-dev"), 0);
    CHECK_STR_CONTAINS(out, "installing the missing packages (libjansson-dev) with apt-get");
    CHECK_STR_CONTAINS(apt_log(), "apt-get update -qq\napt-get install -y -qq libjansson-dev\n");
    /* passwordless sudo: the same through sudo */
    CHECK_EQ_INT(run_deps("FAKE_SUDO=1 FAKE_MISSING=libpng-dev"), 0);
    CHECK_STR_CONTAINS(out, "with sudo apt-get");
    CHECK_STR_CONTAINS(apt_log(), "apt-get install -y -qq libpng-dev");
    /* apt-get fails: the line to run by hand */
    CHECK_EQ_INT(run_deps("FAKE_UID=0 FAKE_APT_FAILS=1 FAKE_MISSING=zlib1g-dev"), 1);
    CHECK_STR_CONTAINS(out, "apt-get install -y zlib1g-dev' failed");
    /* installing forbidden */
    CHECK_EQ_INT(run_deps("FAKE_UID=0 VPT_DEPS_NO_INSTALL=1 FAKE_MISSING=libssl-dev"), 1);
    CHECK_STR_CONTAINS(out, "install them with: sudo apt-get install -y libssl-dev");
    CHECK_MSG(apt_log()[0] == '\0', "ran apt-get: %s", apt_log());
}

TEST(deps_check_stops_make_before_compiling)
{
    if (access("Makefile", R_OK) != 0 || access("scripts/deps.sh", R_OK) != 0)
        SKIP("run the tests from the repository root");
    if (system("make --version >/dev/null 2>&1") != 0) SKIP("make is not installed");
    const char *tmp = vpt_test_tmpdir();
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "env PATH=%s:$PATH FAKE_LOG=%s/apt.log FAKE_UID=1000 FAKE_SUDO=0 FAKE_MISSING=libexpat1-dev "
             "make BUILD=%s/build BIN=%s/bin all",
             fake_system(), tmp, tmp, tmp);
    int rc = sh(cmd);
    CHECK_MSG(rc != 0, "make went on: %s", out);
    CHECK_STR_CONTAINS(out, "sudo apt-get install -y libexpat1-dev");
    CHECK_MSG(!strstr(out, " -c "), "make compiled something first: %s", out);
    char obj[700];
    snprintf(obj, sizeof obj, "%s/build/obj", tmp);
    CHECK_MSG(access(obj, F_OK) != 0, "%s exists: something was compiled", obj);
}
