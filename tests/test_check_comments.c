/* Source comments carry no commit hash and no measured time or speedup
 * (scripts/check_comments.py): the checker's own cases, a file written to
 * break the rule (the checker must fail on it, naming file:line), and every
 * tracked source file of the checkout. History and evidence belong in
 * docs/decisions/. Skipped (with the reason) without python3 or outside the
 * repository root. */
#include "tests/harness/test.h"
#include "tests/test_tools.h"

#include <stdlib.h>
#include <string.h>

/* Runs scripts/check_comments.py with args; its exit status, its output in out. */
static int check_comments(const char *args, char *out, size_t size)
{
    if (access("scripts/check_comments.py", R_OK) != 0)
        SKIP("scripts/check_comments.py not found: run the tests from the repository root");
    if (system("python3 -c '' >/dev/null 2>&1") != 0) SKIP("python3 is not available");
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "python3 scripts/check_comments.py %s", args);
    int rc = vpt_test_sh(cmd, out, size);
    vpt_test_log("%s: exit %d\n%s", cmd, rc, out);
    return rc;
}

TEST(check_comments_self_test)
{
    static char out[16384];
    int rc = check_comments("--self-test", out, sizeof out);
    CHECK_MSG(rc == 0, "exit %d\n%s", rc, out);
    CHECK_MSG(strstr(out, "0 of ") != NULL, "%s", out);
}

TEST(check_comments_fails_on_history)
{
    static char out[16384];
    char path[4096], args[4200];
    static const char src[] = "/* The contract. */\n"
                              "int f(void); /* a 90 s budget */\n"
                              "/* Chosen at 5df462c, where it took 8.6 s: 1.3x faster. */\n";
    vpt_test_write_file(vpt_test_tmp_path(path, sizeof path, "history.c"), src, sizeof src - 1, NULL, 0);
    snprintf(args, sizeof args, "'%s'", path);
    int rc = check_comments(args, out, sizeof out);
    CHECK_MSG(rc == 1, "exit %d, want 1\n%s", rc, out);
    CHECK_MSG(strstr(out, "history.c:3: commit hash '5df462c'") != NULL, "%s", out);
    CHECK_MSG(strstr(out, "history.c:3: measured time '8.6 s'") != NULL, "%s", out);
    CHECK_MSG(strstr(out, "history.c:3: measured speedup '1.3x'") != NULL, "%s", out);
    CHECK_MSG(strstr(out, "history.c:2") == NULL, "a budget is a contract, not history:\n%s", out);
}

TEST(check_comments_every_source_file)
{
    static char out[65536];
    if (system("git rev-parse --is-inside-work-tree >/dev/null 2>&1") != 0)
        SKIP("not a git checkout: the checker reads the tracked files");
    int rc = check_comments("", out, sizeof out);
    CHECK_MSG(rc == 0, "exit %d\n%s", rc, out);
}
