/* Tests of bin/tune-score, run as a program from the repository root (where
 * `make` puts it): the table on the recorded fixtures, usage errors and exit
 * codes. */
#include "tests/harness/test.h"

#include "base/file.h"

#include <glob.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define TUNE_SCORE "./bin/tune-score"

/* Runs bin/tune-score with `args` (shell words), stdout and stderr together
 * into out; returns the exit status (-1 when it did not exit normally). */
static int run(const char *args, char *out, size_t outsz)
{
    REQUIRE_MSG(access(TUNE_SCORE, X_OK) == 0, "%s is missing: run the tests from the repository root after make",
                TUNE_SCORE);
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "%s %s 2>&1", TUNE_SCORE, args);
    FILE *p = popen(cmd, "r");
    REQUIRE(p);
    size_t n = fread(out, 1, outsz - 1, p);
    out[n] = '\0';
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static char out[1 << 16];

TEST_TIMEOUT(tuner_score_cli_prints_the_table, 120)
{
    glob_t g;
    if (glob("tests/fixtures/tuner/*_exhaustive.jsonl", 0, NULL, &g) != 0 || g.gl_pathc == 0)
        SKIP("no recorded exhaustive run in tests/fixtures/tuner");
    CHECK_EQ_INT(run("--fixtures tests/fixtures/tuner --seeds 20", out, sizeof out), 0);
    CHECK_STR_CONTAINS(out, "| strategy | score (evals) | score (time) | reach 98% in 5% |");
    CHECK_STR_CONTAINS(out, "|---|---:|");
    for (size_t i = 0; i < g.gl_pathc; i++) {
        /* "**<scene>**" for tests/fixtures/tuner/<scene>_exhaustive.jsonl */
        const char *base = strrchr(g.gl_pathv[i], '/') + 1;
        char head[160];
        snprintf(head, sizeof head, "**%.*s**", (int)(strstr(base, "_exhaustive") - base), base);
        CHECK_STR_CONTAINS(out, head);
    }
    const char *rows[] = {"| random |", "| local |", "| annealing |", "| genetic |", "| halving |"};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) CHECK_STR_CONTAINS(out, rows[i]);
    CHECK(strstr(out, "| exhaustive |") == NULL); /* not scored by default */
    globfree(&g);

    CHECK_EQ_INT(run("--fixtures tests/fixtures/tuner --seeds 20 --strategy local --compile-model parallel "
                     "--compile-threads 8 --no-prior",
                     out, sizeof out),
                 0);
    CHECK_STR_CONTAINS(out, "parallel compile model, 8 compile threads, strategies started at random");
    CHECK_STR_CONTAINS(out, "| local |");
    CHECK(strstr(out, "| random |") == NULL);
}

TEST(tuner_score_cli_usage_errors)
{
    CHECK_EQ_INT(run("--help", out, sizeof out), 0);
    CHECK_STR_CONTAINS(out, "usage: tune-score --fixtures DIR");
    CHECK_EQ_INT(run("", out, sizeof out), 2);
    CHECK_STR_CONTAINS(out, "--fixtures DIR is required");
    CHECK_EQ_INT(run("--fixtures x --strategy bayes", out, sizeof out), 2);
    CHECK_STR_CONTAINS(out, "unknown strategy 'bayes'");
    CHECK_EQ_INT(run("--fixtures x --seeds 0", out, sizeof out), 2);
    CHECK_STR_CONTAINS(out, "--seeds");
    CHECK_EQ_INT(run("--fixtures x --compile-model lock", out, sizeof out), 2);
    CHECK_STR_CONTAINS(out, "'lock' is not serial or parallel");
    CHECK_EQ_INT(run("--fixtures x --frobnicate 1", out, sizeof out), 2);
    CHECK_STR_CONTAINS(out, "unknown option '--frobnicate'");
    CHECK_EQ_INT(run("--fixtures", out, sizeof out), 2);
    CHECK_STR_CONTAINS(out, "--fixtures needs a value");

    /* no recording, or a broken one: exit 1 naming it */
    char dir[700], cmd[800];
    snprintf(dir, sizeof dir, "%s/empty", vpt_test_tmpdir());
    REQUIRE(vpt_mkdirs(dir) == 0);
    snprintf(cmd, sizeof cmd, "--fixtures %s", dir);
    CHECK_EQ_INT(run(cmd, out, sizeof out), 1);
    CHECK_STR_CONTAINS(out, "no recorded exhaustive run");
    char path[800];
    snprintf(path, sizeof path, "%s/broken_exhaustive.jsonl", dir);
    REQUIRE(vpt_write_file_atomic(path, "{\"kind\":\"result\", garbage\n", 26) == 0);
    CHECK_EQ_INT(run(cmd, out, sizeof out), 1);
    CHECK_STR_CONTAINS(out, "broken_exhaustive.jsonl:1");
}
